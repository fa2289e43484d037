import GeoClusterEngine
import Synchronization

/// Answers of the query routes kept for the next request that asks the same of the same
/// data: a map app asks for the same views and tiles again and again (panning back, other
/// users on the same city, tiles at the same version), and such a request is answered
/// without computing, hashing or compressing the answer again.
///
/// A key is the request target as sent (path and query) and the `Accept-Language` where
/// the route takes a language; each answer is kept with the versions of the layers it
/// reads (``Engine/answerStamp(for:)``) and given only while they are still the layers'
/// versions (``Engine/isCurrent(_:)``): a write makes a new version, so no answer of an
/// older version is given for a newer one, and the next answer for the key replaces it.
/// Answers that depend on anything else (the clock in `reachable`, the caller in
/// `GET …/points/{id}`) are not kept. The stamp is taken before the answer is computed,
/// so an answer is never filed under a version older than the data it was computed from.
///
/// A kept answer is found from the key alone, before the request is read: a map asking
/// again with `If-None-Match` gets its 304 for the cost of a lookup.
///
/// Memory is bounded by ``budgetBytes``: entries live in two generations; when the newer
/// fills half the budget, the older is dropped and the newer takes its place. A hit in
/// the older one moves the entry back to the newer, so what is asked for stays (an
/// approximation of least-recently-used without a list to maintain).
final class AnswerCache: Sendable {
    let budgetBytes: Int
    private let state = Mutex(State())
    private struct Entry {
        let stamp: AnswerStamp
        let answer: PreparedAnswer
    }
    private struct State {
        var newer: [String: Entry] = [:]
        var older: [String: Entry] = [:]
        var newerBytes = 0
        var hits = 0
        var misses = 0
    }

    /// The default budget: room for thousands of viewport answers (tens of KB each).
    static let defaultBudgetBytes = 64 << 20

    init(budgetBytes: Int) {
        self.budgetBytes = budgetBytes
    }

    var hits: Int { state.withLock { $0.hits } }
    var misses: Int { state.withLock { $0.misses } }
    /// Bytes the kept answers take, as ``budgetBytes`` counts them (the newer generation;
    /// the older one is at most as large).
    var keptBytes: Int { state.withLock { $0.newerBytes } }

    /// The answer kept for `key`, when `isCurrent` says its stamp still holds. A miss is
    /// not counted here: the caller may look before it knows whether the request is one
    /// whose answers are kept, and counts it with ``countMiss()`` once it does.
    func answer(for key: String, isCurrent: (AnswerStamp) -> Bool) -> PreparedAnswer? {
        state.withLock { state -> PreparedAnswer? in
            if let entry = state.newer[key], isCurrent(entry.stamp) {
                state.hits += 1
                return entry.answer
            }
            guard let entry = state.older[key], isCurrent(entry.stamp) else { return nil }
            state.older[key] = nil
            state.hits += 1
            Self.add(entry, for: key, to: &state, budget: budgetBytes)
            return entry.answer
        }
    }

    /// Counts an answer that could have been kept and was not found.
    func countMiss() {
        state.withLock { $0.misses += 1 }
    }

    /// Keeps `answer`, computed at `stamp`, for `key`, in place of what was kept for it.
    func keep(_ answer: PreparedAnswer, stamp: AnswerStamp, for key: String) {
        // An answer larger than a generation would push everything else out.
        guard Self.cost(answer) <= budgetBytes / 2 else { return }
        state.withLock { Self.add(Entry(stamp: stamp, answer: answer), for: key, to: &$0, budget: budgetBytes) }
    }

    /// Bytes an answer takes: its body, and about a quarter more for its gzip form.
    private static func cost(_ answer: PreparedAnswer) -> Int {
        answer.body.count + answer.body.count / 4 + 200
    }

    private static func add(_ entry: Entry, for key: String, to state: inout State, budget: Int) {
        let bytes = cost(entry.answer) + key.utf8.count
        if state.newerBytes + bytes > budget / 2 {
            state.older = state.newer
            state.newer = [:]
            state.newerBytes = 0
        }
        if let replaced = state.newer.updateValue(entry, forKey: key) {
            state.newerBytes -= cost(replaced.answer) + key.utf8.count
        }
        state.newerBytes += bytes
    }
}
