import Dispatch
import FuzzSupport
import GeoClusterHTTP
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Collects the requests that came through the pipeline whole.
private final class RequestCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart

    var requests: [(HTTPRequest, ByteBuffer)] = []
    private var head: HTTPRequest?
    private var body = ByteBuffer()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(next):
            head = next
            body.clear()
        case var .body(part):
            body.writeBuffer(&part)
        case .end:
            if let head { requests.append((head, body)) }
            head = nil
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {}
}

/// Takes an answer's body and drops it.
private struct DiscardingWriter: ResponseBodyWriter {
    var bytes = 0
    mutating func write(_ buffer: ByteBuffer) async throws { bytes += buffer.readableBytes }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// libFuzzer's entry point for the HTTP transport: the input is raw bytes on one
/// connection. They go through NIO's HTTP/1 decoder and the server's own connection
/// handlers (``GeoClusterAPI/connectionHandlers(limits:)``), and every request that comes out
/// whole is answered by the router (every route, the error translation, the batch route
/// over a fresh engine), its body read to the end.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let api = GeoClusterAPI(engine: FuzzEngine.make(), maxBatchAnswerBytes: 1 << 22)
    let channel = EmbeddedChannel()
    let collector = RequestCollector()
    do {
        try channel.pipeline.syncOperations.addHandlers(
            [HTTPResponseEncoder(), ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)),
             HTTP1ToHTTPServerCodec(secure: false)] + api.connectionHandlers() + [collector])
    } catch {
        fatalError("the pipeline is built: \(error)")
    }
    _ = try? channel.writeInbound(ByteBuffer(bytes: UnsafeBufferPointer(start: data, count: size)))
    // Run what the handlers scheduled (a close held back for a slow reader, a refused
    // connection's linger), as time would on a server: an EmbeddedEventLoop runs a
    // scheduled task only when told that its time has come, and one left pending keeps
    // the pipeline alive.
    channel.embeddedEventLoop.advanceTime(by: .minutes(1))
    while (try? channel.readOutbound(as: ByteBuffer.self)) != nil {}
    let requests = collector.requests.prefix(8)
    _ = try? channel.finish()
    guard !requests.isEmpty else { return 0 }

    let responder = api.makeRouter().buildResponder()
    // A channel for the request contexts, used from the task's threads (so a thread-safe
    // one) and closed at the end: an open channel and its pipeline hold each other.
    let contextChannel = NIOAsyncTestingChannel()
    let source = ApplicationRequestContextSource(channel: contextChannel, logger: Logger(label: "fuzz"))
    let done = DispatchSemaphore(value: 0)
    Task {
        defer { done.signal() }
        for (head, body) in requests {
            let request = Request(head: head, body: RequestBody(buffer: body))
            if let response = try? await responder.respond(to: request, context: BasicRequestContext(source: source)) {
                try? await response.body.write(DiscardingWriter())
            }
        }
        _ = try? await contextChannel.finish()
    }
    done.wait()
    return 0
}
