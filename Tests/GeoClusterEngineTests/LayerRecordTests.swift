import Foundation
import Testing
import GeoCluster
import GeoClusterTestSupport
import GeoClusterWire
@testable import GeoClusterEngine

struct LayerRecordTests {
    static let sighting: JSONObject = [
        "id": "s7", "lon": 126.9, "lat": 37.5, "species": "Grus monacha", "count": 3,
        "observed_at": "2024-02-29T23:30:00+09:00", "observer_id": "obs-1", "properties": ["site": "순천만", "visit": 2],
    ]
    static let place: JSONObject = [
        "id": 12, "lon": 129.0, "lat": 35.1, "name": "부산 카페 1", "category": "cafe", "dwell_minutes": 30,
    ]
    static let station: JSONObject = ["id": "seoul", "lon": 126.9707, "lat": 37.5547, "name": "서울", "lines": ["KTX", "SRT"]]

    /// The record of `object` with `field` replaced (or removed, for `nil`).
    static func changing(_ object: JSONObject, _ field: String, to value: JSONValue?) -> JSONValue {
        var object = object
        object[field] = value
        return .object(object)
    }

    static func rejection(_ json: JSONValue, _ kind: LayerKind) -> EngineError? {
        do {
            _ = try LayerRecord(json: json, kind: kind, layer: "test", index: 3)
            return nil
        } catch {
            return error
        }
    }

    static func invalid(_ id: String?, _ field: String, _ reason: String) -> EngineError {
        .invalidRecord(layer: "test", index: 3, id: id, field: field, reason: reason)
    }

    // MARK: Valid records in both shapes

    /// Every record of a large layer holds these: a layer of 10M sightings keeps 10M of
    /// them, so each 8 bytes more is 80 MB more resident.
    @Test func recordsKeepTheirSizes() {
        #expect(MemoryLayout<Timestamp>.size == 20)
        #expect(MemoryLayout<RecordFields>.size <= 45, "\(MemoryLayout<RecordFields>.size)")
        #expect(MemoryLayout<LayerRecord>.stride <= 80, "\(MemoryLayout<LayerRecord>.stride)")
        #expect(MemoryLayout<LayerRecord?>.stride == MemoryLayout<LayerRecord>.stride)
    }

    @Test func aFlatSightingBuildsItsFeature() throws {
        let record = try LayerRecord(json: .object(Self.sighting), kind: .sightings, layer: "test", index: 0)
        #expect(record.idKey == "s7")
        #expect(record.idJSON == "s7")
        #expect(record.coordinate == Coordinate(longitude: 126.9, latitude: 37.5))
        let observedAt = try Timestamp.parse("2024-02-29T23:30:00+09:00")
        #expect(record.fields == .sighting(species: "Grus monacha", count: 3, observedAt: observedAt))
        // Kind fields first in schema order, then the free-form members in their order.
        #expect(record.feature.jsonString == #"{"type":"Feature","id":"s7","geometry":{"type":"Point","coordinates":[126.9,37.5]},"#
                + #""properties":{"species":"Grus monacha","count":3,"observed_at":"2024-02-29T23:30:00+09:00","observer_id":"obs-1","site":"순천만","visit":2}}"#)
    }

    @Test func aGeoJSONFeatureIsKeptAsGiven() throws {
        let text = #"{"type":"Feature","id":"s7","bbox":[1,2,1,2],"geometry":{"type":"Point","coordinates":[126.9,37.5,12]},"#
            + #""properties":{"observer_id":"obs-1","count":3,"nested":{"b":[1,null,"x"],"a":true},"species":"Grus monacha","#
            + #""observed_at":"2024-02-29T23:30:00+09:00"}}"#
        let json = try JSONValue.parse(text)
        let record = try LayerRecord(json: json, kind: .sightings, layer: "test", index: 0)
        #expect(record.feature.jsonString == text)
        // Kept as the text answers write, and its properties as a value for tiles.
        #expect(String(decoding: record.featureText, as: UTF8.self) == text)
        #expect(record.properties == json["properties"])
        #expect(record.coordinate == Coordinate(longitude: 126.9, latitude: 37.5))
        guard case let .sighting(species, count, observedAt) = record.fields else {
            Issue.record("not a sighting: \(record.fields)")
            return
        }
        #expect(species == "Grus monacha" && count == 3 && observedAt.epochSeconds == 1_709_217_000)
    }

    @Test func aStoredRecordKeepsTheRecordsText() throws {
        let record = try LayerRecord(json: .object(Self.sighting), kind: .sightings, layer: "test", index: 0)
        let stored = StoredRecord(record)
        #expect(stored.idKey == record.idKey && Array(stored.featureText) == record.featureText)
        let again = try LayerRecord(json: try stored.feature(layer: "test"), kind: .sightings, layer: "test", index: 0,
                                    text: Array(stored.featureText))
        #expect(again == record)
        let broken = StoredRecord(idKey: "x", featureText: Array(#"{"type":"#.utf8))
        do {
            _ = try broken.feature(layer: "birds")
            Issue.record("a truncated stored feature parsed")
        } catch {
            guard case let .storageUnavailable(reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(reason == #"a stored feature of layer "birds" is not valid JSON"#)
        }
    }

    @Test func aFlatRecordsFeatureReadsBackAsTheSameRecord() throws {
        for (object, kind) in [(Self.sighting, LayerKind.sightings), (Self.place, .places), (Self.station, .stations)] {
            let flat = try LayerRecord(json: .object(object), kind: kind, layer: "test", index: 0)
            let geoJSON = try LayerRecord(json: flat.feature, kind: kind, layer: "test", index: 0)
            #expect(geoJSON == flat)
        }
    }

    @Test func placesAndStations() throws {
        let place = try LayerRecord(json: .object(Self.place), kind: .places, layer: "test", index: 0)
        #expect(place.fields == .place(name: "부산 카페 1", category: "cafe", dwellMinutes: 30))
        #expect(place.idKey == "#12" && place.idJSON == 12)
        for dwell: JSONValue? in [nil, .null] {
            let record = try LayerRecord(json: Self.changing(Self.place, "dwell_minutes", to: dwell),
                                         kind: .places, layer: "test", index: 0)
            #expect(record.fields == .place(name: "부산 카페 1", category: "cafe", dwellMinutes: nil))
            #expect(record.feature["properties"] == ["name": "부산 카페 1", "category": "cafe"])
        }
        let station = try LayerRecord(json: .object(Self.station), kind: .stations, layer: "test", index: 0)
        #expect(station.fields == .station(name: "서울", lines: ["KTX", "SRT"]))
    }

    /// A flat place may give its `opening_hours` beside its fields (docs/LIVE.md lists it
    /// with them): it is kept among the properties, where a GeoJSON Feature has it. Given
    /// twice, or not as a string, it is refused; other kinds have no such member.
    @Test func aFlatPlacesOpeningHoursAreAmongItsProperties() throws {
        let hours: JSONValue = "Mo-Su 07:00-23:00"
        let record = try LayerRecord(json: Self.changing(Self.place, "opening_hours", to: hours), kind: .places,
                                     layer: "test", index: 0)
        #expect(record.feature["properties"]?["opening_hours"] == hours)
        #expect(record.fields == .place(name: "부산 카페 1", category: "cafe", dwellMinutes: 30))
        var both = Self.place
        both["opening_hours"] = hours
        both["properties"] = ["opening_hours": "24/7"]
        #expect(Self.rejection(.object(both), .places)
                == Self.invalid("12", "properties.opening_hours",
                                "is given twice: beside the record's fields and under \"properties\""))
        #expect(Self.rejection(Self.changing(Self.place, "opening_hours", to: 24), .places)
                == Self.invalid("12", "opening_hours", "must be a string (OpenStreetMap's opening_hours syntax), got 24"))
        #expect(Self.rejection(Self.changing(Self.station, "opening_hours", to: hours), .stations)?.field == "opening_hours")
    }

    @Test func pointsMayLackAnIdAndProperties() throws {
        let flat = try LayerRecord(json: ["lon": 0, "lat": 0], kind: .points, layer: "test", index: 0)
        #expect(flat.idKey == "" && flat.idJSON == .null && flat.fields == .point)
        #expect(flat.feature == ["type": "Feature", "geometry": ["type": "Point", "coordinates": [0, 0]], "properties": [:]])
        let feature: JSONValue = ["type": "Feature", "id": nil, "geometry": ["type": "Point", "coordinates": [-180, -90]],
                                  "properties": nil]
        let geoJSON = try LayerRecord(json: feature, kind: .points, layer: "test", index: 0)
        #expect(geoJSON.idKey == "" && geoJSON.feature == feature)
        #expect(flat.properties == [:] && geoJSON.properties == .null)
        // Fields of other kinds are free-form here.
        let free = try LayerRecord(json: ["id": 1, "lon": 180, "lat": 90, "properties": ["count": "many", "name": 5]],
                                   kind: .points, layer: "test", index: 0)
        #expect(free.feature["properties"] == ["count": "many", "name": 5])
    }

    // MARK: Ids

    @Test func stringAndIntegerIdsNeverShareAKey() {
        #expect(LayerRecord.idKey(of: "7") == "7")
        #expect(LayerRecord.idKey(of: 7) == "#7")
        #expect(LayerRecord.idKey(of: 7.0) == "#7")
        #expect(LayerRecord.idKey(of: "#7") == "##7")
        #expect(LayerRecord.idKey(of: "##7") == "###7")
        #expect(LayerRecord.idKey(of: -3) == "#-3")
        #expect(LayerRecord.idKey(of: .number(-0.0)) == "#0")
        #expect(LayerRecord.idKey(of: .number(9_007_199_254_740_992)) == "#9007199254740992")
        #expect(LayerRecord.idKey(of: .number(-9_007_199_254_740_992)) == "#-9007199254740992")
        #expect(LayerRecord.idKey(of: .number(9_007_199_254_740_994)) == nil)
        #expect(LayerRecord.idKey(of: 1.5) == nil)
        #expect(LayerRecord.idKey(of: "") == nil)
        #expect(LayerRecord.idKey(of: true) == nil)
        #expect(LayerRecord.idKey(of: nil) == nil)
        #expect(LayerRecord.idKey(of: ["a"]) == nil)
        let keys = ["7", 7, "#7", "##7", "#-3", -3, "-3"].compactMap { LayerRecord.idKey(of: $0) }
        #expect(Set(keys).count == 7)
    }

    @Test func theIdReadsBackAsGiven() throws {
        let ids: [JSONValue] = ["7", 7, "#7", "##7", "#-3", -3, "-3", "#", "s1", "#x#", "관측-1",
                                .number(9_007_199_254_740_992), .number(-9_007_199_254_740_992)]
        for id in ids {
            let record = try LayerRecord(json: ["id": id, "lon": 127, "lat": 37, "name": "역", "lines": ["1"]],
                                         kind: .stations, layer: "test", index: 0)
            #expect(record.idJSON == id && record.idJSON.jsonString == id.jsonString, "\(id)")
            #expect(record.feature["id"] == id)
        }
        let unnamed = try LayerRecord(json: ["lon": 127, "lat": 37], kind: .points, layer: "test", index: 0)
        #expect(unnamed.idJSON == .null)
    }

    @Test func theOwnerAndNoteAreReadFromTheProperties() throws {
        let flat = try LayerRecord(json: ["id": "s1", "lon": 127, "lat": 37, "species": "Grus japonensis", "count": 2,
                                          "observed_at": "2025-01-05T07:10:00+09:00", "observer_id": "u1",
                                          "properties": ["note": "by the river"]],
                                   kind: .sightings, layer: "test", index: 0)
        #expect(flat.observerID == "u1")
        #expect(flat.properties == ["species": "Grus japonensis", "count": 2,
                                    "observed_at": "2025-01-05T07:10:00+09:00", "observer_id": "u1", "note": "by the river"])
        let withheld = flat.withholdingNote()
        #expect(withheld.properties["note"] == nil && withheld.observerID == "u1")
        #expect(withheld.ownerFeatureText == flat.featureText)
        let geoJSON = try LayerRecord(json: ["type": "Feature", "id": "s2",
                                             "geometry": ["type": "Point", "coordinates": [127, 37]],
                                             "properties": ["species": "Grus japonensis", "count": 1,
                                                            "observed_at": "2025-01-05T07:10:00Z"]],
                                      kind: .sightings, layer: "test", index: 0)
        #expect(geoJSON.observerID == nil)
        #expect(geoJSON.withholdingNote() == geoJSON)
    }

    // MARK: Errors, field by field

    @Test func everySightingFieldIsChecked() {
        let id = #""s7""#
        let cases: [(String, JSONValue?, EngineError)] = [
            ("id", nil, Self.invalid(nil, "id", "is missing")),
            ("id", "", Self.invalid(nil, "id", #"must be a non-empty string or an integer within ±2^53, got """#)),
            ("id", 1.5, Self.invalid(nil, "id", "must be a non-empty string or an integer within ±2^53, got 1.5")),
            ("id", .number(9_007_199_254_740_994),
             Self.invalid(nil, "id", "must be a non-empty string or an integer within ±2^53, got 9007199254740994")),
            ("id", true, Self.invalid(nil, "id", "must be a non-empty string or an integer within ±2^53, got true")),
            ("id", nil as JSONValue, Self.invalid(nil, "id", "must be a non-empty string or an integer within ±2^53, got null")),
            ("lon", nil, Self.invalid(id, "lon", "is missing")),
            ("lon", "126.9", Self.invalid(id, "lon", #"must be a number within -180...180, got "126.9""#)),
            ("lon", 180.5, Self.invalid(id, "lon", "must be a number within -180...180, got 180.5")),
            ("lon", .number(.nan), Self.invalid(id, "lon", "must be a number within -180...180, got nan")),
            ("lat", -90.01, Self.invalid(id, "lat", "must be a number within -90...90, got -90.01")),
            ("lat", .number(.infinity), Self.invalid(id, "lat", "must be a number within -90...90, got inf")),
            ("species", nil, Self.invalid(id, "species", "is missing")),
            ("species", "", Self.invalid(id, "species", #"must be a non-empty string, got """#)),
            ("species", ["Grus"], Self.invalid(id, "species", "must be a non-empty string, got an array")),
            ("count", nil, Self.invalid(id, "count", "is missing")),
            ("count", 0, Self.invalid(id, "count", "must be an integer >= 1, got 0")),
            ("count", -2, Self.invalid(id, "count", "must be an integer >= 1, got -2")),
            ("count", 2.5, Self.invalid(id, "count", "must be an integer >= 1, got 2.5")),
            ("count", "3", Self.invalid(id, "count", #"must be an integer >= 1, got "3""#)),
            ("count", 1_000_000_001, Self.invalid(id, "count", "must be an integer <= 1000000000, got 1000000001")),
            ("count", 1e20, Self.invalid(id, "count", "must be an integer <= 1000000000, got 100000000000000000000")),
            ("observed_at", nil, Self.invalid(id, "observed_at", "is missing")),
            ("observed_at", 1_709_217_000,
             Self.invalid(id, "observed_at", "must be an RFC 3339 date-time string, got 1709217000")),
            ("observed_at", "2024-02-29T23:30:00",
             Self.invalid(id, "observed_at", #""2024-02-29T23:30:00" has no UTC offset (add Z or +HH:MM)"#)),
            ("observed_at", "2024-02-30T23:30:00Z",
             Self.invalid(id, "observed_at", #""2024-02-30T23:30:00Z" has day 30, outside 01...29 for month 2 of year 2024"#)),
            ("properties", 5, Self.invalid(id, "properties", "must be an object or null, got 5")),
            ("properties", ["count": 2],
             Self.invalid(id, "properties.count", "has the name of a field of the record; give it another name")),
            ("specie", "Grus grus", Self.invalid(id, "specie",
                                                 #"is not a field of a sightings record; free-form members go under "properties""#)),
            ("type", "Sighting", Self.invalid(nil, "type", #"must be "Feature" (or absent for a flat record), got "Sighting""#)),
        ]
        for (field, value, expected) in cases {
            let json = Self.changing(Self.sighting, field, to: value)
            #expect(Self.rejection(json, .sightings) == expected, "\(field): \(value.map(\.jsonString) ?? "absent")")
        }
        #expect(Self.rejection(.array([]), .sightings)
                == Self.invalid(nil, "record", "must be a JSON object (a GeoJSON Feature or a flat record), got []"))
    }

    @Test func everyPlaceFieldIsChecked() {
        let id = "12"
        let cases: [(String, JSONValue?, EngineError)] = [
            ("name", nil, Self.invalid(id, "name", "is missing")),
            ("name", 5, Self.invalid(id, "name", "must be a non-empty string, got 5")),
            ("category", "", Self.invalid(id, "category", #"must be a non-empty string, got """#)),
            ("category", nil, Self.invalid(id, "category", "is missing")),
            ("dwell_minutes", -1, Self.invalid(id, "dwell_minutes", "must be a number of minutes within 0...1440, got -1")),
            ("dwell_minutes", 1440.5, Self.invalid(id, "dwell_minutes", "must be a number of minutes within 0...1440, got 1440.5")),
            ("dwell_minutes", "30", Self.invalid(id, "dwell_minutes", #"must be a number of minutes within 0...1440, got "30""#)),
            ("properties", ["dwell_minutes": 5],
             Self.invalid(id, "properties.dwell_minutes", "has the name of a field of the record; give it another name")),
            ("lines", ["KTX"], Self.invalid(id, "lines", #"is not a field of a places record; free-form members go under "properties""#)),
        ]
        for (field, value, expected) in cases {
            #expect(Self.rejection(Self.changing(Self.place, field, to: value), .places) == expected, "\(field)")
        }
        #expect(Self.rejection(Self.changing(Self.place, "dwell_minutes", to: 1440), .places) == nil)
    }

    @Test func everyStationFieldIsChecked() {
        let id = #""seoul""#
        let cases: [(String, JSONValue?, EngineError)] = [
            ("name", "", Self.invalid(id, "name", #"must be a non-empty string, got """#)),
            ("lines", nil, Self.invalid(id, "lines", "is missing")),
            ("lines", [], Self.invalid(id, "lines", "must be a non-empty array of non-empty strings, got []")),
            ("lines", "KTX", Self.invalid(id, "lines", #"must be a non-empty array of non-empty strings, got "KTX""#)),
            ("lines", ["KTX", ""], Self.invalid(id, "lines", #"element 1 must be a non-empty string, got """#)),
            ("lines", ["KTX", "SRT", 3], Self.invalid(id, "lines", "element 2 must be a non-empty string, got 3")),
        ]
        for (field, value, expected) in cases {
            #expect(Self.rejection(Self.changing(Self.station, field, to: value), .stations) == expected, "\(field)")
        }
    }

    @Test func geoJSONStructureIsChecked() throws {
        let valid: JSONObject = ["type": "Feature", "id": "seoul", "geometry": ["type": "Point", "coordinates": [126.97, 37.55]],
                                 "properties": ["name": "서울", "lines": ["KTX"]]]
        let id = #""seoul""#
        let cases: [(String, JSONValue?, EngineError)] = [
            ("type", "feature", Self.invalid(nil, "type", #"must be "Feature" (or absent for a flat record), got "feature""#)),
            ("geometry", nil, Self.invalid(id, "geometry", "is missing")),
            ("geometry", ["type": "LineString", "coordinates": [[0, 0], [1, 1]]],
             Self.invalid(id, "geometry", #"must be a Point geometry, got "LineString""#)),
            ("geometry", [1, 2], Self.invalid(id, "geometry", "must be a Point geometry, got an array")),
            ("geometry", ["type": "Point", "coordinates": [126.97]],
             Self.invalid(id, "geometry.coordinates", "must be [lon, lat] or [lon, lat, altitude] numbers, got an array")),
            ("geometry", ["type": "Point", "coordinates": ["126.97", 37.55]],
             Self.invalid(id, "geometry.coordinates", "must be [lon, lat] or [lon, lat, altitude] numbers, got an array")),
            ("geometry", ["type": "Point"],
             Self.invalid(id, "geometry.coordinates", "must be [lon, lat] or [lon, lat, altitude] numbers, got null")),
            ("geometry", ["type": "Point", "coordinates": [226.97, 37.55]],
             Self.invalid(id, "lon", "must be a number within -180...180, got 226.97")),
            ("properties", nil, Self.invalid(id, "name", "is missing")),
            ("properties", "서울", Self.invalid(id, "properties", #"must be an object or null, got "서울""#)),
            ("id", 0.5, Self.invalid(nil, "id", "must be a non-empty string or an integer within ±2^53, got 0.5")),
        ]
        for (field, value, expected) in cases {
            #expect(Self.rejection(Self.changing(valid, field, to: value), .stations) == expected, "\(field)")
        }
        // Foreign members are allowed in a Feature, unlike in a flat record.
        #expect(Self.rejection(Self.changing(valid, "title", to: "Seoul Station"), .stations) == nil)
    }

    @Test func theErrorReadsWell() {
        let error = EngineError.invalidRecord(layer: "sightings", index: 3, id: #""s7""#, field: "count",
                                              reason: "must be an integer >= 1, got 0")
        #expect(error.description == #"layer "sightings", record 3 (id "s7"): field "count": must be an integer >= 1, got 0"#)
        #expect(error.code == "invalid_record")
        #expect(error.category == .badRequest)
        #expect(error.field == "count")
        let anonymous = EngineError.invalidRecord(layer: "points", index: 0, id: nil, field: "lat", reason: "is missing")
        #expect(anonymous.description == #"layer "points", record 0: field "lat": is missing"#)
        let long = String(repeating: "a", count: 50)
        #expect(Self.rejection(Self.changing(Self.sighting, "count", to: .string(long)), .sightings)
                == Self.invalid(#""s7""#, "count", "must be an integer >= 1, got \"\(String(repeating: "a", count: 40))…\""))
    }

    // MARK: The sample layers

    static let dataDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Data")

    @Test(arguments: [("sightings", LayerKind.sightings), ("places", .places), ("stations", .stations),
                      ("kr_cities", .places)])
    func everySampleFeatureParses(name: String, kind: LayerKind) throws {
        let url = Self.dataDirectory.appendingPathComponent("\(name).geojson")
        let document = try JSONValue.parse([UInt8](Data(contentsOf: url)))
        let features = try #require(document["features"]?.arrayValue)
        #expect(!features.isEmpty)
        var keys = Set<String>()
        for (index, feature) in features.enumerated() {
            let record = try LayerRecord(json: feature, kind: kind, layer: name, index: index)
            #expect(record.feature == feature)
            keys.insert(record.idKey)
        }
        #expect(keys.count == features.count, "ids are unique")
    }

    // MARK: Features read in place

    /// A feature read in place (``LayerRecord/init(compactFeature:kind:layer:index:maxDepth:)``)
    /// is the record that parsing it gives, text included, or is left to parsing; and
    /// nothing parsing refuses is read. Random features of every kind: valid and invalid
    /// ids, geometries and fields, notes and owners, free-form members, members in any
    /// order, with whitespace and numbers spelt otherwise than JavaScript writes them.
    @Test func aFeatureReadInPlaceIsTheRecordParsingGives() throws {
        var rng = SeededRandom(seed: 0x5EED_0C0D)
        func maybe(_ probability: Double) -> Bool { rng.unit() < probability }
        // The first option, which is valid, half of the time.
        func pick(_ options: [String]) -> String { maybe(0.5) ? options[0] : options.randomElement(using: &rng)! }
        let ids = [#""s1""#, "7", "-7.0", "1.5", #""""#, "null", ##""#1""##, "9007199254740993", "[1]", #""까치-1""#]
        let geometries = [
            #"{"type":"Point","coordinates":[126.9,37.5]}"#, #"{"type":"Point","coordinates":[126.90,37.5,12]}"#,
            #"{"coordinates":[129,35.1],"type":"Point"}"#, #"{"type":"Point","coordinates":[200,37]}"#,
            #"{"type":"Point","coordinates":[126.9]}"#, #"{"type":"Point","coordinates":[126.9,37.5,1,2]}"#,
            #"{"type":"LineString","coordinates":[[1,2],[3,4]]}"#, #"{"type":"Point","coordinates":[1,"2"]}"#,
            "null", #"{"type":"Point","coordinates":[1.27e2,3.7E1],"bbox":[1,2,1,2]}"#, #"[126.9,37.5]"#,
        ]
        let values: [String: [String]] = [
            "species": [#""까치""#, #""""#, "3", #""Grus monacha""#],
            "count": ["3", "0", "1.5", "1000000001", #""3""#, "1e2", "2.0"],
            "observed_at": [#""2025-05-01T06:30:00+09:00""#, #""2025-05-01T06:30:00.5Z""#, #""2025-05-01""#, "20250501"],
            "observer_id": [#""obs-1""#, #""""#, "5", "null"],
            "note": [#""둥지 근처""#, "null", #"{"private":true}"#],
            "name": [#""서울역""#, #""""#, "null"],
            "category": [#""cafe""#, "1"],
            "dwell_minutes": ["30", "1441", "null", #""x""#, "45.50"],
            "lines": [#"["KTX","SRT"]"#, "[]", #"[""]"#, #""KTX""#],
            "site": [#""순천만""#, #""갯벌 \"A\"""#], "visit": ["2.50", "-0"], "tags": [#"["a",{"b":null}]"#],
        ]
        var outcomes = (inPlace: 0, leftToParsing: 0, refused: 0)
        for _ in 0..<3_000 {
            let kind = LayerKind.allCases.randomElement(using: &rng)!
            let space = maybe(0.2) ? " " : ""
            func member(_ key: String, _ value: String) -> String { #""\#(key)":\#(space)\#(value)"# }
            var properties = values.keys.sorted().filter { _ in maybe(0.7) }.map { member($0, pick(values[$0]!)) }
            properties.shuffle(using: &rng)
            var top: [String] = []
            if maybe(0.95) { top.append(member("type", maybe(0.95) ? #""Feature""# : #""Point""#)) }
            if maybe(0.9) { top.append(member("id", pick(ids))) }
            if maybe(0.97) { top.append(member("geometry", pick(geometries))) }
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: break
            case 1: top.append(member("properties", pick(["null", "3", "[]"])))
            default: top.append(member("properties", "{" + properties.joined(separator: ",") + "}"))
            }
            if maybe(0.1) { top.append(member("bbox", "[1,2,3,4]")) }
            top.shuffle(using: &rng)
            let text = Array(("{" + top.joined(separator: ",") + "}").utf8)

            let inPlace = LayerRecord(compactFeature: text[...], kind: kind, layer: "test", index: 3, maxDepth: 62)
            let parsed: LayerRecord?
            do {
                let json = try JSONValue.parse(text[...], maxDepth: 62)
                parsed = try LayerRecord(json: json, kind: kind, layer: "test", index: 3,
                                         text: JSONValue.isWrittenAsEncoded(text[...]) ? text : nil)
            } catch {
                parsed = nil
            }
            if let inPlace {
                outcomes.inPlace += 1
                #expect(inPlace == parsed, "\(kind) \(String(decoding: text, as: UTF8.self))")
            } else if parsed != nil {
                outcomes.leftToParsing += 1
            } else {
                outcomes.refused += 1
            }
        }
        print("features read in place, left to parsing, refused: \(outcomes)")
        #expect(outcomes.inPlace > 300)
        #expect(outcomes.leftToParsing > 40)
        #expect(outcomes.refused > 300)
    }
}

