import Benchmark
import BenchmarkSupport
import Foundation
import GeoCluster
import GeoClusterEngine

/// JSON-lines throughput: small requests (`expansion_zoom`, `stats`) answered by the
/// engine, parsed and encoded with our codec, against the same work with Foundation's
/// JSONDecoder/JSONEncoder as the baseline. One iteration answers 10,000 lines; lines per
/// second = 10,000 / the time of one iteration.
let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal, .throughput],
                                                warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 50)

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
                let request = try decoder.decode(FoundationRequest.self, from: line)
                let engineRequest: Request = request.op == "stats"
                    ? .stats(layer: request.layer)
                    : .expansionZoom(layer: request.layer ?? "", clusterID: request.cluster_id ?? 0)
                let result = try engine.execute(engineRequest)
                output.append(try encoder.encode(FoundationResponse(id: request.id, ok: true, result: EncodableJSON(result))))
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
        let layer = try Layer(name: "birds", kind: .points, features: features)
        let clusterID = try layer.index.clusters(in: .world, zoom: 3).compactMap(\.clusterID).first ?? 0
        let lines = (0..<10_000).map { n -> [UInt8] in
            let text = n % 2 == 0
                ? #"{"id":\#(n),"op":"expansion_zoom","layer":"birds","cluster_id":\#(clusterID)}"#
                : #"{"id":\#(n),"op":"stats"}"#
            return Array(text.utf8)
        }
        return (try Engine(layers: [layer]), lines)
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
