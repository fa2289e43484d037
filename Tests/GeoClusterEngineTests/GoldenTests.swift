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

/// Golden request/response files of the JSON-lines protocol, in Golden/: each
/// `NAME.request.jsonl` is answered through ``LineStream`` (the loop of
/// `geo-cluster query`) by a fresh engine over ``GoldenFixture``, and the answer must equal
/// `NAME.response.jsonl` byte for byte. The JSON examples of docs/PROTOCOL.md are checked
/// the same way.
///
/// To regenerate after an intended change of answers, run
///
///     GOLDEN_UPDATE=1 swift test --skip-build --filter GoldenTests
///
/// which rewrites every response file and the answer lines of the docs' examples; then
/// read the diff before committing it. The suite runs serially so that the coverage tests
/// read the response files only after they have been rewritten.
@Suite(.serialized) struct GoldenTests {
    static let packageDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let protocolDocument = packageDirectory.appendingPathComponent("docs/PROTOCOL.md")
    static let updating = ProcessInfo.processInfo.environment["GOLDEN_UPDATE"] == "1"

    /// The names of the golden pairs, from the request files present.
    static let names: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: goldenDirectory.path)) ?? []
        return files.filter { $0.hasSuffix(".request.jsonl") }
            .map { String($0.dropLast(".request.jsonl".count)) }
            .sorted()
    }()

    static func requestFile(_ name: String) -> URL { goldenDirectory.appendingPathComponent("\(name).request.jsonl") }
    static func responseFile(_ name: String) -> URL { goldenDirectory.appendingPathComponent("\(name).response.jsonl") }

    @Test(arguments: names)
    func answersMatchTheGoldenFile(_ name: String) throws {
        let answers = try GoldenFixture.answer(file: Self.requestFile(name))
        if Self.updating {
            try Data(answers).write(to: Self.responseFile(name))
            return
        }
        let expected = try [UInt8](Data(contentsOf: Self.responseFile(name)))
        let answerLines = answers.split(separator: 0x0A, omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(answerLines.count == expectedLines.count, "\(name): \(answerLines.count) answer lines, golden has \(expectedLines.count)")
        for (n, (answer, golden)) in zip(answerLines, expectedLines).enumerated() where answer != golden {
            Issue.record("""
                \(name).response.jsonl line \(n + 1) differs:
                  got      \(String(decoding: answer, as: UTF8.self))
                  expected \(String(decoding: golden, as: UTF8.self))
                """)
        }
    }

    /// Every operation is asked at least once with an answer of `"ok":true`.
    @Test func everyOperationHasASuccessfulGoldenAnswer() throws {
        var answered: Set<String> = []
        for name in Self.names {
            let requests = try Self.lines(of: Self.requestFile(name))
            let responses = try Self.lines(of: Self.responseFile(name))
            // Requests and answers pair up once the lines that get no answer are left out.
            let asked = requests.compactMap { line -> String? in
                guard let request = try? JSONValue.parse(line) else { return "" }
                return request["op"]?.stringValue ?? ""
            }
            for (op, response) in zip(asked, responses) where (try? JSONValue.parse(response))?["ok"] == true {
                answered.insert(op)
            }
        }
        #expect(answered == Set(Request.operations))
    }

    /// Every code of ``LineProtocol/errorCodes`` is answered in some golden file, and no
    /// golden file answers a code missing from that list. `context_creation_failed` (PROJ
    /// could not start) is a fault of the service that no request can cause;
    /// `storage_unavailable` needs a store that fails, which GeoClusterStoreTests close
    /// under a running engine (the golden engine has no store); `unauthorized`,
    /// `forbidden` and `not_owner` need a caller with a key, which this channel does not
    /// take (KeysAndOwnersTests and KeyRouteTests cover them).
    @Test func everyErrorCodeHasAGoldenAnswer() throws {
        var codes: Set<String> = []
        for name in Self.names {
            for line in try Self.lines(of: Self.responseFile(name)) {
                if let code = try JSONValue.parse(line)["error"]?["code"]?.stringValue { codes.insert(code) }
            }
        }
        #expect(codes == Set(LineProtocol.errorCodes).subtracting(["context_creation_failed", "storage_unavailable", "unauthorized", "forbidden", "not_owner"]))
    }

    /// The error-code table of docs/PROTOCOL.md lists exactly the codes of the engine.
    @Test func theDocumentedErrorCodesAreTheEngines() throws {
        let document = try String(contentsOf: Self.protocolDocument, encoding: .utf8)
        guard let table = document.components(separatedBy: "\n## Error codes\n").last else {
            Issue.record("docs/PROTOCOL.md has no Error codes section")
            return
        }
        var documented: [String] = []
        for row in table.split(separator: "\n") where row.hasPrefix("| `") {
            let cell = row.split(separator: "|", omittingEmptySubsequences: true)[0]
            documented += cell.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["`"]) }
        }
        #expect(documented == LineProtocol.errorCodes)
    }

    /// Each JSON example of docs/PROTOCOL.md that pairs requests with answers is answered
    /// so: the requests of one block are one input stream to a fresh engine.
    @Test func theDocumentedExamplesAreWhatTheEngineAnswers() throws {
        let document = try String(contentsOf: Self.protocolDocument, encoding: .utf8)
        var lines = document.components(separatedBy: "\n")
        var checked = 0
        var index = 0
        while index < lines.count {
            guard lines[index] == "```json" else { index += 1; continue }
            let start = index + 1
            var end = start
            while end < lines.count && lines[end] != "```" { end += 1 }
            let block = Array(lines[start..<end])
            index = end + 1
            // Request lines each followed by its answer line.
            let requestPositions = block.indices.filter { $0 % 2 == 0 }
            guard !block.isEmpty, block.count % 2 == 0,
                  block.indices.allSatisfy({ ($0 % 2 == 0) != block[$0].contains(#""ok":"#) }) else { continue }
            let input = requestPositions.map { block[$0] }.joined(separator: "\n") + "\n"
            let answers = try GoldenFixture.answer(input: Array(input.utf8))
            let answerLines = answers.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
            #expect(answerLines.count == requestPositions.count)
            for (position, answer) in zip(requestPositions, answerLines) {
                if Self.updating {
                    lines[start + position + 1] = answer
                } else {
                    #expect(answer == block[position + 1], "docs/PROTOCOL.md line \(start + position + 2)")
                }
            }
            checked += 1
        }
        #expect(checked >= 10, "the docs' examples were found")
        if Self.updating {
            try lines.joined(separator: "\n").write(to: Self.protocolDocument, atomically: true, encoding: .utf8)
        }
    }

    /// The non-blank lines of a file, without their newlines.
    static func lines(of file: URL) throws -> [[UInt8]] {
        try [UInt8](Data(contentsOf: file)).split(separator: 0x0A).map { line in
            Array(line.last == 0x0D ? line.dropLast() : line)
        }.filter { !$0.allSatisfy { $0 == 0x20 || $0 == 0x09 } }
    }
}

/// The layers every golden file and documented example is answered over: the sample layers
/// of Data/ (live sightings, places and stations, the Helsinki layers and walking network)
/// and `pts`, three points of the generic kind, which use the radius algorithm
/// (supercluster's ids, read-only).
///
/// Two limits are smaller than `geo-cluster query`'s defaults so that their errors are
/// reachable with small files: lines of at most 4,096 bytes (`--max-line-bytes 4096`)
/// and answers of at most 1,000 features.
enum GoldenFixture {
    static let maxLineBytes = 4_096
    static let limits = Engine.Limits(maxFeaturesPerResponse: 1_000)

    static let points: [JSONValue] = [
        GeoJSON.pointFeature(coordinate: Coordinate(longitude: 126.9707, latitude: 37.5547),
                             properties: ["name": "Seoul Station"], id: "seoul"),
        GeoJSON.pointFeature(coordinate: Coordinate(longitude: 126.9723, latitude: 37.5559),
                             properties: ["name": "Seoullo 7017"], id: "seoullo"),
        GeoJSON.pointFeature(coordinate: Coordinate(longitude: 129.0403, latitude: 35.1151),
                             properties: ["name": "Busan Station"], id: "busan"),
    ]

    /// A fresh engine: writes of one file never show in another.
    static func engine() throws -> Engine {
        let data = GoldenTests.packageDirectory.appendingPathComponent("Data").path
        var layers = try LayerCatalog.load(directory: data)
        layers.append(.radius(try RadiusLayer(name: "pts", kind: .points, features: points)))
        return try Engine(entries: layers, limits: limits, networks: try LayerCatalog.loadNetworks(directory: data))
    }

    /// The answers to a request file, through the loop of `geo-cluster query` reading the
    /// file and writing to a temporary file.
    static func answer(file: URL) throws -> [UInt8] {
        let input = open(file.path, O_RDONLY)
        guard input >= 0 else { throw CocoaError(.fileReadNoSuchFile) }
        defer { close(input) }
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString).jsonl").path
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard output >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { unlink(outputPath) }
        let stream = LineStream(lineProtocol: LineProtocol(engine: try engine(), maxLineBytes: maxLineBytes),
                                input: input, output: output)
        let outcome = stream.run()
        close(output)
        #expect(outcome == .endOfInput)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: outputPath)))
    }

    /// The answers to request bytes held in memory.
    static func answer(input: [UInt8]) throws -> [UInt8] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString).jsonl")
        try Data(input).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try answer(file: file)
    }
}
