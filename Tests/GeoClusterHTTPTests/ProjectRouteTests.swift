import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

struct ProjectRouteTests {
    /// Seoul Station in EPSG:5179 from PROJ 9.1.1's
    /// `echo "37.5547 126.9707" | cs2cs -f %.4f EPSG:4326 EPSG:5179` ("1950726.5359 953249.1107").
    static let seoulStation5179 = (x: 953_249.1107, y: 1_950_726.5359)

    @Test func projectsEveryPairInOrder() async throws {
        try await withAPI { client in
            let response = try await client.get(
                "/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.9707,37.5547;129.0403,35.1151")
            #expect(response.status == .ok)
            #expect(response.contentType == "application/json")
            let result = try response.json
            #expect(result["from"] == "EPSG:4326")
            #expect(result["to"] == "EPSG:5179")
            let pairs = try #require(result["coordinates"]?.arrayValue)
            #expect(pairs.count == 2)
            let seoul = try #require(pairs[0].arrayValue?.compactMap { $0.doubleValue })
            #expect(abs(seoul[0] - Self.seoulStation5179.x) < 0.01)
            #expect(abs(seoul[1] - Self.seoulStation5179.y) < 0.01)
        }
    }

    /// A PROJ string naming a file PROJ may not read is a 400 that names the file, and
    /// `/metrics` counts it.
    @Test func projStringsNamingFilesAreRefusedAndCounted() async throws {
        try await withAPI { client in
            for file in ["/dev/stdin", "/etc/passwd"] {
                let response = try await client.get(
                    "/v1/project?from=4326&to=%2Bproj%3Dlonglat+%2Bellps%3DGRS80+%2Bnadgrids%3D\(file)&coordinates=126.97,37.55")
                #expect(response.status == .badRequest)
                #expect(try response.json["error"]?["code"] == "proj_file_refused")
                #expect(try response.json["error"]?["message"]?.stringValue?.contains(file) == true)
            }
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains("\ngeocluster_proj_files_refused_total 2\n"))
        }
    }

    /// A PROJ string needs its `+` written as `%2B`: in a query string `+` is a space.
    @Test func projStringsArePercentEncoded() async throws {
        try await withAPI { client in
            let centralBelt = "%2Bproj%3Dtmerc+%2Blat_0%3D38+%2Blon_0%3D127+%2Bk%3D1+%2Bx_0%3D200000+%2By_0%3D600000"
                + "+%2Bellps%3DGRS80+%2Bunits%3Dm"
            let byString = try await client.get("/v1/project?from=4326&to=\(centralBelt)&coordinates=126.9707,37.5547")
            let byCode = try await client.get("/v1/project?from=4326&to=EPSG:5186&coordinates=126.9707,37.5547")
            #expect(byString.status == .ok)
            let viaString = try #require(try byString.json["coordinates"]?[0]?.arrayValue?.compactMap { $0.doubleValue })
            let viaCode = try #require(try byCode.json["coordinates"]?[0]?.arrayValue?.compactMap { $0.doubleValue })
            #expect(abs(viaString[0] - viaCode[0]) < 0.001 && abs(viaString[1] - viaCode[1]) < 0.001)
            #expect(try byString.json["to"] == "+proj=tmerc +lat_0=38 +lon_0=127 +k=1 +x_0=200000 +y_0=600000 +ellps=GRS80 +units=m +type=crs")

            let unencoded = try await client.get("/v1/project?from=4326&to=+proj=utm+zone=52&coordinates=126.9707,37.5547")
            #expect(unencoded.status == .badRequest)
            #expect(try unencoded.json["error"]?["code"] == "malformed_crs")
        }
    }

    static let cases: [(String, HTTPResponse.Status, String, String?)] = [
        ("/v1/project?to=EPSG:5179&coordinates=126.97,37.55", .badRequest, "missing_field", "from"),
        ("/v1/project?from=EPSG:4326&coordinates=126.97,37.55", .badRequest, "missing_field", "to"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179", .badRequest, "missing_field", "coordinates"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=", .badRequest, "invalid_field", "coordinates[0]"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.97", .badRequest, "invalid_field", "coordinates[0]"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.97,37.55;1,2,3", .badRequest, "invalid_field",
         "coordinates[1]"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.97,37.55;", .badRequest, "invalid_field", "coordinates[1]"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.97,nan", .badRequest, "invalid_field", "coordinates[0]"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.97,37.55&coordinate=1,2", .badRequest, "unknown_field",
         "coordinate"),
        ("/v1/project?from=WGS84&to=EPSG:5179&coordinates=126.97,37.55", .badRequest, "malformed_crs", "from"),
        ("/v1/project?from=EPSG:4326&to=EPSG:999999&coordinates=126.97,37.55", .badRequest, "unknown_crs", "to"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.97,37.55;500,37.5", .badRequest, "invalid_coordinate",
         "coordinates[1]"),
        ("/v1/project?from=EPSG:4326&to=%2Bproj%3Dortho+%2Blat_0%3D37.5+%2Blon_0%3D127&coordinates=-53,-37.5",
         .badRequest, "transform_failed", "coordinates[0]"),
    ]

    @Test(arguments: cases)
    func errorNamesCodeAndField(path: String, status: HTTPResponse.Status, code: String, field: String?) async throws {
        try await withAPI { client in
            let response = try await client.get(path)
            #expect(response.status == status)
            let error = try #require(try response.json["error"]?.objectValue)
            #expect(error["code"]?.stringValue == code)
            #expect(error["field"]?.stringValue == field)
        }
    }

    @Test func tooManyPairsAreRefused() async throws {
        try await withAPI { client in
            let pairs = Array(repeating: "126.97,37.55", count: GeoClusterEngine.Request.maxProjectCoordinates + 1).joined(separator: ";")
            let response = try await client.get("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=\(pairs)")
            #expect(response.status == .badRequest)
            #expect(try response.json["error"]?["field"] == "coordinates")
        }
    }

    /// The REST route and a line of `POST /v1/query` give the same bytes.
    @Test func restAndBatchAgree() async throws {
        try await withAPI { client in
            let rest = try await client.get(
                "/v1/project?from=EPSG:4326&to=EPSG:5186&coordinates=126.9707,37.5547;129.0403,35.1151")
            let line = #"{"id":1,"op":"project","from":"EPSG:4326","to":"EPSG:5186","coordinates":[[126.9707,37.5547],[129.0403,35.1151]]}"#
            let batch = try await client.post("/v1/query", line)
            let result = try #require(try batch.lines.first?["result"])
            #expect(rest.status == .ok)
            #expect(rest.text == result.jsonString)
        }
    }

    @Test func headAnswersLikeGet() async throws {
        try await withAPI { client in
            let head = try await client.execute(uri: "/v1/project?from=4326&to=3857&coordinates=0,0", method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
        }
    }
}
