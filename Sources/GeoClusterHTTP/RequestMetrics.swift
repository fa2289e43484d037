import GeoClusterEngine
import Hummingbird
import Synchronization

/// Request counts and latencies per route, for `/metrics` in Prometheus' text format.
///
/// Routes are labelled by their template (`/v1/layers/{layer}/clusters`), never by the
/// raw path, so the number of series is bounded by the routes. The templates are known
/// when the router is built; each has its own slot behind its own `Mutex`, found through
/// a dictionary that is never written after `init`, so requests to different routes
/// never touch the same lock and the locked work is a few additions.
public final class RequestMetrics: Sendable {
    /// Upper bounds of the latency histogram's buckets, in seconds: 100 µs to 10 s.
    public static let bucketBoundsSeconds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    /// The label of requests that matched no route.
    static let unmatchedRoute = "unmatched"

    private let routes: [String]
    /// Connections closed because their client took nothing of an answer for the write timeout.
    private let writeTimeouts = Atomic<UInt64>(0)
    /// Idle connections closed to make room for new ones (``IdleConnections``).
    private let shedConnections = Atomic<UInt64>(0)
    /// Connections open now.
    private let openConnections = Atomic<Int>(0)
    /// Requests refused for their key: without a valid one (401), or not allowed by it (403).
    /// (One lock for the three rather than three more `Atomic`s: Swift 6.3.1's optimiser
    /// crashes on this class's initialiser with six noncopyable stored properties.)
    private let keyRejections = Mutex(KeyRejections())

    private struct KeyRejections {
        var unauthorized: UInt64 = 0
        var forbidden: UInt64 = 0
        var notOwner: UInt64 = 0
    }
    private let slotByRoute: [String: Int]
    private let slots: [Slot]

    /// What one route has counted.
    struct Counts: Sendable {
        /// Requests by method and status, in order of first appearance.
        var requests: [(method: String, status: Int, count: UInt64)] = []
        /// Non-cumulative: `buckets[i]` counts latencies in (bound[i-1], bound[i]]; the
        /// last element counts those above every bound.
        var buckets = [UInt64](repeating: 0, count: RequestMetrics.bucketBoundsSeconds.count + 1)
        var sumSeconds = 0.0
        var count: UInt64 = 0
    }

    private final class Slot: Sendable {
        let counts = Mutex(Counts())
    }

    /// - Parameter routes: every route template the router has; requests that match no
    ///   route are counted under `unmatched`.
    public init(routes: [String]) {
        var unique: [String] = []
        for route in routes + [Self.unmatchedRoute] where !unique.contains(route) { unique.append(route) }
        self.routes = unique
        self.slotByRoute = Dictionary(uniqueKeysWithValues: unique.enumerated().map { ($1, $0) })
        self.slots = unique.map { _ in Slot() }
    }

    /// Counts one connection closed by ``WriteTimeout``.
    func countWriteTimeout() {
        writeTimeouts.add(1, ordering: .relaxed)
    }

    /// Counts one idle connection closed by ``IdleConnections``.
    func countShedConnection() {
        shedConnections.add(1, ordering: .relaxed)
    }

    /// Counts a request refused for its key, when `error` is such a refusal.
    func countKeyRejection(_ error: EngineError) {
        keyRejections.withLock { counts in
            switch error {
            case .unauthorized: counts.unauthorized += 1
            case .forbidden: counts.forbidden += 1
            case .notOwner: counts.notOwner += 1
            default: break
            }
        }
    }

    /// Counts a connection opening (`+1`) or closing (`-1`).
    func countOpenConnections(_ change: Int) {
        openConnections.add(change, ordering: .relaxed)
    }

    /// Counts one answered request.
    public func record(route: String?, method: HTTPRequest.Method, status: Int, seconds: Double) {
        let slot = slots[route.flatMap { slotByRoute[$0] } ?? slotByRoute[Self.unmatchedRoute] ?? 0]
        let bucket = Self.bucketBoundsSeconds.firstIndex { seconds <= $0 } ?? Self.bucketBoundsSeconds.count
        let methodName = method.rawValue
        slot.counts.withLock { counts in
            if let i = counts.requests.firstIndex(where: { $0.status == status && $0.method == methodName }) {
                counts.requests[i].count += 1
            } else {
                counts.requests.append((methodName, status, 1))
            }
            counts.buckets[bucket] += 1
            counts.sumSeconds += seconds
            counts.count += 1
        }
    }

    /// A copy of one route's counts.
    func counts(route: String) -> Counts? {
        slotByRoute[route].map { slots[$0].counts.withLock { $0 } }
    }

    /// The Prometheus text exposition (format 0.0.4) of the request metrics and of the
    /// engine's layers.
    public func exposition(engine: Engine) -> String {
        var out = ""
        out += "# HELP geocluster_http_requests_total HTTP requests answered, by route template, method and status.\n"
        out += "# TYPE geocluster_http_requests_total counter\n"
        let snapshot = zip(routes, slots).map { route, slot in (route, slot.counts.withLock { $0 }) }
        for (route, counts) in snapshot {
            for entry in counts.requests {
                out += "geocluster_http_requests_total{route=\"\(Self.escape(route))\",method=\"\(entry.method)\","
                out += "status=\"\(entry.status)\"} \(entry.count)\n"
            }
        }
        out += "# HELP geocluster_http_request_duration_seconds Time from a request's arrival to the last byte of its answer, by route template.\n"
        out += "# TYPE geocluster_http_request_duration_seconds histogram\n"
        for (route, counts) in snapshot where counts.count > 0 {
            let label = "route=\"\(Self.escape(route))\""
            var cumulative: UInt64 = 0
            for (bound, count) in zip(Self.bucketBoundsSeconds, counts.buckets) {
                cumulative += count
                out += "geocluster_http_request_duration_seconds_bucket{\(label),le=\"\(Self.format(bound))\"} \(cumulative)\n"
            }
            out += "geocluster_http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(counts.count)\n"
            out += "geocluster_http_request_duration_seconds_sum{\(label)} \(Self.format(counts.sumSeconds))\n"
            out += "geocluster_http_request_duration_seconds_count{\(label)} \(counts.count)\n"
        }
        out += "# HELP geocluster_http_write_timeouts_total Connections closed because their client took nothing of an answer for the write timeout.\n"
        out += "# TYPE geocluster_http_write_timeouts_total counter\n"
        out += "geocluster_http_write_timeouts_total \(writeTimeouts.load(ordering: .relaxed))\n"
        out += "# HELP geocluster_http_connections_shed_total Idle connections closed to keep room for new ones near --max-connections.\n"
        out += "# TYPE geocluster_http_connections_shed_total counter\n"
        out += "geocluster_http_connections_shed_total \(shedConnections.load(ordering: .relaxed))\n"
        out += "# HELP geocluster_http_connections_open Connections open now.\n"
        out += "# TYPE geocluster_http_connections_open gauge\n"
        out += "geocluster_http_connections_open \(openConnections.load(ordering: .relaxed))\n"
        let rejections = keyRejections.withLock { $0 }
        out += "# HELP geocluster_http_key_rejections_total Requests refused for their API key: none or an invalid or revoked one (unauthorized), one that does not allow the request (forbidden), a write to another observer's sighting (not_owner); each line of POST /v1/query counts as a request.\n"
        out += "# TYPE geocluster_http_key_rejections_total counter\n"
        out += "geocluster_http_key_rejections_total{reason=\"unauthorized\"} \(rejections.unauthorized)\n"
        out += "geocluster_http_key_rejections_total{reason=\"forbidden\"} \(rejections.forbidden)\n"
        out += "geocluster_http_key_rejections_total{reason=\"not_owner\"} \(rejections.notOwner)\n"
        out += "# HELP geocluster_proj_files_refused_total project requests refused because their CRS named a file PROJ may not read.\n"
        out += "# TYPE geocluster_proj_files_refused_total counter\n"
        out += "geocluster_proj_files_refused_total \(engine.refusedPROJFiles)\n"
        out += "# HELP geocluster_layers Layers loaded.\n"
        out += "# TYPE geocluster_layers gauge\n"
        out += "geocluster_layers \(engine.layerCount)\n"
        out += "# HELP geocluster_layer_points Points in each layer.\n"
        out += "# TYPE geocluster_layer_points gauge\n"
        for layer in engine.entries {
            out += "geocluster_layer_points{layer=\"\(Self.escape(layer.name))\"} \(layer.pointCount)\n"
        }
        out += "# HELP geocluster_layer_build_seconds Seconds the layer's index took to build when it was loaded.\n"
        out += "# TYPE geocluster_layer_build_seconds gauge\n"
        for layer in engine.entries {
            out += "geocluster_layer_build_seconds{layer=\"\(Self.escape(layer.name))\"} \(Self.format(layer.buildSeconds))\n"
        }
        let kept = engine.entries.compactMap { layer in layer.keptItems.map { (layer.name, $0) } }
        out += "# HELP geocluster_layer_kept_items Items a live layer's kept display groups hold (clusters and points of the blocks views formed, cells' totals).\n"
        out += "# TYPE geocluster_layer_kept_items gauge\n"
        for (name, items) in kept {
            out += "geocluster_layer_kept_items{layer=\"\(Self.escape(name))\"} \(items.held)\n"
        }
        out += "# HELP geocluster_layer_kept_items_budget Items a live layer's kept display groups may hold (its kept_items option, or four per point up to 4000000, half its points beyond 8000000 points, and at least 65536).\n"
        out += "# TYPE geocluster_layer_kept_items_budget gauge\n"
        for (name, items) in kept {
            out += "geocluster_layer_kept_items_budget{layer=\"\(Self.escape(name))\"} \(items.budget)\n"
        }
        out += "# HELP geocluster_layer_kept_bytes Heap memory a live layer's kept display groups take (estimated from the sizes of their arrays).\n"
        out += "# TYPE geocluster_layer_kept_bytes gauge\n"
        for (name, items) in kept {
            out += "geocluster_layer_kept_bytes{layer=\"\(Self.escape(name))\"} \(items.bytes)\n"
        }
        return out
    }

    /// A label value with `\`, `"` and newlines escaped, as the text format requires.
    static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A sample value as Go's strconv would accept it: the shortest round-tripping form.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}

/// Counts every request in ``RequestMetrics`` with its route template, method, final
/// status and latency. It sits outside every other middleware, so errors have become
/// responses by the time it sees them; the latency ends when the last body byte has been
/// written, which matters for the streamed answers of `POST /v1/query`.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: RequestMetrics

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let method = request.method
        do {
            var response = try await next(request, context)
            let status = response.status.code
            let route = context.endpointPath
            let body = response.body
            response.body = ResponseBody(contentLength: body.contentLength) { [metrics] writer in
                try await body.write(writer)
                metrics.record(route: route, method: method, status: status, seconds: Self.seconds(since: start))
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.record(route: context.endpointPath, method: method, status: status, seconds: Self.seconds(since: start))
            throw error
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}
