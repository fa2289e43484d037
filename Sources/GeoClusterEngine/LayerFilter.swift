import GeoCluster
import GeoClusterWire

/// The query-time filters of a layer, as requests carry them. Which ones a layer takes
/// depends on its kind: sightings take `species`, `from`, `to`, `months` and `observer`; places take
/// `category`; stations take `line`. Counts, positions and aggregates of an answer then
/// describe only the points that pass. Sightings also take `top_by`, which filters
/// nothing but says how the aggregates rank species.
public struct LayerFilter: Sendable, Equatable {
    /// Sightings of any of these species (scientific names as stored).
    public var species: [String]?
    /// Sightings observed on or after this local date.
    public var from: LocalDate?
    /// Sightings observed on or before this local date.
    public var to: LocalDate?
    /// Sightings observed in these months (1...12); a season may wrap the year end, as
    /// `[11, 12, 1, 2]` does.
    public var months: [Int]?
    /// Places of any of these categories.
    public var categories: [String]?
    /// Stations served by this line.
    public var line: String?
    /// Sightings recorded by this observer (`observer_id`): one user's collection.
    public var observer: String?
    /// How `top_species` ranks a cluster's species; `nil` is by sightings.
    public var topBy: SpeciesRanking?

    public init(species: [String]? = nil, from: LocalDate? = nil, to: LocalDate? = nil, months: [Int]? = nil,
                categories: [String]? = nil, line: String? = nil) {
        self.species = species
        self.from = from
        self.to = to
        self.months = months
        self.categories = categories
        self.line = line
    }

    public static let none = LayerFilter()

    /// The most values one list filter takes.
    public static let maxValues = 1_000

    /// Reads the filter fields of a request object.
    static func read(_ fields: inout FieldReader) throws(EngineError) -> LayerFilter {
        var filter = LayerFilter()
        filter.species = try fields.optionalStrings("species", max: maxValues)
        filter.categories = try fields.optionalStrings("category", max: maxValues)
        filter.line = try fields.optionalString("line")
        filter.observer = try fields.optionalString("observer")
        if let text = try fields.optionalString("from") {
            do { filter.from = try LocalDate.parse(text) } catch { throw .invalidField("from", reason: error.description) }
        }
        if let text = try fields.optionalString("to") {
            do { filter.to = try LocalDate.parse(text) } catch { throw .invalidField("to", reason: error.description) }
        }
        if let from = filter.from, let to = filter.to, from > to {
            throw .invalidField("to", reason: "must not be before \"from\"")
        }
        if let text = try fields.optionalString("top_by") {
            guard let ranking = SpeciesRanking(rawValue: text) else {
                throw .invalidField("top_by", reason: "must be \"sightings\" or \"individuals\", got \"\(text.prefix(40))\"")
            }
            filter.topBy = ranking
        }
        if let months = try fields.optionalInts("months", in: 1...12, max: 12) {
            guard !months.isEmpty else { throw .invalidField("months", reason: "must list at least one month") }
            filter.months = months
        }
        return filter
    }

    /// Whether no filter is set (every point passes).
    var isEmpty: Bool { self == .none }
}

/// What `top_species` ranks a sightings cluster's species by (`top_by`): the number of
/// sightings (the default), or the individuals they counted (the sum of `count`), which
/// then each item also gives. A flock of 5,000 geese seen once outranks a heron seen
/// twenty times only by individuals.
public enum SpeciesRanking: String, Sendable, Equatable {
    case sightings
    case individuals

    /// The first `n` of a cluster's species (which come by sightings, most first), by
    /// this ranking; equal ranks keep the order by sightings.
    func top(_ totals: ArraySlice<PartitionTotal>, _ n: Int) -> ArraySlice<PartitionTotal> {
        switch self {
        case .sightings:
            return totals.prefix(n)
        case .individuals:
            var top: [PartitionTotal] = []
            top.reserveCapacity(n + 1)
            for item in totals {
                guard top.count < n || item.weight > top[top.count - 1].weight else { continue }
                let at = top.firstIndex { item.weight > $0.weight } ?? top.count
                top.insert(item, at: at)
                if top.count > n { top.removeLast() }
            }
            return top[...]
        }
    }
}

extension FieldReader {
    /// A string or an array of strings (at most `max`), each non-empty; in text, a
    /// comma-separated list.
    mutating func optionalStrings(_ name: String, max: Int) throws(EngineError) -> [String]? {
        let items: [String?]
        switch field(name) {
        case nil:
            return nil
        case let .json(value)?:
            if let string = value.stringValue {
                guard !string.isEmpty else { throw .invalidField(name, reason: "must not be empty") }
                return [string]
            }
            guard let array = value.arrayValue else {
                throw .invalidField(name, reason: "must be a string or an array of strings")
            }
            items = array.map(\.stringValue)
        case let .text(text)?:
            items = Self.items(text).map { String($0) }
        }
        guard items.count <= max else { throw .invalidField(name, reason: "takes at most \(max) values, got \(items.count)") }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for item in items {
            guard let string = item, !string.isEmpty else {
                throw .invalidField(name, reason: "must be a string or an array of non-empty strings")
            }
            strings.append(string)
        }
        return strings
    }

    /// An integer or an array of integers within `range` (at most `max`); in text, a
    /// comma-separated list.
    mutating func optionalInts(_ name: String, in range: ClosedRange<Int>, max: Int) throws(EngineError) -> [Int]? {
        let items: [Double?]
        switch field(name) {
        case nil:
            return nil
        case let .json(value)?:
            items = (value.arrayValue ?? [value]).map(\.doubleValue)
        case let .text(text)?:
            var numbers: [Double?] = []
            for part in Self.items(text) {
                guard let number = JSONValue.number(text: part) else {
                    throw .invalidField(name, reason: "must be comma-separated numbers, got \"\(part.prefix(40))\"")
                }
                numbers.append(number)
            }
            items = numbers
        }
        guard items.count <= max else { throw .invalidField(name, reason: "takes at most \(max) values, got \(items.count)") }
        var numbers: [Int] = []
        for item in items {
            guard let item, let number = Int(exactly: item), range.contains(number) else {
                throw .invalidField(name, reason: "must be integers within \(range.lowerBound)...\(range.upperBound)")
            }
            numbers.append(number)
        }
        return numbers
    }
}
