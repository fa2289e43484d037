import GeoCluster

/// The features of a radius layer kept as their JSON text, end to end in one buffer.
///
/// A point feature as a `JSONValue` tree takes about 500 bytes (an object, its geometry
/// object and coordinate array, each a heap allocation); its text takes about 120. And a
/// clusters answer copies a point's text instead of walking its tree. A feature read by
/// position is parsed from its text again, which costs about a microsecond: fine for
/// pages of leaves and for tiles, which show at most a few hundred points.
public struct EncodedFeatures: RandomAccessCollection, Sendable {
    private let text: [UInt8]
    /// Where each feature's text ends; it starts where the previous one's ends.
    private let ends: [Int]

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
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.count }

    private func range(_ position: Int) -> Range<Int> {
        (position == 0 ? 0 : ends[position - 1])..<ends[position]
    }

    /// The feature at `position`, parsed from its text.
    public subscript(position: Int) -> JSONValue {
        // The text was written by the encoder from a value, so it parses, to the same
        // value; the depth limit is no lower than that of any value it could have come from.
        (try? JSONValue.parse(text[range(position)], maxDepth: .max)) ?? .null
    }

    /// Appends the text of the feature at `position`.
    public func encode(_ position: Int, into buffer: inout [UInt8]) {
        buffer.append(contentsOf: text[range(position)])
    }

    /// Bytes of text held.
    public var byteCount: Int { text.count }
}
