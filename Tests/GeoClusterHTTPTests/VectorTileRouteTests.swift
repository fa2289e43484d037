import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// Points whose properties cover every value type a vector tile distinguishes, and every
/// kind of id.
enum RichSample {
    static let features: [JSONValue] = [
        point(id: 7, 126.9707, 37.5547, [
            "name": "서울역", "count": 12, "ratio": 0.25, "delta": -3, "open": true,
            "lines": ["KTX", "1"], "address": ["city": "Seoul", "zip": nil], "closed": nil,
        ]),
        point(id: "seoullo", 126.9723, 37.5559, ["name": "Seoullo 7017", "id": "own id"]),
        point(id: "jungnim", 126.9690, 37.5531, ["name": "Jungnim-dong"]),
        point(id: -5, 126.9750, 37.5600, .null),
        point(id: nil, 126.9650, 37.5500, ["big": 1e30, "tiny": -1e-7]),
        point(id: 2.5, 129.0403, 35.1151, ["name": "Busan Station"]),
    ]

    static func point(id: JSONValue?, _ lon: Double, _ lat: Double, _ properties: JSONValue) -> JSONValue {
        GeoJSON.pointFeature(coordinate: Coordinate(longitude: lon, latitude: lat), properties: properties, id: id)
    }

    static func engine() throws -> Engine {
        try Engine(layers: [RadiusLayer(name: "rich", kind: .points, features: features)])
    }

    /// The world tile (clusters), two mid zooms over Seoul, and the zoom-18 tile of each
    /// point (single points).
    static let tilePaths: [String] = {
        var addresses: [(Double, Double, Int)] = [(126.97, 37.55, 0), (126.97, 37.55, 8), (126.97, 37.55, 12)]
        for feature in features {
            let lonLat = feature["geometry"]?["coordinates"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            addresses.append((lonLat[0], lonLat[1], 18))
        }
        return addresses.map { lon, lat, z in
            let tile = try! TileAddress.containing(Coordinate(longitude: lon, latitude: lat), zoom: z)
            return "\(tile.z)/\(tile.x)/\(tile.y)"
        }
    }()
}

struct VectorTileRouteTests {
    /// The MVT answer holds what the geojson-vt answer of the same address holds: the same
    /// features in the same order, pixel positions, ids and properties (as the vector tile
    /// format can carry them).
    @Test(arguments: RichSample.tilePaths)
    func vectorTileMatchesTheGeoJSONTile(address: String) async throws {
        try await withAPI(engine: try RichSample.engine()) { client in
            let path = "/v1/layers/rich/tiles/\(address)"
            let json = try await client.get("\(path).geojson")
            let mvt = try await client.get("\(path).mvt")
            #expect(json.status == .ok)
            #expect(mvt.status == .ok)
            #expect(mvt.contentType == "application/vnd.mapbox-vector-tile")

            let tile = try VectorTileDecoder.decode(Array(mvt.body.readableBytesView))
            let layer = try #require(tile.layers.first)
            #expect(tile.layers.count == 1)
            #expect(layer.name == "rich")
            #expect(layer.version == 2)
            #expect(layer.extent == 512)

            let expected = try #require(try json.json["features"]?.arrayValue)
            #expect(!expected.isEmpty)
            try #require(layer.features.count == expected.count)
            for (feature, geojsonVT) in zip(layer.features, expected) {
                #expect(feature.type == 1, "POINT")
                let pixel = geojsonVT["geometry"]?[0]?.arrayValue?.compactMap(\.intValue)
                #expect(try VectorTileDecoder.points(of: feature) == [pixel ?? []])
                #expect(try VectorTileDecoder.properties(of: feature, in: layer) == Self.vectorTileProperties(of: geojsonVT))
                let id = geojsonVT["id"]?.doubleValue.flatMap { UInt64(exactly: $0) }
                #expect(feature.id == id)
            }
        }
    }

    /// What the vector tile should carry for a geojson-vt feature: its tags without nulls,
    /// arrays and objects as JSON text, and an id that is not an unsigned integer as an
    /// `id` property unless there is one.
    static func vectorTileProperties(of feature: JSONValue) -> JSONObject {
        var properties = JSONObject()
        for (key, value) in feature["tags"]?.objectValue ?? JSONObject() {
            switch value {
            case .null: continue
            case .array, .object: properties[key] = .string(value.jsonString)
            default: properties[key] = value
            }
        }
        if let id = feature["id"], id.doubleValue.flatMap({ UInt64(exactly: $0) }) == nil,
           !properties.contains(key: "id") {
            properties["id"] = id
        }
        return properties
    }

    @Test func eachKindOfPointIsCovered() async throws {
        // The addresses above must between them show clusters and every sample point.
        try await withAPI(engine: try RichSample.engine()) { client in
            var ids: [JSONValue] = []
            var clusters = 0
            for path in RichSample.tilePaths {
                let features = try await client.get("/v1/layers/rich/tiles/\(path).geojson").json["features"]?.arrayValue
                for feature in features ?? [] {
                    if feature["tags"]?["cluster"] == true { clusters += 1 } else { ids.append(feature["id"] ?? .null) }
                }
            }
            #expect(clusters > 0)
            for id: JSONValue in [7, "seoullo", "jungnim", -5, .null, 2.5] {
                #expect(ids.contains(id), "\(id)")
            }
        }
    }

    /// An address with nothing in it is still a tile: 200 and a decodable tile whose one
    /// layer has no features.
    @Test func emptyTileIsAValidTile() async throws {
        try await withAPI { client in
            let response = try await client.get("/v1/layers/stations/tiles/10/0/0.mvt")
            #expect(response.status == .ok)
            #expect(response.contentType == "application/vnd.mapbox-vector-tile")
            let tile = try VectorTileDecoder.decode(Array(response.body.readableBytesView))
            #expect(tile.layers.count == 1)
            #expect(tile.layers.first?.name == "stations")
            #expect(tile.layers.first?.features.isEmpty == true)
        }
    }

    @Test func clusterFeaturesCarrySuperclusterProperties() async throws {
        try await withAPI { client in
            let response = try await client.get("/v1/layers/stations/tiles/0/0/0.mvt")
            let layer = try #require(try VectorTileDecoder.decode(Array(response.body.readableBytesView)).layers.first)
            let cluster = try #require(layer.features.first)
            let properties = try VectorTileDecoder.properties(of: cluster, in: layer)
            #expect(properties["cluster"] == true)
            #expect(properties["point_count"] == 4)
            #expect(properties["point_count_abbreviated"] == 4)
            #expect(properties["cluster_id"]?.doubleValue.flatMap { UInt64(exactly: $0) } == cluster.id)
        }
    }

    @Test(arguments: [
        ("/v1/layers/birds/tiles/0/0/0.mvt", HTTPResponse.Status.notFound, "unknown_layer", "layer"),
        ("/v1/layers/stations/tiles/2/4/0.mvt", .badRequest, "invalid_tile", "x"),
        ("/v1/layers/stations/tiles/2/0/4.mvt", .badRequest, "invalid_tile", "y"),
        ("/v1/layers/stations/tiles/31/0/0.mvt", .badRequest, "invalid_field", "z"),
        ("/v1/layers/stations/tiles/1/0/0.5.mvt", .badRequest, "invalid_field", "y"),
        ("/v1/layers/stations/tiles/1/0/0.mvt?x=1", .badRequest, "unknown_field", "x"),
    ])
    func errorsAreJSON(path: String, status: HTTPResponse.Status, code: String, field: String) async throws {
        try await withAPI { client in
            let response = try await client.get(path)
            #expect(response.status == status)
            #expect(response.contentType == "application/json")
            #expect(try response.json["error"]?["code"]?.stringValue == code)
            #expect(try response.json["error"]?["field"]?.stringValue == field)
        }
    }

    @Test func tooManyFeaturesIs413() async throws {
        let engine = try Engine(layers: [RadiusLayer(name: "stations", kind: .points, features: Sample.features)],
                                limits: Engine.Limits(maxFeaturesPerResponse: 0))
        try await withAPI(engine: engine) { client in
            let response = try await client.get("/v1/layers/stations/tiles/0/0/0.mvt")
            #expect(response.status == .contentTooLarge)
            #expect(try response.json["error"]?["code"] == "too_large")
        }
    }
}
