import GeoCluster
import GeoClusterWire

/// How a traveller gets from the station to a place and back.
public enum ReachabilityTravelModel: Sendable {
    /// The distance between the two points times the detour factor. `distanceMeters` gives
    /// metres between two coordinates; the default is the core's spherical
    /// ``GreatCircle/haversineMeters(from:to:)``, and a caller with an ellipsoidal geodesic
    /// (PROJ's WGS84) passes that instead.
    case straightLine(distanceMeters: @Sendable (Coordinate, Coordinate) -> Double = Reachability.haversineDistance)
    /// The shortest path along a walking network, used as is (no detour factor), plus a
    /// straight walk from the station to its nearest node and from the place's nearest node
    /// to the place. `distanceMeters` measures those two snap legs and the search radius.
    case network(WalkingNetwork, distanceMeters: @Sendable (Coordinate, Coordinate) -> Double = Reachability.haversineDistance)

    /// Whether straight-line distances are stretched by the detour factor.
    var usesDetourFactor: Bool {
        switch self {
        case .straightLine: true
        case .network: false
        }
    }
}

/// The remaining-time reachability model: a place fits when
/// `walk out + dwell + walk back + boarding buffer <= remaining minutes`.
///
/// docs/REACHABILITY.md describes the model, its defaults and their sources, and works an
/// example through.
public enum Reachability {
    /// ``GreatCircle/haversineMeters(from:to:)`` as the default distance of the travel models.
    public static let haversineDistance: @Sendable (Coordinate, Coordinate) -> Double = { start, end in
        GreatCircle.haversineMeters(from: start, to: end)
    }

    /// The great-circle radius in metres beyond which no place can fit:
    /// `max(0, remaining - buffer - smallestDwell) / 2` minutes of walking at the pace,
    /// divided by the detour factor for the straight-line model.
    ///
    /// A caller that fetches candidates from an index first asks for places within this
    /// radius. `smallestDwellMinutes` defaults to the parameters' smallest dwell; pass a
    /// smaller one when places carry shorter dwell overrides.
    public static func searchRadiusMeters(
        remainingMinutes: Double,
        parameters: ReachabilityParameters = ReachabilityParameters(),
        travel: ReachabilityTravelModel = .straightLine(),
        smallestDwellMinutes: Double? = nil
    ) -> Double {
        let dwellMinutes = smallestDwellMinutes ?? parameters.smallestDwellMinutes
        let walkMinutesEachWay = Swift.max(0, remainingMinutes - parameters.boardingBufferMinutes - dwellMinutes) / 2
        let walkMeters = walkMinutesEachWay * parameters.pace.metersPerMinute
        return travel.usesDetourFactor ? walkMeters / parameters.detourFactor : walkMeters
    }

    /// Which candidates can be visited before departure.
    ///
    /// Checks its inputs first: `remainingMinutes` finite and >= 0
    /// (``GeoClusterError/invalidRemainingTime(minutes:reason:)``), the parameters
    /// (``ReachabilityParameters/validate()``), the station's and candidates' coordinates
    /// and the candidates' dwell overrides
    /// (``GeoClusterError/invalidDwellTime(minutes:reason:index:)``).
    ///
    /// At or below the minimum remaining time the answer lists nothing and says so. Otherwise
    /// every candidate within the search radius is listed, as reachable or not; candidates
    /// beyond it are left out, most of them after a cheap latitude/longitude box test that
    /// spares the exact distance. With `scope` ``ReachabilityScope/everyCandidate`` none is
    /// left out: one beyond the radius is unreachable, `notEnoughTime` by its exact walk,
    /// and a network is searched as far as the farthest candidate (not further: the search
    /// stops once every candidate is settled). `routes`, the routes the caller draws for the
    /// same travel model and candidates, lends its shortest-path trees to those searches,
    /// which then are not made twice.
    ///
    /// With `start`, the traveller is not at the station but at `start`: the walk goes from
    /// there to the place, then to the station, and a place fits when
    /// `walk there + dwell + walk to the station + buffer <= remaining`. The search radius is
    /// then half of the longest walk: a place lies within the ellipse whose foci are the
    /// start and the station and whose distances to them add up to twice the radius.
    public static func evaluate(
        from station: Coordinate,
        start: Coordinate? = nil,
        remainingMinutes: Double,
        candidates: [ReachabilityCandidate],
        parameters: ReachabilityParameters = ReachabilityParameters(),
        travel: ReachabilityTravelModel = .straightLine(),
        order: ReachabilitySortOrder = .slack,
        language: ReachabilityLanguage = .english,
        scope: ReachabilityScope = .withinSearchRadius,
        routes: VisitRoutes? = nil
    ) throws(GeoClusterError) -> ReachabilityAnswer {
        guard remainingMinutes.isFinite else {
            throw .invalidRemainingTime(minutes: remainingMinutes, reason: "is not a finite number")
        }
        guard remainingMinutes >= 0 else {
            throw .invalidRemainingTime(minutes: remainingMinutes, reason: "is negative")
        }
        try parameters.validate()
        _ = try Coordinate.validated(longitude: station.longitude, latitude: station.latitude)
        if let start { _ = try Coordinate.validated(longitude: start.longitude, latitude: start.latitude) }
        var smallestDwellMinutes = parameters.smallestDwellMinutes
        for candidate in candidates {
            let point = candidate.coordinate
            _ = try Coordinate.validated(longitude: point.longitude, latitude: point.latitude, index: candidate.index)
            if let dwell = candidate.dwellMinutes {
                guard dwell.isFinite, ReachabilityParameters.allowedDwellMinutes.contains(dwell) else {
                    throw .invalidDwellTime(minutes: dwell, reason: "is not a number of minutes within 0...1440",
                                            index: candidate.index)
                }
                smallestDwellMinutes = Swift.min(smallestDwellMinutes, dwell)
            }
        }

        let radius = searchRadiusMeters(remainingMinutes: remainingMinutes, parameters: parameters,
                                        travel: travel, smallestDwellMinutes: smallestDwellMinutes)
        var answer = ReachabilityAnswer(
            status: .ok, reason: "", remainingMinutes: remainingMinutes,
            searchRadiusMeters: radius, directWalkMinutes: nil, reachable: [], unreachable: [])
        if remainingMinutes <= parameters.minimumRemainingMinutes {
            answer.status = .tooLittleTime
        } else if remainingMinutes <= parameters.tightRemainingMinutes {
            answer.status = .tight
        } else {
            answer.status = .ok
        }
        answer.reason = reason(answer.status, remainingMinutes: remainingMinutes, parameters: parameters,
                               language: language)
        if answer.status == .tooLittleTime { return answer }

        var visit = Visit(remainingMinutes: remainingMinutes, parameters: parameters,
                          everyCandidate: scope == .everyCandidate, routes: routes)
        switch (travel, start) {
        case let (.straightLine(distanceMeters), nil):
            visit.straightLine(from: station, candidates: candidates, radiusMeters: radius,
                               distanceMeters: distanceMeters)
        case let (.network(network, distanceMeters), nil):
            visit.network(network, from: station, candidates: candidates, radiusMeters: radius,
                          distanceMeters: distanceMeters)
        case let (.straightLine(distanceMeters), start?):
            answer.directWalkMinutes = distanceMeters(start, station) * parameters.detourFactor
                / parameters.pace.metersPerMinute
            visit.straightLine(from: start, to: station, candidates: candidates, radiusMeters: radius,
                               distanceMeters: distanceMeters)
        case let (.network(network, distanceMeters), start?):
            answer.directWalkMinutes = visit.network(network, from: start, to: station, candidates: candidates,
                                                     radiusMeters: radius, distanceMeters: distanceMeters)
        }

        // From a start position, no place fits when the walk straight to the station and
        // the buffer take longer than the time left: "enough to explore" would send the
        // traveller the wrong way.
        if let direct = answer.directWalkMinutes, !(direct + parameters.boardingBufferMinutes <= remainingMinutes) {
            answer.status = .tooLittleTime
            answer.reason = reasonToHeadForTheStation(directWalkMinutes: direct, remainingMinutes: remainingMinutes,
                                                      parameters: parameters, language: language)
        }

        switch order {
        case .slack:
            visit.reachable.sort { a, b in
                if a.slackMinutes != b.slackMinutes { return a.slackMinutes > b.slackMinutes }
                let walkA = a.distanceMetersEachWay + a.distanceMetersBack, walkB = b.distanceMetersEachWay + b.distanceMetersBack
                if walkA != walkB { return walkA < walkB }
                return a.index < b.index
            }
        case .distance:
            visit.reachable.sort { a, b in
                let walkA = a.distanceMetersEachWay + a.distanceMetersBack, walkB = b.distanceMetersEachWay + b.distanceMetersBack
                if walkA != walkB { return walkA < walkB }
                return a.index < b.index
            }
        }
        visit.unreachable.sort(by: ReachabilityAnswer.UnreachablePlace.nearestFirst)
        answer.reachable = visit.reachable
        answer.unreachable = visit.unreachable
        return answer
    }

    /// The sentence that says why an answer has its status, with the numbers of its
    /// fields: the remaining minutes and the thresholds they were compared with.
    public static func reason(_ status: ReachabilityAnswer.Status, remainingMinutes: Double,
                              parameters: ReachabilityParameters, language: ReachabilityLanguage) -> String {
        let remaining = formatMinutes(remainingMinutes)
        let minimum = formatMinutes(parameters.minimumRemainingMinutes)
        let tight = formatMinutes(parameters.tightRemainingMinutes)
        switch (status, language) {
        case (.tooLittleTime, .english):
            return "\(remaining) minutes remain; exploring needs more than \(minimum), so no places are listed"
        case (.tight, .english):
            return "\(remaining) minutes remain, \(tight) or fewer: time is tight, so keep to the places with the most slack"
        case (.ok, .english):
            return "\(remaining) minutes remain, more than \(tight): enough to explore"
        case (.tooLittleTime, .korean):
            return "출발까지 \(remaining)분 남았습니다. 주변을 둘러보려면 \(minimum)분보다 많이 남아야 해서 장소를 보여 드리지 않습니다"
        case (.tight, .korean):
            return "출발까지 \(remaining)분 남았습니다(\(tight)분 이하). 시간이 빠듯하니 여유 시간이 가장 많은 곳만 다녀오세요"
        case (.ok, .korean):
            return "출발까지 \(remaining)분 남았습니다(\(tight)분 초과). 주변을 둘러볼 시간이 충분합니다"
        }
    }

    /// The sentence of an answer from a start position whose walk straight to the station,
    /// with the buffer, takes longer than the time left (or that has no walk to it): head
    /// for the station now. The walk is given as the answer shows it, rounded up to a tenth.
    public static func reasonToHeadForTheStation(directWalkMinutes: Double, remainingMinutes: Double,
                                                 parameters: ReachabilityParameters,
                                                 language: ReachabilityLanguage) -> String {
        let remaining = formatMinutes(remainingMinutes)
        let buffer = formatMinutes(parameters.boardingBufferMinutes)
        guard directWalkMinutes.isFinite else {
            switch language {
            case .english: return "no walk from here to the station was found: head for the station now"
            case .korean: return "여기서 역까지 걸어갈 길을 찾지 못했습니다. 지금 역으로 가세요"
            }
        }
        let walk = formatMinutes((directWalkMinutes * 10 - 1e-6).rounded(.up) / 10)
        switch language {
        case .english:
            return "the walk to the station takes \(walk) minutes, with the \(buffer)-minute boarding buffer more than "
                + "the \(remaining) minutes that remain: head for the station now"
        case .korean:
            return "역까지 걸어서 \(walk)분, 승차 여유 \(buffer)분을 더하면 남은 \(remaining)분보다 깁니다. 지금 역으로 출발하세요"
        }
    }

    /// The sentence of an answer with time to explore (`tight` or `ok`) in which no
    /// place fits: the status's own sentence would send the traveller to places there
    /// are none of.
    public static func reasonNothingFits(remainingMinutes: Double, language: ReachabilityLanguage) -> String {
        let remaining = formatMinutes(remainingMinutes)
        switch language {
        case .english: return "\(remaining) minutes remain, but no place nearby can be visited in them"
        case .korean: return "출발까지 \(remaining)분 남았지만 그 안에 다녀올 수 있는 곳이 근처에 없습니다"
        }
    }

    /// Minutes for a sentence: whole numbers without a fraction, others to one decimal.
    static func formatMinutes(_ minutes: Double) -> String {
        let tenths = (minutes * 10).rounded() / 10
        if tenths == tenths.rounded(), abs(tenths) < 1e15 { return String(Int(tenths)) }
        return String(tenths)
    }
}

/// The per-candidate arithmetic of one evaluation and the lists it fills.
private struct Visit {
    let remainingMinutes: Double
    let parameters: ReachabilityParameters
    let metersPerMinute: Double
    /// Every candidate, not only those within the radius, and networks searched as far as
    /// the farthest of them (``ReachabilityScope/everyCandidate``).
    let everyCandidate: Bool
    /// Routes whose trees answer the searches for every candidate.
    let routes: VisitRoutes?
    var reachable: [ReachabilityAnswer.ReachablePlace] = []
    var unreachable: [ReachabilityAnswer.UnreachablePlace] = []

    init(remainingMinutes: Double, parameters: ReachabilityParameters, everyCandidate: Bool, routes: VisitRoutes?) {
        self.remainingMinutes = remainingMinutes
        self.parameters = parameters
        self.metersPerMinute = parameters.pace.metersPerMinute
        self.everyCandidate = everyCandidate
        self.routes = routes
    }

    /// The network's distances from `node` as far as the farthest of `targets` (exact where
    /// finite, finite at every target joined to `node`): the routes' tree from that node
    /// when it reaches them, else a search that stops once they are settled.
    func distancesMeters(_ network: WalkingNetwork, from node: Int, reaching targets: [Int]) -> [Double] {
        if let known = routes?.distancesMeters(from: node, in: network),
           network.distances(known, from: node, reach: targets) { return known }
        return network.distancesMeters(from: node, reaching: targets)
    }

    /// The search box of a radius; for every candidate, of an infinite radius, which holds
    /// every point.
    func searchBox(center: Coordinate, radiusMeters: Double) -> SearchBox {
        SearchBox(center: center, radiusMeters: everyCandidate ? .infinity : radiusMeters)
    }

    func dwellMinutes(of candidate: ReachabilityCandidate) -> Double {
        candidate.dwellMinutes ?? parameters.dwellMinutes(forCategory: candidate.category)
    }

    /// Files a candidate whose walking distances there and back are known (the same, for
    /// a walk from the station and back).
    mutating func record(_ candidate: ReachabilityCandidate, straightLineMeters: Double, distanceMetersEachWay: Double,
                         distanceMetersBack: Double? = nil) {
        let back = distanceMetersBack ?? distanceMetersEachWay
        let walkMinutes = distanceMetersEachWay / metersPerMinute
        let walkBackMinutes = back / metersPerMinute
        let dwell = dwellMinutes(of: candidate)
        let buffer = parameters.boardingBufferMinutes
        let slack = remainingMinutes - (walkMinutes + dwell + walkBackMinutes + buffer)
        if slack >= 0 {
            reachable.append(.init(
                index: candidate.index, straightLineDistanceMeters: straightLineMeters,
                distanceMetersEachWay: distanceMetersEachWay, walkMinutesEachWay: walkMinutes,
                distanceMetersBack: back, walkMinutesBack: walkBackMinutes,
                dwellMinutes: dwell, leaveByMinutes: remainingMinutes - buffer - walkBackMinutes,
                slackMinutes: slack))
        } else {
            unreachable.append(.init(
                index: candidate.index, straightLineDistanceMeters: straightLineMeters,
                distanceMetersEachWay: distanceMetersEachWay, distanceMetersBack: back, dwellMinutes: dwell,
                reason: .notEnoughTime(minutesShort: -slack)))
        }
    }

    /// From `start` to each candidate and on to the station, along straight lines times
    /// the detour factor: the candidates whose two great-circle legs add up to at most
    /// twice the radius.
    mutating func straightLine(
        from start: Coordinate, to station: Coordinate, candidates: [ReachabilityCandidate], radiusMeters: Double,
        distanceMeters: (Coordinate, Coordinate) -> Double
    ) {
        // A place in the ellipse is within twice the radius of the station.
        let box = searchBox(center: station, radiusMeters: 2 * radiusMeters)
        for candidate in candidates where box.mayContain(candidate.coordinate) {
            let there = distanceMeters(start, candidate.coordinate)
            let back = distanceMeters(candidate.coordinate, station)
            guard box.holds(exactMeters: there + back) else { continue }
            record(candidate, straightLineMeters: there, distanceMetersEachWay: there * parameters.detourFactor,
                   distanceMetersBack: back * parameters.detourFactor)
        }
    }

    /// From `start` to each candidate and on to the station along the network: one search
    /// from each end, each as far as the longest walk that could fit (for every candidate, as
    /// far as the network goes). Returns the minutes of
    /// the walk from `start` straight to the station (infinite when no path joins them).
    mutating func network(
        _ network: WalkingNetwork, from start: Coordinate, to station: Coordinate, candidates: [ReachabilityCandidate],
        radiusMeters: Double, distanceMeters: (Coordinate, Coordinate) -> Double
    ) -> Double {
        let stationNode = network.nearestNode(to: station).node
        let stationSnapMeters = distanceMeters(station, network.nodes[stationNode])
        let startNode = network.nearestNode(to: start).node
        let startSnapMeters = distanceMeters(start, network.nodes[startNode])
        let longest = everyCandidate ? .infinity : 2 * radiusMeters
        // A route is never shorter than the straight line, so the ellipse bounds it too.
        let box = searchBox(center: station, radiusMeters: longest)
        var inside: [(candidate: ReachabilityCandidate, straightThere: Double, placeNode: Int)] = []
        for candidate in candidates where box.mayContain(candidate.coordinate) {
            let straightThere = distanceMeters(start, candidate.coordinate)
            guard box.holds(exactMeters: straightThere + distanceMeters(candidate.coordinate, station)) else { continue }
            inside.append((candidate, straightThere, network.nearestNode(to: candidate.coordinate).node))
        }
        let fromStation: [Double]
        let fromStart: [Double]
        if everyCandidate {
            // As far as the farthest candidate (and, from the start, the station) only.
            let placeNodes = inside.map(\.placeNode)
            fromStation = distancesMeters(network, from: stationNode, reaching: placeNodes)
            fromStart = distancesMeters(network, from: startNode, reaching: placeNodes + [stationNode])
        } else {
            fromStation = network.distancesMeters(from: stationNode, maxDistanceMeters: Swift.max(0, longest - stationSnapMeters))
            fromStart = network.distancesMeters(from: startNode, maxDistanceMeters: Swift.max(0, longest - startSnapMeters))
        }
        // The walk straight to the station, searched further when it is longer than any
        // visit could be (then no place fits, and the traveller should head for the train).
        var directMeters = fromStart[stationNode]
        if !directMeters.isFinite, network.areConnected(startNode, stationNode) {
            directMeters = distancesMeters(network, from: startNode, reaching: [stationNode])[stationNode]
        }
        let direct = (startSnapMeters + directMeters + stationSnapMeters) / metersPerMinute

        for (candidate, straightThere, placeNode) in inside {
            let placeSnapMeters = distanceMeters(candidate.coordinate, network.nodes[placeNode])
            let there = startSnapMeters + fromStart[placeNode] + placeSnapMeters
            let back = placeSnapMeters + fromStation[placeNode] + stationSnapMeters
            if there.isFinite, back.isFinite {
                record(candidate, straightLineMeters: straightThere, distanceMetersEachWay: there, distanceMetersBack: back)
                continue
            }
            let dwell = dwellMinutes(of: candidate)
            let reason: ReachabilityAnswer.UnreachableReason
            if !network.areConnected(startNode, placeNode) || !network.areConnected(placeNode, stationNode) {
                reason = .notConnected
            } else {
                // A leg longer than the search; each unknown leg is at least that long.
                let thereAtLeast = there.isFinite ? there : startSnapMeters + longest + placeSnapMeters
                let backAtLeast = back.isFinite ? back : placeSnapMeters + longest + stationSnapMeters
                let neededAtLeast = (thereAtLeast + backAtLeast) / metersPerMinute + dwell + parameters.boardingBufferMinutes
                reason = .beyondNetworkSearch(minutesShortAtLeast: Swift.max(0, neededAtLeast - remainingMinutes))
            }
            unreachable.append(.init(
                index: candidate.index, straightLineDistanceMeters: straightThere,
                distanceMetersEachWay: there.isFinite ? there : nil, distanceMetersBack: back.isFinite ? back : nil,
                dwellMinutes: dwell, reason: reason))
        }
        return direct
    }

    mutating func straightLine(
        from station: Coordinate, candidates: [ReachabilityCandidate], radiusMeters: Double,
        distanceMeters: (Coordinate, Coordinate) -> Double
    ) {
        let box = searchBox(center: station, radiusMeters: radiusMeters)
        for candidate in candidates where box.mayContain(candidate.coordinate) {
            let straight = distanceMeters(station, candidate.coordinate)
            guard box.holds(exactMeters: straight) else { continue }
            record(candidate, straightLineMeters: straight,
                   distanceMetersEachWay: straight * parameters.detourFactor)
        }
    }

    mutating func network(
        _ network: WalkingNetwork, from station: Coordinate, candidates: [ReachabilityCandidate],
        radiusMeters: Double, distanceMeters: (Coordinate, Coordinate) -> Double
    ) {
        // A route is never shorter than the straight line, so the radius bounds it too.
        let box = searchBox(center: station, radiusMeters: radiusMeters)
        var inside: [(candidate: ReachabilityCandidate, straightMeters: Double)] = []
        for candidate in candidates where box.mayContain(candidate.coordinate) {
            let straight = distanceMeters(station, candidate.coordinate)
            if box.holds(exactMeters: straight) { inside.append((candidate, straight)) }
        }
        guard !inside.isEmpty else { return }

        let stationNode = network.nearestNode(to: station).node
        let stationSnapMeters = distanceMeters(station, network.nodes[stationNode])
        // No place fits with a longer walk than the radius, snap legs included; for every
        // candidate, the search goes as far as the farthest of them.
        let capMeters = everyCandidate ? .infinity : Swift.max(0, radiusMeters - stationSnapMeters)
        let placeNodes = inside.map { network.nearestNode(to: $0.candidate.coordinate).node }
        let networkMeters = everyCandidate
            ? distancesMeters(network, from: stationNode, reaching: placeNodes)
            : network.distancesMeters(from: stationNode, maxDistanceMeters: capMeters)

        for ((candidate, straight), placeNode) in zip(inside, placeNodes) {
            let placeSnapMeters = distanceMeters(candidate.coordinate, network.nodes[placeNode])
            let alongNetwork = networkMeters[placeNode]
            if alongNetwork.isFinite {
                record(candidate, straightLineMeters: straight,
                       distanceMetersEachWay: stationSnapMeters + alongNetwork + placeSnapMeters)
                continue
            }
            let dwell = dwellMinutes(of: candidate)
            let reason: ReachabilityAnswer.UnreachableReason
            if !network.areConnected(stationNode, placeNode) {
                reason = .notConnected
            } else {
                // The route is longer than the cap; the visit needs at least this much.
                let walkMinutesAtLeast = (stationSnapMeters + capMeters + placeSnapMeters) / metersPerMinute
                let neededAtLeast = walkMinutesAtLeast + dwell + walkMinutesAtLeast + parameters.boardingBufferMinutes
                reason = .beyondNetworkSearch(minutesShortAtLeast: Swift.max(0, neededAtLeast - remainingMinutes))
            }
            unreachable.append(.init(
                index: candidate.index, straightLineDistanceMeters: straight,
                distanceMetersEachWay: nil, distanceMetersBack: nil, dwellMinutes: dwell, reason: reason))
        }
    }
}

/// A latitude/longitude box around the station holding every point within the search radius,
/// widened so that a caller's ellipsoidal distance (up to about 0.6 % off the sphere) never
/// falls inside the radius for a point the box rejects.
private struct SearchBox {
    let center: Coordinate
    let radiusMeters: Double
    let latitudeSpanDegrees: Double
    /// Nil when the circle reaches a pole and so every longitude.
    let longitudeSpanDegrees: Double?

    init(center: Coordinate, radiusMeters: Double) {
        self.center = center
        self.radiusMeters = radiusMeters
        let widenedMeters = radiusMeters * 1.01 + 1
        let angle = widenedMeters / GreatCircle.meanEarthRadiusMeters
        let degreesPerRadian = 180 / Double.pi
        latitudeSpanDegrees = angle * degreesPerRadian
        // Along a great-circle arc of length `angle`, longitude changes at most by
        // angle / cos(largest latitude on the arc).
        let largestLatitude = abs(center.latitude) / degreesPerRadian + angle
        if largestLatitude < Double.pi / 2 {
            let span = angle / CMath.cos(largestLatitude) * degreesPerRadian
            longitudeSpanDegrees = span < 180 ? span : nil
        } else {
            longitudeSpanDegrees = nil
        }
    }

    func mayContain(_ point: Coordinate) -> Bool {
        guard abs(point.latitude - center.latitude) <= latitudeSpanDegrees else { return false }
        guard let longitudeSpanDegrees else { return true }
        var deltaLongitude = abs(point.longitude - center.longitude)
        if deltaLongitude > 180 { deltaLongitude = 360 - deltaLongitude }
        return deltaLongitude <= longitudeSpanDegrees
    }

    /// Whether an exact distance lies within the radius, allowing for rounding so that a
    /// place whose walk uses up the budget exactly is still judged by its slack.
    func holds(exactMeters: Double) -> Bool {
        exactMeters <= radiusMeters * (1 + 1e-9) + 1e-6
    }
}
