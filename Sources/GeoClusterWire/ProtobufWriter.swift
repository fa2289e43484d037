import GeoCluster

/// Appends Protocol Buffers wire-format fields to a byte array: just what a Mapbox
/// Vector Tile needs (varints, zigzag varints, 64-bit doubles, length-delimited bytes and
/// packed varints). Encoding follows https://protobuf.dev/programming-guides/encoding/.
struct ProtobufWriter {
    /// The wire types used here.
    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    private(set) var bytes: [UInt8] = []

    init() {}

    /// A field's key: its number and wire type in one varint.
    mutating func key(_ field: UInt32, _ type: WireType) {
        varint(UInt64(field) << 3 | UInt64(type.rawValue))
    }

    /// Base-128 varint, least significant group first; 1 to 10 bytes.
    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// ZigZag maps signed to unsigned so that small magnitudes stay short:
    /// 0, -1, 1, -2, 2 ... become 0, 1, 2, 3, 4 ...
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    mutating func uint64Field(_ field: UInt32, _ value: UInt64) {
        key(field, .varint)
        varint(value)
    }

    mutating func sint64Field(_ field: UInt32, _ value: Int64) {
        key(field, .varint)
        varint(Self.zigzag(value))
    }

    mutating func boolField(_ field: UInt32, _ value: Bool) {
        key(field, .varint)
        varint(value ? 1 : 0)
    }

    /// IEEE 754 binary64, little-endian.
    mutating func doubleField(_ field: UInt32, _ value: Double) {
        key(field, .fixed64)
        var bits = value.bitPattern
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }

    mutating func stringField(_ field: UInt32, _ value: String) {
        key(field, .lengthDelimited)
        varint(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// An embedded message (or any bytes) as a length-delimited field.
    mutating func bytesField(_ field: UInt32, _ value: [UInt8]) {
        key(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A packed repeated uint32 field; nothing at all when `values` is empty, as proto2
    /// writes an empty repeated field.
    mutating func packedField(_ field: UInt32, _ values: [UInt32]) {
        guard !values.isEmpty else { return }
        var payload = ProtobufWriter()
        for value in values { payload.varint(UInt64(value)) }
        bytesField(field, payload.bytes)
    }
}
