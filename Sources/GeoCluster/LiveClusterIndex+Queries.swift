/// Queries of the live index: clusters in a viewport, children, leaves, expansion zoom
/// and tiles, each under a ``LiveFilter``.
///
/// How clusters are formed at zoom `z` (cells of ``LiveGrid``, each `span` x `span`
/// quadtree cells of level `z + levelShift`):
/// 1. the totals of the points that pass the filter are gathered per non-empty cell,
///    from node totals where the filter allows, from single points otherwise;
/// 2. cells are visited by decreasing count (then row, then column); an unvisited cell
///    takes each unvisited neighbour (of its 8, in its block) whose mean position is
///    within half the radius of its own, in pixels at `z`;
/// 3. two groups of one block whose positions are still within half the radius merge
///    when all their cells fit in the 3 x 3 square around the larger group's first cell
///    (up to 3 rounds);
/// 4. a group of at least `minPoints` points is a cluster at the mean position of its
///    points; a smaller group shows its points.
/// 5. items of neighbouring blocks closer than half the radius merge when each is the
///    other's nearest across the edges (`LiveClusterIndex+Edges.swift`).
/// A block is a square of 16 x 16 cells (the whole grid at zooms with fewer cells):
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
    ///
    /// With a `limit`, the query stops once it holds more features than that, and the
    /// answer says it is not complete (``LiveAnswer/isComplete``): an answer too large to
    /// be sent is refused after forming about `limit` features, not all of them.
    public func clusters(in bbox: BoundingBox, zoom: Double, filter: LiveFilter = .all,
                         limit: Int? = nil) throws(GeoClusterError) -> LiveAnswer {
        let z = try clampedZoom(zoom)
        var answer = LiveAnswer(features: [], summaries: [])
        for span in bbox.spans where answer.isComplete {
            let rect = UnitRect(minX: WebMercator.x(longitude: span.west), minY: WebMercator.y(latitude: span.north),
                                maxX: WebMercator.x(longitude: span.east), maxY: WebMercator.y(latitude: span.south))
            appendClusters(in: rect, zoom: z, filter: filter, limit: limit, into: &answer)
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
                forEachPoint(zoom: address.zoom, cx: member.x, cy: member.y, filter: filter) { entry in
                    answer.features.append(pointFeature(entry))
                    return true
                }
            }
        } else {
            var contributions: [Contribution] = []
            for member in address.members {
                collect(zoom: address.zoom + 1, x0: member.x << 1, y0: member.y << 1,
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
            let cellTotal = count(zoom: address.zoom, cx: member.x, cy: member.y, filter: filter)
            total += cellTotal
            if page.count >= limit { continue }
            if skip >= cellTotal {
                skip -= cellTotal
                continue
            }
            forEachPoint(zoom: address.zoom, cx: member.x, cy: member.y, filter: filter) { entry in
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
    /// `radius` pixels around it; the summaries' counts by partition in `partitionCounts`
    /// (``LiveSummary/partitionRange``).
    public func tile(_ address: TileAddress, filter: LiveFilter = .all) throws(GeoClusterError)
        -> (features: [TileFeature], summaries: [LiveSummary], partitionCounts: [PartitionTotal]) {
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
        return (features, answer.summaries, answer.partitionCounts)
    }

    /// Number of points that pass `filter`.
    public func count(filter: LiveFilter) -> Int {
        var contributions: [Contribution] = []
        forEachTree(filter) { partition, tree, filter in
            Self.collect(tree, level: 0, span: 1, x0: 0, y0: 0, x1: 0, y1: 0, filter: filter, partition: partition,
                         into: &contributions)
        }
        return contributions.reduce(0) { $0 + $1.aggregate.count }
    }

    // MARK: Cluster ids

    struct ClusterAddress {
        var zoom: Int
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
        let x = Int((id >> 28) & 0xFFFFF), y = Int((id >> 8) & 0xFFFFF)
        let side = grid.cellsPerSide(zoom: zoom)
        guard x < side, y < side else { throw .unknownCluster(id: id) }
        var members: [(x: UInt32, y: UInt32)] = [(UInt32(x), UInt32(y))]
        for (bit, offset) in Self.neighbourOffsets.enumerated() where id & (1 << bit) != 0 {
            let nx = x + offset.dx, ny = y + offset.dy
            guard nx >= 0, ny >= 0, nx < side, ny < side else { throw .unknownCluster(id: id) }
            members.append((UInt32(nx), UInt32(ny)))
        }
        return ClusterAddress(zoom: zoom, members: members)
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
        let shift = UInt32(Self.blockShift)
        let bx = cell.x >> shift, by = cell.y >> shift
        // Every item the block shows, merged across its edges or not, wherever it lies.
        var answer = LiveAnswer(features: [], summaries: [])
        appendBlocks((bx, by, bx, by), within: nil, zoom: zoom, filter: filter, into: &answer)
        return cluster(holding: cell, among: answer.features)
    }

    func clampedZoom(_ zoom: Double) throws(GeoClusterError) -> Int {
        guard zoom.isFinite else { throw .invalidZoom(value: zoom, reason: "is not a finite number") }
        return Int(max(Double(options.minZoom), min(zoom.rounded(.down), Double(options.maxZoom + 1))))
    }
}
