import Foundation
import Testing
import GeoClusterTestSupport

/// The Swift models of the answers in docs/FRONTENDS.md, compiled as an app would compile
/// them, decode the golden answers of the protocol: the guide's models stay true to what
/// the server sends.
struct FrontendModelTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var swiftc: String? {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swiftc" }
            + ["/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The guide's Swift block that starts with `import Foundation`.
    static func models() throws -> String? {
        let guide = try String(contentsOf: packageRoot.appendingPathComponent("docs/FRONTENDS.md"), encoding: .utf8)
        return guide.components(separatedBy: "```swift\n").dropFirst()
            .map { $0.components(separatedBy: "\n```").first ?? "" }
            .first { $0.hasPrefix("import Foundation\n") }
    }

    /// Decodes the answers of the golden files with the models: every successful answer
    /// of the FeatureCollection operations, the expansion zooms, the species list, and
    /// every error line.
    static let program = #"""
        import Foundation

        struct Envelope<T: Decodable>: Decodable {
            var ok: Bool
            var result: T?
        }
        struct ErrorEnvelope: Decodable {
            var error: APIErrorBody.Detail
        }

        let golden = URL(fileURLWithPath: CommandLine.arguments[1])
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        func lines(_ name: String) throws -> [Data] {
            let text = try String(contentsOf: golden.appendingPathComponent("\(name).response.jsonl"), encoding: .utf8)
            return text.split(separator: "\n").map { Data($0.utf8) }
        }
        func isOK(_ line: Data) -> Bool { String(decoding: line, as: UTF8.self).contains(#""ok":true"#) }

        var decoded = 0
        for name in ["clusters", "children", "leaves", "list", "get"] {
            for line in try lines(name) where isOK(line) {
                let answer = try decoder.decode(Envelope<FeatureCollection>.self, from: line)
                precondition(answer.result != nil, "\(name): no result")
                decoded += 1
            }
        }
        for line in try lines("expansion_zoom") where isOK(line) {
            _ = try decoder.decode(Envelope<ExpansionZoom>.self, from: line)
            decoded += 1
        }
        for line in try lines("species") where isOK(line) && String(decoding: line, as: UTF8.self).contains(#""scientific""#) {
            let list = try decoder.decode(Envelope<SpeciesList>.self, from: line)
            precondition(list.result?.species.first?.ko != nil, "species: no Korean name")
            decoded += 1
        }
        let sightings = try lines("species").filter(isOK).compactMap { try? decoder.decode(Envelope<FeatureCollection>.self, from: $0) }
        precondition(sightings.contains { $0.result?.features.contains { $0.properties?.topSpecies?.isEmpty == false } == true },
                     "no cluster with top_species decoded")
        for name in ["clusters", "leaves", "insert", "delete", "get", "list"] {
            for line in try lines(name) where !isOK(line) {
                _ = try decoder.decode(ErrorEnvelope.self, from: line)
                decoded += 1
            }
        }
        print("decoded \(decoded)")
        """#

    @Test(.enabled(if: swiftc != nil, "swiftc not found"))
    func theGuidesModelsDecodeTheGoldenAnswers() throws {
        let models = try #require(try Self.models(), "docs/FRONTENDS.md has a Swift block of models")
        let work = try TemporaryDirectory.make("geo-cluster-models")
        defer { try? FileManager.default.removeItem(at: work) }
        try models.write(to: work.appendingPathComponent("Models.swift"), atomically: true, encoding: .utf8)
        try Self.program.write(to: work.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)

        let compiled = try Self.run(try #require(Self.swiftc), ["-Onone", "-swift-version", "6", "Models.swift", "main.swift",
                                                               "-o", "models"], in: work)
        #expect(compiled.status == 0, "the guide's models do not compile:\n\(compiled.output.suffix(3_000))")
        guard compiled.status == 0 else { return }
        let golden = Self.packageRoot.appendingPathComponent("Tests/GeoClusterEngineTests/Golden").path
        let decoded = try Self.run(work.appendingPathComponent("models").path, [golden], in: work)
        #expect(decoded.status == 0, "\(decoded.output.suffix(3_000))")
        let count = decoded.output.split(separator: " ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect((count ?? 0) >= 20, "\(decoded.output)")
    }

    static func run(_ tool: String, _ arguments: [String], in directory: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
