import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Building the radius index: supercluster's `_cluster` for each zoom, with the neighbour
// lists of the items just ahead of the greedy pass computed on a second core.

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

/// Neighbour lists of the items just ahead of the greedy pass, computed on another
/// thread while the pass works (see `Builder.cluster`).
///
/// The job takes the first item after the pass's position that is not placed, lists it
/// and moves on; the pass takes an item's list when the job has it, and computes it
/// itself otherwise. Working just ahead of the pass, the job seldom lists an item that
/// the pass then places as another's neighbour before reaching it: such a list is work
/// for nothing, and from the end of the level down (as the job once worked) most lists
/// of a level that clusters much were.
///
/// Each item has a state, claimed by one thread only: `open`, then `computing` and
/// `listed` (the job) or `taken` (the pass). The list and its bounds are written before
/// `listed` is stored with release ordering, and read after it is loaded with acquire.
final class LookaheadLists: @unchecked Sendable {
    /// Items from which the lookahead pays for handing work to another thread.
    static let minimumCount = 20_000

    static let open: UInt8 = 0
    static let computing: UInt8 = 1
    static let listed: UInt8 = 2
    static let taken: UInt8 = 3

    let count: Int
    /// The item the greedy pass has reached (-1 before the first); the job lists items
    /// after it only. Apart from the object, on a cache line of its own: the pass writes
    /// it while the job reads the object's other fields.
    private let position: UnsafeMutablePointer<Atomic<Int>>
    private static let positionWords = 16
    private let states: UnsafeMutablePointer<Atomic<UInt8>>
    /// The lists, one after another in the order the job made them, and each item's
    /// bounds in them; written by the job only, each list before its item is `listed`.
    private let storage: UnsafeMutablePointer<UInt32>
    private let first: UnsafeMutablePointer<UInt32>
    private let end: UnsafeMutablePointer<UInt32>
    /// Entries reserved in `storage`; the job stops when the next list does not fit,
    /// leaving the rest to the pass (which also keeps the bounds within `UInt32`).
    let room: Int

    /// Room reserved per item. Allocated by the building thread rather than grown by
    /// the job: what another thread allocates stays in its malloc arena after it is
    /// freed, which `malloc_trim` does not return to the system. Pages never written cost
    /// no memory.
    static let reservedNeighborsPerItem = 8

    init(count: Int) {
        self.count = count
        position = .allocate(capacity: Self.positionWords)
        for i in 0..<Self.positionWords { (position + i).initialize(to: Atomic(-1)) }
        states = .allocate(capacity: count)
        for i in 0..<count { (states + i).initialize(to: Atomic(Self.open)) }
        room = count * Self.reservedNeighborsPerItem
        storage = .allocate(capacity: max(room, 1))
        first = .allocate(capacity: count)
        end = .allocate(capacity: count)
    }

    deinit {
        position.deinitialize(count: Self.positionWords)
        position.deallocate()
        states.deinitialize(count: count)
        states.deallocate()
        storage.deallocate()
        first.deallocate()
        end.deallocate()
    }

    /// Starts the job. Items already placed when the job comes to them are skipped: the
    /// pass does not ask for their lists (it marks an item placed just before it asks
    /// for the item's own list, and then computes that list itself). So are the items
    /// marked in `alone` (``LoneItems``), which the pass copies without a list.
    func start(tree: KDTree, x: [Double], y: [Double], radius: Double, skipping placed: VisitedFlags,
               alone: [UInt8] = []) -> BackgroundJob {
        BackgroundJob { [self] job in
            var list: [UInt32] = []
            var used = 0
            var j = 0
            while !job.isStopRequested {
                let reached = position.pointee.load(ordering: .relaxed)
                if j < reached + Self.gap { j = reached + Self.gap }
                guard j < count else { break }
                if j > reached + Self.maximumLead {
                    // Far enough ahead: lists further on would more often be for items
                    // the pass places before it comes to them.
                    usleep(50)
                    continue
                }
                defer { j += 1 }
                guard !placed[j], alone.isEmpty || alone[j] == 0,
                      states[j].compareExchange(expected: Self.open, desired: Self.computing, ordering: .relaxed).exchanged
                else { continue }
                list.removeAll(keepingCapacity: true)
                tree.within(x: x[j], y: y[j], radius: radius, into: &list)
                guard used + list.count <= room else {
                    states[j].store(Self.open, ordering: .releasing)
                    break
                }
                for (k, neighbor) in list.enumerated() { storage[used + k] = neighbor }
                first[j] = UInt32(used)
                used += list.count
                end[j] = UInt32(used)
                states[j].store(Self.listed, ordering: .releasing)
            }
        }
    }

    /// What the greedy pass reads and writes, through pointers: a call on the object
    /// itself retained and released it each time, on a cache line the job reads.
    /// Valid while the object lives.
    var pass: Pass { Pass(position: position, states: states, storage: storage, first: first, end: end) }

    struct Pass {
        fileprivate let position: UnsafeMutablePointer<Atomic<Int>>
        fileprivate let states: UnsafeMutablePointer<Atomic<UInt8>>
        fileprivate let storage: UnsafeMutablePointer<UInt32>
        fileprivate let first: UnsafeMutablePointer<UInt32>
        fileprivate let end: UnsafeMutablePointer<UInt32>

        /// Tells the job that the pass has reached item `i`.
        @inline(__always)
        func publish(_ i: Int) { position.pointee.store(i, ordering: .relaxed) }

        /// Whether the job has listed item `i`.
        func isListed(_ i: Int) -> Bool { states[i].load(ordering: .acquiring) == LookaheadLists.listed }

        /// Appends item `i`'s list to `neighbors`: the job's, or one computed here when
        /// the job has not listed the item. The greedy pass calls it for each item it
        /// does not skip, in order, having published an item at most
        /// ``LookaheadLists/positionStride`` before it.
        func neighbors(of i: Int, tree: KDTree, x: Double, y: Double, radius: Double, into neighbors: inout [UInt32]) {
            var spins = 0
            while true {
                switch states[i].load(ordering: .acquiring) {
                case LookaheadLists.listed:
                    neighbors.append(contentsOf: UnsafeBufferPointer(start: storage + Int(first[i]),
                                                                     count: Int(end[i] - first[i])))
                    return
                case LookaheadLists.computing where spins < LookaheadLists.spinsBeforeComputing:
                    // The job is on this item: one neighbour query, unless its thread was
                    // preempted, in which case this one computes the list too.
                    spins += 1
                default:
                    if states[i].compareExchange(expected: LookaheadLists.open, desired: LookaheadLists.taken,
                                                 ordering: .relaxed).exchanged
                        || spins >= LookaheadLists.spinsBeforeComputing {
                        tree.within(x: x, y: y, radius: radius, into: &neighbors)
                        return
                    }
                }
            }
        }
    }

    /// How long the pass waits for a list the job is computing before computing it
    /// too: several times one neighbour query of a sparse level.
    static let spinsBeforeComputing = 20_000
    /// How far ahead of the pass's position the job starts: the two threads then seldom
    /// meet on one item or write the same cache lines.
    static let gap = 64
    /// How far ahead of the pass's position the job goes before it waits for the pass.
    static let maximumLead = 4_096
    /// The pass publishes its position at the first item it visits at least this many
    /// after the last it published.
    static let positionStride = 16
}

/// The items of a level whose own neighbour query would list no other item, found
/// without the query: a sparse level (most levels of points spread wide, and the spread
/// part of crowded ones) has mostly such items, and for them the greedy pass only copies
/// the item, whatever else the query would list (nothing it has not placed).
///
/// Items are put in a grid of square cells at least as wide as the radius plus the
/// rounding the kd-tree adds (it holds `Float` positions; a query is made from the
/// item's `Double` one), so that any item the query from an item could list lies in the
/// same or an adjacent cell. The items are sorted by cell, their index packed below the
/// cell in one 64-bit key, and one sweep with a cursor per neighbouring row finds the
/// items of the 3 x 3 cells around each. An item with none is lone; one with a few
/// (up to ``testedCandidates``) is lone when none of them passes the query's own distance
/// test, the same arithmetic on the same rounded positions. Items it cannot tell about
/// (many candidates) go through the query as before.
struct LoneItems {
    /// Items from which a level is looked through for lone items.
    static let minimumCount = 4_096
    /// A level of fewer lone items than `1 / fewest` of its items ends the search for them.
    static let fewest = 64
    /// Most other items of the 3 x 3 cells tested against the radius, item by item.
    static let testedCandidates = 8

    private var keys: [UInt64] = []
    /// 1 for an item whose query lists no other item, by item.
    private(set) var alone: [UInt8] = []

    /// Marks the items of `x`, `y` (projected positions in [0, 1]) whose neighbour query
    /// within `radius` (``KDTree/within(x:y:radius:into:)`` on a tree of these points)
    /// lists no other item; returns how many.
    mutating func find(x: [Double], y: [Double], radius: Double) -> Int {
        let n = x.count
        alone.removeAll(keepingCapacity: true)
        alone.append(contentsOf: repeatElement(0, count: n))
        guard n > 1 else {
            if n == 1 { alone[0] = 1 }
            return n
        }
        // The index in whole bytes, which the sort need not pass over: the keys are
        // made in the order of the index.
        let indexBytes = (Int.bitWidth - (n - 1).leadingZeroBitCount + 7) / 8
        let indexBits = UInt64(8 * indexBytes)
        let indexMask = (UInt64(1) << indexBits) - 1
        let cellBits = (64 - indexBits) / 2
        // Per axis, a listed item lies within radius (and the double arithmetic's error)
        // of the query's position, which lies within half a `Float` ulp below 1 (2^-25)
        // of the item's own `Float` position: a cell of radius + 2^-24 takes both.
        var side = radius * (1 + 1e-9) + 0x1p-24
        let maxCell = Double((UInt64(1) << cellBits) - 4)
        if 1 / side > maxCell { side = 1 / maxCell }
        let scale = 1 / side
        func cell(_ v: Double) -> UInt64 {
            let scaled = Double(Float(v)) * scale
            return scaled >= 0 ? UInt64(min(scaled, maxCell)) : 0
        }
        keys.removeAll(keepingCapacity: true)
        keys.reserveCapacity(n)
        for i in 0..<n {
            keys.append((cell(y[i]) << cellBits | cell(x[i])) << indexBits | UInt64(i))
        }
        RadixSort.sort(&keys, aboveLowBytes: indexBytes)
        let r2 = radius * radius
        let columnMask = (UInt64(1) << cellBits) - 1
        var found = 0
        keys.withUnsafeBufferPointer { keys in
            alone.withUnsafeMutableBufferPointer { alone in
                // Cursors: for each of the rows above, at and below an item's, the first
                // key at or after its left neighbour cell and the first after its right one.
                var from = (0, 0, 0), to = (0, 0, 0)
                for p in 0..<n {
                    let key = keys[p]
                    let cell = key >> indexBits
                    let cx = cell & columnMask
                    let cy = cell >> cellBits
                    let left = cx > 0 ? cx - 1 : 0
                    let right = cx + 1
                    func advance(_ cursor: inout Int, _ cursorEnd: inout Int, row: UInt64) {
                        let low = (row << cellBits | left) << indexBits
                        let high = (row << cellBits | right + 1) << indexBits
                        while cursor < n && keys[cursor] < low { cursor += 1 }
                        while cursorEnd < n && keys[cursorEnd] < high { cursorEnd += 1 }
                    }
                    advance(&from.1, &to.1, row: cy)
                    advance(&from.2, &to.2, row: cy + 1)
                    if cy > 0 {
                        advance(&from.0, &to.0, row: cy - 1)
                    } else {
                        from.0 = to.0
                    }
                    // Other items around; the item itself is one of its own row's.
                    let candidates = (to.0 - from.0) + (to.1 - from.1 - 1) + (to.2 - from.2)
                    guard candidates <= Self.testedCandidates else { continue }
                    var listed = false
                    if candidates > 0 {
                        let i = Int(key & indexMask)
                        let qx = x[i], qy = y[i]
                        func lists(_ range: Range<Int>) -> Bool {
                            for c in range where c != p {
                                // The tree's position of the candidate, as its query tests it.
                                let k = Int(keys[c] & indexMask)
                                let dx = Double(Float(x[k])) - qx
                                let dy = Double(Float(y[k])) - qy
                                if dx * dx + dy * dy <= r2 { return true }
                            }
                            return false
                        }
                        listed = lists(from.1..<to.1) || lists(from.0..<to.0) || lists(from.2..<to.2)
                    }
                    if !listed {
                        alone[Int(key & indexMask)] = 1
                        found += 1
                    }
                }
            }
        }
        return found
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
    /// The items of the level being clustered that need no neighbour query.
    var loneItems = LoneItems()
    /// Whether levels are still looked through for lone items: not once a level has few
    /// (the radius doubles from one level to the next, and lone items grow fewer).
    var findingLoneItems: Bool

    init(options: RadiusClusterOptions, inputCount: Int, aggregation: ClusterAggregation<Value>?,
         usingSecondCore: Bool, findingLoneItems: Bool) {
        self.usingSecondCore = usingSecondCore
        self.findingLoneItems = findingLoneItems
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

        // Items whose query would list no other item are copied without it.
        var alone: [UInt8] = []
        if findingLoneItems && count >= LoneItems.minimumCount {
            let found = loneItems.find(x: upper.data.x, y: upper.data.y, radius: r)
            alone = loneItems.alone
            if found < count / LoneItems.fewest { findingLoneItems = false }
        }

        // With a second core, another thread computes the neighbour lists of the items
        // just ahead of this one, which takes them as it comes to them. The greedy pass
        // itself stays in order on this thread, so the result is the same as without the
        // lookahead.
        let lists = usingSecondCore && count >= LookaheadLists.minimumCount ? LookaheadLists(count: count) : nil
        let lookahead = lists?.start(tree: upper.tree, x: upper.data.x, y: upper.data.y, radius: r, skipping: visited,
                                     alone: alone)
        let pass = lists?.pass

        // The next item at which the pass publishes its position: the pass skips placed
        // items, so a fixed multiple of the stride may never come.
        var publishAt = 0
        for i in 0..<count where !visited[i] {
            visited.set(i)
            if let pass, i >= publishAt {
                pass.publish(i)
                publishAt = i + LookaheadLists.positionStride
            }
            if !alone.isEmpty && alone[i] != 0 {
                // No other item within the radius: what the query would list changes nothing.
                next.appendCopy(of: upper.data, at: i)
                continue
            }
            let x = upper.data.x[i]
            let y = upper.data.y[i]
            neighbors.removeAll(keepingCapacity: true)
            if let pass {
                pass.neighbors(of: i, tree: upper.tree, x: x, y: y, radius: r, into: &neighbors)
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
        withExtendedLifetime(lists) {}
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
