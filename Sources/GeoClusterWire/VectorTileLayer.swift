import GeoCluster

/// One layer of point features of a Mapbox Vector Tile (specification 2.1,
/// https://github.com/mapbox/vector-tile-spec/tree/master/2.1), built feature by feature
/// and then written as the protobuf bytes of a tile holding just this layer.
///
/// Property keys and values are stored once per layer and referenced by index, as the
/// specification asks. Values keep their JSON type: strings, integers (unsigned `uint`,
/// or zigzag `sint` when negative), other numbers as `double`, booleans. `null` members
/// are left out (the format has no null), and arrays and objects are written as their
/// compact JSON text, as vt-pbf (which turns geojson-vt tiles into protobuf) does.
///
/// Besides the output bytes, a tile allocates two hash tables (key and value to index):
/// they keep deduplication linear in the number of properties, where a tile of points
/// with distinct names has about as many values as features.
public struct VectorTileLayer: Sendable {
    /// The layer's name: what a style's `source-layer` selects.
    public let name: String
    /// Pixels across the tile in feature coordinates. The specification's usual 4096 is not
    /// required; renderers scale any extent to their own.
    public let extent: Int
    /// Features written so far.
    public private(set) var featureCount = 0

    /// The `features` fields (number 2) of the layer message, already encoded.
    private var encodedFeatures = ProtobufWriter()
    private var keys: [String] = []
    private var keyIndices: [ExactString: UInt32] = [:]
    private var values: [Value] = []
    private var valueIndices: [Value: UInt32] = [:]

    /// A property value as the `Value` message holds it.
    enum Value: Hashable, Sendable {
        case string(ExactString)
        case double(Double)
        case uint(UInt64)
        case sint(Int64)
        case bool(Bool)
    }

    public init(name: String, extent: Int) {
        self.name = name
        self.extent = extent
    }

    /// Adds a POINT feature at a pixel position (0 to `extent` inside the tile, beyond it
    /// in the buffer around the tile).
    ///
    /// - Parameters:
    ///   - id: The feature's `id` field; `nil` writes none.
    ///   - properties: Written in order; `null` members are left out.
    public mutating func appendPoint(pixelX: Int, pixelY: Int, id: UInt64?, properties: JSONObject) {
        var tags: [UInt32] = []
        tags.reserveCapacity(2 * properties.count)
        for (key, value) in properties {
            guard let value = Self.value(of: value) else { continue }
            tags.append(index(ofKey: key))
            tags.append(index(of: value))
        }

        var feature = ProtobufWriter()
        if let id { feature.uint64Field(Field.featureID, id) }
        feature.packedField(Field.featureTags, tags)
        feature.uint64Field(Field.featureType, Self.pointGeometryType)
        feature.packedField(Field.featureGeometry, [
            Self.command(id: 1, count: 1), // MoveTo, once: one point
            UInt32(truncatingIfNeeded: ProtobufWriter.zigzag(Int64(pixelX))),
            UInt32(truncatingIfNeeded: ProtobufWriter.zigzag(Int64(pixelY))),
        ])
        encodedFeatures.bytesField(Field.layerFeatures, feature.bytes)
        featureCount += 1
    }

    /// The bytes of a tile (`Tile` message) whose only layer is this one. A layer without
    /// features is still written, with its name, version and extent.
    public func encodedTile() -> [UInt8] {
        var layer = ProtobufWriter()
        layer.uint64Field(Field.layerVersion, Self.version)
        layer.stringField(Field.layerName, name)
        var body = layer.bytes
        body.append(contentsOf: encodedFeatures.bytes)
        var tail = ProtobufWriter()
        for key in keys { tail.stringField(Field.layerKeys, key) }
        for value in values { tail.bytesField(Field.layerValues, Self.encode(value)) }
        tail.uint64Field(Field.layerExtent, UInt64(extent))
        body.append(contentsOf: tail.bytes)

        var tile = ProtobufWriter()
        tile.bytesField(Field.tileLayers, body)
        return tile.bytes
    }

    /// The typed value of a JSON property; `nil` for `null`, which is left out.
    static func value(of json: JSONValue) -> Value? {
        switch json {
        case .null:
            return nil
        case let .bool(flag):
            return .bool(flag)
        case let .string(text):
            return .string(ExactString(text))
        case let .number(number):
            if number.rounded(.towardZero) == number {
                if number >= 0, let unsigned = UInt64(exactly: number) { return .uint(unsigned) }
                if let signed = Int64(exactly: number) { return .sint(signed) }
            }
            return .double(number)
        case .array, .object:
            return .string(ExactString(json.jsonString))
        }
    }

    private mutating func index(ofKey key: String) -> UInt32 {
        let exact = ExactString(key)
        if let index = keyIndices[exact] { return index }
        let index = UInt32(keys.count)
        keys.append(key)
        keyIndices[exact] = index
        return index
    }

    private mutating func index(of value: Value) -> UInt32 {
        if let index = valueIndices[value] { return index }
        let index = UInt32(values.count)
        values.append(value)
        valueIndices[value] = index
        return index
    }

    private static func encode(_ value: Value) -> [UInt8] {
        var message = ProtobufWriter()
        switch value {
        case let .string(text): message.stringField(Field.valueString, text.string)
        case let .double(number): message.doubleField(Field.valueDouble, number)
        case let .uint(number): message.uint64Field(Field.valueUInt, number)
        case let .sint(number): message.sint64Field(Field.valueSInt, number)
        case let .bool(flag): message.boolField(Field.valueBool, flag)
        }
        return message.bytes
    }

    /// A geometry command integer: the command id in the low 3 bits, the repeat count above.
    static func command(id: UInt32, count: UInt32) -> UInt32 { id & 0x7 | count << 3 }

    /// The specification version this encoder writes.
    static let version: UInt64 = 2
    /// `GeomType.POINT`.
    static let pointGeometryType: UInt64 = 1

    /// Field numbers of vector_tile.proto 2.1.
    enum Field {
        static let tileLayers: UInt32 = 3
        static let layerVersion: UInt32 = 15
        static let layerName: UInt32 = 1
        static let layerFeatures: UInt32 = 2
        static let layerKeys: UInt32 = 3
        static let layerValues: UInt32 = 4
        static let layerExtent: UInt32 = 5
        static let featureID: UInt32 = 1
        static let featureTags: UInt32 = 2
        static let featureType: UInt32 = 3
        static let featureGeometry: UInt32 = 4
        static let valueString: UInt32 = 1
        static let valueDouble: UInt32 = 3
        static let valueUInt: UInt32 = 5
        static let valueSInt: UInt32 = 6
        static let valueBool: UInt32 = 7
    }
}

/// A string compared and hashed by its UTF-8 bytes, as JSON keys are (see ``JSONValue``),
/// so that canonically equivalent but different strings stay two keys.
struct ExactString: Hashable, Sendable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: ExactString, rhs: ExactString) -> Bool { JSONValue.bytesEqual(lhs.string, rhs.string) }

    func hash(into hasher: inout Hasher) { JSONValue.hashBytes(of: string, into: &hasher) }
}
