import Atomics
import GeoCluster
import Synchronization

/// Holds the current version of a live layer. Readers load it with one atomic read and
/// no lock, then answer from that version however long they take; one writer at a time
/// applies a batch to a copy and publishes the result, so a reader sees all of a batch
/// or none of it.
public final class LiveLayerStore: Sendable {
    final class Version: AtomicReference, Sendable {
        let layer: LiveLayer
        init(_ layer: LiveLayer) { self.layer = layer }
    }

    private let current: ManagedAtomic<Version>
    private let writer = Mutex(())

    public init(_ layer: LiveLayer) {
        current = ManagedAtomic(Version(layer))
    }

    public var name: String { layer.name }
    public var kind: LayerKind { layer.kind }

    /// The current version.
    public var layer: LiveLayer { current.load(ordering: .acquiring).layer }

    /// One change of a write batch, as requests carry them.
    public enum Change: Sendable {
        case insert(LayerRecord)
        case upsert(LayerRecord)
        case delete(idKey: String)
    }

    /// Applies a batch atomically: every change, in order, or none when one of them
    /// fails (the error names it by its position). Returns the new version.
    @discardableResult
    public func apply(_ changes: [Change]) throws(EngineError) -> LiveLayer {
        try writer.withLock { _ throws(EngineError) -> LiveLayer in
            var next = current.load(ordering: .acquiring).layer
            for (position, change) in changes.enumerated() {
                switch change {
                case let .insert(record): try next.insert(record, index: position)
                case let .upsert(record): try next.upsert(record, index: position)
                case let .delete(idKey): try next.delete(idKey: idKey, index: position)
                }
            }
            next.version += 1
            current.store(Version(next), ordering: .releasing)
            return next
        }
    }
}
