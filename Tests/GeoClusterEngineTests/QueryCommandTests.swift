import Foundation
import Testing
import GeoCluster

/// Runs the built `geo-cluster` executable as a batch job would: through pipes.
@Suite(.serialized)
struct QueryCommandTests {
    /// The executable sits next to the test bundle in the build directory.
    static let executable: URL? = {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL { candidates.append(bundle.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL.deletingLastPathComponent()) }
        return candidates.map { $0.appendingPathComponent("geo-cluster") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// A layer file in a fresh temporary directory.
    static func layerFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geo-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("stations.geojson")
        try GeoJSON.featureCollection(SampleLayer.features).jsonString.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    private func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe, Pipe) {
        let executable: URL = try #require(Self.executable, "geo-cluster executable not found next to the tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return (process, stdin, stdout, stderr)
    }

    @Test func answersEveryLineInOrderAndExitsZero() throws {
        let file = try Self.layerFile()
        let (process, stdin, stdout, _) = try start(["query", "--layer-file", "stations=\(file.path)"])
        let input = """
        {"id":1,"op":"stats"}
        not json
        {"id":3,"op":"clusters","layer":"stations","bbox":[120,30,135,40],"zoom":8}
        {"id":4,"op":"layers"}
        """
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let answers = try output.split(separator: 0x0A).map { try JSONValue.parse(Array($0)) }
        #expect(answers.map { $0["id"] } == [1, .null, 3, 4])
        #expect(answers.map { $0["ok"] } == [true, false, true, true])
        #expect(answers[1]["error"]?["line"] == 2)
        #expect(answers[2]["result"]?["features"]?.arrayValue?.count == 2)
    }

    @Test func aClosedStdoutEndsTheProcessQuietly() throws {
        // Writing to the child's stdin after it has gone must not end this process.
        signal(SIGPIPE, SIG_IGN)
        let file = try Self.layerFile()
        let (process, stdin, stdout, stderr) = try start(["query", "--layer-file", "stations=\(file.path)"])
        let requests = Data(String(repeating: "{\"op\":\"layers\"}\n", count: 200_000).utf8)
        let writer = Thread {
            // The process may go away before all of this is written; that is the point.
            try? stdin.fileHandleForWriting.write(contentsOf: requests)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let reader = stdout.fileHandleForReading
        var first = Data()
        while !first.contains(0x0A) {
            guard let chunk = try reader.read(upToCount: 1) , !chunk.isEmpty else { break }
            first.append(chunk)
        }
        try reader.close()
        process.waitUntilExit()
        #expect(first.count > 10)
        let bySignal = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE
        let byStatus = process.terminationReason == .exit && process.terminationStatus == 141
        #expect(bySignal || byStatus, "ended with \(process.terminationReason) \(process.terminationStatus)")
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        #expect(errors.isEmpty, "no crash trace: \(String(decoding: errors, as: UTF8.self))")
    }

    @Test func unreadableDataStopsTheStartWithAMessage() throws {
        let (process, stdin, stdout, stderr) = try start(["query", "--data", "/nonexistent/geo-cluster-data"])
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(output.isEmpty)
        #expect(errors.contains("/nonexistent/geo-cluster-data/layers.json"))
    }
}
