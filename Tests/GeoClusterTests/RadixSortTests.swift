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
}
