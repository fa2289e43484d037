import Foundation
import Testing
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import GeoClusterStore
import GeoClusterTestSupport

/// Temporary stores, layer files and write requests for the store tests.
enum StoreFixtures {
    /// A fresh temporary directory.
    static func directory() throws -> URL {
        try TemporaryDirectory.make("geo-cluster-store")
    }

    /// A flat sightings record with id `id`, spread over Korea by `n`.
    static func sighting(_ id: String, _ n: Int, count: Int = 1) -> JSONValue {
        .object(["id": .string(id), "lon": .number(126.0 + Double(n % 300) * 0.01),
                 "lat": .number(35.0 + Double(n / 300 % 300) * 0.01), "species": "Ardea alba",
                 "count": .number(Double(count)), "observed_at": "2025-05-01T06:30:00+09:00"])
    }

    /// A sightings layer file of `count` records `seed-0`…, in `directory`.
    static func seedFile(in directory: URL, count: Int = 3) throws -> URL {
        let features = try (0..<count).map { i in
            try LayerRecord(json: sighting("seed-\(i)", i), kind: .sightings, layer: "birds", index: i).feature
        }
        let file = directory.appendingPathComponent("birds.geojson")
        try GeoJSON.featureCollection(features).jsonString.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// An engine with the layer `birds` (sightings) on the store at `path`, seeded from `seed`.
    static func engine(store path: String, seed: URL) throws -> (Engine, SQLiteJournal) {
        let journal = try SQLiteJournal(path: path)
        let spec = LayerCatalog.LayerSpec(name: "birds", kind: .sightings, path: seed.path)
        let engine = try Engine(entries: [try LayerCatalog.load(spec, journal: journal)])
        return (engine, journal)
    }

    /// `count` sightings as stored records, ids `s0`…
    static func storedSightings(_ count: Int) throws -> [StoredRecord] {
        try (0..<count).map { i in
            StoredRecord(try LayerRecord(json: sighting("s\(i)", i), kind: .sightings, layer: "birds", index: i))
        }
    }

    /// Seeds `stored` as layer `birds` of `journal`, reads it back in batches and whole,
    /// and checks what every journal's batched read promises: the kind once, the batches
    /// in order are the layer read whole, the same sequence, and a layer never stored
    /// gives `nil` without callbacks. Returns the batches and the layer read whole.
    static func checkReadInBatches(_ journal: some LayerJournal,
                                   stored: [StoredRecord]) throws -> (batches: [[StoredRecord]], whole: StoredLayer) {
        _ = try journal.seedLayer("birds", kind: .sightings, records: stored)
        var kinds: [LayerKind] = []
        var batches: [[StoredRecord]] = []
        let sequence = try journal.loadLayer("birds", kind: { kinds.append($0) }, records: { batches.append($0) })
        let whole = try #require(try journal.loadLayer("birds"))
        #expect(kinds == [.sightings])
        #expect(batches.flatMap { $0 } == whole.records)
        #expect(sequence == whole.sequence)
        // Each row read back as written: its text and its checked fields.
        let written = Dictionary(stored.map { ($0.idKey, $0) }, uniquingKeysWith: { $1 })
        #expect(whole.records.allSatisfy { $0.checkedFields != nil && written[$0.idKey] == $0 })
        #expect(try journal.loadLayer("fish", kind: { _ in Issue.record("no kind for a layer never stored") },
                                      records: { _ in Issue.record("no records for a layer never stored") }) == nil)
        return (batches, whole)
    }

    /// An insert request of batch `batch`: records `b<batch>-0`… .
    static func insert(batch: Int, size: Int, id: Int? = nil) -> JSONValue {
        var request: JSONObject = ["op": "insert", "layer": "birds",
                                   "records": .array((0..<size).map { sighting("b\(batch)-\($0)", batch * size + $0) })]
        if let id { request["id"] = .number(Double(id)) }
        return .object(request)
    }
}
