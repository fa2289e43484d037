/// Forming clusters, steps 2 to 4 (see `LiveClusterIndex+Queries.swift`): cells grouped
/// by decreasing count, groups merged, and groups written as clusters or points.
extension LiveClusterIndex {
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

    /// Whether two cells lie in one block.
    @inline(__always)
    static func inOneBlock(_ a: GridCell, _ b: GridCell) -> Bool {
        (a.x ^ b.x) >> UInt32(blockShift) == 0 && (a.y ^ b.y) >> UInt32(blockShift) == 0
    }

    /// Forms the display groups of a grid at zoom `z` (steps 2 and 3 above).
    func group(_ grid: Grid, zoom z: Int) -> [Group] {
        guard !grid.cells.isEmpty else { return [] }
        let scale = Double(options.extent) * Double(UInt64(1) << UInt64(z))
        let limit = options.radiusPixels / 2 / scale
        let limitSquared = limit * limit
        func close(_ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Bool {
            let d = a - b
            return (d * d).sum() < limitSquared
        }
        // Positions are computed once: each takes two divisions, and a cell is compared
        // with up to 8 neighbours.
        let cellPositions = grid.cells.map { SIMD2($0.aggregate.x, $0.aggregate.y) }
        let order = Self.byDecreasingCount(grid.cells)
        var groups: [Group] = []
        groups.reserveCapacity(grid.cells.count)
        // Read and written through pointers: once per cell and up to 8 times per
        // neighbour, where array accesses checked bounds and uniqueness each time.
        var owner = [Int32](repeating: -1, count: grid.cells.count)
        grid.cells.withUnsafeBufferPointer { cells in
            cellPositions.withUnsafeBufferPointer { positions in
                owner.withUnsafeMutableBufferPointer { owner in
                    for i in order {
                        let i = Int(i)
                        guard owner[i] < 0 else { continue }
                        let g = Int32(groups.count)
                        var group = Group(cell: i, aggregate: cells[i].aggregate, position: positions[i])
                        owner[i] = g
                        grid.forEachNeighbour(of: i) { bit, j in
                            // Compared with the first cell's own position, not the group's so far.
                            guard owner[j] < 0, Self.inOneBlock(cells[i], cells[j]), close(positions[i], positions[j])
                            else { return }
                            owner[j] = g
                            group.mask |= 1 << UInt8(bit)
                            group.aggregate.add(cells[j].aggregate)
                        }
                        if group.mask != 0 { group.position = SIMD2(group.aggregate.x, group.aggregate.y) }
                        groups.append(group)
                    }
                }
            }
        }
        // Groups whose positions still come too close merge when the result stays in
        // the 3 x 3 square of the larger one's first cell. Such a pair's first cells are
        // neighbours (in one block), so each group looks only at the groups that start
        // next to it. Two groups of one cell each were compared above, when the first of
        // them formed, and a pair that did not merge can merge in a later round only when
        // one of the two has grown: each round starts from the groups that have grown.
        var firstOf = [Int32](repeating: -1, count: grid.cells.count)
        var dirty = groups.map { $0.mask != 0 }
        for _ in 0..<3 {
            for (g, group) in groups.enumerated() { firstOf[group.first] = Int32(g) }
            var alive = [Bool](repeating: true, count: groups.count)
            var grown = [Bool](repeating: false, count: groups.count)
            var merged = false
            for a in groups.indices where alive[a] && dirty[a] {
                grid.forEachNeighbour(of: groups[a].first) { _, j in
                    // Once absorbed, `a` looks no further.
                    guard alive[a], firstOf[j] >= 0, Self.inOneBlock(grid.cells[groups[a].first], grid.cells[j]) else { return }
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

    /// The indices of `cells`, larger count first, then the earlier cell. Most blocks'
    /// counts span a few dozen values, so one counting pass over the counts' range
    /// orders them (a quarter of a radix sort's work on a block of sparse cells); a
    /// wider range is sorted by a key of both, as integers.
    static func byDecreasingCount(_ cells: [GridCell]) -> [UInt32] {
        guard let first = cells.first else { return [] }
        var least = first.aggregate.count, most = least
        for cell in cells {
            least = min(least, cell.aggregate.count)
            most = max(most, cell.aggregate.count)
        }
        let (span, overflow) = most.subtractingReportingOverflow(least)
        guard !overflow, span < 4 * cells.count + 256 else {
            var keys = cells.indices.map { i in
                UInt64(UInt32.max - UInt32(clamping: cells[i].aggregate.count)) << 32 | UInt64(i)
            }
            RadixSort.sort(&keys)
            return keys.map { UInt32(truncatingIfNeeded: $0) }
        }
        // starts[k]: where the cells of count `most - k` begin.
        var starts = [Int](repeating: 0, count: span + 2)
        for cell in cells { starts[most - cell.aggregate.count + 1] += 1 }
        for k in 1..<starts.count { starts[k] += starts[k - 1] }
        var order = [UInt32](repeating: 0, count: cells.count)
        starts.withUnsafeMutableBufferPointer { starts in
            order.withUnsafeMutableBufferPointer { order in
                for i in cells.indices {
                    let k = most - cells[i].aggregate.count
                    order[starts[k]] = UInt32(truncatingIfNeeded: i)
                    starts[k] += 1
                }
            }
        }
        return order
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
        var features: [KeptFeature] = []
        var summaries: [LiveSummary] = []
        /// The summaries' counts by partition (``LiveSummary/partitionRange``).
        var partitionCounts: [PartitionTotal] = []
        var positions: [SIMD2<Double>] = []
        /// The group each item shows, or is one of the points of.
        var groups: [ItemGroup] = []

        /// Room for `n` items, `clusters` of them with aggregates: items are appended one
        /// by one, and each array grown by doubling was a dozen allocations per block.
        mutating func reserve(_ n: Int, clusters: Int = 0) {
            features.reserveCapacity(n)
            positions.reserveCapacity(n)
            groups.reserveCapacity(n)
            summaries.reserveCapacity(clusters)
        }

        /// Appends item `i` of `other`, with its aggregates.
        mutating func append(_ i: Int, of other: Items) {
            var feature = other.features[i]
            if let k = feature.aggregateIndex {
                feature.aggregateIndex = LiveSummary.append(other.summaries[k], countsIn: other.partitionCounts,
                                                            to: &summaries, countsInto: &partitionCounts)
            }
            append(feature, at: other.positions[i], group: other.groups[i])
        }

        mutating func append(_ feature: ClusterFeature, at position: SIMD2<Double>, group: ItemGroup = ItemGroup()) {
            append(KeptFeature(feature), at: position, group: group)
        }

        mutating func append(_ feature: KeptFeature, at position: SIMD2<Double>, group: ItemGroup) {
            features.append(feature)
            positions.append(position)
            groups.append(group)
        }
    }

    /// A ``ClusterFeature`` as items keep it: 32 bytes where the public type takes 56 (its
    /// kind's two words and tag, and an optional index). Kept groups hold millions of
    /// items; answers get the public type back (``feature``).
    struct KeptFeature: Sendable, Equatable {
        /// A cluster's id, or a point's slot.
        private var code: Int
        var coordinate: Coordinate
        /// A cluster's point count (a slot and so a count are below 2^32); 0 for a point.
        private var count: UInt32
        /// The aggregate index, -1 for none.
        private var aggregate: Int32

        init(_ feature: ClusterFeature) {
            switch feature.kind {
            case let .point(index):
                code = index
                count = 0
            case let .cluster(id, pointCount):
                code = id
                count = UInt32(clamping: max(1, pointCount))
            }
            coordinate = feature.coordinate
            aggregate = feature.aggregateIndex.map { Int32(truncatingIfNeeded: $0) } ?? -1
        }

        var feature: ClusterFeature { ClusterFeature(kind: kind, coordinate: coordinate, aggregateIndex: aggregateIndex) }

        var kind: ClusterFeature.Kind { count == 0 ? .point(index: code) : .cluster(id: code, pointCount: Int(count)) }

        var aggregateIndex: Int? {
            get { aggregate < 0 ? nil : Int(aggregate) }
            set { aggregate = newValue.map { Int32(truncatingIfNeeded: $0) } ?? -1 }
        }

        var pointCount: Int { count == 0 ? 1 : Int(count) }

        var clusterID: Int? { count == 0 ? nil : code }
    }

    /// The cells of an item's group (its first cell and neighbour mask), and whether the
    /// item stands for the whole group (a cluster, or the single point of a group of one),
    /// so that it can merge with a group across a block edge.
    struct ItemGroup: Sendable {
        var x: UInt32 = 0
        var y: UInt32 = 0
        var mask: UInt8 = 0
        var whole = false
    }

    /// Appends the items positioned inside `rect` (all when `nil`) to an answer.
    func append(_ items: Items, range: Range<Int>? = nil, within rect: UnitRect?, into answer: inout LiveAnswer) {
        let range = range ?? items.features.indices
        // Growing by at least half: appended block by block, exact reservations would
        // copy the answer once per block.
        if answer.features.capacity < answer.features.count + range.count {
            answer.features.reserveCapacity(max(answer.features.count + range.count, answer.features.capacity * 3 / 2))
        }
        if answer.summaries.capacity < answer.summaries.count + range.count {
            answer.summaries.reserveCapacity(max(answer.summaries.count + range.count, answer.summaries.capacity * 3 / 2))
        }
        items.features.withUnsafeBufferPointer { features in
            items.positions.withUnsafeBufferPointer { positions in
                for i in range {
                    if let rect, !rect.contains(positions[i].x, positions[i].y) { continue }
                    var feature = features[i].feature
                    if let k = feature.aggregateIndex {
                        feature.aggregateIndex = LiveSummary.append(
                            items.summaries[k], countsIn: items.partitionCounts,
                            to: &answer.summaries, countsInto: &answer.partitionCounts)
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
                aggregateIndex: items.summaries.count), at: group.position,
                group: ItemGroup(x: first.x, y: first.y, mask: group.mask, whole: true))
            items.summaries.append(summary(group, grid: grid, countsInto: &items.partitionCounts))
            return
        }
        let cell = grid.cells[group.first]
        if group.cellCount == 1, cell.aggregate.count == 1 {
            // The common case of one point: no second walk. Its coordinate sums are its position.
            let qx = UInt32(truncatingIfNeeded: cell.aggregate.sumX), qy = UInt32(truncatingIfNeeded: cell.aggregate.sumY)
            let x = LeafEntry.unquantize(qx), y = LeafEntry.unquantize(qy)
            let coordinate = LeafEntry.coordinate(qx: qx, qy: qy)
            items.append(ClusterFeature(kind: .point(index: Int(cell.slot)), coordinate: coordinate), at: SIMD2(x, y),
                         group: ItemGroup(x: cell.x, y: cell.y, mask: 0, whole: true))
            return
        }
        var members: [(UInt32, UInt32)] = []
        forEachCell(of: group, in: grid) { members.append((grid.cells[$0].x, grid.cells[$0].y)) }
        members.sort { ($0.1, $0.0) < ($1.1, $1.0) }
        for (cx, cy) in members {
            forEachPoint(zoom: zoom, cx: cx, cy: cy, filter: filter) { entry in
                items.append(pointFeature(entry), at: SIMD2(LeafEntry.unquantize(entry.qx), LeafEntry.unquantize(entry.qy)),
                             group: ItemGroup(x: cell.x, y: cell.y, mask: group.mask, whole: false))
                return true
            }
        }
    }

    /// The summary of a group, its counts by partition appended to `counts` (in place:
    /// gathered, combined and ordered at the end of that array).
    func summary(_ group: Group, grid: Grid, countsInto counts: inout [PartitionTotal]) -> LiveSummary {
        let start = counts.count
        if group.mask == 0 {
            // One cell: its counts are already by partition without repeats.
            let cell = grid.cells[group.first]
            if cell.histogramEnd > cell.histogramStart {
                counts.append(contentsOf: grid.histogram[cell.histogramStart..<cell.histogramEnd])
            }
        } else {
            forEachCell(of: group, in: grid) { m in
                let cell = grid.cells[m]
                // Cells of an index without partition counts have none: no slice to append.
                guard cell.histogramEnd > cell.histogramStart else { return }
                counts.append(contentsOf: grid.histogram[cell.histogramStart..<cell.histogramEnd])
            }
            if counts.count - start > 1 {
                counts.withUnsafeMutableBufferPointer { $0[start...].sort { $0.partition < $1.partition } }
                // Counts of one partition from several cells made one.
                var last = start
                for i in start + 1..<counts.count {
                    if counts[i].partition == counts[last].partition {
                        counts[last].add(counts[i])
                    } else {
                        last += 1
                        counts[last] = counts[i]
                    }
                }
                counts.removeLast(counts.count - last - 1)
            }
        }
        if counts.count - start > 1 {
            counts.withUnsafeMutableBufferPointer {
                $0[start...].sort { $0.count != $1.count ? $0.count > $1.count : $0.partition < $1.partition }
            }
        }
        let total = counts.count - start
        if let limit = partitionsPerSummary, total > limit {
            Self.keepLargest(&counts, from: start, limit)
        }
        let latest = group.aggregate.latestSlot == UInt32.max ? nil : Int(group.aggregate.latestSlot)
        return LiveSummary(weight: group.aggregate.weight, latestSlot: latest,
                           latestTime: latest == nil ? .min : group.aggregate.latestTime,
                           latestTimeTag: latest == nil ? 0 : group.aggregate.latestTimeTag,
                           partitionRange: start..<counts.count, partitionTotal: total)
    }

    /// Of the partition counts in `counts[start...]`, in summary order (larger count
    /// first, then partition), keeps the first `k` and the `k` of largest weight, ties to
    /// the earlier, in that order.
    static func keepLargest(_ counts: inout [PartitionTotal], from start: Int, _ k: Int) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: k + 1) { byWeight in
            var n = 0
            for i in start..<counts.count {
                let weight = counts[i].weight
                guard n < k || weight > counts[byWeight[n - 1]].weight else { continue }
                var at = n
                while at > 0, weight > counts[byWeight[at - 1]].weight { at -= 1 }
                var j = n
                while j > at {
                    byWeight[j] = byWeight[j - 1]
                    j -= 1
                }
                byWeight[at] = i
                n = min(n + 1, k)
            }
            var chosen = UnsafeMutableBufferPointer(rebasing: byWeight[..<n])
            chosen.sort()
            // The chosen ones beyond the first k, moved down in order (never past where
            // they were read from).
            var end = start + k
            for i in chosen where i >= start + k {
                counts[end] = counts[i]
                end += 1
            }
            counts.removeLast(counts.count - end)
        }
    }

    func pointFeature(_ entry: LeafEntry) -> ClusterFeature {
        ClusterFeature(kind: .point(index: Int(entry.slot)), coordinate: entry.coordinate)
    }
}
