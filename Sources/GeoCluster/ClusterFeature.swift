/// One item of a clustering answer: a cluster of several points or a single input point.
public struct ClusterFeature: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// An input point that stands alone; `index` is its position in the build input.
        case point(index: Int)
        /// A cluster; `id` is stable for a given input and options and addresses the
        /// cluster in ``RadiusClusterIndex/children(of:)`` and its siblings.
        case cluster(id: Int, pointCount: Int)
    }

    public var kind: Kind
    /// The input position for a point; the count-weighted centre for a cluster.
    public var coordinate: Coordinate
    /// Index into the aggregates produced by the build, for clusters of an index built
    /// with a ``ClusterAggregation``; `nil` otherwise.
    public var aggregateIndex: Int?

    public init(kind: Kind, coordinate: Coordinate, aggregateIndex: Int? = nil) {
        self.kind = kind
        self.coordinate = coordinate
        self.aggregateIndex = aggregateIndex
    }

    /// Number of input points this feature stands for.
    public var pointCount: Int {
        switch kind {
        case .point: 1
        case let .cluster(_, pointCount): pointCount
        }
    }

    /// The cluster id, `nil` for a single point.
    public var clusterID: Int? {
        if case let .cluster(id, _) = kind { return id }
        return nil
    }

    /// The input index, `nil` for a cluster.
    public var pointIndex: Int? {
        if case let .point(index) = kind { return index }
        return nil
    }
}

/// One item of a tile answer, in the tile's pixel coordinates (0 to `extent` inside the
/// tile; slightly outside for items in the buffer around it).
public struct TileFeature: Sendable, Hashable {
    public var kind: ClusterFeature.Kind
    /// Pixels from the tile's west edge.
    public var pixelX: Int
    /// Pixels from the tile's north edge.
    public var pixelY: Int
    /// As in ``ClusterFeature/aggregateIndex``.
    public var aggregateIndex: Int?

    public init(kind: ClusterFeature.Kind, pixelX: Int, pixelY: Int, aggregateIndex: Int? = nil) {
        self.kind = kind
        self.pixelX = pixelX
        self.pixelY = pixelY
        self.aggregateIndex = aggregateIndex
    }
}

/// A page of the points inside a cluster, with the cluster's total for pagination.
public struct LeavesPage: Sendable, Hashable {
    /// Input indices of the points on this page, in supercluster's leaf order.
    public var pointIndices: [Int]
    /// Number of points in the whole cluster.
    public var total: Int

    public init(pointIndices: [Int], total: Int) {
        self.pointIndices = pointIndices
        self.total = total
    }
}

/// Per-cluster values computed while the hierarchy is built, like supercluster's
/// `map`/`reduce` options: `map` gives the value of one input point, `reduce` merges the
/// value of a child into its new cluster's value.
public struct ClusterAggregation<Value: Sendable>: Sendable {
    public var map: @Sendable (_ pointIndex: Int) -> Value
    public var reduce: @Sendable (_ accumulated: inout Value, _ next: Value) -> Void

    public init(map: @escaping @Sendable (_ pointIndex: Int) -> Value,
                reduce: @escaping @Sendable (_ accumulated: inout Value, _ next: Value) -> Void) {
        self.map = map
        self.reduce = reduce
    }
}
