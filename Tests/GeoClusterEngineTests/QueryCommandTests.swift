import Foundation
import Testing
import GeoCluster
import GeoClusterWire
import GeoClusterTestSupport

/// Runs the built `geo-cluster` executable as a batch job would: through pipes.
@Suite(.serialized)
struct QueryCommandTests {
    /// A layer file in a fresh temporary directory.
    static func layerFile() throws -> URL {
        let directory = try TemporaryDirectory.make("geo-cluster")
        let file = directory.appendingPathComponent("stations.geojson")
        try GeoJSON.featureCollection(SampleLayer.features).jsonString.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    private func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe, Pipe) {
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        let process = try GeoClusterExecutable.start(arguments, stdin: stdin, stdout: stdout, stderr: stderr)
        return (process, stdin, stdout, stderr)
    }

    @Test func versionAndHelpNameWhatTheBinaryIs() throws {
        let version = try GeoClusterExecutable.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.5.0")
        // Every route the server has is named in `serve --help`.
        let help = try GeoClusterExecutable.run(["serve", "--help"])
        for route in ["/v1/project", "/v1/reachable", "/v1/stations", "/nearby", "/points/{id}", "/v1/query"] {
            #expect(help.stdout.contains(route), "\(route)")
        }
    }

    @Test func aSQLiteStoreServesOneProcessAtATime() throws {
        let file = try Self.layerFile()
        let store = "sqlite:" + file.deletingLastPathComponent().appendingPathComponent("one.sqlite").path
        let arguments = ["query", "--layer-file", "stations=\(file.path)", "--store", store]
        let (first, stdin, stdout, _) = try start(arguments)
        // Once it answers, it holds the store.
        stdin.fileHandleForWriting.write(Data(#"{"id":1,"op":"stats"}"#.utf8 + [0x0A]))
        var answered = Data()
        while !answered.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            answered += chunk
        }
        #expect(answered.contains(0x0A), "the first process answers")
        let second = try GeoClusterExecutable.run(arguments)
        #expect(second.status != 0)
        #expect(second.stderr.contains("another geo-cluster process serves"), "\(second.stderr)")
        try stdin.fileHandleForWriting.close()
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        // Given back when the first one ends.
        #expect(try GeoClusterExecutable.run(arguments).status == 0)
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

    /// 100,000 lines, every seventh one bad in a different way: each good line is answered
    /// with its own id and the right result, each bad one with its error, all in order.
    @Test func aLongMixedStreamIsAnsweredLineByLineInOrder() throws {
        signal(SIGPIPE, SIG_IGN)
        let file = try Self.layerFile()
        let (process, stdin, stdout, _) = try start(["query", "--layer-file", "stations=\(file.path)"])
        let bad = [#"{"id":"#, #"{"op":"nope"}"#, #"{"op":"clusters","layer":"stations"}"#, "[1,2]",
                   #"{"op":"leaves","layer":"stations","cluster_id":-1}"#, #"{"op":"stats","x":1}"#]
        let badCodes = ["invalid_json", "unknown_op", "missing_field", "invalid_request", "invalid_field", "unknown_field"]
        var input = ""
        var expected: [(id: Int?, code: String?)] = []
        for n in 1...100_000 {
            if n % 7 == 0 {
                let k = (n / 7) % bad.count
                input += bad[k] + "\n"
                expected.append((nil, badCodes[k]))
            } else if n % 2 == 0 {
                input += #"{"id":\#(n),"op":"expansion_zoom","layer":"stations","cluster_id":7}"# + "\n"
                expected.append((n, nil))
            } else {
                input += #"{"id":\#(n),"op":"stats"}"# + "\n"
                expected.append((n, nil))
            }
        }
        let data = Data(input.utf8)
        let writer = Thread {
            try? stdin.fileHandleForWriting.write(contentsOf: data)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = output.split(separator: 0x0A)
        #expect(lines.count == 100_000)
        var mismatches = 0
        for (n, (line, want)) in zip(lines, expected).enumerated() {
            let answer = try JSONValue.parse(Array(line))
            if let code = want.code {
                let ok = answer["ok"] == false && answer["error"]?["code"]?.stringValue == code
                    && answer["error"]?["line"]?.intValue == n + 1
                if !ok { mismatches += 1 }
            } else if let id = want.id {
                let result = answer["result"]
                let ok = answer["ok"] == true && answer["id"]?.intValue == id
                    && (id % 2 == 0 ? result?["expansion_zoom"] == 3 : result?["points"] == 4)
                if !ok { mismatches += 1 }
            }
            if mismatches > 0 && mismatches < 3 { Issue.record("line \(n + 1): \(String(decoding: line, as: UTF8.self))") }
        }
        #expect(mismatches == 0)
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
