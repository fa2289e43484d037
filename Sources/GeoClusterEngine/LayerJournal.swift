import GeoCluster
import GeoClusterWire

/// The durable store behind live layers: every write batch is committed to it before the
/// new version is published, and layers are rebuilt from it at start (docs/STORAGE.md).
///
/// Batches get increasing **sequence numbers**, shared by all layers of one store. A layer
/// remembers the sequence of the last batch it applied; ``entries(layer:after:)`` returns
/// what other writers (other processes on the same store, replicas on one PostgreSQL)
/// committed since, in order, so that a process can follow a store it shares.
///
/// Implementations live outside the engine (`GeoClusterStore`), so the engine stays free
/// of database libraries. Every method is synchronous and may block on I/O, so async code
/// reaches a journal only through ``LiveLayerStore/write(_:)``, which calls it on the
/// store's journal queue. Errors are ``EngineError/storageUnavailable(reason:)``.
public protocol LayerJournal: Sendable {
    /// Where the store is, as `--store` names it (a password left out), for messages.
    var location: String { get }

    /// The layer as stored, or `nil` when the store has never held it (it is then seeded
    /// from its file). Records and sequence come from one consistent snapshot.
    func loadLayer(_ name: String) throws(EngineError) -> StoredLayer?

    /// ``loadLayer(_:)`` for a caller that works on the records while the rest are read:
    /// `kind` gets the layer's kind (and may throw to stop the read), then `records` gets
    /// the records in store order, a batch at a time. Returns the sequence, or `nil`
    /// (calling neither) when the store has never held the layer. One consistent
    /// snapshot, as ``loadLayer(_:)``; a store that has no faster way reads the whole
    /// layer first.
    func loadLayer(_ name: String, kind: (LayerKind) throws(EngineError) -> Void,
                   records: ([StoredRecord]) -> Void) throws(EngineError) -> Int64?

    /// Stores `records` as the first content of `name`, in one transaction, unless the store
    /// already holds that layer (another process seeded it first): then nothing is written
    /// and the result is `nil`. Returns the sequence of the seeding entry. The records are
    /// read once, in order: a lazy map makes each stored record (its checked fields) only
    /// as it is written, instead of all of them beside the layer's records.
    func seedLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64?

    /// Replaces every record of `name` with `records` in one transaction (an import), and
    /// returns the sequence of the replacing entry. The records are read once, in order
    /// (see ``seedLayer(_:kind:records:)``).
    func replaceLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64

    /// Commits one write batch of `layer` in one transaction and returns its sequence.
    ///
    /// Writers of the layer are serialised by the store. Inside the transaction, once no
    /// other writer can commit to the layer, `prepare` runs with the entries of the layer
    /// committed after `appliedSequence` by others (empty when this process is the only
    /// writer); it brings the caller's layer up to date with them, checks the batch
    /// against the result and returns the batch's changes as they apply there (an upsert
    /// of a sighting keeps the record's owner, say), which are committed. When it throws,
    /// nothing is committed and its error is rethrown. Returns only once the batch is
    /// durable.
    func commit(layer: String, appliedSequence: Int64,
                prepare: ([JournalEntry]) throws(EngineError) -> [LayerChange]) throws(EngineError) -> Int64

    /// The entries of `layer` committed after `sequence`, in order. When a replacement
    /// (an import) is among them, the answer is one ``JournalEntry/Body/snapshot(_:)``
    /// entry holding the layer's records at the latest sequence instead.
    func entries(layer: String, after sequence: Int64) throws(EngineError) -> [JournalEntry]
}

extension LayerJournal {
    public func loadLayer(_ name: String, kind: (LayerKind) throws(EngineError) -> Void,
                          records: ([StoredRecord]) -> Void) throws(EngineError) -> Int64? {
        guard let stored = try loadLayer(name) else { return nil }
        try kind(stored.kind)
        records(stored.records)
        return stored.sequence
    }
}

/// One record as stored: its id key (``LayerRecord/idKey``; `nil` for a record without an
/// id), its GeoJSON Feature as JSON text, and its checked fields. Kept as text both ways:
/// a record's text goes to the store as it is, and a layer rebuilt from the store reads
/// one feature at a time instead of holding all their trees at once.
///
/// The text and the fields are slices: the rows a store reads share one buffer per batch
/// (the reading thread copies bytes, and the threads that build the records each make
/// their record's own copy of the text), and a record's text goes to the store without
/// a copy.
public struct StoredRecord: Sendable, Equatable {
    public var idKey: String?
    public var featureText: ArraySlice<UInt8>
    /// The record's fields as validated when it was written, with a hash of its text
    /// (``CheckedFields``): a layer rebuilt from the store takes them instead of
    /// validating the text again while they match it. `nil` for rows written without
    /// them, which are validated from their text.
    public var checkedFields: ArraySlice<UInt8>?

    public init(idKey: String?, featureText: ArraySlice<UInt8>, checkedFields: ArraySlice<UInt8>? = nil) {
        self.idKey = idKey
        self.featureText = featureText
        self.checkedFields = checkedFields
    }

    public init(idKey: String?, featureText: [UInt8], checkedFields: ArraySlice<UInt8>? = nil) {
        self.init(idKey: idKey, featureText: featureText[...], checkedFields: checkedFields)
    }

    public init(_ record: LayerRecord) {
        self.init(idKey: record.idKey.isEmpty ? nil : record.idKey, featureText: record.featureText[...],
                  checkedFields: CheckedFields.encode(record)[...])
    }

    /// The feature's text as a string, for a database column.
    public var featureJSON: String { String(decoding: featureText, as: UTF8.self) }

    /// The feature, parsed from its text (which may come from outside: a database row).
    /// - Throws: ``EngineError/storageUnavailable(reason:)`` when the text is not JSON.
    public func feature(layer: String) throws(EngineError) -> JSONValue {
        do {
            return try JSONValue.parse(featureText, maxDepth: 64)
        } catch {
            throw .storageUnavailable(reason: "a stored feature of layer \"\(layer)\" is not valid JSON")
        }
    }
}

/// One change of a write batch, the one form a change takes from the moment it is
/// decoded: the engine validates a request's records into it (``LayerRecord`` for
/// inserts and upserts, the id key for deletes), a ``LiveLayerStore`` applies it, a
/// journal stores the record's text as it is, and a follower replays it from there,
/// validated again (the store may have been written by another binary) and applied.
public enum LayerChange: Sendable, Equatable {
    case insert(LayerRecord)
    case upsert(LayerRecord)
    case delete(idKey: String)
}

/// The content of one layer in the store.
public struct StoredLayer: Sendable {
    public var kind: LayerKind
    public var records: [StoredRecord]
    /// The sequence of the layer's last entry (0 when it has none).
    public var sequence: Int64

    public init(kind: LayerKind, records: [StoredRecord], sequence: Int64) {
        self.kind = kind
        self.records = records
        self.sequence = sequence
    }
}

/// One committed entry of a layer, as a follower applies it.
public struct JournalEntry: Sendable {
    public enum Body: Sendable {
        /// A write batch. Its inserts come back as upserts: the batch was validated before
        /// it was committed, so replaying an insert as an upsert gives the same layer.
        case changes([LayerChange])
        /// Every record of the layer as of ``JournalEntry/sequence`` (after an import).
        case snapshot([StoredRecord])
    }

    public var sequence: Int64
    public var layer: String
    public var body: Body

    public init(sequence: Int64, layer: String, body: Body) {
        self.sequence = sequence
        self.layer = layer
        self.body = body
    }
}

extension LayerChange {
    /// The JSON of a batch's changes as stores keep it in their change tables:
    /// `[{"put": feature}, {"delete": "idkey"}]`, a put with an id-less record as
    /// `{"put": feature, "no_id": true}`. Inserts and upserts are both puts. A record's
    /// feature is written as the text it already has, not encoded again.
    public static func encode(_ changes: [LayerChange]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(changes.count * 200)
        for (position, change) in changes.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            switch change {
            case let .insert(record), let .upsert(record):
                bytes += #"{"put":"#.utf8
                record.appendFeatureText(to: &bytes)
                if record.idKey.isEmpty { bytes += #","no_id":true"#.utf8 }
                bytes.append(UInt8(ascii: "}"))
            case let .delete(idKey):
                bytes += #"{"delete":"#.utf8
                JSONValue.string(idKey).encode(into: &bytes)
                bytes.append(UInt8(ascii: "}"))
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads what ``encode(_:)`` wrote for a layer of `kind`: each put's feature is
    /// validated into its record once, here, and comes back as an upsert.
    public static func decode(_ text: String, kind: LayerKind, layer: String) throws(EngineError) -> [LayerChange] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(text.utf8), maxDepth: 64)
        } catch {
            throw .storageUnavailable(reason: "a stored change batch is not valid JSON: \(error.description)")
        }
        guard let items = value.arrayValue else {
            throw .storageUnavailable(reason: "a stored change batch is not an array")
        }
        var changes: [LayerChange] = []
        changes.reserveCapacity(items.count)
        for (position, item) in items.enumerated() {
            if let feature = item["put"] {
                changes.append(.upsert(try LayerRecord(json: feature, kind: kind, layer: layer, index: position)))
            } else if let idKey = item["delete"]?.stringValue {
                changes.append(.delete(idKey: idKey))
            } else {
                throw .storageUnavailable(reason: "a stored change is neither a put nor a delete")
            }
        }
        return changes
    }
}

extension LayerRecord {
    /// The record of a stored row: from its checked fields when they match its text and
    /// kind, otherwise validated again from its text, which it keeps (it was written from
    /// a record's).
    init(stored: StoredRecord, kind: LayerKind, layer: String, index: Int) throws(EngineError) {
        // The rows' texts are slices of one buffer per batch: a record keeps its own copy
        // of its text's parts (``FeatureText``).
        if let fields = stored.checkedFields,
           let record = CheckedFields.decode(fields, text: stored.featureText, kind: kind) {
            self = record
            return
        }
        if let record = LayerRecord(compactFeature: stored.featureText, kind: kind, layer: layer, index: index,
                                    maxDepth: 64) {
            self = record
            return
        }
        let text = [UInt8](stored.featureText)
        try self.init(json: try stored.feature(layer: layer), kind: kind, layer: layer, index: index, text: text)
    }
}
