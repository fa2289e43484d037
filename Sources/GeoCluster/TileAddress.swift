/// A tile of the XYZ (slippy map) pyramid: `2^z` by `2^z` tiles, x east from the
/// antimeridian, y south from the northern Web Mercator limit.
public struct TileAddress: Sendable, Hashable, CustomStringConvertible {
    /// The deepest zoom whose tile count per axis (2^30) fits comfortably in an `Int32`.
    public static let maxZoom = 30

    public let z: Int
    public let x: Int
    public let y: Int

    public init(z: Int, x: Int, y: Int) throws(GeoClusterError) {
        guard (0...Self.maxZoom).contains(z) else {
            throw .invalidTile(z: z, x: x, y: y, reason: "z must be within 0...\(Self.maxZoom)")
        }
        let size = 1 << z
        guard (0..<size).contains(x) else {
            throw .invalidTile(z: z, x: x, y: y, reason: "x must be within 0..<\(size) at zoom \(z)")
        }
        guard (0..<size).contains(y) else {
            throw .invalidTile(z: z, x: x, y: y, reason: "y must be within 0..<\(size) at zoom \(z)")
        }
        self.z = z
        self.x = x
        self.y = y
    }

    /// Number of tiles along each axis at this zoom.
    public var tilesPerAxis: Int { 1 << z }

    /// The tile's area in degrees; north and south are limited to ±``WebMercator/maxLatitude``.
    public var bounds: BoundingBox {
        let size = Double(tilesPerAxis)
        return BoundingBox(
            uncheckedWest: WebMercator.longitude(x: Double(x) / size),
            south: WebMercator.latitude(y: Double(y + 1) / size),
            east: WebMercator.longitude(x: Double(x + 1) / size),
            north: WebMercator.latitude(y: Double(y) / size))
    }

    /// The tile containing a position at zoom `z`; positions on the east or south edge
    /// of the world fall in the last tile.
    public static func containing(_ coordinate: Coordinate, zoom z: Int) throws(GeoClusterError) -> TileAddress {
        guard (0...maxZoom).contains(z) else {
            throw .invalidTile(z: z, x: 0, y: 0, reason: "z must be within 0...\(maxZoom)")
        }
        let size = 1 << z
        let px = WebMercator.x(longitude: coordinate.longitude) * Double(size)
        let py = WebMercator.y(latitude: coordinate.latitude) * Double(size)
        let x = min(size - 1, max(0, Int(px.rounded(.down))))
        let y = min(size - 1, max(0, Int(py.rounded(.down))))
        return try TileAddress(z: z, x: x, y: y)
    }

    public var description: String { "\(z)/\(x)/\(y)" }
}
