import ArgumentParser
import BenchmarkSupport
import GeoCluster
#if canImport(Glibc)
import Glibc
#endif

/// The Swift half of `Benchmarks/compare_pysupercluster.sh`: `points` writes a point set
/// of `PointSets` and its viewports as raw float64 files that the peer reads unchanged,
/// `measure` times one index built from those files in this process, the way the peer's
/// measuring process does.
@main
struct BenchRadius: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-radius",
        abstract: "Benchmark point files and one-process measurements of the radius index.",
        subcommands: [WritePoints.self, Measure.self, Display.self]
    )
}

struct WritePoints: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "points",
        abstract: "Write a PointSets point set and its 200 viewports as little-endian float64 files.",
        discussion: """
            POINTS holds longitude, latitude pairs (16 bytes a point). VIEWPORTS holds \
            west, south, east, north, zoom per viewport (40 bytes), the box as \
            PointSets.Viewport stores it (longitudes not wrapped).
            """
    )

    @Option(help: "uniform or korea.")
    var distribution: String

    @Option(help: "Number of points.")
    var count: Int

    @Option(help: "Output file for the points.")
    var points: String

    @Option(help: "Output file for the viewports.")
    var viewports: String

    func run() throws {
        guard let set = PointSets.Distribution(rawValue: distribution) else {
            throw ValidationError("unknown distribution '\(distribution)'; use uniform or korea")
        }
        let coordinates = PointSets.points(set, count: count)
        try Float64File.write(coordinates.flatMap { [$0.longitude, $0.latitude] }, to: points)
        let views = PointSets.viewports(over: coordinates)
        try Float64File.write(views.flatMap { [$0.bbox.west, $0.bbox.south, $0.bbox.east, $0.bbox.north, $0.zoom] },
                              to: viewports)
    }
}

struct Measure: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build one index from point files and time viewport queries; prints one JSON object.",
        discussion: """
            Build time is the wall clock of the initializer (validation, projection, every \
            level), and the process's CPU time over the same span. Index memory is \
            resident memory after the build minus before it, both read after \
            malloc_trim(0). Each query sample is the wall clock (or, in the \
            second half of the passes, the thread's CPU time) of one clusters(in:zoom:) \
            call, which returns a new array of features. With --algorithm live, the \
            index is a LiveClusterIndex (without partitions unless --partitions) of the same points and options, \
            built from LivePoint values made before the build, and its build includes \
            prepareDisplay() (unless --no-prepare). The first, untimed pass \
            (where the live index forms the display groups it has not kept yet) is reported apart: \
            first_pass_nanoseconds, by the wall clock; after_queries_rss_bytes is \
            resident memory after every pass, after malloc_trim(0).
            """
    )

    @Option(help: "Points file written by `bench-radius points`.")
    var points: String

    @Option(help: "Viewports file written by `bench-radius points`.")
    var viewports: String

    @Option(help: "Cluster radius in pixels.")
    var radius: Double = 60

    @Option(help: "Tile extent in pixels.")
    var extent: Int = 512

    @Option(help: "Lowest clustered zoom.")
    var minZoom: Int = 0

    @Option(help: "Highest clustered zoom.")
    var maxZoom: Int = 16

    @Option(help: "Passes over the viewports timed by each clock, after one unmeasured pass.")
    var rounds: Int = 10

    @Option(help: "radius (supercluster's algorithm) or live.")
    var algorithm: String = "radius"

    @Flag(help: """
        Before the JSON object, print every feature of the unmeasured pass, one line each \
        (kind with id or index and count, longitude, latitude), to compare two builds' answers.
        """)
    var printFeatures = false

    @Flag(help: "Live only: leave out prepareDisplay() after the build (every first look is then formed).")
    var noPrepare = false

    @Option(help: "Live only: the kept display groups' budget in items (the layer's kept_items; default: four per point up to 4,000,000, half the points beyond 8M).")
    var keptItems: Int?

    @Option(help: """
        Live only: points in this many partitions (0: none), as a sightings layer's \
        species: each point's partition drawn at random, weight 1-5, a time in one \
        month; the index then keeps a tree per partition and counts by partition, and \
        its clusters' summaries keep the top 3, as sightings layers do.
        """)
    var partitions: Int = 0

    @Option(help: """
        Live only: in the timed passes, add a point before every N-th query (0: none), \
        about 100 m from a random input point, as a new sighting would be; the queries \
        then read the new version. Writes are timed apart (write_nanoseconds).
        """)
    var writeEvery: Int = 0

    @Option(help: """
        Milliseconds to wait before each view of the first pass (not timed): first looks \
        at a layer after quiet moments, as on a server between its users' views.
        """)
    var pauseMilliseconds: Int = 0

    func run() throws {
        let startResidentBytes = ProcessUsage.residentBytes()
        let coordinates = try Float64File.read(points).pairs().map { Coordinate(longitude: $0.0, latitude: $0.1) }
        let views = try Float64File.read(viewports).viewports()
        let options = RadiusClusterOptions(radiusPixels: radius, extent: extent, minZoom: minZoom, maxZoom: maxZoom)
        guard algorithm == "radius" || algorithm == "live" else {
            throw ValidationError("--algorithm must be radius or live, got \(algorithm)")
        }
        guard partitions >= 0, partitions <= LiveClusterIndex.maxPartitions, partitions == 0 || algorithm == "live" else {
            throw ValidationError("--partitions needs --algorithm live and 0 to \(LiveClusterIndex.maxPartitions)")
        }
        var species = SplitMix64(seed: PointSets.seed + 3)
        // 2025-05-01T00:00:00Z, plus up to 28 days.
        let monthStart: Int64 = 1_746_057_600
        let livePoints = algorithm != "live" ? [] : coordinates.enumerated().map { i, coordinate in
            partitions == 0 ? LivePoint(coordinate: coordinate)
                : LivePoint(coordinate: coordinate, partition: Int(species.next() % UInt64(partitions)),
                            weight: 1 + i % 5, time: monthStart + Int64(i % 28) * 86_400)
        }

        HeapTrim.releaseFreePages()
        let beforeBuildBytes = ProcessUsage.residentBytes()
        let buildStart = ProcessUsage.nanoseconds(CLOCK_MONOTONIC)
        let buildStartCPUSeconds = ProcessUsage.cpuSeconds()
        guard writeEvery >= 0, writeEvery == 0 || algorithm == "live" else {
            throw ValidationError("--write-every needs --algorithm live and a count of 0 or more")
        }
        // One of the two; the live index is held once only, so that a write changes it in place.
        var radiusIndex: RadiusClusterIndex?
        var preparedZoom: Int?
        var live: LiveClusterIndex?
        if algorithm == "live" {
            let built = try LiveClusterIndex(points: livePoints,
                                             options: LiveClusterOptions(options, keptItems: keptItems),
                                             partitioned: partitions > 0, partitionsPerSummary: partitions > 0 ? 3 : nil)
            // What a live layer does after loading (in the background there): the first
            // look is prepared. Counted in the build here.
            if !noPrepare { preparedZoom = built.prepareDisplay() }
            live = built
        } else {
            radiusIndex = try RadiusClusterIndex(coordinates: coordinates, options: options)
        }
        let buildCPUSeconds = ProcessUsage.cpuSeconds() - buildStartCPUSeconds
        let keptAfterBuild = live?.keptItems
        let buildSeconds = Double(ProcessUsage.nanoseconds(CLOCK_MONOTONIC) - buildStart) * 1e-9
        HeapTrim.releaseFreePages()
        let afterBuildBytes = ProcessUsage.residentBytes()

        // Pass 0 warms up and counts features; its wall clock is reported apart (the live
        // index forms and keeps its display groups there). The next `rounds` passes are
        // timed by the wall clock, the `rounds` after them by the thread's CPU clock, which
        // preemption on a loaded machine does not stretch.
        var features = 0
        var firstNanoseconds: [Int64] = []
        var wallNanoseconds: [Int64] = []
        var cpuNanoseconds: [Int64] = []
        var writeNanoseconds: [Int64] = []
        var random = SplitMix64(seed: PointSets.seed + 2)
        var queries = 0
        // One untimed query of a small box at the first zoom before the passes, as the peer's
        // harness makes: the first call of a process pays what it pays once (in this
        // harness, 0.2-0.3 ms, half of it the Swift runtime's type lookups), which is not the
        // cost of a first look at a view.
        let warmUp = try BoundingBox(west: 0, south: 0, east: 0.001, north: 0.001)
        _ = try live?.viewport(warmUp, zoom: Double(minZoom)) ?? radiusIndex!.viewport(warmUp, zoom: Double(minZoom))
        for round in 0...(2 * rounds) {
            let clockID = round > rounds ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC
            for view in views {
                if round > 0, writeEvery > 0, queries % writeEvery == 0, var changed = live {
                    // About 100 m (0.001 degrees) around an input point, new slot at the end.
                    let near = coordinates[Int(random.next() % UInt64(coordinates.count))]
                    let point = LivePoint(coordinate: Coordinate(
                        longitude: min(180, max(-180, near.longitude + random.uniform(-0.001, 0.001))),
                        latitude: min(85, max(-85, near.latitude + random.uniform(-0.001, 0.001)))))
                    let start = ProcessUsage.nanoseconds(clockID)
                    live = nil  // the one reference left, so that the change happens in place
                    try changed.insert(point, slot: changed.slotCount)
                    writeNanoseconds.append(ProcessUsage.nanoseconds(clockID) - start)
                    live = changed
                }
                if round == 0, pauseMilliseconds > 0 { usleep(useconds_t(min(pauseMilliseconds, 60_000) * 1_000)) }
                if round > 0 { queries += 1 }
                let start = ProcessUsage.nanoseconds(clockID)
                let result = try live?.viewport(view.bbox, zoom: view.zoom)
                    ?? radiusIndex!.viewport(view.bbox, zoom: view.zoom)
                let elapsed = ProcessUsage.nanoseconds(clockID) - start
                // The array is freed after the clock read, as the peer's list is.
                withExtendedLifetime(result) {}
                if round == 0 {
                    if printFeatures {
                        for feature in result {
                            print(feature.kind, feature.coordinate.longitude, feature.coordinate.latitude)
                        }
                    }
                    features += result.count
                    firstNanoseconds.append(elapsed)
                } else if round <= rounds {
                    wallNanoseconds.append(elapsed)
                } else {
                    cpuNanoseconds.append(elapsed)
                }
            }
        }

        HeapTrim.releaseFreePages()
        let afterQueriesBytes = ProcessUsage.residentBytes()
        print("""
            {"implementation":"geo-cluster","algorithm":"\(algorithm)","points":\(coordinates.count),\
            "build_seconds":\(buildSeconds),\
            "build_cpu_seconds":\(buildCPUSeconds),\
            "prepared_zoom":\(preparedZoom.map(String.init) ?? "null"),\
            "kept_items_after_build":\(keptAfterBuild.map { String($0.held) } ?? "null"),\
            "kept_items_budget":\(keptAfterBuild.map { String($0.budget) } ?? "null"),\
            "kept_items_after_queries":\(live.map { String($0.keptItems.held) } ?? "null"),\
            "start_rss_bytes":\(startResidentBytes),\
            "before_build_rss_bytes":\(beforeBuildBytes),\
            "index_bytes":\(afterBuildBytes - beforeBuildBytes),\
            "peak_rss_bytes":\(ProcessUsage.peakResidentBytes()),\
            "features":\(features),\
            "after_queries_rss_bytes":\(afterQueriesBytes),\
            "first_pass_nanoseconds":[\(firstNanoseconds.map(String.init).joined(separator: ","))],\
            "query_nanoseconds":[\(wallNanoseconds.map(String.init).joined(separator: ","))],\
            "query_cpu_nanoseconds":[\(cpuNanoseconds.map(String.init).joined(separator: ","))],\
            "write_nanoseconds":[\(writeNanoseconds.map(String.init).joined(separator: ","))]}
            """)
    }
}

/// The query `measure` times, for either algorithm.
protocol ViewportIndex {
    /// The features of a viewport, as a new array.
    func viewport(_ bbox: BoundingBox, zoom: Double) throws -> [ClusterFeature]
}

extension RadiusClusterIndex: ViewportIndex {
    func viewport(_ bbox: BoundingBox, zoom: Double) throws -> [ClusterFeature] {
        try clusters(in: bbox, zoom: zoom)
    }
}

extension LiveClusterIndex: ViewportIndex {
    func viewport(_ bbox: BoundingBox, zoom: Double) throws -> [ClusterFeature] {
        try clusters(in: bbox, zoom: zoom).features
    }
}
