import GeoCluster
import GeoClusterWire

/// The features of a radius layer kept as their JSON text, end to end in one buffer.
///
/// A point feature as a `JSONValue` tree takes about 500 bytes (an object, its geometry
/// object and coordinate array, each a heap allocation); its text takes about 120. And a
/// clusters answer copies a point's text instead of walking its tree. A feature read by
/// position is parsed from its text again, which costs about a microsecond: fine for
/// pages of leaves. Tiles, which can hold hundreds of points and are a map's most
/// frequent request, need only each point's `properties` and `id`; those stay values.
public struct EncodedFeatures: RandomAccessCollection, Sendable {
    private let text: [UInt8]
    /// Where each feature's text ends; it starts where the previous one's ends.
    private let ends: [Int]
    private let properties: [JSONValue]
    private let ids: [JSONValue?]

    /// Encodes `features` as `JSON.stringify` would write them.
    public init(_ features: [JSONValue]) {
        var text: [UInt8] = []
        text.reserveCapacity(features.count * 128)
        var ends: [Int] = []
        ends.reserveCapacity(features.count)
        for feature in features {
            feature.encode(into: &text)
            ends.append(text.count)
        }
        self.text = text
        self.ends = ends
        properties = features.map { $0["properties"] ?? .null }
        ids = features.map { $0["id"] }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.count }

    private func range(_ position: Int) -> Range<Int> {
        (position == 0 ? 0 : ends[position - 1])..<ends[position]
    }

    /// The feature at `position`, parsed from its text.
    public subscript(position: Int) -> JSONValue {
        JSONValue(encodedText: text[range(position)])
    }

    /// The `properties` member of the feature at `position` (`null` when it has none).
    public func properties(at position: Int) -> JSONValue { properties[position] }

    /// The `id` member of the feature at `position`, if it has one.
    public func id(at position: Int) -> JSONValue? { ids[position] }

    /// Appends the text of the feature at `position`.
    public func encode(_ position: Int, into buffer: inout [UInt8]) {
        let range = range(position)
        text.withUnsafeBufferPointer { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Bytes of text held.
    public var byteCount: Int { text.count }
}

extension JSONValue {
    /// The value of JSON text that the encoder wrote from a value (a feature kept as text):
    /// it parses, to that value; the depth limit is no lower than that of any value it
    /// could have come from.
    init(encodedText text: ArraySlice<UInt8>) {
        self = (try? JSONValue.parse(text, maxDepth: .max)) ?? .null
    }
}
