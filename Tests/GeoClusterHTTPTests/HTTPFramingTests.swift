import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterTestSupport
import Testing

/// Requests that are not well-formed HTTP/1.1, sent as raw bytes to `geo-cluster serve`:
/// each is answered at once, with the right status class and the JSON error body, and
/// the server goes on serving.
@Suite(.serialized)
struct HTTPFramingTests {
    static var dataDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Data").path
    }

    /// The answer's status and error code; `nil` code when the body is not our error JSON.
    static func send(_ port: Int, _ request: String) throws -> (status: Int, code: String?, answer: RawHTTP.Answer) {
        let answer = try RawHTTP.exchange(port: port, request, seconds: 60)
        let code = (try? JSONValue.parse(answer.body))?["error"]?["code"]?.stringValue
        return (answer.status, code, answer)
    }

    static let query = #"{"op":"stats"}"#

    @Test func malformedRequestsAreAnsweredWithTheJSONErrorBody() throws {
        let server = try RawHTTP.Server(["--data", Self.dataDirectory, "--idle-timeout", "0"])
        let head = "POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n"
        let cases: [(String, String, Int, String)] = [
            ("chunk size zz", head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n\(Self.query)\r\n0\r\n\r\n", 400, "malformed_request"),
            ("chunk size over 2^64", head + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\nx\r\n0\r\n\r\n", 400,
             "malformed_request"),
            ("Transfer-Encoding identity", head + "Transfer-Encoding: identity\r\n\r\n\(Self.query)", 501,
             "unsupported_transfer_coding"),
            ("a control character in a header", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\u{1}b\r\n\r\n", 400,
             "malformed_request"),
            ("a space before a field name", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n X-Folded: yes\r\n\r\n", 400,
             "malformed_request"),
            ("an unknown method", "FROB /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, "malformed_request"),
            ("headers of 200 KB", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
             + String(repeating: "a", count: 200_000) + "\r\n\r\n", 431, "headers_too_large"),
            ("TRACE", "TRACE /v1/layers HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 405, "method_not_allowed"),
        ]
        for (name, request, status, code) in cases {
            let answer = try Self.send(server.port, request)
            #expect(answer.status == status && answer.code == code,
                    "\(name): \(answer.status) \(answer.answer.text.prefix(200))")
            if status != 405 { #expect(answer.answer.head.contains("connection: close"), "\(name)") }
        }
        #expect(server.process.isRunning)
        #expect(try Self.send(server.port, RawHTTP.request("GET", "/healthz")).status == 200)
    }

    /// NIO's decoder takes CONNECT for the start of a tunnel; the server answers 405 at
    /// once and closes, where it used to keep the client waiting until the idle timeout
    /// (forever with `--idle-timeout 0`).
    @Test func connectIsRefusedAtOnce() throws {
        let server = try RawHTTP.Server(["--data", Self.dataDirectory, "--idle-timeout", "0"])
        let answer = try RawHTTP.exchange(port: server.port, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                                          seconds: 60)
        #expect(answer.status == 405)
        #expect(answer.head.contains("allow: get"))
        #expect(try Self.send(server.port, RawHTTP.request("GET", "/healthz")).status == 200)
    }

    @Test func otherRequestTargetsAndPipelining() throws {
        let server = try RawHTTP.Server(["--data", Self.dataDirectory, "--idle-timeout", "0"])
        // Absolute form (RFC 9112 3.2.2): the path is what counts.
        #expect(try Self.send(server.port, "GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .status == 200)
        // Asterisk form: no resource; an error with our body.
        let asterisk = try Self.send(server.port, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect((400..<500).contains(asterisk.status) && asterisk.code != nil, "\(asterisk.answer.text)")
        // A good request, then a malformed one on the same connection: one answer each.
        let pipelined = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: \u{7F}\r\n\r\n"
        let connection = try LoopbackConnection(port: server.port, receiveTimeoutSeconds: 60)
        try connection.send(Array(pipelined.utf8))
        let text = String(decoding: try connection.receiveToEnd(), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.components(separatedBy: "HTTP/1.1 ").count == 3, "two answers: \(text.prefix(600))")
        #expect(text.contains("HTTP/1.1 400") && text.contains("malformed_request"))
        // A GET whose chunked body is bad gets its answer and no second, empty one.
        let get = try Self.send(server.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
        #expect(get.status == 200)
        #expect(!get.answer.text.contains("HTTP/1.1"), "one answer only: \(get.answer.text)")
    }

    /// HTTP/1.0 has no chunked coding and closes after each answer unless asked not to:
    /// the server answers in HTTP/1.0 and closes, where it used to answer chunked and
    /// keep the connection (a client reading to the end waited for the idle timeout).
    @Test func http10ClientsGetHTTP10Answers() throws {
        let server = try RawHTTP.Server(["--data", Self.dataDirectory, "--idle-timeout", "0"])
        let healthz = try RawHTTP.exchange(port: server.port, "GET /healthz HTTP/1.0\r\n\r\n", seconds: 60)
        #expect(healthz.status == 200 && healthz.text == #"{"status":"ok"}"#)
        #expect(healthz.head.hasPrefix("http/1.0 200") && healthz.head.contains("connection: close"))

        let body = Self.query + "\n" + Self.query + "\n"
        let batch = try RawHTTP.exchange(port: server.port, "POST /v1/query HTTP/1.0\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)",
                                         seconds: 60)
        #expect(batch.status == 200 && batch.head.hasPrefix("http/1.0 200"))
        #expect(!batch.head.contains("chunked"), "\(batch.head)")
        #expect(batch.text.split(separator: "\n").count == 2, "\(batch.text.prefix(300))")

        // Keep-alive, asked for, is kept where the answer has a length.
        let connection = try LoopbackConnection(port: server.port, receiveTimeoutSeconds: 60)
        let keepAlive = "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
        try connection.send(Array((keepAlive + keepAlive.replacingOccurrences(of: "keep-alive", with: "close")).utf8))
        let text = String(decoding: try connection.receiveToEnd(), as: UTF8.self)
        #expect(text.components(separatedBy: "HTTP/1.0 200").count == 3, "two answers on one connection: \(text)")
    }
}
