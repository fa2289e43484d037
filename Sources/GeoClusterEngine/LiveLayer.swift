import Dispatch
import GeoCluster
import GeoClusterWire
import GeoReachability
import Synchronization

/// One version of a live layer: its records and the live index over them. A value: a
/// write changes a copy, which shares every part it did not touch with the version that
/// readers may still hold, and publishes it (see ``LiveLayerStore``).
public struct LiveLayer: Sendable {
    public let name: String
    public let kind: LayerKind
    public private(set) var index: LiveClusterIndex
    /// Records by slot; `nil` for a free slot.
    private(set) var records = PersistentVector<LayerRecord?>()
    /// Slot of each record by id key.
    private var slots = IDSlots()
    /// Partition numbers: species of sightings, categories of places; 0 otherwise.
    private(set) var partitionNames: [String] = []
    /// Each partition name as a JSON string, quotes included, for answers written as text:
    /// name `k` is `partitionNameText[partitionNameEnds[k - 1]..<partitionNameEnds[k]]`
    /// (from 0 for the first). One array of bytes rather than an array per name, which an
    /// answer would retain and release for every name it writes.
    private(set) var partitionNameText: [UInt8] = []
    private(set) var partitionNameEnds: [Int] = []
    private(set) var partitionNumbers: [String: Int] = [:]
    /// The same numbers by the names as records keep them.
    private var partitionsByName: [RecordName: Int] = [:]
    /// Slots freed by deletes, reused by inserts.
    private var freeSlots: [Int] = []
    /// Incremented by every applied write batch.
    public internal(set) var version = 0
    /// The species a sightings layer knows by every name; filters and writes then take any
    /// of the names and refuse others. Without one, species are scientific names as stored,
    /// and any name is accepted.
    public var speciesChecklist: SpeciesChecklist?
    /// Licence and attribution shown in `layers` answers.
    public var metadata = LayerMetadata()
    /// Scientific names of the species whose sightings are shown at a generalised position
    /// (``LayerRecord/generalized()``) in every answer: clusters, leaves, tiles, nearby,
    /// records read by id.
    public let sensitiveSpecies: Set<String>
    /// ``sensitiveSpecies`` as records name them.
    private let sensitiveNames: Set<RecordName>
    /// Wall-clock seconds that checking the initial records and building the index over
    /// them took (0 for a layer created empty). Writes after that do not change it.
    public private(set) var buildSeconds = 0.0

    public init(name: String, kind: LayerKind, options: LiveClusterOptions = LiveClusterOptions(),
                sensitiveSpecies: Set<String> = []) throws(EngineError) {
        self.name = name
        self.kind = kind
        self.sensitiveSpecies = sensitiveSpecies
        sensitiveNames = Set(sensitiveSpecies.map { RecordName($0) })
        do {
            // Sightings and places count and filter by species or category: a tree per
            // partition pays for itself there.
            // Sightings' clusters show their species count and top species only (places
            // show every category): their summaries keep no more.
            self.index = try LiveClusterIndex(options: options, partitioned: kind == .sightings || kind == .places,
                                              partitionsPerSummary: kind == .sightings ? Self.topSpeciesShown : nil)
        } catch {
            throw .core(error, field: "options")
        }
    }

    /// A layer holding `records`, which must have distinct ids. Each record is checked as
    /// ``insert(_:index:)`` checks it (the first bad one throws) and takes the slot of its
    /// position; the index is then built in one go rather than by an insert per record.
    /// It is built on two cores when there are two (see the steps below).
    public init(name: String, kind: LayerKind, records: [LayerRecord],
                options: LiveClusterOptions = LiveClusterOptions(), sensitiveSpecies: Set<String> = []) throws(EngineError) {
        try self.init(name: name, kind: kind, records: RecordBatches(records), options: options,
                      sensitiveSpecies: sensitiveSpecies)
    }

    /// The same, with the records in the batches a store's rows were validated in.
    init(name: String, kind: LayerKind, records: RecordBatches,
         options: LiveClusterOptions = LiveClusterOptions(), sensitiveSpecies: Set<String> = []) throws(EngineError) {
        try self.init(name: name, kind: kind, options: options, sensitiveSpecies: sensitiveSpecies)
        let start = ContinuousClock.now
        let parts = BuiltParts(layer: self)
        let sensitive = sensitiveNames
        // Six steps on the cores there are: checking the points of each half of the
        // records, then sorting them for the index; the id map with the table of records;
        // then the combined tree and the trees per partition, which need the sorted
        // points. Each thread takes the next step not yet taken, and a step waits only for
        // steps taken before it, which threads are doing: nothing waits for a step that
        // no thread runs, and one thread alone runs them all in turn.
        let checked = DispatchGroup(), sorted = DispatchGroup()
        checked.enter()
        checked.enter()
        sorted.enter()
        let middle = records.count / 2
        let nextStep = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            while true {
                let step = nextStep.add(1, ordering: .relaxed).oldValue
                switch step {
                case 0, 1:
                    let half = step == 0 ? 0 ..< middle : middle ..< records.count
                    let points = Self.checkedPoints(records, half, sensitiveSpecies: sensitive)
                    if step == 0 { parts.firstHalf = points } else { parts.secondHalf = points }
                    checked.leave()
                case 2:
                    checked.wait()
                    parts.pending = parts.layer.startLoad([parts.firstHalf, parts.secondHalf])
                    parts.firstHalf = CheckedPoints()
                    parts.secondHalf = CheckedPoints()
                    sorted.leave()
                case 3:
                    parts.ids = IDSlots.build(records)
                    // The records' leaves become the table's, where every record of a
                    // leaf is shown as it is (no note, no sensitive species); a leaf with
                    // one that is not is copied with each record as shown.
                    let leaves = records.leaves.map { leaf in
                        leaf.contains { Self.isShownAsIs($0!, sensitiveSpecies: sensitive) == false }
                            ? leaf.map { Self.shown($0!, sensitiveSpecies: sensitive) as LayerRecord? } : leaf
                    }
                    parts.records = PersistentVector(leafItems: leaves)
                        ?? PersistentVector(records.lazy.map { Self.shown($0, sensitiveSpecies: sensitive) as LayerRecord? })
                case 4, 5:
                    sorted.wait()
                    guard case let .loading(pending) = parts.pending else { continue }
                    if step == 4 { parts.combined = pending.tree(0) } else { parts.partitions = pending.tree(1) }
                default:
                    return
                }
            }
        }
        let duplicate = parts.ids.firstDuplicate
        func duplicateID(_ index: Int) -> EngineError {
            .duplicateID(layer: name, index: index, id: records[index].idKey)
        }
        switch parts.pending {
        case let .invalid(slot, error):
            // One by one, a record's id is checked before its position: a duplicate id up
            // to the invalid record is the error.
            if let duplicate, duplicate <= slot { throw duplicateID(duplicate) }
            throw .core(error, field: "records[\(slot)]")
        case .loading:
            if let duplicate { throw duplicateID(duplicate) }
        }
        self = parts.layer
        if let combined = parts.combined, let partitions = parts.partitions {
            index.finishLoad(combined: combined, partitions: partitions)
        }
        slots = parts.ids.slots
        self.records = parts.records
        buildSeconds = (ContinuousClock.now - start).inSeconds
    }

    /// What the threads of the bulk init build, each part written by one of them and read
    /// after they have ended (the halves also by the sorting step and `pending` by the
    /// trees' steps, after the groups they wait for are left).
    private final class BuiltParts: @unchecked Sendable {
        /// The layer whose index loads the points (its partition numbers given on the way).
        var layer: LiveLayer
        /// Set by the second thread before it ends; the value here is never read.
        var pending = PendingLoad.invalid(slot: 0, error: .invalidOptions(reason: "not loaded"))
        var ids = (slots: IDSlots(), firstDuplicate: Int?.none)
        var records = PersistentVector<LayerRecord?>()
        var combined: LiveClusterIndex.BuiltTrees?
        var partitions: LiveClusterIndex.BuiltTrees?
        /// The points of each half of the records, each written by its own step.
        var firstHalf = CheckedPoints(), secondHalf = CheckedPoints()

        init(layer: LiveLayer) { self.layer = layer }
    }

    private enum PendingLoad {
        /// The first record whose point the index refuses, and why.
        case invalid(slot: Int, error: GeoClusterError)
        case loading(LiveClusterIndex.PendingTrees)
    }

    /// The points of some records as shown, each position checked as an insert checks
    /// it, with partitions numbered by their names' first appearance among these records
    /// (``startLoad(_:)`` numbers them for the layer and checks them); the checking stops
    /// at the first position refused.
    struct CheckedPoints: Sendable {
        var points: [LivePoint] = []
        var partitionNames: [RecordName] = []
        var refused: (slot: Int, error: GeoClusterError)?
    }

    private static func checkedPoints(_ records: RecordBatches, _ slots: Range<Int>,
                                      sensitiveSpecies: Set<RecordName>) -> CheckedPoints {
        var checked = CheckedPoints()
        checked.points.reserveCapacity(slots.count)
        var numbers: [RecordName: Int] = [:]
        for slot in slots {
            let given = records[slot]
            let point = shownPoint(given, sensitiveSpecies: sensitiveSpecies) { name in
                if let number = numbers[name] { return number }
                numbers[name] = checked.partitionNames.count
                checked.partitionNames.append(name)
                return checked.partitionNames.count - 1
            }
            do {
                try LiveClusterIndex.validatePosition(point, slot: slot)
            } catch {
                checked.refused = (slot, error)
                return checked
            }
            checked.points.append(point)
        }
        return checked
    }

    /// The points of `parts` (the records in order, each part starting where the one
    /// before it ends), their partitions numbered for the layer as inserting the records
    /// one by one would and checked, and the first step of loading them into the empty
    /// index. The first point refused in record order is the error, as one by one it
    /// would be (a position before a partition), and nothing is loaded then.
    private mutating func startLoad(_ parts: [CheckedPoints]) -> PendingLoad {
        var points: [LivePoint] = []
        points.reserveCapacity(parts.reduce(0) { $0 + $1.points.count })
        for part in parts {
            let numbers = part.partitionNames.map { partition($0) }
            for var point in part.points {
                if !numbers.isEmpty { point.partition = numbers[point.partition] }
                do {
                    try LiveClusterIndex.validatePartition(point)
                } catch {
                    return .invalid(slot: points.count, error: error)
                }
                points.append(point)
            }
            if let refused = part.refused { return .invalid(slot: refused.slot, error: refused.error) }
        }
        return .loading(index.startLoad(points))
    }

    public var count: Int { index.count }

    /// The record with this id key, if any.
    public func record(idKey: String) -> LayerRecord? {
        slot(idKey: idKey).flatMap { records[$0] }
    }

    /// The index slot of the record with this id key, if any.
    public func slot(idKey: String) -> Int? {
        slots.slot(of: idKey) { slot in records[slot]?.idKey }
    }

    /// The record at a slot of the index.
    public func record(atSlot slot: Int) -> LayerRecord? {
        slot >= 0 && slot < records.count ? records[slot] : nil
    }

    // MARK: Changes

    /// Adds a record whose id is new; `index` is its position in the batch, for errors.
    mutating func insert(_ given: LayerRecord, index position: Int) throws(EngineError) {
        let record = shown(given)
        if !record.idKey.isEmpty, self.slot(idKey: record.idKey) != nil {
            throw .duplicateID(layer: name, index: position, id: record.idKey)
        }
        let slot = freeSlots.popLast() ?? index.slotCount
        let point = livePoint(record)
        do {
            try index.insert(point, slot: slot)
        } catch {
            if slot != index.slotCount { freeSlots.append(slot) }
            throw .core(error, field: "records[\(position)]")
        }
        if slot == records.count { records.append(record) } else { records[slot] = record }
        // A record without an id (allowed in generic point layers) cannot be addressed by
        // writes: it has no key.
        if !record.idKey.isEmpty { slots.insert(record.idKey, slot: slot) }
    }

    /// Adds a record or replaces the one with the same id (moved, changed or both).
    mutating func upsert(_ given: LayerRecord, index position: Int) throws(EngineError) {
        guard !given.idKey.isEmpty, let slot = self.slot(idKey: given.idKey) else {
            try insert(given, index: position)
            return
        }
        let record = shown(given)
        do {
            try index.update(livePoint(record), slot: slot)
        } catch {
            throw .core(error, field: "records[\(position)]")
        }
        records[slot] = record
    }

    /// The record as answers show it: generalised when its species is sensitive, without
    /// its note.
    private func shown(_ record: LayerRecord) -> LayerRecord {
        Self.shown(record, sensitiveSpecies: sensitiveNames)
    }

    /// Whether ``shown(_:sensitiveSpecies:)`` gives `record` back unchanged.
    private static func isShownAsIs(_ record: LayerRecord, sensitiveSpecies: Set<RecordName>) -> Bool {
        guard case let .sighting(species, _, _) = record.fields else { return true }
        return !record.hasNote && !sensitiveSpecies.contains(species)
    }

    private static func shown(_ record: LayerRecord, sensitiveSpecies: Set<RecordName>) -> LayerRecord {
        guard case let .sighting(species, _, _) = record.fields else { return record }
        return (sensitiveSpecies.contains(species) ? record.generalized() : record).withholdingNote()
    }

    /// Removes the record with this id key.
    mutating func delete(idKey: String, index position: Int) throws(EngineError) {
        guard let slot = self.slot(idKey: idKey) else { throw .unknownID(layer: name, index: position, id: idKey) }
        index.remove(slot: slot)
        records[slot] = nil
        slots.remove(idKey)
        freeSlots.append(slot)
    }

    /// The index's view of a record: where it is, its partition and the values that
    /// filters and aggregates read.
    mutating func livePoint(_ record: LayerRecord) -> LivePoint {
        Self.livePoint(record) { partition($0) }
    }

    /// The point of `record`, its species' or category's partition numbered by `partition`.
    private static func livePoint(_ record: LayerRecord, partition: (RecordName) -> Int) -> LivePoint {
        switch record.fields {
        case let .sighting(species, count, observedAt):
            return LivePoint(coordinate: record.coordinate, partition: partition(species), weight: Int(count),
                             time: observedAt.epochSeconds, timeTag: observedAt.offsetTag, day: observedAt.localDay,
                             month: observedAt.localMonth)
        case let .place(_, category, _):
            return LivePoint(coordinate: record.coordinate, partition: partition(category))
        case .station, .point:
            return LivePoint(coordinate: record.coordinate)
        }
    }

    /// The point of the record as shown (``shown(_:)``), without building the shown
    /// record: of what the index reads, only a sensitive sighting's position differs.
    private static func shownPoint(_ record: LayerRecord, sensitiveSpecies: Set<RecordName>,
                                   partition: (RecordName) -> Int) -> LivePoint {
        var point = livePoint(record, partition: partition)
        if case let .sighting(species, _, _) = record.fields, sensitiveSpecies.contains(species) {
            point.coordinate = LayerRecord.generalized(record.coordinate)
        }
        return point
    }

    private mutating func partition(_ recordName: RecordName) -> Int {
        if let number = partitionsByName[recordName] { return number }
        let name = recordName.text
        let number = partitionNames.count
        partitionNames.append(name)
        JSONValue.encodeString(name, into: &partitionNameText)
        partitionNameEnds.append(partitionNameText.count)
        partitionNumbers[name] = number
        partitionsByName[recordName] = number
        return number
    }

    // MARK: Filters

    /// The index filter for a request's filter, after checking that this layer's kind
    /// takes each of its fields.
    public func liveFilter(_ filter: LayerFilter) throws(EngineError) -> LiveFilter {
        func require(_ field: String, _ wanted: LayerKind, present: Bool) throws(EngineError) {
            guard present, kind != wanted else { return }
            throw .invalidFilter(field, reason: "filters \(wanted.rawValue) layers; layer \"\(name)\" holds \(kind.rawValue)")
        }
        try require("species", .sightings, present: filter.species != nil)
        try require("from", .sightings, present: filter.from != nil)
        try require("to", .sightings, present: filter.to != nil)
        try require("months", .sightings, present: filter.months != nil)
        try require("category", .places, present: filter.categories != nil)
        try require("line", .stations, present: filter.line != nil)
        try require("observer", .sightings, present: filter.observer != nil)
        try require("top_by", .sightings, present: filter.topBy != nil)

        var result = LiveFilter()
        if let names = filter.species, let checklist = speciesChecklist {
            var partitions: [Int] = []
            for name in names {
                guard let scientific = checklist.scientificName(name) else {
                    throw .unknownSpecies(field: "species", layer: self.name, name: name)
                }
                if let partition = partitionNumbers[scientific] { partitions.append(partition) }
            }
            result.partitions = partitions
        } else if let names = filter.species ?? filter.categories {
            // A name with no point yet matches nothing, which is not an error. A place
            // category may also be given as its label (카페, Cafe) or in capitals.
            result.partitions = names.compactMap { name in
                partitionNumbers[name] ?? (kind != .places ? nil
                    : partitionNumbers[name.lowercased()] ?? ReachabilityLanguage.category(labelled: name).flatMap { partitionNumbers[$0] })
            }
        }
        if filter.from != nil || filter.to != nil {
            result.days = (filter.from?.day ?? Int32.min)...(filter.to?.day ?? Int32.max)
        }
        if let months = filter.months {
            result.months = months.reduce(UInt16(0)) { $0 | 1 << UInt16($1) }
        }
        if let line = filter.line {
            let records = self.records
            result.predicate = { slot in
                guard case let .station(_, lines)? = records[slot]?.fields else { return false }
                return lines.contains(line)
            }
        }
        if let observer = filter.observer {
            // By number: a name no record was given matches none.
            let records = self.records, number = SharedName.existing(observer)
            result.predicate = { slot in number != nil && records[slot]?.observer == number }
        }
        return result
    }

    // MARK: Output

    /// The GeoJSON feature of a point: the record's feature, parsed from its text.
    func pointFeature(slot: Int) -> JSONValue {
        records.withElement(at: slot) { $0.pointee?.feature ?? .null }
    }

    /// Appends the text of a point's GeoJSON feature (`null` for a free slot). Read in
    /// place: a copy of the whole record would retain and release each of its parts.
    func encodePointFeature(slot: Int, into output: inout [UInt8]) {
        records.withElement(at: slot) { record in
            // Read in place: binding the record would copy it, retaining and releasing its
            // references once per point of every answer.
            if record.pointee?.appendFeatureText(to: &output) == nil { output += "null".utf8 }
        }
    }

    /// What a vector tile shows of a point: its feature's `properties` and its id.
    func tileProperties(slot: Int) -> (properties: JSONValue, id: JSONValue?) {
        records.withElement(at: slot) { record in
            guard let record = record.pointee else { return (.null, nil) }
            return (record.properties, record.idJSON == .null ? nil : record.idJSON)
        }
    }

    /// Aggregates of a cluster as an object, for tiles (geojson-vt and vector tiles): the
    /// members that ``encodeAggregateMembers(_:counts:ranking:into:)`` writes for cluster answers. Built
    /// directly rather than read back from that text, which cost live tiles a quarter of
    /// their time; `AnswerEncodingTests` keeps the two equal.
    func aggregateProperties(_ summary: LiveSummary, counts: ArraySlice<PartitionTotal>, ranking: SpeciesRanking) -> JSONObject {
        var properties = JSONObject()
        switch kind {
        case .sightings:
            properties["individuals"] = .number(Double(summary.weight))
            properties["species_count"] = .number(Double(summary.partitionTotal))
            properties["top_species"] = .array(ranking.top(counts, Self.topSpeciesShown).map { item in
                var object: JSONObject = ["species": .string(partitionNames[item.partition]),
                                          "count": .number(Double(item.count))]
                if ranking == .individuals { object["individuals"] = .number(Double(item.weight)) }
                return .object(object)
            })
            if let slot = summary.latestSlot, case let .sighting(_, _, observedAt)? = records[slot]?.fields {
                properties["latest_observed_at"] = .string(observedAt.text)
            }
        case .places:
            var categories = JSONObject()
            for item in counts {
                categories[partitionNames[item.partition]] = .number(Double(item.count))
            }
            properties["categories"] = .object(categories)
        case .stations, .points:
            break
        }
        return properties
    }

    /// Appends a cluster's aggregates, added to supercluster's cluster properties, as
    /// members each followed by a comma: for sightings `individuals`, `species_count`,
    /// `top_species` (up to 3, most sightings first, or most individuals with their
    /// `individuals`) and `latest_observed_at`; for places `categories` (points per category).
    func encodeAggregateMembers(_ summary: LiveSummary, counts: ArraySlice<PartitionTotal>, ranking: SpeciesRanking,
                                into output: inout [UInt8]) {
        switch kind {
        case .sightings:
            encodeSightingAggregates(summary, counts: counts, ranking: ranking, into: &output)
        case .places:
            output.appendASCII(#""categories":{"#)
            for (k, item) in counts.enumerated() {
                if k > 0 { output.append(UInt8(ascii: ",")) }
                output += partitionNameText[nameRange(item.partition)]
                output.append(UInt8(ascii: ":"))
                JSONValue.encodeWholeNumber(item.count, into: &output)
            }
            output.appendASCII("},")
        case .stations, .points:
            break
        }
    }

    /// Where partition `k`'s name is in ``partitionNameText``.
    private func nameRange(_ k: Int) -> Range<Int> {
        (k == 0 ? 0 : partitionNameEnds[k - 1])..<partitionNameEnds[k]
    }

    /// The sightings members of ``encodeAggregateMembers(_:counts:ranking:into:)``, written to
    /// scratch memory and appended in one copy: a view at 10M sightings writes a thousand
    /// clusters, and appending each literal, name and number to the answer apart took
    /// most of the time these members cost.
    private func encodeSightingAggregates(_ summary: LiveSummary, counts: ArraySlice<PartitionTotal>,
                                          ranking: SpeciesRanking, into output: inout [UInt8]) {
        let top = ranking.top(counts, Self.topSpeciesShown)
        // Literals: 49 bytes, 37 per species, 22 for the latest time's name and comma.
        var room = 49 + 22 + Timestamp.maxJSONLength + 2 * JSONValue.maxNumberBytes
        for item in top { room += 37 + 2 * JSONValue.maxNumberBytes + nameRange(item.partition).count }
        let wroteLatest = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { scratch in
            partitionNameText.withUnsafeBufferPointer { names in
                let start = scratch.baseAddress!
                var text = start.writeASCII(#""individuals":"#)
                text = JSONValue.writeWholeNumber(summary.weight, to: text)
                text = text.writeASCII(#","species_count":"#)
                text = JSONValue.writeWholeNumber(summary.partitionTotal, to: text)
                text = text.writeASCII(#","top_species":["#)
                for (k, item) in top.enumerated() {
                    text = text.writeASCII(k == 0 ? #"{"species":"# : #",{"species":"#)
                    let name = UnsafeBufferPointer(rebasing: names[nameRange(item.partition)])
                    if let base = name.baseAddress { text.update(from: base, count: name.count) }
                    text += name.count
                    text = text.writeASCII(#","count":"#)
                    text = JSONValue.writeWholeNumber(item.count, to: text)
                    if ranking == .individuals {
                        text = text.writeASCII(#","individuals":"#)
                        text = JSONValue.writeWholeNumber(item.weight, to: text)
                    }
                    text = text.writeASCII("}")
                }
                text = text.writeASCII("],")
                // Written from the summary where its tag allows (nearly always): reading
                // the record of each cluster's latest sighting took a third of a view's
                // time at 10M sightings, waiting on memory no cache held.
                var wroteLatest = summary.latestSlot == nil
                if !wroteLatest,
                   let end = Timestamp.writeJSON(epochSeconds: summary.latestTime, offsetTag: summary.latestTimeTag,
                                                 to: text.writeASCII(#""latest_observed_at":"#)) {
                    text = end.writeASCII(",")
                    wroteLatest = true
                }
                output.append(contentsOf: UnsafeBufferPointer(start: start, count: text - start))
                return wroteLatest
            }
        }
        guard !wroteLatest, let slot = summary.latestSlot else { return }
        records.withElement(at: slot) { record in
            guard case let .sighting(_, _, observedAt)? = record.pointee?.fields else { return }
            output.appendASCII(#""latest_observed_at":"#)
            observedAt.encodeJSON(into: &output)
            output.append(UInt8(ascii: ","))
        }
    }

    /// Species a sightings cluster names in `top_species`.
    static let topSpeciesShown = 3

    /// Summary for `layers` answers.
    public var summary: JSONValue {
        let o = index.options
        var object: JSONObject = ["name": .string(name), "kind": .string(kind.rawValue), "algorithm": "live",
                                  "count": .number(Double(count))]
        object["bounds"] = index.bounds.map { .array($0.map(JSONValue.number)) } ?? .null
        object["version"] = .number(Double(version))
        var options: JSONObject = ["radius": .number(o.radiusPixels), "extent": .number(Double(o.extent)),
                                   "min_zoom": .number(Double(o.minZoom)), "max_zoom": .number(Double(o.maxZoom)),
                                   "min_points": .number(Double(o.minPoints))]
        if let keptItems = o.keptItems { options["kept_items"] = .number(Double(keptItems)) }
        object["options"] = .object(options)
        return metadata.adding(to: .object(object))
    }
}
