import Foundation
import Testing
@testable import GeoCluster
@testable import GeoClusterWire
@testable import GeoClusterEngine

/// The travel app's flow through the engine: whole minutes as the app counts them, up to
/// 48 hours ahead, the request's dwell and the station's boarding buffer, stations found
/// by name, one place read by id, and answers in Korean.
struct TravelFlowTests {
    static func run(_ engine: Engine, _ fields: JSONObject) throws -> JSONValue {
        var request: JSONObject = ["op": "reachable", "layer": "places", "station": "seoul"]
        for (key, value) in fields { request[key] = value }
        return try engine.handle(.object(request)).get()
    }

    static func error(_ engine: Engine, _ fields: JSONObject) -> EngineError? {
        var request: JSONObject = ["op": "reachable", "layer": "places", "station": "seoul"]
        for (key, value) in fields { request[key] = value }
        if case let .failure(error) = engine.handle(.object(request)) { return error }
        return nil
    }

    // MARK: Whole minutes

    @Test func remainingMinutesAreTheWholeMinutesTheAppShows() throws {
        let engine = try ReachableTests.engine()
        // 20 min 23 s: the app shows 20 and does not explore; neither does the answer.
        let justOver20 = try Self.run(engine, ["departure": "2026-11-26T14:26:00+09:00", "now": "2026-11-26T14:05:37+09:00"])
        #expect(justOver20["remaining_minutes"] == 20)
        #expect(justOver20["remaining_seconds"] == 1_223)
        #expect(justOver20["status"] == "too_little_time")
        #expect(justOver20["now"] == "2026-11-26T14:05:37+09:00")
        // 39 min 59 s is 39 in the field and in the reason.
        let almost40 = try Self.run(engine, ["departure": "2026-11-26T14:45:00+09:00", "now": "2026-11-26T14:05:01+09:00"])
        #expect(almost40["remaining_minutes"] == 39)
        #expect(almost40["reason"]?.stringValue?.hasPrefix("39 minutes remain") == true)
        // 30 min 59 s is 30: tight. 31 min is ok.
        #expect(try Self.run(engine, ["remaining_minutes": 30.99])["status"] == "tight")
        #expect(try Self.run(engine, ["remaining_minutes": 31])["status"] == "ok")
        // Every number of the reason is the number of a field.
        for minutes in [20.5, 25.7, 30.2, 44.9] {
            let answer = try Self.run(engine, ["remaining_minutes": .number(minutes)])
            let whole = Int(minutes)
            #expect(answer["remaining_minutes"] == .number(Double(whole)))
            #expect(answer["reason"]?.stringValue?.hasPrefix("\(whole) minutes remain") == true)
        }
    }

    @Test func departuresUpTo48HoursAhead() throws {
        let engine = try ReachableTests.engine()
        // 23:59 of the next day, asked just after midnight: 47 h 58 min.
        let nextDay = try Self.run(engine, ["departure": "2026-11-27T23:59:00+09:00", "now": "2026-11-26T00:01:00+09:00"])
        #expect(nextDay["remaining_minutes"] == 2_878)
        #expect(try Self.run(engine, ["remaining_minutes": 2_880])["status"] == "ok")
        let tooFar = Self.error(engine, ["departure": "2026-11-28T00:02:00+09:00", "now": "2026-11-26T00:01:00+09:00"])
        #expect(tooFar?.code == "invalid_field" && tooFar?.field == "departure")
        #expect(tooFar?.description.contains("2880 minutes (48 h)") == true)
        #expect(Self.error(engine, ["remaining_minutes": 2_881])?.field == "remaining_minutes")
        // A fraction is dropped before the bound is checked, as before the status is decided.
        #expect(try Self.run(engine, ["remaining_minutes": 2_880.5])["remaining_minutes"] == 2_880)
    }

    @Test func aDepartureWithoutNowCountsFromTheServersClock() throws {
        let engine = try ReachableTests.engine()
        let before = Int64(Date().timeIntervalSince1970)
        let departure = Date(timeIntervalSince1970: TimeInterval(before + 90 * 60))
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(secondsFromGMT: 9 * 3600)
        let answer = try Self.run(engine, ["departure": .string(formatter.string(from: departure))])
        let after = Int64(Date().timeIntervalSince1970)
        let seconds = try #require(answer["remaining_seconds"]?.doubleValue)
        #expect(seconds <= 90 * 60 && seconds >= Double(90 * 60 - (after - before) - 1))
        #expect(answer["now"]?.stringValue?.hasSuffix("+09:00") == true)
        // `now` without `departure` is still an error.
        #expect(Self.error(engine, ["now": "2026-11-26T14:05:00+09:00"])?.code == "missing_field")
    }

    // MARK: Korean

    @Test func koreanReasonsAndCategoryLabels() throws {
        let engine = try ReachableTests.engine()
        let answer = try Self.run(engine, ["remaining_minutes": 75, "lang": "ko", "limit": 1])
        #expect(answer["reason"] == "출발까지 75분 남았습니다(30분 초과). 주변을 둘러볼 시간이 충분합니다")
        #expect(answer["reachable"]?[0]?["category"] == "cafe")
        #expect(answer["reachable"]?[0]?["category_label"] == "카페")
        let english = try Self.run(engine, ["remaining_minutes": 75, "limit": 1])
        #expect(english["reachable"]?[0]?["category_label"] == "Cafe")
        let tight = try Self.run(engine, ["remaining_minutes": 25, "lang": "ko"])
        #expect(tight["reason"]?.stringValue?.hasPrefix("출발까지 25분 남았습니다(30분 이하)") == true)
        let none = try Self.run(engine, ["remaining_minutes": 12, "lang": "ko"])
        #expect(none["reason"]?.stringValue?.contains("20분보다 많이") == true)
        #expect(Self.error(engine, ["remaining_minutes": 75, "lang": "fr"])?.field == "lang")
        // Language tags as phones send them.
        for tag in ["ko-KR", "KO", "ko_KR"] {
            #expect(try Self.run(engine, ["remaining_minutes": 75, "lang": .string(tag), "limit": 1])["reason"] == answer["reason"])
        }
        #expect(try Self.run(engine, ["remaining_minutes": 75, "lang": "en-US", "limit": 1])["reason"] == english["reason"])
    }

    /// A category filter may name a category by its label, in Korean or English, or in
    /// capitals: the app shows the labels.
    @Test func categoriesByTheirLabels() throws {
        let engine = try ReachableTests.engine()
        let cafes = try Self.run(engine, ["remaining_minutes": 75, "category": "cafe"])
        #expect((cafes["reachable"]?.arrayValue?.count ?? 0) > 0)
        for name in ["카페", "Cafe", "CAFE"] {
            #expect(try Self.run(engine, ["remaining_minutes": 75, "category": .string(name)])["reachable"]
                    == cafes["reachable"], "\(name)")
        }
        let none = try Self.run(engine, ["remaining_minutes": 75, "category": "찻집"])
        #expect(none["reachable"] == [])
        // Time to explore and nothing to explore: the reason says so, not "enough to explore".
        #expect(none["status"] == "ok")
        #expect(none["reason"] == "75 minutes remain, but no place nearby can be visited in them")
        let korean = try Self.run(engine, ["remaining_minutes": 25, "category": "찻집", "lang": "ko"])
        #expect(korean["status"] == "tight")
        #expect(korean["reason"] == "출발까지 25분 남았지만 그 안에 다녀올 수 있는 곳이 근처에 없습니다")
    }

    // MARK: Stations by name

    static func stationsEngine() throws -> Engine {
        let rows: [(String, String, String, [String], Double, Double, (String, String)?)] = [
            ("seoul", "서울", "Seoul", ["KTX", "Gyeongbu Line"], 126.9707, 37.5547, nil),
            ("gwangju", "광주", "Gwangju", ["Gwangju Line"], 126.9092, 35.1653, nil),
            ("gwangju-songjeong", "광주송정", "Gwangju-Songjeong", ["KTX", "SRT"], 126.7914, 35.1378, nil),
            ("gimcheon-gumi", "김천(구미)", "Gimcheon-Gumi", ["KTX"], 128.1796, 36.1136, nil),
            ("singyeongju", "경주", "Gyeongju", ["KTX"], 129.2187, 35.7983, ("신경주", "Singyeongju")),
            ("gumi", "구미", "Gumi", ["Gyeongbu Line"], 128.3307, 36.1284, nil),
            ("cheonan-asan", "천안아산", "Cheonan-Asan", ["KTX", "SRT"], 127.1046, 36.7945, nil),
        ]
        let records = try rows.enumerated().map { i, row in
            var properties: JSONObject = ["name_en": .string(row.2)]
            if let former = row.6 {
                properties["former_name"] = .string(former.0)
                properties["former_name_en"] = .string(former.1)
            }
            if row.0 == "seoul" { properties["boarding_buffer_minutes"] = 15 }
            let object: JSONObject = ["id": .string(row.0), "name": .string(row.1), "lines": .array(row.3.map { .string($0) }),
                                      "lon": .number(row.4), "lat": .number(row.5), "properties": .object(properties)]
            return try LayerRecord(json: .object(object), kind: .stations, layer: "stations", index: i)
        }
        let places = try LiveLayer(name: "places", kind: .places, records: [
            try LayerRecord(json: ["id": "p1", "lon": 126.9712, "lat": 37.5546, "name": "편의점", "category": "convenience",
                                   "dwell_minutes": 5],
                            kind: .places, layer: "places", index: 0),
        ])
        return try Engine(entries: [.live(LiveLayerStore(try LiveLayer(name: "stations", kind: .stations, records: records))),
                                    .live(LiveLayerStore(places))])
    }

    static func stationIDs(_ engine: Engine, _ fields: JSONObject) throws -> [String] {
        var request: JSONObject = ["op": "stations"]
        for (key, value) in fields { request[key] = value }
        let answer = try engine.handle(.object(request)).get()
        return (answer["stations"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    @Test func stationsAreFoundByKoreanOrEnglishNameLineOrPosition() throws {
        let engine = try Self.stationsEngine()
        for query in ["서울", "서울역", "서울 역", "Seoul", "seoul station", "SEOUL"] {
            #expect(try Self.stationIDs(engine, ["q": .string(query)]) == ["seoul"], "\(query)")
        }
        // Exact first, then prefix.
        #expect(try Self.stationIDs(engine, ["q": "광주"]) == ["gwangju", "gwangju-songjeong"])
        #expect(try Self.stationIDs(engine, ["q": "김천"]) == ["gimcheon-gumi"])
        // A station named 구미 comes before the part of 김천(구미).
        #expect(try Self.stationIDs(engine, ["q": "구미"]) == ["gumi", "gimcheon-gumi"])
        // A name with parentheses written without them, or with a dot; an official name
        // with its part in parentheses, which the layer's name lacks.
        for query in ["김천구미역", "김천·구미", "김천(구미)역", "gimcheon gumi"] {
            #expect(try Self.stationIDs(engine, ["q": .string(query)]) == ["gimcheon-gumi"], "\(query)")
        }
        for query in ["천안아산(온양온천)", "천안아산역(온양온천)", "천안아산 (온양온천)"] {
            #expect(try Self.stationIDs(engine, ["q": .string(query)]) == ["cheonan-asan"], "\(query)")
        }
        #expect(try Self.stationIDs(engine, ["q": "신경주역"]) == ["singyeongju"])
        // The former name romanised, as on an older ticket or sign.
        for query in ["Singyeongju", "Singyeongju Station", "SINGYEONGJU"] {
            #expect(try Self.stationIDs(engine, ["q": .string(query)]) == ["singyeongju"], "\(query)")
        }
        #expect(try Self.stationIDs(engine, ["line": "SRT"]) == ["cheonan-asan", "gwangju-songjeong"])
        #expect(try Self.stationIDs(engine, ["lon": 126.8, "lat": 35.14, "limit": 2]) == ["gwangju-songjeong", "gwangju"])
        #expect(try Self.stationIDs(engine, ["q": "부산"]) == [])
        if case let .failure(error) = engine.handle(["op": "stations", "q": " - "]) {
            #expect(error.field == "q")
        } else {
            Issue.record("a query of only spaces and punctuation must be an error")
        }
    }

    @Test func reachableTakesAStationByAnUnambiguousName() throws {
        let engine = try Self.stationsEngine()
        let byName = try Self.run(engine, ["station": "서울역", "remaining_minutes": 25])
        #expect(byName["station"]?["id"] == "seoul")
        // The station's own buffer (15) unless the request gives one.
        #expect(byName["boarding_buffer_minutes"] == 15)
        #expect(try Self.run(engine, ["station": "Seoul", "remaining_minutes": 25, "boarding_buffer_minutes": 5])["boarding_buffer_minutes"] == 5)
        #expect(try Self.run(engine, ["station": "광주", "remaining_minutes": 25])["station"]?["id"] == "gwangju")
        #expect(try Self.run(engine, ["station": "광주송", "remaining_minutes": 25])["station"]?["id"] == "gwangju-songjeong")
        // The station named 구미, not the part of 김천(구미); the parts decide when no name does.
        #expect(try Self.run(engine, ["station": "구미", "remaining_minutes": 25])["station"]?["id"] == "gumi")
        #expect(try Self.run(engine, ["station": "김천", "remaining_minutes": 25])["station"]?["id"] == "gimcheon-gumi")
        #expect(try Self.run(engine, ["station": "천안아산(온양온천)", "remaining_minutes": 25])["station"]?["id"] == "cheonan-asan")
        // 25 minutes at Seoul: 15 buffer, 5 at the shop 45 m away.
        #expect(byName["total"] == 1)
        // More than one: ambiguous, with the candidates named.
        let engineError = Self.error(engine, ["station": "광", "remaining_minutes": 25])
        #expect(engineError?.code == "ambiguous_station")
        #expect(engineError?.field == "station")
        #expect(engineError?.description.contains("\"gwangju\" (광주)") == true)
        #expect(Self.error(engine, ["station": "부산", "remaining_minutes": 25])?.code == "unknown_station")
    }

    // MARK: One record

    @Test func oneRecordIsReadByID() throws {
        let engine = try Self.stationsEngine()
        let answer = try engine.handle(["op": "get", "layer": "stations", "ids": ["gwangju", "seoul"]]).get()
        let features = answer["features"]?.arrayValue ?? []
        #expect(features.map { $0["id"]?.stringValue } == ["gwangju", "seoul"])
        #expect(features.first?["properties"]?["name"] == "광주")
        if case let .failure(error) = engine.handle(["op": "get", "layer": "stations", "ids": ["seoul", "busan"]]) {
            #expect(error.code == "unknown_id" && error.field == "ids[1]")
        } else {
            Issue.record("an unknown id must be an error")
        }
        if case let .failure(error) = engine.handle(["op": "get", "layer": "stations", "ids": []]) {
            #expect(error.field == "ids")
        } else {
            Issue.record("no ids must be an error")
        }
    }
}

/// The shipped sample data as the travel app meets it: at every station that sample places
/// belong to, 25 minutes before departure lists somewhere to go and be back in time, and 20
/// minutes lists nothing.
struct SampleStationsTests {
    @Test func everySampleStationWithPlacesHasSomewhereToGoIn25Minutes() throws {
        let engine = try HelsinkiReachableTests.engine()
        let stations = try engine.handle(["op": "stations", "limit": 1_000]).get()["stations"]?.arrayValue ?? []
        var withPlaces = 0
        for station in stations {
            let id = try #require(station["id"])
            // A station with places: one that sample places name as theirs.
            let around = try engine.handle(["op": "nearby", "layer": "places", "lon": try #require(station["lon"]),
                                            "lat": try #require(station["lat"]), "radius_m": 5_000]).get()
            guard (around["features"]?.arrayValue ?? []).contains(where: { $0["properties"]?["station_id"] == id }) else {
                continue
            }
            withPlaces += 1
            let at25 = try engine.handle(["op": "reachable", "layer": "places", "station": id,
                                          "departure": "2026-11-26T14:30:00+09:00", "now": "2026-11-26T14:05:00+09:00"]).get()
            #expect(at25["status"] == "tight", "\(id)")
            let first = try #require(at25["reachable"]?[0], "\(id): nothing to visit 25 minutes before departure")
            let leaveBy = try #require(first["leave_by"]?.stringValue)
            #expect(leaveBy < "2026-11-26T14:30:00+09:00", "\(id): leave by \(leaveBy)")
            let at20 = try engine.handle(["op": "reachable", "layer": "places", "station": id,
                                          "departure": "2026-11-26T14:25:00+09:00", "now": "2026-11-26T14:05:00+09:00"]).get()
            #expect(at20["status"] == "too_little_time" && at20["total"] == 0, "\(id)")
        }
        #expect(withPlaces >= 8)
    }
}

/// A traveller already walking: from their position to a place, then to the station.
struct WalkViaAPlaceTests {
    /// Walk out, dwell, walk back, buffer and slack of a listed place: the remaining time,
    /// give or take the rounding of each to a tenth.
    static func minutesAccounted(_ place: JSONValue, buffer: Double) -> Double {
        let parts: [Double] = ["walk_minutes_out", "dwell_minutes", "walk_minutes_back", "slack_minutes"].map { name in
            place[name]?.doubleValue ?? .nan
        }
        return parts.reduce(buffer, +)
    }

    @Test func fromHereToAPlaceThenToTheStation() throws {
        let engine = try ReachableTests.engine()
        // Standing at the cafe 500 m east of the station: nothing to walk there, 650 m back.
        let here = ReachableTests.at(500)
        let answer = try TravelFlowTests.run(engine, ["lon": .number(here.longitude), "lat": .number(here.latitude),
                                                      "remaining_minutes": 75, "include_unreachable": true,
                                                      "detour_factor": 1.3])
        #expect(answer["station"]?["id"] == "seoul")
        #expect(answer["location"]?["lon"] == .number(here.longitude))
        #expect(answer["direct_walk_minutes"] == 8.7)  // 650 / 75 = 8.67, rounded up
        let cafe = try #require(ReachableTests.item(answer, "cafe-500"))
        #expect(cafe["distance_out_m"] == 0)
        #expect(cafe["distance_back_m"] == 650)
        #expect(cafe["walk_minutes_out"] == 0)
        #expect(cafe["walk_minutes_back"] == 8.7)
        #expect(cafe["slack_minutes"] == 26.3)       // 75 - (0 + 30 + 8.67 + 10)
        #expect(cafe["leave_by_minutes"] == 56.3)    // 75 - 10 - 8.67
        #expect(cafe["distance_m"] == nil)
        // Every listed visit adds up: out + dwell + back + buffer + slack = remaining.
        for place in answer["reachable"]?.arrayValue ?? [] {
            #expect(abs(Self.minutesAccounted(place, buffer: 10) - 75) <= 0.25, "\(place)")
        }
        // The park 2 km west is 2.5 km from here: out of reach from here, though not from the station.
        #expect(ReachableTests.item(answer, "park-2000") == nil)
    }

    @Test func tooFarFromTheStationListsNothing() throws {
        let engine = try ReachableTests.engine()
        let far = ReachableTests.at(2_000, azimuth: 180)
        let answer = try TravelFlowTests.run(engine, ["lon": .number(far.longitude), "lat": .number(far.latitude),
                                                      "remaining_minutes": 30])
        #expect(answer["direct_walk_minutes"] == 40)  // 2000 · 1.5 / 75
        #expect(answer["reachable"] == [])
        // The walk and the buffer take longer than the time left: the answer sends the
        // traveller to the station, not to explore.
        #expect(answer["status"] == "too_little_time")
        let reason = "the walk to the station takes 40 minutes, with the 10-minute boarding buffer "
            + "more than the 30 minutes that remain: head for the station now"
        #expect(answer["reason"] == .string(reason))
        let korean = try TravelFlowTests.run(engine, ["lon": .number(far.longitude), "lat": .number(far.latitude),
                                                      "remaining_minutes": 45, "lang": "ko"])
        #expect(korean["status"] == "too_little_time")
        #expect(korean["reason"] == "역까지 걸어서 40분, 승차 여유 10분을 더하면 남은 45분보다 깁니다. 지금 역으로 출발하세요")
        // With the walk and the buffer inside the time left, the status is the time's.
        let inTime = try TravelFlowTests.run(engine, ["lon": .number(far.longitude), "lat": .number(far.latitude),
                                                      "remaining_minutes": 50])
        #expect(inTime["status"] == "ok")
    }

    /// Starting at the station itself, the walk there and back is the round trip.
    @Test(arguments: ["straight_line", "network"])
    func startingAtTheStationIsTheRoundTrip(travel: String) throws {
        let engine = try HelsinkiReachableTests.engine()
        var request: JSONObject = ["op": "reachable", "layer": "helsinki_places", "stations_layer": "helsinki_stations",
                                   "station": "helsinki-central", "remaining_minutes": 60, "limit": 1_000,
                                   "travel": .string(travel)]
        let roundTrip = try engine.handle(.object(request)).get()
        let station = try #require(roundTrip["station"])
        request["lon"] = station["lon"]
        request["lat"] = station["lat"]
        let via = try engine.handle(.object(request)).get()
        let ids = (roundTrip["reachable"]?.arrayValue ?? []).map { $0["id"] }
        #expect(ids.count > 50)
        #expect((via["reachable"]?.arrayValue ?? []).map { $0["id"] } == ids)
        for (a, b) in zip(roundTrip["reachable"]?.arrayValue ?? [], via["reachable"]?.arrayValue ?? []) {
            #expect(a["slack_minutes"] == b["slack_minutes"] && a["distance_m"] == b["distance_out_m"]
                    && b["distance_out_m"] == b["distance_back_m"])
        }
        // Starting 400 m away, every visit still adds up, along the network too.
        request["lon"] = .number(24.9414566 + 0.0072)
        let away = try engine.handle(.object(request)).get()
        #expect((away["reachable"]?.arrayValue ?? []).count > 10)
        for place in away["reachable"]?.arrayValue ?? [] {
            #expect(abs(Self.minutesAccounted(place, buffer: 10) - 60) <= 0.25, "\(place)")
        }
    }
}
