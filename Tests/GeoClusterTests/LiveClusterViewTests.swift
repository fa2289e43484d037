import Dispatch
import GeoClusterTestSupport
import Testing
@testable import GeoCluster

/// Display groups are formed per block of cells, so a view shows exactly what the whole
/// world shows inside it, and groups kept between unfiltered queries answer as freshly
/// formed ones through later changes.
struct LiveClusterViewTests {
    static let options = LiveClusterIndexTests.options

    /// What a user sees of a feature: kind, place and summary.
    struct Item: Hashable {
        var kind: ClusterFeature.Kind
        var coordinate: Coordinate
        var summary: SummaryValue?
    }

    static func items(_ answer: LiveAnswer) -> [Item] {
        answer.features.map { feature in
            Item(kind: feature.kind, coordinate: feature.coordinate,
                 summary: feature.aggregateIndex.map { answer.summaryValue($0) })
        }
    }

    /// Points of the model tests, most of them moved into hotspots of every size, so that
    /// cells at every zoom have uneven means and groups of several cells form.
    static func index(seed: UInt64, count: Int, partitioned: Bool = true,
                      options: LiveClusterOptions = options) throws -> LiveClusterIndex {
        var random = SeededRandom(seed: seed)
        let hotspots = (0..<12).map { k in
            (random.between(126.6, 127.4), random.between(37.1, 37.9), 0.003 * Double(1 << (k % 7)))
        }
        var index = try LiveClusterIndex(options: options, partitioned: partitioned)
        for slot in 0..<count {
            var point = LiveClusterIndexTests.randomPoint(&random)
            if random.unit() < 0.8 {
                let h = hotspots[Int(random.next() % UInt64(hotspots.count))]
                // Box-Muller from two uniforms.
                let u = max(1e-12, random.unit()), v = random.unit()
                let r = (-2 * CMath.log(u)).squareRoot()
                point.coordinate = Coordinate(longitude: h.0 + r * CMath.cos(2 * .pi * v) * h.2,
                                              latitude: h.1 + r * CMath.sin(2 * .pi * v) * h.2)
            }
            try index.insert(point, slot: slot)
        }
        return index
    }

    /// A box from a tenth of a tile to two tiles wide around a random spot of the points'
    /// main area.
    static func randomBox(_ random: inout SeededRandom, zoom: Int) throws -> BoundingBox {
        let lon = random.between(126.6, 127.4), lat = random.between(37.1, 37.9)
        let half = random.between(0.05, 1) * 360 / Double(1 << zoom)
        return try BoundingBox(west: max(-180, lon - half), south: max(-85, lat - half * 0.6),
                               east: min(180, lon + half), north: min(85, lat + half * 0.6))
    }

    static func projected(_ coordinate: Coordinate) -> (Double, Double) {
        (WebMercator.x(longitude: coordinate.longitude), WebMercator.y(latitude: coordinate.latitude))
    }

    /// The codes of the blocks a box meets at a zoom, row by row.
    static func blockCodes(of box: BoundingBox, zoom: Int, in index: LiveClusterIndex) -> [UInt64] {
        let (west, north) = projected(Coordinate(longitude: box.west, latitude: box.north))
        let (east, south) = projected(Coordinate(longitude: box.east, latitude: box.south))
        let (cx0, cx1) = index.grid.cellRange(west, east, zoom: zoom)
        let (cy0, cy1) = index.grid.cellRange(north, south, zoom: zoom)
        let shift = UInt32(LiveClusterIndex.blockShift)
        var codes: [UInt64] = []
        for by in (cy0 >> shift)...(cy1 >> shift) {
            for bx in (cx0 >> shift)...(cx1 >> shift) { codes.append(BulkBuilder.zOrder(bx, by)) }
        }
        return codes
    }

    /// A view's items: each once, each one the world shows, and every item of the world
    /// inside the box (by a margin that rounding of coordinates cannot cross).
    static func expect(_ view: [Item], of box: BoundingBox, showsWhat world: [Item], _ label: String) {
        #expect(Set(view).count == view.count, "\(label): an item twice")
        #expect(Set(view).isSubset(of: Set(world)), "\(label): an item the world does not show")
        let (west, north) = projected(Coordinate(longitude: box.west, latitude: box.north))
        let (east, south) = projected(Coordinate(longitude: box.east, latitude: box.south))
        let inside = world.filter { item in
            let (x, y) = projected(item.coordinate)
            return x > west + 1e-12 && x < east - 1e-12 && y > north + 1e-12 && y < south - 1e-12
        }
        #expect(Set(inside).isSubset(of: Set(view)), "\(label): an item of the world missing from the view")
    }

    @Test(arguments: [UInt64(1), 2])
    func aViewShowsWhatTheWorldShowsInsideIt(seed: UInt64) throws {
        let index = try Self.index(seed: seed, count: 3_000, partitioned: seed == 1)
        var random = SeededRandom(seed: seed + 100)
        for filter in LiveClusterIndexTests.filters {
            for zoom in Self.options.minZoom...Self.options.maxZoom {
                let world = Self.items(try index.clusters(in: .world, zoom: Double(zoom), filter: filter))
                for _ in 0..<8 {
                    let box = try Self.randomBox(&random, zoom: zoom)
                    let view = Self.items(try index.clusters(in: box, zoom: Double(zoom), filter: filter))
                    Self.expect(view, of: box, showsWhat: world, "zoom \(zoom)")
                }
            }
        }
    }

    /// Queries keep the groups of their blocks; after inserts, moves and removes in the
    /// same place, the new version answers as groups formed afresh (an always-true
    /// predicate forms them without kept groups), and the version before the changes
    /// still answers as it did.
    @Test(arguments: [false, true])
    func keptGroupsFollowChanges(partitioned: Bool) throws {
        var index = try Self.index(seed: 7, count: 2_000, partitioned: partitioned)
        var random = SeededRandom(seed: 70)
        var views: [(BoundingBox, Int)] = []
        for zoom in Self.options.minZoom...Self.options.maxZoom {
            views.append((try Self.randomBox(&random, zoom: zoom), zoom))
            views.append((.world, zoom))
        }
        let fresh = LiveFilter(predicate: { _ in true })
        for round in 0..<4 {
            let before = index
            let answers = try views.map { try Self.items(before.clusters(in: $0.0, zoom: Double($0.1))) }
            #expect(index.groupCache.usage.entries > 0, "round \(round): queries keep groups")
            for _ in 0..<40 {
                let slot = Int(random.next() % UInt64(index.slotCount))
                let point = LiveClusterIndexTests.randomPoint(&random)
                switch random.next() % 3 {
                case 0: try index.insert(point, slot: index.slotCount)
                case 1: if index.point(at: slot) != nil { try index.update(point, slot: slot) }
                default: index.remove(slot: slot)
                }
            }
            for (k, (box, zoom)) in views.enumerated() {
                let kept = Self.items(try index.clusters(in: box, zoom: Double(zoom)))
                let formed = Self.items(try index.clusters(in: box, zoom: Double(zoom), filter: fresh))
                #expect(kept == formed, "round \(round), zoom \(zoom)")
                #expect(try Self.items(before.clusters(in: box, zoom: Double(zoom))) == answers[k],
                        "round \(round), zoom \(zoom): the earlier version changed")
            }
        }
    }

    /// One change at a time where the points are dense: a kept block whose cells hold
    /// several points each is formed again from its kept cells' totals with only the cells
    /// of the changed quadtree nodes gathered again, and answers as groups formed afresh.
    @Test(arguments: [false, true])
    func blocksFormedFromKeptTotalsAnswerAsFreshOnes(partitioned: Bool) throws {
        var index = try Self.index(seed: 9, count: 3_000, partitioned: partitioned)
        var random = SeededRandom(seed: 90)
        var views: [(BoundingBox, Int)] = []
        for zoom in Self.options.minZoom...Self.options.maxZoom {
            views.append((try Self.randomBox(&random, zoom: zoom), zoom))
        }
        let fresh = LiveFilter(predicate: { _ in true })
        for round in 0..<60 {
            // Inserts, moves within a hotspot or out of it, and removes.
            let slot = Int(random.next() % UInt64(index.slotCount))
            var point = LiveClusterIndexTests.randomPoint(&random)
            if round % 2 == 0, let near = index.point(at: Int(random.next() % UInt64(index.slotCount))) {
                point.coordinate = Coordinate(longitude: near.coordinate.longitude + random.between(-0.002, 0.002),
                                              latitude: near.coordinate.latitude + random.between(-0.002, 0.002))
            }
            switch round % 3 {
            case 0: try index.insert(point, slot: index.slotCount)
            case 1: if index.point(at: slot) != nil { try index.update(point, slot: slot) }
            default: index.remove(slot: slot)
            }
            for (box, zoom) in views {
                let kept = Self.items(try index.clusters(in: box, zoom: Double(zoom)))
                let formed = Self.items(try index.clusters(in: box, zoom: Double(zoom), filter: fresh))
                #expect(kept == formed, "round \(round), zoom \(zoom)")
            }
        }
        print("blocks formed from kept totals: \(index.groupCache.updates)")
        #expect(index.groupCache.updates > 100)
    }

    /// A batch of changes over many cells of a dense kept block (64, one point in each,
    /// as a batch of sightings across the country changes a low zoom's block) still
    /// gathers only those cells again, and the block answers as one formed afresh.
    @Test func aBatchOverManyCellsOfADenseBlockGathersOnlyThose() throws {
        var index = try Self.index(seed: 9, count: 80_000, partitioned: true)
        let z = 9
        let shift = UInt32(LiveClusterIndex.blockShift)
        func cell(_ c: Coordinate) -> (x: UInt32, y: UInt32) {
            (index.grid.cell(LeafEntry.quantize(WebMercator.x(longitude: c.longitude)), zoom: z),
             index.grid.cell(LeafEntry.quantize(WebMercator.y(latitude: c.latitude)), zoom: z))
        }
        let centre = cell(Coordinate(longitude: 127.0, latitude: 37.5))
        let bx = centre.x >> shift, by = centre.y >> shift
        let rect = index.blockRect(bx, by, zoom: z)
        let width = (rect.maxX - rect.minX) / 16
        let box = try BoundingBox(west: WebMercator.longitude(x: rect.minX + width / 4),
                                  south: WebMercator.latitude(y: rect.maxY - width / 4),
                                  east: WebMercator.longitude(x: rect.maxX - width / 4),
                                  north: WebMercator.latitude(y: rect.minY + width / 4))
        _ = try index.clusters(in: box, zoom: Double(z))
        let key = LiveClusterIndex.groupKey(zoom: z, bx, by)
        #expect(index.groupCache.latest(key)?.cells != nil, "the block keeps its cells' totals")
        // A point beside one already there in each of 64 of the block's cells.
        var near: [UInt64: Coordinate] = [:]
        for slot in 0..<index.slotCount {
            guard let point = index.point(at: slot) else { continue }
            let c = cell(point.coordinate)
            guard c.x >> shift == bx, c.y >> shift == by, near.count < 64 else { continue }
            near[UInt64(c.x) << 32 | UInt64(c.y)] = point.coordinate
        }
        try #require(near.count == 64, "the block has 64 cells with points")
        let updates = index.groupCache.updates
        var random = SeededRandom(seed: 91)
        for (_, coordinate) in near.sorted(by: { $0.key < $1.key }) {
            var point = LiveClusterIndexTests.randomPoint(&random)
            point.coordinate = Coordinate(longitude: coordinate.longitude + 1e-6, latitude: coordinate.latitude)
            try index.insert(point, slot: index.slotCount)
        }
        let kept = Self.items(try index.clusters(in: box, zoom: Double(z)))
        let formed = Self.items(try index.clusters(in: box, zoom: Double(z), filter: LiveFilter(predicate: { _ in true })))
        #expect(kept == formed)
        #expect(index.groupCache.updates == updates + 1, "the block was gathered whole")
    }

    /// A prepared index keeps the first zooms' blocks before any query and answers every
    /// view as an index that forms its blocks on first use, also after a change.
    @Test func aPreparedIndexAnswersAsOneThatFormsItsBlocks() throws {
        var prepared = try Self.index(seed: 21, count: 3_000, partitioned: false)
        var plain = try Self.index(seed: 21, count: 3_000, partitioned: false)
        let deepest = try #require(prepared.prepareDisplay())
        print("prepared up to zoom \(deepest), kept \(prepared.groupCache.usage)")
        #expect(deepest >= Self.options.minZoom)
        #expect(prepared.groupCache.usage.entries > 0, "kept before any query")
        let acrossEdges = try Self.expectSameAnswers(&prepared, &plain, options: Self.options, seed: 22)
        #expect(acrossEdges > 0)
    }

    /// After ``LiveClusterIndex/prepareDisplay()``, every block of a prepared zoom whose
    /// nodes hold points is kept, also one without points of its own that a node beside
    /// it reaches into, unless only leaves (of a few points each) reach it: a view there
    /// reads, and forms nothing (such a block was formed at the first look, on two
    /// threads where its nodes counted thousands of points).
    @Test func aPreparedZoomKeepsTheEmptyBlocksItsNodesReach() throws {
        let prepared = try Self.index(seed: 21, count: 3_000, partitioned: false)
        let deepest = try #require(prepared.prepareDisplay())
        var random = SeededRandom(seed: 26)
        var blocks = 0, reached = 0, byLeaves = 0
        for zoom in Self.options.minZoom...deepest {
            for _ in 0..<8 {
                let box = try Self.randomBox(&random, zoom: zoom)
                for code in Self.blockCodes(of: box, zoom: zoom, in: prepared) {
                    let (bx, by) = BulkBuilder.position(code)
                    guard let current = prepared.blockNodes(bx, by, zoom: zoom) else { continue }
                    let kept = prepared.groupCache.entry(LiveClusterIndex.groupKey(zoom: zoom, bx, by),
                                                         stamp: current.stamp, root: prepared.combined.stamp)
                    // A block that only leaves reach is formed fast: not kept.
                    let leavesOnly = current.nodes.allSatisfy { $0?.isLeaf ?? true }
                    #expect(kept != nil || leavesOnly, "zoom \(zoom), block \(bx), \(by): formed by the view")
                    blocks += 1
                    if kept?.items.features.isEmpty == true { reached += 1 }
                    if kept == nil { byLeaves += 1 }
                }
            }
        }
        print("\(blocks) blocks with nodes in the views up to zoom \(deepest), \(reached) of them without points, "
              + "\(byLeaves) not kept (reached by leaves alone)")
        #expect(reached > 0, "no view met a block without points that a node reaches into")
    }

    /// The groups of a view's blocks formed on two threads at its first look
    /// (``LiveClusterIndex/formMissingGroups(_:zoom:)``) are those each block forms on its
    /// own, and the views answer alike.
    @Test func blocksFormedOnTwoThreadsAreThoseFormedOneByOne() throws {
        let options = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 13, bucketSize: 16)
        let together = try Self.index(seed: 31, count: 40_000, partitioned: false, options: options)
        let alone = try Self.index(seed: 31, count: 40_000, partitioned: false, options: options)
        var random = SeededRandom(seed: 32)
        var formedTogether = 0, blocks = 0
        for zoom in 9...13 {
            for _ in 0..<12 {
                let box = try Self.randomBox(&random, zoom: zoom)
                let codes = Self.blockCodes(of: box, zoom: zoom, in: together)
                formedTogether += together.formMissingGroups(codes, zoom: zoom)
                for code in codes {
                    let (bx, by) = BulkBuilder.position(code)
                    let mine = alone.keptGroups(bx, by, zoom: zoom)
                    // Those formed on two threads are kept: read, not formed again.
                    let theirs = together.keptGroups(bx, by, zoom: zoom)
                    let summaries = { (items: LiveClusterIndex.Items?) in
                        items.map { items in items.summaries.indices.map { items.summaryValue($0) } }
                    }
                    let same = mine?.items.features == theirs?.items.features
                        && summaries(mine?.items) == summaries(theirs?.items) && mine?.edges == theirs?.edges
                    #expect(same, "zoom \(zoom), block \(bx), \(by)")
                    blocks += 1
                }
                let x = try together.clusters(in: box, zoom: Double(zoom)), y = try alone.clusters(in: box, zoom: Double(zoom))
                let sameAnswer = Self.items(x) == Self.items(y)
                #expect(sameAnswer, "zoom \(zoom)")
            }
        }
        print("\(formedTogether) of \(blocks) blocks formed on two threads")
        if BackgroundJob.hasSecondCore { #expect(formedTogether > 0, "no view formed its blocks on two threads") }
    }

    /// A layer that sets no budget keeps four items per point up to 4,000,000 (about every
    /// block its views form, up to a million points), half its points beyond 8M points (for
    /// the memory of large layers), and never fewer than the smallest budget; its option
    /// overrides that.
    @Test func theDefaultBudgetFollowsTheLayersSize() throws {
        let budgets = [0, 10_000, 16_384, 100_000, 1_000_000, 8_000_000, 10_000_000].map { GroupCache.defaultBudget(points: $0) }
        #expect(budgets == [65_536, 65_536, 65_536, 400_000, 4_000_000, 4_000_000, 5_000_000])
        let index = try Self.index(seed: 25, count: 40_000, partitioned: false)
        #expect(index.keptBudget == 160_000)
        let set = try Self.index(seed: 25, count: 40_000, partitioned: false,
                                 options: LiveClusterOptions(radiusPixels: 40, keptItems: 70_000))
        #expect(set.keptBudget == 70_000)
    }

    /// The zooms prepared whole take up to all of the budget but one item per point (and
    /// half of it at least, for layers of more points than half the budget), counting
    /// what they keep beside their items: the kept items stay within the budget, every
    /// block of the prepared zooms stays kept, and the zooms go deeper than half the
    /// budget would take them.
    @Test func theWholeZoomsTakeTheBudgetLessAnItemPerPoint() throws {
        #expect(LiveClusterIndex.preparedRoom(budget: 4_000_000, points: 1_000_000) == 3_000_000)
        #expect(LiveClusterIndex.preparedRoom(budget: 5_000_000, points: 10_000_000) == 2_500_000)
        #expect(LiveClusterIndex.preparedRoom(budget: 65_536, points: 40_000) == 32_768)
        let options = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 16, bucketSize: 16)
        let index = try Self.index(seed: 27, count: 20_000, partitioned: false, options: options)
        try #require(index.keptBudget == 80_000)
        let deepest = try #require(index.prepareDisplay())
        try #require(deepest < options.maxZoom, "every zoom fit: the room decides nothing")
        // The deepest zoom that half the budget holds, by the zooms' items alone.
        var items = 0, half = options.minZoom - 1
        for z in options.minZoom...options.maxZoom {
            items += try #require(index.worldBlocks(zoom: z, room: .max)).count
            guard items <= 40_000 else { break }
            half = z
        }
        var dropped = 0
        for z in options.minZoom...deepest {
            for code in try #require(index.worldBlocks(zoom: z, room: .max)).store.blocks.keys {
                let (bx, by) = BulkBuilder.position(code)
                if index.groupCache.latest(LiveClusterIndex.groupKey(zoom: z, bx, by)) == nil { dropped += 1 }
            }
        }
        print("prepared whole up to zoom \(deepest) (half the budget: \(half)), kept \(index.keptItems)")
        #expect(deepest > half)
        #expect(index.keptItems.held <= index.keptBudget)
        #expect(dropped == 0, "\(dropped) blocks of the prepared zooms dropped")
    }

    /// Where the next zoom does not fit whole in the kept groups, the index prepares the
    /// blocks of most points of the deeper zooms, and still answers every view as an
    /// index that forms its blocks on first use, also after a change.
    @Test func aPreparedIndexKeepsDenseBlocksOfDeeperZooms() throws {
        // The smallest budget, so that the deep zooms of these 40,000 points do not fit whole.
        let options = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 16, bucketSize: 16,
                                         keptItems: LiveClusterOptions.keptItemsRange.lowerBound)
        var prepared = try Self.index(seed: 23, count: 40_000, partitioned: false, options: options)
        var plain = try Self.index(seed: 23, count: 40_000, partitioned: false, options: options)
        let deepest = try #require(prepared.prepareDisplay())
        #expect(deepest < options.maxZoom, "every zoom fit whole: no deeper zoom to prepare blocks of")
        var dense = 0, kept = 0, shared = 0
        // Kept twice, before and after the merges across edges, the items in one storage.
        func keptBoth(_ z: Int, _ code: UInt64) -> Bool {
            let (bx, by) = BulkBuilder.position(code)
            guard let groups = prepared.groupCache.latest(LiveClusterIndex.groupKey(zoom: z, bx, by)),
                  let resolved = prepared.groupCache.latest(LiveClusterIndex.resolvedKey(zoom: z, bx, by)) else { return false }
            if resolved.items.sharesStorage(with: groups.items) { shared += 1 }
            return true
        }
        for z in (deepest + 1)...options.maxZoom {
            for code in prepared.pointsPerBlock(zoom: z, least: LiveClusterIndex.pointsToPrepareBlock).keys {
                dense += 1
                if keptBoth(z, code) { kept += 1 }
            }
        }
        var whole = 0
        for code in prepared.pointsPerBlock(zoom: deepest, least: 1).keys where keptBoth(deepest, code) { whole += 1 }
        print("prepared whole up to zoom \(deepest) (\(whole) blocks there), dense blocks deeper \(dense), kept \(kept), "
              + "\(prepared.groupCache.usage)")
        #expect(kept > 0 && whole > 0)
        #expect(shared == kept + whole, "the items after merges are a copy")
        _ = try Self.expectSameAnswers(&prepared, &plain, options: options, seed: 24)
    }

    /// A zoom's blocks formed a strip of rows of blocks at a time (as
    /// ``LiveClusterIndex/prepareDisplay()`` forms them: a row each, several rows where a
    /// zoom has more than ``LiveClusterIndex/stripsPerZoom``) are those one grid over the
    /// world forms, with the same cells' totals to keep, and a zoom that does not fit in
    /// the room given is given up.
    @Test(arguments: [9, 16]) func aZoomFormedRowByRowIsWhatTheWorldsGridForms(maxZoom: Int) throws {
        var options = Self.options
        options.maxZoom = maxZoom
        let index = try Self.index(seed: 25, count: 6_000, options: options)
        var rowsCompared = 0, stripsCompared = 0
        for z in options.minZoom...options.maxZoom {
            let last = UInt32(index.blocksPerSide(zoom: z) - 1)
            let (x0, y0, x1, y1) = index.cells(of: (0, 0, last, last), zoom: z)
            let grid = index.cellGrid(zoom: z, x0: x0, y0: y0, x1: x1, y1: y1, filter: .all)
            let items = index.formItems(grid, zoom: z, filter: .all)
            var world = LiveClusterIndex.BlockStore(zoom: z, filter: .all, keeps: true)
            world.fill(items, formed: (0, 0, last, last), index: index)
            let dense = LiveClusterIndex.cellsByBlock(grid).filter { _, cells in
                cells.cells.reduce(0) { $0 + $1.aggregate.count }
                    >= LiveClusterIndex.pointsPerCellToKeepCells * cells.cells.count
            }
            let count = items.features.count + dense.values.reduce(0) { $0 + $1.cells.count }
            let rows = try #require(index.worldBlocks(zoom: z, room: .max))
            #expect(rows.count == count, "zoom \(z)")
            #expect(rows.store.formed.map { [$0.0, $0.1, $0.2, $0.3] } == [0, 0, last, last])
            #expect(Set(rows.store.blocks.keys) == Set(world.blocks.keys), "zoom \(z)")
            for (code, block) in world.blocks {
                let a = try #require(block), b = try #require(rows.store.blocks[code] ?? nil)
                #expect(Self.blockItems(a) == Self.blockItems(b), "zoom \(z), block \(code)")
            }
            #expect(Set(rows.cells.keys) == Set(dense.keys), "zoom \(z)")
            for (code, cells) in dense {
                #expect(Self.cellTotals(cells) == rows.cells[code].map(Self.cellTotals), "zoom \(z), block \(code)")
            }
            #expect(index.worldBlocks(zoom: z, room: count) != nil)
            #expect(index.worldBlocks(zoom: z, room: count - 1) == nil, "zoom \(z): more than the room given")
            let rowsWithPoints = Set(world.blocks.keys.map { Int(BulkBuilder.position($0).qy) })
            if rowsWithPoints.count > 1 { rowsCompared += 1 }
            let rowsPerStrip = LiveClusterIndex.rowsPerStrip(blocksPerSide: Int(last) + 1)
            if rowsPerStrip > 1, Set(rowsWithPoints.map { $0 / rowsPerStrip }).count > 1 { stripsCompared += 1 }
        }
        #expect(rowsCompared > 5, "zooms with points in several rows of blocks")
        if maxZoom == 16 { #expect(stripsCompared > 0, "zooms with points in several strips of several rows") }
    }

    /// A block's items as a user sees them, with where they are, their groups and which
    /// of them may merge across an edge.
    static func blockItems(_ block: LiveClusterIndex.BlockStore.Block) -> [String] {
        let items = block.items
        return block.range.map { i in
            let feature = items.features[i], group = items.groups[i]
            let summary = feature.aggregateIndex.map { items.summaryValue($0) }
            return "\(feature.kind) \(feature.coordinate) \(String(describing: summary)) \(items.positions[i]) "
                + "\(group.x) \(group.y) \(group.mask) \(group.whole) \(block.edges.contains(i))"
        } + ["edges \(block.edges.count)"]
    }

    /// A grid's cells with their counts and totals by partition.
    static func cellTotals(_ grid: LiveClusterIndex.Grid) -> [String] {
        grid.cells.map { cell in
            "\(cell.x) \(cell.y) \(cell.aggregate.count) \(grid.histogram[cell.histogramStart..<cell.histogramEnd])"
        }
    }

    /// Compares the two indexes' answers to 8 random boxes at every zoom, then moves a
    /// point near the middle of the hotspots in both and compares again; returns how many
    /// clusters answered were merged across a block edge.
    static func expectSameAnswers(_ prepared: inout LiveClusterIndex, _ plain: inout LiveClusterIndex,
                                  options: LiveClusterOptions, seed: UInt64) throws -> Int {
        var random = SeededRandom(seed: seed)
        var acrossEdges = 0
        for round in 0..<2 {
            for zoom in options.minZoom...options.maxZoom {
                for _ in 0..<8 {
                    let box = try Self.randomBox(&random, zoom: zoom)
                    let answer = try prepared.clusters(in: box, zoom: Double(zoom))
                    #expect(Self.items(answer) == Self.items(try plain.clusters(in: box, zoom: Double(zoom))),
                            "round \(round), zoom \(zoom)")
                    // Clusters merged across a block edge take part.
                    for id in answer.features.compactMap(\.clusterID) {
                        let blocks = Set(try prepared.decode(id).members.map { [$0.x >> 4, $0.y >> 4] })
                        if blocks.count > 1 { acrossEdges += 1 }
                    }
                }
            }
            let moved = LivePoint(coordinate: Coordinate(longitude: 127.01, latitude: 37.52))
            try prepared.update(moved, slot: 5)
            try plain.update(moved, slot: 5)
        }
        return acrossEdges
    }

    /// Boxes with a side just inside or just outside a block edge where two items merged
    /// across it: a view looks for the merges of the items near it only, and still shows
    /// what the whole world shows inside it, with and without kept groups, filtered or not.
    @Test func boxesEndingNearBlockEdgesShowWhatTheWorldShows() throws {
        let index = try Self.index(seed: 21, count: 3_000, partitioned: true)
        var random = SeededRandom(seed: 310)
        let filters: [LiveFilter] = [.all, LiveFilter(predicate: { _ in true }), LiveFilter(partitions: [1, 3])]
        var boxes = 0, mergedSeen = 0
        for filter in filters {
            for zoom in Self.options.minZoom...Self.options.maxZoom {
                let world = try index.clusters(in: .world, zoom: Double(zoom), filter: filter)
                let worldItems = Self.items(world)
                let limit = index.crowdingDistance(zoom: zoom)
                // Another copy of the same points, for half of the boxes: less kept.
                let cold = try Self.index(seed: 21, count: 3_000, partitioned: true)
                // Items near a block edge (those that may merge across it), clusters
                // merged across an edge first.
                func block(_ coordinate: Coordinate) -> LiveClusterIndex.UnitRect {
                    let (x, y) = Self.projected(coordinate)
                    return index.blockRect(index.grid.cellRange(x, x, zoom: zoom).0 >> 4,
                                           index.grid.cellRange(y, y, zoom: zoom).0 >> 4, zoom: zoom)
                }
                let nearEdges = world.features.filter { feature in
                    let (x, y) = Self.projected(feature.coordinate), rect = block(feature.coordinate)
                    return min(x - rect.minX, rect.maxX - x, y - rect.minY, rect.maxY - y) < limit
                }
                let merged = try nearEdges.filter { feature in
                    guard let id = feature.clusterID else { return false }
                    return Set(try index.decode(id).members.map { [$0.x >> 4, $0.y >> 4] }).count > 1
                }
                mergedSeen += merged.count
                for feature in (merged + nearEdges).prefix(6) {
                    let (x, y) = Self.projected(feature.coordinate), rect = block(feature.coordinate)
                    // The block edge nearest the cluster, and the axis across it.
                    let edges = [(rect.minX, true), (rect.maxX, true), (rect.minY, false), (rect.maxY, false)]
                    let (edge, acrossX) = edges.min { abs(($0.1 ? x : y) - $0.0) < abs(($1.1 ? x : y) - $1.0) }!
                    let blockWidth = rect.maxX - rect.minX
                    for offset in [-0.9, -0.4, -0.05, 0.05, 0.4, 0.9] {
                        // One side at the edge moved by `offset` half radii, the box on
                        // either side of it, the other sides up to 1.5 blocks away.
                        let side = edge + offset * limit
                        let far = random.between(0.2, 1.5) * blockWidth * (random.unit() < 0.5 ? -1 : 1)
                        let along = (acrossX ? y : x), spread = random.between(0.1, 1) * blockWidth
                        let (lowX, highX) = acrossX ? (min(side, side + far), max(side, side + far))
                            : (along - spread, along + spread)
                        let (lowY, highY) = acrossX ? (along - spread, along + spread)
                            : (min(side, side + far), max(side, side + far))
                        let box = try BoundingBox(
                            west: WebMercator.longitude(x: max(0, lowX)), south: WebMercator.latitude(y: min(1, highY)),
                            east: WebMercator.longitude(x: min(1, highX)), north: WebMercator.latitude(y: max(0, lowY)))
                        let viewer = boxes % 2 == 0 ? cold : index
                        let view = Self.items(try viewer.clusters(in: box, zoom: Double(zoom), filter: filter))
                        boxes += 1
                        Self.expect(view, of: box, showsWhat: worldItems, "zoom \(zoom), offset \(offset)")
                    }
                }
            }
        }
        print("boxes along block edges: \(boxes), clusters merged across an edge among the items near one: \(mergedSeen)")
        #expect(boxes > 300)
        #expect(mergedSeen > 0)
    }

    /// A block first met at the far side of a small view keeps its items' merges for that
    /// part of it only; a later view around a cluster merged across its edge must not read
    /// them, and shows the merged cluster (and neither of its two items) as the world does.
    @Test func aBlockKeptForOnePartOfItIsFormedAgainForAnother() throws {
        let index = try Self.index(seed: 21, count: 3_000, partitioned: false)
        func box(_ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double) throws -> BoundingBox {
            try BoundingBox(west: WebMercator.longitude(x: max(0, minX)), south: WebMercator.latitude(y: min(1, maxY)),
                            east: WebMercator.longitude(x: min(1, maxX)), north: WebMercator.latitude(y: max(0, minY)))
        }
        var checked = 0
        for zoom in Self.options.minZoom...Self.options.maxZoom {
            let world = try index.clusters(in: .world, zoom: Double(zoom))
            let worldItems = Self.items(world)
            let limit = index.crowdingDistance(zoom: zoom)
            for (k, feature) in world.features.enumerated() {
                guard let id = feature.clusterID else { continue }
                let blocks = Set(try index.decode(id).members.map { [UInt32($0.x >> 4), UInt32($0.y >> 4)] })
                guard blocks.count > 1 else { continue }
                let (x, y) = Self.projected(feature.coordinate)
                for block in blocks {
                    let fresh = try Self.index(seed: 21, count: 3_000, partitioned: false)
                    let rect = fresh.blockRect(block[0], block[1], zoom: zoom)
                    let width = rect.maxX - rect.minX
                    // A small view at the corner of the block farthest from the cluster.
                    let cornerX = x - rect.minX > rect.maxX - x ? rect.minX + 0.05 * width : rect.maxX - 0.06 * width
                    let cornerY = y - rect.minY > rect.maxY - y ? rect.minY + 0.05 * width : rect.maxY - 0.06 * width
                    _ = try fresh.clusters(in: box(cornerX, cornerY, cornerX + 0.01 * width, cornerY + 0.01 * width),
                                           zoom: Double(zoom))
                    let around = try box(x - 0.1 * limit, y - 0.1 * limit, x + 0.1 * limit, y + 0.1 * limit)
                    let view = Self.items(try fresh.clusters(in: around, zoom: Double(zoom)))
                    Self.expect(view, of: around, showsWhat: worldItems, "zoom \(zoom)")
                    #expect(view.contains(worldItems[k]), "zoom \(zoom): the merged cluster is missing")
                    checked += 1
                }
            }
        }
        print("blocks met first at their far corner, then around a cluster merged across their edge: \(checked)")
        #expect(checked > 0)
    }

    @Test func theKeptGroupsStayWithinTheirBudget() {
        let cache = GroupCache()
        let feature = ClusterFeature(kind: .point(index: 0), coordinate: Coordinate(longitude: 0, latitude: 0))
        var items = LiveClusterIndex.Items()
        for _ in 0..<10 { items.append(feature, at: SIMD2(0, 0)) }
        for key in UInt64(0)..<1_000 {
            cache.keep(GroupCache.Entry(stamp: BlockStamp(a: key + 1), items: items), for: key, budget: 2_000, root: 1)
            #expect(cache.usage.items <= 2_000)
        }
        #expect(cache.usage.entries > 100, "dropping keeps about half")
        #expect(cache.entry(999, stamp: BlockStamp(a: 1_000), root: 1) != nil, "the newest entry is kept")
        #expect(cache.entry(999, stamp: BlockStamp(a: 1_000, b: 7), root: 1) == nil, "a changed block is formed again")
    }

    /// Entries dropped for the budget are freed, many at a time on a background queue
    /// (not by the query that dropped them): none stays alive.
    @Test func droppedEntriesAreFreed() throws {
        let itemsPerEntry = 10
        final class Watch: @unchecked Sendable { weak var entry: GroupCache.Entry? }
        let cache = GroupCache()
        let feature = ClusterFeature(kind: .point(index: 0), coordinate: Coordinate(longitude: 0, latitude: 0))
        var items = LiveClusterIndex.Items()
        for _ in 0..<itemsPerEntry { items.append(feature, at: SIMD2(0, 0)) }
        let budget = 200 * itemsPerEntry
        var watches: [Watch] = []
        for key in UInt64(0)..<200 {
            let watch = Watch()
            do {
                let entry = GroupCache.Entry(stamp: BlockStamp(a: key + 1), items: items)
                watch.entry = entry
                cache.keep(entry, for: key, budget: budget, root: 1)
            }
            watches.append(watch)
        }
        #expect(watches.allSatisfy { $0.entry != nil }, "all 200 fit in the budget")
        // One more: about half of the 200 are dropped, more than are freed in place.
        cache.keep(GroupCache.Entry(stamp: BlockStamp(a: 1_000), items: items), for: 1_000, budget: budget, root: 1)
        let dropped = (UInt64(0)..<200).filter { cache.latest($0) == nil }
        #expect(dropped.count > GroupCache.releasedInPlace)
        GroupCache.releaseQueue.sync {}  // the batches queued before this have run
        #expect(dropped.allSatisfy { watches[Int($0)].entry == nil }, "a dropped entry is still alive")
        #expect((UInt64(0)..<200).filter { cache.latest($0) != nil }.allSatisfy { watches[Int($0)].entry != nil })
    }

    /// Entries prepared ahead of the first queries are dropped after the others: views
    /// that overflow the budget drop half of their own, again and again, and the prepared
    /// ones stay (also once a change put a new entry in the place of one); prepared
    /// entries that leave too little room are dropped like the others.
    @Test func preparedEntriesAreDroppedLast() {
        let cache = GroupCache()
        let feature = ClusterFeature(kind: .point(index: 0), coordinate: Coordinate(longitude: 0, latitude: 0))
        var items = LiveClusterIndex.Items()
        for _ in 0..<10 { items.append(feature, at: SIMD2(0, 0)) }
        func keep(_ key: UInt64, budget: Int = 2_000) {
            cache.keep(GroupCache.Entry(stamp: BlockStamp(a: key + 1), items: items), for: key, budget: budget, root: 1)
        }
        // 100 prepared entries: half of the budget.
        for key in UInt64(0)..<100 { keep(key) }
        cache.protect(Array(0..<100))
        #expect(cache.protectedCount == 100)
        keep(7)  // a change: a new entry in a prepared one's place
        for key in UInt64(1_000)..<3_000 {
            keep(key)
            #expect(cache.usage.items <= 2_000)
        }
        #expect((0..<100).allSatisfy { cache.latest($0) != nil }, "a prepared entry was dropped")
        #expect(cache.protectedCount == 100)
        #expect(cache.usage.entries > 130, "the views' entries are dropped half at a time")
        // With the budget at a tenth, the prepared entries alone overflow it: half go.
        keep(5_000, budget: 200)
        #expect(cache.protectedCount < 100 && cache.protectedCount == (0..<100).filter { cache.latest($0) != nil }.count)
    }

    /// The kept groups' table in shards answers as one dictionary: a key set is read, set
    /// again it holds the new value, removed (or set to nil) it is gone; the count and
    /// the keys are those of all the shards.
    @Test func aShardedTableAnswersAsOneDictionary() {
        var table = ShardedTable<Int>()
        var model: [UInt64: Int] = [:]
        var random = SeededRandom(seed: 41)
        for step in 0..<20_000 {
            let key = LiveClusterIndex.groupKey(zoom: Int(random.next() % 17), UInt32(random.next() % 64),
                                                UInt32(random.next() % 64)) | (random.next() % 2 == 0 ? 0 : GroupCache.resolvedBit)
            switch random.next() % 4 {
            case 0, 1:
                table[key] = step
                model[key] = step
            case 2:
                #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key))
            default:
                table[key] = nil
                model[key] = nil
            }
        }
        #expect(model.count > 1_000 && table.count == model.count)
        #expect(table.keys.count == model.count && Set(table.keys) == Set(model.keys))
        #expect(model.allSatisfy { table[$0.key] == $0.value })
    }

    /// A drop for the budget takes the older half of the views' entries, in the order they
    /// were kept (an entry kept again counts from then), not the prepared ones; the list
    /// it reads them from stays within about twice the entries it lists, however many
    /// prepared entries there are and however often entries are kept again.
    @Test func viewsEntriesAreDroppedOldestFirst() {
        let cache = GroupCache()
        let feature = ClusterFeature(kind: .point(index: 0), coordinate: Coordinate(longitude: 0, latitude: 0))
        var items = LiveClusterIndex.Items()
        for _ in 0..<10 { items.append(feature, at: SIMD2(0, 0)) }
        func keep(_ key: UInt64) {
            cache.keep(GroupCache.Entry(stamp: BlockStamp(a: key + 1), items: items), for: key, budget: 20_000, root: 1)
        }
        // 1,000 prepared entries (half of the budget) leave no listing behind.
        for key in UInt64(0)..<1_000 { keep(key) }
        cache.protect(Array(0..<1_000))
        #expect(cache.listing.entries == 0 && cache.listing.listings <= 1_024)
        // 1,000 views' entries fill the rest; the first is kept again, so it is the newest.
        for key in UInt64(10_000)..<11_000 { keep(key) }
        keep(10_000)
        #expect(cache.usage.items == 20_000 && cache.listing.entries == 1_000)
        keep(20_000)
        #expect((UInt64(10_001)..<10_501).allSatisfy { cache.latest($0) == nil }, "an older view's entry stayed")
        #expect((UInt64(10_501)..<11_000).allSatisfy { cache.latest($0) != nil }, "a newer view's entry was dropped")
        #expect(cache.latest(10_000) != nil && cache.latest(20_000) != nil)
        #expect((UInt64(0)..<1_000).allSatisfy { cache.latest($0) != nil }, "a prepared entry was dropped")
        for _ in 0..<20 {
            for key in UInt64(10_501)..<11_000 { keep(key) }
        }
        let listing = cache.listing
        #expect(listing.entries == 501 && listing.listings <= 2 * listing.entries + 1_025, "\(listing)")
    }

    /// A block's items after the merges across its edges share the items of its entry of
    /// groups, and count in the budget for their merged clusters only, while that entry
    /// holds the same items: not when it is missing or holds others, and they go when
    /// it is formed anew or dropped (nothing the budget does not count stays kept).
    @Test func itemsAfterMergesShareTheBlocksItems() {
        let cache = GroupCache()
        let feature = ClusterFeature(kind: .point(index: 0), coordinate: Coordinate(longitude: 0, latitude: 0))
        func items(_ n: Int) -> LiveClusterIndex.Items {
            var items = LiveClusterIndex.Items()
            items.reserve(n)
            for _ in 0..<n { items.append(feature, at: SIMD2(0, 0)) }
            return items
        }
        let groupKey = LiveClusterIndex.groupKey(zoom: 9, 3, 4), resolvedKey = LiveClusterIndex.resolvedKey(zoom: 9, 3, 4)
        let block = GroupCache.Entry(stamp: BlockStamp(a: 1), items: items(100))
        func resolved(_ own: LiveClusterIndex.Items) -> GroupCache.Entry {
            GroupCache.Entry(stamp: BlockStamp(a: 2), items: own, merging: [3, 7], merged: items(2))
        }
        // Without its block's entry, all of it counts.
        cache.keep(resolved(block.items), for: resolvedKey, budget: 10_000, root: 1)
        #expect(cache.usage.items == 102)
        cache.keep(block, for: groupKey, budget: 10_000, root: 1)
        #expect(cache.usage.items == 202, "kept before the block's entry, it was counted whole")
        // Beside the block's entry holding the same items, the merged clusters only.
        cache.keep(resolved(block.items), for: resolvedKey, budget: 10_000, root: 1)
        #expect(cache.usage.items == 102)
        #expect(cache.latest(resolvedKey)?.items.sharesStorage(with: block.items) == true)
        // Items equal to the block's but of storage of their own count whole.
        cache.keep(resolved(items(100)), for: resolvedKey, budget: 10_000, root: 1)
        #expect(cache.usage.items == 202)
        cache.keep(resolved(block.items), for: resolvedKey, budget: 10_000, root: 1)
        // The block's entry restamped keeps its items: the entry after merges stays.
        cache.keep(block.restamped(BlockStamp(a: 5), nodes: []), for: groupKey, budget: 10_000, root: 1)
        #expect(cache.usage.items == 102 && cache.latest(resolvedKey) != nil)
        // Formed anew: the entry after merges, of the old items, goes.
        cache.keep(GroupCache.Entry(stamp: BlockStamp(a: 6), items: items(100)), for: groupKey, budget: 10_000, root: 1)
        #expect(cache.usage.items == 100 && cache.latest(resolvedKey) == nil)
        // Dropped when the budget overflows: both go together.
        let kept = cache.latest(groupKey)!
        cache.keep(resolved(kept.items), for: resolvedKey, budget: 10_000, root: 1)
        #expect(cache.usage.items == 102)
        // Each overflow drops about half: the block goes within a few dozen of them.
        for key in UInt64(1)...2_000 where cache.latest(groupKey) != nil {
            cache.keep(GroupCache.Entry(stamp: BlockStamp(a: key), items: items(10)), for: key, budget: 300, root: 1)
            #expect(cache.usage.items <= 300)
            #expect(cache.latest(resolvedKey) == nil || cache.latest(groupKey) != nil, "kept without the items it shares")
        }
        #expect(cache.latest(groupKey) == nil && cache.latest(resolvedKey) == nil, "the budget dropped the block")
        // Prepared (protected) entries dropped with their block are no longer protected:
        // in some of these tables the block's entry comes first and takes the other along.
        for trial in UInt32(0)..<24 {
            let cache = GroupCache()
            let groupKey = LiveClusterIndex.groupKey(zoom: 5, trial, 1)
            let resolvedKey = LiveClusterIndex.resolvedKey(zoom: 5, trial, 1)
            cache.keep(block, for: groupKey, budget: 10_000, root: 1)
            cache.keep(resolved(block.items), for: resolvedKey, budget: 10_000, root: 1)
            cache.protect([groupKey, resolvedKey])
            for key in UInt64(1)...100 where cache.latest(groupKey) != nil {
                cache.keep(GroupCache.Entry(stamp: BlockStamp(a: key), items: items(10)), for: key, budget: 50, root: 1)
                let kept = [groupKey, resolvedKey].filter { cache.latest($0) != nil }.count
                #expect(cache.protectedCount == kept, "trial \(trial): protected keys without entries")
            }
        }
    }

    /// Kept entries hold their items and cells without the room reserved while forming
    /// them: a block's cells are reserved for every contribution, often several times as
    /// many as the cells.
    @Test func keptEntriesHoldNoSpareRoom() {
        let feature = ClusterFeature(kind: .point(index: 0), coordinate: Coordinate(longitude: 0, latitude: 0))
        var items = LiveClusterIndex.Items()
        items.reserve(1_000, clusters: 1_000)
        for _ in 0..<10 { items.append(feature, at: SIMD2(0, 0)) }
        var cells = LiveClusterIndex.Grid(cells: [], histogram: [])
        cells.cells.reserveCapacity(5_000)
        cells.histogram.reserveCapacity(5_000)
        let cell = LiveClusterIndex.GridCell(x: 1, y: 2, aggregate: NodeAggregate(), slot: 3,
                                             histogramStart: 0, histogramEnd: 1)
        for _ in 0..<20 {
            cells.cells.append(cell)
            cells.histogram.append(PartitionTotal(partition: 4, count: 1, weight: 1))
        }
        let entry = GroupCache.Entry(stamp: BlockStamp(a: 1), items: items, cells: cells)
        #expect(entry.items.features.count == 10 && entry.items.features.capacity < 20)
        #expect(entry.items.positions.capacity < 20 && entry.items.groups.capacity < 20)
        #expect(entry.items.summaries.capacity < 20)
        #expect(entry.cells?.cells.count == 20 && (entry.cells?.cells.capacity ?? 0) < 40)
        #expect(entry.cells?.grid.histogram.count == 20 && (entry.cells?.packed.capacity ?? 0) < 80)
        #expect(entry.cells?.cells.last?.slot == 3 && entry.cells?.grid.histogram.last?.partition == 4)
    }

    /// Cells are grouped in the order of a sort by count, larger first, then by index:
    /// one counting pass where the counts span a narrow range, a sort of both in one key
    /// where they do not (counts up to 2^32 and beyond, which the key clamps).
    @Test(arguments: [1, 3, 40, 2_000, 1 << 40])
    func cellsAreOrderedByDecreasingCountThenIndex(largestCount: Int) {
        var generator = JSONValueTests.SplitMix64(seed: UInt64(largestCount))
        for size in [0, 1, 2, 63, 64, 65, 256, 1_000] {
            let cells = (0..<size).map { i in
                var aggregate = NodeAggregate()
                aggregate.count = 1 + Int(generator.next() % UInt64(largestCount))
                return LiveClusterIndex.GridCell(x: UInt32(i), y: 0, aggregate: aggregate, slot: 0,
                                                 histogramStart: 0, histogramEnd: 0)
            }
            let clamped = { (i: Int) in min(cells[i].aggregate.count, Int(UInt32.max)) }
            let expected = cells.indices.sorted { clamped($0) != clamped($1) ? clamped($0) > clamped($1) : $0 < $1 }
            #expect(LiveClusterIndex.byDecreasingCount(cells).map(Int.init) == expected,
                    "\(size) cells, counts up to \(largestCount)")
        }
    }

    /// Contributions fold into one cell each, in row-then-column order, with their totals
    /// summed and their counts by partition sorted and merged: whole nodes' counts
    /// (sorted, no repeats), single points' partitions, repeats across contributions, in
    /// any order; an index without partitions keeps no counts.
    @Test(arguments: [true, false])
    func contributionsFoldIntoCellsWithTheirCountsMerged(partitioned: Bool) throws {
        let index = try LiveClusterIndex(options: LiveClusterOptions(radiusPixels: 40, extent: 512), partitioned: partitioned)
        var generator = JSONValueTests.SplitMix64(seed: partitioned ? 5 : 6)
        for round in 0..<20 {
            var contributions: [LiveClusterIndex.Contribution] = []
            var expected: [UInt64: (count: Int, weight: Int, counts: [Int: (Int, Int)])] = [:]
            for _ in 0..<Int(generator.next() % 400) {
                let x = UInt32(generator.next() % 12), y = UInt32(generator.next() % 9)
                var aggregate = NodeAggregate()
                var histogram: [PartitionCount]?
                var partition = -1
                var counts: [Int: (Int, Int)] = [:]
                if partitioned, generator.next() % 2 == 0 {
                    // A node's counts: sorted, without repeats.
                    let partitions = Set((0..<(1 + Int(generator.next() % 6))).map { _ in Int(generator.next() % 30) }).sorted()
                    histogram = partitions.map { p in
                        PartitionCount(partition: Int32(p), count: Int32(1 + generator.next() % 9),
                                       weight: Int64(1 + generator.next() % 50))
                    }
                    for item in histogram! {
                        aggregate.count += Int(item.count)
                        aggregate.weight += Int(item.weight)
                        counts[Int(item.partition)] = (Int(item.count), Int(item.weight))
                    }
                } else {
                    aggregate.count = 1 + Int(generator.next() % 3)
                    aggregate.weight = aggregate.count + Int(generator.next() % 4)
                    if partitioned {
                        partition = Int(generator.next() % 30)
                        counts[partition] = (aggregate.count, aggregate.weight)
                    }
                }
                contributions.append(LiveClusterIndex.Contribution(x: x, y: y, partition: partition, aggregate: aggregate,
                                                                   slot: UInt32(round), histogram: histogram))
                let key = UInt64(y) << 32 | UInt64(x)
                var cell = expected[key] ?? (0, 0, [:])
                cell.count += aggregate.count
                cell.weight += aggregate.weight
                for (p, c) in counts {
                    let old = cell.counts[p] ?? (0, 0)
                    cell.counts[p] = (old.0 + c.0, old.1 + c.1)
                }
                expected[key] = cell
            }
            let grid = index.fold(contributions)
            #expect(grid.cells.map { UInt64($0.y) << 32 | UInt64($0.x) } == expected.keys.sorted())
            for cell in grid.cells {
                let want = try #require(expected[UInt64(cell.y) << 32 | UInt64(cell.x)])
                #expect(cell.aggregate.count == want.count && cell.aggregate.weight == want.weight)
                let got = grid.histogram[cell.histogramStart..<cell.histogramEnd].map { [$0.partition, $0.count, $0.weight] }
                #expect(got == want.counts.keys.sorted().map { [$0, want.counts[$0]!.0, want.counts[$0]!.1] },
                        "round \(round), cell \(cell.x), \(cell.y)")
            }
            #expect(partitioned || grid.histogram.isEmpty)
        }
    }

    /// A kept block's cells' counts by partition, packed, unpack to the same totals, in
    /// the same order, whatever their values: partitions up and down, counts and weights
    /// at their extremes (weights below the count, negative, `Int.min` and `Int.max`).
    @Test func keptCellsUnpackToTheTotalsTheyWereMadeFrom() {
        var generator = JSONValueTests.SplitMix64(seed: 17)
        let extremes = [0, 1, 127, 128, 16_383, 16_384, Int(UInt32.max), Int(Int32.max), -1, Int.min, Int.max]
        var grid = LiveClusterIndex.Grid(cells: [], histogram: [])
        var packedTotals = 0
        for c in 0..<300 {
            var cell = LiveClusterIndex.GridCell(x: UInt32(c % 17), y: UInt32(c / 17), aggregate: NodeAggregate(),
                                                 slot: UInt32(c), histogramStart: 0, histogramEnd: 0)
            var totals: [PartitionTotal] = []
            for _ in 0..<Int(generator.next() % 40) {
                let partition = Int(generator.next() % UInt64(LiveClusterIndex.maxPartitions))
                let count = generator.next() % 4 == 0 ? Int(UInt32.max) : Int(generator.next() % 1_000)
                let weight = generator.next() % 3 == 0 ? extremes[Int(generator.next() % UInt64(extremes.count))]
                    : count + Int(generator.next() % 5_000)
                totals.append(PartitionTotal(partition: partition, count: count, weight: weight))
            }
            packedTotals += totals.count
            grid.append(&cell, histogram: totals[...])
        }
        let kept = LiveClusterIndex.KeptCells(grid)
        let unpacked = kept.grid
        #expect(unpacked.cells.count == grid.cells.count && unpacked.histogram == grid.histogram)
        for (a, b) in zip(unpacked.cells, grid.cells) {
            #expect(a.x == b.x && a.y == b.y && a.slot == b.slot)
            #expect(Array(unpacked.histogram[a.histogramStart..<a.histogramEnd])
                    == Array(grid.histogram[b.histogramStart..<b.histogramEnd]))
        }
        print("kept cells: \(packedTotals) totals in \(kept.packed.count) bytes")
        #expect(kept.packed.count < packedTotals * 16)
    }

    /// A query over many blocks with a feature limit is formed part by part: without
    /// reaching the limit it answers exactly as formed in one grid (same features, same
    /// order, same summaries); past it, it may stop, with a prefix of that answer holding
    /// more features than the limit, and then says it is not complete.
    @Test func aLimitedQueryAnswersAsOneGridOrStopsWithAPrefix() throws {
        let options = LiveClusterOptions(radiusPixels: 40, extent: 512, minZoom: 0, maxZoom: 14, bucketSize: 4)
        var random = SeededRandom(seed: 77)
        var index = try LiveClusterIndex(options: options, partitioned: true)
        for slot in 0..<4_000 {
            var point = LiveClusterIndexTests.randomPoint(&random)
            if slot % 3 == 0 {
                point.coordinate = Coordinate(longitude: random.between(120, 135), latitude: random.between(30, 45))
            } else if slot % 3 == 1 {
                // Either side of the meridian, an edge of parts at every zoom: items that
                // merge across it.
                point.coordinate = Coordinate(longitude: slot % 2 == 0 ? 0.00002 : -0.00002,
                                              latitude: random.between(-5, 5))
            }
            try index.insert(point, slot: slot)
        }
        let boxes = [BoundingBox.world, try BoundingBox(west: 120, south: 30, east: 135, north: 45)]
        var checked = 0, stopped = 0
        for box in boxes {
            for zoom in 5...15 {
                for filter in [LiveFilter.all, LiveFilter(partitions: [0, 2])] {
                    let whole = try index.clusters(in: box, zoom: Double(zoom), filter: filter)
                    let parts = try index.clusters(in: box, zoom: Double(zoom), filter: filter, limit: .max)
                    #expect(whole.isComplete && parts.isComplete)
                    #expect(Self.items(parts) == Self.items(whole), "zoom \(zoom)")
                    #expect(parts.features.map(\.clusterID) == whole.features.map(\.clusterID), "zoom \(zoom)")
                    let n = whole.features.count
                    for limit in Set([0, 1, n / 3, max(0, n - 1), n]) {
                        // Views of few blocks are formed whole (and kept): complete whatever the limit.
                        let limited = try index.clusters(in: box, zoom: Double(zoom), filter: filter, limit: limit)
                        if limited.isComplete {
                            #expect(Self.items(limited) == Self.items(whole), "zoom \(zoom) limit \(limit)")
                        } else {
                            stopped += 1
                            #expect(n > limit && limited.features.count > limit, "zoom \(zoom) limit \(limit)")
                            #expect(Array(Self.items(whole).prefix(limited.features.count)) == Self.items(limited))
                        }
                    }
                    checked += 1
                }
            }
        }
        #expect(checked == 44)
        #expect(stopped > 20)
    }
}
