import NIOCore
import Synchronization

/// Lets at most `limit` callers compute at once; the others wait without holding a
/// thread.
///
/// Handlers run on Swift's cooperative thread pool, which has one thread per core. A
/// batch of whole-world lines computes for as long as it has lines, so two such batches
/// on a 2-core machine would hold every thread, and `/healthz` or a small viewport would
/// wait behind them. The batch route enters the gate around the computing of each chunk
/// of its answer and leaves it before writing the chunk, so a client that reads slowly
/// holds no permit, and with a limit below the core count a thread stays free for the
/// light requests.
final class ComputeGate: Sendable {
    let limit: Int

    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Permits for the batch route: one less than the cores, and at least one.
    static var defaultLimit: Int { max(1, System.coreCount - 1) }

    init(limit: Int) {
        precondition(limit >= 1, "a gate needs at least one permit")
        self.limit = limit
    }

    /// Waits for a permit; every `enter` is paired with one `leave`.
    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                if state.running < limit {
                    state.running += 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    /// Hands the permit to the longest waiting caller, or returns it.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
