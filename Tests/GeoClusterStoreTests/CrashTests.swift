import Foundation
import Synchronization
import Testing
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import GeoClusterStore
import GeoClusterTestSupport

/// Runs the built `geo-cluster query --store sqlite:…` as a subprocess, kills it with
/// SIGKILL while batches stream in, and checks the store afterwards.
@Suite(.serialized)
struct CrashTests {
    static func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        let stdin = Pipe(), stdout = Pipe()
        return (try GeoClusterExecutable.start(arguments, stdin: stdin, stdout: stdout), stdin, stdout)
    }

    @Test func everyAcknowledgedBatchSurvivesSIGKILLAndNoBatchIsHalfThere() throws {
        // Writing to the killed process must fail with EPIPE, not end the test process.
        signal(SIGPIPE, SIG_IGN)
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory, count: 2)
        let store = directory.appendingPathComponent("crash.sqlite").path
        let arguments = ["query", "--store", "sqlite:\(store)", "--layer-file", "sightings:birds=\(seed.path)"]
        let (process, stdin, stdout) = try Self.start(arguments)

        let batches = 3_000, size = 20
        let writer = Thread {
            for batch in 0..<batches {
                var line = StoreFixtures.insert(batch: batch, size: size, id: batch).jsonString
                line += "\n"
                do {
                    try stdin.fileHandleForWriting.write(contentsOf: Data(line.utf8))
                } catch {
                    return
                }
            }
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()

        // Read acknowledgements; kill the process once some have arrived, with more on the way.
        var acknowledged: Set<Int> = []
        var pending: [UInt8] = []
        var killed = false
        while true {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending += chunk
            while let newline = pending.firstIndex(of: 0x0A) {
                let answer = try JSONValue.parse(Array(pending[..<newline]))
                pending.removeSubrange(...newline)
                #expect(answer["ok"] == true, "\(answer.jsonString)")
                if answer["ok"] == true, let id = answer["id"]?.intValue { acknowledged.insert(id) }
            }
            if !killed && acknowledged.count >= 40 {
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
        #expect(killed)
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(acknowledged.count < batches, "the process finished before it was killed")

        // Every acknowledged batch is stored whole; any other batch wholly or not at all.
        let journal = try SQLiteJournal(path: store)
        let stored = try #require(try journal.loadLayer("birds"))
        try journal.close()
        var perBatch: [Int: Int] = [:]
        for record in stored.records {
            guard let key = record.idKey, key.hasPrefix("b"), let dash = key.firstIndex(of: "-"),
                  let batch = Int(key[key.index(after: key.startIndex)..<dash]) else { continue }
            perBatch[batch, default: 0] += 1
        }
        for batch in acknowledged { #expect(perBatch[batch] == size, "acknowledged batch \(batch) lost records") }
        for (batch, count) in perBatch { #expect(count == size, "batch \(batch) is half there: \(count) of \(size)") }
        #expect(stored.records.count == 2 + perBatch.count * size)

        // A restart on the same store answers with every stored record.
        let (again, input, output) = try Self.start(arguments)
        try input.fileHandleForWriting.write(contentsOf: Data(#"{"id":1,"op":"stats","layer":"birds"}"#.utf8 + [0x0A]))
        try input.fileHandleForWriting.close()
        let answer = try JSONValue.parse(Array(output.fileHandleForReading.readDataToEndOfFile()))
        again.waitUntilExit()
        #expect(answer["result"]?["count"]?.intValue == stored.records.count)
    }
}
