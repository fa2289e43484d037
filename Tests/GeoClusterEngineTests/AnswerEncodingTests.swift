import Testing
import GeoCluster
@testable import GeoClusterEngine

/// `Engine.encode` writes cluster answers and pages of leaves without building their JSON
/// trees; its bytes must be those of `execute`'s value, encoded, for every kind of layer
/// and view.
struct AnswerEncodingTests {
    /// The views: the world at every zoom, Korea, Seoul close up, and a box across the
    /// antimeridian.
    static func views() throws -> [(BoundingBox, [Double])] {
        [
            (.world, Array(0...16).map(Double.init)),
            (try BoundingBox([124, 33, 132, 39]), [4, 6, 8, 10.5]),
            (try BoundingBox([126.8, 37.4, 127.2, 37.7]), [11, 13, 15, 17, 20]),
            (try BoundingBox([170, -50, -170, 50]), [2, 5]),
        ]
    }

    static func sameBytes(_ engine: Engine, _ request: Request) throws {
        var written: [UInt8] = []
        try engine.encode(request, into: &written)
        var expected: [UInt8] = []
        try engine.execute(request).encode(into: &expected)
        #expect(written == expected, "\(request)")
    }

    static func check(_ engine: Engine, layer: String, filters: [LayerFilter] = [.none]) throws -> Int {
        var clusters = 0
        for filter in filters {
            for (bbox, zooms) in try views() {
                for zoom in zooms {
                    let request = Request.clusters(layer: layer, bbox: bbox, zoom: zoom, filter: filter)
                    try sameBytes(engine, request)
                    let answer = try engine.execute(request)
                    for id in (answer["features"]?.arrayValue ?? []).compactMap({ $0["properties"]?["cluster_id"]?.intValue }).prefix(3) {
                        try sameBytes(engine, .children(layer: layer, clusterID: id, filter: filter))
                        try sameBytes(engine, .leaves(layer: layer, clusterID: id, limit: 7, offset: 1, filter: filter))
                        clusters += 1
                    }
                }
            }
        }
        return clusters
    }

    @Test func liveLayersWithAggregatesAndFilters() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: LayerCatalogTests.dataDirectory))
        let species = LayerFilter(species: ["Grus japonensis", "Anas acuta"])
        #expect(try Self.check(engine, layer: "sightings", filters: [.none, species]) > 20)
        #expect(try Self.check(engine, layer: "places") > 20)
        #expect(try Self.check(engine, layer: "stations") > 0)
    }

    /// Aggregates are written as text from the names kept per species and category; names
    /// that JSON must escape come out as the tree writes them.
    @Test func aggregatesWithNamesThatNeedEscapes() throws {
        let names = ["Grus \"japonensis\"", "back\\slash", "line\nbreak", "두루미", "tab\there"]
        var sightings: [LayerRecord] = [], places: [LayerRecord] = []
        for i in 0..<400 {
            let lon = 126.9 + Double(i % 20) * 0.004, lat = 37.5 + Double(i / 20) * 0.003
            let observed = "2025-0\(1 + i % 9)-1\(i % 10)T07:30:00+09:00"
            sightings.append(try LayerRecord(json: ["id": .string("s\(i)"), "lon": .number(lon), "lat": .number(lat),
                                                    "species": .string(names[i % names.count]), "count": .number(Double(1 + i % 4)),
                                                    "observed_at": .string(observed)],
                                             kind: .sightings, layer: "sightings", index: i))
            places.append(try LayerRecord(json: ["id": .string("p\(i)"), "lon": .number(lon), "lat": .number(lat),
                                                 "name": .string("Place \(i)"), "category": .string(names[i % names.count])],
                                          kind: .places, layer: "places", index: i))
        }
        let engine = try Engine(entries: [
            .live(LiveLayerStore(LiveLayer(name: "sightings", kind: .sightings, records: sightings))),
            .live(LiveLayerStore(LiveLayer(name: "places", kind: .places, records: places))),
        ])
        #expect(try Self.check(engine, layer: "sightings") > 20)
        #expect(try Self.check(engine, layer: "places") > 20)
    }

    @Test func radiusLayers() throws {
        var features: [JSONValue] = []
        for i in 0..<3_000 {
            let coordinate = Coordinate(longitude: 126 + Double(i % 60) * 0.05 + Double(i % 7) * 1e-5,
                                        latitude: 34 + Double(i / 60) * 0.08)
            let properties: JSONValue = i % 3 == 0 ? .null : .object(["name": .string("point \"\(i)\"\n"), "rank": .number(Double(i) / 7)])
            features.append(GeoJSON.pointFeature(coordinate: coordinate, properties: properties,
                                                 id: i % 2 == 0 ? .number(Double(i)) : .string("p\(i)")))
        }
        let engine = try Engine(layers: [Layer(name: "points", kind: .points, features: features)])
        #expect(try Self.check(engine, layer: "points") > 20)
    }

    /// Extra cluster properties come first; one named like a supercluster property keeps
    /// its own position and takes supercluster's value, as in the tree.
    @Test func clusterFeaturesWithExtraProperties() {
        let feature = ClusterFeature(kind: .cluster(id: 1_234_567, pointCount: 12_345),
                                     coordinate: Coordinate(longitude: 127.02758312225342, latitude: -1e-7))
        let extras: [JSONObject] = [
            JSONObject(), ["individuals": 40, "top_species": [["species": "Grus japonensis", "count": 3]]],
            ["a": 1, "point_count": "mine", "z": .null], ["cluster": false],
        ]
        for extra in extras {
            var written: [UInt8] = []
            feature.encodeGeoJSON(into: &written, extraClusterProperties: extra) { _, _ in }
            #expect(written == Array(feature.geoJSON(extraClusterProperties: extra) { _ in .null }.jsonString.utf8))
        }
        var point: [UInt8] = []
        ClusterFeature(kind: .point(index: 7), coordinate: Coordinate(longitude: 1, latitude: 2))
            .encodeGeoJSON(into: &point) { index, buffer in buffer.append(contentsOf: "point \(index)".utf8) }
        #expect(point == Array("point 7".utf8))
    }

    /// A radius layer keeps its features as text: each reads back as the value given and
    /// writes the text `JSON.stringify` would.
    @Test func encodedFeaturesReadBackAsGiven() throws {
        let features: [JSONValue] = [
            GeoJSON.pointFeature(coordinate: Coordinate(longitude: -179.99999999999997, latitude: 1e-7), properties: .null),
            GeoJSON.pointFeature(coordinate: Coordinate(longitude: 126.97, latitude: 37.55),
                                 properties: ["name": "서울역 \"Seoul\"\n\u{1}", "tags": ["a", 1.5, true, .null],
                                              "nested": ["deeper": ["deepest": [[[]]]]], "big": 1e21, "tiny": .number(Double.leastNonzeroMagnitude)],
                                 id: "s-1"),
            .object(["type": "Feature", "geometry": ["type": "Point", "coordinates": [0, 0, 12.5]], "id": 7,
                     "properties": [:]]),
        ]
        let encoded = EncodedFeatures(features)
        #expect(encoded.count == features.count)
        for (i, feature) in features.enumerated() {
            #expect(encoded[i] == feature)
            #expect(encoded.properties(at: i) == feature["properties"] && encoded.id(at: i) == feature["id"])
            var text: [UInt8] = []
            encoded.encode(i, into: &text)
            #expect(text == Array(feature.jsonString.utf8))
        }
        #expect(encoded.byteCount == features.map(\.jsonString.utf8.count).reduce(0, +))
        #expect(EncodedFeatures([]).isEmpty)
    }
}
