import NIOCore

/// Holds back a connection's close until the writes before it have reached the socket.
///
/// When a connection must close after its response (a graceful shutdown, a client's
/// `Connection: close`), Hummingbird writes the response's end and closes the channel at
/// once, and SwiftNIO fails whatever the socket has not taken yet: a client reading slowly
/// (a large batch answer on a slow link) would lose the end of its answer while the
/// server reports a clean shutdown. This handler sits between Hummingbird's connection
/// state handler and the HTTP encoder, counts the writes in flight and passes the close
/// on once the last of them has completed, or after ``maximumDelay`` so that a client that
/// stopped reading cannot hold a shutdown up for ever.
final class FlushBeforeClose: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    /// How long a close waits for a client that does not read.
    static let maximumDelay = TimeAmount.seconds(30)

    private var writesInFlight = 0
    private var heldClose: (mode: CloseMode, promise: EventLoopPromise<Void>?)?
    private var deadline: Scheduled<Void>?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let written = promise ?? context.eventLoop.makePromise()
        writesInFlight += 1
        written.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { _ in
            self.writesInFlight -= 1
            if self.writesInFlight == 0 { self.releaseClose(context) }
        }
        context.write(data, promise: written)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, writesInFlight > 0, heldClose == nil else {
            context.close(mode: mode, promise: promise)
            return
        }
        heldClose = (mode, promise)
        context.flush()
        deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: Self.maximumDelay) {
            self.releaseClose(context)
        }
    }

    private func releaseClose(_ context: ChannelHandlerContext) {
        guard let (mode, promise) = heldClose else { return }
        heldClose = nil
        deadline?.cancel()
        deadline = nil
        context.close(mode: mode, promise: promise)
    }
}
