import Foundation
import Synchronization
import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

/// A write through ``Engine/perform(_:)`` waits for its store without holding one of
/// Swift concurrency's threads: with more writes stuck in the store than the pool has
/// threads, other requests are still answered.
struct JournalWaitTests {
    /// A journal whose commits wait until released, like a store that is slow to fsync.
    final class StalledJournal: LayerJournal {
        var location: String { "stalled" }
        private let state = Mutex((entered: 0, sequence: Int64(0), waiter: CheckedContinuation<Void, Never>?.none))
        private let released = DispatchSemaphore(value: 0)

        var entered: Int { state.withLock { $0.entered } }

        /// Returns once a commit has entered the journal. Resumed by the commit itself, not
        /// polled: a polling task goes to the back of a busy pool's queue at every turn.
        func firstCommit() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.entered > 0 { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }

        /// Lets every commit, waiting or to come, go through.
        func release() {
            for _ in 0..<1_000 { released.signal() }
        }

        func loadLayer(_ name: String) throws(EngineError) -> StoredLayer? { nil }
        func seedLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64? { 0 }
        func replaceLayer(_ name: String, kind: LayerKind, records: some Collection<StoredRecord>) throws(EngineError) -> Int64 { 0 }
        func entries(layer: String, after sequence: Int64) throws(EngineError) -> [JournalEntry] { [] }

        func commit(layer: String, appliedSequence: Int64,
                    prepare: ([JournalEntry]) throws(EngineError) -> [LayerChange]) throws(EngineError) -> Int64 {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.entered += 1
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
            released.wait()
            _ = try prepare([])
            return state.withLock { state in
                state.sequence += 1
                return state.sequence
            }
        }
    }

    final class DeadlineFlag: Sendable {
        let value = Atomic(false)
    }

    @Test func writesWaitingForTheStoreLeaveThreadsForOtherRequests() async throws {
        let journal = StalledJournal()
        let layer = try LiveLayer(name: "places", kind: .places, records: [])
        let engine = try Engine(entries: [.live(LiveLayerStore(layer, journal: journal, sequence: 0))])
        let writers = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let answered = DispatchSemaphore(value: 0)
        let deadlineFlag = DeadlineFlag()
        // A plain thread releases the journal once the other request is answered, or after
        // a deadline, so that a build whose writes hold the threads fails instead of hanging.
        Thread {
            // Generous: in a full test run the pool's threads are shared with every other
            // test, and the writers and this test wait their turn behind them.
            if answered.wait(timeout: .now() + 600) == .timedOut { deadlineFlag.value.store(true, ordering: .relaxed) }
            journal.release()
        }.start()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<writers {
                group.addTask {
                    let record: JSONValue = ["id": .string("p\(i)"), "lon": 127, "lat": 37.5, "name": "A", "category": "cafe"]
                    _ = try await engine.perform(.write(layer: "places", batch: .insert(records: [record])))
                }
            }
            // The first write is in the store and the others queue behind it.
            await journal.firstCommit()
            #expect(journal.entered == 1)
            let stats = try await engine.perform(.stats(layer: "places"))
            #expect(stats["count"] == 0)
            answered.signal()
            try await group.waitForAll()
        }
        let releasedByDeadline = deadlineFlag.value.load(ordering: .relaxed)
        #expect(!releasedByDeadline)
        #expect(journal.entered == writers)
        #expect(try engine.liveLayer(named: "places").count == writers)
    }
}
