import Synchronization

// Building the radius index: supercluster's `_cluster` for each zoom, with the neighbour
// lists of the last items computed ahead on a second core.

/// One flag per item of a level, set by the greedy pass when it places the item. The
/// pass is the only writer; the lookahead job reads the flags to skip placed items.
/// Relaxed atomics: a flag read late only costs the job a list nobody will ask for.
final class VisitedFlags: @unchecked Sendable {
    private var flags = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: 0)
    private var capacity = 0

    deinit {
        flags.deinitialize(count: capacity)
        flags.deallocate()
    }

    /// Clears the flags of items `0..<count`. Only while no job reads them.
    func reset(count: Int) {
        if count > capacity {
            flags.deinitialize(count: capacity)
            flags.deallocate()
            flags = .allocate(capacity: count)
            capacity = count
            for i in 0..<count { (flags + i).initialize(to: Atomic(false)) }
        } else {
            for i in 0..<count { flags[i].store(false, ordering: .relaxed) }
        }
    }

    subscript(i: Int) -> Bool {
        @inline(__always) get { flags[i].load(ordering: .relaxed) }
    }

    @inline(__always)
    func set(_ i: Int) { flags[i].store(true, ordering: .relaxed) }
}

/// Neighbour lists of the last items of a level, computed on another thread while the
/// greedy pass works through the first ones (see `Builder.cluster`).
final class LookaheadLists: @unchecked Sendable {
    /// Items from which the lookahead pays for handing work to another thread.
    static let minimumCount = 20_000

    let count: Int
    /// Lowest item whose list is complete (`count` before the first); lists are computed
    /// from the last item down, so every item from it on has one.
    let lowest: Atomic<Int>
    /// The item the greedy pass has reached; the job stops before it.
    let position = Atomic<Int>(0)
    // Written only by the job while it runs, read only once it has ended: `lowest`'s
    // final value and these arrays are then visible through the job's handshake.
    private var neighbors: [UInt32] = []
    private var first: [UInt32]
    private var end: [UInt32]

    init(count: Int) {
        self.count = count
        lowest = Atomic(count)
        first = [UInt32](repeating: 0, count: count)
        end = [UInt32](repeating: 0, count: count)
        // Allocated here rather than grown by the job: what another thread allocates
        // stays in its malloc arena after it is freed, which `malloc_trim` does not
        // return to the system. Pages never written cost no memory.
        room = count * Self.reservedNeighborsPerItem
        neighbors.reserveCapacity(room)
    }

    /// Room reserved per item; the job stops when it runs short, leaving the rest to
    /// the greedy pass. A list that would not fit is dropped, so the lists never hold
    /// more than `room` entries (which also keeps their offsets within `UInt32`).
    private static let reservedNeighborsPerItem = 8
    private let room: Int
    private static let roomForOneList = 1_024

    /// Starts the job that fills the lists from the last item down.
    /// Items already placed when the job reaches them are skipped: the greedy pass
    /// will not ask for their lists.
    func start(tree: KDTree, x: [Double], y: [Double], radius: Double, skipping placed: VisitedFlags) -> BackgroundJob {
        BackgroundJob { [self] job in
            var j = count - 1
            while j >= 0, !job.isStopRequested, j > position.load(ordering: .relaxed),
                  room - neighbors.count >= Self.roomForOneList {
                if placed[j] {
                    // The greedy pass marks an item placed just before it asks for the
                    // item's own list, so a skipped item is marked: that one caller
                    // computes the list itself.
                    end[j] = Self.skipped
                    lowest.store(j, ordering: .relaxed)
                    j -= 1
                    continue
                }
                let start = neighbors.count
                tree.within(x: x[j], y: y[j], radius: radius, into: &neighbors)
                guard neighbors.count <= room else {
                    neighbors.removeSubrange(start...)
                    break
                }
                first[j] = UInt32(start)
                end[j] = UInt32(neighbors.count)
                lowest.store(j, ordering: .relaxed)
                j -= 1
            }
        }
    }

    /// Marks in `end` an item the job skipped because it was already placed.
    private static let skipped = UInt32.max

    /// The list of item `i`, at or after ``lowest`` once the job has ended; nil when the
    /// job skipped the item.
    func neighbors(of i: Int) -> ArraySlice<UInt32>? {
        end[i] == Self.skipped ? nil : neighbors[Int(first[i])..<Int(end[i])]
    }
}

/// The greedy clustering of one zoom, supercluster's `_cluster`.
struct Builder<Value: Sendable> {
    let options: RadiusClusterOptions
    let inputCount: Int
    let aggregation: ClusterAggregation<Value>?
    var neighbors: [UInt32] = []
    /// Items of the level above already placed by the greedy pass.
    let visited = VisitedFlags()
    /// Storage reused from zoom to zoom while a level is built; each finished level is
    /// copied out at its exact size, so no level keeps the slack of the one above it.
    var scratch: LevelData

    /// Whether neighbour lists are computed ahead on another thread.
    let usingSecondCore: Bool

    init(options: RadiusClusterOptions, inputCount: Int, aggregation: ClusterAggregation<Value>?,
         usingSecondCore: Bool) {
        self.usingSecondCore = usingSecondCore
        self.options = options
        self.inputCount = inputCount
        self.aggregation = aggregation
        self.scratch = LevelData(capacity: 0, aggregating: aggregation != nil)
    }

    /// Clusters the items of `upper` (zoom + 1) into the items of `zoom`, recording in
    /// `upper` which cluster each merged item went into.
    mutating func cluster(_ upper: inout Level, zoom: Int, aggregates: inout [Value]) -> LevelData {
        let r = options.radiusPixels / (Double(options.extent) * RadiusClusterIndex.exp2(zoom))
        let count = upper.data.count
        visited.reset(count: count)
        scratch.removeAll()
        var next = scratch
        scratch = LevelData(capacity: 0, aggregating: aggregation != nil)

        // With a second core, another thread computes the neighbour lists of the last
        // items, from the end down, while this one works up from the start; when they
        // meet, this one takes the rest of the lists from it. The greedy pass itself stays
        // in order on this thread, so the result is the same as without the lookahead.
        let lists = LookaheadLists(count: usingSecondCore && count >= LookaheadLists.minimumCount ? count : 0)
        var lookahead = lists.count > 0
            ? lists.start(tree: upper.tree, x: upper.data.x, y: upper.data.y, radius: r, skipping: visited) : nil
        var listedFrom = count

        for i in 0..<count where !visited[i] {
            visited.set(i)
            let x = upper.data.x[i]
            let y = upper.data.y[i]
            neighbors.removeAll(keepingCapacity: true)
            if let job = lookahead {
                lists.position.store(i, ordering: .relaxed)
                if i >= lists.lowest.load(ordering: .relaxed) {
                    job.cancel()
                    lookahead = nil
                    listedFrom = lists.lowest.load(ordering: .relaxed)
                }
            }
            if i >= listedFrom, let listed = lists.neighbors(of: i) {
                neighbors.append(contentsOf: listed)
            } else {
                upper.tree.within(x: x, y: y, radius: r, into: &neighbors)
            }

            let originCount = Int(upper.data.pointCount[i])
            var numPoints = originCount
            for k in neighbors where !visited[Int(k)] {
                numPoints += Int(upper.data.pointCount[Int(k)])
            }

            if numPoints > originCount && numPoints >= options.minPoints {
                var wx = x * Double(originCount)
                var wy = y * Double(originCount)
                let id = (i << 5) + (zoom + 1) + inputCount
                var aggregateIndex = -1
                for neighbor in neighbors {
                    let k = Int(neighbor)
                    if visited[k] { continue }
                    visited.set(k)
                    let weight = Double(upper.data.pointCount[k])
                    wx += upper.data.x[k] * weight
                    wy += upper.data.y[k] * weight
                    upper.data.parentOrigin[k] = UInt32(i)
                    if let aggregation {
                        if aggregateIndex == -1 {
                            aggregateIndex = aggregates.count
                            aggregates.append(value(of: upper.data, at: i, aggregation, aggregates))
                        }
                        let childValue = value(of: upper.data, at: k, aggregation, aggregates)
                        aggregation.reduce(&aggregates[aggregateIndex], childValue)
                    }
                }
                upper.data.parentOrigin[i] = UInt32(i)
                next.append(x: wx / Double(numPoints), y: wy / Double(numPoints), sourceID: UInt32(id),
                            pointCount: numPoints, aggregateIndex: aggregateIndex)
            } else {
                next.appendCopy(of: upper.data, at: i)
                if numPoints > 1 {
                    for neighbor in neighbors {
                        let k = Int(neighbor)
                        if visited[k] { continue }
                        visited.set(k)
                        next.appendCopy(of: upper.data, at: k)
                    }
                }
            }
        }
        lookahead?.cancel()
        let level = next.compacted()
        next.removeAll()
        scratch = next
        return level
    }

    private func value(of data: LevelData, at i: Int, _ aggregation: ClusterAggregation<Value>,
                       _ aggregates: [Value]) -> Value {
        if data.pointCount[i] > 1 {
            return aggregates[Int(data.aggregates[i])]
        }
        return aggregation.map(Int(data.sourceID[i]))
    }
}
