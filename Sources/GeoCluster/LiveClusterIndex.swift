import Synchronization

/// One point of a live layer, as the index sees it: where it is and the few values that
/// filters and aggregates need. What the point means (a sighting, a place) stays with
/// the caller, who addresses points by slot.
public struct LivePoint: Sendable, Hashable {
    public var coordinate: Coordinate
    /// The point's class for filtering and per-cluster counts (a species, a category);
    /// `0..<LiveClusterIndex.maxPartitions`. Layers without classes use 0.
    public var partition: Int
    /// Summed per cluster (individuals of a sighting); 1 where nothing is counted.
    public var weight: Int
    /// Seconds since 1970 for the `latest` aggregate; `Int64.min` when the point has no time.
    public var time: Int64
    /// Local calendar day (days since 1970-01-01) for date filters.
    public var day: Int32
    /// Local month 1...12 for season filters, 0 when the point has no date.
    public var month: Int

    public init(coordinate: Coordinate, partition: Int = 0, weight: Int = 1, time: Int64 = .min,
                day: Int32 = 0, month: Int = 0) {
        self.coordinate = coordinate
        self.partition = partition
        self.weight = weight
        self.time = time
        self.day = day
        self.month = month
    }
}

/// Which points a live query counts. Every count, position and aggregate of the answer
/// describes only the points that pass.
public struct LiveFilter: Sendable {
    /// Allowed partitions (species, categories), `nil` for all. A query visits only the
    /// quadtrees of these partitions.
    public var partitions: [Int]?
    /// Allowed local days, inclusive.
    public var days: ClosedRange<Int32>?
    /// Allowed months as a bit set: bit `m` for month `m` (1...12).
    public var months: UInt16?
    /// Any other per-point test, by slot (for example a station's lines).
    public var predicate: (@Sendable (Int) -> Bool)?

    public init(partitions: [Int]? = nil, days: ClosedRange<Int32>? = nil, months: UInt16? = nil,
                predicate: (@Sendable (Int) -> Bool)? = nil) {
        self.partitions = partitions
        self.days = days
        self.months = months
        self.predicate = predicate
    }

    public static let all = LiveFilter()

    /// Partitions tested point by point, in an index without a tree per partition.
    var allowedPartitions: Set<Int>?

    /// Whether counts need a look at single points; otherwise node totals answer.
    var testsPoints: Bool { days != nil || months != nil || predicate != nil || allowedPartitions != nil }

    @inline(__always)
    func passes(_ entry: LeafEntry) -> Bool {
        if let allowedPartitions, !allowedPartitions.contains(Int(entry.partition)) { return false }
        if let days, !days.contains(entry.day) { return false }
        if let months, months & (1 << UInt16(entry.month)) == 0 { return false }
        if let predicate, !predicate(Int(entry.slot)) { return false }
        return true
    }
}

/// What a live cluster knows about its points besides count and position.
public struct LiveSummary: Sendable, Hashable {
    /// Sum of the points' weights (individuals).
    public var weight: Int
    /// Slot of the most recent point (largest time, then largest slot); `nil` when no
    /// point has a time.
    public var latestSlot: Int?
    /// Points per partition, largest count first, then by partition number.
    public var partitionCounts: [(partition: Int, count: Int)]

    public static func == (a: LiveSummary, b: LiveSummary) -> Bool {
        a.weight == b.weight && a.latestSlot == b.latestSlot
            && a.partitionCounts.map(\.partition) == b.partitionCounts.map(\.partition)
            && a.partitionCounts.map(\.count) == b.partitionCounts.map(\.count)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(weight)
        hasher.combine(latestSlot)
        for item in partitionCounts {
            hasher.combine(item.partition)
            hasher.combine(item.count)
        }
    }
}

/// The answer of a live query: features, and for each cluster feature the summary its
/// ``ClusterFeature/aggregateIndex`` points to.
public struct LiveAnswer: Sendable {
    public var features: [ClusterFeature]
    public var summaries: [LiveSummary]
}

/// The `live` clustering algorithm: a layer that changes while it is queried.
///
/// Points live in one compressed quadtree per partition (a species, a category), in
/// Web Mercator quantised to 32 bits per axis. Every node keeps the totals of its points
/// (count, coordinate sums, weight, latest), so any quadtree cell's totals are at hand
/// without visiting points. The clusters at zoom `z` are the non-empty grid cells of
/// level `z + levelShift` (each about `radius` pixels wide), placed at the mean position of
/// their points; neighbouring cells of one block of 16 x 16 cells whose positions would
/// be drawn closer than half the radius are merged for display (see
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
    /// Whether points are also kept in one quadtree per partition, so that a query for a
    /// few partitions (species, categories) visits only their trees.
    public let partitioned: Bool
    /// Every point; in a partitioned index its nodes also count points per partition.
    var combined = QuadNode.root
    /// One quadtree per partition when ``partitioned``; the roots cover the whole world.
    var trees: [QuadNode] = []
    /// Every point by slot, `nil` for a free slot.
    var table = PersistentVector<StoredPoint?>()
    /// Display groups of blocks kept between unfiltered queries; shared by every version
    /// of the index made from this one.
    let groupCache = GroupCache()
    public private(set) var count = 0

    /// Partitions are small integers; the bound keeps per-query arrays small.
    public static let maxPartitions = 1 << 16

    /// An empty index. A `partitioned` index keeps a quadtree per partition besides the
    /// combined one: about twice the memory and work per change, for filters by partition
    /// that visit only the chosen partitions and per-cluster counts by partition.
    public init(options: LiveClusterOptions = LiveClusterOptions(), partitioned: Bool = false) throws(GeoClusterError) {
        try options.validate()
        self.options = options
        self.partitioned = partitioned
    }

    /// Builds an index of `points`, each at the slot of its position in the array. Points
    /// are checked as ``insert(_:slot:)`` checks them (the first bad one throws), and the
    /// quadtrees are then built in one go (see ``load(_:)``).
    public init(points: [LivePoint], options: LiveClusterOptions = LiveClusterOptions(),
                partitioned: Bool = false) throws(GeoClusterError) {
        try self.init(options: options, partitioned: partitioned)
        for (slot, point) in points.enumerated() {
            try Self.validate(point, slot: slot)
        }
        load(points)
    }

    /// Number of slots, used and free; the next unused slot.
    public var slotCount: Int { table.count }

    /// The point at a slot, `nil` if the slot is free or beyond ``slotCount``.
    public func point(at slot: Int) -> LivePoint? {
        guard slot >= 0, slot < table.count else { return nil }
        return table[slot]?.point
    }

    /// Adds a point at a free slot (``slotCount`` or a slot freed by ``remove(slot:)``).
    public mutating func insert(_ point: LivePoint, slot: Int) throws(GeoClusterError) {
        try Self.validate(point, slot: slot)
        guard slot >= 0, slot <= table.count, slot < Int(UInt32.max) else {
            throw .invalidOptions(reason: "slot \(slot) is beyond the next free slot \(table.count)")
        }
        guard slot == table.count || table[slot] == nil else {
            throw .invalidOptions(reason: "slot \(slot) is taken")
        }
        let entry = LeafEntry(point, slot: UInt32(slot))
        let stored = StoredPoint(point: point, qx: entry.qx, qy: entry.qy)
        if slot == table.count { table.append(stored) } else { table[slot] = stored }
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
        _ = try Coordinate.validated(longitude: point.coordinate.longitude,
                                     latitude: point.coordinate.latitude, index: slot)
        guard (0..<maxPartitions).contains(point.partition) else {
            throw .invalidOptions(reason: "partition must be within 0..<\(maxPartitions), got \(point.partition)")
        }
    }

    /// Fills an empty index with points that passed ``validate(_:slot:)``, each at the slot
    /// of its position: the table, then every quadtree from the points sorted along the
    /// Z-order curve (see ``BulkBuilder``), instead of a walk from the root per point.
    package mutating func load(_ points: [LivePoint]) {
        precondition(table.count == 0, "load fills an empty index")
        precondition(points.count < Int(UInt32.max), "slots are 32-bit")
        guard !points.isEmpty else { return }
        var keys: [BulkBuilder.Key] = []
        keys.reserveCapacity(points.count)
        var partitionCounts: [Int] = []
        for (slot, point) in points.enumerated() {
            let entry = LeafEntry(point, slot: UInt32(slot))
            keys.append(BulkBuilder.Key(code: BulkBuilder.zOrder(entry.qx, entry.qy), slot: entry.slot,
                                        partition: entry.partition))
            table.append(StoredPoint(point: point, qx: entry.qx, qy: entry.qy))
            if partitioned {
                while partitionCounts.count <= point.partition { partitionCounts.append(0) }
                partitionCounts[point.partition] += 1
            }
        }
        count = points.count
        // Ties (points on one spot) stay in slot order, as a leaf keeps its entries.
        keys.sort { $0.code != $1.code ? $0.code < $1.code : $0.slot < $1.slot }
        combined = BulkBuilder(points: points, keys: keys, bucketSize: options.bucketSize, histogram: partitioned)
            .tree(0..<keys.count)
        guard partitioned else { return }
        // A stable counting sort by partition keeps each partition's keys in Z-order.
        var starts = [Int](repeating: 0, count: partitionCounts.count + 1)
        for (partition, n) in partitionCounts.enumerated() { starts[partition + 1] = starts[partition] + n }
        var next = starts
        var byPartition = keys
        for key in keys {
            byPartition[next[Int(key.partition)]] = key
            next[Int(key.partition)] += 1
        }
        keys = []
        let builder = BulkBuilder(points: points, keys: byPartition, bucketSize: options.bucketSize, histogram: false)
        // Partitions without points below the largest one keep an empty root, as inserts leave them.
        trees = partitionCounts.indices.map { builder.tree(starts[$0]..<starts[$0 + 1]) }
    }

    /// Removes the point at a slot, which becomes free; returns it, or `nil` if the slot
    /// held none.
    @discardableResult
    public mutating func remove(slot: Int) -> LivePoint? {
        guard slot >= 0, slot < table.count, let stored = table[slot] else { return nil }
        let entry = LeafEntry(stored.point, slot: UInt32(slot), qx: stored.qx, qy: stored.qy)
        Self.remove(entry, from: &combined, bucketSize: options.bucketSize, histogram: partitioned)
        if partitioned {
            Self.remove(entry, from: &trees[stored.point.partition], bucketSize: options.bucketSize, histogram: false)
        }
        table[slot] = nil
        count -= 1
        return stored.point
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

    // MARK: Quadtree changes

    static func insert(_ entry: LeafEntry, into node: inout QuadNode, bucketSize: Int, histogram: Bool) {
        node.stamp = QuadNode.newStamp()
        node.aggregate.add(entry)
        if histogram { node.count(partition: entry.partition, by: 1) }
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
                parent.count(partition: entry.partition, by: 1)
                leaf.count(partition: entry.partition, by: 1)
            }
            let leafFirst = leaf.quadrant(at: common + 1) < sibling.quadrant(at: common + 1)
            parent.children = leafFirst ? [leaf, sibling] : [sibling, leaf]
            node.children[i] = parent
            return
        }
        var leaf = QuadNode(level: childLevel, qx: entry.qx, qy: entry.qy)
        leaf.aggregate.add(entry)
        leaf.entries = [entry]
        if histogram { leaf.count(partition: entry.partition, by: 1) }
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
        if histogram { node.count(partition: entry.partition, by: -1) }
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

// MARK: - Bulk build

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

    /// Every point, by slot; a leaf makes its entries from them and the keys.
    let points: [LivePoint]
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
            var counts = node.children.flatMap(\.histogram)
            counts.sort { $0.partition < $1.partition }
            for item in counts {
                if let last = node.histogram.last, last.partition == item.partition {
                    node.histogram[node.histogram.count - 1].count += item.count
                } else {
                    node.histogram.append(item)
                }
            }
        }
        return node
    }

    /// A leaf at `level` with the run's entries in slot order.
    func leaf(_ run: Range<Int>, level: Int) -> QuadNode {
        let first = Self.position(keys[run.lowerBound].code)
        var node = QuadNode(level: level, qx: first.qx, qy: first.qy)
        var bySlot = Array(keys[run])
        bySlot.sort { $0.slot < $1.slot }
        node.entries = bySlot.map { key in
            let (qx, qy) = Self.position(key.code)
            return LeafEntry(points[Int(key.slot)], slot: key.slot, qx: qx, qy: qy)
        }
        for entry in node.entries {
            node.aggregate.add(entry)
            if histogram { node.count(partition: entry.partition, by: 1) }
        }
        return node
    }
}

// MARK: - Storage

/// A point as stored in a leaf: enough to place, filter, total and show it without a
/// lookup in the table.
struct LeafEntry: Sendable {
    /// The point as given, for answers that show it.
    var coordinate: Coordinate
    var qx: UInt32
    var qy: UInt32
    var slot: UInt32
    var day: Int32
    var time: Int64
    var weight: Int32
    var month: UInt8
    var partition: UInt16

    init(_ point: LivePoint, slot: UInt32) {
        self.init(point, slot: slot, qx: Self.quantize(WebMercator.x(longitude: point.coordinate.longitude)),
                  qy: Self.quantize(WebMercator.y(latitude: point.coordinate.latitude)))
    }

    init(_ point: LivePoint, slot: UInt32, qx: UInt32, qy: UInt32) {
        self.coordinate = point.coordinate
        self.qx = qx
        self.qy = qy
        self.slot = slot
        self.day = point.day
        self.time = point.time
        self.weight = Int32(clamping: point.weight)
        self.month = UInt8(clamping: point.month)
        self.partition = UInt16(clamping: point.partition)
    }

    /// Projected [0, 1] to 32 bits: steps of 2^-32 of the world, under a centimetre.
    @inline(__always)
    static func quantize(_ unit: Double) -> UInt32 {
        let scaled = unit * 4_294_967_296.0
        return scaled <= 0 ? 0 : scaled >= 4_294_967_295.0 ? UInt32.max : UInt32(scaled)
    }

    @inline(__always)
    static func unquantize(_ value: UInt32) -> Double { Double(value) / 4_294_967_296.0 }
}

/// Points of one partition under a node.
struct PartitionCount: Sendable, Equatable {
    var partition: Int32
    var count: Int32
}

struct StoredPoint: Sendable {
    var point: LivePoint
    var qx: UInt32
    var qy: UInt32
}

/// Totals of the points below a node. Coordinate sums are integers so that adding and
/// removing points never drifts.
struct NodeAggregate: Sendable {
    var count = 0
    var sumX: Int64 = 0
    var sumY: Int64 = 0
    var weight = 0
    var latestTime = Int64.min
    var latestSlot = UInt32.max

    @inline(__always)
    mutating func add(_ entry: LeafEntry) {
        count += 1
        sumX += Int64(entry.qx)
        sumY += Int64(entry.qy)
        weight += Int(entry.weight)
        noteLatest(time: entry.time, slot: entry.slot)
    }

    @inline(__always)
    mutating func add(_ other: NodeAggregate) {
        count += other.count
        sumX += other.sumX
        sumY += other.sumY
        weight += other.weight
        if other.latestSlot != UInt32.max { noteLatest(time: other.latestTime, slot: other.latestSlot) }
    }

    mutating func subtract(_ entry: LeafEntry) {
        count -= 1
        sumX -= Int64(entry.qx)
        sumY -= Int64(entry.qy)
        weight -= Int(entry.weight)
    }

    /// Latest is the largest (time, slot) among points with a time.
    @inline(__always)
    mutating func noteLatest(time: Int64, slot: UInt32) {
        guard time != Int64.min else { return }
        if latestSlot == UInt32.max || time > latestTime || (time == latestTime && slot > latestSlot) {
            latestTime = time
            latestSlot = slot
        }
    }

    mutating func resetLatest(_ entries: [LeafEntry]) {
        latestTime = .min
        latestSlot = .max
        for entry in entries { noteLatest(time: entry.time, slot: entry.slot) }
    }

    mutating func resetLatest(children: [QuadNode]) {
        latestTime = .min
        latestSlot = .max
        for child in children where child.aggregate.latestSlot != UInt32.max {
            noteLatest(time: child.aggregate.latestTime, slot: child.aggregate.latestSlot)
        }
    }

    var x: Double { Double(sumX) / Double(count) / 4_294_967_296.0 }
    var y: Double { Double(sumY) / Double(count) / 4_294_967_296.0 }
}

/// A node of a compressed quadtree: the cell `(qx, qy) >> (32 - level)` at `level`.
/// Children are strictly deeper cells in distinct quadrants, in quadrant order; a chain
/// of single children is never stored (a child may be many levels deeper).
struct QuadNode: Sendable {
    var level: Int
    /// Any quantised position inside the cell; the cell follows from `level`.
    var qx: UInt32
    var qy: UInt32
    var aggregate = NodeAggregate()
    /// Points per partition, by partition; kept only in the combined tree of a
    /// partitioned index.
    var histogram: [PartitionCount] = []
    var isLeaf = true
    var children: [QuadNode] = []
    var entries: [LeafEntry] = []
    /// Names the node's points: a new node, and a node whose points change, takes a stamp
    /// that no node had before in this process. Two nodes with one stamp hold the same
    /// points, which is what the display groups kept for a block of cells rely on (see
    /// ``GroupCache``).
    var stamp = QuadNode.newStamp()

    private static let stamps = Atomic<UInt64>(0)

    static func newStamp() -> UInt64 { stamps.add(1, ordering: .relaxed).newValue }

    mutating func count(partition: UInt16, by delta: Int) {
        var low = 0, high = histogram.count
        while low < high {
            let mid = (low + high) / 2
            if histogram[mid].partition < Int32(partition) { low = mid + 1 } else { high = mid }
        }
        if low < histogram.count, histogram[low].partition == Int32(partition) {
            histogram[low].count += Int32(delta)
            if histogram[low].count == 0 { histogram.remove(at: low) }
        } else {
            histogram.insert(PartitionCount(partition: Int32(partition), count: Int32(delta)), at: low)
        }
    }

    init(level: Int, qx: UInt32, qy: UInt32) {
        self.level = level
        self.qx = qx
        self.qy = qy
    }

    static var root: QuadNode { QuadNode(level: 0, qx: 0, qy: 0) }

    @inline(__always)
    static func cell(_ q: UInt32, level: Int) -> UInt32 { level == 0 ? 0 : q >> UInt32(32 - level) }

    @inline(__always)
    func contains(_ x: UInt32, _ y: UInt32) -> Bool {
        level == 0 || (Self.cell(x, level: level) == Self.cell(qx, level: level)
                       && Self.cell(y, level: level) == Self.cell(qy, level: level))
    }

    /// Quadrant order at a level: 0 north-west, 1 north-east, 2 south-west, 3 south-east.
    @inline(__always)
    static func quadrant(_ x: UInt32, _ y: UInt32, level: Int) -> Int {
        Int(cell(y, level: level) & 1) << 1 | Int(cell(x, level: level) & 1)
    }

    @inline(__always)
    func quadrant(at level: Int) -> Int { Self.quadrant(qx, qy, level: level) }

    func collectEntries(into result: inout [LeafEntry]) {
        if isLeaf {
            result.append(contentsOf: entries)
        } else {
            for child in children { child.collectEntries(into: &result) }
        }
    }

    /// Widens the extremes by the node's points, skipping subtrees whose cell lies
    /// inside the extremes found so far, so that only the outer edges are walked.
    func extremes(_ minX: inout UInt32, _ minY: inout UInt32, _ maxX: inout UInt32, _ maxY: inout UInt32) {
        if level > 0, minX <= maxX {
            let size = UInt64(1) << UInt64(32 - level)
            let x0 = UInt64(Self.cell(qx, level: level)) * size, y0 = UInt64(Self.cell(qy, level: level)) * size
            if x0 >= UInt64(minX), x0 + size - 1 <= UInt64(maxX), y0 >= UInt64(minY), y0 + size - 1 <= UInt64(maxY) {
                return
            }
        }
        if isLeaf {
            for e in entries {
                minX = min(minX, e.qx); maxX = max(maxX, e.qx)
                minY = min(minY, e.qy); maxY = max(maxY, e.qy)
            }
            return
        }
        for child in children { child.extremes(&minX, &minY, &maxX, &maxY) }
    }

    /// Verifies the node's invariants; for tests.
    func _checkInvariants(histogram checkHistogram: Bool = false) -> Bool {
        if checkHistogram {
            var entries: [LeafEntry] = []
            collectEntries(into: &entries)
            var expected = QuadNode.root
            for e in entries { expected.count(partition: e.partition, by: 1) }
            guard expected.histogram == histogram else { return false }
        }
        var total = NodeAggregate()
        if isLeaf {
            guard children.isEmpty else { return false }
            for e in entries {
                guard contains(e.qx, e.qy) else { return false }
                total.add(e)
            }
        } else {
            guard entries.isEmpty, !children.isEmpty || level == 0 else { return false }
            var lastQuadrant = -1
            for child in children {
                guard child.level > level, contains(child.qx, child.qy),
                      child._checkInvariants(histogram: checkHistogram) else { return false }
                let q = child.quadrant(at: level + 1)
                guard q > lastQuadrant else { return false }
                lastQuadrant = q
                total.add(child.aggregate)
            }
        }
        return total.count == aggregate.count && total.sumX == aggregate.sumX && total.sumY == aggregate.sumY
            && total.weight == aggregate.weight && total.latestSlot == aggregate.latestSlot
            && (total.latestSlot == UInt32.max || total.latestTime == aggregate.latestTime)
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
                guard let stored = table[Int(e.slot)], stored.point.partition == partition,
                      stored.qx == e.qx, stored.qy == e.qy else { return false }
            }
            total += entries.count
        }
        return total == count
    }
}
