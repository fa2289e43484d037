import GeoClusterTestSupport
import Testing
@testable import GeoCluster

/// The radix sort of the live index's cell order against the standard library's sort.
struct RadixSortTests {
    /// Keys shaped like the cell order's (count complement above, cell index below), keys
    /// with every byte varying, and keys with many repeats; short and long arrays.
    @Test(arguments: [0, 1, 64, 65, 300, 5_000])
    func sortsAsTheStandardSortDoes(count: Int) {
        var random = SeededRandom(seed: UInt64(count) + 7)
        let shapes: [(inout SeededRandom, Int) -> UInt64] = [
            { random, i in UInt64(UInt32.max - UInt32(random.next() % 3_000)) << 32 | UInt64(i) },
            { random, _ in random.next() },
            { random, _ in random.next() % 4 << 40 | 0xAB },
        ]
        for shape in shapes {
            var keys = (0..<count).map { shape(&random, $0) }
            let expected = keys.sorted()
            RadixSort.sort(&keys)
            #expect(keys == expected)
        }
    }

    /// Items sorted by a key keep the order of items with equal keys, short (insertion
    /// sort) and long (radix sort), with every byte varying or few.
    @Test(arguments: [0, 1, 2, 64, 65, 300, 5_000])
    func itemsWithEqualKeysKeepTheirOrder(count: Int) {
        var random = SeededRandom(seed: UInt64(count) + 11)
        for mask in [UInt64.max, 0x3F, 0xFF00_0000_0000, 0] {
            var items = (0..<count).map { (key: random.next() & mask, position: $0) }
            let expected = items.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(\.element)
            RadixSort.sort(&items) { $0.key }
            #expect(items.map(\.key) == expected.map(\.key))
            #expect(items.map(\.position) == expected.map(\.position))
        }
    }
}
