import Foundation
import Testing
import GeoCluster
import GeoClusterWire
import GeoProjection
@testable import GeoClusterEngine
import GeoClusterTestSupport

struct ImporterTests {
    static func run(_ text: String, kind: LayerKind = .sightings, format: ImportFormat = .csv, crs: CRS? = nil,
                    columns: [String: String] = [:], skipInvalid: Bool = false, chunkSize: Int = 5) throws -> ImportResult {
        let options = ImportOptions(layer: "test", kind: kind, format: format, crs: crs, columns: columns,
                                    skipInvalid: skipInvalid)
        var input = ByteChunkReader(bytes: Array(text.utf8), name: "input", chunkSize: chunkSize)
        return try Importer(options: options).run(&input)
    }

    static let sightingsCSV = """
        id,lon,lat,species,count,observed_at,observer
        s1,126.9707,37.5547,Grus japonensis,3,2024-01-05T08:00:00+09:00,"Kim, J."
        s2,129.0403,35.1151,Anser fabalis,12,2024-01-06T09:30:00Z,
        """

    @Test func csvSightingsBecomeRecordsWithTypedFieldsAndStringProperties() throws {
        let result = try Self.run(Self.sightingsCSV)
        #expect(result.invalidCount == 0 && result.recordsRead == 2)
        #expect(result.records.map(\.idKey) == ["s1", "s2"])
        let first = try #require(result.records.first)
        #expect(first.coordinate == Coordinate(longitude: 126.9707, latitude: 37.5547))
        #expect(first.feature["properties"] == [
            "species": "Grus japonensis", "count": 3, "observed_at": "2024-01-05T08:00:00+09:00", "observer": "Kim, J.",
        ])
        // An empty cell leaves the property out.
        #expect(result.records[1].feature["properties"]?["observer"] == nil)
    }

    @Test func columnMappingReadsFieldsFromOtherColumns() throws {
        let text = """
            code,longitude,latitude,title,kind,hours
            p1,126.97,37.55,Namsan,park,1.5
            """
        let result = try Self.run(text, kind: .places, columns: ["id": "code", "lon": "longitude", "lat": "latitude",
                                                                "name": "title", "category": "kind"])
        #expect(result.invalidCount == 0)
        let record = try #require(result.records.first)
        #expect(record.idJSON == "p1")
        #expect(record.fields == .place(name: "Namsan", category: "park", dwellMinutes: nil))
        #expect(record.feature["properties"] == ["name": "Namsan", "category": "park", "hours": "1.5"])
    }

    @Test func aMissingColumnStopsTheImportWithTheFlagToUse() throws {
        #expect(throws: EngineError.invalidLayerSource(
            path: "input, line 1 (header)",
            reason: "no column \"species\" for the field \"species\"; name the column with --species-column")) {
            try Self.run("id,lon,lat,taxon,count,observed_at\n")
        }
    }

    @Test func stationLinesAreSplitAtSemicolons() throws {
        let result = try Self.run("id,lon,lat,name,lines\nseoul,126.9707,37.5547,Seoul, KTX ; Gyeongbu Line;\n",
                                  kind: .stations)
        #expect(result.records.first?.fields == .station(name: "Seoul", lines: ["KTX", "Gyeongbu Line"]))
    }

    /// Seoul Station in EPSG:5186 (the GeoProjection golden value, from cs2cs).
    @Test func epsg5186InputIsConvertedToWGS84() throws {
        let text = """
            id,easting,northing,name,category
            seoul,197411.0256,550575.5461,Seoul Station,station
            """
        let result = try Self.run(text, kind: .places, crs: .koreaCentralBelt2010,
                                  columns: ["x": "easting", "y": "northing"])
        #expect(result.invalidCount == 0)
        let coordinate = try #require(result.records.first?.coordinate)
        #expect(abs(coordinate.longitude - 126.9707) < 1e-6)
        #expect(abs(coordinate.latitude - 37.5547) < 1e-6)
        let written = try #require(result.records.first?.feature["geometry"]?["coordinates"]?.arrayValue)
        #expect(written.map { $0.doubleValue ?? .nan } == [coordinate.longitude, coordinate.latitude])

        let geoJSON = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"seoul","#
            + #""geometry":{"type":"Point","coordinates":[197411.0256,550575.5461]},"#
            + #""properties":{"name":"Seoul Station","category":"station"}}]}"#
        let fromGeoJSON = try Self.run(geoJSON, kind: .places, format: .geojson, crs: .koreaCentralBelt2010)
        #expect(fromGeoJSON.records.first?.coordinate == coordinate)
        let line = #"{"id":"seoul","x":197411.0256,"y":550575.5461,"name":"Seoul Station","category":"station"}"#
        let fromLines = try Self.run(line, kind: .places, format: .jsonl, crs: .koreaCentralBelt2010)
        #expect(fromLines.records.first?.coordinate == coordinate)

        let bad = try Self.run("id,x,y,name,category\nq,abc,550575.5461,Q,station\n", kind: .places,
                               crs: .koreaCentralBelt2010)
        #expect(bad.issues == [ImportIssue(location: .line(2), id: "\"q\"", field: "x",
                                           reason: "must be a number in EPSG:5186, got \"abc\"")])
    }

    @Test func aBadRowIsReportedWithItsLineAndFieldAndNothingIsKept() throws {
        let text = """
            id,lon,lat,species,n,observed_at
            s1,126.9707,37.5547,Grus japonensis,3,2024-01-05T08:00:00Z
            "s2",126.9,"37.5
            (multi-line cell)",Anser fabalis,2,2024-01-05T08:00:00Z
            s3,126.9,37.5,Anser fabalis,zero,2024-01-05T08:00:00Z
            s4,126.9,37.5,Anser fabalis,1,yesterday
            """
        let result = try Self.run(text, columns: ["count": "n"])
        #expect(result.records.isEmpty)
        #expect(result.shouldWrite(skipInvalid: false) == false)
        #expect(result.invalidCount == 3)
        #expect(result.issues.map(\.location) == [.line(3), .line(5), .line(6)])
        #expect(result.issues.map(\.field) == ["lat", "count", "observed_at"])
        #expect(result.issues[1].description == #"line 5 (id "s3"): field "count" (column "n"): must be an integer >= 1, got "zero""#)
    }

    /// Numbers are read as JSON writes them: a count of `1e3`, `1.0` or ` 3 `, or a
    /// longitude with spaces around it, is an error naming its line, not a number.
    @Test func numbersInCSVCellsAreReadStrictly() throws {
        let text = """
            id,lon,lat,species,count,observed_at
            s1,126.9707,37.5547,Grus japonensis,3,2024-01-05T08:00:00Z
            s2,126.9707,37.5547,Grus japonensis,1e3,2024-01-05T08:00:00Z
            s3,126.9707,37.5547,Grus japonensis,1.0,2024-01-05T08:00:00Z
            s4,126.9707,37.5547,Grus japonensis, 3 ,2024-01-05T08:00:00Z
            s5, 127 ,37.5547,Grus japonensis,3,2024-01-05T08:00:00Z
            s6,1.27e2,37.5547,Grus japonensis,+3,2024-01-05T08:00:00Z
            """
        let result = try Self.run(text, skipInvalid: true)
        #expect(result.records.map(\.idKey) == ["s1"])
        #expect(result.issues.map(\.location) == [.line(3), .line(4), .line(5), .line(6), .line(7)])
        #expect(result.issues.map(\.field) == ["count", "count", "count", "lon", "count"])
    }

    /// A point outside its CRS's domain is an error naming its line: PROJ would wrap or
    /// clamp it to somewhere else (EPSG:3857 x = y = 1e10 came out at [-168.47, 90]).
    @Test func projectedPointsOutsideTheDomainAreErrors() throws {
        let text = """
            id,x,y,name,lines
            ok,14134235.7,4516049.5,Seoul,KTX
            far,10000000000,10000000000,Nowhere,KTX
            """
        let result = try Self.run(text, kind: .stations, crs: .webMercator, skipInvalid: true)
        #expect(result.records.map(\.idKey) == ["ok"])
        #expect(result.issues.map(\.location) == [.line(3)])
        #expect(result.issues.first?.reason.contains("outside the domain of EPSG:3857") == true)
    }

    @Test func skipInvalidKeepsTheValidRecords() throws {
        let text = """
            id,lon,lat,species,count,observed_at
            s1,126.9707,37.5547,Grus japonensis,3,2024-01-05T08:00:00Z
            s2,200,37.5,Anser fabalis,1,2024-01-05T08:00:00Z
            s3,126.9,37.5,Anser fabalis,1,2024-01-05T08:00:00Z
            s4,126.9,37.5
            """
        let result = try Self.run(text, skipInvalid: true)
        #expect(result.records.map(\.idKey) == ["s1", "s3"])
        #expect(result.invalidCount == 2)
        #expect(result.issues.map(\.description) == [
            #"line 3 (id "s2"): field "lon": must be a number within -180...180, got 200"#,
            #"line 5: field "row": has 3 fields, the header has 6"#,
        ])
    }

    @Test func duplicateIdsAreErrorsNamingTheFirst() throws {
        let lines = """
            {"id":"a","lon":1,"lat":2,"name":"A","category":"cafe"}

            {"id":"a","lon":1,"lat":2,"name":"A again","category":"cafe"}
            {"id":7,"lon":1,"lat":2,"name":"Seven","category":"cafe"}
            {"id":"7","lon":1,"lat":2,"name":"Seven as text","category":"cafe"}
            """
        let result = try Self.run(lines, kind: .places, format: .jsonl, skipInvalid: true)
        #expect(result.records.map(\.idKey) == ["a", "#7", "7"])
        #expect(result.issues == [ImportIssue(location: .line(3), id: "\"a\"", field: "id", reason: "duplicates the id of line 1")])
    }

    @Test func jsonLinesTakeFlatRecordsAndFeaturesAndReportBadLines() throws {
        let lines = "{\"id\":\"a\",\"lon\":126.9,\"lat\":37.5,\"name\":\"A\",\"lines\":[\"KTX\"]}\r\n"
            + "{\"type\":\"Feature\",\"id\":\"b\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[127,37]},"
            + "\"properties\":{\"name\":\"B\",\"lines\":[\"SRT\"]}}\n"
            + "{\"id\":\"c\",\n"
            + "{\"id\":\"d\",\"lon\":126.9,\"lat\":37.5,\"name\":\"D\",\"lines\":[]}\n"
        let result = try Self.run(lines, kind: .stations, format: .jsonl, skipInvalid: true)
        #expect(result.records.map(\.idKey) == ["a", "b"])
        #expect(result.issues.map(\.location) == [.line(3), .line(4)])
        #expect(result.issues.map(\.field) == ["record", "lines"])
    }

    @Test func geoJSONFeaturesAreReadOneByOne() throws {
        let text = """
            \u{FEFF}{"type": "FeatureCollection", "name": "x, with [brackets] and \\"quotes\\"",
             "features": [
              {"type": "Feature", "id": "a", "geometry": {"type": "Point", "coordinates": [126.9, 37.5]},
               "properties": {"name": "A ] }", "category": "cafe"}},
              {"type": "Feature", "id": "b", "geometry": {"type": "Point", "coordinates": [126.9]},
               "properties": {"name": "B", "category": "cafe"}}
             ], "bbox": [0, 0, 1, 1]}
            """
        for chunkSize in [1, 3, 1 << 16] {
            let result = try Self.run(text, kind: .places, format: .geojson, skipInvalid: true, chunkSize: chunkSize)
            #expect(result.records.map(\.idKey) == ["a"])
            #expect(result.records.first?.feature["properties"]?["name"] == "A ] }")
            #expect(result.issues.map(\.location) == [.feature(1)])
            #expect(result.issues.map(\.field) == ["geometry.coordinates"])
        }
        #expect(throws: EngineError.invalidLayerSource(
            path: "input", reason: "has \"type\": \"Feature\"; expected a GeoJSON FeatureCollection")) {
            try Self.run(#"{"type":"Feature","features":[]}"#, kind: .places, format: .geojson)
        }
        #expect(throws: EngineError.invalidLayerSource(
            path: "input", reason: "has no \"type\"; expected a GeoJSON FeatureCollection (\"type\": \"FeatureCollection\")")) {
            try Self.run(#"{"features":[]}"#, kind: .places, format: .geojson)
        }
        #expect(throws: EngineError.invalidLayerSource(path: "input", reason: "ends inside the document")) {
            try Self.run(#"{"type":"FeatureCollection","features":[{}"#, kind: .places, format: .geojson)
        }
    }

    @Test func theWrittenDirectoryLoadsAndKeepsOtherEntries() throws {
        let directory = try TemporaryDirectory.make("import").path
        let result = try Self.run(Self.sightingsCSV)
        try LayerDirectory.write(result.records, layer: "birds", kind: .sightings, directory: directory)
        let again = try Self.run("id,lon,lat,name,category\np,126.9,37.5,P,cafe\n", kind: .places)
        try LayerDirectory.write(again.records, layer: "spots", kind: .places, directory: directory)
        try LayerDirectory.write(Array(result.records.prefix(1)), layer: "birds", kind: .sightings, directory: directory)
        let layers = try LayerCatalog.load(directory: directory)
        #expect(layers.map(\.name) == ["birds", "spots"])
        #expect(layers.map(\.pointCount) == [1, 1])
    }

    /// Re-registering a layer that the shipped manifest already lists changes nothing.
    @Test func theShippedManifestRoundTripsByteForByte() throws {
        let path = LayerCatalogTests.dataDirectory + "/layers.json"
        let original = try #require(FileManager.default.contents(atPath: path))
        let manifest = try JSONValue.parse([UInt8](original))
        let (updated, file) = try LayerDirectory.register(layer: "stations", kind: .stations, in: manifest, path: path)
        #expect(file == "stations.geojson")
        #expect(LayerDirectory.prettyPrinted(updated) + [0x0A] == [UInt8](original))
    }
}
