import Synchronization

/// A point as stored in a leaf: enough to place, filter, total and show it without a
/// lookup in the table. 32 bytes: its coordinate is its quantised position (``qx``,
/// ``qy``), shown as ``coordinate`` to within 7 mm.
struct LeafEntry: Sendable {
    var qx: UInt32
    var qy: UInt32
    var slot: UInt32
    var day: Int32
    var time: Int64
    var weight: Int32
    var month: UInt8
    /// In the byte that would otherwise pad the entry.
    var timeTag: UInt8
    var partition: UInt16

    init(_ point: LivePoint, slot: UInt32) {
        self.init(point, slot: slot, qx: Self.quantize(WebMercator.x(longitude: point.coordinate.longitude)),
                  qy: Self.quantize(WebMercator.y(latitude: point.coordinate.latitude)))
    }

    init(_ point: LivePoint, slot: UInt32, qx: UInt32, qy: UInt32) {
        self.qx = qx
        self.qy = qy
        self.slot = slot
        self.day = point.day
        self.time = point.time
        self.timeTag = point.timeTag
        self.weight = Int32(clamping: point.weight)
        self.month = UInt8(clamping: point.month)
        self.partition = UInt16(clamping: point.partition)
    }

    /// The point's position as shown: see ``coordinate(qx:qy:)``.
    var coordinate: Coordinate { Self.coordinate(qx: qx, qy: qy) }

    /// The coordinate shown for a point at a quantised position: the middle of its
    /// quantisation step, within half a step on each axis (2^-33 of the world's width,
    /// under 5 mm; under 7 mm in all) of the coordinate it was given; a point beyond
    /// ±85.05° is on the square's edge. Answers that must show a point exactly as given
    /// read it from where the caller keeps it (a layer's records).
    @inline(__always)
    static func coordinate(qx: UInt32, qy: UInt32) -> Coordinate {
        Coordinate(longitude: WebMercator.longitude(x: (Double(qx) + 0.5) / 4_294_967_296.0),
                   latitude: WebMercator.latitude(y: (Double(qy) + 0.5) / 4_294_967_296.0))
    }

    /// The point as the index holds it (weight, month and partition in the sizes above,
    /// the coordinate as ``coordinate``).
    var point: LivePoint {
        LivePoint(coordinate: coordinate, partition: Int(partition), weight: Int(weight), time: time,
                  timeTag: timeTag, day: day, month: Int(month))
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

/// Points of one partition under a node, and the sum of their weights (a sighting's
/// individuals).
struct PartitionCount: Sendable, Equatable {
    var partition: Int32
    var count: Int32
    var weight: Int64

    mutating func add(_ other: PartitionCount) {
        count += other.count
        weight += other.weight
    }
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
    /// The latest point's ``LivePoint/timeTag``, in what would be padding.
    var latestTimeTag: UInt8 = 0

    @inline(__always)
    mutating func add(_ entry: LeafEntry) {
        count += 1
        sumX += Int64(entry.qx)
        sumY += Int64(entry.qy)
        weight += Int(entry.weight)
        noteLatest(time: entry.time, slot: entry.slot, tag: entry.timeTag)
    }

    @inline(__always)
    mutating func add(_ other: NodeAggregate) {
        count += other.count
        sumX += other.sumX
        sumY += other.sumY
        weight += other.weight
        if other.latestSlot != UInt32.max {
            noteLatest(time: other.latestTime, slot: other.latestSlot, tag: other.latestTimeTag)
        }
    }

    mutating func subtract(_ entry: LeafEntry) {
        count -= 1
        sumX -= Int64(entry.qx)
        sumY -= Int64(entry.qy)
        weight -= Int(entry.weight)
    }

    /// Latest is the largest (time, slot) among points with a time.
    @inline(__always)
    mutating func noteLatest(time: Int64, slot: UInt32, tag: UInt8) {
        guard time != Int64.min else { return }
        if latestSlot == UInt32.max || time > latestTime || (time == latestTime && slot > latestSlot) {
            latestTime = time
            latestSlot = slot
            latestTimeTag = tag
        }
    }

    mutating func resetLatest(_ entries: [LeafEntry]) {
        latestTime = .min
        latestSlot = .max
        latestTimeTag = 0
        for entry in entries { noteLatest(time: entry.time, slot: entry.slot, tag: entry.timeTag) }
    }

    mutating func resetLatest(children: [QuadNode]) {
        latestTime = .min
        latestSlot = .max
        latestTimeTag = 0
        for child in children where child.aggregate.latestSlot != UInt32.max {
            noteLatest(time: child.aggregate.latestTime, slot: child.aggregate.latestSlot,
                       tag: child.aggregate.latestTimeTag)
        }
    }

    var x: Double { Double(sumX) / Double(count) / 4_294_967_296.0 }
    var y: Double { Double(sumY) / Double(count) / 4_294_967_296.0 }
}

/// Where a slot's point is in the quadtrees: its quantised position and partition, which
/// lead from a root to the leaf that holds its ``LeafEntry``. The index keeps one per
/// slot (12 bytes, where a copy of the entry took 56): reads by slot are rare (a removal,
/// an update), and the walk down is a few dozen nodes at most.
struct SlotKey: Sendable {
    var qx: UInt32 = 0
    var qy: UInt32 = 0
    var partition: UInt16 = 0
    /// False for a free slot.
    var isTaken = false

    static let free = SlotKey()

    init() {}

    init(_ entry: LeafEntry) {
        qx = entry.qx
        qy = entry.qy
        partition = entry.partition
        isTaken = true
    }
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

    /// Counts an entry into the histogram (`sign` 1) or out of it (-1).
    mutating func count(_ entry: LeafEntry, sign: Int32) {
        let partition = Int32(entry.partition)
        let change = PartitionCount(partition: partition, count: sign, weight: Int64(sign) * Int64(entry.weight))
        var low = 0, high = histogram.count
        while low < high {
            let mid = (low + high) / 2
            if histogram[mid].partition < partition { low = mid + 1 } else { high = mid }
        }
        if low < histogram.count, histogram[low].partition == partition {
            histogram[low].add(change)
            if histogram[low].count == 0 { histogram.remove(at: low) }
        } else {
            histogram.insert(change, at: low)
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

    /// The entry of the point at `slot`, whose quantised position is `(qx, qy)`.
    func entry(slot: UInt32, qx: UInt32, qy: UInt32) -> LeafEntry? {
        guard contains(qx, qy) else { return nil }
        if isLeaf { return entries.first { $0.slot == slot } }
        for child in children where child.contains(qx, qy) {
            return child.entry(slot: slot, qx: qx, qy: qy)
        }
        return nil
    }

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
            for e in entries { expected.count(e, sign: 1) }
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
            && (total.latestSlot == UInt32.max
                || (total.latestTime == aggregate.latestTime && total.latestTimeTag == aggregate.latestTimeTag))
    }
}
