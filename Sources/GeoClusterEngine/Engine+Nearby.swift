import GeoCluster
import GeoClusterWire
import GeoProjection

extension Engine {
    /// WGS84 ellipsoidal distance in metres (PROJ's geodesic), the distance of `nearby` and
    /// of the straight-line and snap legs of `reachable`.
    static let geodesicMeters: @Sendable (Coordinate, Coordinate) -> Double = { start, end in
        Geodesic.wgs84.distanceMeters(
            from: GeographicPoint(longitudeDegrees: start.longitude, latitudeDegrees: start.latitude),
            to: GeographicPoint(longitudeDegrees: end.longitude, latitudeDegrees: end.latitude))
    }

    /// Answers `nearby`: a FeatureCollection of the layer's record features, nearest first
    /// (ties by slot), each with a `distance_m` foreign member (WGS84 geodesic metres, to the
    /// centimetre) beside `properties`, which stay as stored. `count` gives the number of
    /// features.
    func nearby(_ query: NearbyQuery) throws(EngineError) -> JSONValue {
        guard let store = try entry(named: query.layer).store else {
            throw .notLiveLayer(field: "layer", layer: query.layer)
        }
        let layer = store.layer
        let filter = try layer.liveFilter(query.filter)
        let found: [NearbyPoint]
        // Distances from the coordinates as stored (the index's are within 7 mm of them).
        let coordinate = { (slot: Int) in layer.record(atSlot: slot)?.coordinate }
        if let k = query.k {
            found = layer.index.nearest(k, to: query.center, maxRadiusMeters: query.radiusMeters ?? .infinity,
                                        filter: filter, coordinateOfSlot: coordinate,
                                        distanceMeters: Self.geodesicMeters)
        } else {
            found = layer.index.points(within: query.radiusMeters ?? 0, of: query.center, filter: filter,
                                       coordinateOfSlot: coordinate, distanceMeters: Self.geodesicMeters)
        }
        try checkSize(found.count)
        let features = found.map { point -> JSONValue in
            guard case var .object(feature) = layer.pointFeature(slot: point.slot) else { return .null }
            feature["distance_m"] = .number((point.distanceMeters * 100).rounded() / 100)
            return .object(feature)
        }
        return .object(["type": "FeatureCollection", "features": .array(features),
                        "count": .number(Double(features.count))])
    }
}
