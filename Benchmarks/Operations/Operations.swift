import Benchmark
import BenchmarkSupport
import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Synchronization

/// The engine's work around the indexes, through `Engine` as both transports call it:
/// - viewports of a live sightings layer of 1M points as GeoJSON bytes, cluster
///   aggregates (individuals, species, latest sighting) included;
/// - single writes (`insert`, `upsert` that moves a sighting, `delete`) to a live
///   sightings layer of 1M points while another thread keeps asking for viewports of it
///   (the 200 viewports of the clustering benchmarks, answered as bytes as the transports
///   write them);
/// - the same viewports with a key check, and with two species sensitive
///   (KeysAndSensitiveSpecies.swift);
/// - `reachable` from the stations of the sample data in Data/: straight-line walks over
///   100,000 generated places around Korean stations, and walks over the pedestrian
///   network of central Helsinki.
/// The configuration of the viewport benchmarks, one for all so that their figures compare.
var viewportQueries: Benchmark.Configuration {
    .init(metrics: [.wallClock, .mallocCountTotal], warmupIterations: 200, maxDuration: .seconds(20), maxIterations: 2_000)
}

/// Answers the next of the 200 viewports of the 1M-sighting layer as GeoJSON bytes, as the
/// transports write them, with `engine`; `before` runs ahead of each answer (a key check).
func measureViewport(_ benchmark: Benchmark, engine: Engine,
                     before: (Request) throws -> Void = { _ in }) throws {
    let view = WriteFixture.shared.nextViewport()
    let request = Request.clusters(layer: "sightings", bbox: view.bbox, zoom: view.zoom)
    var output: [UInt8] = []
    output.reserveCapacity(1 << 20)
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        output.removeAll(keepingCapacity: true)
        try before(request)
        try engine.encode(request, into: &output)
    }
}

let benchmarks: @Sendable () -> Void = {
    let writes = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal, .throughput],
                                         warmupIterations: 100, maxDuration: .seconds(10), maxIterations: 10_000)
    let startQueries: Benchmark.BenchmarkSetupHook = { WriteFixture.shared.startQueries() }
    let stopQueries: Benchmark.BenchmarkTeardownHook = { WriteFixture.shared.stopQueries() }

    let writeRequests: [(name: String, request: @Sendable (WriteFixture) -> JSONValue)] = [
        ("live insert while queries run, sightings 1000k", { $0.insertRequest() }),
        ("live upsert (move) while queries run, sightings 1000k", { $0.moveRequest() }),
        ("live delete while queries run, sightings 1000k", { $0.deleteRequest() }),
    ]
    for (name, request) in writeRequests {
        Benchmark(name, configuration: writes, closure: { benchmark in
            let fixture = WriteFixture.shared
            let requests = benchmark.scaledIterations.map { _ in request(fixture) }
            benchmark.startMeasurement()
            for request in requests { try fixture.write(request) }
        }, setup: startQueries, teardown: stopQueries)
    }

    Benchmark("clusters as GeoJSON, sightings 1000k", configuration: viewportQueries) { benchmark in
        try measureViewport(benchmark, engine: WriteFixture.shared.engine)
    }

    keysAndSensitiveSpeciesBenchmarks()

    let reachable = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal, .throughput],
                                            warmupIterations: 50, maxDuration: .seconds(10), maxIterations: 5_000)
    Benchmark("reachable straight line, places 100k", configuration: reachable) { benchmark in
        let fixture = ReachableFixture.shared
        let request = fixture.nextKoreaRequest()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try fixture.engine.handle(request).get()) }
    }

    Benchmark("reachable over the Helsinki walking network", configuration: reachable) { benchmark in
        let fixture = ReachableFixture.shared
        let request = fixture.nextHelsinkiRequest()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try fixture.engine.handle(request).get()) }
    }

    Benchmark("reachable over the Helsinki walking network, with routes", configuration: reachable) { benchmark in
        let fixture = ReachableFixture.shared
        var request = fixture.nextHelsinkiRequest()
        if case var .object(object) = request {
            object["include"] = ["route"]
            request = .object(object)
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try fixture.engine.handle(request).get()) }
    }

    // The walking network of the Helsinki extract in ../shared (read from there, skipped
    // when absent), through osmium, as `geo-cluster network import` builds it.
    let helsinkiExtract = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/data/osm_helsinki_central/helsinki.osm.pbf").path
    if FileManager.default.fileExists(atPath: helsinkiExtract) {
        Benchmark("network import, Helsinki extract",
                  configuration: .init(metrics: [.wallClock, .cpuTotal, .peakMemoryResident], warmupIterations: 1,
                                       maxDuration: .seconds(20), maxIterations: 10)) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try OSMWalkingNetwork.importing(helsinkiExtract).nodes.count)
            }
        }
    } else {
        print("network import benchmark skipped: \(helsinkiExtract) not found (it is read from ../shared)")
    }

    Benchmark("reachable from a start position via a place, straight line, places 100k", configuration: reachable) { benchmark in
        let fixture = ReachableFixture.shared
        let request = fixture.nextKoreaRequest(startingAway: true)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try fixture.engine.handle(request).get()) }
    }

    Benchmark("reachable from a start position via a place, Helsinki walking network", configuration: reachable) { benchmark in
        let fixture = ReachableFixture.shared
        let request = fixture.nextHelsinkiRequest(startingAway: true)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try fixture.engine.handle(request).get()) }
    }
}

/// A live sightings layer of 1M Korea-mixture points (record ids `s0`…), its engine, and
/// a thread that answers viewports of it while the write benchmarks run.
final class WriteFixture: Sendable {
    static let shared = WriteFixture()

    static let count = 1_000_000
    static let species = ["Anas acuta", "Grus monacha", "Egretta alba", "Ardea cinerea", "Cygnus cygnus",
                          "Anser fabalis", "Larus crassirostris", "Platalea minor", "Numenius madagascariensis",
                          "Haliaeetus albicilla"]

    let engine: Engine
    let points: [Coordinate]
    let viewports: [(bbox: BoundingBox, zoom: Double)]
    private let cursors = Mutex((insert: 0, move: 0, delete: 0, view: 0))
    private let running = Atomic<Bool>(false)
    private let answered = Atomic<Int>(0)
    /// The running query thread's end signal and start time.
    private let thread = Mutex<(done: DispatchSemaphore, start: ContinuousClock.Instant)?>(nil)

    init() {
        points = PointSets.points(.korea, count: Self.count)
        viewports = PointSets.viewports(over: points).map { ($0.bbox, $0.zoom) }
        do {
            let records = try points.enumerated().map { i, coordinate in
                try LayerRecord(json: Self.sighting(id: "s\(i)", at: coordinate, n: i), kind: .sightings,
                                layer: "sightings", index: i)
            }
            let layer = try LiveLayer(name: "sightings", kind: .sightings, records: records)
            engine = try Engine(entries: [.live(LiveLayerStore(layer))])
        } catch {
            preconditionFailure("the generated sightings are valid: \(error)")
        }
    }

    static func sighting(id: String, at coordinate: Coordinate, n: Int) -> JSONValue {
        let day = 1 + n % 28, month = 1 + n / 28 % 12
        return .object(["id": .string(id), "lon": .number(coordinate.longitude), "lat": .number(coordinate.latitude),
                        "species": .string(species[n % species.count]), "count": .number(Double(1 + n % 9)),
                        "observed_at": .string("2025-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)T07:30:00+09:00")])
    }

    /// The next of the 200 viewports, in turn.
    func nextViewport() -> (bbox: BoundingBox, zoom: Double) {
        cursors.withLock { cursors in
            defer { cursors.view += 1 }
            return viewports[cursors.view % viewports.count]
        }
    }

    /// An insert of a new sighting at the place of an existing one.
    func insertRequest() -> JSONValue {
        let n = cursors.withLock { cursors in
            defer { cursors.insert += 1 }
            return cursors.insert
        }
        let record = Self.sighting(id: "new\(n)", at: points[(n &* 7_919) % points.count], n: n)
        return .object(["op": "insert", "layer": "sightings", "records": [record]])
    }

    /// An upsert that moves one of the first sightings to the place of another.
    func moveRequest() -> JSONValue {
        let n = cursors.withLock { cursors in
            defer { cursors.move += 1 }
            return cursors.move
        }
        let record = Self.sighting(id: "s\(n % (Self.count / 2))", at: points[(n &* 7_919 &+ 13) % points.count], n: n)
        return .object(["op": "upsert", "layer": "sightings", "records": [record]])
    }

    /// A delete of one of the last sightings, each once.
    func deleteRequest() -> JSONValue {
        let n = cursors.withLock { cursors in
            defer { cursors.delete += 1 }
            return cursors.delete
        }
        precondition(n < Self.count / 2, "more deletes than sightings set aside for them")
        return .object(["op": "delete", "layer": "sightings", "ids": [.string("s\(Self.count - 1 - n)")]])
    }

    func write(_ request: JSONValue) throws {
        blackHole(try engine.handle(request).get())
    }

    /// Starts the thread that answers viewports, one after another, until ``stopQueries()``.
    func startQueries() {
        guard !running.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let done = DispatchSemaphore(value: 0)
        answered.store(0, ordering: .relaxed)
        thread.withLock { $0 = (done, ContinuousClock.now) }
        let queries = Thread { [self] in
            var output: [UInt8] = []
            var k = 0
            while running.load(ordering: .relaxed) {
                let view = viewports[k % viewports.count]
                output.removeAll(keepingCapacity: true)
                try? engine.encode(.clusters(layer: "sightings", bbox: view.bbox, zoom: view.zoom), into: &output)
                answered.add(1, ordering: .relaxed)
                k += 1
            }
            done.signal()
        }
        queries.start()
    }

    func stopQueries() {
        running.store(false, ordering: .sequentiallyConsistent)
        guard let (done, start) = thread.withLock({ $0.take() }) else { return }
        done.wait()
        let elapsed = (ContinuousClock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
        let n = answered.load(ordering: .relaxed)
        print("the query thread answered \(n) viewports in \(String(format: "%.2f", seconds)) s meanwhile")
    }
}

/// The sample layers and walking network of Data/, plus 100,000 generated places around
/// the Korean stations, and the requests the `reachable` benchmarks cycle through.
final class ReachableFixture: Sendable {
    static let shared = ReachableFixture()

    let engine: Engine
    let koreaStations: [(id: JSONValue, coordinate: Coordinate)]
    let helsinkiStations: [(id: JSONValue, coordinate: Coordinate)]
    private let cursor = Mutex(0)

    init() {
        let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Data").path
        do {
            let sample = try LayerCatalog.load(directory: data)
            let stations = sample.compactMap { entry -> LiveLayer? in
                guard case let .live(store) = entry, store.kind == .stations else { return nil }
                return store.layer
            }
            guard let korea = stations.first(where: { $0.name == "stations" }),
                  let helsinki = stations.first(where: { $0.name == "helsinki_stations" }) else {
                preconditionFailure("Data/ has the stations and helsinki_stations layers")
            }
            koreaStations = (0..<korea.count).compactMap { korea.record(atSlot: $0).map { ($0.idJSON, $0.coordinate) } }
            helsinkiStations = (0..<helsinki.count).compactMap { helsinki.record(atSlot: $0).map { ($0.idJSON, $0.coordinate) } }
            // Places within about 3 km of the stations, 100,000 in all.
            var random = SplitMix64(seed: PointSets.seed + 11)
            let categories = ["cafe", "restaurant", "museum", "park", "viewpoint", "market"]
            var records: [LayerRecord] = []
            records.reserveCapacity(100_000)
            let origins = (0..<korea.count).compactMap { korea.record(atSlot: $0)?.coordinate }
            for i in 0..<100_000 {
                let origin = origins[i % origins.count]
                let dx = (Double(random.next() % 60_000) / 10_000 - 3) / 88.0
                let dy = (Double(random.next() % 60_000) / 10_000 - 3) / 111.0
                let json: JSONValue = .object([
                    "id": .string("p\(i)"), "lon": .number(origin.longitude + dx), "lat": .number(origin.latitude + dy),
                    "name": .string("Place \(i)"), "category": .string(categories[i % categories.count]),
                    "dwell_minutes": .number(Double(10 + random.next() % 50)),
                ])
                records.append(try LayerRecord(json: json, kind: .places, layer: "generated_places", index: i))
            }
            let places = try LiveLayer(name: "generated_places", kind: .places, records: records)
            engine = try Engine(entries: sample + [.live(LiveLayerStore(places))],
                                networks: try LayerCatalog.loadNetworks(directory: data))
        } catch {
            preconditionFailure("the sample data loads: \(error)")
        }
    }

    private func next() -> Int {
        cursor.withLock { n in
            defer { n += 1 }
            return n
        }
    }

    /// From the next Korean station, with 30 to 180 minutes left.
    /// `startingAway`: the traveller is 500 m north-east of the station (a walk there,
    /// then to the station).
    func nextKoreaRequest(startingAway: Bool = false) -> JSONValue {
        let n = next()
        var request: JSONObject = ["op": "reachable", "layer": "generated_places",
                                   "station": koreaStations[n % koreaStations.count].id,
                                   "remaining_minutes": .number(Double(30 + n * 37 % 151))]
        if startingAway { Self.startAway(from: koreaStations[n % koreaStations.count].coordinate, into: &request) }
        return .object(request)
    }

    static func startAway(from station: Coordinate, into request: inout JSONObject) {
        request["lon"] = .number(station.longitude + 0.0040)
        request["lat"] = .number(station.latitude + 0.0032)
    }

    /// From the next Helsinki station, over the walking network, with 30 to 180 minutes left.
    func nextHelsinkiRequest(startingAway: Bool = false) -> JSONValue {
        let n = next()
        var request: JSONObject = ["op": "reachable", "layer": "helsinki_places", "stations_layer": "helsinki_stations",
                                   "station": helsinkiStations[n % helsinkiStations.count].id,
                                   "remaining_minutes": .number(Double(30 + n * 37 % 151)),
                                   "travel": "network", "network": "helsinki_walk"]
        if startingAway { Self.startAway(from: helsinkiStations[n % helsinkiStations.count].coordinate, into: &request) }
        return .object(request)
    }
}
