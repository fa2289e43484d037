import GeoCluster
import GeoProjection

/// The one place where queries are answered. Transports decode their input into a
/// ``Request``, call ``execute(_:)`` and encode the result; no query logic lives in a
/// transport.
///
/// The loaded layers are immutable values, so any number of threads may call
/// ``execute(_:)`` at once without locks; `project` borrows a PROJ transformer per call
/// from ``transformers``, which takes a short lock only to lend and take back.
public final class Engine: Sendable {
    /// Bounds on the size of answers.
    public struct Limits: Sendable {
        /// Most features in one `clusters`, `children` or `tile` answer; a larger answer is
        /// an error that asks for a smaller viewport or a higher zoom.
        public var maxFeaturesPerResponse = 100_000

        public init(maxFeaturesPerResponse: Int = 100_000) {
            self.maxFeaturesPerResponse = maxFeaturesPerResponse
        }
    }

    /// Layers in load order.
    public let layers: [Layer]
    private let layersByName: [String: Int]
    public let limits: Limits
    /// PROJ transformers for `project`, reused across requests (see `Engine+Project.swift`).
    public let transformers = TransformerPool()

    public init(layers: [Layer], limits: Limits = Limits()) throws(EngineError) {
        var byName: [String: Int] = [:]
        for (i, layer) in layers.enumerated() {
            guard byName.updateValue(i, forKey: layer.name) == nil else {
                throw .invalidLayerSource(path: layer.name, reason: "two layers are named \"\(layer.name)\"")
            }
        }
        self.layers = layers
        self.layersByName = byName
        self.limits = limits
    }

    /// The layer of that name.
    public func layer(named name: String) throws(EngineError) -> Layer {
        guard let i = layersByName[name] else { throw .unknownLayer(name) }
        return layers[i]
    }

    /// Decodes and answers one request object.
    public func handle(_ json: JSONValue) -> Result<JSONValue, EngineError> {
        do {
            return .success(try execute(try Request(json: json)))
        } catch {
            return .failure(error)
        }
    }

    /// Answers a request; the result is the `result` member of the wire protocols.
    public func execute(_ request: Request) throws(EngineError) -> JSONValue {
        switch request {
        case .layers:
            return .object(["layers": .array(layers.map(\.summary))])

        case let .stats(name):
            if let name {
                return try layer(named: name).summary
            }
            let points = layers.reduce(0) { $0 + $1.features.count }
            return .object(["layers": .number(Double(layers.count)), "points": .number(Double(points))])

        case let .clusters(name, bbox, zoom):
            let layer = try layer(named: name)
            let features = try core(field: "zoom") { () throws(GeoClusterError) in
                try layer.index.clusters(in: bbox, zoom: zoom)
            }
            return try featureCollection(features, in: layer)

        case let .children(name, clusterID):
            let layer = try layer(named: name)
            let features = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try layer.index.children(of: clusterID)
            }
            return try featureCollection(features, in: layer)

        case let .leaves(name, clusterID, limit, offset):
            let layer = try layer(named: name)
            let page = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try layer.index.leaves(of: clusterID, limit: limit, offset: offset)
            }
            var collection: JSONObject = ["type": "FeatureCollection",
                                          "features": .array(page.pointIndices.map { layer.features[$0] })]
            collection["total"] = .number(Double(page.total))
            collection["limit"] = .number(Double(limit))
            collection["offset"] = .number(Double(offset))
            return .object(collection)

        case let .expansionZoom(name, clusterID):
            let layer = try layer(named: name)
            let zoom = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try layer.index.expansionZoom(of: clusterID)
            }
            return .object(["cluster_id": .number(Double(clusterID)), "expansion_zoom": .number(Double(zoom))])

        case let .tile(name, address):
            let layer = try layer(named: name)
            let features = try core(field: "z") { () throws(GeoClusterError) in try layer.index.tile(address) }
            try checkSize(features.count)
            let rendered = features.map { feature -> JSONValue in
                let pointIndex: Int = if case let .point(index) = feature.kind { index } else { 0 }
                let source = layer.features.isEmpty ? JSONValue.null : layer.features[pointIndex]
                return feature.geoJSONVT(pointTags: source["properties"] ?? .null, pointID: source["id"])
            }
            return .object(["z": .number(Double(address.z)), "x": .number(Double(address.x)),
                            "y": .number(Double(address.y)), "extent": .number(Double(layer.index.options.extent)),
                            "features": .array(rendered)])

        case let .project(from, to, coordinates):
            return try project(coordinates, from: from, to: to)
        }
    }

    private func featureCollection(_ features: [ClusterFeature], in layer: Layer) throws(EngineError) -> JSONValue {
        try checkSize(features.count)
        return GeoJSON.featureCollection(features.map { feature in
            feature.geoJSON { layer.features[$0] }
        })
    }

    private func checkSize(_ count: Int) throws(EngineError) {
        guard count <= limits.maxFeaturesPerResponse else {
            throw .tooLarge(what: "\(count) features", limit: limits.maxFeaturesPerResponse)
        }
    }

    /// Runs a core call, attributing its errors to the request field they came from.
    private func core<T>(field: String, _ body: () throws(GeoClusterError) -> T) throws(EngineError) -> T {
        do {
            return try body()
        } catch {
            throw .core(error, field: field)
        }
    }
}
