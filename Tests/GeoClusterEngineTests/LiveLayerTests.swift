import Synchronization
import Testing
import GeoClusterTestSupport
@testable import GeoCluster
@testable import GeoClusterWire
@testable import GeoClusterEngine

/// Live layers through the engine: typed records, writes applied all or nothing,
/// filters that keep counts right, aggregates per cluster, and readers that never see
/// half a batch.
struct LiveLayerTests {
    static func sighting(_ id: String, _ lon: Double, _ lat: Double, species: String, count: Int = 1,
                         at time: String = "2024-05-10T07:30:00+09:00") -> JSONValue {
        .object(["id": .string(id), "lon": .number(lon), "lat": .number(lat), "species": .string(species),
                 "count": .number(Double(count)), "observed_at": .string(time)])
    }

    static func place(_ id: String, _ lon: Double, _ lat: Double, category: String) -> JSONValue {
        .object(["id": .string(id), "lon": .number(lon), "lat": .number(lat), "name": .string("Place \(id)"),
                 "category": .string(category)])
    }

    static func engine() throws -> Engine {
        let sightings = try LiveLayer(name: "sightings", kind: .sightings)
        let places = try LiveLayer(name: "places", kind: .places)
        let stations = try LiveLayer(name: "stations", kind: .stations)
        return try Engine(entries: [.live(LiveLayerStore(sightings)), .live(LiveLayerStore(places)),
                                    .live(LiveLayerStore(stations))])
    }

    static func run(_ engine: Engine, _ request: JSONValue) throws -> JSONValue {
        try engine.handle(request).get()
    }

    static func clusters(_ engine: Engine, _ layer: String, zoom: Int, _ extra: JSONObject = [:]) throws -> [JSONValue] {
        var request: JSONObject = ["op": "clusters", "layer": .string(layer), "bbox": [-180, -85, 180, 85],
                                   "zoom": .number(Double(zoom))]
        for (key, value) in extra { request[key] = value }
        return try run(engine, .object(request))["features"]?.arrayValue ?? []
    }

    static func total(_ features: [JSONValue]) -> Int {
        features.reduce(0) { $0 + ($1["properties"]?["point_count"]?.intValue ?? 1) }
    }

    /// Seoul wetland sightings: 3 species, one spot each, different months.
    static func seededSightings(_ engine: Engine) throws {
        var records: [JSONValue] = []
        for i in 0..<10 {
            records.append(sighting("a\(i)", 126.80 + Double(i) * 1e-4, 37.50, species: "Anas acuta", count: 2,
                                    at: "2024-01-0\(i % 9 + 1)T08:00:00+09:00"))
        }
        for i in 0..<5 {
            records.append(sighting("b\(i)", 126.80 + Double(i) * 1e-4, 37.5001, species: "Egretta alba", count: 1,
                                    at: "2024-07-1\(i)T08:00:00+09:00"))
        }
        records.append(sighting("c0", 126.8002, 37.5002, species: "Grus japonensis", count: 40,
                                at: "2024-12-24T16:00:00+09:00"))
        _ = try run(engine, ["op": "insert", "layer": "sightings", "records": .array(records)])
    }

    @Test func aggregatesDescribeTheClusterPoints() throws {
        let engine = try Self.engine()
        try Self.seededSightings(engine)
        let features = try Self.clusters(engine, "sightings", zoom: 5)
        #expect(features.count == 1)
        let properties = try #require(features.first?["properties"])
        #expect(properties["cluster"] == true)
        #expect(properties["point_count"]?.intValue == 16)
        #expect(properties["individuals"]?.intValue == 10 * 2 + 5 + 40)
        #expect(properties["species_count"]?.intValue == 3)
        #expect(properties["top_species"] == [["species": "Anas acuta", "count": 10], ["species": "Egretta alba", "count": 5],
                                               ["species": "Grus japonensis", "count": 1]])
        #expect(properties["latest_observed_at"] == "2024-12-24T16:00:00+09:00")
    }

    /// A cluster's latest time is written as its sighting gave it, whether the index's
    /// time tag writes it again (quarter-hour offsets, `Z`, `-00:00`) or the record is read
    /// (a fraction, a lower-case `t`, an offset of odd minutes), and follows updates.
    @Test func theLatestTimeIsWrittenAsGiven() throws {
        for given in ["2024-12-24T16:00:00+09:00", "2024-12-24T16:00:00Z", "2024-12-24T16:00:00-00:00",
                      "2024-12-24T16:00:00+05:45", "2024-12-24T16:00:00-09:30", "2024-12-24T16:00:00.250+09:00",
                      "2024-12-24t16:00:00+09:00", "2024-12-24T16:00:00+05:31"] {
            let engine = try Self.engine()
            try Self.seededSightings(engine)
            _ = try Self.run(engine, ["op": "upsert", "layer": "sightings", "records": [
                Self.sighting("c0", 126.8002, 37.5002, species: "Grus japonensis", count: 40, at: given)]])
            let features = try Self.clusters(engine, "sightings", zoom: 5)
            #expect(features.first?["properties"]?["latest_observed_at"] == .string(given), "\(given)")
            // As answers write it, straight to text.
            var written: [UInt8] = []
            try engine.encode(Request(json: ["op": "clusters", "layer": "sightings", "bbox": [-180, -85, 180, 85],
                                             "zoom": 5]), into: &written)
            let text = try JSONValue.parse(written)
            #expect(text["features"]?[0]?["properties"]?["latest_observed_at"] == .string(given), "\(given)")
        }
    }

    /// `top_by=individuals` ranks a cluster's species by the individuals counted: the one
    /// crane (40) before ten pintails (20) and five egrets (5), each with its individuals.
    /// The ranking survives writes, which change the index's partition totals in place.
    @Test func topSpeciesByIndividuals() throws {
        let engine = try Self.engine()
        try Self.seededSightings(engine)
        var properties = try #require(try Self.clusters(engine, "sightings", zoom: 5, ["top_by": "individuals"]).first?["properties"])
        #expect(properties["top_species"] == [["species": "Grus japonensis", "count": 1, "individuals": 40],
                                               ["species": "Anas acuta", "count": 10, "individuals": 20],
                                               ["species": "Egretta alba", "count": 5, "individuals": 5]])
        #expect(properties["individuals"]?.intValue == 65)
        properties = try #require(try Self.clusters(engine, "sightings", zoom: 5, ["top_by": "sightings"]).first?["properties"])
        #expect(properties["top_species"]?[0]?["species"] == "Anas acuta" && properties["top_species"]?[0]?["individuals"] == nil)

        // A large flock of egrets moves them first; deleting the crane drops it.
        _ = try Self.run(engine, ["op": "insert", "layer": "sightings",
                                  "records": [Self.sighting("b9", 126.8001, 37.5001, species: "Egretta alba", count: 100)]])
        _ = try Self.run(engine, ["op": "delete", "layer": "sightings", "ids": ["c0"]])
        properties = try #require(try Self.clusters(engine, "sightings", zoom: 5, ["top_by": "individuals"]).first?["properties"])
        #expect(properties["top_species"] == [["species": "Egretta alba", "count": 6, "individuals": 105],
                                               ["species": "Anas acuta", "count": 10, "individuals": 20]])
        // Filtered: the totals are those of the passing points.
        properties = try #require(try Self.clusters(engine, "sightings", zoom: 5,
                                                    ["top_by": "individuals", "months": [7]]).first?["properties"])
        #expect(properties["top_species"] == [["species": "Egretta alba", "count": 5, "individuals": 5]])

        let wrong = engine.handle(["op": "clusters", "layer": "sightings", "bbox": [-180, -85, 180, 85], "zoom": 5,
                                   "top_by": "count"])
        guard case let .failure(wrongError) = wrong else { Issue.record("expected an error"); return }
        #expect(wrongError.code == "invalid_field" && wrongError.field == "top_by")
        let places = engine.handle(["op": "clusters", "layer": "places", "bbox": [-180, -85, 180, 85], "zoom": 5,
                                    "top_by": "individuals"])
        guard case let .failure(placesError) = places else { Issue.record("expected an error"); return }
        #expect(placesError.code == "invalid_filter" && placesError.field == "top_by")
    }

    @Test func filtersKeepCountsAndAggregatesRight() throws {
        let engine = try Self.engine()
        try Self.seededSightings(engine)
        // One species.
        var features = try Self.clusters(engine, "sightings", zoom: 5, ["species": "Egretta alba"])
        #expect(Self.total(features) == 5)
        #expect(features.first?["properties"]?["individuals"]?.intValue == 5)
        #expect(features.first?["properties"]?["species_count"]?.intValue == 1)
        // Winter season wrapping the year end: January and December.
        features = try Self.clusters(engine, "sightings", zoom: 5, ["months": [12, 1, 2]])
        #expect(Self.total(features) == 11)
        #expect(features.first?["properties"]?["individuals"]?.intValue == 20 + 40)
        // A date range.
        features = try Self.clusters(engine, "sightings", zoom: 5, ["from": "2024-01-03", "to": "2024-07-11"])
        #expect(Self.total(features) == 7 + 2)
        // Nothing passes: an empty answer, not an error.
        features = try Self.clusters(engine, "sightings", zoom: 5, ["species": ["Nobody here"]])
        #expect(features.isEmpty)
        // Every zoom: the filtered total is the same.
        for zoom in 0...17 {
            #expect(Self.total(try Self.clusters(engine, "sightings", zoom: zoom, ["species": ["Anas acuta", "Grus japonensis"]])) == 11)
        }
        // Leaves and children of a filtered cluster hold only passing points.
        features = try Self.clusters(engine, "sightings", zoom: 5, ["species": "Anas acuta"])
        let id = try #require(features.first?["properties"]?["cluster_id"])
        let leaves = try Self.run(engine, ["op": "leaves", "layer": "sightings", "cluster_id": id, "limit": 100,
                                           "species": "Anas acuta"])
        #expect(leaves["total"]?.intValue == 10)
        #expect(leaves["features"]?.arrayValue?.allSatisfy { $0["properties"]?["species"] == "Anas acuta" } == true)
        let children = try Self.run(engine, ["op": "children", "layer": "sightings", "cluster_id": id, "species": "Anas acuta"])
        #expect(Self.total(children["features"]?.arrayValue ?? []) == 10)
    }

    @Test func filtersOfAnotherKindAreRejected() throws {
        let engine = try Self.engine()
        let result = engine.handle(["op": "clusters", "layer": "places", "bbox": [-180, -85, 180, 85], "zoom": 3,
                                    "species": "Anas acuta"])
        guard case let .failure(error) = result else { Issue.record("expected an error"); return }
        #expect(error.code == "invalid_filter")
        #expect(error.field == "species")
        let months = engine.handle(["op": "clusters", "layer": "sightings", "bbox": [-180, -85, 180, 85], "zoom": 3,
                                    "months": [13]])
        guard case let .failure(monthsError) = months else { Issue.record("expected an error"); return }
        #expect(monthsError.field == "months")
    }

    @Test func placesCountPerCategoryAndFilterByCategory() throws {
        let engine = try Self.engine()
        _ = try Self.run(engine, ["op": "insert", "layer": "places", "records": [
            Self.place("p1", 126.97, 37.55, category: "cafe"), Self.place("p2", 126.9701, 37.55, category: "cafe"),
            Self.place("p3", 126.9702, 37.55, category: "park"),
        ]])
        let features = try Self.clusters(engine, "places", zoom: 4)
        #expect(features.first?["properties"]?["categories"] == ["cafe": 2, "park": 1])
        #expect(Self.total(try Self.clusters(engine, "places", zoom: 4, ["category": ["park"]])) == 1)
    }

    @Test func writesApplyAllOrNothing() throws {
        let engine = try Self.engine()
        try Self.seededSightings(engine)
        // The third record is bad: nothing of the batch is applied.
        let bad = engine.handle(["op": "insert", "layer": "sightings", "records": [
            Self.sighting("n1", 127, 37, species: "Anas acuta"), Self.sighting("n2", 127, 37, species: "Anas acuta"),
            Self.sighting("n3", 127, 37, species: "Anas acuta", count: 0),
        ]])
        guard case let .failure(error) = bad else { Issue.record("expected an error"); return }
        #expect(error.code == "invalid_record")
        #expect(try engine.liveLayer(named: "sightings").count == 16)
        // A duplicate id, within the batch or with the layer, fails the whole batch too.
        let duplicate = engine.handle(["op": "insert", "layer": "sightings", "records": [
            Self.sighting("n1", 127, 37, species: "Anas acuta"), Self.sighting("a0", 127, 37, species: "Anas acuta"),
        ]])
        guard case let .failure(duplicateError) = duplicate else { Issue.record("expected an error"); return }
        #expect(duplicateError.code == "duplicate_id")
        #expect(duplicateError.field == "records[1]")
        #expect(try engine.liveLayer(named: "sightings").count == 16)
        // Deleting an unknown id: nothing deleted.
        let unknown = engine.handle(["op": "delete", "layer": "sightings", "ids": ["a1", "zzz"]])
        guard case let .failure(unknownError) = unknown else { Issue.record("expected an error"); return }
        #expect(unknownError.code == "unknown_id")
        #expect(try engine.liveLayer(named: "sightings").record(idKey: "a1") != nil)
    }

    /// Each write, applied or refused, asks for the heap's free pages to be given back
    /// (what it replaced is freed in other threads' arenas as readers let go of it).
    @Test func eachWriteAsksForTheReplacedMemoryToBeGivenBack() throws {
        let releases = Atomic<Int>(0)
        let store = LiveLayerStore(try LiveLayer(name: "sightings", kind: .sightings), releasingMemory: {
            releases.add(1, ordering: .relaxed)
        })
        let record = try LayerRecord(json: Self.sighting("a", 127, 37, species: "Anas acuta"), kind: .sightings,
                                     layer: "sightings", index: 0)
        try store.apply([.insert(record)])
        #expect(releases.load(ordering: .relaxed) == 1)
        try store.apply([.delete(idKey: record.idKey)])
        #expect(releases.load(ordering: .relaxed) == 2)
        #expect(throws: EngineError.self) { try store.apply([.delete(idKey: record.idKey)]) }
        #expect(releases.load(ordering: .relaxed) == 3)
        #expect(store.layer.count == 0)
    }

    @Test func upsertMovesAPointAndDeleteRemovesIt() throws {
        let engine = try Self.engine()
        try Self.seededSightings(engine)
        let version = try engine.liveLayer(named: "sightings").version
        // Move the crane to Busan: a new single point there, one fewer at the wetland.
        let moved = try Self.run(engine, ["op": "upsert", "layer": "sightings", "records": [
            Self.sighting("c0", 129.04, 35.11, species: "Grus japonensis", count: 3, at: "2025-01-02T09:00:00+09:00"),
        ]])
        #expect(moved["applied"]?.intValue == 1)
        #expect(moved["version"]?.intValue == version + 1)
        let features = try Self.clusters(engine, "sightings", zoom: 8)
        let busan = features.first { $0["id"] == "c0" }
        #expect(busan?["geometry"]?["coordinates"] == [129.04, 35.11])
        #expect(busan?["properties"]?["count"]?.intValue == 3)
        #expect(Self.total(features) == 16)
        _ = try Self.run(engine, ["op": "delete", "layer": "sightings", "ids": ["c0", "b0"]])
        #expect(Self.total(try Self.clusters(engine, "sightings", zoom: 8)) == 14)
        #expect(try engine.liveLayer(named: "sightings").record(idKey: "c0") == nil)
    }

    @Test func radiusLayersAreReadOnly() throws {
        let layer = try RadiusLayer(name: "fixed", kind: .points, features: [
            GeoJSON.pointFeature(coordinate: Coordinate(longitude: 1, latitude: 2), properties: [:], id: "x"),
        ])
        let engine = try Engine(layers: [layer])
        guard case let .failure(error) = engine.handle(["op": "delete", "layer": "fixed", "ids": ["x"]]) else {
            Issue.record("expected an error")
            return
        }
        #expect(error.code == "read_only_layer")
    }

    @Test func stationsFilterByLine() throws {
        let engine = try Self.engine()
        _ = try Self.run(engine, ["op": "insert", "layer": "stations", "records": [
            ["id": "seoul", "lon": 126.9707, "lat": 37.5547, "name": "Seoul", "lines": ["KTX", "Gyeongbu Line"]],
            ["id": "yongsan", "lon": 126.9648, "lat": 37.5298, "name": "Yongsan", "lines": ["KTX", "Honam Line"]],
            ["id": "cheongnyangni", "lon": 127.0468, "lat": 37.5804, "name": "Cheongnyangni", "lines": ["KTX-Eum"]],
        ]])
        #expect(Self.total(try Self.clusters(engine, "stations", zoom: 5, ["line": "KTX"])) == 2)
        #expect(Self.total(try Self.clusters(engine, "stations", zoom: 5, ["line": "Honam Line"])) == 1)
    }

    /// Readers during a stream of batch writes: every answer counts whole batches only.
    @Test func readersNeverSeeAPartialBatch() async throws {
        let engine = try Self.engine()
        let batchSize = 50, batches = 40
        let done = Flag()
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for b in 0..<batches {
                    var records: [JSONValue] = []
                    for i in 0..<batchSize {
                        records.append(Self.sighting("w\(b)-\(i)", 126 + Double(i) * 0.05, 34 + Double(b) * 0.1,
                                                     species: "Anas acuta"))
                    }
                    _ = try Self.run(engine, ["op": "insert", "layer": "sightings", "records": .array(records)])
                }
                done.set()
                return 0
            }
            for reader in 0..<3 {
                group.addTask {
                    var reads = 0
                    while !done.isSet || reads < 5 {
                        let features = try Self.clusters(engine, "sightings", zoom: 2 + reader * 3)
                        let total = Self.total(features)
                        #expect(total % batchSize == 0, "a reader saw \(total) points")
                        reads += 1
                    }
                    return reads
                }
            }
            for try await _ in group {}
        }
        #expect(try engine.liveLayer(named: "sightings").count == batchSize * batches)
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    @Test func sampleDataLoadsAsLiveLayers() throws {
        let root = String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        let layers = try LayerCatalog.load(directory: "/" + root + "/Data")
        let engine = try Engine(entries: layers)
        let sightings = try engine.liveLayer(named: "sightings")
        #expect(sightings.count > 10_000)
        let features = try Self.clusters(engine, "sightings", zoom: 6, ["species": "Grus japonensis", "months": [12, 1, 2]])
        #expect(Self.total(features) > 0)
        #expect(features.allSatisfy { feature in
            feature["properties"]?["cluster"] == nil || feature["properties"]?["species_count"] == 1
        })
    }

    static func records(_ json: [JSONValue], kind: LayerKind) throws -> [LayerRecord] {
        try json.enumerated().map { i, record throws(EngineError) in
            try LayerRecord(json: record, kind: kind, layer: "layer", index: i)
        }
    }

    /// Sightings of 6 species around Seoul, a tenth of them on one spot, over 3 years.
    static func randomSightings(_ count: Int) throws -> [LayerRecord] {
        var state: UInt64 = 42
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        let json = (0..<count).map { i -> JSONValue in
            let onSpot = next() % 10 == 0
            let lon = onSpot ? 126.97 : 126.5 + Double(next() % 100_000) / 100_000
            let lat = onSpot ? 37.55 : 37.0 + Double(next() % 100_000) / 100_000
            let time = "202\(2 + next() % 3)-\(10 + next() % 3)-1\(next() % 10)T0\(next() % 10):00:00+09:00"
            return sighting("s\(i)", lon, lat, species: "species \(next() % 6)", count: 1 + next() % 9, at: time)
        }
        return try records(json, kind: .sightings)
    }

    @Test func aLayerBuiltFromRecordsMatchesOneInsertedRecordByRecord() throws {
        let records = try Self.randomSightings(1_500)
        let built = try LiveLayer(name: "sightings", kind: .sightings, records: records)
        var inserted = try LiveLayer(name: "sightings", kind: .sightings)
        for (i, record) in records.enumerated() { try inserted.insert(record, index: i) }
        let consistent = built.index._checkInvariants()
        #expect(consistent)
        #expect(built.count == inserted.count)
        #expect(built.partitionNames == inserted.partitionNames)
        #expect(built.partitionNumbers == inserted.partitionNumbers)
        for slot in 0..<records.count {
            #expect(built.record(atSlot: slot) == inserted.record(atSlot: slot))
        }
        #expect(records.allSatisfy { built.slot(idKey: $0.idKey) == inserted.slot(idKey: $0.idKey) })
        let filters = [LayerFilter(), LayerFilter(species: ["species 2", "species 4"]), LayerFilter(months: [11, 12])]
        for filter in filters {
            let live = try built.liveFilter(filter)
            for zoom in 0...17 {
                let a = try built.index.clusters(in: .world, zoom: Double(zoom), filter: live)
                let b = try inserted.index.clusters(in: .world, zoom: Double(zoom), filter: live)
                #expect(built.featureCollection(a).value == inserted.featureCollection(b).value, "zoom \(zoom)")
                for id in a.features.compactMap(\.clusterID) {
                    #expect(try built.index.leaves(of: id, limit: 5, offset: 1, filter: live)
                            == inserted.index.leaves(of: id, limit: 5, offset: 1, filter: live))
                }
            }
        }
        // Later writes apply to both alike.
        var a = built, b = inserted
        try a.delete(idKey: records[3].idKey, index: 0)
        try b.delete(idKey: records[3].idKey, index: 0)
        try a.insert(records[3], index: 0)
        try b.insert(records[3], index: 0)
        let x = try a.index.clusters(in: .world, zoom: 9), y = try b.index.clusters(in: .world, zoom: 9)
        #expect(a.featureCollection(x).value == b.featureCollection(y).value)
    }

    /// The bulk init checks the points of each half of the records on its own and numbers
    /// the species afterwards: species first seen in the second half, in another order,
    /// get the numbers that inserting the records one by one gives them.
    @Test(arguments: [2, 3, 40, 41])
    func speciesFirstSeenLateAreNumberedAsInsertsNumberThem(count: Int) throws {
        let late = ["Grus japonensis", "Ardea alba", "Cygnus cygnus"]
        let records = try Self.records((0..<count).map { i in
            let species = i < count / 2 ? (i % 2 == 0 ? "Egretta garzetta" : "Ardea alba") : late[(i * 7) % late.count]
            return Self.sighting("s\(i)", 126.9 + Double(i) / 1_000, 37.5, species: species, count: 1 + i % 3,
                                 at: "2024-05-0\(1 + i % 9)T08:00:00+09:00")
        }, kind: .sightings)
        let built = try LiveLayer(name: "sightings", kind: .sightings, records: records)
        var inserted = try LiveLayer(name: "sightings", kind: .sightings)
        for (i, record) in records.enumerated() { try inserted.insert(record, index: i) }
        #expect(built.partitionNames == inserted.partitionNames)
        #expect(built.partitionNumbers == inserted.partitionNumbers)
        #expect(built.index._checkInvariants())
        for species in late + ["Egretta garzetta"] {
            let filter = LayerFilter(species: [species])
            let a = try built.index.clusters(in: .world, zoom: 3, filter: built.liveFilter(filter))
            let b = try inserted.index.clusters(in: .world, zoom: 3, filter: inserted.liveFilter(filter))
            #expect(built.featureCollection(a).value == inserted.featureCollection(b).value, "\(species)")
        }
    }

    @Test func aLayerBuiltFromRecordsRejectsTheFirstBadRecordAsInsertsDo() throws {
        var records = try Self.randomSightings(20)
        records[12] = records[5]
        records[15] = records[2]
        #expect(throws: EngineError.duplicateID(layer: "sightings", index: 12, id: records[5].idKey)) {
            try LiveLayer(name: "sightings", kind: .sightings, records: records)
        }
        // One category too many: the record that brings it fails, before a later duplicate.
        var places = try Self.records((0...LiveClusterIndex.maxPartitions).map { i in
            Self.place("p\(i)", 10, 10, category: "category \(i)")
        }, kind: .places)
        places.append(places[0])
        let inserting = #expect(throws: EngineError.self) {
            var layer = try LiveLayer(name: "places", kind: .places)
            for (i, record) in places.enumerated() { try layer.insert(record, index: i) }
        }
        let building = #expect(throws: EngineError.self) {
            try LiveLayer(name: "places", kind: .places, records: places)
        }
        #expect(building != nil && building == inserting)
        let limit = LiveClusterIndex.maxPartitions
        #expect(building == .core(.invalidOptions(reason: "partition must be within 0..<\(limit), got \(limit)"),
                                  field: "records[\(limit)]"))
        // A duplicate before that record is the error, as inserts one by one find it first.
        var early = places
        early.insert(places[0], at: 1)
        #expect(throws: EngineError.duplicateID(layer: "places", index: 1, id: places[0].idKey)) {
            try LiveLayer(name: "places", kind: .places, records: early)
        }
    }

    /// The id table of a layer built in one go is filled in the order of where its keys
    /// hash to, not of the records: with several ids given twice, the error still names
    /// the first record, in record order, whose id an earlier one holds; without, every
    /// id is found at its record's slot.
    @Test func aBuiltLayerNamesTheFirstDuplicateInRecordOrder() throws {
        let initial = try Self.randomSightings(3_000)
        let built = try LiveLayer(name: "sightings", kind: .sightings, records: initial)
        for (slot, record) in initial.enumerated() { #expect(built.slot(idKey: record.idKey) == slot) }
        var random = SeededRandom(seed: 11)
        for _ in 0..<20 {
            var records = initial
            var duplicates: [Int] = []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let original = Int.random(in: 0..<2_999, using: &random)
                let copy = Int.random(in: original + 1..<3_000, using: &random)
                records[copy] = Self.record(records[copy], id: records[original].idKey)
                duplicates.append(copy)
            }
            // The first position whose key an earlier record holds (a later copy may
            // have replaced an earlier original, so count from the records as they are).
            var seen = Set<String>()
            let first = records.indices.first { !seen.insert(records[$0].idKey).inserted }!
            #expect(first <= duplicates.min()!)
            #expect(throws: EngineError.duplicateID(layer: "sightings", index: first, id: records[first].idKey)) {
                try LiveLayer(name: "sightings", kind: .sightings, records: records)
            }
        }
    }

    /// Ids are found, after any mix of writes, where a dictionary of the records by id
    /// finds them, whether the layer was built with them or they were inserted later;
    /// ids deleted (and slots reused) are not found; a copy taken before later writes
    /// still finds its own.
    @Test func idsAreFoundAsADictionaryOfTheRecordsFindsThem() throws {
        let initial = try Self.randomSightings(2_000)
        var layer = try LiveLayer(name: "sightings", kind: .sightings, records: initial)
        var model: [String: LayerRecord] = [:]
        for record in initial { model[record.idKey] = record }
        var gone: [String] = []
        var random = SeededRandom(seed: 7)
        var snapshot: (layer: LiveLayer, model: [String: LayerRecord])?
        func check(_ layer: LiveLayer, _ model: [String: LayerRecord], _ gone: [String]) {
            for (key, record) in model {
                guard let slot = layer.slot(idKey: key) else {
                    Issue.record("\(key) not found")
                    return
                }
                #expect(layer.record(atSlot: slot)?.idKey == key)
                #expect(layer.record(idKey: key)?.coordinate == record.coordinate)
            }
            for key in gone where model[key] == nil {
                #expect(layer.slot(idKey: key) == nil, "\(key) found after its delete")
            }
            #expect(layer.slot(idKey: "never") == nil)
            #expect(layer.count == model.count)
        }
        for step in 0..<3_000 {
            let keys = Array(model.keys)
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !keys.isEmpty:
                let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                try layer.delete(idKey: key, index: step)
                model[key] = nil
                gone.append(key)
            case 1 where !gone.isEmpty:
                // An id deleted before (often one the layer was built with) comes back,
                // usually into the slot it left or another freed one.
                let key = gone[Int.random(in: 0..<gone.count, using: &random)]
                let record = Self.record(initial[Int.random(in: 0..<initial.count, using: &random)], id: key)
                if model[key] == nil {
                    try layer.insert(record, index: step)
                    model[key] = record
                } else {
                    #expect(throws: EngineError.duplicateID(layer: "sightings", index: step, id: key)) {
                        try layer.insert(record, index: step)
                    }
                }
            case 2 where !keys.isEmpty:
                let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                let record = Self.record(initial[Int.random(in: 0..<initial.count, using: &random)], id: key)
                try layer.upsert(record, index: step)
                model[key] = record
            default:
                let record = Self.record(initial[Int.random(in: 0..<initial.count, using: &random)], id: "new \(step)")
                try layer.insert(record, index: step)
                model[record.idKey] = record
            }
            if step % 250 == 0 { check(layer, model, gone) }
            if step == 1_500 { snapshot = (layer, model) }
        }
        check(layer, model, gone)
        if let snapshot { check(snapshot.layer, snapshot.model, gone) }
        #expect(throws: EngineError.unknownID(layer: "sightings", index: 0, id: "never")) {
            try layer.delete(idKey: "never", index: 0)
        }
    }

    /// The record with another id key.
    static func record(_ record: LayerRecord, id: String) -> LayerRecord {
        LayerRecord(idKey: id, coordinate: record.coordinate, fields: record.fields, featureText: record.featureText[...],
                    observerID: record.observerID, hasNote: false)
    }

    /// A generic point without an id cannot be addressed by an id: neither does it take
    /// one (the numeric id 1 is free whatever slot such a point has) nor is it found or
    /// deleted by one.
    @Test func aPointWithoutAnIdHasNoId() throws {
        let json: [JSONValue] = [["id": 7, "lon": 1, "lat": 1], ["lon": 2, "lat": 2], ["id": 1, "lon": 3, "lat": 3]]
        let records = try Self.records(json, kind: .points)
        #expect(records[1].idKey.isEmpty)
        var inserted = try LiveLayer(name: "points", kind: .points)
        for (i, record) in records.enumerated() { try inserted.insert(record, index: i) }
        for var layer in [try LiveLayer(name: "points", kind: .points, records: records), inserted] {
            #expect(layer.count == 3)
            #expect(layer.record(idKey: "#1")?.coordinate.longitude == 3)
            try layer.delete(idKey: "#1", index: 0)
            #expect(layer.record(atSlot: 1)?.coordinate.longitude == 2)
            #expect(layer.record(idKey: "#1") == nil)
            #expect(throws: EngineError.unknownID(layer: "points", index: 0, id: "#1")) {
                try layer.delete(idKey: "#1", index: 0)
            }
            #expect(layer.count == 2)
        }
    }
}
