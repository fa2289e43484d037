import Benchmark
import BenchmarkSupport
import GeoCluster
import Synchronization

/// Index builds and viewport queries of the radius algorithm on the deterministic point
/// sets of `PointSets` (and of both algorithms on GeoNames cities, when `../shared` has
/// them), with the options of the published peer figures: radius 60, extent 512, zooms 0-16.
let benchmarks: @Sendable () -> Void = {
    let options = RadiusClusterOptions(radiusPixels: 60, extent: 512, minZoom: 0, maxZoom: 16)
    let sizes = [100_000, 1_000_000]

    for distribution in PointSets.Distribution.allCases {
        for count in sizes {
            let name = "\(distribution.rawValue) \(count / 1_000)k"

            Benchmark("radius build \(name)",
                      configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
                                           warmupIterations: 0, maxDuration: .seconds(30), maxIterations: 3)) { benchmark in
                let points = PointSets.points(distribution, count: count)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(try RadiusClusterIndex(coordinates: points, options: options))
                }
            }

            // The closure runs once per measured iteration: one viewport query each, on an
            // index built once (ViewportFixture) outside the measurement.
            Benchmark("radius viewport \(name)",
                      configuration: .init(metrics: [.wallClock, .mallocCountTotal],
                                           warmupIterations: 200, maxDuration: .seconds(20), maxIterations: 2_000)) { benchmark in
                let fixture = ViewportFixture.shared(distribution, count)
                try measureViewport(benchmark, of: fixture.index, from: fixture.viewports)
            }
        }
    }

    liveBenchmarks()
    geoNamesBenchmarks()

    Benchmark("radius world clusters z0-16 korea 100k",
              configuration: .init(metrics: [.wallClock], warmupIterations: 1, maxIterations: 20)) { benchmark in
        let index = try RadiusClusterIndex(coordinates: PointSets.points(.korea, count: 100_000), options: options)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for zoom in 0...16 {
                blackHole(try index.clusters(in: .world, zoom: Double(zoom)).count)
            }
        }
    }

    // A new index for each iteration: world queries at deep zooms keep no groups, but the
    // shallow ones would be read from the previous iteration's.
    Benchmark("live world clusters z0-16 korea 100k",
              configuration: .init(metrics: [.wallClock], warmupIterations: 1, maxIterations: 20)) { benchmark in
        let points = LiveFixture.livePoints(PointSets.points(.korea, count: 100_000))
        let index = try LiveClusterIndex(points: points, options: LiveClusterOptions(options))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for zoom in 0...16 {
                blackHole(try index.clusters(in: .world, zoom: Double(zoom)).features.count)
            }
        }
    }
}

/// An index and its 200 viewports per point set, built on first use and kept for the
/// whole run.
final class ViewportFixture: Sendable {
    let index: RadiusClusterIndex
    let viewports: ViewportCycle

    init(_ distribution: PointSets.Distribution, _ count: Int) {
        let points = PointSets.points(distribution, count: count)
        do {
            index = try RadiusClusterIndex(coordinates: points, options: RadiusClusterOptions(radiusPixels: 60, extent: 512))
        } catch {
            preconditionFailure("the generated points and fixed options are valid: \(error)")
        }
        viewports = ViewportCycle(PointSets.viewports(over: points))
    }

    private static let all = Mutex<[String: ViewportFixture]>([:])

    static func shared(_ distribution: PointSets.Distribution, _ count: Int) -> ViewportFixture {
        all.withLock { fixtures in
            let key = "\(distribution.rawValue)-\(count)"
            if let fixture = fixtures[key] { return fixture }
            let fixture = ViewportFixture(distribution, count)
            fixtures[key] = fixture
            return fixture
        }
    }
}

/// The measured loop of a radius viewport benchmark: the cycle's next viewport, queried
/// once per scaled iteration into a reused array.
func measureViewport(_ benchmark: Benchmark, of index: RadiusClusterIndex, from viewports: ViewportCycle) throws {
    let viewport = viewports.next()
    var result: [ClusterFeature] = []
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        try index.clusters(in: viewport.bbox, zoom: viewport.zoom, into: &result)
        blackHole(result.count)
    }
}
