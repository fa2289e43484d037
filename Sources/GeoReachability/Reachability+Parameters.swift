import GeoCluster
import GeoClusterWire

/// A walking speed, either one of the named paces or an explicit speed within 1...10 km/h.
///
/// The named paces come from pedestrian studies (see docs/REACHABILITY.md): `slow` is the
/// design speed of crossing signals, `normal` a leisurely urban walk, `fast` a brisk one.
/// Two paces are equal when their speeds are, so an explicit 4.5 km/h is `normal`.
public struct WalkingPace: Sendable, Hashable {
    /// Speed in km/h, within ``allowedKilometersPerHour``.
    public let kilometersPerHour: Double

    /// Speeds a walk can be planned with: below 1 km/h nobody gets anywhere in the time
    /// before a train, above 10 km/h is running.
    public static let allowedKilometersPerHour: ClosedRange<Double> = 1...10

    /// 3.6 km/h = 1.0 m/s: the walking speed Korean crossing signals are timed for, roughly
    /// the 15th-percentile pedestrian; a safe pace with children, elderly companions or luggage.
    public static let slow = WalkingPace(uncheckedKilometersPerHour: 3.6)
    /// 4.5 km/h = 1.25 m/s: a typical leisure pace in a city, the default.
    public static let normal = WalkingPace(uncheckedKilometersPerHour: 4.5)
    /// 5.4 km/h = 1.5 m/s: a brisk commuter's pace.
    public static let fast = WalkingPace(uncheckedKilometersPerHour: 5.4)

    /// An explicit speed; throws ``GeoClusterError/invalidWalkingSpeed(kilometersPerHour:reason:)``
    /// unless it is a finite number within ``allowedKilometersPerHour``.
    public init(kilometersPerHour: Double) throws(GeoClusterError) {
        guard kilometersPerHour.isFinite else {
            throw .invalidWalkingSpeed(kilometersPerHour: kilometersPerHour, reason: "is not a finite number")
        }
        guard Self.allowedKilometersPerHour.contains(kilometersPerHour) else {
            throw .invalidWalkingSpeed(kilometersPerHour: kilometersPerHour, reason: "is outside 1...10 km/h")
        }
        self.kilometersPerHour = kilometersPerHour
    }

    private init(uncheckedKilometersPerHour: Double) {
        kilometersPerHour = uncheckedKilometersPerHour
    }

    /// The pace called `slow`, `normal` or `fast`; any other name throws
    /// ``GeoClusterError/unknownWalkingPace(name:)``.
    public static func named(_ name: String) throws(GeoClusterError) -> WalkingPace {
        switch name {
        case "slow": .slow
        case "normal": .normal
        case "fast": .fast
        default: throw .unknownWalkingPace(name: name)
        }
    }

    /// The name of the pace when its speed is one of the named ones, else nil.
    public var name: String? {
        switch self {
        case .slow: "slow"
        case .normal: "normal"
        case .fast: "fast"
        default: nil
        }
    }

    /// Speed in metres per second (km/h divided by 3.6).
    public var metersPerSecond: Double { kilometersPerHour * 1_000 / 3_600 }

    /// Speed in metres per minute, the unit the model's budget is counted in.
    public var metersPerMinute: Double { kilometersPerHour * 1_000 / 60 }
}

/// The knobs of the reachability model, every one overridable per request. The defaults
/// and where they come from are documented in docs/REACHABILITY.md.
public struct ReachabilityParameters: Sendable, Hashable {
    /// How fast the traveller walks.
    public var pace: WalkingPace
    /// Walking distance over straight-line distance, within 1...3: streets rarely run
    /// straight to a place. Applies to the straight-line travel model only.
    public var detourFactor: Double
    /// Minutes kept back for re-entering the station, finding the platform and boarding,
    /// within 0...120.
    public var boardingBufferMinutes: Double
    /// Minutes spent at a place of each category, each within 0...1440. Categories are
    /// matched exactly, so callers pass them in the places layer's spelling (lowercase).
    public var dwellMinutesByCategory: [String: Double]
    /// Minutes spent at a place whose category is not in the table, within 0...1440.
    public var defaultDwellMinutes: Double
    /// At or below this many minutes no place is listed: the answer says there is too
    /// little time to explore. Finite and >= 0.
    public var minimumRemainingMinutes: Double
    /// At or below this many minutes (and above the minimum) the answer warns that time is
    /// tight. Finite and >= ``minimumRemainingMinutes``.
    public var tightRemainingMinutes: Double

    public init(
        pace: WalkingPace = .normal,
        detourFactor: Double = defaultDetourFactor,
        boardingBufferMinutes: Double = 10,
        dwellMinutesByCategory: [String: Double] = Self.defaultDwellMinutesByCategory,
        defaultDwellMinutes: Double = 30,
        minimumRemainingMinutes: Double = 20,
        tightRemainingMinutes: Double = 30
    ) {
        self.pace = pace
        self.detourFactor = detourFactor
        self.boardingBufferMinutes = boardingBufferMinutes
        self.dwellMinutesByCategory = dwellMinutesByCategory
        self.defaultDwellMinutes = defaultDwellMinutes
        self.minimumRemainingMinutes = minimumRemainingMinutes
        self.tightRemainingMinutes = tightRemainingMinutes
    }

    /// Typical visit lengths in minutes: a coffee, a meal, a sight, a walk in a park, a
    /// drink from a convenience store.
    public static let defaultDwellMinutesByCategory: [String: Double] = [
        "cafe": 30,
        "convenience": 5,
        "restaurant": 60,
        "attraction": 90,
        "park": 45,
        "market": 60,
        "museum": 90,
        "viewpoint": 20,
        "shopping": 45,
        "temple": 60,
        "beach": 60,
    ]

    /// Allowed detour factors: below 1 a walk would be shorter than the straight line; above
    /// 3 the straight line says nothing about the walk and a walking network should be used.
    public static let allowedDetourFactor: ClosedRange<Double> = 1...3
    /// The straight-line model's detour factor when a request gives none. 1.5 rather than
    /// the 1.2-1.4 often quoted for city circuity: on the shipped Helsinki network the
    /// median route is 1.46 times the straight line and only 4 % are within 1.3. At 45, 60
    /// and 90 minutes, 1.3 listed 15, 12 and 17 places that cannot be walked in time, 1.5
    /// lists 10, 4 and 5 and leaves out 6, 1 and 8 that can (docs/REACHABILITY.md,
    /// "Straight line or network"). A promise that makes the traveller miss the train
    /// costs more than a place left out.
    public static let defaultDetourFactor = 1.5
    /// Allowed boarding buffers in minutes: up to two hours covers any check-in.
    public static let allowedBoardingBufferMinutes: ClosedRange<Double> = 0...120
    /// Allowed dwell times in minutes: up to a day.
    public static let allowedDwellMinutes: ClosedRange<Double> = 0...1_440

    /// The dwell in minutes at a place of `category`, from the table or the default.
    public func dwellMinutes(forCategory category: String) -> Double {
        dwellMinutesByCategory[category] ?? defaultDwellMinutes
    }

    /// The shortest dwell any place can get from these parameters (without per-place
    /// overrides); it bounds the search radius.
    public var smallestDwellMinutes: Double {
        dwellMinutesByCategory.values.reduce(defaultDwellMinutes) { Swift.min($0, $1) }
    }

    /// Throws ``GeoClusterError/invalidReachabilityParameter(name:value:reason:)`` naming the
    /// first parameter out of its range (the pace is valid by construction).
    public func validate() throws(GeoClusterError) {
        try Self.check("detourFactor", detourFactor, within: Self.allowedDetourFactor)
        try Self.check("boardingBufferMinutes", boardingBufferMinutes, within: Self.allowedBoardingBufferMinutes)
        try Self.check("defaultDwellMinutes", defaultDwellMinutes, within: Self.allowedDwellMinutes)
        for category in dwellMinutesByCategory.keys.sorted() {
            try Self.check("dwellMinutesByCategory[\(category)]", dwellMinutes(forCategory: category),
                           within: Self.allowedDwellMinutes)
        }
        try Self.check("minimumRemainingMinutes", minimumRemainingMinutes, within: 0...Double.greatestFiniteMagnitude)
        guard tightRemainingMinutes.isFinite, tightRemainingMinutes >= minimumRemainingMinutes else {
            throw .invalidReachabilityParameter(
                name: "tightRemainingMinutes", value: tightRemainingMinutes,
                reason: "must be a finite number at least minimumRemainingMinutes (\(Self.format(minimumRemainingMinutes)))")
        }
    }

    private static func check(_ name: String, _ value: Double, within range: ClosedRange<Double>) throws(GeoClusterError) {
        guard value.isFinite else {
            throw .invalidReachabilityParameter(name: name, value: value, reason: "is not a finite number")
        }
        guard range.contains(value) else {
            let bounds = range.upperBound == .greatestFiniteMagnitude
                ? "must not be negative"
                : "is outside \(Self.format(range.lowerBound))...\(Self.format(range.upperBound))"
            throw .invalidReachabilityParameter(name: name, value: value, reason: bounds)
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A place to consider, as the caller knows it.
public struct ReachabilityCandidate: Sendable, Hashable {
    /// The caller's index of the place (for example its position in a layer), reported back
    /// unchanged in the answer.
    public var index: Int
    /// Where the place is.
    public var coordinate: Coordinate
    /// The place's category, looked up in ``ReachabilityParameters/dwellMinutesByCategory``.
    public var category: String
    /// Minutes to spend at this place instead of its category's dwell, within 0...1440.
    public var dwellMinutes: Double?

    public init(index: Int, coordinate: Coordinate, category: String, dwellMinutes: Double? = nil) {
        self.index = index
        self.coordinate = coordinate
        self.category = category
        self.dwellMinutes = dwellMinutes
    }
}
