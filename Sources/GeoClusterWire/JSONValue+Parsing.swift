import GeoCluster

/// Why a document is not valid JSON, and where.
///
/// Two errors are equal when their ``kind`` and ``byteOffset`` match; the ``message``
/// is explanatory text for people and may be reworded.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The input ended inside a value (or was empty). The offset is the input length.
        case unexpectedEnd
        /// A byte that cannot start or continue the value at that point, e.g. `'` or `+`.
        case unexpectedCharacter
        /// Bytes in a string that are not well-formed UTF-8: overlong forms, surrogate code
        /// points, values above U+10FFFF, stray or missing continuation bytes. The offset is
        /// the first byte of the ill-formed sequence.
        case invalidUTF8
        /// An unknown escape letter or a bad hex digit (offset of that byte), or a `\u`
        /// surrogate without its partner (offset of the lone escape's backslash).
        case invalidEscape
        /// A number that breaks the JSON grammar: a leading zero, or no digit after `-`,
        /// `.` or the exponent. The offset is the byte where a digit was required or forbidden.
        case invalidNumber
        /// A number beyond ±Double.greatestFiniteMagnitude. The offset is its first byte.
        case numberOutOfRange
        /// A raw byte below 0x20 inside a string; it has to be escaped.
        case controlCharacterInString
        /// An array or object deeper than `maxDepth`; the offset is its opening bracket.
        case nestingTooDeep
        /// A key that already appeared in the same object; the offset is its opening quote.
        case duplicateKey
        /// Anything but whitespace after the one top-level value.
        case trailingData
    }

    public let kind: Kind
    /// 0-based offset of the offending byte in the parsed input (from the slice's start
    /// when an `ArraySlice` was parsed).
    public let byteOffset: Int
    /// A sentence for people, e.g. "unexpected character 'x' at byte 17, expected ',' or '}'".
    public let message: String

    public init(kind: Kind, byteOffset: Int, message: String? = nil) {
        self.kind = kind
        self.byteOffset = byteOffset
        self.message = message ?? "\(Self.summary(of: kind)) at byte \(byteOffset)"
    }

    /// Stable snake_case identifier for clients and logs. Plain syntax errors share
    /// `invalid_json`; the kinds a client may want to handle apart have their own.
    public var code: String {
        switch kind {
        case .unexpectedEnd, .unexpectedCharacter, .invalidEscape, .invalidNumber,
             .controlCharacterInString, .trailingData:
            "invalid_json"
        case .invalidUTF8: "invalid_utf8"
        case .numberOutOfRange: "number_out_of_range"
        case .nestingTooDeep: "nesting_too_deep"
        case .duplicateKey: "duplicate_key"
        }
    }

    public var description: String { message }

    public static func == (lhs: JSONParseError, rhs: JSONParseError) -> Bool {
        lhs.kind == rhs.kind && lhs.byteOffset == rhs.byteOffset
    }

    private static func summary(of kind: Kind) -> String {
        switch kind {
        case .unexpectedEnd: "unexpected end of input"
        case .unexpectedCharacter: "unexpected character"
        case .invalidUTF8: "invalid UTF-8"
        case .invalidEscape: "invalid escape"
        case .invalidNumber: "invalid number"
        case .numberOutOfRange: "number out of range"
        case .controlCharacterInString: "unescaped control character in string"
        case .nestingTooDeep: "nesting too deep"
        case .duplicateKey: "duplicate key"
        case .trailingData: "unexpected data after the JSON value"
        }
    }
}

extension JSONValue {
    /// Parses exactly one JSON value (RFC 8259, strict), with optional whitespace around it.
    ///
    /// Strings must be well-formed UTF-8; duplicate keys are rejected rather than
    /// silently resolved; numbers are rounded correctly to the nearest double, and
    /// ones too large for a double are rejected.
    ///
    /// - Parameter maxDepth: how many arrays and objects may enclose one another; 0 allows
    ///   only scalars. Parsing recurses once per level, so keep it to a few hundred.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { parse(buffer: $0, maxDepth: maxDepth) }.get()
    }

    /// Parses one JSON value from a slice, e.g. one line of a larger buffer. Error
    /// offsets count from the slice's start.
    public static func parse(_ bytes: ArraySlice<UInt8>, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { parse(buffer: $0, maxDepth: maxDepth) }.get()
    }

    /// The parser reads the bytes through a pointer: through an array or a slice, each
    /// string taken out of them would retain and release their storage.
    private static func parse(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
        var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
        do {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }

    /// Parses one JSON value from text; error offsets count UTF-8 bytes.
    public static func parse(_ string: String, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try parse(Array(string.utf8), maxDepth: maxDepth)
    }
}

/// A recursive-descent parser over UTF-8 bytes. Generic so that arrays and slices are
/// both read in place; the compiler specialises it for each.
private struct JSONParser<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    private let bytes: Bytes
    private let maxDepth: Int
    private var position: Int
    /// Reused for strings that contain escapes, so that only the final `String` allocates.
    private var scratch: [UInt8] = []

    init(bytes: Bytes, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        position = bytes.startIndex
    }

    /// Reads the whole input as one number and nothing else; `nil` when it is not one.
    mutating func parseWholeNumber() -> Double? {
        guard let first = bytes.first, first == UInt8(ascii: "-") || isDigit(first),
              let value = try? parseNumber(), position == bytes.endIndex else { return nil }
        return value
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if position < bytes.endIndex {
            throw failure(.trailingData, at: position,
                          "unexpected \(describe(bytes[position])) after the JSON value")
        }
        return value
    }

    // MARK: Structure

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard position < bytes.endIndex else { throw endOfInput(expected: "a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default:
            throw unexpectedCharacter(expected: "a value")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        try checkDepth(depth)
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.endIndex, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard position < bytes.endIndex else { throw endOfInput(expected: "',' or ']'") }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "]"):
                position += 1
                return elements
            default:
                throw unexpectedCharacter(expected: "',' or ']'")
            }
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        try checkDepth(depth)
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if position < bytes.endIndex, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return object
        }
        while true {
            skipWhitespace()
            guard position < bytes.endIndex else { throw endOfInput(expected: "a string key") }
            guard bytes[position] == UInt8(ascii: "\"") else { throw unexpectedCharacter(expected: "a string key") }
            let keyOffset = position
            let key = try parseString()
            if object.contains(key: key) {
                throw failure(.duplicateKey, at: keyOffset, "duplicate key \"\(key)\" at byte \(offset(keyOffset))")
            }
            skipWhitespace()
            guard position < bytes.endIndex else { throw endOfInput(expected: "':'") }
            guard bytes[position] == UInt8(ascii: ":") else { throw unexpectedCharacter(expected: "':'") }
            position += 1
            object.appendNew(key: key, value: try parseValue(depth: depth))
            skipWhitespace()
            guard position < bytes.endIndex else { throw endOfInput(expected: "',' or '}'") }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "}"):
                position += 1
                return object
            default:
                throw unexpectedCharacter(expected: "',' or '}'")
            }
        }
    }

    private func checkDepth(_ depth: Int) throws(JSONParseError) {
        if depth > maxDepth {
            throw failure(.nestingTooDeep, at: position,
                          "nesting deeper than \(maxDepth) levels at byte \(offset(position))")
        }
    }

    private mutating func skipWhitespace() {
        while position < bytes.endIndex {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                position += 1
            default:
                return
            }
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONParseError) {
        for byte in literal.utf8 {
            guard position < bytes.endIndex else { throw endOfInput(expected: "'\(literal)'") }
            guard bytes[position] == byte else { throw unexpectedCharacter(expected: "'\(literal)'") }
            position += 1
        }
    }

    // MARK: Strings

    /// Reads a string starting at its opening quote. Strings without escapes, the usual
    /// case, are validated in one pass and copied once into the `String`.
    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        let start = position
        while position < bytes.endIndex {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: bytes[start..<position], as: UTF8.self)
                position += 1
                return string
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(from: start)
            } else if byte < 0x20 {
                throw controlCharacter()
            } else if byte < 0x80 {
                position += 1
            } else {
                try skipMultibyteSequence()
            }
        }
        throw endOfInput(expected: "'\"' closing the string")
    }

    /// Continues a string at its first backslash, decoding into `scratch`.
    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while position < bytes.endIndex {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                scratch.append(contentsOf: bytes[runStart..<position])
                position += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                scratch.append(contentsOf: bytes[runStart..<position])
                try parseEscape()
                runStart = position
            } else if byte < 0x20 {
                throw controlCharacter()
            } else if byte < 0x80 {
                position += 1
            } else {
                try skipMultibyteSequence()
            }
        }
        throw endOfInput(expected: "'\"' closing the string")
    }

    /// Decodes one escape at the backslash into `scratch`.
    private mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = position
        position += 1
        guard position < bytes.endIndex else { throw endOfInput(expected: "an escape character") }
        let letter = bytes[position]
        position += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(letter)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try readHexUnit()
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed at once by an escaped low surrogate.
                guard position + 1 < bytes.endIndex else {
                    if position < bytes.endIndex, bytes[position] != UInt8(ascii: "\\") {
                        throw loneSurrogate(at: escapeStart, unit)
                    }
                    throw endOfInput(expected: "a '\\u' low surrogate")
                }
                guard bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                    throw loneSurrogate(at: escapeStart, unit)
                }
                position += 2
                let low = try readHexUnit()
                guard (0xDC00...0xDFFF).contains(low) else { throw loneSurrogate(at: escapeStart, unit) }
                appendUTF8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00...0xDFFF:
                throw loneSurrogate(at: escapeStart, unit)
            default:
                appendUTF8(unit)
            }
        default:
            throw failure(.invalidEscape, at: position - 1,
                          "invalid escape \(describe(letter)) at byte \(offset(position - 1)), "
                          + "expected one of \" \\ / b f n r t u")
        }
    }

    /// Reads the four hex digits after `\u`.
    private mutating func readHexUnit() throws(JSONParseError) -> UInt32 {
        var unit: UInt32 = 0
        for _ in 0..<4 {
            guard position < bytes.endIndex else { throw endOfInput(expected: "a hex digit") }
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw failure(.invalidEscape, at: position,
                              "invalid hex digit \(describe(byte)) in \\u escape at byte \(offset(position))")
            }
            unit = unit << 4 | UInt32(digit)
            position += 1
        }
        return unit
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Steps over one well-formed multi-byte UTF-8 sequence (Unicode Table 3-7), which
    /// rules out overlong forms, UTF-16 surrogates and code points above U+10FFFF.
    private mutating func skipMultibyteSequence() throws(JSONParseError) {
        guard let (second, trailing) = utf8Sequence(lead: bytes[position]) else { throw invalidUTF8(at: position) }
        for index in 1...trailing {
            guard position + index < bytes.endIndex else { throw endOfInput(expected: "a UTF-8 continuation byte") }
            let byte = bytes[position + index]
            guard index == 1 ? second.contains(byte) : (0x80...0xBF).contains(byte) else {
                throw invalidUTF8(at: position)
            }
        }
        position += trailing + 1
    }

    // MARK: Numbers

    /// Reads a number per the JSON grammar. Values whose significand fits in 2^53 with a
    /// decimal exponent within ±22 are computed exactly with one rounding (Clinger's fast
    /// path); the rest go to the standard library's correctly rounded conversion.
    private mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = position
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }

        var significand: UInt64 = 0
        var significantDigits = 0
        var decimalExponent = 0
        var exact = true

        guard position < bytes.endIndex else { throw endOfInput(expected: "a digit") }
        switch bytes[position] {
        case UInt8(ascii: "0"):
            position += 1
            if position < bytes.endIndex, isDigit(bytes[position]) {
                throw failure(.invalidNumber, at: position,
                              "invalid number at byte \(offset(position)): leading zeros are not allowed")
            }
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            while position < bytes.endIndex, isDigit(bytes[position]) {
                accumulate(bytes[position], into: &significand, digits: &significantDigits,
                           exponent: &decimalExponent, exact: &exact, fractional: false)
                position += 1
            }
        default:
            throw invalidNumber(expected: "a digit")
        }

        if position < bytes.endIndex, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.endIndex else { throw endOfInput(expected: "a digit after '.'") }
            guard isDigit(bytes[position]) else { throw invalidNumber(expected: "a digit after '.'") }
            while position < bytes.endIndex, isDigit(bytes[position]) {
                accumulate(bytes[position], into: &significand, digits: &significantDigits,
                           exponent: &decimalExponent, exact: &exact, fractional: true)
                position += 1
            }
        }

        if position < bytes.endIndex, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            var exponentNegative = false
            if position < bytes.endIndex, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                exponentNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < bytes.endIndex else { throw endOfInput(expected: "an exponent digit") }
            guard isDigit(bytes[position]) else { throw invalidNumber(expected: "an exponent digit") }
            var exponent = 0
            while position < bytes.endIndex, isDigit(bytes[position]) {
                // Saturate: anything this large only matters to the slow path.
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[position] - UInt8(ascii: "0")) }
                position += 1
            }
            decimalExponent += exponentNegative ? -exponent : exponent
        }

        if exact, significand <= 1 << 53, (-22...22).contains(decimalExponent) {
            var value = Double(significand)
            if decimalExponent < 0 {
                value /= powersOfTen[-decimalExponent]
            } else {
                value *= powersOfTen[decimalExponent]
            }
            return negative ? -value : value
        }

        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw failure(.numberOutOfRange, at: start,
                          "number \(text.prefix(40)) at byte \(offset(start)) is out of the range of a double")
        }
        return value
    }

    @inline(__always)
    private func accumulate(_ byte: UInt8, into significand: inout UInt64, digits: inout Int,
                            exponent: inout Int, exact: inout Bool, fractional: Bool) {
        let digit = UInt64(byte - UInt8(ascii: "0"))
        if significand == 0 && digit == 0 {
            // Leading zeros ("0.000123") are not significant.
            if fractional { exponent -= 1 }
            return
        }
        if digits < 19 {
            significand = significand * 10 + digit
            digits += 1
            if fractional { exponent -= 1 }
        } else {
            exact = false
        }
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    // MARK: Errors

    /// Offsets count from the first byte of the input, also for slices.
    private func offset(_ index: Int) -> Int { index - bytes.startIndex }

    private func failure(_ kind: JSONParseError.Kind, at index: Int, _ message: String) -> JSONParseError {
        JSONParseError(kind: kind, byteOffset: offset(index), message: message)
    }

    private func endOfInput(expected: String) -> JSONParseError {
        failure(.unexpectedEnd, at: bytes.endIndex, "unexpected end of input at byte \(offset(bytes.endIndex)), expected \(expected)")
    }

    private func unexpectedCharacter(expected: String) -> JSONParseError {
        failure(.unexpectedCharacter, at: position,
                "unexpected \(describe(bytes[position])) at byte \(offset(position)), expected \(expected)")
    }

    private func invalidNumber(expected: String) -> JSONParseError {
        failure(.invalidNumber, at: position,
                "invalid number: unexpected \(describe(bytes[position])) at byte \(offset(position)), expected \(expected)")
    }

    private func controlCharacter() -> JSONParseError {
        failure(.controlCharacterInString, at: position,
                "unescaped control character \(describe(bytes[position])) in string at byte \(offset(position))")
    }

    private func invalidUTF8(at index: Int) -> JSONParseError {
        failure(.invalidUTF8, at: index, "invalid UTF-8 sequence at byte \(offset(index))")
    }

    private func loneSurrogate(at index: Int, _ unit: UInt32) -> JSONParseError {
        failure(.invalidEscape, at: index,
                "unpaired surrogate \\u\(String(unit, radix: 16, uppercase: true)) at byte \(offset(index))")
    }

    /// `'x'` for printable ASCII, `byte 0x1F` otherwise.
    private func describe(_ byte: UInt8) -> String {
        if (0x20..<0x7F).contains(byte) {
            return "character '\(Character(Unicode.Scalar(byte)))'"
        }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" : "")\(hex)"
    }
}

/// 10^0 ... 10^22: every one is exactly representable as a double, which is what makes
/// the fast path of number parsing exact.
private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

extension JSONValue {
    /// `text` read as one JSON number (`-12.5e3`; no `+5`, `.5`, `5.`, `05`, `NaN` or
    /// `inf`), as the parser reads numbers inside a document, or `nil`: what a query
    /// string's numbers are held to, so that both transports accept the same numbers.
    /// A number beyond a double's range is `nil` too.
    public static func number(text: some StringProtocol) -> Double? {
        let bytes = Array(text.utf8)
        var parser = JSONParser(bytes: bytes, maxDepth: 1)
        guard let value = parser.parseWholeNumber(), value.isFinite else { return nil }
        return value
    }
}

/// For the lead byte of a well-formed multi-byte UTF-8 sequence (Unicode Table 3-7), the
/// range allowed for the second byte and how many bytes follow the lead; `nil` for a byte
/// that cannot lead one (ASCII, a continuation byte, or one of an overlong, surrogate or
/// above-U+10FFFF form).
@inline(__always)
func utf8Sequence(lead: UInt8) -> (second: ClosedRange<UInt8>, trailing: Int)? {
    switch lead {
    case 0xC2...0xDF: (0x80...0xBF, 1)
    case 0xE0: (0xA0...0xBF, 2)
    case 0xE1...0xEC, 0xEE...0xEF: (0x80...0xBF, 2)
    case 0xED: (0x80...0x9F, 2)
    case 0xF0: (0x90...0xBF, 3)
    case 0xF1...0xF3: (0x80...0xBF, 3)
    case 0xF4: (0x80...0x8F, 3)
    default: nil
    }
}

extension JSONValue {
    /// The number whose JSON text is all of `bytes`, read as ``number(text:)`` reads one,
    /// in place.
    static func number(bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var parser = JSONParser(bytes: bytes, maxDepth: 1)
        guard let value = parser.parseWholeNumber(), value.isFinite else { return nil }
        return value
    }
}
