/// JSON text in the form that ``JSONValue/encode(into:)`` writes, read in place: checked
/// once (and brought to that form when it differs only in whitespace and in how numbers
/// are spelt), then its objects' members are found as byte ranges and only the values a
/// caller asks for are made into strings or numbers, with no tree of the rest.
///
/// Reading a layer file's features or a store's rows this way costs a fraction of
/// parsing them: most of a feature's text (its free-form properties) is only checked,
/// never built into values and freed again.
///
/// ``check(_:maxDepth:)`` accepts a subset of what ``JSONValue/parse(_:maxDepth:)``
/// accepts (no escapes in strings, small objects), so a text it refuses may still be
/// JSON: callers then parse it. For every text it accepts, the text it gives is what
/// `encode(into:)` writes for the value the parser reads, byte for byte.
public enum CompactJSON {
    /// Objects with more members than this are left to the parser, so that the duplicate
    /// key check here stays a short linear search.
    public static let maxMembers = 32

    /// What ``check(_:maxDepth:)`` found.
    public enum Form: Equatable, Sendable {
        /// The text is JSON in the form `encode(into:)` writes.
        case compact
        /// The text is JSON, and this is it in the form `encode(into:)` writes: whitespace
        /// between tokens dropped, numbers written as JavaScript writes them.
        case rewritten([UInt8])
        /// Not read here: not JSON, or JSON with a string escape, a control character, a
        /// duplicate key, an object of more than ``maxMembers`` members, or nesting
        /// deeper than `maxDepth` (as the parser counts it).
        case refused
    }

    /// Checks that `text` is exactly one JSON value that this type reads (see ``Form``).
    public static func check(_ text: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Form {
        var checker = Checker(bytes: text, maxDepth: maxDepth)
        checker.skipWhitespace()
        guard checker.value(depth: 0) else { return .refused }
        checker.skipWhitespace()
        guard checker.position == text.count else { return .refused }
        return checker.finished()
    }

    /// Calls `body` with the key (without its quotes) and the value's range of each member,
    /// in order, of the object whose text is `text[range]`, in a checked text (one that
    /// ``check(_:maxDepth:)`` accepted as ``Form/compact``, or the text it rewrote to);
    /// stops early when `body` returns false.
    public static func forEachMember(of range: Range<Int>, in text: UnsafeBufferPointer<UInt8>,
                                     _ body: (_ key: Range<Int>, _ value: Range<Int>) -> Bool) {
        precondition(range.count >= 2 && text[range.lowerBound] == UInt8(ascii: "{"), "not an object")
        var i = range.lowerBound + 1
        while text[i] == UInt8(ascii: "\"") {
            let keyEnd = stringEnd(text, from: i)
            let valueStart = keyEnd + 1  // after the ':'
            let valueEnd = self.valueEnd(text, from: valueStart)
            guard body(i + 1 ..< keyEnd - 1, valueStart ..< valueEnd) else { return }
            i = text[valueEnd] == UInt8(ascii: ",") ? valueEnd + 1 : valueEnd
        }
    }

    /// Calls `body` with the range of each element, in order, of the array whose text is
    /// `text[range]`, in a checked text; stops early when `body` returns false.
    public static func forEachElement(of range: Range<Int>, in text: UnsafeBufferPointer<UInt8>,
                                      _ body: (_ element: Range<Int>) -> Bool) {
        precondition(range.count >= 2 && text[range.lowerBound] == UInt8(ascii: "["), "not an array")
        var i = range.lowerBound + 1
        while text[i] != UInt8(ascii: "]") {
            let end = valueEnd(text, from: i)
            guard body(i ..< end) else { return }
            i = text[end] == UInt8(ascii: ",") ? end + 1 : end
        }
    }

    /// Whether the bytes of `range` in `text` are those of `literal`.
    @inline(__always)
    public static func bytes(_ range: Range<Int>, in text: UnsafeBufferPointer<UInt8>, equal literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let other = literal.utf8Start
        for offset in 0 ..< range.count where text[range.lowerBound + offset] != other[offset] { return false }
        return true
    }

    /// The string whose token (quotes included) is `text[range]`, in a checked text;
    /// `nil` when the value there is not a string.
    public static func string(_ range: Range<Int>, in text: UnsafeBufferPointer<UInt8>) -> String? {
        guard text[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: text[range.lowerBound + 1 ..< range.upperBound - 1]),
                      as: UTF8.self)
    }

    /// The number whose token is `text[range]`, in a checked text; `nil` when the value
    /// there is not a number.
    public static func number(_ range: Range<Int>, in text: UnsafeBufferPointer<UInt8>) -> Double? {
        let first = text[range.lowerBound]
        guard first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
        return JSONValue.number(bytes: UnsafeBufferPointer(rebasing: text[range]))
    }

    /// The value whose text is `text[range]`, parsed, in a checked text.
    public static func value(_ range: Range<Int>, in text: UnsafeBufferPointer<UInt8>) -> JSONValue {
        if let string = string(range, in: text) { return .string(string) }
        if let number = number(range, in: text) { return .number(number) }
        // Checked text parses; `.null` is never reached.
        return (try? JSONValue.parse(Array(text[range])[...], maxDepth: .max)) ?? .null
    }

    // MARK: Reading checked text

    /// One past the closing quote of the string opening at `start` (no escapes in checked text).
    @inline(__always)
    private static func stringEnd(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start + 1
        while text[i] != UInt8(ascii: "\"") { i += 1 }
        return i + 1
    }

    /// One past the end of the value starting at `start`, in checked text.
    private static func valueEnd(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        switch text[start] {
        case UInt8(ascii: "\""):
            return stringEnd(text, from: start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var i = start
            repeat {
                switch text[i] {
                case UInt8(ascii: "\""): i = stringEnd(text, from: i) - 1
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
                i += 1
            } while depth > 0
            return i
        default:
            var i = start + 1
            while i < text.count, text[i] != UInt8(ascii: ","), text[i] != UInt8(ascii: "}"), text[i] != UInt8(ascii: "]") {
                i += 1
            }
            return i
        }
    }

    // MARK: Checking

    private struct Checker {
        let bytes: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        var position = 0
        /// The keys of the objects being read, innermost last, for the duplicate check.
        var keys: [Range<Int>] = []
        /// The text in compact form up to `copied`, once it has differed from the input.
        var output: [UInt8]?
        /// How much of the input `output` stands for.
        var copied = 0

        init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
            keys.reserveCapacity(16)
        }

        mutating func finished() -> Form {
            guard output != nil else { return .compact }
            copy(upTo: bytes.count)
            return .rewritten(output!)
        }

        /// Brings `output` up to `end` of the input, starting it at the first difference.
        private mutating func copy(upTo end: Int) {
            if output == nil {
                output = []
                output!.reserveCapacity(bytes.count)
            }
            output!.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied ..< end]))
            copied = end
        }

        mutating func skipWhitespace() {
            let start = position
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): position += 1
                default:
                    if position > start { dropped(start) }
                    return
                }
            }
            if position > start { dropped(start) }
        }

        /// Leaves the input from `start` to `position` out of the output.
        private mutating func dropped(_ start: Int) {
            copy(upTo: start)
            copied = position
        }

        mutating func value(depth: Int) -> Bool {
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return false
            }
        }

        /// Takes `byte` after any whitespace, and the whitespace after it.
        private mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            skipWhitespace()
            return true
        }

        private mutating func array(depth: Int) -> Bool {
            guard depth <= maxDepth else { return false }
            guard take(UInt8(ascii: "[")) else { return false }
            if take(UInt8(ascii: "]")) { return true }
            repeat {
                guard value(depth: depth) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]"))
        }

        private mutating func object(depth: Int) -> Bool {
            guard depth <= maxDepth else { return false }
            guard take(UInt8(ascii: "{")) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            let first = keys.count
            defer { keys.removeSubrange(first...) }
            repeat {
                let keyStart = position
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), string() else { return false }
                let key = keyStart ..< position
                guard keys.count - first < CompactJSON.maxMembers,
                      !keys[first...].contains(where: { same($0, key) }) else { return false }
                keys.append(key)
                guard take(UInt8(ascii: ":")), value(depth: depth) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}"))
        }

        private func same(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
            guard a.count == b.count else { return false }
            for offset in 0 ..< a.count where bytes[a.lowerBound + offset] != bytes[b.lowerBound + offset] { return false }
            return true
        }

        /// A string without escapes or control characters, of well-formed UTF-8.
        private mutating func string() -> Bool {
            position += 1
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    return true
                } else if byte == UInt8(ascii: "\\") || byte < 0x20 {
                    return false
                } else if byte < 0x80 {
                    position += 1
                } else {
                    guard let (second, trailing) = utf8Sequence(lead: byte),
                          position + trailing < bytes.count,
                          second.contains(bytes[position + 1]) else { return false }
                    for index in 2 ..< trailing + 1 where !(0x80...0xBF).contains(bytes[position + index]) {
                        return false
                    }
                    position += trailing + 1
                }
            }
            return false
        }

        /// A number by JSON's grammar; one that JavaScript would write otherwise is
        /// written again as JavaScript writes its value.
        private mutating func number() -> Bool {
            let start = position
            func digits() -> Int {
                let first = position
                while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 { position += 1 }
                return position - first
            }
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            let integerStart = position
            let integerDigits = digits()
            // A leading zero, or no digit: the parser refuses those.
            guard integerDigits >= 1, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return false }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits() >= 1 else { return false }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                    position += 1
                }
                guard digits() >= 1 else { return false }
            }
            if JSONValue.canonicalNumberEnd(bytes, from: start) == position { return true }
            guard let value = JSONValue.number(bytes: UnsafeBufferPointer(rebasing: bytes[start ..< position])) else {
                return false
            }
            copy(upTo: start)
            JSONValue.encodeNumber(value, into: &output!)
            copied = position
            return true
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let end = position + word.utf8CodeUnitCount
            guard end <= bytes.count, CompactJSON.bytes(position ..< end, in: bytes, equal: word) else { return false }
            position = end
            return true
        }
    }
}
