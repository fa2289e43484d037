/// Spherical Web Mercator (EPSG:3857) scaled to the unit square: x grows east from 0 at
/// longitude -180 to 1 at +180, y grows south from 0 at the northern limit to 1 at the
/// southern one. All projected coordinates in this module live in [0, 1].
public enum WebMercator {
    /// The latitude at which the square's edge lies: `atan(sinh(pi))` in degrees.
    public static let maxLatitude = 85.051128779806

    /// Projected x in [0, 1] of a longitude in degrees (not clamped: 180 gives 1).
    @inline(__always)
    public static func x(longitude: Double) -> Double {
        longitude / 360 + 0.5
    }

    /// Projected y in [0, 1] of a latitude in degrees; latitudes beyond
    /// ±``maxLatitude`` are clamped to the square's edge.
    @inline(__always)
    public static func y(latitude: Double) -> Double {
        let sine = CMath.sin(latitude * Double.pi / 180)
        let y = 0.5 - 0.25 * CMath.log((1 + sine) / (1 - sine)) / Double.pi
        return y < 0 ? 0 : (y > 1 ? 1 : y)
    }

    /// Longitude in degrees of a projected x.
    @inline(__always)
    public static func longitude(x: Double) -> Double {
        (x - 0.5) * 360
    }

    /// Latitude in degrees of a projected y. Computed with fdlibm's `exp` and `atan`
    /// so that cluster positions agree to the last bit with supercluster's.
    @inline(__always)
    public static func latitude(y: Double) -> Double {
        let y2 = (180 - y * 360) * Double.pi / 180
        return 360 * FDLibm.atan(FDLibm.exp(y2)) / Double.pi - 90
    }
}
