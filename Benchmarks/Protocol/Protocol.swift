import Benchmark
import BenchmarkSupport
import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterEngine

/// JSON-lines throughput: small requests (`expansion_zoom`, `stats`) answered by the
/// engine, parsed and encoded with our codec, against the same work with Foundation's
/// JSONDecoder/JSONEncoder as the baseline. One iteration answers 10,000 lines; lines per
/// second = 10,000 / the time of one iteration.
///
/// The `codec` benchmarks answer lines held in memory. The `pipe` benchmarks drive the
/// I/O loop of `geo-cluster query` (``LineStream``) over real pipes: a writer thread feeds
/// the request bytes into one pipe, the loop answers them into another, a reader thread
/// drains it; the Foundation baseline does the same through the same pipes with the same
/// chunked reads and writes, decoding and encoding with Foundation.
let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal, .throughput],
                                                warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 50)

    Benchmark("jsonlines pipe 10k small requests (geo-cluster)", configuration: configuration) { benchmark in
        let (engine, lines) = try ProtocolWorkload.make()
        let requests = ProtocolWorkload.stream(lines)
        let lineProtocol = LineProtocol(engine: engine)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let answered = PipeRun.run(requests) { input, output in
                _ = LineStream(lineProtocol: lineProtocol, input: input, output: output).run()
            }
            precondition(answered == lines.count, "\(answered) answers to \(lines.count) requests")
        }
    }

    Benchmark("jsonlines pipe 10k small requests (Foundation codec)", configuration: configuration) { benchmark in
        let (engine, lines) = try ProtocolWorkload.make()
        let requests = ProtocolWorkload.stream(lines)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let answered = PipeRun.run(requests) { input, output in
                FoundationLineLoop(engine: engine).run(input: input, output: output)
            }
            precondition(answered == lines.count, "\(answered) answers to \(lines.count) requests")
        }
    }

    Benchmark("jsonlines 10k small requests (geo-cluster codec)", configuration: configuration) { benchmark in
        let (engine, lines) = try ProtocolWorkload.make()
        let lineProtocol = LineProtocol(engine: engine)
        var output: [UInt8] = []
        output.reserveCapacity(1 << 20)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            output.removeAll(keepingCapacity: true)
            for (n, line) in lines.enumerated() {
                lineProtocol.respond(to: line[...], lineNumber: n + 1, into: &output)
            }
            blackHole(output.count)
        }
    }

    Benchmark("jsonlines 10k small requests (Foundation codec)", configuration: configuration) { benchmark in
        let (engine, lines) = try ProtocolWorkload.make()
        let datas = lines.map { Data($0) }
        let decoder = JSONDecoder()
        let encoder = JSONEncoder()
        var output = Data()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            output.removeAll(keepingCapacity: true)
            for line in datas {
                output.append(try FoundationLineLoop.answer(line, engine: engine, decoder: decoder, encoder: encoder))
                output.append(0x0A)
            }
            blackHole(output.count)
        }
    }
}

enum ProtocolWorkload {
    /// A 100k-point Korea layer and 10,000 request lines, alternating the two operations.
    static func make() throws -> (Engine, [[UInt8]]) {
        let points = PointSets.points(.korea, count: 100_000)
        let features = points.enumerated().map { i, c in
            GeoJSON.pointFeature(coordinate: c, properties: .object(["n": .number(Double(i))]), id: .number(Double(i)))
        }
        let layer = try RadiusLayer(name: "birds", kind: .points, features: features)
        let clusterID = try layer.index.clusters(in: .world, zoom: 3).compactMap(\.clusterID).first ?? 0
        let lines = (0..<10_000).map { n -> [UInt8] in
            let text = n % 2 == 0
                ? #"{"id":\#(n),"op":"expansion_zoom","layer":"birds","cluster_id":\#(clusterID)}"#
                : #"{"id":\#(n),"op":"stats"}"#
            return Array(text.utf8)
        }
        return (try Engine(layers: [layer]), lines)
    }

    /// The lines as one input stream, each ended by a newline.
    static func stream(_ lines: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for line in lines {
            bytes += line
            bytes.append(0x0A)
        }
        return bytes
    }
}

/// One run of a line loop between two fresh pipes.
enum PipeRun {
    /// Feeds `requests` into the loop's input from a writer thread, runs `loop` on the
    /// calling thread, drains its output on a reader thread, and returns the number of
    /// answer lines.
    static func run(_ requests: [UInt8], loop: (_ input: Int32, _ output: Int32) -> Void) -> Int {
        var requestPipe: [Int32] = [0, 0]
        var answerPipe: [Int32] = [0, 0]
        guard pipe(&requestPipe) == 0, pipe(&answerPipe) == 0 else { fatalError("pipe: errno \(errno)") }
        let done = DispatchGroup()
        let writer = Thread { [requestPipe] in
            var offset = 0
            while offset < requests.count {
                let written = requests[offset...].withUnsafeBytes { write(requestPipe[1], $0.baseAddress, $0.count) }
                if written < 0 { if errno == EINTR { continue } else { break } }
                offset += written
            }
            close(requestPipe[1])
            done.leave()
        }
        let newlines = Counter()
        let reader = Thread { [answerPipe] in
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            var count = 0
            while true {
                let n = chunk.withUnsafeMutableBytes { read(answerPipe[0], $0.baseAddress, $0.count) }
                if n < 0 { if errno == EINTR { continue } else { break } }
                if n == 0 { break }
                for byte in chunk[0..<n] where byte == 0x0A { count += 1 }
            }
            close(answerPipe[0])
            newlines.value = count
            done.leave()
        }
        done.enter()
        done.enter()
        writer.start()
        reader.start()
        loop(requestPipe[0], answerPipe[1])
        close(requestPipe[0])
        close(answerPipe[1])
        done.wait()
        return newlines.value
    }

    /// The reader thread's count, read after `DispatchGroup.wait()` has ordered the access.
    final class Counter: @unchecked Sendable {
        var value = 0
    }
}

/// The Foundation baseline of ``LineStream``: the same 64 KiB reads and one write per
/// chunk read, with each line decoded by JSONDecoder and each answer encoded by
/// JSONEncoder. It knows only the two operations of the workload.
struct FoundationLineLoop {
    let engine: Engine
    let decoder = JSONDecoder()
    let encoder = JSONEncoder()

    func run(input: Int32, output: Int32) {
        var pending = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var answers = Data()
        while true {
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 { if errno == EINTR { continue } else { break } }
            if count == 0 { break }
            pending.append(contentsOf: chunk[0..<count])
            var lineStart = pending.startIndex
            while let newline = pending[lineStart...].firstIndex(of: 0x0A) {
                let line = pending[lineStart..<newline]
                if let answer = try? Self.answer(line, engine: engine, decoder: decoder, encoder: encoder) {
                    answers.append(answer)
                } else {
                    answers.append(contentsOf: #"{"id":null,"ok":false}"#.utf8)
                }
                answers.append(0x0A)
                lineStart = newline + 1
            }
            pending = pending[lineStart...]
            answers.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                var offset = 0
                while offset < bytes.count {
                    let written = write(output, base + offset, bytes.count - offset)
                    if written < 0 { if errno == EINTR { continue } else { return } }
                    offset += written
                }
            }
            answers.removeAll(keepingCapacity: true)
        }
    }

    /// One answer line (without its newline).
    static func answer(_ line: Data, engine: Engine, decoder: JSONDecoder, encoder: JSONEncoder) throws -> Data {
        let request = try decoder.decode(FoundationRequest.self, from: line)
        let engineRequest: Request = request.op == "stats"
            ? .stats(layer: request.layer)
            : .expansionZoom(layer: request.layer ?? "", clusterID: request.cluster_id ?? 0)
        let result = try engine.execute(engineRequest)
        return try encoder.encode(FoundationResponse(id: request.id, ok: true, result: EncodableJSON(result)))
    }
}

struct FoundationRequest: Decodable {
    var id: Int?
    var op: String
    var layer: String?
    var cluster_id: Int?
}

struct FoundationResponse: Encodable {
    var id: Int?
    var ok: Bool
    var result: EncodableJSON
}

/// Our JSON value, encoded through Foundation's encoder for the baseline.
struct EncodableJSON: Encodable {
    var value: JSONValue
    init(_ value: JSONValue) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        switch value {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case let .bool(b):
            var container = encoder.singleValueContainer()
            try container.encode(b)
        case let .number(n):
            var container = encoder.singleValueContainer()
            try container.encode(n)
        case let .string(s):
            var container = encoder.singleValueContainer()
            try container.encode(s)
        case let .array(items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(EncodableJSON(item)) }
        case let .object(object):
            var container = encoder.container(keyedBy: Key.self)
            for (key, item) in object { try container.encode(EncodableJSON(item), forKey: Key(stringValue: key)) }
        }
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
