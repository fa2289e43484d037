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
    /// its shortest round-trip digits (``ShortestDigits``, or `Double.description` outside
    /// its range) and lays them out by JavaScript's rules: plain notation for decimal
    /// exponents from -7 to 20, otherwise `d.ddde+N` / `d.ddde-N`.
    public static func encodeNumber(_ value: Double, into buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxNumberBytes) { scratch in
            let start = scratch.baseAddress!
            let end = writeNumber(value, to: start)
            buffer.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    /// Writes `value` as ``encodeNumber(_:into:)`` writes `Double(value)`, without the
    /// conversion below 2^53 (where every integer is a double).
    public static func encodeWholeNumber(_ value: Int, into buffer: inout [UInt8]) {
        if value >= 0 && value < 10 {
            buffer.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxNumberBytes) { scratch in
            let start = scratch.baseAddress!
            let end = writeWholeNumber(value, to: start)
            buffer.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    /// The most bytes ``writeNumber(_:to:)`` and ``writeWholeNumber(_:to:)`` write: a sign,
    /// "0.00000" and 17 digits, or 17 digits with a point and an exponent.
    public static let maxNumberBytes = 32

    /// ``encodeNumber(_:into:)`` into memory with room for ``maxNumberBytes``; returns the
    /// end of what it wrote. Answers write a feature's fixed parts and numbers together
    /// this way, then append them in one copy.
    static func writeNumber(_ value: Double, to text: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        guard value.isFinite else { return text.writeASCII("null") }
        if value.magnitude < 0x1p53, value == value.rounded(.towardZero) {
            // -0 lands here too and prints as "0", as in JavaScript.
            return writeInteger(Int64(value), to: text)
        }
        var text = text
        if value < 0 {
            text.pointee = UInt8(ascii: "-")
            text += 1
        }
        return writeShortest(value.magnitude, to: text)
    }

    /// ``encodeWholeNumber(_:into:)`` into memory with room for ``maxNumberBytes``.
    public static func writeWholeNumber(_ value: Int, to text: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        value.magnitude < 1 << 53 ? writeInteger(Int64(value), to: text) : writeNumber(Double(value), to: text)
    }

    /// Writes an integer in decimal, as JavaScript writes integral numbers.
    private static func writeInteger(_ value: Int64, to text: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var text = text
        if value < 0 {
            text.pointee = UInt8(ascii: "-")
            text += 1
        }
        let end = text + digitCount(value.magnitude)
        _ = writeDigits(value.magnitude, endingAt: end)
        return end
    }

    /// Writes the shortest round-trip digits of a positive finite `value` in JavaScript's
    /// layout.
    ///
    /// The digits come from ``ShortestDigits`` for the values it takes (coordinates and
    /// most other numbers of an answer), otherwise from `write(to:)` (the text of
    /// `description`), which writes forms like "0.1", "9007199254740992.0",
    /// "1.2345678901234568e+20" or "1e-07". With the significant digits d1…dk and the
    /// decimal exponent n such that the value is 0.d1…dk × 10^n, JavaScript writes
    /// (ECMA-262 Number::toString, step 6-10):
    /// - k ≤ n ≤ 21: the digits then n−k zeros;
    /// - 0 < n ≤ 21: the digits with a point after n of them;
    /// - −6 < n ≤ 0: "0." then −n zeros then the digits;
    /// - otherwise d1[.d2…dk]e±(n−1).
    private static func writeShortest(_ value: Double, to text: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { scratch in
            let base = scratch.baseAddress!
            // 0..<32: Swift's text; 32..<64: the significant digits.
            var digits = base + 32
            var k = 0
            var n = 0
            if let shortest = ShortestDigits.of(value) {
                k = digitCount(shortest.digits)
                n = k + shortest.exponent
                if 0 < n && n < k {
                    // The usual case, a coordinate: the digits one place to the right, then
                    // the first n moved back one to make room for the point.
                    let end = text + k + 1
                    _ = writeDigits(shortest.digits, endingAt: end)
                    for position in 0..<n { text[position] = text[position + 1] }
                    text[n] = UInt8(ascii: ".")
                    return end
                }
                digits = writeDigits(shortest.digits, endingAt: digits + k)
            } else {
                var swiftText = ASCIISink(base: base, capacity: 32)
                value.write(to: &swiftText)
                (k, n) = significantDigits(of: UnsafeBufferPointer(start: base, count: swiftText.count), into: digits)
            }

            // At most 25 bytes: "0.000000" and 17 digits.
            var text = text
            func put(_ byte: UInt8) {
                text.pointee = byte
                text += 1
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
            return text
        }
    }

    /// The significant digits of Swift's text of a positive double, without leading or
    /// trailing zeros, copied to `digits`; their count k and the decimal exponent n such
    /// that the value is 0.d1…dk × 10^n.
    private static func significantDigits(of swiftText: UnsafeBufferPointer<UInt8>,
                                          into digits: UnsafeMutablePointer<UInt8>) -> (count: Int, exponent: Int) {
        var k = 0
        var pointSeen = false
        var digitsBeforePoint = 0
        var leadingZeros = 0
        var trailingZeros = 0
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        for byte in swiftText {
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
        return (k - trailingZeros, digitsBeforePoint - leadingZeros + (exponentNegative ? -exponent : exponent))
    }

    /// Writes the decimal digits of `value` right to left, two at a time, ending just
    /// before `end` (which needs 20 bytes before it); returns where they start.
    @inline(__always)
    static func writeDigits(_ value: UInt64, endingAt end: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var start = end
        var remaining = value
        digitPairs.withUTF8Buffer { pairs in
            let pairs = pairs.baseAddress!
            while remaining >= 100 {
                let pair = Int(remaining % 100) &* 2
                remaining /= 100
                start -= 2
                start[0] = pairs[pair]
                start[1] = pairs[pair &+ 1]
            }
            if remaining >= 10 {
                let pair = Int(remaining) &* 2
                start -= 2
                start[0] = pairs[pair]
                start[1] = pairs[pair &+ 1]
            } else {
                start -= 1
                start[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining)
            }
        }
        return start
    }

    /// The number of decimal digits of `value` (1 for 0).
    @inline(__always)
    static func digitCount(_ value: UInt64) -> Int {
        // log10(2) ≈ 1233 / 4096: the count for the bit length, or one more. (With the
        // last bit set, 0 counts as 1 and no other value changes its count.)
        let odd = value | 1
        let estimate = ((64 - odd.leadingZeroBitCount) &* 1233) &>> 12
        return estimate &+ (estimate < powersOfTen.count && odd >= powersOfTen[estimate] ? 1 : 0)
    }

    /// 10^0 through 10^19, the powers of ten below 2^64.
    private static let powersOfTen: [UInt64] = (0...19).reduce(into: []) { powers, k in
        powers.append(k == 0 ? 1 : powers[k - 1] * 10)
    }

    /// "00" through "99", for writing integers two digits at a time.
    private static var digitPairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }
}

extension Array where Element == UInt8 {
    /// Appends the bytes of a literal in one copy (a `String`'s `utf8` view is appended
    /// through a slower generic path).
    @inlinable
    public mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }
}

extension UnsafeMutablePointer where Pointee == UInt8 {
    /// Writes a literal's bytes here; returns the end of what it wrote.
    @inlinable @inline(__always)
    public func writeASCII(_ text: StaticString) -> UnsafeMutablePointer<UInt8> {
        update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        return self + text.utf8CodeUnitCount
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
