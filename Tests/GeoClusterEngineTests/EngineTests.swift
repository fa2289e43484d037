import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

/// A small layer whose answers can be worked out by hand: three points close together
/// in Seoul and one in Busan.
enum SampleLayer {
    static let features: [JSONValue] = [
        feature("seoul-1", 126.9707, 37.5547, name: "Seoul Station"),
        feature("seoul-2", 126.9723, 37.5559, name: "Seoullo 7017"),
        feature("seoul-3", 126.9690, 37.5531, name: "Jungnim-dong"),
        feature("busan-1", 129.0403, 35.1151, name: "Busan Station"),
    ]

    static func feature(_ id: String, _ lon: Double, _ lat: Double, name: String) -> JSONValue {
        GeoJSON.pointFeature(coordinate: Coordinate(longitude: lon, latitude: lat),
                             properties: .object(["name": .string(name)]), id: .string(id))
    }

    static func engine() throws -> Engine {
        try Engine(layers: [RadiusLayer(name: "stations", kind: .points, features: features)])
    }
}

struct EngineTests {
    private func run(_ engine: Engine, _ request: JSONValue) throws -> JSONValue {
        try engine.handle(request).get()
    }

    private func failure(_ engine: Engine, _ request: JSONValue) -> EngineError? {
        if case let .failure(error) = engine.handle(request) { return error }
        return nil
    }

    @Test func layersDescribesEachLayer() throws {
        let result = try run(SampleLayer.engine(), ["op": "layers"])
        let layer = try #require(result["layers"]?[0])
        #expect(layer["name"] == "stations")
        #expect(layer["count"] == 4)
        #expect(layer["bounds"] == [126.969, 35.1151, 129.0403, 37.5559])
        #expect(layer["options"]?["radius"] == 40)
    }

    @Test func worldViewAtLowZoomHasOneClusterPerCity() throws {
        let engine = try SampleLayer.engine()
        let result = try run(engine, ["op": "clusters", "layer": "stations", "bbox": [120, 30, 135, 40], "zoom": 8])
        #expect(result["type"] == "FeatureCollection")
        let features = try #require(result["features"]?.arrayValue)
        #expect(features.count == 2)
        let cluster = try #require(features.first { $0["properties"]?["cluster"] == true })
        #expect(cluster["properties"]?["point_count"] == 3)
        #expect(cluster["properties"]?["point_count_abbreviated"] == 3)
        let single = try #require(features.first { $0["properties"]?["cluster"] == nil })
        #expect(single == SampleLayer.features[3], "single points come back exactly as loaded")
    }

    @Test func clusterNavigation() throws {
        let engine = try SampleLayer.engine()
        let clusters = try run(engine, ["op": "clusters", "layer": "stations", "bbox": [120, 30, 135, 40], "zoom": 8])
        let id = try #require(clusters["features"]?.arrayValue?.compactMap { $0["properties"]?["cluster_id"] }.first)

        let leaves = try run(engine, ["op": "leaves", "layer": "stations", "cluster_id": id, "limit": 2, "offset": 1])
        #expect(leaves["total"] == 3)
        #expect(leaves["features"]?.arrayValue?.count == 2)

        let allLeaves = try run(engine, ["op": "leaves", "layer": "stations", "cluster_id": id, "limit": 10])
        let ids = allLeaves["features"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted()
        #expect(ids == ["seoul-1", "seoul-2", "seoul-3"])

        let expansion = try run(engine, ["op": "expansion_zoom", "layer": "stations", "cluster_id": id])
        let zoom = try #require(expansion["expansion_zoom"]?.intValue)
        #expect(zoom > 8 && zoom <= 17)

        let children = try run(engine, ["op": "children", "layer": "stations", "cluster_id": id])
        let counts = children["features"]?.arrayValue?.map { $0["properties"]?["point_count"]?.intValue ?? 1 }
        #expect(counts?.reduce(0, +) == 3)
    }

    @Test func tileHasPixelGeometry() throws {
        let engine = try SampleLayer.engine()
        let seoul = try TileAddress.containing(Coordinate(longitude: 126.9707, latitude: 37.5547), zoom: 18)
        let result = try run(engine, ["op": "tile", "layer": "stations", "z": .number(18),
                                      "x": .number(Double(seoul.x)), "y": .number(Double(seoul.y))])
        #expect(result["extent"] == 512)
        let features = try #require(result["features"]?.arrayValue)
        let station = try #require(features.first { $0["id"] == "seoul-1" })
        #expect(station["type"] == 1)
        #expect(station["tags"]?["name"] == "Seoul Station")
        let pixelValues = station["geometry"]?[0]?.arrayValue ?? []
        let pixel = pixelValues.compactMap { $0.intValue }
        #expect(pixel.count == 2 && (0..<512).contains(pixel[0]) && (0..<512).contains(pixel[1]))
    }

    @Test func statsCountsEveryLayer() throws {
        let result = try run(SampleLayer.engine(), ["op": "stats"])
        #expect(result == ["layers": 1, "points": 4])
    }

    @Test func errorsNameTheProblemAndTheField() throws {
        let engine = try SampleLayer.engine()
        let cases: [(JSONValue, String, String?)] = [
            ([1, 2], "invalid_request", nil),
            (["op": "cluster"], "unknown_op", "op"),
            (["layer": "stations"], "missing_field", "op"),
            (["op": "clusters", "layer": "birds", "bbox": [0, 0, 1, 1], "zoom": 1], "unknown_layer", "layer"),
            (["op": "clusters", "layer": "stations", "zoom": 1], "missing_field", "bbox"),
            (["op": "clusters", "layer": "stations", "bbox": [0, 0, 1], "zoom": 1], "invalid_field", "bbox"),
            (["op": "clusters", "layer": "stations", "bbox": [0, 10, 1, 0], "zoom": 1], "invalid_bbox", "bbox"),
            (["op": "clusters", "layer": "stations", "bbox": [0, 0, 1, 1], "zoom": "3"], "invalid_field", "zoom"),
            (["op": "clusters", "layer": "stations", "bbox": [0, 0, 1, 1], "zoom": 1, "zom": 2], "unknown_field", "zom"),
            (["op": "children", "layer": "stations", "cluster_id": 2.5], "invalid_field", "cluster_id"),
            (["op": "children", "layer": "stations", "cluster_id": 123_456], "unknown_cluster", "cluster_id"),
            (["op": "leaves", "layer": "stations", "cluster_id": 1, "limit": 0], "invalid_field", "limit"),
            (["op": "tile", "layer": "stations", "z": 2, "x": 4, "y": 0], "invalid_tile", "x"),
        ]
        for (request, code, field) in cases {
            let error = failure(engine, request)
            #expect(error?.code == code, "\(request.jsonString)")
            #expect(error?.field == field, "\(request.jsonString)")
        }
        #expect(failure(engine, ["op": "clusters", "layer": "birds", "bbox": [0, 0, 1, 1], "zoom": 1])?.category == .notFound)
    }

    @Test func oversizedAnswersAreRefused() throws {
        let engine = try Engine(layers: [RadiusLayer(name: "stations", kind: .points, features: SampleLayer.features)],
                                limits: Engine.Limits(maxFeaturesPerResponse: 3))
        let error = failure(engine, ["op": "clusters", "layer": "stations", "bbox": [-180, -90, 180, 90], "zoom": 20])
        #expect(error == .tooLarge(what: "4 features", limit: 3))
        #expect(error?.category == .tooLarge)
    }

    @Test func invalidFeaturesAreRejectedWithTheirIndex() {
        let bad: [JSONValue] = [
            SampleLayer.features[0],
            GeoJSON.pointFeature(coordinate: Coordinate(longitude: 200, latitude: 0), properties: .null),
        ]
        #expect(throws: EngineError.invalidFeature(layer: "x", index: 1,
                                                   reason: "invalid lon of point 1: 200.0 is outside [-180, 180]")) {
            try RadiusLayer(name: "x", kind: .points, features: bad)
        }
        #expect(throws: EngineError.invalidFeature(layer: "x", index: 0, reason: "geometry must be a Point")) {
            try RadiusLayer(name: "x", kind: .points, features: [["type": "Feature", "properties": .null,
                                                             "geometry": ["type": "LineString", "coordinates": []]]])
        }
        #expect(throws: EngineError.self) {
            try Engine(layers: [RadiusLayer(name: "a", kind: .points, features: []), RadiusLayer(name: "a", kind: .points, features: [])])
        }
    }

    /// Radius layers' features and live layers' records follow one rule for positions:
    /// [lon, lat] or [lon, lat, altitude], all numbers.
    @Test func radiusAndLiveLayersTakeTheSamePositions() throws {
        func point(_ coordinates: JSONValue) -> JSONValue {
            ["type": "Feature", "id": "a", "properties": ["name": "A", "category": "cafe"],
             "geometry": ["type": "Point", "coordinates": coordinates]]
        }
        for (coordinates, valid) in [([127, 37.5], true), ([127, 37.5, 12], true), ([127, 37.5, 12, 0], false),
                                     ([127], false), ([127, 37.5, "high"], false)] as [(JSONValue, Bool)] {
            let radius = Result { try RadiusLayer(name: "x", kind: .points, features: [point(coordinates)]) }
            let live = Result { try LayerRecord(json: point(coordinates), kind: .places, layer: "x", index: 0) }
            #expect(((try? radius.get()) != nil) == valid, "\(coordinates.jsonString)")
            #expect(((try? live.get()) != nil) == valid, "\(coordinates.jsonString)")
        }
    }
}
