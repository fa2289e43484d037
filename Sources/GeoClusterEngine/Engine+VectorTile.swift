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
    public func vectorTile(layer name: String, address: TileAddress,
                           filter: LayerFilter = .none) throws(EngineError) -> [UInt8] {
        let layer = try entry(named: name).current
        let tile = try layer.tile(address, filter: filter)
        try checkSize(tile.features.count)
        return tile.vectorTileLayer(name: layer.name).encodedTile()
    }
}
