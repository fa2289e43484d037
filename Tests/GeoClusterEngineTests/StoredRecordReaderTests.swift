import Dispatch
import Foundation
import Synchronization
import Testing
@testable import GeoClusterEngine

/// The reader that validates a store's rows while the rest are read: the thread that
/// needs the records validates what no job has started, so the records come whether the
/// pool runs the jobs early, late or not at all, in store order, with the first bad
/// record in store order as the error.
struct StoredRecordReaderTests {
    /// Jobs held back until a test runs them, as a pool with no free thread would.
    final class HeldJobs: Sendable {
        private let jobs = Mutex<[@Sendable () -> Void]>([])

        func schedule(_ job: @escaping @Sendable () -> Void) { jobs.withLock { $0.append(job) } }

        var count: Int { jobs.withLock { $0.count } }

        /// Runs the job scheduled `index`-th (each job validates whatever batch waits first).
        func run(_ index: Int) { jobs.withLock { $0[index] }() }

        func runAll() { for index in 0 ..< count { run(index) } }
    }

    static func stored(_ range: Range<Int>, badCounts: Set<Int> = []) -> [StoredRecord] {
        range.map { i in
            let count = badCounts.contains(i) ? "0" : "\(1 + i % 5)"
            let text = #"{"type":"Feature","id":"s\#(i)","geometry":{"type":"Point","coordinates":[\#(126 + Double(i) / 100),37.5]},"properties":{"species":"Grus japonensis","count":\#(count),"observed_at":"2024-01-02T08:00:00+09:00"}}"#
            return StoredRecord(idKey: "s\(i)", featureText: Array(text.utf8))
        }
    }

    /// `reader.records()` on another thread, so that a reader that only waits for its
    /// jobs fails the test (after a deadline far beyond the work) instead of hanging it.
    static func records(of reader: StoredRecordReader) -> Result<RecordBatches, EngineError>? {
        let answer = Mutex<Result<RecordBatches, EngineError>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result { () throws(EngineError) in try reader.records() }
            answer.withLock { $0 = result }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + 120) == .success else { return nil }
        return answer.withLock { $0 }
    }

    @Test func theCallerValidatesTheBatchesNoJobHasStarted() throws {
        let jobs = HeldJobs()
        let reader = StoredRecordReader(kind: .sightings, layer: "birds", schedule: jobs.schedule)
        reader.add(Self.stored(0 ..< 300))
        reader.add(Self.stored(300 ..< 301))
        reader.add(Self.stored(301 ..< 700))
        // One job runs before the records are asked for; it takes the first batch.
        jobs.run(2)
        guard let result = Self.records(of: reader) else {
            Issue.record("records() waited for jobs that never ran")
            return
        }
        let records = try result.get()
        #expect(records.map(\.idKey) == (0 ..< 700).map { "s\($0)" })
        #expect(records.map(\.coordinate.longitude) == (0 ..< 700).map { 126 + Double($0) / 100 })
        // The jobs that run late find nothing left to do.
        #expect(jobs.count == 3)
        jobs.runAll()
        #expect(try reader.records().isEmpty)
    }

    @Test func theFirstBadRecordInStoreOrderIsTheError() {
        for early in [nil, 0, 1, 2] as [Int?] {
            let jobs = HeldJobs()
            let reader = StoredRecordReader(kind: .sightings, layer: "birds", schedule: jobs.schedule)
            reader.add(Self.stored(0 ..< 100))
            reader.add(Self.stored(100 ..< 200, badCounts: [150, 199]))
            reader.add(Self.stored(200 ..< 300, badCounts: [200]))
            if let early { jobs.run(early) }
            guard let result = Self.records(of: reader) else {
                Issue.record("records() waited for jobs that never ran")
                return
            }
            guard case let .failure(error) = result else {
                Issue.record("bad records were accepted")
                return
            }
            #expect(error.field == "count" && error.description.contains(#"(id "s150")"#), "\(error)")
        }
    }

    /// The batches read as one collection: positions across batches (empty ones
    /// included), iteration in order, and a layer built from them as from one array,
    /// with a duplicate id in a later batch named by its position among all. Batches of
    /// whole leaves are taken as they are; others are copied into whole leaves.
    @Test(arguments: [[3, 0, 1, 7, 0, 2], [64, 32, 0, 45], [100]])
    func batchesReadAsOneCollection(_ sizes: [Int]) throws {
        let jobs = HeldJobs()
        let reader = StoredRecordReader(kind: .sightings, layer: "birds", schedule: jobs.schedule)
        var start = 0
        for size in sizes {
            reader.add(Self.stored(start ..< start + size))
            start += size
        }
        let batches = try reader.records()
        let flat = try (0 ..< start).map { i in
            try LayerRecord(stored: Self.stored(i ..< i + 1)[0], kind: .sightings, layer: "birds", index: i)
        }
        #expect(batches.count == start && Array(batches) == flat)
        #expect(batches.indices.map { batches[$0] } == flat)
        #expect(batches.leaves.dropLast().allSatisfy { $0.count == 32 } && batches.leaves.last?.isEmpty == false)
        #expect(RecordBatches(batches: []).isEmpty && RecordBatches(batches: [[], [[]]]).isEmpty)

        let layer = try LiveLayer(name: "birds", kind: .sightings, records: batches)
        let whole = try LiveLayer(name: "birds", kind: .sightings, records: flat)
        #expect(layer.count == start)
        for (slot, record) in flat.enumerated() {
            #expect(layer.record(idKey: record.idKey) == whole.record(idKey: record.idKey))
            #expect(layer.record(atSlot: slot) == record)
        }

        let withDuplicate: [LayerRecord] = Array(flat[0 ..< 9]) + [flat[2]] + Array(flat[9...])
        let duplicate = RecordBatches(withDuplicate)
        #expect(duplicate[9] == flat[2] && duplicate[10] == flat[9])
        do {
            _ = try LiveLayer(name: "birds", kind: .sightings, records: duplicate)
            Issue.record("a duplicate id was accepted")
        } catch {
            #expect(error.field == "records[9]" && error.description.contains(#"id "s2""#), "\(error)")
        }
    }

    /// With the global queue (the default), the records and their order are the same.
    @Test func theGlobalQueueGivesTheSameRecords() throws {
        let reader = StoredRecordReader(kind: .sightings, layer: "birds")
        for start in stride(from: 0, to: 5_000, by: 512) { reader.add(Self.stored(start ..< min(start + 512, 5_000))) }
        let records = try reader.records()
        #expect(records.map(\.idKey) == (0 ..< 5_000).map { "s\($0)" })
    }
}
