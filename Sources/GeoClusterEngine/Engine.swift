import GeoCluster
import GeoClusterWire
import GeoReachability
import GeoProjection
import Synchronization

/// A loaded layer: built once with the radius algorithm (supercluster-compatible,
/// read-only), or live (typed records, writes, filters and aggregates). Queries go to
/// its ``current`` version through ``ClusterLayer``; writes go to its ``store``.
public enum EngineLayer: Sendable {
    case radius(RadiusLayer)
    case live(LiveLayerStore)

    /// The version that answers now: the radius layer itself, or the live layer's latest.
    public var current: any ClusterLayer {
        switch self {
        case let .radius(layer): layer
        case let .live(store): store.layer
        }
    }

    /// Where a live layer's writes go; nil for a read-only radius layer.
    public var store: LiveLayerStore? {
        if case let .live(store) = self { store } else { nil }
    }

    public var name: String { current.name }
    public var kind: LayerKind { current.kind }
    /// Points in the current version.
    public var pointCount: Int { current.pointCount }
    /// Wall-clock seconds the layer's index took to build when it was loaded.
    public var buildSeconds: Double { current.buildSeconds }
    public var summary: JSONValue { current.summary }
    /// For a live layer, the items its kept display groups hold and may hold, and the
    /// memory they take (``LiveClusterIndex/keptItems``); `nil` for a radius layer.
    public var keptItems: (held: Int, budget: Int, bytes: Int)? {
        if case let .live(store) = self { store.layer.index.keptItems } else { nil }
    }
}

/// The layers an answer reads and the version of each when it was computed
/// (``Engine/answerStamp(for:)``, ``Engine/isCurrent(_:)``).
public struct AnswerStamp: Sendable, Equatable {
    /// Indices into ``Engine/entries``.
    public private(set) var layers: [Int] = []
    public private(set) var versions: [Int] = []

    mutating func append(layer: Int, version: Int) {
        layers.append(layer)
        versions.append(version)
    }
}

/// The one place where queries are answered. Transports decode their input into a
/// ``Request`` and call ``encode(_:into:)``, which writes the answer as JSON text; no
/// query logic lives in a transport. ``execute(_:)`` gives the same answer as a value.
///
/// Radius layers are immutable values and live layers hand out immutable versions, so
/// any number of threads may call ``encode(_:into:)`` at once without locks; writes to a live
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
    public convenience init(layers: [RadiusLayer], limits: Limits = Limits()) throws(EngineError) {
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
    public func layer(named name: String) throws(EngineError) -> RadiusLayer {
        guard case let .radius(layer) = try entry(named: name) else {
            throw .invalidLayerSource(path: name, reason: "is a live layer")
        }
        return layer
    }

    /// The current version of the live layer of that name.
    public func liveLayer(named name: String) throws(EngineError) -> LiveLayer {
        guard let store = try entry(named: name).store else { throw .readOnlyLayer(name) }
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

    /// What an answer to `request` depends on besides the request itself: the versions of
    /// the layers it reads (every layer for `layers` and `stats` without a layer). Two
    /// requests with equal stamps get equal answers, so a transport may keep an answer
    /// under it. `nil` for requests whose answers depend on more (the clock in
    /// `reachable`, the caller in `get`) or that change a layer. Take it before computing
    /// the answer: the answer is then of that version or a newer one.
    public func answerStamp(for request: Request) -> AnswerStamp? {
        switch request {
        case .write, .reachable, .get, .project: return nil
        case .layers, .stats, .clusters, .children, .leaves, .list, .expansionZoom, .tile, .nearby, .stations, .species:
            break
        }
        let names = request.layerNames
        var stamp = AnswerStamp()
        if names.isEmpty {
            for i in entries.indices { stamp.append(layer: i, version: version(of: i)) }
        } else {
            for name in names {
                guard let i = layersByName[name] else { return nil }
                stamp.append(layer: i, version: version(of: i))
            }
        }
        return stamp
    }

    /// Whether the layers `stamp` names are still at the versions it holds: an answer
    /// kept under it is then the answer of now. A check of a few integers, so that a
    /// transport can give a kept answer (or a 304) without reading the request again.
    public func isCurrent(_ stamp: AnswerStamp) -> Bool {
        for (i, version) in zip(stamp.layers, stamp.versions) where self.version(of: i) != version { return false }
        return true
    }

    /// A layer's version for ``AnswerStamp``: a radius layer never changes.
    private func version(of i: Int) -> Int {
        switch entries[i] {
        case .radius: 0
        case let .live(store): store.version
        }
    }

    /// Answers a request; the result is the `result` member of the wire protocols.
    /// `caller` decides only which form of a sensitive sighting `get` gives: the exact one
    /// to its owner's key and to admin keys, the generalised one to everyone else.
    public func execute(_ request: Request, by caller: Caller = .trusted) throws(EngineError) -> JSONValue {
        switch request {
        case .layers:
            // The walking networks too, so that a client can offer `"travel":"network"`.
            let networkList: [JSONValue] = networks.sorted { $0.key < $1.key }.map { name, network in
                .object(["name": .string(name), "nodes": .number(Double(network.nodeCount)),
                        "edges": .number(Double(network.edgeCount))])
            }
            return .object(["layers": .array(entries.map(\.summary)), "networks": .array(networkList)])

        case let .stats(name):
            if let name {
                return try entry(named: name).summary
            }
            return .object(["layers": .number(Double(entries.count)), "points": .number(Double(pointCount))])

        case let .write(name, batch):
            // Writes with a key take the owner rules of perform(_:by:), which this path has not.
            guard caller == .trusted else {
                throw .forbidden(reason: "writes with a key are answered by Engine.perform(_:by:)")
            }
            guard let store = try entry(named: name).store else { throw .readOnlyLayer(name) }
            return try write(batch, to: store)

        case let .project(from, to, coordinates):
            return try project(coordinates, from: from, to: to)

        case let .nearby(query):
            return try nearby(query)

        case let .reachable(query):
            return try reachable(query)

        case let .get(name, ids):
            return try records(ids, of: name, revealingTo: caller)

        case let .stations(query):
            return try stations(query)

        case let .species(name, language):
            return try species(of: name, language: language)

        case .clusters, .children, .leaves, .list, .tile:
            return try layerAnswer(request).value

        case let .expansionZoom(name, clusterID, filter):
            let zoom = try entry(named: name).current.expansionZoom(of: clusterID, filter: filter)
            return .object(["cluster_id": .number(Double(clusterID)), "expansion_zoom": .number(Double(zoom))])
        }
    }

    /// Appends the answer to `request` as JSON text. Cluster answers are written feature
    /// by feature, straight to text, without building their JSON trees (which would cost
    /// more than the query for hundreds of features).
    public func encode(_ request: Request, into output: inout [UInt8]) throws(EngineError) {
        switch request {
        case .clusters, .children, .leaves, .list, .tile:
            try layerAnswer(request).encode(into: &output)
        case .layers, .stats, .write, .project, .nearby, .reachable, .get, .stations, .species, .expansionZoom:
            try execute(request).encode(into: &output)
        }
    }

    /// The answer to a layer query, from the layer's current version; the one place
    /// where the size of an answer is checked.
    private func layerAnswer(_ request: Request) throws(EngineError) -> LayerAnswer {
        let answer: LayerAnswer
        switch request {
        case let .clusters(name, bbox, zoom, filter):
            answer = try entry(named: name).current.clusters(in: bbox, zoom: zoom, filter: filter,
                                                             limit: limits.maxFeaturesPerResponse)
        case let .children(name, clusterID, filter):
            answer = try entry(named: name).current.children(of: clusterID, filter: filter)
        case let .leaves(name, clusterID, limit, offset, filter, order):
            answer = try entry(named: name).current.leaves(of: clusterID, limit: limit, offset: offset, filter: filter,
                                                           order: order)
        case let .list(name, bbox, limit, offset, filter, order):
            guard let store = try entry(named: name).store else { throw .notLiveLayer(field: "layer", layer: name) }
            answer = try store.layer.list(in: bbox, limit: limit, offset: offset, filter: filter, order: order)
        case let .tile(name, address, filter):
            let tile = try entry(named: name).current.tile(address, filter: filter)
            try checkSize(tile.features.count)
            let value = tileObject(address, extent: tile.extent, features: tile.geoJSONVTFeatures)
            return LayerAnswer(featureCount: tile.features.count) { value.encode(into: &$0) }
        case .layers, .stats, .write, .project, .nearby, .reachable, .get, .stations, .species, .expansionZoom:
            preconditionFailure("not a layer query")
        }
        guard answer.isComplete else {
            throw .tooLarge(what: "more than \(limits.maxFeaturesPerResponse) features", limit: limits.maxFeaturesPerResponse)
        }
        try checkSize(answer.featureCount)
        return answer
    }

    /// The records of a live layer with these ids, as stored, in the order asked; the
    /// first id the layer does not hold is `unknown_id`. A sighting is given as written (a
    /// sensitive one at its exact position, a note) only to its owner's key or an admin key.
    private func records(_ ids: [JSONValue], of name: String, revealingTo caller: Caller) throws(EngineError) -> JSONValue {
        guard let store = try entry(named: name).store else { throw .notLiveLayer(field: "layer", layer: name) }
        let layer = store.layer
        var features: [JSONValue] = []
        features.reserveCapacity(ids.count)
        for (i, id) in ids.enumerated() {
            guard let key = LayerRecord.idKey(of: id) else {
                throw .invalidField("ids[\(i)]", reason: "must be a record id: a non-empty string or an integer")
            }
            guard let record = layer.record(idKey: key) else { throw .unknownID(layer: name, index: i, id: key) }
            if let written = record.ownerFeatureText, case let .key(grant) = caller,
               grant.scopes.contains(.admin) || grant.owner == record.observerID {
                features.append(JSONValue(encodedText: written[...]))
            } else {
                features.append(record.feature)
            }
        }
        return GeoJSON.featureCollection(features)
    }

    /// Answers a request as ``execute(_:)`` does, but a write waits for the store
    /// without holding the calling thread (``LiveLayerStore/write(_:)``): the form
    /// for transports that run on Swift concurrency's threads.
    ///
    /// `caller` is who sends it (``authorize(_:by:)``). A write with a key that is not
    /// `admin` to a sightings layer is the key owner's: each record's `observer_id` is set
    /// to the owner (another value is `not_owner`), and a record that exists and is not
    /// the owner's may not be changed or deleted (``LiveLayerStore/apply(_:owner:)``).
    public func perform(_ request: Request, by caller: Caller = .trusted) async throws(EngineError) -> JSONValue {
        try authorize(request, by: caller)
        guard case let .write(name, batch) = request else { return try execute(request, by: caller) }
        guard let store = try entry(named: name).store else { throw .readOnlyLayer(name) }
        var owner: String?
        if case let .key(grant) = caller, !grant.scopes.contains(.admin), store.kind == .sightings {
            owner = grant.owner
        }
        let (op, changes) = try changes(of: batch, for: store, owner: owner)
        return writeAnswer(op: op, changes: changes, layer: try await store.write(changes, owner: owner))
    }

    /// As ``encode(_:into:)``, with writes as in ``perform(_:by:)``.
    public func perform(_ request: Request, by caller: Caller = .trusted,
                        into output: inout [UInt8]) async throws(EngineError) {
        guard request.isWrite else {
            try authorize(request, by: caller)
            if case .get = request { return try execute(request, by: caller).encode(into: &output) }
            return try encode(request, into: &output)
        }
        try await perform(request, by: caller).encode(into: &output)
    }

    /// Validates every record or id of a batch against the layer's schema, then applies
    /// the batch atomically.
    private func write(_ batch: Request.WriteBatch, to store: LiveLayerStore) throws(EngineError) -> JSONValue {
        let (op, changes) = try changes(of: batch, for: store, owner: nil)
        return writeAnswer(op: op, changes: changes, layer: try store.apply(changes))
    }

    private func writeAnswer(op: String, changes: [LayerChange], layer: LiveLayer) -> JSONValue {
        .object(["layer": .string(layer.name), "op": .string(op), "applied": .number(Double(changes.count)),
                 "count": .number(Double(layer.count)), "version": .number(Double(layer.version))])
    }

    /// A batch's changes, each record validated against the layer's schema (species named
    /// by the checklist's scientific name, `observer_id` set to `owner` when there is
    /// one), and the operation's name.
    private func changes(of batch: Request.WriteBatch, for store: LiveLayerStore,
                         owner: String?) throws(EngineError) -> (String, [LayerChange]) {
        let name = store.name, kind = store.kind
        var changes: [LayerChange] = []
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
                if let checklist { json = try checklist.namingScientifically(json, layer: name, index: i) }
                if let owner { json = try Self.owned(json, by: owner, layer: name, index: i) }
                let record = try LayerRecord(json: json, kind: kind, layer: name, index: i)
                try Self.checkSeen(record, layer: name, index: i)
                changes.append(isInsert ? .insert(record) : .upsert(record))
            }
        case let .delete(ids):
            op = "delete"
            var positions: [String: Int] = [:]
            for (i, id) in ids.enumerated() {
                guard let key = LayerRecord.idKey(of: id) else {
                    throw .invalidField("ids[\(i)]", reason: "must be a non-empty string or an integer")
                }
                // The second delete of one id would find nothing: say what is wrong instead.
                if let first = positions.updateValue(i, forKey: key) {
                    throw .invalidField("ids[\(i)]", reason: "repeats ids[\(first)] (\(String(id.jsonString.prefix(40)))); name each record once")
                }
                changes.append(.delete(idKey: key))
            }
        }
        return (op, changes)
    }

    /// How far after the clock of the machine answering a sighting written to it may have
    /// been seen: a day, for a device's clock set wrong, or a local time sent with `Z`
    /// (the instants are compared, so a true offset never matters).
    static let sightingClockToleranceSeconds: Int64 = 86_400

    /// A sighting is written after it is seen: an `observed_at` more than a day after the
    /// clock (a year typed wrong) is refused, before it becomes the latest sighting of
    /// every cluster around it. Records loaded from files and stores are taken as they are.
    private static func checkSeen(_ record: LayerRecord, layer: String, index: Int) throws(EngineError) {
        guard case let .sighting(_, _, observedAt) = record.fields else { return }
        guard observedAt.epochSeconds > currentEpochSecondsRoundedUp() + sightingClockToleranceSeconds else { return }
        let id = record.idJSON
        throw .invalidRecord(layer: layer, index: index, id: id == .null ? nil : id.jsonString, field: "observed_at",
                             reason: "\(observedAt.text) is more than a day after the service's clock; a sighting is recorded once it has been seen")
    }

    /// A sighting with `observer_id` set to `owner`: added when absent, `not_owner` when
    /// it names someone else. Other mistakes are left for the record's own checks.
    private static func owned(_ json: JSONValue, by owner: String, layer: String,
                              index: Int) throws(EngineError) -> JSONValue {
        guard var object = json.objectValue else { return json }
        let id = object["id"]?.stringValue ?? object["id"]?.jsonString ?? ""
        func stamped(_ fields: inout JSONObject) throws(EngineError) {
            if let given = fields["observer_id"], given != .null {
                guard given == .string(owner) else {
                    throw .notOwner(layer: layer, field: "records[\(index)].observer_id", id: id,
                                    reason: "observer_id is \(given.jsonString) but the key belongs to \(JSONValue.string(owner).jsonString)")
                }
            } else {
                fields["observer_id"] = .string(owner)
            }
        }
        if object["type"] != nil {
            let given = object["properties"] ?? .null
            guard var properties = given == .null ? JSONObject() : given.objectValue else { return json }
            try stamped(&properties)
            object["properties"] = .object(properties)
        } else {
            try stamped(&object)
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
}
