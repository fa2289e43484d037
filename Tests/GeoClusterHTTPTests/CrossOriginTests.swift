import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// Runs `test` against the routes with CORS set to `origins`.
func withAPI(origins: AllowedOrigins,
             _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
    let api = GeoClusterAPI(engine: try Sample.engine(), allowedOrigins: origins)
    try await Application(router: api.makeRouter()).test(.router, test)
}

struct CrossOriginTests {
    @Test func anyOriginMayReadAnswers() async throws {
        try await withAPI { client in
            let response = try await client.get(Sample.koreaClusters, [.origin: "https://birds.example"])
            #expect(response.status == .ok)
            #expect(response.headers[.accessControlAllowOrigin] == "*")
            #expect(response.headers[.accessControlExposeHeaders] == "ETag")

            let sameOrigin = try await client.get(Sample.koreaClusters)
            #expect(sameOrigin.headers[.accessControlAllowOrigin] == nil, "no Origin, no CORS headers")
        }
    }

    @Test func preflightIsAnswered() async throws {
        try await withAPI { client in
            let preflight = try await client.execute(uri: "/v1/query", method: .options, headers: [
                .origin: "https://birds.example", .accessControlRequestMethod: "POST",
                .accessControlRequestHeaders: "content-type",
            ])
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == "*")
            #expect(preflight.headers[.accessControlAllowMethods] == "GET, HEAD, POST, PUT, DELETE, OPTIONS")
            #expect(preflight.headers[.accessControlAllowHeaders]?.contains("Content-Type") == true)
            #expect(preflight.headers[.accessControlMaxAge] == "600")
            #expect(preflight.body.readableBytes == 0)

            // A plain OPTIONS is not a preflight: the route does not take it.
            let options = try await client.execute(uri: "/v1/query", method: .options, headers: [.origin: "https://birds.example"])
            #expect(options.status == .methodNotAllowed)
        }
    }

    @Test func listedOriginsOnly() async throws {
        try await withAPI(origins: .list(["https://birds.example", "http://localhost:5173"])) { client in
            let listed = try await client.get("/v1/layers", [.origin: "http://localhost:5173"])
            #expect(listed.headers[.accessControlAllowOrigin] == "http://localhost:5173")
            #expect(listed.headers[values: .vary].contains("Origin"))
            #expect(listed.headers[values: .vary].contains("Accept-Encoding"))

            let other = try await client.get("/v1/layers", [.origin: "https://evil.example"])
            #expect(other.status == .ok)
            #expect(other.headers[.accessControlAllowOrigin] == nil)
            #expect(other.headers[values: .vary].contains("Origin"))

            let preflight = try await client.execute(uri: "/v1/layers", method: .options, headers: [
                .origin: "https://evil.example", .accessControlRequestMethod: "GET",
            ])
            #expect(preflight.headers[.accessControlAllowOrigin] == nil)
            #expect(preflight.headers[.accessControlAllowMethods] == nil)
        }
    }

    @Test func errorsCarryCORSHeadersSoBrowsersCanReadThem() async throws {
        try await withAPI(origins: .list(["https://birds.example"])) { client in
            for path in ["/v1/layers/birds", "/nowhere"] {
                let response = try await client.get(path, [.origin: "https://birds.example"])
                #expect(response.status == .notFound)
                #expect(response.headers[.accessControlAllowOrigin] == "https://birds.example")
                #expect(try response.json["error"]?["code"] != nil)
            }
        }
    }

    @Test func noneSendsNoHeaders() async throws {
        try await withAPI(origins: .none) { client in
            let response = try await client.get("/v1/layers", [.origin: "https://birds.example"])
            #expect(response.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test func parsingTheSetting() {
        #expect(AllowedOrigins(parsing: "*") == .any)
        #expect(AllowedOrigins(parsing: " * ") == .any)
        #expect(AllowedOrigins(parsing: "none") == .none)
        #expect(AllowedOrigins(parsing: "") == .none)
        #expect(AllowedOrigins(parsing: "https://a.example, http://localhost:5173,") ==
            .list(["https://a.example", "http://localhost:5173"]))
    }
}

struct MetricsTests {
    @Test func countsRequestsByRouteTemplateAndStatus() async throws {
        let api = GeoClusterAPI(engine: try Sample.engine())
        try await Application(router: api.makeRouter()).test(.router) { client in
            _ = try await client.get(Sample.koreaClusters)
            _ = try await client.get(Sample.koreaClusters)
            _ = try await client.get("/v1/layers/birds/clusters?bbox=0,0,1,1&zoom=1")
            _ = try await client.get("/v1/layers/stations/tiles/0/0/0.mvt")
            _ = try await client.execute(uri: "/v1/layers", method: .head)
            _ = try await client.get("/nowhere/at/all")
            _ = try await client.post("/v1/query", #"{"op":"stats"}"#)

            let response = try await client.get("/metrics")
            #expect(response.status == .ok)
            #expect(response.contentType == "text/plain; version=0.0.4; charset=utf-8")
            let lines = Set(response.text.split(separator: "\n").map(String.init))
            let clusters = #"route="/v1/layers/{layer}/clusters""#
            for expected in [
                #"geocluster_http_requests_total{\#(clusters),method="GET",status="200"} 2"#,
                #"geocluster_http_requests_total{\#(clusters),method="GET",status="404"} 1"#,
                #"geocluster_http_requests_total{route="/v1/layers/{layer}/tiles/{z}/{x}/{y}.mvt",method="GET",status="200"} 1"#,
                #"geocluster_http_requests_total{route="/v1/layers",method="HEAD",status="200"} 1"#,
                #"geocluster_http_requests_total{route="unmatched",method="GET",status="404"} 1"#,
                #"geocluster_http_requests_total{route="/v1/query",method="POST",status="200"} 1"#,
                #"geocluster_http_request_duration_seconds_count{\#(clusters)} 3"#,
                #"geocluster_http_request_duration_seconds_bucket{\#(clusters),le="+Inf"} 3"#,
                "geocluster_layers 2",
                #"geocluster_layer_points{layer="stations"} 4"#,
                #"geocluster_layer_points{layer="bird sightings"} 1"#,
            ] {
                #expect(lines.contains(expected), "\(expected)")
            }
            #expect(!response.text.contains("/nowhere"), "raw paths are never labels")
        }
    }

    @Test func reportsEachLayersBuildTime() async throws {
        let api = GeoClusterAPI(engine: try Sample.engine())
        try await Application(router: api.makeRouter()).test(.router) { client in
            let lines = try await client.get("/metrics").text.split(separator: "\n")
            #expect(lines.contains("# TYPE geocluster_layer_build_seconds gauge"))
            for layer in ["stations", "bird sightings"] {
                let line = try #require(lines.first { $0.hasPrefix(#"geocluster_layer_build_seconds{layer="\#(layer)"} "#) })
                let value = try #require(Double(line.split(separator: " ").last ?? ""))
                #expect(value >= 0 && value.isFinite)
            }
        }
    }

    /// A live layer's kept display groups: what they hold, and the memory they take,
    /// grow once a view forms a block, and their budget is the layer's; a radius layer
    /// has none of these.
    @Test func reportsWhatLiveLayersKeep() async throws {
        let api = GeoClusterAPI(engine: try WritableSample.engine())
        try await Application(router: api.makeRouter()).test(.router) { client in
            func kept() async throws -> [Substring] {
                try await client.get("/metrics").text.split(separator: "\n").filter { $0.contains("_kept_") }
            }
            func value(_ name: String, in lines: [Substring]) throws -> Int {
                let line = try #require(lines.first { $0.hasPrefix(#"\#(name){layer="places"} "#) }, "\(lines)")
                return try #require(Int(line.split(separator: " ").last ?? ""), "\(line)")
            }
            let before = try await kept()
            #expect(before.contains(#"geocluster_layer_kept_items{layer="places"} 0"#), "\(before)")
            #expect(before.contains(#"geocluster_layer_kept_items_budget{layer="places"} 65536"#), "\(before)")
            #expect(before.contains(#"geocluster_layer_kept_bytes{layer="places"} 0"#), "\(before)")
            #expect(!before.contains { $0.contains(#"layer="stations""#) }, "\(before)")
            // A view of a few blocks (a view over more than 1,024 blocks forms one grid and keeps nothing).
            #expect(try await client.get("/v1/layers/places/clusters?bbox=126.97,37.56,126.98,37.57&zoom=12").status == .ok)
            let after = try await kept()
            let items = try value("geocluster_layer_kept_items", in: after)
            let bytes = try value("geocluster_layer_kept_bytes", in: after)
            #expect(items > 0)
            // Each item's feature, position and group take 60 bytes, besides the entry's own.
            #expect(bytes > 60 * items, "\(after)")
        }
    }

    /// Every line is a comment or `name{labels} value` with a number as the value, and
    /// histogram buckets never decrease.
    @Test func expositionIsWellFormed() async throws {
        let api = GeoClusterAPI(engine: try Sample.engine())
        try await Application(router: api.makeRouter()).test(.router) { client in
            for _ in 0..<5 { _ = try await client.get("/v1/layers") }
            let text = try await client.get("/metrics").text
            #expect(text.hasSuffix("\n"))
            var previousBucket: Double = -1
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                // Label values may hold spaces; the value follows the last one.
                let space = try #require(line.lastIndex(of: " "), "\(line)")
                let value = try #require(Double(line[line.index(after: space)...]), "\(line)")
                let name = line.prefix { $0 != "{" && $0 != " " }
                #expect(line[..<space].hasSuffix("}") || !line[..<space].contains("{"), "\(line)")
                #expect(name.allSatisfy { $0.isLetter || $0 == "_" }, "\(line)")
                if name.hasSuffix("_bucket") {
                    #expect(value >= previousBucket || line.contains("le=\"0.0001\""), "\(line)")
                    previousBucket = value
                }
            }
        }
    }

    @Test func labelValuesAreEscaped() {
        #expect(RequestMetrics.escape(#"a"b\c"# + "\n") == #"a\"b\\c\n"#)
    }
}
