/// Walks over the points of the quadtrees, in quadtree order.
extension LiveClusterIndex {
    /// Slots of the points that pass `filter` and lie inside `bbox` (edges included), in
    /// quadtree order (tree by tree when the filter picks partitions). A box crossing the
    /// antimeridian gives its eastern part first.
    ///
    /// Points and edges are compared as the index keeps them, quantised (see ``LivePoint``),
    /// so a point given on an edge or inside is listed. With `coordinateOfSlot` (the
    /// caller's coordinates, a layer's records), a point within a quantisation step of an
    /// edge (under a centimetre from it, or beyond ±85.05° when the box reaches Web
    /// Mercator's edge) is decided by its coordinate as given, so the answer is exact;
    /// without it, or where it answers `nil`, such a point in an edge's step is listed.
    public func points(in bbox: BoundingBox, filter: LiveFilter = .all,
                       coordinateOfSlot: ((Int) -> Coordinate?)? = nil) -> [Int] {
        let level = min(32, grid.level(zoom: options.maxZoom) + 1)
        // With the caller's coordinates, a step more on each side of each edge, decided by
        // them: a point's projection and an edge's may round a step apart where they meet
        // at a step's boundary.
        let margin: UInt32 = coordinateOfSlot == nil ? 0 : 1
        func less(_ q: UInt32) -> UInt32 { q >= margin ? q - margin : 0 }
        func more(_ q: UInt32) -> UInt32 { q <= UInt32.max - margin ? q + margin : .max }
        var slots: [Int] = []
        // The first span's western edge: a box crossing the antimeridian whose spans meet
        // in one step (a box within a step of the whole world) lists that step's points in
        // the first span only.
        var firstWest: UInt32?
        for span in bbox.spans {
            let ex0 = LeafEntry.quantize(WebMercator.x(longitude: span.west))
            let ex1 = LeafEntry.quantize(WebMercator.x(longitude: span.east))
            let ey0 = LeafEntry.quantize(WebMercator.y(latitude: span.north))
            let ey1 = LeafEntry.quantize(WebMercator.y(latitude: span.south))
            let qx0 = less(ex0), qx1 = more(ex1), qy0 = less(ey0), qy1 = more(ey1)
            // Points in these steps or beyond them are near an edge, decided one by one.
            let nearX0 = more(ex0), nearX1 = less(ex1), nearY0 = more(ey0), nearY1 = less(ey1)
            let listedBefore = firstWest
            forEachPoint(level: level, x0: QuadNode.cell(qx0, level: level), y0: QuadNode.cell(qy0, level: level),
                         x1: QuadNode.cell(qx1, level: level), y1: QuadNode.cell(qy1, level: level),
                         filter: filter) { entry in
                guard entry.qx >= qx0, entry.qx <= qx1, entry.qy >= qy0, entry.qy <= qy1 else { return true }
                if entry.qx <= nearX0 || entry.qx >= nearX1 || entry.qy <= nearY0 || entry.qy >= nearY1 {
                    if let c = coordinateOfSlot?(Int(entry.slot)) {
                        guard c.longitude >= span.west, c.longitude <= span.east,
                              c.latitude >= span.south, c.latitude <= span.north else { return true }
                    } else {
                        guard entry.qx >= ex0, entry.qx <= ex1, entry.qy >= ey0, entry.qy <= ey1,
                              listedBefore.map({ entry.qx < $0 }) ?? true else { return true }
                    }
                }
                slots.append(Int(entry.slot))
                return true
            }
            firstWest = firstWest ?? ex0
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
