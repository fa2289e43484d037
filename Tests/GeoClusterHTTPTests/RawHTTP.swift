import Foundation
import GeoClusterTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// HTTP spoken as raw bytes over a loopback socket, so that a test can send what no
/// well-behaved client library would (bad framing, odd methods, hostile numbers) and see
/// exactly what the server answers.
enum RawHTTP {
    /// One answer as received: the status code, the head in lower case, and the body with
    /// any chunked framing removed.
    struct Answer {
        var status: Int
        var head: String
        var body: [UInt8]

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `request` on a new connection and reads until the server closes it, for at
    /// most `seconds` without a byte arriving (the request should say `Connection: close`).
    /// Throws when the server sends nothing in time, so a hang fails the test with a
    /// message instead of holding up the suite.
    static func exchange(port: Int, _ request: [UInt8], seconds: Int = 120) throws -> Answer {
        let connection = try LoopbackConnection(port: port, receiveTimeoutSeconds: seconds)
        try connection.send(request)
        var received: [UInt8] = []
        while true {
            // A server that closes with request bytes still unread makes the kernel reset
            // the connection; what arrived before the reset is the answer.
            guard let more = try? connection.receive() else {
                if received.isEmpty { _ = try connection.receive() }
                break
            }
            if more.isEmpty { break }
            received += more
        }
        return try parse(received)
    }

    static func exchange(port: Int, _ request: String, seconds: Int = 120) throws -> Answer {
        try exchange(port: port, Array(request.utf8), seconds: seconds)
    }

    /// A request with a `Content-Length` body (none when `body` is nil) that asks the
    /// server to close the connection after answering.
    static func request(_ method: String, _ target: String, body: String? = nil,
                        headers: [String] = []) -> String {
        var lines = ["\(method) \(target) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"] + headers
        if let body { lines.append("Content-Length: \(body.utf8.count)") }
        return lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? "")
    }

    static func parse(_ bytes: [UInt8]) throws -> Answer {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw LoopbackConnection.Failure(description: "no complete answer head in \(bytes.count) bytes: "
                                             + String(decoding: bytes.prefix(200), as: UTF8.self))
        }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self).lowercased()
        let statusText = head.split(separator: " ").dropFirst().first ?? ""
        guard let status = Int(statusText) else {
            throw LoopbackConnection.Failure(description: "no status in \(head.prefix(100))")
        }
        let rest = Array(bytes[(headEnd + 4)...])
        let body = head.contains("transfer-encoding: chunked") ? try HTTPResponseParts.dechunk(rest) : rest
        return Answer(status: status, head: head, body: body)
    }

    /// `text` percent-encoded for a path segment or a query value.
    static func encoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~,")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// `geo-cluster serve` with `arguments` as a process of its own, on a free port: a
    /// request that crashed it would end that process, not the test runner.
    final class Server {
        let process: Process
        let port: Int
        private let stderr = Pipe()

        init(_ arguments: [String]) throws {
            process = try GeoClusterExecutable.start(["serve", "--port", "0"] + arguments, stderr: stderr)
            var pending: [UInt8] = []
            do {
                let listening = try GracefulShutdownTests.waitForLine(containing: "listening on http://127.0.0.1:",
                                                                      in: stderr.fileHandleForReading, buffer: &pending)
                let portText = listening.split(separator: ":").last?.prefix { $0.isNumber } ?? ""
                guard let port = Int(portText) else {
                    throw LoopbackConnection.Failure(description: "no port in \(listening)")
                }
                self.port = port
            } catch {
                process.terminate()
                throw error
            }
            // The server keeps logging; a pipe nobody reads would fill and stall it.
            stderr.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
        }

        deinit {
            stderr.fileHandleForReading.readabilityHandler = nil
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
    }
}
