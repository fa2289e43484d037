import Benchmark
import BenchmarkSupport
import GeoCluster

/// Index builds and viewport queries of the radius algorithm on the deterministic point
/// sets of `PointSets`, with the options of the published peer figures: radius 60,
/// extent 512, zooms 0-16.
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

            Benchmark("radius viewport \(name)",
                      configuration: .init(metrics: [.wallClock, .mallocCountTotal],
                                           warmupIterations: 200, maxDuration: .seconds(20), maxIterations: 2_000)) { benchmark in
                let points = PointSets.points(distribution, count: count)
                let index = try RadiusClusterIndex(coordinates: points, options: options)
                let viewports = PointSets.viewports(over: points)
                var result: [ClusterFeature] = []
                var next = 0
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    let viewport = viewports[next % viewports.count]
                    next += 1
                    result.removeAll(keepingCapacity: true)
                    try index.clusters(in: viewport.bbox, zoom: viewport.zoom, into: &result)
                    blackHole(result.count)
                }
            }
        }
    }

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
}
