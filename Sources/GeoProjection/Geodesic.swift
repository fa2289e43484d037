import CProj

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Distances and destinations on an ellipsoid, from Karney's geodesic algorithms as shipped
/// with PROJ (`geod_inverse`, `geod_direct`): accurate to about 15 nanometres for any pair of
/// points, antipodal ones included.
///
/// The value wraps a `geod_geodesic`, a plain C struct of doubles that `geod_init` fills once
/// and that the geodesic functions only read through a const pointer. It holds no pointers
/// and no PROJ context, so copies may be used from any number of threads at once; hence
/// `Sendable`, unlike `CoordinateTransformer`.
///
/// Latitudes must lie in [-90, 90] degrees; other inputs, like NaN, yield NaN results.
public struct Geodesic: Sendable {
    /// The WGS 84 ellipsoid (a = 6 378 137 m, f = 1/298.257223563), used by GPS and EPSG:4326.
    public static let wgs84 = Geodesic(equatorialRadiusMeters: 6_378_137, flattening: 1 / 298.257_223_563)

    /// The mean Earth radius R1 = (2a + b) / 3 of WGS 84, in metres, used by `haversineMeters`.
    public static let meanEarthRadiusMeters = 6_371_008.8

    /// Read-only after `init`; each call passes PROJ a pointer to a local copy (a few hundred
    /// bytes), which keeps the value immutable without reaching for unsafe pointers.
    private let ellipsoid: geod_geodesic

    /// An ellipsoid with the given equatorial radius (metres, > 0) and flattening (< 1;
    /// 0 is a sphere, negative a prolate ellipsoid).
    public init(equatorialRadiusMeters: Double, flattening: Double) {
        precondition(equatorialRadiusMeters.isFinite && equatorialRadiusMeters > 0, "equatorial radius must be positive")
        precondition(flattening.isFinite && flattening < 1, "flattening must be below 1")
        var ellipsoid = geod_geodesic()
        geod_init(&ellipsoid, equatorialRadiusMeters, flattening)
        self.ellipsoid = ellipsoid
    }

    /// The shortest path between two points: its length and the azimuths at both ends.
    public func inverse(from start: GeographicPoint, to end: GeographicPoint) -> GeodesicSolution {
        var distanceMeters = 0.0
        var initialAzimuthDegrees = 0.0
        var finalAzimuthDegrees = 0.0
        var ellipsoid = ellipsoid
        geod_inverse(
            &ellipsoid,
            start.latitudeDegrees, start.longitudeDegrees,
            end.latitudeDegrees, end.longitudeDegrees,
            &distanceMeters, &initialAzimuthDegrees, &finalAzimuthDegrees)
        return GeodesicSolution(
            distanceMeters: distanceMeters,
            initialAzimuthDegrees: initialAzimuthDegrees,
            finalAzimuthDegrees: finalAzimuthDegrees)
    }

    /// The ellipsoidal distance between two points, in metres.
    public func distanceMeters(from start: GeographicPoint, to end: GeographicPoint) -> Double {
        var distanceMeters = 0.0
        var ellipsoid = ellipsoid
        geod_inverse(
            &ellipsoid,
            start.latitudeDegrees, start.longitudeDegrees,
            end.latitudeDegrees, end.longitudeDegrees,
            &distanceMeters, nil, nil)
        return distanceMeters
    }

    /// The point reached by travelling `distanceMeters` (negative goes backwards) from `start`
    /// along the geodesic that leaves it at `azimuthDegrees`, clockwise from north.
    /// The result's longitude is reduced to [-180, 180].
    public func destination(
        from start: GeographicPoint, azimuthDegrees: Double, distanceMeters: Double
    ) -> GeographicPoint {
        var latitudeDegrees = 0.0
        var longitudeDegrees = 0.0
        var ellipsoid = ellipsoid
        geod_direct(
            &ellipsoid,
            start.latitudeDegrees, start.longitudeDegrees, azimuthDegrees, distanceMeters,
            &latitudeDegrees, &longitudeDegrees, nil)
        return GeographicPoint(longitudeDegrees: longitudeDegrees, latitudeDegrees: latitudeDegrees)
    }

    /// The great-circle distance on a sphere of radius `meanEarthRadiusMeters`, in metres.
    ///
    /// Several times cheaper than `distanceMeters(from:to:)`, but the Earth is flattened, so
    /// it differs from the WGS 84 geodesic by up to about 0.6 % (from -0.45 % to +0.56 % over
    /// random pairs up to 5000 km apart). Use it only to pre-filter candidates, widening the
    /// radius by that margin, before the ellipsoidal distance decides.
    public static func haversineMeters(from start: GeographicPoint, to end: GeographicPoint) -> Double {
        let radiansPerDegree = Double.pi / 180
        let latitude1 = start.latitudeDegrees * radiansPerDegree
        let latitude2 = end.latitudeDegrees * radiansPerDegree
        let halfDeltaLatitude = (latitude2 - latitude1) / 2
        let halfDeltaLongitude = (end.longitudeDegrees - start.longitudeDegrees) * radiansPerDegree / 2
        let sinLatitude = sin(halfDeltaLatitude)
        let sinLongitude = sin(halfDeltaLongitude)
        let h = sinLatitude * sinLatitude + cos(latitude1) * cos(latitude2) * sinLongitude * sinLongitude
        // min() guards against rounding pushing h just above 1 for antipodal points.
        return 2 * meanEarthRadiusMeters * asin(min(1, h.squareRoot()))
    }
}

/// The solution of the inverse geodesic problem between two points.
public struct GeodesicSolution: Hashable, Sendable {
    /// Length of the geodesic, in metres.
    public var distanceMeters: Double
    /// Direction of travel at the start, clockwise from north, in [-180, 180] degrees.
    public var initialAzimuthDegrees: Double
    /// Direction of travel at the end, clockwise from north, in [-180, 180] degrees.
    public var finalAzimuthDegrees: Double

    public init(distanceMeters: Double, initialAzimuthDegrees: Double, finalAzimuthDegrees: Double) {
        self.distanceMeters = distanceMeters
        self.initialAzimuthDegrees = initialAzimuthDegrees
        self.finalAzimuthDegrees = finalAzimuthDegrees
    }
}
