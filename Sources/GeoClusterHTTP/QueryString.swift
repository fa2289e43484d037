import GeoClusterEngine

/// The parameters of a URL query string (`a=1&b=x%20y`), decoded as HTML forms encode
/// them: `+` is a space and `%XX` a byte; the bytes must be UTF-8.
///
/// Strict where a lenient reading would hide a mistake: a malformed escape is an error
/// rather than literal text, and a parameter given twice is an error rather than "the
/// last one wins". Empty pieces (`a=1&&b=2`, a trailing `&`) are skipped.
struct QueryString {
    /// Parameters in order of appearance; names are unique.
    private(set) var items: [(name: String, value: String)] = []

    init(_ query: String?) throws(EngineError) {
        guard let query else { return }
        for piece in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = piece.firstIndex(of: UInt8(ascii: "="))
            let rawName = piece[..<(equals ?? piece.endIndex)]
            let rawValue = equals.map { piece[piece.index(after: $0)...] } ?? piece[piece.endIndex...]
            guard let name = Self.decode(rawName, plusIsSpace: true) else {
                throw .invalidRequest(reason: "query parameter name \"\(Self.preview(rawName))\" is not validly percent-encoded UTF-8")
            }
            guard let value = Self.decode(rawValue, plusIsSpace: true) else {
                throw .invalidField(name, reason: "is not validly percent-encoded UTF-8")
            }
            guard !items.contains(where: { $0.name == name }) else {
                throw .invalidField(name, reason: "is given more than once")
            }
            items.append((name, value))
        }
    }

    /// Decodes `%XX` escapes (and `+` as a space, when asked); `nil` when an escape is
    /// malformed or the bytes are not UTF-8.
    static func decode(_ text: some Collection<UInt8>, plusIsSpace: Bool) -> String? {
        guard text.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(validating: text, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var i = text.startIndex
        while i != text.endIndex {
            let byte = text[i]
            text.formIndex(after: &i)
            switch byte {
            case UInt8(ascii: "%"):
                guard i != text.endIndex, let high = hexValue(text[i]) else { return nil }
                text.formIndex(after: &i)
                guard i != text.endIndex, let low = hexValue(text[i]) else { return nil }
                text.formIndex(after: &i)
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The start of some raw bytes, for an error message.
    private static func preview(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.prefix(40), as: UTF8.self)
    }
}
