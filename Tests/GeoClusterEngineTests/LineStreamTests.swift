#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

struct LineStreamTests {
    /// The loop over two pipes on its own thread; the test plays the client.
    private final class Client: @unchecked Sendable {
        var requests: [Int32] = [0, 0]
        var answers: [Int32] = [0, 0]
        let finished = DispatchSemaphore(value: 0)
        var outcome: LineStream.Outcome?

        init(_ lineProtocol: LineProtocol) throws {
            guard pipe(&requests) == 0, pipe(&answers) == 0 else { throw POSIXError(.EMFILE) }
            let stream = LineStream(lineProtocol: lineProtocol, input: requests[0], output: answers[1])
            Thread { [self] in
                outcome = stream.run()
                close(answers[1])
                finished.signal()
            }.start()
        }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(requests[1], $0.baseAddress, $0.count) }
        }

        /// Reads until a newline has arrived (or the end of the output).
        func readLine() -> String {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(answers[0], &byte, 1) == 1 {
                if byte == 0x0A { break }
                line.append(byte)
            }
            return String(decoding: line, as: UTF8.self)
        }

        func finish() -> LineStream.Outcome? {
            close(requests[1])
            finished.wait()
            close(requests[0])
            close(answers[0])
            return outcome
        }
    }

    /// An interactive client gets each answer before it sends the next line.
    @Test func eachAnswerIsWrittenBeforeMoreInputArrives() throws {
        let client = try Client(LineProtocol(engine: try SampleLayer.engine()))
        client.send(#"{"id":1,"op":"stats"}"# + "\n")
        #expect(client.readLine() == #"{"id":1,"ok":true,"result":{"layers":1,"points":4}}"#)
        client.send(#"{"id":2,"op":"stats""#)
        client.send("}\n")
        #expect(client.readLine() == #"{"id":2,"ok":true,"result":{"layers":1,"points":4}}"#)
        client.send(#"{"id":3,"op":"stats"}"#)  // the last line needs no newline
        #expect(client.finish() == .endOfInput)
    }

    /// A line longer than the limit is answered once and skipped, however it arrives.
    @Test func anOverlongLineIsAnsweredOnceAndSkipped() throws {
        let client = try Client(LineProtocol(engine: try SampleLayer.engine(), maxLineBytes: 100))
        client.send(#"{"op":"stats","pad":""# + String(repeating: "x", count: 300))
        client.send(String(repeating: "x", count: 300) + "\"}\n" + #"{"id":2,"op":"stats"}"# + "\n")
        let first = try JSONValue.parse(Array(client.readLine().utf8))
        #expect(first["error"]?["code"] == "line_too_long")
        #expect(first["error"]?["line"] == 1)
        #expect(client.readLine() == #"{"id":2,"ok":true,"result":{"layers":1,"points":4}}"#)
        #expect(client.finish() == .endOfInput)
    }
}
