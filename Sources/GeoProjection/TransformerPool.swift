import Synchronization

/// Converts coordinates from any number of threads at once, lending each call a
/// `CoordinateTransformer` of its own.
///
/// A transformer owns a PROJ context, which must never be used by two threads at once, and
/// the first transform between a pair of CRSs costs PROJ about 15 ms. The pool keeps idle
/// transformers keyed by the CRS pair they were prepared for: a call checks one out (or
/// creates and prepares one when none is idle), converts, and hands it back. So concurrent
/// calls never share a context, and a stream of requests between the same CRSs pays PROJ's
/// set-up once per call that ran at the same time as others, not once per request.
///
/// Idle transformers are bounded: at most `maxIdlePerPair` for one pair (as many as calls
/// that ran at once; extra ones are dropped when they come back) and `maxIdle` in all, the
/// least recently returned dropped first. A transformer is never kept when preparing its
/// pair failed, so unknown CRSs cannot fill the pool.
public final class TransformerPool: Sendable {
    /// The most idle transformers kept over all pairs.
    public let maxIdle: Int
    /// The most idle transformers kept for one CRS pair.
    public let maxIdlePerPair: Int

    public static let defaultMaxIdle = 32
    public static let defaultMaxIdlePerPair = 8

    /// An idle transformer, already prepared for `source` -> `target`.
    private struct Idle {
        let source: CRS
        let target: CRS
        let transformer: CoordinateTransformer
    }

    private struct State {
        /// Least recently returned first. At most `maxIdle` entries, so a linear scan costs
        /// less than a single PROJ call.
        var idle: [Idle] = []
        /// Transformers created over the pool's life, for tests and metrics.
        var created = 0
    }

    private let state = Mutex(State())

    public init(maxIdle: Int = defaultMaxIdle, maxIdlePerPair: Int = defaultMaxIdlePerPair) {
        precondition(maxIdle >= 0 && maxIdlePerPair >= 0, "pool bounds must not be negative")
        self.maxIdle = maxIdle
        self.maxIdlePerPair = maxIdlePerPair
    }

    /// Converts every point of `points` from `source` to `target`, all or nothing, with the
    /// errors and validation of `CoordinateTransformer.transform(_:from:to:)`.
    public func transform(_ points: inout [CRSPoint], from source: CRS, to target: CRS) throws(ProjectionError) {
        let transformer = try checkOut(from: source, to: target)
        do {
            try transformer.transform(&points, from: source, to: target)
        } catch {
            // The pair is prepared and a failed point leaves no state behind, so the
            // transformer is still good.
            checkIn(transformer, from: source, to: target)
            throw error
        }
        checkIn(transformer, from: source, to: target)
    }

    /// Idle transformers over all pairs.
    public var idleCount: Int { state.withLock { $0.idle.count } }

    /// Transformers created so far, each of which paid PROJ's set-up for its pair.
    public var createdCount: Int { state.withLock { $0.created } }

    // MARK: - Lending

    /// An idle transformer for the pair, or a new one prepared for it. The pool keeps no
    /// reference to what it hands out.
    private func checkOut(from source: CRS, to target: CRS) throws(ProjectionError) -> sending CoordinateTransformer {
        let reused = state.withLock { state -> sending CoordinateTransformer? in
            guard let i = state.idle.lastIndex(where: { $0.source == source && $0.target == target }) else {
                return nil
            }
            return state.idle.remove(at: i).transformer
        }
        if let reused {
            return reused
        }
        // Created outside the lock: preparing takes PROJ milliseconds, and other pairs'
        // calls must not wait for it.
        let transformer = try CoordinateTransformer()
        state.withLock { $0.created += 1 }
        try transformer.prepare(from: source, to: target)
        return transformer
    }

    /// Takes back a transformer prepared for the pair; drops it, or the least recently
    /// returned one, when a bound is reached.
    private func checkIn(_ transformer: sending CoordinateTransformer, from source: CRS, to target: CRS) {
        let handoff = Handoff(transformer: transformer)
        state.withLock { state in
            let samePair = state.idle.reduce(0) { $0 + ($1.source == source && $1.target == target ? 1 : 0) }
            guard samePair < maxIdlePerPair, maxIdle > 0 else { return }
            if state.idle.count >= maxIdle {
                state.idle.removeFirst()
            }
            state.idle.append(Idle(source: source, target: target, transformer: handoff.transformer))
        }
    }

    /// Carries a transformer into the lock's closure. `checkIn` takes its transformer as
    /// `sending`, so the compiler has already checked that the caller keeps no reference;
    /// it cannot yet see that moving a captured value into the `Mutex` is safe, so this one
    /// wrapper vouches for that step alone.
    private struct Handoff: @unchecked Sendable {
        let transformer: CoordinateTransformer
    }
}
