import Benchmark
import BenchmarkSupport
import GeoCluster
import Synchronization

/// The live index on the same point sets and options as the radius benchmarks: build,
/// viewport queries (all points, and filtered to 3 of 30 partitions and a season), and
/// single inserts on a built 1M index.
func liveBenchmarks() {
    let options = LiveClusterOptions(radiusPixels: 60, extent: 512, minZoom: 0, maxZoom: 16)
    for distribution in PointSets.Distribution.allCases {
        for count in [100_000, 1_000_000] {
            let name = "\(distribution.rawValue) \(count / 1_000)k"
            Benchmark("live build \(name)",
                      configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
                                           warmupIterations: 0, maxDuration: .seconds(30), maxIterations: 3)) { benchmark in
                let points = LiveFixture.livePoints(PointSets.points(distribution, count: count))
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(try LiveClusterIndex(points: points, options: options))
                }
            }
        }
        let name = "\(distribution.rawValue) 1000k"
        Benchmark("live viewport \(name)",
                  configuration: .init(metrics: [.wallClock, .mallocCountTotal],
                                       warmupIterations: 200, maxDuration: .seconds(20), maxIterations: 2_000)) { benchmark in
            let fixture = LiveFixture.shared(distribution)
            let viewport = fixture.viewports.next()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try fixture.index.clusters(in: viewport.bbox, zoom: viewport.zoom).features.count)
            }
        }
        Benchmark("live filtered viewport \(name)",
                  configuration: .init(metrics: [.wallClock, .mallocCountTotal],
                                       warmupIterations: 200, maxDuration: .seconds(20), maxIterations: 2_000)) { benchmark in
            let fixture = LiveFixture.shared(distribution)
            let viewport = fixture.viewports.next()
            // 3 of 30 species, in a winter season that wraps the year end.
            let filter = LiveFilter(partitions: [2, 11, 23], months: 1 << 12 | 1 << 1 | 1 << 2)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try fixture.index.clusters(in: viewport.bbox, zoom: viewport.zoom, filter: filter).features.count)
            }
        }
    }
    Benchmark("live insert into korea 1000k",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal],
                                   warmupIterations: 100, maxDuration: .seconds(10), maxIterations: 10_000)) { benchmark in
        let fixture = LiveFixture.shared(.korea)
        let point = fixture.nextPoint()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            // A copy of the published version takes the insert, as a write batch does:
            // the nodes on the changed paths are copied, the rest is shared.
            var next = fixture.index
            try next.insert(point, slot: next.slotCount)
            blackHole(next.count)
        }
    }
}

/// A live index of 1M points and its viewports per distribution, built on first use.
final class LiveFixture: Sendable {
    let index: LiveClusterIndex
    let viewports: ViewportCycle
    let points: [LivePoint]
    private let cursor = Mutex(0)

    /// Points with 30 partitions (species), 3 years of days and their months, as sightings.
    static func livePoints(_ coordinates: [Coordinate]) -> [LivePoint] {
        var random = SplitMix64(seed: PointSets.seed + 7)
        return coordinates.map { coordinate in
            let day = Int32(19_358 + Int(random.next() % 1_096)) // 2023-01-01 ... 2025-12-31
            let month = Int((Double(day - 19_358).truncatingRemainder(dividingBy: 365.25)) / 30.5) % 12 + 1
            return LivePoint(coordinate: coordinate, partition: Int(random.next() % 30), weight: 1 + Int(random.next() % 9),
                             time: Int64(day) * 86_400, day: day, month: month)
        }
    }

    init(_ distribution: PointSets.Distribution) {
        let coordinates = PointSets.points(distribution, count: 1_000_000)
        points = Self.livePoints(coordinates)
        do {
            index = try LiveClusterIndex(points: points, options: LiveClusterOptions(radiusPixels: 60, extent: 512))
        } catch {
            preconditionFailure("the generated points and fixed options are valid: \(error)")
        }
        viewports = ViewportCycle(PointSets.viewports(over: coordinates))
    }

    func nextPoint() -> LivePoint {
        cursor.withLock { next in
            defer { next += 1 }
            return points[(next &* 7_919) % points.count]
        }
    }

    private static let all = Mutex<[String: LiveFixture]>([:])

    static func shared(_ distribution: PointSets.Distribution) -> LiveFixture {
        all.withLock { fixtures in
            if let fixture = fixtures[distribution.rawValue] { return fixture }
            let fixture = LiveFixture(distribution)
            fixtures[distribution.rawValue] = fixture
            return fixture
        }
    }
}
