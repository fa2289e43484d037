import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

/// The rules of API keys and owners, as the engine applies them to every transport that
/// authenticates (HTTP): scopes and layers of a key, the owner stamped on a sighting, and
/// records that only their owner or an admin may change. A refused request changes nothing.
struct KeysAndOwnersTests {
    static func key(_ owner: String, _ scopes: Set<KeyScope> = [.read, .write], layers: Set<String>? = nil) -> Caller {
        .key(KeyGrant(id: "id-\(owner)", owner: owner, layers: layers, scopes: scopes, secretHash: ""))
    }

    static let alice = key("alice"), bob = key("bob"), admin = key("ops", [.admin])

    /// A sightings layer with one sighting of alice's, one without an owner, one of a
    /// sensitive species by alice, and a places layer.
    static func engine() throws -> Engine {
        let sightings = try [
            #"{"id":"a1","lon":127.0,"lat":37.5,"species":"Ardea alba","count":2,"observed_at":"2025-05-01T06:30:00+09:00","observer_id":"alice"}"#,
            #"{"id":"n1","lon":127.1,"lat":37.6,"species":"Ardea alba","count":1,"observed_at":"2025-05-02T06:30:00+09:00"}"#,
            #"{"id":"s1","lon":126.6543,"lat":37.4321,"species":"Calidris pygmaea","count":1,"observed_at":"2025-05-03T06:30:00+09:00","observer_id":"alice"}"#,
        ].enumerated().map { i, text in
            try LayerRecord(json: try JSONValue.parse(text), kind: .sightings, layer: "sightings", index: i)
        }
        let places = try LayerRecord(json: try JSONValue.parse(#"{"id":"p1","lon":127,"lat":37.5,"name":"P","category":"cafe"}"#),
                                     kind: .places, layer: "places", index: 0)
        return try Engine(entries: [
            .live(LiveLayerStore(try LiveLayer(name: "sightings", kind: .sightings, records: sightings,
                                               sensitiveSpecies: ["Calidris pygmaea"]))),
            .live(LiveLayerStore(try LiveLayer(name: "places", kind: .places, records: [places]))),
        ])
    }

    static func request(_ text: String) throws -> Request { try Request(json: try JSONValue.parse(text)) }

    static func sighting(_ id: String, observer: String? = nil) -> String {
        #"{"id":"\#(id)","lon":127.2,"lat":37.4,"species":"Ardea alba","count":1,"observed_at":"2025-06-01T07:00:00+09:00""#
            + (observer.map { #","observer_id":"\#($0)""# } ?? "") + "}"
    }

    static func failure(_ engine: Engine, _ text: String, by caller: Caller) async throws -> EngineError? {
        let parsed = try request(text)
        do throws(EngineError) {
            _ = try await engine.perform(parsed, by: caller)
            return nil
        } catch {
            return error
        }
    }

    /// The layer's version and the ids it holds: what must not change after a refusal.
    static func state(_ engine: Engine) throws -> (Int, Set<String>) {
        let layer = try #require(engine.entries.first { $0.name == "sightings" }?.store).layer
        let ids = ["a1", "n1", "s1", "k1", "k2"].filter { layer.record(idKey: $0) != nil }
        return (layer.version, Set(ids))
    }

    @Test func writesWithoutAKeyOrTheRightScopeOrLayerAreRefusedAndChangeNothing() async throws {
        let engine = try Self.engine()
        let before = try Self.state(engine)
        let insert = #"{"op":"insert","layer":"sightings","records":[\#(Self.sighting("k1"))]}"#
        #expect(try await Self.failure(engine, insert, by: .anonymous)?.code == "unauthorized")
        #expect(try await Self.failure(engine, insert, by: Self.key("reader", [.read]))?.code == "forbidden")
        #expect(try await Self.failure(engine, insert, by: Self.key("elsewhere", [.write], layers: ["places"]))?.code == "forbidden")
        #expect(try await Self.failure(engine, #"{"op":"delete","layer":"sightings","ids":["a1"]}"#, by: .anonymous)?.code
                == "unauthorized")
        #expect(try Self.state(engine) == before)
        // Queries: open to anonymous callers, refused to a key without the layer.
        let clusters = #"{"op":"clusters","layer":"sightings","bbox":[120,30,135,45],"zoom":3}"#
        #expect(try await Self.failure(engine, clusters, by: .anonymous) == nil)
        #expect(try await Self.failure(engine, clusters, by: Self.key("elsewhere", [.read], layers: ["places"]))?.code == "forbidden")
        #expect(try await Self.failure(engine, clusters, by: Self.alice) == nil)
    }

    @Test func aSightingWrittenWithAKeyBelongsToItsOwner() async throws {
        let engine = try Self.engine()
        let answer = try await engine.perform(try Self.request(
            #"{"op":"insert","layer":"sightings","records":[\#(Self.sighting("k1")),\#(Self.sighting("k2", observer: "bob"))]}"#),
            by: Self.bob)
        #expect(answer["applied"] == 2)
        let got = try engine.execute(try Self.request(#"{"op":"get","layer":"sightings","ids":["k1","k2"]}"#))
        #expect(got["features"]?[0]?["properties"]?["observer_id"] == "bob")
        #expect(got["features"]?[1]?["properties"]?["observer_id"] == "bob")

        // Naming another observer fails the whole batch: the first record is not applied either.
        let before = try Self.state(engine)
        let error = try await Self.failure(
            engine, #"{"op":"upsert","layer":"sightings","records":[\#(Self.sighting("k3")),\#(Self.sighting("k4", observer: "alice"))]}"#,
            by: Self.bob)
        #expect(error?.code == "not_owner")
        #expect(error?.field == "records[1].observer_id")
        #expect(try Self.state(engine) == before)
        #expect(try await Self.failure(engine, #"{"op":"get","layer":"sightings","ids":["k3"]}"#, by: .trusted)?.code == "unknown_id")
    }

    @Test func onlyTheOwnerOrAnAdminChangesOrDeletesARecord() async throws {
        let engine = try Self.engine()
        let before = try Self.state(engine)
        let delete = #"{"op":"delete","layer":"sightings","ids":["a1"]}"#
        let move = #"{"op":"upsert","layer":"sightings","records":[\#(Self.sighting("a1"))]}"#
        let bobsDelete = try await Self.failure(engine, delete, by: Self.bob)
        #expect(bobsDelete?.code == "not_owner")
        #expect(bobsDelete?.field == "ids[0]")
        #expect(bobsDelete?.category == .forbidden)
        #expect(try await Self.failure(engine, move, by: Self.bob)?.code == "not_owner")
        // A record without an owner is an admin's to change.
        #expect(try await Self.failure(engine, #"{"op":"delete","layer":"sightings","ids":["n1"]}"#, by: Self.alice)?.code
                == "not_owner")
        #expect(try Self.state(engine) == before)

        #expect(try await Self.failure(engine, move, by: Self.alice) == nil)
        #expect(try await Self.failure(engine, delete, by: Self.alice) == nil)
        #expect(try await Self.failure(engine, #"{"op":"delete","layer":"sightings","ids":["n1","s1"]}"#, by: Self.admin) == nil)
        #expect(try Self.state(engine).1.isEmpty)
    }

    @Test func anAdminsCorrectionKeepsTheSightingsOwner() async throws {
        let engine = try Self.engine()
        // Moved and recounted by an admin, with no observer_id in the body: still alice's.
        let fix = #"{"op":"upsert","layer":"sightings","records":[\#(Self.sighting("a1"))]}"#
        #expect(try await Self.failure(engine, fix, by: Self.admin) == nil)
        let got = try engine.execute(try Self.request(#"{"op":"get","layer":"sightings","ids":["a1"]}"#))
        #expect(got["features"]?[0]?["properties"]?["observer_id"] == "alice")
        #expect(got["features"]?[0]?["geometry"]?["coordinates"] == [127.2, 37.4])
        #expect(try await Self.failure(engine, #"{"op":"delete","layer":"sightings","ids":["a1"]}"#, by: Self.bob)?.code == "not_owner")
        // Naming an observer gives it to them; a sighting with no owner stays an admin's.
        let give = #"{"op":"upsert","layer":"sightings","records":[\#(Self.sighting("a1", observer: "bob")),\#(Self.sighting("n1"))]}"#
        #expect(try await Self.failure(engine, give, by: Self.admin) == nil)
        let given = try engine.execute(try Self.request(#"{"op":"get","layer":"sightings","ids":["a1","n1"]}"#))
        #expect(given["features"]?[0]?["properties"]?["observer_id"] == "bob")
        #expect(given["features"]?[1]?["properties"]?["observer_id"] == nil)
        #expect(try await Self.failure(engine, #"{"op":"delete","layer":"sightings","ids":["a1"]}"#, by: Self.bob) == nil)
    }

    @Test func anAdminsCorrectionKeepsTheObserversNoteAndTheObserversOwnUpsertDoesNot() async throws {
        let engine = try Self.engine()
        let noted = #"{"op":"insert","layer":"sightings","records":[{"id":"k1","lon":127.2,"lat":37.4,"species":"Ardea alba","count":1,"observed_at":"2025-06-01T07:00:00+09:00","properties":{"note":"by the sluice"}}]}"#
        #expect(try await Self.failure(engine, noted, by: Self.alice) == nil)
        let get = try Self.request(#"{"op":"get","layer":"sightings","ids":["k1"]}"#)
        func note() throws -> JSONValue? { try engine.execute(get, by: Self.admin)["features"]?[0]?["properties"]?["note"] }
        // An admin recounts it without the note: the note stays alice's.
        #expect(try await Self.failure(engine, #"{"op":"upsert","layer":"sightings","records":[\#(Self.sighting("k1"))]}"#,
                                       by: Self.admin) == nil)
        #expect(try note() == "by the sluice")
        #expect(try engine.execute(get, by: Self.admin)["features"]?[0]?["properties"]?["observer_id"] == "alice")
        // Alice's own upsert replaces the whole record, note and all.
        #expect(try await Self.failure(engine, #"{"op":"upsert","layer":"sightings","records":[\#(Self.sighting("k1"))]}"#,
                                       by: Self.alice) == nil)
        #expect(try note() == nil)
    }

    @Test func aDeleteThatNamesAnIdTwiceSaysSo() async throws {
        let engine = try Self.engine()
        let before = try Self.state(engine)
        let error = try await Self.failure(engine, #"{"op":"delete","layer":"sightings","ids":["a1","n1","a1"]}"#, by: .trusted)
        #expect(error?.code == "invalid_field")
        #expect(error?.field == "ids[2]")
        #expect(error?.description.contains("repeats ids[0]") == true)
        #expect(try Self.state(engine) == before)
    }

    @Test func aSightingSeenAfterTomorrowIsRefused() async throws {
        let engine = try Self.engine()
        let before = try Self.state(engine)
        let future = #"{"op":"insert","layer":"sightings","records":[{"id":"k1","lon":127.2,"lat":37.4,"species":"Ardea alba","count":1,"observed_at":"9999-12-31T23:59:59-23:59"}]}"#
        let error = try await Self.failure(engine, future, by: .trusted)
        #expect(error?.code == "invalid_record")
        #expect(error?.field == "observed_at")
        #expect(try Self.state(engine) == before)
        // Later today in the farthest time zone east is not the future.
        let soon = Engine.currentEpochSecondsRoundedUp() + 13 * 3_600
        let text = try #require(Timestamp(epochSeconds: soon, offsetMinutes: 0, marker: UInt8(ascii: "Z"))).text
        func insert(_ id: String, seenAt time: String) -> String {
            #"{"op":"insert","layer":"sightings","records":[{"id":"\#(id)","lon":127.2,"lat":37.4,"species":"Ardea alba","count":1,"observed_at":"\#(time)"}]}"#
        }
        #expect(try await Self.failure(engine, insert("k1", seenAt: text), by: .trusted) == nil)
        let later = Engine.currentEpochSecondsRoundedUp() + Engine.sightingClockToleranceSeconds + 120
        let laterText = try #require(Timestamp(epochSeconds: later, offsetMinutes: 0, marker: UInt8(ascii: "Z"))).text
        #expect(try await Self.failure(engine, insert("k2", seenAt: laterText), by: .trusted)?.field == "observed_at")
    }

    @Test func keysOfOtherLayersAreNotOwners() async throws {
        // Places have no owner: any key with write scope on the layer changes them.
        let engine = try Self.engine()
        #expect(try await Self.failure(engine, #"{"op":"delete","layer":"places","ids":["p1"]}"#, by: Self.bob) == nil)
    }

    @Test func theObserverFilterListsOneUsersSightings() throws {
        let engine = try Self.engine()
        let mine = try engine.execute(try Self.request(
            #"{"op":"list","layer":"sightings","bbox":[120,30,135,45],"observer":"alice","limit":100}"#))
        #expect(Set((mine["features"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }) == ["a1", "s1"])
        #expect(mine["total"] == 2)
        let clusters = try engine.execute(try Self.request(
            #"{"op":"clusters","layer":"sightings","bbox":[120,30,135,45],"zoom":0,"observer":"nobody"}"#))
        #expect(clusters["features"]?.arrayValue?.isEmpty == true)
        #expect(throws: EngineError.self) {
            try engine.execute(try Self.request(#"{"op":"list","layer":"places","bbox":[120,30,135,45],"observer":"alice"}"#))
        }
    }

    @Test func aSensitiveSightingIsExactOnlyForItsOwnerAndAdmins() throws {
        let engine = try Self.engine()
        let get = try Self.request(#"{"op":"get","layer":"sightings","ids":["s1"]}"#)
        func position(_ caller: Caller) throws -> [Double] {
            let feature = try engine.execute(get, by: caller)["features"]?[0]
            return (feature?["geometry"]?["coordinates"]?.arrayValue ?? []).compactMap(\.doubleValue)
        }
        let exact = [126.6543, 37.4321]
        #expect(try position(Self.alice) == exact)
        #expect(try position(Self.admin) == exact)
        for stranger in [Self.bob, .anonymous, .trusted] {
            let shown = try position(stranger)
            #expect(shown != exact)
            #expect(shown.count == 2 && abs(shown[0] - 126.65) < 1e-9 && abs(shown[1] - 37.45) < 1e-9)
        }
        // The observer filter does not reveal it either: lists are generalised for everyone.
        let list = try engine.execute(try Self.request(
            #"{"op":"list","layer":"sightings","bbox":[120,30,135,45],"observer":"alice","limit":100}"#), by: Self.alice)
        #expect(!list.jsonString.contains("126.6543"))
    }

    /// A sighting's `note` is its observer's own: no answer to anyone else carries it
    /// (clusters, children, leaves, list, nearby, tiles, vector tiles, get), while the owner
    /// and admins read it back by id.
    @Test func aNoteIsShownOnlyToItsOwnerAndAdmins() async throws {
        let engine = try Self.engine()
        let note = "nest in the reeds behind the 3rd pylon"
        _ = try await engine.perform(try Self.request(
            #"{"op":"insert","layer":"sightings","records":[{"id":"k1","lon":127.2,"lat":37.4,"species":"Ardea alba","count":1,"observed_at":"2025-06-01T07:00:00+09:00","properties":{"note":"\#(note)"}}]}"#),
            by: Self.alice)
        let get = try Self.request(#"{"op":"get","layer":"sightings","ids":["k1"]}"#)
        #expect(try engine.execute(get, by: Self.alice)["features"]?[0]?["properties"]?["note"] == .string(note))
        #expect(try engine.execute(get, by: Self.admin)["features"]?[0]?["properties"]?["note"] == .string(note))
        let zoom0 = try engine.execute(try Self.request(#"{"op":"clusters","layer":"sightings","bbox":[120,30,135,45],"zoom":0}"#))
        let cluster = try #require(zoom0["features"]?.arrayValue?.compactMap { $0["properties"]?["cluster_id"] }.first)
        let queries = [
            #"{"op":"get","layer":"sightings","ids":["k1"]}"#,
            #"{"op":"clusters","layer":"sightings","bbox":[120,30,135,45],"zoom":20}"#,
            #"{"op":"children","layer":"sightings","cluster_id":\#(cluster.jsonString)}"#,
            #"{"op":"leaves","layer":"sightings","cluster_id":\#(cluster.jsonString),"limit":100}"#,
            #"{"op":"list","layer":"sightings","bbox":[120,30,135,45],"observer":"alice","limit":100}"#,
            #"{"op":"nearby","layer":"sightings","lon":127.2,"lat":37.4,"k":5}"#,
            #"{"op":"tile","layer":"sightings","z":12,"x":3495,"y":1588}"#,
        ]
        for caller in [Self.bob, .anonymous, .trusted, Self.alice] {
            for text in queries where !(caller == Self.alice && text.contains(#""op":"get""#)) {
                let answer = try engine.execute(try Self.request(text), by: caller).jsonString
                #expect(!answer.contains("reeds"), "\(text)")
                #expect(answer.contains("k1") || text.contains("children"), "\(text) lists the sighting")
            }
        }
        let tile = try engine.vectorTile(layer: "sightings", address: TileAddress(z: 12, x: 3495, y: 1588))
        #expect(!tile.isEmpty && String(decoding: tile, as: UTF8.self).contains("Ardea alba"))
        #expect(!String(decoding: tile, as: UTF8.self).contains("reeds"))

    }

    @Test func aStoredScopeThisBinaryDoesNotKnowGrantsNothing() throws {
        #expect(KeyScope.parseStored("read,write") == [.read, .write])
        #expect(KeyScope.parseStored("read,superuser") == [.read])
        #expect(KeyScope.parseStored("") == [])
        #expect(throws: EngineError.self) { try KeyScope.parseList("read,superuser") }
    }

    @Test func aWalkFromAPositionNeedsOnlyThePlacesLayer() throws {
        let engine = try Self.engine()
        let placesOnly = Self.key("walker", [.read], layers: ["places"])
        let fromHere = try Self.request(#"{"op":"reachable","layer":"places","lon":127,"lat":37.5,"remaining_minutes":60}"#)
        #expect(throws: Never.self) { try engine.authorize(fromHere, by: placesOnly) }
        let fromStation = try Self.request(#"{"op":"reachable","layer":"places","station":"seoul","remaining_minutes":60}"#)
        #expect(throws: EngineError.self) { try engine.authorize(fromStation, by: placesOnly) }
    }

    @Test func executeRefusesAWriteWithAKey() throws {
        let engine = try Self.engine()
        #expect(throws: EngineError.self) {
            try engine.execute(try Self.request(#"{"op":"delete","layer":"sightings","ids":["a1"]}"#), by: Self.admin)
        }
    }

    @Test func observerIDIsCheckedOnEveryRecord() throws {
        for bad in [#""""#, "7", String(repeating: "x", count: LayerRecord.maxObserverIDLength + 1).debugDescription] {
            let text = #"{"id":"x","lon":127,"lat":37,"species":"Ardea alba","count":1,"observed_at":"2025-06-01T07:00:00+09:00","observer_id":\#(bad)}"#
            #expect(throws: EngineError.self) {
                try LayerRecord(json: try JSONValue.parse(text), kind: .sightings, layer: "sightings", index: 0)
            }
        }
    }
}
