import Foundation
import Testing
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import GeoClusterStore
import GeoClusterTestSupport

/// Several `geo-cluster serve` replicas on one PostgreSQL database, as docs/DEPLOY.md
/// describes: writes through one are seen by the others, a restarted replica misses
/// nothing, and a replica killed mid-stream loses no acknowledged write.
@Suite(.serialized)
struct ReplicaTests {
    /// A running `geo-cluster serve` replica. Its state is set once at start; a thread
    /// that sends a request only reads the port.
    final class Replica: @unchecked Sendable {
        let process: Process
        let port: Int

        init(store: String, seed: URL, arguments: [String] = []) throws {
            port = try freePort()
            process = try GeoClusterExecutable.start(["serve", "--store", store, "--layer-file", "sightings:birds=\(seed.path)",
                                                      "--port", "\(port)", "--log-level", "error"] + arguments)
        }

        /// Waits until `/readyz` answers 200.
        func waitUntilReady(seconds: Double = 30) throws {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if try http("GET", "/readyz").status == 200 { return }
                guard process.isRunning else { throw ClusterError("the replica exited with \(process.terminationStatus)") }
                Thread.sleep(forTimeInterval: 0.05)
            }
            throw ClusterError("the replica on port \(port) did not become ready")
        }

        /// Points in `birds`, from `GET /v1/layers/birds`.
        func count() throws -> Int? {
            let (status, body) = try http("GET", "/v1/layers/birds")
            guard status == 200 else { return nil }
            return try JSONValue.parse(Array(body.utf8))["count"]?.intValue
        }

        /// The layer's version, as `GET /v1/layers/birds` reports it.
        func version() throws -> Int? {
            let (status, body) = try http("GET", "/v1/layers/birds")
            guard status == 200 else { return nil }
            return try JSONValue.parse(Array(body.utf8))["version"]?.intValue
        }

        /// Sends one JSON line to `POST /v1/query` and returns its answer line.
        func query(_ line: JSONValue) throws -> JSONValue? {
            let (status, body) = try http("POST", "/v1/query", body: line.jsonString + "\n")
            guard status == 200, let first = body.split(separator: "\n").first else { return nil }
            return try JSONValue.parse(Array(first.utf8))
        }

        func http(_ method: String, _ path: String, body: String? = nil,
                  headers: [String] = []) throws -> (status: Int, body: String) {
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-s", "-m", "10", "-X", method, "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)"]
                + (body == nil ? [] : ["--data-binary", "@-"]) + headers.flatMap { ["-H", $0] }
            let input = Pipe(), output = Pipe()
            curl.standardInput = input
            curl.standardOutput = output
            curl.standardError = FileHandle.nullDevice
            try curl.run()
            if let body { try? input.fileHandleForWriting.write(contentsOf: Data(body.utf8)) }
            try? input.fileHandleForWriting.close()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            guard let newline = text.lastIndex(of: "\n") else { return (0, "") }
            return (Int(text[text.index(after: newline)...]) ?? 0, String(text[..<newline]))
        }

        func stop(signal: Int32 = SIGTERM) {
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
        }
    }

    /// Polls `replica` until `condition` holds on its count, for at most `seconds`.
    static func eventually(_ replica: Replica, within seconds: Double, _ condition: (Int) -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if let count = try replica.count(), condition(count) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return false
    }

    /// Why replicas cannot be tested here (no PostgreSQL binaries, no curl), or `nil`.
    static var unavailableReason: String? {
        if let reason = PostgresCluster.unavailableReason { return reason }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else { return "curl not found" }
        return nil
    }

    /// The trait of tests that need replicas: skipped, with the reason, when they cannot run.
    static var needsReplicas: ConditionTrait {
        .enabled(if: unavailableReason == nil, Comment(rawValue: unavailableReason ?? ""))
    }

    /// A throwaway PostgreSQL cluster for replicas that curl talks to.
    static func clusterForReplicas() throws -> PostgresCluster {
        signal(SIGPIPE, SIG_IGN)
        return try PostgresCluster()
    }

    @Test(needsReplicas) func replicasOnOneDatabaseShareEveryAcknowledgedWrite() throws {
        let cluster = try Self.clusterForReplicas()
        defer { cluster.stop() }
        try cluster.createDatabase("replicas")
        let store = cluster.url("replicas")
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory, count: 2)

        let a = try Replica(store: store, seed: seed)
        defer { a.stop(signal: SIGKILL) }
        try a.waitUntilReady()
        var b = try Replica(store: store, seed: seed)
        defer { b.stop() }
        try b.waitUntilReady()
        #expect(try b.count() == 2)

        // A write through A is visible on B within 2 seconds.
        let answer = try #require(try a.query(StoreFixtures.insert(batch: 0, size: 10, id: 0)))
        #expect(answer["ok"] == true, "\(answer.jsonString)")
        #expect(try a.count() == 12)
        #expect(try Self.eventually(b, within: 2) { $0 == 12 })
        // And a write through B on A, validated against A's write (a duplicate id is refused).
        #expect(try b.query(StoreFixtures.insert(batch: 0, size: 1))?["error"]?["code"] == "duplicate_id")
        #expect(try b.query(["op": "delete", "layer": "birds", "ids": ["b0-0"]])?["ok"] == true)
        #expect(try Self.eventually(a, within: 2) { $0 == 11 })

        // B stopped while A takes writes, then restarted, misses nothing.
        b.stop()
        for batch in 1...3 {
            #expect(try a.query(StoreFixtures.insert(batch: batch, size: 10))?["ok"] == true)
        }
        b = try Replica(store: store, seed: seed)
        try b.waitUntilReady()
        #expect(try b.count() == 41)
        // Both replicas name that state with one version, the store's sequence.
        let (versionA, versionB) = (try a.version(), try b.version())
        #expect(versionB != nil && versionA == versionB)

        // A killed with SIGKILL while batches stream in loses no acknowledged write, and
        // leaves no batch half written.
        let size = 20
        var acknowledged: [Int] = []
        let first = 100
        for batch in first..<(first + 1_000) {
            if acknowledged.count == 15 {
                // Kill while the next batch is in flight.
                let inFlight = Thread { [a] in _ = try? a.query(StoreFixtures.insert(batch: batch, size: size)) }
                inFlight.start()
                Thread.sleep(forTimeInterval: 0.002)
                a.stop(signal: SIGKILL)
                break
            }
            if try a.query(StoreFixtures.insert(batch: batch, size: size))?["ok"] == true { acknowledged.append(batch) }
        }
        let journal = try PostgresJournal(url: store)
        let stored = try #require(try journal.loadLayer("birds"))
        var perBatch: [Int: Int] = [:]
        for record in stored.records {
            guard let key = record.idKey, key.hasPrefix("b"), let dash = key.firstIndex(of: "-"),
                  let batch = Int(key[key.index(after: key.startIndex)..<dash]), batch >= first else { continue }
            perBatch[batch, default: 0] += 1
        }
        for batch in acknowledged { #expect(perBatch[batch] == size, "acknowledged batch \(batch) lost records") }
        for (batch, count) in perBatch { #expect(count == size, "batch \(batch) is half there: \(count) of \(size)") }
        #expect(try Self.eventually(b, within: 2) { $0 == stored.records.count })
        journal.disconnect()

        // While the database is down, B keeps answering queries, is not ready, and refuses
        // writes with storage_unavailable; once it is back, B catches up and is ready again.
        try cluster.stopServer()
        #expect(try Self.waitFor(b, ready: false))
        #expect(try b.count() == stored.records.count)
        #expect(try b.query(StoreFixtures.insert(batch: 5_000, size: 1))?["error"]?["code"] == "storage_unavailable")
        try cluster.startServer()
        #expect(try Self.waitFor(b, ready: true))
        #expect(try b.query(StoreFixtures.insert(batch: 5_000, size: 1))?["ok"] == true)
        #expect(try b.count() == stored.records.count + 1)
    }

    /// A layer read from PostgreSQL in batches, as they arrive, is the layer read whole,
    /// and builds the same live layer; a layer never stored gives `nil` without callbacks.
    @Test(needsReplicas) func aPostgresLayerReadInBatchesIsTheLayerReadWhole() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try cluster.createDatabase("batches")
        let journal = try PostgresJournal(url: cluster.url("batches"))
        defer { journal.disconnect() }
        let count = 20_000
        let stored = try StoreFixtures.storedSightings(count)
        let (batches, whole) = try StoreFixtures.checkReadInBatches(journal, stored: stored)
        #expect(batches.count == 3 && batches.dropLast().allSatisfy { $0.count == 8_192 })
        #expect(Set(whole.records.map(\.idKey)) == Set(stored.map(\.idKey)))
        let spec = LayerCatalog.LayerSpec(name: "birds", kind: .sightings, path: "/nonexistent.geojson")
        let engine = try Engine(entries: [try LayerCatalog.load(spec, journal: journal)])
        #expect(try engine.liveLayer(named: "birds").count == count)
    }

    /// Rows without checked fields (written before they were kept) and rows whose text
    /// was changed without them load from their text; the others carry fields that match.
    @Test(needsReplicas) func postgresRowsWithoutMatchingCheckedFieldsLoadFromTheirText() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try cluster.createDatabase("checked")
        let journal = try PostgresJournal(url: cluster.url("checked"))
        defer { journal.disconnect() }
        _ = try journal.seedLayer("birds", kind: .sightings, records: try StoreFixtures.storedSightings(50))
        #expect(try cluster.psql("checked", "SELECT count(*) FROM points WHERE fields IS NOT NULL")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "50")
        try cluster.psql("checked", "UPDATE points SET fields = NULL WHERE id_key = 's1'")
        try cluster.psql("checked", "UPDATE points SET feature = replace(feature, 'Ardea alba', 'Ardea cinerea') WHERE id_key = 's2'")
        let stored = try #require(try journal.loadLayer("birds"))
        // s2's fields were cleared by the store as its text changed without them.
        #expect(Set(stored.records.filter { $0.checkedFields == nil }.map(\.idKey)) == ["s1", "s2"])
        let layer = try LiveLayer(name: "birds", kind: .sightings, stored: stored.records)
        func species(_ id: String) -> String? {
            guard case let .sighting(species, _, _)? = layer.record(idKey: id)?.fields else { return nil }
            return species.text
        }
        #expect(layer.count == 50)
        #expect(species("s1") == "Ardea alba" && species("s2") == "Ardea cinerea" && species("s3") == "Ardea alba")
    }

    /// Polls `/readyz` until it is 200 (`ready`) or 503, for at most 20 seconds (the feed
    /// notices an outage at its next round, within its one-second poll interval).
    static func waitFor(_ replica: Replica, ready: Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(20)
        repeat {
            if try replica.http("GET", "/readyz").status == (ready ? 200 : 503) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return false
    }
}
