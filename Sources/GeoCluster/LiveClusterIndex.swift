/// The `live` clustering algorithm: a layer that changes while it is queried.
///
/// Points live in one compressed quadtree per partition (a species, a category), in
/// Web Mercator quantised to 32 bits per axis. Every node keeps the totals of its points
/// (count, coordinate sums, weight, latest), so any quadtree cell's totals are at hand
/// without visiting points. The clusters at zoom `z` are the non-empty cells of a grid
/// about 1.5 times the radius wide (``LiveGrid``), placed at the mean position of their
/// points; neighbouring cells of one block of 16 x 16 cells whose positions would be
/// drawn closer than half the radius are merged for display, and so are pairs of items
/// across block edges that are each other's nearest (see
/// ``LiveClusterIndex/clusters(in:zoom:filter:)``).
///
/// The index is a value. A change (``insert(_:slot:)``, ``remove(slot:)``) copies only the
/// nodes on its path (`O(log n)` for a balanced layer, at most 32 levels), so a writer can
/// change a copy while readers keep answering from the version they hold. Unfiltered
/// queries keep the display groups of the blocks they form, shared by every version made
/// from the index and used while the block's points are unchanged (``GroupCache``).
///
/// Cluster ids are addresses: zoom, grid cell and which neighbouring cells are merged
/// into it. A cluster whose cells did not change keeps its id across unrelated updates.
public struct LiveClusterIndex: Sendable {
    public let options: LiveClusterOptions
    /// `options.grid`, worked out once.
    let grid: LiveGrid
    /// Whether points are also kept in one quadtree per partition, so that a query for a
    /// few partitions (species, categories) visits only their trees.
    public let partitioned: Bool
    /// How many partitions a cluster's summary lists by each ranking (see
    /// ``LiveSummary/partitionCounts``), `nil` for all. Summaries are kept with the display
    /// groups: a cluster of a few hundred species took 16 bytes for each.
    public let partitionsPerSummary: Int?
    /// Every point; in a partitioned index its nodes also count points per partition.
    var combined = QuadNode.root
    /// One quadtree per partition when ``partitioned``; the roots cover the whole world.
    var trees: [QuadNode] = []
    /// Where each slot's point is in the quadtrees, by slot (see ``SlotKey``): the leaves
    /// hold the points themselves.
    var table = PersistentVector<SlotKey>()
    /// Display groups of blocks kept between unfiltered queries; shared by every version
    /// of the index made from this one.
    let groupCache = GroupCache()
    public private(set) var count = 0

    /// Points and summed weights of one partition, from the root of its quadtree; `nil`
    /// in an index that keeps no tree per partition. A partition without points is (0, 0).
    public func totals(ofPartition partition: Int) -> (count: Int, weight: Int)? {
        guard partitioned else { return nil }
        guard trees.indices.contains(partition) else { return (0, 0) }
        return (trees[partition].aggregate.count, trees[partition].aggregate.weight)
    }

    /// Partitions are small integers; the bound keeps per-query arrays small.
    public static let maxPartitions = 1 << 16

    /// An empty index. A `partitioned` index keeps a quadtree per partition besides the
    /// combined one: about twice the memory and work per change, for filters by partition
    /// that visit only the chosen partitions and per-cluster counts by partition.
    public init(options: LiveClusterOptions = LiveClusterOptions(), partitioned: Bool = false,
                partitionsPerSummary: Int? = nil) throws(GeoClusterError) {
        try options.validate()
        if let partitionsPerSummary, partitionsPerSummary < 1 {
            throw .invalidOptions(reason: "partitionsPerSummary must be 1 or more, got \(partitionsPerSummary)")
        }
        self.options = options
        grid = options.grid
        self.partitioned = partitioned
        self.partitionsPerSummary = partitionsPerSummary
    }

    /// Builds an index of `points`, each at the slot of its position in the array. Points
    /// are checked as ``insert(_:slot:)`` checks them (the first bad one throws), and the
    /// quadtrees are then built in one go (see ``load(_:)``).
    public init(points: [LivePoint], options: LiveClusterOptions = LiveClusterOptions(),
                partitioned: Bool = false, partitionsPerSummary: Int? = nil) throws(GeoClusterError) {
        try self.init(options: options, partitioned: partitioned, partitionsPerSummary: partitionsPerSummary)
        for (slot, point) in points.enumerated() {
            try Self.validate(point, slot: slot)
        }
        load(points)
    }

    /// Number of slots, used and free; the next unused slot.
    public var slotCount: Int { table.count }

    /// The point at a slot, `nil` if the slot is free or beyond ``slotCount``.
    public func point(at slot: Int) -> LivePoint? {
        entry(at: slot)?.point
    }

    /// Adds a point at a free slot (``slotCount`` or a slot freed by ``remove(slot:)``).
    public mutating func insert(_ point: LivePoint, slot: Int) throws(GeoClusterError) {
        try Self.validate(point, slot: slot)
        guard slot >= 0, slot <= table.count, slot < Int(UInt32.max) else {
            throw .invalidOptions(reason: "slot \(slot) is beyond the next free slot \(table.count)")
        }
        guard slot == table.count || !table[slot].isTaken else {
            throw .invalidOptions(reason: "slot \(slot) is taken")
        }
        let entry = LeafEntry(point, slot: UInt32(slot))
        if slot == table.count { table.append(SlotKey(entry)) } else { table[slot] = SlotKey(entry) }
        Self.insert(entry, into: &combined, bucketSize: options.bucketSize, histogram: partitioned)
        if partitioned {
            while trees.count <= point.partition { trees.append(QuadNode.root) }
            Self.insert(entry, into: &trees[point.partition], bucketSize: options.bucketSize, histogram: false)
        }
        count += 1
    }

    /// Checks what a point brings: a valid coordinate (reported at `slot`) and a partition
    /// within bounds. Whether the slot is free depends on the index; ``insert(_:slot:)``
    /// checks that after this.
    package static func validate(_ point: LivePoint, slot: Int) throws(GeoClusterError) {
        try validatePosition(point, slot: slot)
        try validatePartition(point)
    }

    /// The first check of ``validate(_:slot:)``: the coordinate.
    package static func validatePosition(_ point: LivePoint, slot: Int) throws(GeoClusterError) {
        _ = try Coordinate.validated(longitude: point.coordinate.longitude,
                                     latitude: point.coordinate.latitude, index: slot)
    }

    /// The second check of ``validate(_:slot:)``: the partition.
    package static func validatePartition(_ point: LivePoint) throws(GeoClusterError) {
        guard (0..<maxPartitions).contains(point.partition) else {
            throw .invalidOptions(reason: "partition must be within 0..<\(maxPartitions), got \(point.partition)")
        }
    }

    /// Fills an empty index with points that passed ``validate(_:slot:)``, each at the slot
    /// of its position: the table, then every quadtree from the points sorted along the
    /// Z-order curve (see ``BulkBuilder``), instead of a walk from the root per point.
    package mutating func load(_ points: [LivePoint]) {
        let pending = startLoad(points)
        finishLoad(combined: pending.tree(0), partitions: pending.tree(1))
    }

    /// The first step of ``load(_:)``: fills the table and sorts the points along the
    /// Z-order curve. The trees are then built by ``PendingTrees/tree(_:)`` (its two
    /// parts on two threads, if wanted) and put in by ``finishLoad(combined:partitions:)``.
    package mutating func startLoad(_ points: [LivePoint]) -> PendingTrees {
        precondition(table.count == 0, "load fills an empty index")
        precondition(points.count < Int(UInt32.max), "slots are 32-bit")
        let entries = points.indices.map { slot in LeafEntry(points[slot], slot: UInt32(slot)) }
        table = PersistentVector(entries.lazy.map(SlotKey.init))
        var keys: [BulkBuilder.Key] = []
        keys.reserveCapacity(points.count)
        var partitionCounts: [Int] = []
        for entry in entries {
            keys.append(BulkBuilder.Key(code: BulkBuilder.zOrder(entry.qx, entry.qy), slot: entry.slot,
                                        partition: entry.partition))
            if partitioned {
                let partition = Int(entry.partition)
                while partitionCounts.count <= partition { partitionCounts.append(0) }
                partitionCounts[partition] += 1
            }
        }
        count = points.count
        // Ties (points on one spot) stay in slot order, as a leaf keeps its entries: the
        // keys are made in slot order, and the sort is stable.
        RadixSort.sort(&keys) { $0.code }
        // The leaves of both trees read the entries by slot, each leaf's in slot order.
        return PendingTrees(entries: entries, keys: keys, partitionCounts: partitioned ? partitionCounts : nil,
                            bucketSize: options.bucketSize)
    }

    /// The quadtrees of a load, to be built: part 0 is the combined tree, part 1 the tree
    /// of each partition (none in an index without partitions). Either part may be built
    /// on its own thread.
    package struct PendingTrees: Sendable {
        /// The points' entries by slot.
        let entries: [LeafEntry]
        let keys: [BulkBuilder.Key]
        /// Points per partition in a partitioned index; `nil` otherwise.
        let partitionCounts: [Int]?
        let bucketSize: Int

        package func tree(_ part: Int) -> BuiltTrees {
            BuiltTrees(roots: roots(part))
        }

        private func roots(_ part: Int) -> [QuadNode] {
            guard !keys.isEmpty else { return [] }
            guard part == 1 else {
                let builder = BulkBuilder(entries: entries, keys: keys, bucketSize: bucketSize,
                                          histogram: partitionCounts != nil)
                return [builder.tree(0..<keys.count)]
            }
            guard let partitionCounts else { return [] }
            // A stable counting sort by partition keeps each partition's keys in Z-order.
            var starts = [Int](repeating: 0, count: partitionCounts.count + 1)
            for (partition, n) in partitionCounts.enumerated() { starts[partition + 1] = starts[partition] + n }
            var next = starts
            var byPartition = keys
            for key in keys {
                byPartition[next[Int(key.partition)]] = key
                next[Int(key.partition)] += 1
            }
            let builder = BulkBuilder(entries: entries, keys: byPartition, bucketSize: bucketSize,
                                      histogram: false)
            // Partitions without points below the largest one keep an empty root, as inserts leave them.
            return partitionCounts.indices.map { builder.tree(starts[$0]..<starts[$0 + 1]) }
        }
    }

    /// The roots of one part of a load's trees.
    package struct BuiltTrees: Sendable {
        let roots: [QuadNode]
    }

    /// The last step of a load: the trees that ``PendingTrees/tree(_:)`` built, part 0 as
    /// `combined` and part 1 as `partitions`.
    package mutating func finishLoad(combined: BuiltTrees, partitions: BuiltTrees) {
        if let root = combined.roots.first { self.combined = root }
        if !partitions.roots.isEmpty { trees = partitions.roots }
    }

    /// Removes the point at a slot, which becomes free; returns it, or `nil` if the slot
    /// held none.
    @discardableResult
    public mutating func remove(slot: Int) -> LivePoint? {
        guard let entry = entry(at: slot) else { return nil }
        Self.remove(entry, from: &combined, bucketSize: options.bucketSize, histogram: partitioned)
        if partitioned {
            Self.remove(entry, from: &trees[Int(entry.partition)], bucketSize: options.bucketSize, histogram: false)
        }
        table[slot] = .free
        count -= 1
        return entry.point
    }

    /// Moves or changes the point at a taken slot.
    public mutating func update(_ point: LivePoint, slot: Int) throws(GeoClusterError) {
        _ = try Coordinate.validated(longitude: point.coordinate.longitude,
                                     latitude: point.coordinate.latitude, index: slot)
        guard let old = remove(slot: slot) else {
            throw .invalidOptions(reason: "slot \(slot) is free")
        }
        do {
            try insert(point, slot: slot)
        } catch {
            try! insert(old, slot: slot) // Restores what was there: it was valid before.
            throw error
        }
    }

    /// Bounds of every point, `[west, south, east, north]` of their quantised positions
    /// (within a centimetre), `nil` when empty. The walk skips every subtree whose cell lies
    /// inside the bounds found so far.
    public var bounds: [Double]? {
        var minX = UInt32.max, minY = UInt32.max, maxX = UInt32.min, maxY = UInt32.min
        if combined.aggregate.count > 0 { combined.extremes(&minX, &minY, &maxX, &maxY) }
        guard minX <= maxX else { return nil }
        return [WebMercator.longitude(x: LeafEntry.unquantize(minX)), WebMercator.latitude(y: LeafEntry.unquantize(maxY)),
                WebMercator.longitude(x: LeafEntry.unquantize(maxX)), WebMercator.latitude(y: LeafEntry.unquantize(minY))]
    }

    /// The leaf entry of the point at a slot, found in the smallest tree that holds it by
    /// descending to its position; `nil` for a free slot or one beyond ``slotCount``.
    func entry(at slot: Int) -> LeafEntry? {
        // Slots below the table's count fit in 32 bits: insert and load keep them so.
        guard slot >= 0, slot < table.count else { return nil }
        let key = table[slot]
        guard key.isTaken else { return nil }
        let tree = partitioned && trees.indices.contains(Int(key.partition)) ? trees[Int(key.partition)] : combined
        return tree.entry(slot: UInt32(slot), qx: key.qx, qy: key.qy)
    }

    // MARK: Quadtree changes

    static func insert(_ entry: LeafEntry, into node: inout QuadNode, bucketSize: Int, histogram: Bool) {
        node.stamp = QuadNode.newStamp()
        node.aggregate.add(entry)
        if histogram { node.count(entry, sign: 1) }
        if node.isLeaf {
            node.entries.append(entry)
            if node.entries.count > bucketSize, node.level < 32 { split(&node, bucketSize: bucketSize, histogram: histogram) }
        } else {
            place(entry, under: &node, bucketSize: bucketSize, histogram: histogram)
        }
    }

    /// Puts an entry into the right child of an inner node (whose totals already count it).
    static func place(_ entry: LeafEntry, under node: inout QuadNode, bucketSize: Int, histogram: Bool) {
        for i in node.children.indices where node.children[i].contains(entry.qx, entry.qy) {
            insert(entry, into: &node.children[i], bucketSize: bucketSize, histogram: histogram)
            return
        }
        let childLevel = node.level + 1
        let quadrant = QuadNode.quadrant(entry.qx, entry.qy, level: childLevel)
        if let i = node.children.firstIndex(where: { $0.quadrant(at: childLevel) == quadrant }) {
            // A deeper child shares the quadrant: a new inner node where their paths part.
            let sibling = node.children[i]
            var common = childLevel
            while common + 1 < sibling.level,
                  QuadNode.cell(entry.qx, level: common + 1) == QuadNode.cell(sibling.qx, level: common + 1),
                  QuadNode.cell(entry.qy, level: common + 1) == QuadNode.cell(sibling.qy, level: common + 1) {
                common += 1
            }
            var parent = QuadNode(level: common, qx: entry.qx, qy: entry.qy)
            parent.isLeaf = false
            parent.aggregate = sibling.aggregate
            parent.aggregate.add(entry)
            var leaf = QuadNode(level: common + 1, qx: entry.qx, qy: entry.qy)
            leaf.aggregate.add(entry)
            leaf.entries = [entry]
            if histogram {
                parent.histogram = sibling.histogram
                parent.count(entry, sign: 1)
                leaf.count(entry, sign: 1)
            }
            let leafFirst = leaf.quadrant(at: common + 1) < sibling.quadrant(at: common + 1)
            parent.children = leafFirst ? [leaf, sibling] : [sibling, leaf]
            node.children[i] = parent
            return
        }
        var leaf = QuadNode(level: childLevel, qx: entry.qx, qy: entry.qy)
        leaf.aggregate.add(entry)
        leaf.entries = [entry]
        if histogram { leaf.count(entry, sign: 1) }
        let position = node.children.firstIndex { $0.quadrant(at: childLevel) > quadrant } ?? node.children.count
        node.children.insert(leaf, at: position)
    }

    /// Turns an overfull leaf into an inner node. When all its points share a deeper
    /// cell, one child at that cell takes them all, so a spot with thousands of points
    /// does not build a chain of single-child nodes.
    static func split(_ node: inout QuadNode, bucketSize: Int, histogram: Bool) {
        let entries = node.entries
        var common = 32
        let first = entries[0]
        for entry in entries.dropFirst() {
            let dx = first.qx ^ entry.qx, dy = first.qy ^ entry.qy
            common = min(common, (dx | dy).leadingZeroBitCount)
        }
        node.entries = []
        node.isLeaf = false
        node.children = []
        if common > node.level + 1 {
            var child = QuadNode(level: common, qx: first.qx, qy: first.qy)
            child.aggregate = node.aggregate
            child.histogram = node.histogram
            child.entries = entries
            if entries.count > bucketSize, common < 32 { split(&child, bucketSize: bucketSize, histogram: histogram) }
            node.children = [child]
            return
        }
        for entry in entries { place(entry, under: &node, bucketSize: bucketSize, histogram: histogram) }
    }

    static func remove(_ entry: LeafEntry, from node: inout QuadNode, bucketSize: Int, histogram: Bool) {
        node.stamp = QuadNode.newStamp()
        let wasLatest = node.aggregate.latestTime == entry.time && node.aggregate.latestSlot == entry.slot
        node.aggregate.subtract(entry)
        if histogram { node.count(entry, sign: -1) }
        if node.isLeaf {
            if let i = node.entries.firstIndex(where: { $0.slot == entry.slot }) { node.entries.remove(at: i) }
            if wasLatest { node.aggregate.resetLatest(node.entries) }
            return
        }
        guard let i = node.children.firstIndex(where: { $0.contains(entry.qx, entry.qy) }) else { return }
        remove(entry, from: &node.children[i], bucketSize: bucketSize, histogram: histogram)
        if node.children[i].aggregate.count == 0 {
            node.children.remove(at: i)
        } else if !node.children[i].isLeaf, node.children[i].aggregate.count <= bucketSize / 2 {
            // A small subtree folds back into one leaf.
            var entries: [LeafEntry] = []
            node.children[i].collectEntries(into: &entries)
            let aggregate = node.children[i].aggregate
            var leaf = QuadNode(level: node.children[i].level, qx: node.children[i].qx, qy: node.children[i].qy)
            leaf.aggregate = aggregate
            leaf.histogram = node.children[i].histogram
            leaf.entries = entries
            node.children[i] = leaf
        } else if !node.children[i].isLeaf, node.children[i].children.count == 1 {
            node.children[i] = node.children[i].children[0]
        }
        if node.children.isEmpty && node.level == 0 {
            node = QuadNode.root
            return
        }
        if wasLatest { node.aggregate.resetLatest(children: node.children) }
    }
}

extension LiveClusterIndex {
    /// Verifies every quadtree's invariants and that the trees hold exactly the table's
    /// points; for tests.
    public func _checkInvariants() -> Bool {
        guard combined._checkInvariants(histogram: partitioned) else { return false }
        var all: [LeafEntry] = []
        combined.collectEntries(into: &all)
        guard all.count == count else { return false }
        guard partitioned else { return trees.isEmpty }
        var total = 0
        for (partition, tree) in trees.enumerated() {
            guard tree.level == 0, tree._checkInvariants() else { return false }
            var entries: [LeafEntry] = []
            tree.collectEntries(into: &entries)
            for e in entries {
                let stored = table[Int(e.slot)]
                guard stored.isTaken, Int(stored.partition) == partition,
                      stored.qx == e.qx, stored.qy == e.qy else { return false }
            }
            total += entries.count
        }
        return total == count
    }
}
