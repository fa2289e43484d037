import GeoProjection
import Testing

@Suite struct CRSTests {
    @Test(arguments: ["EPSG:5186", "epsg:5186", "Epsg:5186", "5186", "  EPSG:5186\n", "EPSG:05186"])
    func epsgFormsNormaliseToOneDefinition(text: String) throws {
        #expect(try CRS(text) == .koreaCentralBelt2010)
        #expect(try CRS(text).definition == "EPSG:5186")
    }

    @Test func epsgCodeInitialiser() throws {
        #expect(try CRS(epsg: 4326) == .wgs84)
        #expect(throws: ProjectionError.self) { try CRS(epsg: 0) }
    }

    @Test func projStringGetsCRSType() throws {
        #expect(try CRS("+proj=longlat +datum=WGS84").definition == "+proj=longlat +datum=WGS84 +type=crs")
        #expect(try CRS(" +proj=longlat  +datum=WGS84 +type=crs ").definition == "+proj=longlat +datum=WGS84 +type=crs")
    }

    @Test(arguments: [
        ("EPSG:abc", "EPSG code must be 1 to 9 decimal digits"),
        ("EPSG:", "EPSG code must be 1 to 9 decimal digits"),
        ("EPSG:-5186", "EPSG code must be 1 to 9 decimal digits"),
        ("EPSG:1234567890", "EPSG code must be 1 to 9 decimal digits"),
        ("abc", "EPSG code must be 1 to 9 decimal digits"),
        ("", "empty CRS identifier"),
        ("   ", "empty CRS identifier"),
        ("ESRI:102100", "only EPSG codes and PROJ strings are accepted, not authority \"ESRI\""),
        ("EPSG:4326:1", "expected \"EPSG:<code>\", \"<code>\" or \"+proj=...\""),
        ("+proj=", "a PROJ string must start with \"+proj=<name>\""),
        ("+ellps=GRS80 +proj=tmerc", "a PROJ string must start with \"+proj=<name>\""),
        // What a URL query makes of an unescaped "+proj=utm +zone=52".
        (" proj=utm zone=52", "a PROJ string must start with \"+proj=<name>\""),
        ("EPSG:43\u{0}26", "contains a NUL character"),
    ])
    func malformedIdentifiersAreRejected(text: String, reason: String) {
        #expect(throws: ProjectionError.malformedCRS(text: text, reason: reason)) { try CRS(text) }
    }

    @Test func malformedErrorIsDescribed() {
        let error = ProjectionError.malformedCRS(text: "EPSG:abc", reason: "EPSG code must be 1 to 9 decimal digits")
        #expect(error.code == "malformed_crs")
        #expect(error.description == "malformed CRS \"EPSG:abc\": EPSG code must be 1 to 9 decimal digits")
    }
}
