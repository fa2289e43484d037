import GeoCluster

/// The Mapbox Vector Tile rendering of tile answers: the same features, pixel positions
/// and properties as the geojson-vt form (``TileFeature/geoJSONVT(extraClusterProperties:pointTags:pointID:)``).
extension VectorTileLayer {
    /// Adds one item of a tile answer. A cluster gets supercluster's properties (after
    /// `extraClusterProperties`) and its cluster id as the feature id. A single point gets
    /// `pointProperties` (its input properties; anything but an object counts as none) and
    /// `pointID`: a non-negative integer goes into the feature's `id` field, which holds
    /// only unsigned integers; any other id (a string, a negative or fractional number)
    /// becomes an `id` property instead, unless the properties already have one.
    public mutating func append(_ feature: TileFeature, extraClusterProperties: JSONObject = JSONObject(),
                                pointProperties: JSONValue, pointID: JSONValue?) {
        switch feature.kind {
        case let .cluster(id, count):
            appendPoint(pixelX: feature.pixelX, pixelY: feature.pixelY, id: UInt64(exactly: id),
                        properties: ClusterFeature.clusterProperties(id: id, pointCount: count,
                                                                     extra: extraClusterProperties))
        case .point:
            var properties = pointProperties.objectValue ?? JSONObject()
            var id: UInt64?
            if let pointID {
                if let number = pointID.doubleValue, let unsigned = UInt64(exactly: number) {
                    id = unsigned
                } else if !properties.contains(key: "id") {
                    properties["id"] = pointID
                }
            }
            appendPoint(pixelX: feature.pixelX, pixelY: feature.pixelY, id: id, properties: properties)
        }
    }
}
