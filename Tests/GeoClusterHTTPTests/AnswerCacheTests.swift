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

    /// A new version's answer takes the place of the older one's: a layer written between
    /// the requests does not leave an answer per version behind.
    @Test func aWriteReplacesTheKeptAnswer() async throws {
        try await withCache { client, api in
            let cache = try #require(api.answerCache)
            _ = try await client.get(Self.clusters)
            let oneAnswer = cache.keptBytes
            #expect(oneAnswer > 0)
            for n in 0..<3 {
                let write = try await client.send(.post, "/v1/layers/places/points",
                                                  #"{"id":"p\#(n)","lon":140,"lat":10,"name":"Far","category":"park"}"#)
                #expect(write.status == .created)
                _ = try await client.get(Self.clusters)  // the points are out of view: the same bytes
            }
            #expect(cache.misses == 4 && cache.hits == 0)
            #expect(cache.keptBytes == oneAnswer)
            let metrics = try await client.get("/metrics").text
            #expect(metrics.contains("geocluster_http_answer_cache_bytes \(oneAnswer)"))
        }
    }

    /// A kept answer is found before the request is read only for callers who need no
    /// key; with keys, the key is checked before anything kept is given.
    @Test func aKeptAnswerIsGivenOnlyToCallersTheRouteAllows() async throws {
        let store = MemoryKeyStore()
        let reader = try store.create(owner: "carol", scopes: [.read])
        let elsewhere = try store.create(owner: "dave", scopes: [.read], layers: ["places"])
        let forged = "gck_0123456789abcdef_" + String(repeating: "0", count: 64)
        let ring = try KeyRing(store: store)
        for requirement in [KeyRequirement.all, .writes] {
            let api = GeoClusterAPI(engine: try OwnedSample.engine(), keyRequirement: requirement, keyRing: ring)
            try await Application(router: api.makeRouter()).test(.router) { client in
                let cache = try #require(api.answerCache)
                let first = try await client.get(OwnedSample.clusters, KeyRouteTests.bearer(reader))
                #expect(first.status == .ok)
                let etag = try #require(first.headers[.eTag])
                var keyAndTag = KeyRouteTests.bearer(reader)
                keyAndTag[.ifNoneMatch] = etag
                let statuses: [(HTTPResponse.Status, HTTPResponse.Status)] = [
                    (try await client.get(OwnedSample.clusters).status, requirement == .all ? .unauthorized : .ok),
                    (try await client.get(OwnedSample.clusters, [.ifNoneMatch: etag]).status,
                     requirement == .all ? .unauthorized : .notModified),
                    (try await client.get(OwnedSample.clusters, KeyRouteTests.bearer(forged)).status, .unauthorized),
                    (try await client.get(OwnedSample.clusters, KeyRouteTests.bearer(elsewhere)).status, .forbidden),
                    (try await client.get(OwnedSample.clusters, keyAndTag).status, .notModified),
                ]
                for (n, (actual, expected)) in statuses.enumerated() {
                    #expect(actual == expected, "\(requirement) request \(n)")
                }
                #expect(cache.misses == 1 && cache.hits == (requirement == .all ? 1 : 3), "\(requirement)")
            }
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
