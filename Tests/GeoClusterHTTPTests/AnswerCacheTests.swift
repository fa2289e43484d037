import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import CompressNIO
import NIOCore
import Testing
@testable import GeoClusterHTTP

/// The answer cache: a request asked again of the same data is answered from the cache,
/// byte for byte the same (gzip and 304 included), and never after a write has changed
/// what it reads.
struct AnswerCacheTests {
    func withCache(budget: Int = GeoClusterAPI.defaultAnswerCacheBytes, engine: Engine? = nil,
                   _ test: @escaping @Sendable (any TestClientProtocol, GeoClusterAPI) async throws -> Void) async throws {
        let api = GeoClusterAPI(engine: try engine ?? WritableSample.engine(), answerCacheBytes: budget)
        try await Application(router: api.makeRouter()).test(.router) { client in try await test(client, api) }
    }

    static let clusters = "/v1/layers/places/clusters?bbox=126,37,128,38&zoom=16"

    @Test func theSameRequestIsAnsweredFromTheCacheUntilAWriteChangesTheLayer() async throws {
        try await withCache { client, api in
            let cache = try #require(api.answerCache)
            let first = try await client.get(Self.clusters)
            let second = try await client.get(Self.clusters)
            #expect(cache.misses == 1 && cache.hits == 1)
            #expect(first.text == second.text && first.headers[.eTag] == second.headers[.eTag])
            // A revalidation from the cache.
            let revalidated = try await client.get(Self.clusters, [.ifNoneMatch: try #require(first.headers[.eTag])])
            #expect(revalidated.status == .notModified)
            #expect(cache.hits == 2)
            // Another query is another answer.
            _ = try await client.get("/v1/layers/places/clusters?bbox=126,37,128,38&zoom=15")
            #expect(cache.misses == 2)

            // A write makes a new version: the next answer is computed from it.
            let write = try await client.send(.post, "/v1/layers/places/points",
                                              #"{"id":"new","lon":126.98,"lat":37.57,"name":"New","category":"park"}"#)
            #expect(write.status == .created)
            let after = try await client.get(Self.clusters)
            #expect(cache.misses == 3)
            #expect(after.text.contains(#""id":"new""#))
            #expect(!first.text.contains(#""id":"new""#))
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains(#"geocluster_http_answer_cache_total{result="hit"} 2"#))
        }
    }

    @Test func theGzipFormIsKeptToo() async throws {
        let sample = try Engine(entries: try LayerCatalog.load(directory: ViewerPageTests.dataDirectory))
        try await withCache(engine: sample) { client, api in
            let cache = try #require(api.answerCache)
            let layers = "/v1/layers"  // the sample's seven layers: over 1 KB, so gzipped
            let plain = try await client.get(layers)
            let zipped1 = try await client.get(layers, [.acceptEncoding: "gzip"])
            let zipped2 = try await client.get(layers, [.acceptEncoding: "gzip"])
            #expect(cache.hits == 2)
            #expect(zipped1.headers[.contentEncoding] == "gzip" && zipped2.headers[.contentEncoding] == "gzip")
            #expect(Array(zipped1.body.readableBytesView) == Array(zipped2.body.readableBytesView))
            var buffer = zipped2.body
            let inflated = try buffer.decompress(with: .gzip())
            #expect(String(buffer: inflated) == plain.text)
        }
    }

    @Test func memoryIsBounded() async throws {
        // A budget that holds about one answer per generation: asking for three views in
        // turn never finds the first one still kept.
        try await withCache(budget: 1_200) { client, api in
            let cache = try #require(api.answerCache)
            for zoom in [14, 15, 16, 14, 15, 16] {
                _ = try await client.get("/v1/layers/places/clusters?bbox=126,37,128,38&zoom=\(zoom)")
            }
            #expect(cache.hits == 0 && cache.misses == 6)
        }
        try await withCache(budget: 0) { _, api in
            #expect(api.answerCache == nil)
        }
    }
}
