import Foundation
import GeoProjection
import GeoReachability
import Testing
@testable import GeoCluster
@testable import GeoClusterWire
@testable import GeoClusterEngine

/// `reachable` and `nearby` through the engine, with places set at exact geodesic
/// distances from a station so that every expected number is worked by hand.
///
/// Defaults: normal pace 75 m/min, detour factor 1.5, boarding buffer 10 minutes. Only the
/// worked example uses the default detour factor; the other tests ask for 1.3, the factor
/// their places were set out for (`run(_:_:)`).
struct ReachableTests {
    static let seoul = Coordinate(longitude: 126.9707, latitude: 37.5547)

    /// The point `meters` from Seoul Station along `azimuth` degrees (clockwise from north).
    static func at(_ meters: Double, azimuth: Double = 90) -> Coordinate {
        let point = Geodesic.wgs84.destination(
            from: GeographicPoint(longitudeDegrees: seoul.longitude, latitudeDegrees: seoul.latitude),
            azimuthDegrees: azimuth, distanceMeters: meters)
        return Coordinate(longitude: point.longitudeDegrees, latitude: point.latitudeDegrees)
    }

    static func place(_ id: String, _ coordinate: Coordinate, _ category: String, dwell: Double? = nil) -> JSONValue {
        var object: JSONObject = ["id": .string(id), "lon": .number(coordinate.longitude),
                                  "lat": .number(coordinate.latitude), "name": .string("Place \(id)"),
                                  "category": .string(category)]
        if let dwell { object["dwell_minutes"] = .number(dwell) }
        return .object(object)
    }

    /// The worked example of docs/REACHABILITY.md plus places at the edge of a cafe's reach.
    static func engine() throws -> Engine {
        let records: [JSONValue] = [
            place("cafe-500", at(500), "cafe"),
            place("viewpoint-1200", at(1_200, azimuth: 0), "viewpoint"),
            place("museum-700", at(700, azimuth: 180), "museum"),
            place("park-2000", at(2_000, azimuth: 270), "park"),
            // 75 min: a cafe fits while 2 · d · 1.3 / 75 + 30 + 10 <= 75, so d <= 1009.615 m.
            place("cafe-1009", at(1_009, azimuth: 45), "cafe"),
            place("cafe-1011", at(1_011, azimuth: 135), "cafe"),
            place("quick-100", at(100, azimuth: 300), "cafe", dwell: 5),
        ]
        let places = try LiveLayer(name: "places", kind: .places, records: records.enumerated().map {
            try LayerRecord(json: $0.element, kind: .places, layer: "places", index: $0.offset)
        })
        let station = try LayerRecord(
            json: ["id": "seoul", "lon": .number(seoul.longitude), "lat": .number(seoul.latitude),
                   "name": "Seoul", "lines": ["KTX"]],
            kind: .stations, layer: "stations", index: 0)
        let numbered = try LayerRecord(
            json: ["id": 7, "lon": .number(seoul.longitude), "lat": .number(seoul.latitude),
                   "name": "Seven", "lines": ["KTX"]],
            kind: .stations, layer: "stations", index: 1)
        let stations = try LiveLayer(name: "stations", kind: .stations, records: [station, numbered])
        let radius = try RadiusLayer(name: "radius_places", kind: .points, features: [
            GeoJSON.pointFeature(coordinate: seoul, properties: .object([:]), id: "r1"),
        ])
        return try Engine(entries: [.live(LiveLayerStore(places)), .live(LiveLayerStore(stations)), .radius(radius)])
    }

    /// `reachable` for `fields` from Seoul, with a detour factor of 1.3 unless `fields` gives
    /// one or `defaultDetour` is set.
    static func run(_ engine: Engine, _ fields: JSONObject, defaultDetour: Bool = false) throws -> JSONValue {
        var request: JSONObject = ["op": "reachable", "layer": "places", "station": "seoul"]
        if !defaultDetour { request["detour_factor"] = 1.3 }
        for (key, value) in fields { request[key] = value }
        return try engine.handle(.object(request)).get()
    }

    static func failure(_ engine: Engine, _ request: JSONValue) -> EngineError? {
        if case let .failure(error) = engine.handle(request) { return error }
        return nil
    }

    static func ids(_ list: JSONValue?) -> [String] {
        (list?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    static func item(_ answer: JSONValue, _ id: String, in list: String = "reachable") -> JSONValue? {
        answer[list]?.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    // MARK: The worked example

    @Test func workedExampleFromTheDocumentation() throws {
        let answer = try Self.run(Self.engine(), [
            "departure": "2025-06-01T15:20:00+09:00", "now": "2025-06-01T14:05:00+09:00",
            "include_unreachable": true,
        ], defaultDetour: true)
        #expect(answer["status"] == "ok")
        #expect(answer["remaining_minutes"] == 75)
        // The quick cafe's own 5-minute dwell sets the radius: (75 - 10 - 5) / 2 · 75 / 1.5.
        #expect(answer["search_radius_m"] == 1_500)
        // Most slack first: 56 and 15 minutes.
        #expect(Self.ids(answer["reachable"]) == ["quick-100", "cafe-500"])
        #expect(answer["total"] == 2)

        let cafe = try #require(Self.item(answer, "cafe-500"))
        #expect(cafe["distance_m"] == 750)
        #expect(cafe["straight_line_m"] == 500)
        #expect(cafe["walk_minutes"] == 10)        // 750 / 75
        #expect(cafe["dwell_minutes"] == 30)
        #expect(cafe["slack_minutes"] == 15)       // 75 - (10 + 30 + 10 + 10)
        #expect(cafe["leave_by_minutes"] == 55)    // 75 - 10 - 10
        #expect(cafe["leave_by"] == "2025-06-01T15:00:00+09:00")
        #expect(cafe["category"] == "cafe")
        #expect(cafe["name"] == "Place cafe-500")

        // Nearest first: the museum, the two cafes 1 km out, the viewpoint.
        #expect(Self.ids(answer["unreachable"]) == ["museum-700", "cafe-1009", "cafe-1011", "viewpoint-1200"])
        let museum = try #require(Self.item(answer, "museum-700", in: "unreachable"))
        #expect(museum["reason"] == "not_enough_time")
        #expect(museum["minutes_short"] == 53)     // 14 + 90 + 14 + 10 - 75
        let viewpoint = try #require(Self.item(answer, "viewpoint-1200", in: "unreachable"))
        #expect(viewpoint["distance_m"] == 1_800)
        #expect(viewpoint["minutes_short"] == 3)   // 24 + 20 + 24 + 10 - 75
        #expect(answer["unreachable_total"] == 4)
        #expect(answer["station"]?["id"] == "seoul")
        // At 1.3 (the straight line's factor before it was measured) the viewpoint fitted.
        let at13 = try Self.run(Self.engine(), ["departure": "2025-06-01T15:20:00+09:00", "now": "2025-06-01T14:05:00+09:00"])
        #expect(Self.item(at13, "viewpoint-1200")?["slack_minutes"] == 3.4)  // 75 - (20.8 + 20 + 20.8 + 10)
    }

    @Test func aPartOfNowsSecondIsNeverCountedAsTimeLeft() throws {
        // 14:59:00.5 to 15:20:00 is 20 min 59.5 s: 20 whole minutes, too little time; the
        // fraction dropped towards the past would count 21 and list places.
        let engine = try Self.engine()
        let late = try Self.run(engine, ["departure": "2025-06-01T15:20:00+09:00", "now": "2025-06-01T14:59:00.5+09:00"])
        #expect(late["remaining_minutes"] == 20)
        #expect(late["remaining_seconds"] == 1_259)
        #expect(late["status"] == "too_little_time")
        #expect(late["now"] == "2025-06-01T14:59:01+09:00")
        // 30 min 59.001 s is 30, tight; a fraction of zeros is the second itself.
        let tightKorea = try Self.run(engine, ["departure": "2025-06-01T15:20:00+09:00", "now": "2025-06-01T14:49:00.999+09:00"])
        #expect(tightKorea["remaining_minutes"] == 30)
        #expect(tightKorea["status"] == "tight")
        let zeros = try Self.run(engine, ["departure": "2025-06-01T15:20:00.9+09:00", "now": "2025-06-01T14:49:00.000+09:00"])
        #expect(zeros["remaining_minutes"] == 31)
        #expect(zeros["remaining_seconds"] == 1_860)
    }

    /// Over a network, a place or a start far from the nearest node (walked to in a straight
    /// line for that leg) is marked, as the station is.
    @Test func placesAndStartsOffTheNetworkAreMarked() throws {
        // A street east and west of the station every 50 m, and one node 1.5 km north.
        var nodes = stride(from: -1_000.0, through: 1_000, by: 50).map { Self.at(abs($0), azimuth: $0 < 0 ? 270 : 90) }
        nodes.append(Self.at(1_500, azimuth: 0))
        var edges = (0..<(nodes.count - 2)).map { WalkingNetwork.Edge(from: $0, to: $0 + 1, lengthMeters: 50.01) }
        edges.append(.init(from: 20, to: nodes.count - 1, lengthMeters: 1_500.1))
        let street = try WalkingNetwork(nodes: nodes, edges: edges)
        let base = try Self.engine()
        let engine = try Engine(entries: base.entries, networks: ["street": street])
        let answer = try Self.run(engine, ["remaining_minutes": 120, "travel": "network", "include_unreachable": true,
                                           "limit": 100])
        let all = (answer["reachable"]?.arrayValue ?? []) + (answer["unreachable"]?.arrayValue ?? [])
        func item(_ id: String) -> JSONValue? { all.first { $0["id"]?.stringValue == id } }
        #expect(item("cafe-500")?["off_network"] == nil)
        #expect(item("viewpoint-1200")?["off_network"] == true)   // 300 m from the node to the north
        #expect(item("viewpoint-1200")?["to_network_m"]?.doubleValue.map { (299...301).contains($0) } == true)
        #expect(answer["station_off_network"] == nil)
        #expect(answer["location_off_network"] == nil)
        let start = Self.at(400, azimuth: 0)
        let walking = try Self.run(engine, ["remaining_minutes": 120, "travel": "network",
                                            "lon": .number(start.longitude), "lat": .number(start.latitude)])
        #expect(walking["location_off_network"] == true)
        let route = try engine.handle(["op": "route", "layer": "places", "station": "seoul", "place": "viewpoint-1200",
                                       "remaining_minutes": 120, "travel": "network"]).get()
        #expect(route["place"]?["off_network"] == true)
    }

    @Test func aPlaceJustInAndJustOutOfReach() throws {
        let answer = try Self.run(Self.engine(), ["remaining_minutes": 75, "include_unreachable": true])
        let inside = try #require(Self.item(answer, "cafe-1009"))
        // 2 · 1009 · 1.3 / 75 = 34.979; slack 0.021.
        #expect(inside["slack_minutes"] == 0)
        #expect(inside["leave_by"] == nil, "no clock times without departure and now")
        let outside = try #require(Self.item(answer, "cafe-1011", in: "unreachable"))
        #expect(outside["minutes_short"] == 0.1)   // 35.048 - 35 = 0.048, rounded up
        #expect(outside["distance_m"] == .number((1_011 * 1.3 * 10).rounded(.up) / 10))
    }

    // MARK: Thresholds

    @Test func thresholdsAtExactly20And21And30Minutes() throws {
        let engine = try Self.engine()
        let at20 = try Self.run(engine, ["remaining_minutes": 20])
        #expect(at20["status"] == "too_little_time")
        #expect(at20["reachable"] == [])
        #expect(at20["total"] == 0)
        #expect(at20["reason"]?.stringValue?.contains("more than 20") == true)

        // The quick cafe: 130 m each way = 1.733 min; 1.733 · 2 + 5 + 10 = 18.47.
        let at21 = try Self.run(engine, ["remaining_minutes": 21])
        #expect(at21["status"] == "tight")
        #expect(Self.ids(at21["reachable"]) == ["quick-100"])
        #expect(Self.item(at21, "quick-100")?["slack_minutes"] == 2.5)

        let at30 = try Self.run(engine, ["remaining_minutes": 30])
        #expect(at30["status"] == "tight")
        #expect(Self.item(at30, "quick-100")?["slack_minutes"] == 11.5)

        let at31 = try Self.run(engine, ["remaining_minutes": 31])
        #expect(at31["status"] == "ok")

        let custom = try Self.run(engine, ["remaining_minutes": 30, "min_minutes": 30, "tight_minutes": 45])
        #expect(custom["status"] == "too_little_time")
    }

    // MARK: Overrides

    @Test func dwellAndBufferOverrides() throws {
        let engine = try Self.engine()
        // A 10-minute cafe visit: 1011 m is now 35.05 + 10 + 10 = 55.05 <= 75.
        let shortCafe = try Self.run(engine, ["remaining_minutes": 75, "dwell_minutes": ["cafe": 10]])
        #expect(Self.item(shortCafe, "cafe-1011")?["dwell_minutes"] == 10)
        // The request's dwell wins over the place's own, also when it is longer.
        #expect(Self.item(shortCafe, "quick-100")?["dwell_minutes"] == 10)
        // Without one, the place's own dwell wins over its category's.
        #expect(Self.item(try Self.run(engine, ["remaining_minutes": 75]), "quick-100")?["dwell_minutes"] == 5)
        // The same in the HTTP form.
        let listed = try Self.run(engine, ["remaining_minutes": 75, "dwell_minutes": ["cafe:10"]])
        #expect(Self.ids(listed["reachable"]) == Self.ids(shortCafe["reachable"]))

        let smallBuffer = try Self.run(engine, ["remaining_minutes": 75, "boarding_buffer_minutes": 5])
        #expect(Self.item(smallBuffer, "cafe-1011") != nil)
        #expect(Self.item(smallBuffer, "cafe-1011")?["slack_minutes"] == 4.9)  // 5 - 0.048
        let bigBuffer = try Self.run(engine, ["remaining_minutes": 75, "boarding_buffer_minutes": 15])
        #expect(Self.item(bigBuffer, "cafe-1009") == nil)

        let fast = try Self.run(engine, ["remaining_minutes": 75, "pace": "fast", "detour_factor": 1])
        #expect(Self.item(fast, "cafe-500")?["walk_minutes"] == 5.6)  // 500 / 90 = 5.56
        let numeric = try Self.run(engine, ["remaining_minutes": 75, "pace": "5.4", "detour_factor": 1])
        #expect(numeric["reachable"] == fast["reachable"])
    }

    @Test func sortPaginationAndCategory() throws {
        let engine = try Self.engine()
        let byDistance = try Self.run(engine, ["remaining_minutes": 75, "sort": "distance"])
        #expect(Self.ids(byDistance["reachable"]) == ["quick-100", "cafe-500", "cafe-1009", "viewpoint-1200"])
        let page = try Self.run(engine, ["remaining_minutes": 75, "sort": "distance", "limit": 2, "offset": 1])
        #expect(Self.ids(page["reachable"]) == ["cafe-500", "cafe-1009"])
        #expect(page["total"] == 4)
        let viewpoints = try Self.run(engine, ["remaining_minutes": 75, "category": "viewpoint"])
        #expect(Self.ids(viewpoints["reachable"]) == ["viewpoint-1200"])
        let fromLocation = try Self.run(engine, ["station": nil, "lon": .number(Self.seoul.longitude),
                                                 "lat": .number(Self.seoul.latitude), "remaining_minutes": 75])
        let fromStation = try Self.run(engine, ["remaining_minutes": 75])
        #expect(fromLocation["reachable"] == fromStation["reachable"])
        #expect(fromLocation["location"]?["lon"] == .number(Self.seoul.longitude))
        let numbered = try Self.run(engine, ["station": "7", "remaining_minutes": 75])
        #expect(numbered["station"]?["id"] == 7)
    }

    // MARK: Clustered for a map view

    /// Sum of `point_count` (1 for a place) over a FeatureCollection.
    static func pointTotal(_ collection: JSONValue?) -> Int {
        (collection?["features"]?.arrayValue ?? []).reduce(0) { total, feature in
            total + (feature["properties"]?["point_count"]?.doubleValue.map { Int($0) } ?? 1)
        }
    }

    @Test func reachablePlacesClusteredForAViewKeepTheirCountsAndSlack() throws {
        let engine = try Self.engine()
        let world: JSONValue = [-180, -85, 180, 85]
        let listed = try Self.run(engine, ["remaining_minutes": 75])
        let slacks = (listed["reachable"]?.arrayValue ?? []).compactMap { $0["slack_minutes"]?.doubleValue }
        #expect(slacks.count == 4)

        // Zoomed out: all four reachable places in one cluster; the two out of reach are
        // not counted, and the cluster tells the least and most slack of its places.
        let far = try Self.run(engine, ["remaining_minutes": 75, "bbox": world, "zoom": 3, "limit": 1])
        let features = try #require(far["clusters"]?["features"]?.arrayValue)
        #expect(features.count == 1)
        let cluster = try #require(features.first?["properties"])
        #expect(cluster["cluster"] == true)
        #expect(cluster["point_count"] == 4)
        #expect(cluster["categories"] == ["cafe": 3, "viewpoint": 1])
        #expect(cluster["min_slack_minutes"]?.doubleValue == slacks.min())
        #expect(cluster["max_slack_minutes"]?.doubleValue == slacks.max())
        let expansion = try #require(cluster["expansion_zoom"]?.doubleValue)
        #expect(expansion > 3)
        #expect(far["reachable"]?.arrayValue?.count == 1, "the page stays a page; the clusters cover every place")

        // Close in: every reachable place alone, with the slack and leave-by of the list.
        let near = try Self.run(engine, ["departure": "2025-06-01T15:20:00+09:00", "now": "2025-06-01T14:05:00+09:00",
                                         "bbox": [126.9, 37.5, 127.05, 37.6], "zoom": 17])
        let points = try #require(near["clusters"]?["features"]?.arrayValue)
        #expect(Set(points.compactMap { $0["id"]?.stringValue }) == Set(Self.ids(near["reachable"])))
        for point in points {
            let id = try #require(point["id"]?.stringValue)
            let item = try #require(Self.item(near, id))
            #expect(point["properties"]?["slack_minutes"] == item["slack_minutes"])
            #expect(point["properties"]?["leave_by"] == item["leave_by"])
            #expect(point["properties"]?["cluster"] == nil)
        }

        // Every zoom between: the counts add up to the places that fit.
        for zoom in 0...18 {
            let answer = try Self.run(engine, ["remaining_minutes": 75, "bbox": world, "zoom": .number(Double(zoom))])
            #expect(Self.pointTotal(answer["clusters"]) == 4, "zoom \(zoom)")
        }
    }

    @Test func tooLittleTimeClustersNothingAndAViewNeedsBothFields() throws {
        let engine = try Self.engine()
        let short = try Self.run(engine, ["remaining_minutes": 20, "bbox": [-180, -85, 180, 85], "zoom": 5])
        #expect(short["clusters"]?["features"] == [])
        let withoutView = try Self.run(engine, ["remaining_minutes": 75])
        #expect(withoutView["clusters"] == nil)

        func error(_ fields: JSONObject) -> (String?, String?) {
            var request: JSONObject = ["op": "reachable", "layer": "places", "station": "seoul", "remaining_minutes": 60]
            for (key, value) in fields { request[key] = value }
            let failure = Self.failure(engine, .object(request))
            return (failure?.code, failure?.field)
        }
        #expect(error(["bbox": [126, 37, 128, 38]]) == ("invalid_field", "zoom"))
        #expect(error(["zoom": 12]) == ("invalid_field", "bbox"))
        #expect(error(["bbox": [126, 39, 128, 38], "zoom": 12]).1 == "bbox")
    }

    // MARK: Errors

    @Test func badInputsNameTheirField() throws {
        let engine = try Self.engine()
        func error(_ fields: JSONObject) -> (String?, String?) {
            var request: JSONObject = ["op": "reachable", "layer": "places", "station": "seoul", "remaining_minutes": 60]
            for (key, value) in fields { request[key] = value }
            let failure = Self.failure(engine, .object(request))
            return (failure?.code, failure?.field)
        }
        let past = error(["remaining_minutes": nil, "departure": "2025-06-01T14:00:00+09:00",
                          "now": "2025-06-01T14:05:00+09:00"])
        #expect(past == ("invalid_remaining_time", "departure"))
        #expect(error(["remaining_minutes": -1]) == ("invalid_remaining_time", "remaining_minutes"))
        #expect(error(["station": "nowhere"]) == ("unknown_station", "station"))
        #expect(error(["layer": "stations"]) == ("wrong_layer_kind", "layer"))
        #expect(error(["stations_layer": "places"]) == ("wrong_layer_kind", "stations_layer"))
        #expect(error(["layer": "radius_places"]) == ("wrong_layer_kind", "layer"))
        #expect(error(["layer": "nope"]) == ("unknown_layer", "layer"))
        #expect(error(["pace": 0.5]) == ("invalid_walking_speed", "pace"))
        #expect(error(["pace": 11]) == ("invalid_walking_speed", "pace"))
        #expect(error(["pace": "sprint"]) == ("unknown_walking_pace", "pace"))
        let noOffset = error(["remaining_minutes": nil, "departure": "2025-06-01T15:00:00",
                              "now": "2025-06-01T14:05:00+09:00"])
        #expect(noOffset == ("invalid_field", "departure"))
        // `lon`/`lat` with a station is a walk from there (TravelFlowTests); out of range is an error.
        #expect(error(["lon": 126.9, "lat": 95]) == ("invalid_field", "lat"))
        #expect(error(["station": nil]) == ("invalid_field", "station"))
        #expect(error(["departure": "2025-06-01T15:00:00Z"]) == ("invalid_field", "remaining_minutes"))
        // Without `now`, the server's clock: this departure has passed.
        #expect(error(["remaining_minutes": nil, "departure": "2025-06-01T15:00:00Z"]) == ("invalid_remaining_time", "departure"))
        #expect(error(["detour_factor": 0.5]) == ("invalid_reachability_parameter", "detour_factor"))
        #expect(error(["boarding_buffer_minutes": 500]) == ("invalid_reachability_parameter", "boarding_buffer_minutes"))
        #expect(error(["dwell_minutes": ["cafe": -5]]) == ("invalid_reachability_parameter", "dwell_minutes.cafe"))
        #expect(error(["tight_minutes": 10]) == ("invalid_reachability_parameter", "tight_minutes"))
        #expect(error(["travel": "network"]) == ("unknown_network", "travel"))
        #expect(error(["travel": "bus"]) == ("invalid_field", "travel"))
        #expect(error(["sort": "name"]) == ("invalid_field", "sort"))
        #expect(error(["include_unreachable": "yes"]) == ("invalid_field", "include_unreachable"))
    }

    // MARK: Nearby

    @Test func nearbyByRadiusAndByCount() throws {
        let engine = try Self.engine()
        let within = try engine.handle(["op": "nearby", "layer": "places", "lon": .number(Self.seoul.longitude),
                                        "lat": .number(Self.seoul.latitude), "radius_m": 1_010]).get()
        #expect(Self.ids(within["features"]) == ["quick-100", "cafe-500", "museum-700", "cafe-1009"])
        let first = try #require(within["features"]?[1])
        #expect(first["distance_m"] == 500)
        #expect(first["properties"]?["distance_m"] == nil, "the stored properties stay as they are")
        #expect(within["count"] == 4)

        let nearest = try engine.handle(["op": "nearby", "layer": "places", "lon": .number(Self.seoul.longitude),
                                         "lat": .number(Self.seoul.latitude), "k": 2, "category": "cafe"]).get()
        #expect(Self.ids(nearest["features"]) == ["quick-100", "cafe-500"])
        let capped = try engine.handle(["op": "nearby", "layer": "places", "lon": .number(Self.seoul.longitude),
                                        "lat": .number(Self.seoul.latitude), "k": 10, "radius_m": 600]).get()
        #expect(Self.ids(capped["features"]) == ["quick-100", "cafe-500"])

        func code(_ request: JSONValue) -> String? { Self.failure(engine, request)?.code }
        #expect(code(["op": "nearby", "layer": "radius_places", "lon": 0, "lat": 0, "k": 1]) == "not_live_layer")
        #expect(code(["op": "nearby", "layer": "places", "lon": 0, "lat": 0]) == "invalid_field")
        #expect(code(["op": "nearby", "layer": "places", "lon": 0, "lat": 0, "radius_m": 0]) == "invalid_field")
        #expect(code(["op": "nearby", "layer": "places", "lon": 0, "lat": 0, "radius_m": 100_001]) == "invalid_field")
        #expect(code(["op": "nearby", "layer": "places", "lon": 0, "lat": 0, "k": 1_001]) == "invalid_field")
        #expect(code(["op": "nearby", "layer": "places", "lon": 0, "lat": 0, "k": 1, "species": "x"]) == "invalid_filter")
    }

    @Test func nearbyMatchesABruteForceScanOfASeededLayer() throws {
        var state: UInt64 = 2_024
        func unit() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(UInt64(1) << 53)
        }
        var records: [LayerRecord] = []
        for i in 0..<2_000 {
            let coordinate = Coordinate(longitude: 126.9 + unit() * 0.2, latitude: 37.45 + unit() * 0.2)
            records.append(try LayerRecord(json: Self.place("p\(i)", coordinate, unit() < 0.5 ? "cafe" : "park"),
                                           kind: .places, layer: "random", index: i))
        }
        let engine = try Engine(entries: [.live(LiveLayerStore(LiveLayer(name: "random", kind: .places, records: records)))])
        let center = Coordinate(longitude: 127.0, latitude: 37.55)
        let exact = records.map { (id: $0.idJSON.stringValue ?? "", category: $0.fields,
                                   meters: Engine.geodesicMeters(center, $0.coordinate)) }
            .sorted { $0.meters != $1.meters ? $0.meters < $1.meters : $0.id < $1.id }
        for radius in [150.0, 1_000, 4_000] {
            let answer = try engine.handle(["op": "nearby", "layer": "random", "lon": 127.0, "lat": 37.55,
                                            "radius_m": .number(radius)]).get()
            #expect(Self.ids(answer["features"]) == exact.filter { $0.meters <= radius }.map(\.id))
        }
        for k in [1, 10, 250] {
            let answer = try engine.handle(["op": "nearby", "layer": "random", "lon": 127.0, "lat": 37.55,
                                            "k": .number(Double(k))]).get()
            #expect(Self.ids(answer["features"]) == exact.prefix(k).map(\.id))
            let distances = (answer["features"]?.arrayValue ?? []).compactMap { $0["distance_m"]?.doubleValue }
            #expect(distances == exact.prefix(k).map { ($0.meters * 100).rounded() / 100 })
        }
    }

    // MARK: JSON lines

    @Test func reachableThroughTheLineProtocol() throws {
        let lineProtocol = LineProtocol(engine: try Self.engine())
        var output: [UInt8] = []
        let lines = [
            #"{"id":"r1","op":"reachable","layer":"places","station":"seoul","departure":"2025-06-01T15:20:00+09:00","now":"2025-06-01T14:05:00+09:00","limit":1,"detour_factor":1.3}"#,
            #"{"id":"r2","op":"reachable","layer":"places","station":"seoul","departure":"2025-06-01T15:20:00","now":"2025-06-01T14:05:00+09:00"}"#,
        ]
        for (i, line) in lines.enumerated() {
            lineProtocol.respond(to: Array(line.utf8)[...], lineNumber: i + 1, into: &output)
        }
        let answers = try output.split(separator: 0x0A).map { try JSONValue.parse(Array($0)) }
        #expect(answers.count == 2)
        #expect(answers[0]["id"] == "r1")
        #expect(answers[0]["ok"] == true)
        #expect(Self.ids(answers[0]["result"]?["reachable"]) == ["quick-100"])
        #expect(answers[0]["result"]?["total"] == 4)
        #expect(answers[1]["ok"] == false)
        #expect(answers[1]["error"]?["field"] == "departure")
        #expect(answers[1]["error"]?["line"] == 2)
    }
}

/// The shipped Helsinki sample: places, stations and the walking network loaded from Data/
/// as the executable loads them.
struct HelsinkiReachableTests {
    static let dataDirectory = String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        .prepending("/") + "/Data"

    static func engine() throws -> Engine {
        try Engine(entries: LayerCatalog.load(directory: dataDirectory),
                   networks: LayerCatalog.loadNetworks(directory: dataDirectory))
    }

    @Test func theManifestsNetworkLoads() throws {
        let networks = try LayerCatalog.loadNetworks(directory: Self.dataDirectory)
        #expect(networks.keys.sorted() == ["helsinki_walk"])
        #expect(networks["helsinki_walk"]?.nodeCount == 6_032)
    }

    /// A place's route is the walk its answer counts: its length is the distance there
    /// and back, from the station and from a traveller already walking; `route` answers
    /// one place with the same figures as `reachable`, and its route even when it does not fit.
    @Test func routesAreAsLongAsTheWalksTheyDraw() throws {
        let engine = try Self.engine()
        func length(_ route: JSONValue?) throws -> Double {
            let points = try #require(route?["coordinates"]?.arrayValue).map { point in
                GeographicPoint(longitudeDegrees: point[0]?.doubleValue ?? .nan, latitudeDegrees: point[1]?.doubleValue ?? .nan)
            }
            #expect(route?["type"] == "LineString" && points.count >= 3)
            return zip(points, points.dropFirst()).reduce(0) { $0 + Geodesic.wgs84.distanceMeters(from: $1.0, to: $1.1) }
        }
        let base: JSONObject = ["op": "reachable", "layer": "helsinki_places", "stations_layer": "helsinki_stations",
                                "station": "helsinki-central", "remaining_minutes": 60, "limit": 1_000,
                                "travel": "network", "include": ["route"]]
        let fromStation = try engine.handle(.object(base)).get()["reachable"]?.arrayValue ?? []
        #expect(fromStation.count > 100)
        for place in fromStation {
            let walk = 2 * (try #require(place["distance_m"]?.doubleValue))
            let drawn = try length(place["route"])
            // The answer rounds up to 0.1 m each way; edges are rounded up to the centimetre.
            #expect(drawn <= walk + 0.01 && drawn >= walk * 0.999 - 0.3, "\(place["id"] ?? .null): \(drawn) m drawn, \(walk) m walked")
        }
        var walking = base
        (walking["lon"], walking["lat"]) = (24.9384, 60.1699)
        let fromHere = try engine.handle(.object(walking)).get()["reachable"]?.arrayValue ?? []
        #expect(fromHere.count > 50)
        for place in fromHere {
            let walk = (try #require(place["distance_out_m"]?.doubleValue)) + (try #require(place["distance_back_m"]?.doubleValue))
            let drawn = try length(place["route"])
            #expect(drawn <= walk + 0.01 && drawn >= walk * 0.999 - 0.3, "\(place["id"] ?? .null)")
        }
        // The same place through `route`.
        let first = try #require(fromStation.first)
        var route = base
        route["op"] = "route"
        route["place"] = first["id"]
        let one = try engine.handle(.object(route)).get()
        #expect(one["reachable"]?[0] == first)
        #expect(one["place"]?["route"] == first["route"])
        // And from the traveller's position, both legs as `reachable` walks them.
        for place in fromHere.prefix(5) {
            var routeFromHere = walking
            routeFromHere["op"] = "route"
            routeFromHere["place"] = place["id"]
            #expect(try engine.handle(.object(routeFromHere)).get()["reachable"]?[0] == place)
        }
        // Without the network: the straight legs, and no route unless asked for.
        var straightLine = base
        straightLine["travel"] = "straight_line"
        let straight = try engine.handle(.object(straightLine)).get()
        #expect(straight["reachable"]?[0]?["route"]?["coordinates"]?.arrayValue?.count == 3)
        var plainRequest = base
        plainRequest["include"] = nil
        let plain = try engine.handle(.object(plainRequest)).get()
        #expect(plain["reachable"]?[0]?["route"] == nil)
    }

    /// A place the traveller opens beyond the search radius (from the map, or a list of an
    /// earlier time) gets through `route` its whole walk and how many minutes it is short,
    /// not only a line: the same distance `reachable` gives it with the time to get there.
    @Test func aPlaceBeyondTheSearchRadiusIsShortByItsWholeWalk() throws {
        let engine = try Self.engine()
        let base: JSONObject = ["op": "reachable", "layer": "helsinki_places", "stations_layer": "helsinki_stations",
                                "station": "helsinki-central", "limit": 1_000, "include_unreachable": true,
                                "travel": "network"]
        func answer(_ minutes: Double, _ extra: JSONObject = [:]) throws -> JSONValue {
            var request = base
            request["remaining_minutes"] = .number(minutes)
            for (key, value) in extra { request[key] = value }
            return try engine.handle(.object(request)).get()
        }
        func ids(_ list: JSONValue?) -> Set<String> {
            Set((list?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
        }
        let short = try answer(35)
        let long = try answer(180)
        let listedAt35 = ids(short["reachable"]).union(ids(short["unreachable"]))
        let beyond = (long["reachable"]?.arrayValue ?? []).filter { place in
            !listedAt35.contains(place["id"]?.stringValue ?? "")
        }
        #expect(!beyond.isEmpty)
        let far = try #require(beyond.max { ($0["distance_m"]?.doubleValue ?? 0) < ($1["distance_m"]?.doubleValue ?? 0) })
        let walk = try #require(far["distance_m"]?.doubleValue)
        #expect(walk > (short["search_radius_m"]?.doubleValue ?? .infinity))

        let route = try answer(35, ["op": "route", "place": far["id"] ?? .null])
        #expect(route["reachable"]?.arrayValue?.isEmpty == true)
        let judged = try #require(route["unreachable"]?[0])
        #expect(route["unreachable"]?.arrayValue?.count == 1)
        #expect(judged["id"] == far["id"])
        #expect(judged["reason"] == "not_enough_time")
        #expect(judged["distance_m"]?.doubleValue == walk)
        // 2 x walk at 75 m/min + dwell + the station's 10-minute buffer - 35, rounded up to 0.1.
        let dwell = try #require(far["dwell_minutes"]?.doubleValue)
        let minutesShort = try #require(judged["minutes_short"]?.doubleValue)
        #expect(abs(minutesShort - (2 * walk / 75 + dwell + 10 - 35)) <= 0.11, "\(minutesShort)")
        #expect(route["place"]?["id"] == far["id"])
        #expect(route["place"]?["route"]?["type"] == "LineString")
        // With the time it needs it fits, with the same walk.
        let enough = try answer(180, ["op": "route", "place": far["id"] ?? .null])
        #expect(enough["reachable"]?[0]?["distance_m"]?.doubleValue == walk)
    }

    /// Opening hours, in Helsinki's time: on a Sunday evening the shops that closed at
    /// 18:00 are not reachable but `closed`, with when they open on Monday; places without
    /// hours stay, said to be unknown; with `remaining_minutes` alone nothing is checked.
    @Test func closedPlacesAreNotReachable() throws {
        let engine = try Self.engine()
        func answer(_ fields: JSONObject) throws -> JSONValue {
            var request: JSONObject = ["op": "reachable", "layer": "helsinki_places", "stations_layer": "helsinki_stations",
                                       "station": "helsinki-central", "limit": 1_000, "include_unreachable": true,
                                       "category": "shopping"]
            for (key, value) in fields { request[key] = value }
            return try engine.handle(.object(request)).get()
        }
        // Sunday 1 June 2025, 17:00 and 20:00 in Helsinki (UTC+3); two hours to departure.
        let afternoon = try answer(["now": "2025-06-01T17:00:00+03:00", "departure": "2025-06-01T19:00:00+03:00",
                                    "dwell_minutes": ["shopping": 20]])
        let evening = try answer(["now": "2025-06-01T20:00:00+03:00", "departure": "2025-06-01T22:00:00+03:00",
                                  "dwell_minutes": ["shopping": 20]])
        let open = afternoon["reachable"]?.arrayValue ?? []
        let late = evening["reachable"]?.arrayValue ?? []
        #expect(open.filter { $0["hours"] == "open" }.count > 10)
        #expect(late.allSatisfy { $0["hours"] == "unknown" || $0["hours"] == "open" })
        let closed = (evening["unreachable"]?.arrayValue ?? []).filter { $0["reason"] == "closed" }
        #expect(closed.count > 10)
        // "Mo-Fr 10:00-21:00; Sa 10:00-19:00; Su 12:00-18:00" and the like open on Monday
        // morning; some only later in the week; "closed" never.
        let opening = closed.compactMap { $0["opens_at"]?.stringValue }
        #expect(opening.filter { $0.hasPrefix("2025-06-02T10:00:00+03:00") }.count > 5, "\(opening)")
        #expect(opening.allSatisfy { $0 > "2025-06-02T00:00" && $0.hasSuffix(":00+03:00") }, "\(opening)")
        #expect(open.count > late.count)
        // At 17:35 the shops still open close at 18:00, before most 20-minute visits are
        // over: closed for the visit, they are open for one again on Monday, not at the
        // arrival.
        let closing = try answer(["now": "2025-06-01T17:35:00+03:00", "departure": "2025-06-01T19:35:00+03:00",
                                  "dwell_minutes": ["shopping": 20]])
        let closingSoon = (closing["unreachable"]?.arrayValue ?? []).filter { $0["reason"] == "closed" }
        #expect(closingSoon.count > closed.count / 2)
        #expect(closingSoon.allSatisfy { ($0["opens_at"]?.stringValue ?? "~") > "2025-06-02T00:00" },
                "\(closingSoon.compactMap { $0["opens_at"] })")
        // Without clock times, hours are not checked: the same two hours then list every
        // place that either of the clock-time answers lists or finds closed.
        let unchecked = try answer(["remaining_minutes": 120, "dwell_minutes": ["shopping": 20]])
        #expect((unchecked["reachable"]?.arrayValue ?? []).allSatisfy { $0["hours"] == "unchecked" })
        for timed in [afternoon, evening] {
            let closedThen = (timed["unreachable"]?.arrayValue ?? []).filter { $0["reason"] == "closed" }.count
            #expect((timed["total"]?.intValue ?? 0) + closedThen == unchecked["total"]?.intValue)
        }
    }

    @Test func networkWalksAreNeverShorterThanTheGeodesic() throws {
        let engine = try Self.engine()
        func answer(_ fields: JSONObject) throws -> JSONValue {
            var request: JSONObject = ["op": "reachable", "layer": "helsinki_places", "stations_layer": "helsinki_stations",
                                       "station": "helsinki-central", "remaining_minutes": 60, "limit": 1_000,
                                       "include_unreachable": true]
            for (key, value) in fields { request[key] = value }
            return try engine.handle(.object(request)).get()
        }
        let network = try answer(["travel": "network"])
        #expect(network["network"] == "helsinki_walk")
        #expect(network["travel"] == "network")
        let named = try answer(["network": "helsinki_walk"])
        #expect(named["reachable"] == network["reachable"])
        let straight = try answer(["detour_factor": 1])
        let places = network["reachable"]?.arrayValue ?? []
        #expect(places.count > 100)
        for place in places {
            let walk = try #require(place["distance_m"]?.doubleValue)
            let line = try #require(place["straight_line_m"]?.doubleValue)
            #expect(walk >= line - 0.05, "\(place["id"] ?? .null)")
        }
        // A longer walk never makes a place fit that the straight line (detour 1) rejects.
        let straightIDs = Set((straight["reachable"]?.arrayValue ?? []).compactMap { $0["id"] })
        #expect(places.allSatisfy { straightIDs.contains($0["id"] ?? .null) })
        #expect(places.count < straightIDs.count)

        let far = Engine.reachableFailure(engine, ["op": "reachable", "layer": "places", "station": "seoul",
                                                   "remaining_minutes": 60, "travel": "network"])
        #expect(far?.code == "unknown_network")
        let unknown = Engine.reachableFailure(engine, ["op": "reachable", "layer": "places", "station": "seoul",
                                                       "remaining_minutes": 60, "network": "paris"])
        #expect(unknown?.code == "unknown_network")
        #expect(unknown?.field == "network")
    }
}

extension Engine {
    fileprivate static func reachableFailure(_ engine: Engine, _ request: JSONValue) -> EngineError? {
        if case let .failure(error) = engine.handle(request) { return error }
        return nil
    }
}

extension String {
    fileprivate func prepending(_ prefix: String) -> String { prefix + self }
}
