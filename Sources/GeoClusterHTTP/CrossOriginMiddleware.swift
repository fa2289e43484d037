import Hummingbird

/// Which browser origins may read this service's answers (CORS).
public enum AllowedOrigins: Sendable, Equatable {
    /// Any origin: `Access-Control-Allow-Origin: *`. The API is public and takes no
    /// credentials, so this is the default.
    case any
    /// Only these origins (`https://birds.example` — scheme, host and port, as browsers
    /// send them in `Origin`); a request from one gets its own origin back, others none.
    case list([String])
    /// No CORS headers at all: browsers on other origins cannot read answers.
    case none

    /// Reads a configuration value: `*` is ``any``, `none` (or nothing) ``none``,
    /// otherwise a comma-separated list of origins.
    public init(parsing text: String) {
        let items = text.split(separator: ",").map { String($0.trimmingSpaces) }.filter { !$0.isEmpty }
        if items == ["*"] {
            self = .any
        } else if items.isEmpty || items == ["none"] {
            self = .none
        } else {
            self = .list(items)
        }
    }
}

/// Cross-Origin Resource Sharing for browser frontends on other origins.
///
/// Hummingbird's `CORSMiddleware` takes its origin list as a variadic argument, which a
/// list read from the command line cannot be passed as; this is the same protocol with
/// a list. Preflights (`OPTIONS` with `Access-Control-Request-Method`) are answered here
/// with 204 for every route the router knows; answers get `Access-Control-Allow-Origin`
/// and expose `ETag`, so that scripts can revalidate. Errors reach this middleware as
/// responses already (``ErrorMiddleware`` sits inside it), so they carry the headers too
/// and a browser can read their JSON body.
struct CrossOriginMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowedOrigins: AllowedOrigins

    static var allowedMethods: String { "GET, HEAD, POST, PUT, DELETE, OPTIONS" }
    /// Request headers a script may set: `Content-Type` for `POST /v1/query`,
    /// `If-None-Match` for revalidation; `Accept` is always allowed.
    static var allowedHeaders: String { "Accept, Authorization, Content-Type, If-None-Match" }
    /// How long a browser may reuse a preflight answer.
    static var preflightMaxAgeSeconds: String { "600" }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        guard allowedOrigins != .none, let origin = request.headers[.origin] else {
            return try await next(request, context)
        }
        let allowOrigin = allowedValue(for: origin)
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = HTTPFields()
            addOriginHeaders(allowOrigin, to: &headers)
            if allowOrigin != nil {
                headers[.accessControlAllowMethods] = Self.allowedMethods
                headers[.accessControlAllowHeaders] = Self.allowedHeaders
                headers[.accessControlMaxAge] = Self.preflightMaxAgeSeconds
            }
            return Response(status: .noContent, headers: headers, body: ResponseBody())
        }
        var response = try await next(request, context)
        addOriginHeaders(allowOrigin, to: &response.headers)
        if allowOrigin != nil {
            response.headers[.accessControlExposeHeaders] = "ETag"
        }
        return response
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, `nil` when
    /// the origin is not allowed.
    func allowedValue(for origin: String) -> String? {
        switch allowedOrigins {
        case .any: "*"
        case let .list(origins): origins.contains(origin) ? origin : nil
        case .none: nil
        }
    }

    /// With a list the answer depends on `Origin`, so shared caches must key on it.
    private func addOriginHeaders(_ allowOrigin: String?, to headers: inout HTTPFields) {
        if let allowOrigin { headers[.accessControlAllowOrigin] = allowOrigin }
        if case .list = allowedOrigins { headers[values: .vary].append("Origin") }
    }
}
