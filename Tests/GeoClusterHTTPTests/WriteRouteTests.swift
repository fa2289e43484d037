import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// A live places layer with two cafés in Seoul, and the radius layer `stations`, which
/// cannot change.
enum WritableSample {
    static func engine() throws -> Engine {
        let records = try [
            #"{"id":"cafe-1","lon":126.9780,"lat":37.5665,"name":"Cafe One","category":"cafe"}"#,
            #"{"id":7,"lon":126.9770,"lat":37.5650,"name":"Cafe Seven","category":"cafe"}"#,
        ].enumerated().map { i, text in
            try LayerRecord(json: try JSONValue.parse(text), kind: .places, layer: "places", index: i)
        }
        return try Engine(entries: [
            .live(LiveLayerStore(try LiveLayer(name: "places", kind: .places, records: records))),
            .radius(try RadiusLayer(name: "stations", kind: .points, features: Sample.features)),
        ])
    }

    static let seoul = "/v1/layers/places/clusters?bbox=126,37,128,38&zoom=16"
}

extension TestClientProtocol {
    func send(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil,
              headers: HTTPFields = [:]) async throws -> TestResponse {
        try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }

    /// The ids in the answer for the whole of Seoul at a zoom where nothing clusters.
    func seoulIDs() async throws -> Set<String> {
        let features = try await get(WritableSample.seoul).json["features"]?.arrayValue ?? []
        return Set(features.map { $0["id"]?.jsonString ?? "" })
    }
}

struct WriteRouteTests {
    func withWritableAPI(maxBodyBytes: Int = GeoClusterAPI.defaultMaxQueryBodyBytes,
                         _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await withAPI(maxQueryBodyBytes: maxBodyBytes, engine: try WritableSample.engine(), test)
    }

    @Test func insertTakesAnArrayARecordOrAFeatureCollection() async throws {
        try await withWritableAPI { client in
            let array = try await client.send(.post, "/v1/layers/places/points", """
                [{"id":"a","lon":126.98,"lat":37.57,"name":"A","category":"museum"},
                 {"id":"b","lon":126.99,"lat":37.57,"name":"B","category":"museum"}]
                """)
            #expect(array.status == .created)
            #expect(array.contentType == "application/json")
            #expect(try array.json == JSONValue.parse(#"{"layer":"places","op":"insert","applied":2,"count":4,"version":1}"#))

            let feature = try await client.send(.post, "/v1/layers/places/points", """
                {"type":"Feature","id":"c","geometry":{"type":"Point","coordinates":[126.97,37.56]},
                 "properties":{"name":"C","category":"park"}}
                """)
            #expect(feature.status == .created)
            #expect(try feature.json["applied"] == 1)

            let collection = try await client.send(.post, "/v1/layers/places/points", """
                {"type":"FeatureCollection","features":[
                 {"type":"Feature","id":"d","geometry":{"type":"Point","coordinates":[126.96,37.56]},
                  "properties":{"name":"D","category":"park"}},
                 {"type":"Feature","id":"e","geometry":{"type":"Point","coordinates":[126.95,37.56]},
                  "properties":{"name":"E","category":"park"}}]}
                """)
            #expect(collection.status == .created)
            #expect(try collection.json["count"] == 7)
            #expect(try await client.seoulIDs() == [#""cafe-1""#, "7", #""a""#, #""b""#, #""c""#, #""d""#, #""e""#])
        }
    }

    @Test func upsertAndDeleteByCollectionAndByID() async throws {
        try await withWritableAPI { client in
            let moved = try await client.send(.put, "/v1/layers/places/points",
                                              #"[{"id":"cafe-1","lon":126.90,"lat":37.50,"name":"Cafe One","category":"cafe"}]"#)
            #expect(moved.status == .ok)
            #expect(try moved.json["op"] == "upsert")
            #expect(try moved.json["count"] == 2)

            // The path's id fills in the record's; an integer path is an integer id.
            let one = try await client.send(.put, "/v1/layers/places/points/7",
                                            #"{"lon":126.91,"lat":37.51,"name":"Cafe Seven","category":"bar"}"#)
            #expect(one.status == .ok)
            let leaves = try await client.get(WritableSample.seoul).json["features"]?.arrayValue ?? []
            #expect(leaves.first { $0["id"] == 7 }?["properties"]?["category"] == "bar")

            let deleted = try await client.send(.delete, "/v1/layers/places/points/cafe-1")
            #expect(deleted.status == .ok)
            #expect(try deleted.json["op"] == "delete")
            #expect(try deleted.json["count"] == 1)

            let again = try await client.send(.delete, "/v1/layers/places/points/cafe-1")
            #expect(again.status == .notFound)
            #expect(try again.json["error"]?["code"] == "unknown_id")
            #expect(try again.json["error"]?["field"] == "ids[0]")

            let batch = try await client.send(.delete, "/v1/layers/places/points", #"{"ids":[7]}"#)
            #expect(batch.status == .ok)
            #expect(try batch.json["count"] == 0)
            #expect(try await client.seoulIDs().isEmpty)
        }
    }

    /// Each error names its code and, where there is one, the offending field.
    @Test(arguments: [
        (HTTPRequest.Method.post, "/v1/layers/places/points",
         #"[{"id":"cafe-1","lon":127,"lat":37,"name":"Again","category":"cafe"}]"#, HTTPResponse.Status.conflict,
         "duplicate_id", "records[0]"),
        (.post, "/v1/layers/places/points", #"[{"id":"x","lon":127,"lat":37,"name":"No category"}]"#, .badRequest,
         "invalid_record", "category"),
        (.post, "/v1/layers/places/points", #"[{"id":"x","lon":200,"lat":37,"name":"X","category":"cafe"}]"#,
         .badRequest, "invalid_record", "lon"),
        (.post, "/v1/layers/nowhere/points", #"[{"id":"x","lon":127,"lat":37,"name":"X","category":"cafe"}]"#, .notFound, "unknown_layer", "layer"),
        (.post, "/v1/layers/stations/points", #"[{"id":"x","lon":127,"lat":37}]"#, .badRequest, "read_only_layer", "layer"),
        (.post, "/v1/layers/places/points", "[{", .badRequest, "invalid_json", "body"),
        (.post, "/v1/layers/places/points", "42", .badRequest, "invalid_body", "body"),
        (.post, "/v1/layers/places/points", "[]", .badRequest, "invalid_field", "records"),
        (.put, "/v1/layers/places/points/cafe-1", #"{"id":"other","lon":127,"lat":37,"name":"X","category":"cafe"}"#,
         .badRequest, "invalid_field", "id"),
        (.put, "/v1/layers/places/points/cafe-1", #"{"id":null,"lon":127,"lat":37,"name":"X","category":"cafe"}"#,
         .badRequest, "invalid_field", "id"),
        (.put, "/v1/layers/places/points/cafe-1", "[]", .badRequest, "invalid_body", "body"),
        (.delete, "/v1/layers/places/points", #"{"idz":["cafe-1"]}"#, .badRequest, "unknown_field", "idz"),
        (.delete, "/v1/layers/places/points", "{}", .badRequest, "missing_field", "ids"),
        (.delete, "/v1/layers/places/points", #"{"ids":["cafe-1","gone"]}"#, .notFound, "unknown_id", "ids[1]"),
    ])
    func errors(method: HTTPRequest.Method, uri: String, body: String, status: HTTPResponse.Status, code: String,
                field: String) async throws {
        try await withWritableAPI { client in
            let response = try await client.send(method, uri, body)
            #expect(response.status == status)
            #expect(try response.json["error"]?["code"] == .string(code))
            #expect(try response.json["error"]?["field"] == .string(field))
            // A failed batch changes nothing.
            #expect(try await client.seoulIDs() == [#""cafe-1""#, "7"])
        }
    }

    /// Bodies are JSON whatever their header says, but one declared as a form upload, an
    /// image or another charset is refused before it is read.
    @Test func bodiesOfOtherMediaTypesAre415() async throws {
        try await withWritableAPI { client in
            let record = #"{"id":"m","lon":126.98,"lat":37.57,"name":"M","category":"museum"}"#
            for type in ["multipart/form-data; boundary=x", "image/png", "application/json; charset=iso-8859-1"] {
                for (uri, body) in [("/v1/layers/places/points", record), ("/v1/query", #"{"op":"stats"}"#)] {
                    let response = try await client.send(.post, uri, body, headers: [.contentType: type])
                    #expect(response.status == .unsupportedMediaType, "\(uri) as \(type)")
                    #expect(try response.json["error"]?["code"] == "unsupported_media_type")
                }
            }
            #expect(try await client.seoulIDs() == [#""cafe-1""#, "7"], "nothing was written")
            for type in ["application/json", "application/x-ndjson; charset=UTF-8", "application/x-www-form-urlencoded",
                         "text/plain"] {
                let response = try await client.send(.post, "/v1/query", #"{"op":"stats"}"#, headers: [.contentType: type])
                #expect(response.status == .ok, "\(type)")
            }
        }
    }

    @Test func oversizeBodyIs413() async throws {
        try await withWritableAPI(maxBodyBytes: 64) { client in
            let record = #"{"id":"long","lon":126.98,"lat":37.57,"name":"A name long enough","category":"museum"}"#
            let response = try await client.send(.post, "/v1/layers/places/points", record)
            #expect(response.status == .contentTooLarge)
            #expect(try response.json["error"]?["code"] == "body_too_large")
        }
    }

    @Test func otherMethodsAre405() async throws {
        try await withWritableAPI { client in
            // GET lists the records in a view (`list`), so it needs a bbox.
            let get = try await client.get("/v1/layers/places/points")
            #expect(get.status == .badRequest)
            #expect(try get.json["error"]?["code"] == "missing_field")
            let patch = try await client.send(.patch, "/v1/layers/places/points", "{}")
            #expect(patch.status == .methodNotAllowed)
            #expect(patch.headers[.allow] == "GET, HEAD, POST, PUT, DELETE")
            let post = try await client.send(.post, "/v1/layers/places/points/cafe-1", "{}")
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers[.allow] == "PUT, DELETE, GET, HEAD")
            // A method the server implements nowhere is 501, on any path.
            for path in ["/v1/layers/places/points", "/v1/stats", "/nowhere"] {
                let query = try await client.send(HTTPRequest.Method("QUERY")!, path)
                #expect(query.status == .notImplemented, "\(path)")
                #expect(try query.json["error"]?["code"] == "method_not_implemented")
            }
        }
    }

    /// A write makes a new layer version, so the answers change and so do their ETags: a
    /// client revalidating with the old tag gets the new answer.
    @Test func writesChangeTheETagOfClusterAnswers() async throws {
        try await withWritableAPI { client in
            let before = try await client.get(WritableSample.seoul)
            let tag = try #require(before.headers[.eTag])
            let unchanged = try await client.send(.get, WritableSample.seoul, headers: [.ifNoneMatch: tag])
            #expect(unchanged.status == .notModified)

            let insert = try await client.send(.post, "/v1/layers/places/points",
                                               #"{"id":"new","lon":126.985,"lat":37.57,"name":"New","category":"cafe"}"#)
            #expect(insert.status == .created)

            let after = try await client.send(.get, WritableSample.seoul, headers: [.ifNoneMatch: tag])
            #expect(after.status == .ok)
            #expect(after.headers[.eTag] != nil && after.headers[.eTag] != tag)
            #expect(try after.json["features"]?.arrayValue?.count == 3)
        }
    }
}
