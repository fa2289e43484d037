import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import NIOHTTP1

/// Every error the HTTP transport reports. Handlers throw it (usually wrapping an
/// ``EngineError``); Hummingbird's router turns it into a response through
/// ``response(from:context:)``, so the status mapping and the body shape live here only.
///
/// The body is `{"error":{"code":…,"message":…,"field":…}}`, the `error` object of the
/// JSON-lines protocol without its line number; `field` is present when the error is
/// about one request field.
public enum APIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The engine rejected or could not answer the request.
    case engine(EngineError)
    /// No route has this path.
    case routeNotFound(path: String)
    /// The path exists but does not take this method; `allowed` lists the methods it takes.
    case methodNotAllowed(method: HTTPRequest.Method, allowed: [HTTPRequest.Method])
    /// A body declared as a media type the server does not read (a form upload, an image),
    /// or in a charset other than UTF-8; the header's value.
    case unsupportedMediaType(String)
    /// A method the server implements on no path (`QUERY`, `PROPFIND`).
    case methodNotImplemented(method: HTTPRequest.Method)
    /// The request body is longer than `limitBytes`.
    case bodyTooLarge(limitBytes: Int)
    /// A write route's body is not JSON (`code` is the parser's, such as `invalid_json`)
    /// or not of a shape the route takes (`invalid_body`).
    case invalidBody(code: String, message: String)
    /// The service cannot answer queries yet (or at all); `reason` says why.
    case notReady(reason: String)
    /// The request is not valid HTTP/1.1 (a bad chunk size, a malformed header line, an
    /// unknown method); NIO's decoder rejected it and the connection is closed after the answer.
    case malformedRequest(reason: String)
    /// The request's `Transfer-Encoding` is not `chunked` (RFC 9112 §6.1: 501).
    case unsupportedTransferCoding(String)
    /// The request line and header fields exceed the decoder's limits.
    case headersTooLarge
    /// An error raised by the HTTP framework itself, with the status it chose.
    case framework(status: HTTPResponse.Status, message: String)
    /// Anything else. The detail is logged on the server under `requestID`; the client
    /// learns only that id.
    case internalError(requestID: String)

    public var status: HTTPResponse.Status {
        switch self {
        case let .engine(error):
            switch error.category {
            case .badRequest: .badRequest
            case .notFound: .notFound
            case .tooLarge: .contentTooLarge
            case .conflict: .conflict
            case .internalFailure: .internalServerError
            case .unauthorized: .unauthorized
            case .forbidden: .forbidden
            case .unavailable: .serviceUnavailable
            }
        case .routeNotFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        // 501, as RFC 9110 (15.6.2) asks for a method the server does not recognise.
        case .methodNotImplemented: .notImplemented
        case .unsupportedMediaType: .unsupportedMediaType
        case .bodyTooLarge: .contentTooLarge
        case .invalidBody: .badRequest
        case .notReady: .serviceUnavailable
        case .malformedRequest: .badRequest
        // 501, as RFC 9112 (6.1) asks for a transfer coding the server does not understand.
        case .unsupportedTransferCoding: .notImplemented
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case let .framework(status, _): status
        case .internalError: .internalServerError
        }
    }

    /// Stable snake_case identifier for clients; engine errors keep their own codes.
    public var code: String {
        switch self {
        case let .engine(error): error.code
        case .routeNotFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .methodNotImplemented: "method_not_implemented"
        case .unsupportedMediaType: "unsupported_media_type"
        case .bodyTooLarge: "body_too_large"
        case let .invalidBody(code, _): code
        case .notReady: "not_ready"
        case .malformedRequest: "malformed_request"
        case .unsupportedTransferCoding: "unsupported_transfer_coding"
        case .headersTooLarge: "headers_too_large"
        case .framework: "http_error"
        case .internalError: "internal_error"
        }
    }

    /// The request field the error is about, if any.
    public var field: String? {
        switch self {
        case let .engine(error): error.field
        case .invalidBody: "body"
        default: nil
        }
    }

    public var description: String {
        switch self {
        case let .engine(error):
            error.description
        case let .routeNotFound(path):
            "no route for \(path)"
        case let .unsupportedMediaType(contentType):
            "a body of type \(contentType) is not read here: send JSON (application/json, application/x-ndjson) in UTF-8"
        case let .methodNotImplemented(method):
            "\(method.rawValue) is not a method this server implements"
        case let .methodNotAllowed(method, allowed):
            "\(method.rawValue) is not allowed here (allowed: \(allowed.map(\.rawValue).joined(separator: ", ")))"
        case let .bodyTooLarge(limitBytes):
            "request body exceeds the limit of \(limitBytes) bytes"
        case let .invalidBody(_, message):
            message
        case let .notReady(reason):
            "not ready: \(reason)"
        case let .malformedRequest(reason):
            "malformed HTTP request: \(reason)"
        case let .unsupportedTransferCoding(coding):
            "Transfer-Encoding \(coding) is not supported; send a Content-Length or chunked body"
        case .headersTooLarge:
            "the request line and header fields are too large"
        case let .framework(_, message):
            message
        case let .internalError(requestID):
            "internal error (request \(requestID))"
        }
    }

    /// The JSON body of the error response.
    public var body: JSONValue {
        var error: JSONObject = ["code": .string(code), "message": .string(description)]
        if let field { error["field"] = .string(field) }
        return ["error": .object(error)]
    }
}

extension APIError {
    /// The answer to a request NIO's HTTP/1 decoder rejected. `transferEncoding` is the
    /// request's field when its head was read: llhttp reports a non-chunked coding only
    /// as `.unknown`.
    static func parser(_ error: HTTPParserError, transferEncoding: String?) -> APIError {
        if let coding = transferEncoding,
           coding.split(separator: ",").last?.trimmingSpaces.lowercased() != "chunked" {
            return .unsupportedTransferCoding(coding)
        }
        switch error {
        case .headerOverflow: return .headersTooLarge
        case .invalidChunkSize: return .malformedRequest(reason: "invalid chunk size")
        case .invalidContentLength, .unexpectedContentLength: return .malformedRequest(reason: "invalid Content-Length")
        case .invalidHeaderToken: return .malformedRequest(reason: "invalid character in a header field")
        case .invalidMethod: return .malformedRequest(reason: "unknown method or malformed request line")
        case .invalidURL: return .malformedRequest(reason: "invalid request target")
        case .invalidVersion: return .malformedRequest(reason: "unsupported HTTP version")
        case .invalidEOFState: return .malformedRequest(reason: "the connection ended inside the request")
        default: return .malformedRequest(reason: "\(error)")
        }
    }
}

extension APIError: HTTPResponseError {
    public func response(from request: Hummingbird.Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse(body, status: status).response(from: request, context: context)
        if case let .methodNotAllowed(_, allowed) = self {
            response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
        }
        if status == .unauthorized {
            // RFC 6750 §3: the scheme a client should authenticate with.
            response.headers[.wwwAuthenticate] = #"Bearer realm="geo-cluster""#
        }
        return response
    }
}
