import Foundation
import Testing
import GeoClusterEngine
import GeoClusterStore
import GeoClusterTestSupport

/// API keys in the stores: kept hashed, listed and revoked with `geo-cluster keys`, and
/// followed by every server on the store through their change numbers.
@Suite(.serialized)
struct KeyStoreTests {
    static func grant(_ id: String, owner: String, scopes: Set<KeyScope> = [.read, .write],
                      layers: Set<String>? = nil) -> KeyGrant {
        KeyGrant(id: id, owner: owner, layers: layers, scopes: scopes, secretHash: String(repeating: "ab", count: 32))
    }

    /// What one store must do, whichever it is.
    static func checkKeyStore(_ open: () throws -> any KeyStore) throws {
        let store = try open()
        #expect(try store.keyChanges(after: 0).keys.isEmpty)
        try store.createKey(grant("0000000000000001", owner: "alice"))
        try store.createKey(grant("0000000000000002", owner: "ops", scopes: [.admin], layers: ["birds", "places"]))
        #expect(throws: EngineError.self) { try store.createKey(grant("0000000000000001", owner: "mallory")) }

        let (all, last) = try store.keyChanges(after: 0)
        #expect(all.map(\.id) == ["0000000000000001", "0000000000000002"])
        #expect(all[1].layers == ["birds", "places"] && all[1].scopes == [.admin] && all[1].owner == "ops")
        #expect(all.allSatisfy { $0.revokedAt == nil && !$0.createdAt.isEmpty })
        #expect(try store.keyChanges(after: last) == ([], last))

        #expect(try store.revokeKey(id: "0000000000000001"))
        #expect(try !store.revokeKey(id: "ffffffffffffffff"))
        let (changed, next) = try store.keyChanges(after: last)
        #expect(changed.map(\.id) == ["0000000000000001"])
        #expect(changed.first?.revokedAt != nil)
        #expect(next > last)
        // Kept across a reopen, revocation included.
        let reopened = try open()
        #expect(try reopened.keys().map { $0.revokedAt != nil } == [true, false])
    }

    @Test func sqliteKeepsKeys() throws {
        let directory = try StoreFixtures.directory()
        let path = directory.appendingPathComponent("keys.sqlite").path
        try Self.checkKeyStore { try SQLiteJournal(path: path) }
    }

    @Test(ReplicaTests.needsReplicas) func postgresKeepsKeysAndARevokedKeyFailsOnEveryReplica() throws {
        let cluster = try ReplicaTests.clusterForReplicas()
        defer { cluster.stop() }
        try cluster.createDatabase("keys")
        try Self.checkKeyStore { try PostgresJournal(url: cluster.url("keys")) }

        try cluster.createDatabase("replicated_keys")
        let store = cluster.url("replicated_keys")
        let seed = try StoreFixtures.seedFile(in: try StoreFixtures.directory(), count: 2)
        let a = try ReplicaTests.Replica(store: store, seed: seed, arguments: ["--keys", "writes"])
        defer { a.stop() }
        try a.waitUntilReady()
        let b = try ReplicaTests.Replica(store: store, seed: seed, arguments: ["--keys", "writes"])
        defer { b.stop() }
        try b.waitUntilReady()

        // A key made with the CLI while both replicas run.
        let created = try GeoClusterExecutable.run(["keys", "create", "--store", store, "--owner", "alice"])
        #expect(created.status == 0, "\(created.stderr)")
        let key = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("gck_"))
        let listed = try GeoClusterExecutable.run(["keys", "list", "--store", store])
        #expect(listed.stdout.contains("alice") && !listed.stdout.contains(key.split(separator: "_").last ?? "-"),
                "listings never show a secret")

        func insert(_ replica: ReplicaTests.Replica, _ id: String) throws -> Int {
            let body = #"{"id":"\#(id)","lon":127,"lat":37.5,"species":"Ardea alba","count":1,"observed_at":"2025-06-01T07:00:00+09:00"}"#
            return try replica.http("POST", "/v1/layers/birds/points", body: body, headers: ["Authorization: Bearer \(key)"]).status
        }
        /// Polls until `replica` answers `status` to an insert, for at most 60 seconds.
        func eventually(_ replica: ReplicaTests.Replica, _ status: Int, id: String) throws -> Bool {
            let deadline = Date().addingTimeInterval(60)
            repeat {
                if try insert(replica, id) == status { return true }
                Thread.sleep(forTimeInterval: 0.05)
            } while Date() < deadline
            return false
        }
        #expect(try a.http("POST", "/v1/layers/birds/points", body: "{}").status == 401)
        #expect(try eventually(a, 201, id: "k-a"))
        #expect(try eventually(b, 201, id: "k-b"))

        let id = String(key.split(separator: "_")[1])
        let revoked = try GeoClusterExecutable.run(["keys", "revoke", "--store", store, id])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(try eventually(b, 401, id: "k-b2"))
        #expect(try eventually(a, 401, id: "k-a2"))
        // Until a replica's ring refreshes, the key may still write there (that is the
        // documented delay); from then on, nothing it sends is written anywhere.
        // Each replica has the other's writes within the feed's delay.
        var settled: Int?
        let deadline = Date().addingTimeInterval(60)
        while settled == nil && Date() < deadline {
            if let countA = try a.count(), countA == (try b.count()), countA >= 4 { settled = countA }
            else { Thread.sleep(forTimeInterval: 0.05) }
        }
        let count = try #require(settled, "the replicas did not agree")
        #expect(try insert(a, "k-late") == 401 && insert(b, "k-late") == 401)
        #expect(try a.count() == count && b.count() == count)
    }
}
