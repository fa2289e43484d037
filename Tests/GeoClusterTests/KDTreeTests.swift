import GeoClusterTestSupport
import Testing
@testable import GeoCluster

/// Every query is checked against a brute-force scan of the same Float-rounded points.
struct KDTreeTests {
    private func bruteRange(_ xs: [Double], _ ys: [Double], _ minX: Double, _ minY: Double,
                            _ maxX: Double, _ maxY: Double) -> [UInt32] {
        xs.indices.filter { i in
            let x = Double(Float(xs[i])), y = Double(Float(ys[i]))
            return x >= minX && x <= maxX && y >= minY && y <= maxY
        }.map { UInt32($0) }
    }

    private func bruteWithin(_ xs: [Double], _ ys: [Double], _ qx: Double, _ qy: Double, _ r: Double) -> [UInt32] {
        xs.indices.filter { i in
            let dx = Double(Float(xs[i])) - qx, dy = Double(Float(ys[i])) - qy
            return dx * dx + dy * dy <= r * r
        }.map { UInt32($0) }
    }

    private func checkQueries(xs: [Double], ys: [Double], nodeSize: Int, seed: UInt64, queries: Int = 150) {
        var random = SeededRandom(seed: seed)
        let tree = KDTree(x: xs, y: ys, nodeSize: nodeSize)
        #expect(tree._checkInvariants())
        for _ in 0..<queries {
            let a = random.unit(), b = random.unit(), c = random.unit(), d = random.unit()
            let (minX, maxX) = (min(a, b), max(a, b))
            let (minY, maxY) = (min(c, d), max(c, d))
            let found = tree.range(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
            #expect(found.sorted() == bruteRange(xs, ys, minX, minY, maxX, maxY))
            #expect(Set(found).count == found.count, "range reports an item once")

            let qx = random.unit(), qy = random.unit(), r = random.between(0, 0.2)
            let near = tree.within(x: qx, y: qy, radius: r)
            #expect(near.sorted() == bruteWithin(xs, ys, qx, qy, r))
        }
    }

    /// kdbush's `within`, step by step over the tree's sorted items: a stack of ranges,
    /// the left half pushed before the right, so that the right is searched first. The
    /// order of its results is the order in which supercluster sums a cluster's members.
    private func kdbushWithin(_ tree: KDTree, _ qx: Double, _ qy: Double, _ r: Double) -> [UInt32] {
        guard tree.count > 0 else { return [] }
        let ids = tree.ids, coords = tree.coords
        func inside(_ i: Int) -> Bool {
            let dx = Double(coords[2 * i]) - qx, dy = Double(coords[2 * i + 1]) - qy
            return dx * dx + dy * dy <= r * r
        }
        var stack = [0, tree.count - 1, 0]
        var result: [UInt32] = []
        while !stack.isEmpty {
            let axis = stack.removeLast(), right = stack.removeLast(), left = stack.removeLast()
            if right - left <= tree.nodeSize {
                for i in left...right where inside(i) { result.append(ids[i]) }
                continue
            }
            let m = (left + right) >> 1
            if inside(m) { result.append(ids[m]) }
            let x = Double(coords[2 * m]), y = Double(coords[2 * m + 1])
            if axis == 0 ? qx - r <= x : qy - r <= y { stack += [left, m - 1, 1 - axis] }
            if axis == 0 ? qx + r >= x : qy + r >= y { stack += [m + 1, right, 1 - axis] }
        }
        return result
    }

    /// Not only the same items as kdbush: in the same order, for small radii (one half
    /// searched at most nodes) and large ones (both), on spread and on crowded points.
    @Test(arguments: [4, 16, 64])
    func withinFollowsKdbushOrder(nodeSize: Int) {
        var random = SeededRandom(seed: 91)
        var xs = (0..<3_000).map { _ in random.unit() }
        var ys = (0..<3_000).map { _ in random.unit() }
        for _ in 0..<3_000 {
            xs.append(0.3 + random.between(0, 0.01))
            ys.append(0.6 + random.between(0, 0.01))
        }
        let tree = KDTree(x: xs, y: ys, nodeSize: nodeSize)
        for radius in [0.0005, 0.003, 0.02, 0.3] {
            for q in 0..<60 {
                let (qx, qy) = q % 2 == 0 ? (random.unit(), random.unit()) : (xs[3_000 + q], ys[3_000 + q])
                let found = tree.within(x: qx, y: qy, radius: radius)
                #expect(found == kdbushWithin(tree, qx, qy, radius), "radius \(radius), query \(q)")
            }
        }
    }

    /// Range bounds that fall on, just inside or just outside stored `Float` positions
    /// select exactly what comparing in `Double` selects.
    @Test func rangeBoundsNextToStoredPositionsAreExact() {
        var random = SeededRandom(seed: 91)
        let xs = (0..<2_000).map { _ in Double(Float(random.unit())) }
        let ys = (0..<2_000).map { _ in Double(Float(random.unit())) }
        let tree = KDTree(x: xs, y: ys, nodeSize: 8)
        for _ in 0..<300 {
            let a = Int.random(in: 0..<xs.count, using: &random)
            let b = Int.random(in: 0..<xs.count, using: &random)
            let nudge: [(Double) -> Double] = [{ $0 }, { $0.nextUp }, { $0.nextDown }]
            let minX = nudge.randomElement(using: &random)!(min(xs[a], xs[b]))
            let maxX = nudge.randomElement(using: &random)!(max(xs[a], xs[b]))
            let minY = nudge.randomElement(using: &random)!(min(ys[a], ys[b]))
            let maxY = nudge.randomElement(using: &random)!(max(ys[a], ys[b]))
            let found = tree.range(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
            #expect(found.sorted() == bruteRange(xs, ys, minX, minY, maxX, maxY))
        }
        for bound in [0.1, 1e-300, -1e-300, 1e300, -1e300, .infinity, -.infinity, 0.5, -0.0] {
            let low = KDTree.lowerBound(bound), high = KDTree.upperBound(bound)
            #expect(Double(low) >= bound && (low == -.infinity || !(Double(low.nextDown) >= bound)))
            #expect(Double(high) <= bound && (high == .infinity || !(Double(high.nextUp) <= bound)))
        }
    }

    /// Large trees sort their halves on two threads; the order must not depend on it.
    @Test func sortingOnTwoThreadsGivesTheOneThreadOrder() {
        var random = SeededRandom(seed: 77)
        let count = 100_003
        let xs = (0..<count).map { _ in random.unit() }
        let ys = (0..<count).map { i in i % 5 == 0 ? 0.5 : random.unit() }
        let one = KDTree(x: xs, y: ys, nodeSize: 16, usingSecondCore: false)
        let two = KDTree(x: xs, y: ys, nodeSize: 16, usingSecondCore: true)
        #expect(two._checkInvariants())
        #expect(two.ids == one.ids)
        #expect(two.coords == one.coords)
    }

    @Test(arguments: [1, 4, 64])
    func uniformPointsMatchBruteForce(nodeSize: Int) {
        var random = SeededRandom(seed: 42)
        let xs = (0..<5_000).map { _ in random.unit() }
        let ys = (0..<5_000).map { _ in random.unit() }
        checkQueries(xs: xs, ys: ys, nodeSize: nodeSize, seed: 7)
    }

    @Test func pointsOnTheEdgesOfTheSquareMatchBruteForce() {
        // The poles project to y = 0 and y = 1, the antimeridian to x = 0 and x = 1.
        var random = SeededRandom(seed: 3)
        var xs: [Double] = [], ys: [Double] = []
        for i in 0..<3_000 {
            switch i % 4 {
            case 0: xs.append(0); ys.append(random.unit())
            case 1: xs.append(1); ys.append(random.unit())
            case 2: xs.append(random.unit()); ys.append(0)
            default: xs.append(random.unit()); ys.append(1)
            }
        }
        checkQueries(xs: xs, ys: ys, nodeSize: 16, seed: 11)
        let tree = KDTree(x: xs, y: ys, nodeSize: 16)
        #expect(tree.range(minX: 0, minY: 0, maxX: 0, maxY: 1).count == 750)
        #expect(tree.range(minX: 0, minY: 1, maxX: 1, maxY: 1).count == 750)
    }

    @Test func tenThousandPointsOnOneSpot() {
        var xs = [Double](repeating: 0.8, count: 10_000)
        var ys = [Double](repeating: 0.3, count: 10_000)
        var random = SeededRandom(seed: 5)
        for _ in 0..<500 { xs.append(random.unit()); ys.append(random.unit()) }
        let tree = KDTree(x: xs, y: ys, nodeSize: 64)
        #expect(tree._checkInvariants())
        // Stored coordinates are Float, so the exact spot is the Float-rounded one.
        let (sx, sy) = (Double(Float(0.8)), Double(Float(0.3)))
        let spot = tree.within(x: sx, y: sy, radius: 0)
        #expect(spot.filter { $0 < 10_000 }.count == 10_000)
        #expect(spot.sorted() == bruteWithin(xs, ys, sx, sy, 0))
        checkQueries(xs: xs, ys: ys, nodeSize: 64, seed: 9, queries: 60)
    }

    @Test func emptyAndSingleItemTrees() {
        let empty = KDTree(x: [], y: [])
        #expect(empty.range(minX: 0, minY: 0, maxX: 1, maxY: 1).isEmpty)
        #expect(empty.within(x: 0.5, y: 0.5, radius: 1).isEmpty)
        let one = KDTree(x: [0.25], y: [0.75])
        #expect(one.range(minX: 0, minY: 0, maxX: 1, maxY: 1) == [0])
        #expect(one.range(minX: 0.3, minY: 0, maxX: 1, maxY: 1).isEmpty)
        #expect(one.within(x: 0.25, y: 0.75, radius: 0) == [0])
    }

    @Test func appendingQueriesKeepEarlierResults() {
        let tree = KDTree(x: [0.1, 0.2, 0.9], y: [0.1, 0.2, 0.9])
        var result: [UInt32] = [99]
        tree.range(minX: 0, minY: 0, maxX: 0.5, maxY: 0.5, into: &result)
        #expect(result.first == 99)
        #expect(result.dropFirst().sorted() == [0, 1])
    }
}
