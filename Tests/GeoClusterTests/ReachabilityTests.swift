import Testing
import GeoCluster
import GeoReachability

/// Every expected number is worked out by hand from the model
/// `walk out + dwell + walk back + buffer <= remaining` with the default normal pace of
/// 4.5 km/h = 75 m/min, so 75 m of walking take exactly one minute.
struct ReachabilityTests {
    /// Seoul Station.
    static let station = Coordinate(longitude: 126.9707, latitude: 37.5547)

    /// The point `meters` due north of the station: along a meridian the great-circle
    /// distance is exactly the radius times the latitude difference.
    static func north(_ meters: Double) -> Coordinate {
        Coordinate(longitude: station.longitude,
                   latitude: station.latitude + meters / GreatCircle.meanEarthRadiusMeters * 180 / Double.pi)
    }

    /// A straight-line model whose distance is always `meters`, to make the arithmetic exact.
    static func fixedDistance(_ meters: Double) -> ReachabilityTravelModel {
        .straightLine(distanceMeters: { _, _ in meters })
    }

    static func place(_ index: Int, _ category: String, at coordinate: Coordinate = station,
                      dwellMinutes: Double? = nil) -> ReachabilityCandidate {
        ReachabilityCandidate(index: index, coordinate: coordinate, category: category, dwellMinutes: dwellMinutes)
    }

    static func minutesShort(_ reason: ReachabilityAnswer.UnreachableReason) -> Double? {
        if case let .notEnoughTime(minutesShort) = reason { return minutesShort }
        return nil
    }

    static func close(_ a: Double, _ b: Double, within tolerance: Double = 1e-9) -> Bool {
        abs(a - b) <= tolerance
    }

    // MARK: Thresholds

    @Test func twentyMinutesIsTooLittleTimeAndListsNothing() throws {
        // The place is at the station with a 5-minute dwell: 15 minutes would do, yet
        // exploring is not offered at 20 minutes or less.
        let answer = try Reachability.evaluate(
            from: Self.station, remainingMinutes: 20, candidates: [Self.place(0, "cafe", dwellMinutes: 5)])
        #expect(answer.status == .tooLittleTime)
        #expect(answer.status.code == "too_little_time")
        #expect(answer.reachable.isEmpty && answer.unreachable.isEmpty)
        #expect(answer.reason == "20 minutes remain; exploring needs more than 20, so no places are listed")
        #expect(answer.remainingMinutes == 20)
    }

    @Test(arguments: [(21.0, ReachabilityAnswer.Status.tight), (30, .tight), (31, .ok), (0, .tooLittleTime)])
    func thresholdsAreTwentyAndThirtyInclusive(remaining: Double, status: ReachabilityAnswer.Status) throws {
        let answer = try Reachability.evaluate(
            from: Self.station, remainingMinutes: remaining, candidates: [Self.place(0, "cafe", dwellMinutes: 5)])
        #expect(answer.status == status)
        if status == .tooLittleTime {
            #expect(answer.reachable.isEmpty)
        } else {
            // 0 m each way + 5 dwell + 10 buffer = 15 minutes.
            #expect(answer.reachable.map(\.index) == [0])
            #expect(answer.reachable.first?.slackMinutes == remaining - 15)
        }
    }

    @Test func reasonsSayWhatTheStatusMeans() throws {
        let tight = try Reachability.evaluate(from: Self.station, remainingMinutes: 25.25, candidates: [])
        #expect(tight.reason == "25.3 minutes remain, 30 or fewer: time is tight, so keep to the places with the most slack")
        let ok = try Reachability.evaluate(from: Self.station, remainingMinutes: 45, candidates: [])
        #expect(ok.reason == "45 minutes remain, more than 30: enough to explore")
        #expect(ok.status.code == "ok" && tight.status.code == "tight")
    }

    @Test func thresholdsAreConfigurable() throws {
        var parameters = ReachabilityParameters()
        parameters.minimumRemainingMinutes = 10
        parameters.tightRemainingMinutes = 15
        let statuses = try [10.0, 12, 15, 16].map { remaining in
            try Reachability.evaluate(from: Self.station, remainingMinutes: remaining, candidates: [],
                                      parameters: parameters).status
        }
        #expect(statuses == [.tooLittleTime, .tight, .tight, .ok])
    }

    // MARK: The budget

    @Test func aPlaceThatUsesUpTheBudgetExactlyIsReachableWithNoSlack() throws {
        // 600 m x 1.25 = 750 m = 10 minutes each way; 10 + 30 + 10 + 10 = 60.
        var parameters = ReachabilityParameters()
        parameters.detourFactor = 1.25
        let answer = try Reachability.evaluate(
            from: Self.station, remainingMinutes: 60, candidates: [Self.place(4, "cafe", at: Self.north(600))],
            parameters: parameters, travel: Self.fixedDistance(600))
        let visit = try #require(answer.reachable.first)
        #expect(visit.index == 4)
        #expect(visit.straightLineDistanceMeters == 600)
        #expect(visit.distanceMetersEachWay == 750)
        #expect(visit.walkMinutesEachWay == 10)
        #expect(visit.dwellMinutes == 30)
        #expect(visit.leaveByMinutes == 40)
        #expect(visit.slackMinutes == 0)
        #expect(answer.unreachable.isEmpty)
    }

    @Test func oneMetreDecidesAtTheEdgeOfTheBudget() throws {
        // With 60 minutes and a cafe, 10 minutes of walking each way remain: 750 m on foot,
        // 750 / 1.5 = 500 m in a straight line. One metre more or less in a straight line
        // is 1.5 m each way, 2 x 1.5 / 75 = 0.04 minutes of slack either side.
        let edge = 750 / 1.5
        let answer = try Reachability.evaluate(
            from: Self.station, remainingMinutes: 60,
            candidates: [Self.place(0, "cafe", at: Self.north(edge - 1)), Self.place(1, "cafe", at: Self.north(edge + 1))])
        #expect(answer.reachable.map(\.index) == [0])
        #expect(answer.unreachable.map(\.index) == [1])
        let margin = 2 * 1.5 / 75
        let inside = try #require(answer.reachable.first)
        #expect(Self.close(inside.slackMinutes, margin, within: 1e-7))
        #expect(Self.close(inside.straightLineDistanceMeters, edge - 1, within: 1e-6))
        #expect(Self.close(inside.leaveByMinutes, 60 - 10 - (edge - 1) * 1.5 / 75, within: 1e-9))
        let outside = try #require(answer.unreachable.first)
        let short = try #require(Self.minutesShort(outside.reason))
        #expect(Self.close(short, margin, within: 1e-7))
        #expect(outside.reason.code == "not_enough_time")
        #expect(Self.close(outside.distanceMetersEachWay ?? 0, (edge + 1) * 1.5, within: 1e-6))
    }

    @Test func dwellComesFromTheOverrideThenTheCategoryThenTheDefault() throws {
        let candidates = [Self.place(0, "museum"), Self.place(1, "zoo"),
                          Self.place(2, "museum", dwellMinutes: 5), Self.place(3, "cafe")]
        let answer = try Reachability.evaluate(from: Self.station, remainingMinutes: 200, candidates: candidates)
        let dwell = Dictionary(uniqueKeysWithValues: answer.reachable.map { ($0.index, $0.dwellMinutes) })
        #expect(dwell == [0: 90, 1: 30, 2: 5, 3: 30])
        // At the station no walking: slack is 200 - dwell - 10.
        let slack = Dictionary(uniqueKeysWithValues: answer.reachable.map { ($0.index, $0.slackMinutes) })
        #expect(slack == [0: 100, 1: 160, 2: 185, 3: 160])

        var parameters = ReachabilityParameters()
        parameters.defaultDwellMinutes = 40
        parameters.dwellMinutesByCategory["cafe"] = 15
        let changed = try Reachability.evaluate(from: Self.station, remainingMinutes: 200, candidates: candidates,
                                                parameters: parameters)
        let changedDwell = Dictionary(uniqueKeysWithValues: changed.reachable.map { ($0.index, $0.dwellMinutes) })
        #expect(changedDwell == [0: 90, 1: 40, 2: 5, 3: 15])
    }

    /// The default parameters without the 5-minute convenience stores, whose dwell would
    /// otherwise set every search radius: the examples here are worked with the
    /// viewpoint's 20 minutes as the shortest.
    static var withoutShortVisits: ReachabilityParameters {
        var parameters = ReachabilityParameters()
        parameters.dwellMinutesByCategory["convenience"] = nil
        return parameters
    }

    @Test func theDefaultDwellTableIsTheDocumentedOne() {
        let parameters = ReachabilityParameters()
        let expected: [String: Double] = [
            "cafe": 30, "restaurant": 60, "attraction": 90, "park": 45, "market": 60,
            "museum": 90, "viewpoint": 20, "shopping": 45, "temple": 60, "beach": 60, "convenience": 5,
        ]
        for (category, minutes) in expected {
            #expect(parameters.dwellMinutes(forCategory: category) == minutes, "\(category)")
        }
        #expect(parameters.dwellMinutesByCategory.count == expected.count)
        #expect(parameters.dwellMinutes(forCategory: "library") == 30)
        #expect(parameters.smallestDwellMinutes == 5)
        #expect(parameters.detourFactor == 1.5)
        #expect(parameters.boardingBufferMinutes == 10)
        #expect(parameters.pace == .normal)
        #expect(parameters.minimumRemainingMinutes == 20 && parameters.tightRemainingMinutes == 30)
    }

    @Test func theBoardingBufferCanBeChanged() throws {
        // 1125 m = 15 minutes each way; 15 + 30 + 15 + 10 = 70 > 60, but without a buffer 60 fits.
        let candidates = [Self.place(0, "cafe", at: Self.north(1_125))]
        var parameters = ReachabilityParameters()
        parameters.detourFactor = 1
        let withBuffer = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: candidates,
                                                   parameters: parameters, travel: Self.fixedDistance(1_125))
        #expect(withBuffer.reachable.isEmpty)
        #expect(withBuffer.unreachable.first.flatMap { Self.minutesShort($0.reason) } == 10)

        parameters.boardingBufferMinutes = 0
        let withoutBuffer = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: candidates,
                                                      parameters: parameters, travel: Self.fixedDistance(1_125))
        let visit = try #require(withoutBuffer.reachable.first)
        #expect(visit.slackMinutes == 0)
        #expect(visit.leaveByMinutes == 45)
    }

    // MARK: Pace and detour

    @Test func paceValidationAcceptsOneToTenKilometresPerHour() throws {
        #expect(throws: GeoClusterError.invalidWalkingSpeed(kilometersPerHour: 0.5, reason: "is outside 1...10 km/h")) {
            try WalkingPace(kilometersPerHour: 0.5)
        }
        #expect(throws: GeoClusterError.invalidWalkingSpeed(kilometersPerHour: 11, reason: "is outside 1...10 km/h")) {
            try WalkingPace(kilometersPerHour: 11)
        }
        #expect(throws: GeoClusterError.invalidWalkingSpeed(kilometersPerHour: .infinity, reason: "is not a finite number")) {
            try WalkingPace(kilometersPerHour: .infinity)
        }
        do {
            _ = try WalkingPace(kilometersPerHour: .nan)
            Issue.record("NaN speed accepted")
        } catch {
            #expect(error.code == "invalid_walking_speed")
        }
        #expect(try WalkingPace(kilometersPerHour: 1).metersPerMinute == 1_000.0 / 60)
        #expect(try WalkingPace(kilometersPerHour: 10).kilometersPerHour == 10)
    }

    @Test func namedPacesHaveTheirDocumentedSpeeds() throws {
        #expect(WalkingPace.slow.metersPerSecond == 1.0)
        #expect(WalkingPace.normal.metersPerSecond == 1.25)
        #expect(WalkingPace.fast.metersPerSecond == 1.5)
        #expect([WalkingPace.slow, .normal, .fast].map(\.metersPerMinute) == [60, 75, 90])
        #expect(try WalkingPace.named("fast") == .fast)
        #expect(try WalkingPace(kilometersPerHour: 4.5).name == "normal")
        #expect(try WalkingPace(kilometersPerHour: 5).name == nil)
        #expect(throws: GeoClusterError.unknownWalkingPace(name: "brisk")) { try WalkingPace.named("brisk") }
    }

    @Test func paceSetsTheWalkingTime() throws {
        var parameters = ReachabilityParameters()
        parameters.detourFactor = 1
        var minutes: [Double] = []
        for pace in [WalkingPace.slow, .fast] {
            parameters.pace = pace
            let answer = try Reachability.evaluate(
                from: Self.station, remainingMinutes: 90, candidates: [Self.place(0, "cafe", at: Self.north(600))],
                parameters: parameters, travel: Self.fixedDistance(600))
            minutes += answer.reachable.map(\.walkMinutesEachWay)
        }
        #expect(minutes == [10, 600.0 / 90])
    }

    @Test func theDetourFactorStretchesWalksAndShrinksTheRadius() throws {
        // 600 m straight: 600 m = 8 minutes at 1.0, 900 m = 12 minutes at 1.5.
        var parameters = Self.withoutShortVisits
        let candidates = [Self.place(0, "cafe", at: Self.north(600))]
        parameters.detourFactor = 1
        let direct = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: candidates,
                                               parameters: parameters, travel: Self.fixedDistance(600))
        #expect(direct.reachable.first?.walkMinutesEachWay == 8)
        #expect(direct.reachable.first?.slackMinutes == 4)
        #expect(direct.searchRadiusMeters == 1_125)

        parameters.detourFactor = 1.5
        let winding = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: candidates,
                                                parameters: parameters, travel: Self.fixedDistance(600))
        #expect(winding.reachable.isEmpty)
        #expect(winding.unreachable.first?.distanceMetersEachWay == 900)
        #expect(winding.unreachable.first.flatMap { Self.minutesShort($0.reason) } == 4)
        #expect(winding.searchRadiusMeters == 750)
    }

    // MARK: Search radius and listing

    @Test func placesInsideTheRadiusAreListedAndOthersAreNot() throws {
        // Radius: (60 - 10 - 20) / 2 = 15 minutes = 1125 m on foot = 865.38 m straight.
        let candidates = [
            Self.place(0, "museum", at: Self.north(800)),
            Self.place(1, "cafe", at: Self.north(900)),
            Self.place(2, "cafe", at: Self.north(100_000)),
            Self.place(3, "cafe", at: Self.north(300)),
            Self.place(4, "museum", at: Self.north(700)),
        ]
        var parameters = Self.withoutShortVisits
        parameters.detourFactor = 1.3
        let answer = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: candidates,
                                               parameters: parameters)
        #expect(Self.close(answer.searchRadiusMeters, 1_125 / 1.3))
        #expect(answer.reachable.map(\.index) == [3])
        // 300 m x 1.3 = 390 m = 5.2 minutes each way; 60 - (10.4 + 30 + 10) = 9.6.
        #expect(Self.close(answer.reachable[0].walkMinutesEachWay, 5.2))
        #expect(Self.close(answer.reachable[0].slackMinutes, 9.6))
        #expect(Self.close(answer.reachable[0].leaveByMinutes, 44.8))
        #expect(answer.unreachable.map(\.index) == [4, 0])
        // 800 m x 1.3 x 2 / 75 + 90 + 10 - 60 = 67.733 minutes short.
        let short = try #require(Self.minutesShort(answer.unreachable[1].reason))
        #expect(Self.close(short, 1_600 * 1.3 / 75 + 40, within: 1e-7))
        #expect(answer.unreachable[1].dwellMinutes == 90)
    }

    @Test func farPlacesAreSkippedBeforeTheExactDistance() throws {
        // A distance function that says "here" for everything: only the box can keep the far
        // place out, and it must not keep the near one out.
        let answer = try Reachability.evaluate(
            from: Self.station, remainingMinutes: 60,
            candidates: [Self.place(0, "cafe", at: Self.north(50_000)), Self.place(1, "cafe", at: Self.north(800))],
            travel: Self.fixedDistance(0))
        #expect(answer.reachable.map(\.index) == [1])
        #expect(answer.unreachable.isEmpty)
    }

    @Test func theBoxWrapsTheAntimeridianAndOpensAtThePoles() throws {
        let fiji = Coordinate(longitude: 179.999, latitude: -17)
        let acrossTheLine = Coordinate(longitude: -179.999, latitude: -17)
        let fijiAnswer = try Reachability.evaluate(from: fiji, remainingMinutes: 60,
                                                   candidates: [Self.place(0, "cafe", at: acrossTheLine)])
        #expect(fijiAnswer.reachable.map(\.index) == [0])

        let pole = Coordinate(longitude: 0, latitude: 89.999)
        let otherSide = Coordinate(longitude: 180, latitude: 89.999)
        let poleAnswer = try Reachability.evaluate(from: pole, remainingMinutes: 60,
                                                   candidates: [Self.place(0, "cafe", at: otherSide)])
        #expect(poleAnswer.reachable.map(\.index) == [0])
    }

    @Test func shorterDwellOverridesWidenTheRadius() throws {
        let candidates = [Self.place(0, "cafe", dwellMinutes: 0)]
        let answer = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: candidates)
        // (60 - 10 - 0) / 2 = 25 minutes = 1875 m on foot, 1250 m in a straight line.
        #expect(Self.close(answer.searchRadiusMeters, 1_875 / 1.5))
        #expect(Self.close(Reachability.searchRadiusMeters(remainingMinutes: 60, parameters: Self.withoutShortVisits),
                           1_125 / 1.5))
        #expect(Reachability.searchRadiusMeters(remainingMinutes: 25, parameters: Self.withoutShortVisits) == 0)
        // With the default table, a convenience store's 5 minutes set the radius:
        // (25 - 10 - 5) / 2 = 5 minutes = 375 m on foot.
        #expect(Self.close(Reachability.searchRadiusMeters(remainingMinutes: 25), 375 / 1.5))
    }

    // MARK: Order

    @Test func reachablePlacesSortBySlackOrByDistance() throws {
        // 300 m viewpoint: 6 min each way, slack 120 - (12 + 20 + 10) = 78
        // 100 m museum: 2 min each way, slack 120 - (4 + 90 + 10) = 16
        // 200 m cafes (indices 2 and 3): 4 min each way, slack 120 - (8 + 30 + 10) = 72
        let candidates = [
            Self.place(3, "cafe", at: Self.north(200)),
            Self.place(1, "museum", at: Self.north(100)),
            Self.place(0, "viewpoint", at: Self.north(300)),
            Self.place(2, "cafe", at: Self.north(200)),
        ]
        let bySlack = try Reachability.evaluate(from: Self.station, remainingMinutes: 120, candidates: candidates)
        #expect(bySlack.reachable.map(\.index) == [0, 2, 3, 1])
        #expect(Self.close(bySlack.reachable[0].slackMinutes, 78, within: 1e-7))
        #expect(Self.close(bySlack.reachable[3].slackMinutes, 120 - (200 * 1.5 / 75 + 100), within: 1e-7))
        let byDistance = try Reachability.evaluate(from: Self.station, remainingMinutes: 120, candidates: candidates,
                                                   order: .distance)
        #expect(byDistance.reachable.map(\.index) == [1, 2, 3, 0])
    }

    // MARK: Validation

    @Test func rejectsBadRemainingTimes() {
        #expect(throws: GeoClusterError.invalidRemainingTime(minutes: -1, reason: "is negative")) {
            try Reachability.evaluate(from: Self.station, remainingMinutes: -1, candidates: [])
        }
        #expect(throws: GeoClusterError.invalidRemainingTime(minutes: .infinity, reason: "is not a finite number")) {
            try Reachability.evaluate(from: Self.station, remainingMinutes: .infinity, candidates: [])
        }
        do {
            _ = try Reachability.evaluate(from: Self.station, remainingMinutes: .nan, candidates: [])
            Issue.record("NaN remaining time accepted")
        } catch {
            #expect(error.code == "invalid_remaining_time")
        }
    }

    @Test func rejectsParametersOutOfRange() {
        func rejected(_ change: (inout ReachabilityParameters) -> Void) -> GeoClusterError? {
            var parameters = ReachabilityParameters()
            change(&parameters)
            do {
                try parameters.validate()
                return nil
            } catch {
                return error
            }
        }
        #expect(rejected { $0.detourFactor = 0.9 }
                == .invalidReachabilityParameter(name: "detourFactor", value: 0.9, reason: "is outside 1...3"))
        #expect(rejected { $0.detourFactor = 3.1 }?.code == "invalid_reachability_parameter")
        #expect(rejected { $0.detourFactor = .nan }?.code == "invalid_reachability_parameter")
        #expect(rejected { $0.boardingBufferMinutes = -1 }
                == .invalidReachabilityParameter(name: "boardingBufferMinutes", value: -1, reason: "is outside 0...120"))
        #expect(rejected { $0.boardingBufferMinutes = 121 } != nil)
        #expect(rejected { $0.dwellMinutesByCategory["cafe"] = -1 }
                == .invalidReachabilityParameter(name: "dwellMinutesByCategory[cafe]", value: -1, reason: "is outside 0...1440"))
        #expect(rejected { $0.defaultDwellMinutes = 1_441 } != nil)
        #expect(rejected { $0.minimumRemainingMinutes = -5 }
                == .invalidReachabilityParameter(name: "minimumRemainingMinutes", value: -5, reason: "must not be negative"))
        #expect(rejected { $0.tightRemainingMinutes = 15 }
                == .invalidReachabilityParameter(name: "tightRemainingMinutes", value: 15,
                                                 reason: "must be a finite number at least minimumRemainingMinutes (20)"))
        #expect(rejected { $0.detourFactor = 1; $0.boardingBufferMinutes = 0; $0.tightRemainingMinutes = 20 } == nil)
        #expect(throws: GeoClusterError.invalidReachabilityParameter(name: "detourFactor", value: 5, reason: "is outside 1...3")) {
            try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: [],
                                      parameters: ReachabilityParameters(detourFactor: 5))
        }
    }

    @Test func rejectsBadDwellOverridesAndCoordinates() {
        #expect(throws: GeoClusterError.invalidDwellTime(minutes: -5, reason: "is not a number of minutes within 0...1440", index: 7)) {
            try Reachability.evaluate(from: Self.station, remainingMinutes: 60,
                                      candidates: [Self.place(7, "cafe", dwellMinutes: -5)])
        }
        #expect(throws: GeoClusterError.invalidCoordinate(field: "lat", value: 95, reason: "is outside [-90, 90]", index: 3)) {
            try Reachability.evaluate(from: Self.station, remainingMinutes: 60,
                                      candidates: [Self.place(3, "cafe", at: Coordinate(longitude: 0, latitude: 95))])
        }
        #expect(throws: GeoClusterError.invalidCoordinate(field: "lon", value: 200, reason: "is outside [-180, 180]", index: nil)) {
            try Reachability.evaluate(from: Coordinate(longitude: 200, latitude: 0), remainingMinutes: 60, candidates: [])
        }
    }

    // MARK: Network model

    @Test func theNetworkWalksAroundTheRiverWhereTheStraightLineCrossesIt() throws {
        let network = try RiverFixture.network()
        let station = RiverFixture.nodes[RiverFixture.a]
        let candidates = [Self.place(7, "cafe", at: RiverFixture.nodes[RiverFixture.d])]

        let straight = try Reachability.evaluate(from: station, remainingMinutes: 120, candidates: candidates)
        // 200 m x 1.5 = 300 m each way.
        #expect(Self.close(straight.reachable.first?.distanceMetersEachWay ?? 0, 300, within: 1e-6))

        let walked = try Reachability.evaluate(from: station, remainingMinutes: 120, candidates: candidates,
                                               parameters: Self.withoutShortVisits, travel: .network(network))
        // 2200 m = 29.333 minutes each way; 120 - (58.667 + 30 + 10) = 21.333.
        let visit = try #require(walked.reachable.first)
        #expect(visit.distanceMetersEachWay == 2_200)
        #expect(Self.close(visit.straightLineDistanceMeters, 200, within: 1e-6))
        #expect(Self.close(visit.walkMinutesEachWay, 2_200.0 / 75))
        #expect(Self.close(visit.slackMinutes, 120 - 40 - 4_400.0 / 75))
        #expect(Self.close(visit.leaveByMinutes, 110 - 2_200.0 / 75))
        // No detour factor on a network: (120 - 10 - 20) / 2 x 75 = 3375 m.
        #expect(walked.searchRadiusMeters == 3_375)
    }

    @Test func aRouteThatIsTooLongIsShortByExactMinutes() throws {
        let network = try RiverFixture.network()
        let answer = try Reachability.evaluate(
            from: RiverFixture.nodes[RiverFixture.a], remainingMinutes: 90,
            candidates: [Self.place(7, "cafe", at: RiverFixture.nodes[RiverFixture.d])], travel: .network(network))
        // Radius 2250 m holds the 2200 m route: 58.667 + 40 - 90 = 8.667 minutes short.
        let place = try #require(answer.unreachable.first)
        #expect(place.distanceMetersEachWay == 2_200)
        #expect(Self.close(Self.minutesShort(place.reason) ?? 0, 4_400.0 / 75 - 50))
    }

    @Test func theNetworkSearchStopsAtTheLongestWalkThatCouldFit() throws {
        let network = try RiverFixture.network()
        let answer = try Reachability.evaluate(
            from: RiverFixture.nodes[RiverFixture.a], remainingMinutes: 70,
            candidates: [Self.place(7, "cafe", at: RiverFixture.nodes[RiverFixture.d]),
                         Self.place(8, "cafe", at: RiverFixture.at(eastMeters: 0, northMeters: 2_000))],
            parameters: Self.withoutShortVisits, travel: .network(network))
        // Radius (70 - 30) / 2 x 75 = 1500 m: the route of 2200 m lies beyond it, so the visit
        // is at least 2 x 1500 / 75 + 40 - 70 = 10 minutes short. The place 2 km away is not listed.
        #expect(answer.searchRadiusMeters == 1_500)
        #expect(answer.reachable.isEmpty)
        #expect(answer.unreachable.map(\.index) == [7])
        #expect(answer.unreachable.first?.reason == .beyondNetworkSearch(minutesShortAtLeast: 10))
        #expect(answer.unreachable.first?.reason.code == "beyond_network_search")
        #expect(answer.unreachable.first?.distanceMetersEachWay == nil)
    }

    /// One place the traveller opened (the `route` operation) is judged wherever it is: beyond
    /// the radius it is unreachable by its exact walk, in a straight line, over a network
    /// searched as far as it goes, and from a start position outside the ellipse.
    @Test func everyCandidateIsJudgedByItsWholeWalk() throws {
        // Straight line, detour 1.3, radius 865 m: 900 m and 100 km are beyond it.
        var parameters = Self.withoutShortVisits
        parameters.detourFactor = 1.3
        let far = [Self.place(1, "cafe", at: Self.north(900)), Self.place(2, "cafe", at: Self.north(100_000))]
        let within = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: far,
                                               parameters: parameters)
        #expect(within.reachable.isEmpty && within.unreachable.isEmpty)
        let every = try Reachability.evaluate(from: Self.station, remainingMinutes: 60, candidates: far,
                                              parameters: parameters, scope: .everyCandidate)
        #expect(every.reachable.isEmpty)
        try #require(every.unreachable.map(\.index) == [1, 2])
        // 900 m x 1.3 x 2 / 75 + 30 + 10 - 60 = 11.2; 100 km: 3,466.667 + 40 - 60.
        #expect(Self.close(Self.minutesShort(every.unreachable[0].reason) ?? 0, 11.2, within: 1e-7))
        #expect(Self.close(Self.minutesShort(every.unreachable[1].reason) ?? 0, 200_000 * 1.3 / 75 - 20, within: 1e-6))
        #expect(Self.close(every.unreachable[1].distanceMetersEachWay ?? 0, 130_000, within: 1e-6))
        #expect(every.searchRadiusMeters == within.searchRadiusMeters)

        // Over the network: the 2,200 m route beyond the 1,500 m search is walked whole,
        // 4,400 / 75 + 40 - 70 = 28.667 minutes short; the place by the island is not connected.
        let network = try RiverFixture.network()
        let river = [Self.place(7, "cafe", at: RiverFixture.nodes[RiverFixture.d]),
                     Self.place(8, "cafe", at: RiverFixture.at(eastMeters: 0, northMeters: 2_000))]
        let walked = try Reachability.evaluate(
            from: RiverFixture.nodes[RiverFixture.a], remainingMinutes: 70, candidates: river,
            parameters: Self.withoutShortVisits, travel: .network(network), scope: .everyCandidate)
        try #require(walked.unreachable.map(\.index) == [7, 8])
        #expect(walked.unreachable[0].distanceMetersEachWay == 2_200)
        #expect(Self.close(Self.minutesShort(walked.unreachable[0].reason) ?? 0, 4_400.0 / 75 - 30, within: 1e-9))
        #expect(walked.unreachable[1].reason == .notConnected)
        // With the time it needs, the same place fits, as `reachable` would list it.
        let enough = try Reachability.evaluate(
            from: RiverFixture.nodes[RiverFixture.a], remainingMinutes: 100, candidates: river,
            parameters: Self.withoutShortVisits, travel: .network(network), scope: .everyCandidate)
        try #require(enough.reachable.map(\.index) == [7])
        #expect(Self.close(enough.reachable[0].slackMinutes, 100 - 4_400.0 / 75 - 40, within: 1e-9))

        // From B over the network, 50 minutes: the walk back from D (2,200 m) is beyond the
        // 1,500 m search, so the default scope knows only a bound; every candidate's is
        // exact, 3,400 / 75 + 40 - 50 = 35.333 minutes short.
        let fromB = { (scope: ReachabilityScope) in
            try Reachability.evaluate(from: RiverFixture.nodes[RiverFixture.a], start: RiverFixture.nodes[RiverFixture.b],
                                      remainingMinutes: 50, candidates: [river[0]], parameters: Self.withoutShortVisits,
                                      travel: .network(network), scope: scope)
        }
        #expect(try fromB(.withinSearchRadius).unreachable.first?.reason.code == "beyond_network_search")
        let walkedFromB = try #require(try fromB(.everyCandidate).unreachable.first)
        #expect(walkedFromB.distanceMetersEachWay == 1_200 && walkedFromB.distanceMetersBack == 2_200)
        #expect(Self.close(Self.minutesShort(walkedFromB.reason) ?? 0, 3_400.0 / 75 - 10, within: 1e-9))

        // From a start 2 km south of the station, a place 2 km north: both legs walked.
        let start = Self.north(-2_000)
        let ahead = [Self.place(3, "cafe", at: Self.north(2_000))]
        let fromStart = try Reachability.evaluate(from: Self.station, start: start, remainingMinutes: 60,
                                                  candidates: ahead, parameters: parameters)
        #expect(fromStart.unreachable.isEmpty)
        let fromStartEvery = try Reachability.evaluate(from: Self.station, start: start, remainingMinutes: 60,
                                                       candidates: ahead, parameters: parameters, scope: .everyCandidate)
        let place = try #require(fromStartEvery.unreachable.first)
        #expect(Self.close(place.distanceMetersEachWay ?? 0, 4_000 * 1.3, within: 1e-3))
        #expect(Self.close(place.distanceMetersBack ?? 0, 2_000 * 1.3, within: 1e-3))
        #expect(Self.close(Self.minutesShort(place.reason) ?? 0, 6_000 * 1.3 / 75 + 40 - 60, within: 1e-4))
    }

    @Test func anIslandIsNotConnected() throws {
        let network = try RiverFixture.network()
        let answer = try Reachability.evaluate(
            from: RiverFixture.nodes[RiverFixture.a], remainingMinutes: 120,
            candidates: [Self.place(9, "park", at: RiverFixture.nodes[RiverFixture.e])], travel: .network(network))
        let place = try #require(answer.unreachable.first)
        #expect(place.index == 9)
        #expect(place.reason == .notConnected)
        #expect(place.reason.code == "not_connected")
        #expect(place.dwellMinutes == 45)
        #expect(Self.close(place.straightLineDistanceMeters, 400, within: 1e-6))
    }

    /// A traveller on the island, with no walk to the station however much time is left:
    /// nothing fits, and the answer sends them to the station rather than to explore.
    @Test(arguments: [(ReachabilityLanguage.english, "no walk from here to the station was found: head for the station now"),
                      (.korean, "여기서 역까지 걸어갈 길을 찾지 못했습니다. 지금 역으로 가세요")])
    func aStartWithNoWalkToTheStationHeadsForIt(language: ReachabilityLanguage, reason: String) throws {
        let network = try RiverFixture.network()
        let answer = try Reachability.evaluate(
            from: RiverFixture.nodes[RiverFixture.a], start: RiverFixture.nodes[RiverFixture.e], remainingMinutes: 600,
            candidates: [Self.place(0, "cafe", at: RiverFixture.nodes[RiverFixture.f]),
                         Self.place(1, "park", at: RiverFixture.nodes[RiverFixture.b])],
            travel: .network(network), language: language)
        #expect(answer.directWalkMinutes == .infinity)
        #expect(answer.status == .tooLittleTime)
        #expect(answer.reason == reason)
        #expect(answer.reachable.isEmpty)
        // From the station's bank the same time leaves room to explore.
        let onTheBank = try Reachability.evaluate(
            from: RiverFixture.nodes[RiverFixture.a], start: RiverFixture.nodes[RiverFixture.d], remainingMinutes: 600,
            candidates: [Self.place(1, "park", at: RiverFixture.nodes[RiverFixture.b])],
            travel: .network(network), language: language)
        #expect(onTheBank.status == .ok)
        #expect(onTheBank.reachable.map(\.index) == [1])
    }

    @Test func snapLegsAreWalkedStraightAtBothEnds() throws {
        let network = try RiverFixture.network()
        // 30 m south of A to the station's node, 20 m north of D to the place's node.
        let station = RiverFixture.at(eastMeters: 0, northMeters: -130)
        let place = RiverFixture.at(eastMeters: 0, northMeters: 120)
        #expect(network.nearestNode(to: station).node == RiverFixture.a)
        #expect(network.nearestNode(to: place).node == RiverFixture.d)
        let answer = try Reachability.evaluate(from: station, remainingMinutes: 120,
                                               candidates: [Self.place(0, "cafe", at: place)], travel: .network(network))
        let visit = try #require(answer.reachable.first)
        #expect(Self.close(visit.distanceMetersEachWay, 30 + 2_200 + 20, within: 1e-6))
    }
}
