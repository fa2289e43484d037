import GeoCluster
import GeoClusterWire

/// Reads the typed fields of one request from either transport, remembering which were
/// read so that any other is an `unknown_field` error.
///
/// A JSON line carries each field as a JSON value (`"zoom":6`, `"bbox":[w,s,e,n]`,
/// `"species":["Anas acuta"]`); an HTTP route carries it as text (`zoom=6`,
/// `bbox=w,s,e,n`, `species=Anas acuta`), already percent-decoded. Each reader says how
/// its field is written in both, and both give the same error codes and field names: a
/// number in text follows JSON's number grammar (``GeoClusterWire/JSONValue/number(text:)``),
/// lists are comma-separated, coordinate pairs `x,y` separated by `;`.
struct FieldReader {
    /// One field as its transport carries it.
    enum Field {
        case json(JSONValue)
        case text(String)
    }

    private enum Source {
        case object(JSONObject)
        case parameters([(name: String, value: String)])
    }

    private let source: Source
    /// The names read so far; a request has a few dozen fields at most.
    private var used: [String]

    /// The fields of a JSON-lines request object, where `id` (the caller's) and `op` are
    /// never unknown.
    init(_ object: JSONObject) {
        source = .object(object)
        used = ["id", "op"]
    }

    /// The text parameters of an HTTP route, names unique.
    init(parameters: [(name: String, value: String)]) {
        source = .parameters(parameters)
        used = []
    }

    /// The field, or `nil` when it is absent (or JSON `null`).
    mutating func field(_ name: String) -> Field? {
        used.append(name)
        switch source {
        case let .object(object):
            guard let value = object[name], !value.isNull else { return nil }
            return .json(value)
        case let .parameters(parameters):
            return parameters.first { $0.name == name }.map { .text($0.value) }
        }
    }

    mutating func has(_ name: String) -> Bool { field(name) != nil }

    mutating func string(_ name: String) throws(EngineError) -> String {
        guard let string = try optionalString(name) else { throw .missingField(name) }
        return string
    }

    /// A non-empty string.
    mutating func optionalString(_ name: String) throws(EngineError) -> String? {
        let string: String
        switch field(name) {
        case nil: return nil
        case let .json(value)?:
            guard let text = value.stringValue else { throw .invalidField(name, reason: "must be a string") }
            string = text
        case let .text(text)?:
            string = text
        }
        guard !string.isEmpty else { throw .invalidField(name, reason: "must not be empty") }
        return string
    }

    /// A record id as written: a string or a number in JSON, always a string in text.
    /// Whether it is a valid id is the caller's rule.
    mutating func optionalID(_ name: String) -> JSONValue? {
        switch field(name) {
        case nil: nil
        case let .json(value)?: value
        case let .text(text)?: .string(text)
        }
    }

    mutating func double(_ name: String, in range: ClosedRange<Double>) throws(EngineError) -> Double {
        guard let number = try optionalDouble(name, in: range) else { throw .missingField(name) }
        return number
    }

    mutating func optionalDouble(_ name: String, in range: ClosedRange<Double>) throws(EngineError) -> Double? {
        let number: Double
        switch field(name) {
        case nil: return nil
        case let .json(value)?:
            guard let value = value.doubleValue else { throw .invalidField(name, reason: "must be a number") }
            number = value
        case let .text(text)?:
            number = try Self.number(text, field: name)
        }
        guard range.contains(number) else {
            throw .invalidField(name, reason: "must be within \(range.lowerBound)...\(range.upperBound), got \(number)")
        }
        return number
    }

    mutating func int(_ name: String, in range: ClosedRange<Int>) throws(EngineError) -> Int {
        guard let number = try optionalInt(name, in: range) else { throw .missingField(name) }
        return number
    }

    /// An integral number within `range` (`1.5` or `1e30` is never some other integer).
    mutating func optionalInt(_ name: String, in range: ClosedRange<Int>) throws(EngineError) -> Int? {
        let integer: Int?
        switch field(name) {
        case nil: return nil
        case let .json(value)?: integer = value.intValue
        case let .text(text)?: integer = Int(exactly: try Self.number(text, field: name))
        }
        guard let integer else { throw .invalidField(name, reason: "must be an integer") }
        guard range.contains(integer) else {
            throw .invalidField(name, reason: "must be within \(range.lowerBound)...\(range.upperBound), got \(integer)")
        }
        return integer
    }

    /// `[west, south, east, north]`, or `west,south,east,north` in text.
    mutating func bbox(_ name: String) throws(EngineError) -> BoundingBox {
        var numbers: [Double] = []
        switch field(name) {
        case nil: throw .missingField(name)
        case let .json(value)?:
            guard let items = value.arrayValue, items.count == 4 else {
                throw .invalidField(name, reason: "must be an array [west, south, east, north]")
            }
            for item in items {
                guard let number = item.doubleValue else {
                    throw .invalidField(name, reason: "must be an array of 4 numbers [west, south, east, north]")
                }
                numbers.append(number)
            }
        case let .text(text)?:
            numbers = try Self.numbers(text, count: 4, names: "west,south,east,north", field: name)
        }
        do {
            return try BoundingBox(numbers)
        } catch {
            throw .core(error, field: name)
        }
    }

    /// A non-empty JSON array of at most `max` items (the records or ids of a write,
    /// which only JSON carries).
    mutating func array(_ name: String, max: Int) throws(EngineError) -> [JSONValue] {
        guard let field = field(name) else { throw .missingField(name) }
        guard case let .json(value) = field, let items = value.arrayValue else {
            throw .invalidField(name, reason: "must be an array")
        }
        guard !items.isEmpty else { throw .invalidField(name, reason: "must not be empty") }
        guard items.count <= max else {
            throw .invalidField(name, reason: "takes at most \(max) items per request, got \(items.count)")
        }
        return items
    }

    func rejectUnused() throws(EngineError) {
        switch source {
        case let .object(object):
            for key in object.keys where !used.contains(key) { throw .unknownField(key) }
        case let .parameters(parameters):
            for parameter in parameters where !used.contains(parameter.name) { throw .unknownField(parameter.name) }
        }
    }

    // MARK: Text

    /// A finite number in JSON's grammar (`-12.5e3`; no `+5`, `5abc`, `NaN` or `inf`), so
    /// that HTTP takes exactly the numbers JSON lines do.
    static func number(_ text: some StringProtocol, field: String) throws(EngineError) -> Double {
        guard let number = JSONValue.number(text: text) else {
            throw .invalidField(field, reason: "must be a number, got \"\(text.prefix(40))\"")
        }
        return number
    }

    /// Exactly `count` comma-separated numbers; `names` says what they are.
    static func numbers(_ text: String, count: Int, names: String, field: String) throws(EngineError) -> [Double] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == count else {
            throw .invalidField(field, reason: "must be \(count) comma-separated numbers \(names), got \(parts.count) values")
        }
        var numbers: [Double] = []
        numbers.reserveCapacity(count)
        for part in parts {
            guard let number = JSONValue.number(text: part) else {
                throw .invalidField(field, reason: "must be \(count) comma-separated numbers \(names), got \"\(part.prefix(40))\"")
            }
            numbers.append(number)
        }
        return numbers
    }

    /// The comma-separated items of a text list (`a,,b` has an empty middle item).
    static func items(_ text: String) -> [Substring] {
        text.split(separator: ",", omittingEmptySubsequences: false)
    }
}
