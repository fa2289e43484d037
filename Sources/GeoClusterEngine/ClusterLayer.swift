import GeoCluster
import GeoClusterWire

/// The queries every layer answers. The radius layer (``RadiusLayer``) and each version of a
/// live layer (``LiveLayer``) are its two implementations; the engine dispatches every
/// layer operation once, through this protocol, and checks the size of what comes back
/// in one place.
///
/// Answers are written straight to JSON text (``LayerAnswer``); tiles come back as
/// features with their properties (``LayerTile``), which the engine writes as geojson-vt
/// or as a Mapbox Vector Tile.
public protocol ClusterLayer: Sendable {
    var name: String { get }
    var kind: LayerKind { get }
    /// Points in this version.
    var pointCount: Int { get }
    /// Wall-clock seconds the index took to build when the layer was loaded.
    var buildSeconds: Double { get }
    /// The layer's entry in `layers` and `stats` answers.
    var summary: JSONValue { get }

    /// Clusters and points inside `bbox` at `zoom`, as a GeoJSON FeatureCollection. An
    /// implementation may stop once the answer holds more than `limit` features, and say
    /// so (``LayerAnswer/isComplete``).
    func clusters(in bbox: BoundingBox, zoom: Double, filter: LayerFilter, limit: Int) throws(EngineError) -> LayerAnswer
    /// The clusters and points one zoom below a cluster, as a FeatureCollection.
    func children(of clusterID: Int, filter: LayerFilter) throws(EngineError) -> LayerAnswer
    /// One page of a cluster's points, as a FeatureCollection with `total`, `limit`, `offset`;
    /// in the index's order, or by observation time (sightings).
    func leaves(of clusterID: Int, limit: Int, offset: Int, filter: LayerFilter,
                order: LeafOrder?) throws(EngineError) -> LayerAnswer
    /// The zoom at which a cluster splits.
    func expansionZoom(of clusterID: Int, filter: LayerFilter) throws(EngineError) -> Int
    /// One tile's features in supercluster's `getTile` geometry.
    func tile(_ address: TileAddress, filter: LayerFilter) throws(EngineError) -> LayerTile
}

/// A layer query's answer, written once, straight to JSON text.
public struct LayerAnswer {
    /// Features in the answer, for ``Engine/Limits/maxFeaturesPerResponse``.
    public let featureCount: Int
    /// False for an answer that stopped once it held more features than the limit it was
    /// asked with: it is to be refused, not written.
    public internal(set) var isComplete = true
    private let write: (inout [UInt8]) -> Void

    init(featureCount: Int, write: @escaping (inout [UInt8]) -> Void) {
        self.featureCount = featureCount
        self.write = write
    }

    /// A FeatureCollection of `features`; `point` appends a single point's feature for
    /// its input index, `clusterMembers` a cluster's extra `"name":value,` members.
    init(features: [ClusterFeature], clusterMembers: @escaping (ClusterFeature, inout [UInt8]) -> Void = { _, _ in },
         point: @escaping (Int, inout [UInt8]) -> Void) {
        self.init(featureCount: features.count) { output in
            GeoJSON.encodeFeatureCollection(count: features.count, into: &output) { position, output in
                let feature = features[position]
                feature.encodeGeoJSON(into: &output, extraClusterMembers: { clusterMembers(feature, &$0) },
                                      point: point)
            }
        }
    }

    /// A page of a cluster's points: a FeatureCollection of their features, then the
    /// page's `total`, `limit` and `offset`. Each point's feature is copied as the layer
    /// keeps it.
    init(leaves page: LeavesPage, limit: Int, offset: Int, point: @escaping (Int, inout [UInt8]) -> Void) {
        self.init(featureCount: page.pointIndices.count) { output in
            output += #"{"type":"FeatureCollection","features":["#.utf8
            for (position, index) in page.pointIndices.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                point(index, &output)
            }
            output.append(UInt8(ascii: "]"))
            for (key, number) in [("total", page.total), ("limit", limit), ("offset", offset)] {
                output += #",""#.utf8
                output += key.utf8
                output += #"":"#.utf8
                JSONValue.encodeNumber(Double(number), into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends the answer's JSON text.
    public func encode(into output: inout [UInt8]) {
        write(&output)
    }

    /// The answer as a value, parsed from its text; for callers that add to it.
    public var value: JSONValue {
        var bytes: [UInt8] = []
        write(&bytes)
        // The text was written by this module's writers; it is always valid JSON.
        return (try? JSONValue.parse(bytes, maxDepth: .max)) ?? .null
    }
}

/// One tile's features and what each shows: a single point's properties and id, a
/// cluster's extra properties (aggregates) beside supercluster's.
public struct LayerTile {
    public let extent: Int
    public let features: [TileFeature]
    let pointSource: (Int) -> (properties: JSONValue, id: JSONValue?)
    let clusterExtra: (TileFeature) -> JSONObject

    /// geojson-vt's form of the features, as supercluster's `getTile` returns them.
    var geoJSONVTFeatures: [JSONValue] {
        features.map { feature in
            guard case let .point(index) = feature.kind else {
                return feature.geoJSONVT(extraClusterProperties: clusterExtra(feature), pointTags: .null, pointID: nil)
            }
            let source = pointSource(index)
            return feature.geoJSONVT(pointTags: source.properties, pointID: source.id)
        }
    }

    /// The features as one Mapbox Vector Tile layer named `name`.
    func vectorTileLayer(name: String) -> VectorTileLayer {
        var layer = VectorTileLayer(name: name, extent: extent)
        for feature in features {
            if case let .point(index) = feature.kind {
                let source = pointSource(index)
                layer.append(feature, pointProperties: source.properties, pointID: source.id)
            } else {
                layer.append(feature, extraClusterProperties: clusterExtra(feature), pointProperties: .null, pointID: nil)
            }
        }
        return layer
    }
}

extension EngineError {
    /// Runs a core call, attributing its errors to the request field they came from.
    static func attributing<T>(to field: String, _ body: () throws(GeoClusterError) -> T) throws(EngineError) -> T {
        do {
            return try body()
        } catch {
            throw .core(error, field: field)
        }
    }
}

// MARK: The radius layer

extension RadiusLayer: ClusterLayer {
    public var pointCount: Int { features.count }

    public func clusters(in bbox: BoundingBox, zoom: Double, filter: LayerFilter, limit: Int) throws(EngineError) -> LayerAnswer {
        try unfiltered(filter)
        let index = index
        return featureCollection(try EngineError.attributing(to: "zoom") { () throws(GeoClusterError) in
            try index.clusters(in: bbox, zoom: zoom)
        })
    }

    public func children(of clusterID: Int, filter: LayerFilter) throws(EngineError) -> LayerAnswer {
        try unfiltered(filter)
        let index = index
        return featureCollection(try EngineError.attributing(to: "cluster_id") { () throws(GeoClusterError) in
            try index.children(of: clusterID)
        })
    }

    public func leaves(of clusterID: Int, limit: Int, offset: Int, filter: LayerFilter,
                       order: LeafOrder?) throws(EngineError) -> LayerAnswer {
        try unfiltered(filter)
        guard order == nil else { throw LeafOrder.needsSightings }
        let index = index
        let page = try EngineError.attributing(to: "cluster_id") { () throws(GeoClusterError) in
            try index.leaves(of: clusterID, limit: limit, offset: offset)
        }
        let features = features
        return LayerAnswer(leaves: page, limit: limit, offset: offset) { features.encode($0, into: &$1) }
    }

    public func expansionZoom(of clusterID: Int, filter: LayerFilter) throws(EngineError) -> Int {
        try unfiltered(filter)
        let index = index
        return try EngineError.attributing(to: "cluster_id") { () throws(GeoClusterError) in
            try index.expansionZoom(of: clusterID)
        }
    }

    public func tile(_ address: TileAddress, filter: LayerFilter) throws(EngineError) -> LayerTile {
        try unfiltered(filter)
        let index = index
        let features = features
        return LayerTile(extent: index.options.extent,
                         features: try EngineError.attributing(to: "z") { () throws(GeoClusterError) in
                             try index.tile(address)
                         },
                         pointSource: { (features.properties(at: $0), features.id(at: $0)) },
                         clusterExtra: { _ in JSONObject() })
    }

    private func featureCollection(_ clusters: [ClusterFeature]) -> LayerAnswer {
        let features = features
        return LayerAnswer(features: clusters) { features.encode($0, into: &$1) }
    }

    private func unfiltered(_ filter: LayerFilter) throws(EngineError) {
        guard filter.isEmpty else {
            throw .invalidFilter("layer", reason: "layer \"\(name)\" uses the radius algorithm, which takes no filters")
        }
    }
}

// MARK: A version of a live layer

extension LiveLayer: ClusterLayer {
    public var pointCount: Int { count }

    public func clusters(in bbox: BoundingBox, zoom: Double, filter: LayerFilter, limit: Int) throws(EngineError) -> LayerAnswer {
        let liveFilter = try liveFilter(filter)
        let index = index
        let answer = try EngineError.attributing(to: "zoom") { () throws(GeoClusterError) in
            try index.clusters(in: bbox, zoom: zoom, filter: liveFilter, limit: limit)
        }
        var collection = featureCollection(answer, ranking: filter.topBy ?? .sightings)
        collection.isComplete = answer.isComplete
        return collection
    }

    public func children(of clusterID: Int, filter: LayerFilter) throws(EngineError) -> LayerAnswer {
        let liveFilter = try liveFilter(filter)
        let index = index
        return featureCollection(try EngineError.attributing(to: "cluster_id") { () throws(GeoClusterError) in
            try index.children(of: clusterID, filter: liveFilter)
        }, ranking: filter.topBy ?? .sightings)
    }

    public func leaves(of clusterID: Int, limit: Int, offset: Int, filter: LayerFilter,
                       order: LeafOrder?) throws(EngineError) -> LayerAnswer {
        let liveFilter = try liveFilter(filter)
        guard order == nil || kind == .sightings else { throw LeafOrder.needsSightings }
        let index = index
        var page = try EngineError.attributing(to: "cluster_id") { () throws(GeoClusterError) in
            order == nil ? try index.leaves(of: clusterID, limit: limit, offset: offset, filter: liveFilter)
                : try index.leaves(of: clusterID, limit: Int.max, offset: 0, filter: liveFilter)
        }
        if let order { page = Self.page(sorted(page.pointIndices, order), limit: limit, offset: offset) }
        return LayerAnswer(leaves: page, limit: limit, offset: offset) { encodePointFeature(slot: $0, into: &$1) }
    }

    /// A page of the records inside `bbox` that pass the filter, in the index's order or
    /// by observation time, with their `total`: the `list` operation.
    func list(in bbox: BoundingBox, limit: Int, offset: Int, filter: LayerFilter,
              order: LeafOrder?) throws(EngineError) -> LayerAnswer {
        let liveFilter = try liveFilter(filter)
        guard order == nil || kind == .sightings else { throw LeafOrder.needsSightings }
        var slots = index.points(in: bbox, filter: liveFilter) { record(atSlot: $0)?.coordinate }
        if let order { slots = sorted(slots, order) }
        return LayerAnswer(leaves: Self.page(slots, limit: limit, offset: offset), limit: limit, offset: offset) {
            encodePointFeature(slot: $0, into: &$1)
        }
    }

    /// Items `offset..<offset + limit` of `slots`, with their total.
    private static func page(_ slots: [Int], limit: Int, offset: Int) -> LeavesPage {
        let start = min(offset, slots.count)
        return LeavesPage(pointIndices: Array(slots[start..<(start + min(limit, slots.count - start))]), total: slots.count)
    }

    /// Slots of sightings by observation time, in `order`; equal times by id (the bytes of
    /// its key), which every replica and every start of the layer agree on where slots
    /// and the index's order do not (a freed slot is taken again by the next insert, a
    /// store hands its rows back in the order they were first written).
    private func sorted(_ slots: [Int], _ order: LeafOrder) -> [Int] {
        let keyed = slots.map { slot -> (time: Int64, slot: Int) in
            guard case let .sighting(_, _, observedAt)? = record(atSlot: slot)?.fields else { return (0, slot) }
            return (observedAt.epochSeconds, slot)
        }
        return keyed.sorted { a, b in
            if a.time != b.time { return order == .newestFirst ? a.time > b.time : a.time < b.time }
            let keyA = record(atSlot: a.slot)?.idKey ?? "", keyB = record(atSlot: b.slot)?.idKey ?? ""
            if keyA != keyB { return keyA.utf8.lexicographicallyPrecedes(keyB.utf8) }
            return a.slot < b.slot
        }.map(\.slot)
    }

    public func expansionZoom(of clusterID: Int, filter: LayerFilter) throws(EngineError) -> Int {
        let liveFilter = try liveFilter(filter)
        let index = index
        return try EngineError.attributing(to: "cluster_id") { () throws(GeoClusterError) in
            try index.expansionZoom(of: clusterID, filter: liveFilter)
        }
    }

    public func tile(_ address: TileAddress, filter: LayerFilter) throws(EngineError) -> LayerTile {
        let liveFilter = try liveFilter(filter)
        let index = index
        let tile = try EngineError.attributing(to: "z") { () throws(GeoClusterError) in
            try index.tile(address, filter: liveFilter)
        }
        return LayerTile(extent: index.options.extent, features: tile.features,
                         pointSource: { tileProperties(slot: $0) },
                         clusterExtra: { feature in
                             feature.aggregateIndex.map {
                                 aggregateProperties(tile.summaries[$0], counts: tile.partitionCounts[tile.summaries[$0].partitionRange],
                                                     ranking: filter.topBy ?? .sightings)
                             } ?? JSONObject()
                         })
    }

    /// One answer's features as a FeatureCollection, clusters with their aggregates.
    func featureCollection(_ answer: LiveAnswer, ranking: SpeciesRanking = .sightings) -> LayerAnswer {
        LayerAnswer(features: answer.features, clusterMembers: { feature, output in
            if let k = feature.aggregateIndex {
                let summary = answer.summaries[k]
                encodeAggregateMembers(summary, counts: answer.partitionCounts(of: summary), ranking: ranking, into: &output)
            }
        }, point: { encodePointFeature(slot: $0, into: &$1) })
    }
}
