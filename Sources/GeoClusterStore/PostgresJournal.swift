import Foundation
import GeoCluster
import GeoClusterEngine
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// The shared store of several replicas: one PostgreSQL database (docs/STORAGE.md,
/// docs/DEPLOY.md). The schema is the SQLite store's, with `changes.sequence` a
/// `bigserial`; every commit also sends `NOTIFY geo_cluster_changes` so that the other
/// replicas' ``ChangeFeed`` wakes up.
///
/// Writes are linearised per layer: a write transaction first takes the layer's
/// transaction-scoped advisory lock, then reads the layer's entries that this replica
/// has not applied, lets the caller apply them and validate its batch against the
/// result, and only then writes the points and the change row and commits. Sequence
/// numbers of one layer therefore grow in commit order, which is what lets a follower
/// read "entries of this layer after s" without missing one that commits late.
///
/// Bridging: the journal is synchronous (a write runs under the layer's mutex, a
/// query never waits), postgres-nio is asynchronous. The journal owns a one-thread NIO
/// event loop group on which its connection lives, and the calling thread blocks on the
/// `EventLoopFuture` of each statement (`wait()`). The caller is never one of this
/// group's threads, so the wait cannot deadlock on the loop that completes it, and it is
/// never one of Swift concurrency's threads either: the server's writes reach the journal
/// through ``LiveLayerStore/write(_:)``, which commits on the store's own journal queue,
/// and the change feed follows on a thread of its own.
public final class PostgresJournal: LayerJournal, @unchecked Sendable {
    /// The `NOTIFY` channel of new entries; the payload is the layer's name.
    public static let channel = "geo_cluster_changes"

    public let location: String
    let configuration: PostgresConnection.Configuration
    let group: MultiThreadedEventLoopGroup
    let logger: Logger
    /// Guards ``connection``: one statement sequence (a transaction) at a time.
    private let lock = NIOLock()
    private var connection: PostgresConnection?
    private let connectionIDs = NIOLockedValueBox(0)

    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`) and migrates
    /// the schema.
    public init(url: String, logger: Logger = Logger(label: "geo-cluster.postgres")) throws(EngineError) {
        guard let parsed = URL(string: url), parsed.scheme == "postgres" || parsed.scheme == "postgresql",
              let host = parsed.host, !host.isEmpty else {
            throw .invalidField("store", reason: "expected postgres://user[:password]@host[:port]/database, got \"\(url)\"")
        }
        let database = parsed.path.hasPrefix("/") ? String(parsed.path.dropFirst()) : parsed.path
        configuration = PostgresConnection.Configuration(
            host: host, port: parsed.port ?? 5432, username: parsed.user ?? "postgres", password: parsed.password,
            database: database.isEmpty ? nil : database, tls: .disable)
        location = "postgres://\(parsed.user.map { $0 + "@" } ?? "")\(host):\(parsed.port ?? 5432)/\(database)"
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.logger = logger
        try migrate()
    }

    deinit {
        try? connection?.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Closes the connection; the next call opens a new one.
    public func disconnect() {
        lock.withLock {
            try? connection?.close().wait()
            connection = nil
        }
    }

    /// A new connection on the journal's event loop, for a ``ChangeFeed``'s `LISTEN`.
    func connect() throws -> PostgresConnection {
        let id = connectionIDs.withLockedValue { value in
            value += 1
            return value
        }
        return try PostgresConnection.connect(on: group.next(), configuration: configuration, id: id,
                                              logger: logger).wait()
    }

    // MARK: Schema

    /// Versioned migrations, applied once each under an advisory lock so that replicas
    /// starting together do not race; `geo_cluster_migrations` lists those applied.
    static let migrations: [(version: Int, statements: [String])] = [
        (1, [
            "CREATE TABLE layers (name text PRIMARY KEY, kind text NOT NULL)",
            "CREATE TABLE points (layer text NOT NULL REFERENCES layers(name), id_key text, feature text NOT NULL)",
            "CREATE UNIQUE INDEX points_by_id ON points (layer, id_key)",
            """
            CREATE TABLE changes (sequence bigserial PRIMARY KEY, layer text NOT NULL REFERENCES layers(name),
                type text NOT NULL CHECK (type IN ('batch', 'replace')), body text,
                committed_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE INDEX changes_by_layer ON changes (layer, sequence)",
        ]),
        (2, [
            """
            CREATE TABLE api_keys (id text PRIMARY KEY, secret_sha256 text NOT NULL, owner text NOT NULL,
                layers text NOT NULL, scopes text NOT NULL,
                created_at text NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                revoked_at text, change bigint NOT NULL)
            """,
            "CREATE INDEX api_keys_by_change ON api_keys (change)",
        ]),
        // NULL for the rows written before: those are validated from their text. A version
        // before this one rewrites a feature and leaves its fields as they were: the
        // trigger clears them, so that they are never taken for the new text.
        (3, [
            "ALTER TABLE points ADD COLUMN fields bytea",
            """
            CREATE FUNCTION geo_cluster_fields_follow_feature() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.feature IS DISTINCT FROM OLD.feature AND NEW.fields IS NOT DISTINCT FROM OLD.fields THEN
                    NEW.fields := NULL;
                END IF;
                RETURN NEW;
            END $$
            """,
            """
            CREATE TRIGGER points_fields_follow_feature BEFORE UPDATE ON points
                FOR EACH ROW EXECUTE FUNCTION geo_cluster_fields_follow_feature()
            """,
        ]),
    ]

    private func migrate() throws(EngineError) {
        try transaction { c in
            _ = try run("SELECT pg_advisory_xact_lock(7402410)", on: c)
            _ = try run("""
                CREATE TABLE IF NOT EXISTS geo_cluster_migrations (version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """, on: c)
            var applied: Set<Int> = []
            for row in try run("SELECT version FROM geo_cluster_migrations", on: c) {
                applied.insert(try row.decode(Int.self))
            }
            for migration in Self.migrations where !applied.contains(migration.version) {
                for statement in migration.statements { _ = try run(statement, on: c) }
                _ = try c.query("INSERT INTO geo_cluster_migrations (version) VALUES (\(migration.version))",
                                logger: logger).wait()
            }
        }
    }

    // MARK: LayerJournal

    public func loadLayer(_ name: String) throws(EngineError) -> StoredLayer? {
        try transaction(readOnly: true) { c in try layer(name, on: c) }
    }

    /// Hands the rows over in batches as they arrive (``readRows(of:on:_:)``).
    public func loadLayer(_ name: String, kind: (LayerKind) throws(EngineError) -> Void,
                          records: ([StoredRecord]) -> Void) throws(EngineError) -> Int64? {
        try transaction(readOnly: true) { c -> Int64? in
            guard let layerKind = try self.kind(ifStored: name, on: c) else { return nil }
            try kind(layerKind)
            try readRows(of: name, on: c, records)
            return try sequence(of: name, on: c)
        }
    }

    public func seedLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64? {
        try transaction { c -> Int64? in
            try lockLayer(name, on: c)
            let existing = try c.query("SELECT kind FROM layers WHERE name = \(name)", logger: logger).wait()
            guard existing.rows.isEmpty else { return nil }
            return try replace(name, kind: kind, records: records, on: c)
        }
    }

    public func replaceLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64 {
        try transaction { c -> Int64 in
            try lockLayer(name, on: c)
            return try replace(name, kind: kind, records: records, on: c)
        }
    }

    public func commit(layer: String, appliedSequence: Int64,
                       prepare: ([JournalEntry]) throws(EngineError) -> [LayerChange]) throws(EngineError) -> Int64 {
        try transaction { c -> Int64 in
            try lockLayer(layer, on: c)
            let changes = try prepare(try entries(layer, after: appliedSequence, on: c))
            // The batch's net effect per id: its last put or delete (a batch may upsert
            // an id twice, which one INSERT … ON CONFLICT cannot).
            var last: [String: Int] = [:]
            var anonymous: [StoredRecord] = []
            for (position, change) in changes.enumerated() {
                switch change {
                case let .insert(record), let .upsert(record):
                    if record.idKey.isEmpty { anonymous.append(StoredRecord(record)) } else { last[record.idKey] = position }
                case let .delete(idKey): last[idKey] = position
                }
            }
            var deleted: [String] = [], puts: [StoredRecord] = []
            for (key, position) in last {
                switch changes[position] {
                case let .insert(record), let .upsert(record):
                    puts.append(StoredRecord(record))
                case .delete:
                    deleted.append(key)
                }
            }
            if !deleted.isEmpty {
                _ = try c.query("DELETE FROM points WHERE layer = \(layer) AND id_key = ANY(\(deleted))",
                                logger: logger).wait()
            }
            try insert(layer, keyed: puts, upsert: true, on: c)
            try insert(layer, anonymous: anonymous, on: c)
            let body = LayerChange.encode(changes)
            let rows = try c.query("""
                INSERT INTO changes (layer, type, body) VALUES (\(layer), 'batch', \(body)) RETURNING sequence
                """, logger: logger).wait()
            _ = try c.query("SELECT pg_notify(\(Self.channel), \(layer))", logger: logger).wait()
            return try Self.sequence(rows)
        }
    }

    public func entries(layer: String, after sequence: Int64) throws(EngineError) -> [JournalEntry] {
        try transaction(readOnly: true) { c in try entries(layer, after: sequence, on: c) }
    }

    // MARK: Statements

    private func lockLayer(_ name: String, on c: PostgresConnection) throws {
        _ = try c.query("SELECT pg_advisory_xact_lock(hashtext(\(name)))", logger: logger).wait()
    }

    /// The kind of a stored layer, `nil` when the store does not hold it.
    private func kind(ifStored name: String, on c: PostgresConnection) throws -> LayerKind? {
        let kinds = try c.query("SELECT kind FROM layers WHERE name = \(name)", logger: logger).wait()
        guard let row = kinds.rows.first else { return nil }
        let kindName = try row.decode(String.self)
        guard let kind = LayerKind(rawValue: kindName) else {
            throw EngineError.storageUnavailable(reason: "layer \"\(name)\" has the unknown kind \"\(kindName)\"")
        }
        return kind
    }

    private func sequence(of name: String, on c: PostgresConnection) throws -> Int64 {
        let last = try c.query("SELECT COALESCE(MAX(sequence), 0) FROM changes WHERE layer = \(name)",
                               logger: logger).wait()
        return try Self.sequence(last)
    }

    private func layer(_ name: String, on c: PostgresConnection) throws -> StoredLayer? {
        guard let kind = try kind(ifStored: name, on: c) else { return nil }
        var records: [StoredRecord] = []
        try readRows(of: name, on: c) { records.append(contentsOf: $0) }
        return StoredLayer(kind: kind, records: records, sequence: try sequence(of: name, on: c))
    }

    /// The rows of a layer, as feature text and checked fields (``StoredBatch``), to
    /// `body` in batches of ``StoredRowBatches/size`` as they arrive: the connection's
    /// event loop gathers them, this thread hands each batch on.
    private func readRows(of name: String, on c: PostgresConnection, _ body: ([StoredRecord]) -> Void) throws {
        let batches = StoredRowBatches()
        let query = c.query("SELECT id_key, feature, fields FROM points WHERE layer = \(name)", logger: logger) { row in
            let (idKey, text, fields) = try row.decode((String?, ByteBuffer, ByteBuffer?).self)
            text.withUnsafeReadableBytes { text in
                guard let fields else { return batches.append(idKey: idKey, text: text, fields: nil) }
                fields.withUnsafeReadableBytes { batches.append(idKey: idKey, text: text, fields: $0) }
            }
        }
        query.whenComplete { _ in batches.end() }
        while let batch = batches.next() { body(batch) }
        _ = try query.wait()
    }

    private func entries(_ layer: String, after sequence: Int64, on c: PostgresConnection) throws -> [JournalEntry] {
        var entries: [JournalEntry] = []
        var layerKind: LayerKind?
        let rows = try c.query("""
            SELECT sequence, type, body FROM changes WHERE layer = \(layer) AND sequence > \(sequence) ORDER BY sequence
            """, logger: logger).wait()
        for row in rows {
            let (number, type, body) = try row.decode((Int64, String, String?).self)
            guard type == "batch", let body else {
                // An import replaced the layer: its rows in this snapshot are the state.
                guard let stored = try self.layer(layer, on: c) else { return [] }
                return [JournalEntry(sequence: stored.sequence, layer: layer, body: .snapshot(stored.records))]
            }
            let kind = try layerKind ?? self.kind(of: layer, on: c)
            layerKind = kind
            entries.append(JournalEntry(sequence: number, layer: layer,
                                        body: .changes(try LayerChange.decode(body, kind: kind, layer: layer))))
        }
        return entries
    }

    /// The kind of a layer the store holds.
    private func kind(of layer: String, on c: PostgresConnection) throws -> LayerKind {
        let rows = try c.query("SELECT kind FROM layers WHERE name = \(layer)", logger: logger).wait()
        guard let row = rows.rows.first, let kind = LayerKind(rawValue: try row.decode(String.self)) else {
            throw EngineError.storageUnavailable(reason: "layer \"\(layer)\" has changes but no known kind")
        }
        return kind
    }

    private func replace(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>,
                         on c: PostgresConnection) throws -> Int64 {
        _ = try c.query("""
            INSERT INTO layers (name, kind) VALUES (\(name), \(kind.rawValue))
            ON CONFLICT (name) DO UPDATE SET kind = excluded.kind
            """, logger: logger).wait()
        _ = try c.query("DELETE FROM points WHERE layer = \(name)", logger: logger).wait()
        // In chunks as the records come, so that no more than a chunk of each kind is held at once.
        var keyed: [StoredRecord] = [], anonymous: [StoredRecord] = []
        for record in records {
            if record.idKey == nil { anonymous.append(record) } else { keyed.append(record) }
            if keyed.count == Self.chunk {
                try insert(name, keyed: keyed, upsert: false, on: c)
                keyed.removeAll(keepingCapacity: true)
            }
            if anonymous.count == Self.chunk {
                try insert(name, anonymous: anonymous, on: c)
                anonymous.removeAll(keepingCapacity: true)
            }
        }
        try insert(name, keyed: keyed, upsert: false, on: c)
        try insert(name, anonymous: anonymous, on: c)
        let rows = try c.query("INSERT INTO changes (layer, type) VALUES (\(name), 'replace') RETURNING sequence",
                               logger: logger).wait()
        _ = try c.query("SELECT pg_notify(\(Self.channel), \(name))", logger: logger).wait()
        return try Self.sequence(rows)
    }

    /// Rows per insert statement.
    private static let chunk = 10_000

    /// Inserts keyed points in chunks of ``chunk`` rows, each one statement over arrays.
    /// Records without checked fields go with an empty `bytea`, stored as NULL.
    private func insert(_ layer: String, keyed records: [StoredRecord], upsert: Bool,
                        on c: PostgresConnection) throws {
        let chunk = Self.chunk
        for start in stride(from: 0, to: records.count, by: chunk) {
            let some = records[start..<min(start + chunk, records.count)]
            let keys = some.map { $0.idKey ?? "" }, features = some.map(\.featureJSON), fields = some.map(\.checkedFieldsBuffer)
            if upsert {
                _ = try c.query("""
                    INSERT INTO points (layer, id_key, feature, fields)
                    SELECT \(layer), k, f, NULLIF(c, ''::bytea)
                    FROM unnest(\(keys)::text[], \(features)::text[], \(fields)::bytea[]) AS t(k, f, c)
                    ON CONFLICT (layer, id_key) DO UPDATE SET feature = excluded.feature, fields = excluded.fields
                    """, logger: logger).wait()
            } else {
                _ = try c.query("""
                    INSERT INTO points (layer, id_key, feature, fields)
                    SELECT \(layer), k, f, NULLIF(c, ''::bytea)
                    FROM unnest(\(keys)::text[], \(features)::text[], \(fields)::bytea[]) AS t(k, f, c)
                    """, logger: logger).wait()
            }
        }
    }

    /// Inserts points without an id.
    private func insert(_ layer: String, anonymous records: [StoredRecord], on c: PostgresConnection) throws {
        for start in stride(from: 0, to: records.count, by: Self.chunk) {
            let some = records[start..<min(start + Self.chunk, records.count)]
            let features = some.map(\.featureJSON), fields = some.map(\.checkedFieldsBuffer)
            _ = try c.query("""
                INSERT INTO points (layer, id_key, feature, fields)
                SELECT \(layer), NULL, f, NULLIF(c, ''::bytea) FROM unnest(\(features)::text[], \(fields)::bytea[]) AS t(f, c)
                """, logger: logger).wait()
        }
    }

    private static func sequence(_ result: PostgresQueryResult) throws -> Int64 {
        guard let row = result.rows.first else {
            throw EngineError.storageUnavailable(reason: "a statement returned no sequence")
        }
        return try row.decode(Int64.self)
    }

    // MARK: Transactions and errors

    private func run(_ sql: String, on c: PostgresConnection) throws -> PostgresQueryResult {
        try c.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
    }

    /// Runs `body` in one transaction on the journal's connection (opened when needed),
    /// committing when it returns and rolling back when it throws. A connection that
    /// failed is dropped, and the next call opens a new one.
    func transaction<T>(readOnly: Bool = false,
                                _ body: (PostgresConnection) throws -> T) throws(EngineError) -> T {
        do {
            return try lock.withLock { () throws -> T in
                let c: PostgresConnection
                if let open = connection, !open.isClosed {
                    c = open
                } else {
                    c = try connect()
                    connection = c
                }
                do {
                    _ = try run(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN", on: c)
                    let result = try body(c)
                    _ = try run("COMMIT", on: c)
                    return result
                } catch {
                    if (try? run("ROLLBACK", on: c)) == nil {
                        try? c.close().wait()
                        connection = nil
                    }
                    throw error
                }
            }
        } catch let error as EngineError {
            throw error
        } catch {
            throw .storageUnavailable(reason: "\(location): \(Self.describe(error))")
        }
    }

    /// A PostgreSQL error as people read it: the server's message, or for a connection
    /// that failed, why (refused, unknown host, timed out) rather than the bare code.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if error.code == .connectionError || error.code == .serverClosedConnection || error.code == .clientClosedConnection,
               let underlying = error.underlying {
                return "cannot reach the database (\(error.code)): \(underlying)"
            }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// Keys in the shared database: every replica's ``KeyRing`` polls ``keyChanges(after:)``,
/// so a key revoked through any of them stops working on all within the poll interval.
/// Writers of keys take an exclusive lock on the table, so change numbers are committed
/// in order and a poller never skips one that commits late.
extension PostgresJournal: KeyStore {
    private static let grantColumns = "id, secret_sha256, owner, layers, scopes, created_at, revoked_at"

    private func grants(_ result: PostgresQueryResult) throws -> [KeyGrant] {
        try result.rows.map { row in
            let (id, hash, owner, layers, scopes, created, revoked) =
                try row.decode((String, String, String, String, String, String, String?).self)
            return KeyGrant(id: id, owner: owner, layers: KeyGrant.layers(fromText: layers),
                            scopes: KeyScope.parseStored(scopes), secretHash: hash, createdAt: created, revokedAt: revoked)
        }
    }

    private func nextKeyChange(on c: PostgresConnection) throws -> Int64 {
        _ = try c.query("LOCK TABLE api_keys IN EXCLUSIVE MODE", logger: logger).wait()
        let rows = try c.query("SELECT COALESCE(MAX(change), 0) + 1 FROM api_keys", logger: logger).wait()
        guard let row = rows.rows.first else { throw EngineError.storageUnavailable(reason: "no key change number") }
        return try row.decode(Int64.self)
    }

    public func createKey(_ grant: KeyGrant) throws(EngineError) {
        try transaction { c in
            let change = try nextKeyChange(on: c)
            _ = try c.query("""
                INSERT INTO api_keys (id, secret_sha256, owner, layers, scopes, change)
                VALUES (\(grant.id), \(grant.secretHash), \(grant.owner), \(grant.layersText), \(grant.scopesText), \(change))
                """, logger: logger).wait()
        }
    }

    public func keys() throws(EngineError) -> [KeyGrant] {
        try transaction(readOnly: true) { c in
            try grants(try c.query(PostgresQuery(unsafeSQL: "SELECT \(Self.grantColumns) FROM api_keys ORDER BY created_at, id"),
                                   logger: logger).wait())
        }
    }

    public func revokeKey(id: String) throws(EngineError) -> Bool {
        try transaction { c -> Bool in
            let change = try nextKeyChange(on: c)
            _ = try c.query("""
                UPDATE api_keys SET change = \(change),
                    revoked_at = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                WHERE id = \(id) AND revoked_at IS NULL
                """, logger: logger).wait()
            return !(try c.query("SELECT 1 FROM api_keys WHERE id = \(id)", logger: logger).wait()).rows.isEmpty
        }
    }

    public func keyChanges(after: Int64) throws(EngineError) -> (keys: [KeyGrant], last: Int64) {
        try transaction(readOnly: true) { c in
            var query = PostgresQuery(unsafeSQL: "SELECT \(Self.grantColumns) FROM api_keys WHERE change > $1 ORDER BY change")
            query.binds.append(after)
            let changed = try grants(try c.query(query, logger: logger).wait())
            let rows = try c.query("SELECT COALESCE(MAX(change), 0) FROM api_keys", logger: logger).wait()
            let last = try rows.rows.first?.decode(Int64.self) ?? 0
            return (changed, max(after, last))
        }
    }
}

extension StoredRecord {
    /// ``checkedFields`` for a `bytea[]` parameter: empty when absent (stored as NULL).
    var checkedFieldsBuffer: ByteBuffer { ByteBuffer(bytes: checkedFields ?? []) }
}
