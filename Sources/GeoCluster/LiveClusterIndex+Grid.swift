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

    /// Appends the items whose positions lie in `rect` (projected units) at zoom `z`.
    func appendClusters(in rect: UnitRect, zoom z: Int, filter: LiveFilter, into answer: inout LiveAnswer) {
        if z > options.maxZoom {
            let level = min(32, options.maxZoom + options.levelShift + 1)
            let (x0, y0, x1, y1) = cellRange(rect, level: level)
            forEachPoint(level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter) { entry in
                if rect.contains(LeafEntry.unquantize(entry.qx), LeafEntry.unquantize(entry.qy)) {
                    answer.features.append(pointFeature(entry))
                }
                return true
            }
            return
        }
        let level = z + options.levelShift
        let blockLevel = max(0, level - Self.blockShift)
        let blocks = cellRange(rect, level: blockLevel)
        // A query over many blocks (the world at a deep zoom) forms its groups in one
        // grid: block by block, the work and memory per block would outweigh them, and
        // its kept groups would push out those of the views in use.
        let blockCount = Int(blocks.2 - blocks.0 + 1) * Int(blocks.3 - blocks.1 + 1)
        if filter.partitions == nil, !filter.testsPoints, blockCount <= Self.blocksKeptPerQuery {
            appendKeptGroups(in: rect, zoom: z, level: level, blockLevel: blockLevel, blocks: blocks, into: &answer)
            return
        }
        // The cells of every block the rect meets, grouped block by block in one grid.
        let (x0, y0, x1, y1) = cells(of: blocks, blockLevel: blockLevel, level: level)
        var contributions: [Contribution] = []
        // About one contribution per cell of a viewport's range (a world query at a deep
        // zoom has billions of cells, mostly empty: there the array grows as it fills).
        contributions.reserveCapacity(min(Int(x1 - x0 + 1) * Int(y1 - y0 + 1), 4_096))
        collect(level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter, into: &contributions)
        append(formItems(contributions, zoom: z, filter: filter), within: rect, into: &answer)
    }

    /// The items of the groups that `contributions` (per-cell totals at zoom `z`) form:
    /// block by block along the Z-order curve, as unfiltered queries visit the blocks, and
    /// within a block in the order the groups formed.
    func formItems(_ contributions: [Contribution], zoom z: Int, filter: LiveFilter) -> Items {
        let grid = fold(contributions)
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
        var items = Items()
        items.reserve(groups.count)
        for (_, g) in order {
            appendGroup(groups[g], grid: grid, zoom: z, filter: filter, into: &items)
        }
        return items
    }

    /// Grid cells per block side, as a power of two.
    static let blockShift = 4

    /// The cells of `level` in a range of blocks of `blockLevel`.
    func cells(of blocks: (UInt32, UInt32, UInt32, UInt32), blockLevel: Int,
               level: Int) -> (UInt32, UInt32, UInt32, UInt32) {
        let shift = UInt32(level - blockLevel), last = UInt32((UInt64(1) << UInt64(level)) - 1)
        return (blocks.0 << shift, blocks.1 << shift,
                min(last, blocks.2 << shift | (1 << shift - 1)), min(last, blocks.3 << shift | (1 << shift - 1)))
    }

    /// The unfiltered items of the blocks `blocks` (a range of block coordinates) at zoom
    /// `z` that lie in `rect`: from the kept groups of each non-empty block, formed and
    /// kept first where the block's points changed since.
    private func appendKeptGroups(in rect: UnitRect, zoom z: Int, level: Int, blockLevel: Int,
                                  blocks: (UInt32, UInt32, UInt32, UInt32), into answer: inout LiveAnswer) {
        let side = Double(UInt64(1) << UInt64(blockLevel))
        withUnsafePointer(to: combined) { root in
            Self.forEachBlock(root, level: blockLevel, x0: blocks.0, y0: blocks.1, x1: blocks.2, y1: blocks.3) { bx, by, node in
                let key = UInt64(level) << 48 | UInt64(bx) << 24 | UInt64(by)
                let stamp = node.pointee.stamp
                let kept: GroupCache.Entry
                if let entry = groupCache.entry(key, stamp: stamp) {
                    kept = entry
                } else {
                    var contributions: [Contribution] = []
                    let (x0, y0, x1, y1) = cells(of: (bx, by, bx, by), blockLevel: blockLevel, level: level)
                    Self.collect(node, level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: .all, partition: -1,
                                 into: &contributions)
                    kept = GroupCache.Entry(stamp: stamp, items: formItems(contributions, zoom: z, filter: .all))
                    groupCache.keep(kept, for: key, budget: max(GroupCache.minimumBudget, count / 2))
                }
                // A block inside the rect needs no test per item.
                let inside = Double(bx) / side >= rect.minX && Double(bx + 1) / side <= rect.maxX
                    && Double(by) / side >= rect.minY && Double(by + 1) / side <= rect.maxY
                append(kept.items, within: inside ? nil : rect, into: &answer)
            }
        }
    }

    /// Largest number of blocks in a query's range for which it reads and keeps the groups
    /// of each block.
    static let blocksKeptPerQuery = 1_024

    /// Calls `body` with each non-empty block of `level` within `x0...x1` x `y0...y1`
    /// along the Z-order curve, and the node that holds its points: the node of the
    /// block's cell or one inside it, or a leaf above it (whose points in the block count).
    static func forEachBlock(_ node: UnsafePointer<QuadNode>, level: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32,
                             _ body: (UInt32, UInt32, UnsafePointer<QuadNode>) -> Void) {
        guard node.pointee.aggregate.count > 0,
              node.pointee.overlaps(level: level, x0: x0, y0: y0, x1: x1, y1: y1) else { return }
        if node.pointee.level >= level {
            body(QuadNode.cell(node.pointee.qx, level: level), QuadNode.cell(node.pointee.qy, level: level), node)
            return
        }
        if node.pointee.isLeaf {
            var codes: [UInt64] = []
            for entry in node.pointee.entries {
                let bx = QuadNode.cell(entry.qx, level: level), by = QuadNode.cell(entry.qy, level: level)
                if bx >= x0, bx <= x1, by >= y0, by <= y1 { codes.append(BulkBuilder.zOrder(bx, by)) }
            }
            codes.sort()
            var previous: UInt64?
            for code in codes where code != previous {
                previous = code
                let (bx, by) = BulkBuilder.position(code)
                body(bx, by, node)
            }
            return
        }
        node.pointee.children.withUnsafeBufferPointer { children in
            for i in children.indices {
                forEachBlock(children.baseAddress! + i, level: level, x0: x0, y0: y0, x1: x1, y1: y1, body)
            }
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
        /// The point's slot and coordinate when the count is 1 (it is then shown as
        /// itself); not read otherwise.
        var slot: UInt32
        var coordinate: Coordinate
        var histogram: [PartitionCount]? = nil
    }

    /// A non-empty grid cell with its totals; its partition counts are
    /// `histogram[histogramStart..<histogramEnd]`.
    struct GridCell {
        var x: UInt32
        var y: UInt32
        var aggregate: NodeAggregate
        /// The point's slot and coordinate when the count is 1; not read otherwise.
        var slot: UInt32
        var coordinate: Coordinate
        var histogramStart: Int
        var histogramEnd: Int
    }

    struct Grid {
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

    /// Gathers per-cell totals at `level` within the cell range, over the filter's partitions.
    func collect(level: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32, filter: LiveFilter,
                 into contributions: inout [Contribution]) {
        forEachTree(filter) { partition, tree, filter in
            Self.collect(tree, level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter,
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

    static func collect(_ tree: QuadNode, level: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32,
                        filter: LiveFilter, partition: Int, into contributions: inout [Contribution]) {
        withUnsafePointer(to: tree) { root in
            collect(root, level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter, partition: partition,
                    into: &contributions)
        }
    }

    /// The walk of ``collect(_:level:x0:y0:x1:y1:filter:partition:into:)``, through
    /// pointers: reading a node's fields in place, where passing node values would copy
    /// each child (three array references to retain and release).
    private static func collect(_ pointer: UnsafePointer<QuadNode>, level: Int, x0: UInt32, y0: UInt32, x1: UInt32,
                                y1: UInt32, filter: LiveFilter, partition: Int,
                                into contributions: inout [Contribution]) {
        let node = pointer
        guard node.pointee.aggregate.count > 0,
              node.pointee.overlaps(level: level, x0: x0, y0: y0, x1: x1, y1: y1) else { return }
        if node.pointee.level >= level {
            let cx = QuadNode.cell(node.pointee.qx, level: level), cy = QuadNode.cell(node.pointee.qy, level: level)
            if !filter.testsPoints {
                // Slot and coordinate matter only for a single point (it is then shown as itself).
                let aggregate = node.pointee.aggregate
                let single = aggregate.count == 1 ? node.pointee.firstEntry : nil
                contributions.append(Contribution(
                    x: cx, y: cy, partition: partition, aggregate: aggregate,
                    slot: single?.slot ?? UInt32.max, coordinate: single?.coordinate ?? Coordinate(longitude: 0, latitude: 0),
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
                                                      slot: first.slot, coordinate: first.coordinate))
                }
                return
            }
            node.pointee.forEachEntry { entry in
                guard filter.passes(entry) else { return }
                var aggregate = NodeAggregate()
                aggregate.add(entry)
                contributions.append(Contribution(x: cx, y: cy, partition: Int(entry.partition), aggregate: aggregate,
                                                  slot: entry.slot, coordinate: entry.coordinate))
            }
            return
        }
        if node.pointee.isLeaf {
            for entry in node.pointee.entries where filter.passes(entry) {
                let cx = QuadNode.cell(entry.qx, level: level), cy = QuadNode.cell(entry.qy, level: level)
                guard cx >= x0, cx <= x1, cy >= y0, cy <= y1 else { continue }
                var aggregate = NodeAggregate()
                aggregate.add(entry)
                contributions.append(Contribution(x: cx, y: cy, partition: Int(entry.partition), aggregate: aggregate,
                                                  slot: entry.slot, coordinate: entry.coordinate))
            }
            return
        }
        node.pointee.children.withUnsafeBufferPointer { children in
            for i in children.indices {
                collect(children.baseAddress! + i, level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter,
                        partition: partition, into: &contributions)
            }
        }
    }

    /// Sums contributions per cell, with counts per partition when the index keeps them;
    /// the grid comes indexed for ``Grid/forEachNeighbour(of:_:)``.
    func fold(_ contributions: [Contribution]) -> Grid {
        var grid = Grid(cells: [], histogram: [])
        grid.cells.reserveCapacity(contributions.count)
        contributions.withUnsafeBufferPointer { contributions in
            // Read in place: a copy of a contribution would retain its histogram.
            for i in Self.cellOrder(contributions) {
                let c = contributions.baseAddress! + Int(i)
                if let last = grid.cells.last, last.x == c.pointee.x, last.y == c.pointee.y {
                    let i = grid.cells.count - 1
                    grid.cells[i].aggregate.add(c.pointee.aggregate)
                } else {
                    if let last = grid.cells.indices.last { normalizeHistogram(of: last, in: &grid) }
                    grid.cells.append(GridCell(x: c.pointee.x, y: c.pointee.y, aggregate: c.pointee.aggregate,
                                               slot: c.pointee.slot, coordinate: c.pointee.coordinate,
                                               histogramStart: grid.histogram.count, histogramEnd: grid.histogram.count))
                }
                if let histogram = c.pointee.histogram {
                    for item in histogram {
                        grid.histogram.append(PartitionTotal(partition: Int(item.partition), count: Int(item.count),
                                                             weight: Int(item.weight)))
                    }
                } else if partitioned, c.pointee.partition >= 0 {
                    grid.histogram.append(PartitionTotal(partition: c.pointee.partition, count: c.pointee.aggregate.count,
                                                         weight: c.pointee.aggregate.weight))
                }
                grid.cells[grid.cells.count - 1].histogramEnd = grid.histogram.count
            }
        }
        if let last = grid.cells.indices.last { normalizeHistogram(of: last, in: &grid) }
        grid.index()
        return grid
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

    /// Sorts a cell's partition counts by partition and merges repeats in place.
    private func normalizeHistogram(of cell: Int, in grid: inout Grid) {
        let start = grid.cells[cell].histogramStart, end = grid.cells[cell].histogramEnd
        guard end - start > 1 else { return }
        let items = grid.histogram[start..<end].sorted { $0.partition < $1.partition }
        var write = start
        for item in items {
            if write > start, grid.histogram[write - 1].partition == item.partition {
                grid.histogram[write - 1].add(item)
            } else {
                grid.histogram[write] = item
                write += 1
            }
        }
        grid.histogram.removeSubrange(write..<end)
        grid.cells[cell].histogramEnd = write
    }
}
