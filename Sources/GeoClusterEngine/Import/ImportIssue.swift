/// Where a record sits in its input, as people count it.
public enum ImportLocation: Sendable, Equatable, CustomStringConvertible {
    /// A 1-based line of a CSV or JSON-lines file; a CSV header is line 1.
    case line(Int)
    /// A 0-based index into a FeatureCollection's `features` array.
    case feature(Int)

    public var description: String {
        switch self {
        case let .line(line): "line \(line)"
        case let .feature(index): "features[\(index)]"
        }
    }
}

/// Why one record of an import was rejected.
public struct ImportIssue: Error, Sendable, Equatable, CustomStringConvertible {
    public var location: ImportLocation
    /// The record's id as JSON text (`"s7"`, `7`), when it was read before the error.
    public var id: String?
    /// The offending record field (`count`, `lon`, `geometry.coordinates`, `id`), or
    /// `row` for a CSV record that is malformed as a whole, `record` for a JSON record
    /// that does not parse.
    public var field: String
    /// The CSV column the field was read from, when its name differs from the field's.
    public var column: String?
    public var reason: String

    public init(location: ImportLocation, id: String? = nil, field: String, column: String? = nil, reason: String) {
        self.location = location
        self.id = id
        self.field = field
        self.column = column
        self.reason = reason
    }

    /// `line 7 (id "s7"): field "count" (column "n"): must be an integer >= 1, got "0"`.
    public var description: String {
        var text = location.description
        if let id { text += " (id \(id))" }
        text += ": field \"\(field)\""
        if let column { text += " (column \"\(column)\")" }
        return text + ": " + reason
    }
}
