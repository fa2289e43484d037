import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird

/// The write routes of live layers. Each turns its path and JSON body into the `insert`,
/// `upsert` or `delete` request of the JSON-lines protocol and hands it to the engine,
/// which validates every record and applies the batch atomically; the answer is the
/// engine's write result.
///
/// | route | operation | body |
/// |---|---|---|
/// | `POST /v1/layers/{layer}/points` | `insert`, 201 | records |
/// | `PUT /v1/layers/{layer}/points` | `upsert` | records |
/// | `DELETE /v1/layers/{layer}/points` | `delete` | `{"ids":[…]}` |
/// | `PUT /v1/layers/{layer}/points/{id}` | `upsert` of one record | one record |
/// | `DELETE /v1/layers/{layer}/points/{id}` | `delete` of one id | none |
///
/// "Records" is a JSON array of records (flat or GeoJSON Features), a single record, or
/// a GeoJSON FeatureCollection, whose `features` are the records.
extension GeoClusterAPI {
    static let pointsPath: RouterPath = "/v1/layers/{layer}/points"
    static let pointPath: RouterPath = "/v1/layers/{layer}/points/{id}"

    enum WriteRoute: Sendable {
        case insert, upsert, delete, upsertOne, deleteOne
    }

    func write(_ route: WriteRoute, request: Request, context: some RequestContext) async throws -> Response {
        // Who writes is known before the body is read: a request without a valid key is
        // refused without reading what it sends.
        let caller: Caller
        do {
            caller = try self.caller(request)
            if caller == .anonymous { try engine.authorize(.write(layer: "", batch: .delete(ids: [])), by: caller) }
        } catch {
            throw apiError(error)
        }
        let body = try await readBody(request)
        let result: JSONValue
        do {
            let layer = try Self.pathText("layer", context)
            var object: JSONObject = ["layer": .string(layer)]
            switch route {
            case .insert, .upsert:
                object["op"] = route == .insert ? "insert" : "upsert"
                object["records"] = .array(try Self.records(in: try Self.parse(body)))
            case .delete:
                object["op"] = "delete"
                object["ids"] = try Self.ids(in: try Self.parse(body))
            case .upsertOne:
                object["op"] = "upsert"
                object["records"] = [try Self.record(try Self.parse(body), id: Self.id(try Self.pathText("id", context)))]
            case .deleteOne:
                object["op"] = "delete"
                object["ids"] = [Self.id(try Self.pathText("id", context))]
            }
            result = try await engine.perform(try GeoClusterEngine.Request(json: .object(object)), by: caller)
        } catch let error as EngineError {
            throw apiError(error)
        }
        return JSONResponse.response(bytes: Self.encode(result), status: route == .insert ? .created : .ok,
                                     mediaType: .json)
    }

    /// `GET /v1/layers/{layer}/points/{id}`: the record as a GeoJSON Feature, as stored
    /// (the `get` operation with one id); 404 `unknown_id` when the layer does not hold it.
    func readOne(request: Request, context: some RequestContext) throws(APIError) -> Response {
        let feature: JSONValue
        let caller: Caller
        do {
            let query = GeoClusterEngine.Request.get(layer: try Self.pathText("layer", context),
                                                     ids: [Self.id(try Self.pathText("id", context))])
            caller = try self.caller(request)
            try engine.authorize(query, by: caller)
            let result = try engine.execute(query, by: caller)
            feature = result["features"]?[0] ?? .null
        } catch {
            throw apiError(error)
        }
        var personal = false
        if case .key = caller { personal = true }
        return keyed(responsePolicy.response(body: Self.encode(feature), mediaType: .geoJSON, request: request),
                     request: request, personal: personal)
    }

    /// Media types a body may be declared as. Bodies are JSON (or JSON lines) whatever the
    /// header says; these are the types under which clients send such text, `curl
    /// --data-binary`'s default (`application/x-www-form-urlencoded`) among them, so that
    /// a form, a multipart upload or an image is refused before it is read.
    static let acceptedBodyTypes: Set<String> = [
        "application/json", "application/x-ndjson", "application/jsonl", "application/geo+json",
        "application/geo+json-seq", "text/plain", "application/x-www-form-urlencoded", "application/octet-stream",
    ]

    /// The whole request body, refused with 415 when its `Content-Type` is not one of
    /// ``acceptedBodyTypes`` in UTF-8, and with 413 once it exceeds ``maxQueryBodyBytes``
    /// (from its `Content-Length` alone when that is declared).
    func readBody(_ request: Request) async throws -> [UInt8] {
        if let contentType = request.headers[.contentType] {
            let parameters = contentType.split(separator: ";").map { $0.trimmingSpaces.lowercased() }
            let charset = parameters.dropFirst().first { $0.hasPrefix("charset=") }?.dropFirst("charset=".count)
            guard let type = parameters.first, Self.acceptedBodyTypes.contains(type),
                  charset.map({ ["utf-8", "utf8", "\"utf-8\""].contains($0) }) ?? true else {
                throw APIError.unsupportedMediaType(contentType)
            }
        }
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > maxQueryBodyBytes {
            throw APIError.bodyTooLarge(limitBytes: maxQueryBodyBytes)
        }
        var body: [UInt8] = []
        for try await chunk in request.body {
            guard body.count + chunk.readableBytes <= maxQueryBodyBytes else {
                throw APIError.bodyTooLarge(limitBytes: maxQueryBodyBytes)
            }
            body.append(contentsOf: chunk.readableBytesView)
        }
        return body
    }

    private static func parse(_ body: [UInt8]) throws -> JSONValue {
        do {
            return try JSONValue.parse(body, maxDepth: LineProtocol.defaultMaxDepth)
        } catch {
            throw APIError.invalidBody(code: error.code, message: "body is not JSON: \(error.description)")
        }
    }

    /// The records of an `insert` or `upsert` body.
    private static func records(in body: JSONValue) throws -> [JSONValue] {
        switch body {
        case let .array(records):
            return records
        case let .object(object) where object["type"] == "FeatureCollection":
            guard let features = object["features"]?.arrayValue else {
                throw APIError.invalidBody(code: "invalid_body", message: "a FeatureCollection body needs a \"features\" array")
            }
            return features
        case .object:
            return [body]
        default:
            throw APIError.invalidBody(
                code: "invalid_body",
                message: "the body must be a record, a JSON array of records or a GeoJSON FeatureCollection")
        }
    }

    /// The `ids` of a `DELETE …/points` body, `{"ids":[…]}`.
    private static func ids(in body: JSONValue) throws -> JSONValue {
        guard case let .object(object) = body else {
            throw APIError.invalidBody(code: "invalid_body", message: "the body must be {\"ids\":[…]}")
        }
        if let other = object.keys.first(where: { $0 != "ids" }) { throw EngineError.unknownField(other) }
        guard let ids = object["ids"] else { throw EngineError.missingField("ids") }
        return ids
    }

    /// The one record of `PUT …/points/{id}`, carrying the path's id: a record without
    /// an id gets it; one with another id is an error.
    private static func record(_ body: JSONValue, id: JSONValue) throws -> JSONValue {
        guard case var .object(object) = body, object["type"] != "FeatureCollection" else {
            throw APIError.invalidBody(code: "invalid_body",
                                       message: "the body must be one record (a flat record or a GeoJSON Feature)")
        }
        if let given = object["id"] {
            guard given == id else {
                throw EngineError.invalidField("id", reason: "is \(given.jsonString) but the path names \(id.jsonString)")
            }
        }
        object["id"] = id
        return .object(object)
    }

    /// A path id: written as an integer (`7`, `-12`, within ±2^53) it is that integer id,
    /// anything else is a string id. (A string id made only of digits is reached through
    /// the body of `PUT` or `DELETE /v1/layers/{layer}/points`.)
    static func id(_ text: String) -> JSONValue {
        let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
        if !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
           digits == "0" || !digits.hasPrefix("0"), let value = Int(text), value.magnitude <= UInt(LayerRecord.maxIntegerID) {
            return .number(Double(value))
        }
        return .string(text)
    }

    /// A percent-decoded path capture.
    private static func pathText(_ name: String, _ context: some RequestContext) throws(EngineError) -> String {
        guard let raw = context.parameters[name[...]] else { throw .missingField(name) }
        guard let text = QueryString.decode(raw.utf8, plusIsSpace: false) else {
            throw .invalidField(name, reason: "is not validly percent-encoded UTF-8")
        }
        return text
    }

    private static func encode(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        value.encode(into: &bytes)
        return bytes
    }
}
