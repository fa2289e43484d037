/// Options of the `live` clustering algorithm. The names and meaning of `radius`,
/// `extent`, `minZoom`, `maxZoom` and `minPoints` are those of the radius algorithm, so a
/// layer can switch algorithms without changing its configuration.
public struct LiveClusterOptions: Sendable, Hashable {
    /// Pixels (of a tile `extent` pixels wide) within which two clusters are merged for
    /// display; cells of the grid are at least this wide.
    public var radiusPixels: Double = 40
    public var extent: Int = 512
    public var minZoom: Int = 0
    /// Highest zoom at which points are clustered; above it every point stands alone.
    public var maxZoom: Int = 16
    /// Smallest number of points shown as a cluster; smaller groups show their points.
    public var minPoints: Int = 2
    /// Points a quadtree leaf holds before it splits; affects speed and memory only. With
    /// 64 rather than 16 a tree has about a quarter of the nodes: a first look at a dense
    /// view, which walks nodes that straddle the grid's cells, touches fewer of them, and
    /// the index takes a fifth less memory, for the same cost per write
    /// (docs/PERFORMANCE.md, "Larger quadtree leaves").
    public var bucketSize: Int = 64
    /// Items (clusters and points of formed blocks, and cells' totals) the kept display
    /// groups may hold; `nil` for four per point up to 4,000,000, half the points beyond
    /// 8M points, and at least 65,536 (`GroupCache.defaultBudget(points:)`). Affects speed
    /// and memory only: each item takes about 90 bytes (about 150 in a sightings layer,
    /// whose clusters keep their top species), and a view whose blocks are kept is
    /// answered without forming them (docs/LIVE.md, "Kept groups").
    public var keptItems: Int?

    public init(radiusPixels: Double = 40, extent: Int = 512, minZoom: Int = 0, maxZoom: Int = 16,
                minPoints: Int = 2, bucketSize: Int = 64, keptItems: Int? = nil) {
        self.radiusPixels = radiusPixels
        self.extent = extent
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.minPoints = minPoints
        self.bucketSize = bucketSize
        self.keptItems = keptItems
    }

    /// The range of ``keptItems``: at least what a layer keeps by default when small, at
    /// most 2^32 (about 400 GB).
    public static let keptItemsRange = GroupCache.minimumBudget ... 1 << 32

    /// The same options as a radius-algorithm configuration, with the live algorithm's
    /// own budget of kept items.
    public init(_ radius: RadiusClusterOptions, keptItems: Int? = nil) {
        self.init(radiusPixels: radius.radiusPixels, extent: radius.extent, minZoom: radius.minZoom,
                  maxZoom: radius.maxZoom, minPoints: radius.minPoints, keptItems: keptItems)
    }

    /// The display grid: its cells are about `cellFactor` times the radius wide.
    public var grid: LiveGrid { LiveGrid(radiusPixels: radiusPixels, extent: extent) }

    /// Cluster ids keep cell coordinates in 20 bits each: at most 2^20 cells per side.
    public static let maxGridLevel = 20

    public func validate() throws(GeoClusterError) {
        // Radius, extent, zooms and minPoints follow the radius algorithm's rules.
        try RadiusClusterOptions(radiusPixels: radiusPixels, extent: extent, minZoom: minZoom, maxZoom: maxZoom,
                                 minPoints: minPoints).validate()
        guard radiusPixels <= Double(extent) else {
            throw .invalidOptions(reason: "radius (\(radiusPixels)) must not exceed extent (\(extent)) for the live algorithm")
        }
        let grid = self.grid
        guard grid.levelShift + maxZoom + 1 <= 32, grid.cellsPerSide(zoom: maxZoom) <= 1 << Self.maxGridLevel else {
            throw .invalidOptions(reason: "maxZoom must be at most \(grid.deepestZoom) with radius "
                                  + "\(radiusPixels) and extent \(extent), got \(maxZoom)")
        }
        guard (1...4_096).contains(bucketSize) else {
            throw .invalidOptions(reason: "bucketSize must be within 1...4096, got \(bucketSize)")
        }
        if let keptItems, !Self.keptItemsRange.contains(keptItems) {
            throw .invalidOptions(reason: "kept_items must be within \(Self.keptItemsRange.lowerBound)..."
                                  + "\(Self.keptItemsRange.upperBound), got \(keptItems)")
        }
    }
}

/// The display grid of the live algorithm at every zoom. Cells are squares `cellPixels`
/// wide (about ``cellFactor`` times the radius), made of `span` x `span` quadtree cells of
/// level `zoom + levelShift`; cell `(x, y)` at a zoom holds the quadtree cells
/// `x * span ..< (x + 1) * span` (clipped to the world) across and the same rows down.
/// Halving the pixels per world unit from one zoom to the next keeps `span` and
/// `levelShift`, so cell `(x, y)` at zoom `z` is exactly cells `2x...2x+1` x `2y...2y+1`
/// at zoom `z + 1` (the cells of the world's last row and column are narrower).
/// The grid takes the coarsest `levelShift` whose cells of at most 16 x 16 sub-cells come
/// within 3% of the target width (`span` 1, a power-of-two fraction of the tile, where
/// that is close enough: reading a cell's totals then takes the fewest nodes), or the
/// closest of all.
public struct LiveGrid: Sendable, Hashable {
    /// Cell width over radius: a grid of cells this much wider than the radius, with
    /// neighbours merged below half the radius, shows about as many features as the
    /// radius algorithm (measured in docs/LIVE.md).
    public static let cellFactor = 1.5

    public let levelShift: Int
    public let span: Int
    public let extent: Int

    public init(radiusPixels: Double, extent: Int) {
        self.extent = extent
        let target = radiusPixels * Self.cellFactor / Double(max(1, extent))
        // The first (coarsest) level whose cells of at most 16 sub-cells come within 3% of
        // the target; the closest of all otherwise.
        var best = (shift: 0, span: 1, error: Double.infinity)
        for shift in 0...24 {
            let fraction = Double(UInt64(1) << UInt64(shift))
            let span = max(1, Int((target * fraction).rounded()))
            guard span <= 16 else { break }
            let error = abs(Double(span) / fraction - target) / target
            if error < best.error - 1e-12 { best = (shift, span, error) }
            if error <= 0.03 { break }
        }
        self.levelShift = best.shift
        self.span = best.span
    }

    /// Width of a cell in pixels at any zoom.
    public var cellPixels: Double { Double(extent) * Double(span) / Double(UInt64(1) << UInt64(levelShift)) }

    /// The quadtree level of the grid's sub-cells at a zoom.
    @inline(__always)
    public func level(zoom: Int) -> Int { zoom + levelShift }

    /// Cells across the world at a zoom (the last may be narrower).
    public func cellsPerSide(zoom: Int) -> Int {
        let sub = 1 << level(zoom: zoom)
        return (sub + span - 1) / span
    }

    /// The deepest zoom this grid can serve.
    public var deepestZoom: Int {
        var zoom = 0
        while levelShift + zoom + 2 <= 32, cellsPerSide(zoom: zoom + 1) <= 1 << LiveClusterOptions.maxGridLevel { zoom += 1 }
        return zoom
    }

    /// The cell of a quantised position at a zoom.
    @inline(__always)
    func cell(_ q: UInt32, zoom: Int) -> UInt32 {
        let sub = QuadNode.cell(q, level: level(zoom: zoom))
        return span == 1 ? sub : sub / UInt32(span)
    }

    /// The sub-cells (quadtree cells of `level(zoom:)`) of the cells `c0...c1` along one axis.
    @inline(__always)
    func subRange(_ c0: UInt32, _ c1: UInt32, zoom: Int) -> (UInt32, UInt32) {
        if span == 1 { return (c0, c1) }
        let last = UInt64(1) << UInt64(level(zoom: zoom)) - 1
        let w = UInt64(span)
        return (UInt32(min(last, UInt64(c0) * w)), UInt32(min(last, UInt64(c1) * w + w - 1)))
    }

    /// The cells covering the projected rect's span `v0...v1` (units in [0, 1]) at a zoom.
    func cellRange(_ v0: Double, _ v1: Double, zoom: Int) -> (UInt32, UInt32) {
        let side = Double(UInt64(1) << UInt64(level(zoom: zoom)))
        let last = Int(side) - 1
        func cell(_ v: Double) -> UInt32 { UInt32(min(last, max(0, Int((v * side).rounded(.down)))) / span) }
        return (cell(v0), cell(v1))
    }
}

