/// A point in some coordinate reference system, in the order PROJ uses for visualisation.
///
/// For a geographic CRS `x` is the longitude and `y` the latitude, in degrees; for a projected
/// CRS `x` is the easting and `y` the northing, in the CRS unit (metres for every Korean CRS).
/// The order never follows the CRS's official axis order: EPSG:4326 and EPSG:5186 both declare
/// "north first", but here x always comes first.
public struct CRSPoint: Hashable, Sendable {
    /// Longitude in degrees, or easting in the CRS unit.
    public var x: Double
    /// Latitude in degrees, or northing in the CRS unit.
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}
