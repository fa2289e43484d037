/// Records in the batches they were validated in, read as one collection in order: the
/// million records of a layer read from a store are not copied again into one array
/// (that copy took a core a fifth of a second at start-up, with the other core idle, and
/// held the records twice at the peak).
struct RecordBatches: RandomAccessCollection, Sendable {
    private let batches: [[LayerRecord]]
    /// The position of each batch's first record, then the count of all.
    private let starts: [Int]

    init(_ batches: [[LayerRecord]]) {
        self.batches = batches.filter { !$0.isEmpty }
        var starts = [0]
        starts.reserveCapacity(self.batches.count + 1)
        for batch in self.batches { starts.append(starts[starts.count - 1] + batch.count) }
        self.starts = starts
    }

    var startIndex: Int { 0 }
    var endIndex: Int { starts[starts.count - 1] }

    /// The record at `position` (a binary search for its batch; iterating walks the
    /// batches in turn).
    subscript(position: Int) -> LayerRecord {
        precondition(position >= 0 && position < endIndex, "record position \(position) out of 0..<\(endIndex)")
        var low = 0, high = batches.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return batches[low][position - starts[low]]
    }

    struct Iterator: IteratorProtocol {
        fileprivate let batches: [[LayerRecord]]
        fileprivate var batch = 0, offset = 0

        mutating func next() -> LayerRecord? {
            guard batch < batches.count else { return nil }
            let record = batches[batch][offset]
            offset += 1
            if offset == batches[batch].count {
                batch += 1
                offset = 0
            }
            return record
        }
    }

    func makeIterator() -> Iterator { Iterator(batches: batches) }
}
