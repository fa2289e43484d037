import GeoCluster
import GeoClusterWire

/// One JSON record cut out of an input, not yet parsed: a line of a JSON-lines file, or an
/// element of a FeatureCollection's `features`.
public struct JSONItem: Sendable, Equatable {
    public var location: ImportLocation
    public var bytes: [UInt8]

    public init(location: ImportLocation, bytes: [UInt8]) {
        self.location = location
        self.bytes = bytes
    }
}

/// Splits JSON lines into items, one per non-blank line, holding only the line being read.
///
/// A CR before the LF is dropped; a line of only spaces and tabs is skipped; a UTF-8 byte
/// order mark at the start is dropped.
public struct JSONLinesSplitter {
    /// 16 MiB: a generous bound for one record on one line.
    public static let defaultMaxLineBytes = 1 << 24

    public let sourceName: String
    public let maxLineBytes: Int
    private var bom = ByteOrderMarkStripper()
    private var pending: [UInt8] = []
    private var line = 1

    public init(sourceName: String = "<input>", maxLineBytes: Int = defaultMaxLineBytes) {
        self.sourceName = sourceName
        self.maxLineBytes = maxLineBytes
    }

    public mutating func read(_ chunk: ArraySlice<UInt8>, into items: inout [JSONItem]) throws(EngineError) {
        let bytes = bom.strip(chunk)
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            pending += bytes[start..<newline]
            try endLine(into: &items)
            start = newline + 1
        }
        pending += bytes[start...]
        if pending.count > maxLineBytes {
            throw .invalidLayerSource(path: "\(sourceName), line \(line)",
                                      reason: "a line is longer than \(maxLineBytes) bytes")
        }
    }

    public mutating func finish(into items: inout [JSONItem]) throws(EngineError) {
        try read([], into: &items)
        pending += bom.finish()
        if !pending.isEmpty { try endLine(into: &items) }
    }

    private mutating func endLine(into items: inout [JSONItem]) throws(EngineError) {
        if pending.count > maxLineBytes {
            throw .invalidLayerSource(path: "\(sourceName), line \(line)",
                                      reason: "a line is longer than \(maxLineBytes) bytes")
        }
        if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
        if pending.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) {
            items.append(JSONItem(location: .line(line), bytes: pending))
        }
        pending.removeAll(keepingCapacity: true)
        line += 1
    }
}

/// Cuts the elements of a GeoJSON FeatureCollection's `features` array out of a byte
/// stream, one at a time, without holding the document.
///
/// It tracks only strings and bracket depth; each element and each other top-level
/// member is parsed on its own by ``JSONValue``. So a malformed feature is reported as
/// that feature's error, while a malformed document (not an object, `features` not an
/// array, text after the end) stops the reading.
public struct FeatureCollectionSplitter {
    /// 16 MiB: the bound on one feature and on any other top-level member.
    public static let defaultMaxItemBytes = 1 << 24

    private enum Mode {
        case beforeDocument
        /// Inside the top-level object, collecting a member other than `features`.
        case member
        /// After `"features":`, before its `[`.
        case featuresValue
        /// Inside the `features` array.
        case features
        case afterDocument
    }

    public let sourceName: String
    public let maxItemBytes: Int
    private var bom = ByteOrderMarkStripper()
    private var mode = Mode.beforeDocument
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var buffer: [UInt8] = []
    private var featureIndex = 0
    /// A member just ended with the `features` array, so no member text is pending.
    private var featuresJustEnded = false
    private var offset = 0
    /// The top-level members other than `features`, parsed.
    public private(set) var otherMembers = JSONObject()
    public private(set) var sawFeatures = false

    public init(sourceName: String = "<input>", maxItemBytes: Int = defaultMaxItemBytes) {
        self.sourceName = sourceName
        self.maxItemBytes = maxItemBytes
    }

    public mutating func read(_ chunk: ArraySlice<UInt8>, into items: inout [JSONItem]) throws(EngineError) {
        for byte in bom.strip(chunk) {
            try consume(byte, into: &items)
            offset += 1
        }
    }

    /// Checks that the document was complete and a FeatureCollection.
    public mutating func finish(into items: inout [JSONItem]) throws(EngineError) {
        for byte in bom.finish() {
            try consume(byte, into: &items)
        }
        guard mode == .afterDocument else {
            throw failure(mode == .beforeDocument ? "is empty" : "ends inside the document")
        }
        guard sawFeatures else { throw failure("has no \"features\" array; expected a GeoJSON FeatureCollection") }
        guard let type = otherMembers["type"] else {
            throw failure("has no \"type\"; expected a GeoJSON FeatureCollection (\"type\": \"FeatureCollection\")")
        }
        if type != "FeatureCollection" {
            throw failure("has \"type\": \(type.jsonString); expected a GeoJSON FeatureCollection")
        }
    }

    private func failure(_ reason: String) -> EngineError {
        .invalidLayerSource(path: sourceName, reason: reason)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private mutating func consume(_ byte: UInt8, into items: inout [JSONItem]) throws(EngineError) {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            try append(byte)
            return
        }
        switch mode {
        case .beforeDocument, .afterDocument:
            if Self.isWhitespace(byte) { return }
            guard mode == .beforeDocument, byte == UInt8(ascii: "{") else {
                throw failure(mode == .beforeDocument
                              ? "does not start with a JSON object; expected a GeoJSON FeatureCollection"
                              : "has text after the end of the document (byte \(offset))")
            }
            depth = 1
            mode = .member
        case .featuresValue:
            if Self.isWhitespace(byte) { return }
            guard byte == UInt8(ascii: "[") else { throw failure("\"features\" must be an array") }
            depth = 2
            mode = .features
        case .member:
            if depth == 1 {
                switch byte {
                case UInt8(ascii: ":"):
                    if trimmed(buffer).elementsEqual("\"features\"".utf8) {
                        guard !sawFeatures else { throw failure("has two \"features\" members") }
                        sawFeatures = true
                        buffer.removeAll(keepingCapacity: true)
                        mode = .featuresValue
                        return
                    }
                case UInt8(ascii: ","), UInt8(ascii: "}"):
                    try endMember()
                    if byte == UInt8(ascii: "}") {
                        depth = 0
                        mode = .afterDocument
                    }
                    return
                default:
                    break
                }
            }
            try structural(byte)
        case .features:
            if depth == 2 && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]")) {
                let empty = trimmed(buffer).isEmpty
                if !empty {
                    items.append(JSONItem(location: .feature(featureIndex), bytes: buffer))
                    featureIndex += 1
                } else if byte == UInt8(ascii: ",") || featureIndex > 0 {
                    throw failure("\"features\" has an empty element at features[\(featureIndex)]")
                }
                buffer.removeAll(keepingCapacity: true)
                if byte == UInt8(ascii: "]") {
                    depth = 1
                    mode = .member
                    featuresJustEnded = true
                }
                return
            }
            try structural(byte)
        }
    }

    /// Appends a byte outside strings, tracking depth.
    private mutating func structural(_ byte: UInt8) throws(EngineError) {
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            guard depth >= (mode == .features ? 2 : 1) else { throw failure("has an unbalanced \"\(Character(UnicodeScalar(byte)))\" at byte \(offset)") }
        default: break
        }
        try append(byte)
    }

    private mutating func append(_ byte: UInt8) throws(EngineError) {
        buffer.append(byte)
        if buffer.count > maxItemBytes {
            throw failure(mode == .features
                          ? "features[\(featureIndex)] is longer than \(maxItemBytes) bytes"
                          : "a top-level member is longer than \(maxItemBytes) bytes")
        }
    }

    private mutating func endMember() throws(EngineError) {
        defer { buffer.removeAll(keepingCapacity: true) }
        if featuresJustEnded {
            featuresJustEnded = false
            guard trimmed(buffer).isEmpty else { throw failure("has text after the \"features\" array") }
            return
        }
        if trimmed(buffer).isEmpty && otherMembers.isEmpty && !sawFeatures { return }  // `{}`
        let member: JSONValue
        do {
            member = try JSONValue.parse([UInt8(ascii: "{")] + buffer + [UInt8(ascii: "}")], maxDepth: 64)
        } catch {
            throw failure("is not valid JSON near byte \(offset): \(error.description)")
        }
        for (key, value) in member.objectValue ?? JSONObject() {
            guard !otherMembers.contains(key: key) else { throw failure("has two \"\(key)\" members") }
            otherMembers[key] = value
        }
    }

    private func trimmed(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !Self.isWhitespace($0) }),
              let last = bytes.lastIndex(where: { !Self.isWhitespace($0) }) else { return [] }
        return bytes[first...last]
    }
}
