import GeoCluster
import GeoClusterWire

/// What a traveller can do with the time left: a status with a reason for people, the places
/// that fit with their timings, and the nearby places that do not fit with the reason why.
///
/// All times are minutes from now as unrounded `Double`s; transports round for display.
public struct ReachabilityAnswer: Sendable, Hashable {
    /// How much time there is, judged against the parameters' thresholds.
    public enum Status: Sendable, Hashable {
        /// At or below ``ReachabilityParameters/minimumRemainingMinutes``, or from a start
        /// position whose walk straight to the station and the buffer take longer than the
        /// time left: no place is listed.
        case tooLittleTime
        /// Above the minimum, at or below ``ReachabilityParameters/tightRemainingMinutes``.
        case tight
        /// More than the tight threshold.
        case ok

        /// Stable snake_case identifier for clients.
        public var code: String {
            switch self {
            case .tooLittleTime: "too_little_time"
            case .tight: "tight"
            case .ok: "ok"
            }
        }
    }

    /// A place that can be walked to, enjoyed and walked back from in time.
    public struct ReachablePlace: Sendable, Hashable {
        /// The caller's index of the place.
        public var index: Int
        /// Great-circle distance from where the walk starts (the station, or the start
        /// position), in metres.
        public var straightLineDistanceMeters: Double
        /// Walking distance to the place in metres (each way, when the walk starts at the
        /// station: the route is the same both ways).
        public var distanceMetersEachWay: Double
        /// Walking time to the place in minutes.
        public var walkMinutesEachWay: Double
        /// Walking distance from the place to the station in metres: the same as
        /// ``distanceMetersEachWay`` when the walk starts at the station.
        public var distanceMetersBack: Double
        /// Walking time from the place to the station in minutes.
        public var walkMinutesBack: Double
        /// Minutes planned at the place.
        public var dwellMinutes: Double
        /// Minutes from now by which the traveller must leave the place to walk back and
        /// still keep the boarding buffer: `remaining - buffer - walk back`.
        public var leaveByMinutes: Double
        /// Minutes to spare: `remaining - (walk there + dwell + walk back + buffer)`, >= 0.
        public var slackMinutes: Double
    }

    /// Why a place inside the search radius does not fit.
    public enum UnreachableReason: Sendable, Hashable {
        /// The visit takes `minutesShort` (> 0) minutes more than remain.
        case notEnoughTime(minutesShort: Double)
        /// Network model: the station's and the place's nearest nodes lie in different
        /// components of the walking network, so no walk joins them.
        case notConnected
        /// Network model: the route is longer than the network search went (the longest walk
        /// any place could fit), so the visit takes more than `minutesShortAtLeast` minutes
        /// beyond the time that remains.
        case beyondNetworkSearch(minutesShortAtLeast: Double)
        /// The place is closed when the traveller would arrive, or closes before the dwell
        /// is over; it is next open for a whole visit `minutesUntilOpen` minutes from now
        /// (`nil` when not within a week of the arrival): for a place that closes during the
        /// visit, at a later opening, not at the arrival.
        case closed(minutesUntilOpen: Double?)

        /// Stable snake_case identifier for clients.
        public var code: String {
            switch self {
            case .notEnoughTime: "not_enough_time"
            case .notConnected: "not_connected"
            case .beyondNetworkSearch: "beyond_network_search"
            case .closed: "closed"
            }
        }
    }

    /// A place inside the search radius that does not fit.
    public struct UnreachablePlace: Sendable, Hashable {
        /// The caller's index of the place.
        public var index: Int
        /// Great-circle distance from where the walk starts, in metres.
        public var straightLineDistanceMeters: Double
        /// Walking distance to the place in metres, when known (nil unless `notEnoughTime`).
        public var distanceMetersEachWay: Double?
        /// Walking distance from the place to the station in metres, when known.
        public var distanceMetersBack: Double?
        /// Minutes the visit would have planned at the place.
        public var dwellMinutes: Double
        /// Why it does not fit.
        public var reason: UnreachableReason

        /// The order of unreachable places: nearest first in a straight line, then by index.
        static func nearestFirst(_ a: UnreachablePlace, _ b: UnreachablePlace) -> Bool {
            if a.straightLineDistanceMeters != b.straightLineDistanceMeters {
                return a.straightLineDistanceMeters < b.straightLineDistanceMeters
            }
            return a.index < b.index
        }
    }

    /// How much time there is.
    public var status: Status
    /// One sentence for people saying what the status means.
    public var reason: String
    /// Minutes from now until departure, as asked.
    public var remainingMinutes: Double
    /// Great-circle radius in metres beyond which no place can fit even with the shortest
    /// dwell: `(remaining - buffer - smallest dwell) / 2 * metres per minute`, divided by the
    /// detour factor in the straight-line model; 0 when no time is left to walk.
    public var searchRadiusMeters: Double
    /// With a start position: minutes of walking from it straight to the station (along the
    /// network, or the straight line times the detour factor). No place fits when this and
    /// the buffer do not.
    public var directWalkMinutes: Double?
    /// The places that fit, most slack first (or nearest first when asked).
    public var reachable: [ReachablePlace]
    /// The places inside the search radius (every candidate, with
    /// ``ReachabilityScope/everyCandidate``) that do not fit, nearest first.
    public var unreachable: [UnreachablePlace]
}

/// Which candidates an evaluation looks at.
public enum ReachabilityScope: Sendable, Hashable {
    /// Only those within the search radius (the ellipse, from a start position): the
    /// others cannot fit, and are left out of both lists. A network is searched only as
    /// far as the longest walk that could fit.
    case withinSearchRadius
    /// Every candidate, each in one list or the other with its distances: one place the
    /// traveller opened, wherever it is. A network is searched as far as the farthest
    /// candidate (the search stops once every candidate's node is settled).
    case everyCandidate
}

/// The order of the reachable places in an answer.
public enum ReachabilitySortOrder: Sendable, Hashable {
    /// Most slack first, then the shorter walk, then the lower index: the safest visits lead.
    case slack
    /// Shortest walk first, then the lower index.
    case distance
}

extension ReachabilityAnswer {
    /// The answer with the places that would be closed during their visit moved to the
    /// unreachable places (reason ``UnreachableReason/closed(minutesUntilOpen:)``).
    /// `hours` gives a place's opening hours by its index (`nil`: unknown, taken as open),
    /// and `nowMinuteOfWeek` the local minute of the week now (0 is Monday 00:00): a
    /// visit runs from the arrival, `walkMinutesEachWay` from now, for `dwellMinutes`.
    public func closingPlaces(hours: (Int) -> OpeningHours?, nowMinuteOfWeek: Double) -> ReachabilityAnswer {
        var answer = self
        answer.reachable = []
        var closed: [UnreachablePlace] = []
        for place in reachable {
            let arrival = nowMinuteOfWeek + place.walkMinutesEachWay
            guard let opening = hours(place.index), !opening.isOpen(from: arrival, for: place.dwellMinutes) else {
                answer.reachable.append(place)
                continue
            }
            closed.append(UnreachablePlace(
                index: place.index, straightLineDistanceMeters: place.straightLineDistanceMeters,
                distanceMetersEachWay: place.distanceMetersEachWay, distanceMetersBack: place.distanceMetersBack,
                dwellMinutes: place.dwellMinutes,
                reason: .closed(minutesUntilOpen: opening.minutesUntilOpen(from: arrival, for: place.dwellMinutes)
                    .map { place.walkMinutesEachWay + $0 })))
        }
        guard !closed.isEmpty else { return self }
        answer.unreachable += closed
        answer.unreachable.sort(by: UnreachablePlace.nearestFirst)
        return answer
    }
}
