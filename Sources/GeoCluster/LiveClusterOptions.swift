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
    /// Points a quadtree leaf holds before it splits; affects speed and memory only.
    public var bucketSize: Int = 16

    public init(radiusPixels: Double = 40, extent: Int = 512, minZoom: Int = 0, maxZoom: Int = 16,
                minPoints: Int = 2, bucketSize: Int = 16) {
        self.radiusPixels = radiusPixels
        self.extent = extent
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.minPoints = minPoints
        self.bucketSize = bucketSize
    }

    /// The same options as a radius-algorithm configuration.
    public init(_ radius: RadiusClusterOptions) {
        self.init(radiusPixels: radius.radiusPixels, extent: radius.extent, minZoom: radius.minZoom,
                  maxZoom: radius.maxZoom, minPoints: radius.minPoints)
    }

    /// Levels between a zoom and its grid: grid cells at zoom `z` are quadtree cells of
    /// level `z + levelShift`, `extent / 2^levelShift` pixels wide, the smallest power-of-two
    /// fraction of a tile that is still at least `radiusPixels` wide.
    public var levelShift: Int {
        var shift = 0
        while Double(extent) / Double(1 << (shift + 1)) >= radiusPixels { shift += 1 }
        return shift
    }

    /// Deepest grid level: cluster ids keep cell coordinates in 20 bits each.
    public static let maxGridLevel = 20

    public func validate() throws(GeoClusterError) {
        // Radius, extent, zooms and minPoints follow the radius algorithm's rules.
        try RadiusClusterOptions(radiusPixels: radiusPixels, extent: extent, minZoom: minZoom, maxZoom: maxZoom,
                                 minPoints: minPoints).validate()
        guard radiusPixels <= Double(extent) else {
            throw .invalidOptions(reason: "radius (\(radiusPixels)) must not exceed extent (\(extent)) for the live algorithm")
        }
        guard maxZoom + levelShift <= Self.maxGridLevel else {
            throw .invalidOptions(reason: "maxZoom must be at most \(Self.maxGridLevel - levelShift) with radius "
                                  + "\(radiusPixels) and extent \(extent), got \(maxZoom)")
        }
        guard (1...4_096).contains(bucketSize) else {
            throw .invalidOptions(reason: "bucketSize must be within 1...4096, got \(bucketSize)")
        }
    }
}
