import Testing
@testable import GeoCluster
@testable import GeoClusterWire

/// supercluster 8.0.1's own test suite (test/test.js) and recorded outputs, replayed
/// against the radius algorithm. The fixtures are in Fixtures/supercluster (see its README).
@Suite
struct SuperclusterConformanceTests {
    /// The input features of places.json (163 Natural Earth points).
    let places: [JSONValue]

    init() throws {
        let collection = try SuperclusterFixtures.json("places.json")
        places = try #require(collection["features"]?.arrayValue)
    }

    private static func fixture(_ name: String) throws -> JSONValue {
        try SuperclusterFixtures.json(name)
    }

    /// Positions of the features; `nil` for a feature without geometry (places.json ends
    /// with one, "Null Island", which supercluster skips but counts).
    private static func coordinates(_ features: [JSONValue]) throws -> [Coordinate?] {
        try features.map { feature in
            guard let geometry = feature["geometry"], !geometry.isNull else { return nil }
            let position = geometry["coordinates"]
            let lon = position?[0]?.doubleValue, lat = position?[1]?.doubleValue
            return Coordinate(longitude: try #require(lon), latitude: try #require(lat))
        }
    }

    private static func pointFeature(_ lon: Double, _ lat: Double, properties: JSONValue = .object(JSONObject())) -> JSONValue {
        GeoJSON.pointFeature(coordinate: Coordinate(longitude: lon, latitude: lat), properties: properties)
    }

    /// Renders a tile the way supercluster's getTile does.
    private func tileFeatures(_ index: RadiusClusterIndex, _ z: Int, _ x: Int, _ y: Int,
                              features: [JSONValue], generateID: Bool = false) throws -> [JSONValue] {
        try index.tile(TileAddress(z: z, x: x, y: y)).map { tileFeature in
            let pointIndex = tileFeature.pointIndex ?? 0
            return tileFeature.geoJSONVT(
                pointTags: features[pointIndex]["properties"] ?? .null,
                pointID: generateID ? .number(Double(pointIndex)) : features[pointIndex]["id"])
        }
    }

    private func worldClusters(_ index: RadiusClusterIndex, zoom: Double, bbox: BoundingBox = .world) throws -> [JSONValue] {
        try index.clusters(in: bbox, zoom: zoom).map { feature in
            var text: [UInt8] = []
            feature.encodeGeoJSON(into: &text) { places[$0].encode(into: &$1) }
            return try JSONValue.parse(text)
        }
    }

    // 1. generates clusters properly
    @Test func tileZeroMatchesTheFixture() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        let expected = try #require(try Self.fixture("places-z0-0-0.json")["features"]?.arrayValue)
        let actual = try tileFeatures(index, 0, 0, 0, features: places)
        #expect(actual.count == expected.count)
        for (a, e) in zip(actual, expected) where a != e {
            Issue.record("tile feature differs:\n  ours:   \(a.jsonString)\n  theirs: \(e.jsonString)")
        }
        #expect(index._checkInvariants())
    }

    // 2. supports minPoints option
    @Test func tileZeroWithMinPointsFiveMatchesTheFixture() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places), options: RadiusClusterOptions(minPoints: 5))
        let expected = try #require(try Self.fixture("places-z0-0-0-min5.json")["features"]?.arrayValue)
        let actual = try tileFeatures(index, 0, 0, 0, features: places)
        #expect(actual.count == expected.count)
        for (a, e) in zip(actual, expected) where a != e {
            Issue.record("tile feature differs:\n  ours:   \(a.jsonString)\n  theirs: \(e.jsonString)")
        }
    }

    // 3. returns children of a cluster
    @Test func childrenOfCluster164() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        #expect(try index.children(of: 164).map(\.pointCount) == [6, 7, 2, 1])
    }

    // 4. returns leaves of a cluster
    @Test func leavesOfCluster164() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        let page = try index.leaves(of: 164, limit: 10, offset: 5)
        let names = page.pointIndices.map { places[$0]["properties"]?["name"]?.stringValue }
        #expect(names == ["Niagara Falls", "Cape San Blas", "Cape Sable", "Cape Canaveral", "San  Salvador",
                          "Cabo Gracias a Dios", "I. de Cozumel", "Grand Cayman", "Miquelon", "Cape Bauld"])
        #expect(page.total == 16)
    }

    // 5. generates unique ids with generateId option
    @Test func generatedIDsOfSinglePointsOnTileZero() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        let ids = try tileFeatures(index, 0, 0, 0, features: places, generateID: true)
            .filter { $0["tags"]?["cluster"] == nil }
            .compactMap { $0["id"]?.intValue }
        #expect(ids == [12, 20, 21, 22, 24, 28, 30, 62, 81, 118, 119, 125, 81, 118])
    }

    // 6. getLeaves handles null-property features
    @Test func leavesKeepNullProperties() throws {
        var features = places
        features.append(.object(["type": "Feature", "properties": .null,
                                 "geometry": ["type": "Point", "coordinates": [-79.04411780507252, 43.08771393436908]]]))
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(features))
        let leaf = try #require(try index.leaves(of: 165, limit: 1, offset: 6).pointIndices.first)
        #expect(features[leaf]["properties"] == .null)
    }

    // 7. returns cluster expansion zoom
    @Test func expansionZooms() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        #expect(try [164, 196, 581, 1157, 4134].map { try index.expansionZoom(of: $0) } == [1, 1, 2, 2, 3])
    }

    // 8. returns cluster expansion zoom for maxZoom
    @Test func expansionZoomBeyondMaxZoom() throws {
        let options = RadiusClusterOptions(radiusPixels: 60, extent: 256, maxZoom: 4)
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places), options: options)
        #expect(try index.expansionZoom(of: 2504) == 5)
    }

    // 9. aggregates cluster properties with reduce
    @Test func reduceSumsScaleranks() throws {
        let scaleranks = places.map { $0["properties"]?["scalerank"]?.doubleValue ?? 0 }
        let (index, sums) = try RadiusClusterIndex.build(
            coordinates: Self.coordinates(places), options: RadiusClusterOptions(radiusPixels: 100),
            aggregation: ClusterAggregation<Double>(map: { scaleranks[$0] }, reduce: { $0 += $1 }))
        func tileSums(_ z: Int, _ x: Int, _ y: Int) throws -> [Double] {
            try index.tile(TileAddress(z: z, x: x, y: y)).compactMap { $0.aggregateIndex.map { sums[$0] } }
        }
        #expect(try tileSums(1, 0, 0) == [146, 84, 63, 23, 34, 12, 19, 29, 8, 8, 80, 35])
        #expect(try tileSums(0, 0, 0) == [298, 122, 12, 36, 98, 7, 24, 8, 125, 98, 125, 12, 36, 8])
    }

    // 10. returns clusters when query crosses international dateline
    @Test func datelineQueries() throws {
        let features = [-178.989, -178.990, -178.991, -178.992].map { Self.pointFeature($0, 0) }
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(features))
        let nonCrossing = try index.clusters(in: BoundingBox(west: -179, south: -10, east: -177, north: 10), zoom: 1)
        let crossing = try index.clusters(in: BoundingBox(west: 179, south: -10, east: -177, north: 10), zoom: 1)
        #expect(!nonCrossing.isEmpty)
        #expect(!crossing.isEmpty)
        #expect(nonCrossing.count == crossing.count)
    }

    // 11. does not crash on weird bbox values
    @Test func weirdBoundingBoxes() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        let cases: [([Double], Int)] = [
            ([129.426390, -103.720017, -445.930843, 114.518236], 26),
            ([112.207836, -84.578666, -463.149397, 120.169159], 27),
            ([129.886277, -82.332680, -445.470956, 120.390930], 26),
            ([458.220043, -84.239039, -117.137190, 120.206585], 25),
            ([456.713058, -80.354196, -118.644175, 120.539148], 25),
            ([453.105328, -75.857422, -122.251904, 120.732760], 25),
            ([-180, -90, 180, 90], 61),
        ]
        for (bbox, count) in cases {
            #expect(try index.clusters(in: BoundingBox(bbox), zoom: 1).count == count, "bbox \(bbox)")
        }
    }

    // 12. does not crash on non-integer zoom values (supercluster asserts only that an
    // array comes back; it is empty there too, and a fractional zoom floors)
    @Test func nonIntegerZoom() throws {
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        let box = try BoundingBox(west: 179, south: -10, east: -177, north: 10)
        #expect(try index.clusters(in: box, zoom: 1.25) == index.clusters(in: box, zoom: 1))
    }

    // 13. makes sure same-location points are clustered
    @Test func sameLocationPointsAreClustered() throws {
        let features = [Self.pointFeature(-1.426798, 53.943034), Self.pointFeature(-1.426798, 53.943034)]
        let options = RadiusClusterOptions(radiusPixels: 16, extent: 8192, maxZoom: 20)
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(features), options: options)
        #expect(try index.itemCount(zoom: 20) == 1)
    }

    // 14. makes sure unclustered point coords are not rounded
    @Test func singlePointTileCoordinatesAreNotRounded() throws {
        let features = [Self.pointFeature(173.19150559062456, -41.340357424709275)]
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(features), options: RadiusClusterOptions(maxZoom: 19))
        let tile = try index.tile(TileAddress(z: 20, x: 1_028_744, y: 656_754))
        #expect(tile.first.map { [$0.pixelX, $0.pixelY] } == [421, 281])
    }

    // 15. does not throw on zero items
    @Test func zeroItems() throws {
        let index = try RadiusClusterIndex(coordinates: [])
        #expect(try index.clusters(in: BoundingBox(west: -180, south: -85, east: 180, north: 85), zoom: 0).isEmpty)
    }

    // Recorded outputs of supercluster 8.0.1 on places.json with default options.

    @Test func worldClusterCountsPerZoom() throws {
        let expected = try Self.fixture("expected-supercluster-8.0.1.json")
        let counts = try #require(expected["getClusters_world_length_by_zoom"]?.arrayValue).compactMap(\.intValue)
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        #expect(try (0...16).map { try index.clusters(in: .world, zoom: Double($0)).count } == counts)
        #expect(try tileFeatures(index, 0, 0, 0, features: places).count == expected["getTile_0_0_0_feature_count"]?.intValue)
    }

    @Test(arguments: [2, 5])
    func worldClustersEqualTheRecordedFeatures(zoom: Int) throws {
        let expected = try Self.fixture("expected-supercluster-8.0.1.json")
        let features = try #require(expected["getClusters_world_z\(zoom)"]?.arrayValue)
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        let actual = try worldClusters(index, zoom: Double(zoom))
        #expect(actual.count == features.count)
        for (a, e) in zip(actual, features) where a != e {
            Issue.record("feature differs:\n  ours:   \(a.jsonString)\n  theirs: \(e.jsonString)")
        }
    }

    @Test func recordedExpansionZooms() throws {
        let expected = try Self.fixture("expected-supercluster-8.0.1.json")
        let rows = try #require(expected["getClusterExpansionZoom_z0_to_z3"]?.arrayValue)
        #expect(rows.count == 108)
        let index = try RadiusClusterIndex(coordinates: Self.coordinates(places))
        for row in rows {
            let zoom = try #require(row["zoom"]?.intValue)
            let id = try #require(row["cluster_id"]?.intValue)
            let cluster = try #require(try index.clusters(in: .world, zoom: Double(zoom)).first { $0.clusterID == id })
            #expect(cluster.pointCount == row["point_count"]?.intValue)
            #expect(cluster.coordinate.longitude == row["coordinates"]?[0]?.doubleValue)
            #expect(cluster.coordinate.latitude == row["coordinates"]?[1]?.doubleValue)
            #expect(try index.expansionZoom(of: id) == row["expansion_zoom"]?.intValue)
        }
    }
}
