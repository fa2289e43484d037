import Foundation
import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine
import GeoClusterTestSupport

/// Sightings of sensitive species (Spoon-billed Sandpiper and Steller's Sea Eagle in the
/// sample) are shown at the centre of their 0.1-degree cell in every answer: their exact
/// positions appear in no answer, they still count in clusters, and the store keeps them
/// as written.
struct SensitiveSpeciesTests {
    static let sensitive: Set<String> = ["Calidris pygmaea", "Haliaeetus pelagicus"]

    /// The sample's sensitive sightings as written in the file: id, exact position.
    static func writtenSightings() throws -> [(id: String, lon: Double, lat: Double)] {
        let path = LayerCatalogTests.dataDirectory + "/sightings.geojson"
        let collection = try JSONValue.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        return (collection["features"]?.arrayValue ?? []).compactMap { feature in
            guard let species = feature["properties"]?["species"]?.stringValue, sensitive.contains(species),
                  let id = feature["id"]?.stringValue, let pair = feature["geometry"]?["coordinates"]?.arrayValue,
                  let lon = pair[0].doubleValue, let lat = pair[1].doubleValue else { return nil }
            return (id, lon, lat)
        }
    }

    static func isCellCentre(_ degrees: Double) -> Bool {
        let scaled = degrees * LayerRecord.generalizationCellsPerDegree - 0.5
        return abs(scaled - scaled.rounded()) < 1e-9
    }

    /// Every sensitive sighting in an answer sits at a cell centre and says so; no point
    /// of the answer is at the exact position of one.
    static func check(_ text: [UInt8], exact: [(id: String, lon: Double, lat: Double)],
                      _ comment: Comment) throws -> Int {
        let hidden = Set(exact.map { "\($0.lon),\($0.lat)" })
        var shown = 0
        func visit(_ value: JSONValue) {
            if let pair = value["coordinates"]?.arrayValue, pair.count >= 2,
               let lon = pair[0].doubleValue, let lat = pair[1].doubleValue {
                #expect(!hidden.contains("\(lon),\(lat)"), comment)
            }
            if let species = value["properties"]?["species"]?.stringValue, sensitive.contains(species),
               let pair = value["geometry"]?["coordinates"]?.arrayValue {
                #expect(pair.count == 2 && isCellCentre(pair[0].doubleValue ?? 0) && isCellCentre(pair[1].doubleValue ?? 0),
                        comment)
                #expect(value["properties"]?["position_generalized_deg"] == 0.1, comment)
                shown += 1
            }
            for item in value.arrayValue ?? [] { visit(item) }
            for (_, item) in value.objectValue ?? [:] { visit(item) }
        }
        visit(try JSONValue.parse(text))
        return shown
    }

    static func answer(_ engine: Engine, _ request: Request) throws -> [UInt8] {
        var text: [UInt8] = []
        try engine.encode(request, into: &text)
        return text
    }

    @Test func noAnswerShowsWhereASensitiveSightingIs() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: LayerCatalogTests.dataDirectory))
        let exact = try Self.writtenSightings()
        #expect(exact.count == 107)
        let korea = try BoundingBox([124, 33, 132, 39])
        var shown = 0

        // Clusters at every zoom; the points of every cluster, as leaves and as children.
        for zoom in [0, 3, 6, 9, 12, 15, 18] {
            let text = try Self.answer(engine, .clusters(layer: "sightings", bbox: korea, zoom: Double(zoom)))
            shown += try Self.check(text, exact: exact, "clusters z\(zoom)")
            if zoom == 9 {
                let ids = (try JSONValue.parse(text)["features"]?.arrayValue ?? []).compactMap { $0["properties"]?["cluster_id"]?.intValue }
                for id in ids.prefix(12) {
                    shown += try Self.check(try Self.answer(engine, .leaves(layer: "sightings", clusterID: id, limit: 1_000,
                                                                           offset: 0)), exact: exact, "leaves \(id)")
                    _ = try Self.check(try Self.answer(engine, .children(layer: "sightings", clusterID: id)),
                                       exact: exact, "children \(id)")
                }
            }
        }
        // Filtered to the sensitive species, by Korean and English names too.
        for names in [["Calidris pygmaea"], ["넓적부리도요"], ["Steller's Sea Eagle"]] {
            let filter = LayerFilter(species: names)
            shown += try Self.check(try Self.answer(engine, .clusters(layer: "sightings", bbox: korea, zoom: 18, filter: filter)),
                                    exact: exact, "filtered \(names)")
        }
        #expect(shown > 100)

        for sighting in exact.prefix(12) {
            let centre = Coordinate(longitude: sighting.lon, latitude: sighting.lat)
            // Nearby the exact position: the sighting, if listed, is at its cell's centre.
            let nearby = try Self.answer(engine, .nearby(NearbyQuery(layer: "sightings", center: centre, radiusMeters: 15_000,
                                                                     k: nil, filter: .none)))
            _ = try Self.check(nearby, exact: exact, "nearby \(sighting.id)")
            // Read by id.
            let record = try Self.answer(engine, .get(layer: "sightings", ids: [.string(sighting.id)]))
            #expect(try Self.check(record, exact: exact, "get \(sighting.id)") == 1)
            // The tile that holds the exact position at zoom 14 (about 2.4 km wide) does not
            // hold the sighting, as geojson-vt or as a vector tile: it is kilometres away.
            let n = 16_384.0
            let x = Int((sighting.lon + 180) / 360 * n)
            let latRadians = sighting.lat * .pi / 180
            let y = Int((1 - log(tan(latRadians) + 1 / cos(latRadians)) / .pi) / 2 * n)
            let address = try TileAddress(z: 14, x: x, y: y)
            let generalizedX = Int(((floor(sighting.lon * 10) + 0.5) / 10 + 180) / 360 * n)
            let generalizedLat = (floor(sighting.lat * 10) + 0.5) / 10 * .pi / 180
            let generalizedY = Int((1 - log(tan(generalizedLat) + 1 / cos(generalizedLat)) / .pi) / 2 * n)
            guard generalizedX != x || generalizedY != y else { continue }
            let tile = try JSONValue.parse(try Self.answer(engine, .tile(layer: "sightings", address: address)))
            let tileIDs = (tile["features"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            #expect(!tileIDs.contains(sighting.id), "tile \(sighting.id)")
            let vectorTile = try engine.vectorTile(layer: "sightings", address: address)
            #expect(!String(decoding: vectorTile, as: UTF8.self).contains(sighting.id), "vector tile \(sighting.id)")
        }
    }

    /// They still count: a clusters answer over Korea holds every sighting.
    @Test func sensitiveSightingsStillCount() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: LayerCatalogTests.dataDirectory))
        let answer = try engine.execute(.clusters(layer: "sightings", bbox: try BoundingBox([124, 33, 132, 39]), zoom: 5))
        let total = (answer["features"]?.arrayValue ?? []).reduce(0) { $0 + ($1["properties"]?["point_count"]?.intValue ?? 1) }
        #expect(total == 15_000)
    }

    /// A write of a sensitive sighting is generalised in answers, while the store is given
    /// the record as written; a move within the cell changes no answer's position.
    @Test func writesAreGeneralisedAndStoredAsWritten() throws {
        let layer = try LiveLayer(name: "birds", kind: .sightings, sensitiveSpecies: ["Calidris pygmaea"])
        let store = LiveLayerStore(layer)
        let engine = try Engine(entries: [.live(store)])
        func write(_ lon: Double, _ lat: Double, species: String) throws {
            let record: JSONValue = ["id": "x1", "lon": .number(lon), "lat": .number(lat), "species": .string(species),
                                     "count": 1, "observed_at": "2025-05-01T06:00:00+09:00"]
            _ = try engine.execute(.write(layer: "birds", batch: .upsert(records: [record])))
        }
        try write(126.60713, 37.38421, species: "Calidris pygmaea")
        let first = try engine.execute(.get(layer: "birds", ids: ["x1"]))
        #expect(first["features"]?[0]?["geometry"]?["coordinates"] == [126.65, 37.35])
        #expect(StoredRecord(try #require(store.layer.record(idKey: "x1"))).featureJSON.contains("126.65"))
        try write(126.63, 37.31, species: "Calidris pygmaea")
        #expect(try engine.execute(.get(layer: "birds", ids: ["x1"])) == first)
        try write(126.60713, 37.38421, species: "Anas acuta")
        #expect(try engine.execute(.get(layer: "birds", ids: ["x1"]))["features"]?[0]?["geometry"]?["coordinates"]
                == [126.60713, 37.38421])
    }

    @Test func theManifestNamesKnownSpeciesOnly() throws {
        let directory = try TemporaryDirectory.make("sensitive")
        try FileManager.default.copyItem(atPath: LayerCatalogTests.dataDirectory + "/species.json",
                                         toPath: directory.appendingPathComponent("species.json").path)
        let manifest = directory.appendingPathComponent("layers.json")
        try #"{"layers":[{"name":"s","kind":"sightings","file":"s.geojson","species_checklist":"species.json","sensitive_species":["참수리","Dodo"]}]}"#
            .write(to: manifest, atomically: true, encoding: .utf8)
        #expect(throws: EngineError.invalidLayerSource(path: "\(manifest.path), layers[0]",
                                                       reason: "sensitive_species[1] \"Dodo\" is not on the species checklist")) {
            try LayerCatalog.specs(directory: directory.path)
        }
        try #"{"layers":[{"name":"s","kind":"sightings","file":"s.geojson","species_checklist":"species.json","sensitive_species":["참수리"]}]}"#
            .write(to: manifest, atomically: true, encoding: .utf8)
        #expect(try LayerCatalog.specs(directory: directory.path)[0].sensitiveSpecies == ["Haliaeetus pelagicus"])
    }
}
