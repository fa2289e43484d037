import GeoCluster
import GeoClusterWire
import GeoProjection

/// One engine operation with validated parameters. Every transport builds these (from a
/// JSON line, from an HTTP route) and hands them to ``Engine/encode(_:into:)``.
public enum Request: Sendable, Equatable {
    /// Every loaded layer with its kind, size, bounds and options.
    case layers
    /// Totals over all layers, or one layer's summary.
    case stats(layer: String?)
    /// Clusters and single points of a layer inside a viewport at a zoom.
    case clusters(layer: String, bbox: BoundingBox, zoom: Double, filter: LayerFilter = .none)
    /// The items one zoom deeper that a cluster splits into.
    case children(layer: String, clusterID: Int, filter: LayerFilter = .none)
    /// A page of the points inside a cluster.
    case leaves(layer: String, clusterID: Int, limit: Int, offset: Int, filter: LayerFilter = .none,
                order: LeafOrder? = nil)
    /// A page of a live layer's records inside a viewport (the birding app's "sightings
    /// in this view"), in the index's order or by observation time.
    case list(layer: String, bbox: BoundingBox, limit: Int, offset: Int, filter: LayerFilter = .none,
              order: LeafOrder? = nil)
    /// The zoom at which a cluster splits.
    case expansionZoom(layer: String, clusterID: Int, filter: LayerFilter = .none)
    /// One tile in geojson-vt form (pixel coordinates within the tile's extent).
    case tile(layer: String, address: TileAddress, filter: LayerFilter = .none)
    /// Coordinates converted between two CRSs by PROJ, in visualisation order (x is the
    /// longitude or easting). See `Request+Project.swift`.
    case project(from: CRS, to: CRS, coordinates: [CRSPoint])
    /// A batch of changes to a live layer, applied all or nothing.
    case write(layer: String, batch: WriteBatch)
    /// Points of a live layer near a location, nearest first. See `Request+Nearby.swift`.
    case nearby(NearbyQuery)
    /// The places that fit in the time before a train leaves. See `Request+Reachable.swift`.
    case reachable(ReachableQuery)
    /// The records of a live layer with these ids, as GeoJSON Features in the order asked.
    case get(layer: String, ids: [JSONValue])
    /// Stations by name, line or position.
    case stations(StationQuery)
    /// The species of a sightings layer with their names and totals (`Engine+Species.swift`).
    case species(layer: String, language: NameLanguage?)

    /// The changes of one `insert`, `upsert` or `delete` request, not yet validated
    /// against the layer's schema (that needs the layer's kind).
    public enum WriteBatch: Sendable, Equatable {
        case insert(records: [JSONValue])
        case upsert(records: [JSONValue])
        case delete(ids: [JSONValue])
    }

    /// Whether the request changes a layer.
    public var isWrite: Bool {
        if case .write = self { return true }
        return false
    }

    /// The operation names of the wire protocols.
    public static let operations = ["layers", "stats", "clusters", "children", "leaves", "list", "expansion_zoom", "tile",
                                    "insert", "upsert", "delete", "project", "nearby", "reachable", "route", "get",
                                    "stations", "species"]

    /// Most records or ids in one write request.
    public static let maxBatchSize = 10_000

    /// The non-negative integers a JSON number holds exactly, 0...2^53 - 1: cluster ids
    /// and offsets. Above it a number may stand for its neighbour (9007199254740993 reads
    /// as 9007199254740992), so such values are out of range rather than silently another.
    public static let exactIntegers = 0...((1 << 53) - 1)

    /// Default and largest page size of `leaves`.
    public static let defaultLeavesLimit = 10
    public static let maxLeavesLimit = 10_000

    /// Reads a request object: `op` plus the operation's fields. `id` is the caller's and
    /// ignored here; any other unknown field is an error, so typos do not pass silently.
    public init(json: JSONValue) throws(EngineError) {
        guard case let .object(object) = json else {
            throw .invalidRequest(reason: "a request must be a JSON object")
        }
        var fields = FieldReader(object)
        try self.init(op: try fields.string("op"), reading: &fields)
    }

    /// Reads an operation from the text parameters of an HTTP route (path captures and
    /// query items, percent-decoded, names unique): `zoom=6`, `bbox=126.8,37.4,127.2,37.7`,
    /// `species=Anas acuta,Grus japonensis`. Each field reads its text as its JSON form
    /// is read, with the same error codes and field names (see ``FieldReader``).
    public init(op: String, parameters: [(name: String, value: String)]) throws(EngineError) {
        var fields = FieldReader(parameters: parameters)
        try self.init(op: op, reading: &fields)
    }

    private init(op: String, reading fields: inout FieldReader) throws(EngineError) {
        switch op {
        case "layers":
            self = .layers
        case "stats":
            self = .stats(layer: try fields.optionalString("layer"))
        case "clusters":
            self = .clusters(layer: try fields.string("layer"), bbox: try fields.bbox("bbox"),
                             zoom: try fields.double("zoom", in: -1_000...1_000), filter: try LayerFilter.read(&fields))
        case "children":
            self = .children(layer: try fields.string("layer"), clusterID: try fields.int("cluster_id", in: Self.exactIntegers),
                             filter: try LayerFilter.read(&fields))
        case "leaves":
            self = .leaves(layer: try fields.string("layer"), clusterID: try fields.int("cluster_id", in: Self.exactIntegers),
                           limit: try fields.optionalInt("limit", in: 1...Self.maxLeavesLimit) ?? Self.defaultLeavesLimit,
                           offset: try fields.optionalInt("offset", in: Self.exactIntegers) ?? 0,
                           filter: try LayerFilter.read(&fields), order: try LeafOrder.read(&fields))
        case "list":
            self = .list(layer: try fields.string("layer"), bbox: try fields.bbox("bbox"),
                         limit: try fields.optionalInt("limit", in: 1...Self.maxLeavesLimit) ?? Self.defaultLeavesLimit,
                         offset: try fields.optionalInt("offset", in: Self.exactIntegers) ?? 0,
                         filter: try LayerFilter.read(&fields), order: try LeafOrder.read(&fields))
        case "expansion_zoom":
            self = .expansionZoom(layer: try fields.string("layer"), clusterID: try fields.int("cluster_id", in: Self.exactIntegers),
                                  filter: try LayerFilter.read(&fields))
        case "insert", "upsert":
            let layer = try fields.string("layer")
            let records = try fields.array("records", max: Self.maxBatchSize)
            self = .write(layer: layer, batch: op == "insert" ? .insert(records: records) : .upsert(records: records))
        case "delete":
            self = .write(layer: try fields.string("layer"), batch: .delete(ids: try fields.array("ids", max: Self.maxBatchSize)))
        case "tile":
            let layer = try fields.string("layer")
            let z = try fields.int("z", in: 0...TileAddress.maxZoom)
            let x = try fields.int("x", in: 0...Int(Int32.max))
            let y = try fields.int("y", in: 0...Int(Int32.max))
            let address: TileAddress
            do {
                address = try TileAddress(z: z, x: x, y: y)
            } catch {
                throw .core(error, field: x < 1 << z ? "y" : "x")
            }
            self = .tile(layer: layer, address: address, filter: try LayerFilter.read(&fields))
        case "project":
            self = try .project(reading: &fields)
        case "nearby":
            self = .nearby(try NearbyQuery(reading: &fields))
        case "reachable":
            self = .reachable(try ReachableQuery(reading: &fields))
        case "route":
            self = .reachable(try ReachableQuery(reading: &fields, route: true))
        case "get":
            let layer = try fields.string("layer")
            let ids = try fields.array("ids", max: Self.maxBatchSize)
            guard !ids.isEmpty else { throw .invalidField("ids", reason: "must name at least one record") }
            self = .get(layer: layer, ids: ids)
        case "stations":
            self = .stations(try StationQuery(reading: &fields))
        case "species":
            self = .species(layer: try fields.string("layer"), language: try NameLanguage.read(&fields))
        default:
            throw .unknownOperation(op)
        }
        try fields.rejectUnused()
    }
}

/// The order of a page of leaves (`sort`): by `observed_at`, oldest first, or newest first
/// with a leading minus. Sightings only; without it, leaves come in the index's order.
public enum LeafOrder: String, Sendable, Equatable {
    case oldestFirst = "observed_at"
    case newestFirst = "-observed_at"

    /// The error for `sort` on a layer without observation times.
    static let needsSightings = EngineError.invalidField("sort", reason: "applies to live sightings layers")

    static func read(_ fields: inout FieldReader) throws(EngineError) -> LeafOrder? {
        guard let text = try fields.optionalString("sort") else { return nil }
        guard let order = LeafOrder(rawValue: text) else {
            throw .invalidField("sort", reason: "must be \"observed_at\" (oldest first) or \"-observed_at\" (newest first), got \"\(text)\"")
        }
        return order
    }
}
