import Dispatch
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

    /// One open connection. Its idle time is an atomic of its own, so that a request
    /// that begins or ends takes no lock and touches no shared table (it did both before:
    /// about 2% of a small request's CPU).
    final class Connection: Sendable {
        /// Closes the connection on its event loop if it is still idle there.
        let shed: @Sendable () -> Void
        /// When its last request ended (or it opened), in ``IdleConnections/now()``'s
        /// nanoseconds; 0 while a request is in progress or its close is on its way.
        let idleSince: Atomic<UInt64>

        init(shed: @escaping @Sendable () -> Void) {
            self.shed = shed
            idleSince = Atomic(IdleConnections.now())
        }

        func busy() { idleSince.store(0, ordering: .relaxed) }

        func idle() { idleSince.store(IdleConnections.now(), ordering: .relaxed) }
    }

    private let connections = Mutex<[ObjectIdentifier: Connection]>([:])

    /// For a server that accepts at most `maxConnections` at once.
    init(maxConnections: Int, metrics: RequestMetrics) {
        threshold = max(1, maxConnections - max(1, maxConnections / 10))
        self.metrics = metrics
    }

    /// Monotonic nanoseconds, never 0.
    static func now() -> UInt64 { max(1, DispatchTime.now().uptimeNanoseconds) }

    /// Connections open now.
    var openCount: Int { connections.withLock { $0.count } }

    /// Records a new connection, idle from now, and when the server is at ``threshold``
    /// sheds the connection idle longest (calls its `shed` outside the lock).
    func opened(_ id: ObjectIdentifier, shed: @escaping @Sendable () -> Void) -> Connection {
        let connection = Connection(shed: shed)
        let victim: Connection? = connections.withLock { connections in
            var oldest: (connection: Connection, since: UInt64)?
            if connections.count >= threshold {
                for other in connections.values {
                    let since = other.idleSince.load(ordering: .relaxed)
                    guard since != 0 else { continue }
                    if oldest == nil || since < oldest!.since { oldest = (other, since) }
                }
            }
            if connections.updateValue(connection, forKey: id) == nil { metrics.countOpenConnections(1) }
            // Not chosen again while its close is on its way.
            oldest?.connection.busy()
            return oldest?.connection
        }
        victim?.shed()
        return connection
    }

    func closed(_ id: ObjectIdentifier) {
        connections.withLock { connections in
            if connections.removeValue(forKey: id) != nil { metrics.countOpenConnections(-1) }
        }
    }

    /// The handler that reports one connection's requests to `self`.
    func tracker() -> Tracker { Tracker(connections: self) }

    /// Follows one connection: busy from a request's head until its answer's end.
    final class Tracker: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart

        let connections: IdleConnections
        private var id: ObjectIdentifier?
        /// This connection's entry, once added.
        private var connection: Connection?
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
            connection = connections.opened(id) {
                bound.eventLoop.execute {
                    // A request may have begun since it was chosen; then it stays.
                    guard !handler.value.inRequest else {
                        handler.value.connection?.idle()
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
                connection?.busy()
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if inRequest, case .end = unwrapOutboundIn(data) {
                inRequest = false
                connection?.idle()
            }
            context.write(data, promise: promise)
        }
    }
}
