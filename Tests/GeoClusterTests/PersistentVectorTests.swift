import GeoClusterTestSupport
import Testing
@testable import GeoCluster

/// The persistent vector against an array, across the sizes where the trie grows a level.
struct PersistentVectorTests {
    @Test func readsWritesAndAppendsAsAnArrayDoes() {
        var random = SeededRandom(seed: 5)
        var vector = PersistentVector<Int>()
        var model: [Int] = []
        for step in 0..<40_000 {
            if model.isEmpty || step % 3 != 0 {
                vector.append(step)
                model.append(step)
            } else {
                let index = Int.random(in: 0..<model.count, using: &random)
                vector[index] = -step
                model[index] = -step
            }
        }
        #expect(vector.count == model.count)
        #expect((0..<model.count).allSatisfy { vector[$0] == model[$0] })
        #expect((0..<model.count).allSatisfy { i in vector.withElement(at: i) { $0.pointee } == model[i] })
    }

    @Test func aCopyKeepsItsValuesWhenTheOriginalChanges() {
        var vector = PersistentVector<Int>(repeating: 7, count: 33_000)
        let snapshot = vector
        vector[32_999] = 1
        vector[0] = 2
        vector.append(3)
        #expect(snapshot.count == 33_000 && vector.count == 33_001)
        #expect(snapshot[32_999] == 7 && snapshot[0] == 7)
        #expect(vector[32_999] == 1 && vector[0] == 2 && vector[33_000] == 3)
        #expect(snapshot.withElement(at: 32_999) { $0.pointee } == 7)
        #expect(vector.withElement(at: 32_999) { $0.pointee } == 1)
    }

    /// Elements read in place, at every depth of the trie, are those of the version read:
    /// a copy changed element by element, and then dropped, leaves the version it came
    /// from whole (its nodes are not freed or changed under a reader).
    @Test func elementsReadInPlaceBelongToTheVersionRead() {
        for size in [1, 32, 33, 1_025, 32_769] {
            var vector = PersistentVector((0..<size).map { "item \($0)" })
            let snapshot = vector
            for i in stride(from: 0, to: size, by: 7) { vector[i] = "changed \(i)" }
            #expect((0..<size).allSatisfy { i in
                vector.withElement(at: i) { $0.pointee == (i % 7 == 0 ? "changed \(i)" : "item \(i)") }
            }, "size \(size)")
            vector = PersistentVector()
            #expect((0..<size).allSatisfy { i in snapshot.withElement(at: i) { $0.pointee == "item \(i)" } }, "size \(size)")
        }
    }

    /// Built from an array at the sizes where a level is added, then grown and changed:
    /// the same elements as appending them, and appends after it land where they should.
    @Test func oneBuiltFromAnArrayHoldsItAndGrowsAsAppendsWould() {
        for size in [0, 1, 31, 32, 33, 1_023, 1_024, 1_025, 32_768, 32_769, 40_000] {
            let elements = Array(0..<size)
            var vector = PersistentVector(elements)
            #expect(vector.count == size)
            #expect((0..<size).allSatisfy { vector[$0] == $0 }, "size \(size)")
            for extra in 0..<1_100 { vector.append(size + extra) }
            if size > 0 { vector[size - 1] = -1 }
            #expect(vector.count == size + 1_100)
            #expect((0..<vector.count).allSatisfy { vector[$0] == ($0 == size - 1 ? -1 : $0) }, "size \(size)")
        }
    }
}
