import GeoCluster

/// The lines that visits walk, for a map's route screen: from where the walk starts (the
/// station, or the traveller's position) to the place, then from the place to the station.
///
/// Over a walking network a line is the straight snap leg to the start's nearest node, the
/// network's shortest path to the place's nearest node, the snap leg to the place, and the
/// same back to the station: its length is the walk the answer counts (edges are at least
/// the geodesic between their ends, rounded up to the centimetre). In a straight line it is
/// the two straight legs, whose length times the detour factor is the walk counted.
public struct VisitRoutes: Sendable {
    private let start: Coordinate
    private let station: Coordinate
    private let network: WalkingNetwork?
    private let fromStart: WalkingNetwork.PathTree?
    private let fromStation: WalkingNetwork.PathTree?

    /// Routes of visits that start at `start` (the station itself, or the traveller's
    /// position) and end at `station`, for lines to `places`: over a network, one
    /// shortest-path search from each end, as far as the farthest of the places (and, from
    /// the start, the station). A line to another place searches for it then.
    public init(travel: ReachabilityTravelModel, start: Coordinate, station: Coordinate,
                places: [Coordinate]) throws(GeoClusterError) {
        self.start = start
        self.station = station
        guard case let .network(network, _) = travel else {
            (self.network, fromStart, fromStation) = (nil, nil, nil)
            return
        }
        self.network = network
        let stationNode = network.nearestNode(to: station).node
        let startNode = network.nearestNode(to: start).node
        let placeNodes = places.map { network.nearestNode(to: $0).node }
        let stationTree = try network.pathTree(from: stationNode, reaching: placeNodes)
        fromStation = stationTree
        fromStart = startNode == stationNode ? stationTree
            : try network.pathTree(from: startNode, reaching: placeNodes + [stationNode])
    }

    /// The metres from `node` to the network's nodes, when one of the routes' trees grew
    /// from it: exact where finite, and finite at least for the places and the station
    /// the routes were made for (``WalkingNetwork/pathTree(from:reaching:)``). A search the
    /// evaluation would otherwise make again.
    func distancesMeters(from node: Int, in network: WalkingNetwork) -> [Double]? {
        // Trees of another network (none of the same size) are not these distances.
        guard let own = self.network, own.nodeCount == network.nodeCount else { return nil }
        if let fromStation, fromStation.source == node { return fromStation.distanceMeters }
        if let fromStart, fromStart.source == node { return fromStart.distanceMeters }
        return nil
    }

    /// The line from the start to `place` and on to the station, or `nil` when the network
    /// does not join them (the answer lists such a place as `not_connected`).
    public func line(to place: Coordinate) -> [Coordinate]? {
        guard let network, let fromStart, let fromStation else { return [start, place, station] }
        let placeNode = network.nearestNode(to: place).node
        // A place the trees were not grown to is searched for on its own.
        func tree(_ tree: WalkingNetwork.PathTree) -> WalkingNetwork.PathTree? {
            if tree.distanceMeters[placeNode].isFinite || !network.areConnected(tree.source, placeNode) { return tree }
            return try? network.pathTree(from: tree.source, reaching: [placeNode])
        }
        guard let out = tree(fromStart)?.path(to: placeNode), let back = tree(fromStation)?.path(to: placeNode)
        else { return nil }
        var line = [start]
        line += out.map { network.nodes[$0] }
        line.append(place)
        line += back.reversed().map { network.nodes[$0] }
        line.append(station)
        // A snap leg of zero length (a place on its node) repeats a position; keep one.
        var deduplicated: [Coordinate] = []
        deduplicated.reserveCapacity(line.count)
        for point in line where deduplicated.last != point { deduplicated.append(point) }
        return deduplicated
    }
}
