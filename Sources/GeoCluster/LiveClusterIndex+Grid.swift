/// Forming clusters, step 1 (see `LiveClusterIndex+Queries.swift`): the
/// cells of a view, their totals gathered from the quadtrees per partition, blocks and
/// the groups kept for them.
extension LiveClusterIndex {
    // MARK: Forming clusters

    struct UnitRect {
        var minX: Double, minY: Double, maxX: Double, maxY: Double

        @inline(__always)
        func contains(_ x: Double, _ y: Double) -> Bool { x >= minX && x <= maxX && y >= minY && y <= maxY }
    }

    /// Appends the items whose positions lie in `rect` (projected units) at zoom `z`;
    /// with a `limit`, stops once the answer holds more features than that (leaving
    /// `answer.isComplete` false).
    func appendClusters(in rect: UnitRect, zoom z: Int, filter: LiveFilter, limit: Int? = nil,
                        into answer: inout LiveAnswer) {
        if z > options.maxZoom {
            let level = min(32, grid.level(zoom: options.maxZoom) + 1)
            let (x0, y0, x1, y1) = cellRange(rect, level: level)
            forEachPoint(level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter) { entry in
                if rect.contains(LeafEntry.unquantize(entry.qx), LeafEntry.unquantize(entry.qy)) {
                    answer.features.append(pointFeature(entry))
                    if let limit, answer.features.count > limit {
                        answer.isComplete = false
                        return false
                    }
                }
                return true
            }
            return
        }
        let (cx0, cx1) = grid.cellRange(rect.minX, rect.maxX, zoom: z)
        let (cy0, cy1) = grid.cellRange(rect.minY, rect.maxY, zoom: z)
        let shift = UInt32(Self.blockShift)
        let blocks = (cx0 >> shift, cy0 >> shift, cx1 >> shift, cy1 >> shift)
        appendBlocks(blocks, within: rect, zoom: z, filter: filter, limit: limit, into: &answer)
    }

    /// Appends the items of a range of blocks at zoom `z`, after merges across their
    /// edges (`LiveClusterIndex+Edges.swift`), that lie in `rect` (all when `nil`). With a
    /// `limit`, a range of many blocks is formed part by part and the answer stops after
    /// the part that takes it over the limit.
    func appendBlocks(_ blocks: (UInt32, UInt32, UInt32, UInt32), within rect: UnitRect?, zoom z: Int,
                      filter: LiveFilter, limit: Int? = nil, into answer: inout LiveAnswer) {
        // A query over many blocks (the world at a deep zoom) forms its groups in one
        // grid: block by block, the work and memory per block would outweigh them, and
        // its kept groups would push out those of the views in use.
        let blockCount = Int(blocks.2 - blocks.0 + 1) * Int(blocks.3 - blocks.1 + 1)
        let keep = filter.partitions == nil && !filter.testsPoints && blockCount <= Self.blocksKeptPerQuery
        if !keep, let limit, let rect {
            appendParts(blocks, within: rect, zoom: z, filter: filter, limit: limit, into: &answer)
            return
        }
        var store = BlockStore(zoom: z, filter: keep ? .all : filter, keeps: keep)
        if !keep {
            // The blocks in one grid, and without a rect a ring around them (all their
            // items may merge across the edges); with one, only items near the rect may,
            // and the few blocks around that they reach are formed when read.
            let last = UInt32(blocksPerSide(zoom: z) - 1)
            let formed = rect != nil ? blocks
                : (blocks.0 == 0 ? 0 : blocks.0 - 1, blocks.1 == 0 ? 0 : blocks.1 - 1,
                   min(last, blocks.2 + 1), min(last, blocks.3 + 1))
            let (x0, y0, x1, y1) = cells(of: formed, zoom: z)
            store.fill(formItems(cellGrid(zoom: z, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter), zoom: z, filter: filter),
                       formed: formed, index: self)
        }
        appendResolved(blocks, within: rect, store: &store, into: &answer)
    }

    /// Blocks per side of the parts a query over many blocks is formed in when it has a
    /// feature limit.
    static let partSide: UInt32 = 32

    /// The items of a range of blocks in `rect`, formed part by part: the aligned squares
    /// of ``partSide`` blocks that hold points, along the Z-order curve, which is the
    /// order of the blocks in an answer formed in one grid, so that the parts together
    /// give that answer. Merges across the edges of two parts are found as across any
    /// block edge (a block beside a part is formed when read) and appended once, with the
    /// block that ranks first. Stops after the part that takes the answer over `limit`.
    private func appendParts(_ blocks: (UInt32, UInt32, UInt32, UInt32), within rect: UnitRect, zoom z: Int,
                             filter: LiveFilter, limit: Int, into answer: inout LiveAnswer) {
        var side: UInt32 = Self.partSide
        while (blocks.0 / side != blocks.2 / side || blocks.1 / side != blocks.3 / side), side < 1 << 31 { side <<= 1 }
        func visit(_ x: UInt32, _ y: UInt32, _ side: UInt32) -> Bool {
            let part = (max(x, blocks.0), max(y, blocks.1), min(x &+ (side - 1), blocks.2), min(y &+ (side - 1), blocks.3))
            guard part.0 <= part.2, part.1 <= part.3, hasPoints(part, zoom: z, filter: filter) else { return true }
            guard side > Self.partSide else {
                var store = BlockStore(zoom: z, filter: filter, keeps: false)
                let (x0, y0, x1, y1) = cells(of: part, zoom: z)
                store.fill(formItems(cellGrid(zoom: z, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter), zoom: z,
                                     filter: filter), formed: part, index: self)
                appendResolved(part, of: blocks, within: rect, store: &store, into: &answer)
                if answer.features.count > limit {
                    answer.isComplete = false
                    return false
                }
                return true
            }
            let half = side / 2
            // Z-order: x is the lower bit.
            return visit(x, y, half) && visit(x &+ half, y, half) && visit(x, y &+ half, half)
                && visit(x &+ half, y &+ half, half)
        }
        _ = visit(blocks.0 / side * side, blocks.1 / side * side, side)
    }

    /// Whether a point that passes `filter` lies in the cells of a range of blocks.
    private func hasPoints(_ blocks: (UInt32, UInt32, UInt32, UInt32), zoom z: Int, filter: LiveFilter) -> Bool {
        let (cx0, cy0, cx1, cy1) = cells(of: blocks, zoom: z)
        let (x0, x1) = grid.subRange(cx0, cx1, zoom: z), (y0, y1) = grid.subRange(cy0, cy1, zoom: z)
        var found = false
        forEachPoint(level: grid.level(zoom: z), x0: x0, y0: y0, x1: x1, y1: y1, filter: filter) { _ in
            found = true
            return false
        }
        return found
    }

    /// The items of the groups that the cells of `grid` (their totals at zoom `z`) form:
    /// block by block along the Z-order curve, as unfiltered queries visit the blocks, and
    /// within a block in the order the groups formed.
    func formItems(_ grid: Grid, zoom z: Int, filter: LiveFilter) -> Items {
        let groups = group(grid, zoom: z)
        // A cell's block: below level `blockShift` every cell is in block 0 either way.
        let shift = UInt32(Self.blockShift)
        var order: [(block: UInt64, g: Int)] = []
        order.reserveCapacity(groups.count)
        var inOrder = true
        for g in groups.indices {
            let first = grid.cells[groups[g].first]
            let block: UInt64 = BulkBuilder.zOrder(first.x >> shift, first.y >> shift)
            if let last = order.last, last.block > block { inOrder = false }
            order.append((block, g))
        }
        if !inOrder { order.sort { $0.block != $1.block ? $0.block < $1.block : $0.g < $1.g } }
        // As many items as appendGroup makes: a cluster per group of `minPoints` or more,
        // else the group's points (those that pass, which its count counts).
        var itemCount = 0, clusterCount = 0
        for group in groups {
            if group.aggregate.count >= options.minPoints {
                itemCount += 1
                clusterCount += 1
            } else {
                itemCount += group.aggregate.count
            }
        }
        var items = Items()
        items.reserve(itemCount, clusters: clusterCount)
        for (_, g) in order {
            appendGroup(groups[g], grid: grid, zoom: z, filter: filter, into: &items)
        }
        return items
    }

    /// Grid cells per block side, as a power of two.
    static let blockShift = 4

    /// The cells at zoom `z` of a range of blocks, within the world.
    func cells(of blocks: (UInt32, UInt32, UInt32, UInt32), zoom z: Int) -> (UInt32, UInt32, UInt32, UInt32) {
        let shift = UInt32(Self.blockShift), last = UInt32(grid.cellsPerSide(zoom: z) - 1)
        return (blocks.0 << shift, blocks.1 << shift,
                min(last, blocks.2 << shift | (1 << shift - 1)), min(last, blocks.3 << shift | (1 << shift - 1)))
    }

    /// The projected rect a block covers (up to the world's edge).
    func blockRect(_ bx: UInt32, _ by: UInt32, zoom z: Int) -> UnitRect {
        let side = Double(UInt64(1) << UInt64(grid.level(zoom: z)))
        let width = Double(grid.span << Self.blockShift)
        return UnitRect(minX: Double(bx) * width / side, minY: Double(by) * width / side,
                        maxX: min(1, Double(bx + 1) * width / side), maxY: min(1, Double(by + 1) * width / side))
    }

    /// Largest number of blocks in a query's range for which it reads and keeps the groups
    /// of each block.
    static let blocksKeptPerQuery = 1_024

    /// Blocks across the world at a zoom.
    func blocksPerSide(zoom z: Int) -> Int {
        (grid.cellsPerSide(zoom: z) + (1 << Self.blockShift) - 1) >> Self.blockShift
    }

    /// The stamp of a block's points at zoom `z`, `nil` when no node holds points there:
    /// the stamps of the up to 2 x 2 quadtree nodes (of the smallest level whose cells are
    /// at least a block wide) that hold the block's points, each the node of that level's
    /// cell, one inside it, or a leaf above it. A change to a point of the block gives one
    /// of them a new stamp.
    func blockStamp(_ bx: UInt32, _ by: UInt32, zoom z: Int) -> BlockStamp? {
        blockStamp(around: bx, by, reach: 0, zoom: z)
    }

    /// The stamp of the points of the blocks within `reach` blocks of `(bx, by)` (a square
    /// `2 reach + 1` blocks wide), as ``blockStamp(_:_:zoom:)`` for one block.
    func blockStamp(around bx: UInt32, _ by: UInt32, reach: Int, zoom z: Int) -> BlockStamp? {
        blockStamp(around: bx, by, reach: reach, zoom: z, nodes: false)?.stamp
    }

    /// The stamp of a block's points, as ``blockStamp(_:_:zoom:)``, with the nodes whose
    /// stamps it holds (in its order, `nil` for a stamp of 0).
    func blockNodes(_ bx: UInt32, _ by: UInt32, zoom z: Int) -> (stamp: BlockStamp, nodes: [QuadNode?])? {
        blockStamp(around: bx, by, reach: 0, zoom: z, nodes: true)
    }

    /// ``blockStamp(around:_:reach:zoom:)`` with the nodes whose stamps it holds.
    func blockNodes(around bx: UInt32, _ by: UInt32, reach: Int, zoom z: Int) -> (stamp: BlockStamp, nodes: [QuadNode?])? {
        blockStamp(around: bx, by, reach: reach, zoom: z, nodes: true)
    }

    /// The level of the quadtree cells whose nodes stamp the blocks within `reach` of a
    /// block at zoom `z`: the finest whose cells are at least that square's width (so at
    /// most twice it).
    func stampLevel(reach: Int, zoom z: Int) -> Int {
        let width = (UInt64(grid.span) << UInt64(Self.blockShift)) * UInt64(2 * reach + 1)
        var up = 0
        while UInt64(1) << UInt64(up) < width { up += 1 }
        return max(0, grid.level(zoom: z) - up)
    }

    private func blockStamp(around bx: UInt32, _ by: UInt32, reach: Int, zoom z: Int,
                            nodes keepsNodes: Bool) -> (stamp: BlockStamp, nodes: [QuadNode?])? {
        let level = grid.level(zoom: z)
        let blockWidth = UInt64(grid.span) << UInt64(Self.blockShift)
        let stampLevel = self.stampLevel(reach: reach, zoom: z)
        let lastSub = (UInt64(1) << UInt64(level)) - 1
        let reachWidth = UInt64(reach) * blockWidth
        let cx0 = UInt64(bx) * blockWidth, cy0 = UInt64(by) * blockWidth
        guard cx0 <= lastSub, cy0 <= lastSub else { return nil }
        let sx0 = cx0 > reachWidth ? cx0 - reachWidth : 0, sy0 = cy0 > reachWidth ? cy0 - reachWidth : 0
        let sx1 = min(lastSub, cx0 + blockWidth + reachWidth - 1), sy1 = min(lastSub, cy0 + blockWidth + reachWidth - 1)
        let shift = UInt64(level - stampLevel)
        var stamp = BlockStamp()
        var nodes: [QuadNode?] = []
        withUnsafePointer(to: combined) { root in
            var k = 0
            for ny in (sy0 >> shift)...(sy1 >> shift) {
                for nx in (sx0 >> shift)...(sx1 >> shift) {
                    let node = Self.stampNode(root, level: stampLevel, x: UInt32(nx), y: UInt32(ny))
                    stamp.set(k, node?.pointee.stamp ?? 0)
                    if keepsNodes { nodes.append(node?.pointee) }
                    k += 1
                }
            }
        }
        return stamp.isEmpty ? nil : (stamp, nodes)
    }

    /// The node that holds the points of cell `(x, y)` of `level`: the cell's node, the
    /// only node inside it, or a leaf above it; `nil` when none holds points.
    static func stampNode(_ root: UnsafePointer<QuadNode>, level: Int, x: UInt32, y: UInt32) -> UnsafePointer<QuadNode>? {
        var node = root
        while true {
            guard node.pointee.aggregate.count > 0,
                  node.pointee.overlaps(level: level, x0: x, y0: y, x1: x, y1: y) else { return nil }
            if node.pointee.level >= level || node.pointee.isLeaf { return node }
            var next: UnsafePointer<QuadNode>?
            node.pointee.children.withUnsafeBufferPointer { children in
                for i in children.indices
                    where children[i].overlaps(level: level, x0: x, y0: y, x1: x, y1: y) {
                    next = children.baseAddress! + i
                    break
                }
            }
            guard let next else { return nil }
            node = next
        }
    }

    /// Cell coordinates at `level` covering `rect`.
    func cellRange(_ rect: UnitRect, level: Int) -> (UInt32, UInt32, UInt32, UInt32) {
        let side = Double(UInt64(1) << UInt64(level))
        let last = Int(side) - 1
        func cell(_ v: Double) -> Int { min(last, max(0, Int((v * side).rounded(.down)))) }
        return (UInt32(cell(rect.minX)), UInt32(cell(rect.minY)), UInt32(cell(rect.maxX)), UInt32(cell(rect.maxY)))
    }

    /// The totals of one node (or one point) for one grid cell: of one partition, or of
    /// several with their counts in `histogram`.
    struct Contribution {
        var x: UInt32
        var y: UInt32
        /// The partition of every point counted, or -1 when `histogram` (or nothing) tells.
        var partition: Int
        var aggregate: NodeAggregate
        /// The point's slot when the count is 1 (it is then shown as itself, at the
        /// position its coordinate sums give); not read otherwise.
        var slot: UInt32
        var histogram: [PartitionCount]? = nil
    }

    /// A non-empty grid cell with its totals; its partition counts are
    /// `histogram[histogramStart..<histogramEnd]` of its ``Grid`` (in ``KeptCells``, the
    /// range of their packed bytes).
    ///
    /// 72 bytes, as kept for millions of cells: the bounds of its counts are kept in 32
    /// bits each, beside the slot, and a single point's position is its totals' coordinate
    /// sums. A grid's histogram holds far fewer than 2^32 counts
    /// (16 bytes each), as its cells' table numbers them in 32 bits; a block's packed
    /// counts, at most 256 cells of 65,536 partitions of 18 bytes, fewer than 2^32 bytes.
    struct GridCell: Sendable {
        var x: UInt32
        var y: UInt32
        var aggregate: NodeAggregate
        /// The point's slot when the count is 1 (its position is the coordinate sums);
        /// not read otherwise.
        var slot: UInt32
        private var start: UInt32
        private var end: UInt32

        init(x: UInt32, y: UInt32, aggregate: NodeAggregate, slot: UInt32, histogramStart: Int, histogramEnd: Int) {
            self.x = x
            self.y = y
            self.aggregate = aggregate
            self.slot = slot
            start = UInt32(truncatingIfNeeded: histogramStart)
            end = UInt32(truncatingIfNeeded: histogramEnd)
        }

        var histogramStart: Int {
            get { Int(start) }
            set { start = UInt32(truncatingIfNeeded: newValue) }
        }

        var histogramEnd: Int {
            get { Int(end) }
            set { end = UInt32(truncatingIfNeeded: newValue) }
        }
    }

    struct Grid: Sendable {
        /// Cells by row, then column.
        var cells: [GridCell]
        var histogram: [PartitionTotal]
        /// Cell index + 1 (0 for none) by position in the bounding range of the cells
        /// widened by one position on every side (so that every cell's 8 neighbours have
        /// a place in it), when that range is small enough for a table; binary search
        /// otherwise.
        var table: [Int32] = []
        /// The table's first position's cell and its row length.
        var minX = 0, minY = 0, stride = 0
        /// Table offsets of the 8 neighbours, in mask-bit order.
        var neighbourDeltas: [Int] = []

        /// Appends a cell (after the cells before it by row, then column) with its
        /// partition counts, taken from another grid.
        mutating func append(_ cell: inout GridCell, histogram counts: ArraySlice<PartitionTotal>) {
            cell.histogramStart = histogram.count
            histogram.append(contentsOf: counts)
            cell.histogramEnd = histogram.count
            cells.append(cell)
        }

        /// Builds the lookup table when the cells' range holds at most a few times as
        /// many positions as there are cells.
        mutating func index() {
            guard let first = cells.first else { return }
            var x0 = Int(first.x), x1 = Int(first.x)
            for cell in cells {
                x0 = min(x0, Int(cell.x))
                x1 = max(x1, Int(cell.x))
            }
            let y0 = Int(first.y), y1 = Int(cells[cells.count - 1].y)
            let w = x1 - x0 + 3, h = y1 - y0 + 3
            guard w * h <= 8 * cells.count + 1_024 else { return }
            minX = x0 - 1
            minY = y0 - 1
            stride = w
            neighbourDeltas = LiveClusterIndex.neighbourOffsets.map { $0.dy * w + $0.dx }
            table = [Int32](repeating: 0, count: w * h)
            for i in cells.indices {
                table[position(i)] = Int32(i + 1)
            }
        }

        /// A cell's position in the table.
        @inline(__always)
        private func position(_ i: Int) -> Int {
            (Int(cells[i].y) - minY) * stride + Int(cells[i].x) - minX
        }

        /// The index of the cell at `(x, y)`, if it is in the grid, by binary search: for
        /// a grid without a table.
        private func search(_ x: Int, _ y: Int) -> Int? {
            guard x >= 0, y >= 0 else { return nil }
            let key = (UInt64(y) << 32) | UInt64(x)
            var low = 0, high = cells.count
            while low < high {
                let mid = (low + high) / 2
                let k = (UInt64(cells[mid].y) << 32) | UInt64(cells[mid].x)
                if k < key { low = mid + 1 } else { high = mid }
            }
            guard low < cells.count, cells[low].x == UInt32(x), cells[low].y == UInt32(y) else { return nil }
            return low
        }

        /// Calls `body` with the mask bit and index of each of cell `i`'s neighbours in
        /// the grid, in bit order.
        @inline(__always)
        func forEachNeighbour(of i: Int, _ body: (_ bit: Int, _ j: Int) -> Void) {
            if table.isEmpty {
                let x = Int(cells[i].x), y = Int(cells[i].y)
                for (bit, offset) in LiveClusterIndex.neighbourOffsets.enumerated() {
                    if let j = search(x + offset.dx, y + offset.dy) { body(bit, j) }
                }
                return
            }
            let p = position(i)
            table.withUnsafeBufferPointer { table in
                neighbourDeltas.withUnsafeBufferPointer { deltas in
                    for bit in 0..<8 {
                        let j = Int(table[p + deltas[bit]])
                        if j != 0 { body(bit, j - 1) }
                    }
                }
            }
        }
    }

    /// A block's cells' totals as a kept entry holds them (``GroupCache/Entry/cells``):
    /// read only when the block is formed again after a change, so its counts by
    /// partition, most of its memory (a dense block's cell holds dozens), are packed:
    /// for each, the partition less the one before it in the cell, the count, and the
    /// weight less the count, as variable-length integers (signed ones zigzagged), about
    /// 3 bytes (sightings of 200 species) where a ``PartitionTotal`` takes 16.
    struct KeptCells: Sendable {
        /// Cells by row, then column; a cell's histogram range is that of its counts'
        /// bytes in `packed`.
        let cells: [GridCell]
        let packed: [UInt8]

        init(_ grid: Grid) {
            var cells: [GridCell] = []
            cells.reserveCapacity(grid.cells.count)
            var packed: [UInt8] = []
            packed.reserveCapacity(grid.histogram.count * 4)
            for var cell in grid.cells {
                let start = packed.count
                var previous = 0
                for total in grid.histogram[cell.histogramStart..<cell.histogramEnd] {
                    Self.append(Self.zigzag(total.partition &- previous), to: &packed)
                    Self.append(UInt64(total.count), to: &packed)
                    Self.append(Self.zigzag(total.weight &- total.count), to: &packed)
                    previous = total.partition
                }
                cell.histogramStart = start
                cell.histogramEnd = packed.count
                cells.append(cell)
            }
            self.cells = cells
            self.packed = packed.trimmed()
        }

        /// Appends the counts by partition of `cell`, one of ``cells``, to `histogram`.
        func appendCounts(of cell: GridCell, to histogram: inout [PartitionTotal]) {
            packed.withUnsafeBufferPointer { bytes in
                var i = cell.histogramStart
                var partition = 0
                func next() -> UInt64 {
                    var value: UInt64 = 0, shift: UInt64 = 0
                    while true {
                        let byte = bytes[i]
                        i += 1
                        value |= UInt64(byte & 0x7f) << shift
                        if byte < 0x80 { return value }
                        shift += 7
                    }
                }
                while i < cell.histogramEnd {
                    partition &+= Self.unzigzag(next())
                    let count = Int(truncatingIfNeeded: next())
                    let weight = count &+ Self.unzigzag(next())
                    histogram.append(PartitionTotal(partition: partition, count: count, weight: weight))
                }
            }
        }

        /// The cells with their counts unpacked, as a grid; for tests (an update unpacks
        /// only the cells it keeps, ``appendCounts(of:to:)``).
        var grid: Grid {
            var grid = Grid(cells: [], histogram: [])
            grid.cells.reserveCapacity(cells.count)
            for cell in cells {
                var unpacked = cell
                unpacked.histogramStart = grid.histogram.count
                appendCounts(of: cell, to: &grid.histogram)
                unpacked.histogramEnd = grid.histogram.count
                grid.cells.append(unpacked)
            }
            grid.index()
            return grid
        }

        /// The heap memory of the cells and their packed counts.
        var storageBytes: Int { cells.storageBytes + packed.storageBytes }

        private static func zigzag(_ value: Int) -> UInt64 {
            UInt64(bitPattern: Int64(value) << 1 ^ Int64(value) >> 63)
        }

        private static func unzigzag(_ value: UInt64) -> Int {
            Int(Int64(bitPattern: value >> 1) ^ (0 &- Int64(bitPattern: value & 1)))
        }

        private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
    }

    /// Gathers per-cell totals at zoom `z` within the range of grid cells, over the
    /// filter's partitions.
    func collect(zoom z: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32, filter: LiveFilter,
                 into contributions: inout [Contribution]) {
        let last = UInt32(grid.cellsPerSide(zoom: z) - 1)
        guard x0 <= last, y0 <= last else { return }
        let (sx0, sx1) = grid.subRange(x0, min(x1, last), zoom: z), (sy0, sy1) = grid.subRange(y0, min(y1, last), zoom: z)
        let level = grid.level(zoom: z), span = UInt32(grid.span)
        forEachTree(filter) { partition, tree, filter in
            Self.collect(tree, level: level, span: span, x0: sx0, y0: sy0, x1: sx1, y1: sy1, filter: filter,
                         partition: partition, into: &contributions)
        }
    }

    /// The quadtrees a filter needs, each with the filter to apply in it and the
    /// partition its points all belong to (-1 for the combined tree): the chosen
    /// partitions' trees in a partitioned index, the combined tree otherwise (which then
    /// tests partitions point by point).
    func forEachTree(_ filter: LiveFilter, _ body: (Int, QuadNode, LiveFilter) -> Void) {
        if let partitions = filter.partitions {
            if partitioned {
                var single = filter
                single.partitions = nil
                for partition in Set(partitions).sorted() where partition >= 0 && partition < trees.count {
                    body(partition, trees[partition], single)
                }
            } else {
                var scan = filter
                scan.allowedPartitions = Set(partitions)
                body(-1, combined, scan)
            }
        } else {
            body(-1, combined, filter)
        }
    }

    /// Totals per grid cell of `span` x `span` quadtree cells of `level`, of the points in
    /// the quadtree cells `x0...x1` x `y0...y1` of that level (whole grid cells).
    static func collect(_ tree: QuadNode, level: Int, span: UInt32, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32,
                        filter: LiveFilter, partition: Int, into contributions: inout [Contribution]) {
        let span = SpanDivider(span)
        withUnsafePointer(to: tree) { root in
            collect(root, level: level, span: span, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter,
                    partition: partition, into: &contributions)
        }
    }

    /// The walk of ``collect(_:level:x0:y0:x1:y1:filter:partition:into:)``, through
    /// pointers: reading a node's fields in place, where passing node values would copy
    /// each child (three array references to retain and release).
    private static func collect(_ pointer: UnsafePointer<QuadNode>, level: Int, span: SpanDivider, x0: UInt32, y0: UInt32,
                                x1: UInt32, y1: UInt32, filter: LiveFilter, partition: Int,
                                into contributions: inout [Contribution]) {
        let node = pointer
        guard node.pointee.aggregate.count > 0,
              node.pointee.overlaps(level: level, x0: x0, y0: y0, x1: x1, y1: y1) else { return }
        if let (cx, cy) = wholeCell(of: node, level: level, span: span) {
            if !filter.testsPoints {
                // The slot matters only for a single point (it is then shown as itself).
                let aggregate = node.pointee.aggregate
                let single = aggregate.count == 1 ? node.pointee.firstEntry : nil
                contributions.append(Contribution(
                    x: cx, y: cy, partition: partition, aggregate: aggregate, slot: single?.slot ?? UInt32.max,
                    histogram: node.pointee.histogram.isEmpty ? nil : node.pointee.histogram))
                return
            }
            if partition >= 0 || node.pointee.histogram.isEmpty {
                // One partition, or none counted: one contribution for the node.
                var aggregate = NodeAggregate()
                var first: LeafEntry?
                node.pointee.forEachEntry { entry in
                    guard filter.passes(entry) else { return }
                    aggregate.add(entry)
                    if first == nil { first = entry }
                }
                if let first {
                    contributions.append(Contribution(x: cx, y: cy, partition: partition, aggregate: aggregate,
                                                      slot: first.slot))
                }
                return
            }
            node.pointee.forEachEntry { entry in
                guard filter.passes(entry) else { return }
                var aggregate = NodeAggregate()
                aggregate.add(entry)
                contributions.append(Contribution(x: cx, y: cy, partition: Int(entry.partition), aggregate: aggregate,
                                                  slot: entry.slot))
            }
            return
        }
        if node.pointee.isLeaf {
            for entry in node.pointee.entries where filter.passes(entry) {
                let sx = QuadNode.cell(entry.qx, level: level), sy = QuadNode.cell(entry.qy, level: level)
                guard sx >= x0, sx <= x1, sy >= y0, sy <= y1 else { continue }
                let cx = span.quotient(sx), cy = span.quotient(sy)
                var aggregate = NodeAggregate()
                aggregate.add(entry)
                contributions.append(Contribution(x: cx, y: cy, partition: Int(entry.partition), aggregate: aggregate,
                                                  slot: entry.slot))
            }
            return
        }
        node.pointee.children.withUnsafeBufferPointer { children in
            for i in children.indices {
                collect(children.baseAddress! + i, level: level, span: span, x0: x0, y0: y0, x1: x1, y1: y1,
                        filter: filter, partition: partition, into: &contributions)
            }
        }
    }

    /// The totals per grid cell at zoom `z` of the points in the cells `x0...x1` x
    /// `y0...y1` that pass `filter`, as ``fold(_:)`` of ``collect(zoom:x0:y0:x1:y1:filter:into:)``
    /// makes them. Without partition counts or a filter that tests points, and for a
    /// range of at most ``denseCellLimit`` cells (a block, a low zoom's world), the totals
    /// are summed in a table of the range's cells as the walk finds them: one addition
    /// per node or point instead of a contribution each, sorted into cells afterwards.
    /// `points`, when given, bounds the points in the range from above: a table for far
    /// fewer points than cells would cost more than it saves.
    func cellGrid(zoom z: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32, filter: LiveFilter,
                  points: Int? = nil) -> Grid {
        let last = UInt32(grid.cellsPerSide(zoom: z) - 1)
        guard x0 <= last, y0 <= last, x0 <= x1, y0 <= y1 else { return Grid(cells: [], histogram: []) }
        let cx1 = min(x1, last), cy1 = min(y1, last)
        let width = Int(cx1 - x0) + 1, height = Int(cy1 - y0) + 1
        guard !partitioned, filter.partitions == nil, !filter.testsPoints, width * height <= Self.denseCellLimit,
              (points ?? Int.max) >= width * height / 4 else {
            var contributions: [Contribution] = []
            // At most a contribution a point: room for as many, up to a few thousand, so
            // that a dense block's contributions are not copied at each doubling.
            if let points { contributions.reserveCapacity(min(points, 4_096)) }
            collect(zoom: z, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter, into: &contributions)
            return fold(contributions)
        }
        var cells = [DenseCell](repeating: DenseCell(), count: width * height)
        var filled = 0
        let (sx0, sx1) = grid.subRange(x0, cx1, zoom: z), (sy0, sy1) = grid.subRange(y0, cy1, zoom: z)
        let level = grid.level(zoom: z)
        cells.withUnsafeMutableBufferPointer { cells in
            var walk = DenseWalk(cells: cells, x0: x0, y0: y0, width: width, height: height, level: level,
                                 span: SpanDivider(UInt32(grid.span)), sx0: sx0, sy0: sy0, sx1: sx1, sy1: sy1)
            withUnsafePointer(to: combined) { walk.accumulate($0) }
            filled = walk.filled
        }
        var result = Grid(cells: [], histogram: [])
        result.cells.reserveCapacity(filled)
        for k in cells.indices where cells[k].aggregate.count > 0 {
            result.cells.append(GridCell(x: x0 + UInt32(k % width), y: y0 + UInt32(k / width),
                                         aggregate: cells[k].aggregate, slot: cells[k].slot,
                                         histogramStart: 0, histogramEnd: 0))
        }
        result.index()
        return result
    }

    /// Largest range of grid cells whose totals ``cellGrid(zoom:x0:y0:x1:y1:filter:)``
    /// sums in a table.
    static let denseCellLimit = 65_536

    /// Totals of one grid cell in ``cellGrid(zoom:x0:y0:x1:y1:filter:)``'s table; its slot
    /// is that of its first point, read when it has one point only.
    struct DenseCell {
        var aggregate = NodeAggregate()
        var slot = UInt32.max
    }

    /// Exact quotients by a grid's span (1...16) of 32-bit values, by one multiplication
    /// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019: for a
    /// divisor d > 1 and any 32-bit n, n / d is the high 64 bits of (2^64 / d + 1) * n).
    struct SpanDivider {
        let span: UInt32
        let multiplier: UInt64

        init(_ span: UInt32) {
            self.span = span
            multiplier = span > 1 ? UInt64.max / UInt64(span) + 1 : 0
        }

        @inline(__always)
        func quotient(_ n: UInt32) -> UInt32 {
            span == 1 ? n : UInt32(truncatingIfNeeded: multiplier.multipliedFullWidth(by: UInt64(n)).high)
        }
    }

    /// The walk of ``cellGrid(zoom:x0:y0:x1:y1:filter:)`` for the unfiltered points of an
    /// index without partition counts: ``collect(_:level:span:x0:y0:x1:y1:filter:partition:into:)``'s
    /// walk, adding to a table of the range's cells (row by row) where that one appends
    /// contributions. The tree is read through pointers and the table written through
    /// one, so that the walk retains nothing and checks no array's uniqueness.
    struct DenseWalk {
        let cells: UnsafeMutableBufferPointer<DenseCell>
        /// The range's first grid cell and size.
        let x0: UInt32, y0: UInt32, width: Int, height: Int
        /// Quadtree level of the sub-cells and the range in them.
        let level: Int
        let span: SpanDivider
        let sx0: UInt32, sy0: UInt32, sx1: UInt32, sy1: UInt32
        var filled = 0

        init(cells: UnsafeMutableBufferPointer<DenseCell>, x0: UInt32, y0: UInt32, width: Int, height: Int,
             level: Int, span: SpanDivider, sx0: UInt32, sy0: UInt32, sx1: UInt32, sy1: UInt32) {
            self.cells = cells
            self.x0 = x0
            self.y0 = y0
            self.width = width
            self.height = height
            self.level = level
            self.span = span
            self.sx0 = sx0
            self.sy0 = sy0
            self.sx1 = sx1
            self.sy1 = sy1
        }

        /// The table position of grid cell `(cx, cy)`, `nil` outside the range.
        @inline(__always)
        private func position(_ cx: UInt32, _ cy: UInt32) -> Int? {
            guard cx >= x0, cy >= y0 else { return nil }
            let dx = Int(cx &- x0), dy = Int(cy &- y0)
            guard dx < width, dy < height else { return nil }
            return dy &* width &+ dx
        }

        @inline(__always)
        private mutating func add(_ k: Int, _ aggregate: NodeAggregate, slot: UInt32) {
            let cell = cells.baseAddress! + k
            if cell.pointee.aggregate.count == 0 {
                filled += 1
                cell.pointee.slot = slot
            }
            cell.pointee.aggregate.add(aggregate)
        }

        mutating func accumulate(_ node: UnsafePointer<QuadNode>) {
            guard node.pointee.aggregate.count > 0,
                  node.pointee.overlaps(level: level, x0: sx0, y0: sy0, x1: sx1, y1: sy1) else { return }
            if let (cx, cy) = LiveClusterIndex.wholeCell(of: node, level: level, span: span) {
                // A node inside one grid cell that meets the range lies in a cell of the range.
                guard let k = position(cx, cy) else { return }
                if node.pointee.aggregate.count == 1, let single = Self.firstEntry(node) {
                    add(k, node.pointee.aggregate, slot: single.slot)
                } else {
                    add(k, node.pointee.aggregate, slot: UInt32.max)
                }
                return
            }
            if node.pointee.isLeaf {
                node.pointee.entries.withUnsafeBufferPointer { entries in
                    for i in entries.indices {
                        let sx = QuadNode.cell(entries[i].qx, level: level), sy = QuadNode.cell(entries[i].qy, level: level)
                        guard sx >= sx0, sx <= sx1, sy >= sy0, sy <= sy1,
                              let k = position(span.quotient(sx), span.quotient(sy)) else { continue }
                        var aggregate = NodeAggregate()
                        aggregate.add(entries[i])
                        add(k, aggregate, slot: entries[i].slot)
                    }
                }
                return
            }
            node.pointee.children.withUnsafeBufferPointer { children in
                for i in children.indices { accumulate(children.baseAddress! + i) }
            }
        }

        /// The first point below a node in quadtree order, read in place.
        private static func firstEntry(_ node: UnsafePointer<QuadNode>) -> LeafEntry? {
            if node.pointee.isLeaf { return node.pointee.entries.first }
            return node.pointee.children.withUnsafeBufferPointer { children in
                children.isEmpty ? nil : firstEntry(children.baseAddress!)
            }
        }
    }

    /// The grid cell (of `span` x `span` quadtree cells of `level`) that holds the whole
    /// node, if one does.
    @inline(__always)
    static func wholeCell(of node: UnsafePointer<QuadNode>, level: Int, span: SpanDivider) -> (x: UInt32, y: UInt32)? {
        if node.pointee.level >= level {
            return (span.quotient(QuadNode.cell(node.pointee.qx, level: level)),
                    span.quotient(QuadNode.cell(node.pointee.qy, level: level)))
        }
        guard span.span > 1 else { return nil }
        // The node's first and last sub-cells are below 2^level <= 2^32.
        let shift = UInt32(level - node.pointee.level)
        let end = (UInt32(1) << shift) &- 1
        let nx0 = QuadNode.cell(node.pointee.qx, level: node.pointee.level) << shift
        let ny0 = QuadNode.cell(node.pointee.qy, level: node.pointee.level) << shift
        let cx = span.quotient(nx0), cy = span.quotient(ny0)
        guard cx == span.quotient(nx0 | end), cy == span.quotient(ny0 | end) else { return nil }
        return (cx, cy)
    }

    /// Sums contributions per cell, with counts per partition when the index keeps them;
    /// the grid comes indexed for ``Grid/forEachNeighbour(of:_:)``.
    func fold(_ contributions: [Contribution]) -> Grid {
        contributions.withUnsafeBufferPointer { contributions in
            let order = Self.cellOrder(contributions)
            // Every count first, in cell order, then each cell's sorted and merged in
            // place: the arrays are filled through pointers, sized once.
            var counts = 0
            if partitioned {
                for i in contributions.indices { counts += contributions[i].histogram?.count ?? 1 }
            } else {
                for i in contributions.indices { counts += contributions[i].histogram?.count ?? 0 }
            }
            var cells: [GridCell] = []
            let histogram = [PartitionTotal](unsafeUninitializedCapacity: counts) { histogram, used in
                var write = 0
                var current: GridCell?
                func finish(_ cell: GridCell) {
                    var cell = cell
                    write = Self.normalizeCounts(histogram, from: cell.histogramStart, to: write)
                    cell.histogramEnd = write
                    cells.append(cell)
                }
                for i in order {
                    // Read in place: a copy of a contribution would retain its histogram.
                    let c = contributions.baseAddress! + Int(i)
                    if current != nil, current!.x == c.pointee.x, current!.y == c.pointee.y {
                        current!.aggregate.add(c.pointee.aggregate)
                    } else {
                        if let done = current {
                            finish(done)
                        } else {
                            cells.reserveCapacity(contributions.count)
                        }
                        current = GridCell(x: c.pointee.x, y: c.pointee.y, aggregate: c.pointee.aggregate,
                                           slot: c.pointee.slot, histogramStart: write, histogramEnd: write)
                    }
                    if let items = c.pointee.histogram {
                        for item in items {
                            histogram[write] = PartitionTotal(partition: Int(item.partition), count: Int(item.count),
                                                              weight: Int(item.weight))
                            write += 1
                        }
                    } else if partitioned, c.pointee.partition >= 0 {
                        histogram[write] = PartitionTotal(partition: c.pointee.partition, count: c.pointee.aggregate.count,
                                                          weight: c.pointee.aggregate.weight)
                        write += 1
                    }
                }
                if let done = current { finish(done) }
                used = write
            }
            var grid = Grid(cells: cells, histogram: histogram)
            grid.index()
            return grid
        }
    }

    /// Positions of the contributions in cell order (row, then column). The order within
    /// a cell is free: folding sums, takes a minimum and a latest, and sorts the
    /// partition counts. A counting sort over the cells' bounding range when that range
    /// is not much larger than the contributions (a viewport's cells), else a sort.
    static func cellOrder(_ contributions: UnsafeBufferPointer<Contribution>) -> [Int32] {
        guard let first = contributions.first else { return [] }
        var x0 = first.x, x1 = first.x, y0 = first.y, y1 = first.y
        for i in contributions.indices {
            x0 = min(x0, contributions[i].x)
            x1 = max(x1, contributions[i].x)
            y0 = min(y0, contributions[i].y)
            y1 = max(y1, contributions[i].y)
        }
        let width = Int(x1 - x0) + 1, height = Int(y1 - y0) + 1
        let (positions, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, positions <= 4 * contributions.count + 4_096 else {
            return contributions.indices.map { Int32($0) }.sorted {
                (contributions[Int($0)].y, contributions[Int($0)].x) < (contributions[Int($1)].y, contributions[Int($1)].x)
            }
        }
        var starts = [Int32](repeating: 0, count: positions + 1)
        for i in contributions.indices {
            starts[Int(contributions[i].y - y0) * width + Int(contributions[i].x - x0) + 1] += 1
        }
        for k in 1...positions { starts[k] += starts[k - 1] }
        var order = [Int32](repeating: 0, count: contributions.count)
        for i in contributions.indices {
            let k = Int(contributions[i].y - y0) * width + Int(contributions[i].x - x0)
            order[Int(starts[k])] = Int32(i)
            starts[k] += 1
        }
        return order
    }

    /// Sorts the partition counts `counts[start..<end]` (a cell's) by partition and
    /// merges repeats, in place; returns the new end. Counts of one node come sorted,
    /// without repeats: a cell of one node is left as it is.
    static func normalizeCounts(_ counts: UnsafeMutableBufferPointer<PartitionTotal>, from start: Int, to end: Int) -> Int {
        guard end - start > 1 else { return end }
        var ascending = true
        for i in start + 1..<end where counts[i - 1].partition >= counts[i].partition {
            ascending = false
            break
        }
        if ascending { return end }
        // In place (the sort of a copy allocated an array per cell); repeats are integer
        // sums, the same in any order.
        var cell = UnsafeMutableBufferPointer(rebasing: counts[start..<end])
        cell.sort { $0.partition < $1.partition }
        var write = start + 1
        for i in start + 1..<end {
            if counts[write - 1].partition == counts[i].partition {
                counts[write - 1].add(counts[i])
            } else {
                counts[write] = counts[i]
                write += 1
            }
        }
        return write
    }
}
