import GeoCluster

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
        withUTF8(of: string) { utf8 in
            guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                buffer.append(contentsOf: utf8)
                return
            }
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

    /// Writes `value` as ``encodeNumber(_:into:)`` writes `Double(value)`, without the
    /// conversion below 2^53 (where every integer is a double).
    public static func encodeWholeNumber(_ value: Int, into buffer: inout [UInt8]) {
        if value >= 0 && value < 10 {
            buffer.append(UInt8(ascii: "0") + UInt8(value))
        } else if value.magnitude < 1 << 53 {
            encodeInteger(Int64(value), into: &buffer)
        } else {
            encodeNumber(Double(value), into: &buffer)
        }
    }

    /// Writes an integer in decimal, as JavaScript writes integral numbers.
    private static func encodeInteger(_ value: Int64, into buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { scratch in
            // Digits right to left at the end of the scratch space, then one append.
            let end = scratch.baseAddress! + 24
            var start = end
            var remaining = value.magnitude
            repeat {
                start -= 1
                start.pointee = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            if value < 0 {
                start -= 1
                start.pointee = UInt8(ascii: "-")
            }
            buffer.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
        }
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
    /// Both texts stay in scratch space on the stack; the result is appended in one copy.
    private static func encodeShortest(_ value: Double, into buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { scratch in
            let base = scratch.baseAddress!
            // 0..<32: Swift's text; 32..<64: its significant digits; 64..<128: the result.
            var swiftText = ASCIISink(base: base, capacity: 32)
            value.write(to: &swiftText)
            // Most numbers of an answer are coordinates such as "127.02758312225342": a
            // value of at least 1 in plain notation, ending in a digit other than the 0 of
            // an integral "….0". JavaScript writes those exactly as Swift does.
            if base[0] >= UInt8(ascii: "1"), base[0] <= UInt8(ascii: "9"),
               base[swiftText.count - 1] != UInt8(ascii: "0"),
               !(0..<swiftText.count).contains(where: { base[$0] == UInt8(ascii: "e") }) {
                buffer.append(contentsOf: UnsafeBufferPointer(start: base, count: swiftText.count))
                return
            }
            let digits = base + 32
            var k = 0
            var pointSeen = false
            var digitsBeforePoint = 0
            var leadingZeros = 0
            var trailingZeros = 0
            var exponent = 0
            var exponentNegative = false
            var inExponent = false
            for position in 0..<swiftText.count {
                let byte = base[position]
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    if inExponent {
                        exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                    } else {
                        if !pointSeen { digitsBeforePoint += 1 }
                        if byte == UInt8(ascii: "0") && k == 0 {
                            leadingZeros += 1
                        } else {
                            digits[k] = byte
                            k += 1
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
            k -= trailingZeros
            let n = digitsBeforePoint - leadingZeros + (exponentNegative ? -exponent : exponent)

            // At most 25 bytes: "0.000000" and 17 digits.
            let text = base + 64
            var length = 0
            func put(_ byte: UInt8) {
                text[length] = byte
                length += 1
            }
            if k <= n && n <= 21 {
                for position in 0..<k { put(digits[position]) }
                for _ in k..<n { put(UInt8(ascii: "0")) }
            } else if 0 < n && n <= 21 {
                for position in 0..<k {
                    if position == n { put(UInt8(ascii: ".")) }
                    put(digits[position])
                }
            } else if -6 < n && n <= 0 {
                put(UInt8(ascii: "0"))
                put(UInt8(ascii: "."))
                for _ in 0 ..< -n { put(UInt8(ascii: "0")) }
                for position in 0..<k { put(digits[position]) }
            } else {
                put(digits[0])
                if k > 1 { put(UInt8(ascii: ".")) }
                for position in 1..<max(1, k) { put(digits[position]) }
                put(UInt8(ascii: "e"))
                put(n - 1 < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
                let magnitude = (n - 1).magnitude
                if magnitude >= 100 { put(UInt8(ascii: "0") + UInt8(magnitude / 100)) }
                if magnitude >= 10 { put(UInt8(ascii: "0") + UInt8(magnitude / 10 % 10)) }
                put(UInt8(ascii: "0") + UInt8(magnitude % 10))
            }
            buffer.append(contentsOf: UnsafeBufferPointer(start: text, count: length))
        }
    }
}

/// Receives the ASCII text of `Double.write(to:)` in scratch memory.
///
/// `description` would build a `String` for every number, and the description of most
/// coordinates ("127.02758312225342") is longer than the 15 bytes a `String` holds without
/// allocating. `write(to:)` hands its text to `_writeASCII`, a public requirement of
/// `TextOutputStream` that the standard library's numeric types call, so nothing is
/// allocated; `write(_:)` takes any other text the same way. Bytes beyond `capacity` are
/// dropped: the longest description of a `Double` has 24.
extension Array where Element == UInt8 {
    /// Appends the bytes of a literal in one copy (a `String`'s `utf8` view is appended
    /// through a slower generic path).
    @inlinable
    public mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }
}

private struct ASCIISink: TextOutputStream {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    private(set) var count = 0

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    mutating func write(_ string: String) {
        for byte in string.utf8 { append(byte) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        let copied = Swift.min(buffer.count, capacity - count)
        guard copied > 0, let source = buffer.baseAddress else { return }
        (base + count).update(from: source, count: copied)
        count += copied
    }

    private mutating func append(_ byte: UInt8) {
        guard count < capacity else { return }
        base[count] = byte
        count += 1
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

extension JSONValue {
    /// Whether `text`, which must parse as JSON, is already the text that
    /// ``encode(into:)`` writes for the value parsed from it, so that a caller holding
    /// both can keep `text` instead of encoding the value again.
    ///
    /// A conservative check in one pass over the bytes (`false` may be said of a text
    /// that would encode the same): no whitespace between tokens (duplicate keys are
    /// refused by the parser, and members keep their order), strings without escapes,
    /// and numbers in the form JavaScript writes them with at most 15 significant digits,
    /// which a double always gives back as written: an integer other than `-0`, or a
    /// plain decimal ending in a digit other than 0, of at least 10⁻⁶ (smaller ones are
    /// written with an exponent).
    public static func isWrittenAsEncoded(_ text: ArraySlice<UInt8>) -> Bool {
        text.withUnsafeBufferPointer { bytes in
            var i = 0
            let n = bytes.count
            while i < n {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    i += 1
                    while i < n, bytes[i] != UInt8(ascii: "\"") {
                        if bytes[i] == UInt8(ascii: "\\") { return false }
                        i += 1
                    }
                    i += 1
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard let end = canonicalNumberEnd(bytes, from: i) else { return false }
                    i = end
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    return false
                default:
                    i += 1  // structure, and the letters of true, false and null
                }
            }
            return true
        }
    }

    /// The end of the number token at `start` when it is written as ``encodeNumber(_:into:)``
    /// writes its value (see ``isWrittenAsEncoded(_:)``), else `nil`.
    static func canonicalNumberEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }
        var i = start
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        let integerStart = i
        while isDigit(i) { i += 1 }
        let integerDigits = i - integerStart
        // JSON allows no leading zero other than a lone "0".
        guard integerDigits >= 1, integerDigits <= 15 else { return nil }
        let integerIsZero = integerDigits == 1 && bytes[integerStart] == UInt8(ascii: "0")
        var significant = integerIsZero ? 0 : integerDigits
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fractionStart = i
            while isDigit(i) { i += 1 }
            guard i > fractionStart, bytes[i - 1] != UInt8(ascii: "0") else { return nil }
            if integerIsZero {
                var zeros = 0
                while bytes[fractionStart + zeros] == UInt8(ascii: "0") { zeros += 1 }
                guard zeros < 6 else { return nil }
                significant = i - fractionStart - zeros
            } else {
                significant += i - fractionStart
            }
        } else if integerIsZero && start != integerStart {
            return nil  // "-0" is written "0"
        }
        guard significant <= 15 else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") { return nil }
        return i
    }
}
