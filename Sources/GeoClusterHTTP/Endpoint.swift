import GeoCluster
import GeoClusterWire
import GeoReachability
import GeoClusterEngine
import Hummingbird

/// One REST route that answers one engine operation: its path, the parameters it takes,
/// and how it answers. Its path captures and query items, percent-decoded, are the text
/// fields of the request (``GeoClusterEngine/Request/init(op:parameters:)``), read by the
/// same typed readers as a JSON line's fields: ranges, required fields and every other rule
/// are checked in one place for both transports.
///
/// Path captures are named after the request fields they fill (`{cluster_id}`, `{z}`).
struct Endpoint: Sendable {
    let path: RouterPath
    /// The `op` of the request.
    let op: String
    let pathParameters: [String]
    /// Every query parameter the route takes; any other is an `unknown_field` error.
    let queryParameters: [String]
    let mediaType: ResponseMediaType

    init(_ path: RouterPath, op: String, path pathParameters: [String] = [], query queryParameters: [String] = [],
         mediaType: ResponseMediaType = .json) {
        self.path = path
        self.op = op
        self.pathParameters = pathParameters
        self.queryParameters = queryParameters
        self.mediaType = mediaType
    }

    /// Whether the route answers in a language (`lang`), which `Accept-Language` picks
    /// when the query does not.
    var takesLanguage: Bool { queryParameters.contains("lang") }

    /// The engine request for the captured path parameters and the raw (still
    /// percent-encoded) query string; on a route that takes `lang`, a query without it
    /// gets the first language of `acceptLanguage` that the answer has.
    func request(pathValues: (String) -> Substring?, query: String?,
                 acceptLanguage: String? = nil) throws(EngineError) -> GeoClusterEngine.Request {
        var parameters: [(name: String, value: String)] = []
        for name in pathParameters {
            guard let raw = pathValues(name) else { throw .missingField(name) }
            guard let text = QueryString.decode(raw.utf8, plusIsSpace: false) else {
                throw .invalidField(name, reason: "is not validly percent-encoded UTF-8")
            }
            parameters.append((name, text))
        }
        for item in try QueryString(query).items {
            guard queryParameters.contains(item.name) else { throw .unknownField(item.name) }
            parameters.append(item)
        }
        if takesLanguage, !parameters.contains(where: { $0.name == "lang" }), let acceptLanguage,
           let language = Self.preferredLanguage(acceptLanguage) {
            parameters.append(("lang", language.rawValue))
        }
        return try GeoClusterEngine.Request(op: op, parameters: parameters)
    }

    /// The language an `Accept-Language` header prefers among those answers have: tags by
    /// falling `q` (1 when absent; ties keep their order), `q=0` never. `nil` when none of
    /// them is one, or the header cannot be read: the default then applies.
    static func preferredLanguage(_ header: String) -> ReachabilityLanguage? {
        var ranked: [(q: Double, order: Int, language: ReachabilityLanguage)] = []
        for (order, item) in QualityList.items(header).prefix(32).enumerated() {
            guard let language = ReachabilityLanguage(tag: item.token) else { continue }
            let q = item.q.flatMap { (0...1).contains($0) ? $0 : nil } ?? 1
            if q > 0 { ranked.append((q, order, language)) }
        }
        return ranked.min { $0.q != $1.q ? $0.q > $1.q : $0.order < $1.order }?.language
    }
}

extension Endpoint {
    /// The REST routes, one per query operation.
    static let all: [Endpoint] = [
        Endpoint("/v1/layers", op: "layers"),
        Endpoint("/v1/stats", op: "stats"),
        Endpoint("/v1/layers/{layer}", op: "stats", path: ["layer"]),
        Endpoint("/v1/layers/{layer}/clusters", op: "clusters", path: ["layer"], query: ["bbox", "zoom"] + filters,
                 mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/clusters/{cluster_id}/children", op: "children", path: ["layer", "cluster_id"],
                 query: filters, mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/clusters/{cluster_id}/leaves", op: "leaves", path: ["layer", "cluster_id"],
                 query: ["limit", "offset", "sort"] + filters, mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/clusters/{cluster_id}/expansion-zoom", op: "expansion_zoom",
                 path: ["layer", "cluster_id"], query: filters),
        // geojson-vt's tile object (pixel coordinates, integer geometry types), which is
        // JSON but not a GeoJSON document, hence application/json.
        Endpoint("/v1/layers/{layer}/tiles/{z}/{x}/{y}.geojson", op: "tile", path: ["layer", "z", "x", "y"],
                 query: filters),
        // `coordinates` is `x,y` pairs separated by `;` (`126.97,37.55;129.04,35.11`).
        Endpoint("/v1/project", op: "project", query: ["from", "to", "coordinates"]),
        // The records in a view; the same path takes the writes (GeoClusterAPI+Writes.swift).
        Endpoint("/v1/layers/{layer}/points", op: "list", path: ["layer"],
                 query: ["bbox", "limit", "offset", "sort"] + filters, mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/nearby", op: "nearby", path: ["layer"],
                 query: ["lon", "lat", "radius_m", "k"] + filters, mediaType: .geoJSON),
        // `pace` is a name or km/h ("fast" or "4.2"); `dwell_minutes` is a list of
        // category:minutes (`cafe:20,museum:60`); `include_unreachable` is true or false.
        Endpoint("/v1/reachable", op: "reachable", query: reachable),
        // `reachable` for one place (`place`) with its walking route: the route screen.
        Endpoint("/v1/route", op: "route", query: reachable + ["place"]),
        // A sightings layer's species with their names, for pickers and to name the
        // scientific names of answers; `lang` (or Accept-Language) names and orders them.
        Endpoint("/v1/layers/{layer}/species", op: "species", path: ["layer"], query: ["lang"]),
        Endpoint("/v1/stations", op: "stations", query: ["stations_layer", "q", "line", "lon", "lat", "limit"]),
    ]

    /// The parameters of `reachable` (`include=route` adds each place's route).
    private static let reachable = [
        "layer", "stations_layer", "station", "departure", "now", "pace", "travel", "network", "sort",
        "include_unreachable", "include", "lang", "lon", "lat", "remaining_minutes", "detour_factor",
        "boarding_buffer_minutes", "min_minutes", "tight_minutes", "limit", "offset", "category", "dwell_minutes",
        "bbox", "zoom",
    ]

    /// The layer filters (see docs/LIVE.md); which ones a layer takes depends on its kind.
    private static let filters = ["species", "from", "to", "months", "category", "line", "observer", "top_by"]

    /// The same tile as Mapbox Vector Tile protobuf. Its parameters are those of the
    /// `tile` operation; the route asks the engine for protobuf instead of JSON.
    static let vectorTile = Endpoint("/v1/layers/{layer}/tiles/{z}/{x}/{y}.mvt", op: "tile",
                                     path: ["layer", "z", "x", "y"], query: filters, mediaType: .mapboxVectorTile)
}
