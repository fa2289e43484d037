import Foundation
import Testing
import GeoCluster
import GeoClusterWire
import GeoReachability

/// The shipped OpenStreetMap sample of central Helsinki (Data/helsinki_*.json[.geojson], made
/// by Data/tools/import_helsinki.py): the pedestrian network, Helsinki Central station and
/// 786 named places within a kilometre of it.
enum HelsinkiSample {
    /// <package>/Data; #filePath is <package>/Tests/GeoClusterTests/HelsinkiNetworkTests.swift.
    static let dataDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Data")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: dataDirectory.appendingPathComponent(name)))
    }

    static func features(_ name: String) throws -> [JSONValue] {
        try #require(try JSONValue.parse(bytes(name))["features"]?.arrayValue)
    }

    static func coordinate(of feature: JSONValue) throws -> Coordinate {
        let pair = try #require(feature["geometry"]?["coordinates"]?.arrayValue)
        return Coordinate(longitude: try #require(pair[0].doubleValue), latitude: try #require(pair[1].doubleValue))
    }

    struct Loaded {
        var network: WalkingNetwork
        var header: JSONValue
        var station: Coordinate
        var places: [ReachabilityCandidate]
        var names: [String]
    }

    /// Parsed once: the network has about 5,000 nodes and the places file 800 features.
    static func load() throws -> Loaded {
        let walk = try bytes("helsinki_walk.json")
        let header = try JSONValue.parse(walk)
        let network = try WalkingNetwork(json: header)
        let stations = try features("helsinki_stations.geojson")
        let central = try #require(stations.first { $0["id"]?.stringValue == "helsinki-central" })
        var places: [ReachabilityCandidate] = []
        var names: [String] = []
        for (i, feature) in try features("helsinki_places.geojson").enumerated() {
            let properties = try #require(feature["properties"])
            places.append(ReachabilityCandidate(
                index: i, coordinate: try coordinate(of: feature),
                category: try #require(properties["category"]?.stringValue),
                dwellMinutes: properties["dwell_minutes"]?.doubleValue))
            names.append(try #require(properties["name"]?.stringValue))
        }
        return Loaded(network: network, header: header, station: try coordinate(of: central),
                      places: places, names: names)
    }

    /// The walk from the station to each place along the network, snap legs included, and
    /// the straight line, both in metres; what the network model of reachability computes.
    static func walks(_ sample: Loaded) throws -> [(place: Int, networkMeters: Double, straightMeters: Double)] {
        let network = sample.network
        let (stationNode, stationSnap) = network.nearestNode(to: sample.station)
        let distances = try network.shortestDistancesMeters(from: stationNode)
        return sample.places.map { place in
            let (node, snap) = network.nearestNode(to: place.coordinate)
            return (place.index, stationSnap + distances[node] + snap,
                    GreatCircle.haversineMeters(from: sample.station, to: place.coordinate))
        }
    }

    /// The value below which a share `q` of the sorted `values` lies (nearest rank).
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
    }
}

struct HelsinkiNetworkTests {
    @Test func networkFileLoadsAsOneConnectedComponent() throws {
        let sample = try HelsinkiSample.load()
        let network = sample.network
        #expect(network._checkInvariants())
        #expect(network.nodeCount == sample.header["node_count"]?.intValue)
        #expect(network.edgeCount == sample.header["edge_count"]?.intValue)
        #expect(network.nodeCount > 4_000)
        // The importer keeps the largest component only, so every node reaches every other.
        #expect(network.componentOfNode.allSatisfy { $0 == 0 })
        let total = network.edgeLengthMeters.reduce(0, +) / 2
        let declared = try #require(sample.header["total_length_m"]?.doubleValue)
        #expect(abs(total - declared) < 0.5, "total length \(total) m, header says \(declared) m")
        #expect(sample.header["license"]?.stringValue == "ODbL-1.0")
    }

    @Test func edgesAreNeverShorterThanTheStraightLineBetweenTheirEnds() throws {
        // The reachability search radius relies on it. Edges are WGS84 geodesics; at 60° N
        // the ellipsoid's radii of curvature exceed the mean sphere's, so the haversine is
        // the shorter of the two.
        let network = try HelsinkiSample.load().network
        var longest = 0.0
        for u in 0..<network.nodeCount {
            for slot in Int(network.edgeStart[u])..<Int(network.edgeStart[u + 1]) {
                let v = Int(network.edgeTarget[slot])
                let straight = GreatCircle.haversineMeters(from: network.nodes[u], to: network.nodes[v])
                #expect(network.edgeLengthMeters[slot] >= straight, "edge \(u)-\(v)")
                #expect(network.edgeLengthMeters[slot] <= straight * 1.01 + 0.01, "edge \(u)-\(v) is a straight segment")
                longest = max(longest, network.edgeLengthMeters[slot])
            }
        }
        #expect(longest < 500)
    }

    @Test func stationAndPlacesSnapToNearbyNodes() throws {
        let sample = try HelsinkiSample.load()
        let station = sample.network.nearestNode(to: sample.station)
        #expect(station.distanceMeters < 30, "Helsinki Central snaps \(station.distanceMeters) m away")
        let snaps = sample.places.map { sample.network.nearestNode(to: $0.coordinate).distanceMeters }.sorted()
        #expect(sample.places.count > 500)
        #expect(HelsinkiSample.quantile(snaps, 0.5) < 20, "median snap")
        #expect(HelsinkiSample.quantile(snaps, 0.95) < 60, "95th percentile snap")
        #expect(snaps.last! < 200, "farthest snap")
    }

    @Test func networkWalksAreNeverShorterThanTheStraightLineAndMostlyWithinTwice() throws {
        let sample = try HelsinkiSample.load()
        let walks = try HelsinkiSample.walks(sample)
        for walk in walks {
            #expect(walk.networkMeters.isFinite)
            #expect(walk.networkMeters >= walk.straightMeters, "\(sample.names[walk.place])")
        }
        // Close to the station the snap legs dominate the ratio; from 200 m on it measures
        // the streets.
        let ratios = walks.filter { $0.straightMeters >= 200 }.map { $0.networkMeters / $0.straightMeters }.sorted()
        #expect(ratios.count > 500)
        let within = ratios.filter { (1.1...2.0).contains($0) }.count
        #expect(Double(within) >= 0.85 * Double(ratios.count), "\(within) of \(ratios.count) ratios within 1.1-2.0")
        #expect((1.1...1.6).contains(HelsinkiSample.quantile(ratios, 0.5)))
    }

    /// The numbers of the comparison in docs/REACHABILITY.md ("Straight line or network:
    /// central Helsinki"): both travel models with the default parameters, printed as
    /// Markdown, and the checks a reader of that table would make.
    @Test func straightLineAndNetworkModelsCompareOnHelsinki() throws {
        let sample = try HelsinkiSample.load()
        let walks = try HelsinkiSample.walks(sample)
        let all = walks.map { $0.networkMeters / $0.straightMeters }.sorted()
        let far = walks.filter { $0.straightMeters >= 200 }.map { $0.networkMeters / $0.straightMeters }.sorted()

        var lines = ["| ratio network / straight line | places | p10 | p25 | median | p75 | p90 | max | share <= 1.3 | share 1.1-2.0 |",
                     "|---|---|---|---|---|---|---|---|---|---|"]
        for (label, ratios) in [("all places", all), ("places >= 200 m away", far)] {
            let atMost = ratios.filter { $0 <= 1.3 }.count
            let within = ratios.filter { (1.1...2.0).contains($0) }.count
            let cells = [0.1, 0.25, 0.5, 0.75, 0.9].map { format(HelsinkiSample.quantile(ratios, $0), 2) }
            lines.append("| \(label) | \(ratios.count) | " + cells.joined(separator: " | ")
                         + " | \(format(ratios.last!, 2)) | \(percent(atMost, ratios.count)) | \(percent(within, ratios.count)) |")
        }
        lines.append("")
        // The straight line at the default detour factor (1.5) and at 1.3, the factor of the
        // literature that the default was before this comparison.
        let factor = ReachabilityParameters().detourFactor
        lines.append("| remaining min | radius straight / network (m) | reachable straight | reachable network | both | straight only | network only | straight, detour 1.3 | straight only, detour 1.3 |")
        lines.append("|---|---|---|---|---|---|---|---|---|")

        var previous = (straight: -1, network: -1)
        for remaining in [45.0, 60, 90] {
            let straight = try Reachability.evaluate(from: sample.station, remainingMinutes: remaining,
                                                     candidates: sample.places, travel: .straightLine())
            let network = try Reachability.evaluate(from: sample.station, remainingMinutes: remaining,
                                                    candidates: sample.places, travel: .network(sample.network))
            let shorter = try Reachability.evaluate(from: sample.station, remainingMinutes: remaining,
                                                    candidates: sample.places,
                                                    parameters: ReachabilityParameters(detourFactor: 1.3))
            let straightSet = Set(straight.reachable.map(\.index))
            let networkSet = Set(network.reachable.map(\.index))
            let shorterSet = Set(shorter.reachable.map(\.index))
            lines.append("| \(Int(remaining)) | \(format(straight.searchRadiusMeters, 0)) / \(format(network.searchRadiusMeters, 0)) "
                         + "| \(straightSet.count) | \(networkSet.count) | \(straightSet.intersection(networkSet).count) "
                         + "| \(straightSet.subtracting(networkSet).count) | \(networkSet.subtracting(straightSet).count) "
                         + "| \(shorterSet.count) | \(shorterSet.subtracting(networkSet).count) |")
            // What the default is for: fewer places that do not fit when walked along the
            // streets than at 1.3, and at most one in eight of the list.
            let promised = straightSet.subtracting(networkSet).count
            #expect(promised < shorterSet.subtracting(networkSet).count, "at \(remaining) minutes")
            #expect(Double(promised) <= 0.125 * Double(straightSet.count), "\(promised) of \(straightSet.count) at \(remaining) minutes")

            // More time never loses a place.
            #expect(straightSet.count >= previous.straight && networkSet.count >= previous.network)
            previous = (straightSet.count, networkSet.count)
            // The network model walks exactly the routes computed above; no place is cut off.
            for place in network.reachable {
                let walk = walks[place.index]
                #expect(abs(place.distanceMetersEachWay - walk.networkMeters) < 1e-6)
            }
            #expect(network.unreachable.allSatisfy { $0.reason != .notConnected })
            // The models differ only in the walk: where the route is at most the detour factor
            // times the straight line, the network reaches whatever the straight line does;
            // where it is longer, the other way round.
            for index in straightSet where walks[index].networkMeters <= factor * walks[index].straightMeters {
                #expect(networkSet.contains(index), "\(sample.names[index])")
            }
            for index in networkSet where walks[index].networkMeters >= factor * walks[index].straightMeters {
                #expect(straightSet.contains(index), "\(sample.names[index])")
            }
        }
        let stationSnap = sample.network.nearestNode(to: sample.station).distanceMeters
        let snaps = sample.places.map { sample.network.nearestNode(to: $0.coordinate).distanceMeters }.sorted()
        lines.append("")
        lines.append("snap legs: station \(format(stationSnap, 1)) m; places median \(format(HelsinkiSample.quantile(snaps, 0.5), 1)) m, "
                     + "p95 \(format(HelsinkiSample.quantile(snaps, 0.95), 1)) m, max \(format(snaps.last!, 1)) m")
        print(lines.joined(separator: "\n"))
    }

    private func format(_ value: Double, _ digits: Int) -> String {
        let scale = pow(10, Double(digits))
        let rounded = (value * scale).rounded() / scale
        return digits == 0 ? String(Int(rounded)) : String(format: "%.\(digits)f", rounded)
    }

    private func percent(_ count: Int, _ total: Int) -> String {
        "\(Int((100 * Double(count) / Double(total)).rounded())) %"
    }
}
