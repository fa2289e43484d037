import Benchmark
import GeoCluster
import GeoClusterEngine
import GeoClusterHTTP
import Synchronization

/// What API keys and sensitive species cost a query of the 1M-sighting layer, as a ratio
/// to "clusters as GeoJSON, sightings 1000k" (the same viewports, in the same order):
/// - with a key: each query first authenticates an `Authorization` header (parse, SHA-256
///   of the secret, constant-time compare) and checks the key's scope and layers, as
///   `serve --keys all` does for every query;
/// - with sensitive species: the same points, two of the ten species sensitive (20% of
///   the sightings answered at their 0.1-degree cell centre).
func keysAndSensitiveSpeciesBenchmarks() {
    Benchmark("clusters as GeoJSON, sightings 1000k, with a key check", configuration: viewportQueries) { benchmark in
        let engine = WriteFixture.shared.engine
        let (ring, header) = try KeyFixture.ring()
        try measureViewport(benchmark, engine: engine) { request in
            try engine.authorize(request, by: try ring.caller(authorization: header))
        }
    }

    Benchmark("clusters as GeoJSON, sightings 1000k, 2 of 10 species sensitive", configuration: viewportQueries) { benchmark in
        try measureViewport(benchmark, engine: SensitiveFixture.shared.engine)
    }
}

/// One key in memory and the header that carries it.
enum KeyFixture {
    final class Store: KeyStore {
        let grants: [KeyGrant]
        init(_ grants: [KeyGrant]) { self.grants = grants }
        func createKey(_ grant: KeyGrant) throws(EngineError) {}
        func keys() throws(EngineError) -> [KeyGrant] { grants }
        func revokeKey(id: String) throws(EngineError) -> Bool { false }
        func keyChanges(after: Int64) throws(EngineError) -> (keys: [KeyGrant], last: Int64) {
            after == 0 ? (grants, 1) : ([], after)
        }
    }

    static func ring() throws -> (KeyRing, String) {
        let token = APIKeyToken.generate()
        let grant = KeyGrant(id: token.id, owner: "kim-birder", layers: ["sightings"], scopes: [.read],
                             secretHash: token.secretHash)
        return (try KeyRing(store: Store([grant])), "Bearer \(token.text)")
    }
}

/// The points of ``WriteFixture`` in a layer where two species are sensitive.
final class SensitiveFixture: Sendable {
    static let shared = SensitiveFixture()
    let engine: Engine

    init() {
        do {
            let records = try WriteFixture.shared.points.enumerated().map { i, coordinate in
                try LayerRecord(json: WriteFixture.sighting(id: "s\(i)", at: coordinate, n: i), kind: .sightings,
                                layer: "sightings", index: i)
            }
            let sensitive: Set<String> = [WriteFixture.species[7], WriteFixture.species[9]]
            let layer = try LiveLayer(name: "sightings", kind: .sightings, records: records, sensitiveSpecies: sensitive)
            engine = try Engine(entries: [.live(LiveLayerStore(layer))])
        } catch {
            preconditionFailure("the generated sightings are valid: \(error)")
        }
    }
}
