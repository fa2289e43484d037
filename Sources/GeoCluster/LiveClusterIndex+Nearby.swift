/// One point found by a distance query: its slot and its distance from the query location.
public struct NearbyPoint: Sendable, Hashable {
    /// The point's slot in the index.
    public var slot: Int
    /// Distance in metres, as the query's distance function measured it.
    public var distanceMeters: Double

    public init(slot: Int, distanceMeters: Double) {
        self.slot = slot
        self.distanceMeters = distanceMeters
    }
}

// MARK: - Points near a location

extension LiveClusterIndex {
    /// Largest radius a distance query searches: half the Earth's circumference on the
    /// sphere of ``GreatCircle/meanEarthRadiusMeters`` (π·R), beyond which every point lies.
    public static let largestSearchRadiusMeters = Double.pi * GreatCircle.meanEarthRadiusMeters

    /// The points within `radiusMeters` of `center` that pass `filter`, nearest first (ties
    /// by slot).
    ///
    /// Only the points in a latitude/longitude box around the circle are visited (the box is
    /// turned into a range of Web Mercator cells at the finest level, so the quadtrees are
    /// pruned to the nodes that touch it), and the cost follows the points near `center`,
    /// not the size of the layer. The box is widened by 1 % so that `distanceMeters` may be
    /// any function that measures metres on the Earth to within that (the core's haversine,
    /// or an ellipsoidal geodesic); that function then decides exactly.
    /// - Parameters:
    ///   - center: a valid WGS84 coordinate.
    ///   - radiusMeters: `>= 0`; larger than ``largestSearchRadiusMeters`` covers the Earth.
    ///   - coordinateOfSlot: each point's coordinate as the caller keeps it (a layer's
    ///     records), measured instead of the index's own, which lies within 7 mm of it
    ///     inside ±85.05° and on Web Mercator's edge beyond (see ``LivePoint``); `nil`, or
    ///     a `nil` answer, measures the index's.
    public func points(
        within radiusMeters: Double, of center: Coordinate, filter: LiveFilter = .all,
        coordinateOfSlot: ((Int) -> Coordinate?)? = nil,
        distanceMeters: (Coordinate, Coordinate) -> Double = GreatCircle.haversineMeters(from:to:)
    ) -> [NearbyPoint] {
        var found: [NearbyPoint] = []
        forEachPoint(nearby: center, radiusMeters: radiusMeters, filter: filter) { slot, coordinate in
            let distance = distanceMeters(center, coordinateOfSlot?(slot) ?? coordinate)
            if distance <= radiusMeters { found.append(NearbyPoint(slot: slot, distanceMeters: distance)) }
        }
        found.sort(by: Self.nearerFirst)
        return found
    }

    /// The `k` points nearest to `center` that pass `filter`, nearest first (ties by slot),
    /// none farther than `maxRadiusMeters`.
    ///
    /// Searches circles of growing radius (expanding rings) until one holds `k` points or
    /// reaches the cap: any point outside a circle that already holds `k` points is farther
    /// than all of them, so the answer is exact. Each ring grows by a factor estimated from
    /// the density seen so far (2 to 8), so a search costs a few times the points within the
    /// final radius. `distanceMeters` must measure metres on the Earth to within 1 %, as in
    /// ``points(within:of:filter:coordinateOfSlot:distanceMeters:)``.
    /// - Parameters:
    ///   - k: `>= 1`.
    ///   - maxRadiusMeters: the cap, `>= 0`; `.infinity` (the default) searches the Earth.
    ///   - initialRadiusMeters: the first ring; later ones grow from it.
    ///   - coordinateOfSlot: as in ``points(within:of:filter:coordinateOfSlot:distanceMeters:)``.
    public func nearest(
        _ k: Int, to center: Coordinate, maxRadiusMeters: Double = .infinity, filter: LiveFilter = .all,
        initialRadiusMeters: Double = 500, coordinateOfSlot: ((Int) -> Coordinate?)? = nil,
        distanceMeters: (Coordinate, Coordinate) -> Double = GreatCircle.haversineMeters(from:to:)
    ) -> [NearbyPoint] {
        guard k > 0 else { return [] }
        let cap = Swift.min(maxRadiusMeters, Self.largestSearchRadiusMeters * 1.02)
        var radius = Swift.min(cap, Swift.max(1, initialRadiusMeters))
        while true {
            var found = points(within: radius, of: center, filter: filter, coordinateOfSlot: coordinateOfSlot,
                               distanceMeters: distanceMeters)
            if found.count >= k || radius >= cap {
                if found.count > k { found.removeSubrange(k...) }
                return found
            }
            // Points grow with the area: aim at k with a margin, at least doubling.
            let growth = found.isEmpty ? 8 : Swift.min(8, Swift.max(2, (Double(k) / Double(found.count)).squareRoot() * 1.25))
            radius = Swift.min(cap, radius * growth)
        }
    }

    /// Visits, with their slots and coordinates (as ``LivePoint`` says), the points that pass `filter` in the
    /// projected rectangle `minX...maxX` × `minY...maxY` (Web Mercator units in [0, 1], y
    /// growing southwards). The walk uses the finest cell level (32), where a cell is one
    /// quantisation step, so the rectangle test on quantised positions is exact.
    public func forEachPoint(
        inProjectedRectangle minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double,
        filter: LiveFilter = .all, _ body: (_ slot: Int, _ coordinate: Coordinate) -> Void
    ) {
        guard minX <= maxX, minY <= maxY else { return }
        let x0 = LeafEntry.quantize(minX), x1 = LeafEntry.quantize(maxX)
        let y0 = LeafEntry.quantize(minY), y1 = LeafEntry.quantize(maxY)
        forEachPoint(level: 32, x0: x0, y0: y0, x1: x1, y1: y1, filter: filter) { entry in
            body(Int(entry.slot), entry.coordinate)
            return true
        }
    }

    /// Visits every point that passes `filter` in a latitude/longitude box holding the circle
    /// of `radiusMeters` (widened by 1 % and a metre, more than a point's coordinate moves
    /// when quantised) around `center`: the box wraps the
    /// antimeridian as two rectangles and opens to every longitude when the circle reaches
    /// a pole. Points outside the circle may be visited too; the caller measures.
    func forEachPoint(
        nearby center: Coordinate, radiusMeters: Double, filter: LiveFilter,
        _ body: (_ slot: Int, _ coordinate: Coordinate) -> Void
    ) {
        let degreesPerRadian = 180 / Double.pi
        let angle = (Swift.max(0, radiusMeters) * 1.01 + 1) / GreatCircle.meanEarthRadiusMeters
        let north = Swift.min(90, center.latitude + angle * degreesPerRadian)
        let south = Swift.max(-90, center.latitude - angle * degreesPerRadian)
        // Mercator y grows southwards; positions beyond ±85.05° are stored at the edge.
        let minY = WebMercator.y(latitude: north), maxY = WebMercator.y(latitude: south)
        // Along an arc of length `angle`, longitude changes at most by angle / cos(largest latitude).
        let largestLatitude = abs(center.latitude) / degreesPerRadian + angle
        let longitudeSpan = largestLatitude < Double.pi / 2
            ? angle / CMath.cos(largestLatitude) * degreesPerRadian : Double.infinity
        guard longitudeSpan < 180 else {
            forEachPoint(inProjectedRectangle: 0, minY, 1, maxY, filter: filter, body)
            return
        }
        let west = center.longitude - longitudeSpan, east = center.longitude + longitudeSpan
        forEachPoint(inProjectedRectangle: WebMercator.x(longitude: Swift.max(-180, west)), minY,
                     WebMercator.x(longitude: Swift.min(180, east)), maxY, filter: filter, body)
        // Across the antimeridian: the part of the box beyond ±180° wraps to the other side.
        if west < -180 {
            forEachPoint(inProjectedRectangle: WebMercator.x(longitude: west + 360), minY, 1, maxY,
                         filter: filter, body)
        }
        if east > 180 {
            forEachPoint(inProjectedRectangle: 0, minY, WebMercator.x(longitude: east - 360), maxY,
                         filter: filter, body)
        }
    }

    static func nearerFirst(_ a: NearbyPoint, _ b: NearbyPoint) -> Bool {
        a.distanceMeters != b.distanceMeters ? a.distanceMeters < b.distanceMeters : a.slot < b.slot
    }
}
