import GeoClusterTestSupport
import Testing
@testable import GeoCluster

struct CoordinateTests {
    @Test func acceptsTheWholeRange() throws {
        for (lon, lat) in [(-180.0, -90.0), (180, 90), (0, 0), (126.9707, 37.5547)] {
            let c = try Coordinate.validated(longitude: lon, latitude: lat)
            #expect(c.longitude == lon && c.latitude == lat)
        }
    }

    @Test func rejectsOutOfRangeAndNonFiniteValuesNamingTheField() {
        #expect(throws: GeoClusterError.invalidCoordinate(field: "lon", value: 180.5, reason: "is outside [-180, 180]", index: 3)) {
            try Coordinate.validated(longitude: 180.5, latitude: 0, index: 3)
        }
        #expect(throws: GeoClusterError.invalidCoordinate(field: "lat", value: -90.01, reason: "is outside [-90, 90]", index: nil)) {
            try Coordinate.validated(longitude: 0, latitude: -90.01)
        }
        do {
            _ = try Coordinate.validated(longitude: .nan, latitude: 0, index: 0)
            Issue.record("NaN accepted")
        } catch {
            #expect(error.code == "invalid_coordinate")
            #expect(error.description.contains("lon"))
        }
        #expect(throws: GeoClusterError.self) { try Coordinate.validated(longitude: 0, latitude: .infinity) }
    }
}

struct WebMercatorTests {
    @Test func projectsTheCornersAndCentre() {
        #expect(WebMercator.x(longitude: -180) == 0)
        #expect(WebMercator.x(longitude: 180) == 1)
        #expect(WebMercator.x(longitude: 0) == 0.5)
        #expect(WebMercator.y(latitude: 0) == 0.5)
        #expect(abs(WebMercator.y(latitude: WebMercator.maxLatitude)) < 1e-12)
        #expect(abs(WebMercator.y(latitude: -WebMercator.maxLatitude) - 1) < 1e-12)
    }

    @Test func clampsLatitudesBeyondTheSquare() {
        #expect(WebMercator.y(latitude: 89) == 0)
        #expect(WebMercator.y(latitude: 90) == 0)
        #expect(WebMercator.y(latitude: -90) == 1)
    }

    @Test func inverseRoundTrips() {
        var random = SeededRandom(seed: 1)
        for _ in 0..<1_000 {
            let lon = random.between(-180, 180), lat = random.between(-85, 85)
            #expect(abs(WebMercator.longitude(x: WebMercator.x(longitude: lon)) - lon) < 1e-9)
            #expect(abs(WebMercator.latitude(y: WebMercator.y(latitude: lat)) - lat) < 1e-9)
        }
    }

    @Test func maxLatitudeIsAtanSinhPi() {
        // atan(sinh(pi)) in degrees, the latitude where y reaches 0.
        #expect(abs(WebMercator.latitude(y: 0) - WebMercator.maxLatitude) < 1e-11)
    }
}

struct BoundingBoxTests {
    @Test func rejectsInvertedLatitudesAndNonFiniteValues() {
        #expect(throws: GeoClusterError.invalidBoundingBox(reason: "south 10.0 is above north -10.0")) {
            try BoundingBox(west: 0, south: 10, east: 20, north: -10)
        }
        #expect(throws: GeoClusterError.invalidBoundingBox(reason: "east is not a finite number")) {
            try BoundingBox(west: 0, south: 0, east: .nan, north: 1)
        }
        #expect(throws: GeoClusterError.invalidBoundingBox(reason: "expected 4 numbers [west, south, east, north], got 3")) {
            try BoundingBox([1, 2, 3])
        }
    }

    @Test func ordinaryBoxIsOneSpan() throws {
        let box = try BoundingBox(west: 124, south: 33, east: 132, north: 39)
        #expect(box.spans == [BoundingBox.Span(west: 124, south: 33, east: 132, north: 39)])
    }

    @Test func antimeridianBoxSplitsEastPartFirst() throws {
        let box = try BoundingBox(west: 170, south: -10, east: -170, north: 10)
        #expect(box.spans == [BoundingBox.Span(west: 170, south: -10, east: 180, north: 10),
                              BoundingBox.Span(west: -180, south: -10, east: -170, north: 10)])
    }

    @Test func boxesOfAWorldOrMoreCoverEveryLongitude() throws {
        for (west, east) in [(-180.0, 180.0), (-200, 160), (0, 720), (-540, 540)] {
            let box = try BoundingBox(west: west, south: -10, east: east, north: 10)
            #expect(box.spans == [BoundingBox.Span(west: -180, south: -10, east: 180, north: 10)])
        }
    }

    @Test func longitudesOfWorldCopiesWrapAndLatitudesClamp() throws {
        let box = try BoundingBox(west: 484, south: -100, east: 492, north: 100)  // 124..132 one world east
        #expect(box.spans == [BoundingBox.Span(west: 124, south: -90, east: 132, north: 90)])
    }
}

struct TileAddressTests {
    @Test func validatesTheAddress() {
        #expect(throws: GeoClusterError.invalidTile(z: 2, x: 4, y: 0, reason: "x must be within 0..<4 at zoom 2")) {
            try TileAddress(z: 2, x: 4, y: 0)
        }
        #expect(throws: GeoClusterError.self) { try TileAddress(z: -1, x: 0, y: 0) }
        #expect(throws: GeoClusterError.self) { try TileAddress(z: 31, x: 0, y: 0) }
        #expect(throws: GeoClusterError.self) { try TileAddress(z: 3, x: 0, y: -1) }
    }

    @Test func worldTileBoundsAreTheMercatorSquare() throws {
        let bounds = try TileAddress(z: 0, x: 0, y: 0).bounds
        #expect(bounds.west == -180 && bounds.east == 180)
        #expect(abs(bounds.north - WebMercator.maxLatitude) < 1e-11)
        #expect(abs(bounds.south + WebMercator.maxLatitude) < 1e-11)
    }

    @Test func seoulStationTiles() throws {
        let seoul = Coordinate(longitude: 126.9707, latitude: 37.5547)
        // Tile numbers from the slippy-map formulas, worked out by hand:
        // x = floor((lon + 180) / 360 * 2^z), y = floor((1 - asinh(tan(lat)) / pi) / 2 * 2^z).
        #expect(try TileAddress.containing(seoul, zoom: 0) == TileAddress(z: 0, x: 0, y: 0))
        #expect(try TileAddress.containing(seoul, zoom: 10) == TileAddress(z: 10, x: 873, y: 396))
        #expect(try TileAddress.containing(seoul, zoom: 16) == TileAddress(z: 16, x: 55_882, y: 25_381))
        let tile = try TileAddress.containing(seoul, zoom: 16)
        let bounds = tile.bounds
        #expect(bounds.west <= seoul.longitude && seoul.longitude < bounds.east)
        #expect(bounds.south < seoul.latitude && seoul.latitude <= bounds.north)
        #expect(try TileAddress.containing(Coordinate(longitude: 180, latitude: -90), zoom: 3) == TileAddress(z: 3, x: 7, y: 7))
    }
}

struct FDLibmTests {
    /// fdlibm and the C library are both accurate to within one unit in the last place,
    /// so they may differ by at most two units from each other anywhere.
    @Test func agreesWithTheCLibraryWithinTwoUnitsInTheLastPlace() {
        var random = SeededRandom(seed: 77)
        for _ in 0..<200_000 {
            let x = random.between(-30, 30)
            #expect(abs(FDLibm.exp(x) - CMathReference.exp(x)) <= 2 * CMathReference.exp(x).ulp)
            let y = random.between(-1e6, 1e6) * random.unit() * random.unit()
            #expect(abs(FDLibm.atan(y) - CMathReference.atan(y)) <= 2 * CMathReference.atan(y).ulp)
        }
    }

    @Test func specialValues() {
        #expect(FDLibm.exp(0) == 1)
        #expect(FDLibm.exp(1) == 2.718281828459045)
        #expect(FDLibm.exp(-.infinity) == 0)
        #expect(FDLibm.exp(.infinity) == .infinity)
        #expect(FDLibm.exp(800) == .infinity)
        #expect(FDLibm.exp(-800) == 0)
        #expect(FDLibm.exp(.nan).isNaN)
        #expect(FDLibm.atan(0) == 0)
        #expect(FDLibm.atan(1) == Double.pi / 4)
        #expect(FDLibm.atan(.infinity) == Double.pi / 2)
        #expect(FDLibm.atan(-.infinity) == -Double.pi / 2)
        #expect(FDLibm.atan(.nan).isNaN)
    }
}
