/// Builds a quadtree from points sorted along the Z-order curve, where the points of
/// every cell form one run: a run of at most `bucketSize` points (or of points on one
/// spot) is a leaf, a larger one an inner node at the deepest cell its points share,
/// with one child per quadrant run below it.
///
/// The leaves hold the same points as the leaves that inserting the points one by one in
/// slot order leaves behind (a cell's points stay together until they outgrow the
/// bucket), and like those a leaf sits one level below its parent and keeps its entries
/// in slot order, so every walk visits the points in the same order (leaves pages, the
/// points of small groups) and later changes group points as they would. Inserts may
/// also leave an inner node one level below its parent above its only child (a leaf
/// that overflowed with all its points in one deeper cell) until the next remove below
/// it; such a node changes no answer, and the bulk build never makes one.
struct BulkBuilder {
    /// A point's position on the Z-order curve, its slot and partition, for sorting.
    struct Key {
        var code: UInt64
        var slot: UInt32
        var partition: UInt16
    }

    /// The points' leaf entries by slot: the entry of `keys[i]` is `entries[keys[i].slot]`.
    let entries: [LeafEntry]
    /// The keys of the points to build from, each tree's run sorted by code, then slot.
    let keys: [Key]
    let bucketSize: Int
    /// Whether nodes count points per partition (the combined tree of a partitioned index).
    let histogram: Bool

    /// Interleaves the bits of a position, y above x at every level, so that the
    /// 2-bit digit of level `l` (from the top) is ``QuadNode/quadrant(_:_:level:)``.
    @inline(__always)
    static func zOrder(_ x: UInt32, _ y: UInt32) -> UInt64 {
        spread(x) | spread(y) << 1
    }

    /// The position on the Z-order curve `code` stands for.
    @inline(__always)
    static func position(_ code: UInt64) -> (qx: UInt32, qy: UInt32) {
        (compact(code), compact(code >> 1))
    }

    /// The bits of `v` at the even bit positions of the result.
    @inline(__always)
    static func spread(_ v: UInt32) -> UInt64 {
        var w = UInt64(v)
        w = (w | w << 16) & 0x0000_FFFF_0000_FFFF
        w = (w | w << 8) & 0x00FF_00FF_00FF_00FF
        w = (w | w << 4) & 0x0F0F_0F0F_0F0F_0F0F
        w = (w | w << 2) & 0x3333_3333_3333_3333
        w = (w | w << 1) & 0x5555_5555_5555_5555
        return w
    }

    /// The even bits of `w`, packed: the inverse of ``spread(_:)``.
    @inline(__always)
    static func compact(_ w: UInt64) -> UInt32 {
        var w = w & 0x5555_5555_5555_5555
        w = (w | w >> 1) & 0x3333_3333_3333_3333
        w = (w | w >> 2) & 0x0F0F_0F0F_0F0F_0F0F
        w = (w | w >> 4) & 0x00FF_00FF_00FF_00FF
        w = (w | w >> 8) & 0x0000_FFFF_0000_FFFF
        w = (w | w >> 16) & 0x0000_0000_FFFF_FFFF
        return UInt32(w)
    }

    /// The root over `keys[run]`: a leaf while the run fits in a bucket, otherwise an inner
    /// node at level 0 however deep its points' common cell is, as inserts leave it.
    func tree(_ run: Range<Int>) -> QuadNode {
        if run.isEmpty { return QuadNode.root }
        if run.count <= bucketSize { return leaf(run, level: 0) }
        return inner(run, level: 0)
    }

    /// The node of the run of one quadrant cell at `level`.
    func node(_ run: Range<Int>, level: Int) -> QuadNode {
        if run.count <= bucketSize { return leaf(run, level: level) }
        let shared = (keys[run.lowerBound].code ^ keys[run.upperBound - 1].code).leadingZeroBitCount / 2
        // Points on one spot stay in one leaf, however many.
        if shared == 32 { return leaf(run, level: 32) }
        return inner(run, level: shared)
    }

    /// An inner node at `level` whose children are the run's quadrants one level deeper.
    func inner(_ run: Range<Int>, level: Int) -> QuadNode {
        let first = Self.position(keys[run.lowerBound].code)
        var node = QuadNode(level: level, qx: first.qx, qy: first.qy)
        node.isLeaf = false
        let shift = UInt64(2 * (31 - level))
        var start = run.lowerBound
        while start < run.upperBound {
            // The run's digits at this level ascend: find where this quadrant's run ends.
            let digit = keys[start].code >> shift & 3
            var low = start + 1, high = run.upperBound
            while low < high {
                let mid = (low + high) / 2
                if keys[mid].code >> shift & 3 == digit { low = mid + 1 } else { high = mid }
            }
            let child = self.node(start..<low, level: level + 1)
            node.aggregate.add(child.aggregate)
            node.children.append(child)
            start = low
        }
        if histogram {
            // Each child's counts ascend by partition: merged in one pass per child.
            var counts: [PartitionCount] = []
            for child in node.children { counts = Self.merged(counts, child.histogram) }
            node.histogram = counts.trimmed()
        }
        return node
    }

    /// A leaf at `level` with the run's entries in slot order: the run's slots are sorted,
    /// and each entry is then copied once from the table by slot, where sorting the
    /// entries themselves moved 32 bytes (48 then) at every step.
    func leaf(_ run: Range<Int>, level: Int) -> QuadNode {
        let first = Self.position(keys[run.lowerBound].code)
        var node = QuadNode(level: level, qx: first.qx, qy: first.qy)
        var bySlot: [LeafEntry] = []
        bySlot.reserveCapacity(run.count)
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: run.count) { buffer in
            var slots = buffer
            for (i, position) in run.enumerated() { slots.initializeElement(at: i, to: keys[position].slot) }
            slots.sort()
            for slot in slots { bySlot.append(entries[Int(slot)]) }
        }
        node.entries = bySlot
        for entry in node.entries { node.aggregate.add(entry) }
        if histogram {
            // The entries' partitions sorted (each with its entry's place), then counted
            // run by run, where counting entry by entry inserted into a sorted array.
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: bySlot.count) { buffer in
                var byPartition = buffer
                for (i, entry) in bySlot.enumerated() {
                    byPartition.initializeElement(at: i, to: UInt64(entry.partition) << 32 | UInt64(i))
                }
                byPartition.sort()
                var counts: [PartitionCount] = []
                for item in byPartition {
                    let entry = bySlot[Int(truncatingIfNeeded: item & 0xFFFF_FFFF)]
                    let one = PartitionCount(partition: Int32(entry.partition), count: 1, weight: Int64(entry.weight))
                    if let last = counts.last, last.partition == one.partition {
                        counts[counts.count - 1].add(one)
                    } else {
                        counts.append(one)
                    }
                }
                node.histogram = counts.trimmed()
            }
        }
        return node
    }

    /// The counts of `a` and `b` (each ascending by partition) summed by partition,
    /// ascending.
    static func merged(_ a: [PartitionCount], _ b: [PartitionCount]) -> [PartitionCount] {
        if a.isEmpty { return b }
        var result: [PartitionCount] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if a[i].partition < b[j].partition {
                result.append(a[i]); i += 1
            } else if b[j].partition < a[i].partition {
                result.append(b[j]); j += 1
            } else {
                var sum = a[i]
                sum.add(b[j])
                result.append(sum); i += 1; j += 1
            }
        }
        result.append(contentsOf: a[i...])
        result.append(contentsOf: b[j...])
        return result
    }
}
