import Dispatch
import Synchronization

/// The display groups of blocks, formed by unfiltered queries and kept for the next ones.
///
/// An entry is the items of one block at one zoom with the stamps of the nodes that held the
/// block's points (``QuadNode/stamp``, ``BlockStamp``). It answers a later query only while
/// the block's points are held by nodes of those stamps, that is while they have not
/// changed: a change copies the nodes on its path with new stamps. Versions of an index share its
/// cache, so readers of an older version and of the newest one both find their blocks.
/// When the kept items would exceed the budget, about half of the entries are dropped:
/// first the older half of those not prepared ahead of the first queries (see
/// ``protect(_:)``), found in a list of them in the order they were kept, so that a drop
/// costs in proportion to what it drops, not to the prepared entries.
final class GroupCache: Sendable {
    final class Entry: Sendable {
        let stamp: BlockStamp
        /// A block's items. In an entry of its items after the merges across its edges,
        /// the block's own items as its entry of groups holds them (the same storage
        /// while that entry is kept, so not kept twice), of which those in `merging`
        /// show as merged clusters instead.
        let items: LiveClusterIndex.Items
        /// The items that may merge with an item of a neighbouring block (see
        /// `LiveClusterIndex+Edges.swift`).
        let edges: [Int]
        /// In an entry of a block's items after merges: the indices of `items`, in
        /// order, that merged across an edge.
        let merging: [Int]
        /// In an entry of a block's items after merges: the clusters merged across an
        /// edge (positioned anywhere between the two blocks), first those where this
        /// block holds the item that ranks first; those from `foreignStart` on were
        /// merged with an item of another block that ranks first, and show with this
        /// block only when that block (`foreignBlocks`, by item) is not read too.
        let merged: LiveClusterIndex.Items
        let foreignStart: Int
        let foreignBlocks: [UInt64]
        /// The quadtree nodes whose stamps make `stamp` (in its order; `nil` for a stamp
        /// of 0), and in an entry of a block's groups of many points per cell, the cells'
        /// totals the groups were formed from. After a change, the changed nodes tell
        /// which cells changed: none within the block (or, for its items after merges,
        /// within the 5 x 5 blocks around it), and the items still hold; a few, and only
        /// those are gathered again, the others taken from here (see
        /// `LiveClusterIndex+Edges.swift`).
        let cells: LiveClusterIndex.KeptCells?
        let nodes: [QuadNode?]
        /// In an entry of a block's items after merges: `nil` when every item's merges
        /// were looked for; otherwise the part of the block (projected units) whose items'
        /// merges were, for views whose margin meets the block only there: the entry holds
        /// the block's own items in that part only (the views that read it show no other),
        /// and no nodes.
        let scope: LiveClusterIndex.UnitRect?
        /// The stamp of the last root node (of a version of the index) under which the
        /// entry was found to hold: while a query reads that version, its points are the
        /// same, and the block's stamp need not be taken again.
        private let checkedRoot = Atomic<UInt64>(0)

        func holds(underRoot root: UInt64) -> Bool {
            checkedRoot.load(ordering: .relaxed) == root
        }

        func check(underRoot root: UInt64) {
            checkedRoot.store(root, ordering: .relaxed)
        }

        convenience init(stamp: BlockStamp, items: LiveClusterIndex.Items, edges: [Int] = [], merging: [Int] = [],
             merged: LiveClusterIndex.Items = LiveClusterIndex.Items(), foreignBlocks: [UInt64] = [],
             cells: LiveClusterIndex.Grid? = nil, nodes: [QuadNode?] = [], scope: LiveClusterIndex.UnitRect? = nil) {
            // Kept for many queries: without the room that forming them reserved (the
            // cells' array is reserved for every contribution to them, often several
            // times as many as the cells). Items already trimmed keep their storage.
            self.init(stamp: stamp, items: items.trimmed(), edges: edges, merging: merging, merged: merged.trimmed(),
                      foreignBlocks: foreignBlocks, keptCells: cells.map(LiveClusterIndex.KeptCells.init), nodes: nodes,
                      scope: scope)
        }

        private init(stamp: BlockStamp, items: LiveClusterIndex.Items, edges: [Int], merging: [Int],
                     merged: LiveClusterIndex.Items, foreignBlocks: [UInt64], keptCells: LiveClusterIndex.KeptCells?,
                     nodes: [QuadNode?], scope: LiveClusterIndex.UnitRect?) {
            self.stamp = stamp
            self.items = items
            self.edges = edges
            self.merging = merging
            self.merged = merged
            self.foreignStart = merged.features.count - foreignBlocks.count
            self.foreignBlocks = foreignBlocks
            self.cells = keptCells
            self.nodes = nodes
            self.scope = scope
        }

        /// The same items under a new stamp.
        func restamped(_ stamp: BlockStamp, nodes: [QuadNode?]) -> Entry {
            Entry(stamp: stamp, items: items, edges: edges, merging: merging, merged: merged,
                  foreignBlocks: foreignBlocks, keptCells: cells, nodes: nodes, scope: scope)
        }

        /// What the entry counts for in the budget: its items, merged clusters and kept
        /// cells, at least one.
        var size: Int { max(1, items.features.count + merged.features.count + (cells?.cells.count ?? 0)) }

        /// What an entry of a block's items after merges counts for while the block's
        /// entry of groups holds the same items: its merged clusters, at least one.
        var sizeBeside: Int { max(1, merged.features.count) }

        /// The heap memory the entry takes, its items' storage included.
        var bytes: Int { bytesBeside + items.storageBytes }

        /// The heap memory the entry takes besides its items' storage: the entry itself
        /// and its other arrays.
        var bytesBeside: Int {
            Self.objectBytes + edges.storageBytes + merging.storageBytes + merged.storageBytes
                + foreignBlocks.storageBytes + (cells?.storageBytes ?? 0) + nodes.storageBytes
        }

        /// The entry object: the object header and its stored properties, as malloc
        /// rounds them.
        static var objectBytes: Int {
            let fields = MemoryLayout<BlockStamp>.stride + 2 * MemoryLayout<LiveClusterIndex.Items>.stride
                + 3 * MemoryLayout<[Int]>.stride + MemoryLayout<Int>.stride + MemoryLayout<LiveClusterIndex.KeptCells?>.stride
                + MemoryLayout<[QuadNode?]>.stride + MemoryLayout<LiveClusterIndex.UnitRect?>.stride
                + MemoryLayout<UInt64>.stride
            return (16 + fields + 15) & ~15
        }
    }

    /// The bit of a key that tells an entry of a block's items after merges from the
    /// entry of its groups (`LiveClusterIndex.resolvedKey` and `groupKey`).
    static let resolvedBit: UInt64 = 1 << 63

    /// An entry as kept: what it counts for in the budget, and whether that leaves out
    /// the items it shares with its block's entry of groups.
    private struct Kept {
        let entry: Entry
        let size: Int
        let shares: Bool
        /// The number it was kept under (see ``State/order``).
        var serial: UInt64 = 0
        /// Whether it is in ``State/order``: kept for a view, not prepared.
        var listed = false

        /// The heap memory it adds: without the items it shares.
        var bytes: Int { shares ? entry.bytesBeside : entry.bytes }
    }

    private struct State {
        var entries = ShardedTable<Kept>()
        var size = 0
        var bytes = 0
        var updates = 0
        /// Keys of the entries prepared ahead of the first queries, whatever entry now
        /// holds them.
        var protected: Set<UInt64> = []
        /// The entries not protected, oldest first from `head`, each by its key and the
        /// serial it was kept under: a listing is current while the key's entry is listed
        /// with that serial (one kept again, or protected, or removed leaves a stale one).
        var order: [(key: UInt64, serial: UInt64)] = []
        var head = 0
        var serial: UInt64 = 0
        /// Entries listed in `order`.
        var listed = 0

        /// Removes the entry of `key`, and with an entry of a block's groups, its entry
        /// after merges if that one shares its items (it is counted without them),
        /// unless `keeping` holds the same items; appends what it removed to `dropped`.
        mutating func remove(_ key: UInt64, keeping: LiveClusterIndex.Items? = nil, into dropped: inout [Entry]) {
            guard let old = entries.removeValue(forKey: key) else { return }
            size -= old.size
            bytes -= old.bytes
            if old.listed { listed -= 1 }
            dropped.append(old.entry)
            guard key & resolvedBit == 0, let partner = entries[key | resolvedBit], partner.shares else { return }
            if let keeping, keeping.sharesStorage(with: partner.entry.items) { return }
            entries.removeValue(forKey: key | resolvedBit)
            size -= partner.size
            bytes -= partner.bytes
            if partner.listed { listed -= 1 }
            dropped.append(partner.entry)
        }

        /// What `entry` would count for, kept for `key`: an entry of a block's items after
        /// merges whose items are those its block's kept entry holds counts for its
        /// merged clusters only.
        func charge(_ entry: Entry, for key: UInt64) -> Kept {
            var shares = false
            if key & resolvedBit != 0, let block = entries[key & ~resolvedBit] {
                shares = entry.items.sharesStorage(with: block.entry.items)
            }
            return Kept(entry: entry, size: shares ? entry.sizeBeside : entry.size, shares: shares)
        }

        /// Keeps `entry` for `key`, counted as ``charge(_:for:)`` says, listed in `order`
        /// unless the key is protected.
        mutating func insert(_ entry: Entry, for key: UInt64) {
            var kept = charge(entry, for: key)
            serial += 1
            kept.serial = serial
            if !protected.contains(key) {
                kept.listed = true
                listed += 1
                order.append((key, serial))
                compactOrder()
            }
            entries[key] = kept
            size += kept.size
            bytes += kept.bytes
        }

        /// Whether `listing` is the current one of its key's entry.
        func isCurrent(_ listing: (key: UInt64, serial: UInt64)) -> Bool {
            guard let kept = entries[listing.key] else { return false }
            return kept.listed && kept.serial == listing.serial
        }

        /// Protects the entry of `key` (see ``GroupCache/protect(_:)``).
        mutating func protect(_ key: UInt64) {
            guard entries[key] != nil else { return }
            protected.insert(key)
            if entries[key]!.listed {
                entries[key]!.listed = false
                listed -= 1
            }
        }

        /// Takes out the listings before `head` and, once the stale ones outnumber the
        /// current ones (and a thousand), those too: `order` stays within about twice the
        /// entries it lists, at a cost per listing that does not grow.
        mutating func compactOrder() {
            if head > 0 && head >= order.count / 2 {
                order.removeFirst(head)
                head = 0
            }
            guard order.count - head > 2 * listed + 1_024 else { return }
            order = order[head...].filter(isCurrent)
            head = 0
        }

        /// Drops the older half of the entries not protected (an entry after merges that
        /// shares its block's items goes with the block's entry), appending them to
        /// `dropped`.
        mutating func dropOlderViews(into dropped: inout [Entry]) {
            var left = (listed + 1) / 2
            while left > 0 && head < order.count {
                let listing = order[head]
                head += 1
                guard isCurrent(listing) else { continue }
                let before = listed
                remove(listing.key, into: &dropped)
                left -= before - listed
            }
            compactOrder()
        }

        /// Drops about half of all the entries (each other one in the table's order),
        /// protected or not, appending them to `dropped` (to be freed once the lock is
        /// released). An entry after merges that shares its block's items goes with the
        /// block's entry.
        mutating func dropHalfOfAll(into dropped: inout [Entry]) {
            var keys: [UInt64] = []
            var drop = true
            for key in entries.keys {
                if drop { keys.append(key) }
                drop.toggle()
            }
            dropped.reserveCapacity(dropped.count + keys.count)
            for key in keys {
                remove(key, into: &dropped)
                protected.remove(key)
                // The entry after merges that went with it is no longer prepared either.
                if key & resolvedBit == 0, entries[key | resolvedBit] == nil { protected.remove(key | resolvedBit) }
            }
        }
    }

    /// The smallest budget, in items, whatever the size of the index.
    static let minimumBudget = 65_536

    /// The budget of an index of `points` points that sets none: four items per point up
    /// to 4,000,000 items (a layer of up to a million points keeps about every block its
    /// views form, and prepares the map to zoom 9 on uniform points, every zoom of the
    /// Korea mixture), then half the points beyond 8M points (the memory of large layers, at
    /// about 90 to 150 bytes an item), and at least ``minimumBudget``.
    static func defaultBudget(points: Int) -> Int {
        max(minimumBudget, min(4 * points, 4_000_000), points / 2)
    }

    private let state = Mutex(State())

    init() {}

    /// The entry for `key` if its points still have `stamp`; it is then known to hold
    /// under `root` (the stamp of the root node of the version read, see
    /// ``entry(_:root:)``).
    func entry(_ key: UInt64, stamp: BlockStamp, root: UInt64) -> Entry? {
        let entry: Entry? = state.withLock { state in
            guard let entry = state.entries[key]?.entry, entry.stamp == stamp else { return nil }
            return entry
        }
        entry?.check(underRoot: root)
        return entry
    }

    /// The entry for `key` if it was found to hold under `root`, the stamp of the root
    /// node of the version read: a change anywhere gives the root a new stamp, so the
    /// entry's points are those of this version, without taking the block's stamp.
    func entry(_ key: UInt64, root: UInt64) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[key]?.entry, entry.holds(underRoot: root) else { return nil }
            return entry
        }
    }

    /// What is kept for `key`, whatever its stamp: after a change, the entry to update.
    func latest(_ key: UInt64) -> Entry? {
        state.withLock { $0.entries[key]?.entry }
    }

    /// Keeps `entry` for `key`, in place of what was kept for it, formed from the version
    /// whose root node has the stamp `root`. If the kept items would exceed `budget`, it
    /// first drops the older half of the entries not protected, and if that leaves less than
    /// a sixteenth of the budget free, about half of all. An entry of a block's items
    /// after merges counts for its merged clusters only while the block's entry of groups
    /// holds the same items (the entry of groups formed anew, or dropped, takes it along).
    func keep(_ entry: Entry, for key: UInt64, budget: Int, root: UInt64) {
        entry.check(underRoot: root)
        // Freed after the lock is released: the queries that read the cache wait on it.
        var dropped: [Entry] = []
        state.withLock { state in
            state.remove(key, keeping: entry.items, into: &dropped)
            if state.size + state.charge(entry, for: key).size > budget {
                state.dropOlderViews(into: &dropped)
                // Counted again: the drop may have taken the block's entry whose items it shares.
                if state.size + state.charge(entry, for: key).size > budget - budget / 16 {
                    state.dropHalfOfAll(into: &dropped)
                }
            }
            state.insert(entry, for: key)
        }
        Self.release(consume dropped)
    }

    /// Frees dropped entries: on a background queue when there are many, so that the
    /// query whose entry crossed the budget does not wait for half of the cache to be
    /// freed (at 10M points, tens of milliseconds).
    private static func release(_ dropped: [Entry]) {
        guard dropped.count > releasedInPlace else { return }
        releaseQueue.async {
            withExtendedLifetime(dropped) {}
            // Half of the kept groups, hundreds of megabytes in a large layer, freed from
            // the arenas of the threads that formed them: given back to the system
            // rather than kept in each arena (see ``HeapTrim/releaseFreePagesSoon()``).
            HeapTrim.releaseFreePagesSoon()
        }
    }

    /// Where dropped entries are freed, one batch after another; a caller that needs them
    /// gone (a test) waits with `releaseQueue.sync {}`.
    static let releaseQueue = DispatchQueue(label: "geo-cluster.kept-groups.release", qos: .utility)

    /// The most dropped entries the query that dropped them frees itself.
    static let releasedInPlace = 64

    /// Protects the entries of `keys` (those prepared ahead of the first queries, the
    /// costliest to form again) from being dropped while others can be: an entry that
    /// later takes the place of one of them, after a change, is protected too.
    func protect(_ keys: [UInt64]) {
        state.withLock { state in
            for key in keys { state.protect(key) }
            state.compactOrder()
        }
    }

    /// Notes a block's groups formed from kept cells' totals with only the changed cells
    /// gathered again.
    func noteUpdate() {
        state.withLock { $0.updates += 1 }
    }

    /// Blocks whose groups were formed from kept totals after a change; for tests and measurements.
    var updates: Int {
        state.withLock { $0.updates }
    }

    /// Entries protected from being dropped first; for tests and measurements.
    var protectedCount: Int {
        state.withLock { $0.protected.count }
    }

    /// The views' entries listed oldest first, and the listings kept for them, stale ones
    /// included; for tests.
    var listing: (entries: Int, listings: Int) {
        state.withLock { ($0.listed, $0.order.count - $0.head) }
    }

    /// Entries, items and the heap memory they take (``Entry/bytes``, an estimate: the
    /// items an entry after merges shares with its block's kept entry are counted once
    /// where that entry is counted without them, as in the items); for tests and
    /// measurements.
    var usage: (entries: Int, items: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.size, $0.bytes) }
    }
}

/// The stamps of the up to four quadtree nodes that hold a block's points (0 for none):
/// equal while none of the block's points changed.
struct BlockStamp: Sendable, Equatable {
    var a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0

    mutating func set(_ k: Int, _ stamp: UInt64) {
        switch k {
        case 0: a = stamp
        case 1: b = stamp
        case 2: c = stamp
        default: d = stamp
        }
    }

    var isEmpty: Bool { a == 0 && b == 0 && c == 0 && d == 0 }
}

extension Array {
    /// The heap memory the array's storage takes: the room for its elements and the
    /// header (none for an empty array, which takes no storage of its own).
    var storageBytes: Int { capacity == 0 ? 0 : 32 + capacity * MemoryLayout<Element>.stride }

    /// The elements in storage of their size, if the array has room for more than an
    /// eighth more; otherwise the array itself.
    func trimmed() -> [Element] {
        guard capacity - count > count / 8 + 2 else { return self }
        return withUnsafeBufferPointer { Array($0) }
    }
}

extension LiveClusterIndex.Items {
    /// Whether these items and `other` are the same storage (one value copied), so that
    /// keeping both costs the memory of one.
    func sharesStorage(with other: Self) -> Bool {
        func same<T>(_ a: [T], _ b: [T]) -> Bool {
            a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
        }
        return features.count == other.features.count && same(features, other.features)
            && same(positions, other.positions) && same(groups, other.groups) && same(summaries, other.summaries)
            && same(partitionCounts, other.partitionCounts)
    }

    /// The heap memory of the items' arrays.
    var storageBytes: Int {
        features.storageBytes + summaries.storageBytes + partitionCounts.storageBytes + positions.storageBytes
            + groups.storageBytes
    }

    /// The items with every array ``Array/trimmed()``.
    func trimmed() -> Self {
        var items = self
        items.features = features.trimmed()
        items.summaries = summaries.trimmed()
        items.partitionCounts = partitionCounts.trimmed()
        items.positions = positions.trimmed()
        items.groups = groups.trimmed()
        return items
    }
}

/// A table by key in 64 dictionaries, each key's by a hash of it: one that grows moves a
/// sixty-fourth of the entries, not all of them. (The kept groups of a layer prepared to
/// zoom 8, about 50,000 entries, took 3 ms of the query whose entry made one dictionary
/// grow.)
struct ShardedTable<Value> {
    /// 2^6 shards, picked by the top 6 bits of a key's hash.
    static var shardCount: Int { 64 }
    private var shards = [[UInt64: Value]](repeating: [:], count: shardCount)
    /// The entries in all the shards.
    private(set) var count = 0

    private static func shard(_ key: UInt64) -> Int {
        // The top 6 bits of a multiplicative hash: keys differ in their low bits (a
        // block's row) as much as in their high ones (zoom, column).
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }

    subscript(key: UInt64) -> Value? {
        get { shards[Self.shard(key)][key] }
        set {
            if let newValue {
                if shards[Self.shard(key)].updateValue(newValue, forKey: key) == nil { count += 1 }
            } else {
                _ = removeValue(forKey: key)
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> Value? {
        guard let old = shards[Self.shard(key)].removeValue(forKey: key) else { return nil }
        count -= 1
        return old
    }

    /// Every key, shard by shard.
    var keys: [UInt64] {
        var keys: [UInt64] = []
        keys.reserveCapacity(count)
        for shard in shards { keys.append(contentsOf: shard.keys) }
        return keys
    }
}
