import GeoCluster
import GeoClusterEngine
import GeoClusterWire
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// The `nearby` and `reachable` routes: query parameters become the same requests the
/// JSON-lines protocol carries.
struct ReachableRouteTests {
    static func engine() throws -> Engine {
        func place(_ id: String, _ lon: Double, _ category: String) throws -> LayerRecord {
            try LayerRecord(json: ["id": .string(id), "lon": .number(lon), "lat": 37.5547, "name": .string(id),
                                   "category": .string(category)],
                            kind: .places, layer: "places", index: 0)
        }
        // 0.001° of longitude at 37.55° N is about 88 m.
        let places = try LiveLayer(name: "places", kind: .places, records: [
            place("near", 126.9717, "cafe"), place("far", 126.9907, "park"), place("corner", 126.978, "shop"),
        ])
        let stations = try LiveLayer(name: "stations", kind: .stations, records: [
            LayerRecord(json: ["id": 7, "lon": 126.9707, "lat": 37.5547, "name": "Seoul", "lines": ["KTX"]],
                        kind: .stations, layer: "stations", index: 0),
        ])
        return try Engine(entries: [.live(LiveLayerStore(places)), .live(LiveLayerStore(stations))])
    }

    @Test func nearbyTakesARadiusOrACountAndFilters() async throws {
        try await withAPI(engine: Self.engine()) { client in
            let within = try await client.get("/v1/layers/places/nearby?lon=126.9707&lat=37.5547&radius_m=500")
            #expect(within.status == .ok)
            #expect(within.contentType == "application/geo+json")
            #expect(try within.json["features"]?.arrayValue?.map { $0["id"] } == ["near"])
            let nearest = try await client.get("/v1/layers/places/nearby?lon=126.9707&lat=37.5547&k=1&category=park")
            #expect(try nearest.json["features"]?[0]?["id"] == "far")
            let neither = try await client.get("/v1/layers/places/nearby?lon=126.9707&lat=37.5547")
            #expect(neither.status == .badRequest)
            #expect(try neither.json["error"]?["field"] == "radius_m")
        }
    }

    @Test func reachableReadsEveryKindOfParameter() async throws {
        try await withAPI(engine: Self.engine()) { client in
            let answer = try await client.get(
                "/v1/reachable?layer=places&station=7&departure=2025-06-01T15:20:00%2B09:00"
                    + "&now=2025-06-01T14:05:00%2B09:00&pace=4.5&dwell_minutes=cafe:20&include_unreachable=true"
                    + "&sort=distance&limit=5")
            #expect(answer.status == .ok)
            let result = try answer.json
            #expect(result["status"] == "ok")
            #expect(result["station"]?["id"] == 7)
            let near = try #require(result["reachable"]?[0])
            #expect(near["id"] == "near")
            #expect(near["dwell_minutes"] == 20)
            #expect(near["leave_by"]?.stringValue?.hasSuffix("+09:00") == true)

            let unknown = try await client.get("/v1/reachable?layer=places&station=8&remaining_minutes=60")
            #expect(unknown.status == .notFound)
            #expect(try unknown.json["error"]?["code"] == "unknown_station")
            let bare = try await client.get("/v1/reachable?layer=places&station=7&departure=2025-06-01T15:20:00+09:00"
                + "&now=2025-06-01T14:05:00%2B09:00")
            #expect(bare.status == .badRequest)
            #expect(try bare.json["error"]?["field"] == "departure")
        }
    }

    @Test func dwellsPacesAndStationsInTextReadAsEverywhereElse() async throws {
        try await withAPI(engine: Self.engine()) { client in
            let base = "/v1/reachable?layer=places&station=7&remaining_minutes=60&category=cafe"
            func dwell(_ query: String) async throws -> JSONValue? {
                try await client.get(base + query).json["reachable"]?[0]?["dwell_minutes"]
            }
            // A category named by its label, in Korean or in English, as `category` takes it.
            #expect(try await dwell("&dwell_minutes=%EC%B9%B4%ED%8E%98:7") == 7)   // 카페:7
            #expect(try await dwell("&dwell_minutes=Cafe:8") == 8)
            // A layer's own category that is also a label (OSM's `shop`, the label of
            // `shopping`) keeps its entry; a value out of range is named as written.
            let shop = try await client.get("/v1/reachable?layer=places&station=7&remaining_minutes=60&category=shop"
                + "&dwell_minutes=shop:15").json
            #expect(shop["reachable"]?[0]?["id"] == "corner")
            #expect(shop["reachable"]?[0]?["dwell_minutes"] == 15)
            let tooLong = try await client.get(base + "&dwell_minutes=%EC%B9%B4%ED%8E%98:2000")
            #expect(tooLong.status == .badRequest)
            #expect(try tooLong.json["error"]?["field"] == "dwell_minutes.카페")
            // Minutes in JSON's number grammar: no hexadecimal, no sign, no bare fraction.
            for bad in ["cafe:0x10", "cafe:%2B5", "cafe:.5", "cafe:nan"] {
                let answer = try await client.get(base + "&dwell_minutes=" + bad)
                #expect(answer.status == .badRequest, "\(bad)")
                #expect(try answer.json["error"]?["field"] == "dwell_minutes[0]", "\(bad)")
            }
            // Paces: a speed in the same grammar, names in any case.
            #expect(try await client.get(base + "&pace=1e1").status == .ok)
            #expect(try await client.get(base + "&pace=Fast").status == .ok)
            for bad in ["05", "0x5", "quick"] {
                let answer = try await client.get(base + "&pace=" + bad)
                #expect(answer.status == .badRequest, "\(bad)")
                #expect(try answer.json["error"]?["field"] == "pace", "\(bad)")
            }
            // A blank station is a bad field, as in /v1/stations; a long unknown one is
            // quoted by its beginning.
            let blank = try await client.get("/v1/reachable?layer=places&station=%20&remaining_minutes=60")
            #expect(blank.status == .badRequest)
            #expect(try blank.json["error"]?["code"] == "invalid_field")
            let long = try await client.get("/v1/reachable?layer=places&remaining_minutes=60&station="
                + String(repeating: "%EA%B0%80", count: 500))  // 가 × 500
            #expect(long.status == .notFound)
            #expect(try long.json["error"]?["code"] == "unknown_station")
            #expect(long.body.readableBytes < 600)
        }
    }

    @Test func reachableClustersForAViewFromQueryParameters() async throws {
        try await withAPI(engine: Self.engine()) { client in
            let answer = try await client.get("/v1/reachable?layer=places&station=7&remaining_minutes=120"
                + "&bbox=126,37,128,38&zoom=2&limit=1")
            #expect(answer.status == .ok)
            let result = try answer.json
            let total = try #require(result["total"]?.doubleValue)
            let features = try #require(result["clusters"]?["features"]?.arrayValue)
            let counted = features.reduce(0.0) { $0 + ($1["properties"]?["point_count"]?.doubleValue ?? 1) }
            #expect(total > 0)
            #expect(counted == total)

            let noZoom = try await client.get("/v1/reachable?layer=places&station=7&remaining_minutes=120&bbox=126,37,128,38")
            #expect(noZoom.status == .badRequest)
            #expect(try noZoom.json["error"]?["field"] == "zoom")
        }
    }
}
