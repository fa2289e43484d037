import Foundation
import GeoClusterTestSupport
import Testing

/// Idle connections near `--max-connections` are closed to make room: many sockets
/// opened and never used cannot keep a normal request out, and a connection in the
/// middle of a request is never the one closed.
@Suite(.serialized)
struct IdleConnectionTests {
    static func metric(_ name: String, port: Int) throws -> Int {
        let metrics = try RawHTTP.exchange(port: port, RawHTTP.request("GET", "/metrics")).text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    @Test func idleSocketsDoNotKeepANormalRequestOut() throws {
        let layer = try GracefulShutdownTests.gridLayerFile(count: 100)
        defer { try? FileManager.default.removeItem(at: layer.deletingLastPathComponent()) }
        // No idle timeout: only the shedding can make room.
        let limit = 20
        let server = try RawHTTP.Server(["--layer-file", "grid=\(layer.path)", "--max-connections", "\(limit)",
                                         "--idle-timeout", "0"])

        // Twice the limit of sockets that never send a byte.
        var idle: [LoopbackConnection] = []
        for _ in 0..<(2 * limit) {
            idle.append(try LoopbackConnection(port: server.port, receiveTimeoutSeconds: 120))
        }
        // Then a request in progress: its head and half its body sent.
        let body = #"{"op":"clusters","layer":"grid","bbox":[-180,-85,180,85],"zoom":0}"# + "\n"
        let half = body.utf8.count / 2
        let busy = try LoopbackConnection(port: server.port, receiveTimeoutSeconds: 120)
        try busy.send(Array("POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n".utf8)
                      + Array(body.utf8.prefix(half)))

        // A normal request is answered (with no idle timeout, it would wait for ever).
        #expect(try RawHTTP.exchange(port: server.port, RawHTTP.request("GET", "/healthz"), seconds: 60).status == 200)
        // A second wave of idle sockets, now younger than the request in progress: were it
        // taken for idle, it would be the first one closed.
        for _ in 0..<(2 * limit) {
            idle.append(try LoopbackConnection(port: server.port, receiveTimeoutSeconds: 120))
        }
        #expect(try RawHTTP.exchange(port: server.port, RawHTTP.request("GET", "/healthz"), seconds: 60).status == 200)
        let shed = try Self.metric("geocluster_http_connections_shed_total", port: server.port)
        #expect(shed >= 2 * limit, "\(shed) idle connections closed")
        #expect(try Self.metric("geocluster_http_connections_open", port: server.port) <= limit)

        // The oldest idle socket was closed: it reads the end of the stream.
        #expect(try idle[0].receive().isEmpty)

        // The request in progress was kept and is answered once its body is complete.
        try busy.send(Array(body.utf8.dropFirst(half)))
        let head = String(decoding: try busy.receive().prefix(15), as: UTF8.self)
        #expect(head == "HTTP/1.1 200 OK")
    }
}
