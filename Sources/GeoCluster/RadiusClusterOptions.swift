/// Options of the `radius` clustering algorithm, with supercluster's names and defaults.
public struct RadiusClusterOptions: Sendable, Hashable {
    /// Cluster radius in pixels of a tile `extent` pixels wide.
    public var radiusPixels: Double = 40
    /// Tile size in pixels that the radius is relative to; also the coordinate range of
    /// tile features.
    public var extent: Int = 512
    /// Lowest zoom at which clusters are generated.
    public var minZoom: Int = 0
    /// Highest zoom at which points are clustered; above it every point stands alone.
    public var maxZoom: Int = 16
    /// Smallest number of points that forms a cluster.
    public var minPoints: Int = 2
    /// Leaf size of the kd-trees; affects speed only, never results' content.
    public var nodeSize: Int = 64

    public init(radiusPixels: Double = 40, extent: Int = 512, minZoom: Int = 0, maxZoom: Int = 16,
                minPoints: Int = 2, nodeSize: Int = 64) {
        self.radiusPixels = radiusPixels
        self.extent = extent
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.minPoints = minPoints
        self.nodeSize = nodeSize
    }

    /// The deepest `maxZoom`: cluster ids keep `zoom + 1` in 5 bits.
    public static let maxSupportedZoom = 30

    /// Throws ``GeoClusterError/invalidOptions(reason:)`` naming the first bad option.
    public func validate() throws(GeoClusterError) {
        guard radiusPixels.isFinite, radiusPixels > 0 else {
            throw .invalidOptions(reason: "radius must be a positive number of pixels, got \(radiusPixels)")
        }
        guard (1...65_536).contains(extent) else {
            throw .invalidOptions(reason: "extent must be within 1...65536 pixels, got \(extent)")
        }
        guard (0...Self.maxSupportedZoom).contains(minZoom) else {
            throw .invalidOptions(reason: "minZoom must be within 0...\(Self.maxSupportedZoom), got \(minZoom)")
        }
        guard (minZoom...Self.maxSupportedZoom).contains(maxZoom) else {
            throw .invalidOptions(reason: "maxZoom must be within minZoom (\(minZoom))...\(Self.maxSupportedZoom), got \(maxZoom)")
        }
        guard minPoints >= 2 else {
            throw .invalidOptions(reason: "minPoints must be at least 2, got \(minPoints)")
        }
        guard (1...1_024).contains(nodeSize) else {
            throw .invalidOptions(reason: "nodeSize must be within 1...1024, got \(nodeSize)")
        }
    }
}
