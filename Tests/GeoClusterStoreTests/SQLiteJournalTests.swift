import Foundation
import Synchronization
import Testing
import GeoCluster
import GeoClusterEngine
import GeoClusterStore
import GeoClusterWire
import GRDB

@Suite struct SQLiteJournalTests {
    @Test func aRestartKeepsInsertsUpsertsAndDeletes() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory)
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let (engine, journal) = try StoreFixtures.engine(store: path, seed: seed)
            _ = try engine.handle(StoreFixtures.insert(batch: 0, size: 5)).get()
            _ = try engine.handle(["op": "upsert", "layer": "birds",
                                   "records": [StoreFixtures.sighting("b0-1", 0, count: 7)]]).get()
            _ = try engine.handle(["op": "delete", "layer": "birds", "ids": ["b0-2", "seed-0"]]).get()
            // A rejected batch (its second record is a duplicate) leaves nothing behind.
            let rejected = engine.handle(["op": "insert", "layer": "birds",
                                          "records": [StoreFixtures.sighting("new", 1), StoreFixtures.sighting("b0-3", 2)]])
            #expect(rejected.failureCode == "duplicate_id")
            #expect(try engine.liveLayer(named: "birds").count == 6)
            try journal.close()
        }
        // The seed file is not read again: the store holds the layer now.
        try FileManager.default.removeItem(at: seed)
        let (engine, journal) = try StoreFixtures.engine(store: path, seed: seed)
        defer { try? journal.close() }
        let layer = try engine.liveLayer(named: "birds")
        #expect(layer.count == 6)
        // The version is the store's: the seeding and three batches, kept across the restart.
        #expect(layer.version == 4)
        #expect(layer.record(idKey: "b0-2") == nil)
        #expect(layer.record(idKey: "seed-0") == nil)
        #expect(layer.record(idKey: "new") == nil)
        #expect(layer.record(idKey: "seed-1") != nil)
        guard case let .sighting(_, count, _)? = layer.record(idKey: "b0-1")?.fields else {
            Issue.record("b0-1 is missing after the restart")
            return
        }
        #expect(count == 7)
        // Writes go on from where they were, and so does the version.
        let answer = try engine.handle(StoreFixtures.insert(batch: 1, size: 2)).get()
        #expect(try engine.liveLayer(named: "birds").count == 8)
        let versionNow = try engine.liveLayer(named: "birds").version
        #expect(answer["version"] == 5 && versionNow == 5)
    }

    /// The store keeps a sighting as written, `note` included, though answers withhold the
    /// note: after a restart the owner still reads it by id.
    @Test func aNoteIsStoredAsWrittenAndSurvivesARestart() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory)
        let path = directory.appendingPathComponent("store.sqlite").path
        var record = StoreFixtures.sighting("n1", 1)
        if case var .object(object) = record { object["properties"] = ["note": "under the bridge"]; record = .object(object) }
        do {
            let (engine, journal) = try StoreFixtures.engine(store: path, seed: seed)
            _ = try engine.handle(["op": "insert", "layer": "birds", "records": [record]]).get()
            try journal.close()
        }
        let (engine, journal) = try StoreFixtures.engine(store: path, seed: seed)
        defer { try? journal.close() }
        let stored = try #require(try engine.liveLayer(named: "birds").record(idKey: "n1"))
        #expect(String(decoding: try #require(stored.ownerFeatureText), as: UTF8.self).contains("under the bridge"))
        #expect(!String(decoding: stored.featureText, as: UTF8.self).contains("under the bridge"))
    }

    @Test func anUpsertWithoutAnObserverKeepsTheOwnerInTheStore() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory)
        let path = directory.appendingPathComponent("store.sqlite").path
        func sighting(count: Int, observer: String?) -> JSONValue {
            var record = StoreFixtures.sighting("o1", 1, count: count)
            if let observer, case var .object(object) = record { object["observer_id"] = .string(observer); record = .object(object) }
            return record
        }
        var inserted: Int64 = 0
        do {
            let (engine, journal) = try StoreFixtures.engine(store: path, seed: seed)
            _ = try engine.handle(["op": "insert", "layer": "birds", "records": [sighting(count: 1, observer: "kim")]]).get()
            inserted = Int64(try engine.liveLayer(named: "birds").version)
            // A correction that names no observer, as an admin would send it.
            _ = try engine.handle(["op": "upsert", "layer": "birds", "records": [sighting(count: 3, observer: nil)]]).get()
            let record = try #require(try engine.liveLayer(named: "birds").record(idKey: "o1"))
            #expect(record.observerID == "kim")
            try journal.close()
        }
        let (engine, journal) = try StoreFixtures.engine(store: path, seed: seed)
        defer { try? journal.close() }
        let stored = try #require(try engine.liveLayer(named: "birds").record(idKey: "o1"))
        #expect(stored.observerID == "kim")
        if case let .sighting(_, count, _) = stored.fields { #expect(count == 3) } else { Issue.record("not a sighting") }
        // The change feed other replicas read carries the owner too.
        let entries = try journal.entries(layer: "birds", after: inserted)
        guard case let .changes(changes)? = entries.last?.body, case let .upsert(record)? = changes.last else {
            Issue.record("no upsert in the journal: \(entries.count) entries")
            return
        }
        #expect(record.observerID == "kim")
    }

    @Test func readersSeeOnlyWholeBatchesWhileWritesAreCommitted() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory, count: 0)
        let (engine, journal) = try StoreFixtures.engine(store: directory.appendingPathComponent("s.sqlite").path,
                                                         seed: seed)
        defer { try? journal.close() }
        let batches = 100, size = 10
        let done = Atomic(false)
        let partial = Atomic(0), observed = Atomic(0)
        let readers = (0..<2).map { _ in
            Thread {
                while !done.load(ordering: .acquiring) {
                    guard let layer = try? engine.liveLayer(named: "birds") else { continue }
                    let whole = layer.count / size
                    let complete = layer.count % size == 0
                        && (whole == 0 || layer.record(idKey: "b\(whole - 1)-\(size - 1)") != nil)
                        && layer.record(idKey: "b\(whole)-0") == nil
                    if !complete { partial.add(1, ordering: .relaxed) }
                    observed.add(1, ordering: .relaxed)
                }
            }
        }
        readers.forEach { $0.start() }
        for batch in 0..<batches {
            _ = try engine.handle(StoreFixtures.insert(batch: batch, size: size)).get()
        }
        done.store(true, ordering: .releasing)
        while readers.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.01) }
        #expect(partial.load(ordering: .relaxed) == 0)
        #expect(observed.load(ordering: .relaxed) > 0)
        #expect(try journal.loadLayer("birds")?.records.count == batches * size)
    }

    /// Rows that cannot be read (the file damaged after the first rows) end the read with
    /// a store error that names the file, after the whole batches read before it: the
    /// failure is not taken for the end of the rows (which would hand over a last, short
    /// batch); nothing traps.
    @Test func aDamagedStoreEndsTheReadWithAnError() throws {
        let directory = try StoreFixtures.directory()
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let journal = try SQLiteJournal(path: path)
            _ = try journal.seedLayer("birds", kind: .sightings, records: try StoreFixtures.storedSightings(20_000))
            try journal.close()
        }
        // Every page of the last half of the file, where the last rows and their index
        // entries are, turned to 0xFF bytes.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 1_000_000)
        try handle.seek(toOffset: size / 2 / 4_096 * 4_096)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: Int(size - size / 2 / 4_096 * 4_096)))
        try handle.close()
        let journal = try SQLiteJournal(path: path)
        defer { try? journal.close() }
        var sizes: [Int] = []
        let error = #expect(throws: EngineError.self) {
            _ = try journal.loadLayer("birds", kind: { _ in }, records: { sizes.append($0.count) })
        }
        guard case let .storageUnavailable(reason)? = error else {
            Issue.record("expected storage_unavailable, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix(path))
        #expect(sizes.reduce(0, +) < 20_000)
        #expect(Set(sizes).count <= 1, "batches handed over: \(sizes)")
    }

    /// A store written before the checked fields were kept gains their column, and its
    /// rows load from their text; a text rewritten without its fields (by such a version,
    /// or by hand) loses them, and loads from its text too. Rows written since carry
    /// fields that match their text.
    @Test func rowsWithoutMatchingCheckedFieldsLoadFromTheirText() throws {
        let directory = try StoreFixtures.directory()
        let path = directory.appendingPathComponent("store.sqlite").path
        let stored = try StoreFixtures.storedSightings(50)
        func withJournal<T>(_ body: (SQLiteJournal) throws -> T) throws -> T {
            let journal = try SQLiteJournal(path: path)
            defer { try? journal.close() }
            return try body(journal)
        }
        func species(_ id: String) throws -> String? {
            let layer = try #require(try withJournal { try $0.loadLayer("birds") })
            let live = try LiveLayer(name: "birds", kind: .sightings, stored: layer.records)
            #expect(live.count == 50)
            guard case let .sighting(species, _, _)? = live.record(idKey: id)?.fields else { return nil }
            return species.text
        }
        func rows(_ condition: String) throws -> Int? {
            try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM points WHERE \(condition)") }
        }
        _ = try withJournal { try $0.seedLayer("birds", kind: .sightings, records: stored) }
        #expect(try rows("fields IS NOT NULL") == 50)
        // The store as the version before left it: no column, no migration recorded.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP TRIGGER points_fields_follow_feature")
            try db.execute(sql: "ALTER TABLE points DROP COLUMN fields")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v3:%'")
        }
        #expect(try species("s1") == "Ardea alba")
        #expect(try rows("fields IS NULL") == 50)
        // Written again with fields, then its text changed without them.
        _ = try withJournal { try $0.replaceLayer("birds", kind: .sightings, records: stored) }
        #expect(try rows("fields IS NOT NULL") == 50)
        // As a version before the fields rewrites a feature: the store clears its fields.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                INSERT INTO points (layer, id_key, feature)
                SELECT layer, id_key, replace(feature, 'Ardea alba', 'Ardea cinerea') FROM points WHERE id_key = 's1'
                ON CONFLICT (layer, id_key) DO UPDATE SET feature = excluded.feature
                """)
        }
        #expect(try rows("fields IS NULL") == 1)
        // The same text written again by this version keeps its fields.
        _ = try withJournal { try $0.replaceLayer("birds", kind: .sightings, records: stored) }
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE points SET feature = feature, fields = fields WHERE id_key = 's2'")
        }
        #expect(try rows("fields IS NULL") == 0)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE points SET feature = replace(feature, 'Ardea alba', 'Ardea cinerea') WHERE id_key = 's1'")
        }
        #expect(try species("s1") == "Ardea cinerea")
        #expect(try species("s2") == "Ardea alba")
    }

    /// A layer is read in the order its rows were first written, whatever their ids (read
    /// in id order, rows written in another order each cost a page read): a record written
    /// again keeps its place and a new one comes last. A store from before the index that
    /// reads them so gains it when opened, and reads the same.
    @Test func aLayerIsReadInTheOrderItsRowsWereWritten() throws {
        let directory = try StoreFixtures.directory()
        let path = directory.appendingPathComponent("store.sqlite").path
        func record(_ id: String, _ n: Int, count: Int = 1) throws -> LayerRecord {
            try LayerRecord(json: StoreFixtures.sighting(id, n, count: count), kind: .sightings, layer: "birds", index: n)
        }
        func order() throws -> [String] {
            let journal = try SQLiteJournal(path: path)
            defer { try? journal.close() }
            return try #require(try journal.loadLayer("birds")).records.map { $0.idKey ?? "" }
        }
        let written = ["s9", "s10", "s1", "s100", "s2"]
        do {
            let journal = try SQLiteJournal(path: path)
            defer { try? journal.close() }
            let sequence = try #require(try journal.seedLayer(
                "birds", kind: .sightings, records: written.enumerated().map { StoredRecord(try record($1, $0)) }))
            let changes: [LayerChange] = [.upsert(try record("s1", 2, count: 5)),
                                          .insert(try record("s0", 5)), .delete(idKey: "s10")]
            _ = try journal.commit(layer: "birds", appliedSequence: sequence) { _ in changes }
        }
        let expected = ["s9", "s1", "s100", "s2", "s0"]
        #expect(try order() == expected)
        // As a version before the index left the store.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP INDEX points_by_layer")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v4:%'")
        }
        #expect(try order() == expected)
        let indexes = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'points'")
        }
        #expect(indexes.contains("points_by_layer"))
    }

    /// A layer rebuilt from the store is read in batches, each validated while the rest
    /// is read: the batches are the layer read whole, in store order, and the first bad
    /// record in store order is the error, whichever batch is validated first.
    @Test func aLayerReadInBatchesIsTheLayerReadWhole() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory)
        let path = directory.appendingPathComponent("store.sqlite").path
        let count = 20_000
        var stored = try StoreFixtures.storedSightings(count)
        do {
            let journal = try SQLiteJournal(path: path)
            defer { try? journal.close() }
            let (batches, whole) = try StoreFixtures.checkReadInBatches(journal, stored: stored)
            #expect(batches.count > 1)
            let (engine, _) = try StoreFixtures.engine(store: path, seed: seed)
            #expect(try engine.liveLayer(named: "birds").count == count)

            // Two bad records (count 0), in different batches.
            let order = whole.records.map { $0.idKey ?? "" }
            let bad = ["s9", "s15000"].sorted { order.firstIndex(of: $0)! < order.firstIndex(of: $1)! }
            for id in bad {
                let i = Int(id.dropFirst())!
                let text = String(decoding: stored[i].featureText, as: UTF8.self)
                #expect(text.contains(#""count":1,"#))
                stored[i].featureText = ArraySlice(text.replacingOccurrences(of: #""count":1,"#, with: #""count":0,"#).utf8)
            }
            #expect(abs(order.firstIndex(of: bad[0])! - order.firstIndex(of: bad[1])!) > 8_192)
            _ = try journal.replaceLayer("birds", kind: .sightings, records: stored)
        }
        let firstBad = try #require(try SQLiteJournal(path: path).loadLayer("birds")?.records
            .firstIndex { String(decoding: $0.featureText, as: UTF8.self).contains(#""count":0,"#) })
        #expect(throws: EngineError.self) { try StoreFixtures.engine(store: path, seed: seed) }
        do {
            _ = try StoreFixtures.engine(store: path, seed: seed)
        } catch let error as EngineError {
            guard case let .invalidRecord(_, index, _, field, _) = error else {
                Issue.record("expected invalid_record, got \(error)")
                return
            }
            #expect(index == firstBad && field == "count")
        }
    }

    @Test func aFailingStoreRejectsTheWriteAndLeavesTheLayerUnchanged() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory)
        let (engine, journal) = try StoreFixtures.engine(store: directory.appendingPathComponent("s.sqlite").path,
                                                         seed: seed)
        _ = try engine.handle(StoreFixtures.insert(batch: 0, size: 4)).get()
        let before = try engine.liveLayer(named: "birds")
        try journal.close()

        let result = engine.handle(StoreFixtures.insert(batch: 1, size: 4))
        #expect(result.failureCode == "storage_unavailable")
        if case let .failure(error) = result { #expect(error.category == .unavailable) }
        let after = try engine.liveLayer(named: "birds")
        #expect(after.count == before.count)
        #expect(after.version == before.version)
        #expect(after.record(idKey: "b1-0") == nil)
        // Queries are still answered from memory.
        let clusters = try engine.handle(["op": "clusters", "layer": "birds", "bbox": [120, 30, 135, 40], "zoom": 3]).get()
        #expect(clusters["features"]?.arrayValue?.isEmpty == false)
    }

    // Reported as skipped, not passed, when the tests run as root.
    @Test(.enabled(if: getuid() != 0, "file permissions do not bind root"))
    func aReadOnlyStoreFileGivesTheSameError() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory)
        let path = directory.appendingPathComponent("s.sqlite").path
        try StoreFixtures.engine(store: path, seed: seed).1.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        let result = Result { () throws(EngineError) in
            let (engine, _) = try StoreFixtures.engineTyped(store: path, seed: seed)
            _ = try engine.handle(StoreFixtures.insert(batch: 0, size: 1)).get()
        }
        #expect(result.failureCode == "storage_unavailable")
    }

    @Test func changesAfterASequenceComeInOrder() throws {
        let directory = try StoreFixtures.directory()
        let seed = try StoreFixtures.seedFile(in: directory)
        let journal = try SQLiteJournal(path: directory.appendingPathComponent("s.sqlite").path)
        defer { try? journal.close() }
        let spec = LayerCatalog.LayerSpec(name: "birds", kind: .sightings, path: seed.path)
        guard case let .live(writer) = try LayerCatalog.load(spec, journal: journal),
              case let .live(follower) = try LayerCatalog.load(spec, journal: journal) else {
            Issue.record("birds is not a live layer")
            return
        }
        let record = try LayerRecord(json: StoreFixtures.sighting("x", 1), kind: .sightings, layer: "birds", index: 0)
        try writer.apply([.insert(record)])
        try writer.apply([.delete(idKey: "seed-1")])
        let entries = try journal.entries(layer: "birds", after: follower.sequence)
        #expect(entries.map(\.sequence) == [writer.sequence - 1, writer.sequence])
        try follower.replay(entries)
        #expect(follower.layer.count == writer.layer.count)
        #expect(follower.layer.record(idKey: "x") != nil)
        #expect(follower.layer.record(idKey: "seed-1") == nil)
        // A write through the follower validates against the writer's later entries:
        // it deletes a record only the writer has applied so far.
        let later = try LayerRecord(json: StoreFixtures.sighting("y", 2), kind: .sightings, layer: "birds", index: 0)
        try writer.apply([.insert(later)])
        try follower.apply([.delete(idKey: "y")])
        #expect(follower.layer.record(idKey: "y") == nil)
        #expect(try journal.loadLayer("birds")?.records.compactMap(\.idKey).sorted() == ["seed-0", "seed-2", "x"])
    }
}

extension StoreFixtures {
    static func engineTyped(store path: String, seed: URL) throws(EngineError) -> (Engine, SQLiteJournal) {
        let journal = try SQLiteJournal(path: path)
        let spec = LayerCatalog.LayerSpec(name: "birds", kind: .sightings, path: seed.path)
        return (try Engine(entries: [try LayerCatalog.load(spec, journal: journal)]), journal)
    }
}

extension Result where Failure == EngineError {
    var failureCode: String? {
        if case let .failure(error) = self { return error.code }
        return nil
    }
}
