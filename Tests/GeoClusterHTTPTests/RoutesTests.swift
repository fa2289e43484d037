import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// A small layer whose answers can be worked out by hand: three points close together
/// in Seoul and one in Busan, plus a layer whose name needs percent-encoding in a path.
enum Sample {
    static let features: [JSONValue] = [
        feature("seoul-1", 126.9707, 37.5547, name: "Seoul Station"),
        feature("seoul-2", 126.9723, 37.5559, name: "Seoullo 7017"),
        feature("seoul-3", 126.9690, 37.5531, name: "Jungnim-dong"),
        feature("busan-1", 129.0403, 35.1151, name: "Busan Station"),
    ]

    static func feature(_ id: String, _ lon: Double, _ lat: Double, name: String) -> JSONValue {
        GeoJSON.pointFeature(coordinate: Coordinate(longitude: lon, latitude: lat),
                             properties: .object(["name": .string(name)]), id: .string(id))
    }

    static func engine() throws -> Engine {
        try Engine(layers: [
            RadiusLayer(name: "stations", kind: .points, features: features),
            RadiusLayer(name: "bird sightings", kind: .points, features: [features[3]]),
        ])
    }

    /// A bbox and zoom at which Seoul is one cluster of 3 and Busan a single point.
    static let koreaClusters = "/v1/layers/stations/clusters?bbox=120,30,135,40&zoom=8"
}

/// Runs `test` against the routes over the sample engine, without sockets.
func withAPI(maxQueryBodyBytes: Int = GeoClusterAPI.defaultMaxQueryBodyBytes, engine: Engine? = nil,
             _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
    let api = GeoClusterAPI(engine: try engine ?? Sample.engine(), maxQueryBodyBytes: maxQueryBodyBytes)
    let app = Application(router: api.makeRouter())
    try await app.test(.router, test)
}

extension TestResponse {
    var json: JSONValue {
        get throws { try JSONValue.parse(Array(body.readableBytesView)) }
    }

    var text: String { String(decoding: body.readableBytesView, as: UTF8.self) }

    var contentType: String? { headers[.contentType] }

    /// The response lines of `POST /v1/query`.
    var lines: [JSONValue] {
        get throws {
            try body.readableBytesView.split(separator: 0x0A).map { try JSONValue.parse(Array($0)) }
        }
    }
}

extension TestClientProtocol {
    func get(_ uri: String) async throws -> TestResponse {
        try await execute(uri: uri, method: .get)
    }

    func post(_ uri: String, _ body: String) async throws -> TestResponse {
        try await execute(uri: uri, method: .post, body: ByteBuffer(string: body))
    }

    /// The id of the Seoul cluster in ``Sample/koreaClusters``.
    func seoulClusterID() async throws -> Int {
        let clusters = try await get(Sample.koreaClusters).json
        let ids = clusters["features"]?.arrayValue?.compactMap { $0["properties"]?["cluster_id"]?.intValue } ?? []
        return try #require(ids.first)
    }
}

struct RoutesTests {
    @Test func healthAndReadiness() async throws {
        try await withAPI { client in
            let health = try await client.get("/healthz")
            #expect(health.status == .ok)
            #expect(health.contentType == "application/json")
            #expect(health.text == #"{"status":"ok"}"#)

            let ready = try await client.get("/readyz")
            #expect(ready.status == .ok)
            #expect(try ready.json == ["status": "ready", "layers": 2, "points": 5])
        }
    }

    @Test func notReadyWithoutLayers() async throws {
        try await withAPI(engine: try Engine(layers: [])) { client in
            let ready = try await client.get("/readyz")
            #expect(ready.status == .serviceUnavailable)
            #expect(try ready.json["error"]?["code"] == "not_ready")
            #expect(try await client.get("/healthz").status == .ok)
        }
    }

    @Test func layersAndStats() async throws {
        try await withAPI { client in
            let layers = try await client.get("/v1/layers")
            #expect(layers.status == .ok)
            #expect(layers.contentType == "application/json")
            let names = try layers.json["layers"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
            #expect(names == ["stations", "bird sightings"])

            let layer = try await client.get("/v1/layers/stations")
            #expect(layer.status == .ok)
            #expect(try layer.json["count"] == 4)
            #expect(try layer.json["bounds"] == [126.969, 35.1151, 129.0403, 37.5559])

            let encodedName = try await client.get("/v1/layers/bird%20sightings")
            #expect(encodedName.status == .ok)
            #expect(try encodedName.json["name"] == "bird sightings")

            let stats = try await client.get("/v1/stats")
            #expect(stats.status == .ok)
            #expect(try stats.json == ["layers": 2, "points": 5])
        }
    }

    @Test func clustersOfAViewport() async throws {
        try await withAPI { client in
            let response = try await client.get(Sample.koreaClusters)
            #expect(response.status == .ok)
            #expect(response.contentType == "application/geo+json")
            let collection = try response.json
            #expect(collection["type"] == "FeatureCollection")
            let features = try #require(collection["features"]?.arrayValue)
            #expect(features.count == 2)
            let cluster = try #require(features.first { $0["properties"]?["cluster"] == true })
            #expect(cluster["properties"]?["point_count"] == 3)
            #expect(cluster["properties"]?["point_count_abbreviated"] == 3)
            let single = try #require(features.first { $0["properties"]?["cluster"] == nil })
            #expect(single == Sample.features[3])

            let zoomedIn = try await client.get("/v1/layers/stations/clusters?zoom=18&bbox=126.9,37.5,127.0,37.6")
            #expect(try zoomedIn.json["features"]?.arrayValue?.count == 3)
        }
    }

    @Test func clusterNavigation() async throws {
        try await withAPI { client in
            let id = try await client.seoulClusterID()
            let base = "/v1/layers/stations/clusters/\(id)"

            let children = try await client.get("\(base)/children")
            #expect(children.status == .ok)
            #expect(children.contentType == "application/geo+json")
            let counts = try children.json["features"]?.arrayValue?.map { $0["properties"]?["point_count"]?.intValue ?? 1 }
            #expect(counts?.reduce(0, +) == 3)

            let page = try await client.get("\(base)/leaves?limit=2&offset=1")
            #expect(page.status == .ok)
            #expect(page.contentType == "application/geo+json")
            let leaves = try page.json
            #expect(leaves["total"] == 3)
            #expect(leaves["limit"] == 2)
            #expect(leaves["offset"] == 1)
            #expect(leaves["features"]?.arrayValue?.count == 2)

            let all = try await client.get("\(base)/leaves").json
            #expect(all["limit"] == .number(Double(GeoClusterEngine.Request.defaultLeavesLimit)))
            let ids = all["features"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted()
            #expect(ids == ["seoul-1", "seoul-2", "seoul-3"])

            let expansion = try await client.get("\(base)/expansion-zoom")
            #expect(expansion.status == .ok)
            #expect(expansion.contentType == "application/json")
            #expect(try expansion.json["cluster_id"] == .number(Double(id)))
            let zoom = try #require(try expansion.json["expansion_zoom"]?.intValue)
            #expect(zoom > 8 && zoom <= 17)
        }
    }

    @Test func tileHasPixelGeometry() async throws {
        let seoul = try TileAddress.containing(Coordinate(longitude: 126.9707, latitude: 37.5547), zoom: 18)
        try await withAPI { client in
            let response = try await client.get("/v1/layers/stations/tiles/18/\(seoul.x)/\(seoul.y).geojson")
            #expect(response.status == .ok)
            #expect(response.contentType == "application/json")
            let tile = try response.json
            #expect(tile["z"] == 18)
            #expect(tile["x"] == .number(Double(seoul.x)))
            #expect(tile["extent"] == 512)
            let station = try #require(tile["features"]?.arrayValue?.first { $0["id"] == "seoul-1" })
            #expect(station["type"] == 1)
            #expect(station["tags"]?["name"] == "Seoul Station")
            let pixel = station["geometry"]?[0]?.arrayValue?.compactMap(\.intValue) ?? []
            #expect(pixel.count == 2 && (0..<512).contains(pixel[0]) && (0..<512).contains(pixel[1]))

            let world = try await client.get("/v1/layers/stations/tiles/0/0/0.geojson")
            #expect(try world.json["features"]?.arrayValue?.count == 1, "one cluster of 4 at zoom 0")
        }
    }

    @Test func headAnswersLikeGetWithoutABody() async throws {
        try await withAPI { client in
            let head = try await client.execute(uri: "/v1/layers", method: .head)
            let get = try await client.get("/v1/layers")
            #expect(head.status == .ok)
            #expect(head.contentType == "application/json")
            #expect(head.body.readableBytes == 0)
            #expect(head.headers[.contentLength] == get.headers[.contentLength])
        }
    }
}

struct RouteErrorTests {
    /// Each case: path, status, code, field.
    static let cases: [(String, HTTPResponse.Status, String, String?)] = [
        ("/v1/layers/birds", .notFound, "unknown_layer", "layer"),
        ("/v1/layers/birds/clusters?bbox=0,0,1,1&zoom=1", .notFound, "unknown_layer", "layer"),
        ("/v1/layers/stations/clusters?bbox=1,2,3&zoom=1", .badRequest, "invalid_field", "bbox"),
        ("/v1/layers/stations/clusters?bbox=1,2,3,4,5&zoom=1", .badRequest, "invalid_field", "bbox"),
        ("/v1/layers/stations/clusters?bbox=a,b,c,d&zoom=1", .badRequest, "invalid_field", "bbox"),
        ("/v1/layers/stations/clusters?bbox=0,,1,1&zoom=1", .badRequest, "invalid_field", "bbox"),
        ("/v1/layers/stations/clusters?bbox=0,10,1,0&zoom=1", .badRequest, "invalid_bbox", "bbox"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=abc", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=5abc", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=NaN", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=inf", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=1e999", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=+5", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=%205", .badRequest, "invalid_field", "zoom"),
        // Numbers that Swift's Double(_:) would read but JSON's grammar does not.
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=%2B5", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=0x5", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=.5", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,0x1&zoom=1", .badRequest, "invalid_field", "bbox"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=1&months=1,0x2", .badRequest, "invalid_field", "months"),
        ("/v1/layers/stations/clusters/01/leaves", .badRequest, "invalid_field", "cluster_id"),
        ("/v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=126.9,.5", .badRequest, "invalid_field", "coordinates[0]"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=1&zoom=2", .badRequest, "invalid_field", "zoom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1", .badRequest, "missing_field", "zoom"),
        ("/v1/layers/stations/clusters?zoom=1", .badRequest, "missing_field", "bbox"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=1&zom=2", .badRequest, "unknown_field", "zom"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=1&op=tile", .badRequest, "unknown_field", "op"),
        ("/v1/layers/stations/clusters?bbox=0,0,1,1&zoom=1&layer=x", .badRequest, "unknown_field", "layer"),
        ("/v1/layers/stations/clusters?bbox=%zz&zoom=1", .badRequest, "invalid_field", "bbox"),
        ("/v1/stats?layer=stations", .badRequest, "unknown_field", "layer"),
        ("/v1/layers?limit=1", .badRequest, "unknown_field", "limit"),
        ("/v1/layers/stations/clusters/123456/children", .notFound, "unknown_cluster", "cluster_id"),
        ("/v1/layers/stations/clusters/123456/expansion-zoom", .notFound, "unknown_cluster", "cluster_id"),
        ("/v1/layers/stations/clusters/abc/leaves", .badRequest, "invalid_field", "cluster_id"),
        ("/v1/layers/stations/clusters/1.5/children", .badRequest, "invalid_field", "cluster_id"),
        ("/v1/layers/stations/clusters/-1/children", .badRequest, "invalid_field", "cluster_id"),
        ("/v1/layers/stations/clusters/1/leaves?limit=0", .badRequest, "invalid_field", "limit"),
        ("/v1/layers/stations/clusters/1/leaves?limit=1.5", .badRequest, "invalid_field", "limit"),
        ("/v1/layers/stations/clusters/1/leaves?offset=-1", .badRequest, "invalid_field", "offset"),
        ("/v1/layers/stations/tiles/2/4/0.geojson", .badRequest, "invalid_tile", "x"),
        ("/v1/layers/stations/tiles/2/0/4.geojson", .badRequest, "invalid_tile", "y"),
        ("/v1/layers/stations/tiles/x/0/0.geojson", .badRequest, "invalid_field", "z"),
        ("/v1/layers/stations/tiles/0/0/0.pbf", .notFound, "not_found", nil),
        ("/v2/layers", .notFound, "not_found", nil),
        ("/v1", .notFound, "not_found", nil),
    ]

    @Test(arguments: cases)
    func errorNamesCodeAndField(path: String, status: HTTPResponse.Status, code: String, field: String?) async throws {
        try await withAPI { client in
            let response = try await client.get(path)
            #expect(response.status == status)
            #expect(response.contentType == "application/json")
            let error = try #require(try response.json["error"]?.objectValue)
            #expect(error["code"]?.stringValue == code)
            #expect(error["field"]?.stringValue == field)
            #expect(error["message"]?.stringValue?.isEmpty == false)
            #expect(Set(error.keys).isSubset(of: ["code", "message", "field"]))
        }
    }

    @Test func errorBodyShape() async throws {
        try await withAPI { client in
            let response = try await client.get("/v1/layers/birds")
            #expect(response.text == #"{"error":{"code":"unknown_layer","message":"no layer named \"birds\"","field":"layer"}}"#)
        }
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        try await withAPI { client in
            let post = try await client.post("/v1/layers", "{}")
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers[.allow] == "GET, HEAD")
            #expect(try post.json["error"]?["code"] == "method_not_allowed")

            let get = try await client.get("/v1/query")
            #expect(get.status == .methodNotAllowed)
            #expect(get.headers[.allow] == "POST")

            let delete = try await client.execute(uri: "/v1/layers/stations/clusters/1/leaves", method: .delete)
            #expect(delete.status == .methodNotAllowed)
        }
    }

    @Test func unexpectedErrorsAreHiddenAndLogged() async throws {
        struct Secret: Error {}
        let router = Router()
        router.add(middleware: ErrorMiddleware<BasicRequestContext>())
        router.get("/boom") { _, _ -> String in throw Secret() }
        try await Application(router: router).test(.router) { client in
            let response = try await client.get("/boom")
            #expect(response.status == .internalServerError)
            #expect(try response.json["error"]?["code"] == "internal_error")
            #expect(!response.text.contains("Secret"))
        }
    }
}

struct QueryEndpointTests {
    @Test func answersEachLineInOrderWithLineNumbers() async throws {
        let body = """
            {"id":1,"op":"stats"}
            {"id":2,"op":"nope"}

            not json
            {"id":"last","op":"stats","layer":"stations"}
            """
        try await withAPI { client in
            let response = try await client.post("/v1/query", body)
            #expect(response.status == .ok)
            #expect(response.contentType == "application/x-ndjson")
            #expect(response.text.hasSuffix("\n"))
            let lines = try response.lines
            #expect(lines.count == 4)
            #expect(lines[0] == ["id": 1, "ok": true, "result": ["layers": 2, "points": 5]])
            #expect(lines[1]["id"] == 2)
            #expect(lines[1]["ok"] == false)
            #expect(lines[1]["error"]?["code"] == "unknown_op")
            #expect(lines[1]["error"]?["field"] == "op")
            #expect(lines[1]["error"]?["line"] == 2)
            #expect(lines[2]["id"] == .null)
            #expect(lines[2]["error"]?["line"] == 4, "the blank line still counts")
            #expect(lines[3]["id"] == "last")
            #expect(lines[3]["result"]?["count"] == 4)
        }
    }

    @Test func sameBytesAsTheLineProtocol() async throws {
        let body = #"{"id":7,"op":"layers"}"# + "\n" + #"{"op":"clusters","layer":"x","bbox":[0,0,1,1],"zoom":1}"#
        let engine = try Sample.engine()
        var expected: [UInt8] = []
        let lineProtocol = LineProtocol(engine: engine)
        for (i, line) in body.utf8.split(separator: 0x0A).enumerated() {
            lineProtocol.respond(to: ArraySlice(line), lineNumber: i + 1, into: &expected)
        }
        let expectedBytes = expected
        try await withAPI(engine: engine) { client in
            let response = try await client.post("/v1/query", body)
            #expect(Array(response.body.readableBytesView) == expectedBytes)
        }
    }

    /// An answer longer than one output chunk arrives whole and in order.
    @Test func longBatchIsStreamedInOrder() async throws {
        let count = 3_000
        let body = (1...count).map { #"{"id":\#($0),"op":"layers"}"# }.joined(separator: "\n")
        try await withAPI { client in
            let response = try await client.post("/v1/query", body)
            #expect(response.status == .ok)
            #expect(response.body.readableBytes > 4 * GeoClusterAPI.batchChunkBytes)
            let lines = try response.lines
            #expect(lines.map { $0["id"]?.intValue ?? 0 } == Array(1...count))
            #expect(lines.allSatisfy { $0["ok"] == true })
        }
    }

    @Test func emptyBodyGetsEmptyAnswer() async throws {
        try await withAPI { client in
            let response = try await client.post("/v1/query", "")
            #expect(response.status == .ok)
            #expect(response.body.readableBytes == 0)
        }
    }

    @Test func oversizeBodyIs413() async throws {
        try await withAPI(maxQueryBodyBytes: 1024) { client in
            let line = #"{"op":"stats"}"# + "\n"
            let response = try await client.post("/v1/query", String(repeating: line, count: 100))
            #expect(response.status == .contentTooLarge)
            #expect(response.contentType == "application/json")
            let error = try response.json["error"]
            #expect(error?["code"] == "body_too_large")
            #expect(error?["message"] == "request body exceeds the limit of 1024 bytes")

            // Refused from its Content-Length alone, before the body is read.
            let declared = try await client.execute(uri: "/v1/query", method: .post, headers: [.contentLength: "5000"])
            #expect(declared.status == .contentTooLarge)

            let fits = try await client.post("/v1/query", String(repeating: line, count: 10))
            #expect(fits.status == .ok)
            #expect(try fits.lines.count == 10)
        }
    }

    /// The REST route and the batch route answer the same request with the same result,
    /// byte for byte.
    @Test(arguments: [
        (Sample.koreaClusters, #"{"op":"clusters","layer":"stations","bbox":[120,30,135,40],"zoom":8}"#),
        ("/v1/layers", #"{"op":"layers"}"#),
        ("/v1/layers/stations", #"{"op":"stats","layer":"stations"}"#),
        ("/v1/stats", #"{"op":"stats"}"#),
        ("/v1/layers/stations/tiles/1/1/0.geojson", #"{"op":"tile","layer":"stations","z":1,"x":1,"y":0}"#),
    ])
    func restAndBatchAgree(path: String, line: String) async throws {
        try await withAPI { client in
            let rest = try await client.get(path)
            let batch = try await client.post("/v1/query", line)
            #expect(rest.status == .ok)
            let result = try #require(try batch.lines.first?["result"])
            #expect(try rest.json == result)
            #expect(rest.text == result.jsonString)
        }
    }

    @Test func clusterNavigationAgrees() async throws {
        try await withAPI { client in
            let id = try await client.seoulClusterID()
            let pairs = [
                ("/v1/layers/stations/clusters/\(id)/children", #"{"op":"children","layer":"stations","cluster_id":\#(id)}"#),
                ("/v1/layers/stations/clusters/\(id)/leaves?limit=2&offset=1",
                 #"{"op":"leaves","layer":"stations","cluster_id":\#(id),"limit":2,"offset":1}"#),
                ("/v1/layers/stations/clusters/\(id)/expansion-zoom",
                 #"{"op":"expansion_zoom","layer":"stations","cluster_id":\#(id)}"#),
            ]
            for (path, line) in pairs {
                let rest = try await client.get(path)
                let result = try await client.post("/v1/query", line).lines.first?["result"]
                #expect(rest.text == result?.jsonString, "\(path)")
            }
        }
    }
}

struct ParameterParsingTests {
    @Test func strictNumbers() {
        let accepted: [(String, Double)] = [("0", 0), ("-0.5", -0.5), ("12", 12), ("1e3", 1000), ("2.5E-1", 0.25)]
        for (text, value) in accepted {
            #expect(JSONValue.number(text: text) == value, "\(text)")
        }
        for text in ["", "5abc", "abc", "NaN", "nan", "inf", "-inf", "Infinity", "1e999", "+5", ".5", "5.", "0x10",
                     " 5", "5 ", "01", "1_000", "--1", "1e", "true", "[1]"] {
            #expect(JSONValue.number(text: text) == nil, "\(text)")
        }
    }

    @Test func queryStringDecoding() throws {
        let query = try QueryString("a=1&b=x+y%20z&&c&d=%C3%A9&")
        #expect(query.items.map(\.name) == ["a", "b", "c", "d"])
        #expect(query.items.map(\.value) == ["1", "x y z", "", "é"])
        #expect(try QueryString(nil).items.isEmpty)
        #expect(throws: EngineError.invalidField("a", reason: "is given more than once")) { try QueryString("a=1&a=2") }
        #expect(throws: EngineError.invalidField("a", reason: "is not validly percent-encoded UTF-8")) {
            try QueryString("a=%4")
        }
        #expect(throws: EngineError.invalidField("a", reason: "is not validly percent-encoded UTF-8")) {
            try QueryString("a=%FF")
        }
        #expect(throws: EngineError.self) { try QueryString("%zz=1") }
        #expect(QueryString.decode("a+b%2B".utf8, plusIsSpace: false) == "a+b+")
    }
}
