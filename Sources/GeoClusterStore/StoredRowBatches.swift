import Foundation
import GeoClusterEngine

/// The rows of a layer read from a store, gathered into batches of ``size`` by the thread
/// that receives them (a PostgreSQL connection's event loop) and taken by the thread that
/// builds the layer, which validates each batch while the rest arrive
/// (``LayerJournal/loadLayer(_:kind:records:)``).
final class StoredRowBatches: @unchecked Sendable {
    /// How many rows a store hands over at a time.
    static let size = 8_192

    private let condition = NSCondition()
    private var filling: [StoredRecord] = []
    private var full: [[StoredRecord]] = []
    private var ended = false

    init() { filling.reserveCapacity(Self.size) }

    /// Adds a row, in store order.
    func append(_ record: StoredRecord) {
        condition.lock()
        defer { condition.unlock() }
        filling.append(record)
        if filling.count == Self.size {
            full.append(filling)
            filling = []
            filling.reserveCapacity(Self.size)
            condition.signal()
        }
    }

    /// No more rows will come (the query ended, or failed).
    func end() {
        condition.lock()
        defer { condition.unlock() }
        if !filling.isEmpty {
            full.append(filling)
            filling = []
        }
        ended = true
        condition.signal()
    }

    /// The next batch in store order, once it is full or the rows have ended; `nil` when
    /// they have ended and every batch was taken.
    func next() -> [StoredRecord]? {
        condition.lock()
        defer { condition.unlock() }
        while full.isEmpty && !ended { condition.wait() }
        return full.isEmpty ? nil : full.removeFirst()
    }
}
