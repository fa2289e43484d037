import GeoProjection

/// Reference places and golden values shared by the tests.
enum Fixtures {
    /// Seoul Station, longitude/latitude in degrees (WGS 84).
    static let seoulStation = CRSPoint(x: 126.9707, y: 37.5547)
    /// Busan Station, longitude/latitude in degrees (WGS 84).
    static let busanStation = CRSPoint(x: 129.0403, y: 35.1151)

    /// Seoul Station in EPSG:5186 (Korea 2000 / Central Belt 2010), easting/northing in metres.
    /// From PROJ 9.1.1's command-line tool:
    /// `echo "37.5547 126.9707" | cs2cs -f %.4f EPSG:4326 EPSG:5186` printed
    /// "550575.5461 197411.0256" (northing first, the CRS's official axis order).
    static let seoulStation5186 = CRSPoint(x: 197_411.0256, y: 550_575.5461)

    /// Seoul Station in EPSG:5179 (Korea 2000 / Unified CS), easting/northing in metres.
    /// From `echo "37.5547 126.9707" | cs2cs -f %.4f EPSG:4326 EPSG:5179` (PROJ 9.1.1), which
    /// printed "1950726.5359 953249.1107" (northing first).
    static let seoulStation5179 = CRSPoint(x: 953_249.1107, y: 1_950_726.5359)

    /// Seoul Station to Busan Station on WGS 84. From PROJ 9.1.1's
    /// `echo "37.5547 126.9707 35.1151 129.0403" | geod +ellps=WGS84 -I +units=m -f %.3f`,
    /// which printed "144.917	-33.857	328321.408" (forward azimuth, back azimuth, metres).
    static let seoulToBusanMeters = 328_321.408
    static let seoulToBusanInitialAzimuthDegrees = 144.917

    /// One degree of longitude along the equator on WGS 84, from
    /// `echo "0 0 0 1" | geod +ellps=WGS84 -I +units=m -f %.3f` (PROJ 9.1.1).
    static let equatorDegreeMeters = 111_319.491

    static func geographic(_ point: CRSPoint) -> GeographicPoint {
        GeographicPoint(longitudeDegrees: point.x, latitudeDegrees: point.y)
    }
}
