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
    private var filling = StoredBatch(capacity: size)
    private var full: [[StoredRecord]] = []
    private var ended = false

    /// Adds a row, in store order: its id key, its feature's text, its checked fields.
    func append(idKey: String?, text: UnsafeRawBufferPointer, fields: UnsafeRawBufferPointer?) {
        condition.lock()
        defer { condition.unlock() }
        filling.append(idKey: idKey, text: text, fields: fields)
        if filling.count == Self.size {
            full.append(filling.take())
            condition.signal()
        }
    }

    /// No more rows will come (the query ended, or failed).
    func end() {
        condition.lock()
        defer { condition.unlock() }
        if filling.count > 0 { full.append(filling.take()) }
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

/// One batch of stored rows as a store reads them. The rows' bytes are copied as they are
/// (the text is not made a `String`, which would check it as UTF-8 once more: reading the
/// feature does) into two buffers of the batch, one for the texts and one for the checked
/// fields, which its stored records share: the reading thread, the critical path of a
/// rebuild, then makes two allocations per batch instead of one or two per row (with
/// their page faults), and the threads that build the records, which free them, no
/// longer wait on its malloc arena.
struct StoredBatch {
    private var rows: [(idKey: String?, text: Range<Int>, fields: Range<Int>?)] = []
    private var texts: [UInt8] = []
    private var fields: [UInt8] = []
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        rows.reserveCapacity(capacity)
    }

    var count: Int { rows.count }

    mutating func append(idKey: String?, text: UnsafeRawBufferPointer, fields checked: UnsafeRawBufferPointer?) {
        if rows.isEmpty { texts.reserveCapacity(capacity * 256) }
        let textRange = texts.count ..< texts.count + text.count
        texts.append(contentsOf: text)
        var range: Range<Int>?
        if let checked {
            if fields.isEmpty { fields.reserveCapacity(capacity * 128) }
            range = fields.count ..< fields.count + checked.count
            fields.append(contentsOf: checked)
        }
        rows.append((idKey, textRange, range))
    }

    /// The rows gathered, as stored records; the batch is empty again.
    mutating func take() -> [StoredRecord] {
        let sharedTexts = texts, sharedFields = fields
        texts = []
        fields = []
        defer { rows.removeAll(keepingCapacity: true) }
        return rows.map { row in
            StoredRecord(idKey: row.idKey, featureText: sharedTexts[row.text],
                         checkedFields: row.fields.map { sharedFields[$0] })
        }
    }
}
