import Synchronization

/// Queries of the live index: clusters in a viewport, children, leaves, expansion zoom
/// and tiles, each under a ``LiveFilter``.
///
/// How clusters are formed at zoom `z` (grid level `L = z + levelShift`):
/// 1. the totals of the points that pass the filter are gathered per non-empty level-`L`
///    cell, from node totals where the filter allows, from single points otherwise;
/// 2. cells are visited by decreasing count (then row, then column); an unvisited cell
///    takes each unvisited neighbour (of its 8, in its block) whose mean position is
///    within half the radius of its own, in pixels at `z`;
/// 3. two groups of one block whose positions are still within half the radius merge
///    when all their cells fit in the 3 x 3 square around the larger group's first cell
///    (up to 3 rounds);
/// 4. a group of at least `minPoints` points is a cluster at the mean position of its
///    points; a smaller group shows its points.
/// A block is a square of 16 x 16 cells (of level `L - 4`; the whole grid below level 4):
/// groups never take cells of two blocks, so a block's groups depend on its own points
/// only. The same place is then the same cluster in every view and tile, and the groups
/// of a block are kept between unfiltered queries until its points change (see
/// ``GroupCache``).
/// A cluster id is `zoom << 48 | cellX << 28 | cellY << 8 | neighbourMask`: the first
/// cell and which of its 8 neighbours belong to the cluster. Children of a cluster are
/// formed the same way one zoom deeper, from the cells inside the cluster's cells only,
/// so their counts always add up to the cluster's.
extension LiveClusterIndex {
    // MARK: Public queries

    /// Clusters and single points whose positions lie inside `bbox` at `zoom`
    /// (fractional zooms floor; zooms outside `minZoom...maxZoom + 1` clamp to it), block
    /// by block along the Z-order curve. Every block the box meets is formed whole, so an
    /// item is the same in every view that shows it. A box crossing the antimeridian is
    /// answered as its two halves, eastern first.
    public func clusters(in bbox: BoundingBox, zoom: Double, filter: LiveFilter = .all) throws(GeoClusterError) -> LiveAnswer {
        let z = try clampedZoom(zoom)
        var answer = LiveAnswer(features: [], summaries: [])
        for span in bbox.spans {
            let rect = UnitRect(minX: WebMercator.x(longitude: span.west), minY: WebMercator.y(latitude: span.north),
                                maxX: WebMercator.x(longitude: span.east), maxY: WebMercator.y(latitude: span.south))
            appendClusters(in: rect, zoom: z, filter: filter, into: &answer)
        }
        return answer
    }

    /// The items one zoom deeper that a cluster splits into: clusters formed from the
    /// cluster's own cells, and single points. Their counts add up to the cluster's.
    public func children(of clusterID: Int, filter: LiveFilter = .all) throws(GeoClusterError) -> LiveAnswer {
        let answer = formChildren(of: try checked(clusterID, filter: filter), filter: filter)
        guard !answer.features.isEmpty else { throw .unknownCluster(id: clusterID) }
        return answer
    }

    /// The children of a cluster address, formed without checking that the address is a
    /// cluster's.
    func formChildren(of address: ClusterAddress, filter: LiveFilter) -> LiveAnswer {
        var answer = LiveAnswer(features: [], summaries: [])
        if address.zoom == options.maxZoom {
            for member in address.members {
                forEachPoint(level: address.level, cx: member.x, cy: member.y, filter: filter) { entry in
                    answer.features.append(pointFeature(entry))
                    return true
                }
            }
        } else {
            var contributions: [Contribution] = []
            for member in address.members {
                collect(level: address.level + 1, x0: member.x << 1, y0: member.y << 1,
                        x1: member.x << 1 | 1, y1: member.y << 1 | 1, filter: filter, into: &contributions)
            }
            let grid = fold(contributions)
            var items = Items()
            for group in group(grid, zoom: address.zoom + 1) {
                appendGroup(group, grid: grid, zoom: address.zoom + 1, filter: filter, into: &items)
            }
            append(items, within: nil, into: &answer)
        }
        return answer
    }

    /// A page of the points of a cluster (slots), `limit` after skipping `offset`, in a
    /// stable order: the cluster's cells in id order, each in quadtree order by partition.
    public func leaves(of clusterID: Int, limit: Int = 10, offset: Int = 0,
                       filter: LiveFilter = .all) throws(GeoClusterError) -> LeavesPage {
        guard limit >= 0 else { throw .invalidPagination(reason: "limit must not be negative, got \(limit)") }
        guard offset >= 0 else { throw .invalidPagination(reason: "offset must not be negative, got \(offset)") }
        let address = try checked(clusterID, filter: filter)
        var total = 0
        var skip = offset
        var page: [Int] = []
        for member in address.members {
            let cellTotal = count(level: address.level, cx: member.x, cy: member.y, filter: filter)
            total += cellTotal
            if page.count >= limit { continue }
            if skip >= cellTotal {
                skip -= cellTotal
                continue
            }
            forEachPoint(level: address.level, cx: member.x, cy: member.y, filter: filter) { entry in
                if skip > 0 {
                    skip -= 1
                    return true
                }
                page.append(Int(entry.slot))
                return page.count < limit
            }
        }
        guard total > 0 else { throw .unknownCluster(id: clusterID) }
        return LeavesPage(pointIndices: page, total: total)
    }

    /// The zoom at which a cluster first shows as more than one item.
    public func expansionZoom(of clusterID: Int, filter: LiveFilter = .all) throws(GeoClusterError) -> Int {
        var address = try checked(clusterID, filter: filter)
        while address.zoom < options.maxZoom {
            let next = formChildren(of: address, filter: filter).features
            guard next.count == 1, let childID = next[0].clusterID else { return address.zoom + 1 }
            address = try decode(childID)
        }
        return options.maxZoom + 1
    }

    /// The items of one tile with pixel positions relative to it and a buffer of
    /// `radius` pixels around it.
    public func tile(_ address: TileAddress, filter: LiveFilter = .all) throws(GeoClusterError) -> (features: [TileFeature], summaries: [LiveSummary]) {
        let z = try clampedZoom(Double(address.z))
        let z2 = Double(address.tilesPerAxis)
        let p = options.radiusPixels / Double(options.extent)
        let x = Double(address.x), y = Double(address.y)
        let rect = UnitRect(minX: max(0, (x - p) / z2), minY: max(0, (y - p) / z2),
                            maxX: min(1, (x + 1 + p) / z2), maxY: min(1, (y + 1 + p) / z2))
        var answer = LiveAnswer(features: [], summaries: [])
        appendClusters(in: rect, zoom: z, filter: filter, into: &answer)
        let extent = Double(options.extent)
        let features = answer.features.map { feature in
            let px = WebMercator.x(longitude: feature.coordinate.longitude)
            let py = WebMercator.y(latitude: feature.coordinate.latitude)
            return TileFeature(kind: feature.kind,
                               pixelX: Int(RadiusClusterIndex.roundHalfUp(extent * (px * z2 - x))),
                               pixelY: Int(RadiusClusterIndex.roundHalfUp(extent * (py * z2 - y))),
                               aggregateIndex: feature.aggregateIndex)
        }
        return (features, answer.summaries)
    }

    /// Number of points that pass `filter`.
    public func count(filter: LiveFilter) -> Int {
        count(level: 0, cx: 0, cy: 0, filter: filter)
    }

    // MARK: Cluster ids

    struct ClusterAddress {
        var zoom: Int
        var level: Int
        var members: [(x: UInt32, y: UInt32)]
    }

    /// The 8 neighbours in mask-bit order.
    static let neighbourOffsets: [(dx: Int, dy: Int)] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)]

    func clusterID(zoom: Int, x: UInt32, y: UInt32, mask: UInt8) -> Int {
        zoom << 48 | Int(x) << 28 | Int(y) << 8 | Int(mask)
    }

    func decode(_ id: Int) throws(GeoClusterError) -> ClusterAddress {
        guard id >= 0 else { throw .unknownCluster(id: id) }
        let zoom = id >> 48
        guard zoom >= options.minZoom, zoom <= options.maxZoom else { throw .unknownCluster(id: id) }
        let level = zoom + options.levelShift
        let x = Int((id >> 28) & 0xFFFFF), y = Int((id >> 8) & 0xFFFFF)
        let side = 1 << level
        guard x < side, y < side else { throw .unknownCluster(id: id) }
        var members: [(x: UInt32, y: UInt32)] = [(UInt32(x), UInt32(y))]
        for (bit, offset) in Self.neighbourOffsets.enumerated() where id & (1 << bit) != 0 {
            let nx = x + offset.dx, ny = y + offset.dy
            guard nx >= 0, ny >= 0, nx < side, ny < side else { throw .unknownCluster(id: id) }
            members.append((UInt32(nx), UInt32(ny)))
        }
        return ClusterAddress(zoom: zoom, level: level, members: members)
    }

    /// The address of a cluster id that an answer under `filter` gives at the index's
    /// current state, or `unknown_cluster`.
    ///
    /// A cluster comes either from a block's groups at its zoom (`clusters`, tiles) or from
    /// the children of a cluster one zoom up, which are formed from that cluster's cells
    /// only and so may differ from the block's groups. Walking up from the id's first
    /// cell, each zoom `z0` is tried as the start of a chain: the block cluster at `z0`
    /// that holds the cell's ancestor, then, zoom by zoom, its child that holds the next
    /// ancestor. The id is a cluster's when a chain arrives at it. Chains that meet follow
    /// the same path from there, so each cluster is followed once: at most one block
    /// formation and a few dozen child formations of up to 9 cells each. An id from an
    /// older version answers while the same cells still form the same cluster; the
    /// counts and positions are those of the current points.
    func checked(_ id: Int, filter: LiveFilter) throws(GeoClusterError) -> ClusterAddress {
        let address = try decode(id)
        let (cx, cy) = address.members[0]
        var followed = Set<Int>()
        for start in stride(from: address.zoom, through: options.minZoom, by: -1) {
            let up = UInt32(address.zoom - start)
            guard var current = blockCluster(holding: (cx >> up, cy >> up), zoom: start, filter: filter) else { continue }
            var zoom = start
            while zoom < address.zoom, followed.insert(current).inserted {
                let shift = UInt32(address.zoom - zoom - 1)
                let children = formChildren(of: try decode(current), filter: filter).features
                guard let next = cluster(holding: (cx >> shift, cy >> shift), among: children) else { break }
                current = next
                zoom += 1
            }
            if current == id { return address }
        }
        throw .unknownCluster(id: id)
    }

    /// The id of the cluster that holds a cell among `features`, if any.
    private func cluster(holding cell: (x: UInt32, y: UInt32), among features: [ClusterFeature]) -> Int? {
        for feature in features {
            guard let id = feature.clusterID, let address = try? decode(id) else { continue }
            if address.members.contains(where: { $0.x == cell.x && $0.y == cell.y }) { return id }
        }
        return nil
    }

    /// The id of the cluster of a block's groups at `zoom` that holds a cell, if any:
    /// the cluster a `clusters` answer or a tile shows there.
    private func blockCluster(holding cell: (x: UInt32, y: UInt32), zoom: Int, filter: LiveFilter) -> Int? {
        let level = zoom + options.levelShift
        let blockLevel = max(0, level - Self.blockShift)
        let shift = UInt32(level - blockLevel)
        let side = Double(UInt64(1) << UInt64(blockLevel))
        let bx = Double(cell.x >> shift), by = Double(cell.y >> shift)
        // A group's position is the mean of its points, all inside its block, and a point
        // on the block's east or south edge is in the next block: so the rect ends just
        // short of those edges and meets this block only.
        let rect = UnitRect(minX: bx / side, minY: by / side,
                            maxX: ((bx + 1) / side).nextDown, maxY: ((by + 1) / side).nextDown)
        var answer = LiveAnswer(features: [], summaries: [])
        appendClusters(in: rect, zoom: zoom, filter: filter, into: &answer)
        return cluster(holding: cell, among: answer.features)
    }

    func clampedZoom(_ zoom: Double) throws(GeoClusterError) -> Int {
        guard zoom.isFinite else { throw .invalidZoom(value: zoom, reason: "is not a finite number") }
        return Int(max(Double(options.minZoom), min(zoom.rounded(.down), Double(options.maxZoom + 1))))
    }

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
        var histogram: [(partition: Int, count: Int)]
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
                    for item in histogram { grid.histogram.append((Int(item.partition), Int(item.count))) }
                } else if partitioned, c.pointee.partition >= 0 {
                    grid.histogram.append((c.pointee.partition, c.pointee.aggregate.count))
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
                grid.histogram[write - 1].count += item.count
            } else {
                grid.histogram[write] = item
                write += 1
            }
        }
        grid.histogram.removeSubrange(write..<end)
        grid.cells[cell].histogramEnd = write
    }

    /// A display group: its first cell and which of that cell's 8 neighbours belong to it
    /// (bit `i` for `neighbourOffsets[i]`). A group never reaches beyond the 3 x 3 square
    /// around its first cell, so these two say which cells it has, without an array of
    /// them per group.
    struct Group {
        /// Index of the first cell in the grid.
        var first: Int
        var mask: UInt8
        var aggregate: NodeAggregate
        /// The mean position of the group's points (projected), kept with the totals.
        var position: SIMD2<Double>

        /// A group of one cell, at the cell's position.
        init(cell: Int, aggregate: NodeAggregate, position: SIMD2<Double>) {
            first = cell
            mask = 0
            self.aggregate = aggregate
            self.position = position
        }

        /// Adds the points of other cells, given as the mask bits they take.
        mutating func absorb(_ other: NodeAggregate, bits: UInt8) {
            mask |= bits
            aggregate.add(other)
            position = SIMD2(aggregate.x, aggregate.y)
        }

        var cellCount: Int { 1 + mask.nonzeroBitCount }
    }

    /// Calls `body` with the grid index of each cell of a group: the first, then its
    /// neighbours in bit order.
    func forEachCell(of group: Group, in grid: Grid, _ body: (Int) -> Void) {
        body(group.first)
        guard group.mask != 0 else { return }
        grid.forEachNeighbour(of: group.first) { bit, j in
            if group.mask & (1 << UInt8(bit)) != 0 { body(j) }
        }
    }

    /// Forms the display groups of a grid at zoom `z` (steps 2 and 3 above).
    func group(_ grid: Grid, zoom z: Int) -> [Group] {
        let cells = grid.cells
        guard !cells.isEmpty else { return [] }
        @inline(__always)
        func sameBlock(_ i: Int, _ j: Int) -> Bool {
            (cells[i].x ^ cells[j].x) >> UInt32(Self.blockShift) == 0 && (cells[i].y ^ cells[j].y) >> UInt32(Self.blockShift) == 0
        }
        let scale = Double(options.extent) * Double(UInt64(1) << UInt64(z))
        let limit = options.radiusPixels / 2 / scale
        let limitSquared = limit * limit
        func close(_ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Bool {
            let d = a - b
            return (d * d).sum() < limitSquared
        }
        // Positions are computed once: each takes two divisions, and a cell is compared
        // with up to 8 neighbours.
        let cellPositions = cells.map { SIMD2($0.aggregate.x, $0.aggregate.y) }
        // Larger count first, then the earlier cell: both in one key, sorted as integers.
        var order = cells.indices.map { i in
            UInt64(UInt32.max - UInt32(clamping: cells[i].aggregate.count)) << 32 | UInt64(i)
        }
        RadixSort.sort(&order)
        var owner = [Int](repeating: -1, count: cells.count)
        var groups: [Group] = []
        for key in order {
            let i = Int(key & 0xFFFF_FFFF)
            guard owner[i] < 0 else { continue }
            var group = Group(cell: i, aggregate: cells[i].aggregate, position: cellPositions[i])
            owner[i] = groups.count
            grid.forEachNeighbour(of: i) { bit, j in
                // Compared with the first cell's own position, not the group's so far.
                guard owner[j] < 0, sameBlock(i, j), close(cellPositions[i], cellPositions[j]) else { return }
                owner[j] = groups.count
                group.mask |= 1 << UInt8(bit)
                group.aggregate.add(cells[j].aggregate)
            }
            if group.mask != 0 { group.position = SIMD2(group.aggregate.x, group.aggregate.y) }
            groups.append(group)
        }
        // Groups whose positions still come too close merge when the result stays in
        // the 3 x 3 square of the larger one's first cell. Such a pair's first cells are
        // neighbours (in one block), so each group looks only at the groups that start
        // next to it. Two groups of one cell each were compared above, when the first of
        // them formed, and a pair that did not merge can merge in a later round only when
        // one of the two has grown: each round starts from the groups that have grown.
        var firstOf = [Int32](repeating: -1, count: cells.count)
        var dirty = groups.map { $0.mask != 0 }
        for _ in 0..<3 {
            for (g, group) in groups.enumerated() { firstOf[group.first] = Int32(g) }
            var alive = [Bool](repeating: true, count: groups.count)
            var grown = [Bool](repeating: false, count: groups.count)
            var merged = false
            for a in groups.indices where alive[a] && dirty[a] {
                grid.forEachNeighbour(of: groups[a].first) { _, j in
                    // Once absorbed, `a` looks no further.
                    guard alive[a], firstOf[j] >= 0, sameBlock(groups[a].first, j) else { return }
                    let b = Int(firstOf[j])
                    guard alive[b], close(groups[a].position, groups[b].position) else { return }
                    let (winner, loser) = Self.ranks(groups[a], before: groups[b]) ? (a, b) : (b, a)
                    guard let mask = absorbedMask(groups[winner], groups[loser], grid) else { return }
                    groups[winner].absorb(groups[loser].aggregate, bits: mask)
                    alive[loser] = false
                    grown[winner] = true
                    merged = true
                }
            }
            for group in groups { firstOf[group.first] = -1 }
            if !merged { break }
            let kept = groups.indices.filter { alive[$0] }
            groups = kept.map { groups[$0] }
            dirty = kept.map { grown[$0] }
        }
        return groups
    }

    /// The winner's mask with the loser's cells added, or `nil` when one of them is
    /// outside the 3 x 3 square around the winner's first cell.
    func absorbedMask(_ winner: Group, _ loser: Group, _ grid: Grid) -> UInt8? {
        let fx = Int(grid.cells[winner.first].x), fy = Int(grid.cells[winner.first].y)
        var mask: UInt8? = winner.mask
        forEachCell(of: loser, in: grid) { m in
            let dx = Int(grid.cells[m].x) - fx, dy = Int(grid.cells[m].y) - fy
            guard let bit = Self.neighbourOffsets.firstIndex(where: { $0.dx == dx && $0.dy == dy }) else {
                mask = nil
                return
            }
            mask? |= 1 << UInt8(bit)
        }
        return mask
    }

    /// Larger count first, then the earlier first cell (row, then column).
    static func ranks(_ a: Group, before b: Group) -> Bool {
        a.aggregate.count != b.aggregate.count ? a.aggregate.count > b.aggregate.count : a.first < b.first
    }

    /// Items of an answer with their projected positions, before they are kept to a rect;
    /// a feature's `aggregateIndex` points into `summaries`.
    struct Items: Sendable {
        var features: [ClusterFeature] = []
        var summaries: [LiveSummary] = []
        var positions: [SIMD2<Double>] = []

        mutating func reserve(_ n: Int) {
            features.reserveCapacity(n)
            positions.reserveCapacity(n)
        }

        mutating func append(_ feature: ClusterFeature, at position: SIMD2<Double>) {
            features.append(feature)
            positions.append(position)
        }
    }

    /// Appends the items positioned inside `rect` (all when `nil`) to an answer.
    func append(_ items: Items, within rect: UnitRect?, into answer: inout LiveAnswer) {
        answer.features.reserveCapacity(answer.features.count + items.features.count)
        answer.summaries.reserveCapacity(answer.summaries.count + items.summaries.count)
        items.features.withUnsafeBufferPointer { features in
            items.positions.withUnsafeBufferPointer { positions in
                for i in features.indices {
                    if let rect, !rect.contains(positions[i].x, positions[i].y) { continue }
                    var feature = features[i]
                    if let k = feature.aggregateIndex {
                        feature.aggregateIndex = answer.summaries.count
                        answer.summaries.append(items.summaries[k])
                    }
                    answer.features.append(feature)
                }
            }
        }
    }

    /// Appends a group as a cluster, or its points when it is smaller than `minPoints`.
    func appendGroup(_ group: Group, grid: Grid, zoom: Int, filter: LiveFilter, into items: inout Items) {
        let aggregate = group.aggregate
        if aggregate.count >= options.minPoints {
            let x = group.position.x, y = group.position.y
            let first = grid.cells[group.first]
            items.append(ClusterFeature(
                kind: .cluster(id: clusterID(zoom: zoom, x: first.x, y: first.y, mask: group.mask), pointCount: aggregate.count),
                coordinate: Coordinate(longitude: WebMercator.longitude(x: x), latitude: WebMercator.latitude(y: y)),
                aggregateIndex: items.summaries.count), at: group.position)
            items.summaries.append(summary(group, grid: grid))
            return
        }
        let level = zoom + options.levelShift
        let cell = grid.cells[group.first]
        if group.cellCount == 1, cell.aggregate.count == 1 {
            // The common case of one point: no second walk. Its coordinate sums are its position.
            let x = LeafEntry.unquantize(UInt32(cell.aggregate.sumX)), y = LeafEntry.unquantize(UInt32(cell.aggregate.sumY))
            items.append(ClusterFeature(kind: .point(index: Int(cell.slot)), coordinate: cell.coordinate), at: SIMD2(x, y))
            return
        }
        var members: [(UInt32, UInt32)] = []
        forEachCell(of: group, in: grid) { members.append((grid.cells[$0].x, grid.cells[$0].y)) }
        members.sort { ($0.1, $0.0) < ($1.1, $1.0) }
        for (cx, cy) in members {
            forEachPoint(level: level, cx: cx, cy: cy, filter: filter) { entry in
                items.append(pointFeature(entry), at: SIMD2(LeafEntry.unquantize(entry.qx), LeafEntry.unquantize(entry.qy)))
                return true
            }
        }
    }

    func summary(_ group: Group, grid: Grid) -> LiveSummary {
        var combined: [(partition: Int, count: Int)]
        if group.mask == 0 {
            // One cell: its counts are already by partition without repeats.
            let cell = grid.cells[group.first]
            combined = Array(grid.histogram[cell.histogramStart..<cell.histogramEnd])
        } else {
            var counts: [(partition: Int, count: Int)] = []
            forEachCell(of: group, in: grid) { m in
                let cell = grid.cells[m]
                counts.append(contentsOf: grid.histogram[cell.histogramStart..<cell.histogramEnd])
            }
            if counts.count > 1 { counts.sort { $0.partition < $1.partition } }
            combined = []
            for item in counts {
                if combined.last?.partition == item.partition {
                    combined[combined.count - 1].count += item.count
                } else {
                    combined.append(item)
                }
            }
        }
        if combined.count > 1 {
            combined.sort { $0.count != $1.count ? $0.count > $1.count : $0.partition < $1.partition }
        }
        let latest = group.aggregate.latestSlot == UInt32.max ? nil : Int(group.aggregate.latestSlot)
        return LiveSummary(weight: group.aggregate.weight, latestSlot: latest, partitionCounts: combined)
    }

    func pointFeature(_ entry: LeafEntry) -> ClusterFeature {
        ClusterFeature(kind: .point(index: Int(entry.slot)), coordinate: entry.coordinate)
    }

    // MARK: Walking points

    /// Points that pass in one grid cell, partition by partition in quadtree order;
    /// `body` returns false to stop.
    func forEachPoint(level: Int, cx: UInt32, cy: UInt32, filter: LiveFilter, _ body: (LeafEntry) -> Bool) {
        forEachPoint(level: level, x0: cx, y0: cy, x1: cx, y1: cy, filter: filter, body)
    }

    func forEachPoint(level: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32, filter: LiveFilter,
                      _ body: (LeafEntry) -> Bool) {
        var going = true
        forEachTree(filter) { _, tree, filter in
            guard going else { return }
            going = Self.walk(tree, level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter, body)
        }
    }

    static func walk(_ node: QuadNode, level: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32,
                     filter: LiveFilter, _ body: (LeafEntry) -> Bool) -> Bool {
        guard node.overlaps(level: level, x0: x0, y0: y0, x1: x1, y1: y1) else { return true }
        if node.isLeaf {
            for entry in node.entries where filter.passes(entry) {
                let cx = QuadNode.cell(entry.qx, level: level), cy = QuadNode.cell(entry.qy, level: level)
                guard cx >= x0, cx <= x1, cy >= y0, cy <= y1 else { continue }
                if !body(entry) { return false }
            }
            return true
        }
        for child in node.children {
            if !walk(child, level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter, body) { return false }
        }
        return true
    }

    /// Points that pass in one grid cell, from node totals when the filter allows.
    func count(level: Int, cx: UInt32, cy: UInt32, filter: LiveFilter) -> Int {
        var contributions: [Contribution] = []
        collect(level: level, x0: cx, y0: cy, x1: cx, y1: cy, filter: filter, into: &contributions)
        return contributions.reduce(0) { $0 + $1.aggregate.count }
    }
}

extension QuadNode {
    /// Whether the node's cell meets the range of cells `x0...x1` x `y0...y1` of `level`:
    /// its level-`level` cell lies in the range (a node at or below that level), or the
    /// block of level-`level` cells it covers overlaps it (a coarser node).
    func overlaps(level: Int, x0: UInt32, y0: UInt32, x1: UInt32, y1: UInt32) -> Bool {
        if self.level >= level {
            let cx = Self.cell(qx, level: level), cy = Self.cell(qy, level: level)
            return cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1
        }
        let shift = UInt32(level - self.level)
        let nx0 = Self.cell(qx, level: self.level) << shift
        let ny0 = Self.cell(qy, level: self.level) << shift
        let span = (UInt32(1) << shift) &- 1
        return nx0 <= x1 && nx0 &+ span >= x0 && ny0 <= y1 && ny0 &+ span >= y0
    }

    /// The first point in quadtree order.
    var firstEntry: LeafEntry? {
        var node = self
        while !node.isLeaf { node = node.children[0] }
        return node.entries.first
    }

    func forEachEntry(_ body: (LeafEntry) -> Void) {
        if isLeaf {
            for entry in entries { body(entry) }
        } else {
            for child in children { child.forEachEntry(body) }
        }
    }
}

/// The display groups of blocks, formed by unfiltered queries and kept for the next ones.
///
/// An entry is the items of one block at one zoom with the stamp of the node that held the
/// block's points (``QuadNode/stamp``). It answers a later query only while the block's
/// points are held by a node of that stamp, that is while they have not changed: a
/// change copies the nodes on its path with new stamps. Versions of an index share its
/// cache, so readers of an older version and of the newest one both find their blocks.
/// When the kept items would exceed the budget, about half of the entries are dropped.
final class GroupCache: Sendable {
    final class Entry: Sendable {
        let stamp: UInt64
        let items: LiveClusterIndex.Items

        init(stamp: UInt64, items: LiveClusterIndex.Items) {
            self.stamp = stamp
            self.items = items
        }

        /// What the entry counts for in the budget: its items, at least one.
        var size: Int { max(1, items.features.count) }
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var size = 0
    }

    /// The smallest budget, in items, whatever the size of the index.
    static let minimumBudget = 65_536

    private let state = Mutex(State())

    init() {}

    /// The entry for `key` if its points still have `stamp`.
    func entry(_ key: UInt64, stamp: UInt64) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.stamp == stamp else { return nil }
            return entry
        }
    }

    /// Keeps `entry` for `key`, in place of what was kept for it; first drops about half
    /// of the entries if the kept items would exceed `budget`.
    func keep(_ entry: Entry, for key: UInt64, budget: Int) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.size -= old.size }
            if state.size + entry.size > budget {
                var drop = true
                for (key, old) in state.entries {
                    if drop {
                        state.entries[key] = nil
                        state.size -= old.size
                    }
                    drop.toggle()
                }
            }
            state.entries[key] = entry
            state.size += entry.size
        }
    }

    /// Entries and items kept; for tests and measurements.
    var usage: (entries: Int, items: Int) {
        state.withLock { ($0.entries.count, $0.size) }
    }
}
