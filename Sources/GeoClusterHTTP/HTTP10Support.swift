import NIOCore
import NIOHTTP1

/// Answers HTTP/1.0 requests as HTTP/1.0: no chunked transfer coding (which HTTP/1.0 does
/// not have), and the connection closed after the answer unless the client asked to keep
/// it (`Connection: keep-alive`) and the answer has a `Content-Length`.
///
/// Hummingbird sees requests as `HTTPTypes` values, which carry no version: left alone it
/// would answer an HTTP/1.0 client in HTTP/1.1 framing, chunked when the length is not
/// known up front (`POST /v1/query`), and keep the connection open. So this handler sits
/// between NIO's HTTP/1 codec and its translation to `HTTPTypes`, where versions are
/// still known: ``HTTPProtocolGuard`` puts it there when it is added to a pipeline.
final class HTTP10Support: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Each request whose answer has not begun, in order: whether it is HTTP/1.0 and
    /// whether its client asked to keep the connection.
    private var requests: [(http10: Bool, keepAlive: Bool)] = []
    /// The answer being written is the last on this connection.
    private var closeAfterAnswer = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case let .head(head) = unwrapInboundIn(data) {
            requests.append((head.version.major == 1 && head.version.minor == 0, head.isKeepAlive))
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case var .head(head):
            // An informational answer comes before the final one; an answer to a request
            // that never came whole (a malformed head) has no request of its own here.
            guard head.status.code >= 200, !requests.isEmpty else {
                context.write(data, promise: promise)
                return
            }
            let request = requests.removeFirst()
            if request.http10 {
                head.version = .http1_0
                if request.keepAlive && head.headers.contains(name: "content-length") {
                    head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
                } else {
                    head.headers.replaceOrAdd(name: "connection", value: "close")
                    closeAfterAnswer = true
                }
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closeAfterAnswer:
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            context.flush()
            written.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { _ in
                context.close(promise: nil)
            }
        default:
            context.write(data, promise: promise)
        }
    }
}
