import GeoCluster
import GeoProjection
import Synchronization

/// A loaded layer: built once with the radius algorithm (supercluster-compatible,
/// read-only), or live (typed records, writes, filters and aggregates).
public enum EngineLayer: Sendable {
    case radius(Layer)
    case live(LiveLayerStore)

    public var name: String {
        switch self {
        case let .radius(layer): layer.name
        case let .live(store): store.name
        }
    }

    public var kind: LayerKind {
        switch self {
        case let .radius(layer): layer.kind
        case let .live(store): store.kind
        }
    }

    /// Points in the current version.
    public var pointCount: Int {
        switch self {
        case let .radius(layer): layer.features.count
        case let .live(store): store.layer.count
        }
    }

    /// Wall-clock seconds the layer's index took to build when it was loaded.
    public var buildSeconds: Double {
        switch self {
        case let .radius(layer): layer.buildSeconds
        case let .live(store): store.layer.buildSeconds
        }
    }

    public var summary: JSONValue {
        switch self {
        case let .radius(layer): layer.summary
        case let .live(store): store.layer.summary
        }
    }
}

/// The one place where queries are answered. Transports decode their input into a
/// ``Request``, call ``execute(_:)`` and encode the result; no query logic lives in a
/// transport.
///
/// Radius layers are immutable values and live layers hand out immutable versions, so
/// any number of threads may call ``execute(_:)`` at once without locks; writes to a live
/// layer are serialised by its ``LiveLayerStore``; `project` borrows a PROJ transformer
/// per call from ``transformers``, which takes a short lock only to lend and take back.
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
    public let entries: [EngineLayer]
    private let layersByName: [String: Int]
    public let limits: Limits
    /// PROJ transformers for `project`, reused across requests (see `Engine+Project.swift`).
    public let transformers = TransformerPool()
    /// `project` requests refused because PROJ was asked for a file it may not read (a
    /// PROJ string naming `/dev/stdin`, `/etc/passwd`), for `/metrics`.
    public var refusedPROJFiles: UInt64 { refusedPROJFileCount.load(ordering: .relaxed) }
    let refusedPROJFileCount = Atomic<UInt64>(0)
    /// Walking networks by name, for `reachable` with `"travel":"network"` (see
    /// `Engine+Reachable.swift`).
    public let networks: [String: WalkingNetwork]

    public init(entries: [EngineLayer], limits: Limits = Limits(),
                networks: [String: WalkingNetwork] = [:]) throws(EngineError) {
        var byName: [String: Int] = [:]
        for (i, layer) in entries.enumerated() {
            guard byName.updateValue(i, forKey: layer.name) == nil else {
                throw .invalidLayerSource(path: layer.name, reason: "two layers are named \"\(layer.name)\"")
            }
        }
        self.entries = entries
        self.layersByName = byName
        self.limits = limits
        self.networks = networks
    }

    /// An engine of radius layers.
    public convenience init(layers: [Layer], limits: Limits = Limits()) throws(EngineError) {
        try self.init(entries: layers.map(EngineLayer.radius), limits: limits)
    }

    /// Number of layers.
    public var layerCount: Int { entries.count }

    /// Points over all layers, in their current versions.
    public var pointCount: Int { entries.reduce(0) { $0 + $1.pointCount } }

    /// The layer of that name.
    public func entry(named name: String) throws(EngineError) -> EngineLayer {
        guard let i = layersByName[name] else { throw .unknownLayer(name) }
        return entries[i]
    }

    /// The radius layer of that name (not a live one).
    public func layer(named name: String) throws(EngineError) -> Layer {
        guard case let .radius(layer) = try entry(named: name) else {
            throw .invalidLayerSource(path: name, reason: "is a live layer")
        }
        return layer
    }

    /// The current version of the live layer of that name.
    public func liveLayer(named name: String) throws(EngineError) -> LiveLayer {
        guard case let .live(store) = try entry(named: name) else { throw .readOnlyLayer(name) }
        return store.layer
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
            return .object(["layers": .array(entries.map(\.summary))])

        case let .stats(name):
            if let name {
                return try entry(named: name).summary
            }
            return .object(["layers": .number(Double(entries.count)), "points": .number(Double(pointCount))])

        case let .write(name, batch):
            guard case let .live(store) = try entry(named: name) else { throw .readOnlyLayer(name) }
            return try write(batch, to: store)

        case let .project(from, to, coordinates):
            return try project(coordinates, from: from, to: to)

        case let .nearby(query):
            return try nearby(query)

        case let .reachable(query):
            return try reachable(query)

        case let .get(name, ids):
            return try records(ids, of: name)

        case let .stations(query):
            return try stations(query)

        case .clusters, .children, .leaves, .expansionZoom, .tile:
            return try layerAnswer(request).value
        }
    }

    /// Appends the answer to `request` as JSON text: the bytes of `execute(request)`'s
    /// value, but cluster answers are written feature by feature, without building their
    /// JSON trees first (which costs more than the query for hundreds of features).
    public func encode(_ request: Request, into output: inout [UInt8]) throws(EngineError) {
        switch request {
        case .clusters, .children, .leaves, .expansionZoom, .tile:
            try layerAnswer(request).encode(into: &output)
        case .layers, .stats, .write, .project, .nearby, .reachable, .get, .stations:
            try execute(request).encode(into: &output)
        }
    }

    private func layerAnswer(_ request: Request) throws(EngineError) -> LayerAnswer {
        switch request {
        case let .clusters(name, _, _, filter), let .children(name, _, filter), let .leaves(name, _, _, _, filter),
             let .expansionZoom(name, _, filter), let .tile(name, _, filter):
            switch try entry(named: name) {
            case let .radius(layer):
                guard filter.isEmpty else {
                    throw .invalidFilter("layer", reason: "layer \"\(name)\" uses the radius algorithm, which takes no filters")
                }
                return try answer(request, radius: layer)
            case let .live(store):
                return try answer(request, live: store.layer, filter: filter)
            }
        case .layers, .stats, .write, .project, .nearby, .reachable, .get, .stations:
            preconditionFailure("not a layer query")
        }
    }

    // MARK: Radius layers

    private func answer(_ request: Request, radius layer: Layer) throws(EngineError) -> LayerAnswer {
        switch request {
        case let .clusters(_, bbox, zoom, _):
            let features = try core(field: "zoom") { () throws(GeoClusterError) in
                try layer.index.clusters(in: bbox, zoom: zoom)
            }
            try checkSize(features.count)
            return .radiusFeatures(features, layer)

        case let .children(_, clusterID, _):
            let features = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try layer.index.children(of: clusterID)
            }
            try checkSize(features.count)
            return .radiusFeatures(features, layer)

        case let .leaves(_, clusterID, limit, offset, _):
            let page = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try layer.index.leaves(of: clusterID, limit: limit, offset: offset)
            }
            return .radiusLeaves(LeavesAnswer(page: page, limit: limit, offset: offset), layer)

        case let .expansionZoom(_, clusterID, _):
            let zoom = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try layer.index.expansionZoom(of: clusterID)
            }
            return .value(.object(["cluster_id": .number(Double(clusterID)), "expansion_zoom": .number(Double(zoom))]))

        case let .tile(_, address, _):
            let features = try core(field: "z") { () throws(GeoClusterError) in try layer.index.tile(address) }
            try checkSize(features.count)
            let rendered = features.map { feature -> JSONValue in
                guard case let .point(index) = feature.kind else {
                    return feature.geoJSONVT(pointTags: .null, pointID: nil)
                }
                return feature.geoJSONVT(pointTags: layer.features.properties(at: index),
                                         pointID: layer.features.id(at: index))
            }
            return .value(tileObject(address, extent: layer.index.options.extent, features: rendered))

        case .layers, .stats, .write, .project, .nearby, .reachable, .get, .stations:
            preconditionFailure("not a layer query")
        }
    }

    // MARK: Live layers

    private func answer(_ request: Request, live layer: LiveLayer, filter: LayerFilter) throws(EngineError) -> LayerAnswer {
        let liveFilter = try layer.liveFilter(filter)
        let index = layer.index
        switch request {
        case let .clusters(_, bbox, zoom, _):
            let answer = try core(field: "zoom") { () throws(GeoClusterError) in
                try index.clusters(in: bbox, zoom: zoom, filter: liveFilter)
            }
            try checkSize(answer.features.count)
            return .liveFeatures(answer, layer)

        case let .children(_, clusterID, _):
            let answer = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try index.children(of: clusterID, filter: liveFilter)
            }
            try checkSize(answer.features.count)
            return .liveFeatures(answer, layer)

        case let .leaves(_, clusterID, limit, offset, _):
            let page = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try index.leaves(of: clusterID, limit: limit, offset: offset, filter: liveFilter)
            }
            return .liveLeaves(LeavesAnswer(page: page, limit: limit, offset: offset), layer)

        case let .expansionZoom(_, clusterID, _):
            let zoom = try core(field: "cluster_id") { () throws(GeoClusterError) in
                try index.expansionZoom(of: clusterID, filter: liveFilter)
            }
            return .value(.object(["cluster_id": .number(Double(clusterID)), "expansion_zoom": .number(Double(zoom))]))

        case let .tile(_, address, _):
            let tile = try core(field: "z") { () throws(GeoClusterError) in try index.tile(address, filter: liveFilter) }
            try checkSize(tile.features.count)
            let rendered = tile.features.map { feature -> JSONValue in
                let extra = feature.aggregateIndex.map { layer.aggregateProperties(tile.summaries[$0]) } ?? JSONObject()
                let source: (properties: JSONValue, id: JSONValue?) =
                    if case let .point(slot) = feature.kind { layer.tileProperties(slot: slot) } else { (.null, nil) }
                return feature.geoJSONVT(extraClusterProperties: extra, pointTags: source.properties, pointID: source.id)
            }
            return .value(tileObject(address, extent: index.options.extent, features: rendered))

        case .layers, .stats, .write, .project, .nearby, .reachable, .get, .stations:
            preconditionFailure("not a layer query")
        }
    }

    /// The records of a live layer with these ids, as stored, in the order asked; the
    /// first id the layer does not hold is `unknown_id`.
    private func records(_ ids: [JSONValue], of name: String) throws(EngineError) -> JSONValue {
        guard case let .live(store) = try entry(named: name) else { throw .notLiveLayer(field: "layer", layer: name) }
        let layer = store.layer
        var features: [JSONValue] = []
        features.reserveCapacity(ids.count)
        for (i, id) in ids.enumerated() {
            guard let key = LayerRecord.idKey(of: id) else {
                throw .invalidField("ids[\(i)]", reason: "must be a record id: a non-empty string or an integer")
            }
            guard let record = layer.record(idKey: key) else { throw .unknownID(layer: name, index: i, id: key) }
            features.append(record.feature)
        }
        return GeoJSON.featureCollection(features)
    }

    /// Validates every record or id of a batch against the layer's schema, then applies
    /// the batch atomically.
    private func write(_ batch: Request.WriteBatch, to store: LiveLayerStore) throws(EngineError) -> JSONValue {
        let name = store.name, kind = store.kind
        var changes: [LiveLayerStore.Change] = []
        let op: String
        switch batch {
        case let .insert(records), let .upsert(records):
            var isInsert = false
            if case .insert = batch { isInsert = true }
            op = isInsert ? "insert" : "upsert"
            changes.reserveCapacity(records.count)
            let checklist = store.layer.speciesChecklist
            for (i, given) in records.enumerated() {
                var json = given
                if let checklist { json = try Self.namingScientifically(json, checklist, layer: name, index: i) }
                let record = try LayerRecord(json: json, kind: kind, layer: name, index: i)
                changes.append(isInsert ? .insert(record) : .upsert(record))
            }
        case let .delete(ids):
            op = "delete"
            for (i, id) in ids.enumerated() {
                guard let key = LayerRecord.idKey(of: id) else {
                    throw .invalidField("ids[\(i)]", reason: "must be a non-empty string or an integer")
                }
                changes.append(.delete(idKey: key))
            }
        }
        let layer = try store.apply(changes)
        return .object(["layer": .string(name), "op": .string(op), "applied": .number(Double(changes.count)),
                        "count": .number(Double(layer.count)), "version": .number(Double(layer.version))])
    }

    /// A sighting whose species is given by any name of the checklist, with the scientific
    /// name in its place; `unknown_species` for a name the checklist does not have. Other
    /// mistakes are left for the record's own checks.
    private static func namingScientifically(_ json: JSONValue, _ checklist: SpeciesChecklist, layer: String,
                                             index: Int) throws(EngineError) -> JSONValue {
        guard var object = json.objectValue else { return json }
        if let name = object["species"]?.stringValue {
            guard let scientific = checklist.scientificName(name) else {
                throw .unknownSpecies(field: "records[\(index)].species", layer: layer, name: name)
            }
            if scientific != name { object["species"] = .string(scientific) }
        } else if var properties = object["properties"]?.objectValue, let name = properties["species"]?.stringValue {
            guard let scientific = checklist.scientificName(name) else {
                throw .unknownSpecies(field: "records[\(index)].species", layer: layer, name: name)
            }
            if scientific != name {
                properties["species"] = .string(scientific)
                object["properties"] = .object(properties)
            }
        }
        return .object(object)
    }

    // MARK: Output

    private func tileObject(_ address: TileAddress, extent: Int, features: [JSONValue]) -> JSONValue {
        .object(["z": .number(Double(address.z)), "x": .number(Double(address.x)), "y": .number(Double(address.y)),
                 "extent": .number(Double(extent)), "features": .array(features)])
    }

    func checkSize(_ count: Int) throws(EngineError) {
        guard count <= limits.maxFeaturesPerResponse else {
            throw .tooLarge(what: "\(count) features", limit: limits.maxFeaturesPerResponse)
        }
    }

    /// Runs a core call, attributing its errors to the request field they came from.
    func core<T>(field: String, _ body: () throws(GeoClusterError) -> T) throws(EngineError) -> T {
        do {
            return try body()
        } catch {
            throw .core(error, field: field)
        }
    }
}

/// A layer query's answer before it is written. Cluster answers stay features, so that
/// they can be written as text without building a JSON tree; the rest are values.
private enum LayerAnswer {
    case value(JSONValue)
    case radiusFeatures([ClusterFeature], Layer)
    case liveFeatures(LiveAnswer, LiveLayer)
    case radiusLeaves(LeavesAnswer, Layer)
    case liveLeaves(LeavesAnswer, LiveLayer)

    var value: JSONValue {
        switch self {
        case let .value(value):
            value
        case let .radiusFeatures(features, layer):
            GeoJSON.featureCollection(features.map { feature in feature.geoJSON { layer.features[$0] } })
        case let .liveFeatures(answer, layer):
            GeoJSON.featureCollection(layer.geoJSON(answer))
        case let .radiusLeaves(leaves, layer):
            leaves.value { layer.features[$0] }
        case let .liveLeaves(leaves, layer):
            leaves.value { layer.pointFeature(slot: $0) }
        }
    }

    func encode(into output: inout [UInt8]) {
        switch self {
        case let .value(value):
            value.encode(into: &output)
        case let .radiusFeatures(features, layer):
            GeoJSON.encodeFeatureCollection(count: features.count, into: &output) { position, output in
                features[position].encodeGeoJSON(into: &output) { index, output in layer.features.encode(index, into: &output) }
            }
        case let .liveFeatures(answer, layer):
            layer.encodeGeoJSON(answer, into: &output)
        case let .radiusLeaves(leaves, layer):
            leaves.encode(into: &output) { index, output in layer.features.encode(index, into: &output) }
        case let .liveLeaves(leaves, layer):
            leaves.encode(into: &output) { slot, output in layer.encodePointFeature(slot: slot, into: &output) }
        }
    }
}

/// A page of a cluster's points: a FeatureCollection of their features with the page's
/// `total`, `limit` and `offset`. Written as text, each point's feature is copied as the
/// layer keeps it, instead of being parsed from its text into a value first.
private struct LeavesAnswer {
    var page: LeavesPage
    var limit: Int
    var offset: Int

    func value(_ feature: (Int) -> JSONValue) -> JSONValue {
        var collection: JSONObject = ["type": "FeatureCollection", "features": .array(page.pointIndices.map(feature))]
        for (key, number) in counts { collection[key] = .number(Double(number)) }
        return .object(collection)
    }

    /// The bytes of ``value(_:)``'s encoding.
    func encode(into output: inout [UInt8], feature: (Int, inout [UInt8]) -> Void) {
        output += #"{"type":"FeatureCollection","features":["#.utf8
        for (position, index) in page.pointIndices.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            feature(index, &output)
        }
        output.append(UInt8(ascii: "]"))
        for (key, number) in counts {
            output += #",""#.utf8
            output += key.utf8
            output += #"":"#.utf8
            JSONValue.number(Double(number)).encode(into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    private var counts: KeyValuePairs<String, Int> { ["total": page.total, "limit": limit, "offset": offset] }
}
