import GeoClusterTestSupport
import Testing
@testable import GeoCluster

/// Distance queries on the live index against a brute-force scan of the same points.
struct LiveClusterNearbyTests {
    /// Seeded points: a dense city, a sparse country, and a few at the antimeridian and poles.
    static func randomPoints(seed: UInt64) -> [LivePoint] {
        var random = SeededRandom(seed: seed)
        var points: [LivePoint] = []
        for _ in 0..<3_000 {
            points.append(LivePoint(coordinate: Coordinate(longitude: random.between(126.9, 127.1),
                                                           latitude: random.between(37.45, 37.65)),
                                    partition: Int(random.next() % 3)))
        }
        for _ in 0..<1_000 {
            points.append(LivePoint(coordinate: Coordinate(longitude: random.between(124, 131),
                                                           latitude: random.between(33, 39)),
                                    partition: Int(random.next() % 3)))
        }
        for _ in 0..<300 {
            let longitude = random.unit() < 0.5 ? random.between(179.5, 180) : random.between(-180, -179.5)
            points.append(LivePoint(coordinate: Coordinate(longitude: longitude, latitude: random.between(-17, -16)),
                                    partition: Int(random.next() % 3)))
        }
        for _ in 0..<200 {
            points.append(LivePoint(coordinate: Coordinate(longitude: random.between(-180, 180),
                                                           latitude: random.between(88, 90)),
                                    partition: Int(random.next() % 3)))
        }
        return points
    }

    static func bruteForce(_ points: [LivePoint], center: Coordinate, radiusMeters: Double,
                           partitions: Set<Int>? = nil) -> [NearbyPoint] {
        var found: [NearbyPoint] = []
        for (slot, point) in points.enumerated() where partitions?.contains(point.partition) ?? true {
            let distance = GreatCircle.haversineMeters(from: center, to: point.coordinate)
            if distance <= radiusMeters { found.append(NearbyPoint(slot: slot, distanceMeters: distance)) }
        }
        return found.sorted(by: LiveClusterIndex.nearerFirst)
    }

    static let centers = [
        Coordinate(longitude: 127.0, latitude: 37.55), Coordinate(longitude: 126.95, latitude: 37.5),
        Coordinate(longitude: 128.5, latitude: 36.0), Coordinate(longitude: 179.99, latitude: -16.5),
        Coordinate(longitude: -179.9, latitude: -16.2), Coordinate(longitude: 10, latitude: 89.5),
        Coordinate(longitude: 0, latitude: 0),
    ]

    /// Measured from the coordinates as given (the caller's), the answers are the brute
    /// force's exactly; measured from the index's own, every distance is within a centimetre
    /// of it for points inside Web Mercator's square (beyond ±85.05° they are kept at its edge).
    @Test func pointsWithinARadiusMatchABruteForceScan() throws {
        let points = Self.randomPoints(seed: 42)
        let index = try LiveClusterIndex(points: points)
        for center in Self.centers {
            for radius in [0.0, 50, 400, 2_500, 30_000, 100_000, 400_000] {
                let found = index.points(within: radius, of: center, coordinateOfSlot: { points[$0].coordinate })
                let expected = Self.bruteForce(points, center: center, radiusMeters: radius)
                #expect(found == expected, "center \(center), radius \(radius)")
                let own = index.points(within: radius + 0.01, of: center)
                let distances = Dictionary(uniqueKeysWithValues: own.map { ($0.slot, $0.distanceMeters) })
                for point in expected where abs(points[point.slot].coordinate.latitude) < WebMercator.maxLatitude {
                    let distance = try #require(distances[point.slot], "center \(center), slot \(point.slot)")
                    #expect(abs(distance - point.distanceMeters) < 0.01)
                }
            }
        }
    }

    @Test func filteredPointsWithinARadiusMatchABruteForceScan() throws {
        let points = Self.randomPoints(seed: 7)
        let index = try LiveClusterIndex(points: points)
        let center = Coordinate(longitude: 127.0, latitude: 37.55)
        let found = index.points(within: 3_000, of: center, filter: LiveFilter(partitions: [0, 2]),
                                 coordinateOfSlot: { points[$0].coordinate })
        #expect(found == Self.bruteForce(points, center: center, radiusMeters: 3_000, partitions: [0, 2]))
        #expect(!found.isEmpty)
    }

    @Test func kNearestMatchABruteForceScan() throws {
        let points = Self.randomPoints(seed: 99)
        let index = try LiveClusterIndex(points: points)
        for center in Self.centers {
            let all = Self.bruteForce(points, center: center, radiusMeters: .infinity)
            for k in [1, 5, 37, 1_000] {
                #expect(index.nearest(k, to: center, coordinateOfSlot: { points[$0].coordinate }) == Array(all.prefix(k)),
                        "center \(center), k \(k)")
                let capped = index.nearest(k, to: center, maxRadiusMeters: 1_500, coordinateOfSlot: { points[$0].coordinate })
                #expect(capped == Array(all.prefix { $0.distanceMeters <= 1_500 }.prefix(k)), "center \(center), k \(k), capped")
            }
        }
    }

    @Test func theVisitedRectangleFollowsThePointsNearTheLocation() throws {
        let points = Self.randomPoints(seed: 3)
        let index = try LiveClusterIndex(points: points)
        var visited = 0
        index.forEachPoint(nearby: Coordinate(longitude: 127.0, latitude: 37.55), radiusMeters: 300, filter: .all) { _, _ in
            visited += 1
        }
        // About 0.2 % of the city square's area: a handful of its 3,000 points, not the layer.
        #expect(visited < 60)
    }

    @Test func emptyIndexAndChangesAreAnsweredFromTheCurrentVersion() throws {
        var index = try LiveClusterIndex()
        let center = Coordinate(longitude: 24.94, latitude: 60.17)
        #expect(index.nearest(3, to: center).isEmpty)
        try index.insert(LivePoint(coordinate: Coordinate(longitude: 24.941, latitude: 60.17)), slot: 0)
        try index.insert(LivePoint(coordinate: Coordinate(longitude: 24.95, latitude: 60.17)), slot: 1)
        #expect(index.nearest(3, to: center).map(\.slot) == [0, 1])
        index.remove(slot: 0)
        #expect(index.nearest(3, to: center).map(\.slot) == [1])
        #expect(index.points(within: 100, of: center).isEmpty)
    }
}
