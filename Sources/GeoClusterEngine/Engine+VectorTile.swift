import GeoCluster

extension Engine {
    /// One tile as a Mapbox Vector Tile (protobuf, specification 2.1) for MapLibre and
    /// Mapbox GL: the same features, pixel positions and properties as the `tile`
    /// operation's geojson-vt answer, in one layer named after `layer`, whose extent is
    /// the layer's clustering extent. A tile with no features is a valid tile whose layer
    /// has none.
    ///
    /// Binary, so it has no JSON-lines form; the HTTP transport serves it.
    ///
    /// - Throws: `unknownLayer`; `tooLarge` above ``Limits/maxFeaturesPerResponse``
    ///   features, as the `tile` operation does.
    public func vectorTile(layer name: String, address: TileAddress) throws(EngineError) -> [UInt8] {
        let layer = try layer(named: name)
        let features: [TileFeature]
        do {
            features = try layer.index.tile(address)
        } catch {
            throw .core(error, field: "z")
        }
        guard features.count <= limits.maxFeaturesPerResponse else {
            throw .tooLarge(what: "\(features.count) features", limit: limits.maxFeaturesPerResponse)
        }
        var tile = VectorTileLayer(name: layer.name, extent: layer.index.options.extent)
        for feature in features {
            if case let .point(index) = feature.kind {
                let source = layer.features[index]
                tile.append(feature, pointProperties: source["properties"] ?? .null, pointID: source["id"])
            } else {
                tile.append(feature, pointProperties: .null, pointID: nil)
            }
        }
        return tile.encodedTile()
    }
}
