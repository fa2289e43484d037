/// Walks over the points of the quadtrees, in quadtree order.
extension LiveClusterIndex {
    /// Slots of the points that pass `filter` and lie inside `bbox` (edges included), in
    /// quadtree order (tree by tree when the filter picks partitions). A box crossing the
    /// antimeridian gives its eastern part first.
    public func points(in bbox: BoundingBox, filter: LiveFilter = .all) -> [Int] {
        let level = min(32, grid.level(zoom: options.maxZoom) + 1)
        var slots: [Int] = []
        for span in bbox.spans {
            let rect = UnitRect(minX: WebMercator.x(longitude: span.west), minY: WebMercator.y(latitude: span.north),
                                maxX: WebMercator.x(longitude: span.east), maxY: WebMercator.y(latitude: span.south))
            let (x0, y0, x1, y1) = cellRange(rect, level: level)
            forEachPoint(level: level, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter) { entry in
                let c = entry.coordinate
                if c.longitude >= span.west, c.longitude <= span.east, c.latitude >= span.south, c.latitude <= span.north {
                    slots.append(Int(entry.slot))
                }
                return true
            }
        }
        return slots
    }

    // MARK: Walking points

    /// Points that pass in one grid cell at a zoom, partition by partition in quadtree
    /// order; `body` returns false to stop.
    func forEachPoint(zoom: Int, cx: UInt32, cy: UInt32, filter: LiveFilter, _ body: (LeafEntry) -> Bool) {
        guard Int(max(cx, cy)) < grid.cellsPerSide(zoom: zoom) else { return }
        let (x0, x1) = grid.subRange(cx, cx, zoom: zoom), (y0, y1) = grid.subRange(cy, cy, zoom: zoom)
        forEachPoint(level: grid.level(zoom: zoom), x0: x0, y0: y0, x1: x1, y1: y1, filter: filter, body)
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

    /// Points that pass in one grid cell at a zoom, from node totals when the filter allows.
    func count(zoom: Int, cx: UInt32, cy: UInt32, filter: LiveFilter) -> Int {
        var contributions: [Contribution] = []
        collect(zoom: zoom, x0: cx, y0: cy, x1: cx, y1: cy, filter: filter, into: &contributions)
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
