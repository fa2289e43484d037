import GeoCluster
import GeoClusterWire

/// An undirected graph of footpaths: nodes at WGS84 positions and edges with lengths in
/// metres, frozen into compressed sparse rows (CSR) so that a search touches only flat arrays.
///
/// The network model of reachability walks a place's route along it, which matters where
/// the straight line crosses a river, a railway or a motorway. Edge lengths are taken as
/// given (measured along the path); they should be at least the great-circle distance
/// between their ends, which is what lets reachability skip places beyond a straight-line
/// radius without searching the graph.
///
/// Invariants (checked by `_checkInvariants()`): `edgeStart` has `nodeCount + 1` entries,
/// starts at 0, never decreases and ends at `edgeTarget.count`; the half-edges of node `u`
/// are `edgeStart[u]..<edgeStart[u + 1]`, each input edge appears once from each end (a
/// loop twice at its node), and every target lies in `0..<nodeCount`.
public struct WalkingNetwork: Sendable {
    /// One footpath between two nodes, as given to ``init(nodes:edges:)``.
    public struct Edge: Sendable, Hashable {
        /// Index of one end in the node array.
        public var from: Int
        /// Index of the other end; the edge is walkable both ways.
        public var to: Int
        /// Length along the path in metres, finite and >= 0.
        public var lengthMeters: Double

        public init(from: Int, to: Int, lengthMeters: Double) {
            self.from = from
            self.to = to
            self.lengthMeters = lengthMeters
        }
    }

    /// Position of each node.
    public let nodes: [Coordinate]
    /// CSR offsets: the half-edges leaving node `u` are `edgeStart[u]..<edgeStart[u + 1]`.
    public let edgeStart: [Int32]
    /// The node each half-edge leads to.
    public let edgeTarget: [Int32]
    /// The length in metres of each half-edge (that of its input edge).
    public let edgeLengthMeters: [Double]
    /// A label per node, equal for two nodes exactly when a path joins them; lets an answer
    /// say "not connected" instead of "too far" without searching the whole graph.
    public let componentOfNode: [Int32]
    /// The nodes at their Web Mercator positions, for snapping.
    private let tree: KDTree

    /// Number of nodes.
    public var nodeCount: Int { nodes.count }
    /// Number of undirected edges (each is stored as two half-edges).
    public var edgeCount: Int { edgeTarget.count / 2 }

    /// Builds the network, checking every input: node positions valid WGS84 coordinates
    /// (``GeoClusterError/invalidCoordinate(field:value:reason:index:)`` with the node's
    /// index), at least one node, edge ends in `0..<nodes.count`
    /// (``GeoClusterError/networkNodeOutOfRange(node:nodeCount:edge:)``), lengths finite and
    /// non-negative (``GeoClusterError/invalidEdgeLength(edge:lengthMeters:reason:)``), and
    /// sizes that 32-bit indices address. Loops and parallel edges are allowed.
    public init(nodes: [Coordinate], edges: [Edge]) throws(GeoClusterError) {
        guard !nodes.isEmpty else {
            throw .invalidWalkingNetwork(reason: "a walking network needs at least one node")
        }
        guard nodes.count < Int(Int32.max) else {
            throw .invalidWalkingNetwork(reason: "\(nodes.count) nodes exceed 32-bit indices")
        }
        guard edges.count <= Int(Int32.max) / 2 else {
            throw .invalidWalkingNetwork(reason: "\(edges.count) edges exceed 32-bit indices")
        }
        for (i, node) in nodes.enumerated() {
            _ = try Coordinate.validated(longitude: node.longitude, latitude: node.latitude, index: i)
        }
        let nodeCount = nodes.count
        var degree = [Int32](repeating: 0, count: nodeCount + 1)
        for (e, edge) in edges.enumerated() {
            guard (0..<nodeCount).contains(edge.from) else {
                throw .networkNodeOutOfRange(node: edge.from, nodeCount: nodeCount, edge: e)
            }
            guard (0..<nodeCount).contains(edge.to) else {
                throw .networkNodeOutOfRange(node: edge.to, nodeCount: nodeCount, edge: e)
            }
            guard edge.lengthMeters.isFinite else {
                throw .invalidEdgeLength(edge: e, lengthMeters: edge.lengthMeters, reason: "is not a finite number")
            }
            guard edge.lengthMeters >= 0 else {
                throw .invalidEdgeLength(edge: e, lengthMeters: edge.lengthMeters, reason: "is negative")
            }
            degree[edge.from + 1] += 1
            degree[edge.to + 1] += 1
        }
        // Prefix sums turn degrees into row offsets; a second pass fills each row in input order.
        for u in 0..<nodeCount { degree[u + 1] += degree[u] }
        var next = degree
        var edgeTarget = [Int32](repeating: 0, count: 2 * edges.count)
        var edgeLengthMeters = [Double](repeating: 0, count: 2 * edges.count)
        for edge in edges {
            let forward = Int(next[edge.from])
            edgeTarget[forward] = Int32(edge.to)
            edgeLengthMeters[forward] = edge.lengthMeters
            next[edge.from] += 1
            let backward = Int(next[edge.to])
            edgeTarget[backward] = Int32(edge.from)
            edgeLengthMeters[backward] = edge.lengthMeters
            next[edge.to] += 1
        }
        self.nodes = nodes
        self.edgeStart = degree
        self.edgeTarget = edgeTarget
        self.edgeLengthMeters = edgeLengthMeters
        self.componentOfNode = Self.components(edgeStart: degree, edgeTarget: edgeTarget)
        self.tree = KDTree(x: nodes.map { WebMercator.x(longitude: $0.longitude) },
                           y: nodes.map { WebMercator.y(latitude: $0.latitude) },
                           nodeSize: 16)
    }

    /// Whether a path joins nodes `a` and `b`, both in `0..<nodeCount`.
    public func areConnected(_ a: Int, _ b: Int) -> Bool {
        componentOfNode[a] == componentOfNode[b]
    }

    /// Labels connected components by breadth-first search over the rows; a node's label is
    /// the smallest node index of its component.
    private static func components(edgeStart: [Int32], edgeTarget: [Int32]) -> [Int32] {
        let nodeCount = edgeStart.count - 1
        var label = [Int32](repeating: -1, count: nodeCount)
        var queue = [Int32](repeating: 0, count: nodeCount)
        for root in 0..<nodeCount where label[root] < 0 {
            label[root] = Int32(root)
            queue[0] = Int32(root)
            var head = 0
            var tail = 1
            while head < tail {
                let u = Int(queue[head])
                head += 1
                for slot in Int(edgeStart[u])..<Int(edgeStart[u + 1]) {
                    let v = Int(edgeTarget[slot])
                    if label[v] < 0 {
                        label[v] = Int32(root)
                        queue[tail] = Int32(v)
                        tail += 1
                    }
                }
            }
        }
        return label
    }
}

// MARK: - Snapping

extension WalkingNetwork {
    /// The node nearest to `point` by great-circle distance
    /// (``GreatCircle/haversineMeters(from:to:)``), and that distance in metres; ties go to
    /// the lowest node index.
    ///
    /// The kd-tree over Web Mercator positions proposes candidates: a search of growing
    /// radius finds some node, whose distance `d` then bounds a second, exact search. Every
    /// node within `d` of `point` lies within Mercator distance `d·sec(φmax)/(2πR)` of it,
    /// where `φmax` is the largest latitude within `d` (Mercator scales lengths by `sec φ`),
    /// so the second search misses none. Within about a degree of a pole, where that bound
    /// degenerates, every node is scanned instead.
    ///
    /// Reachability walks the snap distance in a straight line (no detour factor) at both
    /// ends of a route, so a network with nodes every few tens of metres keeps that leg short.
    public func nearestNode(to point: Coordinate) -> (node: Int, distanceMeters: Double) {
        let qx = WebMercator.x(longitude: point.longitude)
        let qy = WebMercator.y(latitude: point.latitude)
        var found: [UInt32] = []
        var radius = Self.initialSnapRadius
        while found.isEmpty {
            guard radius < Self.largestSnapRadius else { return nearestByScan(to: point) }
            collectWithin(x: qx, y: qy, radius: radius, into: &found)
            radius *= 8
        }
        var best = nearest(among: found, to: point)
        guard let bound = Self.mercatorRadius(enclosingMeters: best.distanceMeters, around: point.latitude),
              bound < Self.largestSnapRadius
        else { return nearestByScan(to: point) }
        found.removeAll(keepingCapacity: true)
        collectWithin(x: qx, y: qy, radius: bound, into: &found)
        let exact = nearest(among: found, to: point)
        if exact.distanceMeters < best.distanceMeters
            || (exact.distanceMeters == best.distanceMeters && exact.node < best.node) {
            best = exact
        }
        return best
    }

    /// First snap search radius in Mercator units: about 40 m at the equator.
    private static let initialSnapRadius = 1e-6
    /// Beyond a quarter of the world a scan is as cheap as the tree and avoids double wraps.
    private static let largestSnapRadius = 0.25
    /// Covers the `Float` rounding of the tree's stored positions (at most 2^-25 per axis in
    /// [0, 1]) and the rounding of the projection itself.
    private static let floatPaddingMercator = 1e-7

    /// The Mercator radius around a point at `latitudeDegrees` that holds every point within
    /// `meters` on the sphere, or nil near a pole where `sec φ` grows without bound.
    private static func mercatorRadius(enclosingMeters meters: Double, around latitudeDegrees: Double) -> Double? {
        let angle = meters / GreatCircle.meanEarthRadiusMeters
        let largestLatitude = abs(latitudeDegrees) * Double.pi / 180 + angle
        guard largestLatitude < 89 * Double.pi / 180 else { return nil }
        return angle / (2 * Double.pi * CMath.cos(largestLatitude)) + floatPaddingMercator
    }

    /// Nodes within `radius` of `(x, y)` in Mercator units, looking across the antimeridian
    /// (x = 0 and x = 1 are the same meridian) when the circle reaches it.
    private func collectWithin(x: Double, y: Double, radius: Double, into found: inout [UInt32]) {
        tree.within(x: x, y: y, radius: radius, into: &found)
        if x + radius > 1 { tree.within(x: x - 1, y: y, radius: radius, into: &found) }
        if x - radius < 0 { tree.within(x: x + 1, y: y, radius: radius, into: &found) }
    }

    private func nearest(among ids: [UInt32], to point: Coordinate) -> (node: Int, distanceMeters: Double) {
        var best = (node: Int.max, distanceMeters: Double.infinity)
        for id in ids {
            let node = Int(id)
            let d = GreatCircle.haversineMeters(from: point, to: nodes[node])
            if d < best.distanceMeters || (d == best.distanceMeters && node < best.node) {
                best = (node, d)
            }
        }
        return best
    }

    private func nearestByScan(to point: Coordinate) -> (node: Int, distanceMeters: Double) {
        var best = (node: 0, distanceMeters: Double.infinity)
        for node in nodes.indices {
            let d = GreatCircle.haversineMeters(from: point, to: nodes[node])
            if d < best.distanceMeters { best = (node, d) }
        }
        return best
    }
}

// MARK: - Shortest paths

extension WalkingNetwork {
    /// Network distances in metres from `source` to every node: Dijkstra's algorithm with a
    /// binary heap whose frontier stops at `maxDistanceMeters`: nothing beyond the cap is ever
    /// queued, so the search ends once every node within it is settled.
    ///
    /// The cap keeps a query proportional to the area a traveller could cover rather than to
    /// the whole city: entries are exact for every node at most `maxDistanceMeters` away
    /// (inclusive) and `.infinity` for the others, whether they are farther or unreachable.
    /// - Parameters:
    ///   - source: a node index in `0..<nodeCount`.
    ///   - maxDistanceMeters: `>= 0`; `.infinity` (the default) searches the whole component.
    public func shortestDistancesMeters(
        from source: Int, maxDistanceMeters: Double = .infinity
    ) throws(GeoClusterError) -> [Double] {
        guard (0..<nodeCount).contains(source) else {
            throw .networkNodeOutOfRange(node: source, nodeCount: nodeCount, edge: nil)
        }
        guard maxDistanceMeters >= 0 else {
            throw .invalidReachabilityParameter(name: "maxDistanceMeters", value: maxDistanceMeters,
                                                reason: "must be a non-negative number of metres")
        }
        return distancesMeters(from: source, maxDistanceMeters: maxDistanceMeters)
    }

    /// ``shortestDistancesMeters(from:maxDistanceMeters:)`` for arguments already known good.
    func distancesMeters(from source: Int, maxDistanceMeters: Double) -> [Double] {
        search(from: source, maxDistanceMeters: maxDistanceMeters, recordingPrevious: false).distance
    }

    /// The shortest paths from `source` to the nodes of its component (to all of them, or
    /// as far as the farthest target: ``pathTree(from:reaching:)``): the walk to a node,
    /// for routes.
    public struct PathTree: Sendable {
        public let source: Int
        /// Metres from `source`, exact where finite; `.infinity` for a node in another
        /// component, or one beyond the farthest target of a tree grown to targets.
        public let distanceMeters: [Double]
        /// The node before each on its shortest path; -1 for `source` and unreached nodes.
        let previous: [Int32]

        /// The nodes from `source` to `node`, both included; `nil` when no walk joins them.
        public func path(to node: Int) -> [Int]? {
            guard distanceMeters.indices.contains(node), distanceMeters[node].isFinite else { return nil }
            var nodes = [node]
            var current = node
            while current != source {
                current = Int(previous[current])
                nodes.append(current)
            }
            return nodes.reversed()
        }
    }

    /// The shortest-path tree from `source` over its whole component.
    public func pathTree(from source: Int) throws(GeoClusterError) -> PathTree {
        guard (0..<nodeCount).contains(source) else {
            throw .networkNodeOutOfRange(node: source, nodeCount: nodeCount, edge: nil)
        }
        let (distance, previous) = search(from: source, maxDistanceMeters: .infinity, recordingPrevious: true)
        return PathTree(source: source, distanceMeters: distance, previous: previous)
    }

    /// The shortest-path tree from `source` as far as the farthest of `targets`: the search
    /// stops once every target joined to `source` is settled, so its cost follows the area
    /// the walks cover, not the size of the network. Entries are exact where finite (every
    /// target joined to `source`, and the nodes nearer than the farthest of them) and
    /// `.infinity` elsewhere; the paths are those of ``pathTree(from:)``.
    /// - Parameter targets: node indices in `0..<nodeCount`.
    public func pathTree(from source: Int, reaching targets: [Int]) throws(GeoClusterError) -> PathTree {
        for node in [source] + targets where !(0..<nodeCount).contains(node) {
            throw .networkNodeOutOfRange(node: node, nodeCount: nodeCount, edge: nil)
        }
        let (distance, previous) = search(from: source, maxDistanceMeters: .infinity, targets: targets,
                                          recordingPrevious: true)
        return PathTree(source: source, distanceMeters: distance, previous: previous)
    }

    /// Distances from `source` as far as the farthest of `targets` (node indices already
    /// known good), as ``pathTree(from:reaching:)`` finds them.
    func distancesMeters(from source: Int, reaching targets: [Int]) -> [Double] {
        search(from: source, maxDistanceMeters: .infinity, targets: targets, recordingPrevious: false).distance
    }

    /// Whether `distances`, found from `source`, hold the walk to each of `targets`: a
    /// target not joined to `source` is infinite in any search, one joined to it must be
    /// finite.
    func distances(_ distances: [Double], from source: Int, reach targets: [Int]) -> Bool {
        distances.count == nodeCount
            && targets.allSatisfy { distances[$0].isFinite || !areConnected(source, $0) }
    }

    /// Dijkstra from `source`, capped at `maxDistanceMeters`; the predecessors only when asked.
    /// With `targets`, the search stops once each of them joined to `source` is settled, and
    /// the nodes it had not settled are set back to unreached (`.infinity`, no predecessor),
    /// so that every finite entry stays exact.
    private func search(from source: Int, maxDistanceMeters: Double, targets: [Int]? = nil,
                        recordingPrevious: Bool) -> (distance: [Double], previous: [Int32]) {
        var distance = [Double](repeating: .infinity, count: nodeCount)
        var previous = recordingPrevious ? [Int32](repeating: -1, count: nodeCount) : []
        // 0: not settled; 1: settled; 2: a target not settled yet.
        var state = [UInt8](repeating: 0, count: nodeCount)
        var targetsLeft = 0
        if let targets {
            for target in targets where state[target] == 0 && areConnected(source, target) {
                state[target] = 2
                targetsLeft += 1
            }
            if targetsLeft == 0 {
                distance[source] = 0
                return (distance, previous)
            }
        }
        var heap = DistanceHeap()
        distance[source] = 0
        heap.push(0, Int32(source))
        var stoppedEarly = false
        while let (d, node) = heap.pop() {
            let u = Int(node)
            // A node is pushed again whenever its distance improves; older entries are stale.
            if state[u] == 1 { continue }
            if state[u] == 2 {
                targetsLeft -= 1
                if targetsLeft == 0 {
                    state[u] = 1
                    stoppedEarly = true
                    break
                }
            }
            state[u] = 1
            for slot in Int(edgeStart[u])..<Int(edgeStart[u + 1]) {
                let v = Int(edgeTarget[slot])
                let candidate = d + edgeLengthMeters[slot]
                if candidate < distance[v] && candidate <= maxDistanceMeters {
                    distance[v] = candidate
                    if recordingPrevious { previous[v] = node }
                    heap.push(candidate, Int32(v))
                }
            }
        }
        if stoppedEarly {
            // Tentative distances of nodes in the frontier are not yet shortest.
            for v in 0..<nodeCount where state[v] != 1 && distance[v].isFinite {
                distance[v] = .infinity
                if recordingPrevious { previous[v] = -1 }
            }
        }
        return (distance, previous)
    }

    /// Verifies the CSR invariants and the component labels; for tests.
    public func _checkInvariants() -> Bool {
        guard edgeStart.count == nodeCount + 1, edgeStart.first == 0,
              edgeStart.last.map({ Int($0) }) == edgeTarget.count,
              edgeTarget.count == edgeLengthMeters.count, edgeTarget.count % 2 == 0,
              componentOfNode.count == nodeCount, tree.count == nodeCount
        else { return false }
        for u in 0..<nodeCount {
            guard edgeStart[u] <= edgeStart[u + 1] else { return false }
            for slot in Int(edgeStart[u])..<Int(edgeStart[u + 1]) {
                let v = Int(edgeTarget[slot])
                guard (0..<nodeCount).contains(v), componentOfNode[v] == componentOfNode[u],
                      edgeLengthMeters[slot].isFinite, edgeLengthMeters[slot] >= 0
                else { return false }
            }
        }
        // Each input edge is two half-edges with the same ends and length (a loop's two sit at
        // its node), so every (lower end, higher end, length) occurs an even number of times.
        var halfEdges: [(Int32, Int32, Double)] = []
        halfEdges.reserveCapacity(edgeTarget.count)
        for u in 0..<nodeCount {
            for slot in Int(edgeStart[u])..<Int(edgeStart[u + 1]) {
                let v = edgeTarget[slot]
                halfEdges.append((min(Int32(u), v), max(Int32(u), v), edgeLengthMeters[slot]))
            }
        }
        halfEdges.sort { $0 < $1 }
        var run = 0
        while run < halfEdges.count {
            var end = run + 1
            while end < halfEdges.count && halfEdges[end] == halfEdges[run] { end += 1 }
            guard (end - run) % 2 == 0 else { return false }
            run = end
        }
        return true
    }
}

/// A binary min-heap of (distance, node) pairs in two parallel arrays; the stale entries of
/// lazy deletion cost less than the position index a decrease-key heap would maintain.
private struct DistanceHeap {
    private var keys: [Double] = []
    private var nodes: [Int32] = []

    mutating func push(_ key: Double, _ node: Int32) {
        keys.append(key)
        nodes.append(node)
        var child = keys.count - 1
        while child > 0 {
            let parent = (child - 1) >> 1
            guard keys[child] < keys[parent] else { break }
            swapEntries(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (Double, Int32)? {
        guard let lastKey = keys.popLast(), let lastNode = nodes.popLast() else { return nil }
        guard !keys.isEmpty else { return (lastKey, lastNode) }
        let top = (keys[0], nodes[0])
        keys[0] = lastKey
        nodes[0] = lastNode
        var parent = 0
        let count = keys.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { break }
            let right = left + 1
            let smaller = right < count && keys[right] < keys[left] ? right : left
            guard keys[smaller] < keys[parent] else { break }
            swapEntries(parent, smaller)
            parent = smaller
        }
        return top
    }

    @inline(__always)
    private mutating func swapEntries(_ i: Int, _ j: Int) {
        keys.swapAt(i, j)
        nodes.swapAt(i, j)
    }
}
