/// The `radius` clustering algorithm: a hierarchy of greedy clusterings, one per zoom,
/// built once and then read concurrently without locks (the value is immutable).
///
/// Output is identical to mapbox/supercluster 8.0.1 for the same input and options:
/// the same greedy order, the same cluster ids, the same `Float` rounding of projected
/// positions and the same kd-tree result order. Cluster ids are addresses:
/// `(originIndex << 5) + (zoom + 1) + pointCount`, where `originIndex` is the position
/// of the cluster's first item in the level one zoom deeper, so no id table is kept.
public struct RadiusClusterIndex: Sendable {
    public let options: RadiusClusterOptions

    /// Input positions, unrounded, for single-point output.
    /// Longitude and latitude side by side: a single point of an answer reads one cache line.
    private let inputs: [Coordinate]
    /// `levels[z - minZoom]` holds the items at zoom `z`, for `z` in `minZoom...maxZoom + 1`;
    /// the last level holds every input point.
    private let levels: [Level]

    /// Number of input entries, positioned or not; cluster ids are numbered after them.
    public var pointCount: Int { inputs.count }

    /// The most entries one index takes: every cluster id, `33 * count + 31` at most, then
    /// fits in 32 bits, which halves the per-item bookkeeping. supercluster's own id
    /// arithmetic is 32-bit too.
    public static let maxPointCount = (Int(UInt32.max) - 31) / 33

    /// Builds the hierarchy. Every coordinate is validated first (finite, within
    /// [-180, 180] x [-90, 90]); the error names the index of the first bad one.
    public init(coordinates: [Coordinate], options: RadiusClusterOptions = .init()) throws(GeoClusterError) {
        var unused: [Never] = []
        try self.init(count: coordinates.count, coordinate: { coordinates[$0] }, options: options,
                      aggregation: nil, aggregates: &unused)
    }

    /// Builds the hierarchy over entries of which some have no position (GeoJSON features
    /// with a null geometry). Those are never clustered or returned but keep their place
    /// in the numbering, as in supercluster, so that cluster ids agree with its ids.
    public init(coordinates: [Coordinate?], options: RadiusClusterOptions = .init()) throws(GeoClusterError) {
        var unused: [Never] = []
        try self.init(count: coordinates.count, coordinate: { coordinates[$0] }, options: options,
                      aggregation: nil, aggregates: &unused)
    }

    /// Builds the hierarchy and computes one aggregate per cluster, like supercluster's
    /// `map`/`reduce`. Features of clusters carry the index of their aggregate.
    public static func build<Value: Sendable>(
        coordinates: [Coordinate?], options: RadiusClusterOptions = .init(),
        aggregation: ClusterAggregation<Value>
    ) throws(GeoClusterError) -> (index: RadiusClusterIndex, aggregates: [Value]) {
        var aggregates: [Value] = []
        let index = try RadiusClusterIndex(count: coordinates.count, coordinate: { coordinates[$0] },
                                           options: options, aggregation: aggregation, aggregates: &aggregates)
        return (index, aggregates)
    }

    /// As ``init(coordinates:options:)-(Coordinate?)``, on one thread when
    /// `usingSecondCore` is false, and without looking for lone items when
    /// `findingLoneItems` is false; for tests, whose answers must not depend on either.
    init(coordinates: [Coordinate?], options: RadiusClusterOptions = .init(), usingSecondCore: Bool,
         findingLoneItems: Bool = true) throws(GeoClusterError) {
        var unused: [Never] = []
        try self.init(count: coordinates.count, coordinate: { coordinates[$0] }, options: options,
                      aggregation: nil, aggregates: &unused, usingSecondCore: usingSecondCore,
                      findingLoneItems: findingLoneItems)
    }

    private init<Value: Sendable>(
        count n: Int, coordinate: (Int) -> Coordinate?, options: RadiusClusterOptions,
        aggregation: ClusterAggregation<Value>?, aggregates: inout [Value],
        usingSecondCore: Bool = BackgroundJob.hasSecondCore, findingLoneItems: Bool = true
    ) throws(GeoClusterError) {
        try options.validate()
        guard n <= Self.maxPointCount else {
            throw .invalidOptions(reason: "an index holds at most \(Self.maxPointCount) points, got \(n)")
        }
        var inputs = [Coordinate](repeating: Coordinate(longitude: .nan, latitude: .nan), count: n)
        var top = LevelData(capacity: n, aggregating: aggregation != nil)
        for i in 0..<n {
            guard let c = coordinate(i) else { continue }
            let valid = try Coordinate.validated(longitude: c.longitude, latitude: c.latitude, index: i)
            inputs[i] = valid
            let (x, y) = Self.projected(valid)
            top.append(x: x, y: y, sourceID: UInt32(i), pointCount: 1, aggregateIndex: -1)
        }
        let everyEntryPositioned = top.count == n
        var builder = Builder(options: options, inputCount: n, aggregation: aggregation,
                              usingSecondCore: usingSecondCore, findingLoneItems: findingLoneItems)
        var upper = Level(data: top, nodeSize: options.nodeSize, usingSecondCore: usingSecondCore)
        var descending: [Level] = []
        descending.reserveCapacity(options.maxZoom - options.minZoom + 2)
        for zoom in stride(from: options.maxZoom, through: options.minZoom, by: -1) {
            let lower = builder.cluster(&upper, zoom: zoom, aggregates: &aggregates)
            if descending.isEmpty {
                upper.data = upper.data.inputPointsCompacted(keepingSourceIDs: !everyEntryPositioned)
            }
            descending.append(upper)
            upper = Level(data: lower, nodeSize: options.nodeSize, usingSecondCore: usingSecondCore)
        }
        descending.append(upper)
        self.options = options
        self.inputs = inputs
        self.levels = descending.reversed()
    }

    // MARK: Queries

    /// Clusters and single points inside `bbox` at `zoom` (fractional zooms floor;
    /// zooms outside `minZoom...maxZoom + 1` clamp to it). A box crossing the antimeridian
    /// returns its eastern part first.
    public func clusters(in bbox: BoundingBox, zoom: Double) throws(GeoClusterError) -> [ClusterFeature] {
        var result: [ClusterFeature] = []
        try clusters(in: bbox, zoom: zoom, into: &result)
        return result
    }

    /// As ``clusters(in:zoom:)``, appending to `result` so a caller can reuse its buffer.
    public func clusters(in bbox: BoundingBox, zoom: Double, into result: inout [ClusterFeature]) throws(GeoClusterError) {
        let level = levels[try levelIndex(zoom: zoom)]
        var ids: [UInt32] = []
        for span in bbox.spans {
            ids.removeAll(keepingCapacity: true)
            level.tree.range(minX: WebMercator.x(longitude: span.west), minY: WebMercator.y(latitude: span.north),
                             maxX: WebMercator.x(longitude: span.east), maxY: WebMercator.y(latitude: span.south),
                             into: &ids)
            result.reserveCapacity(result.count + ids.count)
            for id in ids { result.append(feature(level, Int(id))) }
        }
    }

    /// The items of one tile, with supercluster's geometry: pixel positions relative to
    /// the tile, a buffer of `radius` pixels around it, and copies of the items near the
    /// antimeridian in the first and last tile columns.
    public func tile(_ address: TileAddress) throws(GeoClusterError) -> [TileFeature] {
        let level = levels[try levelIndex(zoom: Double(address.z))]
        let z2 = Double(address.tilesPerAxis)
        let p = options.radiusPixels / Double(options.extent)
        let x = Double(address.x)
        let y = Double(address.y)
        let top = (y - p) / z2
        let bottom = (y + 1 + p) / z2
        var result: [TileFeature] = []
        var ids: [UInt32] = []
        level.tree.range(minX: (x - p) / z2, minY: top, maxX: (x + 1 + p) / z2, maxY: bottom, into: &ids)
        appendTileFeatures(level, ids, originX: x, originY: y, z2: z2, into: &result)
        if address.x == 0 {
            ids.removeAll(keepingCapacity: true)
            level.tree.range(minX: 1 - p / z2, minY: top, maxX: 1, maxY: bottom, into: &ids)
            appendTileFeatures(level, ids, originX: z2, originY: y, z2: z2, into: &result)
        }
        if address.x == address.tilesPerAxis - 1 {
            ids.removeAll(keepingCapacity: true)
            level.tree.range(minX: 0, minY: top, maxX: p / z2, maxY: bottom, into: &ids)
            appendTileFeatures(level, ids, originX: -1, originY: y, z2: z2, into: &result)
        }
        return result
    }

    /// The items one zoom deeper that a cluster splits into.
    public func children(of clusterID: Int) throws(GeoClusterError) -> [ClusterFeature] {
        let (levelIndex, originIndex) = try origin(of: clusterID)
        let level = levels[levelIndex]
        let originZoom = levelIndex + options.minZoom
        let r = options.radiusPixels / (Double(options.extent) * Self.exp2(originZoom - 1))
        var ids: [UInt32] = []
        let (x, y) = position(level, originIndex)
        level.tree.within(x: x, y: y, radius: r, into: &ids)
        var children: [ClusterFeature] = []
        // Items merged at zoom originZoom - 1 record their cluster by its origin index,
        // which is a position in this very level.
        for id in ids where level.data.parentOrigin[Int(id)] == UInt32(originIndex) {
            children.append(feature(level, Int(id)))
        }
        guard !children.isEmpty else { throw .unknownCluster(id: clusterID) }
        return children
    }

    /// A page of the input points inside a cluster: `limit` points after skipping
    /// `offset`, in supercluster's order (depth first through the children).
    public func leaves(of clusterID: Int, limit: Int = 10, offset: Int = 0) throws(GeoClusterError) -> LeavesPage {
        guard limit >= 0 else { throw .invalidPagination(reason: "limit must not be negative, got \(limit)") }
        guard offset >= 0 else { throw .invalidPagination(reason: "offset must not be negative, got \(offset)") }
        let children = try children(of: clusterID)
        let total = children.reduce(0) { $0 + $1.pointCount }
        var result: [Int] = []
        if limit > 0 {
            result.reserveCapacity(min(limit, total))
            _ = try appendLeaves(children, limit: limit, offset: offset, skipped: 0, into: &result)
        }
        return LeavesPage(pointIndices: result, total: total)
    }

    /// The zoom at which a cluster first splits into more than one item, the zoom a map
    /// should move to when the cluster is tapped.
    public func expansionZoom(of clusterID: Int) throws(GeoClusterError) -> Int {
        var id = clusterID
        var expansionZoom = try origin(of: id).levelIndex + options.minZoom - 1
        while expansionZoom <= options.maxZoom {
            let children = try children(of: id)
            expansionZoom += 1
            guard children.count == 1, let next = children[0].clusterID else { break }
            id = next
        }
        return expansionZoom
    }

    /// Number of items (clusters and single points) at a zoom over the whole world.
    public func itemCount(zoom: Double) throws(GeoClusterError) -> Int {
        levels[try levelIndex(zoom: zoom)].data.count
    }

    // MARK: Internals

    /// Which level answers a zoom: floor, then clamp to `minZoom...maxZoom + 1`.
    private func levelIndex(zoom: Double) throws(GeoClusterError) -> Int {
        guard zoom.isFinite else { throw .invalidZoom(value: zoom, reason: "is not a finite number") }
        let clamped = max(Double(options.minZoom), min(zoom.rounded(.down), Double(options.maxZoom + 1)))
        return Int(clamped) - options.minZoom
    }

    /// Decodes a cluster id into the level and position of the item it originated from.
    private func origin(of clusterID: Int) throws(GeoClusterError) -> (levelIndex: Int, originIndex: Int) {
        let offset = clusterID - pointCount
        guard clusterID >= 0, offset >= 0 else { throw .unknownCluster(id: clusterID) }
        let originZoom = offset & 31
        let originIndex = offset >> 5
        guard originZoom > options.minZoom, originZoom <= options.maxZoom + 1 else {
            throw .unknownCluster(id: clusterID)
        }
        let levelIndex = originZoom - options.minZoom
        guard originIndex < levels[levelIndex].data.count else { throw .unknownCluster(id: clusterID) }
        return (levelIndex, originIndex)
    }

    /// The projected position of an item: as stored or, on the level of input points,
    /// computed again from its input as the build computed it.
    private func position(_ level: Level, _ i: Int) -> (x: Double, y: Double) {
        guard level.data.holdsInputPoints else { return (level.data.x[i], level.data.y[i]) }
        return Self.projected(inputs[level.data.source(at: i)])
    }

    /// An input point's position on the level of input points: Web Mercator in [0, 1],
    /// rounded to `Float` as supercluster rounds it.
    static func projected(_ coordinate: Coordinate) -> (x: Double, y: Double) {
        (Double(Float(WebMercator.x(longitude: coordinate.longitude))),
         Double(Float(WebMercator.y(latitude: coordinate.latitude))))
    }

    private func feature(_ level: Level, _ i: Int) -> ClusterFeature {
        let data = level.data
        let count = data.count(at: i)
        if count > 1 {
            return ClusterFeature(
                kind: .cluster(id: data.source(at: i), pointCount: count),
                coordinate: Coordinate(longitude: WebMercator.longitude(x: data.x[i]),
                                       latitude: WebMercator.latitude(y: data.y[i])),
                aggregateIndex: data.aggregateIndex(at: i))
        }
        let index = data.source(at: i)
        return ClusterFeature(kind: .point(index: index),
                              coordinate: inputs[index])
    }

    private func appendTileFeatures(_ level: Level, _ ids: [UInt32], originX: Double, originY: Double,
                                    z2: Double, into result: inout [TileFeature]) {
        let extent = Double(options.extent)
        let data = level.data
        for id in ids {
            let i = Int(id)
            let count = data.count(at: i)
            let kind: ClusterFeature.Kind
            let px: Double
            let py: Double
            if count > 1 {
                kind = .cluster(id: data.source(at: i), pointCount: count)
                px = data.x[i]
                py = data.y[i]
            } else {
                let index = data.source(at: i)
                kind = .point(index: index)
                px = WebMercator.x(longitude: inputs[index].longitude)
                py = WebMercator.y(latitude: inputs[index].latitude)
            }
            result.append(TileFeature(
                kind: kind,
                pixelX: Int(Self.roundHalfUp(extent * (px * z2 - originX))),
                pixelY: Int(Self.roundHalfUp(extent * (py * z2 - originY))),
                aggregateIndex: count > 1 ? data.aggregateIndex(at: i) : nil))
        }
    }

    /// Depth-first leaf collection of supercluster's `_appendLeaves`; returns the
    /// number of points skipped so far.
    private func appendLeaves(_ children: [ClusterFeature], limit: Int, offset: Int, skipped: Int,
                              into result: inout [Int]) throws(GeoClusterError) -> Int {
        var skipped = skipped
        for child in children {
            switch child.kind {
            case let .cluster(id, count):
                if skipped + count <= offset {
                    skipped += count
                } else {
                    skipped = try appendLeaves(try self.children(of: id), limit: limit, offset: offset,
                                               skipped: skipped, into: &result)
                }
            case let .point(index):
                if skipped < offset {
                    skipped += 1
                } else {
                    result.append(index)
                }
            }
            if result.count == limit { break }
        }
        return skipped
    }

    /// Rounds halves towards positive infinity, as JavaScript's `Math.round` does.
    @inline(__always)
    package static func roundHalfUp(_ value: Double) -> Double {
        let floor = value.rounded(.down)
        return value - floor >= 0.5 ? floor + 1 : floor
    }

    @inline(__always)
    static func exp2(_ zoom: Int) -> Double {
        zoom >= 0 ? Double(1 << zoom) : 1 / Double(1 << -zoom)
    }

    /// Verifies the hierarchy's invariants; for tests. Every level accounts for every
    /// input point exactly once, each kd-tree is well formed, and each merged item's
    /// parent is a cluster of the level below.
    public func _checkInvariants() -> Bool {
        let positioned = inputs.reduce(0) { $1.longitude.isNaN ? $0 : $0 + 1 }
        for (offset, level) in levels.enumerated() {
            guard level.tree._checkInvariants(), level.tree.count == level.data.count else { return false }
            var total = 0
            for i in 0..<level.data.count { total += level.data.count(at: i) }
            guard total == positioned else { return false }
            if offset > 0 {
                let below = levels[offset - 1].data
                let clusterIDs = Set((0..<below.count).compactMap { i in
                    below.count(at: i) > 1 ? below.source(at: i) : nil
                })
                let levelZoom = offset + options.minZoom
                for parent in level.data.parentOrigin where parent != LevelData.noParent {
                    guard clusterIDs.contains((Int(parent) << 5) + levelZoom + pointCount) else { return false }
                }
            }
        }
        return true
    }
}

// MARK: - Storage

/// The items of one zoom, struct-of-arrays in build order (the order cluster ids refer to).
struct LevelData: Sendable {
    /// Projected position in [0, 1]: `Float`-rounded for input points, exact centres for clusters.
    var x: [Double] = []
    var y: [Double] = []
    /// Input index of a single point, cluster id of a cluster.
    var sourceID: [UInt32] = []
    /// The cluster this item merged into at the zoom below, by the cluster's origin index
    /// (a position in this level; the id follows from it and the zoom), or ``noParent``.
    var parentOrigin: [UInt32] = []
    /// Number of input points; more than 1 marks a cluster.
    var pointCount: [UInt32] = []
    /// Aggregate of each cluster (-1 for points); empty when the build has no aggregation.
    var aggregates: [Int32] = []
    let aggregating: Bool
    /// Set on the level of input points once it has been clustered, which then keeps
    /// only `parentOrigin`, and `sourceID` when some entries have no position: every
    /// item is a single point (count 1, no aggregate) whose position follows from its
    /// input coordinates. That saves 24 of the 40 bytes an item of the other levels
    /// takes, its kd-tree included (24 MB at 1M points).
    private(set) var holdsInputPoints = false

    init(capacity: Int, aggregating: Bool) {
        self.aggregating = aggregating
        x.reserveCapacity(capacity)
        y.reserveCapacity(capacity)
        sourceID.reserveCapacity(capacity)
        parentOrigin.reserveCapacity(capacity)
        pointCount.reserveCapacity(capacity)
        if aggregating { aggregates.reserveCapacity(capacity) }
    }

    var count: Int { parentOrigin.count }

    /// Number of input points an item stands for.
    @inline(__always)
    func count(at i: Int) -> Int { holdsInputPoints ? 1 : Int(pointCount[i]) }

    /// Input index of a single point, cluster id of a cluster.
    @inline(__always)
    func source(at i: Int) -> Int { holdsInputPoints && sourceID.isEmpty ? i : Int(sourceID[i]) }

    /// This level of input points without what follows from the input: see
    /// ``holdsInputPoints``. Without `keepingSourceIDs`, item `i` is input entry `i`.
    func inputPointsCompacted(keepingSourceIDs: Bool) -> LevelData {
        var result = LevelData(capacity: 0, aggregating: false)
        result.parentOrigin = parentOrigin
        if keepingSourceIDs { result.sourceID = sourceID }
        result.holdsInputPoints = true
        return result
    }

    @inline(__always)
    static let noParent = UInt32.max

    mutating func append(x: Double, y: Double, sourceID: UInt32, pointCount: Int, aggregateIndex: Int) {
        self.x.append(x)
        self.y.append(y)
        self.sourceID.append(sourceID)
        self.parentOrigin.append(Self.noParent)
        self.pointCount.append(UInt32(pointCount))
        if aggregating { aggregates.append(Int32(aggregateIndex)) }
    }

    @inline(__always)
    mutating func appendCopy(of other: LevelData, at i: Int) {
        append(x: other.x[i], y: other.y[i], sourceID: other.sourceID[i], pointCount: Int(other.pointCount[i]),
               aggregateIndex: aggregating ? Int(other.aggregates[i]) : -1)
    }

    /// Empties the arrays, keeping their storage for reuse.
    mutating func removeAll() {
        x.removeAll(keepingCapacity: true)
        y.removeAll(keepingCapacity: true)
        sourceID.removeAll(keepingCapacity: true)
        parentOrigin.removeAll(keepingCapacity: true)
        pointCount.removeAll(keepingCapacity: true)
        aggregates.removeAll(keepingCapacity: true)
    }

    /// A copy whose arrays are allocated at their exact size.
    func compacted() -> LevelData {
        func exact<T>(_ array: [T]) -> [T] {
            var copy: [T] = []
            copy.reserveCapacity(array.count)
            copy.append(contentsOf: array)
            return copy
        }
        var result = LevelData(capacity: 0, aggregating: aggregating)
        result.x = exact(x)
        result.y = exact(y)
        result.sourceID = exact(sourceID)
        result.parentOrigin = exact(parentOrigin)
        result.pointCount = exact(pointCount)
        result.aggregates = exact(aggregates)
        return result
    }

    @inline(__always)
    func aggregateIndex(at i: Int) -> Int? {
        guard aggregating else { return nil }
        let value = aggregates[i]
        return value >= 0 ? Int(value) : nil
    }
}

struct Level: Sendable {
    var data: LevelData
    let tree: KDTree

    init(data: LevelData, nodeSize: Int, usingSecondCore: Bool) {
        self.data = data
        self.tree = KDTree(x: data.x, y: data.y, nodeSize: nodeSize, usingSecondCore: usingSecondCore)
    }
}
