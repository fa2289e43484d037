import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `geo-cluster serve` as a process: SIGTERM lets an answer in progress finish, to its
/// last byte even for a client that reads slowly, then the process exits with status 0.
@Suite(.serialized)
struct GracefulShutdownTests {
    /// A layer of `count` points on a grid over Korea, in a fresh temporary directory.
    static func gridLayerFile(count: Int) throws -> URL {
        let directory = try TemporaryDirectory.make("geo-cluster")
        let features = (0..<count).map { i in
            GeoJSON.pointFeature(coordinate: Coordinate(longitude: 126 + Double(i % 200) * 0.01,
                                                        latitude: 35 + Double(i / 200) * 0.01),
                                 properties: .object(["name": .string("point \(i)")]), id: .number(Double(i)))
        }
        let file = directory.appendingPathComponent("grid.geojson")
        try GeoJSON.featureCollection(features).jsonString.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Reads stderr line by line until a line contains `text`; returns that line.
    static func waitForLine(containing text: String, in handle: FileHandle, buffer: inout [UInt8]) throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                if line.contains(text) { return line }
                continue
            }
            let data = handle.availableData
            guard !data.isEmpty else { throw LoopbackConnection.Failure(description: "stderr ended before \"\(text)\"") }
            buffer.append(contentsOf: data)
        }
    }

    @Test func sigtermFinishesTheAnswerInProgress() throws {
        let file = try Self.gridLayerFile(count: 20_000)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let stderr = Pipe()
        let process = try GeoClusterExecutable.start(["serve", "--layer-file", "grid=\(file.path)", "--port", "0",
                                                      "--log-level", "debug"], stderr: stderr)
        defer { if process.isRunning { process.terminate() } }
        var pending: [UInt8] = []
        let listening = try Self.waitForLine(containing: "listening on http://127.0.0.1:", in: stderr.fileHandleForReading,
                                             buffer: &pending)
        let portText = listening.split(separator: ":").last?.prefix { $0.isNumber } ?? ""
        let port = try #require(Int(portText), "\(listening)")

        // A batch whose answer (every point, 8 times: over 20 MB) is far larger
        // than the socket buffers, so that the server is still writing it while this
        // side reads slowly.
        let lines = 8
        let body = String(repeating: #"{"op":"clusters","layer":"grid","bbox":[-180,-85,180,85],"zoom":20}"# + "\n", count: lines)
        let connection = try LoopbackConnection(port: port)
        try connection.send(Array("POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
        var received = try connection.receive()
        #expect(String(decoding: received.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")

        // The answer has begun; stop the server and let it finish.
        #expect(kill(process.processIdentifier, SIGTERM) == 0)
        _ = try Self.waitForLine(containing: "Signal caught", in: stderr.fileHandleForReading, buffer: &pending)
        // Slowly, to the end: the server must not close the connection while the end of
        // the answer still waits for this side to take it.
        while true {
            let more = try connection.receive(maxBytes: 4_096)
            if more.isEmpty { break }
            received += more
            usleep(500)
        }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)

        let answers = try HTTPResponseParts(received).chunkedBody.split(separator: 0x0A)
        #expect(answers.count == lines)
        for answer in answers {
            let json = try JSONValue.parse(Array(answer))
            #expect(json["ok"] == true)
            #expect(json["result"]?["features"]?.arrayValue?.count == 20_000)
        }
    }
}

/// An HTTP/1.1 response with a chunked body, as received.
struct HTTPResponseParts {
    let chunkedBody: [UInt8]

    init(_ bytes: [UInt8]) throws {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw LoopbackConnection.Failure(description: "no end of head")
        }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self).lowercased()
        guard head.contains("transfer-encoding: chunked") else {
            throw LoopbackConnection.Failure(description: "not chunked: \(head)")
        }
        chunkedBody = try Self.dechunk(Array(bytes[(headEnd + 4)...]))
    }

    /// The body of chunked `bytes`, its framing removed.
    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var body: [UInt8] = []
        var offset = 0
        while true {
            guard let lineEnd = bytes[offset...].firstIndex(of: 0x0D), lineEnd + 1 < bytes.count else {
                throw LoopbackConnection.Failure(description: "truncated chunk size at byte \(offset)")
            }
            let sizeText = String(decoding: bytes[offset..<lineEnd], as: UTF8.self)
            guard let size = Int(sizeText, radix: 16) else {
                throw LoopbackConnection.Failure(description: "bad chunk size \"\(sizeText)\"")
            }
            offset = lineEnd + 2
            if size == 0 { break }
            guard offset + size + 2 <= bytes.count else {
                throw LoopbackConnection.Failure(description: "truncated chunk: the answer was cut off")
            }
            body += bytes[offset..<offset + size]
            offset += size + 2
        }
        return body
    }
}
