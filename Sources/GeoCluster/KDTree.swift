/// A static two-dimensional index: points kd-sorted in place in flat arrays.
///
/// The layout and every decision of the build and the queries follow kdbush 4.1 (the
/// index inside supercluster) step for step, so that both return the same items in the
/// same order; clustering results depend on that order. Coordinates are stored as
/// `Float` (as kdbush does with `Float32Array`), which halves the memory and is what
/// makes the two implementations' float rounding agree.
///
/// Invariants (checked by `_checkInvariants()`): positions `left...right` of every node
/// larger than `nodeSize` are split around their middle `m = (left + right) / 2` on the
/// node's axis (x at even depths, y at odd ones): nothing left of `m` is greater and
/// nothing right of `m` is smaller than the item at `m`.
///
/// Queries read the sorted positions in blocks of four (``blocks``): the x, y of each,
/// then the four ids, 48 bytes together, so that a leaf's items and the ids of those
/// found are read from the same cache lines. The coordinates of the middle items are
/// also kept apart, by node (``splits``): every query reads one at each node it passes,
/// and among the sorted positions each lies in the middle of its node's range, a cache
/// line of its own far from the others; together they take a few hundred kilobytes for a
/// million points and stay in the cache.
public struct KDTree: Sendable {
    /// Largest number of items searched linearly instead of being split further.
    public let nodeSize: Int
    /// Number of indexed items.
    public let count: Int
    /// The sorted positions, four to a block of ``blockWords`` words: the x, y of each
    /// (`Float` bit patterns), then the items (their positions in the build input). The
    /// last block is padded with zeros, which no query reads.
    private let blocks: [UInt32]
    /// Interleaved x, y of the middle item of each node larger than `nodeSize`, by node
    /// number: the root is node 1, the halves of node `k` are `2k` (left) and `2k + 1`;
    /// numbers of no such node hold zeros (and a tree of one leaf has node 0 only, which
    /// no query reads).
    private let splits: [Float]

    private static let blockWords = 12

    /// The item at each sorted position.
    public var ids: [UInt32] { (0..<count).map { blocks[($0 >> 2) * Self.blockWords + 8 + ($0 & 3)] } }
    /// Interleaved x, y of each sorted position.
    public var coords: [Float] {
        (0..<(2 * count)).map { Float(bitPattern: blocks[($0 >> 3) * Self.blockWords + ($0 & 7)]) }
    }

    /// Indexes the points `(x[i], y[i])`; the item ids reported by queries are the `i`.
    /// Large inputs are sorted on two threads when there is a second core.
    /// - Precondition: `x.count == y.count`, fewer than 2^32 points, `nodeSize >= 1`.
    public init(x: [Double], y: [Double], nodeSize: Int = 64) {
        self.init(x: x, y: y, nodeSize: nodeSize, usingSecondCore: BackgroundJob.hasSecondCore)
    }

    /// As ``init(x:y:nodeSize:)``, on one thread when `usingSecondCore` is false; the
    /// result is the same either way.
    init(x: [Double], y: [Double], nodeSize: Int, usingSecondCore: Bool) {
        precondition(x.count == y.count, "x and y must have the same length")
        precondition(x.count < Int(UInt32.max), "a KDTree holds fewer than 2^32 points")
        precondition(nodeSize >= 1, "nodeSize must be at least 1")
        self.nodeSize = nodeSize
        let n = x.count
        count = n
        var ids = [UInt32](repeating: 0, count: n)
        var coords = [Float](repeating: 0, count: 2 * n)
        for i in 0..<n {
            ids[i] = UInt32(i)
            coords[2 * i] = Float(x[i])
            coords[2 * i + 1] = Float(y[i])
        }
        if n > 0 {
            ids.withUnsafeMutableBufferPointer { ids in
                coords.withUnsafeMutableBufferPointer { coords in
                    let sorter = Sorter(ids: ids.baseAddress!, coords: coords.baseAddress!, nodeSize: nodeSize)
                    sorter.sortAll(count: n, usingSecondCore: usingSecondCore)
                }
            }
        }
        splits = coords.withUnsafeBufferPointer { coords in
            Self.splits(coords: coords, count: n, nodeSize: nodeSize)
        }
        var blocks = [UInt32](repeating: 0, count: (n + 3) / 4 * Self.blockWords)
        for i in 0..<n {
            let block = (i >> 2) * Self.blockWords, lane = i & 3
            blocks[block + 2 * lane] = coords[2 * i].bitPattern
            blocks[block + 2 * lane + 1] = coords[2 * i + 1].bitPattern
            blocks[block + 8 + lane] = ids[i]
        }
        self.blocks = blocks
    }

    /// The ``splits`` of sorted coordinates.
    private static func splits(coords: UnsafeBufferPointer<Float>, count: Int, nodeSize: Int) -> [Float] {
        func lastNode(_ left: Int, _ right: Int, _ k: Int) -> Int {
            guard right - left > nodeSize else { return 0 }
            let m = (left + right) >> 1
            return max(k, lastNode(left, m - 1, 2 * k), lastNode(m + 1, right, 2 * k + 1))
        }
        let last = lastNode(0, count - 1, 1)
        var splits = [Float](repeating: 0, count: 2 * (last + 1))
        splits.withUnsafeMutableBufferPointer { splits in
            func fill(_ left: Int, _ right: Int, _ k: Int) {
                guard right - left > nodeSize else { return }
                let m = (left + right) >> 1
                splits[2 * k] = coords[2 * m]
                splits[2 * k + 1] = coords[2 * m + 1]
                fill(left, m - 1, 2 * k)
                fill(m + 1, right, 2 * k + 1)
            }
            fill(0, count - 1, 1)
        }
        return splits
    }

    /// The item at sorted position `p` of `blocks`.
    @inline(__always)
    private static func item(_ blocks: UnsafePointer<UInt32>, _ p: Int) -> UInt32 {
        blocks[(p >> 2) * blockWords + 8 + (p & 3)]
    }

    /// The lanes of block `b` whose positions lie in `left...right`.
    @inline(__always)
    private static func lanes(_ b: Int, _ left: Int, _ right: Int) -> SIMDMask<SIMD4<Int>> {
        let positions = SIMD4<Int>(repeating: 4 * b) &+ SIMD4(0, 1, 2, 3)
        return (positions .>= SIMD4(repeating: left)) .& (positions .<= SIMD4(repeating: right))
    }

    /// Appends to `result` the ids of all items with `minX <= x <= maxX` and
    /// `minY <= y <= maxY`, in kdbush's traversal order.
    public func range(minX: Double, minY: Double, maxX: Double, maxY: Double, into result: inout [UInt32]) {
        withStorage { blocks, splits in
            Self.range(blocks: blocks, splits: splits, count: count, nodeSize: nodeSize,
                       minX: minX, minY: minY, maxX: maxX, maxY: maxY, into: &result)
        }
    }

    /// Calls `body` with the blocks and ``splits``, read without bounds checks; not at
    /// all for an empty tree.
    private func withStorage(_ body: (UnsafePointer<UInt32>, UnsafePointer<Float>) -> Void) {
        guard count > 0 else { return }
        blocks.withUnsafeBufferPointer { blocks in
            splits.withUnsafeBufferPointer { splits in body(blocks.baseAddress!, splits.baseAddress!) }
        }
    }

    private static func range(blocks: UnsafePointer<UInt32>, splits: UnsafePointer<Float>,
                              count: Int, nodeSize: Int,
                              minX: Double, minY: Double, maxX: Double, maxY: Double,
                              into result: inout [UInt32]) {
        var stack = TraversalStack()
        stack.push(0, count - 1, 0, 1)
        // x, y of four items: the bounds repeated in each pair of lanes.
        let lowPair = SIMD2(Self.lowerBound(minX), Self.lowerBound(minY))
        let highPair = SIMD2(Self.upperBound(maxX), Self.upperBound(maxY))
        let low = SIMD8<Float>(lowHalf: SIMD4(lowHalf: lowPair, highHalf: lowPair),
                               highHalf: SIMD4(lowHalf: lowPair, highHalf: lowPair))
        let high = SIMD8<Float>(lowHalf: SIMD4(lowHalf: highPair, highHalf: highPair),
                                highHalf: SIMD4(lowHalf: highPair, highHalf: highPair))
        while let (left, right, axis, k) = stack.pop() {
            if right - left <= nodeSize {
                // Four items a block, each coordinate tested in one lane (the bounds are
                // the floats that test as the doubles would), in order.
                for b in (left >> 2)...(right >> 2) {
                    let block = blocks + b * blockWords
                    let xy = UnsafeRawPointer(block).loadUnaligned(as: SIMD8<Float>.self)
                    let inRange = (xy .>= low) .& (xy .<= high)
                    guard any(inRange) else { continue }
                    let lanes = Self.lanes(b, left, right)
                    for lane in 0..<4 where lanes[lane] && inRange[2 * lane] && inRange[2 * lane + 1] {
                        result.append(block[8 + lane])
                    }
                }
                continue
            }
            let m = (left + right) >> 1
            let x = Double(splits[2 * k])
            let y = Double(splits[2 * k + 1])
            if x >= minX && x <= maxX && y >= minY && y <= maxY { result.append(item(blocks, m)) }
            if axis == 0 ? minX <= x : minY <= y {
                stack.push(left, m - 1, 1 - axis, 2 * k)
            }
            if axis == 0 ? maxX >= x : maxY >= y {
                stack.push(m + 1, right, 1 - axis, 2 * k + 1)
            }
        }
    }

    /// The smallest `Float` `f` with `Double(f) >= bound`: for every `Float` `v`,
    /// `v >= lowerBound(bound)` exactly when `Double(v) >= bound`.
    @inline(__always)
    static func lowerBound(_ bound: Double) -> Float {
        let f = Float(bound)
        return Double(f) >= bound ? f : f.nextUp
    }

    /// The largest `Float` `f` with `Double(f) <= bound`.
    @inline(__always)
    static func upperBound(_ bound: Double) -> Float {
        let f = Float(bound)
        return Double(f) <= bound ? f : f.nextDown
    }

    /// Appends to `result` the ids of all items within Euclidean distance `radius`
    /// (inclusive) of `(qx, qy)`, in kdbush's traversal order.
    public func within(x qx: Double, y qy: Double, radius: Double, into result: inout [UInt32]) {
        withStorage { blocks, splits in
            Self.within(blocks: blocks, splits: splits, count: count, nodeSize: nodeSize,
                        x: qx, y: qy, radius: radius, into: &result)
        }
    }

    private static func within(blocks: UnsafePointer<UInt32>, splits: UnsafePointer<Float>,
                               count: Int, nodeSize: Int,
                               x qx: Double, y qy: Double, radius: Double, into result: inout [UInt32]) {
        let r2 = radius * radius
        var stack = TraversalStack()
        stack.push(0, count - 1, 0, 1)
        let q = SIMD4<Double>(qx, qy, qx, qy)
        while var (left, right, axis, k) = stack.pop() {
            // A node whose search goes on in one half only goes on in it here, without the
            // stack; with both halves, the left waits on the stack while the right goes on,
            // which is the order in which popping them would visit them.
            while right - left > nodeSize {
                let m = (left + right) >> 1
                let x = Double(splits[2 * k])
                let y = Double(splits[2 * k + 1])
                let dx = x - qx
                let dy = y - qy
                if dx * dx + dy * dy <= r2 { result.append(item(blocks, m)) }
                let goesLeft = axis == 0 ? qx - radius <= x : qy - radius <= y
                let goesRight = axis == 0 ? qx + radius >= x : qy + radius >= y
                if goesRight {
                    if goesLeft { stack.push(left, m - 1, 1 - axis, 2 * k) }
                    left = m + 1
                    k = 2 * k + 1
                } else if goesLeft {
                    right = m - 1
                    k = 2 * k
                } else {
                    break
                }
                axis = 1 - axis
            }
            if right - left <= nodeSize {
                // Four items a block; the test of each is the scalar one (the same
                // `Double` arithmetic), so the same items pass, appended in order.
                for b in (left >> 2)...(right >> 2) {
                    let block = blocks + b * blockWords
                    let xy = UnsafeRawPointer(block).loadUnaligned(as: SIMD8<Float>.self)
                    let low = SIMD4<Double>(Double(xy[0]), Double(xy[1]), Double(xy[2]), Double(xy[3])) - q
                    let high = SIMD4<Double>(Double(xy[4]), Double(xy[5]), Double(xy[6]), Double(xy[7])) - q
                    let lowSquares = low * low
                    let highSquares = high * high
                    let d2 = SIMD4<Double>(lowHalf: lowSquares.evenHalf + lowSquares.oddHalf,
                                           highHalf: highSquares.evenHalf + highSquares.oddHalf)
                    let inside = d2 .<= SIMD4(repeating: r2)
                    guard any(inside) else { continue }
                    let lanes = Self.lanes(b, left, right)
                    for lane in 0..<4 where lanes[lane] && inside[lane] { result.append(block[8 + lane]) }
                }
            }
        }
    }

    /// Convenience forms that return a new array.
    public func range(minX: Double, minY: Double, maxX: Double, maxY: Double) -> [UInt32] {
        var result: [UInt32] = []
        range(minX: minX, minY: minY, maxX: maxX, maxY: maxY, into: &result)
        return result
    }

    public func within(x: Double, y: Double, radius: Double) -> [UInt32] {
        var result: [UInt32] = []
        within(x: x, y: y, radius: radius, into: &result)
        return result
    }

    /// Verifies the kd-order invariant, that `ids` is a permutation and that ``splits``
    /// holds the middle items; for tests.
    public func _checkInvariants() -> Bool {
        let ids = ids, coords = coords
        var seen = [Bool](repeating: false, count: count)
        for id in ids {
            guard Int(id) < count, !seen[Int(id)] else { return false }
            seen[Int(id)] = true
        }
        return checkNode(coords, left: 0, right: count - 1, axis: 0, node: 1)
    }

    private func checkNode(_ coords: [Float], left: Int, right: Int, axis: Int, node k: Int) -> Bool {
        if right - left <= nodeSize { return true }
        let m = (left + right) >> 1
        guard 2 * k + 1 < splits.count, splits[2 * k] == coords[2 * m], splits[2 * k + 1] == coords[2 * m + 1] else {
            return false
        }
        let pivot = coords[2 * m + axis]
        for i in left..<m where coords[2 * i + axis] > pivot { return false }
        for i in (m + 1)...right where coords[2 * i + axis] < pivot { return false }
        return checkNode(coords, left: left, right: m - 1, axis: 1 - axis, node: 2 * k)
            && checkNode(coords, left: m + 1, right: right, axis: 1 - axis, node: 2 * k + 1)
    }
}

/// The pending nodes of a depth-first traversal, on the stack frame: a node pushes at
/// most its two halves, so depth + 1 entries suffice, and depth stays below 40 for any
/// tree with fewer than 2^32 items. An entry is a node's range, axis and node number.
private struct TraversalStack {
    private var storage = InlineArray<160, Int>(repeating: 0)
    private var top = 0

    @inline(__always)
    mutating func push(_ left: Int, _ right: Int, _ axis: Int, _ node: Int) {
        storage[top] = left
        storage[top + 1] = right
        storage[top + 2] = axis
        storage[top + 3] = node
        top += 4
    }

    @inline(__always)
    mutating func pop() -> (Int, Int, Int, Int)? {
        guard top > 0 else { return nil }
        top -= 4
        return (storage[top], storage[top + 1], storage[top + 2], storage[top + 3])
    }
}

/// The kd-sort of kdbush: recursive median split with Floyd-Rivest selection.
///
/// It works in place through pointers so that, with a second core, the two halves of a
/// large tree are sorted at the same time: they are disjoint ranges of the same storage,
/// which is what makes sharing the pointers between the threads safe.
private struct Sorter: @unchecked Sendable {
    let ids: UnsafeMutablePointer<UInt32>
    let coords: UnsafeMutablePointer<Float>
    let nodeSize: Int

    /// Items from which the halves are sorted on two threads: below it, handing the work
    /// over costs more than it saves.
    static let parallelMinimum = 1 << 15

    /// Sorts positions `0..<count`, the right half on another thread when it pays.
    func sortAll(count: Int, usingSecondCore: Bool) {
        let right = count - 1
        guard usingSecondCore, count >= Self.parallelMinimum, right > nodeSize else {
            sort(left: 0, right: right, axis: 0)
            return
        }
        let m = right >> 1
        select(k: m, left: 0, right: right, axis: 0)
        let upperHalf = BackgroundJob { [self] _ in sort(left: m + 1, right: right, axis: 1) }
        sort(left: 0, right: m - 1, axis: 1)
        upperHalf.complete()
    }

    func sort(left: Int, right: Int, axis: Int) {
        if right - left <= nodeSize { return }
        let m = (left + right) >> 1
        select(k: m, left: left, right: right, axis: axis)
        sort(left: left, right: m - 1, axis: 1 - axis)
        sort(left: m + 1, right: right, axis: 1 - axis)
    }

    /// Rearranges `left...right` so that position `k` holds the item that belongs there
    /// in sorted order on `axis`, smaller-or-equal items before it, greater-or-equal after.
    func select(k: Int, left: Int, right: Int, axis: Int) {
        var left = left
        var right = right
        while right > left {
            if right - left > 600 {
                let n = Double(right - left + 1)
                let m = Double(k - left + 1)
                let z = CMath.log(n)
                let s = 0.5 * CMath.exp(2 * z / 3)
                let sd = 0.5 * (z * s * (n - s) / n).squareRoot() * (m - n / 2 < 0 ? -1 : 1)
                let newLeft = max(left, Int((Double(k) - m * s / n + sd).rounded(.down)))
                let newRight = min(right, Int((Double(k) + (n - m) * s / n + sd).rounded(.down)))
                select(k: k, left: newLeft, right: newRight, axis: axis)
            }
            // The coordinate on `axis` of position `p` is `c[2 * p]`; positions lie within
            // `0..<count` (< 2^32), so the arithmetic on them cannot overflow.
            let c = coords + axis
            let t = c[k &<< 1]
            var i = left
            var j = right
            swapItems(left, k)
            if c[right &<< 1] > t { swapItems(left, right) }
            while i < j {
                swapItems(i, j)
                i &+= 1
                j &-= 1
                while c[i &<< 1] < t { i &+= 1 }
                while c[j &<< 1] > t { j &-= 1 }
            }
            if c[left &<< 1] == t {
                swapItems(left, j)
            } else {
                j += 1
                swapItems(j, right)
            }
            if j <= k { left = j + 1 }
            if k <= j { right = j - 1 }
        }
    }

    @inline(__always)
    func swapItems(_ i: Int, _ j: Int) {
        let id = ids[i]
        ids[i] = ids[j]
        ids[j] = id
        // Both coordinates of a position as one word, through raw memory.
        let xy = UnsafeMutableRawPointer(coords)
        let a = xy.load(fromByteOffset: i &<< 3, as: UInt64.self)
        let b = xy.load(fromByteOffset: j &<< 3, as: UInt64.self)
        xy.storeBytes(of: b, toByteOffset: i &<< 3, as: UInt64.self)
        xy.storeBytes(of: a, toByteOffset: j &<< 3, as: UInt64.self)
    }
}
