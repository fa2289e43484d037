import GeoCluster
import GeoClusterWire

/// The fields of `stations`: find stations of a stations layer by name (Korean or
/// English, exact or prefix), by line, or nearest to a position.
public struct StationQuery: Sendable, Equatable {
    public var stationsLayer: String
    /// A name or the start of one.
    public var name: String?
    /// Only stations on this line (exactly as the layer spells it).
    public var line: String?
    /// Nearest first to this position, with `distance_m`.
    public var near: Coordinate?
    public var limit: Int

    public init(stationsLayer: String = "stations", name: String? = nil, line: String? = nil, near: Coordinate? = nil,
                limit: Int = Request.defaultStationsLimit) {
        self.stationsLayer = stationsLayer
        self.name = name
        self.line = line
        self.near = near
        self.limit = limit
    }

    init(reading fields: inout FieldReader) throws(EngineError) {
        stationsLayer = try fields.optionalString("stations_layer") ?? "stations"
        name = try fields.optionalString("q")
        if let name, StationName.key(name).isEmpty {
            throw .invalidField("q", reason: "must hold a name, not only spaces or punctuation")
        }
        line = try fields.optionalString("line")
        near = fields.has("lon") || fields.has("lat") ? try fields.location() : nil
        limit = try fields.optionalInt("limit", in: 1...Request.maxStationsLimit) ?? Request.defaultStationsLimit
    }
}

extension Request {
    public static let defaultStationsLimit = 20
    public static let maxStationsLimit = 1_000
}

/// Names as people type them: without case, spaces, hyphens, dots, underscores and
/// apostrophes, so that `Red-crowned Crane` is `red crowned crane` and `서울 역` is `서울역`.
enum NameKey {
    static func of(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { scalar in
            !(scalar.properties.isWhitespace || "-·._'’".unicodeScalars.contains(scalar))
        })
    }
}

/// How station names are compared: `서울역`, `서울 역`, `서울` and `Seoul Station` are the
/// same name; `김천(구미)` is also `김천구미` and `김천·구미`, and answers to `김천` and to
/// `구미` as parts of it.
enum StationName {
    /// The name's ``NameKey`` without a trailing `역` or `station`.
    static func key(_ name: String) -> String {
        var text = NameKey.of(name)
        for suffix in ["station", "역"] where text.hasSuffix(suffix) && text.count > suffix.count {
            text.removeLast(suffix.count)
        }
        return text
    }

    /// The keys a station answers to: its name, its English name and any former name (in
    /// Korean or romanised, `former_name` and `former_name_en`), each
    /// also without its parentheses (`김천(구미)` as `김천구미`); and, as ``Keys/parts``, the
    /// part before and the part inside them.
    struct Keys {
        var names: [String] = []
        var parts: [String] = []
    }

    static func keys(of record: LayerRecord) -> Keys {
        var names: [String] = []
        if case let .station(name, _) = record.fields { names.append(name) }
        let properties = record.properties
        for property in ["name_en", "former_name", "former_name_en"] {
            if let text = properties[property]?.stringValue { names.append(text) }
        }
        var keys = Keys()
        for name in names {
            keys.names.append(key(name))
            if let split = parts(of: name) {
                keys.names.append(key(split.before + split.inside))
                keys.parts.append(key(split.before))
                keys.parts.append(key(split.inside))
            }
        }
        keys.names.removeAll { $0.isEmpty }
        keys.parts.removeAll { $0.isEmpty }
        return keys
    }

    /// A name's part before its parentheses and the part inside them, if it has them.
    static func parts(of name: String) -> (before: String, inside: String)? {
        guard let open = name.firstIndex(of: "(") else { return nil }
        let after = name.index(after: open)
        let close = name[after...].firstIndex(of: ")") ?? name.endIndex
        return (String(name[..<open]), String(name[after..<close]))
    }

    /// The keys a query is tried with, in turn: as typed, then, for a name written with
    /// parentheses (`천안아산(온양온천)`, a station's full official name), the part before
    /// them and the part inside.
    static func queryKeys(_ text: String) -> [String] {
        var keys = [key(text)]
        if let split = parts(of: text) { keys += [key(split.before + split.inside), key(split.before), key(split.inside)] }
        return keys.filter { !$0.isEmpty }
    }

    enum Match: Int, Comparable {
        /// The whole of one of the station's names.
        case exact = 0
        /// The part of a name before or inside its parentheses: `구미` of `김천(구미)`,
        /// which the station named `구미` itself comes before.
        case part = 1
        case prefix = 2

        static func < (a: Match, b: Match) -> Bool { a.rawValue < b.rawValue }

        var code: String {
            switch self {
            case .exact, .part: "exact"
            case .prefix: "prefix"
            }
        }
    }

    /// How well a station's keys match a query key.
    static func match(_ query: String, _ keys: Keys) -> Match? {
        if keys.names.contains(query) { return .exact }
        if keys.parts.contains(query) { return .part }
        if keys.names.contains(where: { $0.hasPrefix(query) }) || keys.parts.contains(where: { $0.hasPrefix(query) }) {
            return .prefix
        }
        return nil
    }
}

extension Engine {
    /// Answers `stations`: the matching stations, exact name matches first, then prefix
    /// matches, then by distance when a position is given, then by id.
    func stations(_ query: StationQuery) throws(EngineError) -> JSONValue {
        let layer = try liveLayer(query.stationsLayer, field: "stations_layer", kind: .stations)
        var found: [(record: LayerRecord, match: StationName.Match?, distance: Double?)] = []
        // A name with parentheses that finds nothing as typed is tried by its parts.
        let queryKeys: [String?] = query.name.map { StationName.queryKeys($0).map(Optional.some) } ?? [nil]
        for queryKey in queryKeys where found.isEmpty {
            for slot in 0..<layer.records.count {
                guard let record = layer.record(atSlot: slot), case let .station(_, lines) = record.fields else { continue }
                if let line = query.line, !lines.contains(line) { continue }
                var match: StationName.Match?
                if let queryKey {
                    guard let m = StationName.match(queryKey, StationName.keys(of: record)) else { continue }
                    match = m
                }
                let distance = query.near.map { Self.geodesicMeters($0, record.coordinate) }
                found.append((record, match, distance))
            }
        }
        found.sort { a, b in
            if a.match != b.match, let x = a.match, let y = b.match { return x < y }
            if let x = a.distance, let y = b.distance, x != y { return x < y }
            return a.record.idKey < b.record.idKey
        }
        let items: [JSONValue] = found.prefix(query.limit).map { item in
            var object: JSONObject = ["id": item.record.idJSON]
            if case let .station(name, lines) = item.record.fields {
                object["name"] = .string(name)
                if let english = item.record.properties["name_en"] { object["name_en"] = english }
                object["lines"] = .array(lines.map { .string($0) })
            }
            object["lon"] = .number(item.record.coordinate.longitude)
            object["lat"] = .number(item.record.coordinate.latitude)
            if let buffer = item.record.properties["boarding_buffer_minutes"] { object["boarding_buffer_minutes"] = buffer }
            if let match = item.match { object["match"] = .string(match.code) }
            if let distance = item.distance { object["distance_m"] = .number(Self.nearest(distance)) }
            return .object(object)
        }
        return .object(["stations": .array(items), "total": .number(Double(found.count))])
    }

    /// The first 40 characters of a name, and `…` when there were more.
    static func quotable(_ text: String) -> String { text.count > 40 ? text.prefix(40) + "…" : text }

    /// The station a `reachable` request names: by id first (a numeric string also finds
    /// an integer id), then the one station whose name is the given one, then the one
    /// with a part of its name (before or inside parentheses) that is, then the one
    /// whose name starts with it; a name with parentheses that finds none is tried by its
    /// parts. More than one at the deciding step is `ambiguous_station`, none
    /// `unknown_station`; a name of only spaces or punctuation is `invalid_field`.
    func station(_ id: JSONValue, in layer: LiveLayer, layerName: String) throws(EngineError) -> LayerRecord {
        if let key = LayerRecord.idKey(of: id), let record = layer.record(idKey: key) { return record }
        if let text = id.stringValue, let integer = Int(text), String(integer) == text,
           let record = layer.record(idKey: "#\(integer)") {
            return record
        }
        if let text = id.stringValue {
            guard !StationName.key(text).isEmpty else {
                throw .invalidField("station", reason: "must hold an id or a name, not only spaces or punctuation")
            }
            var matches: [LayerRecord] = []
            for key in StationName.queryKeys(text) where matches.isEmpty {
                var best: StationName.Match?
                for slot in 0..<layer.records.count {
                    guard let record = layer.record(atSlot: slot),
                          let match = StationName.match(key, StationName.keys(of: record)) else { continue }
                    if best == nil || match < best! {
                        best = match
                        matches = [record]
                    } else if match == best {
                        matches.append(record)
                    }
                }
            }
            if matches.count == 1 { return matches[0] }
            if matches.count > 1 {
                let candidates = matches.sorted { $0.idKey < $1.idKey }.prefix(10).map { record in
                    if case let .station(name, _) = record.fields { return "\(record.idJSON.jsonString) (\(name))" }
                    return record.idJSON.jsonString
                }
                throw .ambiguousStation(layer: layerName, name: Self.quotable(text), candidates: candidates)
            }
            // As other errors quote what was given: its first 40 characters.
            throw .unknownStation(layer: layerName, id: JSONValue.string(Self.quotable(text)).jsonString)
        }
        throw .unknownStation(layer: layerName, id: id.jsonString)
    }
}
