@testable import GeoCluster

/// A cluster's summary with its counts by partition, compared by value: a
/// ``LiveSummary`` holds only where its counts lie in its answer, which differs between
/// answers that show the same cluster.
struct SummaryValue: Hashable {
    var weight: Int
    var latestSlot: Int?
    var latestTime: Int64
    var latestTimeTag: UInt8
    var partitionCounts: [PartitionTotal]
    var partitionTotal: Int

    init(_ summary: LiveSummary, countsIn counts: [PartitionTotal]) {
        weight = summary.weight
        latestSlot = summary.latestSlot
        latestTime = summary.latestTime
        latestTimeTag = summary.latestTimeTag
        partitionCounts = Array(counts[summary.partitionRange])
        partitionTotal = summary.partitionTotal
    }
}

extension LiveAnswer {
    var summaryValues: [SummaryValue] { summaries.map { SummaryValue($0, countsIn: partitionCounts) } }

    func summaryValue(_ k: Int) -> SummaryValue { SummaryValue(summaries[k], countsIn: partitionCounts) }
}

extension LiveClusterIndex.Items {
    func summaryValue(_ k: Int) -> SummaryValue { SummaryValue(summaries[k], countsIn: partitionCounts) }
}

extension LiveClusterIndex {
    func summaryValue(_ group: Group, grid: Grid) -> SummaryValue {
        var counts: [PartitionTotal] = []
        return SummaryValue(summary(group, grid: grid, countsInto: &counts), countsIn: counts)
    }
}
