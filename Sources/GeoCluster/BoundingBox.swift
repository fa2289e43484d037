/// A viewport `[west, south, east, north]` in degrees, as map frontends send it.
///
/// Longitudes are wrapped into [-180, 180), so a view that scrolled across world copies
/// still finds the data; `west > east` after wrapping means the box crosses the
/// antimeridian. A box 360 degrees wide or wider covers every longitude. Latitudes are
/// clamped to [-90, 90]; `south > north` is rejected, since no view has that shape.
public struct BoundingBox: Sendable, Hashable {
    public var west: Double
    public var south: Double
    public var east: Double
    public var north: Double

    public init(west: Double, south: Double, east: Double, north: Double) throws(GeoClusterError) {
        for (name, value) in [("west", west), ("south", south), ("east", east), ("north", north)] where !value.isFinite {
            throw .invalidBoundingBox(reason: "\(name) is not a finite number")
        }
        guard south <= north else {
            throw .invalidBoundingBox(reason: "south \(south) is above north \(north)")
        }
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// Builds a box from the GeoJSON order `[west, south, east, north]`.
    public init(_ values: [Double]) throws(GeoClusterError) {
        guard values.count == 4 else {
            throw .invalidBoundingBox(reason: "expected 4 numbers [west, south, east, north], got \(values.count)")
        }
        try self.init(west: values[0], south: values[1], east: values[2], north: values[3])
    }

    /// The whole Web Mercator world.
    public static let world = BoundingBox(uncheckedWest: -180, south: -WebMercator.maxLatitude,
                                          east: 180, north: WebMercator.maxLatitude)

    init(uncheckedWest west: Double, south: Double, east: Double, north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// A contiguous longitude interval in [-180, 180] with clamped latitudes.
    public struct Span: Sendable, Hashable {
        public var west: Double
        public var south: Double
        public var east: Double
        public var north: Double
    }

    /// The one or two spans that together cover the box: two when it crosses the
    /// antimeridian, the eastern part (up to 180) first. The wrapping follows
    /// supercluster, so results are identical for any input it accepts.
    public var spans: [Span] {
        let south = max(-90, min(90, self.south))
        let north = max(-90, min(90, self.north))
        if east - west >= 360 {
            return [Span(west: -180, south: south, east: 180, north: north)]
        }
        let wrappedWest = Self.wrapLongitude(west)
        let wrappedEast = east == 180 ? 180 : Self.wrapLongitude(east)
        if wrappedWest > wrappedEast {
            return [Span(west: wrappedWest, south: south, east: 180, north: north),
                    Span(west: -180, south: south, east: wrappedEast, north: north)]
        }
        return [Span(west: wrappedWest, south: south, east: wrappedEast, north: north)]
    }

    /// Wraps a longitude into [-180, 180).
    @inline(__always)
    static func wrapLongitude(_ longitude: Double) -> Double {
        ((longitude + 180).truncatingRemainder(dividingBy: 360) + 360)
            .truncatingRemainder(dividingBy: 360) - 180
    }
}
