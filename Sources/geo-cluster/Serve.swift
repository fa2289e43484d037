import ArgumentParser
import Foundation
import GeoClusterEngine
import GeoClusterHTTP
import GeoClusterStore
import Logging
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer queries over HTTP/1.1 until SIGTERM or SIGINT.",
        discussion: """
            Routes: GET /v1/layers, /v1/stats, /v1/layers/{layer}, \
            /v1/layers/{layer}/clusters?bbox=w,s,e,n&zoom=z, \
            /v1/layers/{layer}/clusters/{id}/children|leaves|expansion-zoom, \
            /v1/layers/{layer}/tiles/{z}/{x}/{y}.geojson|.mvt, /v1/layers/{layer}/nearby, \
            /v1/layers/{layer}/points?bbox=w,s,e,n, /v1/layers/{layer}/points/{id}, /v1/reachable, /v1/route, /v1/stations, /v1/project, \
            /healthz, /readyz, /metrics; \
            POST /v1/query with JSON lines; POST, PUT, DELETE /v1/layers/{layer}/points[/{id}] \
            to write live layers (with --keys, writes need "Authorization: Bearer <key>", keys made with \
            geo-cluster keys); GET / is a map viewer (see docs/PROTOCOL.md and docs/HTTP.md).
            The environment variables GEO_CLUSTER_HOST, GEO_CLUSTER_PORT, GEO_CLUSTER_DATA, \
            GEO_CLUSTER_STORE, GEO_CLUSTER_CORS_ORIGINS and GEO_CLUSTER_KEYS stand in for --host, --port, \
            --data, --store, --cors-origins and --keys when those are not given.
            """)

    @OptionGroup var layers: LayerSourceOptions

    @Option(help: "Address to listen on (default: $GEO_CLUSTER_HOST, else 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on, 0 for any free one (default: $GEO_CLUSTER_PORT, else 8080).")
    var port: Int?

    @Option(help: """
        Browser origins allowed to read answers (CORS): '*' for any, 'none' for no CORS headers, \
        or a comma-separated list such as 'https://birds.example,http://localhost:5173' \
        (default: $GEO_CLUSTER_CORS_ORIGINS, else '*').
        """)
    var corsOrigins: String?

    @Option(help: "Seconds clients may reuse a query answer (Cache-Control max-age); 0 makes them revalidate each time.")
    var cacheMaxAge = ResponsePolicy.defaultCacheMaxAgeSeconds

    @Option(help: "Seconds before an idle connection is closed; 0 for never.")
    var idleTimeout = ServerLimits.defaultIdleTimeoutSeconds

    @Option(help: "Most connections served at once; 0 for no limit. From nine tenths of it, each new connection closes the longest idle one; beyond it new connections wait in the backlog.")
    var maxConnections = ServerLimits.defaultMaxConnections

    @Option(help: "Seconds a client may take nothing of an answer before its connection is closed; 0 for never.")
    var writeTimeout = ServerLimits.defaultWriteTimeoutSeconds

    @Option(help: "Largest accepted POST /v1/query body, in bytes.")
    var maxQueryBodyBytes = GeoClusterAPI.defaultMaxQueryBodyBytes

    @Option(help: "Most bytes of answers to one POST /v1/query body; the line that would pass it and every later line get the error too_large. 0 for no limit.")
    var maxBatchAnswerBytes = GeoClusterAPI.defaultMaxBatchAnswerBytes

    @Option(help: "Megabytes of query answers kept for their next request (same route, query and layer versions); 0 keeps none.")
    var answerCacheMB = GeoClusterAPI.defaultAnswerCacheBytes >> 20

    @Option(help: "POST /v1/query bodies computing at once (default: one less than the cores, at least 1); the others wait.")
    var concurrentBatches = GeoClusterAPI.defaultConcurrentBatches

    @Option(help: "Least severe log level written to stderr: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(help: ArgumentHelp("""
        Which requests need an API key (Authorization: Bearer <key>; keys are made with geo-cluster keys \
        and live in --store): off, writes (queries stay open) or all (default: $GEO_CLUSTER_KEYS, else off).
        """, valueName: "off|writes|all"))
    var keys: String?

    @Option(help: ArgumentHelp("Where Leaflet's leaflet.js and leaflet.css are, for the viewer page at / (Debian's libjs-leaflet).",
                               valueName: "dir"))
    var leaflet = ViewerAssets.defaultLeafletDirectory

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel): expected trace, debug, info, notice, warning, error or critical")
        }
        _ = try resolvedPort()
        for (name, value) in [("--cache-max-age", cacheMaxAge), ("--idle-timeout", idleTimeout),
                              ("--answer-cache-mb", answerCacheMB),
                              ("--max-connections", maxConnections), ("--max-batch-answer-bytes", maxBatchAnswerBytes),
                              ("--write-timeout", writeTimeout)]
            where value < 0 {
            throw ValidationError("\(name) \(value): expected 0 or more")
        }
        guard concurrentBatches > 0 else {
            throw ValidationError("--concurrent-batches \(concurrentBatches): expected 1 or more")
        }
        if let keys, KeyRequirement(rawValue: keys) == nil {
            throw ValidationError("--keys \(keys): expected off, writes or all")
        }
        guard maxQueryBodyBytes > 0 else {
            throw ValidationError("--max-query-body-bytes \(maxQueryBodyBytes): expected 1 or more")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let host = host ?? environment["GEO_CLUSTER_HOST"] ?? "127.0.0.1"
        let port = try resolvedPort()
        var source = layers
        if source.data == nil { source.data = environment["GEO_CLUSTER_DATA"] }
        if source.store == nil { source.store = environment["GEO_CLUSTER_STORE"] }

        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            // StreamLogHandler's lines, with request metadata formatted only when logged.
            var handler = LazyMetadataLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "geo-cluster")

        let (engine, store) = try source.makeEngineAndStore()
        if engine.layerCount == 0 {
            logger.warning("no layers loaded (give --data or --layer-file); /readyz will answer 503")
        }
        // Replicas sharing a PostgreSQL store follow each other's writes (docs/DEPLOY.md).
        var feed: ChangeFeed?
        if let postgres = store as? PostgresJournal {
            feed = ChangeFeed(journal: postgres, layers: engine.entries.compactMap(\.store), logger: logger)
        }
        // API keys live in the store; the ring follows it (keys created or revoked by any
        // process on the store) once a second.
        let keysText = keys ?? environment["GEO_CLUSTER_KEYS"] ?? "off"
        guard let keyRequirement = KeyRequirement(rawValue: keysText) else {
            // A mistyped value must not start a server with keys off.
            throw ValidationError("GEO_CLUSTER_KEYS=\(keysText): expected off, writes or all")
        }
        var keyRing: KeyRing?
        if keyRequirement != .off {
            guard let keyStore = store as? any KeyStore else {
                throw ValidationError("--keys \(keyRequirement.rawValue) needs --store, where the keys live")
            }
            keyRing = try KeyRing(store: keyStore)
            logger.notice("API keys required for \(keyRequirement == .all ? "every query and write" : "writes") (\(keyRing?.count ?? 0) keys in the store)")
        } else if store != nil, !["127.0.0.1", "::1", "localhost"].contains(host) {
            logger.warning("listening on \(host) with --keys off: anyone who reaches it may write (see --keys)")
        }
        let origins = AllowedOrigins(parsing: corsOrigins ?? environment["GEO_CLUSTER_CORS_ORIGINS"] ?? "*")
        let api = GeoClusterAPI(engine: engine, maxQueryBodyBytes: maxQueryBodyBytes,
                                maxBatchAnswerBytes: maxBatchAnswerBytes > 0 ? maxBatchAnswerBytes : nil,
                                concurrentBatches: concurrentBatches,
                                responsePolicy: ResponsePolicy(cacheMaxAgeSeconds: cacheMaxAge),
                                allowedOrigins: origins, keyRequirement: keyRequirement, keyRing: keyRing,
                                answerCacheBytes: min(answerCacheMB, 1 << 20) << 20,
                                viewerAssets: try ViewerAssets(leafletDirectory: leaflet, dataDirectory: source.data,
                                                               networks: engine.networks),
                                notReadyReason: { [feed] in feed?.notReadyReason })
        let limits = ServerLimits(idleTimeoutSeconds: idleTimeout > 0 ? idleTimeout : nil,
                                  maxConnections: maxConnections > 0 ? maxConnections : nil,
                                  writeTimeoutSeconds: writeTimeout > 0 ? writeTimeout : nil)
        let application = api.makeApplication(host: host, port: port, limits: limits, logger: logger)
        // Shut down in reverse order: the server stops taking requests before the feed stops.
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: (feed.map { [$0] } ?? []) + (keyRing.map { [KeyRefresh(ring: $0, logger: logger)] } ?? [])
                + [application],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await services.run()
    }

    /// --port, else GEO_CLUSTER_PORT, else 8080.
    private func resolvedPort() throws -> Int {
        if let port {
            try Self.checkPort(port, source: "--port")
            return port
        }
        guard let value = ProcessInfo.processInfo.environment["GEO_CLUSTER_PORT"] else { return 8080 }
        guard let port = Int(value) else {
            throw ValidationError("GEO_CLUSTER_PORT=\(value): expected a port number")
        }
        try Self.checkPort(port, source: "GEO_CLUSTER_PORT")
        return port
    }

    private static func checkPort(_ port: Int, source: String) throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("\(source) \(port): expected a port number in 0...65535")
        }
    }
}

/// Brings a ``KeyRing`` up to date with its store once a second, as a service of the
/// server's `ServiceGroup`. The store's I/O runs on a queue of its own, never on one of
/// Swift concurrency's threads. A failed refresh keeps the keys known so far and is
/// logged once until one succeeds again.
final class KeyRefresh: Service {
    let ring: KeyRing
    let logger: Logger
    let interval: Duration
    private let queue = DispatchQueue(label: "geo-cluster.keys")

    init(ring: KeyRing, logger: Logger, interval: Duration = .seconds(1)) {
        self.ring = ring
        self.logger = logger
        self.interval = interval
    }

    func run() async throws {
        var failing = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: interval)
            let error = await withCheckedContinuation { (continuation: CheckedContinuation<EngineError?, Never>) in
                queue.async { [ring] in
                    do throws(EngineError) {
                        try ring.refresh()
                        continuation.resume(returning: nil)
                    } catch {
                        continuation.resume(returning: error)
                    }
                }
            }
            if let error, !failing { logger.warning("API keys could not be refreshed from the store: \(error)") }
            failing = error != nil
        }
    }
}
