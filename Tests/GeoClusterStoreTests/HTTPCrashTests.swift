import Foundation
import Synchronization
import Testing
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import GeoClusterStore
import GeoClusterTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `geo-cluster serve --store sqlite:…` as a subprocess, has several writer
/// threads insert batches over `POST /v1/layers/birds/points` at once, kills the server
/// with SIGKILL after a random number of acknowledgements, and checks the store: every
/// acknowledged batch is there whole, and no batch is there in part. Several rounds on the
/// same store, each starting the server again from what the last one left.
@Suite(.serialized)
struct HTTPCrashTests {
    /// Rounds of start, concurrent writes, SIGKILL and check.
    static let rounds = 4
    /// Writer threads per round, each with its own connections.
    static let writers = 4
    /// Records per batch.
    static let size = 25
    /// Batches a round may send at most: far more than the kill lets through, so that
    /// the round stays bounded should the kill never come.
    static let maxBatchesPerRound = 3_000
    /// Records of the seed layer file.
    static let seedCount = 2

    @Test func everyAcknowledgedHTTPBatchSurvivesSIGKILLUnderConcurrentWritersAndNoBatchIsHalfThere() throws {
        // Sending to the killed server must fail with EPIPE, not end the test process.
        signal(SIGPIPE, SIG_IGN)
        let directory = try StoreFixtures.directory()
        var processes: [Process] = []
        defer {
            for process in processes where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: directory)
        }
        let seedFile = try StoreFixtures.seedFile(in: directory, count: Self.seedCount)
        let store = directory.appendingPathComponent("http-crash.sqlite").path
        let arguments = ["serve", "--port", "0", "--store", "sqlite:\(store)",
                         "--layer-file", "sightings:birds=\(seedFile.path)"]

        let seed = ProcessInfo.processInfo.environment["HTTP_CRASH_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64.max)
        var random = SeededRandom(seed: seed)
        print("HTTPCrashTests: seed \(seed) (set HTTP_CRASH_SEED to repeat the kill points)")

        let shared = HTTPCrashSupport.Shared()
        var storedCount = 0
        for round in 0..<Self.rounds {
            let threshold = Int.random(in: 20...80, using: &random)
            // A delay after the threshold's acknowledgement, so that the kill lands anywhere
            // in the requests then in flight: in a commit, between a commit and its answer...
            let delayMicroseconds = UInt32.random(in: 0...20_000, using: &random)
            let stderr = Pipe()
            let process = try GeoClusterExecutable.start(arguments, stderr: stderr)
            processes.append(process)
            let log = HTTPCrashSupport.ServerLog(stderr.fileHandleForReading)
            let port = try #require(log.waitForPort(seconds: 60), "round \(round): no port; stderr: \(log.text)")
            let pid = process.processIdentifier
            shared.state.withLock { $0.startRound(threshold: threshold, delayMicroseconds: delayMicroseconds) }

            // Concurrent writers, each on its own blocking connections.
            let done = DispatchSemaphore(value: 0)
            for writer in 0..<Self.writers {
                let thread = Thread {
                    HTTPCrashSupport.write(round: round, writer: writer, port: port, pid: pid, size: Self.size,
                                           maxBatches: Self.maxBatchesPerRound, shared: shared)
                    done.signal()
                }
                thread.start()
            }
            let deadline = DispatchTime.now() + .seconds(300)
            var finished = 0
            for _ in 0..<Self.writers where done.wait(timeout: deadline) == .success { finished += 1 }
            #expect(finished == Self.writers, "round \(round): writers still busy after 300 s")

            let killedByTest = shared.state.withLock { state in
                defer { state.killRequested = true }
                return state.killRequested
            }
            if !killedByTest { kill(pid, SIGKILL) }
            process.waitUntilExit()
            #expect(killedByTest, "round \(round): the writers stopped before \(threshold) acknowledgements")
            #expect(process.terminationReason == .uncaughtSignal, "round \(round): the server ended on its own")
            #expect(process.terminationStatus == SIGKILL)

            let (acknowledged, sent, roundAcks, roundSent, failures) = shared.state.withLock {
                ($0.acknowledged, $0.sent, $0.roundAcknowledged, $0.roundSent, $0.failures)
            }
            #expect(failures.isEmpty, "round \(round): \(failures.joined(separator: "; ")); stderr: \(log.text)")
            #expect(roundAcks >= threshold)
            storedCount = try Self.checkStore(store, acknowledged: acknowledged, sent: sent, round: round)
            print("HTTPCrashTests: round \(round): SIGKILL \(delayMicroseconds) µs after acknowledgement \(threshold); " +
                  "\(roundAcks) acknowledged, " +
                  "\(roundSent) sent; \(acknowledged.count) acknowledged over all rounds; \(storedCount) records stored " +
                  "(\((storedCount - Self.seedCount) / Self.size - acknowledged.count) batches stored but never acknowledged, over all rounds)")
        }

        // A server started again on the store answers with every stored record.
        let stderr = Pipe()
        let process = try GeoClusterExecutable.start(arguments, stderr: stderr)
        processes.append(process)
        let log = HTTPCrashSupport.ServerLog(stderr.fileHandleForReading)
        let port = try #require(log.waitForPort(seconds: 60), "restart: no port; stderr: \(log.text)")
        let request = "GET /v1/layers/birds HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let answer = try HTTPCrashSupport.exchange(port: port, request: Array(request.utf8))
        #expect(answer.status == 200)
        let stats = try JSONValue.parse(answer.body)
        #expect(stats["count"]?.intValue == storedCount, "\(stats.jsonString)")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Checks the store after a kill: every acknowledged batch whole, every other batch
    /// whole or absent, nothing that was never sent. Returns the number of stored records.
    static func checkStore(_ path: String, acknowledged: Set<String>, sent: Set<String>, round: Int) throws -> Int {
        let journal = try SQLiteJournal(path: path)
        let stored: StoredLayer?
        do {
            stored = try journal.loadLayer("birds")
        } catch {
            try? journal.close()
            throw error
        }
        try journal.close()
        let layer = try #require(stored, "round \(round): the store has no layer birds")

        var perBatch: [String: Set<Int>] = [:]
        var seeds = 0
        for record in layer.records {
            let key = record.idKey ?? "(no id)"
            if key.hasPrefix("seed-") {
                seeds += 1
                continue
            }
            guard let dash = key.lastIndex(of: "-"), let index = Int(key[key.index(after: dash)...]) else {
                Issue.record("round \(round): unexpected record \(key)")
                continue
            }
            perBatch[String(key[..<dash]), default: []].insert(index)
        }
        #expect(seeds == seedCount, "round \(round): \(seeds) seed records")
        let whole = Set(0..<size)  // every record of a batch
        for batch in acknowledged.sorted() {
            let missing = whole.subtracting(perBatch[batch] ?? [])
            #expect(missing.isEmpty, "round \(round): acknowledged batch \(batch) lacks records \(missing.sorted())")
        }
        for (batch, indices) in perBatch.sorted(by: { $0.key < $1.key }) {
            #expect(indices.sorted() == Array(0..<size), "round \(round): batch \(batch) is half there: records \(indices.sorted())")
            #expect(sent.contains(batch), "round \(round): batch \(batch) was never sent")
        }
        #expect(layer.records.count == seedCount + perBatch.count * size)
        return layer.records.count
    }
}

/// What the crash test needs beside the store fixtures: its shared state, the server's
/// log, and blocking loopback HTTP.
private enum HTTPCrashSupport {
    /// The writers' state, over all rounds.
    struct State {
        /// Batches whose 201 answer arrived whole (keys `r<round>b<batch>`).
        var acknowledged: Set<String> = []
        /// Batches whose request was begun.
        var sent: Set<String> = []
        /// Anything that went wrong before the kill.
        var failures: [String] = []
        var nextBatch = 0
        var roundAcknowledged = 0
        var roundSent = 0
        var threshold = 0
        var delayMicroseconds: UInt32 = 0
        /// Set by the writer whose acknowledgement reaches the threshold, before it kills
        /// the server; failures are expected from then on.
        var killRequested = false

        mutating func startRound(threshold: Int, delayMicroseconds: UInt32) {
            nextBatch = 0
            roundAcknowledged = 0
            roundSent = 0
            self.threshold = threshold
            self.delayMicroseconds = delayMicroseconds
            killRequested = false
        }
    }

    final class Shared: Sendable {
        let state = Mutex(State())
    }

    static func batchKey(round: Int, batch: Int) -> String { "r\(round)b\(batch)" }

    /// One writer: inserts batches until the server is killed (or the round's batches
    /// run out); the writer whose acknowledgement reaches the threshold kills the server
    /// after the round's delay, while the others go on writing.
    static func write(round: Int, writer: Int, port: Int, pid: Int32, size: Int, maxBatches: Int, shared: Shared) {
        while true {
            let next: Int? = shared.state.withLock { state in
                guard state.nextBatch < maxBatches else { return nil }
                let batch = state.nextBatch
                state.nextBatch += 1
                state.roundSent += 1
                state.sent.insert(batchKey(round: round, batch: batch))
                return batch
            }
            guard let batch = next else { return }
            let key = batchKey(round: round, batch: batch)
            let records = (0..<size).map { StoreFixtures.sighting("\(key)-\($0)", batch * size + $0) }
            let body = JSONValue.array(records).jsonString
            let request = "POST /v1/layers/birds/points HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
                "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
            let answer: (status: Int, body: [UInt8])
            do {
                answer = try exchange(port: port, request: Array(request.utf8))
            } catch {
                // Expected once the server is killed; a failure before that is not.
                shared.state.withLock { state in
                    if !state.killRequested { state.failures.append("writer \(writer), batch \(key): \(error)") }
                }
                return
            }
            let result = try? JSONValue.parse(answer.body)
            guard answer.status == 201, result?["applied"]?.intValue == size else {
                let text = String(decoding: answer.body, as: UTF8.self)
                shared.state.withLock { $0.failures.append("writer \(writer), batch \(key): \(answer.status) \(text)") }
                return
            }
            let killAfter: UInt32? = shared.state.withLock { state in
                state.acknowledged.insert(key)
                state.roundAcknowledged += 1
                guard !state.killRequested, state.roundAcknowledged >= state.threshold else { return nil }
                state.killRequested = true
                return state.delayMicroseconds
            }
            if let killAfter {
                usleep(killAfter)
                kill(pid, SIGKILL)
                return
            }
        }
    }

    /// One request on a connection of its own: the answer's status and body, once the
    /// whole answer (by its Content-Length or chunked framing) has arrived.
    static func exchange(port: Int, request: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        let connection = try LoopbackConnection(port: port, receiveTimeoutSeconds: 60)
        try connection.send(request)
        var received: [UInt8] = []
        while true {
            if let answer = try complete(received) { return answer }
            let more = try connection.receive()
            if more.isEmpty {
                // The peer closed: whole only when the answer is framed by the close.
                if let answer = try complete(received, closed: true) { return answer }
                throw Failure(description: "connection closed after \(received.count) bytes of the answer")
            }
            received += more
        }
    }

    /// The status and body of `bytes` if they hold a whole answer, `nil` if more is due.
    static func complete(_ bytes: [UInt8], closed: Bool = false) throws -> (status: Int, body: [UInt8])? {
        let separator = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \"\(lines[0])\"")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let rest = Array(bytes[(headEnd + 4)...])
        if let lengthText = headers["content-length"] {
            guard let length = Int(lengthText) else { throw Failure(description: "bad Content-Length \(lengthText)") }
            return rest.count >= length ? (status, Array(rest.prefix(length))) : nil
        }
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            return try dechunk(rest).map { (status, $0) }
        }
        return closed ? (status, rest) : nil
    }

    /// The body of chunked `bytes`, `nil` until its last chunk has arrived.
    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8]? {
        var body: [UInt8] = []
        var offset = 0
        while true {
            guard let lineEnd = bytes[offset...].firstIndex(of: 0x0D), lineEnd + 1 < bytes.count else { return nil }
            let sizeText = String(decoding: bytes[offset..<lineEnd], as: UTF8.self)
            guard let size = Int(sizeText.prefix { $0 != ";" }, radix: 16) else {
                throw Failure(description: "bad chunk size \"\(sizeText)\"")
            }
            offset = lineEnd + 2
            guard offset + size + 2 <= bytes.count else { return nil }
            if size == 0 { return body }
            body += bytes[offset..<offset + size]
            offset += size + 2
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The server's stderr, read to its end on a thread of its own (so that the server
    /// never blocks on a full pipe), with the port of its "listening on" line.
    final class ServerLog: Sendable {
        private struct Contents {
            var text = ""
            var pending: [UInt8] = []
            var port: Int?
        }

        private let contents = Mutex(Contents())
        private let ready = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                var signalled = false
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    let found = contents.withLock { contents in
                        if contents.text.utf8.count < 64 << 10 { contents.text += String(decoding: data, as: UTF8.self) }
                        contents.pending += data
                        while let newline = contents.pending.firstIndex(of: 0x0A) {
                            let line = String(decoding: contents.pending[..<newline], as: UTF8.self)
                            contents.pending.removeSubrange(...newline)
                            if contents.port == nil, let range = line.range(of: "listening on http://127.0.0.1:") {
                                contents.port = Int(line[range.upperBound...].prefix { $0.isNumber })
                            }
                        }
                        return contents.port != nil
                    }
                    if found && !signalled {
                        signalled = true
                        ready.signal()
                    }
                }
                if !signalled { ready.signal() }
            }
        }

        /// The port the server listens on; `nil` if its stderr ended first or `seconds` passed.
        func waitForPort(seconds: Int) -> Int? {
            guard ready.wait(timeout: .now() + .seconds(seconds)) == .success else { return nil }
            return contents.withLock { $0.port }
        }

        var text: String { contents.withLock { $0.text } }
    }
}
