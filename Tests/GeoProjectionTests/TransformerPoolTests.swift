import GeoProjection
import Testing

@Suite struct TransformerPoolTests {
    @Test func convertsLikeATransformer() throws {
        let pool = TransformerPool()
        var points = CoordinateTransformerTests.grid(count: 100)
        var expected = points
        try CoordinateTransformer().transform(&expected, from: .wgs84, to: .koreaUnified)
        try pool.transform(&points, from: .wgs84, to: .koreaUnified)
        #expect(points == expected)
    }

    /// One caller at a time reuses one transformer, so PROJ's set-up is paid once per pair.
    @Test func sequentialCallsShareOneTransformerPerPair() throws {
        let pool = TransformerPool()
        for _ in 0..<20 {
            var points = [Fixtures.seoulStation]
            try pool.transform(&points, from: .wgs84, to: .koreaCentralBelt2010)
            var back = points
            try pool.transform(&back, from: .koreaCentralBelt2010, to: .wgs84)
        }
        #expect(pool.createdCount == 2)
        #expect(pool.idleCount == 2)
    }

    @Test func errorsKeepTheirIndexAndThePreparedTransformer() throws {
        let pool = TransformerPool()
        var points = [Fixtures.seoulStation, CRSPoint(x: 500, y: 37.5)]
        #expect(throws: ProjectionError.invalidCoordinate(index: 1, problem: .longitudeOutOfRange(degrees: 500))) {
            try pool.transform(&points, from: .wgs84, to: .koreaUnified)
        }
        #expect(points[1].x == 500, "a failed batch is left unchanged")
        var good = [Fixtures.seoulStation]
        try pool.transform(&good, from: .wgs84, to: .koreaUnified)
        #expect(pool.createdCount == 1, "a point error does not cost the transformer")
    }

    @Test func unknownCRSIsNotKept() throws {
        let pool = TransformerPool()
        let unknown = try CRS("EPSG:999999")
        for _ in 0..<3 {
            var points = [Fixtures.seoulStation]
            #expect(throws: ProjectionError.self) { try pool.transform(&points, from: .wgs84, to: unknown) }
        }
        #expect(pool.idleCount == 0)
    }

    @Test func idleTransformersAreBounded() throws {
        let pool = TransformerPool(maxIdle: 3, maxIdlePerPair: 2)
        for code in 32651...32655 {
            var points = [Fixtures.seoulStation]
            try pool.transform(&points, from: .wgs84, to: CRS(epsg: code))
        }
        #expect(pool.idleCount == 3)
        // The most recently used pairs stay: 32655 is reused, 32651 was dropped.
        var points = [Fixtures.seoulStation]
        try pool.transform(&points, from: .wgs84, to: CRS(epsg: 32655))
        #expect(pool.createdCount == 5)
        try pool.transform(&points, from: .koreaUnified, to: .wgs84)
        points = [Fixtures.seoulStation]
        try pool.transform(&points, from: .wgs84, to: CRS(epsg: 32651))
        #expect(pool.createdCount == 7)
        #expect(pool.idleCount == 3)
    }

    /// Many tasks convert through one pool at once; each must get exactly its own answer.
    @Test func concurrentCallsNeverShareATransformer() async throws {
        let pool = TransformerPool(maxIdle: 8, maxIdlePerPair: 4)
        let inputs = CoordinateTransformerTests.grid(count: 200)
        let targets: [CRS] = [.koreaUnified, .koreaCentralBelt2010, .webMercator]
        let reference = try CoordinateTransformer()
        let expected = try targets.map { target in
            var points = inputs
            try reference.transform(&points, from: .wgs84, to: target)
            return points
        }
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<30 {
                        let which = (task + round) % targets.count
                        var points = inputs
                        try pool.transform(&points, from: .wgs84, to: targets[which])
                        if points != expected[which] { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(pool.idleCount <= 8)
        #expect(pool.createdCount <= 8 * targets.count)
    }
}
