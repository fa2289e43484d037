import Foundation
import GeoClusterTestSupport
import Testing
@testable import GeoCluster
@testable import GeoClusterWire

/// Behaviour of the radius algorithm that does not depend on outside fixtures.
struct RadiusClusterIndexTests {
    private static func randomCoordinates(_ count: Int, seed: UInt64,
                                          lon: ClosedRange<Double> = -180...180,
                                          lat: ClosedRange<Double> = -85...85) -> [Coordinate] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in
            Coordinate(longitude: random.between(lon.lowerBound, lon.upperBound),
                       latitude: random.between(lat.lowerBound, lat.upperBound))
        }
    }

    private static let world = BoundingBox.world

    @Test func emptyInputAnswersEmptyEverywhere() throws {
        let index = try RadiusClusterIndex(coordinates: [])
        for zoom in 0...17 {
            #expect(try index.clusters(in: Self.world, zoom: Double(zoom)).isEmpty)
        }
        #expect(try index.tile(TileAddress(z: 0, x: 0, y: 0)).isEmpty)
        #expect(throws: GeoClusterError.unknownCluster(id: 1)) { try index.children(of: 1) }
        #expect(index._checkInvariants())
    }

    @Test func onePointIsReturnedUnchangedAtEveryZoom() throws {
        let seoul = Coordinate(longitude: 126.9707, latitude: 37.5547)
        let index = try RadiusClusterIndex(coordinates: [seoul])
        for zoom in 0...20 {
            let features = try index.clusters(in: Self.world, zoom: Double(zoom))
            #expect(features == [ClusterFeature(kind: .point(index: 0), coordinate: seoul)])
        }
        let tile = try index.tile(TileAddress.containing(seoul, zoom: 12))
        #expect(tile.count == 1)
        #expect(tile.first.map { (0..<512).contains($0.pixelX) && (0..<512).contains($0.pixelY) } == true)
    }

    @Test func tenThousandPointsOnOneSpotFormOneCluster() throws {
        let spot = Coordinate(longitude: 127.0276, latitude: 37.4979)
        let index = try RadiusClusterIndex(coordinates: Array(repeating: spot, count: 10_000))
        #expect(index._checkInvariants())
        for zoom in 0...16 {
            let features = try index.clusters(in: Self.world, zoom: Double(zoom))
            #expect(features.count == 1)
            #expect(features.first?.pointCount == 10_000)
            if let c = features.first?.coordinate {
                #expect(abs(c.longitude - spot.longitude) < 1e-5 && abs(c.latitude - spot.latitude) < 1e-5)
            }
        }
        #expect(try index.clusters(in: Self.world, zoom: 17).count == 10_000)
        let top = try #require(try index.clusters(in: Self.world, zoom: 0).first?.clusterID)
        #expect(try index.expansionZoom(of: top) == 17)
        #expect(ClusterFeature.abbreviatedCount(10_000) == .string("10k"))

        // Paging through all leaves yields every point exactly once.
        var seen = Set<Int>()
        var offset = 0
        while true {
            let page = try index.leaves(of: top, limit: 999, offset: offset)
            #expect(page.total == 10_000)
            if page.pointIndices.isEmpty { break }
            seen.formUnion(page.pointIndices)
            offset += page.pointIndices.count
        }
        #expect(seen == Set(0..<10_000))
    }

    @Test func duplicatePointsSplitOnlyAboveMaxZoom() throws {
        let a = Coordinate(longitude: 10, latitude: 10)
        let b = Coordinate(longitude: -70, latitude: -30)
        let index = try RadiusClusterIndex(coordinates: [a, a, b, a, b])
        let atMax = try index.clusters(in: Self.world, zoom: 16)
        #expect(atMax.map(\.pointCount).sorted() == [2, 3])
        let above = try index.clusters(in: Self.world, zoom: 17)
        #expect(above.compactMap(\.pointIndex).sorted() == [0, 1, 2, 3, 4])
    }

    @Test func antimeridianQueriesEqualTheUnionOfTheirHalves() throws {
        var coordinates = Self.randomCoordinates(3_000, seed: 21, lon: 160...180)
        coordinates += Self.randomCoordinates(3_000, seed: 22, lon: -180 ... -160)
        let index = try RadiusClusterIndex(coordinates: coordinates)
        for zoom in [0.0, 2, 4, 6, 9, 17] {
            let crossing = try index.clusters(in: BoundingBox(west: 170, south: -40, east: -170, north: 40), zoom: zoom)
            let east = try index.clusters(in: BoundingBox(west: 170, south: -40, east: 180, north: 40), zoom: zoom)
            let west = try index.clusters(in: BoundingBox(west: -180, south: -40, east: -170, north: 40), zoom: zoom)
            #expect(crossing == east + west)
            #expect(!crossing.isEmpty)
        }
    }

    /// At `maxZoom + 1` every input point stands alone, so a viewport query must return
    /// exactly the points a brute-force scan finds inside the (wrapped) box.
    @Test func viewportQueriesMatchABruteForceScan() throws {
        var coordinates = Self.randomCoordinates(20_000, seed: 31, lat: -90...90)
        coordinates += Array(repeating: Coordinate(longitude: 179.999, latitude: 89.99), count: 50)
        coordinates += Array(repeating: Coordinate(longitude: -180, latitude: -90), count: 50)
        let index = try RadiusClusterIndex(coordinates: coordinates)
        var random = SeededRandom(seed: 32)
        for _ in 0..<200 {
            let west = random.between(-540, 540)
            let width = random.between(0, 400)
            let south = random.between(-95, 95)
            let box = try BoundingBox(west: west, south: south, east: west + width,
                                      north: min(95, south + random.between(0, 80)))
            let found = try index.clusters(in: box, zoom: 17).compactMap(\.pointIndex)
            var expected: [Int] = []
            for span in box.spans {
                let minX = WebMercator.x(longitude: span.west), maxX = WebMercator.x(longitude: span.east)
                let minY = WebMercator.y(latitude: span.north), maxY = WebMercator.y(latitude: span.south)
                for (i, c) in coordinates.enumerated() {
                    let x = Double(Float(WebMercator.x(longitude: c.longitude)))
                    let y = Double(Float(WebMercator.y(latitude: c.latitude)))
                    if x >= minX && x <= maxX && y >= minY && y <= maxY { expected.append(i) }
                }
            }
            #expect(found.sorted() == expected.sorted())
        }
    }

    @Test func hierarchyIsConsistentAcrossZooms() throws {
        let coordinates = Self.randomCoordinates(20_000, seed: 41, lon: 124...132, lat: 33...39)
        let index = try RadiusClusterIndex(coordinates: coordinates)
        #expect(index._checkInvariants())
        for zoom in 0...17 {
            let features = try index.clusters(in: Self.world, zoom: Double(zoom))
            #expect(features.reduce(0) { $0 + $1.pointCount } == coordinates.count)
            for cluster in features.prefix(25) {
                guard let id = cluster.clusterID else { continue }
                let children = try index.children(of: id)
                #expect(children.reduce(0) { $0 + $1.pointCount } == cluster.pointCount)
                let leaves = try index.leaves(of: id, limit: .max)
                #expect(leaves.total == cluster.pointCount)
                #expect(Set(leaves.pointIndices).count == cluster.pointCount)
                let expansion = try index.expansionZoom(of: id)
                #expect(expansion > zoom && expansion <= 17)
            }
        }
    }


    /// Clusters of the deepest zoom split into input points, which the index keeps in a
    /// compact form; entries without a position keep their numbers.
    @Test func deepestClustersSplitIntoTheirInputPoints() throws {
        let dense = Self.randomCoordinates(6_000, seed: 47, lon: 127.0...127.02, lat: 37.5...37.52)
        let coordinates: [Coordinate?] = dense.enumerated().map { $0.offset % 7 == 3 ? nil : $0.element }
        let index = try RadiusClusterIndex(coordinates: coordinates)
        #expect(index._checkInvariants())
        var seen: [Int] = []
        for feature in try index.clusters(in: Self.world, zoom: 16) {
            guard let id = feature.clusterID else {
                if case let .point(pointIndex) = feature.kind { seen.append(pointIndex) }
                continue
            }
            for child in try index.children(of: id) {
                guard case let .point(pointIndex) = child.kind else {
                    Issue.record("cluster \(id) of zoom 16 has a cluster child")
                    continue
                }
                #expect(child.coordinate == coordinates[pointIndex])
                seen.append(pointIndex)
            }
            #expect(try index.expansionZoom(of: id) == 17)
        }
        let positioned = coordinates.indices.filter { coordinates[$0] != nil }
        #expect(seen.sorted() == positioned)
        #expect(try index.clusters(in: Self.world, zoom: 16).count < positioned.count)
    }
    /// Large levels are clustered with neighbour lists computed ahead on another thread
    /// (and their trees sorted on two); every answer must be the one-thread answer, bit
    /// for bit. Half the points are packed so tightly that the lists outgrow their room.
    @Test func buildsOnOneAndTwoThreadsAgree() throws {
        var coordinates = Self.spreadAndCrowded(spread: 30_000, seed: 59, lon: 126...129.5, lat: 34...38.5,
                                                crowded: 30_000, seed: 83, side: 0.002)
        coordinates[17] = nil
        let one = try RadiusClusterIndex(coordinates: coordinates, usingSecondCore: false)
        let two = try RadiusClusterIndex(coordinates: coordinates, usingSecondCore: true)
        #expect(two._checkInvariants())
        try Self.expectSameAnswers(two, as: one, children: 10, "two threads")
    }

    /// `spread` random points over `lon` x `lat`, then `crowded` more in a square of `side`
    /// degrees from 127 E, 37.5 N.
    private static func spreadAndCrowded(spread: Int, seed: UInt64, lon: ClosedRange<Double>, lat: ClosedRange<Double>,
                                         crowded: Int, seed crowdSeed: UInt64, side: Double) -> [Coordinate?] {
        var random = SeededRandom(seed: crowdSeed)
        return randomCoordinates(spread, seed: seed, lon: lon, lat: lat) + (0..<crowded).map { _ in
            Coordinate(longitude: 127 + random.between(0, side), latitude: 37.5 + random.between(0, side))
        }
    }

    /// Expects `index` to answer the clusters of every zoom as `reference` does, and the
    /// children of the first `children` clusters of each.
    private static func expectSameAnswers(_ index: RadiusClusterIndex, as reference: RadiusClusterIndex,
                                          children: Int, _ label: String) throws {
        for zoom in 0...17 {
            let clusters = try reference.clusters(in: world, zoom: Double(zoom))
            #expect(try index.clusters(in: world, zoom: Double(zoom)) == clusters, "zoom \(zoom), \(label)")
            for cluster in clusters.prefix(children) {
                guard let id = cluster.clusterID else { continue }
                #expect(try index.children(of: id) == reference.children(of: id), "zoom \(zoom), \(label)")
            }
        }
    }

    /// Lone items (whose neighbour query would list no other item) are copied by the
    /// greedy pass without the query; with or without looking for them, on one thread or
    /// two, every answer is the same, bit for bit. Spread points make most items lone at
    /// the deep zooms, tight ones crowd them, and some lie about the radius apart.
    @Test func buildsWithAndWithoutLoneItemsAgree() throws {
        var coordinates = Self.spreadAndCrowded(spread: 20_000, seed: 31, lon: 120...135, lat: 30...42,
                                                crowded: 8_000, seed: 29, side: 0.01)
        // Rows of points about one zoom-16 radius apart (40 px of 512 is 0.000687 degrees
        // of longitude there).
        var random = SeededRandom(seed: 37)
        for i in 0..<2_000 {
            coordinates.append(Coordinate(longitude: 126 + Double(i) * 0.000687 * random.between(0.98, 1.02),
                                          latitude: 35 + Double(i % 7) * 0.000687))
        }
        let without = try RadiusClusterIndex(coordinates: coordinates, usingSecondCore: false, findingLoneItems: false)
        let one = try RadiusClusterIndex(coordinates: coordinates, usingSecondCore: false)
        let two = try RadiusClusterIndex(coordinates: coordinates, usingSecondCore: true)
        try Self.expectSameAnswers(one, as: without, children: 20, "lone items")
        try Self.expectSameAnswers(two, as: without, children: 20, "lone items, two threads")
    }

    /// An item called lone has no other item that its neighbour query lists, even where
    /// the kd-tree's `Float` positions bring items just over the radius apart within it
    /// (the grid's cells must leave room for that rounding, and the few candidates of
    /// a cell are tested with the query's own arithmetic); and on spread points most
    /// items are found lone.
    @Test func loneItemsHaveNoOtherItemWithinTheRadius() {
        var random = SeededRandom(seed: 7)
        let radius16 = 40.0 / (512 * 65_536)
        var sets: [(name: String, x: [Double], y: [Double], radius: Double)] = []
        // Spread over a square of 0.02 (about 6,000 radii of zoom 16 across).
        let spreadX = (0..<10_000).map { _ in 0.4 + random.between(0, 0.02) }
        let spreadY = (0..<10_000).map { _ in 0.3 + random.between(0, 0.02) }
        sets.append(("spread", spreadX, spreadY, radius16))
        // Pairs of points a little over the radius apart (by up to 4e-8, of the order of a
        // Float's spacing there), along x or y, far from other pairs: given as doubles,
        // which the tree rounds while queries start from the doubles, some are listed by
        // each other's query and some not. The radius is not a whole number of Float
        // spacings (40 px of 512 at zoom 16 is 20 of them between 0.5 and 1: this one is
        // 20.75, so that rounded positions a quarter spacing over it lie within it from a
        // query a little above the rounded one).
        let oddRadius = radius16 * 1.0375
        var pairsX: [Double] = [], pairsY: [Double] = []
        for pair in 0..<20_000 {
            let x = 0.5 + Double(pair % 200) * 0.0002 + random.between(0, 0.00002)
            let y = 0.6 + Double(pair / 200) * 0.0002 + random.between(0, 0.00002)
            let apart = oddRadius + random.between(0, 4e-8)
            pairsX += [x, pair % 2 == 0 ? x + apart : x]
            pairsY += [y, pair % 2 == 0 ? y : y + apart]
        }
        sets.append(("pairs", pairsX, pairsY, oddRadius))
        // Crowded and spread together, at a larger radius.
        let mixedX = spreadX.prefix(5_000) + (0..<5_000).map { _ in 0.41 + random.between(0, 0.0005) }
        let mixedY = spreadY.prefix(5_000) + (0..<5_000).map { _ in 0.31 + random.between(0, 0.0005) }
        sets.append(("mixed", Array(mixedX), Array(mixedY), radius16 * 16))
        var lone = LoneItems()
        for set in sets {
            let found = lone.find(x: set.x, y: set.y, radius: set.radius)
            #expect(lone.alone.count == set.x.count)
            #expect(lone.alone.filter { $0 != 0 }.count == found, "\(set.name)")
            let tree = KDTree(x: set.x, y: set.y, nodeSize: 64)
            var wrong = 0
            for i in set.x.indices where lone.alone[i] != 0 {
                let listed = tree.within(x: set.x[i], y: set.y[i], radius: set.radius)
                if listed.contains(where: { Int($0) != i }) { wrong += 1 }
            }
            #expect(wrong == 0, "\(set.name): \(wrong) items called lone have neighbours")
            if set.name == "pairs" {
                // Some pairs are within the radius after rounding, some not.
                let near = stride(from: 0, to: set.x.count, by: 2).filter {
                    tree.within(x: set.x[$0], y: set.y[$0], radius: set.radius).count > 1
                }.count
                #expect(near > 1_000 && near < set.x.count / 2 - 1_000, "\(near) pairs within the radius")
            }
            if set.name == "spread" { #expect(found > 9 * set.x.count / 10, "\(found) lone of \(set.x.count)") }
            if set.name == "mixed" { #expect(found < set.x.count / 2, "\(found) lone of \(set.x.count)") }
        }
    }

    /// The lookahead job lists the items just ahead of the greedy pass, skipping those
    /// already placed (the pass does not ask for their lists), and the pass gets every
    /// list right whether the job made it or not. A list that would overflow the
    /// reserved room stops the job without being kept half-written.
    @Test func theLookaheadListsTheItemsAheadOfThePass() throws {
        let count = 5_000
        let points = Self.randomCoordinates(count, seed: 7, lon: 126...127, lat: 37...38)
        let x = points.map { RadiusClusterIndex.projected($0).x }
        let y = points.map { RadiusClusterIndex.projected($0).y }
        let tree = KDTree(x: x, y: y, nodeSize: 64, usingSecondCore: false)
        let radius = 0.00002
        let placed = VisitedFlags()
        placed.reset(count: count)
        // Before the pass publishes a position, the job starts `gap` items after -1.
        let firstListed = LookaheadLists.gap - 1
        let skipped = [firstListed, 100, 1_000]
        for i in skipped { placed.set(i) }
        let lists = LookaheadLists(count: count)
        let job = lists.start(tree: tree, x: x, y: y, radius: radius, skipping: placed)
        // Run on a thread of its own if no pool thread has started it: on a busy machine
        // the pool's threads may all be running other tests.
        Thread { job.complete() }.start()
        let pass = lists.pass
        // The job goes `maximumLead` items ahead of the pass before it waits for it.
        let deadline = ContinuousClock.now + .seconds(120)
        while !pass.isListed(2_000), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
        try #require(pass.isListed(2_000), "the job did not list item 2,000 within two minutes")
        for i in 0..<firstListed { #expect(!pass.isListed(i), "item \(i)") }
        for i in skipped { #expect(!pass.isListed(i), "item \(i)") }
        for i in firstListed...2_000 where !skipped.contains(i) { #expect(pass.isListed(i), "item \(i)") }
        for i in 0..<count where !skipped.contains(i) {
            if i % LookaheadLists.positionStride == 0 { pass.publish(i) }
            var neighbors: [UInt32] = [7]
            pass.neighbors(of: i, tree: tree, x: x[i], y: y[i], radius: radius, into: &neighbors)
            #expect(neighbors == [7] + tree.within(x: x[i], y: y[i], radius: radius), "item \(i)")
        }
        job.cancel()
        withExtendedLifetime(lists) {}

        // The first 1,800 items within reach of each other: eight of their lists fill
        // 14,400 of the 16,000 entries reserved; the ninth does not fit, and the job stops.
        let packed = Self.randomCoordinates(1_800, seed: 9, lon: 127...127.001, lat: 37...37.001)
            + Self.randomCoordinates(200, seed: 8)
        let px = packed.map { RadiusClusterIndex.projected($0).x }
        let py = packed.map { RadiusClusterIndex.projected($0).y }
        let packedTree = KDTree(x: px, y: py, nodeSize: 64, usingSecondCore: false)
        let crowded = LookaheadLists(count: 2_000)
        let nonePlaced = VisitedFlags()
        nonePlaced.reset(count: 2_000)
        crowded.start(tree: packedTree, x: px, y: py, radius: 0.0001, skipping: nonePlaced).complete()
        let crowdedPass = crowded.pass
        let first = LookaheadLists.gap - 1
        for i in first..<first + 8 { #expect(crowdedPass.isListed(i), "item \(i)") }
        #expect(!crowdedPass.isListed(first + 8))
        for i in [first, first + 7, first + 8, 1_999] {
            var neighbors: [UInt32] = []
            crowdedPass.neighbors(of: i, tree: packedTree, x: px[i], y: py[i], radius: 0.0001, into: &neighbors)
            #expect(neighbors == packedTree.within(x: px[i], y: py[i], radius: 0.0001), "item \(i)")
        }
        #expect(packedTree.within(x: px[first], y: py[first], radius: 0.0001).count == 1_800)
        withExtendedLifetime(crowded) {}
    }

    @Test func clusterCountsGrowWithZoom() throws {
        let index = try RadiusClusterIndex(coordinates: Self.randomCoordinates(5_000, seed: 51))
        var last = 0
        for zoom in 0...17 {
            let count = try index.itemCount(zoom: Double(zoom))
            #expect(count >= last)
            last = count
        }
        #expect(last == 5_000)
    }

    @Test func fractionalAndOutOfRangeZoomsFloorAndClamp() throws {
        let index = try RadiusClusterIndex(coordinates: Self.randomCoordinates(2_000, seed: 61))
        #expect(try index.clusters(in: Self.world, zoom: 3.99) == index.clusters(in: Self.world, zoom: 3))
        #expect(try index.clusters(in: Self.world, zoom: -4) == index.clusters(in: Self.world, zoom: 0))
        #expect(try index.clusters(in: Self.world, zoom: 1e300) == index.clusters(in: Self.world, zoom: 17))
        #expect(throws: GeoClusterError.invalidZoom(value: .infinity, reason: "is not a finite number")) {
            try index.clusters(in: Self.world, zoom: .infinity)
        }
    }

    @Test func unknownClusterIDsAreSpecificErrors() throws {
        let index = try RadiusClusterIndex(coordinates: Self.randomCoordinates(1_000, seed: 71))
        for id in [-1, 0, 999, 1_000, 1_000 + (1 << 40), Int.max, 1_000 + (5 << 5) + 31] {
            #expect(throws: GeoClusterError.unknownCluster(id: id)) { try index.children(of: id) }
            #expect(throws: GeoClusterError.unknownCluster(id: id)) { try index.expansionZoom(of: id) }
            #expect(throws: GeoClusterError.unknownCluster(id: id)) { try index.leaves(of: id) }
        }
        let id = try #require(try index.clusters(in: Self.world, zoom: 0).compactMap(\.clusterID).first)
        #expect(throws: GeoClusterError.invalidPagination(reason: "offset must not be negative, got -1")) {
            try index.leaves(of: id, offset: -1)
        }
        #expect(try index.leaves(of: id, limit: 0).pointIndices.isEmpty)
    }

    @Test func invalidInputIsRejectedWithItsIndex() {
        let coordinates = [Coordinate(longitude: 0, latitude: 0), Coordinate(longitude: 0, latitude: 95)]
        #expect(throws: GeoClusterError.invalidCoordinate(field: "lat", value: 95, reason: "is outside [-90, 90]", index: 1)) {
            try RadiusClusterIndex(coordinates: coordinates)
        }
        #expect(throws: GeoClusterError.invalidOptions(reason: "radius must be a positive number of pixels, got 0.0")) {
            try RadiusClusterIndex(coordinates: [], options: RadiusClusterOptions(radiusPixels: 0))
        }
        #expect(throws: GeoClusterError.self) {
            try RadiusClusterIndex(coordinates: [], options: RadiusClusterOptions(minZoom: 5, maxZoom: 4))
        }
        #expect(throws: GeoClusterError.self) {
            try RadiusClusterIndex(coordinates: [], options: RadiusClusterOptions(minPoints: 1))
        }
    }

    @Test func tilesCoverTheirAreaAndWrapAtTheAntimeridian() throws {
        let coordinates = [Coordinate(longitude: 179.9, latitude: 0.1), Coordinate(longitude: -179.9, latitude: 0.1)]
        let index = try RadiusClusterIndex(coordinates: coordinates, options: RadiusClusterOptions(maxZoom: 2))
        // Tile 4/15/7 is the last column: its right-hand buffer holds the copy from x = 0.
        let last = try index.tile(TileAddress(z: 4, x: 15, y: 7))
        #expect(Set(last.compactMap(\.pointIndex)) == [0, 1])
        let copy = try #require(last.first { $0.pointIndex == 1 })
        #expect(copy.pixelX > 512)
        let first = try index.tile(TileAddress(z: 4, x: 0, y: 7))
        let mirrored = try #require(first.first { $0.pointIndex == 0 })
        #expect(mirrored.pixelX < 0)
    }

    @Test func abbreviatedCountsFollowSupercluster() {
        #expect(ClusterFeature.abbreviatedCount(999) == .number(999))
        #expect(ClusterFeature.abbreviatedCount(1_000) == .string("1k"))
        #expect(ClusterFeature.abbreviatedCount(1_250) == .string("1.3k"))
        #expect(ClusterFeature.abbreviatedCount(9_949) == .string("9.9k"))
        #expect(ClusterFeature.abbreviatedCount(9_950) == .string("10k"))
        #expect(ClusterFeature.abbreviatedCount(123_456) == .string("123k"))
    }

    /// The text that answers write without making a value is the value's text, for every
    /// count up to 200,000 and around the rounding steps above.
    @Test func abbreviatedCountTextIsTheValuesText() {
        let counts = Array(-5...200_000) + [999_499, 999_500, 1_234_567_890, Int.max, Int.min]
        var mismatches: [Int] = []
        for count in counts {
            var direct: [UInt8] = []
            ClusterFeature.encodeAbbreviatedCount(count, into: &direct)
            var viaValue: [UInt8] = []
            ClusterFeature.abbreviatedCount(count).encode(into: &viaValue)
            if direct != viaValue { mismatches.append(count) }
        }
        #expect(mismatches.isEmpty, "first differences: \(mismatches.prefix(5))")
    }
}

extension TileFeature {
    var pointIndex: Int? {
        if case let .point(index) = kind { return index }
        return nil
    }
}
