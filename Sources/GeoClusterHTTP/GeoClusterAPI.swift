import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

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
/// | `GET /` | the map viewer page (``ViewerPage``) |
/// | `GET /v1/layers` | every layer's summary |
/// | `GET /v1/stats` | totals over all layers |
/// | `GET /v1/layers/{layer}` | one layer's summary |
/// | `GET /v1/layers/{layer}/clusters?bbox=w,s,e,n&zoom=z` | GeoJSON clusters and points |
/// | `GET /v1/layers/{layer}/clusters/{id}/children` | GeoJSON, one zoom deeper |
/// | `GET /v1/layers/{layer}/clusters/{id}/leaves?limit=&offset=` | GeoJSON page of points, with `total` |
/// | `GET /v1/layers/{layer}/clusters/{id}/expansion-zoom` | `{"cluster_id":…,"expansion_zoom":…}` |
/// | `GET /v1/layers/{layer}/tiles/{z}/{x}/{y}.geojson` | geojson-vt tile |
/// | `GET /v1/project?from=EPSG:4326&to=EPSG:5179&coordinates=x,y;x,y` | `{"from":…,"to":…,"coordinates":[[x,y],…]}` |
/// | `GET /v1/layers/{layer}/tiles/{z}/{x}/{y}.mvt` | Mapbox Vector Tile (protobuf) |
/// | `POST /v1/query` | JSON lines in, JSON lines out (`application/x-ndjson`) |
/// | `POST`, `PUT`, `DELETE /v1/layers/{layer}/points`, `PUT`, `DELETE …/points/{id}` | writes (`GeoClusterAPI+Writes.swift`) |
/// | `GET /healthz`, `GET /readyz` | liveness, readiness |
/// | `GET /metrics` | Prometheus text format |
///
/// Every GET route also answers HEAD; other methods on a known path get 405 with `Allow`.
/// Answers of the query routes carry an `ETag` and `Cache-Control` and are gzipped when
/// the client accepts it (``ResponsePolicy``); browsers on the ``AllowedOrigins`` may
/// read every answer (CORS).
public struct GeoClusterAPI: Sendable {
    public let engine: Engine
    /// Answers the lines of `POST /v1/query`; its line limit applies there too.
    public let lineProtocol: LineProtocol
    /// Longest accepted body of `POST /v1/query` and of the write routes; a longer one gets 413.
    public let maxQueryBodyBytes: Int
    /// `POST /v1/query` bodies computing their answers at once; the others wait their turn.
    let batchGate: ComputeGate

    /// ETag, Cache-Control and gzip of the query routes' answers.
    public let responsePolicy: ResponsePolicy
    /// Browser origins that may read answers.
    public let allowedOrigins: AllowedOrigins
    /// What `/metrics` reports about requests.
    public let metrics: RequestMetrics
    /// Which requests need an API key, and the keys that are valid (``KeyRing``).
    public let keyRequirement: KeyRequirement
    public let keyRing: KeyRing?
    /// Answers kept for their next request (``AnswerCache``); `nil` keeps none.
    let answerCache: AnswerCache?
    /// The files the viewer page loads under `/viewer/` (``ViewerAssets``).
    public let viewerAssets: ViewerAssets

    /// Why the service is not ready yet (a replica catching up with its store's change
    /// feed), or `nil` when it is; `/readyz` answers 503 with that reason.
    public let notReadyReason: @Sendable () -> String?

    public static let defaultMaxQueryBodyBytes = 16 << 20
    /// Memory for answers kept for their next request.
    public static let defaultAnswerCacheBytes = AnswerCache.defaultBudgetBytes
    /// Most bytes of answers to one `POST /v1/query` body: room for a few answers at the
    /// engine's features-per-answer limit, not for thousands of them.
    public static let defaultMaxBatchAnswerBytes = 128 << 20
    /// Bodies of `POST /v1/query` computing at once: one less than the cores, at least one.
    public static var defaultConcurrentBatches: Int { ComputeGate.defaultLimit }

    /// - Parameters:
    ///   - maxBatchAnswerBytes: the answer budget of one `POST /v1/query` body
    ///     (``LineProtocol/maxBatchAnswerBytes``), `nil` for none.
    ///   - concurrentBatches: `POST /v1/query` bodies that compute at once.
    public init(engine: Engine, maxQueryBodyBytes: Int = defaultMaxQueryBodyBytes,
                maxLineBytes: Int = LineProtocol.defaultMaxLineBytes,
                maxBatchAnswerBytes: Int? = defaultMaxBatchAnswerBytes,
                concurrentBatches: Int = defaultConcurrentBatches,
                responsePolicy: ResponsePolicy = ResponsePolicy(), allowedOrigins: AllowedOrigins = .any,
                keyRequirement: KeyRequirement = .off, keyRing: KeyRing? = nil,
                answerCacheBytes: Int = defaultAnswerCacheBytes, viewerAssets: ViewerAssets = ViewerAssets(),
                notReadyReason: @escaping @Sendable () -> String? = { nil }) {
        self.answerCache = answerCacheBytes > 0 ? AnswerCache(budgetBytes: answerCacheBytes) : nil
        precondition(keyRequirement == .off || keyRing != nil, "keys are required but no key ring is given")
        self.engine = engine
        self.viewerAssets = viewerAssets
        self.keyRequirement = keyRequirement
        self.keyRing = keyRing
        self.notReadyReason = notReadyReason
        self.lineProtocol = LineProtocol(engine: engine, maxLineBytes: maxLineBytes,
                                         maxBatchAnswerBytes: maxBatchAnswerBytes)
        self.batchGate = ComputeGate(limit: max(1, concurrentBatches))
        self.maxQueryBodyBytes = maxQueryBodyBytes
        self.responsePolicy = responsePolicy
        self.allowedOrigins = allowedOrigins
        self.metrics = RequestMetrics(routes: Self.routePaths.map(\.description))
    }

    /// The path of every route, as `/metrics` labels them; `addRoutes` checks (in debug
    /// builds, so in tests) that it registers exactly these.
    static var routePaths: [RouterPath] {
        ["/", "/viewer/{file}", "/healthz", "/readyz", "/metrics", "/v1/query"] + Endpoint.all.map(\.path)
            + [Endpoint.vectorTile.path, pointPath]  // pointsPath is the `list` endpoint's
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
        router.add(middleware: RequestMetricsMiddleware<Context>(metrics: metrics))
        if allowedOrigins != .none {
            router.add(middleware: CrossOriginMiddleware<Context>(allowedOrigins: allowedOrigins))
        }
        router.add(middleware: ErrorMiddleware<Context>())
        var table = RouteTable(router: router)

        table.get("/") { _, _ in ViewerPage.response(assets: viewerAssets) }
        table.get("/viewer/{file}") { request, context in
            let file = context.parameters.get("file") ?? ""
            guard let response = viewerAssets.response(file: file, policy: responsePolicy, request: request) else {
                throw APIError.routeNotFound(path: "/viewer/" + file)
            }
            return response
        }
        table.get("/healthz") { _, _ in JSONResponse(["status": "ok"]) }
        table.get("/readyz") { _, _ in try readiness() }
        table.get("/metrics") { _, _ in
            JSONResponse.response(bytes: Array((metrics.exposition(engine: engine) + answerCacheExposition).utf8),
                                  mediaType: .prometheusText)
        }
        for endpoint in Endpoint.all {
            table.get(endpoint.path) { request, context in
                try answer(endpoint, request: request, context: context)
            }
        }
        table.get(Endpoint.vectorTile.path) { request, context in
            try vectorTile(request: request, context: context)
        }
        table.post("/v1/query") { request, _ in
            try await answerBatch(request)
        }
        let writes: [(RouterPath, HTTPRequest.Method, WriteRoute)] = [
            (Self.pointsPath, .post, .insert), (Self.pointsPath, .put, .upsert), (Self.pointsPath, .delete, .delete),
            (Self.pointPath, .put, .upsertOne), (Self.pointPath, .delete, .deleteOne),
        ]
        for (path, method, route) in writes {
            table.on(path, method) { request, context in try await write(route, request: request, context: context) }
        }
        table.get(Self.pointPath) { request, context in
            try readOne(request: request, context: context)
        }
        table.rejectOtherMethods()
        assert(Set(table.paths.map(\.description)) == Set(Self.routePaths.map(\.description)),
               "routePaths must list every route, or /metrics counts it as unmatched")
    }

    /// 200 once layers are loaded and caught up with the store. The engine is built before
    /// the server starts, so an engine with no layers, or a replica behind its change feed,
    /// are the cases that are not ready.
    func readiness() throws(APIError) -> JSONResponse {
        guard engine.layerCount > 0 else { throw .notReady(reason: "no layers are loaded") }
        if let reason = notReadyReason() { throw .notReady(reason: reason) }
        return JSONResponse(["status": "ready", "layers": .number(Double(engine.layerCount)),
                             "points": .number(Double(pointCount))])
    }

    /// Points over all layers.
    var pointCount: Int { engine.pointCount }

    /// Who sends `request`: ``Caller/trusted`` when keys are off; otherwise the key its
    /// `Authorization` header carries, or ``Caller/anonymous`` without one (refused
    /// with 401 when every route needs a key).
    func caller(_ request: Request) throws(EngineError) -> Caller {
        guard keyRequirement != .off, let keyRing else { return .trusted }
        let caller = try keyRing.caller(authorization: request.headers[.authorization])
        if caller == .anonymous, keyRequirement == .all {
            throw .unauthorized(reason: "this server needs an API key for every query: send \"Authorization: Bearer <key>\"")
        }
        return caller
    }

    /// A query answer as caches may keep it. With keys on, an answer to a request with a
    /// key (and, with `--keys all`, every answer) is for that client only: `private`, and
    /// varying by `Authorization`, so that no shared cache (a CDN, an nginx in front of
    /// the replicas) hands it to someone else (RFC 9111 §3.5). `personal` answers (a
    /// record read by its owner, which may hold a sensitive sighting's exact position) are
    /// not stored at all.
    func keyed(_ response: Response, request: Request, personal: Bool = false) -> Response {
        guard keyRequirement != .off, keyRequirement == .all || request.headers[.authorization] != nil else {
            return response
        }
        var response = response
        response.headers[.cacheControl] = personal ? "private, no-store"
            : responsePolicy.cacheMaxAgeSeconds > 0 ? "private, max-age=\(responsePolicy.cacheMaxAgeSeconds)" : "no-cache"
        response.headers[.vary] = (response.headers[.vary].map { $0 + ", " } ?? "") + "Authorization"
        return response
    }

    /// An engine error as the API reports it, counted in `/metrics` when it refuses a key.
    func apiError(_ error: EngineError) -> APIError {
        metrics.countKeyRejection(error)
        return .engine(error)
    }

    /// The key of an answer in ``answerCache``: the request target as sent (path and
    /// query) and, on a route that takes a language, `Accept-Language`; `nil` without a
    /// cache.
    func answerCacheKey(_ request: Request, takesLanguage: Bool) -> String? {
        guard answerCache != nil else { return nil }
        guard takesLanguage else { return request.uri.string }
        return request.uri.string + "\n" + (request.headers[.acceptLanguage] ?? "")
    }

    /// Whether a query may be answered without knowing who asks: with keys off, or with
    /// keys for writes only and no key sent. Every query is open to such a caller, and
    /// ``keyed(_:request:personal:)`` leaves the response as it is, so a kept answer
    /// may be given before the request is read.
    func answersWithoutKey(_ request: Request) -> Bool {
        keyRequirement == .off || (keyRequirement == .writes && request.headers[.authorization] == nil)
    }

    /// The answer to a query route: the one kept for the request, when its layers are
    /// still at the versions it was computed from (found before the request is read, for
    /// callers who need no key), or the one `compute` writes for the request `read`
    /// reads, kept for the next time when its answers may be kept.
    func prepared(_ request: Request, takesLanguage: Bool, read: () throws(EngineError) -> GeoClusterEngine.Request,
                  compute: (GeoClusterEngine.Request, inout [UInt8]) throws(EngineError) -> Void)
        throws(EngineError) -> PreparedAnswer {
        let key = answerCacheKey(request, takesLanguage: takesLanguage)
        let lookedBeforeReading = key != nil && answersWithoutKey(request)
        if lookedBeforeReading, let key, let kept = answerCache?.answer(for: key, isCurrent: engine.isCurrent) {
            return kept
        }
        let query = try read()
        try engine.authorize(query, by: try caller(request))
        let stamp = key == nil ? nil : engine.answerStamp(for: query)
        if let key, stamp != nil {
            // A caller with a key looks only now, once the key is checked.
            if !lookedBeforeReading, let kept = answerCache?.answer(for: key, isCurrent: engine.isCurrent) { return kept }
            answerCache?.countMiss()
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.answerCapacity)
        try compute(query, &bytes)
        let answer = PreparedAnswer(bytes)
        if let key, let stamp { answerCache?.keep(answer, stamp: stamp, for: key) }
        return answer
    }

    var answerCacheExposition: String {
        guard let answerCache else { return "" }
        return """
            # HELP geocluster_http_answer_cache_total Query answers given from the answer cache (hit) or computed (miss).
            # TYPE geocluster_http_answer_cache_total counter
            geocluster_http_answer_cache_total{result="hit"} \(answerCache.hits)
            geocluster_http_answer_cache_total{result="miss"} \(answerCache.misses)
            # HELP geocluster_http_answer_cache_bytes Bytes of the answers kept in the newer of the cache's two generations.
            # TYPE geocluster_http_answer_cache_bytes gauge
            geocluster_http_answer_cache_bytes \(answerCache.keptBytes)

            """
    }

    func answer(_ endpoint: Endpoint, request: Request, context: some RequestContext) throws(APIError) -> Response {
        let answer: PreparedAnswer
        do {
            answer = try prepared(request, takesLanguage: endpoint.takesLanguage) { () throws(EngineError) in
                try endpoint.request(pathValues: { context.parameters[$0[...]] }, query: request.uri.query,
                                     acceptLanguage: request.headers[.acceptLanguage])
            } compute: { (query, bytes: inout [UInt8]) throws(EngineError) in
                try engine.encode(query, into: &bytes)
            }
        } catch {
            throw apiError(error)
        }
        var response = responsePolicy.response(answer, mediaType: endpoint.mediaType, request: request)
        if endpoint.takesLanguage { response.headers[.vary] = "Accept-Encoding, Accept-Language" }
        return keyed(response, request: request)
    }

    /// Bytes reserved for an answer up front; cluster answers of a map view are tens of KB,
    /// and growing the buffer from this size takes a few doublings, not a dozen.
    static let answerCapacity = 16 << 10

    /// The tile route's parameters are read and checked as those of the `tile` operation
    /// (`Endpoint.vectorTile` builds a `tile` request); the engine then writes the tile
    /// as protobuf instead of JSON.
    func vectorTile(request: Request, context: some RequestContext) throws(APIError) -> Response {
        let answer: PreparedAnswer
        do throws(EngineError) {
            answer = try prepared(request, takesLanguage: false) { () throws(EngineError) in
                try Endpoint.vectorTile.request(pathValues: { context.parameters[$0[...]] }, query: request.uri.query)
            } compute: { (query, bytes: inout [UInt8]) throws(EngineError) in
                guard case let .tile(layer, address, filter) = query else {
                    throw .invalidRequest(reason: "not a tile request")
                }
                bytes = try engine.vectorTile(layer: layer, address: address, filter: filter)
            }
        } catch {
            throw apiError(error)
        }
        return keyed(responsePolicy.response(answer, mediaType: .mapboxVectorTile, request: request), request: request)
    }

    /// Reads the whole body (bounded by ``maxQueryBodyBytes``, so that an oversize batch
    /// is refused with 413 before any answer is sent), then streams the answers: memory
    /// holds the body and one chunk of output, however large the answers are.
    func answerBatch(_ request: Request) async throws -> Response {
        let caller: Caller
        do {
            caller = try self.caller(request)
        } catch {
            throw apiError(error)
        }
        let lines = try await readBody(request)
        var headers = HTTPFields()
        headers[.contentType] = ResponseMediaType.ndjson.rawValue
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            try await answerLines(lines, by: caller) { chunk in try await writer.write(ByteBuffer(bytes: chunk)) }
            try await writer.finish(nil)
        })
    }

    /// Output is handed on in chunks of about this many bytes.
    static let batchChunkBytes = 64 << 10

    /// Answers a batch: the body split at newlines, each line answered by the shared
    /// ``LineProtocol`` with its 1-based number, within one answer budget; blank lines get
    /// no answer and a last line without a newline is answered like the others. `emit`
    /// receives the answer bytes in order, in chunks of about ``batchChunkBytes`` (one
    /// line's answer is never split). Each chunk is computed holding a permit of
    /// ``batchGate``, and handed to `emit` after the permit is returned.
    /// `caller` is who sent the body: each line is allowed or refused as its own request,
    /// and a line refused for the key counts in `/metrics` as a refused request does.
    func answerLines(_ body: [UInt8], by caller: Caller = .trusted, emit: ([UInt8]) async throws -> Void) async throws {
        var output: [UInt8] = []
        var lineNumber = 0
        var batch = LineProtocol.Batch()
        var start = body.startIndex
        while start < body.endIndex {
            await batchGate.enter()
            while start < body.endIndex && output.count < Self.batchChunkBytes {
                let end = body[start...].firstIndex(of: 0x0A) ?? body.endIndex
                lineNumber += 1
                if let failure = await lineProtocol.respond(to: body[start..<end], lineNumber: lineNumber,
                                                            batch: &batch, by: caller, into: &output) {
                    metrics.countKeyRejection(failure)
                }
                start = end + 1
            }
            batchGate.leave()
            if !output.isEmpty {
                try await emit(output)
                output.removeAll(keepingCapacity: true)
            }
        }
    }
}

/// Registers routes and remembers which methods each path takes, so that the others can
/// be answered with 405 instead of Hummingbird's 404.
private struct RouteTable<Context: RequestContext> {
    let router: Router<Context>
    private var methods: [(path: RouterPath, methods: [HTTPRequest.Method])] = []

    /// The methods a 405 is given for; any other gets 501 (``ErrorMiddleware``).
    fileprivate static var knownMethods: [HTTPRequest.Method] {
        [.get, .head, .post, .put, .patch, .delete, .options, .trace]
    }

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
        on(path, .post, use: handler)
    }

    mutating func on(_ path: RouterPath, _ method: HTTPRequest.Method,
                     use handler: @escaping @Sendable (Request, Context) async throws -> some ResponseGenerator) {
        router.on(path, method: method, use: handler)
        record(path, [method])
    }

    /// Every path registered so far.
    var paths: [RouterPath] { methods.map(\.path) }

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

/// Turns every error leaving a route into the response of an ``APIError``: Hummingbird's
/// own (its 404 for an unknown path among them) keep their status and get our body;
/// anything else is logged with its detail and reported as a 500 that names only the
/// request id. This is the one place errors become responses, so the middleware outside
/// it (CORS, metrics) sees every answer as a response.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let error: APIError
        var closes = false
        do {
            // A method the server does not know on any path (RFC 9110 15.6.2).
            guard RouteTable<Context>.knownMethods.contains(request.method) else {
                throw APIError.methodNotImplemented(method: request.method)
            }
            return try await next(request, context)
        } catch let apiError as APIError {
            error = apiError
        } catch let parserError as HTTPParserError {
            // The body stream failed: NIO's decoder rejected the framing (a bad chunk size, a
            // Transfer-Encoding other than chunked). No further request can be read on this
            // connection, so the answer says it closes.
            error = .parser(parserError, transferEncoding: request.headers[.transferEncoding])
            closes = true
        } catch let httpError as HTTPError where httpError.status == .notFound {
            error = .routeNotFound(path: request.uri.path)
        } catch let httpError as HTTPError {
            error = .framework(status: httpError.status, message: httpError.body ?? httpError.status.reasonPhrase)
        } catch let responseError as any HTTPResponseError {
            error = .framework(status: responseError.status, message: responseError.status.reasonPhrase)
        } catch let unexpected {
            let requestID = context.logger[metadataKey: "hb.request.id"]?.description ?? "unknown"
            context.logger.error("request failed", metadata: [
                "error": "\(String(reflecting: unexpected))",
                "method": "\(request.method.rawValue)",
                "path": "\(request.uri.path)",
            ])
            error = .internalError(requestID: requestID)
        }
        var response = try error.response(from: request, context: context)
        if closes { response.headers[.connection] = "close" }
        return request.method == .head ? response.createHeadResponse() : response
    }
}

/// Connection limits of the HTTP/1.1 server, as far as Hummingbird enforces them.
public struct ServerLimits: Sendable {
    /// A connection is closed after this long without reading a complete request head or
    /// body part while no answer is being written: an idle keep-alive connection, and
    /// also one that opens and then sends its head too slowly (the clock restarts only
    /// when a whole head has been parsed). `nil` keeps connections open indefinitely.
    public var idleTimeoutSeconds: Int?
    /// Connections served at once; beyond it the server stops accepting, and new
    /// connections wait in the listen backlog (256) until one closes. From nine tenths
    /// of it on, each new connection closes the longest idle one (``IdleConnections``),
    /// so idle sockets cannot keep others out. `nil` is no limit.
    public var maxConnections: Int?
    /// A connection whose client takes nothing of its answer for this long is closed
    /// (``WriteTimeout``). `nil` waits for ever.
    public var writeTimeoutSeconds: Int?

    public static let defaultIdleTimeoutSeconds = 60
    public static let defaultMaxConnections = 1_000
    public static let defaultWriteTimeoutSeconds = 30

    public init(idleTimeoutSeconds: Int? = defaultIdleTimeoutSeconds, maxConnections: Int? = defaultMaxConnections,
                writeTimeoutSeconds: Int? = defaultWriteTimeoutSeconds) {
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxConnections = maxConnections
        self.writeTimeoutSeconds = writeTimeoutSeconds
    }
}

extension GeoClusterAPI {
    /// The handlers of our own in each connection's pipeline, between NIO's HTTP/1 codec
    /// and Hummingbird's connection handler (``WriteTimeout``, ``FlushBeforeClose``,
    /// ``HTTPProtocolGuard``); new ones for each connection.
    public func connectionHandlers(limits: ServerLimits = ServerLimits()) -> [any RemovableChannelHandler] {
        var handlers: [any RemovableChannelHandler] = []
        if let seconds = limits.writeTimeoutSeconds {
            handlers.append(WriteTimeout(timeout: .seconds(Int64(seconds))) { [metrics] in
                metrics.countWriteTimeout()
                // The answer it dropped may be megabytes: give the pages back.
                HeapTrim.releaseFreePagesSoon()
            })
        }
        return handlers + [FlushBeforeClose(), HTTPProtocolGuard()]
    }

    /// The HTTP/1.1 server for these routes, bound to `host`:`port` (0 picks a free port).
    /// Once it listens it logs one line with its URL and what it serves. Run it as a
    /// service of a `ServiceGroup`, which shuts it down gracefully on a signal.
    public func makeApplication(host: String, port: Int, limits: ServerLimits = ServerLimits(),
                                logger: Logger) -> Application<RouterResponder<BasicRequestContext>> {
        let layers = engine.layerCount
        let points = pointCount
        let urlHost = host.contains(":") ? "[\(host)]" : host
        let idle = limits.maxConnections.map { IdleConnections(maxConnections: $0, metrics: metrics) }
        return Application(
            router: makeRouter(),
            server: .http1(configuration: HTTP1Channel.Configuration(
                additionalChannelHandlers: connectionHandlers(limits: limits) + (idle.map { [$0.tracker()] } ?? []),
                idleTimeout: limits.idleTimeoutSeconds.map { .seconds(Int64($0)) })),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "geo-cluster",
                availableConnectionsDelegate: limits.maxConnections.map { MaximumAvailableConnections($0, logger: logger) }),
            onServerRunning: { channel in
                let boundPort = channel.localAddress?.port ?? port
                logger.notice("geo-cluster listening on http://\(urlHost):\(boundPort) (\(layers) layers, \(points) points)")
            },
            logger: logger
        )
    }
}
