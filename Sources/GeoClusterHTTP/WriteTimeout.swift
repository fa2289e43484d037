import NIOCore

/// Closes a connection whose client has stopped taking its answer.
///
/// An answer is handed to the socket whole or in chunks; while the client does not read,
/// NIO holds what the socket has not taken, and the channel reports itself not writable
/// once that passes its high-water mark (64 KiB). A connection that stays not writable
/// for ``timeout`` is closed, and with it goes what it held: 150 clients that asked for a
/// 4.5 MB answer each and never read once kept 1.2 GB. Streamed answers (`POST /v1/query`)
/// stop being produced while the channel is not writable, so they hold at most a chunk.
///
/// It sits nearest the socket among the server's own handlers, so that its close is not
/// held back by ``FlushBeforeClose`` (which waits for exactly the writes that do not
/// progress here).
final class WriteTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    let timeout: TimeAmount
    /// Called when a connection is closed for it, for `/metrics`.
    let onTimeout: @Sendable () -> Void
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.onTimeout = onTimeout
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            deadline?.cancel()
            deadline = nil
        } else if deadline == nil {
            let onTimeout = onTimeout
            deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: timeout) {
                // Once closed, the pending writes (the answer) have been dropped.
                let closed = context.eventLoop.makePromise(of: Void.self)
                closed.futureResult.whenComplete { _ in onTimeout() }
                context.close(promise: closed)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
