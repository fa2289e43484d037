import GeoCluster
import GeoClusterEngine
import Hummingbird
import Logging

/// In this module `Request` is the HTTP request; the engine's is `GeoClusterEngine.Request`.
typealias Request = Hummingbird.Request

/// The HTTP transport: Hummingbird routes over one ``Engine``.
///
/// Routes only translate. A REST route turns its path and query into the request object
/// of the JSON-lines protocol (see ``Endpoint``) and hands it to the engine; `POST
/// /v1/query` answers each body line with ``LineProtocol``, exactly as `geo-cluster
/// query` does. Errors are thrown as ``APIError`` and become responses in one place.
///
/// | route | answer |
/// |---|---|
/// | `GET /v1/layers` | every layer's summary |
/// | `GET /v1/stats` | totals over all layers |
/// | `GET /v1/layers/{layer}` | one layer's summary |
/// | `GET /v1/layers/{layer}/clusters?bbox=w,s,e,n&zoom=z` | GeoJSON clusters and points |
/// | `GET /v1/layers/{layer}/clusters/{id}/children` | GeoJSON, one zoom deeper |
/// | `GET /v1/layers/{layer}/clusters/{id}/leaves?limit=&offset=` | GeoJSON page of points, with `total` |
/// | `GET /v1/layers/{layer}/clusters/{id}/expansion-zoom` | `{"cluster_id":…,"expansion_zoom":…}` |
/// | `GET /v1/layers/{layer}/tiles/{z}/{x}/{y}.geojson` | geojson-vt tile |
/// | `GET /v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=x,y;x,y` | `{"from":…,"to":…,"coordinates":[[x,y],…]}` |
/// | `POST /v1/query` | JSON lines in, JSON lines out (`application/x-ndjson`) |
/// | `GET /healthz`, `GET /readyz` | liveness, readiness |
///
/// Every GET route also answers HEAD; other methods on a known path get 405 with `Allow`.
public struct GeoClusterAPI: Sendable {
    public let engine: Engine
    /// Answers the lines of `POST /v1/query`; its line limit applies there too.
    public let lineProtocol: LineProtocol
    /// Longest accepted body of `POST /v1/query`; a longer one gets 413.
    public let maxQueryBodyBytes: Int

    public static let defaultMaxQueryBodyBytes = 16 << 20

    public init(engine: Engine, maxQueryBodyBytes: Int = defaultMaxQueryBodyBytes,
                maxLineBytes: Int = LineProtocol.defaultMaxLineBytes) {
        self.engine = engine
        self.lineProtocol = LineProtocol(engine: engine, maxLineBytes: maxLineBytes)
        self.maxQueryBodyBytes = maxQueryBodyBytes
    }

    /// A router holding every route.
    public func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        addRoutes(to: router)
        return router
    }

    /// Adds the error translation and every route to `router`. Routes added to it
    /// earlier are not covered by the error translation.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.add(middleware: ErrorMiddleware<Context>())
        var table = RouteTable(router: router)

        table.get("/healthz") { _, _ in JSONResponse(["status": "ok"]) }
        table.get("/readyz") { _, _ in try readiness() }
        for endpoint in Endpoint.all {
            table.get(endpoint.path) { request, context in
                try answer(endpoint, request: request, context: context)
            }
        }
        table.post("/v1/query") { request, _ in
            try await answerBatch(request)
        }
        table.rejectOtherMethods()
    }

    /// 200 once layers are loaded. The engine is built before the server starts, so an
    /// engine with no layers is the one case that is not ready.
    func readiness() throws(APIError) -> JSONResponse {
        guard engine.layerCount > 0 else { throw .notReady(reason: "no layers are loaded") }
        return JSONResponse(["status": "ready", "layers": .number(Double(engine.layerCount)),
                             "points": .number(Double(pointCount))])
    }

    /// Points over all layers.
    var pointCount: Int { engine.pointCount }

    func answer(_ endpoint: Endpoint, request: Request, context: some RequestContext) throws(APIError) -> JSONResponse {
        do {
            let query = try endpoint.request(pathValues: { context.parameters[$0[...]] }, query: request.uri.query)
            return JSONResponse(try engine.execute(query), mediaType: endpoint.mediaType)
        } catch {
            throw .engine(error)
        }
    }

    /// Reads the whole body (bounded by ``maxQueryBodyBytes``, so that an oversize batch
    /// is refused with 413 before any answer is sent), then streams the answers: memory
    /// holds the body and one chunk of output, however large the answers are.
    func answerBatch(_ request: Request) async throws -> Response {
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
        let lines = body
        var headers = HTTPFields()
        headers[.contentType] = JSONResponse.MediaType.ndjson.rawValue
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            try await answerLines(lines) { chunk in try await writer.write(ByteBuffer(bytes: chunk)) }
            try await writer.finish(nil)
        })
    }

    /// Output is handed on in chunks of about this many bytes.
    static let batchChunkBytes = 64 << 10

    /// Answers a batch: the body split at newlines, each line answered by the shared
    /// ``LineProtocol`` with its 1-based number; blank lines get no answer and a last line
    /// without a newline is answered like the others. `emit` receives the answer bytes in
    /// order, in chunks of about ``batchChunkBytes`` (one line's answer is never split).
    func answerLines(_ body: [UInt8], emit: ([UInt8]) async throws -> Void) async throws {
        var output: [UInt8] = []
        var lineNumber = 0
        var start = body.startIndex
        while start < body.endIndex {
            let end = body[start...].firstIndex(of: 0x0A) ?? body.endIndex
            lineNumber += 1
            lineProtocol.respond(to: body[start..<end], lineNumber: lineNumber, into: &output)
            if output.count >= Self.batchChunkBytes {
                try await emit(output)
                output.removeAll(keepingCapacity: true)
            }
            start = end + 1
        }
        if !output.isEmpty { try await emit(output) }
    }
}

/// Registers routes and remembers which methods each path takes, so that the others can
/// be answered with 405 instead of Hummingbird's 404.
private struct RouteTable<Context: RequestContext> {
    let router: Router<Context>
    private var methods: [(path: RouterPath, methods: [HTTPRequest.Method])] = []

    /// The methods a 405 is given for; anything more exotic gets 404.
    private static var knownMethods: [HTTPRequest.Method] { [.get, .head, .post, .put, .patch, .delete, .options] }

    init(router: Router<Context>) { self.router = router }

    /// A GET route and its HEAD twin.
    mutating func get(_ path: RouterPath,
                      use handler: @escaping @Sendable (Request, Context) async throws -> some ResponseGenerator) {
        router.get(path, use: handler)
        router.head(path) { request, context in
            try await handler(request, context).response(from: request, context: context).createHeadResponse()
        }
        record(path, [.get, .head])
    }

    mutating func post(_ path: RouterPath,
                       use handler: @escaping @Sendable (Request, Context) async throws -> some ResponseGenerator) {
        router.post(path, use: handler)
        record(path, [.post])
    }

    /// Adds a 405 responder for every known method that a recorded path does not take.
    func rejectOtherMethods() {
        for (path, allowed) in methods {
            for method in Self.knownMethods where !allowed.contains(method) {
                router.on(path, method: method) { request, _ -> Response in
                    throw APIError.methodNotAllowed(method: request.method, allowed: allowed)
                }
            }
        }
    }

    private mutating func record(_ path: RouterPath, _ added: [HTTPRequest.Method]) {
        if let i = methods.firstIndex(where: { $0.path == path }) {
            methods[i].methods += added
        } else {
            methods.append((path, added))
        }
    }
}

/// Makes every error leaving a route an ``APIError``: Hummingbird's own (its 404 for an
/// unknown path among them) keep their status and get our body; anything else is logged
/// with its detail and reported as a 500 that names only the request id.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError where error.status == .notFound {
            throw APIError.routeNotFound(path: request.uri.path)
        } catch let error as HTTPError {
            throw APIError.framework(status: error.status, message: error.body ?? error.status.reasonPhrase)
        } catch let error as any HTTPResponseError {
            throw APIError.framework(status: error.status, message: error.status.reasonPhrase)
        } catch {
            let requestID = context.logger[metadataKey: "hb.request.id"]?.description ?? "unknown"
            context.logger.error("request failed", metadata: [
                "error": "\(String(reflecting: error))",
                "method": "\(request.method.rawValue)",
                "path": "\(request.uri.path)",
            ])
            throw APIError.internalError(requestID: requestID)
        }
    }
}

extension GeoClusterAPI {
    /// The HTTP/1.1 server for these routes, bound to `host`:`port` (0 picks a free port).
    /// Once it listens it logs one line with its URL and what it serves. Run it as a
    /// service of a `ServiceGroup`, which shuts it down gracefully on a signal.
    public func makeApplication(host: String, port: Int, logger: Logger) -> Application<RouterResponder<BasicRequestContext>> {
        let layers = engine.layerCount
        let points = pointCount
        let urlHost = host.contains(":") ? "[\(host)]" : host
        return Application(
            router: makeRouter(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "geo-cluster"),
            onServerRunning: { channel in
                let boundPort = channel.localAddress?.port ?? port
                logger.notice("geo-cluster listening on http://\(urlHost):\(boundPort) (\(layers) layers, \(points) points)")
            },
            logger: logger
        )
    }
}
