import Foundation
import GeoCluster
import GeoClusterWire
import GeoReachability

/// Loads layers from files: a data directory described by `layers.json`, or single
/// GeoJSON files.
///
/// `layers.json` is `{"layers":[{"name":…,"kind":…,"file":…,"options":{…}}]}`; `file` is
/// relative to the directory, `options` (optional) takes `algorithm` (`live` or `radius`),
/// `radius`, `extent`, `min_zoom`, `max_zoom` and `min_points`, and for the live algorithm
/// `kept_items` (``LiveClusterOptions/keptItems``). A live sightings layer
/// may name a `species_checklist` file and list `sensitive_species` (by any name of the
/// checklist), whose sightings every answer shows at a generalised position. Other
/// members (description, licence) are documentation.
///
/// Sightings, places and stations layers use the live algorithm unless told otherwise;
/// generic `points` layers use the radius algorithm (supercluster-compatible ids).
public enum LayerCatalog {
    public static let manifestName = "layers.json"

    /// Every layer listed in `directory/layers.json`.
    public static func load(directory: String) throws(EngineError) -> [EngineLayer] {
        var layers: [EngineLayer] = []
        for spec in try specs(directory: directory) {
            layers.append(try load(spec))
        }
        return layers
    }

    /// A layer as its spec describes it, from its file (without a store).
    public static func load(_ spec: LayerSpec) throws(EngineError) -> EngineLayer {
        try load(file: spec.path, name: spec.name, kind: spec.kind, algorithm: spec.algorithm, options: spec.options,
                 keptItems: spec.keptItems, speciesChecklist: spec.speciesChecklist, sensitiveSpecies: spec.sensitiveSpecies)
            .described(spec.metadata)
    }

    /// A layer as `layers.json` (or `--layer-file`) describes it, before it is loaded.
    public struct LayerSpec: Sendable {
        public var name: String
        public var kind: LayerKind
        public var algorithm: Algorithm
        public var options: RadiusClusterOptions
        /// The GeoJSON FeatureCollection file of the layer's records. With a store it only
        /// seeds the layer, and may be absent once the store holds the layer.
        public var path: String
        /// A sightings layer's `species_checklist`, read.
        public var speciesChecklist: SpeciesChecklist?
        /// A sightings layer's `sensitive_species`, by scientific name.
        public var sensitiveSpecies: Set<String>
        /// The layer's `license` and `attribution`, which `layers` answers carry.
        public var metadata = LayerMetadata()
        /// A live layer's `kept_items` option (``LiveClusterOptions/keptItems``).
        public var keptItems: Int?

        /// The options of the layer as a live layer.
        var liveOptions: LiveClusterOptions { LiveClusterOptions(options, keptItems: keptItems) }

        public init(name: String, kind: LayerKind, algorithm: Algorithm? = nil,
                    options: RadiusClusterOptions = RadiusClusterOptions(), path: String,
                    speciesChecklist: SpeciesChecklist? = nil, sensitiveSpecies: Set<String> = []) {
            self.name = name
            self.kind = kind
            self.algorithm = algorithm ?? .default(for: kind)
            self.options = options
            self.path = path
            self.speciesChecklist = speciesChecklist
            self.sensitiveSpecies = sensitiveSpecies
        }
    }

    /// The layers listed in `directory/layers.json`, checked but not loaded.
    public static func specs(directory: String) throws(EngineError) -> [LayerSpec] {
        let manifestPath = directory + "/" + manifestName
        let manifest = try readJSON(manifestPath)
        guard let entries = manifest["layers"]?.arrayValue else {
            throw .invalidLayerSource(path: manifestPath, reason: "expected {\"layers\": [...]}")
        }
        var specs: [LayerSpec] = []
        for (i, entry) in entries.enumerated() {
            let place = "\(manifestPath), layers[\(i)]"
            guard let name = entry["name"]?.stringValue, !name.isEmpty else {
                throw .invalidLayerSource(path: place, reason: "\"name\" must be a non-empty string")
            }
            guard let file = entry["file"]?.stringValue, !file.isEmpty else {
                throw .invalidLayerSource(path: place, reason: "\"file\" must be a non-empty string")
            }
            let kindName = entry["kind"]?.stringValue ?? LayerKind.points.rawValue
            guard let kind = LayerKind(rawValue: kindName) else {
                let known = LayerKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidLayerSource(path: place, reason: "unknown kind \"\(kindName)\" (known: \(known))")
            }
            let algorithm = try algorithm(entry["options"], kind: kind, place: place)
            let options = try clusterOptions(entry["options"], place: place)
            let keptItems = try keptItems(entry["options"], algorithm: algorithm, options: options, place: place)
            var checklist: SpeciesChecklist?
            if let checklistFile = entry["species_checklist"]?.stringValue {
                guard kind == .sightings, algorithm == .live else {
                    throw .invalidLayerSource(path: place, reason: "\"species_checklist\" applies to live sightings layers")
                }
                let path = directory + "/" + checklistFile
                checklist = try SpeciesChecklist(json: try readJSON(path), path: path)
            }
            let sensitive = try sensitiveSpecies(entry["sensitive_species"], kind: kind, algorithm: algorithm,
                                                 checklist: checklist, place: place)
            var spec = LayerSpec(name: name, kind: kind, algorithm: algorithm, options: options,
                                 path: directory + "/" + file, speciesChecklist: checklist, sensitiveSpecies: sensitive)
            var zone: String?
            if let value = entry["time_zone"], !value.isNull {
                guard let name = value.stringValue, TimeZone(identifier: name) != nil else {
                    throw .invalidLayerSource(path: place, reason: "\"time_zone\" must be an IANA time zone such as \"Asia/Seoul\", got \(value.jsonString)")
                }
                zone = name
            }
            spec.metadata = LayerMetadata(license: entry["license"]?.stringValue, attribution: entry["attribution"]?.stringValue,
                                          timeZone: zone)
            spec.keptItems = keptItems
            specs.append(spec)
        }
        return specs
    }

    /// The scientific names of a manifest entry's `sensitive_species`: an array of names,
    /// each known to the layer's checklist by any of its names (taken as given without a
    /// checklist).
    static func sensitiveSpecies(_ value: JSONValue?, kind: LayerKind, algorithm: Algorithm,
                                 checklist: SpeciesChecklist?, place: String) throws(EngineError) -> Set<String> {
        guard let value, !value.isNull else { return [] }
        guard kind == .sightings, algorithm == .live else {
            throw .invalidLayerSource(path: place, reason: "\"sensitive_species\" applies to live sightings layers")
        }
        guard let names = value.arrayValue else {
            throw .invalidLayerSource(path: place, reason: "\"sensitive_species\" must be an array of species names")
        }
        var scientific: Set<String> = []
        for (i, item) in names.enumerated() {
            guard let name = item.stringValue, !name.isEmpty else {
                throw .invalidLayerSource(path: place, reason: "sensitive_species[\(i)] must be a non-empty string")
            }
            guard let checklist else {
                scientific.insert(name)
                continue
            }
            guard let known = checklist.scientificName(name) else {
                throw .invalidLayerSource(path: place, reason: "sensitive_species[\(i)] \"\(name)\" is not on the species checklist")
            }
            scientific.insert(known)
        }
        return scientific
    }

    /// Every walking network listed under `networks` in `directory/layers.json`, by name:
    /// `{"networks":[{"name":…,"file":…}]}` with `file` (relative to the directory) a walking
    /// network document (Data/README.md). Other members are documentation. A manifest without
    /// `networks` has none.
    public static func loadNetworks(directory: String) throws(EngineError) -> [String: WalkingNetwork] {
        let manifestPath = directory + "/" + manifestName
        let manifest = try readJSON(manifestPath)
        guard let entries = manifest["networks"], !entries.isNull else { return [:] }
        guard let list = entries.arrayValue else {
            throw .invalidLayerSource(path: manifestPath, reason: "\"networks\" must be an array")
        }
        var networks: [String: WalkingNetwork] = [:]
        for (i, entry) in list.enumerated() {
            let place = "\(manifestPath), networks[\(i)]"
            guard let name = entry["name"]?.stringValue, !name.isEmpty else {
                throw .invalidLayerSource(path: place, reason: "\"name\" must be a non-empty string")
            }
            guard let file = entry["file"]?.stringValue, !file.isEmpty else {
                throw .invalidLayerSource(path: place, reason: "\"file\" must be a non-empty string")
            }
            let path = directory + "/" + file
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .invalidLayerSource(path: path, reason: "cannot be read")
            }
            let network: WalkingNetwork
            do {
                network = try WalkingNetwork(json: [UInt8](data))
            } catch {
                throw .invalidLayerSource(path: path, reason: error.description)
            }
            guard networks.updateValue(network, forKey: name) == nil else {
                throw .invalidLayerSource(path: place, reason: "two networks are named \"\(name)\"")
            }
        }
        return networks
    }

    /// The clustering algorithms a layer can use.
    public enum Algorithm: String, Sendable {
        /// Typed records, writes, filters and aggregates.
        case live
        /// Built once, output-compatible with supercluster.
        case radius

        public static func `default`(for kind: LayerKind) -> Algorithm { kind == .points ? .radius : .live }
    }

    /// One layer from a GeoJSON FeatureCollection file. Every record is validated against
    /// the kind's schema; the first bad one fails the load, naming its feature and field.
    public static func load(file path: String, name: String, kind: LayerKind = .points, algorithm: Algorithm? = nil,
                            options: RadiusClusterOptions = RadiusClusterOptions(), keptItems: Int? = nil,
                            speciesChecklist: SpeciesChecklist? = nil,
                            sensitiveSpecies: Set<String> = []) throws(EngineError) -> EngineLayer {
        switch algorithm ?? .default(for: kind) {
        case .radius:
            return .radius(try RadiusLayer(name: name, kind: kind, features: try readFeatures(path), options: options))
        case .live:
            let records = try records(inFile: path, kind: kind, layer: name)
            var layer = try LiveLayer(name: name, kind: kind, records: records,
                                      options: LiveClusterOptions(options, keptItems: keptItems),
                                      sensitiveSpecies: sensitiveSpecies)
            layer.speciesChecklist = speciesChecklist
            return .live(LiveLayerStore(layer))
        }
    }

    /// The records of a GeoJSON FeatureCollection file, made on every core: the file is
    /// read whole, its features found by ``FeatureSpans`` and each parsed into a record on
    /// its own, its tree freed as soon as the record (which keeps the feature as text) is
    /// made, straight into the leaves of the layer's table of records, and the file's
    /// pages given back as their features are done with. A file the scan
    /// does not take, or a feature that does not parse, is parsed whole instead, as before,
    /// for its exact error.
    static func records(inFile path: String, kind: LayerKind, layer: String) throws(EngineError) -> RecordBatches {
        var bytes = try readBytes(path)
        if let spans = FeatureSpans.scan(bytes) {
            do throws(FeatureFailure) {
                return try records(bytes, spans: spans, kind: kind, layer: layer)
            } catch {
                if case let .record(error) = error { throw error }
            }
            // The text read so far was given back: the whole parse reads the file again.
            bytes = try readBytes(path)
        }
        var features = try readFeatures(path, bytes: bytes)
        return RecordBatches(batches: [try RecordBatches.leaves(count: features.count) { i throws(EngineError) in
            defer { features[i] = .null }
            return try LayerRecord(json: features[i], kind: kind, layer: layer, index: i)
        }])
    }

    /// The records of the features at `spans` of a file's `bytes`, made on every core. The
    /// pages of the text of each run of features made into records are given back to the
    /// system as the run ends (``releasePages(at:_:)``): records copy what they keep, and
    /// the text is not read again, so the file (2.5 GB for 10M sightings) is not held
    /// whole beside the records it becomes. After a failure the bytes are not all there;
    /// the array's storage must be this call's alone (no copy of it read elsewhere).
    private static func records(_ bytes: [UInt8], spans: [Range<Int>], kind: LayerKind,
                                layer: String) throws(FeatureFailure) -> RecordBatches {
        let made = bytes.withUnsafeBufferPointer { buffer in
            let base = UInt(bitPattern: buffer.baseAddress)
            return Result { () throws(FeatureFailure) in
                try RecordBatches.concurrentLeaves(count: spans.count, recordsDone: { done in
                    guard let last = done.last else { return }
                    releasePages(at: base, spans[done.lowerBound].lowerBound ..< spans[last].upperBound)
                }) { i throws(FeatureFailure) in
                    // A feature written as answers write it is read in place (the record
                    // copies its text's parts from the file's bytes); any other is parsed.
                    if let record = LayerRecord(compactFeature: bytes[spans[i]], kind: kind, layer: layer, index: i,
                                                maxDepth: featureDepth) {
                        return record
                    }
                    let text = Array(bytes[spans[i]])
                    let json: JSONValue
                    do {
                        json = try JSONValue.parse(text[...], maxDepth: featureDepth)
                    } catch {
                        throw .unparsable
                    }
                    do throws(EngineError) {
                        // A feature already written as answers write it keeps its text.
                        return try LayerRecord(json: json, kind: kind, layer: layer, index: i,
                                               text: JSONValue.isWrittenAsEncoded(text[...]) ? text : nil)
                    } catch {
                        throw .record(error)
                    }
                }
            }
        }
        return RecordBatches(batches: [try made.get()])
    }

    /// Gives the whole pages of `range` of the bytes at address `base` back to the system
    /// (`madvise(MADV_DONTNEED)`): they read as zeros afterwards. The pages `range` shares
    /// with bytes beside it stay. The bytes must be private memory of this process, as an
    /// array's are.
    static func releasePages(at base: UInt, _ range: Range<Int>) {
        let page = UInt(max(4_096, sysconf(Int32(_SC_PAGESIZE))))
        let (first, firstOverflow) = base.addingReportingOverflow(UInt(range.lowerBound) + page - 1)
        let (end, endOverflow) = base.addingReportingOverflow(UInt(range.upperBound))
        guard !firstOverflow, !endOverflow else { return }
        let start = first / page * page, stop = end / page * page
        guard start < stop, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(pointer, Int(stop - start), MADV_DONTNEED)
    }

    /// Why a feature read on its own gave no record.
    enum FeatureFailure: Error {
        /// Its text is not JSON: the whole file is parsed for the error's place.
        case unparsable
        case record(EngineError)
    }

    /// How deep a feature may nest: the file's limit (64) less the collection and its
    /// `features` array.
    static let featureDepth = 62

    /// The features of a GeoJSON FeatureCollection file, parsed on every core as in
    /// ``records(inFile:kind:layer:)``.
    static func readFeatures(_ path: String) throws(EngineError) -> [JSONValue] {
        let bytes = try readBytes(path)
        if let spans = FeatureSpans.scan(bytes),
           let features = try? FeatureSpans.concurrentMap(spans.count, { i throws(JSONParseError) in
               try JSONValue.parse(bytes[spans[i]], maxDepth: featureDepth)
           }) {
            return features
        }
        return try readFeatures(path, bytes: bytes)
    }

    /// The features of a GeoJSON FeatureCollection's text, parsed whole.
    static func readFeatures(_ path: String, bytes: [UInt8]) throws(EngineError) -> [JSONValue] {
        let collection: JSONValue
        do {
            collection = try JSONValue.parse(bytes, maxDepth: 64)
        } catch {
            throw .invalidLayerSource(path: path, reason: error.description)
        }
        guard collection["type"] == "FeatureCollection", let features = collection["features"]?.arrayValue else {
            throw .invalidLayerSource(path: path, reason: "expected a GeoJSON FeatureCollection")
        }
        return features
    }

    static func algorithm(_ value: JSONValue?, kind: LayerKind, place: String) throws(EngineError) -> Algorithm {
        guard let text = value?["algorithm"] else { return .default(for: kind) }
        guard let name = text.stringValue, let algorithm = Algorithm(rawValue: name) else {
            throw .invalidLayerSource(path: place, reason: "option \"algorithm\" must be \"live\" or \"radius\"")
        }
        return algorithm
    }

    /// Reads cluster options from a manifest entry's `options` object.
    static func clusterOptions(_ value: JSONValue?, place: String) throws(EngineError) -> RadiusClusterOptions {
        var options = RadiusClusterOptions()
        guard let value, !value.isNull else { return options }
        guard let object = value.objectValue else {
            throw .invalidLayerSource(path: place, reason: "\"options\" must be an object")
        }
        for (key, item) in object where key != "algorithm" && key != "kept_items" {
            guard let number = item.doubleValue else {
                throw .invalidLayerSource(path: place, reason: "option \"\(key)\" must be a number")
            }
            let integer = item.intValue
            switch key {
            case "radius": options.radiusPixels = number
            case "extent", "min_zoom", "max_zoom", "min_points":
                guard let integer else {
                    throw .invalidLayerSource(path: place, reason: "option \"\(key)\" must be an integer")
                }
                switch key {
                case "extent": options.extent = integer
                case "min_zoom": options.minZoom = integer
                case "max_zoom": options.maxZoom = integer
                default: options.minPoints = integer
                }
            default:
                throw .invalidLayerSource(path: place, reason: "unknown option \"\(key)\"")
            }
        }
        do {
            try options.validate()
        } catch {
            throw .invalidLayerSource(path: place, reason: error.description)
        }
        return options
    }

    /// Reads a live layer's `kept_items` option (``LiveClusterOptions/keptItems``), `nil`
    /// when it is not given; the radius algorithm keeps no groups and refuses it.
    static func keptItems(_ value: JSONValue?, algorithm: Algorithm, options: RadiusClusterOptions,
                          place: String) throws(EngineError) -> Int? {
        guard let item = value?["kept_items"] else { return nil }
        guard algorithm == .live else {
            throw .invalidLayerSource(path: place, reason: "option \"kept_items\" applies to the live algorithm")
        }
        guard let keptItems = item.intValue else {
            throw .invalidLayerSource(path: place, reason: "option \"kept_items\" must be an integer")
        }
        do {
            try LiveClusterOptions(options, keptItems: keptItems).validate()
        } catch {
            throw .invalidLayerSource(path: place, reason: error.description)
        }
        return keptItems
    }

    static func readJSON(_ path: String) throws(EngineError) -> JSONValue {
        let bytes = try readBytes(path)
        do {
            return try JSONValue.parse(bytes, maxDepth: 64)
        } catch {
            throw .invalidLayerSource(path: path, reason: error.description)
        }
    }

    static func readBytes(_ path: String) throws(EngineError) -> [UInt8] {
        if let bytes = readRegularFile(path) { return bytes }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidLayerSource(path: path, reason: "cannot be read")
        }
        return [UInt8](data)
    }

    /// The bytes of a regular file, read straight into one array of its size (not into
    /// a `Data` copied after); `nil` when the path is not a regular file or a read fails,
    /// for ``readBytes(_:)`` to try the general way.
    private static func readRegularFile(_ path: String) -> [UInt8]? {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else { return nil }
        let size = Int(info.st_size)
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            // A file that shrinks meanwhile ends early; one that grows is read up to its size at the start.
            while count < size {
                let n = read(file, buffer.baseAddress! + count, size - count)
                if n > 0 {
                    count += n
                } else if n == 0 {
                    break
                } else if errno != EINTR {
                    failed = true
                    break
                }
            }
        }
        return failed ? nil : bytes
    }
}

/// Where a layer's data comes from, as the licences of its sources require it to be shown:
/// `license` (an SPDX identifier) and `attribution` (the text a map shows), from
/// `layers.json`. `layers` and `stats` answers carry them.
public struct LayerMetadata: Sendable, Equatable {
    public var license: String?
    public var attribution: String?
    /// The IANA time zone of the layer's local times (`time_zone`, e.g. `Asia/Seoul`): a
    /// places layer's opening hours are read in it.
    public var timeZone: String?

    public init(license: String? = nil, attribution: String? = nil, timeZone: String? = nil) {
        self.license = license
        self.attribution = attribution
        self.timeZone = timeZone
    }

    /// The summary with `license` and `attribution` added when known.
    func adding(to summary: JSONValue) -> JSONValue {
        guard case var .object(object) = summary else { return summary }
        if let license { object["license"] = .string(license) }
        if let attribution { object["attribution"] = .string(attribution) }
        return .object(object)
    }
}

extension EngineLayer {
    /// The layer with its metadata set.
    func described(_ metadata: LayerMetadata) -> EngineLayer {
        switch self {
        case var .radius(layer):
            layer.metadata = metadata
            return .radius(layer)
        case let .live(store):
            store.describe(metadata)
            return .live(store)
        }
    }
}
