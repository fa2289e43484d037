/// Sorting by integer keys where a radix sort beats a comparison sort: a query's few
/// thousand grid cells, the million points of a bulk load along the Z-order curve, and a
/// layer's id table built in one pass.
package enum RadixSort {
    /// Sorts `keys` ascending.
    package static func sort(_ keys: inout [UInt64]) {
        sort(&keys) { $0 }
    }

    /// Sorts `keys` by their bits above the lowest `8 * lowBytes`, keeping the order of
    /// keys that agree there: keys made in ascending order of what those low bytes hold
    /// end up sorted whole, without the passes over the low bytes.
    static func sort(_ keys: inout [UInt64], aboveLowBytes lowBytes: Int) {
        let shift = UInt64(8 * lowBytes)
        sort(&keys) { ($0 >> shift) << shift }
    }

    /// Sorts `pairs` by their first value ascending, keeping the order of pairs with
    /// equal first values (for other modules: specialised here).
    package static func sortByFirst(_ pairs: inout [SIMD2<UInt64>]) {
        sort(&pairs) { $0[0] }
    }

    /// Sorts `items` by `key` ascending, keeping the order of items with equal keys: a
    /// stable counting sort per byte, least significant first, skipping the bytes in which
    /// all keys agree.
    @inline(__always)
    static func sort<Item>(_ items: inout [Item], by key: (Item) -> UInt64) {
        guard items.count > 64 else {
            // An insertion sort, stable as well.
            for i in items.indices.dropFirst() {
                let item = items[i], k = key(item)
                var j = i
                while j > 0 && key(items[j - 1]) > k {
                    items[j] = items[j - 1]
                    j -= 1
                }
                items[j] = item
            }
            return
        }
        var allOnes = UInt64.max, anyOnes = UInt64(0)
        for item in items {
            let k = key(item)
            allOnes &= k
            anyOnes |= k
        }
        let varying = allOnes ^ anyOnes
        guard varying != 0 else { return }
        var scratch = items
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { starts in
            for byte in 0..<8 where varying >> UInt64(8 * byte) & 0xFF != 0 {
                let shift = UInt64(8 * byte)
                starts.initialize(repeating: 0)
                items.withUnsafeBufferPointer { source in
                    for item in source { starts[Int(key(item) >> shift & 0xFF)] += 1 }
                    var total = 0
                    for digit in 0..<256 {
                        let n = starts[digit]
                        starts[digit] = total
                        total += n
                    }
                    scratch.withUnsafeMutableBufferPointer { target in
                        for item in source {
                            let digit = Int(key(item) >> shift & 0xFF)
                            target[starts[digit]] = item
                            starts[digit] += 1
                        }
                    }
                }
                swap(&items, &scratch)
            }
        }
    }
}
