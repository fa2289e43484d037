/// One point of a live layer, as the index sees it: where it is and the few values that
/// filters and aggregates need. What the point means (a sighting, a place) stays with
/// the caller, who addresses points by slot.
public struct LivePoint: Sendable, Hashable {
    /// Where the point is. The index keeps it quantised to 2^-32 of the Web Mercator
    /// square per axis and gives back (in a point's features, ``LiveClusterIndex/point(at:)``
    /// and distances) the middle of its step: within 7 mm of the
    /// coordinate given, not always the same digits, except beyond ±85.05°, where it is
    /// moved to the square's edge (where Web Mercator maps stop). Callers that show a point
    /// as given keep its coordinate themselves (see
    /// ``LiveClusterIndex/points(within:of:filter:coordinateOfSlot:distanceMeters:)``).
    public var coordinate: Coordinate
    /// The point's class for filtering and per-cluster counts (a species, a category);
    /// `0..<LiveClusterIndex.maxPartitions`. Layers without classes use 0.
    public var partition: Int
    /// Summed per cluster (individuals of a sighting); 1 where nothing is counted.
    public var weight: Int
    /// Seconds since 1970 for the `latest` aggregate; `Int64.min` when the point has no time.
    public var time: Int64
    /// A byte the caller attaches to ``time`` and gets back with a cluster's latest time
    /// (``LiveSummary/latestTimeTag``): what it needs besides the instant to write that
    /// time (an offset, say) without looking the point up. 0 when it has none.
    public var timeTag: UInt8
    /// Local calendar day (days since 1970-01-01) for date filters.
    public var day: Int32
    /// Local month 1...12 for season filters, 0 when the point has no date.
    public var month: Int

    public init(coordinate: Coordinate, partition: Int = 0, weight: Int = 1, time: Int64 = .min,
                timeTag: UInt8 = 0, day: Int32 = 0, month: Int = 0) {
        self.coordinate = coordinate
        self.partition = partition
        self.weight = weight
        self.time = time
        self.timeTag = timeTag
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
///
/// A plain value of 40 bytes: its counts by partition lie in the ``LiveAnswer`` (or kept
/// items) that holds it, in ``partitionRange`` of its ``LiveAnswer/partitionCounts``, so
/// that kept groups and answers hold one array of counts rather than one per cluster, and
/// copying a summary into an answer retains nothing.
public struct LiveSummary: Sendable {
    /// Sum of the points' weights (individuals).
    public var weight: Int
    /// That point's ``LivePoint/time`` and ``LivePoint/timeTag`` (`Int64.min` and 0 when
    /// no point has a time): a caller that can write the time from them need not look
    /// the point up, which in a large layer is a read from memory no cache holds.
    public var latestTime: Int64
    /// Slots are below 2^32 (``LeafEntry``); `UInt32.max` for none.
    private var storedLatestSlot: UInt32
    private var countsStart: UInt32
    private var countsEnd: UInt32
    private var storedPartitionTotal: UInt32
    public var latestTimeTag: UInt8

    init(weight: Int, latestSlot: Int?, latestTime: Int64, latestTimeTag: UInt8,
         partitionRange: Range<Int>, partitionTotal: Int) {
        self.weight = weight
        self.latestTime = latestTime
        storedLatestSlot = latestSlot.map { UInt32(truncatingIfNeeded: $0) } ?? .max
        countsStart = UInt32(truncatingIfNeeded: partitionRange.lowerBound)
        countsEnd = UInt32(truncatingIfNeeded: partitionRange.upperBound)
        storedPartitionTotal = UInt32(truncatingIfNeeded: partitionTotal)
        self.latestTimeTag = latestTimeTag
    }

    /// Slot of the most recent point (largest time, then largest slot); `nil` when no
    /// point has a time.
    public var latestSlot: Int? { storedLatestSlot == .max ? nil : Int(storedLatestSlot) }

    /// Where the summary's points per partition lie in the ``LiveAnswer/partitionCounts``
    /// of its answer: largest count first, then by partition number. In an index with
    /// ``LiveClusterIndex/partitionsPerSummary`` `k`, only the partitions among the first
    /// `k` of that order and the `k` of largest weight (of equal weights, the earlier in
    /// that order): what answers that show the top `k` by either need.
    public var partitionRange: Range<Int> { Int(countsStart)..<Int(countsEnd) }

    /// Partitions with points in the cluster, all of them, whether or not the counts in
    /// ``partitionRange`` list them all.
    public var partitionTotal: Int { Int(storedPartitionTotal) }

    /// The same summary with its counts at `start` of another array.
    func moved(to start: Int) -> LiveSummary {
        var summary = self
        summary.countsEnd = UInt32(truncatingIfNeeded: start + Int(countsEnd) - Int(countsStart))
        summary.countsStart = UInt32(truncatingIfNeeded: start)
        return summary
    }
}

/// The points of one partition (a species, a category) in a cluster, and the sum of their
/// weights (a sighting's individuals).
///
/// Kept in 16 bytes rather than three `Int`s' 24: kept display groups and cells hold one
/// per species of each cluster and cell (up to a few hundred). A partition is below
/// ``LiveClusterIndex/maxPartitions`` and a count below 2^32, as slots are.
public struct PartitionTotal: Sendable, Hashable {
    private var storedPartition: UInt32
    private var storedCount: UInt32
    public var weight: Int

    public var partition: Int {
        get { Int(storedPartition) }
        set { storedPartition = UInt32(clamping: newValue) }
    }

    public var count: Int {
        get { Int(storedCount) }
        set { storedCount = UInt32(clamping: newValue) }
    }

    public init(partition: Int, count: Int, weight: Int) {
        storedPartition = UInt32(clamping: partition)
        storedCount = UInt32(clamping: count)
        self.weight = weight
    }

    mutating func add(_ other: PartitionTotal) {
        let (sum, overflow) = storedCount.addingReportingOverflow(other.storedCount)
        storedCount = overflow ? .max : sum
        weight += other.weight
    }
}

/// The answer of a live query: features, and for each cluster feature the summary its
/// ``ClusterFeature/aggregateIndex`` points to.
public struct LiveAnswer: Sendable {
    public var features: [ClusterFeature]
    public var summaries: [LiveSummary]
    /// The counts by partition of all ``summaries``, each summary's in its
    /// ``LiveSummary/partitionRange``.
    public var partitionCounts: [PartitionTotal] = []
    /// False when a query with a feature limit stopped once it passed it: `features`
    /// then holds more than the limit but not all of the answer.
    public var isComplete = true

    /// A summary's counts by partition, largest count first.
    public func partitionCounts(of summary: LiveSummary) -> ArraySlice<PartitionTotal> {
        partitionCounts[summary.partitionRange]
    }
}

extension LiveSummary {
    /// Appends `summary`, whose counts lie in `counts`, to `summaries`, and its counts to
    /// `into`; returns its index in `summaries`.
    @inline(__always)
    static func append(_ summary: LiveSummary, countsIn counts: [PartitionTotal],
                       to summaries: inout [LiveSummary], countsInto into: inout [PartitionTotal]) -> Int {
        let range = summary.partitionRange
        summaries.append(summary.moved(to: into.count))
        if !range.isEmpty { into.append(contentsOf: counts[range]) }
        return summaries.count - 1
    }
}
