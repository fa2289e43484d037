import Foundation
@testable import GeoProjection
import Testing

@Suite struct CoordinateTransformerTests {
    let transformer: CoordinateTransformer

    init() throws {
        transformer = try CoordinateTransformer()
    }

    // MARK: - Accuracy against independent references

    /// Spherical Mercator has a closed form, so EPSG:3857 is checked against the formula itself.
    @Test func seoulStationToWebMercatorMatchesClosedForm() throws {
        let point = Fixtures.seoulStation
        let radius = 6_378_137.0
        let longitudeRadians = point.x * .pi / 180
        let latitudeRadians = point.y * .pi / 180
        let expectedX = radius * longitudeRadians
        let expectedY = radius * log(tan(.pi / 4 + latitudeRadians / 2))

        let result = try transformer.transform(point, from: .wgs84, to: .webMercator)
        #expect(abs(result.x - expectedX) < 0.001)
        #expect(abs(result.y - expectedY) < 0.001)
    }

    @Test func seoulStationToKoreaCentralBelt2010MatchesCS2CS() throws {
        let result = try transformer.transform(Fixtures.seoulStation, from: .wgs84, to: .koreaCentralBelt2010)
        #expect(abs(result.x - Fixtures.seoulStation5186.x) < 0.01)
        #expect(abs(result.y - Fixtures.seoulStation5186.y) < 0.01)
    }

    @Test func seoulStationToKoreaUnifiedMatchesCS2CS() throws {
        let result = try transformer.transform(Fixtures.seoulStation, from: .wgs84, to: .koreaUnified)
        #expect(abs(result.x - Fixtures.seoulStation5179.x) < 0.01)
        #expect(abs(result.y - Fixtures.seoulStation5179.y) < 0.01)
    }

    @Test func roundTripThroughCentralBelt2010() throws {
        let projected = try transformer.transform(Fixtures.seoulStation, from: .wgs84, to: .koreaCentralBelt2010)
        let back = try transformer.transform(projected, from: .koreaCentralBelt2010, to: .wgs84)
        #expect(abs(back.x - Fixtures.seoulStation.x) < 1e-9)
        #expect(abs(back.y - Fixtures.seoulStation.y) < 1e-9)
    }

    /// The same CRSs written as PROJ strings (from `projinfo EPSG:5186`) give the same answer.
    @Test func projStringsAgreeWithEPSGCodes() throws {
        let lonLat = try CRS("+proj=longlat +datum=WGS84 +no_defs")
        let centralBelt = try CRS(
            "+proj=tmerc +lat_0=38 +lon_0=127 +k=1 +x_0=200000 +y_0=600000 +ellps=GRS80 +units=m +no_defs")
        let result = try transformer.transform(Fixtures.seoulStation, from: lonLat, to: centralBelt)
        #expect(abs(result.x - Fixtures.seoulStation5186.x) < 0.01)
        #expect(abs(result.y - Fixtures.seoulStation5186.y) < 0.01)
    }

    @Test func projectedSourceIsNotRangeChecked() throws {
        let result = try transformer.transform(Fixtures.seoulStation5186, from: .koreaCentralBelt2010, to: .koreaUnified)
        #expect(abs(result.x - Fixtures.seoulStation5179.x) < 0.01)
        #expect(abs(result.y - Fixtures.seoulStation5179.y) < 0.01)
    }

    // MARK: - Batches

    @Test func batchMatchesSinglePoints() throws {
        let inputs = Self.grid(count: 50)
        var points = inputs
        try transformer.transform(&points, from: .wgs84, to: .koreaCentralBelt2010)
        for (input, output) in zip(inputs, points) {
            #expect(try transformer.transform(input, from: .wgs84, to: .koreaCentralBelt2010) == output)
        }
    }

    @Test func batchWithInvalidPointIsAllOrNothing() {
        var points = Self.grid(count: 6)
        points[3] = CRSPoint(x: 500, y: 37.5)
        let original = points
        #expect(throws: ProjectionError.invalidCoordinate(index: 3, problem: .longitudeOutOfRange(degrees: 500))) {
            try transformer.transform(&points, from: .wgs84, to: .koreaCentralBelt2010)
        }
        #expect(points == original)
    }

    /// An orthographic view centred on Korea, which cannot show the far side of the globe.
    static func orthographicOverKorea() throws -> CRS {
        try CRS("+proj=ortho +lat_0=37.5 +lon_0=127 +ellps=WGS84")
    }

    /// A point that passes validation but that PROJ cannot convert (the antipode of the
    /// orthographic centre) also leaves the batch untouched.
    @Test func batchWithUnconvertiblePointIsAllOrNothing() throws {
        var points = Self.grid(count: 4)
        points[2] = CRSPoint(x: -53, y: -37.5)
        let original = points
        let ortho = try Self.orthographicOverKorea()
        let error = #expect(throws: ProjectionError.self) {
            try transformer.transform(&points, from: .wgs84, to: ortho)
        }
        guard case .transformFailed(let index, let message) = error else {
            Issue.record("expected transformFailed, got \(String(describing: error))")
            return
        }
        #expect(index == 2)
        #expect(message.contains("outside of projection domain"))
        #expect(error?.code == "transform_failed")
        #expect(points == original)
    }

    @Test func emptyBatchIsANoOp() throws {
        var points: [CRSPoint] = []
        try transformer.transform(&points, from: .wgs84, to: .koreaCentralBelt2010)
        #expect(points.isEmpty)
    }

    // MARK: - Input validation

    @Test(arguments: [
        (CRSPoint(x: 500, y: 37.5), ProjectionError.CoordinateProblem.longitudeOutOfRange(degrees: 500)),
        (CRSPoint(x: -180.000001, y: 0), .longitudeOutOfRange(degrees: -180.000001)),
        (CRSPoint(x: 127, y: 95), .latitudeOutOfRange(degrees: 95)),
        (CRSPoint(x: .nan, y: 37.5), .notANumber(.x)),
        (CRSPoint(x: 127, y: .nan), .notANumber(.y)),
        (CRSPoint(x: .infinity, y: 37.5), .infinite(.x)),
        (CRSPoint(x: 127, y: -.infinity), .infinite(.y)),
    ])
    func invalidGeographicInputIsRejected(point: CRSPoint, problem: ProjectionError.CoordinateProblem) {
        #expect(throws: ProjectionError.invalidCoordinate(index: nil, problem: problem)) {
            try transformer.transform(point, from: .wgs84, to: .koreaCentralBelt2010)
        }
    }

    @Test func rangeLimitsThemselvesAreAccepted() throws {
        for point in [CRSPoint(x: 180, y: 0), CRSPoint(x: -180, y: 0), CRSPoint(x: 0, y: 85), CRSPoint(x: 0, y: -85)] {
            _ = try transformer.transform(point, from: .wgs84, to: .webMercator)
        }
    }

    /// A geographic CRS with `+towgs84` is a bound CRS in PROJ; it is still range-checked.
    @Test func boundGeographicSourceIsRangeChecked() throws {
        let bessel = try CRS("+proj=longlat +ellps=bessel +towgs84=-115.80,474.99,674.11,1.16,-2.31,-1.63,6.43")
        #expect(throws: ProjectionError.invalidCoordinate(index: nil, problem: .longitudeOutOfRange(degrees: 500))) {
            try transformer.transform(CRSPoint(x: 500, y: 37.5), from: bessel, to: .wgs84)
        }
    }

    @Test func nonFiniteProjectedInputIsRejected() {
        #expect(throws: ProjectionError.invalidCoordinate(index: nil, problem: .notANumber(.y))) {
            try transformer.transform(CRSPoint(x: 200_000, y: .nan), from: .koreaCentralBelt2010, to: .wgs84)
        }
    }

    @Test func invalidCoordinateIsDescribed() {
        let error = ProjectionError.invalidCoordinate(index: 3, problem: .longitudeOutOfRange(degrees: 500))
        #expect(error.code == "invalid_coordinate")
        #expect(error.description == "invalid coordinate at index 3: longitude 500.0 is outside [-180, 180] degrees")
    }

    // MARK: - Unknown CRSs

    @Test func unknownEPSGCodeCarriesPROJMessage() throws {
        let unknown = try CRS("EPSG:999999")
        let error = #expect(throws: ProjectionError.self) {
            try transformer.transform(Fixtures.seoulStation, from: .wgs84, to: unknown)
        }
        guard case .unknownCRS(let identifier, let message) = error else {
            Issue.record("expected unknownCRS, got \(String(describing: error))")
            return
        }
        #expect(identifier == "EPSG:999999")
        #expect(message.contains("crs not found"))
        #expect(error?.code == "unknown_crs")
    }

    @Test func unknownProjectionNameCarriesPROJMessage() throws {
        let bogus = try CRS("+proj=nosuchprojection")
        let error = #expect(throws: ProjectionError.self) { try transformer.prepare(from: bogus, to: .wgs84) }
        guard case .unknownCRS(_, let message) = error else {
            Issue.record("expected unknownCRS, got \(String(describing: error))")
            return
        }
        #expect(message.contains("Unknown projection"))
    }

    /// A failed lookup must not leave stale error state that breaks the next good request.
    @Test func transformerRecoversAfterAnError() throws {
        let unknown = try CRS("EPSG:999999")
        #expect(throws: ProjectionError.self) { try transformer.prepare(from: .wgs84, to: unknown) }
        #expect(throws: ProjectionError.self) {
            try transformer.transform(CRSPoint(x: -53, y: -37.5), from: .wgs84, to: Self.orthographicOverKorea())
        }
        let result = try transformer.transform(Fixtures.seoulStation, from: .wgs84, to: .koreaCentralBelt2010)
        #expect(abs(result.x - Fixtures.seoulStation5186.x) < 0.01)
    }

    // MARK: - Caching

    @Test func spellingsOfOneCRSShareOneCachedTransformation() throws {
        _ = try transformer.transform(Fixtures.seoulStation, from: CRS("epsg:4326"), to: CRS("5186"))
        _ = try transformer.transform(Fixtures.seoulStation, from: CRS("4326"), to: CRS("EPSG:5186"))
        #expect(transformer.cachedTransformationCount == 1)
        _ = try transformer.transform(Fixtures.seoulStation5186, from: .koreaCentralBelt2010, to: .wgs84)
        #expect(transformer.cachedTransformationCount == 2)
    }

    @Test func cacheStaysBounded() throws {
        let codes = (32601...32660).prefix(CoordinateTransformer.maxCachedTransformations + 3)
        for code in codes {
            try transformer.prepare(from: .wgs84, to: CRS(epsg: code))
        }
        #expect(transformer.cachedTransformationCount <= CoordinateTransformer.maxCachedTransformations)
        #expect(transformer.cachedTransformationCount > 0)
    }

    // MARK: - Concurrency

    /// Each task owns its transformer; running them at the same time must not change results.
    @Test func separateTransformersOnConcurrentTasksAgree() async throws {
        let inputs = Self.grid(count: 2_000)
        let results = try await withThrowingTaskGroup(of: [CRSPoint].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let transformer = try CoordinateTransformer()
                    var points = inputs
                    for _ in 0..<5 {
                        points = inputs
                        try transformer.transform(&points, from: .wgs84, to: .koreaCentralBelt2010)
                    }
                    return points
                }
            }
            var results: [[CRSPoint]] = []
            for try await points in group {
                results.append(points)
            }
            return results
        }
        var expected = inputs
        try transformer.transform(&expected, from: .wgs84, to: .koreaCentralBelt2010)
        #expect(results.count == 2)
        #expect(results.allSatisfy { $0 == expected })
    }

    @Test func projVersionIsReported() {
        #expect(CoordinateTransformer.projVersion.first?.isNumber == true)
    }

    // MARK: - Helpers

    /// Points spread over the Korean peninsula, longitude/latitude in degrees.
    static func grid(count: Int) -> [CRSPoint] {
        (0..<count).map { index in
            CRSPoint(x: 126 + Double(index % 40) * 0.08, y: 34.5 + Double(index / 40 % 40) * 0.1)
        }
    }
}
