import GeoCluster
import GeoClusterWire
import GeoReachability

/// The fields of `reachable`: where the traveller is, how much time they have, which places
/// to consider, the model's parameters and how to present the answer.
public struct ReachableQuery: Sendable, Equatable {
    /// Where the traveller starts and where the walk ends.
    public enum Origin: Sendable, Equatable {
        /// A station of the stations layer, by id as given (a string or an integer) or by name.
        case station(id: JSONValue)
        case location(Coordinate)
        /// From a position (a traveller already walking) to a place, then to the station.
        case via(station: JSONValue, start: Coordinate)
    }

    /// How the time available is given.
    public enum Time: Sendable, Equatable {
        /// The train's departure and the current time, RFC 3339 with offsets; without
        /// `now`, the server's clock when the request is answered.
        case clock(departure: Timestamp, now: Timestamp?)
        /// Minutes until departure.
        case remaining(minutes: Double)
    }

    /// Which travel model walks the routes.
    public enum Travel: Sendable, Equatable {
        case straightLine
        /// A loaded walking network: the named one, or the one covering the origin.
        case network(name: String?)
    }

    public var layer: String
    public var stationsLayer: String
    public var origin: Origin
    public var time: Time
    /// Place categories to consider, all when nil.
    public var categories: [String]?
    /// The model's parameters, not yet validated (the engine validates and names the field).
    public var parameters: ReachabilityParameters
    /// Dwell minutes by category that the request gave: they win over a place's own dwell.
    public var dwellOverrides: [String: Double]
    /// Whether the request gave `boarding_buffer_minutes`; when not, a station's own
    /// buffer, where it has one, replaces the default.
    public var boardingBufferGiven: Bool
    /// The language of `reason` and the category labels.
    public var language: ReachabilityLanguage
    public var travel: Travel
    public var order: ReachabilitySortOrder
    public var limit: Int
    public var offset: Int
    public var includeUnreachable: Bool
    /// Also cluster every reachable place for this map view, with the places layer's
    /// clustering options.
    public var clusterView: ClusterView?
    /// Give each listed place its walking route (`include: ["route"]`; see
    /// ``GeoReachability/VisitRoutes``).
    public var includeRoute = false
    /// Only this place (the `route` operation): its id in the places layer.
    public var place: JSONValue?

    /// A viewport and zoom, as in `clusters`.
    public struct ClusterView: Sendable, Equatable {
        public var bbox: BoundingBox
        public var zoom: Double

        public init(bbox: BoundingBox, zoom: Double) {
            self.bbox = bbox
            self.zoom = zoom
        }
    }

    public init(layer: String, stationsLayer: String = "stations", origin: Origin, time: Time,
                categories: [String]? = nil, parameters: ReachabilityParameters = ReachabilityParameters(),
                dwellOverrides: [String: Double] = [:], boardingBufferGiven: Bool = false,
                language: ReachabilityLanguage = .english, travel: Travel = .straightLine, order: ReachabilitySortOrder = .slack,
                limit: Int = Request.defaultReachableLimit, offset: Int = 0, includeUnreachable: Bool = false,
                clusterView: ClusterView? = nil) {
        self.layer = layer
        self.stationsLayer = stationsLayer
        self.origin = origin
        self.time = time
        self.categories = categories
        self.parameters = parameters
        self.dwellOverrides = dwellOverrides
        self.boardingBufferGiven = boardingBufferGiven
        self.language = language
        self.travel = travel
        self.order = order
        self.limit = limit
        self.offset = offset
        self.includeUnreachable = includeUnreachable
        self.clusterView = clusterView
    }

    /// Reads the fields of `reachable`, or of `route` (`reachable` for the one place
    /// `place`, with its route and, when it does not fit, why).
    init(reading fields: inout FieldReader, route: Bool = false) throws(EngineError) {
        if route {
            guard let id = fields.optionalID("place") else { throw .missingField("place") }
            guard LayerRecord.idKey(of: id) != nil else {
                throw .invalidField("place", reason: "must be a place id: a non-empty string or an integer")
            }
            place = id
            includeRoute = true
        }
        layer = try fields.string("layer")
        stationsLayer = try fields.optionalString("stations_layer") ?? "stations"

        let station = fields.optionalID("station")
        let hasLocation = fields.has("lon") || fields.has("lat")
        switch (station, hasLocation) {
        case let (station?, false):
            guard LayerRecord.idKey(of: station) != nil else {
                throw .invalidField("station", reason: "must be a station id: a non-empty string or an integer")
            }
            origin = .station(id: station)
        case (nil, true):
            origin = .location(try fields.location())
        case let (station?, true):
            guard LayerRecord.idKey(of: station) != nil else {
                throw .invalidField("station", reason: "must be a station id: a non-empty string or an integer")
            }
            origin = .via(station: station, start: try fields.location())
        case (nil, false):
            throw .invalidField("station", reason: "is required unless \"lon\" and \"lat\" give the location")
        }

        let departure = try fields.optionalTimestamp("departure")
        let now = try fields.optionalTimestamp("now")
        let remaining = try fields.optionalDouble("remaining_minutes", in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)
        switch (departure, now, remaining) {
        case let (departure?, now, nil):
            time = .clock(departure: departure, now: now)
        case let (nil, nil, minutes?):
            time = .remaining(minutes: minutes)
        case (nil, .some, nil):
            throw .missingField("departure")
        case (nil, nil, nil):
            throw .invalidField("departure", reason: "give \"departure\" (and \"now\", RFC 3339 with offsets) or \"remaining_minutes\"")
        default:
            throw .invalidField("remaining_minutes", reason: "give either \"remaining_minutes\" or \"departure\" and \"now\", not both")
        }
        if case let .remaining(minutes) = time {
            guard minutes >= 0 else {
                throw .core(.invalidRemainingTime(minutes: minutes, reason: "is negative"), field: "remaining_minutes")
            }
            // The whole minutes decide, as everywhere else: 2,880.5 is 2,880.
            guard minutes.rounded(.down) <= Request.maxRemainingMinutes else {
                throw .invalidField("remaining_minutes", reason: "must be at most \(Int(Request.maxRemainingMinutes)) (48 h), got \(minutes)")
            }
        }

        categories = try fields.optionalStrings("category", max: LayerFilter.maxValues)

        var parameters = ReachabilityParameters()
        if let pace = try fields.pace("pace") { parameters.pace = pace }
        if let factor = try fields.optionalDouble("detour_factor", in: -.greatestFiniteMagnitude ... .greatestFiniteMagnitude) {
            parameters.detourFactor = factor
        }
        boardingBufferGiven = false
        if let buffer = try fields.optionalDouble("boarding_buffer_minutes", in: -.greatestFiniteMagnitude ... .greatestFiniteMagnitude) {
            parameters.boardingBufferMinutes = buffer
            boardingBufferGiven = true
        }
        dwellOverrides = [:]
        let dwells = try fields.dwellTable("dwell_minutes")
        for (category, minutes) in dwells {
            parameters.dwellMinutesByCategory[category] = minutes
            dwellOverrides[category] = minutes
        }
        // A label (`카페`, `Cafe`) names its category too, unless the table names that
        // category itself; a layer's own category of that name (`shop`) keeps its entry.
        // A value out of range stays under its name as written, which the error then names.
        for (name, minutes) in dwells where ReachabilityParameters.allowedDwellMinutes.contains(minutes) {
            guard let category = ReachabilityLanguage.category(labelled: name), category != name,
                  !dwells.contains(where: { $0.0 == category }) else { continue }
            parameters.dwellMinutesByCategory[category] = minutes
            dwellOverrides[category] = minutes
        }
        if let minimum = try fields.optionalDouble("min_minutes", in: -.greatestFiniteMagnitude ... .greatestFiniteMagnitude) {
            parameters.minimumRemainingMinutes = minimum
        }
        if let tight = try fields.optionalDouble("tight_minutes", in: -.greatestFiniteMagnitude ... .greatestFiniteMagnitude) {
            parameters.tightRemainingMinutes = tight
        }
        self.parameters = parameters
        switch try fields.optionalString("lang") {
        case nil: language = .english
        case let tag?:
            // A language tag as browsers and phones send it: ko, ko-KR, KO, ko_KR.
            guard let known = ReachabilityLanguage(tag: tag) else {
                throw .invalidField("lang", reason: "must be \"en\" or \"ko\" (a tag such as ko-KR), got \"\(tag.prefix(40))\"")
            }
            language = known
        }

        let network = try fields.optionalString("network")
        switch try fields.optionalString("travel") {
        case nil:
            travel = network == nil ? .straightLine : .network(name: network)
        case "straight_line":
            guard network == nil else {
                throw .invalidField("network", reason: "applies only with \"travel\": \"network\"")
            }
            travel = .straightLine
        case "network":
            travel = .network(name: network)
        case let other?:
            throw .invalidField("travel", reason: "must be \"straight_line\" or \"network\", got \"\(other.prefix(40))\"")
        }

        switch try fields.optionalString("sort") {
        case nil, "slack": order = .slack
        case "distance": order = .distance
        case let other?:
            throw .invalidField("sort", reason: "must be \"slack\" or \"distance\", got \"\(other.prefix(40))\"")
        }
        limit = try fields.optionalInt("limit", in: 1...Request.maxReachableLimit) ?? Request.defaultReachableLimit
        offset = try fields.optionalInt("offset", in: Request.exactIntegers) ?? 0
        includeUnreachable = try fields.optionalBool("include_unreachable") ?? route
        for item in try fields.optionalStrings("include", max: 4) ?? [] {
            guard item == "route" else {
                throw .invalidField("include", reason: "takes \"route\" (each place's walking route), got \"\(item.prefix(40))\"")
            }
            includeRoute = true
        }
        switch (fields.has("bbox"), fields.has("zoom")) {
        case (true, true):
            clusterView = ClusterView(bbox: try fields.bbox("bbox"), zoom: try fields.double("zoom", in: -1_000...1_000))
        case (false, false):
            clusterView = nil
        case (true, false):
            throw .invalidField("zoom", reason: "is required with \"bbox\": the reachable places are clustered for a bbox and a zoom")
        case (false, true):
            throw .invalidField("bbox", reason: "is required with \"zoom\": the reachable places are clustered for a bbox and a zoom")
        }
    }
}

extension Request {
    /// Default and largest page of reachable places.
    public static let defaultReachableLimit = 50
    public static let maxReachableLimit = 1_000
    /// Most minutes until departure `reachable` plans for: 48 hours, so that a departure
    /// up to 23:59 of the next day can be planned at any time today.
    public static let maxRemainingMinutes = 2_880.0
}

extension FieldReader {
    /// `lon` and `lat` in degrees, both required.
    mutating func location() throws(EngineError) -> Coordinate {
        Coordinate(longitude: try double("lon", in: -180...180), latitude: try double("lat", in: -90...90))
    }

    /// `true` or `false`, also as the strings "true" and "false" (as an HTTP query writes them).
    mutating func optionalBool(_ name: String) throws(EngineError) -> Bool? {
        let text: String?
        switch field(name) {
        case nil: return nil
        case let .json(value)?:
            if let bool = value.boolValue { return bool }
            text = value.stringValue
        case let .text(value)?:
            text = value
        }
        switch text {
        case "true": return true
        case "false": return false
        default: throw .invalidField(name, reason: "must be true or false")
        }
    }

    /// An RFC 3339 date-time with a UTC offset.
    mutating func optionalTimestamp(_ name: String) throws(EngineError) -> Timestamp? {
        guard let text = try optionalString(name) else { return nil }
        do {
            return try Timestamp.parse(text)
        } catch {
            throw .invalidField(name, reason: error.description)
        }
    }

    /// A walking pace: `slow`, `normal`, `fast`, or a speed in km/h as a number or as the
    /// text of one (`pace=4.2`).
    mutating func pace(_ name: String) throws(EngineError) -> WalkingPace? {
        let text: String
        switch field(name) {
        case nil: return nil
        case let .json(value)?:
            if let number = value.doubleValue { return try Self.pace(kilometersPerHour: number, field: name) }
            guard let string = value.stringValue else {
                throw .invalidField(name, reason: "must be \"slow\", \"normal\", \"fast\" or a speed in km/h")
            }
            text = string
        case let .text(value)?:
            text = value
        }
        // A speed in JSON's number grammar (`5`, `4.5`, `1e1`), as every other number in text.
        if let number = JSONValue.number(text: text) { return try Self.pace(kilometersPerHour: number, field: name) }
        if let pace = try? WalkingPace.named(text.lowercased()) { return pace }
        do { return try WalkingPace.named(String(text.prefix(40))) } catch { throw .core(error, field: name) }
    }

    private static func pace(kilometersPerHour speed: Double, field: String) throws(EngineError) -> WalkingPace {
        do {
            return try WalkingPace(kilometersPerHour: speed)
        } catch {
            throw .core(error, field: field)
        }
    }

    /// Dwell minutes per category: an object `{"cafe": 20}`, or `"category:minutes"` items,
    /// as a JSON array of strings or a text list (`dwell_minutes=cafe:20,museum:60`). A
    /// category may be named by its label, in either language and any case (`카페:20`), as
    /// in `category` (the caller adds the category a label names); minutes in text follow
    /// JSON's number grammar. Ranges are checked with the other parameters.
    mutating func dwellTable(_ name: String) throws(EngineError) -> [(String, Double)] {
        var table: [(String, Double)] = []
        func item(_ text: (some StringProtocol)?, at i: Int, given: String) throws(EngineError) {
            guard let text, let colon = text.lastIndex(of: ":"), colon != text.startIndex,
                  let number = JSONValue.number(text: text[text.index(after: colon)...])
            else {
                throw .invalidField("\(name)[\(i)]", reason: "must be \"category:minutes\", got \(given.prefix(40))")
            }
            table.append((String(text[..<colon]), number))
        }
        switch field(name) {
        case nil:
            return []
        case let .json(value)?:
            if let object = value.objectValue {
                for (category, minutes) in object {
                    guard !category.isEmpty, let number = minutes.doubleValue else {
                        throw .invalidField("\(name).\(category)", reason: "must be a number of minutes")
                    }
                    table.append((category, number))
                }
            } else if let items = value.arrayValue {
                for (i, value) in items.enumerated() { try item(value.stringValue, at: i, given: value.jsonString) }
            } else {
                throw .invalidField(name, reason: "must be an object of minutes by category")
            }
        case let .text(text)?:
            for (i, part) in Self.items(text).enumerated() {
                try item(part, at: i, given: JSONValue.string(String(part.prefix(40))).jsonString)
            }
        }
        guard table.count <= LayerFilter.maxValues else {
            throw .invalidField(name, reason: "takes at most \(LayerFilter.maxValues) categories")
        }
        return table
    }
}
