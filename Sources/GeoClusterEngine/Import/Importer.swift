import GeoCluster
import GeoClusterWire
import GeoProjection

/// The input formats of an import.
public enum ImportFormat: String, Sendable, CaseIterable {
    /// Comma-separated values with a header row (RFC 4180), see ``CSVReader`` and the
    /// column rules of docs/IMPORT.md.
    case csv
    /// A GeoJSON FeatureCollection of Point features.
    case geojson
    /// JSON lines: one record per line, a GeoJSON Feature or a flat record.
    case jsonl

    /// The format a file name suggests: `.csv`; `.geojson` or `.json`; `.jsonl` or
    /// `.ndjson`. `nil` for anything else.
    public static func inferred(fromPath path: String) -> ImportFormat? {
        let name = path.split(separator: "/").last.map { $0.lowercased() } ?? ""
        if name.hasSuffix(".csv") { return .csv }
        if name.hasSuffix(".geojson") || name.hasSuffix(".json") { return .geojson }
        if name.hasSuffix(".jsonl") || name.hasSuffix(".ndjson") { return .jsonl }
        return nil
    }
}

/// What an import reads and how.
public struct ImportOptions: Sendable {
    public var layer: String
    public var kind: LayerKind
    public var format: ImportFormat
    /// The CRS of the input coordinates; `nil` for WGS 84 longitude/latitude. Coordinates
    /// in another CRS are converted through PROJ and rounded to 1e-8 degrees (about 1 mm).
    public var crs: CRS?
    /// CSV only: the header of the column for a record field, where it differs from the
    /// field's name (`["id": "code", "species": "taxon"]`). See ``CSVLayout``.
    public var columns: [String: String]
    /// Keep the valid records when some are invalid, instead of none.
    public var skipInvalid: Bool
    /// How many issues ``ImportResult/issues`` lists; the count covers all.
    public var maxListedIssues: Int
    /// A sightings layer's checklist: species given by any of its names are stored by
    /// their scientific name, and a species not on it is an issue of its record.
    public var speciesChecklist: SpeciesChecklist?

    public init(layer: String, kind: LayerKind, format: ImportFormat, crs: CRS? = nil,
                columns: [String: String] = [:], skipInvalid: Bool = false, maxListedIssues: Int = 20,
                speciesChecklist: SpeciesChecklist? = nil) {
        self.speciesChecklist = speciesChecklist
        self.layer = layer
        self.kind = kind
        self.format = format
        self.crs = crs
        self.columns = columns
        self.skipInvalid = skipInvalid
        self.maxListedIssues = maxListedIssues
    }
}

/// How far an import has read; reported once per chunk and once at the end.
public struct ImportProgress: Sendable, Equatable {
    public var recordsRead: Int
    public var invalidCount: Int
    public var bytesRead: Int
    /// The input's size when known, for a percentage.
    public var totalBytes: Int?
    public var finished: Bool
}

/// The outcome of reading and validating an input.
public struct ImportResult: Sendable {
    /// The valid records in input order. Empty when any record was invalid and
    /// ``ImportOptions/skipInvalid`` was off: an import is all or nothing.
    public var records: [LayerRecord]
    /// Records read, valid or not (a CSV header is not a record).
    public var recordsRead: Int
    public var invalidCount: Int
    /// The first ``ImportOptions/maxListedIssues`` issues, in input order.
    public var issues: [ImportIssue]

    /// Whether the records should be written: every record was valid, or invalid ones may
    /// be skipped.
    public func shouldWrite(skipInvalid: Bool) -> Bool { invalidCount == 0 || skipInvalid }
}

/// Reads an input in chunks, converts coordinates to WGS 84 when the input has a CRS,
/// validates every record against the layer kind's schema (``LayerRecord``), rejects
/// duplicate ids, and collects the valid records. The input text is never held whole;
/// only the records are.
///
/// Not `Sendable`: it owns a PROJ context (``CoordinateTransformer``) when converting.
public struct Importer {
    public let options: ImportOptions
    private let transformer: CoordinateTransformer?

    /// - Throws: ``EngineError/projection(_:field:)`` (field `crs`) when PROJ does not know
    ///   the CRS or cannot convert from it to WGS 84.
    public init(options: ImportOptions) throws(EngineError) {
        self.options = options
        guard let crs = options.crs else {
            transformer = nil
            return
        }
        do {
            let transformer = try CoordinateTransformer()
            try transformer.prepare(from: crs, to: .wgs84)
            self.transformer = transformer
        } catch {
            throw .projection(error, field: "crs")
        }
    }

    /// Reads `input` to its end.
    /// - Parameter progress: called after every chunk and once more at the end.
    /// - Throws: ``EngineError/invalidLayerSource(path:reason:)`` when the input as a whole
    ///   cannot be read (unreadable, not a FeatureCollection, a CSV header without a
    ///   required column, an over-long line). Invalid records are not thrown; they are
    ///   counted and listed in the result.
    public func run(_ input: inout ByteChunkReader,
                    progress: (ImportProgress) -> Void = { _ in }) throws(EngineError) -> ImportResult {
        var run = ImportRun(options: options, transformer: transformer, sourceName: input.name)
        switch options.format {
        case .csv:
            var reader = CSVReader(sourceName: input.name)
            try run.drain(&reader, input: &input, progress: progress) { run, row throws(EngineError) in try run.accept(row) }
        case .jsonl:
            var splitter = JSONLinesSplitter(sourceName: input.name)
            try run.drain(&splitter, input: &input, progress: progress) { run, item throws(EngineError) in run.accept(item) }
        case .geojson:
            var splitter = FeatureCollectionSplitter(sourceName: input.name)
            try run.drain(&splitter, input: &input, progress: progress) { run, item throws(EngineError) in run.accept(item) }
        }
        if options.format == .csv && run.layout == nil {
            throw .invalidLayerSource(path: input.name, reason: "has no header row")
        }
        return ImportResult(records: run.records, recordsRead: run.recordsRead, invalidCount: run.invalidCount,
                            issues: run.issues)
    }
}

/// A source format's splitter: bytes in, items out.
protocol ImportDecoder {
    associatedtype Item
    mutating func read(_ chunk: ArraySlice<UInt8>, into items: inout [Item]) throws(EngineError)
    mutating func finish(into items: inout [Item]) throws(EngineError)
}

extension CSVReader: ImportDecoder {}
extension JSONLinesSplitter: ImportDecoder {}
extension FeatureCollectionSplitter: ImportDecoder {}

/// The state of one import while it reads.
private struct ImportRun {
    let options: ImportOptions
    let transformer: CoordinateTransformer?
    let sourceName: String
    var layout: CSVLayout?
    var records: [LayerRecord] = []
    var recordsRead = 0
    var invalidCount = 0
    var issues: [ImportIssue] = []
    /// Where each id was first seen, to name it in a duplicate's issue.
    var firstSeen: [String: ImportLocation] = [:]

    init(options: ImportOptions, transformer: CoordinateTransformer?, sourceName: String) {
        self.options = options
        self.transformer = transformer
        self.sourceName = sourceName
    }

    mutating func drain<Decoder: ImportDecoder>(
        _ decoder: inout Decoder, input: inout ByteChunkReader, progress: (ImportProgress) -> Void,
        accept: (inout ImportRun, Decoder.Item) throws(EngineError) -> Void
    ) throws(EngineError) {
        var items: [Decoder.Item] = []
        while let chunk = try input.next() {
            try decoder.read(chunk, into: &items)
            for item in items { try accept(&self, item) }
            items.removeAll(keepingCapacity: true)
            progress(report(input, finished: false))
        }
        try decoder.finish(into: &items)
        for item in items { try accept(&self, item) }
        progress(report(input, finished: true))
    }

    private func report(_ input: ByteChunkReader, finished: Bool) -> ImportProgress {
        ImportProgress(recordsRead: recordsRead, invalidCount: invalidCount, bytesRead: input.bytesRead,
                       totalBytes: input.totalBytes, finished: finished)
    }

    // MARK: Records

    mutating func accept(_ row: CSVRow) throws(EngineError) {
        guard let layout else {
            layout = try CSVLayout(header: row, kind: options.kind, projected: transformer != nil,
                                   columns: options.columns, sourceName: sourceName)
            return
        }
        recordsRead += 1
        let location = ImportLocation.line(row.line)
        if let problem = row.problem {
            return reject(ImportIssue(location: location, field: "row", reason: problem))
        }
        guard row.fields.count == layout.columnCount else {
            return reject(ImportIssue(location: location, field: "row",
                                      reason: "has \(row.fields.count) fields, the header has \(layout.columnCount)"))
        }
        var record = layout.flatRecord(from: row.fields)
        if transformer != nil {
            let columnX = layout.column(forField: "x") ?? "x", columnY = layout.column(forField: "y") ?? "y"
            do throws(ImportIssue) {
                let (lon, lat) = try project(x: record["lon"], y: record["lat"], fields: ("x", "y"), location: location,
                                             id: record["id"])
                record["lon"] = .number(lon)
                record["lat"] = .number(lat)
            } catch {
                var issue = error
                issue.column = issue.field == "x" ? (columnX == "x" ? nil : columnX) : (columnY == "y" ? nil : columnY)
                return reject(issue)
            }
        }
        validate(.object(record), location: location)
    }

    mutating func accept(_ item: JSONItem) {
        recordsRead += 1
        var value: JSONValue
        do {
            value = try JSONValue.parse(item.bytes, maxDepth: 64)
        } catch {
            return reject(ImportIssue(location: item.location, field: "record", reason: "is not valid JSON: \(error.description)"))
        }
        if transformer != nil {
            do throws(ImportIssue) {
                try projectJSON(&value, location: item.location)
            } catch {
                return reject(error)
            }
        }
        validate(value, location: item.location)
    }

    private mutating func validate(_ json: JSONValue, location: ImportLocation) {
        let record: LayerRecord
        do throws(EngineError) {
            var json = json
            if let checklist = options.speciesChecklist, options.kind == .sightings {
                json = try checklist.namingScientifically(json, layer: options.layer, index: recordsRead - 1)
            }
            record = try LayerRecord(json: json, kind: options.kind, layer: options.layer, index: recordsRead - 1)
        } catch let .unknownSpecies(_, _, name) {
            let id = json["id"].map { $0.jsonString }
            return reject(ImportIssue(location: location, id: id, field: "species", column: layout?.column(forField: "species"),
                                      reason: "\(JSONValue.string(name).jsonString) is not on the layer's species checklist (scientific, Korean or English names)"))
        } catch let .invalidRecord(_, _, id, field, reason) {
            return reject(ImportIssue(location: location, id: id, field: field, column: layout?.column(forField: field),
                                      reason: reason))
        } catch {
            return reject(ImportIssue(location: location, field: "record", reason: error.description))
        }
        if !record.idKey.isEmpty {
            if let first = firstSeen[record.idKey] {
                return reject(ImportIssue(location: location, id: record.idJSON.jsonString, field: "id",
                                          column: layout?.column(forField: "id"),
                                          reason: "duplicates the id of \(first)"))
            }
            firstSeen[record.idKey] = location
        }
        if invalidCount == 0 || options.skipInvalid { records.append(record) }
    }

    private mutating func reject(_ issue: ImportIssue) {
        invalidCount += 1
        if issues.count < options.maxListedIssues { issues.append(issue) }
        if !options.skipInvalid && !records.isEmpty { records = [] }
    }

    // MARK: Coordinates

    /// Converts the position of a Feature (`geometry.coordinates`, altitude kept) or a flat
    /// record (`x`/`y`, else `lon`/`lat`, written back as `lon`/`lat`) to WGS 84. A
    /// geometry that is not a Point of numbers is left for validation to report.
    private func projectJSON(_ value: inout JSONValue, location: ImportLocation) throws(ImportIssue) {
        guard case var .object(object) = value else { return }
        if object["type"] != nil {
            guard case var .object(geometry)? = object["geometry"], geometry["type"] == "Point",
                  var pair = geometry["coordinates"]?.arrayValue, pair.count == 2 || pair.count == 3 else { return }
            let (lon, lat) = try project(x: pair[0], y: pair[1], fields: ("geometry.coordinates", "geometry.coordinates"),
                                         location: location, id: object["id"])
            pair[0] = .number(lon)
            pair[1] = .number(lat)
            geometry["coordinates"] = .array(pair)
            object["geometry"] = .object(geometry)
        } else {
            let named = object["x"] != nil || object["y"] != nil
            let fields = named ? ("x", "y") : ("lon", "lat")
            let (lon, lat) = try project(x: object[fields.0], y: object[fields.1], fields: fields, location: location,
                                         id: object["id"])
            if named {
                object.removeValue(forKey: "x")
                object.removeValue(forKey: "y")
            }
            object["lon"] = .number(lon)
            object["lat"] = .number(lat)
        }
        value = .object(object)
    }

    private func project(x: JSONValue?, y: JSONValue?, fields: (String, String), location: ImportLocation,
                         id: JSONValue?) throws(ImportIssue) -> (Double, Double) {
        guard let transformer, let crs = options.crs else { preconditionFailure("projecting without a CRS") }
        let idText = id.flatMap { LayerRecord.idKey(of: $0) != nil ? $0.jsonString : nil }
        func issue(_ field: String, _ reason: String) -> ImportIssue {
            ImportIssue(location: location, id: idText, field: field, reason: reason)
        }
        guard let x else { throw issue(fields.0, "is missing") }
        guard let y else { throw issue(fields.1, "is missing") }
        guard let easting = x.doubleValue else { throw issue(fields.0, "must be a number in \(crs), got \(x.jsonString)") }
        guard let northing = y.doubleValue else { throw issue(fields.1, "must be a number in \(crs), got \(y.jsonString)") }
        let point: CRSPoint, back: CRSPoint
        let fieldName = fields.0 == fields.1 ? fields.0 : "\(fields.0)/\(fields.1)"
        do {
            point = try transformer.transform(CRSPoint(x: easting, y: northing), from: crs, to: .wgs84)
            back = try transformer.transform(point, from: .wgs84, to: crs)
        } catch {
            throw issue(fieldName, "cannot be converted from \(crs) to WGS 84: \(error.description)")
        }
        // PROJ wraps longitudes and clamps latitudes of points outside a CRS's domain
        // (EPSG:3857 x = y = 1e10 comes out at 90 degrees north): a point that does not
        // come back to where it was is outside the domain, not somewhere else.
        let tolerance = 1e-6 * max(1, abs(easting), abs(northing))
        guard abs(back.x - easting) <= tolerance, abs(back.y - northing) <= tolerance else {
            throw issue(fieldName, "(\(easting), \(northing)) is outside the domain of \(crs): it converts to "
                            + "(\(Self.rounded(point.x)), \(Self.rounded(point.y))), which converts back to "
                            + "(\(back.x), \(back.y))")
        }
        return (Self.rounded(point.x), Self.rounded(point.y))
    }

    /// Rounds to 1e-8 degrees, about 1.1 mm: finer than any survey, and short in JSON.
    static func rounded(_ degrees: Double) -> Double {
        (degrees * 1e8).rounded() / 1e8
    }
}
