import Foundation
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine
import GeoProjection
import Testing

/// Golden values for the `project` operation.
enum ProjectFixtures {
    /// Seoul Station, longitude/latitude in degrees (WGS 84).
    static let seoulStation: JSONValue = [126.9707, 37.5547]
    static let busanStation: JSONValue = [129.0403, 35.1151]

    /// Seoul Station in EPSG:5186, easting/northing in metres. From PROJ 9.1.1's
    /// `echo "37.5547 126.9707" | cs2cs -f %.4f EPSG:4326 EPSG:5186`, which printed
    /// "550575.5461 197411.0256" (northing first, the CRS's official axis order).
    static let seoulStation5186 = (x: 197_411.0256, y: 550_575.5461)

    /// Seoul Station in EPSG:5179, easting/northing in metres. From
    /// `echo "37.5547 126.9707" | cs2cs -f %.4f EPSG:4326 EPSG:5179` (PROJ 9.1.1), which
    /// printed "1950726.5359 953249.1107".
    static let seoulStation5179 = (x: 953_249.1107, y: 1_950_726.5359)

    /// Seoul Station in EPSG:3857 from the closed form of spherical Mercator:
    /// x = R * lon, y = R * ln(tan(pi/4 + lat/2)), R = 6 378 137 m.
    static var seoulStation3857: (x: Double, y: Double) {
        let radius = 6_378_137.0
        return (radius * 126.9707 * .pi / 180, radius * log(tan(.pi / 4 + 37.5547 * .pi / 180 / 2)))
    }

    static func request(from: String, to: String, _ coordinates: [JSONValue]) -> JSONValue {
        ["op": "project", "from": .string(from), "to": .string(to), "coordinates": .array(coordinates)]
    }

    /// Points spread over the Korean peninsula, as `[lon, lat]` pairs.
    static func grid(count: Int) -> [JSONValue] {
        (0..<count).map { i in [.number(126 + Double(i % 40) * 0.08), .number(34.5 + Double(i / 40 % 40) * 0.1)] }
    }
}

struct ProjectTests {
    private func run(_ engine: Engine, _ request: JSONValue) throws -> JSONValue {
        try engine.handle(request).get()
    }

    private func failure(_ engine: Engine, _ request: JSONValue) -> EngineError? {
        if case let .failure(error) = engine.handle(request) { return error }
        return nil
    }

    private func pairs(_ result: JSONValue) -> [(x: Double, y: Double)] {
        (result["coordinates"]?.arrayValue ?? []).map { ($0[0]?.doubleValue ?? .nan, $0[1]?.doubleValue ?? .nan) }
    }

    // MARK: - Known values

    @Test(arguments: [
        ("EPSG:3857", ProjectFixtures.seoulStation3857, 0.001),
        ("EPSG:5179", ProjectFixtures.seoulStation5179, 0.01),
        ("EPSG:5186", ProjectFixtures.seoulStation5186, 0.01),
    ])
    func seoulStationMatchesReferenceValues(target: String, expected: (x: Double, y: Double), tolerance: Double) throws {
        let engine = try SampleLayer.engine()
        let result = try run(engine, ProjectFixtures.request(from: "EPSG:4326", to: target, [ProjectFixtures.seoulStation]))
        let point = try #require(pairs(result).first)
        #expect(abs(point.x - expected.x) < tolerance, "easting \(point.x)")
        #expect(abs(point.y - expected.y) < tolerance, "northing \(point.y)")
    }

    @Test func answerShapeNormalisesTheCRSs() throws {
        let engine = try SampleLayer.engine()
        let result = try run(engine, ProjectFixtures.request(from: "4326", to: "epsg:5179", [ProjectFixtures.seoulStation]))
        #expect(result.objectValue?.keys.map { $0 } == ["from", "to", "coordinates"])
        #expect(result["from"] == "EPSG:4326")
        #expect(result["to"] == "EPSG:5179")
        #expect(result["coordinates"]?.arrayValue?.count == 1)
        #expect(result["coordinates"]?[0]?.arrayValue?.count == 2)
    }

    @Test func projStringsAreAccepted() throws {
        let engine = try SampleLayer.engine()
        let centralBelt = "+proj=tmerc +lat_0=38 +lon_0=127 +k=1 +x_0=200000 +y_0=600000 +ellps=GRS80 +units=m +no_defs"
        let result = try run(engine, ProjectFixtures.request(from: "+proj=longlat +datum=WGS84 +no_defs", to: centralBelt,
                                                             [ProjectFixtures.seoulStation]))
        let point = try #require(pairs(result).first)
        #expect(abs(point.x - ProjectFixtures.seoulStation5186.x) < 0.01)
        #expect(abs(point.y - ProjectFixtures.seoulStation5186.y) < 0.01)
        #expect(result["to"]?.stringValue == centralBelt + " +type=crs")
    }

    @Test func roundTripReturnsTheInput() throws {
        let engine = try SampleLayer.engine()
        let input = ProjectFixtures.grid(count: 500)
        let projected = try run(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5186", input))
        let back = try run(engine, ProjectFixtures.request(from: "EPSG:5186", to: "EPSG:4326",
                                                           projected["coordinates"]?.arrayValue ?? []))
        let output = pairs(back)
        #expect(output.count == input.count)
        for (original, returned) in zip(input, output) {
            #expect(abs((original[0]?.doubleValue ?? 0) - returned.x) < 1e-9)
            #expect(abs((original[1]?.doubleValue ?? 0) - returned.y) < 1e-9)
        }
    }

    @Test func orderIsKeptInABatch() throws {
        let engine = try SampleLayer.engine()
        let result = try run(engine, ProjectFixtures.request(
            from: "EPSG:4326", to: "EPSG:5179", [ProjectFixtures.busanStation, ProjectFixtures.seoulStation]))
        let output = pairs(result)
        #expect(output.count == 2)
        #expect(abs(output[1].x - ProjectFixtures.seoulStation5179.x) < 0.01)
        #expect(output[0].y < output[1].y, "Busan lies south of Seoul")
    }

    // MARK: - Limits and reuse

    @Test func theCoordinateLimitIsInclusive() throws {
        let engine = try SampleLayer.engine()
        let limit = Request.maxProjectCoordinates
        let result = try run(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:3857",
                                                             ProjectFixtures.grid(count: limit)))
        #expect(result["coordinates"]?.arrayValue?.count == limit)
        let error = failure(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:3857",
                                                            ProjectFixtures.grid(count: limit + 1)))
        #expect(error == .invalidField("coordinates", reason: "must hold 1 to \(limit) [x, y] pairs, got \(limit + 1)"))
    }

    /// A batch between one pair of CRSs builds PROJ's transformation once, not per request.
    @Test func sequentialRequestsReuseOneTransformer() throws {
        let engine = try SampleLayer.engine()
        for _ in 0..<50 {
            _ = try run(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [ProjectFixtures.seoulStation]))
        }
        #expect(engine.transformers.createdCount == 1)
    }

    // MARK: - Errors

    @Test func errorsNameTheCodeAndTheField() throws {
        let engine = try SampleLayer.engine()
        let seoul = ProjectFixtures.seoulStation
        let ortho = "+proj=ortho +lat_0=37.5 +lon_0=127 +ellps=WGS84"
        let cases: [(JSONValue, String, String?)] = [
            (["op": "project", "to": "EPSG:5179", "coordinates": [seoul]], "missing_field", "from"),
            (["op": "project", "from": "EPSG:4326", "coordinates": [seoul]], "missing_field", "to"),
            (["op": "project", "from": "EPSG:4326", "to": "EPSG:5179"], "missing_field", "coordinates"),
            (["op": "project", "from": 4326, "to": "EPSG:5179", "coordinates": [seoul]], "invalid_field", "from"),
            (ProjectFixtures.request(from: "WGS84", to: "EPSG:5179", [seoul]), "malformed_crs", "from"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "ESRI:102080", [seoul]), "malformed_crs", "to"),
            (ProjectFixtures.request(from: "EPSG:999999", to: "EPSG:5179", [seoul]), "unknown_crs", "from"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:999999", [seoul]), "unknown_crs", "to"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "+proj=nosuchprojection", [seoul]), "unknown_crs", "to"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", []), "invalid_field", "coordinates"),
            (["op": "project", "from": "EPSG:4326", "to": "EPSG:5179", "coordinates": seoul], "invalid_field", "coordinates[0]"),
            (["op": "project", "from": "EPSG:4326", "to": "EPSG:5179", "coordinates": "126.97,37.55"],
             "invalid_field", "coordinates"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [seoul, [127, 37, 10]]), "invalid_field", "coordinates[1]"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [seoul, ["127", 37]]), "invalid_field", "coordinates[1]"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [seoul, seoul, [500, 37.5]]),
             "invalid_coordinate", "coordinates[2]"),
            (ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [[127, 95]]), "invalid_coordinate", "coordinates[0]"),
            // Metres sent as degrees: easting/northing in a geographic source are out of range.
            (ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [[953_249.1107, 1_950_726.5359]]),
             "invalid_coordinate", "coordinates[0]"),
            // The far side of the globe cannot be shown by an orthographic view of Korea.
            (ProjectFixtures.request(from: "EPSG:4326", to: ortho, [seoul, [-53, -37.5]]), "transform_failed", "coordinates[1]"),
            (["op": "project", "from": "EPSG:4326", "to": "EPSG:5179", "coordinate": [126.97, 37.55]], "missing_field", "coordinates"),
            (["op": "project", "from": "EPSG:4326", "to": "EPSG:5179", "coordinates": [seoul], "coordinate": seoul],
             "unknown_field", "coordinate"),
        ]
        for (request, code, field) in cases {
            let error = failure(engine, request)
            #expect(error?.code == code, "\(request.jsonString)")
            #expect(error?.field == field, "\(request.jsonString)")
            #expect(error?.category == .badRequest, "\(request.jsonString)")
        }
    }

    @Test func messagesSayWhatIsWrong() throws {
        let engine = try SampleLayer.engine()
        let outOfRange = failure(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179",
                                                                 [ProjectFixtures.seoulStation, [500, 37.5]]))
        #expect(outOfRange?.description == "invalid coordinate at index 1: longitude 500.0 is outside [-180, 180] degrees")
        let unknown = failure(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:999999",
                                                              [ProjectFixtures.seoulStation]))
        #expect(unknown?.description.hasPrefix("unknown CRS \"EPSG:999999\": ") == true)
    }

    /// JSON cannot carry NaN, but a request built in code can; the engine still refuses it.
    @Test func nonFiniteCoordinatesAreRejected() throws {
        let engine = try SampleLayer.engine()
        for (point, axis) in [(CRSPoint(x: .nan, y: 37), "x"), (CRSPoint(x: 127, y: .infinity), "y")] {
            let request = Request.project(from: .wgs84, to: .koreaUnified, coordinates: [CRSPoint(x: 127, y: 37), point])
            let error = #expect(throws: EngineError.self) { try engine.execute(request) }
            #expect(error?.code == "invalid_coordinate")
            #expect(error?.field == "coordinates[1]")
            #expect(error?.description.contains("\(axis) is") == true)
        }
    }

    @Test func aPROJStartFailureIsTheServicesFault() {
        #expect(EngineError.projection(.contextCreationFailed, field: nil).category == .internalFailure)
    }

    @Test func aFailedRequestLeavesTheEngineWorking() throws {
        let engine = try SampleLayer.engine()
        _ = failure(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:999999", [ProjectFixtures.seoulStation]))
        _ = failure(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [[500, 0]]))
        let result = try run(engine, ProjectFixtures.request(from: "EPSG:4326", to: "EPSG:5179", [ProjectFixtures.seoulStation]))
        #expect(abs((pairs(result).first?.x ?? 0) - ProjectFixtures.seoulStation5179.x) < 0.01)
    }

    // MARK: - Concurrency

    /// Several tasks send many `project` requests through one engine at once, over three CRS
    /// pairs; every answer must be exactly the one a private transformer gives.
    @Test func concurrentRequestsAllGetTheirOwnAnswer() async throws {
        let engine = try SampleLayer.engine()
        let targets = ["EPSG:5179", "EPSG:5186", "EPSG:3857"]
        let inputs = (0..<16).map { batch in
            Array(ProjectFixtures.grid(count: 1_600)[(batch * 100)..<(batch * 100 + 20)])
        }
        var expected: [String: [JSONValue]] = [:]
        let reference = try CoordinateTransformer()
        for target in targets {
            expected[target] = try inputs.map { batch in
                var points = batch.map { CRSPoint(x: $0[0]?.doubleValue ?? 0, y: $0[1]?.doubleValue ?? 0) }
                try reference.transform(&points, from: .wgs84, to: CRS(target))
                return .array(points.map { [.number($0.x), .number($0.y)] })
            }
        }
        let frozen = expected
        let tasks = 8
        let requestsPerTask = 60
        let mismatches = try await withThrowingTaskGroup(of: [String].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var mismatches: [String] = []
                    for round in 0..<requestsPerTask {
                        let target = targets[(task + round) % targets.count]
                        let batch = (task * 7 + round) % inputs.count
                        let result = try engine.handle(ProjectFixtures.request(from: "EPSG:4326", to: target,
                                                                               inputs[batch])).get()
                        if result["coordinates"] != frozen[target]?[batch] || result["to"] != .string(target) {
                            mismatches.append("task \(task) round \(round) \(target)")
                        }
                    }
                    return mismatches
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(mismatches.isEmpty)
        #expect(engine.transformers.idleCount <= TransformerPool.defaultMaxIdle)
        #expect(engine.transformers.createdCount <= tasks * targets.count,
                "set-up is paid per concurrent caller and pair, not per request")
    }
}

struct ProjectLineProtocolTests {
    @Test func projectLinesAreAnsweredInOrderWithFieldAndLine() throws {
        let lineProtocol = LineProtocol(engine: try SampleLayer.engine())
        let lines = [
            #"{"id":1,"op":"project","from":"EPSG:4326","to":"EPSG:5179","coordinates":[[126.9707,37.5547]]}"#,
            #"{"id":2,"op":"project","from":"EPSG:4326","to":"EPSG:5179","coordinates":[[126.9707,37.5547],[500,37.5]]}"#,
            #"{"id":3,"op":"project","from":"EPSG:4326","to":"EPSG:0","coordinates":[[126.9707,37.5547]]}"#,
            #"{"id":4,"op":"project","from":"EPSG:4326","to":"EPSG:999999","coordinates":[[126.9707,37.5547]]}"#,
            #"{"id":5,"op":"project","from":"EPSG:5179","to":"EPSG:4326","coordinates":[[953249.1107,1950726.5359]]}"#,
        ]
        var output: [UInt8] = []
        for (i, line) in lines.enumerated() {
            lineProtocol.respond(to: Array(line.utf8)[...], lineNumber: i + 1, into: &output)
        }
        let answers = try output.split(separator: 0x0A).map { try JSONValue.parse(Array($0)) }
        #expect(answers.map { $0["id"] } == [1, 2, 3, 4, 5])
        #expect(answers.map { $0["ok"] } == [true, false, false, false, true])
        #expect(answers.map { $0["error"]?["code"] } == [nil, "invalid_coordinate", "malformed_crs", "unknown_crs", nil])
        #expect(answers.map { $0["error"]?["field"] } == [nil, "coordinates[1]", "to", "to", nil])
        #expect(answers.map { $0["error"]?["line"] } == [nil, 2, 3, 4, nil])

        let seoul = try #require(answers[0]["result"]?["coordinates"]?[0]?.arrayValue?.compactMap { $0.doubleValue })
        #expect(abs(seoul[0] - ProjectFixtures.seoulStation5179.x) < 0.01)
        #expect(abs(seoul[1] - ProjectFixtures.seoulStation5179.y) < 0.01)
        let back = try #require(answers[4]["result"]?["coordinates"]?[0]?.arrayValue?.compactMap { $0.doubleValue })
        #expect(abs(back[0] - 126.9707) < 1e-7 && abs(back[1] - 37.5547) < 1e-7)
        #expect(answers[4]["result"]?["from"] == "EPSG:5179")
    }
}
