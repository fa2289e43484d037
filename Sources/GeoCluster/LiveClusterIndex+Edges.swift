import Synchronization

/// Forming clusters, step 5: merges across block edges.
///
/// Groups never take cells of two blocks, so that a block's groups depend on its points
/// alone. Two items of neighbouring blocks can then lie closer than half the radius, one
/// on each side of the edge. Such a pair merges into one cluster when each is the other's
/// nearest item across the edges of its block within half the radius (mutual nearest
/// neighbours, so that an item merges at most once and no chain of merges runs across
/// the map), when the two together have at least `minPoints` points, and when every
/// cell of both lies in the 3 x 3 square around the first cell of the one that ranks
/// first (more points, then the earlier first cell by row, then column): the merged
/// cluster is then addressed like any other, by that first cell and a neighbour mask.
///
/// Whether a pair merges depends on the items of the two blocks and of the blocks around
/// them only, never on the view: a query reads those blocks too (kept like the others),
/// so the same place is the same cluster in every view and tile that shows it.
extension LiveClusterIndex {
    /// An item of one block: the block's Z-order code and the item's index in its items.
    struct ItemRef: Hashable {
        var block: UInt64
        var index: Int
    }

    /// Two items merged across a block edge, and the cluster they make.
    struct EdgeMerge {
        var winner: ItemRef
        var loser: ItemRef
        var merged: Items
    }

    /// The items of the blocks a query reads at one zoom: each block's items (a range of
    /// an `Items` value, shared by the blocks formed together) and the indices of those
    /// that may merge across an edge; read from the kept groups, formed and kept, or
    /// formed under a filter, on first use.
    struct BlockStore {
        struct Block {
            var items: Items
            var range: Range<Int>
            var edges: [Int]
        }

        let zoom: Int
        let filter: LiveFilter
        /// Whether blocks come from, and go to, the kept groups.
        let keeps: Bool
        var blocks: [UInt64: Block?] = [:]
        /// Blocks already formed together: a block of this range missing from `blocks` is empty.
        var formed: (UInt32, UInt32, UInt32, UInt32)?

        init(zoom: Int, filter: LiveFilter, keeps: Bool) {
            self.zoom = zoom
            self.filter = filter
            self.keeps = keeps
        }

        /// Takes the items of the blocks of `range`, formed together (in block order).
        mutating func fill(_ items: Items, formed range: (UInt32, UInt32, UInt32, UInt32), index: LiveClusterIndex) {
            formed = range
            let shift = UInt32(LiveClusterIndex.blockShift)
            var start = 0
            while start < items.groups.count {
                let bx = items.groups[start].x >> shift, by = items.groups[start].y >> shift
                var end = start + 1
                while end < items.groups.count, items.groups[end].x >> shift == bx, items.groups[end].y >> shift == by {
                    end += 1
                }
                let edges = index.edgeItems(items, range: start..<end, block: (bx, by), zoom: zoom)
                blocks[BulkBuilder.zOrder(bx, by)] = Block(items: items, range: start..<end, edges: edges)
                start = end
            }
        }
    }

    /// The items of a block, `nil` when it has none.
    func block(_ bx: UInt32, _ by: UInt32, in store: inout BlockStore) -> BlockStore.Block? {
        let code = BulkBuilder.zOrder(bx, by)
        if let known = store.blocks[code] { return known }
        if let formed = store.formed, bx >= formed.0, bx <= formed.2, by >= formed.1, by <= formed.3 { return nil }
        let z = store.zoom
        let block: BlockStore.Block?
        if store.keeps {
            if let entry = keptGroups(bx, by, zoom: z), !entry.items.features.isEmpty {
                block = BlockStore.Block(items: entry.items, range: entry.items.features.indices, edges: entry.edges)
            } else {
                block = nil
            }
        } else {
            let items = formBlock(bx, by, zoom: z, filter: store.filter)
            block = items.features.isEmpty ? nil
                : BlockStore.Block(items: items, range: items.features.indices,
                                   edges: edgeItems(items, range: items.features.indices, block: (bx, by), zoom: z))
        }
        store.blocks[code] = .some(block)
        return block
    }

    /// A block's kept unfiltered groups, formed and kept when they are not; `nil` when
    /// the block has no points. `nodes`, when the caller has them, are
    /// ``blockNodes(_:_:zoom:)`` of this index: the walk that finds them is not taken again.
    func keptGroups(_ bx: UInt32, _ by: UInt32, zoom z: Int,
                    nodes known: (stamp: BlockStamp, nodes: [QuadNode?])? = nil) -> GroupCache.Entry? {
        let key = Self.groupKey(zoom: z, bx, by), root = combined.stamp
        if let entry = groupCache.entry(key, root: root) { return entry }
        // The stamp and the nodes in one walk: a block that is not kept under its stamp
        // is formed next, and forming needs the nodes.
        guard let current = known ?? blockNodes(bx, by, zoom: z) else { return nil }
        if let kept = groupCache.entry(key, stamp: current.stamp, root: root) { return kept }
        let formed = keptBlock(bx, by, zoom: z, after: groupCache.latest(key), current: current)
        groupCache.keep(formed, for: key, budget: keptBudget, root: root)
        return formed
    }

    /// Points the blocks a query forms must hold together for ``formMissingGroups(_:zoom:)``
    /// to form them on two threads: below it, handing work to another thread costs about
    /// what it saves.
    static let pointsToFormAtOnce = 2_048

    /// Forms and keeps, on this thread and one of the global pool's, the groups of the
    /// blocks `codes` at zoom `z` that are not kept and whose items after merges are not
    /// kept either (the blocks a query's first look at a place forms), when there is a
    /// second core, at least two such blocks and ``pointsToFormAtOnce`` points in them.
    /// A block's groups depend on its points alone, so it does not matter which thread
    /// forms which. The two take the blocks one at a time, most points first, until none
    /// is left: on a busy pool this thread forms them all, as without the other
    /// (``BackgroundJob``). Returns how many blocks were shared so.
    @discardableResult
    func formMissingGroups(_ codes: [UInt64], zoom z: Int) -> Int {
        guard BackgroundJob.hasSecondCore, codes.count >= 2 else { return 0 }
        let root = combined.stamp
        var missing: [(x: UInt32, y: UInt32, points: Int, nodes: (stamp: BlockStamp, nodes: [QuadNode?]))] = []
        for code in codes {
            let (bx, by) = BulkBuilder.position(code)
            let key = Self.groupKey(zoom: z, bx, by)
            guard groupCache.entry(Self.resolvedKey(zoom: z, bx, by), root: root) == nil,
                  groupCache.entry(key, root: root) == nil,
                  let current = blockNodes(bx, by, zoom: z),
                  groupCache.entry(key, stamp: current.stamp, root: root) == nil else { continue }
            missing.append((bx, by, current.nodes.reduce(0) { $0 + ($1?.aggregate.count ?? 0) }, current))
        }
        guard missing.count >= 2, missing.reduce(0, { $0 + $1.points }) >= Self.pointsToFormAtOnce else { return 0 }
        // Most points first, so that neither thread waits long for the other's last block.
        let blocks = missing.sorted { $0.points > $1.points }.map { ($0.x, $0.y, $0.nodes) }
        let next = BlockCounter()
        let formAll: @Sendable () -> Void = { [self] in
            while let i = next.take(below: blocks.count) {
                _ = keptGroups(blocks[i].0, blocks[i].1, zoom: z, nodes: blocks[i].2)
            }
        }
        // Once no block is left to take, the query waits for the block the other thread
        // is forming, if it started; one it has not started is taken back.
        let helper = BackgroundJob { _ in formAll() }
        formAll()
        helper.complete()
        return blocks.count
    }

    /// The next block to form, shared by the threads of ``formMissingGroups(_:zoom:)``.
    private final class BlockCounter: Sendable {
        private let taken = Atomic<Int>(0)

        /// The next index, `nil` once `count` are taken.
        func take(below count: Int) -> Int? {
            let i = taken.add(1, ordering: .relaxed).oldValue
            return i < count ? i : nil
        }
    }

    /// The unfiltered groups of a block to keep, formed from its cells' totals: those of
    /// `earlier` (the block's entry before changes) where the quadtree nodes under it did
    /// not change, gathered again elsewhere; all gathered when there is no such entry or
    /// the changes touch many cells. The totals are kept with the groups when the block
    /// has several points per cell, where gathering them is most of the work. `current`
    /// is the block's ``blockNodes(_:_:zoom:)`` now.
    func keptBlock(_ bx: UInt32, _ by: UInt32, zoom z: Int, after earlier: GroupCache.Entry?,
                   current: (stamp: BlockStamp, nodes: [QuadNode?])?) -> GroupCache.Entry {
        let (x0, y0, x1, y1) = cells(of: (bx, by, bx, by), zoom: z)
        let nodes = current?.nodes ?? []
        var grid: Grid?
        if let earlier {
            switch changedCells(earlier, nodes: nodes, zoom: z, x0: x0, y0: y0, x1: x1, y1: y1) {
            case .unchanged:
                return earlier.restamped(current?.stamp ?? BlockStamp(), nodes: nodes)
            case let .cells(changed, dirty):
                grid = earlier.cells.map { patched($0, changed: changed, dirty: dirty, zoom: z, x0: x0, y0: y0, x1: x1) }
                if grid != nil { groupCache.noteUpdate() }
            case .many:
                break
            }
        }
        let cells = grid ?? cellGrid(zoom: z, x0: x0, y0: y0, x1: x1, y1: y1, filter: .all,
                                     points: nodes.reduce(0) { $0 + ($1?.aggregate.count ?? 0) })
        let items = formItems(cells, zoom: z, filter: .all)
        let edges = edgeItems(items, range: items.features.indices, block: (bx, by), zoom: z)
        let points = cells.cells.reduce(0) { $0 + $1.aggregate.count }
        let keepsCells = points >= Self.pointsPerCellToKeepCells * cells.cells.count
        return GroupCache.Entry(stamp: current?.stamp ?? BlockStamp(), items: items, edges: edges,
                                cells: keepsCells ? cells : nil, nodes: nodes)
    }

    /// The cells of a block whose points changed since an entry was kept.
    enum CellChanges {
        case unchanged
        /// These cells, and by position in the block whether each is one of them.
        case cells([(x: UInt32, y: UInt32)], dirty: [Bool])
        /// More than ``mostCellsToUpdate``, or not known.
        case many
    }

    /// Points per cell from which a kept block keeps its cells' totals too.
    static let pointsPerCellToKeepCells = 16

    /// Most cells gathered again to update a block's totals; beyond it they are all
    /// gathered. Half of a block's 256: a batch of writes across a country changes dozens
    /// of the cells of a low zoom's block, and gathering those alone was still cheaper
    /// than the whole block (docs/PERFORMANCE.md, "Kept groups' memory").
    static let mostCellsToUpdate = 128

    /// The cells of the block `x0...x1` x `y0...y1` at zoom `z` that the quadtree nodes
    /// changed since `earlier` was kept touch (`nodes` now against `earlier.nodes`).
    func changedCells(_ earlier: GroupCache.Entry, nodes: [QuadNode?], zoom z: Int,
                      x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32) -> CellChanges {
        guard !earlier.nodes.isEmpty, earlier.nodes.count == nodes.count else { return .many }
        let level = grid.level(zoom: z), span = UInt64(grid.span)
        let (sx0, sx1) = grid.subRange(x0, x1, zoom: z), (sy0, sy1) = grid.subRange(y0, y1, zoom: z)
        let width = Int(x1 - x0) + 1
        var dirty = [Bool](repeating: false, count: width * (Int(y1 - y0) + 1))
        var changed: [(x: UInt32, y: UInt32)] = []
        let complete = Self.forEachChange(from: earlier.nodes, to: nodes) { nodeLevel, qx, qy in
            // The block's cells that the node's cell meets.
            guard let r = Self.subCells(level: nodeLevel, qx, qy, of: level, within: (sx0, sy0, sx1, sy1)) else {
                return true
            }
            for cy in (r.y0 / span)...(r.y1 / span) {
                for cx in (r.x0 / span)...(r.x1 / span) {
                    let k = Int(cy - UInt64(y0)) * width + Int(cx - UInt64(x0))
                    guard !dirty[k] else { continue }
                    dirty[k] = true
                    changed.append((UInt32(cx), UInt32(cy)))
                    if changed.count > Self.mostCellsToUpdate { return false }
                }
            }
            return true
        }
        if !complete { return .many }
        return changed.isEmpty ? .unchanged : .cells(changed, dirty: dirty)
    }

    /// The sub-cells of `level` that a node's cell (at `nodeLevel`, holding `(qx, qy)`)
    /// and the range `within` (of `level`) share, `nil` when they share none.
    static func subCells(level nodeLevel: Int, _ qx: UInt32, _ qy: UInt32, of level: Int,
                         within range: (UInt32, UInt32, UInt32, UInt32)) -> (x0: UInt64, y0: UInt64, x1: UInt64, y1: UInt64)? {
        var nx0: UInt64, ny0: UInt64, nx1: UInt64, ny1: UInt64
        if nodeLevel >= level {
            nx0 = UInt64(QuadNode.cell(qx, level: level))
            ny0 = UInt64(QuadNode.cell(qy, level: level))
            nx1 = nx0
            ny1 = ny0
        } else {
            let shift = UInt64(level - nodeLevel)
            nx0 = UInt64(QuadNode.cell(qx, level: nodeLevel)) << shift
            ny0 = UInt64(QuadNode.cell(qy, level: nodeLevel)) << shift
            nx1 = nx0 + (UInt64(1) << shift) - 1
            ny1 = ny0 + (UInt64(1) << shift) - 1
        }
        nx0 = max(nx0, UInt64(range.0))
        ny0 = max(ny0, UInt64(range.1))
        nx1 = min(nx1, UInt64(range.2))
        ny1 = min(ny1, UInt64(range.3))
        return nx0 <= nx1 && ny0 <= ny1 ? (nx0, ny0, nx1, ny1) : nil
    }

    /// Calls `body` with the cells (level and a position inside) of the nodes of two
    /// versions of the same quadtree nodes (`old[k]` and `new[k]`) whose points differ,
    /// in either version: together they hold every point added, removed or changed. Two
    /// nodes of one stamp hold the same points; two inner nodes of one cell differ only
    /// in their children, matched by cell; any other pair differs wherever either has
    /// points. `body` returns false to stop the walk, and the walk then returns false.
    /// Nodes are read in place (a copy of a node would retain its arrays).
    static func forEachChange(from old: [QuadNode?], to new: [QuadNode?],
                              _ body: (_ level: Int, _ qx: UInt32, _ qy: UInt32) -> Bool) -> Bool {
        func sameCell(_ a: UnsafePointer<QuadNode>, _ b: UnsafePointer<QuadNode>) -> Bool {
            a.pointee.level == b.pointee.level
                && QuadNode.cell(a.pointee.qx, level: a.pointee.level) == QuadNode.cell(b.pointee.qx, level: a.pointee.level)
                && QuadNode.cell(a.pointee.qy, level: a.pointee.level) == QuadNode.cell(b.pointee.qy, level: a.pointee.level)
        }
        func changed(_ node: UnsafePointer<QuadNode>) -> Bool {
            body(node.pointee.level, node.pointee.qx, node.pointee.qy)
        }
        func compare(_ a: UnsafePointer<QuadNode>?, _ b: UnsafePointer<QuadNode>?) -> Bool {
            if let a, let b {
                if a.pointee.stamp == b.pointee.stamp { return true }
                if !a.pointee.isLeaf, !b.pointee.isLeaf, sameCell(a, b), b.pointee.children.count <= 64 {
                    return a.pointee.children.withUnsafeBufferPointer { aChildren in
                        b.pointee.children.withUnsafeBufferPointer { bChildren in
                            var matched: UInt64 = 0
                            for i in aChildren.indices {
                                let child = aChildren.baseAddress! + i
                                var match: Int?
                                for j in bChildren.indices
                                    where matched & (1 << UInt64(j)) == 0 && sameCell(child, bChildren.baseAddress! + j) {
                                    match = j
                                    break
                                }
                                if let j = match {
                                    matched |= 1 << UInt64(j)
                                    guard compare(child, bChildren.baseAddress! + j) else { return false }
                                } else {
                                    guard changed(child) else { return false }
                                }
                            }
                            for j in bChildren.indices where matched & (1 << UInt64(j)) == 0 {
                                guard changed(bChildren.baseAddress! + j) else { return false }
                            }
                            return true
                        }
                    }
                }
            }
            if let a, !changed(a) { return false }
            if let b, !changed(b) { return false }
            return true
        }
        guard old.count == new.count else { return false }
        for k in old.indices {
            // The up to four top nodes are copied; below them, nodes are read in place.
            let same: Bool
            switch (old[k], new[k]) {
            case (nil, nil):
                same = true
            case let (a?, nil):
                same = withUnsafePointer(to: a) { compare($0, nil) }
            case let (nil, b?):
                same = withUnsafePointer(to: b) { compare(nil, $0) }
            case let (a?, b?):
                same = withUnsafePointer(to: a) { a in withUnsafePointer(to: b) { b in compare(a, b) } }
            }
            guard same else { return false }
        }
        return true
    }

    /// A block's cells' totals after changes: those of `old`, with the `changed` cells
    /// (`dirty` by position in the block) gathered again.
    func patched(_ old: KeptCells, changed: [(x: UInt32, y: UInt32)], dirty: [Bool], zoom z: Int,
                 x0: UInt32, y0: UInt32, x1: UInt32) -> Grid {
        let width = Int(x1 - x0) + 1
        var contributions: [Contribution] = []
        for cell in changed {
            collect(zoom: z, x0: cell.x, y0: cell.y, x1: cell.x, y1: cell.y, filter: .all, into: &contributions)
        }
        let fresh = fold(contributions)
        // The kept cells outside the changed ones and the fresh cells, by row, then column.
        var result = Grid(cells: [], histogram: [])
        result.cells.reserveCapacity(old.cells.count + fresh.cells.count)
        func append(_ cell: GridCell, of source: Grid) {
            var cell = cell
            result.append(&cell, histogram: source.histogram[cell.histogramStart..<cell.histogramEnd])
        }
        func append(_ cell: GridCell, of source: KeptCells) {
            var unpacked = cell
            unpacked.histogramStart = result.histogram.count
            source.appendCounts(of: cell, to: &result.histogram)
            unpacked.histogramEnd = result.histogram.count
            result.cells.append(unpacked)
        }
        var i = 0, j = 0
        while i < old.cells.count || j < fresh.cells.count {
            let takeOld: Bool
            if i == old.cells.count {
                takeOld = false
            } else if j == fresh.cells.count {
                takeOld = true
            } else {
                takeOld = (old.cells[i].y, old.cells[i].x) < (fresh.cells[j].y, fresh.cells[j].x)
            }
            if takeOld {
                let cell = old.cells[i]
                i += 1
                if !dirty[Int(cell.y - y0) * width + Int(cell.x - x0)] { append(cell, of: old) }
            } else {
                append(fresh.cells[j], of: fresh)
                j += 1
            }
        }
        result.index()
        return result
    }

    /// The items of one block's groups under a filter.
    func formBlock(_ bx: UInt32, _ by: UInt32, zoom z: Int, filter: LiveFilter) -> Items {
        let (x0, y0, x1, y1) = cells(of: (bx, by, bx, by), zoom: z)
        return formItems(cellGrid(zoom: z, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter), zoom: z, filter: filter)
    }

    /// Half the radius in projected units at a zoom: items closer than this are crowded.
    func crowdingDistance(zoom z: Int) -> Double {
        options.radiusPixels / 2 / (Double(options.extent) * Double(UInt64(1) << UInt64(z)))
    }

    /// The items of a block that may merge across its edges: whole groups closer than half
    /// the radius to the block's boundary.
    func edgeItems(_ items: Items, range: Range<Int>, block: (UInt32, UInt32), zoom z: Int) -> [Int] {
        let rect = blockRect(block.0, block.1, zoom: z)
        let limit = crowdingDistance(zoom: z)
        var edges: [Int] = []
        for i in range where items.groups[i].whole {
            let p = items.positions[i]
            if p.x - rect.minX < limit || rect.maxX - p.x < limit || p.y - rect.minY < limit || rect.maxY - p.y < limit {
                edges.append(i)
            }
        }
        return edges
    }

    /// Appends the items of a range of blocks after the merges across their edges, those
    /// positioned in `rect` (all when `nil`). A merged cluster is appended with the block
    /// of the item that ranks first, or with the other's when that block is not in the
    /// range, so that each item shows once.
    ///
    /// Only the merges of items closer than half the radius to `rect` can change what it
    /// shows (a merged cluster lies between its two items, each of them closer than half
    /// the radius to the other), so only those are looked for: the blocks beyond the
    /// range are read only where such an item lies near their edge. The merges found are
    /// the same as over the whole blocks, so the answer does not depend on the view.
    /// Without a filter, a block's items after its merges are read from the kept groups;
    /// they are formed whole, and kept, for a block that lies within the rect grown by
    /// half the radius (every item of it may show), and for a block that crosses that
    /// margin with the merges of its items within it only (kept so, and read by later
    /// views whose margin meets the block within that part).
    func appendResolved(_ blocks: (UInt32, UInt32, UInt32, UInt32), of query: (UInt32, UInt32, UInt32, UInt32)? = nil,
                        within rect: UnitRect?, store: inout BlockStore, into answer: inout LiveAnswer) {
        func inRange(_ code: UInt64) -> Bool {
            let (bx, by) = BulkBuilder.position(code)
            return bx >= blocks.0 && bx <= blocks.2 && by >= blocks.1 && by <= blocks.3
        }
        // A merge whose first-ranking block the query reads is appended with that block,
        // also when this call (one part of the query) does not read it.
        let query = query ?? blocks
        func inQuery(_ code: UInt64) -> Bool {
            let (bx, by) = BulkBuilder.position(code)
            return bx >= query.0 && bx <= query.2 && by >= query.1 && by <= query.3
        }
        var codes: [UInt64] = []
        if store.formed != nil {
            // Formed together: the non-empty blocks are known (a world range at a deep zoom
            // has billions of blocks, nearly all empty).
            codes = store.blocks.keys.filter(inRange)
        } else {
            codes.reserveCapacity(Int(blocks.2 - blocks.0 + 1) * Int(blocks.3 - blocks.1 + 1))
            for by in blocks.1...blocks.3 {
                for bx in blocks.0...blocks.2 { codes.append(BulkBuilder.zOrder(bx, by)) }
            }
        }
        codes.sort()
        let near = rect.map { rect in
            let limit = crowdingDistance(zoom: store.zoom)
            return UnitRect(minX: rect.minX - limit, minY: rect.minY - limit, maxX: rect.maxX + limit,
                            maxY: rect.maxY + limit)
        }
        // Without a filter, each block's items after its merges, kept (nil for a block
        // without points around it): for a block that crosses the view's margin, those of
        // the part within the margin will do. With a filter, the merges are looked for here.
        var resolved: [UInt64: GroupCache.Entry?] = [:]
        var open: [UInt64] = []
        if store.keeps {
            formMissingGroups(codes, zoom: store.zoom)
            for code in codes {
                let (bx, by) = BulkBuilder.position(code)
                let blockRect = blockRect(bx, by, zoom: store.zoom)
                let needed = near.flatMap { Self.contains($0, blockRect) ? nil : Self.intersection($0, blockRect) }
                switch keptResolvedBlock(bx, by, zoom: store.zoom) {
                case .empty:
                    resolved[code] = .some(nil)
                case let .kept(entry):
                    guard let scope = entry.scope else {
                        resolved[code] = entry
                        continue
                    }
                    if let needed, Self.contains(scope, needed) {
                        resolved[code] = entry
                    } else {
                        // A wider part of the block: what was looked at before and what is needed now.
                        let wider = needed.map { Self.union(scope, $0) }
                        resolved[code] = formResolvedBlock(bx, by, stamp: entry.stamp, scope: wider, store: &store)
                    }
                case let .missing(stamp, nodes):
                    resolved[code] = formResolvedBlock(bx, by, stamp: stamp, nodes: nodes, scope: needed, store: &store)
                }
            }
        } else {
            open = codes
        }
        let merges = edgeMerges(open, near: near, store: &store)
        for code in codes {
            let (bx, by) = BulkBuilder.position(code)
            if let kept = resolved[code] {
                guard let entry = kept else { continue }
                let within = within(rect, bx, by, zoom: store.zoom)
                var start = 0
                for i in entry.merging {
                    append(entry.items, range: start..<i, within: within, into: &answer)
                    start = i + 1
                }
                append(entry.items, range: start..<entry.items.features.count, within: within, into: &answer)
                append(entry.merged, range: 0..<entry.foreignStart, within: rect, into: &answer)
                for (k, winner) in entry.foreignBlocks.enumerated() where !inQuery(winner) {
                    append(entry.merged, range: entry.foreignStart + k..<entry.foreignStart + k + 1, within: rect,
                           into: &answer)
                }
                continue
            }
            guard let block = block(bx, by, in: &store) else { continue }
            let within = within(rect, bx, by, zoom: store.zoom)
            guard !merges.isEmpty, block.edges.contains(where: { merges[ItemRef(block: code, index: $0)] != nil }) else {
                append(block.items, range: block.range, within: within, into: &answer)
                continue
            }
            // In the order of a kept entry: the block's own items, then the clusters merged
            // where it ranks first, then those merged where a block not read ranks first.
            var start = block.range.lowerBound
            var winners: [Items] = [], foreign: [Items] = []
            for i in block.range {
                guard let merge = merges[ItemRef(block: code, index: i)] else { continue }
                append(block.items, range: start..<i, within: within, into: &answer)
                start = i + 1
                if merge.winner.block == code {
                    winners.append(merge.merged)
                } else if !inQuery(merge.winner.block) {
                    foreign.append(merge.merged)
                }
            }
            append(block.items, range: start..<block.range.upperBound, within: within, into: &answer)
            for merged in winners + foreign { append(merged, within: rect, into: &answer) }
        }
    }

    /// Whether `outer` holds all of `inner`.
    static func contains(_ outer: UnitRect, _ inner: UnitRect) -> Bool {
        inner.minX >= outer.minX && inner.maxX <= outer.maxX && inner.minY >= outer.minY && inner.maxY <= outer.maxY
    }

    /// The part of `a` inside `b` (empty, with a minimum above its maximum, when they do not meet).
    static func intersection(_ a: UnitRect, _ b: UnitRect) -> UnitRect {
        UnitRect(minX: max(a.minX, b.minX), minY: max(a.minY, b.minY), maxX: min(a.maxX, b.maxX),
                 maxY: min(a.maxY, b.maxY))
    }

    /// The smallest rect that holds `a` and `b`.
    static func union(_ a: UnitRect, _ b: UnitRect) -> UnitRect {
        UnitRect(minX: min(a.minX, b.minX), minY: min(a.minY, b.minY), maxX: max(a.maxX, b.maxX),
                 maxY: max(a.maxY, b.maxY))
    }

    /// The rect to test a block's own items against: none when the block lies inside it.
    private func within(_ rect: UnitRect?, _ bx: UInt32, _ by: UInt32, zoom z: Int) -> UnitRect? {
        guard let rect else { return nil }
        return Self.contains(rect, blockRect(bx, by, zoom: z)) ? nil : rect
    }

    /// What is kept of a block's unfiltered items after the merges across its edges.
    enum KeptResolved {
        /// Nothing within two blocks has points.
        case empty
        case kept(GroupCache.Entry)
        /// Not kept, or no longer valid: to be formed with this stamp and these nodes.
        case missing(BlockStamp, nodes: [QuadNode?])
    }

    /// A block's unfiltered items after the merges across its edges, if kept: the entry
    /// whose stamp matches, or the latest entry when no point within two blocks of it
    /// changed since (the stamp is of nodes that may reach well beyond the 5 x 5 blocks),
    /// kept again under the new stamp.
    func keptResolvedBlock(_ bx: UInt32, _ by: UInt32, zoom z: Int) -> KeptResolved {
        let key = Self.resolvedKey(zoom: z, bx, by)
        if let kept = groupCache.entry(key, root: combined.stamp) { return .kept(kept) }
        // The stamp and the nodes in one walk: both are needed unless the stamp finds an entry.
        guard let (stamp, nodes) = blockNodes(around: bx, by, reach: 2, zoom: z) else { return .empty }
        if let kept = groupCache.entry(key, stamp: stamp, root: combined.stamp) { return .kept(kept) }
        guard let earlier = groupCache.latest(key), !earlier.nodes.isEmpty else { return .missing(stamp, nodes: nodes) }
        let level = grid.level(zoom: z)
        let last = UInt32(blocksPerSide(zoom: z) - 1)
        let (x0, y0, _, _) = cells(of: (bx > 2 ? bx - 2 : 0, by > 2 ? by - 2 : 0, bx, by), zoom: z)
        let (_, _, x1, y1) = cells(of: (bx, by, min(last, bx + 2), min(last, by + 2)), zoom: z)
        let (sx0, sx1) = grid.subRange(x0, x1, zoom: z), (sy0, sy1) = grid.subRange(y0, y1, zoom: z)
        let unchanged = Self.forEachChange(from: earlier.nodes, to: nodes) { nodeLevel, qx, qy in
            Self.subCells(level: nodeLevel, qx, qy, of: level, within: (sx0, sy0, sx1, sy1)) == nil
        }
        guard unchanged else { return .missing(stamp, nodes: nodes) }
        let entry = earlier.restamped(stamp, nodes: nodes)
        groupCache.keep(entry, for: key, budget: keptBudget, root: combined.stamp)
        return .kept(entry)
    }

    /// The kept-groups key of a block's items after merges at a zoom.
    static func resolvedKey(zoom z: Int, _ bx: UInt32, _ by: UInt32) -> UInt64 {
        1 << 63 | UInt64(z) << 48 | UInt64(bx) << 24 | UInt64(by)
    }

    /// A block's unfiltered items after the merges across its edges: its own items, then
    /// the clusters merged across an edge where it holds the item that ranks first, then
    /// those where another block does. Kept while the points within two blocks of it do
    /// not change (the merges of its items depend on those blocks' items); `nil` when
    /// nothing there has points.
    func resolvedBlock(_ bx: UInt32, _ by: UInt32, store: inout BlockStore) -> GroupCache.Entry? {
        switch keptResolvedBlock(bx, by, zoom: store.zoom) {
        case .empty: return nil
        case let .kept(entry): return entry.scope == nil ? entry : formResolvedBlock(bx, by, stamp: entry.stamp,
                                                                                      scope: nil, store: &store)
        case let .missing(stamp, nodes):
            return formResolvedBlock(bx, by, stamp: stamp, nodes: nodes, scope: nil, store: &store)
        }
    }

    /// Forms and keeps a block's unfiltered items after the merges across its edges, as
    /// ``resolvedBlock(_:_:store:)``, under `stamp` (of the points within two blocks):
    /// with the merges of every item, or with those of the items positioned in `scope`
    /// (``GroupCache/Entry/scope``).
    func formResolvedBlock(_ bx: UInt32, _ by: UInt32, stamp: BlockStamp, nodes known: [QuadNode?]? = nil,
                           scope: UnitRect?, store: inout BlockStore) -> GroupCache.Entry {
        let z = store.zoom
        // The nodes, to tell after a change whether the items still hold, for whole blocks.
        let nodes = scope == nil ? known ?? blockNodes(around: bx, by, reach: 2, zoom: z)?.nodes ?? [] : []
        let key = Self.resolvedKey(zoom: z, bx, by)
        let code = BulkBuilder.zOrder(bx, by)
        var own = Items(), merged = Items()
        var merging: [Int] = []
        var winners: [EdgeMerge] = [], foreign: [EdgeMerge] = []
        var foreignBlocks: [UInt64] = []
        if let block = block(bx, by, in: &store) {
            let merges = edgeMerges([code], near: scope, store: &store)
            // The block's items as its kept entry holds them, shared with it; of a part
            // of the block too (the views that read such an entry show none of its items
            // beyond that part, where merges were not looked for).
            if block.range == block.items.features.indices {
                own = block.items
            } else {
                own.reserve(block.range.count, clusters: min(block.range.count, block.items.summaries.count))
                for i in block.range { own.append(i, of: block.items) }
            }
            for i in block.range {
                guard let merge = merges[ItemRef(block: code, index: i)] else { continue }
                merging.append(i - block.range.lowerBound)
                if merge.winner.block == code {
                    winners.append(merge)
                } else {
                    foreign.append(merge)
                    foreignBlocks.append(merge.winner.block)
                }
            }
        }
        merged.reserve(winners.count + foreign.count, clusters: winners.count + foreign.count)
        for merge in winners + foreign { merged.append(0, of: merge.merged) }
        let entry = GroupCache.Entry(stamp: stamp, items: own, merging: merging, merged: merged,
                                     foreignBlocks: foreignBlocks, nodes: nodes, scope: scope)
        groupCache.keep(entry, for: key, budget: keptBudget, root: combined.stamp)
        return entry
    }

    /// The merges across the edges of the blocks `codes`, by item (winner and loser), of
    /// their items positioned in `near` (all when `nil`).
    func edgeMerges(_ codes: [UInt64], near: UnitRect?, store: inout BlockStore) -> [ItemRef: EdgeMerge] {
        var merges: [ItemRef: EdgeMerge] = [:]
        var nearest: [ItemRef: ItemRef?] = [:]
        for code in codes {
            let (bx, by) = BulkBuilder.position(code)
            guard let block = block(bx, by, in: &store) else { continue }
            for i in block.edges {
                if let near, !near.contains(block.items.positions[i].x, block.items.positions[i].y) { continue }
                let a = ItemRef(block: code, index: i)
                guard merges[a] == nil, let b = nearestAcross(a, store: &store, memo: &nearest),
                      nearestAcross(b, store: &store, memo: &nearest) == a else { continue }
                guard let merge = merged(a, b, store: &store) else { continue }
                merges[merge.winner] = merge
                merges[merge.loser] = merge
            }
        }
        return merges
    }

    /// The nearest item to `a` across the edges of its block, closer than half the radius,
    /// with which it could merge; ties go to the lower block code, then item.
    func nearestAcross(_ a: ItemRef, store: inout BlockStore, memo: inout [ItemRef: ItemRef?]) -> ItemRef? {
        if let known = memo[a] { return known }
        let z = store.zoom
        let (bx, by) = BulkBuilder.position(a.block)
        guard let home = block(bx, by, in: &store) else { return nil }
        let p = home.items.positions[a.index]
        let group = home.items.groups[a.index]
        let count = home.items.features[a.index].pointCount
        let limit = crowdingDistance(zoom: z)
        let last = Int64(blocksPerSide(zoom: z) - 1)
        var best: (d2: Double, ref: ItemRef)?
        for dy in -1...1 {
            for dx in -1...1 where dx != 0 || dy != 0 {
                let nx = Int64(bx) + Int64(dx), ny = Int64(by) + Int64(dy)
                guard nx >= 0, ny >= 0, nx <= last, ny <= last else { continue }
                let r = blockRect(UInt32(nx), UInt32(ny), zoom: z)
                let ex = max(r.minX - p.x, 0, p.x - r.maxX), ey = max(r.minY - p.y, 0, p.y - r.maxY)
                guard ex * ex + ey * ey < limit * limit else { continue }
                guard let other = block(UInt32(nx), UInt32(ny), in: &store) else { continue }
                let code = BulkBuilder.zOrder(UInt32(nx), UInt32(ny))
                for j in other.edges {
                    let d = other.items.positions[j] - p
                    let d2 = (d * d).sum()
                    guard d2 < limit * limit else { continue }
                    let ref = ItemRef(block: code, index: j)
                    if let best, best.d2 < d2 || (best.d2 == d2 && (best.ref.block, best.ref.index) < (code, j)) { continue }
                    guard unionMask(group, count, other.items.groups[j],
                                    other.items.features[j].pointCount) != nil else { continue }
                    best = (d2, ref)
                }
            }
        }
        memo[a] = .some(best?.ref)
        return best?.ref
    }

    /// The first cell and neighbour mask of two groups together, ranked first by more
    /// points, then by the earlier first cell (row, then column); `nil` when their cells
    /// do not fit the 3 x 3 square around that first cell or the two have fewer than
    /// `minPoints` points together.
    func unionMask(_ a: ItemGroup, _ countA: Int, _ b: ItemGroup, _ countB: Int) -> (x: UInt32, y: UInt32, mask: UInt8, aFirst: Bool)? {
        guard countA + countB >= options.minPoints else { return nil }
        let aFirst = countA != countB ? countA > countB : (a.y, a.x) < (b.y, b.x)
        let (winner, loser) = aFirst ? (a, b) : (b, a)
        var mask = winner.mask
        var cells = [(Int(loser.x), Int(loser.y))]
        for (bit, offset) in Self.neighbourOffsets.enumerated() where loser.mask & (1 << UInt8(bit)) != 0 {
            cells.append((Int(loser.x) + offset.dx, Int(loser.y) + offset.dy))
        }
        for (x, y) in cells {
            let dx = x - Int(winner.x), dy = y - Int(winner.y)
            guard let bit = Self.neighbourOffsets.firstIndex(where: { $0.dx == dx && $0.dy == dy }) else { return nil }
            mask |= 1 << UInt8(bit)
        }
        return (winner.x, winner.y, mask, aFirst)
    }

    /// The cluster two items of neighbouring blocks make, formed from their cells.
    func merged(_ a: ItemRef, _ b: ItemRef, store: inout BlockStore) -> EdgeMerge? {
        let (ax, ay) = BulkBuilder.position(a.block), (bx, by) = BulkBuilder.position(b.block)
        guard let blockA = block(ax, ay, in: &store), let blockB = block(bx, by, in: &store) else { return nil }
        let ga = blockA.items.groups[a.index], gb = blockB.items.groups[b.index]
        guard let union = unionMask(ga, blockA.items.features[a.index].pointCount,
                                    gb, blockB.items.features[b.index].pointCount) else { return nil }
        guard let items = formGroup(zoom: store.zoom, x: union.x, y: union.y, mask: union.mask, filter: store.filter),
              items.features.count == 1 else { return nil }
        return EdgeMerge(winner: union.aFirst ? a : b, loser: union.aFirst ? b : a, merged: items)
    }

    /// The item of the group of the cell `(x, y)` and the neighbours in `mask` at zoom `z`,
    /// `nil` when one of the cells has no point that passes.
    func formGroup(zoom z: Int, x: UInt32, y: UInt32, mask: UInt8, filter: LiveFilter) -> Items? {
        var contributions: [Contribution] = []
        let address = ClusterAddress(zoom: z, members: Self.members(x: x, y: y, mask: mask))
        for member in address.members {
            collect(zoom: z, x0: member.x, y0: member.y, x1: member.x, y1: member.y, filter: filter, into: &contributions)
        }
        let grid = fold(contributions)
        guard grid.cells.count == address.members.count,
              let first = grid.cells.firstIndex(where: { $0.x == x && $0.y == y }) else { return nil }
        let cell = grid.cells[first]
        var group = Group(cell: first, aggregate: cell.aggregate, position: SIMD2(cell.aggregate.x, cell.aggregate.y))
        grid.forEachNeighbour(of: first) { bit, j in
            if mask & (1 << UInt8(bit)) != 0 { group.absorb(grid.cells[j].aggregate, bits: 1 << UInt8(bit)) }
        }
        guard group.mask == mask else { return nil }
        var items = Items()
        appendGroup(group, grid: grid, zoom: z, filter: filter, into: &items)
        return items
    }

    /// The cells of a first cell and a neighbour mask (cells outside the world left out).
    static func members(x: UInt32, y: UInt32, mask: UInt8) -> [(x: UInt32, y: UInt32)] {
        var members: [(x: UInt32, y: UInt32)] = [(x, y)]
        for (bit, offset) in neighbourOffsets.enumerated() where mask & (1 << UInt8(bit)) != 0 {
            let nx = Int(x) + offset.dx, ny = Int(y) + offset.dy
            guard nx >= 0, ny >= 0 else { continue }
            members.append((UInt32(nx), UInt32(ny)))
        }
        return members
    }
}

// MARK: Preparing the first look

extension LiveClusterIndex {
    /// The cells of a grid, block by block (by Z-order code), each block's in a grid of its own.
    static func cellsByBlock(_ grid: Grid) -> [UInt64: Grid] {
        let shift = UInt32(blockShift)
        var blocks: [UInt64: Grid] = [:]
        for cell in grid.cells {
            let code = BulkBuilder.zOrder(cell.x >> shift, cell.y >> shift)
            var cell = cell
            let histogram = grid.histogram[cell.histogramStart..<cell.histogramEnd]
            blocks[code, default: Grid(cells: [], histogram: [])].append(&cell, histogram: histogram)
        }
        for code in blocks.keys { blocks[code]?.index() }
        return blocks
    }

    /// The kept-groups key of a block at a zoom.
    static func groupKey(zoom z: Int, _ bx: UInt32, _ by: UInt32) -> UInt64 {
        UInt64(z) << 48 | UInt64(bx) << 24 | UInt64(by)
    }

    /// Forms and keeps, ahead of the first queries, the unfiltered items of every block
    /// (before and after the merges across their edges) at each zoom from `minZoom` up,
    /// while they fit in ``preparedRoom(budget:points:)``: the first look at the map (the
    /// world, a country) is then read, not formed. Each zoom is formed a strip of rows of
    /// blocks at a time (``worldBlocks(zoom:room:)``). Then, of the deeper zooms, the
    /// blocks of most points (a city's at a street's zoom, whose first look gathers the
    /// totals of thousands of points, where their items are at most a few hundred) while
    /// the kept items stay within that room and half of what it leaves of the budget
    /// (three quarters of the budget, for a room of half). What it keeps is dropped
    /// after what views keep (see ``GroupCache/protect(_:)``). Returns the deepest zoom
    /// prepared whole, `nil` when even the first did not fit. Versions of the index share
    /// what it keeps; a later change forms its blocks again.
    @discardableResult
    public func prepareDisplay() -> Int? {
        let fullBudget = keptBudget
        let room = Self.preparedRoom(budget: fullBudget, points: count)
        var used = groupCache.usage.items
        var prepared: Int?
        guard count > 0 else { return nil }
        for z in options.minZoom...options.maxZoom {
            // The blocks' groups (their items after the merges share them, and add the
            // few merged clusters).
            guard let zoom = worldBlocks(zoom: z, room: room - used) else { break }
            var store = zoom.store
            let cellsByBlock = zoom.cells
            let codes = store.blocks.keys.sorted()
            var current: [UInt64: (stamp: BlockStamp, nodes: [QuadNode?])] = [:]
            for code in codes {
                let (bx, by) = BulkBuilder.position(code)
                current[code] = blockNodes(bx, by, zoom: z)
            }
            let reached = reachedBlocks(around: codes, nodes: current, zoom: z)
            // Besides the items and dense cells counted, each block's items after merges
            // take an item at least, and a block reached two (its empty groups, before and
            // after merges).
            guard used + zoom.count + codes.count + 2 * reached.count <= room else { break }
            for code in codes {
                guard let block = store.blocks[code] ?? nil, let (stamp, nodes) = current[code] else { continue }
                let (bx, by) = BulkBuilder.position(code)
                var own = Items()
                own.reserve(block.range.count)
                for i in block.range { own.append(i, of: block.items) }
                let edges = block.edges.map { $0 - block.range.lowerBound }
                let entry = GroupCache.Entry(stamp: stamp, items: own, edges: edges, cells: cellsByBlock[code], nodes: nodes)
                groupCache.keep(entry, for: Self.groupKey(zoom: z, bx, by), budget: fullBudget, root: combined.stamp)
                // Read from the kept entry from now on, so that the items after merges share it.
                store.blocks[code] = .some(BlockStore.Block(items: entry.items, range: entry.items.features.indices,
                                                            edges: entry.edges))
            }
            let kept = reached.filter { code in
                let (bx, by) = BulkBuilder.position(code)
                return keptGroups(bx, by, zoom: z) != nil
            }
            for code in codes + kept {
                let (bx, by) = BulkBuilder.position(code)
                _ = resolvedBlock(bx, by, store: &store)
            }
            groupCache.protect((codes + kept).flatMap { Self.preparedKeys(zoom: z, $0) })
            used = groupCache.usage.items
            prepared = z
        }
        let next = (prepared ?? options.minZoom - 1) + 1
        if next <= options.maxZoom { prepareDenseBlocks(from: next, limit: room + (fullBudget - room) / 2) }
        return prepared
    }

    /// The kept items the zooms prepared whole may take: half the budget, or all of it
    /// but one item per point where that is more (a layer of up to 2M points with the
    /// default budget of four items per point: at 1M points, 3M of 4M). The dense blocks
    /// of deeper zooms may take half of what is left, the views the rest.
    static func preparedRoom(budget: Int, points: Int) -> Int {
        max(budget / 2, budget - points)
    }

    /// The blocks beside `codes` (the blocks of zoom `z` that have items, with their
    /// ``blockNodes(_:_:zoom:)``) that have no points but that a node of those blocks
    /// other than a leaf reaches: one that meets their cells of the stamps' level
    /// (``blockStamp(_:_:zoom:)``; cells under twice a block's width, so within two
    /// blocks). A view over such a block finds the node and, without the block's groups
    /// kept, forms it to find nothing, on two threads where the nodes' counts pass
    /// ``pointsToFormAtOnce`` (Korea's node of a million points at zoom 4). A leaf (of a
    /// few points, sparse ones, whose cell may cover many blocks) is left out: a block it
    /// reaches is formed fast.
    func reachedBlocks(around codes: [UInt64], nodes: [UInt64: (stamp: BlockStamp, nodes: [QuadNode?])],
                       zoom z: Int) -> [UInt64] {
        let level = grid.level(zoom: z)
        let blockWidth = Int64(grid.span) << Int64(Self.blockShift)
        let stampLevel = self.stampLevel(reach: 0, zoom: z)
        let last = Int64(blocksPerSide(zoom: z) - 1)
        var seen = Set(codes)
        var reached: [UInt64] = []
        for code in codes {
            let (bx, by) = BulkBuilder.position(code)
            for case let node? in nodes[code]?.nodes ?? [] where !node.isLeaf {
                // The blocks that meet the node's cell at the stamps' level, or its own if coarser.
                let cellLevel = min(node.level, stampLevel)
                let shift = Int64(level - cellLevel)
                let x0 = Int64(QuadNode.cell(node.qx, level: cellLevel)) << shift
                let y0 = Int64(QuadNode.cell(node.qy, level: cellLevel)) << shift
                let width = Int64(1) << shift
                let nx0 = max(Int64(bx) - 2, x0 / blockWidth), nx1 = min(Int64(bx) + 2, last, (x0 + width - 1) / blockWidth)
                let ny0 = max(Int64(by) - 2, y0 / blockWidth), ny1 = min(Int64(by) + 2, last, (y0 + width - 1) / blockWidth)
                guard nx0 <= nx1, ny0 <= ny1 else { continue }
                for ny in ny0...ny1 {
                    for nx in nx0...nx1 {
                        let next = BulkBuilder.zOrder(UInt32(nx), UInt32(ny))
                        if seen.insert(next).inserted { reached.append(next) }
                    }
                }
            }
        }
        return reached
    }

    /// The unfiltered items of every block of zoom `z` (in a store that formed the whole
    /// world) with the cells' totals to keep with the blocks of many points per cell, and
    /// how many items and cells those are; `nil` as soon as they pass `room`. Formed a
    /// strip of rows of blocks at a time (one row each up to ``stripsPerZoom`` rows):
    /// groups never cross a block's edge, so the strips make the items one grid over the
    /// world makes, but a zoom that does not fit is given up once its strips so far pass
    /// `room`, not after all of its points' cells (at 10M points the world's grid of the
    /// first zoom that did not fit took 2.7 GB while it was formed).
    func worldBlocks(zoom z: Int, room: Int) -> (store: BlockStore, cells: [UInt64: Grid], count: Int)? {
        let last = UInt32(blocksPerSide(zoom: z) - 1)
        var store = BlockStore(zoom: z, filter: .all, keeps: true)
        var kept: [UInt64: Grid] = [:]
        var count = 0
        // A table of a strip's cells only where one of the world's would be used: the
        // strips of a deeper zoom are mostly empty.
        let side = grid.cellsPerSide(zoom: z)
        let tableHint: Int? = side * side <= Self.denseCellLimit ? nil : 0
        let rowsPerStrip = Self.rowsPerStrip(blocksPerSide: Int(last) + 1)
        var row = 0
        while row <= Int(last) {
            let end = min(Int(last), row + rowsPerStrip - 1)
            let strip = (UInt32(0), UInt32(row), last, UInt32(end))
            row = end + 1
            let (x0, y0, x1, y1) = cells(of: strip, zoom: z)
            let stripGrid = cellGrid(zoom: z, x0: x0, y0: y0, x1: x1, y1: y1, filter: .all, points: tableHint)
            guard !stripGrid.cells.isEmpty else { continue }
            let items = formItems(stripGrid, zoom: z, filter: .all)
            // The cells' totals kept with the groups of blocks of many points per cell.
            let dense = Self.cellsByBlock(stripGrid).filter { _, cells in
                cells.cells.reduce(0) { $0 + $1.aggregate.count } >= Self.pointsPerCellToKeepCells * cells.cells.count
            }
            count += items.features.count + dense.values.reduce(0) { $0 + $1.cells.count }
            guard count <= room else { return nil }
            kept.merge(dense) { first, _ in first }
            store.fill(items, formed: strip, index: self)
        }
        store.formed = (0, 0, last, last)
        return (store, kept, count)
    }

    /// Strips of rows of blocks a zoom is formed in at most (``worldBlocks(zoom:room:)``),
    /// so that the deep zooms of a small layer (up to 2^27 rows of blocks) are not walked
    /// row by row.
    static let stripsPerZoom = 1_024

    /// Rows of blocks per strip of a zoom with `blocksPerSide` rows: one up to
    /// ``stripsPerZoom`` rows, then as many as keep the strips within that number.
    static func rowsPerStrip(blocksPerSide: Int) -> Int {
        (blocksPerSide + stripsPerZoom - 1) / stripsPerZoom
    }

    /// The kept-groups keys of a prepared block (by its code): its groups, and its items
    /// after merges.
    static func preparedKeys(zoom z: Int, _ code: UInt64) -> [UInt64] {
        let (bx, by) = BulkBuilder.position(code)
        return [groupKey(zoom: z, bx, by), resolvedKey(zoom: z, bx, by)]
    }

    /// Items the kept display groups hold now (shared by every version of the index),
    /// may hold (``LiveClusterOptions/keptItems``), and the heap memory they take (an
    /// estimate from their arrays' sizes): for sizing that option.
    public var keptItems: (held: Int, budget: Int, bytes: Int) {
        let usage = groupCache.usage
        return (usage.items, keptBudget, usage.bytes)
    }

    /// Items the kept groups may hold (``GroupCache/keep(_:for:budget:root:)``): the
    /// layer's ``LiveClusterOptions/keptItems``, else ``GroupCache/defaultBudget(points:)``.
    var keptBudget: Int {
        options.keptItems ?? GroupCache.defaultBudget(points: count)
    }

    /// Points a block must hold for ``prepareDisplay()`` to form it at a zoom it does not
    /// prepare whole.
    static let pointsToPrepareBlock = 1_024

    /// Forms and keeps the blocks of at least ``pointsToPrepareBlock`` points of the zooms
    /// from `first` on, with their items after merges, most points first whatever their
    /// zoom, while the kept items stay under `limit`; protects what it keeps.
    func prepareDenseBlocks(from first: Int, limit: Int) {
        var dense: [(zoom: Int, code: UInt64, points: Int)] = []
        for z in first...options.maxZoom {
            for (code, points) in pointsPerBlock(zoom: z, least: Self.pointsToPrepareBlock) {
                dense.append((z, code, points))
            }
        }
        dense.sort { ($0.points, $1.zoom, $1.code) > ($1.points, $0.zoom, $0.code) }
        for (z, code, _) in dense {
            guard groupCache.usage.items < limit else { return }
            var store = BlockStore(zoom: z, filter: .all, keeps: true)
            let (bx, by) = BulkBuilder.position(code)
            _ = block(bx, by, in: &store)
            _ = resolvedBlock(bx, by, store: &store)
            groupCache.protect(Self.preparedKeys(zoom: z, code))
        }
    }

    /// The blocks of about `least` points or more at zoom `z`, by block code, with about
    /// how many points they hold: nodes no wider than a quarter of a block, and leaves
    /// (up to ``LiveClusterOptions/bucketSize`` points), counted where they begin. A
    /// block of `least` points meets at most 2 x 2 nodes of the level whose cells are at
    /// most 2 blocks wide, so one of them holds a quarter of them: smaller nodes of that
    /// level are passed over with what they hold.
    func pointsPerBlock(zoom z: Int, least: Int) -> [UInt64: Int] {
        let level = grid.level(zoom: z)
        let blockWidth = grid.span << Self.blockShift
        // Levels of nodes at most 2 blocks wide, and at most a quarter of one.
        var narrowLevel = level, wholeLevel = level
        while narrowLevel > 0, 1 << (level - narrowLevel + 1) <= 2 * blockWidth { narrowLevel -= 1 }
        while wholeLevel > 0, 1 << (level - wholeLevel + 1) <= blockWidth / 4 { wholeLevel -= 1 }
        let shift = UInt32(Self.blockShift)
        var counts: [UInt64: Int] = [:]
        func add(_ qx: UInt32, _ qy: UInt32, _ points: Int) {
            let code = BulkBuilder.zOrder(grid.cell(qx, zoom: z) >> shift, grid.cell(qy, zoom: z) >> shift)
            counts[code, default: 0] += points
        }
        // `narrow`: whether the node is inside one of that level's cells already checked.
        func visit(_ node: QuadNode, narrow: Bool) {
            if !narrow, node.level >= narrowLevel, node.aggregate.count < least / 4 { return }
            if node.isLeaf || node.level >= wholeLevel {
                add(node.qx, node.qy, node.aggregate.count)
            } else {
                for child in node.children { visit(child, narrow: narrow || node.level >= narrowLevel) }
            }
        }
        visit(combined, narrow: false)
        return counts.filter { $0.value >= least }
    }
}
