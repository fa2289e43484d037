import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Answers, with the JSON error body, the requests that never reach a route.
///
/// Hummingbird answers an `HTTPParserError` (a malformed header line, an unknown method,
/// oversized headers) with `400`, `Content-Length: 0` and no body
/// (`HTTPChannelHandler.handleHTTP`), and NIO's decoder treats `CONNECT` as the start of
/// a tunnel: it parses nothing after the head, so the answer to one (which NIO's encoder
/// sends without a body or length) is delimited only by closing the connection, which
/// nobody did until the idle timeout.
///
/// This handler sits between `HTTP1ToHTTPServerCodec` (after ``FlushBeforeClose``, so
/// that its close waits for its answer to be written) and Hummingbird's connection state
/// handler:
/// - a parse error in a request head is answered here (400, 431) and the connection closed;
/// - a parse error in a body a route may be reading is passed on: the body stream throws
///   and ``ErrorMiddleware`` answers it (400, or 501 for a Transfer-Encoding other than chunked);
/// - a parse error after the route answered closes the connection without a second answer;
/// - `CONNECT` is answered with 405 and `Connection: close`, then the connection is closed.
final class HTTPProtocolGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What a `CONNECT` is told the server takes.
    static let allowedMethods: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .options]

    /// A request head was passed on and its `.end` has not arrived.
    private var readingRequest = false
    /// A request head was passed on and the `.end` of its answer has not been written.
    private var awaitingResponse = false
    /// The `Transfer-Encoding` of the request being read.
    private var transferEncoding: String?
    /// The answer to a malformed request that follows the one being answered.
    private var pendingAnswer: APIError?
    /// No request can follow: a parse error was seen, or a `CONNECT` was answered.
    private var finished = false
    /// Hummingbird's own answer to a parse error, after a route's answer, is dropped.
    private var droppingWrites = false

    /// Puts ``HTTP10Support`` in front of the translation to `HTTPTypes`, where request
    /// and answer versions are still known.
    func handlerAdded(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        if let codec = try? pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self) {
            try? pipeline.addHandler(HTTP10Support(), position: .before(codec.handler))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        switch unwrapInboundIn(data) {
        case let .head(head):
            if head.method == .connect {
                finished = true
                answer(.methodNotAllowed(method: head.method, allowed: Self.allowedMethods), context: context,
                       withBody: false)
                return
            }
            readingRequest = true
            awaitingResponse = true
            transferEncoding = head.headerFields[.transferEncoding]
        case .body:
            break
        case .end:
            readingRequest = false
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            // After a parse error every further read is reported as
            // `ByteToMessageDecoderError.dataReceivedInErrorState`; the connection is closing.
            if !finished { context.fireErrorCaught(error) }
            return
        }
        guard !finished else { return }
        finished = true
        switch (readingRequest, awaitingResponse) {
        case (true, true):
            // The route may be reading this body: let its stream throw.
            context.fireErrorCaught(error)
        case (true, false):
            // The route answered without reading the body; the client has its answer.
            context.close(promise: nil)
        case (false, true):
            // The next request's head is malformed while this one is answered.
            pendingAnswer = .parser(parserError, transferEncoding: nil)
        case (false, false):
            answer(.parser(parserError, transferEncoding: nil), context: context, withBody: true)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        if case .head = part, finished, !awaitingResponse {
            // Hummingbird answering the parse error a second time (400, empty body).
            droppingWrites = true
            context.close(promise: nil)
        }
        if droppingWrites {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(data, promise: promise)
        if case .end = part {
            awaitingResponse = false
            if let pending = pendingAnswer {
                pendingAnswer = nil
                answer(pending, context: context, withBody: true)
            }
        }
    }

    /// How long a connection whose request was refused waits for the client to close it.
    static let lingerTime = TimeAmount.seconds(5)

    /// Writes `error` as the answer, then closes the connection's output once the answer
    /// is written and the whole connection when the client has closed its side, or after
    /// ``lingerTime``. Closing at once, with request bytes still unread (the rest of an
    /// oversized head, a body), makes the kernel reset the connection, and a reset can
    /// reach the client before it has read the answer, which is then lost.
    private func answer(_ error: APIError, context: ChannelHandlerContext, withBody: Bool) {
        var bytes: [UInt8] = []
        error.body.encode(into: &bytes)
        var head = HTTPResponse(status: error.status)
        if withBody {
            head.headerFields[.contentType] = ResponseMediaType.json.rawValue
            head.headerFields[.contentLength] = String(bytes.count)
        }
        head.headerFields[.connection] = "close"
        if case let .methodNotAllowed(_, allowed) = error {
            head.headerFields[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        // NIO's encoder refuses a body in the answer to CONNECT (and strips its length).
        if withBody { context.write(wrapOutboundOut(.body(ByteBuffer(bytes: bytes))), promise: nil) }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        written.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { _ in
            context.close(mode: .output, promise: nil)
            loop.scheduleTask(in: Self.lingerTime) { context.close(promise: nil) }
        }
    }
}
