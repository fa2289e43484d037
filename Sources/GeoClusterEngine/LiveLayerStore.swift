import Atomics
import Dispatch
import Foundation
import GeoCluster
import Synchronization

/// Holds the current version of a live layer. Readers load it with one atomic read and
/// no lock, then answer from that version however long they take; one writer at a time
/// applies a batch to a copy and publishes the result, so a reader sees all of a batch
/// or none of it.
///
/// With a ``LayerJournal``, a batch is committed to the store after it is validated and
/// before it is published: a version that readers can see is always durable, and a batch
/// the store refuses is not applied at all.
public final class LiveLayerStore: Sendable {
    final class Version: AtomicReference, Sendable {
        let layer: LiveLayer
        /// The journal sequence of the last entry applied (0 without a journal).
        let sequence: Int64
        init(_ layer: LiveLayer, sequence: Int64) {
            self.layer = layer
            self.sequence = sequence
        }
    }

    private let current: ManagedAtomic<Version>
    private let writer = Mutex(())
    /// Where ``write(_:)`` commits to the journal: a thread of its own, so that an
    /// fsync or a database round trip never holds a Swift concurrency thread.
    private let journalQueue = DispatchQueue(label: "geo-cluster.journal")
    /// Where batches are committed before they are published; `nil` keeps them in memory.
    public let journal: (any LayerJournal)?
    /// Called after each write (``releaseReplacedMemory()``; tests count the calls).
    private let releaseMemory: @Sendable () -> Void

    /// A layer whose writes stay in memory.
    public convenience init(_ layer: LiveLayer) {
        self.init(layer, releasingMemory: Self.releaseReplacedMemory)
    }

    /// A layer whose writes stay in memory, calling `releasingMemory` after each write.
    init(_ layer: LiveLayer, releasingMemory: @escaping @Sendable () -> Void) {
        current = ManagedAtomic(Version(layer, sequence: 0))
        journal = nil
        releaseMemory = releasingMemory
        Self.prepareDisplay(of: layer)
    }

    /// Prepares the first look at a layer's map (``LiveClusterIndex/prepareDisplay()``) on
    /// a thread of its own, so that the layer serves at once; layers of fewer than 10,000
    /// points form their blocks fast enough on first use.
    static func prepareDisplay(of layer: LiveLayer) {
        let index = layer.index
        guard index.count >= 10_000 else { return }
        Thread.detachNewThread { index.prepareDisplay() }
    }

    /// A layer built from `journal` at `sequence`, whose writes are committed there. Its
    /// `version` is that sequence (see ``apply(_:)``).
    public init(_ layer: LiveLayer, journal: any LayerJournal, sequence: Int64) {
        var layer = layer
        layer.version = Int(sequence)
        current = ManagedAtomic(Version(layer, sequence: sequence))
        self.journal = journal
        releaseMemory = Self.releaseReplacedMemory
        Self.prepareDisplay(of: layer)
    }

    public var name: String { layer.name }
    public var kind: LayerKind { layer.kind }

    /// The current version.
    public var layer: LiveLayer { current.load(ordering: .acquiring).layer }

    /// The current version's ``LiveLayer/version``, read without copying the layer.
    public var version: Int { current.load(ordering: .acquiring).layer.version }

    /// The journal sequence of the current version: the last entry it includes.
    public var sequence: Int64 { current.load(ordering: .acquiring).sequence }

    /// Applies a batch atomically: every change, in order, or none when one of them
    /// fails (the error names it by its position). With a journal the batch is committed
    /// before the new version is published; when the commit fails the error is
    /// ``EngineError/storageUnavailable(reason:)`` and the layer is unchanged. Returns the
    /// new version.
    ///
    /// A layer's `version` says which state it is in. In memory it counts the batches
    /// applied since the process started. With a journal it is the journal sequence of
    /// the last batch the state includes: it only grows, survives restarts, and is the
    /// same on every replica of a store for the same state, so a client may wait for the
    /// version a write answered with (docs/DEPLOY.md).
    ///
    /// This form blocks the calling thread for the journal's I/O; from async code use
    /// ``write(_:)``.
    ///
    /// With an `owner` (a write with a key that is not `admin`), a change of a record that
    /// exists and is not the owner's (``LayerRecord/observerID``) fails with
    /// ``EngineError/notOwner(layer:field:id:reason:)``, checked against the state the
    /// batch applies to, under the same lock, so no concurrent write can slip in between.
    @discardableResult
    public func apply(_ changes: [LayerChange], owner: String? = nil) throws(EngineError) -> LiveLayer {
        defer { releaseMemory() }
        return try writer.withLock { _ throws(EngineError) -> LiveLayer in
            let base = current.load(ordering: .acquiring)
            guard let journal else {
                var next = try Self.applying(changes, to: base.layer, owner: owner).layer
                next.version += 1
                current.store(Version(next, sequence: 0), ordering: .releasing)
                return next
            }
            var next = base.layer
            let sequence = try journal.commit(layer: name, appliedSequence: base.sequence) {
                (missed: [JournalEntry]) throws(EngineError) -> [LayerChange] in
                var caughtUp = base.layer
                for entry in missed { try replay(entry, into: &caughtUp) }
                let applied = try Self.applying(changes, to: caughtUp, owner: owner)
                next = applied.layer
                return applied.changes
            }
            next.version = Int(sequence)
            current.store(Version(next, sequence: sequence), ordering: .releasing)
            return next
        }
    }

    /// As ``apply(_:)``, for async callers: with a journal the batch is applied and
    /// committed on the store's journal queue, and the caller is resumed once it is durable
    /// and published, so no Swift concurrency thread waits on the store's I/O. In memory
    /// the batch is applied on the caller's thread, as there is no I/O to wait for.
    @discardableResult
    public func write(_ changes: [LayerChange], owner: String? = nil) async throws(EngineError) -> LiveLayer {
        guard journal != nil else { return try apply(changes, owner: owner) }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<LiveLayer, EngineError>, Never>) in
            journalQueue.async {
                continuation.resume(returning: Result { () throws(EngineError) -> LiveLayer in
                    try self.apply(changes, owner: owner)
                })
            }
        }
        return try result.get()
    }

    /// Sets the layer's metadata (licence, attribution, time zone) when it is loaded; later versions keep it.
    func describe(_ metadata: LayerMetadata) {
        writer.withLock { _ in
            let base = current.load(ordering: .acquiring)
            var layer = base.layer
            layer.metadata = metadata
            current.store(Version(layer, sequence: base.sequence), ordering: .releasing)
        }
    }

    /// Applies entries that other writers committed to the journal (a change feed), in
    /// order, skipping those the current version already includes, and publishes the
    /// result once. Returns the sequence now applied.
    @discardableResult
    public func replay(_ entries: [JournalEntry]) throws(EngineError) -> Int64 {
        defer { releaseMemory() }
        return try writer.withLock { _ throws(EngineError) -> Int64 in
            let base = current.load(ordering: .acquiring)
            var next = base.layer
            var sequence = base.sequence
            for entry in entries where entry.sequence > sequence {
                try replay(entry, into: &next)
                sequence = entry.sequence
                next.version = Int(sequence)
            }
            if sequence != base.sequence {
                current.store(Version(next, sequence: sequence), ordering: .releasing)
            }
            return sequence
        }
    }

    /// Gives the heap's free pages back about a second after a write (one trim for the
    /// writes of that second; ``HeapTrim/releaseFreePagesSoon()``). Each batch replaces
    /// the quadtree nodes and leaves on its points' paths and the kept groups of the blocks
    /// it touches; they are freed as readers let go of the versions that held them, on
    /// whichever threads those were, and glibc keeps that memory in their arenas: under a
    /// stream of writes to a 10M layer, about 300 MB of the resident memory was such free
    /// heap, which a trim gave back.
    static func releaseReplacedMemory() {
        HeapTrim.releaseFreePagesSoon()
    }

    /// One journal entry applied to `layer`: each put as an upsert (the batch was
    /// validated when it was committed), each delete, or the whole snapshot.
    private func replay(_ entry: JournalEntry, into layer: inout LiveLayer) throws(EngineError) {
        switch entry.body {
        case let .changes(changes):
            for (position, change) in changes.enumerated() {
                switch change {
                case let .insert(record), let .upsert(record):
                    try layer.upsert(record, index: position)
                case let .delete(idKey):
                    try layer.delete(idKey: idKey, index: position)
                }
            }
        case let .snapshot(records):
            let version = layer.version, checklist = layer.speciesChecklist, metadata = layer.metadata
            layer = try LiveLayer(name: name, kind: kind, stored: records, options: layer.index.options,
                                  sensitiveSpecies: layer.sensitiveSpecies)
            layer.version = version
            layer.speciesChecklist = checklist
            layer.metadata = metadata
        }
        layer.version += 1
    }

    /// The layer after `changes`, and the changes as they applied: an upsert of a sighting
    /// that names no `observer_id` keeps the one of the record it replaces, so that a
    /// correction (by an admin key, or over the trusted JSON-lines channel) never takes a
    /// sighting from its observer; such a correction (`owner` nil) keeps the observer's
    /// `note` too when it names none. The observer's own upsert replaces the whole record.
    private static func applying(_ changes: [LayerChange], to layer: LiveLayer,
                                 owner: String?) throws(EngineError) -> (layer: LiveLayer, changes: [LayerChange]) {
        var next = layer
        var applied = changes
        for (position, var change) in changes.enumerated() {
            if case let .upsert(record) = change, !record.idKey.isEmpty, let existing = next.record(idKey: record.idKey) {
                let observer = record.observerID == nil ? existing.observerID : nil
                let note = owner == nil && !record.hasNote ? existing.writtenNote : nil
                if observer != nil || note != nil {
                    change = .upsert(try record.keeping(observer: observer, note: note, layer: layer.name, index: position))
                    applied[position] = change
                }
            }
            if let owner {
                let (key, field): (String, String) = switch change {
                case let .insert(record), let .upsert(record): (record.idKey, "records[\(position)]")
                case let .delete(idKey): (idKey, "ids[\(position)]")
                }
                if !key.isEmpty, let existing = next.record(idKey: key), existing.observerID != owner {
                    throw .notOwner(layer: layer.name, field: field, id: existing.idJSON.stringValue ?? existing.idJSON.jsonString,
                                    reason: existing.observerID == nil
                                        ? "the record has no owner; only an admin key may change it"
                                        : "the record belongs to another observer; only its owner or an admin key may change it")
                }
            }
            switch change {
            case let .insert(record): try next.insert(record, index: position)
            case let .upsert(record): try next.upsert(record, index: position)
            case let .delete(idKey): try next.delete(idKey: idKey, index: position)
            }
        }
        return (next, applied)
    }
}

/// Validates stored records into layer records on the other cores while the store reads
/// the rest (``LayerJournal/loadLayer(_:kind:records:)``): each batch handed over is
/// validated on its own, and ``records()`` puts them back in store order.
///
/// A batch waits in a list until a job on the global queue, or the thread in
/// ``records()``, takes it. The thread that needs the records validates what no job has
/// started instead of waiting: Dispatch's pool on Linux adds its second worker only after
/// a while once the store's reading thread is done, and a busy pool would otherwise leave
/// the batches to one core (or none) while the caller sleeps.
final class StoredRecordReader: Sendable {
    private struct Batches {
        /// Batches handed over that no one has started, in store order.
        var waiting: [(offset: Int, records: [StoredRecord])] = []
        /// Each validated batch's first position in the store, and its records or its first error.
        var done: [(offset: Int, result: Result<[[LayerRecord?]], EngineError>)] = []
        /// How many records have been handed over.
        var handed = 0
    }

    private let kind: LayerKind
    private let layer: String
    /// Runs a job that validates the first waiting batch, if any is left by then.
    private let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Entered for each batch handed over, left once it is validated.
    private let group = DispatchGroup()
    private let batches = Mutex(Batches())

    /// - Parameter schedule: where the jobs run (the global queue; tests pass one that
    ///   holds them back).
    init(kind: LayerKind, layer: String,
         schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.global().async(execute: $0) }) {
        self.kind = kind
        self.layer = layer
        self.schedule = schedule
    }

    /// Hands over the next batch in store order, to be validated by a job or by ``records()``.
    func add(_ stored: [StoredRecord]) {
        group.enter()
        batches.withLock { batches in
            batches.waiting.append((batches.handed, stored))
            batches.handed += stored.count
        }
        schedule { [self] in _ = validateWaitingBatch() }
    }

    /// Validates the first batch no one has started; false when none was waiting.
    private func validateWaitingBatch() -> Bool {
        guard let (offset, stored) = batches.withLock({ $0.waiting.isEmpty ? nil : $0.waiting.removeFirst() }) else {
            return false
        }
        let result = Result { () throws(EngineError) -> [[LayerRecord?]] in
            try RecordBatches.leaves(count: stored.count) { (position) throws(EngineError) in
                try LayerRecord(stored: stored[position], kind: kind, layer: layer, index: offset + position)
            }
        }
        batches.withLock { $0.done.append((offset, result)) }
        group.leave()
        return true
    }

    /// Every record handed over, in store order (in the batches they were handed over
    /// in), once all are validated; the first bad
    /// record in store order is the error. The calling thread validates the batches no
    /// job has started, then waits for those being validated.
    func records() throws(EngineError) -> RecordBatches {
        while validateWaitingBatch() {}
        group.wait()
        let done = batches.withLock { batches in
            defer { batches.done = [] }
            return batches.done.sorted { $0.offset < $1.offset }
        }
        var records: [[[LayerRecord?]]] = []
        records.reserveCapacity(done.count)
        for batch in done { records.append(try batch.result.get()) }
        return RecordBatches(batches: records)
    }
}

extension LiveLayer {
    /// A layer of stored records, each validated again against the kind's schema: parsed
    /// on every core, then built in one go as from a layer file (the first bad record,
    /// in store order, is the error).
    public init(name: String, kind: LayerKind, stored: [StoredRecord],
                options: LiveClusterOptions = LiveClusterOptions(), sensitiveSpecies: Set<String> = []) throws(EngineError) {
        let leaves = try RecordBatches.concurrentLeaves(count: stored.count) { position throws(EngineError) in
            try LayerRecord(stored: stored[position], kind: kind, layer: name, index: position)
        }
        try self.init(name: name, kind: kind, records: RecordBatches(batches: [leaves]), options: options,
                      sensitiveSpecies: sensitiveSpecies)
    }
}
