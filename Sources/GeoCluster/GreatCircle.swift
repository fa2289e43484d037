/// Distances on the sphere of the Earth's mean radius: the core's own measure for
/// searches by distance (``LiveClusterIndex/nearest(_:to:maxRadiusMeters:filter:distanceMeters:)``),
/// and the straight-line model of reachability.
public enum GreatCircle {
    /// The mean Earth radius R1 = (2a + b) / 3 of WGS 84 in metres, the sphere of
    /// ``haversineMeters(from:to:)``.
    public static let meanEarthRadiusMeters = 6_371_008.8

    /// Great-circle distance in metres on the sphere of radius ``meanEarthRadiusMeters``.
    ///
    /// Spherical, so it differs from the WGS 84 ellipsoidal distance by up to about 0.5 %:
    /// a few metres over a walk, far below the uncertainty of pace and detour.
    public static func haversineMeters(from start: Coordinate, to end: Coordinate) -> Double {
        let radiansPerDegree = Double.pi / 180
        let latitude1 = start.latitude * radiansPerDegree
        let latitude2 = end.latitude * radiansPerDegree
        let sinHalfDeltaLatitude = CMath.sin((latitude2 - latitude1) / 2)
        let sinHalfDeltaLongitude = CMath.sin((end.longitude - start.longitude) * radiansPerDegree / 2)
        let h = sinHalfDeltaLatitude * sinHalfDeltaLatitude
            + CMath.cos(latitude1) * CMath.cos(latitude2) * sinHalfDeltaLongitude * sinHalfDeltaLongitude
        // min() guards against rounding pushing h just above 1 for antipodal points.
        return 2 * meanEarthRadiusMeters * CMath.asin(Swift.min(1, h.squareRoot()))
    }
}
