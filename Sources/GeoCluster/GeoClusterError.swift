/// Every error the core reports. Each case names what was wrong and where, and has a
/// stable machine-readable ``code`` that transports pass on to clients unchanged.
public enum GeoClusterError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A coordinate is not a finite number or lies outside its range.
    /// `field` is `"lon"` or `"lat"`; `index` is the position in the input, when known.
    case invalidCoordinate(field: String, value: Double, reason: String, index: Int?)
    /// A bounding box that cannot describe an area: not finite, or south above north.
    case invalidBoundingBox(reason: String)
    /// A zoom that is not a finite number or is outside the range the index serves.
    case invalidZoom(value: Double, reason: String)
    /// A tile address outside the tile pyramid (`0 <= x, y < 2^z`, `0 <= z <= 30`).
    case invalidTile(z: Int, x: Int, y: Int, reason: String)
    /// Index options that make no sense (non-positive radius, minZoom above maxZoom, ...).
    case invalidOptions(reason: String)
    /// A cluster id that this index did not produce.
    case unknownCluster(id: Int)
    /// A pagination argument out of range.
    case invalidPagination(reason: String)

    /// Stable snake_case identifier for clients and logs.
    public var code: String {
        switch self {
        case .invalidCoordinate: "invalid_coordinate"
        case .invalidBoundingBox: "invalid_bbox"
        case .invalidZoom: "invalid_zoom"
        case .invalidTile: "invalid_tile"
        case .invalidOptions: "invalid_options"
        case .unknownCluster: "unknown_cluster"
        case .invalidPagination: "invalid_pagination"
        }
    }

    public var description: String {
        switch self {
        case let .invalidCoordinate(field, value, reason, index):
            let place = index.map { " of point \($0)" } ?? ""
            return "invalid \(field)\(place): \(value) \(reason)"
        case let .invalidBoundingBox(reason):
            return "invalid bbox: \(reason)"
        case let .invalidZoom(value, reason):
            return "invalid zoom \(value): \(reason)"
        case let .invalidTile(z, x, y, reason):
            return "invalid tile \(z)/\(x)/\(y): \(reason)"
        case let .invalidOptions(reason):
            return "invalid options: \(reason)"
        case let .unknownCluster(id):
            return "no cluster with id \(id)"
        case let .invalidPagination(reason):
            return "invalid pagination: \(reason)"
        }
    }
}
