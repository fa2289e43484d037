import Benchmark
import BenchmarkSupport
import GeoCluster

/// Both algorithms on the real set, GeoNames cities (`GeoNamesCities`), with the options
/// of the other benchmarks: registered only when `../shared` holds the file.
func geoNamesBenchmarks() {
    guard GeoNamesCities.isAvailable() else { return }
    let name = GeoNamesCities.name
    let buildConfiguration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 0, maxDuration: .seconds(30), maxIterations: 5)
    let viewportConfiguration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal], warmupIterations: 200, maxDuration: .seconds(20), maxIterations: 2_000)

    Benchmark("radius build \(name)", configuration: buildConfiguration) { benchmark in
        let points = GeoNamesFixture.points
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try RadiusClusterIndex(coordinates: points, options: GeoNamesFixture.radiusOptions))
        }
    }
    Benchmark("live build \(name)", configuration: buildConfiguration) { benchmark in
        let points = GeoNamesFixture.livePoints
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try LiveClusterIndex(points: points, options: LiveClusterOptions(GeoNamesFixture.radiusOptions)))
        }
    }
    Benchmark("radius viewport \(name)", configuration: viewportConfiguration) { benchmark in
        let fixture = GeoNamesFixture.shared
        try measureViewport(benchmark, of: fixture.radius, from: fixture.viewports)
    }
    Benchmark("live viewport \(name)", configuration: viewportConfiguration) { benchmark in
        let fixture = GeoNamesFixture.shared
        let viewport = fixture.viewports.next()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try fixture.live.clusters(in: viewport.bbox, zoom: viewport.zoom).features.count)
        }
    }
}

/// The GeoNames places (loaded on first use), and both indexes over them with 200
/// viewports centred on places (built on first use, so that the build benchmarks' peak
/// memory does not count them).
final class GeoNamesFixture: Sendable {
    static let radiusOptions = RadiusClusterOptions(radiusPixels: 60, extent: 512, minZoom: 0, maxZoom: 16)
    static let points: [Coordinate] = {
        guard let points = GeoNamesCities.load() else {
            preconditionFailure("the GeoNames file was there when the benchmarks were registered")
        }
        return points
    }()
    static let livePoints = LiveFixture.livePoints(points)
    static let shared = GeoNamesFixture()

    let radius: RadiusClusterIndex
    let live: LiveClusterIndex
    let viewports: ViewportCycle

    private init() {
        let points = Self.points
        do {
            radius = try RadiusClusterIndex(coordinates: points, options: Self.radiusOptions)
            live = try LiveClusterIndex(points: Self.livePoints, options: LiveClusterOptions(Self.radiusOptions))
        } catch {
            preconditionFailure("GeoNames positions were checked on loading and the options are fixed: \(error)")
        }
        viewports = ViewportCycle(PointSets.viewports(over: points))
    }
}
