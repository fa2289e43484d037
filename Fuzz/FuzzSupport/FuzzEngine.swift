import GeoCluster
import GeoClusterWire
import GeoClusterEngine

/// A small engine for the fuzz targets: one layer of each kind, live and radius, so that
/// every operation (writes, `nearby`, `reachable`, tiles, cluster ids of both algorithms)
/// has something to work on. It is built anew for each input, so that what one input
/// wrote cannot change how the next is answered: a crash reproduces from its input alone.
public enum FuzzEngine {
    public static func make() -> Engine {
        do {
            func records(_ kind: LayerKind, _ layer: String, _ objects: [JSONObject]) throws -> [LayerRecord] {
                try objects.enumerated().map { index, object in
                    try LayerRecord(json: .object(object), kind: kind, layer: layer, index: index)
                }
            }
            let sightings = try LiveLayer(name: "sightings", kind: .sightings, records: records(.sightings, "sightings", [
                ["id": "s1", "lon": 126.97, "lat": 37.55, "species": "Grus japonensis", "count": 3,
                 "observed_at": "2024-01-05T07:30:00+09:00"],
                ["id": 2, "lon": 126.98, "lat": 37.56, "species": "Anas acuta", "count": 12,
                 "observed_at": "2024-11-20T16:00:00+09:00"],
                ["id": "s3", "lon": 129.04, "lat": 35.11, "species": "Grus japonensis", "count": 1,
                 "observed_at": "2025-02-01T09:00:00+09:00"],
            ]))
            let places = try LiveLayer(name: "places", kind: .places, records: records(.places, "places", [
                ["id": "p1", "lon": 126.975, "lat": 37.552, "name": "카페", "category": "cafe"],
                ["id": "p2", "lon": 126.968, "lat": 37.558, "name": "Museum", "category": "museum"],
                ["id": 3, "lon": 126.99, "lat": 37.57, "name": "Park", "category": "park"],
            ]))
            let stations = try LiveLayer(name: "stations", kind: .stations, records: records(.stations, "stations", [
                ["id": "seoul", "lon": 126.9707, "lat": 37.5547, "name": "서울", "lines": ["KTX"]],
                ["id": 7, "lon": 129.0403, "lat": 35.1151, "name": "Busan", "lines": ["KTX", "SRT"]],
            ]))
            let points = try RadiusLayer(name: "pts", kind: .points, features: [
                ("seoul", 126.9707, 37.5547, "Seoul Station"), ("seoullo", 126.9723, 37.5559, "Seoullo 7017"),
                ("busan", 129.0403, 35.1151, "Busan Station"),
            ].map { id, lon, lat, name in
                GeoJSON.pointFeature(coordinate: Coordinate(longitude: lon, latitude: lat),
                                     properties: ["name": .string(name)], id: .string(id))
            })
            return try Engine(entries: [.live(LiveLayerStore(sightings)), .live(LiveLayerStore(places)),
                                        .live(LiveLayerStore(stations)), .radius(points)],
                              limits: Engine.Limits(maxFeaturesPerResponse: 1_000))
        } catch {
            fatalError("the fuzz engine's own layers are valid: \(error)")
        }
    }
}
