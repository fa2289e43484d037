import Foundation
import GeoCluster
import GeoClusterWire
import GeoReachability
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Engine {
    /// Answers `reachable` (docs/REACHABILITY.md has the model, docs/PROTOCOL.md the shapes).
    ///
    /// The engine's part is everything around the core's `Reachability.evaluate`: the
    /// station or location, the minutes remaining from the two clock times, the parameters
    /// checked with the request field of each, the candidate places from the live index
    /// within the largest radius any of them could fit in (not a scan of the layer), and
    /// the answer rounded for display so that a visit never looks safer than it is
    /// (walking minutes and distances up, slack and leave-by down).
    func reachable(_ query: ReachableQuery) throws(EngineError) -> JSONValue {
        let places = try liveLayer(query.layer, field: "layer", kind: .places)

        // Where from.
        var originJSON: JSONObject
        let origin: Coordinate
        var stationBuffer: Double?
        var start: Coordinate?
        switch query.origin {
        case let .station(id), let .via(id, _):
            let stations = try liveLayer(query.stationsLayer, field: "stations_layer", kind: .stations)
            let record = try station(id, in: stations, layerName: query.stationsLayer)
            origin = record.coordinate
            originJSON = ["id": record.idJSON]
            if case let .station(name, _) = record.fields { originJSON["name"] = .string(name) }
            if let buffer = record.properties["boarding_buffer_minutes"]?.doubleValue,
               ReachabilityParameters.allowedBoardingBufferMinutes.contains(buffer) {
                stationBuffer = buffer
            }
            if case let .via(_, position) = query.origin { start = position }
        case let .location(coordinate):
            origin = coordinate
            originJSON = [:]
        }
        originJSON["lon"] = .number(origin.longitude)
        originJSON["lat"] = .number(origin.latitude)

        // How long: the whole minutes a traveller's app shows, the seconds between the two
        // times divided by 60 and rounded down, so that the thresholds and every number in
        // the reason agree with the app; the exact seconds are in the answer too.
        let remainingMinutes: Double
        let remainingSeconds: Int64
        var clock: (nowEpochSeconds: Int64, offsetSeconds: Int64, suffix: Substring)?
        switch query.time {
        case let .clock(departure, now):
            // A part of now's second counts as a whole one, the departure's is dropped: the
            // minutes left are never more than there are.
            let nowSeconds = now?.epochSecondsRoundedUp ?? Self.currentEpochSecondsRoundedUp()
            // Timestamps lie within years 1...9999: the difference cannot overflow.
            remainingSeconds = departure.epochSeconds - nowSeconds
            guard remainingSeconds >= 0 else {
                throw .core(.invalidRemainingTime(minutes: Double(remainingSeconds) / 60,
                                                  reason: "is negative: the departure is before \"now\""),
                            field: "departure")
            }
            guard Double(remainingSeconds) <= Request.maxRemainingMinutes * 60 else {
                throw .invalidField("departure", reason: "must be at most \(Int(Request.maxRemainingMinutes)) minutes (48 h) after \"now\"")
            }
            remainingMinutes = Double(remainingSeconds / 60)
            let offset = Self.utcOffset(of: departure.text)
            clock = (nowSeconds, offset.seconds, offset.suffix)
        case let .remaining(minutes):
            remainingSeconds = Int64((minutes * 60).rounded(.down))
            remainingMinutes = minutes.rounded(.down)
        }

        // With what: a station's own boarding buffer unless the request gave one.
        var parameters = query.parameters
        if !query.boardingBufferGiven, let stationBuffer { parameters.boardingBufferMinutes = stationBuffer }
        do {
            try parameters.validate()
        } catch {
            throw .core(error, field: Self.requestField(of: error))
        }
        let travel: ReachabilityTravelModel
        var networkName: String?
        switch query.travel {
        case .straightLine:
            travel = .straightLine(distanceMeters: Self.geodesicMeters)
        case let .network(name):
            let (chosen, network) = try self.network(name, covering: [origin] + (start.map { [$0] } ?? []))
            networkName = chosen
            travel = .network(network, distanceMeters: Self.geodesicMeters)
        }

        // Which places: every one the index holds within the radius a zero-minute dwell
        // would allow (per-place dwell overrides can be that short); the core then
        // narrows to the exact radius with the shortest dwell among them.
        var candidates: [ReachabilityCandidate] = []
        if let id = query.place {
            // `route`: the one place, wherever it is; the core says whether it fits, by
            // its whole walk even beyond the search radius.
            guard let key = LayerRecord.idKey(of: id), let record = places.record(idKey: key),
                  let slot = places.slot(idKey: key), case let .place(_, categoryName, dwell) = record.fields else {
                throw .invalidField("place", reason: "layer \"\(query.layer)\" has no place with id \(id.jsonString)")
            }
            let category = categoryName.text
            candidates = [ReachabilityCandidate(index: slot, coordinate: record.coordinate, category: category,
                                                dwellMinutes: query.dwellOverrides[category] ?? dwell)]
        } else if remainingMinutes > parameters.minimumRemainingMinutes {
            var filter = LayerFilter.none
            filter.categories = query.categories
            let liveFilter = try places.liveFilter(filter)
            let radius = Reachability.searchRadiusMeters(remainingMinutes: remainingMinutes, parameters: parameters,
                                                         travel: travel, smallestDwellMinutes: 0)
            // Haversine with a 1 % margin keeps every place the geodesic puts inside. From a
            // start position, a place whose two legs fit is within twice the radius of the
            // station.
            let reach = start == nil ? radius : 2 * radius
            let found = places.index.points(within: reach * 1.01 + 1, of: origin, filter: liveFilter,
                                            coordinateOfSlot: { places.record(atSlot: $0)?.coordinate })
            guard found.count <= limits.maxFeaturesPerResponse else {
                throw .tooLarge(what: "\(found.count) candidate places within \(Int(radius)) m",
                                limit: limits.maxFeaturesPerResponse)
            }
            candidates.reserveCapacity(found.count)
            for point in found {
                guard let record = places.record(atSlot: point.slot),
                      case let .place(_, categoryName, dwell) = record.fields else { continue }
                let category = categoryName.text
                // The request's dwell for the category wins over the place's own.
                candidates.append(ReachabilityCandidate(index: point.slot, coordinate: record.coordinate,
                                                        category: category,
                                                        dwellMinutes: query.dwellOverrides[category] ?? dwell))
            }
        }
        // Routes: one shortest-path search from each end of the walk, as far as the farthest
        // place drawn. `route`'s one place is known now, and its trees serve the
        // evaluation's searches too; a list's routes are made once its page is known.
        func visitRoutes(to drawn: [Coordinate]) throws(EngineError) -> VisitRoutes {
            do {
                return try VisitRoutes(travel: travel, start: start ?? origin, station: origin, places: drawn)
            } catch {
                throw .core(error, field: "network")
            }
        }
        var routes: VisitRoutes?
        if query.includeRoute, query.place != nil {
            routes = try visitRoutes(to: candidates.map(\.coordinate))
        }
        var answer: ReachabilityAnswer
        do {
            answer = try Reachability.evaluate(from: origin, start: start, remainingMinutes: remainingMinutes,
                                               candidates: candidates,
                                               parameters: parameters, travel: travel, order: query.order,
                                               language: query.language,
                                               scope: query.place == nil ? .withinSearchRadius : .everyCandidate,
                                               routes: routes)
        } catch {
            throw .core(error, field: Self.requestField(of: error))
        }
        // Opening hours, checked when the request gives clock times (with remaining_minutes
        // it says how long, not when): a place closed during its visit does not fit.
        var parsedHours: [Int: OpeningHours?] = [:]
        func hours(_ slot: Int) -> OpeningHours? {
            if let known = parsedHours[slot] { return known }
            let parsed = Self.openingHours(of: places.record(atSlot: slot))
            parsedHours[slot] = .some(parsed)
            return parsed
        }
        if let clock {
            answer = answer.closingPlaces(hours: hours, nowMinuteOfWeek: Self.localMinuteOfWeek(
                epochSeconds: clock.nowEpochSeconds, timeZone: places.metadata.timeZone,
                fallbackOffsetSeconds: clock.offsetSeconds))
        }
        // Time to explore, and nothing to explore (every place too far, closed, or not of
        // the categories asked for): the status's sentence would point to places there
        // are none of.
        if query.place == nil, answer.status != .tooLittleTime, answer.reachable.isEmpty {
            answer.reason = Reachability.reasonNothingFits(remainingMinutes: answer.remainingMinutes,
                                                           language: query.language)
        }
        func hoursState(_ slot: Int) -> JSONValue {
            clock == nil ? "unchecked" : hours(slot) == nil ? "unknown" : "open"
        }

        // Over a network, the straight walk from a point to its nearest node, which every
        // walk from there counts. Beyond ``offNetworkMeters`` the answer says so, of the
        // station, a start and each place listed: the network lacks the streets there.
        func snapMeters(_ point: Coordinate) -> Double? {
            guard case let .network(network, _) = travel else { return nil }
            return Self.geodesicMeters(point, network.nodes[network.nearestNode(to: point).node])
        }
        func isOffNetwork(_ snap: Double?) -> Bool { snap.map { $0 > Self.offNetworkMeters } ?? false }
        func markOffNetwork(_ item: inout JSONObject, slot: Int) {
            guard let record = places.record(atSlot: slot), let snap = snapMeters(record.coordinate),
                  isOffNetwork(snap) else { return }
            item["off_network"] = true
            item["to_network_m"] = .number(Self.up(snap))
        }

        func addRoute(to item: inout JSONObject, slot: Int) {
            guard let routes, let record = places.record(atSlot: slot) else { return }
            item["route"] = routes.line(to: record.coordinate).map { line in
                ["type": "LineString", "coordinates": .array(line.map { [.number($0.longitude), .number($0.latitude)] })]
            } ?? .null
        }

        // The answer, rounded for display.
        var result: JSONObject = ["status": .string(answer.status.code), "reason": .string(answer.reason)]
        result["remaining_minutes"] = .number(answer.remainingMinutes)
        result["remaining_seconds"] = .number(Double(remainingSeconds))
        result["boarding_buffer_minutes"] = .number(parameters.boardingBufferMinutes)
        if let clock {
            result["now"] = .string(Self.clockText(clock.nowEpochSeconds, plusMinutes: 0, offsetSeconds: clock.offsetSeconds,
                                                   suffix: clock.suffix, keepSeconds: true))
        }
        result["search_radius_m"] = .number(Self.nearest(answer.searchRadiusMeters))
        result[query.origin.isStation ? "station" : "location"] = .object(originJSON)
        if let start {
            result["location"] = .object(["lon": .number(start.longitude), "lat": .number(start.latitude)])
            if isOffNetwork(snapMeters(start)) { result["location_off_network"] = true }
            if let direct = answer.directWalkMinutes {
                result["direct_walk_minutes"] = direct.isFinite ? .number(Self.up(direct)) : .null
            }
        }
        result["travel"] = .string(networkName == nil ? "straight_line" : "network")
        if let networkName { result["network"] = .string(networkName) }
        if let snap = snapMeters(origin) {
            // An extract that lacks the streets around the station shows here, not as a
            // silent detour.
            result["station_to_network_m"] = .number(Self.up(snap))
            if isOffNetwork(snap) { result["station_off_network"] = true }
        }
        let page = answer.reachable.dropFirst(query.offset).prefix(query.limit)
        let unreachableListed = query.includeUnreachable ? answer.unreachable.prefix(Request.maxReachableLimit) : []
        if query.includeRoute, routes == nil {
            let drawn = (page.map(\.index) + unreachableListed.map(\.index)).compactMap {
                places.record(atSlot: $0)?.coordinate
            }
            routes = try visitRoutes(to: drawn)
        }
        result["reachable"] = .array(page.map { place in
            var item = Self.placeJSON(places.record(atSlot: place.index), language: query.language)
            if start == nil {
                item["distance_m"] = .number(Self.up(place.distanceMetersEachWay))
            } else {
                item["distance_out_m"] = .number(Self.up(place.distanceMetersEachWay))
                item["distance_back_m"] = .number(Self.up(place.distanceMetersBack))
            }
            item["straight_line_m"] = .number(Self.nearest(place.straightLineDistanceMeters))
            if start == nil {
                item["walk_minutes"] = .number(Self.up(place.walkMinutesEachWay))
            } else {
                item["walk_minutes_out"] = .number(Self.up(place.walkMinutesEachWay))
                item["walk_minutes_back"] = .number(Self.up(place.walkMinutesBack))
            }
            item["dwell_minutes"] = .number(place.dwellMinutes)
            if let clock {
                item["leave_by"] = .string(Self.clockText(clock.nowEpochSeconds, plusMinutes: place.leaveByMinutes,
                                                          offsetSeconds: clock.offsetSeconds, suffix: clock.suffix))
            }
            item["leave_by_minutes"] = .number(Self.down(place.leaveByMinutes))
            item["slack_minutes"] = .number(Self.down(place.slackMinutes))
            item["hours"] = hoursState(place.index)
            markOffNetwork(&item, slot: place.index)
            addRoute(to: &item, slot: place.index)
            return .object(item)
        })
        result["total"] = .number(Double(answer.reachable.count))
        result["limit"] = .number(Double(query.limit))
        result["offset"] = .number(Double(query.offset))
        if query.includeUnreachable {
            result["unreachable"] = .array(unreachableListed.map { place in
                var item = Self.placeJSON(places.record(atSlot: place.index), language: query.language)
                item["straight_line_m"] = .number(Self.nearest(place.straightLineDistanceMeters))
                if start == nil {
                    if let walk = place.distanceMetersEachWay { item["distance_m"] = .number(Self.up(walk)) }
                } else {
                    if let walk = place.distanceMetersEachWay { item["distance_out_m"] = .number(Self.up(walk)) }
                    if let walk = place.distanceMetersBack { item["distance_back_m"] = .number(Self.up(walk)) }
                }
                item["dwell_minutes"] = .number(place.dwellMinutes)
                item["reason"] = .string(place.reason.code)
                switch place.reason {
                case let .notEnoughTime(short): item["minutes_short"] = .number(Self.up(short))
                case let .beyondNetworkSearch(short): item["minutes_short_at_least"] = .number(Self.down(short))
                case .notConnected: break
                case let .closed(opensIn):
                    // To the second: the opening is on a whole minute of local time.
                    if let opensIn = opensIn.map({ ($0 * 60).rounded() / 60 }) {
                        item["opens_in_minutes"] = .number(Self.up(opensIn))
                        if let clock {
                            item["opens_at"] = .string(Self.clockText(clock.nowEpochSeconds, plusMinutes: opensIn,
                                                                      offsetSeconds: clock.offsetSeconds, suffix: clock.suffix))
                        }
                    }
                }
                markOffNetwork(&item, slot: place.index)
                addRoute(to: &item, slot: place.index)
                return .object(item)
            })
            result["unreachable_total"] = .number(Double(answer.unreachable.count))
        }
        if query.place != nil, let slot = candidates.first?.index {
            // `route`: the place and its route whether or not it fits (at or below the
            // minimum remaining time nothing is judged, and it is in neither list).
            var item = Self.placeJSON(places.record(atSlot: slot), language: query.language)
            markOffNetwork(&item, slot: slot)
            addRoute(to: &item, slot: slot)
            result["place"] = .object(item)
        }
        if let view = query.clusterView {
            result["clusters"] = try reachableClusters(answer.reachable, of: places, view: view,
                                                       clock: clock.map { ($0.nowEpochSeconds, $0.offsetSeconds, $0.suffix) })
        }
        return .object(result)
    }

    /// Every reachable place (not only the page) clustered for a map view, with the places
    /// layer's own clustering options and aggregates, as `clusters` would answer on a layer
    /// holding just these places. A place carries its `slack_minutes` (and `leave_by` with
    /// clock times); a cluster the least and most slack of its places and the zoom at
    /// which it splits. Cluster ids belong to this answer only: the view is not stored.
    private func reachableClusters(_ reachable: [ReachabilityAnswer.ReachablePlace], of places: LiveLayer,
                                   view: ReachableQuery.ClusterView,
                                   clock: (now: Int64, offsetSeconds: Int64, suffix: Substring)?) throws(EngineError) -> JSONValue {
        var records: [LayerRecord] = []
        var slackBySlot: [Int: Double] = [:]
        var placeBySlot: [Int: ReachabilityAnswer.ReachablePlace] = [:]
        records.reserveCapacity(reachable.count)
        for place in reachable {
            guard let record = places.record(atSlot: place.index) else { continue }
            placeBySlot[records.count] = place
            slackBySlot[records.count] = place.slackMinutes
            records.append(record)
        }
        let layer = try LiveLayer(name: places.name, kind: places.kind, records: records, options: places.index.options)
        let index = layer.index
        let answer = try EngineError.attributing(to: "zoom") { () throws(GeoClusterError) in
            try index.clusters(in: view.bbox, zoom: view.zoom)
        }
        try checkSize(answer.features.count)
        var features = layer.featureCollection(answer).value["features"]?.arrayValue ?? []
        for (i, feature) in answer.features.enumerated() {
            guard var object = features[i].objectValue else { continue }
            var properties = object["properties"]?.objectValue ?? [:]
            switch feature.kind {
            case let .point(slot):
                guard let place = placeBySlot[slot] else { continue }
                properties["slack_minutes"] = .number(Self.down(place.slackMinutes))
                if let clock {
                    properties["leave_by"] = .string(Self.clockText(clock.now, plusMinutes: place.leaveByMinutes,
                                                                    offsetSeconds: clock.offsetSeconds, suffix: clock.suffix))
                }
            case let .cluster(id, _):
                let (slacks, expansion) = try EngineError.attributing(to: "zoom") { () throws(GeoClusterError) in
                    let leaves = try index.leaves(of: id, limit: Int.max, offset: 0).pointIndices
                    return (leaves.compactMap { slackBySlot[$0] }, try index.expansionZoom(of: id))
                }
                properties["expansion_zoom"] = .number(Double(expansion))
                properties["min_slack_minutes"] = .number(Self.down(slacks.min() ?? 0))
                properties["max_slack_minutes"] = .number(Self.down(slacks.max() ?? 0))
            }
            object["properties"] = .object(properties)
            features[i] = .object(object)
        }
        return GeoJSON.featureCollection(features)
    }

    /// A station farther than this from its walking network is said to be off it
    /// (`station_off_network`): beyond a few blocks, the straight walk to the network
    /// stands for streets the network does not have.
    static let offNetworkMeters = 200.0

    // MARK: Opening hours

    /// A place's opening hours: its `opening_hours` property, or the `opening_hours` of its
    /// `osm_tags` (places imported from OpenStreetMap with their tags); `nil` when it has
    /// none or they are outside the supported subset.
    static func openingHours(of record: LayerRecord?) -> OpeningHours? {
        guard let properties = record?.properties,
              let text = properties["opening_hours"]?.stringValue ?? properties["osm_tags"]?["opening_hours"]?.stringValue
        else { return nil }
        return try? OpeningHours(parsing: text)
    }

    /// The minute of the week (0 is Monday 00:00) at an instant, in the layer's time zone,
    /// or at `fallbackOffsetSeconds` from UTC (the departure's offset) without one. A
    /// daylight-saving change during a visit is not followed.
    static func localMinuteOfWeek(epochSeconds: Int64, timeZone: String?, fallbackOffsetSeconds: Int64) -> Double {
        var offset = fallbackOffsetSeconds
        if let timeZone, let zone = TimeZone(identifier: timeZone) {
            offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(epochSeconds))))
        }
        let local = epochSeconds + offset
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondOfDay = local - day * 86_400
        // 1970-01-01 was a Thursday: day 3 of a week that starts on Monday.
        let weekday = ((day + 3) % 7 + 7) % 7
        return Double(weekday * 1_440) + Double(secondOfDay) / 60
    }

    // MARK: Inputs

    /// The current version of a live layer of `kind`, or the error naming `field`.
    func liveLayer(_ name: String, field: String, kind: LayerKind) throws(EngineError) -> LiveLayer {
        let entry: EngineLayer
        do {
            entry = try self.entry(named: name)
        } catch {
            // `unknown_layer` names the field "layer"; another field gets its own name.
            if field == "layer" { throw error }
            throw .invalidField(field, reason: error.description)
        }
        guard entry.kind == kind else {
            throw .wrongLayerKind(field: field, layer: name, expected: kind, actual: entry.kind)
        }
        guard let store = entry.store else { throw .notLiveLayer(field: field, layer: name) }
        return store.layer
    }

    /// The named network, or the first by name whose nodes' bounds hold the origin; the
    /// origin must lie within the chosen network's bounds.
    private func network(_ name: String?, covering points: [Coordinate]) throws(EngineError) -> (String, WalkingNetwork) {
        if let name {
            guard let network = networks[name] else {
                let known = networks.keys.sorted().joined(separator: ", ")
                throw .unknownNetwork(field: "network", reason: "no walking network named \"\(name)\" (loaded: \(known.isEmpty ? "none" : known))")
            }
            for point in points where !Self.covers(network, point) {
                throw .unknownNetwork(field: "network", reason: "walking network \"\(name)\" does not cover \(point.longitude), \(point.latitude)")
            }
            return (name, network)
        }
        for name in networks.keys.sorted() {
            if let network = networks[name], points.allSatisfy({ Self.covers(network, $0) }) { return (name, network) }
        }
        let described = points.map { "\($0.longitude), \($0.latitude)" }.joined(separator: " and ")
        throw .unknownNetwork(field: "travel", reason: "no loaded walking network covers \(described); "
            + "use \"travel\": \"straight_line\"")
    }

    private static func covers(_ network: WalkingNetwork, _ point: Coordinate) -> Bool {
        var west = Double.infinity, south = Double.infinity, east = -Double.infinity, north = -Double.infinity
        for node in network.nodes {
            west = min(west, node.longitude)
            east = max(east, node.longitude)
            south = min(south, node.latitude)
            north = max(north, node.latitude)
        }
        return (west...east).contains(point.longitude) && (south...north).contains(point.latitude)
    }

    /// The request field a core reachability error is about.
    private static func requestField(of error: GeoClusterError) -> String? {
        switch error {
        case .invalidWalkingSpeed, .unknownWalkingPace: return "pace"
        case .invalidRemainingTime: return "remaining_minutes"
        case let .invalidReachabilityParameter(name, _, _):
            switch name {
            case "detourFactor": return "detour_factor"
            case "boardingBufferMinutes": return "boarding_buffer_minutes"
            case "minimumRemainingMinutes": return "min_minutes"
            case "tightRemainingMinutes": return "tight_minutes"
            case "defaultDwellMinutes": return "dwell_minutes"
            default:
                if name.hasPrefix("dwellMinutesByCategory[") {
                    return "dwell_minutes." + name.dropFirst("dwellMinutesByCategory[".count).dropLast()
                }
                return name
            }
        case .invalidCoordinate: return "lon"
        default: return nil
        }
    }

    // MARK: Output

    private static func placeJSON(_ record: LayerRecord?, language: ReachabilityLanguage) -> JSONObject {
        guard let record else { return [:] }
        var item: JSONObject = ["id": record.idJSON]
        if case let .place(name, categoryName, _) = record.fields {
            let category = categoryName.text
            item["name"] = .string(name)
            if let english = record.properties["name_en"]?.stringValue { item["name_en"] = .string(english) }
            item["category"] = .string(category)
            item["category_label"] = .string(language.label(ofCategory: category))
        }
        item["lon"] = .number(record.coordinate.longitude)
        item["lat"] = .number(record.coordinate.latitude)
        return item
    }

    /// Rounded to a tenth: up for what costs time, down for what is left of it. The
    /// millionth of a tenth keeps a value computed a hair off a tenth (650.0000000001 m
    /// from a geodesic round trip) from moving a whole step.
    static func up(_ value: Double) -> Double { (value * 10 - 1e-6).rounded(.up) / 10 }
    static func down(_ value: Double) -> Double { (value * 10 + 1e-6).rounded(.down) / 10 }
    static func nearest(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    /// The UTC offset of an RFC 3339 text that `Timestamp.parse` accepted: `Z` or `±HH:MM`
    /// at its end.
    static func utcOffset(of text: String) -> (seconds: Int64, suffix: Substring) {
        guard let last = text.last, last != "Z", last != "z", text.count >= 6 else { return (0, "Z") }
        let suffix = text.suffix(6)
        let digits = Array(suffix.utf8)
        let hours = Int64(digits[1] - 48) * 10 + Int64(digits[2] - 48)
        let minutes = Int64(digits[4] - 48) * 10 + Int64(digits[5] - 48)
        let seconds = (hours * 60 + minutes) * 60
        return (digits[0] == UInt8(ascii: "-") ? -seconds : seconds, suffix)
    }

    /// The server's clock in seconds since 1970, a part of a second rounded up, for a
    /// `departure` without `now`.
    static func currentEpochSecondsRoundedUp() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) + (now.tv_nsec > 0 ? 1 : 0)
    }

    /// `now` plus `minutes`, rounded down to the whole minute (unless `keepSeconds`), as
    /// RFC 3339 in the given offset. As in ``down(_:)``, a millionth of a second keeps a
    /// time computed a hair under a whole minute (54.99999999 minutes from a geodesic
    /// walk of 750 m) from losing that minute.
    static func clockText(_ nowEpochSeconds: Int64, plusMinutes minutes: Double, offsetSeconds: Int64,
                          suffix: Substring, keepSeconds: Bool = false) -> String {
        var instant = nowEpochSeconds + Int64((minutes * 60 + 1e-6).rounded(.down))
        let second = ((instant % 60) + 60) % 60
        instant -= second
        let local = instant + offsetSeconds
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondOfDay = local - days * 86_400
        let (year, month, day) = LocalDate.civil(daysSince1970: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(keepSeconds ? second : 0, 2))\(suffix)"
    }
}

extension ReachableQuery.Origin {
    var isStation: Bool {
        switch self {
        case .station, .via: true
        case .location: false
        }
    }
}
