import GeoCluster
import HashTreeCollections

/// The slot of each record of a live layer by its id key (``LayerRecord/idKey``).
///
/// The records a layer is built with (a million at once, from a file or a store) go into
/// a flat hash table, filled in the order of where each key's probe starts; keys inserted
/// after that go into a persistent map, which a write copies only in part. A table entry holds a slot and part of the key's
/// hash, not the key: a hit counts only when the record now at that slot has the key, so
/// a delete or a reused slot leaves the table as it is. Records without an id have no key
/// and cannot be found here.
struct IDSlots: Sendable {
    /// Open addressing with linear probing. Each entry: bits 32-63 the high half of the
    /// key's hash, bits 0-31 the slot plus one; 0 is free. Never changed once made, so
    /// every version of a layer shares it.
    private final class Table: Sendable {
        let entries: [UInt64]
        init(entries: [UInt64]) { self.entries = entries }
    }

    private var table: Table?
    /// Keys inserted since the table was made.
    private var added = TreeDictionary<String, Int>()

    init() {}

    /// The keys of `records`, each at the slot of its position, and the position of the
    /// first record whose key an earlier one holds (then the map is incomplete and only
    /// that position counts).
    static func build(_ records: RecordBatches) -> (slots: IDSlots, firstDuplicate: Int?) {
        var slots = IDSlots()
        let count = records.count
        guard count > 0 else { return (slots, nil) }
        guard count < Int(UInt32.max) else {
            // Beyond what an entry holds: every key in the map.
            for (slot, record) in records.enumerated() where !record.idKey.isEmpty {
                if slots.added.updateValue(slot, forKey: record.idKey) != nil { return (slots, slot) }
            }
            return (slots, nil)
        }
        // At most three quarters full.
        var capacity = 16
        while capacity - capacity / 4 < count { capacity <<= 1 }
        let mask = capacity - 1
        // The position each key's probe starts at and its entry, sorted by that position
        // (radix, stable): the entries then go in along the table rather than each to a
        // random place of it, which cost a cache miss per key (most of a million-record
        // build's time).
        var placed: [SIMD2<UInt64>] = []
        placed.reserveCapacity(count)
        var slot = 0
        for leaf in records.leaves {
            leaf.withUnsafeBufferPointer { leaf in
                for record in leaf {
                    let key = record!.idKey
                    if !key.isEmpty {
                        let hash = key.hashValue
                        placed.append(SIMD2(UInt64(hash & mask), Self.tag(hash) | UInt64(slot + 1)))
                    }
                    slot += 1
                }
            }
        }
        RadixSort.sortByFirst(&placed)
        var entries = [UInt64](repeating: 0, count: capacity)
        let anyDuplicate = entries.withUnsafeMutableBufferPointer { entries in
            for item in placed {
                let entry = item[1]
                var i = Int(item[0])
                while entries[i] != 0 {
                    if entries[i] & tagMask == entry & tagMask,
                       records[Int(entries[i] & slotMask) - 1].idKey == records[Int(entry & slotMask) - 1].idKey {
                        return true
                    }
                    i = (i + 1) & mask
                }
                entries[i] = entry
            }
            return false
        }
        if anyDuplicate {
            // The error names the first record whose key an earlier one holds: found in
            // record order.
            var seen = Set<String>()
            for (slot, record) in records.enumerated() where !record.idKey.isEmpty {
                if !seen.insert(record.idKey).inserted { return (slots, slot) }
            }
        }
        slots.table = Table(entries: entries)
        return (slots, nil)
    }

    private static let tagMask: UInt64 = 0xFFFF_FFFF_0000_0000
    private static let slotMask: UInt64 = 0x0000_0000_FFFF_FFFF

    private static func tag(_ hash: Int) -> UInt64 {
        UInt64(truncatingIfNeeded: hash) & tagMask
    }

    /// The slot of the record with this key; `idKey(slot)` is the key of the record now
    /// at a slot (`nil` for a free one).
    func slot(of key: String, idKey: (Int) -> String?) -> Int? {
        if let slot = added[key] { return slot }
        guard let table, !key.isEmpty else { return nil }
        return table.entries.withUnsafeBufferPointer { entries -> Int? in
            let mask = entries.count - 1
            let hash = key.hashValue
            let tag = Self.tag(hash)
            var i = hash & mask
            while entries[i] != 0 {
                if entries[i] & Self.tagMask == tag {
                    let slot = Int(entries[i] & Self.slotMask) - 1
                    if idKey(slot) == key { return slot }
                }
                i = (i + 1) & mask
            }
            return nil
        }
    }

    /// Records that the record with this (non-empty) key, which no record holds, is now
    /// at `slot`.
    mutating func insert(_ key: String, slot: Int) {
        added[key] = slot
    }

    /// Forgets the key of a record being deleted. A key from the table needs nothing:
    /// its slot no longer holds a record with the key.
    mutating func remove(_ key: String) {
        added[key] = nil
    }
}
