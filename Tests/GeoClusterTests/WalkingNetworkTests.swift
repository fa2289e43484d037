import GeoClusterTestSupport
import Testing
import GeoCluster
import GeoReachability

/// A river along the equator, crossed by one bridge 1 km east of the station:
///
///     E --50-- F                       (an island, no path to the rest)
///
///     D ------------1000------------ C      north bank, y = +100 m
///     ~~~~~~~~~~~~ river ~~~~~~~~~~~ |200   (the bridge)
///     A ------------1000------------ B      south bank, y = -100 m
///
/// A and D are 200 m apart in a straight line but 2200 m apart on foot.
enum RiverFixture {
    static let a = 0, b = 1, c = 2, d = 3, e = 4, f = 5

    /// The position `eastMeters`, `northMeters` from (0, 0) on the mean sphere; near the
    /// equator these are great-circle distances to within micrometres.
    static func at(eastMeters: Double, northMeters: Double) -> Coordinate {
        let degreesPerMeter = 180 / (Double.pi * GreatCircle.meanEarthRadiusMeters)
        return Coordinate(longitude: eastMeters * degreesPerMeter, latitude: northMeters * degreesPerMeter)
    }

    static let nodes = [
        at(eastMeters: 0, northMeters: -100),     // A
        at(eastMeters: 1_000, northMeters: -100), // B
        at(eastMeters: 1_000, northMeters: 100),  // C
        at(eastMeters: 0, northMeters: 100),      // D
        at(eastMeters: 0, northMeters: 300),      // E
        at(eastMeters: 50, northMeters: 300),     // F
    ]

    static func network() throws -> WalkingNetwork {
        try WalkingNetwork(nodes: nodes, edges: [
            .init(from: a, to: b, lengthMeters: 1_000),
            .init(from: b, to: c, lengthMeters: 200),
            .init(from: c, to: d, lengthMeters: 1_000),
            .init(from: e, to: f, lengthMeters: 50),
        ])
    }
}

struct WalkingNetworkTests {
    // MARK: Construction

    @Test func buildsCompressedRowsWithBothDirectionsOfEachEdge() throws {
        let network = try RiverFixture.network()
        #expect(network._checkInvariants())
        #expect(network.nodeCount == 6)
        #expect(network.edgeCount == 4)
        #expect(network.edgeStart == [0, 1, 3, 5, 6, 7, 8])
        #expect(network.edgeTarget == [1, 0, 2, 1, 3, 2, 5, 4])
        #expect(network.edgeLengthMeters == [1_000, 1_000, 200, 200, 1_000, 1_000, 50, 50])
        #expect(network.componentOfNode == [0, 0, 0, 0, 4, 4])
        #expect(network.areConnected(RiverFixture.a, RiverFixture.d))
        #expect(!network.areConnected(RiverFixture.a, RiverFixture.e))
    }

    @Test func acceptsLoopsParallelEdgesZeroLengthsAndIsolatedNodes() throws {
        let nodes = (0..<3).map { RiverFixture.at(eastMeters: Double($0) * 10, northMeters: 0) }
        let network = try WalkingNetwork(nodes: nodes, edges: [
            .init(from: 0, to: 0, lengthMeters: 5),
            .init(from: 0, to: 1, lengthMeters: 7),
            .init(from: 1, to: 0, lengthMeters: 3),
            .init(from: 1, to: 1, lengthMeters: 0),
        ])
        #expect(network._checkInvariants())
        #expect(network.edgeStart == [0, 4, 8, 8])
        #expect(network.componentOfNode == [0, 0, 2])
        #expect(try network.shortestDistancesMeters(from: 0) == [0, 3, .infinity])
    }

    @Test func rejectsEmptyNetworksAndBadNodes() {
        #expect(throws: GeoClusterError.invalidWalkingNetwork(reason: "a walking network needs at least one node")) {
            try WalkingNetwork(nodes: [], edges: [])
        }
        let nodes = [Coordinate(longitude: 0, latitude: 0), Coordinate(longitude: 1, latitude: 0),
                     Coordinate(longitude: 2, latitude: 91)]
        #expect(throws: GeoClusterError.invalidCoordinate(field: "lat", value: 91, reason: "is outside [-90, 90]", index: 2)) {
            try WalkingNetwork(nodes: nodes, edges: [])
        }
    }

    @Test func rejectsEdgesNamingMissingNodes() {
        let nodes = Array(RiverFixture.nodes.prefix(4))
        #expect(throws: GeoClusterError.networkNodeOutOfRange(node: 4, nodeCount: 4, edge: 1)) {
            try WalkingNetwork(nodes: nodes, edges: [.init(from: 0, to: 1, lengthMeters: 1),
                                                     .init(from: 2, to: 4, lengthMeters: 1)])
        }
        #expect(throws: GeoClusterError.networkNodeOutOfRange(node: -1, nodeCount: 4, edge: 0)) {
            try WalkingNetwork(nodes: nodes, edges: [.init(from: -1, to: 1, lengthMeters: 1)])
        }
    }

    @Test func rejectsNegativeAndNonFiniteLengths() {
        let nodes = Array(RiverFixture.nodes.prefix(2))
        #expect(throws: GeoClusterError.invalidEdgeLength(edge: 1, lengthMeters: -0.5, reason: "is negative")) {
            try WalkingNetwork(nodes: nodes, edges: [.init(from: 0, to: 1, lengthMeters: 1),
                                                     .init(from: 1, to: 0, lengthMeters: -0.5)])
        }
        #expect(throws: GeoClusterError.invalidEdgeLength(edge: 0, lengthMeters: .infinity, reason: "is not a finite number")) {
            try WalkingNetwork(nodes: nodes, edges: [.init(from: 0, to: 1, lengthMeters: .infinity)])
        }
        do {
            _ = try WalkingNetwork(nodes: nodes, edges: [.init(from: 0, to: 1, lengthMeters: .nan)])
            Issue.record("NaN length accepted")
        } catch {
            #expect(error.code == "invalid_edge_length")
            #expect(error.description.contains("edge 0"))
        }
    }

    // MARK: The JSON document

    @Test func readsTheNetworkDocumentFormat() throws {
        let document = """
            {"format": "geo-cluster-walking-network", "version": 1, "license": "CC0-1.0",
             "nodes": [[101, 0, 0], [-1, 0.001, 0], [102, 0.001, 0.001]],
             "edges": [[0, 1, 111.5], [1, 2, 111.2], [2, 2, 0]]}
            """
        let network = try WalkingNetwork(json: Array(document.utf8))
        #expect(network._checkInvariants())
        #expect(network.nodes == [Coordinate(longitude: 0, latitude: 0), Coordinate(longitude: 0.001, latitude: 0),
                                  Coordinate(longitude: 0.001, latitude: 0.001)])
        #expect(network.edgeCount == 3)
        #expect(try network.shortestDistancesMeters(from: 0) == [0, 111.5, 222.7])
    }

    @Test func rejectsDocumentsNotInTheFormat() {
        func reason(_ text: String) -> String? {
            do {
                _ = try WalkingNetwork(json: Array(text.utf8))
                return nil
            } catch {
                guard case let .invalidWalkingNetwork(reason) = error else { return "other: \(error)" }
                return reason
            }
        }
        let head = #""format":"geo-cluster-walking-network","version":1"#
        #expect(reason("{")?.hasPrefix("not JSON: ") == true)
        #expect(reason(#"{"format":"geojson","version":1,"nodes":[],"edges":[]}"#)
                == #""format" must be "geo-cluster-walking-network""#)
        #expect(reason(#"{"format":"geo-cluster-walking-network","version":2,"nodes":[],"edges":[]}"#)
                == #""version" must be 1"#)
        #expect(reason("{\(head),\"edges\":[]}") == #""nodes" must be an array"#)
        #expect(reason("{\(head),\"nodes\":[[1,0,0]]}") == #""edges" must be an array"#)
        #expect(reason("{\(head),\"nodes\":[[1,0,0],[2,\"0\",0]],\"edges\":[]}")
                == "nodes[1] must be [id, lon, lat] with numeric lon and lat")
        #expect(reason("{\(head),\"nodes\":[[1,0,0],[2,0,0]],\"edges\":[[0,1.5,3]]}")
                == "edges[0] must be [from, to, length_m] with integer ends")
        #expect(reason("{\(head),\"nodes\":[],\"edges\":[]}") == "a walking network needs at least one node")
        // Graph errors come from init(nodes:edges:) unchanged.
        #expect(throws: GeoClusterError.networkNodeOutOfRange(node: 2, nodeCount: 2, edge: 0)) {
            try WalkingNetwork(json: Array("{\(head),\"nodes\":[[1,0,0],[2,0,0]],\"edges\":[[0,2,1]]}".utf8))
        }
        #expect(throws: GeoClusterError.invalidCoordinate(field: "lat", value: 91, reason: "is outside [-90, 90]", index: 0)) {
            try WalkingNetwork(json: Array("{\(head),\"nodes\":[[1,0,91]],\"edges\":[]}".utf8))
        }
    }

    // MARK: Shortest paths

    @Test func networkDistancesFollowTheBridge() throws {
        let network = try RiverFixture.network()
        let distances = try network.shortestDistancesMeters(from: RiverFixture.a)
        #expect(distances == [0, 1_000, 1_200, 2_200, .infinity, .infinity])
        let fromIsland = try network.shortestDistancesMeters(from: RiverFixture.f)
        #expect(fromIsland == [.infinity, .infinity, .infinity, .infinity, 50, 0])
    }

    @Test func theDistanceCapIsInclusiveAndHidesEverythingBeyondIt() throws {
        let network = try RiverFixture.network()
        let inf = Double.infinity
        #expect(try network.shortestDistancesMeters(from: 0, maxDistanceMeters: 2_199) == [0, 1_000, 1_200, inf, inf, inf])
        #expect(try network.shortestDistancesMeters(from: 0, maxDistanceMeters: 1_200) == [0, 1_000, 1_200, inf, inf, inf])
        #expect(try network.shortestDistancesMeters(from: 0, maxDistanceMeters: 1_199.999) == [0, 1_000, inf, inf, inf, inf])
        #expect(try network.shortestDistancesMeters(from: 0, maxDistanceMeters: 0) == [0, inf, inf, inf, inf, inf])
    }

    @Test func aTreeGrownToTargetsStopsOnceTheyAreSettled() throws {
        let network = try RiverFixture.network()
        let inf = Double.infinity
        let a = RiverFixture.a, b = RiverFixture.b, c = RiverFixture.c, d = RiverFixture.d
        // C (1,200 m) was queued when B settled; D (2,200 m) when C did: not yet shortest.
        let toB = try network.pathTree(from: a, reaching: [b])
        #expect(toB.distanceMeters == [0, 1_000, inf, inf, inf, inf])
        #expect(toB.path(to: b) == [a, b])
        #expect(toB.path(to: c) == nil)
        let toBAndC = try network.pathTree(from: a, reaching: [c, b, c])
        #expect(toBAndC.distanceMeters == [0, 1_000, 1_200, inf, inf, inf])
        // A target on the island is never settled, and does not keep the search going.
        let toIsland = try network.pathTree(from: a, reaching: [RiverFixture.f])
        #expect(toIsland.distanceMeters == [0, inf, inf, inf, inf, inf])
        let toD = try network.pathTree(from: a, reaching: [RiverFixture.e, d])
        #expect(toD.distanceMeters == [0, 1_000, 1_200, 2_200, inf, inf])
        #expect(toD.path(to: d) == [a, b, c, d])
        #expect(throws: GeoClusterError.networkNodeOutOfRange(node: 6, nodeCount: 6, edge: nil)) {
            try network.pathTree(from: a, reaching: [b, 6])
        }
    }

    @Test func routesDrawAPlaceTheirTreesWereNotGrownTo() throws {
        let network = try RiverFixture.network()
        let travel = ReachabilityTravelModel.network(network)
        let station = RiverFixture.nodes[RiverFixture.a]
        let toB = try VisitRoutes(travel: travel, start: station, station: station,
                                  places: [RiverFixture.nodes[RiverFixture.b]])
        let toD = try VisitRoutes(travel: travel, start: station, station: station,
                                  places: [RiverFixture.nodes[RiverFixture.d]])
        let farBank = RiverFixture.nodes[RiverFixture.d]
        let line = try #require(toB.line(to: farBank))
        #expect(line == toD.line(to: farBank))
        #expect(line == [0, 1, 2, 3, 2, 1, 0].map { RiverFixture.nodes[$0] })
        #expect(toB.line(to: RiverFixture.nodes[RiverFixture.f]) == nil)
    }

    @Test func rejectsUnknownSourcesAndBadCaps() throws {
        let network = try RiverFixture.network()
        #expect(throws: GeoClusterError.networkNodeOutOfRange(node: 6, nodeCount: 6, edge: nil)) {
            try network.shortestDistancesMeters(from: 6)
        }
        #expect(throws: GeoClusterError.networkNodeOutOfRange(node: -1, nodeCount: 6, edge: nil)) {
            try network.shortestDistancesMeters(from: -1)
        }
        #expect(throws: GeoClusterError.invalidReachabilityParameter(
            name: "maxDistanceMeters", value: -1, reason: "must be a non-negative number of metres")) {
            try network.shortestDistancesMeters(from: 0, maxDistanceMeters: -1)
        }
        do {
            _ = try network.shortestDistancesMeters(from: 0, maxDistanceMeters: .nan)
            Issue.record("NaN cap accepted")
        } catch {
            #expect(error.code == "invalid_reachability_parameter")
        }
    }

    /// Bellman-Ford relaxes every edge both ways `n - 1` times: slow, obviously right.
    private func bellmanFord(nodeCount: Int, edges: [WalkingNetwork.Edge], source: Int) -> [Double] {
        var distance = [Double](repeating: .infinity, count: nodeCount)
        distance[source] = 0
        for _ in 0..<max(1, nodeCount - 1) {
            var changed = false
            for edge in edges {
                if distance[edge.from] + edge.lengthMeters < distance[edge.to] {
                    distance[edge.to] = distance[edge.from] + edge.lengthMeters
                    changed = true
                }
                if distance[edge.to] + edge.lengthMeters < distance[edge.from] {
                    distance[edge.from] = distance[edge.to] + edge.lengthMeters
                    changed = true
                }
            }
            if !changed { break }
        }
        return distance
    }

    @Test(arguments: [(UInt64(11), true), (UInt64(12), false)])
    func dijkstraMatchesBellmanFordOnRandomGraphs(seed: UInt64, integerLengths: Bool) throws {
        var random = SeededRandom(seed: seed)
        for _ in 0..<300 {
            let nodeCount = 1 + Int(random.unit() * 40)
            let edgeCount = Int(random.unit() * Double(3 * nodeCount))
            let nodes = (0..<nodeCount).map { _ in
                Coordinate(longitude: random.between(126.9, 127.1), latitude: random.between(37.4, 37.6))
            }
            var edges: [WalkingNetwork.Edge] = []
            for _ in 0..<edgeCount {
                let from = Int(random.unit() * Double(nodeCount))
                let to = Int(random.unit() * Double(nodeCount))
                let length = integerLengths ? Double(Int(random.unit() * 101)) : random.between(0, 100)
                edges.append(.init(from: from, to: to, lengthMeters: length))
            }
            let network = try WalkingNetwork(nodes: nodes, edges: edges)
            #expect(network._checkInvariants())
            let source = Int(random.unit() * Double(nodeCount))
            let cap = random.unit() < 0.3 ? Double.infinity : random.between(0, 250)
            let expected = bellmanFord(nodeCount: nodeCount, edges: edges, source: source)
            let found = try network.shortestDistancesMeters(from: source, maxDistanceMeters: cap)
            for node in 0..<nodeCount {
                let want = expected[node] <= cap ? expected[node] : .infinity
                if integerLengths || want.isInfinite {
                    #expect(found[node] == want, "node \(node) of \(nodeCount), cap \(cap)")
                } else {
                    #expect(abs(found[node] - want) <= 1e-9 * want, "node \(node) of \(nodeCount), cap \(cap)")
                }
                if expected[node].isFinite {
                    #expect(network.areConnected(source, node))
                } else {
                    #expect(!network.areConnected(source, node))
                }
            }
        }
    }

    @Test(arguments: [UInt64(21), UInt64(22)])
    func treesGrownToTargetsAreTheWholeTreesAsFarAsTheFarthestTarget(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var stoppedShort = 0
        for _ in 0..<300 {
            let nodeCount = 1 + Int(random.unit() * 60)
            let nodes = (0..<nodeCount).map { _ in
                Coordinate(longitude: random.between(126.9, 127.1), latitude: random.between(37.4, 37.6))
            }
            let edges = (0..<Int(random.unit() * Double(3 * nodeCount))).map { _ in
                WalkingNetwork.Edge(from: Int(random.unit() * Double(nodeCount)), to: Int(random.unit() * Double(nodeCount)),
                                    lengthMeters: random.between(0, 100))
            }
            let network = try WalkingNetwork(nodes: nodes, edges: edges)
            let source = Int(random.unit() * Double(nodeCount))
            let targets = (0..<Int(random.unit() * 4)).map { _ in Int(random.unit() * Double(nodeCount)) }
            let whole = try network.pathTree(from: source)
            let grown = try network.pathTree(from: source, reaching: targets)
            let farthest = targets.map { whole.distanceMeters[$0] }.filter(\.isFinite).max() ?? 0
            for node in 0..<nodeCount {
                if grown.distanceMeters[node].isFinite {
                    // Exact where finite, with the whole tree's path, and never beyond the targets.
                    #expect(grown.distanceMeters[node] == whole.distanceMeters[node])
                    #expect(grown.path(to: node) == whole.path(to: node))
                    #expect(grown.distanceMeters[node] <= farthest)
                } else {
                    #expect(!targets.contains(node) || !network.areConnected(source, node))
                    #expect(!(whole.distanceMeters[node] < farthest), "node \(node) nearer than a target")
                    if whole.distanceMeters[node].isFinite { stoppedShort += 1 }
                }
            }
        }
        #expect(stoppedShort > 1_000, "the searches stopped before the whole component \(stoppedShort) times")
    }

    // MARK: Snapping

    /// The brute-force nearest node: smallest distance, then smallest index.
    private func bruteNearest(_ nodes: [Coordinate], _ point: Coordinate) -> (node: Int, distanceMeters: Double) {
        var best = (node: -1, distanceMeters: Double.infinity)
        for (i, node) in nodes.enumerated() {
            let d = GreatCircle.haversineMeters(from: point, to: node)
            if d < best.distanceMeters { best = (i, d) }
        }
        return best
    }

    private func checkSnapping(nodes: [Coordinate], queries: [Coordinate]) throws {
        let network = try WalkingNetwork(nodes: nodes, edges: [])
        for query in queries {
            let found = network.nearestNode(to: query)
            let expected = bruteNearest(nodes, query)
            #expect(found.node == expected.node && found.distanceMeters == expected.distanceMeters,
                    "query \(query)")
        }
    }

    @Test func snapsToTheSameNodeAsABruteForceScan() throws {
        var random = SeededRandom(seed: 21)
        let nodes = (0..<3_000).map { _ in
            Coordinate(longitude: random.between(126.0, 129.5), latitude: random.between(34.0, 38.5))
        }
        // Queries inside the cloud, at its edges and far outside it.
        let queries = (0..<400).map { _ in
            Coordinate(longitude: random.between(124.0, 131.5), latitude: random.between(32.0, 40.5))
        } + [Coordinate(longitude: -70, latitude: -30), Coordinate(longitude: 127, latitude: 80)]
        try checkSnapping(nodes: nodes, queries: queries)
    }

    @Test func snapsAcrossTheAntimeridianAndNearThePoles() throws {
        var random = SeededRandom(seed: 22)
        var nodes = (0..<500).map { _ in
            let longitude = random.unit() < 0.5 ? random.between(179.9, 180) : random.between(-180, -179.9)
            return Coordinate(longitude: longitude, latitude: random.between(-17, -16.9))
        }
        nodes += (0..<200).map { _ in
            Coordinate(longitude: random.between(-180, 180), latitude: random.between(87, 90))
        }
        var queries = (0..<200).map { _ in
            let longitude = random.unit() < 0.5 ? random.between(179.95, 180) : random.between(-180, -179.95)
            return Coordinate(longitude: longitude, latitude: random.between(-17, -16.9))
        }
        queries += (0..<100).map { _ in
            Coordinate(longitude: random.between(-180, 180), latitude: random.between(86, 90))
        }
        try checkSnapping(nodes: nodes, queries: queries)
    }

    @Test func prefersTheLowestIndexAmongEquallyNearNodes() throws {
        let spot = RiverFixture.at(eastMeters: 10, northMeters: 0)
        let network = try WalkingNetwork(nodes: [RiverFixture.at(eastMeters: 500, northMeters: 0), spot, spot], edges: [])
        let found = network.nearestNode(to: spot)
        #expect(found.node == 1 && found.distanceMeters == 0)
    }

    // MARK: Distances

    @Test func haversineMatchesHandComputedArcs() {
        let origin = Coordinate(longitude: 0, latitude: 0)
        let radius = GreatCircle.meanEarthRadiusMeters
        #expect(GreatCircle.haversineMeters(from: origin, to: origin) == 0)
        let oneDegreeNorth = GreatCircle.haversineMeters(from: origin, to: Coordinate(longitude: 0, latitude: 1))
        #expect(abs(oneDegreeNorth - radius * Double.pi / 180) < 1e-6)
        let antipode = GreatCircle.haversineMeters(from: origin, to: Coordinate(longitude: 180, latitude: 0))
        #expect(abs(antipode - radius * Double.pi) < 1e-6)
        // Across the antimeridian: 0.2 degrees of longitude on the equator.
        let across = GreatCircle.haversineMeters(from: Coordinate(longitude: 179.9, latitude: 0),
                                                  to: Coordinate(longitude: -179.9, latitude: 0))
        #expect(abs(across - radius * 0.2 * Double.pi / 180) < 1e-6)
    }
}
