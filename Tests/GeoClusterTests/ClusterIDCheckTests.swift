import GeoClusterTestSupport
import Testing
@testable import GeoCluster

/// A cluster id is answered only when some answer at the index's current state could
/// have given it: from `clusters` at its zoom, or as a child of such a cluster, and so
/// on down. Every other id (made up, or a real one with bits flipped) is
/// `unknown_cluster` for children, leaves and expansion zoom alike.
struct ClusterIDCheckTests {
    /// Bits of an id worth flipping: the neighbour mask, low and high bits of both cell
    /// coordinates, and the zoom.
    static let flippedBits = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 18, 28, 29, 38, 48, 49, 52]

    // MARK: Live

    static let liveOptions = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 16, bucketSize: 8)

    static func liveIndex(seed: UInt64, count: Int) throws -> LiveClusterIndex {
        var random = SeededRandom(seed: seed)
        var index = try LiveClusterIndex(options: liveOptions, partitioned: true)
        for slot in 0..<count {
            try index.insert(LiveClusterIndexTests.randomPoint(&random), slot: slot)
        }
        return index
    }

    /// Every cluster id that `clusters` (the world, at each zoom) and `children` (of each
    /// of those, recursively) answer under `filter`.
    static func answeredIDs(_ index: LiveClusterIndex, filter: LiveFilter) throws -> Set<Int> {
        var ids = Set<Int>()
        var pending: [Int] = []
        for zoom in liveOptions.minZoom...liveOptions.maxZoom {
            for id in try index.clusters(in: .world, zoom: Double(zoom), filter: filter).features.compactMap(\.clusterID)
            where ids.insert(id).inserted {
                pending.append(id)
            }
        }
        while let id = pending.popLast() {
            for child in try index.children(of: id, filter: filter).features.compactMap(\.clusterID)
            where ids.insert(child).inserted {
                pending.append(child)
            }
        }
        return ids
    }

    static func expectUnknown(_ index: LiveClusterIndex, _ id: Int, filter: LiveFilter,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: GeoClusterError.unknownCluster(id: id), "children of \(id)", sourceLocation: sourceLocation) {
            try index.children(of: id, filter: filter)
        }
        #expect(throws: GeoClusterError.unknownCluster(id: id), "leaves of \(id)", sourceLocation: sourceLocation) {
            try index.leaves(of: id, filter: filter)
        }
        #expect(throws: GeoClusterError.unknownCluster(id: id), "expansion zoom of \(id)", sourceLocation: sourceLocation) {
            try index.expansionZoom(of: id, filter: filter)
        }
    }

    /// Unfiltered, by partition, and by a test of each point.
    static let filters = [LiveFilter.all, LiveFilter(partitions: [1, 3]), LiveFilter(predicate: { $0 % 3 != 0 })]

    @Test(arguments: filters.indices)
    func liveIDsAreCheckedAgainstWhatAnswersGive(filterIndex: Int) throws {
        let filter = Self.filters[filterIndex]
        let index = try Self.liveIndex(seed: 5, count: 3_000)
        let answered = try Self.answeredIDs(index, filter: filter)
        #expect(answered.count > 200)
        var flippedUnknown = 0
        // About 20 of them, spread over every zoom.
        let step = max(1, answered.count / 20)
        for (n, id) in answered.sorted().enumerated() where n % step == 0 {
            let page = try index.leaves(of: id, limit: 1, filter: filter)
            #expect(page.total >= Self.liveOptions.minPoints)
            #expect(try index.expansionZoom(of: id, filter: filter) > id >> 48)
            for bit in Self.flippedBits {
                let flipped = id ^ (1 << bit)
                guard !answered.contains(flipped) else { continue }
                Self.expectUnknown(index, flipped, filter: filter)
                flippedUnknown += 1
            }
        }
        #expect(flippedUnknown > 150)
        // Made up: zoom 16, cell (0, 0), which holds no point.
        Self.expectUnknown(index, 4_503_599_627_370_496, filter: filter)
    }

    @Test func liveChildrenOnlyIDsAreAnswered() throws {
        let index = try Self.liveIndex(seed: 9, count: 3_000)
        let answered = try Self.answeredIDs(index, filter: .all)
        var atTheirZoom = Set<Int>()
        for zoom in Self.liveOptions.minZoom...Self.liveOptions.maxZoom {
            atTheirZoom.formUnion(try index.clusters(in: .world, zoom: Double(zoom)).features.compactMap(\.clusterID))
        }
        let childrenOnly = answered.subtracting(atTheirZoom)
        // Children are formed from their parent's cells only, so some differ from the
        // block's groups; each of them is still a cluster to every op.
        #expect(!childrenOnly.isEmpty)
        for id in childrenOnly {
            #expect(try index.children(of: id).features.reduce(0) { $0 + $1.pointCount }
                    == index.leaves(of: id, limit: 0).total)
        }
    }

    @Test func anIDFromAnOlderStateAnswersWhileItsClusterStillForms() throws {
        var index = try Self.liveIndex(seed: 11, count: 2_000)
        let zoom = 8
        let clusters = try index.clusters(in: .world, zoom: Double(zoom)).features.filter { $0.clusterID != nil }
        let cluster = try #require(clusters.max { $0.pointCount < $1.pointCount })
        let id = try #require(cluster.clusterID)
        // A point far away changes nothing here.
        try index.insert(LivePoint(coordinate: Coordinate(longitude: -70, latitude: -40), partition: 0, weight: 1,
                                   time: 0, day: 0, month: 1), slot: 2_000)
        #expect(try index.leaves(of: id, limit: 0).total == cluster.pointCount)
        // Its points gone, the cluster is gone: every op says so.
        let leaves = try index.leaves(of: id, limit: Int.max).pointIndices
        for slot in leaves { _ = index.remove(slot: slot) }
        Self.expectUnknown(index, id, filter: .all)
    }

    // MARK: Radius

    @Test func radiusIDsAreCheckedAgainstWhatAnswersGive() throws {
        var random = SeededRandom(seed: 17)
        let coordinates = (0..<3_000).map { _ in
            Coordinate(longitude: random.between(126, 128), latitude: random.between(36, 38))
        }
        let index = try RadiusClusterIndex(coordinates: coordinates)
        let world = BoundingBox.world
        var answered = Set<Int>()
        for zoom in 0...17 {
            answered.formUnion(try index.clusters(in: world, zoom: Double(zoom)).compactMap(\.clusterID))
        }
        #expect(answered.count > 500)
        var flippedUnknown = 0
        for id in answered {
            for bit in Self.flippedBits + [10, 11, 12] {
                let flipped = id ^ (1 << bit)
                guard !answered.contains(flipped) else { continue }
                #expect(throws: GeoClusterError.unknownCluster(id: flipped)) { try index.children(of: flipped) }
                #expect(throws: GeoClusterError.unknownCluster(id: flipped)) { try index.leaves(of: flipped) }
                #expect(throws: GeoClusterError.unknownCluster(id: flipped)) { try index.expansionZoom(of: flipped) }
                flippedUnknown += 1
            }
        }
        #expect(flippedUnknown > 5_000)
    }
}
