import CompressNIO
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// A layer large enough that its answers are worth compressing: 400 named points on a
/// grid over Korea.
enum GridSample {
    static func engine() throws -> Engine {
        var features: [JSONValue] = []
        for i in 0..<400 {
            let lon = 126.0 + Double(i % 20) * 0.2, lat = 34.0 + Double(i / 20) * 0.2
            features.append(GeoJSON.pointFeature(coordinate: Coordinate(longitude: lon, latitude: lat),
                                                 properties: ["name": .string("point \(i)")], id: .number(Double(i))))
        }
        return try Engine(layers: [RadiusLayer(name: "grid", kind: .points, features: features)])
    }

    /// Every point on its own: tens of kilobytes of GeoJSON.
    static let allPoints = "/v1/layers/grid/clusters?bbox=125,33,131,39&zoom=16"
}

extension TestClientProtocol {
    func get(_ uri: String, _ headers: HTTPFields) async throws -> TestResponse {
        try await execute(uri: uri, method: .get, headers: headers)
    }
}

extension TestResponse {
    /// The body after undoing a gzip `Content-Encoding`.
    var decodedBody: [UInt8] {
        get throws {
            guard headers[.contentEncoding] == "gzip" else { return Array(body.readableBytesView) }
            var buffer = body
            return Array(try buffer.decompress(with: .gzip()).readableBytesView)
        }
    }
}

struct ConditionalRequestTests {
    @Test func answersCarryAStrongETagAndCacheControl() async throws {
        try await withAPI { client in
            for path in [Sample.koreaClusters, "/v1/layers/stations/tiles/0/0/0.mvt", "/v1/layers/stations/tiles/0/0/0.geojson",
                         "/v1/layers", "/v1/layers/stations"] {
                let response = try await client.get(path)
                #expect(response.status == .ok)
                let etag = try #require(response.headers[.eTag], "\(path)")
                #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""), "strong, quoted: \(etag)")
                #expect(response.headers[.cacheControl] == "public, max-age=60")
                #expect(response.headers[.vary] == "Accept-Encoding")
                #expect(try await client.get(path).headers[.eTag] == etag, "the same answer has the same tag")
            }
            let other = try await client.get("/v1/layers/stations/clusters?bbox=120,30,135,40&zoom=18")
            #expect(try await client.get(Sample.koreaClusters).headers[.eTag] != other.headers[.eTag])
        }
    }

    @Test func ifNoneMatchWithTheCurrentTagIs304WithoutABody() async throws {
        try await withAPI { client in
            let first = try await client.get(Sample.koreaClusters)
            let etag = try #require(first.headers[.eTag])
            for ifNoneMatch in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let again = try await client.get(Sample.koreaClusters, [.ifNoneMatch: ifNoneMatch])
                #expect(again.status == .notModified, "\(ifNoneMatch)")
                #expect(again.body.readableBytes == 0)
                #expect(again.headers[.eTag] == etag)
                #expect(again.headers[.cacheControl] == "public, max-age=60")
            }
            let stale = try await client.get(Sample.koreaClusters, [.ifNoneMatch: "\"0123456789abcdef\""])
            #expect(stale.status == .ok)
            #expect(stale.text == first.text)
        }
    }

    @Test func vectorTilesRevalidateToo() async throws {
        try await withAPI { client in
            let path = "/v1/layers/stations/tiles/0/0/0.mvt"
            let etag = try #require(try await client.get(path).headers[.eTag])
            let again = try await client.get(path, [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
        }
    }

    @Test func errorsAreNotCached() async throws {
        try await withAPI { client in
            let response = try await client.get("/v1/layers/birds/clusters?bbox=0,0,1,1&zoom=1")
            #expect(response.status == .notFound)
            #expect(response.headers[.eTag] == nil)
            #expect(response.headers[.cacheControl] == nil)
        }
    }

    @Test func maxAgeIsConfigurable() async throws {
        let api = GeoClusterAPI(engine: try Sample.engine(), responsePolicy: ResponsePolicy(cacheMaxAgeSeconds: 0))
        try await Application(router: api.makeRouter()).test(.router) { client in
            let response = try await client.get("/v1/layers")
            #expect(response.headers[.cacheControl] == "no-cache")
        }
    }

    @Test func ifNoneMatchParsing() {
        #expect(EntityTag.ifNoneMatch(["\"abc\""], matches: "abc"))
        #expect(EntityTag.ifNoneMatch(["\"abc-gzip\""], matches: "abc"))
        #expect(EntityTag.ifNoneMatch(["W/\"x\", W/\"abc\""], matches: "abc"))
        #expect(EntityTag.ifNoneMatch(["\"x\"", "\"abc\""], matches: "abc"), "several fields")
        #expect(EntityTag.ifNoneMatch([" * "], matches: "abc"))
        #expect(!EntityTag.ifNoneMatch(["\"a,bc\""], matches: "abc"))
        #expect(!EntityTag.ifNoneMatch(["abc"], matches: "abc"), "an unquoted tag is not a tag")
        #expect(!EntityTag.ifNoneMatch(["\"abcd\""], matches: "abc"))
        #expect(EntityTag.opaqueTags(in: "\"a,b\", W/\"c\"") == ["a,b", "c"])
    }

    /// Values from a separate implementation of the documented hash (in Python), over the
    /// lengths that take each path: no lanes, tail only, both.
    @Test func entityTagDigestsAreStable() {
        #expect(EntityTag.digest(of: []) == "7a620700f645141b")
        #expect(EntityTag.digest(of: Array("a".utf8)) == "65632a348588800b")
        #expect(EntityTag.digest(of: Array(#"{"type":"FeatureCollection","features":[]}"#.utf8)) == "7b9dbedcd956b71f")
        let long = Array(repeating: Array(0...255 as ClosedRange<UInt8>), count: 4).flatMap { $0 } + Array("xyz".utf8)
        #expect(EntityTag.digest(of: long) == "aac4028f59460367")
        var changed = long
        changed[600] ^= 0x80
        #expect(EntityTag.digest(of: changed) != EntityTag.digest(of: long), "one bit in a lane")
    }
}

struct CompressionTests {
    /// libdeflate's gzip at the lowest, the default and the highest level reads back with
    /// zlib (another implementation) to the same bytes, for bodies from 1 byte to 1 MiB.
    @Test(arguments: [1, ResponsePolicy.defaultGzipLevel, 6, 12])
    func gzipBodiesReadBackWithZlib(level: Int) throws {
        var random = SystemRandomNumberGenerator()
        for size in [1, 100, 70_000, 1 << 20] {
            // Text like an answer's: digits, punctuation and repeated keys.
            let pieces = Array(#"{"type":"Feature","id":,[0123456789.]}"#.utf8)
            let body = (0..<size).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }
            var compressed = try #require(Gzip.compress(body, level: level))
            #expect(compressed.getBytes(at: compressed.readerIndex, length: 2) == [0x1F, 0x8B], "a gzip member")
            let decoded = Array(try compressed.decompress(with: .gzip()).readableBytesView)
            #expect(decoded == body, "level \(level), \(size) bytes")
        }
    }

    @Test func largeAnswersAreGzippedWhenAccepted() async throws {
        try await withAPI(engine: try GridSample.engine()) { client in
            let plain = try await client.get(GridSample.allPoints)
            #expect(plain.headers[.contentEncoding] == nil)
            #expect(plain.body.readableBytes > 10_000)

            let gzipped = try await client.get(GridSample.allPoints, [.acceptEncoding: "gzip, deflate, br"])
            #expect(gzipped.status == .ok)
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            #expect(gzipped.headers[.vary] == "Accept-Encoding")
            #expect(gzipped.contentType == "application/geo+json")
            #expect(gzipped.headers[.contentLength] == String(gzipped.body.readableBytes))
            #expect(gzipped.body.readableBytes * 4 < plain.body.readableBytes, "GeoJSON compresses well")
            #expect(try gzipped.decodedBody == Array(plain.body.readableBytesView))

            // Different representations, different strong tags; either revalidates.
            let plainTag = try #require(plain.headers[.eTag])
            let gzipTag = try #require(gzipped.headers[.eTag])
            #expect(gzipTag == plainTag.dropLast() + "-gzip\"")
            let revalidated = try await client.get(GridSample.allPoints, [.acceptEncoding: "gzip", .ifNoneMatch: plainTag])
            #expect(revalidated.status == .notModified)
            #expect(revalidated.headers[.eTag] == gzipTag)
        }
    }

    @Test func vectorTilesAreGzippedToo() async throws {
        try await withAPI(engine: try GridSample.engine()) { client in
            let path = "/v1/layers/grid/tiles/6/54/25.mvt"
            let plain = try await client.get(path)
            let gzipped = try await client.get(path, [.acceptEncoding: "gzip"])
            #expect(plain.body.readableBytes >= 1024)
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            #expect(try gzipped.decodedBody == Array(plain.body.readableBytesView))
            #expect(try VectorTileDecoder.decode(try gzipped.decodedBody).layers.first?.features.isEmpty == false)
        }
    }

    @Test(arguments: ["identity", "gzip;q=0", "br", "*;q=0", "deflate, gzip;q=0.0"])
    func notCompressedUnlessAccepted(acceptEncoding: String) async throws {
        try await withAPI(engine: try GridSample.engine()) { client in
            let response = try await client.get(GridSample.allPoints, [.acceptEncoding: acceptEncoding])
            #expect(response.headers[.contentEncoding] == nil)
            #expect(response.headers[.vary] == "Accept-Encoding")
        }
    }

    @Test func smallAnswersAreSentAsTheyAre() async throws {
        try await withAPI { client in
            let response = try await client.get("/v1/stats", [.acceptEncoding: "gzip"])
            #expect(response.body.readableBytes < 1024)
            #expect(response.headers[.contentEncoding] == nil)
            #expect(try response.json == ["layers": 2, "points": 5])
        }
    }

    @Test func headOfAGzippedAnswerHasItsLength() async throws {
        try await withAPI(engine: try GridSample.engine()) { client in
            let get = try await client.get(GridSample.allPoints, [.acceptEncoding: "gzip"])
            let head = try await client.execute(uri: GridSample.allPoints, method: .head, headers: [.acceptEncoding: "gzip"])
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            #expect(head.headers[.contentEncoding] == "gzip")
            #expect(head.headers[.contentLength] == get.headers[.contentLength])
            #expect(head.headers[.eTag] == get.headers[.eTag])
        }
    }

    @Test func acceptEncodingParsing() {
        #expect(AcceptEncoding.allowsGzip(["gzip"]))
        #expect(AcceptEncoding.allowsGzip(["GZIP ; q=0.5"]))
        #expect(AcceptEncoding.allowsGzip(["x-gzip"]))
        #expect(AcceptEncoding.allowsGzip(["br", "gzip"]), "several fields")
        #expect(AcceptEncoding.allowsGzip(["*"]))
        #expect(!AcceptEncoding.allowsGzip([]))
        #expect(!AcceptEncoding.allowsGzip(["gzip;q=0"]))
        #expect(!AcceptEncoding.allowsGzip(["*, gzip;q=0"]), "an explicit refusal beats the wildcard")
        #expect(!AcceptEncoding.allowsGzip(["deflate"]))
    }
}
