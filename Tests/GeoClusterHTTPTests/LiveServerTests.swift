import CompressNIO
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import GeoClusterHTTP

/// The application `geo-cluster serve` runs, over a real socket: what the HTTP/1.1
/// encoder makes of 304s, gzip bodies, HEAD and preflights.
struct LiveServerTests {
    @Test func conditionalCompressedAndPreflightAnswersOverASocket() async throws {
        let api = GeoClusterAPI(engine: try GridSample.engine())
        let app = api.makeApplication(host: "127.0.0.1", port: 0, limits: ServerLimits(idleTimeoutSeconds: nil, maxConnections: 8),
                                      logger: Logger(label: "live-test"))
        try await app.test(.live) { client in
            let plain = try await client.get(GridSample.allPoints)
            #expect(plain.status == .ok)

            let gzipped = try await client.get(GridSample.allPoints, [.acceptEncoding: "gzip"])
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            #expect(try gzipped.decodedBody == Array(plain.body.readableBytesView))

            let etag = try #require(gzipped.headers[.eTag])
            let notModified = try await client.get(GridSample.allPoints, [.acceptEncoding: "gzip", .ifNoneMatch: etag])
            #expect(notModified.status == .notModified)
            #expect(notModified.body.readableBytes == 0)

            // The connection is still usable after a 304 and a HEAD: their framing was right.
            let head = try await client.execute(uri: "/v1/layers/grid/tiles/0/0/0.mvt", method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            let preflight = try await client.execute(uri: "/v1/query", method: .options, headers: [
                .origin: "https://birds.example", .accessControlRequestMethod: "POST",
            ])
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == "*")
            let tile = try await client.get("/v1/layers/grid/tiles/0/0/0.mvt")
            #expect(try VectorTileDecoder.decode(Array(tile.body.readableBytesView)).layers.count == 1)
        }
    }
}
