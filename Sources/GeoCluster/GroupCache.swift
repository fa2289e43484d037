import Synchronization

/// The display groups of blocks, formed by unfiltered queries and kept for the next ones.
///
/// An entry is the items of one block at one zoom with the stamp of the node that held the
/// block's points (``QuadNode/stamp``). It answers a later query only while the block's
/// points are held by a node of that stamp, that is while they have not changed: a
/// change copies the nodes on its path with new stamps. Versions of an index share its
/// cache, so readers of an older version and of the newest one both find their blocks.
/// When the kept items would exceed the budget, about half of the entries are dropped.
final class GroupCache: Sendable {
    final class Entry: Sendable {
        let stamp: UInt64
        let items: LiveClusterIndex.Items

        init(stamp: UInt64, items: LiveClusterIndex.Items) {
            self.stamp = stamp
            self.items = items
        }

        /// What the entry counts for in the budget: its items, at least one.
        var size: Int { max(1, items.features.count) }
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var size = 0
    }

    /// The smallest budget, in items, whatever the size of the index.
    static let minimumBudget = 65_536

    private let state = Mutex(State())

    init() {}

    /// The entry for `key` if its points still have `stamp`.
    func entry(_ key: UInt64, stamp: UInt64) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.stamp == stamp else { return nil }
            return entry
        }
    }

    /// Keeps `entry` for `key`, in place of what was kept for it; first drops about half
    /// of the entries if the kept items would exceed `budget`.
    func keep(_ entry: Entry, for key: UInt64, budget: Int) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.size -= old.size }
            if state.size + entry.size > budget {
                var drop = true
                for (key, old) in state.entries {
                    if drop {
                        state.entries[key] = nil
                        state.size -= old.size
                    }
                    drop.toggle()
                }
            }
            state.entries[key] = entry
            state.size += entry.size
        }
    }

    /// Entries and items kept; for tests and measurements.
    var usage: (entries: Int, items: Int) {
        state.withLock { ($0.entries.count, $0.size) }
    }
}
