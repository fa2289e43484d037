import GeoCluster
import GeoClusterWire
import GeoProjection

/// Every error the engine reports to a transport. Each case says what was wrong and
/// where (the offending field or feature), has a stable machine-readable ``code``, and
/// a ``category`` from which each transport derives its status in one place.
public enum EngineError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The request is not a JSON object, or otherwise not a request at all.
    case invalidRequest(reason: String)
    /// `op` names no operation.
    case unknownOperation(String)
    /// A required field is absent.
    case missingField(String)
    /// A field has the wrong type or a value out of range.
    case invalidField(String, reason: String)
    /// A field that the operation does not take (usually a typo).
    case unknownField(String)
    /// No layer of that name is loaded.
    case unknownLayer(String)
    /// A feature of a layer source is not a valid point feature.
    case invalidFeature(layer: String, index: Int, reason: String)
    /// A layer record (a GeoJSON Feature or a flat record) fails its kind's schema.
    /// `index` is the record's 0-based position in its batch or file; `id` is the
    /// record's id as JSON text (`"s7"` or `7`), `nil` when absent or itself invalid;
    /// `field` names the offending field (`count`, `lon`, `geometry`, `properties.name`).
    case invalidRecord(layer: String, index: Int, id: String?, field: String, reason: String)
    /// A layer source could not be read or has the wrong shape.
    case invalidLayerSource(path: String, reason: String)
    /// An answer would exceed a size limit; `limit` is the bound.
    case tooLarge(what: String, limit: Int)
    /// An error of the clustering core, with the request field it came from.
    case core(GeoClusterError, field: String?)
    /// A filter the layer's kind does not take.
    case invalidFilter(String, reason: String)
    /// An insert whose id the layer already holds (or an earlier record of the batch has);
    /// `index` is the record's position in the batch.
    case duplicateID(layer: String, index: Int, id: String)
    /// An update or delete of an id the layer does not hold.
    case unknownID(layer: String, index: Int, id: String)
    /// A write to a layer that cannot change (built with the radius algorithm).
    case readOnlyLayer(String)
    /// An error of the PROJ wrapper, with the request field it came from: `from` or `to`
    /// for a CRS, `coordinates[i]` for the i-th (0-based) coordinate pair.
    case projection(ProjectionError, field: String?)
    /// A layer of the wrong kind for the field naming it (`reachable` needs a places layer
    /// in `layer` and a stations layer in `stations_layer`).
    case wrongLayerKind(field: String, layer: String, expected: LayerKind, actual: LayerKind)
    /// An operation that needs a live layer was given one built with the radius algorithm.
    case notLiveLayer(field: String, layer: String)
    /// `reachable`: no station with that id in the stations layer.
    case unknownStation(layer: String, id: String)
    /// `reachable`: a station name that more than one station answers to.
    case ambiguousStation(layer: String, name: String, candidates: [String])
    /// A species name that the sightings layer's checklist does not have.
    case unknownSpecies(field: String, layer: String, name: String)
    /// `reachable`: no walking network of that name, or none covering the station.
    case unknownNetwork(field: String, reason: String)
    /// The durable store could not commit a write (or could not be read): nothing of the
    /// batch was applied. A fault of the service, not of the request; retrying later may
    /// succeed.
    case storageUnavailable(reason: String)
    /// A request that needs an API key came without a valid one (missing, unknown,
    /// malformed or revoked). Only transports with keys report it (HTTP: 401).
    case unauthorized(reason: String)
    /// The request's key does not allow it: a scope it lacks, a layer it may not reach.
    case forbidden(reason: String)
    /// A write that would change or delete a sighting owned by someone else than the
    /// key's owner (or name another owner in `observer_id`); `field` names the item
    /// (`records[2]`, `ids[0]`).
    case notOwner(layer: String, field: String, id: String, reason: String)

    /// How a transport should treat the error.
    public enum Category: Sendable {
        case badRequest, notFound, tooLarge
        /// The request conflicts with what the layer holds (an insert of an id it has).
        case conflict
        /// The service failed, not the request (PROJ could not start).
        case internalFailure
        /// The service cannot do it now (the store is unreachable); the request may be retried.
        case unavailable
        /// The request needs a valid API key.
        case unauthorized
        /// The request's key does not allow it.
        case forbidden
    }

    public var category: Category {
        switch self {
        case .unknownLayer: .notFound
        case .core(.unknownCluster, _): .notFound
        case .tooLarge: .tooLarge
        case .unknownID: .notFound
        case .duplicateID: .conflict
        case .unknownStation: .notFound
        case .unknownNetwork: .notFound
        case .projection(.contextCreationFailed, _): .internalFailure
        case .storageUnavailable: .unavailable
        case .unauthorized: .unauthorized
        case .forbidden, .notOwner: .forbidden
        default: .badRequest
        }
    }

    /// Stable snake_case identifier for clients.
    public var code: String {
        switch self {
        case .invalidRequest: "invalid_request"
        case .unknownOperation: "unknown_op"
        case .missingField: "missing_field"
        case .invalidField: "invalid_field"
        case .unknownField: "unknown_field"
        case .unknownLayer: "unknown_layer"
        case .invalidFeature: "invalid_feature"
        case .invalidRecord: "invalid_record"
        case .invalidLayerSource: "invalid_layer_source"
        case .tooLarge: "too_large"
        case let .core(error, _): error.code
        case .invalidFilter: "invalid_filter"
        case .duplicateID: "duplicate_id"
        case .unknownID: "unknown_id"
        case .readOnlyLayer: "read_only_layer"
        case let .projection(error, _): error.code
        case .wrongLayerKind: "wrong_layer_kind"
        case .notLiveLayer: "not_live_layer"
        case .unknownStation: "unknown_station"
        case .ambiguousStation: "ambiguous_station"
        case .unknownSpecies: "unknown_species"
        case .unknownNetwork: "unknown_network"
        case .storageUnavailable: "storage_unavailable"
        case .unauthorized: "unauthorized"
        case .forbidden: "forbidden"
        case .notOwner: "not_owner"
        }
    }

    /// The request field (or feature) the error is about, if any.
    public var field: String? {
        switch self {
        case let .missingField(name), let .invalidField(name, _), let .unknownField(name): name
        case .unknownLayer: "layer"
        case .unknownOperation: "op"
        case let .core(_, field): field
        case let .invalidFilter(name, _): name
        case let .invalidRecord(_, _, _, field, _): field
        case let .duplicateID(_, index, _): "records[\(index)]"
        case let .unknownID(_, index, _): "ids[\(index)]"
        case .readOnlyLayer: "layer"
        case let .projection(_, field): field
        case let .wrongLayerKind(field, _, _, _), let .notLiveLayer(field, _), let .unknownNetwork(field, _): field
        case .unknownStation, .ambiguousStation: "station"
        case let .unknownSpecies(field, _, _): field
        case let .notOwner(_, field, _, _): field
        default: nil
        }
    }

    public var description: String {
        switch self {
        case let .invalidRequest(reason): "invalid request: \(reason)"
        case let .unknownOperation(op): "unknown op \"\(op)\""
        case let .missingField(name): "missing field \"\(name)\""
        case let .invalidField(name, reason): "invalid field \"\(name)\": \(reason)"
        case let .unknownField(name): "unknown field \"\(name)\""
        case let .unknownLayer(name): "no layer named \"\(name)\""
        case let .invalidFeature(layer, index, reason): "layer \"\(layer)\", feature \(index): \(reason)"
        case let .invalidRecord(layer, index, id, field, reason):
            "layer \"\(layer)\", record \(index)\(id.map { " (id \($0))" } ?? ""): field \"\(field)\": \(reason)"
        case let .invalidLayerSource(path, reason): "\(path): \(reason)"
        case let .tooLarge(what, limit): "\(what) exceeds the limit of \(limit)"
        case let .core(error, _): error.description
        case let .invalidFilter(name, reason): "invalid filter \"\(name)\": \(reason)"
        case let .duplicateID(layer, index, id): "layer \"\(layer)\", record \(index): id \"\(id)\" already exists"
        case let .unknownID(layer, index, id): "layer \"\(layer)\", item \(index): no record with id \"\(id)\""
        case let .readOnlyLayer(name):
            "layer \"\(name)\" uses the radius algorithm, which is built once; load it with the live algorithm to change it"
        case let .projection(error, _): error.description
        case let .wrongLayerKind(_, layer, expected, actual):
            "layer \"\(layer)\" holds \(actual.rawValue); a \(expected.rawValue) layer is required"
        case let .notLiveLayer(_, layer):
            "layer \"\(layer)\" uses the radius algorithm; this operation needs a live layer"
        case let .unknownStation(layer, id): "no station with id or name \(id) in layer \"\(layer)\""
        case let .unknownSpecies(_, layer, name):
            "no species named \"\(name.prefix(80))\" on the checklist of layer \"\(layer)\" (scientific, Korean or English names)"
        case let .ambiguousStation(layer, name, candidates):
            "\(candidates.count) stations of layer \"\(layer)\" answer to \"\(name)\": \(candidates.joined(separator: ", ")); give one by id"
        case let .unknownNetwork(_, reason): reason
        case let .storageUnavailable(reason): "the store is unavailable: \(reason)"
        case let .unauthorized(reason): reason
        case let .forbidden(reason): reason
        case let .notOwner(layer, field, id, reason): "layer \"\(layer)\", \(field) (id \"\(id)\"): \(reason)"
        }
    }
}
