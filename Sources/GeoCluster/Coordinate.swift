/// A WGS84 position in degrees. Construction through ``init(longitude:latitude:)``
/// does not check ranges, so that indexes can hold data cheaply; input from outside
/// goes through ``validated(longitude:latitude:index:)``.
public struct Coordinate: Sendable, Hashable {
    /// Longitude in degrees, east positive, in [-180, 180] when validated.
    public var longitude: Double
    /// Latitude in degrees, north positive, in [-90, 90] when validated.
    public var latitude: Double

    @inlinable
    public init(longitude: Double, latitude: Double) {
        self.longitude = longitude
        self.latitude = latitude
    }

    /// Checks an input position: both values finite, longitude within [-180, 180],
    /// latitude within [-90, 90]. Latitudes beyond Web Mercator's limit are accepted
    /// here and clamped by the projection, as map libraries do.
    /// - Parameter index: position of the point in its input, reported in the error.
    public static func validated(
        longitude: Double, latitude: Double, index: Int? = nil
    ) throws(GeoClusterError) -> Coordinate {
        guard longitude.isFinite else {
            throw .invalidCoordinate(field: "lon", value: longitude, reason: "is not a finite number", index: index)
        }
        guard latitude.isFinite else {
            throw .invalidCoordinate(field: "lat", value: latitude, reason: "is not a finite number", index: index)
        }
        guard (-180.0...180.0).contains(longitude) else {
            throw .invalidCoordinate(field: "lon", value: longitude, reason: "is outside [-180, 180]", index: index)
        }
        guard (-90.0...90.0).contains(latitude) else {
            throw .invalidCoordinate(field: "lat", value: latitude, reason: "is outside [-90, 90]", index: index)
        }
        return Coordinate(longitude: longitude, latitude: latitude)
    }
}
