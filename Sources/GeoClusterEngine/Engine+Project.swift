import GeoCluster
import GeoClusterWire
import GeoProjection

extension Engine {
    /// Answers `project`: `{"from":…,"to":…,"coordinates":[[x, y], …]}` with the CRSs in
    /// their normalised form ("4326" answers as "EPSG:4326") and the pairs in input order,
    /// longitude/latitude or easting/northing. All or nothing: one bad pair fails the
    /// request, naming it.
    func project(_ coordinates: [CRSPoint], from source: CRS, to target: CRS) throws(EngineError) -> JSONValue {
        var points = coordinates
        do {
            try transformers.transform(&points, from: source, to: target)
        } catch {
            if case .fileAccessRefused = error { refusedPROJFileCount.add(1, ordering: .relaxed) }
            throw .projection(error, field: Self.field(of: error, from: source, to: target))
        }
        var pairs: [JSONValue] = []
        pairs.reserveCapacity(points.count)
        for point in points {
            pairs.append(.array([.number(point.x), .number(point.y)]))
        }
        return .object(["from": .string(source.definition), "to": .string(target.definition),
                        "coordinates": .array(pairs)])
    }

    /// The request field a projection error is about: the CRS PROJ did not know, or the
    /// coordinate pair that was rejected or failed.
    private static func field(of error: ProjectionError, from source: CRS, to target: CRS) -> String? {
        switch error {
        case let .unknownCRS(identifier, _), let .unsupportedCRS(identifier, _), let .fileAccessRefused(identifier, _):
            identifier == source.definition ? "from" : identifier == target.definition ? "to" : nil
        case let .invalidCoordinate(index?, _), let .transformFailed(index?, _):
            "coordinates[\(index)]"
        case .malformedCRS, .invalidCoordinate, .transformFailed, .contextCreationFailed, .gridUnavailable:
            nil
        }
    }
}
