import GeoCluster
import GeoClusterWire

/// A strict reader of Mapbox Vector Tile 2.1 protobuf, written from the specification
/// (vector_tile.proto) independently of the encoder, for checking what the service sends.
struct VectorTileDecoder {
    struct DecodingError: Error, CustomStringConvertible {
        let description: String
    }

    struct Tile {
        var layers: [Layer] = []
    }

    struct Layer {
        var version: UInt64?
        var name: String?
        var extent: UInt64 = 4096
        var keys: [String] = []
        var values: [JSONValue] = []
        var features: [Feature] = []
    }

    struct Feature {
        var id: UInt64?
        var type: UInt64 = 0
        var tags: [UInt32] = []
        var geometry: [UInt32] = []
    }

    static func decode(_ bytes: [UInt8]) throws -> Tile {
        var tile = Tile()
        var reader = Reader(bytes[...])
        while let (field, wire) = try reader.key() {
            if field == 3, wire == 2 {
                tile.layers.append(try layer(reader.lengthDelimited()))
            } else {
                try reader.skip(wire)
            }
        }
        return tile
    }

    private static func layer(_ bytes: ArraySlice<UInt8>) throws -> Layer {
        var layer = Layer()
        var reader = Reader(bytes)
        while let (field, wire) = try reader.key() {
            switch (field, wire) {
            case (15, 0): layer.version = try reader.varint()
            case (1, 2): layer.name = try reader.string()
            case (2, 2): layer.features.append(try feature(reader.lengthDelimited()))
            case (3, 2): layer.keys.append(try reader.string())
            case (4, 2): layer.values.append(try value(reader.lengthDelimited()))
            case (5, 0): layer.extent = try reader.varint()
            default: try reader.skip(wire)
            }
        }
        return layer
    }

    private static func feature(_ bytes: ArraySlice<UInt8>) throws -> Feature {
        var feature = Feature()
        var reader = Reader(bytes)
        while let (field, wire) = try reader.key() {
            switch (field, wire) {
            case (1, 0): feature.id = try reader.varint()
            case (2, 2): feature.tags += try reader.packed()
            case (3, 0): feature.type = try reader.varint()
            case (4, 2): feature.geometry += try reader.packed()
            default: try reader.skip(wire)
            }
        }
        return feature
    }

    /// A `Value` message as JSON: exactly one of its fields must be present.
    private static func value(_ bytes: ArraySlice<UInt8>) throws -> JSONValue {
        var reader = Reader(bytes)
        var result: JSONValue?
        while let (field, wire) = try reader.key() {
            guard result == nil else { throw DecodingError(description: "a Value with two fields") }
            switch (field, wire) {
            case (1, 2): result = .string(try reader.string())
            case (2, 5): result = .number(Double(Float(bitPattern: UInt32(truncatingIfNeeded: try reader.fixed(4)))))
            case (3, 1): result = .number(Double(bitPattern: try reader.fixed(8)))
            case (4, 0): result = .number(Double(Int64(bitPattern: try reader.varint())))
            case (5, 0): result = .number(Double(try reader.varint()))
            case (6, 0):
                let raw = try reader.varint()
                result = .number(Double(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)))
            case (7, 0): result = .bool(try reader.varint() != 0)
            default: throw DecodingError(description: "unknown Value field \(field)/\(wire)")
            }
        }
        guard let result else { throw DecodingError(description: "an empty Value") }
        return result
    }

    /// The tags of `feature` resolved against the layer's tables, in order.
    static func properties(of feature: Feature, in layer: Layer) throws -> JSONObject {
        guard feature.tags.count.isMultiple(of: 2) else { throw DecodingError(description: "odd tag count") }
        var properties = JSONObject()
        for pair in stride(from: 0, to: feature.tags.count, by: 2) {
            let key = Int(feature.tags[pair]), value = Int(feature.tags[pair + 1])
            guard layer.keys.indices.contains(key), layer.values.indices.contains(value) else {
                throw DecodingError(description: "tag index out of range")
            }
            guard !properties.contains(key: layer.keys[key]) else { throw DecodingError(description: "repeated key") }
            properties[layer.keys[key]] = layer.values[value]
        }
        return properties
    }

    /// The points of a POINT geometry: MoveTo commands with zigzag deltas from the cursor.
    static func points(of feature: Feature) throws -> [[Int]] {
        var points: [[Int]] = []
        var x = 0, y = 0, i = 0
        while i < feature.geometry.count {
            let command = feature.geometry[i]
            let (id, count) = (command & 0x7, Int(command >> 3))
            guard id == 1, count > 0, i + 2 * count < feature.geometry.count else {
                throw DecodingError(description: "not a MoveTo command: \(command)")
            }
            for n in 0..<count {
                x += zigzagDecode(feature.geometry[i + 1 + 2 * n])
                y += zigzagDecode(feature.geometry[i + 2 + 2 * n])
                points.append([x, y])
            }
            i += 1 + 2 * count
        }
        return points
    }

    private static func zigzagDecode(_ value: UInt32) -> Int {
        Int(Int32(bitPattern: value >> 1) ^ -Int32(bitPattern: value & 1))
    }

    private struct Reader {
        var bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        mutating func key() throws -> (UInt64, UInt64)? {
            guard !bytes.isEmpty else { return nil }
            let key = try varint()
            return (key >> 3, key & 0x7)
        }

        mutating func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while let byte = bytes.popFirst() {
                guard shift < 64 else { throw DecodingError(description: "varint too long") }
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return result }
                shift += 7
            }
            throw DecodingError(description: "truncated varint")
        }

        mutating func fixed(_ count: Int) throws -> UInt64 {
            guard bytes.count >= count else { throw DecodingError(description: "truncated fixed field") }
            var result: UInt64 = 0
            for (i, byte) in bytes.prefix(count).enumerated() { result |= UInt64(byte) << (8 * UInt64(i)) }
            bytes = bytes.dropFirst(count)
            return result
        }

        mutating func lengthDelimited() throws -> ArraySlice<UInt8> {
            let length = Int(try varint())
            guard bytes.count >= length else { throw DecodingError(description: "truncated message") }
            let slice = bytes.prefix(length)
            bytes = bytes.dropFirst(length)
            return slice
        }

        mutating func string() throws -> String {
            guard let text = String(validating: try lengthDelimited(), as: UTF8.self) else {
                throw DecodingError(description: "a string that is not UTF-8")
            }
            return text
        }

        mutating func packed() throws -> [UInt32] {
            var inner = Reader(try lengthDelimited())
            var values: [UInt32] = []
            while !inner.bytes.isEmpty {
                let value = try inner.varint()
                guard value <= UInt64(UInt32.max) else { throw DecodingError(description: "uint32 overflow") }
                values.append(UInt32(value))
            }
            return values
        }

        mutating func skip(_ wire: UInt64) throws {
            switch wire {
            case 0: _ = try varint()
            case 1: _ = try fixed(8)
            case 2: _ = try lengthDelimited()
            case 5: _ = try fixed(4)
            default: throw DecodingError(description: "unsupported wire type \(wire)")
            }
        }
    }
}
