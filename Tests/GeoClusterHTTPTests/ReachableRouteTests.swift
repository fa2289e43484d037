import GeoCluster
import GeoClusterEngine
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
            place("near", 126.9717, "cafe"), place("far", 126.9907, "park"),
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
