/// A longitude/latitude position on an ellipsoid or sphere, in degrees.
public struct GeographicPoint: Hashable, Sendable {
    /// Degrees east of Greenwich, in [-180, 180].
    public var longitudeDegrees: Double
    /// Degrees north of the equator, in [-90, 90].
    public var latitudeDegrees: Double

    public init(longitudeDegrees: Double, latitudeDegrees: Double) {
        self.longitudeDegrees = longitudeDegrees
        self.latitudeDegrees = latitudeDegrees
    }
}
