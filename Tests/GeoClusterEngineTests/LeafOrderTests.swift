import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

/// `leaves` with `sort`: a cluster's sightings newest or oldest first, paged, as the
/// birding app lists them; `list`: the records in a view, the same way.
struct LeafOrderTests {
    static func times(_ answer: JSONValue) -> [String] {
        (answer["features"]?.arrayValue ?? []).compactMap { $0["properties"]?["observed_at"]?.stringValue }
    }

    @Test func leavesComeNewestOrOldestFirstAndPage() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: LayerCatalogTests.dataDirectory))
        let clusters = try engine.execute(.clusters(layer: "sightings", bbox: try BoundingBox([124, 33, 132, 39]), zoom: 7))
        let cluster = try #require((clusters["features"]?.arrayValue ?? []).max {
            ($0["properties"]?["point_count"]?.intValue ?? 0) < ($1["properties"]?["point_count"]?.intValue ?? 0)
        })
        let id = try #require(cluster["properties"]?["cluster_id"]?.intValue)
        let total = try #require(cluster["properties"]?["point_count"]?.intValue)
        #expect(total > 100)

        let all = try engine.execute(.leaves(layer: "sightings", clusterID: id, limit: 10_000, offset: 0, order: .newestFirst))
        let newest = Self.times(all)
        #expect(newest.count == total && all["total"]?.intValue == total)
        let instants = try newest.map { try Timestamp.parse($0).epochSeconds }
        #expect(instants == instants.sorted(by: >))

        let oldest = try engine.execute(.leaves(layer: "sightings", clusterID: id, limit: 10_000, offset: 0, order: .oldestFirst))
        #expect(try Self.times(oldest).map { try Timestamp.parse($0).epochSeconds } == instants.sorted())

        // Pages of the sorted list are slices of it.
        let page = try engine.execute(.leaves(layer: "sightings", clusterID: id, limit: 7, offset: 20, order: .newestFirst))
        #expect(page["features"]?.arrayValue == Array((all["features"]?.arrayValue ?? [])[20..<27]))
        #expect(page["total"]?.intValue == total && page["limit"] == 7 && page["offset"] == 20)
        let beyond = try engine.execute(.leaves(layer: "sightings", clusterID: id, limit: 7, offset: total + 5, order: .newestFirst))
        #expect(beyond["features"]?.arrayValue?.isEmpty == true)
    }

    /// Equal times come by id, not by slot: a store hands its rows back in the order they
    /// were first written, while a running layer gives a freed slot to the next insert.
    @Test func equalTimesComeByIdWhateverTheSlots() throws {
        let engine = try Engine(entries: [.live(LiveLayerStore(try LiveLayer(name: "birds", kind: .sightings, records: [])))])
        func sighting(_ id: String) -> JSONValue {
            ["id": .string(id), "lon": 127.0, "lat": 37.5, "species": "Ardea alba", "count": 1,
             "observed_at": "2025-05-01T06:30:00+09:00"]
        }
        for batch: JSONValue in [
            ["op": "insert", "layer": "birds", "records": [sighting("x"), sighting("b"), sighting("a")]],
            ["op": "delete", "layer": "birds", "ids": ["x"]],
            ["op": "insert", "layer": "birds", "records": [sighting("c")]],  // x's slot, the first
        ] { _ = try engine.handle(batch).get() }
        for sort in ["-observed_at", "observed_at"] {
            let listed = try engine.handle(["op": "list", "layer": "birds", "bbox": [126, 37, 128, 38], "sort": .string(sort)]).get()
            #expect((listed["features"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue } == ["a", "b", "c"], "\(sort)")
        }
    }

    @Test func sortIsCheckedThroughTheLineProtocol() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: LayerCatalogTests.dataDirectory))
        func failure(_ json: JSONValue) -> EngineError? {
            if case let .failure(error) = engine.handle(json) { return error }
            return nil
        }
        let request: JSONObject = ["op": "leaves", "layer": "sightings", "cluster_id": 1, "sort": "newest"]
        #expect(failure(.object(request)) == .invalidField("sort", reason:
            "must be \"observed_at\" (oldest first) or \"-observed_at\" (newest first), got \"newest\""))
        var places = request
        places["layer"] = "places"
        places["sort"] = "-observed_at"
        #expect(failure(.object(places)) == .invalidField("sort", reason: "applies to live sightings layers"))
    }

    /// `list` gives exactly the records a scan of the layer finds inside the box and the
    /// filter, each once, in pages that add up; a record on an edge is inside, one a tenth
    /// of a millimetre beyond it (in the same quantisation step of the index) is not.
    @Test func listMatchesAScanOfTheRecords() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: LayerCatalogTests.dataDirectory))
        let layer = try engine.liveLayer(named: "sightings")
        var boxes = [try BoundingBox([126.6, 37.6, 126.8, 37.8]), try BoundingBox([124, 33, 132, 39]),
                     try BoundingBox([127.0, 35.0, 127.0, 35.0]), try BoundingBox([170, -10, -170, 10])]
        for slot in [0, 7, 31] {
            let c = try #require(layer.record(atSlot: slot)?.coordinate)
            let e = 1e-9
            boxes += [try BoundingBox([c.longitude, c.latitude, c.longitude + 0.05, c.latitude + 0.05]),
                      try BoundingBox([c.longitude - 0.05, c.latitude - 0.05, c.longitude, c.latitude]),
                      try BoundingBox([c.longitude + e, c.latitude - 0.05, c.longitude + 0.05, c.latitude + 0.05]),
                      try BoundingBox([c.longitude - 0.05, c.latitude + e, c.longitude + 0.05, c.latitude + 0.05]),
                      try BoundingBox([c.longitude - 0.05, c.latitude - 0.05, c.longitude - e, c.latitude + 0.05]),
                      try BoundingBox([c.longitude - 0.05, c.latitude - 0.05, c.longitude + 0.05, c.latitude - e])]
        }
        for bbox in boxes {
            for filter in [LayerFilter(), LayerFilter(species: ["Grus japonensis"]), LayerFilter(months: [1, 2])] {
                var expected: Set<String> = []
                for slot in 0..<layer.records.count {
                    guard let record = layer.record(atSlot: slot), Self.inside(record.coordinate, bbox) else { continue }
                    guard case let .sighting(species, _, observedAt) = record.fields else { continue }
                    if let names = filter.species, !names.contains(species.text) { continue }
                    if let months = filter.months, !months.contains(observedAt.localMonth) { continue }
                    expected.insert(record.idKey)
                }
                var seen: [String] = []
                var offset = 0
                while true {
                    let page = try engine.execute(.list(layer: "sightings", bbox: bbox, limit: 5_000, offset: offset,
                                                        filter: filter, order: .newestFirst))
                    #expect(page["total"]?.intValue == expected.count)
                    let ids = (page["features"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
                    seen += ids
                    offset += 5_000
                    if ids.count < 5_000 { break }
                }
                #expect(seen.count == expected.count && Set(seen) == expected, "\(bbox) \(filter)")
            }
        }
    }

    static func inside(_ c: Coordinate, _ bbox: BoundingBox) -> Bool {
        bbox.spans.contains { c.longitude >= $0.west && c.longitude <= $0.east && c.latitude >= $0.south && c.latitude <= $0.north }
    }
}
