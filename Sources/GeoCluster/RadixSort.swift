/// Sorting for the integer keys of a query's few thousand grid cells, where a radix sort
/// beats a comparison sort.
enum RadixSort {
    /// Sorts `keys` ascending: a stable counting sort per byte, least significant first,
    /// skipping the bytes in which all keys agree.
    static func sort(_ keys: inout [UInt64]) {
        guard keys.count > 64 else {
            keys.sort()
            return
        }
        var allOnes = UInt64.max, anyOnes = UInt64(0)
        for key in keys {
            allOnes &= key
            anyOnes |= key
        }
        let varying = allOnes ^ anyOnes
        var scratch = [UInt64](repeating: 0, count: keys.count)
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { starts in
            for byte in 0..<8 where varying >> UInt64(8 * byte) & 0xFF != 0 {
                let shift = UInt64(8 * byte)
                starts.initialize(repeating: 0)
                keys.withUnsafeBufferPointer { source in
                    for key in source { starts[Int(key >> shift & 0xFF)] += 1 }
                    var total = 0
                    for digit in 0..<256 {
                        let n = starts[digit]
                        starts[digit] = total
                        total += n
                    }
                    scratch.withUnsafeMutableBufferPointer { target in
                        for key in source {
                            let digit = Int(key >> shift & 0xFF)
                            target[starts[digit]] = key
                            starts[digit] += 1
                        }
                    }
                }
                swap(&keys, &scratch)
            }
        }
    }
}
