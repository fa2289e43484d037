import Dispatch
import Foundation
import GeoClusterEngine
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Keeps a replica's live layers up to date with what the other replicas commit to the
/// shared PostgreSQL store (docs/DEPLOY.md).
///
/// A thread of its own waits for `NOTIFY geo_cluster_changes` on a dedicated connection,
/// or at most ``pollInterval`` (the fallback when a notification is lost or the
/// connection is down), then reads each layer's entries after the sequence it has
/// applied and replays them in order. Writes through this replica apply their own batch
/// at once and catch up inside their transaction, so the feed skips what they applied.
/// After a failure (connection lost) the replica is not ready until a full round of
/// catching up succeeds again.
public final class ChangeFeed: Service {
    public let journal: PostgresJournal
    public let layers: [LiveLayerStore]
    /// Longest wait between two rounds when no notification arrives.
    public let pollInterval: Duration
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = Atomic(false)
    private let state = Mutex<String?>("catching up with the store's change feed")
    private let logger: Logger

    public init(journal: PostgresJournal, layers: [LiveLayerStore], pollInterval: Duration = .seconds(1),
                logger: Logger = Logger(label: "geo-cluster.feed")) {
        self.journal = journal
        self.layers = layers
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// Why the replica is not ready (catching up, or the store unreachable), `nil` once a
    /// round of catching up has succeeded and none has failed since.
    public var notReadyReason: String? { state.withLock { $0 } }

    /// Follows the feed, as a service of the server's `ServiceGroup`, until the group
    /// shuts down (or the task is cancelled). The rounds run on a thread of their own:
    /// each waits on PostgreSQL, which must not hold one of Swift concurrency's threads.
    public func run() async throws {
        start()
        defer { stop() }
        try? await gracefulShutdown()
    }

    /// Starts following the feed on a new thread.
    public func start() {
        let thread = Thread { [self] in follow() }
        thread.name = "geo-cluster change feed"
        thread.start()
    }

    /// Stops following after the current round.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        wake.signal()
    }

    private func follow() {
        var listener: PostgresConnection?
        while !stopped.load(ordering: .acquiring) {
            do {
                if listener == nil || listener?.isClosed == true {
                    let connection = try journal.connect()
                    connection.addListener(channel: PostgresJournal.channel) { [wake] _, _ in wake.signal() }
                    _ = try connection.query(PostgresQuery(unsafeSQL: "LISTEN \(PostgresJournal.channel)"),
                                             logger: logger).wait()
                    listener = connection
                }
                for store in layers {
                    try store.replay(try journal.entries(layer: store.name, after: store.sequence))
                }
                state.withLock { $0 = nil }
            } catch {
                let reason = "the store's change feed is unreachable: \(PostgresJournal.describe(error))"
                let wasReady = state.withLock { previous in
                    defer { previous = reason }
                    return previous == nil
                }
                if wasReady { logger.warning("\(reason); not ready until caught up") }
                try? listener?.close().wait()
                listener = nil
            }
            let nanoseconds = pollInterval.components.seconds * 1_000_000_000
                + pollInterval.components.attoseconds / 1_000_000_000
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
        }
        try? listener?.close().wait()
    }
}
