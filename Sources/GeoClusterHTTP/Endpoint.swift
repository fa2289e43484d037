import GeoCluster
import GeoClusterWire
import GeoReachability
import GeoClusterEngine
import Hummingbird

/// One REST route that answers one engine operation: which path and query parameters it
/// takes and how their text becomes the JSON request object that the JSON-lines
/// protocol would carry. That object goes through ``GeoClusterEngine/Request/init(json:)``, so ranges,
/// required fields and every other rule are checked in one place for both transports.
///
/// Path captures are named after the request fields they fill (`{cluster_id}`, `{z}`).
struct Endpoint: Sendable {
    /// How the text of an HTTP parameter becomes a JSON value.
    enum ParameterKind: Sendable {
        /// The text itself.
        case string
        /// A decimal number in JSON's grammar (`-12.5e3`), finite. No `+5`, `5abc`, `NaN`
        /// or `inf`; integral fields then check integrality themselves.
        case number
        /// Exactly `count` comma-separated numbers, read as `number` is; `names` says what
        /// they are in error messages.
        case numbers(count: Int, names: String)
        /// Comma-separated values (`species=Anas acuta,Grus japonensis`): an array of
        /// strings, or of numbers when `numeric`.
        case list(numeric: Bool)
        /// `x,y` pairs separated by `;` (`126.97,37.55;129.04,35.11`), each number read as
        /// `number` is, into an array of `[x, y]` arrays. An error names the pair as
        /// `field[i]`; how many pairs are allowed is the engine's rule.
        case pairs
    }

    struct Parameter: Sendable {
        let name: String
        let kind: ParameterKind
    }

    let path: RouterPath
    /// The `op` of the request object.
    let op: String
    let pathParameters: [Parameter]
    /// Every query parameter the route takes; any other is an `unknown_field` error.
    let queryParameters: [Parameter]
    let mediaType: ResponseMediaType

    init(_ path: RouterPath, op: String, path pathParameters: [Parameter] = [], query queryParameters: [Parameter] = [],
         mediaType: ResponseMediaType = .json) {
        self.path = path
        self.op = op
        self.pathParameters = pathParameters
        self.queryParameters = queryParameters
        self.mediaType = mediaType
    }

    /// Whether the route answers in a language (`lang`), which `Accept-Language` picks
    /// when the query does not.
    var takesLanguage: Bool { queryParameters.contains { $0.name == "lang" } }

    /// The engine request for the captured path parameters and the raw (still
    /// percent-encoded) query string; on a route that takes `lang`, a query without it
    /// gets the first language of `acceptLanguage` that the answer has.
    func request(pathValues: (String) -> Substring?, query: String?,
                 acceptLanguage: String? = nil) throws(EngineError) -> GeoClusterEngine.Request {
        var object: JSONObject = ["op": .string(op)]
        for parameter in pathParameters {
            guard let raw = pathValues(parameter.name) else { throw .missingField(parameter.name) }
            guard let text = QueryString.decode(raw.utf8, plusIsSpace: false) else {
                throw .invalidField(parameter.name, reason: "is not validly percent-encoded UTF-8")
            }
            object[parameter.name] = try Self.value(of: text, as: parameter.kind, field: parameter.name)
        }
        for (name, text) in try QueryString(query).items {
            guard let parameter = queryParameters.first(where: { $0.name == name }) else {
                throw .unknownField(name)
            }
            object[name] = try Self.value(of: text, as: parameter.kind, field: name)
        }
        if takesLanguage, object["lang"] == nil, let acceptLanguage,
           let language = Self.preferredLanguage(acceptLanguage) {
            object["lang"] = .string(language.rawValue)
        }
        return try GeoClusterEngine.Request(json: .object(object))
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

    static func value(of text: String, as kind: ParameterKind, field: String) throws(EngineError) -> JSONValue {
        switch kind {
        case .string:
            return .string(text)
        case .number:
            guard let number = strictNumber(text) else {
                throw .invalidField(field, reason: "must be a number, got \"\(text.prefix(40))\"")
            }
            return .number(number)
        case let .numbers(count, names):
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == count else {
                throw .invalidField(field, reason: "must be \(count) comma-separated numbers \(names), got \(parts.count) values")
            }
            var numbers: [JSONValue] = []
            numbers.reserveCapacity(count)
            for part in parts {
                guard let number = strictNumber(part) else {
                    throw .invalidField(field, reason: "must be \(count) comma-separated numbers \(names), got \"\(part.prefix(40))\"")
                }
                numbers.append(.number(number))
            }
            return .array(numbers)
        case let .list(numeric):
            var items: [JSONValue] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                if numeric {
                    guard let number = strictNumber(part) else {
                        throw .invalidField(field, reason: "must be comma-separated numbers, got \"\(part.prefix(40))\"")
                    }
                    items.append(.number(number))
                } else {
                    items.append(.string(String(part)))
                }
            }
            return .array(items)
        case .pairs:
            var pairs: [JSONValue] = []
            for (i, pair) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
                let parts = pair.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2, let x = strictNumber(parts[0]), let y = strictNumber(parts[1]) else {
                    throw .invalidField("\(field)[\(i)]", reason: "must be two comma-separated numbers x,y, got \"\(pair.prefix(40))\"")
                }
                pairs.append([.number(x), .number(y)])
            }
            return .array(pairs)
        }
    }

    /// A finite number written in JSON's number grammar, or `nil`, read by the JSON
    /// parser's number reader (``JSONValue/number(text:)``), so the HTTP transport accepts
    /// exactly the numbers the JSON-lines one does.
    static func strictNumber(_ text: some StringProtocol) -> Double? {
        JSONValue.number(text: text)
    }
}

extension Endpoint {
    /// The REST routes, one per query operation.
    static let all: [Endpoint] = [
        Endpoint("/v1/layers", op: "layers"),
        Endpoint("/v1/stats", op: "stats"),
        Endpoint("/v1/layers/{layer}", op: "stats", path: [layer]),
        Endpoint("/v1/layers/{layer}/clusters", op: "clusters", path: [layer],
                 query: [Parameter(name: "bbox", kind: .numbers(count: 4, names: "west,south,east,north")),
                         Parameter(name: "zoom", kind: .number)] + filters,
                 mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/clusters/{cluster_id}/children", op: "children", path: [layer, clusterID],
                 query: filters, mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/clusters/{cluster_id}/leaves", op: "leaves", path: [layer, clusterID],
                 query: [Parameter(name: "limit", kind: .number), Parameter(name: "offset", kind: .number),
                         Parameter(name: "sort", kind: .string)] + filters,
                 mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/clusters/{cluster_id}/expansion-zoom", op: "expansion_zoom",
                 path: [layer, clusterID], query: filters),
        // geojson-vt's tile object (pixel coordinates, integer geometry types), which is
        // JSON but not a GeoJSON document, hence application/json.
        Endpoint("/v1/layers/{layer}/tiles/{z}/{x}/{y}.geojson", op: "tile",
                 path: [layer, Parameter(name: "z", kind: .number), Parameter(name: "x", kind: .number),
                        Parameter(name: "y", kind: .number)], query: filters),
        Endpoint("/v1/project", op: "project",
                 query: [Parameter(name: "from", kind: .string), Parameter(name: "to", kind: .string),
                         Parameter(name: "coordinates", kind: .pairs)]),
        // The records in a view; the same path takes the writes (GeoClusterAPI+Writes.swift).
        Endpoint("/v1/layers/{layer}/points", op: "list", path: [layer],
                 query: [Parameter(name: "bbox", kind: .numbers(count: 4, names: "west,south,east,north")),
                         Parameter(name: "limit", kind: .number), Parameter(name: "offset", kind: .number),
                         Parameter(name: "sort", kind: .string)] + filters,
                 mediaType: .geoJSON),
        Endpoint("/v1/layers/{layer}/nearby", op: "nearby", path: [layer],
                 query: [Parameter(name: "lon", kind: .number), Parameter(name: "lat", kind: .number),
                         Parameter(name: "radius_m", kind: .number), Parameter(name: "k", kind: .number)] + filters,
                 mediaType: .geoJSON),
        // `pace` stays text ("fast" or "4.2"); the engine reads both. `dwell_minutes` is a
        // list of category:minutes (`cafe:20,museum:60`); `include_unreachable` is true or false.
        Endpoint("/v1/reachable", op: "reachable",
                 query: ["layer", "stations_layer", "station", "departure", "now", "pace", "travel", "network",
                         "sort", "include_unreachable", "lang"].map { Parameter(name: $0, kind: .string) }
                     + ["lon", "lat", "remaining_minutes", "detour_factor", "boarding_buffer_minutes", "min_minutes",
                        "tight_minutes", "limit", "offset"].map { Parameter(name: $0, kind: .number) }
                     + [Parameter(name: "category", kind: .list(numeric: false)),
                        Parameter(name: "dwell_minutes", kind: .list(numeric: false)),
                        Parameter(name: "bbox", kind: .numbers(count: 4, names: "west,south,east,north")),
                        Parameter(name: "zoom", kind: .number)]),
        // A sightings layer's species with their names, for pickers and to name the
        // scientific names of answers; `lang` (or Accept-Language) names and orders them.
        Endpoint("/v1/layers/{layer}/species", op: "species", path: [layer],
                 query: [Parameter(name: "lang", kind: .string)]),
        Endpoint("/v1/stations", op: "stations",
                 query: ["stations_layer", "q", "line"].map { Parameter(name: $0, kind: .string) }
                     + ["lon", "lat", "limit"].map { Parameter(name: $0, kind: .number) }),
    ]

    /// The layer filters (see docs/LIVE.md); which ones a layer takes depends on its kind.
    private static let filters = [
        Parameter(name: "species", kind: .list(numeric: false)), Parameter(name: "from", kind: .string),
        Parameter(name: "to", kind: .string), Parameter(name: "months", kind: .list(numeric: true)),
        Parameter(name: "category", kind: .list(numeric: false)), Parameter(name: "line", kind: .string),
        Parameter(name: "observer", kind: .string),
    ]

    /// The same tile as Mapbox Vector Tile protobuf. Its parameters are those of the
    /// `tile` operation; the route asks the engine for protobuf instead of JSON.
    static let vectorTile = Endpoint("/v1/layers/{layer}/tiles/{z}/{x}/{y}.mvt", op: "tile",
                                     path: [layer, Parameter(name: "z", kind: .number),
                                            Parameter(name: "x", kind: .number), Parameter(name: "y", kind: .number)],
                                     query: filters, mediaType: .mapboxVectorTile)

    private static let layer = Parameter(name: "layer", kind: .string)
    private static let clusterID = Parameter(name: "cluster_id", kind: .number)
}

