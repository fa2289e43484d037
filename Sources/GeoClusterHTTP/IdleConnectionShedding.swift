import NIOCore
import NIOHTTPTypes
import Synchronization

/// Keeps room for new connections when idle ones fill the server.
///
/// Beyond `--max-connections` the server stops accepting, and new connections wait in
/// the listen backlog until one closes: 1,050 idle sockets (opened and never used, or
/// kept alive between requests) made a normal request wait for the idle timeout, 58 s.
/// So once the open connections reach ``threshold`` (the limit less a tenth of it),
/// each connection that opens closes the connection that has been idle longest: one with
/// no request being read or answered. A connection in the middle of a request is never
/// closed for it; when all are busy, the limit holds as before. Closing an idle keep-alive
/// connection is what HTTP/1.1 allows a server to do at any time (RFC 9112, 9.8); clients
/// open a new one.
final class IdleConnections: Sendable {
    /// Open connections at which opening one more closes the longest idle one.
    let threshold: Int
    /// Where shed and open connections are counted.
    private let metrics: RequestMetrics

    private struct Entry {
        /// Closes the connection on its event loop if it is still idle there.
        let shed: @Sendable () -> Void
        /// When its last request ended (or it opened); `nil` while a request is in progress.
        var idleSince: ContinuousClock.Instant?
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
    }

    private let state = Mutex(State())

    /// For a server that accepts at most `maxConnections` at once.
    init(maxConnections: Int, metrics: RequestMetrics) {
        threshold = max(1, maxConnections - max(1, maxConnections / 10))
        self.metrics = metrics
    }

    /// Open connections now.
    var openCount: Int { state.withLock { $0.entries.count } }

    /// A connection opened; the longest idle other one is closed when there are
    /// ``threshold`` or more.
    func opened(_ id: ObjectIdentifier, shed: @escaping @Sendable () -> Void) {
        let victim: (@Sendable () -> Void)? = state.withLock { state in
            var oldest: (id: ObjectIdentifier, since: ContinuousClock.Instant)?
            if state.entries.count >= threshold {
                for (other, entry) in state.entries {
                    guard let since = entry.idleSince else { continue }
                    if oldest == nil || since < oldest!.since { oldest = (other, since) }
                }
            }
            if state.entries.updateValue(Entry(shed: shed, idleSince: .now), forKey: id) == nil {
                metrics.countOpenConnections(1)
            }
            guard let oldest else { return nil }
            // Not chosen again while its close is on its way.
            state.entries[oldest.id]?.idleSince = nil
            return state.entries[oldest.id]?.shed
        }
        victim?()
    }

    func closed(_ id: ObjectIdentifier) {
        state.withLock { state in
            if state.entries.removeValue(forKey: id) != nil { metrics.countOpenConnections(-1) }
        }
    }

    func busy(_ id: ObjectIdentifier) {
        state.withLock { $0.entries[id]?.idleSince = nil }
    }

    func idle(_ id: ObjectIdentifier) {
        state.withLock { $0.entries[id]?.idleSince = .now }
    }

    /// The handler that reports one connection's requests to `self`.
    func tracker() -> Tracker { Tracker(connections: self) }

    /// Follows one connection: busy from a request's head until its answer's end.
    final class Tracker: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart

        let connections: IdleConnections
        private var id: ObjectIdentifier?
        /// A request has been read in part or whole and its answer has not ended.
        private var inRequest = false

        init(connections: IdleConnections) {
            self.connections = connections
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let id = ObjectIdentifier(context.channel)
            self.id = id
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            let metrics = connections.metrics
            connections.opened(id) {
                bound.eventLoop.execute {
                    // A request may have begun since it was chosen; then it stays.
                    guard !handler.value.inRequest else {
                        handler.value.connections.idle(id)
                        return
                    }
                    metrics.countShedConnection()
                    bound.value.close(promise: nil)
                }
            }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if let id { connections.closed(id) }
            id = nil
        }

        func channelInactive(context: ChannelHandlerContext) {
            if let id { connections.closed(id) }
            id = nil
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if !inRequest, case .head = unwrapInboundIn(data) {
                inRequest = true
                if let id { connections.busy(id) }
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if inRequest, case .end = unwrapOutboundIn(data) {
                inRequest = false
                if let id { connections.idle(id) }
            }
            context.write(data, promise: promise)
        }
    }
}
