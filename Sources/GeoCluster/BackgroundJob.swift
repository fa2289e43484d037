// The index builds use a second core when there is one: the kd-sort of a level sorts its
// two halves at once, and the radius build computes neighbour lists ahead of its greedy
// pass; a live query's first look shares the blocks it forms. Dispatch's global pool
// provides the thread; Synchronization the handshake.
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Work offered to another thread, which the offering thread can take back, stop or wait
/// for. A job that no pool thread has started when its result is needed is run by the
/// thread that needs it (``complete()``) or dropped (``cancel()``), so a build never
/// waits on a busy pool and on one core runs as it would without the job.
final class BackgroundJob: Sendable {
    /// Whether a second core is there to share the work with.
    static let hasSecondCore = sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1

    private static let offered = 0
    private static let running = 1
    private static let ended = 2

    private let state = Atomic<Int>(BackgroundJob.offered)
    private let stopRequested = Atomic<Bool>(false)
    /// The work, until it is claimed or dropped: the pool's queued call holds the job
    /// until a pool thread takes it, which on a busy pool may be long after the offering
    /// thread ran or dropped the work, and should not hold what the work captured.
    private let body: Mutex<(@Sendable (BackgroundJob) -> Void)?>

    /// Offers `body` to the global pool. It receives the job, to poll ``isStopRequested``.
    init(_ body: @escaping @Sendable (BackgroundJob) -> Void) {
        self.body = Mutex(body)
        DispatchQueue.global().async { [self] in _ = runIfUnclaimed() }
    }

    /// Set by ``cancel()``: a running body should return soon after it reads `true`.
    var isStopRequested: Bool { stopRequested.load(ordering: .relaxed) }

    /// Returns once the body has run, running it on this thread if no other has started
    /// it. Everything the body wrote is visible to the caller afterwards.
    func complete() {
        if !runIfUnclaimed() { waitUntilEnded() }
    }

    /// Withdraws the job if it has not started, or asks it to stop and waits until it
    /// has. If the body ran, everything it wrote is visible to the caller afterwards.
    func cancel() {
        if state.compareExchange(expected: Self.offered, desired: Self.ended, ordering: .acquiring).exchanged {
            body.withLock { $0 = nil }
            return
        }
        stopRequested.store(true, ordering: .relaxed)
        waitUntilEnded()
    }

    private func runIfUnclaimed() -> Bool {
        guard state.compareExchange(expected: Self.offered, desired: Self.running, ordering: .acquiring).exchanged
        else { return false }
        let work = body.withLock { body in
            defer { body = nil }
            return body
        }
        work?(self)
        state.store(Self.ended, ordering: .releasing)
        return true
    }

    /// Spins, yielding the core: the jobs are short or stop within one step of their loop.
    private func waitUntilEnded() {
        while state.load(ordering: .acquiring) != Self.ended { sched_yield() }
    }
}
