import GeoClusterTestSupport
import Testing
@testable import GeoCluster

/// The live index against a brute-force model: after random interleavings of inserts,
/// moves and deletes, every zoom's clusters, counts, positions, aggregates, children and
/// leaves equal what a plain scan of the model's points gives.
struct LiveClusterIndexTests {
    static let options = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 9, bucketSize: 4)

    /// The model: a plain dictionary of the points that should be in the index. It groups
    /// one grid of the world and does not merge items across block edges (step 5), so the
    /// points of ``randomPoint(_:)`` are such that no pair merges there (a change to how
    /// they are drawn can break that); `LiveClusterViewTests` checks those merges.
    struct Model {
        var points: [Int: LivePoint] = [:]

        func passing(_ filter: LiveFilter) -> [(slot: Int, point: LivePoint)] {
            points.filter { slot, point in
                if let partitions = filter.partitions, !partitions.contains(point.partition) { return false }
                return filter.passes(LeafEntry(point, slot: UInt32(slot)))
            }.map { ($0.key, $0.value) }.sorted { $0.slot < $1.slot }
        }

        /// The grid of one zoom computed by scanning every point.
        func grid(zoom: Int, filter: LiveFilter, index: LiveClusterIndex) -> LiveClusterIndex.Grid {
            let grid = index.options.grid
            var contributions: [LiveClusterIndex.Contribution] = []
            for (slot, point) in passing(filter) {
                let entry = LeafEntry(point, slot: UInt32(slot))
                var aggregate = NodeAggregate()
                aggregate.add(entry)
                contributions.append(.init(x: grid.cell(entry.qx, zoom: zoom), y: grid.cell(entry.qy, zoom: zoom),
                                           partition: point.partition, aggregate: aggregate, slot: entry.slot))
            }
            return index.fold(contributions)
        }

        /// Slots of the passing points inside some cells of a zoom's grid.
        func slots(zoom: Int, cells: [(x: UInt32, y: UInt32)], filter: LiveFilter, grid: LiveGrid) -> Set<Int> {
            Set(passing(filter).filter { slot, point in
                let entry = LeafEntry(point, slot: UInt32(slot))
                let cx = grid.cell(entry.qx, zoom: zoom), cy = grid.cell(entry.qy, zoom: zoom)
                return cells.contains { $0.x == cx && $0.y == cy }
            }.map(\.slot))
        }
    }

    static func randomPoint(_ random: inout SeededRandom) -> LivePoint {
        let spot = random.unit()
        let coordinate: Coordinate
        if spot < 0.1 {
            coordinate = Coordinate(longitude: 126.9707, latitude: 37.5547) // many on one spot
        } else if spot < 0.2 {
            coordinate = Coordinate(longitude: random.between(-180, 180), latitude: random.between(-85, 85))
        } else {
            coordinate = Coordinate(longitude: random.between(126.5, 127.5), latitude: random.between(37, 38))
        }
        let day = Int32(19_000 + Int(random.next() % 800))
        return LivePoint(coordinate: coordinate, partition: Int(random.next() % 5), weight: 1 + Int(random.next() % 20),
                         time: Int64(day) * 86_400 + Int64(random.next() % 86_400),
                         timeTag: UInt8(truncatingIfNeeded: day &* 31), day: day,
                         month: 1 + Int(random.next() % 12))
    }

    static let filters: [LiveFilter] = [
        .all,
        LiveFilter(partitions: [1, 3]),
        LiveFilter(days: 19_200...19_500),
        LiveFilter(partitions: [0], months: 1 << 11 | 1 << 12 | 1 << 1),
        LiveFilter(predicate: { $0 % 3 != 0 }),
    ]

    /// Checks every zoom of the world against the model under one filter.
    static func checkAgainstModel(_ index: LiveClusterIndex, _ model: Model, filter: LiveFilter) throws {
        #expect(index.count(filter: filter) == model.passing(filter).count)
        for zoom in options.minZoom...options.maxZoom {
            let grid = model.grid(zoom: zoom, filter: filter, index: index)
            let groups = index.group(grid, zoom: zoom)
            let answer = try index.clusters(in: .world, zoom: Double(zoom), filter: filter)
            var expectedClusters: [Int: (count: Int, x: Double, y: Double, summary: SummaryValue)] = [:]
            var expectedPoints = Set<Int>()
            for group in groups {
                var members: [(x: UInt32, y: UInt32)] = []
                index.forEachCell(of: group, in: grid) { members.append((x: grid.cells[$0].x, y: grid.cells[$0].y)) }
                if group.aggregate.count >= options.minPoints {
                    let first = grid.cells[group.first]
                    let id = index.clusterID(zoom: zoom, x: first.x, y: first.y, mask: group.mask)
                    expectedClusters[id] = (group.aggregate.count, group.aggregate.x, group.aggregate.y,
                                            index.summaryValue(group, grid: grid))
                } else {
                    expectedPoints.formUnion(model.slots(zoom: zoom, cells: members, filter: filter, grid: options.grid))
                }
            }
            var seenClusters = 0
            var seenPoints = Set<Int>()
            var total = 0
            for feature in answer.features {
                total += feature.pointCount
                switch feature.kind {
                case let .point(slot):
                    seenPoints.insert(slot)
                    #expect(feature.coordinate == model.points[slot].map { LeafEntry($0, slot: 0).coordinate })
                case let .cluster(id, count):
                    seenClusters += 1
                    let expected = try #require(expectedClusters[id], "zoom \(zoom): unexpected cluster \(id)")
                    #expect(count == expected.count)
                    #expect(abs(WebMercator.x(longitude: feature.coordinate.longitude) - expected.x) < 1e-9)
                    #expect(abs(WebMercator.y(latitude: feature.coordinate.latitude) - expected.y) < 1e-9)
                    #expect(answer.summaryValue(feature.aggregateIndex!) == expected.summary)
                    if let latest = expected.summary.latestSlot, let point = model.points[latest] {
                        #expect(expected.summary.latestTime == point.time && expected.summary.latestTimeTag == point.timeTag)
                    } else {
                        #expect(expected.summary.latestSlot == nil && expected.summary.latestTime == .min)
                    }
                }
            }
            #expect(seenClusters == expectedClusters.count, "zoom \(zoom)")
            #expect(seenPoints == expectedPoints, "zoom \(zoom)")
            #expect(total == model.passing(filter).count, "zoom \(zoom): every point once")

            // Each cluster: leaves are exactly its cells' points, children add up.
            for feature in answer.features.prefix(8) {
                guard case let .cluster(id, count) = feature.kind else { continue }
                let address = try index.decode(id)
                let expectedLeaves = model.slots(zoom: address.zoom, cells: address.members, filter: filter, grid: options.grid)
                var leaves = Set<Int>()
                var offset = 0
                while true {
                    let page = try index.leaves(of: id, limit: 7, offset: offset, filter: filter)
                    #expect(page.total == count)
                    if page.pointIndices.isEmpty { break }
                    leaves.formUnion(page.pointIndices)
                    offset += page.pointIndices.count
                }
                #expect(offset == count)
                #expect(leaves == expectedLeaves)
                let children = try index.children(of: id, filter: filter)
                #expect(children.features.reduce(0) { $0 + $1.pointCount } == count)
                let expansion = try index.expansionZoom(of: id, filter: filter)
                #expect(expansion > zoom && expansion <= options.maxZoom + 1)
            }
        }
        // Above maxZoom every passing point stands alone.
        let top = try index.clusters(in: .world, zoom: Double(options.maxZoom + 1), filter: filter)
        #expect(Set(top.features.compactMap(\.pointIndex)) == Set(model.passing(filter).map(\.slot)))
    }

    /// Seeds 1 and 2 with a tree per partition, seed 3 with the combined tree only.
    @Test(arguments: [UInt64(1), 2, 3])
    func randomChangesMatchTheModel(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var index = try LiveClusterIndex(options: Self.options, partitioned: seed != 3)
        var model = Model()
        var free: [Int] = []
        for step in 1...600 {
            let action = random.unit()
            if action < 0.6 || model.points.isEmpty {
                let slot = free.popLast() ?? index.slotCount
                let point = Self.randomPoint(&random)
                try index.insert(point, slot: slot)
                model.points[slot] = point
            } else if action < 0.8 {
                let slot = model.points.keys.sorted()[Int(random.next() % UInt64(model.points.count))]
                var point = Self.randomPoint(&random)
                if random.unit() < 0.5 { point.coordinate = model.points[slot]!.coordinate } // change, not move
                try index.update(point, slot: slot)
                model.points[slot] = point
            } else {
                let slot = model.points.keys.sorted()[Int(random.next() % UInt64(model.points.count))]
                #expect(index.remove(slot: slot) == model.points[slot].map { LeafEntry($0, slot: 0).point })
                model.points[slot] = nil
                free.append(slot)
            }
            if step % 150 == 0 {
                let consistent = index._checkInvariants()
                #expect(consistent, "quadtree invariants after step \(step)")
                #expect(index.count == model.points.count)
                let entries = model.points.map { LeafEntry($0.value, slot: UInt32($0.key)) }
                let expectedBounds = [WebMercator.longitude(x: LeafEntry.unquantize(entries.map(\.qx).min()!)),
                                      WebMercator.latitude(y: LeafEntry.unquantize(entries.map(\.qy).max()!)),
                                      WebMercator.longitude(x: LeafEntry.unquantize(entries.map(\.qx).max()!)),
                                      WebMercator.latitude(y: LeafEntry.unquantize(entries.map(\.qy).min()!))]
                #expect(index.bounds == expectedBounds)
                for filter in Self.filters {
                    try Self.checkAgainstModel(index, model, filter: filter)
                }
            }
        }
    }

    /// A point's time tag lives in bytes that padded the tree's entries and totals: the
    /// sizes that a layer of millions of points keeps per point and per kept cell.
    @Test func theTimeTagTakesNoRoom() {
        #expect(MemoryLayout<LeafEntry>.stride == 32)
        #expect(MemoryLayout<NodeAggregate>.stride == 48)
        #expect(MemoryLayout<LiveClusterIndex.GridCell>.stride == 72)
    }

    /// Leaves keep a point's quantised position, not its coordinate: the coordinate they
    /// give back (in a point's feature, `point(at:)`) is within 7 mm of the one given,
    /// everywhere in Web Mercator's square, the same in every view, and beyond ±85.05° on
    /// the square's edge.
    @Test func aPointsCoordinateIsKeptWithinSevenMillimetres() throws {
        var random = SeededRandom(seed: 5)
        var points = [
            Coordinate(longitude: -180, latitude: 0), Coordinate(longitude: 180, latitude: 0),
            Coordinate(longitude: 179.999_999_9, latitude: WebMercator.maxLatitude),
            Coordinate(longitude: 0, latitude: -WebMercator.maxLatitude), Coordinate(longitude: 0, latitude: 0),
            Coordinate(longitude: 126.978_0, latitude: 37.566_5), Coordinate(longitude: -0.000_000_01, latitude: 1e-9),
        ]
        for _ in 0..<2_000 {
            points.append(Coordinate(longitude: random.between(-180, 180), latitude: random.between(-85, 85)))
        }
        let index = try LiveClusterIndex(points: points.map { LivePoint(coordinate: $0) }, options: Self.options)
        var worst = 0.0
        for (slot, given) in points.enumerated() {
            let kept = try #require(index.point(at: slot)?.coordinate)
            worst = max(worst, GreatCircle.haversineMeters(from: given, to: kept))
        }
        #expect(worst < 0.007, "\(worst) m")
        let top = Double(Self.options.maxZoom + 1)
        let world = try index.clusters(in: .world, zoom: top)
        let seoul = try index.clusters(in: BoundingBox(west: 126.9, south: 37.5, east: 127.1, north: 37.6), zoom: top)
        for feature in world.features + seoul.features {
            let slot = try #require(feature.pointIndex)
            #expect(feature.coordinate == index.point(at: slot)?.coordinate)
        }
        #expect(seoul.features.contains { $0.pointIndex == 5 })
        var polar = try LiveClusterIndex(options: Self.options)
        try polar.insert(LivePoint(coordinate: Coordinate(longitude: 10, latitude: 89.5)), slot: 0)
        #expect(abs((polar.point(at: 0)?.coordinate.latitude ?? 0) - WebMercator.maxLatitude) < 1e-6)
    }

    /// The points in a box are decided on quantised positions, so one given on an edge is
    /// in; one in an edge's quantisation step but outside (a tenth of a millimetre beyond
    /// the edge, or beyond ±85.05° when the box reaches Web Mercator's edge) is decided by
    /// the caller's coordinate when given, and listed when not.
    @Test func pointsOnAndJustBeyondABoxsEdgesAreDecidedByTheGivenCoordinates() throws {
        let given = [
            Coordinate(longitude: 127, latitude: 37.5), Coordinate(longitude: 127 - 1e-9, latitude: 37.52),
            Coordinate(longitude: 127.05, latitude: 37.6 + 1e-9), Coordinate(longitude: 126.999, latitude: 37.52),
            Coordinate(longitude: 127.05, latitude: 89), Coordinate(longitude: 127.05, latitude: 37.55),
        ]
        #expect(LeafEntry.quantize(WebMercator.x(longitude: 127)) == LeafEntry.quantize(WebMercator.x(longitude: 127 - 1e-9)))
        #expect(LeafEntry.quantize(WebMercator.y(latitude: 37.6)) == LeafEntry.quantize(WebMercator.y(latitude: 37.6 + 1e-9)))
        let index = try LiveClusterIndex(points: given.map { LivePoint(coordinate: $0) }, options: Self.options)
        let box = try BoundingBox(west: 127, south: 37.5, east: 127.1, north: 37.6)
        #expect(Set(index.points(in: box, coordinateOfSlot: { given[$0] })) == [0, 5])
        #expect(Set(index.points(in: box)) == [0, 1, 2, 5])
        let polar = try BoundingBox(west: 127, south: 37.5, east: 127.1, north: 86)
        #expect(Set(index.points(in: polar, coordinateOfSlot: { given[$0] })) == [0, 2, 5])
        #expect(Set(index.points(in: polar)) == [0, 1, 2, 4, 5])
        let pole = try BoundingBox(west: 127, south: 37.5, east: 127.1, north: 90)
        #expect(Set(index.points(in: pole, coordinateOfSlot: { given[$0] })) == [0, 2, 4, 5])
        // Across the antimeridian, within a step of the whole world: its two parts meet in
        // one step, whose points are listed once.
        let world = try BoundingBox(west: 127, south: 37.5, east: 127 - 1e-10, north: 37.6)
        #expect(world.spans.count == 2)
        #expect(index.points(in: world).sorted() == [0, 1, 2, 3, 5])
        #expect(index.points(in: world, coordinateOfSlot: { given[$0] }).sorted() == [0, 1, 3, 5])
    }

    @Test func aPartitionTotalTakesSixteenBytesAndKeepsItsValues() {
        #expect(MemoryLayout<PartitionTotal>.stride == 16)
        var total = PartitionTotal(partition: LiveClusterIndex.maxPartitions - 1, count: 4_000_000_000, weight: 1 << 40)
        #expect(total.partition == 65_535 && total.count == 4_000_000_000 && total.weight == 1 << 40)
        total.add(PartitionTotal(partition: 0, count: 294_967_295, weight: 1))
        #expect(total.count == Int(UInt32.max) && total.weight == 1 << 40 + 1)
        total.add(total)
        #expect(total.count == Int(UInt32.max), "a count past 2^32 stays at the largest rather than wrapping")
    }

    /// A summary is a plain value: its counts lie in its answer, so that copying it
    /// retains nothing and kept groups hold one array of counts, not one per cluster.
    @Test func aSummaryIsFortyBytesAndKeepsItsValues() {
        #expect(MemoryLayout<LiveSummary>.stride == 40)
        #expect(_isPOD(LiveSummary.self))
        let summary = LiveSummary(weight: 1 << 40, latestSlot: Int(UInt32.max) - 1, latestTime: -5, latestTimeTag: 255,
                                  partitionRange: 7..<10, partitionTotal: LiveClusterIndex.maxPartitions)
        #expect(summary.weight == 1 << 40 && summary.latestSlot == Int(UInt32.max) - 1)
        #expect(summary.latestTime == -5 && summary.latestTimeTag == 255)
        #expect(summary.partitionRange == 7..<10 && summary.partitionTotal == LiveClusterIndex.maxPartitions)
        let moved = summary.moved(to: 100)
        #expect(moved.partitionRange == 100..<103 && moved.weight == summary.weight && moved.latestSlot == summary.latestSlot)
        let none = LiveSummary(weight: 0, latestSlot: nil, latestTime: .min, latestTimeTag: 0,
                               partitionRange: 0..<0, partitionTotal: 0)
        #expect(none.latestSlot == nil && none.partitionRange.isEmpty)
    }

    /// Items keep their features in 32 bytes and give back the feature they were given.
    @Test func aKeptFeatureIsThirtyTwoBytesAndGivesBackItsFeature() {
        #expect(MemoryLayout<LiveClusterIndex.KeptFeature>.stride == 32)
        let place = Coordinate(longitude: 126.97, latitude: 37.55)
        let features = [
            ClusterFeature(kind: .point(index: 0), coordinate: place),
            ClusterFeature(kind: .point(index: Int(UInt32.max) - 1), coordinate: place, aggregateIndex: 3),
            ClusterFeature(kind: .cluster(id: Int.max, pointCount: 2), coordinate: place, aggregateIndex: 0),
            ClusterFeature(kind: .cluster(id: -5, pointCount: Int(UInt32.max)), coordinate: place),
            ClusterFeature(kind: .cluster(id: 7, pointCount: 1), coordinate: place, aggregateIndex: Int(Int32.max)),
        ]
        for feature in features {
            let kept = LiveClusterIndex.KeptFeature(feature)
            #expect(kept.feature == feature)
            #expect(kept.pointCount == feature.pointCount && kept.clusterID == feature.clusterID)
            var moved = kept
            moved.aggregateIndex = 12
            #expect(moved.feature.aggregateIndex == 12 && moved.kind == feature.kind)
            moved.aggregateIndex = nil
            #expect(moved.aggregateIndex == nil)
        }
    }

    /// Keeping the first `k` counts and the `k` of largest weight (ties to the earlier)
    /// in place, after counts of other summaries, as a fresh selection would.
    @Test func theLargestCountsAreKeptInPlace() {
        var random = SeededRandom(seed: 33)
        for trial in 0..<300 {
            let k = 1 + Int(random.next() % 4)
            let before = (0..<Int(random.next() % 5)).map { PartitionTotal(partition: 1_000 + $0, count: 1, weight: 1) }
            var sorted = (0..<Int(random.next() % 14)).map {
                PartitionTotal(partition: $0, count: 1 + Int(random.next() % 5), weight: Int(random.next() % 6))
            }
            sorted.sort { $0.count != $1.count ? $0.count > $1.count : $0.partition < $1.partition }
            // The selection written plainly: the first k, then the k heaviest (stable) not among them, in order.
            let heaviest = sorted.indices.sorted { (sorted[$0].weight, -$0) > (sorted[$1].weight, -$1) }.prefix(k)
            let expected = sorted.count <= k ? sorted
                : Array(sorted.prefix(k)) + heaviest.sorted().filter { $0 >= k }.map { sorted[$0] }
            var counts = before + sorted
            if sorted.count > k { LiveClusterIndex.keepLargest(&counts, from: before.count, k) }
            #expect(Array(counts.prefix(before.count)) == before, "trial \(trial)")
            #expect(Array(counts.dropFirst(before.count)) == expected, "trial \(trial), k \(k)")
        }
    }

    @Test func removingEverythingLeavesAnEmptyIndex() throws {
        var random = SeededRandom(seed: 9)
        var index = try LiveClusterIndex(options: Self.options, partitioned: true)
        for slot in 0..<300 { try index.insert(Self.randomPoint(&random), slot: slot) }
        for slot in (0..<300).reversed() { index.remove(slot: slot) }
        #expect(index.count == 0)
        let consistent = index._checkInvariants()
        #expect(consistent)
        #expect(index.bounds == nil)
        #expect(try index.clusters(in: .world, zoom: 3).features.isEmpty)
    }

    @Test func aSnapshotIsUnchangedByLaterWrites() throws {
        var random = SeededRandom(seed: 4)
        var index = try LiveClusterIndex(options: Self.options, partitioned: true)
        for slot in 0..<200 { try index.insert(Self.randomPoint(&random), slot: slot) }
        let snapshot = index
        let before = try snapshot.clusters(in: .world, zoom: 5).features
        for slot in 0..<100 { index.remove(slot: slot) }
        for slot in 0..<100 { try index.insert(Self.randomPoint(&random), slot: slot) }
        #expect(try snapshot.clusters(in: .world, zoom: 5).features == before)
        let consistent = snapshot._checkInvariants() && index._checkInvariants()
        #expect(consistent)
    }

    @Test func unrelatedChangesKeepClusterIDs() throws {
        var index = try LiveClusterIndex(options: Self.options)
        var random = SeededRandom(seed: 5)
        for slot in 0..<100 {
            try index.insert(LivePoint(coordinate: Coordinate(longitude: random.between(126.9, 127.0),
                                                              latitude: random.between(37.5, 37.6))), slot: slot)
        }
        let before = try index.clusters(in: .world, zoom: 6).features.compactMap(\.clusterID)
        // Far away: Busan.
        for slot in 100..<150 {
            try index.insert(LivePoint(coordinate: Coordinate(longitude: 129.04, latitude: 35.11)), slot: slot)
        }
        let after = try index.clusters(in: .world, zoom: 6).features.compactMap(\.clusterID)
        #expect(!before.isEmpty)
        #expect(Set(before).isSubset(of: Set(after)))
    }

    @Test func badInputIsRejectedAndChangesNothing() throws {
        var index = try LiveClusterIndex(options: Self.options)
        try index.insert(LivePoint(coordinate: Coordinate(longitude: 10, latitude: 10)), slot: 0)
        #expect(throws: GeoClusterError.self) {
            try index.insert(LivePoint(coordinate: Coordinate(longitude: 500, latitude: 10)), slot: 1)
        }
        #expect(throws: GeoClusterError.self) {
            try index.insert(LivePoint(coordinate: Coordinate(longitude: 1, latitude: 1)), slot: 0)
        }
        #expect(throws: GeoClusterError.self) {
            try index.update(LivePoint(coordinate: Coordinate(longitude: .nan, latitude: 1)), slot: 0)
        }
        #expect(index.count == 1)
        let kept = try #require(index.point(at: 0)?.coordinate)
        #expect(GreatCircle.haversineMeters(from: kept, to: Coordinate(longitude: 10, latitude: 10)) < 0.005)
        #expect(throws: GeoClusterError.unknownCluster(id: 12345)) { try index.children(of: 12345) }
        #expect(throws: GeoClusterError.self) { try LiveClusterIndex(options: .init(radiusPixels: 0)) }
        #expect(throws: GeoClusterError.self) { try LiveClusterIndex(options: .init(maxZoom: 30)) }
    }

    /// 20,000 points in 20 Gaussian hotspots over Korea with 10% background.
    static func hotspotPoints() -> [Coordinate] {
        var random = SeededRandom(seed: 11)
        var coordinates: [Coordinate] = []
        let hotspots = (0..<20).map { _ in (random.between(126.3, 129.2), random.between(34.3, 38.2), random.between(0.01, 0.15)) }
        for _ in 0..<20_000 {
            if random.unit() < 0.1 {
                coordinates.append(Coordinate(longitude: random.between(126, 129.5), latitude: random.between(34, 38.5)))
            } else {
                let h = hotspots[Int(random.next() % 20)]
                // Box-Muller from two uniforms.
                let u = max(1e-12, random.unit()), v = random.unit()
                let r = (-2 * CMath.log(u)).squareRoot()
                coordinates.append(Coordinate(longitude: h.0 + r * CMath.cos(2 * .pi * v) * h.2,
                                              latitude: h.1 + r * CMath.sin(2 * .pi * v) * h.2))
            }
        }
        return coordinates
    }

    /// Crowding counts both features of a pair closer than half the radius in pixels, and
    /// leaves out positions that do not project instead of trapping on them.
    @Test func crowdingCountsCloseFeaturesAndSkipsUnprojectablePositions() {
        // At zoom 10, extent 512: 2^19 pixels around the world, so 0.01 degrees of
        // longitude is about 14.6 pixels and 0.1 degrees about 146.
        let points = [Coordinate(longitude: 127, latitude: 37.5), Coordinate(longitude: 127.01, latitude: 37.5),
                      Coordinate(longitude: 127.1, latitude: 37.5), Coordinate(longitude: .nan, latitude: 37.5),
                      Coordinate(longitude: 127, latitude: 90), Coordinate(longitude: 127, latitude: -90)]
        #expect(DisplayCrowding.crowded(points, zoom: 10, radius: 40, extent: 512) == [0, 1])
        #expect(DisplayCrowding.crowded(points, zoom: 10, radius: 20, extent: 512).isEmpty)
    }

    /// The live map looks like supercluster's at every radius: on the same points and
    /// options, the live algorithm shows within 15% as many features as the radius
    /// algorithm at every zoom 0-16 where the latter shows at least 50 (below that, one
    /// cluster more or less is more than 2%), and at most 0.02% of its features over all
    /// zooms (at most 0.1% at any zoom with 1,000 features or more) are drawn closer than
    /// half the radius to another.
    @Test(arguments: [40.0, 60.0, 80.0])
    func liveMapFollowsTheRadius(radius: Double) throws {
        let coordinates = Self.hotspotPoints()
        let live = try LiveClusterIndex(points: coordinates.map { LivePoint(coordinate: $0) },
                                        options: .init(radiusPixels: radius, extent: 512, maxZoom: 16))
        let reference = try RadiusClusterIndex(coordinates: coordinates,
                                               options: .init(radiusPixels: radius, extent: 512, maxZoom: 16))
        var features = 0, crowded = 0
        var report: [String] = []
        var ratiosHold = true, zoomsCrowdHold = true
        for zoom in 0...16 {
            let ours = try live.clusters(in: .world, zoom: Double(zoom)).features.map(\.coordinate)
            let theirs = try reference.clusters(in: .world, zoom: Double(zoom)).map(\.coordinate)
            let close = DisplayCrowding.crowded(ours, zoom: zoom, radius: radius, extent: 512).count
            let ratio = Double(ours.count) / Double(theirs.count)
            report.append("z\(zoom) \(ours.count)/\(theirs.count) crowded \(close)")
            if theirs.count >= 50, abs(ratio - 1) > 0.15 { ratiosHold = false }
            if ours.count >= 1_000, Double(close) > 0.001 * Double(ours.count) { zoomsCrowdHold = false }
            features += ours.count
            crowded += close
        }
        print("radius \(radius): " + report.joined(separator: ", "))
        #expect(ratiosHold, "radius \(radius): \(report)")
        #expect(zoomsCrowdHold, "radius \(radius): \(report)")
        #expect(Double(crowded) <= 0.0002 * Double(features), "radius \(radius): \(crowded) of \(features) crowded")
    }
}

// MARK: - Bulk build

/// An index built in one go from points answers every query exactly as one built by
/// inserting the same points slot after slot, and keeps doing so through later changes.
extension LiveClusterIndexTests {
    /// The same points inserted one by one, slot after slot.
    static func inserted(_ points: [LivePoint], options: LiveClusterOptions = options,
                         partitioned: Bool) throws -> LiveClusterIndex {
        var index = try LiveClusterIndex(options: options, partitioned: partitioned)
        for (slot, point) in points.enumerated() { try index.insert(point, slot: slot) }
        return index
    }

    /// Random points as ``randomPoint(_:)`` makes them, with the world's edges and corners,
    /// points without a time and a partition above a gap mixed in.
    static func bulkPoints(_ count: Int, seed: UInt64) -> [LivePoint] {
        var random = SeededRandom(seed: seed)
        let edges = [(-180.0, 0.0), (180, 0), (0, 90), (0, -90), (-180, 90), (180, -90), (180, 90), (-180, -90),
                     (0, 85.0511), (0, -85.0511), (0, 0), (179.9999, 85), (-179.9999, -85)]
        return (0..<count).map { _ in
            var point = randomPoint(&random)
            let dice = random.unit()
            if dice < 0.1 {
                let edge = edges[Int(random.next() % UInt64(edges.count))]
                point.coordinate = Coordinate(longitude: edge.0, latitude: edge.1)
            } else if dice < 0.15 {
                point.time = .min
            } else if dice < 0.2 {
                point.partition = 7
            }
            return point
        }
    }

    static let bulkFilters: [LiveFilter] = filters + [LiveFilter(partitions: [7, 2]), LiveFilter(partitions: [6])]

    /// Every query of `a` answers as the same query of `b`.
    static func expectSameAnswers(_ a: LiveClusterIndex, _ b: LiveClusterIndex) throws {
        let consistent = a._checkInvariants() && b._checkInvariants()
        #expect(consistent)
        #expect(a.count == b.count)
        #expect(a.slotCount == b.slotCount)
        #expect(a.bounds == b.bounds)
        let boxes = [BoundingBox.world, try BoundingBox(west: 126.6, south: 37.2, east: 127.3, north: 37.9),
                     try BoundingBox(west: 170, south: -60, east: -170, north: 60)]
        let seoul = Coordinate(longitude: 126.9707, latitude: 37.5547)
        for filter in bulkFilters {
            #expect(a.count(filter: filter) == b.count(filter: filter))
            for zoom in options.minZoom...options.maxZoom + 1 {
                for (i, box) in boxes.enumerated() {
                    let x = try a.clusters(in: box, zoom: Double(zoom), filter: filter)
                    let y = try b.clusters(in: box, zoom: Double(zoom), filter: filter)
                    #expect(x.features == y.features, "zoom \(zoom), box \(i)")
                    #expect(x.summaryValues == y.summaryValues, "zoom \(zoom), box \(i)")
                    guard i == 0 else { continue }
                    for id in x.features.compactMap(\.clusterID) {
                        let cx = try a.children(of: id, filter: filter), cy = try b.children(of: id, filter: filter)
                        #expect(cx.features == cy.features && cx.summaryValues == cy.summaryValues, "children of \(id)")
                        #expect(try a.expansionZoom(of: id, filter: filter) == b.expansionZoom(of: id, filter: filter))
                        for (limit, offset) in [(3, 0), (3, 2), (1, 5), (10_000, 0)] {
                            #expect(try a.leaves(of: id, limit: limit, offset: offset, filter: filter)
                                    == b.leaves(of: id, limit: limit, offset: offset, filter: filter),
                                    "leaves of \(id), \(limit) from \(offset)")
                        }
                    }
                }
                let tiles = [seoul, Coordinate(longitude: 0, latitude: 0), Coordinate(longitude: 180, latitude: -85)].map {
                    (x: Int(WebMercator.x(longitude: $0.longitude) * Double(1 << zoom) * 0.999_999),
                     y: Int(WebMercator.y(latitude: $0.latitude) * Double(1 << zoom) * 0.999_999))
                }
                for tile in tiles {
                    let address = try TileAddress(z: zoom, x: tile.x, y: tile.y)
                    let x = try a.tile(address, filter: filter), y = try b.tile(address, filter: filter)
                    #expect(x.features == y.features, "tile \(address)")
                    #expect(x.summaries.map { SummaryValue($0, countsIn: x.partitionCounts) }
                            == y.summaries.map { SummaryValue($0, countsIn: y.partitionCounts) }, "tile \(address)")
                }
            }
            for center in [seoul, Coordinate(longitude: 180, latitude: 0), Coordinate(longitude: 0, latitude: 90)] {
                #expect(a.points(within: 30_000, of: center, filter: filter)
                        == b.points(within: 30_000, of: center, filter: filter))
                #expect(a.nearest(7, to: center, filter: filter) == b.nearest(7, to: center, filter: filter))
            }
            var inA: [Int] = [], inB: [Int] = []
            a.forEachPoint(inProjectedRectangle: 0, 0, 1, 1, filter: filter) { slot, _ in inA.append(slot) }
            b.forEachPoint(inProjectedRectangle: 0, 0, 1, 1, filter: filter) { slot, _ in inB.append(slot) }
            #expect(inA == inB)
        }
    }

    @Test(arguments: [0, 1, 4, 5, 17, 300, 2_000])
    func aBulkBuildAnswersAsInsertsDo(count: Int) throws {
        for partitioned in [false, true] {
            let points = Self.bulkPoints(count, seed: UInt64(count) + 11)
            try Self.expectSameAnswers(try LiveClusterIndex(points: points, options: Self.options, partitioned: partitioned),
                                       try Self.inserted(points, partitioned: partitioned))
        }
    }

    @Test func aBulkBuildOfOneSpotAnswersAsInsertsDo() throws {
        var random = SeededRandom(seed: 5)
        // Many points on one spot, alone and next to a few others.
        let spot = (0..<50).map { _ in
            var point = Self.randomPoint(&random)
            point.coordinate = Coordinate(longitude: -73.9857, latitude: 40.7484)
            return point
        }
        for points in [spot, spot + Self.bulkPoints(6, seed: 6), Self.bulkPoints(6, seed: 7) + spot] {
            for partitioned in [false, true] {
                try Self.expectSameAnswers(try LiveClusterIndex(points: points, options: Self.options, partitioned: partitioned),
                                           try Self.inserted(points, partitioned: partitioned))
            }
        }
    }

    @Test func spanQuotientsAreExact() {
        // The grid's cells are 1 to 16 quadtree cells wide; every 32-bit position's cell
        // is its quotient by the span.
        var random = SeededRandom(seed: 40)
        for span in UInt32(1)...16 {
            let divider = LiveClusterIndex.SpanDivider(span)
            var values: [UInt32] = [0, 1, span - 1, span, span + 1, UInt32.max, UInt32.max - 1, 1 << 31, (1 << 31) - 1]
            for k in UInt32(1)...64 { values += [k * span - 1, k * span, UInt32.max / span * span &- k] }
            for _ in 0..<20_000 { values.append(UInt32(truncatingIfNeeded: random.next())) }
            for n in values where divider.quotient(n) != n / span {
                Issue.record("\(n) / \(span): \(divider.quotient(n)), expected \(n / span)")
                break
            }
        }
    }

    @Test func aBulkBuildWithLargerBucketsAnswersAsInsertsDo() throws {
        let options = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 9, bucketSize: 16)
        let points = Self.bulkPoints(1_500, seed: 21)
        try Self.expectSameAnswers(try LiveClusterIndex(points: points, options: options, partitioned: true),
                                   try Self.inserted(points, options: options, partitioned: true))
    }

    @Test func theBucketSizeChangesOnlyTheOrderOfPoints() throws {
        // Leaves of 64 points (the default) and of 4 straddle the grid's cells differently:
        // the totals, groups, ids and aggregates are the same, and each answer holds the
        // same points; only points of one cell may come in another order (quadtree order).
        let points = Self.bulkPoints(600, seed: 22)
        for partitioned in [false, true] {
            let large = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 9)
            #expect(large.bucketSize == 64)
            let a = try LiveClusterIndex(points: points, options: large, partitioned: partitioned)
            let b = try Self.inserted(points, partitioned: partitioned)
            #expect(a._checkInvariants() && b._checkInvariants())
            // An answer's features with their aggregates, in one order.
            func canonical(_ answer: LiveAnswer) -> [String] {
                answer.features.map { feature in
                    var plain = feature
                    plain.aggregateIndex = nil
                    return "\(plain) \(feature.aggregateIndex.map { String(describing: answer.summaryValue($0)) } ?? "")"
                }.sorted()
            }
            let seoul = try BoundingBox(west: 126.6, south: 37.2, east: 127.3, north: 37.9)
            for filter in Self.bulkFilters {
                for zoom in large.minZoom...large.maxZoom + 1 {
                    for box in [BoundingBox.world, seoul] {
                        let x = try a.clusters(in: box, zoom: Double(zoom), filter: filter)
                        let y = try b.clusters(in: box, zoom: Double(zoom), filter: filter)
                        #expect(canonical(x) == canonical(y), "zoom \(zoom), \(box)")
                    }
                    for id in try a.clusters(in: .world, zoom: Double(zoom), filter: filter).features.compactMap(\.clusterID) {
                        #expect(canonical(try a.children(of: id, filter: filter))
                                == canonical(try b.children(of: id, filter: filter)), "children of \(id)")
                        #expect(try a.expansionZoom(of: id, filter: filter) == b.expansionZoom(of: id, filter: filter))
                        let all = try a.leaves(of: id, limit: 10_000, offset: 0, filter: filter)
                        let other = try b.leaves(of: id, limit: 10_000, offset: 0, filter: filter)
                        #expect(all.total == other.total && all.pointIndices.sorted() == other.pointIndices.sorted(),
                                "leaves of \(id)")
                    }
                }
                let centre = Coordinate(longitude: 126.9707, latitude: 37.5547)
                #expect(a.points(within: 30_000, of: centre, filter: filter).map(\.slot).sorted()
                        == b.points(within: 30_000, of: centre, filter: filter).map(\.slot).sorted())
            }
        }
    }

    @Test(arguments: [UInt64(1), 2])
    func aBulkBuiltIndexKeepsAnsweringAsInsertsDoThroughChanges(seed: UInt64) throws {
        let points = Self.bulkPoints(800, seed: seed + 30)
        let partitioned = seed == 1
        var bulk = try LiveClusterIndex(points: points, options: Self.options, partitioned: partitioned)
        var inserted = try Self.inserted(points, partitioned: partitioned)
        var random = SeededRandom(seed: seed)
        // More points first, then removes and inserts into freed and new slots.
        for _ in 0..<200 {
            let point = Self.bulkPoints(1, seed: random.next())[0]
            try bulk.insert(point, slot: bulk.slotCount)
            try inserted.insert(point, slot: inserted.slotCount)
        }
        try Self.expectSameAnswers(bulk, inserted)
        var free: [Int] = []
        for _ in 0..<600 {
            if random.unit() < 0.6 {
                let slot = Int(random.next() % UInt64(bulk.slotCount))
                #expect(bulk.remove(slot: slot) == inserted.remove(slot: slot))
                if bulk.point(at: slot) == nil, !free.contains(slot) { free.append(slot) }
            } else {
                let point = Self.bulkPoints(1, seed: random.next())[0]
                let slot = free.popLast() ?? bulk.slotCount
                try bulk.insert(point, slot: slot)
                try inserted.insert(point, slot: slot)
            }
        }
        try Self.expectSameAnswers(bulk, inserted)
    }

    /// The index keeps, by slot, only where each point is; reading a point back finds it
    /// in the trees. Through a load, inserts, moves and removals, with many points on
    /// one spot (one leaf, told apart by slot), every slot reads back the point given,
    /// field for field, or `nil` when free.
    @Test(arguments: [false, true])
    func everySlotReadsBackItsPointThroughChanges(partitioned: Bool) throws {
        var random = SeededRandom(seed: partitioned ? 11 : 12)
        var points = Self.bulkPoints(500, seed: 40)
        let spot = Coordinate(longitude: 126.9707, latitude: 37.5547)
        for k in stride(from: 0, to: points.count, by: 5) { points[k].coordinate = spot }
        var index = try LiveClusterIndex(points: points, options: Self.options, partitioned: partitioned)
        var model = Dictionary(uniqueKeysWithValues: points.enumerated().map { ($0.offset, $0.element) })
        func expectModel() {
            for slot in -1...index.slotCount {
                let expected = model[slot].map { LeafEntry($0, slot: 0).point }
                #expect(index.point(at: slot) == expected, "slot \(slot)")
            }
            #expect(index._checkInvariants())
        }
        expectModel()
        for _ in 0..<1_500 {
            let slot = Int(random.next() % UInt64(index.slotCount + 1))
            var point = Self.bulkPoints(1, seed: random.next())[0]
            if random.unit() < 0.3 { point.coordinate = spot }
            switch random.next() % 3 {
            case 0:
                #expect(index.remove(slot: slot) == model.removeValue(forKey: slot).map { LeafEntry($0, slot: 0).point })
            case 1:
                if model[slot] == nil {
                    try index.insert(point, slot: slot)
                    model[slot] = point
                }
            default:
                if model[slot] != nil {
                    try index.update(point, slot: slot)
                    model[slot] = point
                }
            }
        }
        expectModel()
        #expect(model.count == index.count && model.count > 100)
    }

    /// Summaries limited to `k` partitions per ranking keep what the top `k` by count and
    /// by weight need: the same clusters, the same total of partitions, and the same top
    /// `k` by either ranking (ties to the earlier by count) as the full summaries, listed
    /// in their order. Many partitions per cluster, with repeated counts and weights, so
    /// that the two rankings differ and ties occur.
    @Test func summariesLimitedPerRankingAnswerTheTopOnesAsFullOnesDo() throws {
        var random = SeededRandom(seed: 21)
        let points = (0..<3_000).map { _ in
            var point = Self.randomPoint(&random)
            point.partition = Int(random.next() % 40)
            point.weight = 1 + Int(random.next() % 4) * Int(random.next() % 4)
            return point
        }
        let full = try LiveClusterIndex(points: points, options: Self.options, partitioned: true)
        let limited = try LiveClusterIndex(points: points, options: Self.options, partitioned: true,
                                           partitionsPerSummary: 3)
        /// The `k` largest weights, ties to the earlier, as the sightings layer ranks them.
        func byWeight(_ totals: [PartitionTotal], _ k: Int) -> [PartitionTotal] {
            Array(totals.enumerated().sorted { ($0.element.weight, -$0.offset) > ($1.element.weight, -$1.offset) }
                .prefix(k).map(\.element))
        }
        var compared = 0, shortened = 0
        for zoom in 0...Self.options.maxZoom {
            let a = try full.clusters(in: .world, zoom: Double(zoom))
            let b = try limited.clusters(in: .world, zoom: Double(zoom))
            #expect(a.features == b.features, "zoom \(zoom)")
            for (x, y) in zip(a.features, b.features) {
                guard let i = x.aggregateIndex, let j = y.aggregateIndex else { continue }
                let all = a.summaryValue(i).partitionCounts, kept = b.summaryValue(j).partitionCounts
                #expect(b.summaries[j].partitionTotal == all.count && a.summaries[i].partitionTotal == all.count)
                #expect(kept.count <= 6 && kept.count >= min(3, all.count))
                #expect(Array(kept.prefix(3)) == Array(all.prefix(3)))
                #expect(byWeight(kept, 3) == byWeight(all, 3))
                #expect(kept.allSatisfy { item in all.contains(item) })
                #expect(kept == all.filter { kept.contains($0) }, "in the full summary's order")
                #expect(b.summaries[j].weight == a.summaries[i].weight)
                compared += 1
                if kept.count < all.count { shortened += 1 }
            }
        }
        #expect(compared > 100 && shortened > 50)
        #expect(throws: GeoClusterError.self) { try LiveClusterIndex(partitionsPerSummary: 0) }
    }

    @Test func aBulkBuildRejectsTheFirstBadPointAsInsertsDo() throws {
        let good = Self.bulkPoints(10, seed: 3)
        var badCoordinate = good, badPartition = good, both = good
        badCoordinate[4].coordinate = Coordinate(longitude: .nan, latitude: 0)
        badPartition[6].partition = LiveClusterIndex.maxPartitions
        both[7].coordinate = Coordinate(longitude: 0, latitude: 91)
        both[3].partition = -1
        for points in [badCoordinate, badPartition, both] {
            for partitioned in [false, true] {
                let inserting = #expect(throws: GeoClusterError.self) { try Self.inserted(points, partitioned: partitioned) }
                let building = #expect(throws: GeoClusterError.self) {
                    try LiveClusterIndex(points: points, options: Self.options, partitioned: partitioned)
                }
                // By description: a NaN in the error never equals itself.
                #expect(building != nil && building.map { "\($0)" } == inserting.map { "\($0)" })
            }
        }
        #expect(throws: GeoClusterError.self) {
            try LiveClusterIndex(points: good, options: .init(radiusPixels: 0))
        }
    }
}
