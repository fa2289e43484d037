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
}
