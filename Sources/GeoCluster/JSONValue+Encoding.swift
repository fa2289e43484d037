/// Compact JSON output that matches JavaScript's `JSON.stringify` byte for byte, so
/// responses are identical to those of the JavaScript services this one replaces.
extension JSONValue {
    /// Appends the JSON text of this value to `buffer`: no whitespace, object members in
    /// stored order, non-finite numbers as `null` (as JavaScript does).
    public func encode(into buffer: inout [UInt8]) {
        switch self {
        case .null:
            buffer.append(contentsOf: "null".utf8)
        case let .bool(value):
            buffer.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case let .number(value):
            JSONValue.encodeNumber(value, into: &buffer)
        case let .string(value):
            JSONValue.encodeString(value, into: &buffer)
        case let .array(elements):
            buffer.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                element.encode(into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case let .object(object):
            object.encode(into: &buffer)
        }
    }

    /// The JSON text of this value, as `JSON.stringify` would write it.
    public var jsonString: String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        encode(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Escapes `"`, `\` and the control characters below 0x20; `/`, DEL and non-ASCII
    /// pass through unchanged, as in `JSON.stringify`.
    public static func encodeString(_ string: String, into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        let utf8 = string.utf8
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            buffer.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): buffer.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): buffer.append(contentsOf: #"\\"#.utf8)
                case 0x08: buffer.append(contentsOf: #"\b"#.utf8)
                case 0x0C: buffer.append(contentsOf: #"\f"#.utf8)
                case 0x0A: buffer.append(contentsOf: #"\n"#.utf8)
                case 0x0D: buffer.append(contentsOf: #"\r"#.utf8)
                case 0x09: buffer.append(contentsOf: #"\t"#.utf8)
                case ..<0x20:
                    buffer.append(contentsOf: #"\u00"#.utf8)
                    buffer.append(hexDigit(byte >> 4))
                    buffer.append(hexDigit(byte & 0x0F))
                default:
                    buffer.append(byte)
                }
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Writes a number as ECMA-262 Number::toString does.
    ///
    /// Integral values below 2^53 in magnitude are printed directly: every integer there is
    /// a double, so its own digits are the shortest that round-trip. Everything else takes
    /// its shortest round-trip digits from `Double.description` and lays them out by
    /// JavaScript's rules: plain notation for decimal exponents from -7 to 20, otherwise
    /// `d.ddde+N` / `d.ddde-N`.
    public static func encodeNumber(_ value: Double, into buffer: inout [UInt8]) {
        guard value.isFinite else {
            buffer.append(contentsOf: "null".utf8)
            return
        }
        if value.magnitude < 0x1p53, value == value.rounded(.towardZero) {
            // -0 lands here too and prints as "0", as in JavaScript.
            encodeInteger(Int64(value), into: &buffer)
            return
        }
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        encodeShortest(value.magnitude, into: &buffer)
    }

    /// Writes an integer in decimal, as JavaScript writes integral numbers.
    public static func encodeInteger(_ value: Int64, into buffer: inout [UInt8]) {
        // Digits are laid out right to left in a stack buffer and appended in one go.
        var text = SmallText()
        var remaining = value.magnitude
        repeat {
            text.prepend(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        if value < 0 { text.prepend(UInt8(ascii: "-")) }
        text.append(to: &buffer)
    }

    /// Re-lays out Swift's shortest digits of a positive finite `value`.
    ///
    /// `write(to:)` (the text of `description`) writes forms like "0.1",
    /// "9007199254740992.0", "1.2345678901234568e+20" or "1e-07". With the significant
    /// digits d1…dk and the decimal exponent n such that the value is 0.d1…dk × 10^n,
    /// JavaScript writes (ECMA-262 Number::toString, step 6-10):
    /// - k ≤ n ≤ 21: the digits then n−k zeros;
    /// - 0 < n ≤ 21: the digits with a point after n of them;
    /// - −6 < n ≤ 0: "0." then −n zeros then the digits;
    /// - otherwise d1[.d2…dk]e±(n−1).
    ///
    /// Both texts stay on the stack; the result is appended in one go.
    private static func encodeShortest(_ value: Double, into buffer: inout [UInt8]) {
        var swiftText = SmallText()
        value.write(to: &swiftText)

        // One pass: collect the significant digits, note where the point was.
        var digits = SmallText()
        var pointSeen = false
        var digitsBeforePoint = 0
        var leadingZeros = 0
        var trailingZeros = 0
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        for position in 0..<swiftText.count {
            let byte = swiftText[position]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if inExponent {
                    exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                } else {
                    if !pointSeen { digitsBeforePoint += 1 }
                    if byte == UInt8(ascii: "0") && digits.count == 0 {
                        leadingZeros += 1
                    } else {
                        digits.append(byte)
                        trailingZeros = byte == UInt8(ascii: "0") ? trailingZeros + 1 : 0
                    }
                }
            case UInt8(ascii: "."):
                pointSeen = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                inExponent = true
            case UInt8(ascii: "-"):
                exponentNegative = true
            default:
                break  // "+" of the exponent
            }
        }
        let k = digits.count - trailingZeros
        let n = digitsBeforePoint - leadingZeros + (exponentNegative ? -exponent : exponent)

        // At most 25 bytes: "0.000000" and 17 digits.
        var text = SmallText()
        if k <= n && n <= 21 {
            for position in 0..<k { text.append(digits[position]) }
            for _ in k..<n { text.append(UInt8(ascii: "0")) }
        } else if 0 < n && n <= 21 {
            for position in 0..<k {
                if position == n { text.append(UInt8(ascii: ".")) }
                text.append(digits[position])
            }
        } else if -6 < n && n <= 0 {
            text.append(UInt8(ascii: "0"))
            text.append(UInt8(ascii: "."))
            for _ in 0 ..< -n { text.append(UInt8(ascii: "0")) }
            for position in 0..<k { text.append(digits[position]) }
        } else {
            text.append(digits[0])
            if k > 1 { text.append(UInt8(ascii: ".")) }
            for position in 1..<max(1, k) { text.append(digits[position]) }
            text.append(UInt8(ascii: "e"))
            text.append(n - 1 < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            var exponentText = SmallText()
            var remaining = (n - 1).magnitude
            repeat {
                exponentText.prepend(UInt8(ascii: "0") + UInt8(remaining % 10))
                remaining /= 10
            } while remaining > 0
            for position in 0..<exponentText.count { text.append(exponentText[position]) }
        }
        text.append(to: &buffer)
    }
}

/// Up to 32 bytes of text on the stack: the digits of one number.
///
/// It is also the `TextOutputStream` that `Double.write(to:)` writes to. `description`
/// would build a `String` for every number, and the description of most coordinates
/// ("127.02758312225342") is longer than the 15 bytes a `String` holds without
/// allocating; `write(to:)` hands its ASCII text to `_writeASCII`, a public requirement of
/// `TextOutputStream` that the standard library's numeric types call, so nothing is
/// allocated. `write(_:)` takes any other text the same way.
private struct SmallText: TextOutputStream {
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// Bytes are kept in `start..<end`; `prepend` grows the text to the left.
    private var start = 16
    private var end = 16

    static let capacity = 32

    var count: Int { end - start }

    subscript(position: Int) -> UInt8 {
        withUnsafeBytes(of: storage) { $0[start + position] }
    }

    /// Appends a byte; bytes beyond the capacity are dropped (no number is that long).
    mutating func append(_ byte: UInt8) {
        if end == Self.capacity { shift(to: 0) }
        guard end < Self.capacity else { return }
        let position = end
        withUnsafeMutableBytes(of: &storage) { $0[position] = byte }
        end += 1
    }

    /// Puts a byte in front of the text.
    mutating func prepend(_ byte: UInt8) {
        if start == 0 { shift(to: Self.capacity - count) }
        guard start > 0 else { return }
        start -= 1
        let position = start
        withUnsafeMutableBytes(of: &storage) { $0[position] = byte }
    }

    /// Moves the text to begin at `newStart`, to make room at one end.
    private mutating func shift(to newStart: Int) {
        let (from, length) = (start, count)
        guard newStart != from else { return }
        withUnsafeMutableBytes(of: &storage) { bytes in
            let base = bytes.baseAddress!
            (base + newStart).copyMemory(from: base + from, byteCount: length)
        }
        start = newStart
        end = newStart + length
    }

    mutating func write(_ string: String) {
        for byte in string.utf8 { append(byte) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        for byte in buffer { append(byte) }
    }

    /// Appends the text to `buffer` with one copy.
    func append(to buffer: inout [UInt8]) {
        let (from, length) = (start, count)
        withUnsafeBytes(of: storage) { bytes in
            bytes.withMemoryRebound(to: UInt8.self) { text in
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: text[from..<from + length]))
            }
        }
    }
}

extension JSONObject {
    /// Appends `{"key":value,…}` with members in stored order.
    public func encode(into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in self {
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.encodeString(key, into: &buffer)
            buffer.append(UInt8(ascii: ":"))
            value.encode(into: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }
}
