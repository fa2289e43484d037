import Synchronization

/// Answers of the query routes kept for the next request that asks the same of the same
/// data: a map app asks for the same views and tiles again and again (panning back, other
/// users on the same city, tiles at the same version), and such a request is answered
/// without computing, hashing or compressing the answer again.
///
/// A key holds the route's path and query, the `Accept-Language` where the route takes a
/// language, and the versions of the layers the answer reads (``Engine/answerStamp(for:)``):
/// a write makes a new version, so no answer of an older version is given for a newer
/// one; answers that depend on anything else (the clock in `reachable`, the caller in
/// `GET …/points/{id}`) are not kept. The stamp is taken before the answer is computed,
/// so an answer is never filed under a version older than the data it was computed from.
///
/// Memory is bounded by ``budgetBytes``: entries live in two generations; when the newer
/// fills half the budget, the older is dropped and the newer takes its place. A hit in
/// the older one moves the entry back to the newer, so what is asked for stays (an
/// approximation of least-recently-used without a list to maintain).
final class AnswerCache: Sendable {
    let budgetBytes: Int
    private let state = Mutex(State())
    private struct State {
        var newer: [String: PreparedAnswer] = [:]
        var older: [String: PreparedAnswer] = [:]
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

    func answer(for key: String) -> PreparedAnswer? {
        state.withLock { state -> PreparedAnswer? in
            if let answer = state.newer[key] {
                state.hits += 1
                return answer
            }
            guard let answer = state.older.removeValue(forKey: key) else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            Self.add(answer, for: key, to: &state, budget: budgetBytes)
            return answer
        }
    }

    func keep(_ answer: PreparedAnswer, for key: String) {
        // An answer larger than a generation would push everything else out.
        guard Self.cost(answer) <= budgetBytes / 2 else { return }
        state.withLock { Self.add(answer, for: key, to: &$0, budget: budgetBytes) }
    }

    /// Bytes an answer takes: its body, and about a quarter more for its gzip form.
    private static func cost(_ answer: PreparedAnswer) -> Int {
        answer.body.count + answer.body.count / 4 + 200
    }

    private static func add(_ answer: PreparedAnswer, for key: String, to state: inout State, budget: Int) {
        if state.newerBytes + cost(answer) > budget / 2 {
            state.older = state.newer
            state.newer = [:]
            state.newerBytes = 0
        }
        if state.newer.updateValue(answer, forKey: key) == nil { state.newerBytes += cost(answer) + key.utf8.count }
    }
}
