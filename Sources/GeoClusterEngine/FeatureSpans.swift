import Dispatch
import GeoClusterWire

/// Where each feature of a GeoJSON FeatureCollection's text lies, found without building
/// the document's tree, so that a layer file's features can be parsed one by one, on
/// every core, and each tree freed as soon as its record is made.
///
/// The scan checks the collection's layout: one top-level object whose members are
/// separated and closed as JSON requires, whose `type` is `"FeatureCollection"` (parsed by
/// the JSON parser, as every member other than `features` is) and whose `features` is an
/// array. It finds each element's end by counting brackets outside strings; the element
/// itself is checked when it is parsed. Anything it does not expect (a second `features`,
/// a key with escapes, stray bytes) makes it give up with `nil`: the caller then parses
/// the whole text as before, which accepts every valid document and names the error of an
/// invalid one.
enum FeatureSpans {
    /// The byte ranges of the elements of `features`, in order; `nil` when the text is not
    /// a FeatureCollection laid out as the scan expects.
    ///
    /// A `features` array longer than `splitAbove` bytes is scanned in two halves at once
    /// (see ``Scanner/elements()``); the spans are the same either way.
    static func scan(_ bytes: [UInt8], splitAbove: Int = 4 << 20) -> [Range<Int>]? {
        bytes.withUnsafeBufferPointer { buffer -> [Range<Int>]? in
            var scanner = Scanner(bytes: buffer, splitAbove: splitAbove)
            return scanner.collection()
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let splitAbove: Int
        var position = 0

        init(bytes: UnsafeBufferPointer<UInt8>, splitAbove: Int, position: Int = 0) {
            self.bytes = bytes
            self.splitAbove = splitAbove
            self.position = position
        }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// The top-level object; `nil` unless it has `"type":"FeatureCollection"` and one
        /// `features` array.
        mutating func collection() -> [Range<Int>]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var features: [Range<Int>]?
            var isCollection = false
            var keys: Set<String> = []
            if take(UInt8(ascii: "}")) { return nil }
            repeat {
                guard let key = plainKey(), keys.insert(key).inserted, take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                if key == "features" {
                    guard let spans = array() else { return nil }
                    features = spans
                } else {
                    let start = position
                    guard let end = valueEnd(), let value = try? JSONValue.parse(bytes: bytes, start..<end)
                    else { return nil }
                    if key == "type" { isCollection = value == "FeatureCollection" }
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
            skipWhitespace()
            guard position == bytes.count, isCollection else { return nil }
            return features
        }

        /// A key of ASCII letters, digits, `_` and `-` between quotes; `nil` for any other.
        mutating func plainKey() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let key = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                    position += 1
                    return key
                }
                let plain = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                guard plain else { return nil }
                position += 1
            }
            return nil
        }

        /// The elements of the array at the position.
        mutating func array() -> [Range<Int>]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            if take(UInt8(ascii: "]")) { return [] }
            return elements()
        }

        /// The elements of an array from the start of one of them, and past its `]`.
        ///
        /// A long array is scanned in two halves at once: a second scanner starts at what
        /// looks like an element's start halfway (`{` after `},`) and scans to the `]`,
        /// while this one scans from here until it reaches that place. Only if this scan
        /// starts an element exactly there does it take the second one's spans, which are
        /// then what it would have found itself: both scan from an element's start in the
        /// same array. Otherwise the guess was inside a string or a nested value, and this
        /// scan goes on alone.
        mutating func elements() -> [Range<Int>]? {
            guard bytes.count - position > splitAbove, let split = elementStart(after: position + (bytes.count - position) / 2)
            else { return elements(until: nil)?.spans }
            let halves = Halves(first: self, second: Scanner(bytes: bytes, splitAbove: .max, position: split))
            DispatchQueue.concurrentPerform(iterations: 2) { half in
                if half == 0 {
                    halves.firstResult = halves.first.elements(until: split)
                } else {
                    halves.secondResult = halves.second.elements(until: nil)
                }
            }
            guard let (spans, reachedSplit) = halves.firstResult else { return nil }
            guard reachedSplit else {
                position = halves.first.position
                return spans
            }
            guard let (rest, _) = halves.secondResult else { return nil }
            position = halves.second.position
            return spans + rest
        }

        /// The two scanners of a split scan and what each found, each written by one thread
        /// and read after both have ended.
        private final class Halves: @unchecked Sendable {
            var first: Scanner
            var second: Scanner
            var firstResult: (spans: [Range<Int>], reachedSplit: Bool)?
            var secondResult: (spans: [Range<Int>], reachedSplit: Bool)?

            init(first: Scanner, second: Scanner) {
                self.first = first
                self.second = second
            }
        }

        /// The elements from the position up to the array's `]` (read), or up to an element
        /// starting at `split` (not read; `reachedSplit` is then true). `nil` when the text
        /// is not laid out as the scan expects.
        mutating func elements(until split: Int?) -> (spans: [Range<Int>], reachedSplit: Bool)? {
            var spans: [Range<Int>] = []
            repeat {
                skipWhitespace()
                let start = position
                if start == split { return (spans, true) }
                guard let end = valueEnd() else { return nil }
                spans.append(start..<end)
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "]")) else { return nil }
            return (spans, false)
        }

        /// The first `{` at or after `start` that follows `}` and `,` (whitespace aside):
        /// where an element of an array of objects may start.
        func elementStart(after start: Int) -> Int? {
            var i = start
            while i < bytes.count {
                if bytes[i] == UInt8(ascii: "{") {
                    var j = i - 1
                    while j > 0, Self.isWhitespace(bytes[j]) { j -= 1 }
                    if j > 0, bytes[j] == UInt8(ascii: ",") {
                        j -= 1
                        while j > 0, Self.isWhitespace(bytes[j]) { j -= 1 }
                        if bytes[j] == UInt8(ascii: "}") { return i }
                    }
                }
                i += 1
            }
            return nil
        }

        static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        /// Moves past one value and returns its end: a string, an object or array (by its
        /// brackets, outside strings), or a scalar (up to the next delimiter). Not a check
        /// of the value: the parser checks it.
        mutating func valueEnd() -> Int? {
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                position += 1
                guard skipStringRest() else { return nil }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while position < bytes.count {
                    let byte = bytes[position]
                    position += 1
                    switch byte {
                    case UInt8(ascii: "\""):
                        guard skipStringRest() else { return nil }
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return position }
                    default:
                        break
                    }
                }
                return nil
            default:
                let start = position
                while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D:
                        return position > start ? position : nil
                    default:
                        position += 1
                    }
                }
                return position > start ? position : nil
            }
            return position
        }

        /// Past the closing quote of a string whose opening quote was just read.
        mutating func skipStringRest() -> Bool {
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: "\\") {
                    position += 1
                } else if byte == UInt8(ascii: "\"") {
                    return true
                }
            }
            return false
        }
    }

    /// `body(i)` for each `i` in `0..<count`, on every core: the indices are split into
    /// chunks of consecutive ones, each chunk run by one thread in order. Returns the
    /// results in index order, or the error of the lowest index that failed. Each result
    /// is written once, where the returned array holds it. `itemsEach` is how many items
    /// (features, records) one call makes, which sets how finely the work is split.
    /// `chunkDone`, when given, is called on the chunk's thread with the indices of each
    /// chunk that ended without an error, as soon as it ends (chunks end in about the
    /// order of their indices, one per thread at a time).
    static func concurrentMap<T, Failure: Error>(
        _ count: Int, itemsEach: Int = 1, chunkDone: (@Sendable (Range<Int>) -> Void)? = nil,
        _ body: @Sendable (Int) throws(Failure) -> T
    ) throws(Failure) -> [T] {
        let items = count.multipliedReportingOverflow(by: max(1, itemsEach))
        let itemCount = items.overflow ? Int.max : items.partialValue
        let chunkCount = itemCount < 4_096 ? 1 : min(64, count, max(1, itemCount / 2_048))
        guard chunkCount > 1 else {
            let all = try (0..<count).map { i throws(Failure) in try body(i) }
            chunkDone?(0..<count)
            return all
        }
        let chunks = Chunks<Failure>(count: chunkCount)
        defer { chunks.deallocate() }
        var failure: Failure?
        let all = [T](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            let results = Results(base: buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
                let range = (count * chunk / chunkCount)..<(count * (chunk + 1) / chunkCount)
                var written = 0
                do throws(Failure) {
                    for i in range {
                        (results.base + i).initialize(to: try body(i))
                        written += 1
                    }
                    chunks.store(written: written, error: nil, at: chunk)
                    chunkDone?(range)
                } catch {
                    chunks.store(written: written, error: error, at: chunk)
                }
            }
            if let first = (0..<chunkCount).lazy.compactMap({ chunks.error(at: $0) }).first {
                // The chunks that ended early wrote a prefix of their range: undone, and
                // the array is returned empty.
                for chunk in 0..<chunkCount {
                    let start = count * chunk / chunkCount
                    (results.base + start).deinitialize(count: chunks.written(at: chunk))
                }
                failure = first
                initializedCount = 0
            } else {
                initializedCount = count
            }
        }
        if let failure { throw failure }
        return all
    }

    /// Where the results go, shared by the threads: each writes its own chunk's range.
    private struct Results<T>: @unchecked Sendable {
        let base: UnsafeMutablePointer<T>
    }

    /// How each chunk ended: how many results it wrote and its error, if any, each slot
    /// written by the one thread that runs the chunk and read after `concurrentPerform`
    /// returned.
    private final class Chunks<Failure: Error>: @unchecked Sendable {
        private let slots: UnsafeMutableBufferPointer<(written: Int, error: Failure?)>

        init(count: Int) {
            slots = .allocate(capacity: count)
            slots.initialize(repeating: (0, nil))
        }

        func store(written: Int, error: Failure?, at index: Int) { slots[index] = (written, error) }
        func written(at index: Int) -> Int { slots[index].written }
        func error(at index: Int) -> Failure? { slots[index].error }

        func deallocate() {
            _ = slots.deinitialize()
            slots.deallocate()
        }
    }

}

extension JSONValue {
    /// One JSON value from part of a buffer.
    fileprivate static func parse(bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(JSONParseError) -> JSONValue {
        try JSONValue.parse(Array(UnsafeBufferPointer(rebasing: bytes[range])), maxDepth: 64)
    }
}
