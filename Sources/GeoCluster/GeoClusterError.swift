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
    /// A walking speed that is not a finite number within 1...10 km/h: slower is not a walk
    /// the model can plan with, faster is running.
    case invalidWalkingSpeed(kilometersPerHour: Double, reason: String)
    /// A walking pace name other than `slow`, `normal` or `fast`.
    case unknownWalkingPace(name: String)
    /// A reachability parameter (detour factor, boarding buffer, a category's dwell, a
    /// threshold, a distance cap) that is not finite or lies outside its range; `name` is
    /// the parameter's name.
    case invalidReachabilityParameter(name: String, value: Double, reason: String)
    /// A place's own dwell time that is not a finite number of minutes within its range;
    /// `index` is the caller's index of the place, when known.
    case invalidDwellTime(minutes: Double, reason: String, index: Int?)
    /// A remaining time that is not a finite, non-negative number of minutes.
    case invalidRemainingTime(minutes: Double, reason: String)
    /// Walking network input that does not describe a usable graph: no nodes, more nodes
    /// or edges than 32-bit indices address, or a network document not in its format.
    case invalidWalkingNetwork(reason: String)
    /// A walking network node index outside `0..<nodeCount`; `edge` is the position of the
    /// edge that named it, or nil when the index came from a query.
    case networkNodeOutOfRange(node: Int, nodeCount: Int, edge: Int?)
    /// A walking network edge whose length is not a finite, non-negative number of metres;
    /// `edge` is its position in the input.
    case invalidEdgeLength(edge: Int, lengthMeters: Double, reason: String)

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
        case .invalidWalkingSpeed: "invalid_walking_speed"
        case .unknownWalkingPace: "unknown_walking_pace"
        case .invalidReachabilityParameter: "invalid_reachability_parameter"
        case .invalidDwellTime: "invalid_dwell_time"
        case .invalidRemainingTime: "invalid_remaining_time"
        case .invalidWalkingNetwork: "invalid_walking_network"
        case .networkNodeOutOfRange: "network_node_out_of_range"
        case .invalidEdgeLength: "invalid_edge_length"
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
        case let .invalidWalkingSpeed(kilometersPerHour, reason):
            return "invalid walking speed \(kilometersPerHour) km/h: \(reason)"
        case let .unknownWalkingPace(name):
            return "unknown walking pace \"\(name)\": expected slow, normal or fast"
        case let .invalidReachabilityParameter(name, value, reason):
            return "invalid \(name) \(value): \(reason)"
        case let .invalidDwellTime(minutes, reason, index):
            let place = index.map { " of place \($0)" } ?? ""
            return "invalid dwell time\(place): \(minutes) minutes \(reason)"
        case let .invalidRemainingTime(minutes, reason):
            return "invalid remaining time \(minutes) minutes: \(reason)"
        case let .invalidWalkingNetwork(reason):
            return "invalid walking network: \(reason)"
        case let .networkNodeOutOfRange(node, nodeCount, edge):
            let place = edge.map { " in edge \($0)" } ?? ""
            return "walking network node \(node)\(place) is outside 0..<\(nodeCount)"
        case let .invalidEdgeLength(edge, lengthMeters, reason):
            return "invalid length of walking network edge \(edge): \(lengthMeters) m \(reason)"
        }
    }
}
