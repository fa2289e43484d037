import Foundation
import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

/// Cluster answers and pages of leaves are written straight to text, without a JSON
/// tree. The text must be JSON in the writer's one form (parsing it and writing the
/// value again gives the same bytes), hold as many features as the answer counts, and
/// say what the layer holds, for every kind of layer and view.
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

    /// The answer's text, checked to be JSON in canonical form, and its value.
    @discardableResult
    static func written(_ engine: Engine, _ request: Request) throws -> JSONValue {
        var written: [UInt8] = []
        try engine.encode(request, into: &written)
        let value = try JSONValue.parse(written)
        var again: [UInt8] = []
        value.encode(into: &again)
        #expect(written == again, "\(request)")
        #expect(value["type"] == "FeatureCollection", "\(request)")
        return value
    }

    static func check(_ engine: Engine, layer: String, filters: [LayerFilter] = [.none]) throws -> Int {
        var clusters = 0
        for filter in filters {
            for (bbox, zooms) in try views() {
                for zoom in zooms {
                    let request = Request.clusters(layer: layer, bbox: bbox, zoom: zoom, filter: filter)
                    let answer = try written(engine, request)
                    let clusterFeatures = (answer["features"]?.arrayValue ?? []).filter { $0["properties"]?["cluster"] == true }
                    for cluster in clusterFeatures.prefix(3) {
                        let id = try #require(cluster["properties"]?["cluster_id"]?.intValue)
                        #expect(cluster["id"]?.intValue == id)
                        let children = try written(engine, .children(layer: layer, clusterID: id, filter: filter))
                        let count = try #require(cluster["properties"]?["point_count"]?.intValue)
                        let childCounts = (children["features"]?.arrayValue ?? [])
                            .map { $0["properties"]?["point_count"]?.intValue ?? 1 }
                        #expect(childCounts.reduce(0, +) == count, "children of \(id)")
                        let leaves = try written(engine, .leaves(layer: layer, clusterID: id, limit: 7, offset: 1, filter: filter))
                        #expect(leaves["total"]?.intValue == count && leaves["limit"] == 7 && leaves["offset"] == 1)
                        #expect(leaves["features"]?.arrayValue?.count == min(7, count - 1))
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
    /// that JSON must escape read back as given.
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
        for layer in ["sightings", "places"] {
            let answer = try Self.written(engine, .clusters(layer: layer, bbox: .world, zoom: 12))
            var seen: Set<String> = []
            for feature in answer["features"]?.arrayValue ?? [] {
                let properties = feature["properties"]
                for top in properties?["top_species"]?.arrayValue ?? [] { seen.insert(top["species"]?.stringValue ?? "") }
                for key in properties?["categories"]?.objectValue?.keys ?? [] { seen.insert(key) }
            }
            #expect(seen == Set(names), "\(layer)")
        }
    }

    /// A cluster's aggregates have two writers: text for cluster answers, an object for
    /// tiles. A cluster of a tile and the same cluster in a clusters answer over the tile
    /// at the same zoom carry the same properties.
    @Test func tilesAndClusterAnswersAgreeOnAggregates() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: LayerCatalogTests.dataDirectory))
        var compared = 0
        var byIndividuals = LayerFilter()
        byIndividuals.topBy = .individuals
        for (layer, filter) in [("sightings", LayerFilter.none), ("sightings", byIndividuals), ("places", .none)] {
            for z in [5, 7, 9, 11, 13] {
                let n = Double(1 << z)
                let x = Int((126.98 + 180) / 360 * n)
                let y = Int((1 - log(tan(37.56 * .pi / 180) + 1 / cos(37.56 * .pi / 180)) / .pi) / 2 * n)
                func lon(_ x: Int) -> Double { Double(x) / n * 360 - 180 }
                func lat(_ y: Int) -> Double { atan(sinh(.pi * (1 - 2 * Double(y) / n))) * 180 / .pi }
                let bbox = try BoundingBox([lon(x), lat(y + 1), lon(x + 1), lat(y)])
                let clusters = try engine.execute(.clusters(layer: layer, bbox: bbox, zoom: Double(z), filter: filter))
                var byID: [Int: JSONValue] = [:]
                for feature in clusters["features"]?.arrayValue ?? [] {
                    if let id = feature["properties"]?["cluster_id"]?.intValue { byID[id] = feature["properties"] }
                }
                let tile = try engine.execute(.tile(layer: layer, address: TileAddress(z: z, x: x, y: y), filter: filter))
                for feature in tile["features"]?.arrayValue ?? [] {
                    guard let id = feature["tags"]?["cluster_id"]?.intValue, let properties = byID[id] else { continue }
                    #expect(feature["tags"] == properties, "\(layer) z\(z) cluster \(id)")
                    compared += 1
                }
            }
        }
        #expect(compared > 10)
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
        let engine = try Engine(layers: [RadiusLayer(name: "points", kind: .points, features: features)])
        #expect(try Self.check(engine, layer: "points") > 20)
    }

    /// Extra cluster members come first, then supercluster's properties; a single
    /// point is the text its writer appends.
    @Test func clusterFeaturesWithExtraMembers() throws {
        let feature = ClusterFeature(kind: .cluster(id: 1_234_567, pointCount: 12_345),
                                     coordinate: Coordinate(longitude: 127.02758312225342, latitude: -1e-7))
        var written: [UInt8] = []
        feature.encodeGeoJSON(into: &written, extraClusterMembers: { $0 += #""individuals":40,"#.utf8 }) { _, _ in }
        #expect(String(decoding: written, as: UTF8.self) == """
            {"type":"Feature","id":1234567,"properties":{"individuals":40,"cluster":true,"cluster_id":1234567,\
            "point_count":12345,"point_count_abbreviated":"12k"},\
            "geometry":{"type":"Point","coordinates":[127.02758312225342,-1e-7]}}
            """)
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
