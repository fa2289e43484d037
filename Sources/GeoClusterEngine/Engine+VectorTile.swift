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
        switch try entry(named: name) {
        case let .radius(layer):
            guard filter.isEmpty else {
                throw .invalidFilter("layer", reason: "layer \"\(name)\" uses the radius algorithm, which takes no filters")
            }
            let features: [TileFeature]
            do {
                features = try layer.index.tile(address)
            } catch {
                throw .core(error, field: "z")
            }
            try checkTileSize(features.count)
            var tile = VectorTileLayer(name: layer.name, extent: layer.index.options.extent)
            for feature in features {
                if case let .point(index) = feature.kind {
                    tile.append(feature, pointProperties: layer.features.properties(at: index),
                                pointID: layer.features.id(at: index))
                } else {
                    tile.append(feature, pointProperties: .null, pointID: nil)
                }
            }
            return tile.encodedTile()

        case let .live(store):
            let layer = store.layer
            let liveFilter = try layer.liveFilter(filter)
            let answer: (features: [TileFeature], summaries: [LiveSummary])
            do {
                answer = try layer.index.tile(address, filter: liveFilter)
            } catch {
                throw .core(error, field: "z")
            }
            try checkTileSize(answer.features.count)
            var tile = VectorTileLayer(name: layer.name, extent: layer.index.options.extent)
            for feature in answer.features {
                switch feature.kind {
                case let .point(slot):
                    let source = layer.tileProperties(slot: slot)
                    tile.append(feature, pointProperties: source.properties, pointID: source.id)
                case .cluster:
                    let extra = feature.aggregateIndex.map { layer.aggregateProperties(answer.summaries[$0]) }
                    tile.append(feature, extraClusterProperties: extra ?? [:], pointProperties: .null, pointID: nil)
                }
            }
            return tile.encodedTile()
        }
    }

    private func checkTileSize(_ count: Int) throws(EngineError) {
        guard count <= limits.maxFeaturesPerResponse else {
            throw .tooLarge(what: "\(count) features", limit: limits.maxFeaturesPerResponse)
        }
    }
}
