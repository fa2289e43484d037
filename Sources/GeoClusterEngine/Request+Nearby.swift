import GeoCluster

/// The fields of `nearby`: a live layer, a location, and a radius, a count or both.
public struct NearbyQuery: Sendable, Equatable {
    public var layer: String
    public var center: Coordinate
    /// Points within this many metres, in (0, ``Request/maxNearbyRadiusMeters``]; with `k`,
    /// the cap of the search.
    public var radiusMeters: Double?
    /// The `k` nearest points, 1...``Request/maxNearbyCount``.
    public var k: Int?
    public var filter: LayerFilter

    public init(layer: String, center: Coordinate, radiusMeters: Double? = nil, k: Int? = nil,
                filter: LayerFilter = .none) {
        self.layer = layer
        self.center = center
        self.radiusMeters = radiusMeters
        self.k = k
        self.filter = filter
    }

    /// Reads `layer`, `lon`, `lat`, `radius_m` and/or `k`, and the layer filters.
    init(reading fields: inout FieldReader) throws(EngineError) {
        layer = try fields.string("layer")
        center = try fields.location()
        radiusMeters = try fields.optionalDouble("radius_m", in: 0...Request.maxNearbyRadiusMeters)
        if radiusMeters == 0 {
            throw .invalidField("radius_m", reason: "must be more than 0 metres")
        }
        k = try fields.optionalInt("k", in: 1...Request.maxNearbyCount)
        guard radiusMeters != nil || k != nil else {
            throw .invalidField("radius_m", reason: "nearby needs \"radius_m\" (points within that many metres) "
                + "or \"k\" (the k nearest points), or both")
        }
        filter = try LayerFilter.read(&fields)
    }
}

extension Request {
    /// Largest `radius_m` of `nearby`: 100 km.
    public static let maxNearbyRadiusMeters = 100_000.0
    /// Largest `k` of `nearby`.
    public static let maxNearbyCount = 1_000
}
