import GeoCluster

/// A JSON document held in memory: the free-form `properties` of GeoJSON features,
/// test fixtures, and the messages of the JSON-lines protocol.
///
/// Values compare the way JavaScript's `assert.deepEqual` compares parsed JSON:
/// object key order does not matter, numbers compare as doubles (so `0 == -0`, and
/// NaN equals NaN to keep `Hashable` lawful), and strings compare by their UTF-8
/// bytes. The last point differs from `String.==`, which treats canonically
/// equivalent strings ("é" and "e\u{301}") as equal; JSON and JavaScript keep them
/// apart, so two such keys are two keys here.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// Every JSON number is an IEEE double, as in JavaScript; integers are exact up to 2^53.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

// MARK: - Accessors

extension JSONValue {
    /// The member named `key`; `nil` when absent or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(object) = self else { return nil }
        return object[key]
    }

    /// The element at `index`; `nil` when out of range or when this is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case let .array(elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    public var doubleValue: Double? {
        guard case let .number(value) = self else { return nil }
        return value
    }

    /// The number as an `Int`, only when it is integral and within `Int`'s range, so
    /// that `1.5` or `1e30` never turn silently into some other integer.
    public var intValue: Int? {
        guard case let .number(value) = self else { return nil }
        return Int(exactly: value)
    }

    public var stringValue: String? {
        guard case let .string(value) = self else { return nil }
        return value
    }

    public var boolValue: Bool? {
        guard case let .bool(value) = self else { return nil }
        return value
    }

    public var arrayValue: [JSONValue]? {
        guard case let .array(value) = self else { return nil }
        return value
    }

    public var objectValue: JSONObject? {
        guard case let .object(value) = self else { return nil }
        return value
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

// MARK: - Equality and hashing

extension JSONValue: Hashable {
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case let (.bool(a), .bool(b)):
            return a == b
        case let (.number(a), .number(b)):
            return a == b || (a.isNaN && b.isNaN)
        case let (.string(a), .string(b)):
            return JSONValue.bytesEqual(a, b)
        case let (.array(a), .array(b)):
            return a == b
        case let (.object(a), .object(b)):
            return a == b
        default:
            return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case let .bool(value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case let .number(value):
            hasher.combine(2 as UInt8)
            // Every NaN is equal to every other, so they must share one hash.
            if value.isNaN { hasher.combine(UInt64.max) } else { hasher.combine(value) }
        case let .string(value):
            hasher.combine(3 as UInt8)
            JSONValue.hashBytes(of: value, into: &hasher)
        case let .array(elements):
            hasher.combine(4 as UInt8)
            hasher.combine(elements)
        case let .object(object):
            hasher.combine(5 as UInt8)
            hasher.combine(object)
        }
    }

    /// String equality by UTF-8 bytes, as JSON and JavaScript define it (see the type's
    /// documentation for why not `String.==`).
    @inline(__always)
    static func bytesEqual(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return withUTF8(of: a) { a in withUTF8(of: b) { b in a.elementsEqual(b) } }
    }

    /// The hash that matches ``bytesEqual(_:_:)``.
    static func hashBytes(of string: String, into hasher: inout Hasher) {
        withUTF8(of: string) { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }

    /// Calls `body` with the UTF-8 bytes of `string` in one buffer: its own storage when
    /// contiguous (every native string, small ones included), else a copy. Going through
    /// the buffer rather than `String.UTF8View`'s indices makes byte loops several times
    /// faster.
    @inline(__always)
    static func withUTF8<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// A repeated key keeps its first position and takes the last value, as in a
    /// JavaScript object literal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text, as `JSON.stringify` would write it.
    public var description: String { jsonString }
}

// MARK: - JSONObject

/// A JSON object that keeps its members in insertion order, so output matches what
/// JavaScript would write for the same object.
///
/// Equality and hashing ignore order (same keys with equal values), like Node's
/// `assert.deepEqual`. Keys are unique and compared by UTF-8 bytes. Small objects,
/// which is nearly all of them, are searched linearly; from ``indexThreshold`` members
/// on, a hash index keeps lookups, and the duplicate check while parsing, O(1), so a
/// hostile document with 100k keys costs O(n) rather than O(n²).
public struct JSONObject: Sendable {
    public typealias Element = (key: String, value: JSONValue)

    /// Members in insertion order; keys unique by bytes.
    private var entries: [Element]
    /// Position of every key in `entries`; present exactly when
    /// `entries.count >= indexThreshold`.
    private var positions: [ExactKey: Int]?

    /// Member count from which the hash index is kept.
    static let indexThreshold = 16

    public init() {
        entries = []
        positions = nil
    }

    /// Builds an object from pairs in order. A repeated key keeps its first position and
    /// takes the last value, as in a JavaScript object literal.
    public init(_ pairs: [(String, JSONValue)]) {
        self.init()
        entries.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// The value for `key`. Setting a present key replaces its value in place (keeping
    /// its position); setting a new key appends it; setting `nil` removes the key.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return entries[position].value
        }
        set {
            if let newValue {
                if let position = position(of: key) {
                    entries[position].value = newValue
                } else {
                    appendNew(key: key, value: newValue)
                }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Removes `key` and returns its value, if it was present. O(count).
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let position = position(of: key) else { return nil }
        let removed = entries.remove(at: position).value
        positions = entries.count >= Self.indexThreshold ? Self.makePositions(entries) : nil
        return removed
    }

    /// The keys in order.
    public var keys: [String] { entries.map(\.key) }

    /// The values in key order.
    public var values: [JSONValue] { entries.map(\.value) }

    /// Whether `key` is present.
    public func contains(key: String) -> Bool { position(of: key) != nil }

    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        entries.reserveCapacity(minimumCapacity)
    }

    /// Appends a key known to be absent; the parser checks first to report the
    /// duplicate at the key's offset.
    mutating func appendNew(key: String, value: JSONValue) {
        entries.append((key, value))
        if positions != nil {
            positions?[ExactKey(key)] = entries.count - 1
        } else if entries.count >= Self.indexThreshold {
            positions = Self.makePositions(entries)
        }
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[ExactKey(key)] }
        return entries.firstIndex { JSONValue.bytesEqual($0.key, key) }
    }

    private static func makePositions(_ entries: [Element]) -> [ExactKey: Int] {
        var positions = [ExactKey: Int](minimumCapacity: entries.count)
        for (offset, entry) in entries.enumerated() { positions[ExactKey(entry.key)] = offset }
        return positions
    }

    /// Traps unless keys are unique and the index, when present, agrees with the order.
    func _checkInvariants() {
        precondition((positions != nil) == (entries.count >= Self.indexThreshold), "index presence")
        var seen = Set<ExactKey>()
        for (offset, entry) in entries.enumerated() {
            precondition(seen.insert(ExactKey(entry.key)).inserted, "duplicate key \(entry.key)")
            if let positions { precondition(positions[ExactKey(entry.key)] == offset, "stale index") }
        }
        if let positions { precondition(positions.count == entries.count, "index size") }
    }
}

/// A dictionary key that compares strings by UTF-8 bytes, for ``JSONObject``'s index.
private struct ExactKey: Hashable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool { JSONValue.bytesEqual(lhs.string, rhs.string) }

    func hash(into hasher: inout Hasher) { JSONValue.hashBytes(of: string, into: &hasher) }
}

extension JSONObject: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }
    public subscript(position: Int) -> Element { entries[position] }
}

extension JSONObject: Hashable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for (offset, entry) in lhs.entries.enumerated() {
            // Objects usually share their order, so try the same position first.
            let other = rhs.entries[offset]
            if JSONValue.bytesEqual(other.key, entry.key) {
                guard other.value == entry.value else { return false }
            } else {
                guard let value = rhs[entry.key], value == entry.value else { return false }
            }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // A commutative sum of per-member hashes, so that order does not matter.
        var sum = 0
        for (key, value) in entries {
            var member = Hasher()
            JSONValue.hashBytes(of: key, into: &member)
            member.combine(value)
            sum &+= member.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(sum)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A repeated key keeps its first position and takes the last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text, as `JSON.stringify` would write it.
    public var description: String { JSONValue.object(self).jsonString }
}
