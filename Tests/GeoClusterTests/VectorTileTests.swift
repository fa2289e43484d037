import Testing
@testable import GeoCluster
@testable import GeoClusterWire

struct ProtobufWriterTests {
    @Test func varintsAreLittleEndianBase128() {
        let cases: [(UInt64, [UInt8])] = [
            (0, [0x00]), (1, [0x01]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
            (4096, [0x80, 0x20]),
            (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        ]
        for (value, bytes) in cases {
            var writer = ProtobufWriter()
            writer.varint(value)
            #expect(writer.bytes == bytes, "\(value)")
        }
    }

    @Test func zigzagInterleavesSigns() {
        let cases: [(Int64, UInt64)] = [(0, 0), (-1, 1), (1, 2), (-2, 3), (2, 4), (25, 50), (17, 34),
                                        (Int64.max, UInt64.max - 1), (Int64.min, UInt64.max)]
        for (value, encoded) in cases {
            #expect(ProtobufWriter.zigzag(value) == encoded, "\(value)")
        }
    }

    @Test func doublesAreLittleEndianFixed64() {
        var writer = ProtobufWriter()
        writer.doubleField(3, 1.5) // 0x3FF8000000000000
        #expect(writer.bytes == [0x19, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F])
    }

    @Test func emptyPackedFieldsAreLeftOut() {
        var writer = ProtobufWriter()
        writer.packedField(2, [])
        #expect(writer.bytes.isEmpty)
    }
}

struct VectorTileLayerTests {
    /// The point example of the vector tile specification (2.1, section 4.3.5): one point
    /// at (25, 17), here with id 1 and one property, worked out byte by byte.
    @Test func onePointTileByteForByte() {
        var layer = VectorTileLayer(name: "a", extent: 4096)
        layer.appendPoint(pixelX: 25, pixelY: 17, id: 1, properties: ["k": "v"])
        let feature: [UInt8] = [
            0x08, 0x01, // id = 1
            0x12, 0x02, 0x00, 0x00, // tags = [key 0, value 0]
            0x18, 0x01, // type = POINT
            0x22, 0x03, 0x09, 0x32, 0x22, // geometry = [MoveTo(1), zigzag 25, zigzag 17]
        ]
        var body: [UInt8] = [0x78, 0x02, 0x0A, 0x01, 0x61] // version 2, name "a"
        body += [0x12, UInt8(feature.count)] + feature
        body += [0x1A, 0x01, 0x6B] // keys: "k"
        body += [0x22, 0x03, 0x0A, 0x01, 0x76] // values: {string_value: "v"}
        body += [0x28, 0x80, 0x20] // extent 4096
        #expect(layer.encodedTile() == [0x1A, UInt8(body.count)] + body)
        #expect(layer.featureCount == 1)
    }

    @Test func emptyLayerKeepsNameVersionAndExtent() {
        let layer = VectorTileLayer(name: "stations", extent: 512)
        let body: [UInt8] = [0x78, 0x02, 0x0A, 0x08] + Array("stations".utf8) + [0x28, 0x80, 0x04]
        #expect(layer.encodedTile() == [0x1A, UInt8(body.count)] + body)
    }

    @Test func valuesKeepTheirJSONType() {
        #expect(VectorTileLayer.value(of: "서울") == .string(ExactString("서울")))
        #expect(VectorTileLayer.value(of: 12) == .uint(12))
        #expect(VectorTileLayer.value(of: 0) == .uint(0))
        #expect(VectorTileLayer.value(of: -3) == .sint(-3))
        #expect(VectorTileLayer.value(of: 0.25) == .double(0.25))
        #expect(VectorTileLayer.value(of: -1.5) == .double(-1.5))
        #expect(VectorTileLayer.value(of: 1e30) == .double(1e30), "integral but beyond 64 bits")
        #expect(VectorTileLayer.value(of: true) == .bool(true))
        #expect(VectorTileLayer.value(of: .null) == nil)
        #expect(VectorTileLayer.value(of: ["a", 1]) == .string(ExactString(#"["a",1]"#)))
        #expect(VectorTileLayer.value(of: ["x": ["y": nil]]) == .string(ExactString(#"{"x":{"y":null}}"#)))
    }

    @Test func keysAndValuesAreStoredOnce() {
        var layer = VectorTileLayer(name: "a", extent: 512)
        for i in 0..<10 {
            layer.appendPoint(pixelX: i, pixelY: i, id: nil, properties: ["kind": "station", "open": true])
        }
        let bytes = layer.encodedTile()
        func occurrences(of text: String) -> Int {
            let needle = Array(text.utf8)
            return (0...(bytes.count - needle.count)).count { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
        }
        #expect(occurrences(of: "kind") == 1)
        #expect(occurrences(of: "station") == 1)
        #expect(layer.featureCount == 10)
    }

    @Test func nullPropertiesAreLeftOut() {
        var withNull = VectorTileLayer(name: "a", extent: 512)
        withNull.appendPoint(pixelX: 1, pixelY: 2, id: nil, properties: ["k": "v", "gone": nil])
        var without = VectorTileLayer(name: "a", extent: 512)
        without.appendPoint(pixelX: 1, pixelY: 2, id: nil, properties: ["k": "v"])
        #expect(withNull.encodedTile() == without.encodedTile())
    }

    @Test func idsThatAreNotUnsignedIntegersBecomeProperties() {
        func tile(id: JSONValue?, properties: JSONValue) -> [UInt8] {
            var layer = VectorTileLayer(name: "a", extent: 512)
            layer.append(TileFeature(kind: .point(index: 0), pixelX: 1, pixelY: 2), pointProperties: properties, pointID: id)
            return layer.encodedTile()
        }
        func expected(id: UInt64?, properties: JSONObject) -> [UInt8] {
            var layer = VectorTileLayer(name: "a", extent: 512)
            layer.appendPoint(pixelX: 1, pixelY: 2, id: id, properties: properties)
            return layer.encodedTile()
        }
        #expect(tile(id: 7, properties: ["n": 1]) == expected(id: 7, properties: ["n": 1]))
        #expect(tile(id: "s-1", properties: ["n": 1]) == expected(id: nil, properties: ["n": 1, "id": "s-1"]))
        #expect(tile(id: -5, properties: .null) == expected(id: nil, properties: ["id": -5]))
        #expect(tile(id: 2.5, properties: .null) == expected(id: nil, properties: ["id": 2.5]))
        #expect(tile(id: "s-1", properties: ["id": "own"]) == expected(id: nil, properties: ["id": "own"]))
        #expect(tile(id: nil, properties: .null) == expected(id: nil, properties: [:]))
    }

    @Test func clustersCarrySuperclusterProperties() {
        var layer = VectorTileLayer(name: "a", extent: 512)
        layer.append(TileFeature(kind: .cluster(id: 17, pointCount: 1_234), pixelX: 3, pixelY: 4),
                     pointProperties: .null, pointID: nil)
        var expected = VectorTileLayer(name: "a", extent: 512)
        expected.appendPoint(pixelX: 3, pixelY: 4, id: 17, properties: [
            "cluster": true, "cluster_id": 17, "point_count": 1_234, "point_count_abbreviated": "1.2k",
        ])
        #expect(layer.encodedTile() == expected.encodedTile())
    }
}
