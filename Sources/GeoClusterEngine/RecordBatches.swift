import GeoCluster

/// A layer's records in the arrays they were validated into, read as one collection in
/// order: arrays of ``PersistentVector/leafCapacity`` records (the last may be shorter),
/// which the layer's table of records then takes as its leaves. The million records of a
/// layer read from a store are thus written once, where they stay, instead of being
/// copied into one array and then into the table (those two copies took a core half a
/// second at start-up, and held the records twice at the peak).
struct RecordBatches: RandomAccessCollection, Sendable {
    /// Every array full but the last; never `nil` inside.
    let leaves: [[LayerRecord?]]
    let endIndex: Int

    private static var leafCapacity: Int { PersistentVector<LayerRecord?>.leafCapacity }

    private init(leaves: [[LayerRecord?]], count: Int) {
        self.leaves = leaves
        endIndex = count
    }

    /// The records of one array, copied into leaves.
    init(_ records: [LayerRecord]) {
        var leaves: [[LayerRecord?]] = []
        leaves.reserveCapacity((records.count + Self.leafCapacity - 1) / Self.leafCapacity)
        for start in stride(from: 0, to: records.count, by: Self.leafCapacity) {
            leaves.append(records[start ..< Swift.min(start + Self.leafCapacity, records.count)].map { $0 })
        }
        self.init(leaves: leaves, count: records.count)
    }

    /// The records of `batches` in order, each batch in leaves as ``leaves(_:)`` makes
    /// them. They are taken as they are when only the last leaf of all is short;
    /// otherwise (a batch whose size is not a multiple of a leaf's, before the last) the
    /// records are copied into full leaves.
    init(batches: [[[LayerRecord?]]]) {
        let all = batches.flatMap { $0 }.filter { !$0.isEmpty }
        let count = all.reduce(0) { $0 + $1.count }
        if all.dropLast().allSatisfy({ $0.count == Self.leafCapacity }) {
            self.init(leaves: all, count: count)
        } else {
            self.init(all.flatMap { $0.map { $0! } })
        }
    }

    /// The records `make` gives for `0..<count`, made into leaves, for ``init(batches:)``;
    /// the first error `make` throws.
    static func leaves(count: Int, _ make: (Int) throws(EngineError) -> LayerRecord) throws(EngineError) -> [[LayerRecord?]] {
        try (0 ..< leafCount(count)).map { leaf throws(EngineError) in try Self.leaf(leaf, of: count, make) }
    }

    /// The records `make` gives for `0..<count`, made into leaves on every core (each
    /// leaf by one thread, its records in order), for ``init(batches:)``; the error of the
    /// lowest position that failed. Records made this way are written once, into the
    /// arrays the table of records keeps (an array of them copied into leaves afterwards
    /// took one core a third of a second per million records at start-up). `recordsDone`,
    /// when given, is called with each run of positions whose records are all made, as
    /// ``FeatureSpans/concurrentMap(_:itemsEach:chunkDone:_:)`` calls its `chunkDone`.
    static func concurrentLeaves<Failure: Error>(
        count: Int, recordsDone: (@Sendable (Range<Int>) -> Void)? = nil,
        _ make: @Sendable (Int) throws(Failure) -> LayerRecord
    ) throws(Failure) -> [[LayerRecord?]] {
        var chunkDone: (@Sendable (Range<Int>) -> Void)?
        if let recordsDone {
            let capacity = leafCapacity
            chunkDone = { leaves in
                recordsDone(leaves.lowerBound * capacity ..< Swift.min(leaves.upperBound * capacity, count))
            }
        }
        return try FeatureSpans.concurrentMap(leafCount(count), itemsEach: leafCapacity,
                                              chunkDone: chunkDone) { leaf throws(Failure) in
            try Self.leaf(leaf, of: count, make)
        }
    }

    private static func leafCount(_ count: Int) -> Int { (count + leafCapacity - 1) / leafCapacity }

    /// Leaf `leaf` of the records `make` gives for `0..<count`, made in order.
    private static func leaf<Failure: Error>(_ leaf: Int, of count: Int,
                                             _ make: (Int) throws(Failure) -> LayerRecord) throws(Failure) -> [LayerRecord?] {
        let start = leaf * leafCapacity, end = Swift.min(start + leafCapacity, count)
        var records: [LayerRecord?] = []
        records.reserveCapacity(end - start)
        for position in start ..< end { records.append(try make(position)) }
        return records
    }

    var startIndex: Int { 0 }

    subscript(position: Int) -> LayerRecord {
        precondition(position >= 0 && position < endIndex, "record position \(position) out of 0..<\(endIndex)")
        return leaves[position / Self.leafCapacity][position % Self.leafCapacity]!
    }

    struct Iterator: IteratorProtocol {
        fileprivate let leaves: [[LayerRecord?]]
        fileprivate var leaf = 0, offset = 0

        mutating func next() -> LayerRecord? {
            guard leaf < leaves.count else { return nil }
            let record = leaves[leaf][offset]
            offset += 1
            if offset == leaves[leaf].count {
                leaf += 1
                offset = 0
            }
            return record
        }
    }

    func makeIterator() -> Iterator { Iterator(leaves: leaves) }
}
