import Foundation
import GeoCluster
import GeoClusterEngine
import GRDB
import GRDBSQLite

/// The embedded store: one SQLite file through GRDB, in WAL mode (docs/STORAGE.md).
///
/// Each write batch is one `BEGIN IMMEDIATE` transaction that upserts and deletes rows of
/// `points` and adds one row to `changes`, whose `sequence` numbers the batch. With
/// `synchronous = FULL` a commit is on disk when it returns, so an acknowledged write
/// survives `kill -9` and a power cut. Several processes may open the same file (an
/// import next to a running server): the immediate transaction serialises their writes
/// and ``entries(layer:after:)`` lets each catch up with the others'.
public final class SQLiteJournal: LayerJournal {
    private let pool: DatabasePool
    public let path: String
    public var location: String { "sqlite:\(path)" }

    /// Opens (creating when missing) the store at `path` and migrates its schema.
    public init(path: String) throws(EngineError) {
        self.path = path
        var configuration = Configuration()
        configuration.journalMode = .wal
        // Another process holding the write lock (an import) makes writers wait, not fail.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// Closes the database; every later call fails with `storage_unavailable`.
    public func close() throws(EngineError) {
        do {
            try pool.close()
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// The schema, one migration per version; GRDB records which ones ran in
    /// `grdb_migrations`.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: layers, points, changes") { db in
            try db.execute(sql: """
                CREATE TABLE layers (
                    name TEXT PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL
                );
                CREATE TABLE points (
                    layer TEXT NOT NULL REFERENCES layers(name),
                    id_key TEXT,
                    feature TEXT NOT NULL
                );
                CREATE UNIQUE INDEX points_by_id ON points(layer, id_key);
                CREATE TABLE changes (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    layer TEXT NOT NULL REFERENCES layers(name),
                    type TEXT NOT NULL CHECK (type IN ('batch', 'replace')),
                    body TEXT,
                    committed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                );
                CREATE INDEX changes_by_layer ON changes(layer, sequence);
                """)
        }
        migrator.registerMigration("v2: api_keys") { db in
            try db.execute(sql: """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY NOT NULL,
                    secret_sha256 TEXT NOT NULL,
                    owner TEXT NOT NULL,
                    layers TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                    revoked_at TEXT,
                    change INTEGER NOT NULL
                );
                CREATE INDEX api_keys_by_change ON api_keys(change);
                """)
        }
        migrator.registerMigration("v3: checked fields of points") { db in
            // NULL for the rows written before: those are validated from their text. A
            // version before this one rewrites a feature and leaves its fields as they
            // were: the trigger clears them, so that they are never taken for the new text.
            try db.execute(sql: """
                ALTER TABLE points ADD COLUMN fields BLOB;
                CREATE TRIGGER points_fields_follow_feature AFTER UPDATE OF feature ON points
                WHEN NEW.feature IS NOT OLD.feature AND NEW.fields IS OLD.fields AND NEW.fields IS NOT NULL
                BEGIN
                    UPDATE points SET fields = NULL WHERE rowid = NEW.rowid;
                END;
                """)
        }
        migrator.registerMigration("v4: points by layer in write order") { db in
            // A layer is read through this index: its rows in the order of their rowids,
            // the order they were written in, so the table's pages are read one after the
            // other. Read through `points_by_id`, the rows came in id order, each from
            // wherever its id put it, which read a page per row once ids did not follow
            // the writing order.
            try db.execute(sql: "CREATE INDEX points_by_layer ON points(layer)")
        }
        return migrator
    }

    // MARK: LayerJournal

    public func loadLayer(_ name: String) throws(EngineError) -> StoredLayer? {
        try run { () throws -> StoredLayer? in
            try pool.read { db in try Self.layer(name, in: db) }
        }
    }

    /// Hands the rows over in batches of ``StoredRowBatches/size`` as the cursor reads them.
    public func loadLayer(_ name: String, kind: (LayerKind) throws(EngineError) -> Void,
                          records: ([StoredRecord]) -> Void) throws(EngineError) -> Int64? {
        try run { () throws -> Int64? in
            try pool.read { db -> Int64? in
                guard let layerKind = try Self.kind(ifStored: name, in: db) else { return nil }
                try kind(layerKind)
                try Self.forEachBatch(of: name, in: db, size: StoredRowBatches.size, records)
                return try Self.sequence(of: name, in: db)
            }
        }
    }

    public func seedLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64? {
        try write { db -> Int64? in
            guard try String.fetchOne(db, sql: "SELECT kind FROM layers WHERE name = ?", arguments: [name]) == nil else {
                return nil
            }
            return try Self.replace(name, kind: kind, records: records, in: db)
        }
    }

    public func replaceLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64 {
        try write { db -> Int64 in try Self.replace(name, kind: kind, records: records, in: db) }
    }

    public func commit(layer: String, appliedSequence: Int64,
                       prepare: ([JournalEntry]) throws(EngineError) -> [LayerChange]) throws(EngineError) -> Int64 {
        try write { db -> Int64 in
            let changes = try prepare(try Self.entries(layer, after: appliedSequence, in: db))
            let put = try db.cachedStatement(sql: """
                INSERT INTO points (layer, id_key, feature, fields) VALUES (?, ?, ?, ?)
                ON CONFLICT (layer, id_key) DO UPDATE SET feature = excluded.feature, fields = excluded.fields
                """)
            let delete = try db.cachedStatement(sql: "DELETE FROM points WHERE layer = ? AND id_key = ?")
            for change in changes {
                switch change {
                case let .insert(record), let .upsert(record):
                    let stored = StoredRecord(record)
                    try put.execute(arguments: [layer, stored.idKey, stored.featureJSON, stored.checkedFieldsData])
                case let .delete(idKey): try delete.execute(arguments: [layer, idKey])
                }
            }
            try db.execute(sql: "INSERT INTO changes (layer, type, body) VALUES (?, 'batch', ?)",
                           arguments: [layer, LayerChange.encode(changes)])
            return db.lastInsertedRowID
        }
    }

    public func entries(layer: String, after sequence: Int64) throws(EngineError) -> [JournalEntry] {
        try run { () throws -> [JournalEntry] in
            try pool.read { db in try Self.entries(layer, after: sequence, in: db) }
        }
    }

    // MARK: Statements (keys: KeyStore)

    /// Each creation or revocation takes the next `change` number inside the write
    /// transaction, which SQLite serialises, so numbers are committed in order.
    static func nextKeyChange(in db: Database) throws -> Int64 {
        (try Int64.fetchOne(db, sql: "SELECT MAX(change) FROM api_keys") ?? 0) + 1
    }

    static func grants(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [KeyGrant] {
        try Row.fetchAll(db, sql: """
            SELECT id, secret_sha256, owner, layers, scopes, created_at, revoked_at FROM api_keys \(sql)
            """, arguments: arguments).map { row in
            KeyGrant(id: row[0], owner: row[2], layers: KeyGrant.layers(fromText: row[3]),
                     scopes: KeyScope.parseStored(row[4]), secretHash: row[1], createdAt: row[5], revokedAt: row[6])
        }
    }

    // MARK: Statements

    static func layer(_ name: String, in db: Database) throws -> StoredLayer? {
        guard let kind = try kind(ifStored: name, in: db) else { return nil }
        var records: [StoredRecord] = []
        try forEachBatch(of: name, in: db, size: StoredRowBatches.size) { records += $0 }
        return StoredLayer(kind: kind, records: records, sequence: try sequence(of: name, in: db))
    }

    /// The kind of a stored layer, `nil` when the store does not hold it.
    private static func kind(ifStored name: String, in db: Database) throws -> LayerKind? {
        guard let kindName = try String.fetchOne(db, sql: "SELECT kind FROM layers WHERE name = ?", arguments: [name])
        else { return nil }
        guard let kind = LayerKind(rawValue: kindName) else {
            throw EngineError.storageUnavailable(reason: "layer \"\(name)\" has the unknown kind \"\(kindName)\"")
        }
        return kind
    }

    /// The stored records of a layer, in store order (the order their rows were first
    /// written in), as text and checked fields, in batches of `size` (``StoredBatch``):
    /// the layer is built from them.
    /// The rows are stepped through with SQLite's own calls rather than GRDB's row
    /// cursor, whose rows and decoding took a fifth of the reading thread's time (reference
    /// counting, on the critical path of a rebuild); the statement is GRDB's, prepared and
    /// bound by it.
    private static func forEachBatch(of name: String, in db: Database, size: Int,
                                     _ body: ([StoredRecord]) -> Void) throws {
        let statement = try db.makeStatement(
            sql: "SELECT id_key, feature, fields FROM points INDEXED BY points_by_layer WHERE layer = ?")
        statement.arguments = [name]
        let sqlite = statement.sqliteStatement
        /// The bytes of column `column` of the current row, `nil` for NULL.
        func bytes(_ column: CInt) -> UnsafeRawBufferPointer? {
            guard sqlite3_column_type(sqlite, column) != SQLITE_NULL else { return nil }
            guard let start = sqlite3_column_blob(sqlite, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(sqlite, column)))
        }
        var batch = StoredBatch(capacity: size)
        while true {
            let code = sqlite3_step(sqlite)
            guard code == SQLITE_ROW else {
                guard code == SQLITE_DONE else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                                        sql: statement.sql, arguments: statement.arguments)
                }
                break
            }
            let idKey = bytes(0).map { String(decoding: $0, as: UTF8.self) }
            batch.append(idKey: idKey, text: bytes(1) ?? UnsafeRawBufferPointer(start: nil, count: 0), fields: bytes(2))
            if batch.count == size { body(batch.take()) }
        }
        if batch.count > 0 { body(batch.take()) }
    }

    private static func sequence(of name: String, in db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT MAX(sequence) FROM changes WHERE layer = ?", arguments: [name]) ?? 0
    }

    static func entries(_ layer: String, after sequence: Int64, in db: Database) throws -> [JournalEntry] {
        var entries: [JournalEntry] = []
        var layerKind: LayerKind?
        let rows = try Row.fetchCursor(db, sql: """
            SELECT sequence, type, body FROM changes WHERE layer = ? AND sequence > ? ORDER BY sequence
            """, arguments: [layer, sequence])
        while let row = try rows.next() {
            let type: String = row[1]
            guard type == "batch", let body: String = row[2] else {
                // An import replaced the layer: its current rows are the state to take.
                guard let stored = try Self.layer(layer, in: db) else { return [] }
                return [JournalEntry(sequence: stored.sequence, layer: layer, body: .snapshot(stored.records))]
            }
            let kind = try layerKind ?? Self.kind(of: layer, in: db)
            layerKind = kind
            entries.append(JournalEntry(sequence: row[0], layer: layer,
                                        body: .changes(try LayerChange.decode(body, kind: kind, layer: layer))))
        }
        return entries
    }

    /// The kind of a layer the store holds.
    static func kind(of layer: String, in db: Database) throws -> LayerKind {
        guard let kind = try kind(ifStored: layer, in: db) else {
            throw EngineError.storageUnavailable(reason: "layer \"\(layer)\" has changes but no known kind")
        }
        return kind
    }

    static func replace(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>, in db: Database) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO layers (name, kind) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET kind = excluded.kind
            """, arguments: [name, kind.rawValue])
        try db.execute(sql: "DELETE FROM points WHERE layer = ?", arguments: [name])
        let insert = try db.cachedStatement(sql: "INSERT INTO points (layer, id_key, feature, fields) VALUES (?, ?, ?, ?)")
        for record in records {
            try insert.execute(arguments: [name, record.idKey, record.featureJSON, record.checkedFieldsData])
        }
        try db.execute(sql: "INSERT INTO changes (layer, type) VALUES (?, 'replace')", arguments: [name])
        return db.lastInsertedRowID
    }

    // MARK: Errors

    /// Runs `body` in one immediate transaction, committed when it returns.
    func write<T>(_ body: (Database) throws -> T) throws(EngineError) -> T {
        try run { () throws -> T in
            try pool.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw EngineError.storageUnavailable(reason: "a transaction gave no result") }
                return result
            }
        }
    }

    /// Runs `body` in one read transaction (a consistent snapshot).
    func read<T>(_ body: (Database) throws -> T) throws(EngineError) -> T {
        try run { () throws -> T in try pool.read { db in try body(db) } }
    }

    private func run<T>(_ body: () throws -> T) throws(EngineError) -> T {
        do {
            return try body()
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// Engine errors (a rejected batch) pass through; database errors become
    /// `storage_unavailable`.
    static func storeError(_ error: any Error, path: String) -> EngineError {
        if let error = error as? EngineError { return error }
        if let error = error as? DatabaseError {
            return .storageUnavailable(reason: "\(path): \(error.message ?? "SQLite error \(error.resultCode.rawValue)")")
        }
        return .storageUnavailable(reason: "\(path): \(error)")
    }
}

extension SQLiteJournal: KeyStore {
    public func createKey(_ grant: KeyGrant) throws(EngineError) {
        try write { db in
            try db.execute(sql: """
                INSERT INTO api_keys (id, secret_sha256, owner, layers, scopes, change) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [grant.id, grant.secretHash, grant.owner, grant.layersText, grant.scopesText,
                                 try Self.nextKeyChange(in: db)])
        }
    }

    public func keys() throws(EngineError) -> [KeyGrant] {
        try read { db in try Self.grants(db, sql: "ORDER BY created_at, id") }
    }

    public func revokeKey(id: String) throws(EngineError) -> Bool {
        try write { db -> Bool in
            try db.execute(sql: """
                UPDATE api_keys SET revoked_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), change = ?
                WHERE id = ? AND revoked_at IS NULL
                """, arguments: [try Self.nextKeyChange(in: db), id])
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM api_keys WHERE id = ?", arguments: [id]) ?? 0 > 0
        }
    }

    public func keyChanges(after: Int64) throws(EngineError) -> (keys: [KeyGrant], last: Int64) {
        try read { db in
            let grants = try Self.grants(db, sql: "WHERE change > ? ORDER BY change", arguments: [after])
            let last = try Int64.fetchOne(db, sql: "SELECT MAX(change) FROM api_keys") ?? 0
            return (grants, max(after, last))
        }
    }
}

extension StoredRecord {
    /// ``checkedFields`` as a BLOB value (NULL when absent).
    var checkedFieldsData: Data? { checkedFields.map { Data($0) } }
}
