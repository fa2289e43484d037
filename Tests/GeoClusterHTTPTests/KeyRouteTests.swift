import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
@testable import GeoClusterHTTP

/// Keys in memory, as a store keeps them (the SQLite and PostgreSQL stores are tested
/// with the store tests).
final class MemoryKeyStore: KeyStore {
    private let state = Mutex<(keys: [KeyGrant], changes: [String: Int64], last: Int64)>(([], [:], 0))

    func createKey(_ grant: KeyGrant) throws(EngineError) {
        state.withLock { state in
            state.last += 1
            state.keys.append(grant)
            state.changes[grant.id] = state.last
        }
    }

    func keys() throws(EngineError) -> [KeyGrant] { state.withLock { $0.keys } }

    func revokeKey(id: String) throws(EngineError) -> Bool {
        state.withLock { state in
            guard let i = state.keys.firstIndex(where: { $0.id == id }) else { return false }
            state.last += 1
            state.keys[i].revokedAt = "2026-11-26T00:00:00Z"
            state.changes[id] = state.last
            return true
        }
    }

    func keyChanges(after: Int64) throws(EngineError) -> (keys: [KeyGrant], last: Int64) {
        state.withLock { state in (state.keys.filter { state.changes[$0.id, default: 0] > after }, max(after, state.last)) }
    }

    /// Creates a key and returns the text a client sends.
    func create(owner: String, scopes: Set<KeyScope> = [.read, .write], layers: Set<String>? = nil) throws -> String {
        let token = APIKeyToken.generate()
        try createKey(KeyGrant(id: token.id, owner: owner, layers: layers, scopes: scopes, secretHash: token.secretHash))
        return token.text
    }
}

/// A sightings layer with one sighting of alice's.
enum OwnedSample {
    static func engine() throws -> Engine {
        let record = try LayerRecord(json: try JSONValue.parse(
            #"{"id":"a1","lon":127.0,"lat":37.5,"species":"Ardea alba","count":2,"observed_at":"2025-05-01T06:30:00+09:00","observer_id":"alice"}"#),
            kind: .sightings, layer: "sightings", index: 0)
        return try Engine(entries: [.live(LiveLayerStore(try LiveLayer(name: "sightings", kind: .sightings, records: [record])))])
    }

    static let sighting = #"{"id":"k1","lon":127.2,"lat":37.4,"species":"Ardea alba","count":1,"observed_at":"2025-06-01T07:00:00+09:00"}"#
    static let clusters = "/v1/layers/sightings/clusters?bbox=120,30,135,45&zoom=16"
}

struct KeyRouteTests {
    func withKeys(_ requirement: KeyRequirement, _ store: MemoryKeyStore,
                  _ test: @escaping @Sendable (any TestClientProtocol, KeyRing, GeoClusterAPI) async throws -> Void) async throws {
        let ring = try KeyRing(store: store)
        let api = GeoClusterAPI(engine: try OwnedSample.engine(), keyRequirement: requirement, keyRing: ring)
        try await Application(router: api.makeRouter()).test(.router) { client in try await test(client, ring, api) }
    }

    static func bearer(_ key: String) -> HTTPFields { [.authorization: "Bearer \(key)"] }

    static func ids(_ client: any TestClientProtocol) async throws -> Set<String> {
        let features = try await client.get(OwnedSample.clusters).json["features"]?.arrayValue ?? []
        return Set(features.compactMap { $0["id"]?.stringValue })
    }

    @Test func aWriteWithoutAValidKeyIs401AndChangesNothing() async throws {
        let store = MemoryKeyStore()
        let alice = try store.create(owner: "alice")
        try await withKeys(.writes, store) { client, _, api in
            for headers: HTTPFields in [[:], [.authorization: "Basic YWxpY2U6eA=="], Self.bearer("gck_nonsense"),
                                        Self.bearer(String(alice.dropLast()) + (alice.last == "0" ? "1" : "0"))] {
                let refused = try await client.send(.post, "/v1/layers/sightings/points", OwnedSample.sighting, headers: headers)
                #expect(refused.status == .unauthorized)
                #expect(refused.headers[.wwwAuthenticate] == #"Bearer realm="geo-cluster""#)
                #expect(try refused.json["error"]?["code"] == "unauthorized")
                #expect(!refused.text.contains(alice), "a key is never echoed")
            }
            let delete = try await client.send(.delete, "/v1/layers/sightings/points/a1")
            #expect(delete.status == .unauthorized)
            #expect(try await Self.ids(client) == ["a1"])
            // Queries stay open with --keys writes.
            #expect(try await client.get(OwnedSample.clusters).status == .ok)

            let written = try await client.send(.post, "/v1/layers/sightings/points", OwnedSample.sighting,
                                                headers: Self.bearer(alice))
            #expect(written.status == .created)
            let record = try await client.get("/v1/layers/sightings/points/k1").json
            #expect(record["properties"]?["observer_id"] == "alice")
            #expect(api.metrics.exposition(engine: api.engine).contains(#"geocluster_http_key_rejections_total{reason="unauthorized"} 5"#))
        }
    }

    /// A note written with a key is read back by id with that key only.
    @Test func aNoteIsReadBackOnlyWithTheOwnersKey() async throws {
        let store = MemoryKeyStore()
        let alice = try store.create(owner: "alice"), bob = try store.create(owner: "bob")
        try await withKeys(.writes, store) { client, _, _ in
            let body = OwnedSample.sighting.replacingOccurrences(#""count":"#, #""properties":{"note":"by the old mill"},"count":"#)
            #expect(body.contains("old mill"))
            let written = try await client.send(.post, "/v1/layers/sightings/points", body, headers: Self.bearer(alice))
            #expect(written.status == .created)
            let own = try await client.send(.get, "/v1/layers/sightings/points/k1", headers: Self.bearer(alice))
            #expect(try own.json["properties"]?["note"] == "by the old mill")
            #expect(own.headers[.cacheControl]?.contains("no-store") == true)
            for headers: HTTPFields in [[:], Self.bearer(bob)] {
                let other = try await client.send(.get, "/v1/layers/sightings/points/k1", headers: headers)
                #expect(other.status == .ok && !other.text.contains("old mill"))
            }
            #expect(!(try await client.get(OwnedSample.clusters).text.contains("old mill")))
        }
    }

    @Test func anotherUsersDeleteIs403AndChangesNothing() async throws {
        let store = MemoryKeyStore()
        let bob = try store.create(owner: "bob")
        let reader = try store.create(owner: "carol", scopes: [.read])
        let admin = try store.create(owner: "ops", scopes: [.admin])
        try await withKeys(.writes, store) { client, _, api in
            let bobs = try await client.send(.delete, "/v1/layers/sightings/points/a1", headers: Self.bearer(bob))
            #expect(bobs.status == .forbidden)
            #expect(try bobs.json["error"]?["code"] == "not_owner")
            let moved = try await client.send(.put, "/v1/layers/sightings/points/a1", OwnedSample.sighting.replacingOccurrences("\"k1\"", "\"a1\""),
                                              headers: Self.bearer(bob))
            #expect(moved.status == .forbidden)
            let readers = try await client.send(.delete, "/v1/layers/sightings/points/a1", headers: Self.bearer(reader))
            #expect(readers.status == .forbidden)
            #expect(try readers.json["error"]?["code"] == "forbidden")
            // The same through POST /v1/query: the line is refused, the batch answers 200.
            let batch = try await client.send(.post, "/v1/query", #"{"id":1,"op":"delete","layer":"sightings","ids":["a1"]}"#,
                                              headers: Self.bearer(bob))
            #expect(batch.status == .ok)
            #expect(try batch.json["error"]?["code"] == "not_owner")
            let anonymous = try await client.send(.post, "/v1/query", #"{"id":1,"op":"delete","layer":"sightings","ids":["a1"]}"#)
            #expect(try anonymous.json["error"]?["code"] == "unauthorized")
            #expect(try await Self.ids(client) == ["a1"])
            // Refused lines count as refused requests do: two routes and a line not_owner,
            // one route forbidden, one line unauthorized.
            let metrics = api.metrics.exposition(engine: api.engine)
            for (reason, count) in [("not_owner", 3), ("forbidden", 1), ("unauthorized", 1)] {
                #expect(metrics.contains("geocluster_http_key_rejections_total{reason=\"\(reason)\"} \(count)\n"), "\(reason)")
            }

            let admins = try await client.send(.delete, "/v1/layers/sightings/points/a1", headers: Self.bearer(admin))
            #expect(admins.status == .ok)
            #expect(try await Self.ids(client).isEmpty)
        }
    }

    @Test func aRevokedKeyStopsWorkingOnceTheRingRefreshes() async throws {
        let store = MemoryKeyStore()
        let alice = try store.create(owner: "alice")
        try await withKeys(.writes, store) { client, ring, _ in
            let id = try #require(APIKeyToken(parsing: alice)).id
            #expect(try store.revokeKey(id: id))
            try ring.refresh()
            let refused = try await client.send(.post, "/v1/layers/sightings/points", OwnedSample.sighting,
                                                headers: Self.bearer(alice))
            #expect(refused.status == .unauthorized)
            #expect(try refused.json["error"]?["message"]?.stringValue?.contains("revoked") == true)
            #expect(try await Self.ids(client) == ["a1"])
            // A key created after start works once the ring has refreshed.
            let later = try store.create(owner: "alice")
            try ring.refresh()
            #expect(try await client.send(.post, "/v1/layers/sightings/points", OwnedSample.sighting,
                                          headers: Self.bearer(later)).status == .created)
        }
    }

    @Test func withKeysForEverythingQueriesNeedAKeyForTheirLayer() async throws {
        let store = MemoryKeyStore()
        let reader = try store.create(owner: "carol", scopes: [.read])
        let elsewhere = try store.create(owner: "dave", scopes: [.read], layers: ["places"])
        try await withKeys(.all, store) { client, _, _ in
            let statuses: [(HTTPResponse.Status, HTTPResponse.Status)] = [
                (try await client.get(OwnedSample.clusters).status, .unauthorized),
                (try await client.get("/v1/layers/sightings/tiles/0/0/0.mvt").status, .unauthorized),
                (try await client.send(.post, "/v1/query", #"{"op":"layers"}"#).status, .unauthorized),
                (try await client.get(OwnedSample.clusters, Self.bearer(reader)).status, .ok),
                (try await client.get("/v1/layers/sightings/points/a1", Self.bearer(reader)).status, .ok),
                (try await client.get(OwnedSample.clusters, Self.bearer(elsewhere)).status, .forbidden),
                // Health, readiness and metrics stay open for probes.
                (try await client.get("/healthz").status, .ok),
                (try await client.get("/readyz").status, .ok),
            ]
            for (n, (actual, expected)) in statuses.enumerated() {
                #expect(actual == expected, "request \(n)")
            }
        }
    }

    /// No shared cache may keep an answer given to a key: it is private and varies by
    /// `Authorization`; a record read with a key is not stored at all.
    @Test func answersToAKeyArePrivate() async throws {
        let store = MemoryKeyStore()
        let alice = try store.create(owner: "alice")
        try await withKeys(.writes, store) { client, _, _ in
            let open = try await client.get(OwnedSample.clusters)
            #expect(open.headers[.cacheControl] == "public, max-age=60")
            let keyed = try await client.get(OwnedSample.clusters, Self.bearer(alice))
            #expect(keyed.headers[.cacheControl] == "private, max-age=60")
            #expect(keyed.headers[.vary]?.contains("Authorization") == true)
            let record = try await client.get("/v1/layers/sightings/points/a1", Self.bearer(alice))
            #expect(record.headers[.cacheControl] == "private, no-store")
            let preflight = try await client.execute(uri: "/v1/layers/sightings/points", method: .options, headers: [
                .origin: "https://birds.example", .accessControlRequestMethod: "POST",
                .accessControlRequestHeaders: "authorization, content-type",
            ])
            #expect(preflight.headers[.accessControlAllowHeaders]?.contains("Authorization") == true)
        }
        try await withKeys(.all, store) { client, _, _ in
            let keyed = try await client.get(OwnedSample.clusters, Self.bearer(alice))
            #expect(keyed.headers[.cacheControl] == "private, max-age=60")
        }
    }

    @Test func keysHaveTheirFormAndAreHashed() throws {
        let token = APIKeyToken.generate()
        #expect(APIKeyToken(parsing: token.text) == token)
        #expect(token.secretHash.count == 64 && token.secretHash != token.secret)
        #expect(APIKeyToken.generate() != token)
        for bad in ["", "gck_", "gck_abc_def", token.text.uppercased(), token.text + "0", "xyz" + token.text.dropFirst(3)] {
            #expect(APIKeyToken(parsing: bad) == nil, "\(bad)")
        }
        #expect(KeyRing.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!KeyRing.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        #expect(!KeyRing.constantTimeEqual(Array("abc".utf8), Array("ab".utf8)))
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
