import ArgumentParser
import Foundation
import GeoClusterEngine
import GeoClusterStore
import GeoProjection

/// `geo-cluster import`: reads a CSV, GeoJSON or JSON-lines file into a layer of a data
/// directory (see docs/IMPORT.md). The reading, conversion and validation live in the
/// engine's ``Importer``; this command wires flags, files and output.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a CSV, GeoJSON or JSON-lines file as a layer of a data directory.",
        discussion: """
            Every record is validated against the kind's schema. Unless --skip-invalid is given, \
            one invalid record (or a duplicate id) means nothing is written and the exit status is 1; \
            the first 20 problems are listed on stderr with their line (or feature index) and field. \
            The layer is written as DIR/<layer>.geojson and registered in DIR/layers.json, which \
            `serve --data DIR` and `query --data DIR` load. With --store, the records replace the \
            layer's records in the store, in one transaction, and only DIR/layers.json is written. \
            See docs/IMPORT.md and docs/STORAGE.md.
            """)

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case sightings, places, stations
    }

    @Option(help: ArgumentHelp("The layer's name (letters, digits, _, - and .).", valueName: "name"))
    var layer: String

    @Option(help: "The layer's kind, which decides the record schema.")
    var kind: Kind

    @Option(help: ArgumentHelp("The data directory to write the layer into (created when missing).", valueName: "dir"))
    var data: String

    @Option(help: ArgumentHelp("Write the records to this store instead of a layer file: sqlite:PATH, or sqlite: for DIR/geo-cluster.sqlite.",
                               valueName: "store"))
    var store: String?

    @Option(help: ArgumentHelp("The CRS of the input coordinates, e.g. EPSG:5186 (default: WGS 84 lon/lat).",
                               valueName: "crs"))
    var crs: String?

    @Option(help: ArgumentHelp("csv, geojson or jsonl (default: from the file extension).", valueName: "format"))
    var format: String?

    @Flag(help: "Write the valid records and report the invalid ones, instead of writing nothing.")
    var skipInvalid = false

    @Option(help: ArgumentHelp("With a terminal on stderr a progress bar is drawn; otherwise a progress line every N records.", valueName: "n"))
    var progressEvery = 100_000

    @Option(help: ArgumentHelp("CSV column of the id (default: id).", valueName: "column")) var idColumn: String?
    @Option(help: ArgumentHelp("CSV column of the longitude in degrees (default: lon).", valueName: "column")) var lonColumn: String?
    @Option(help: ArgumentHelp("CSV column of the latitude in degrees (default: lat).", valueName: "column")) var latColumn: String?
    @Option(help: ArgumentHelp("CSV column of the easting, with --crs (default: x).", valueName: "column")) var xColumn: String?
    @Option(help: ArgumentHelp("CSV column of the northing, with --crs (default: y).", valueName: "column")) var yColumn: String?
    @Option(help: ArgumentHelp("CSV column of a sighting's species (default: species).", valueName: "column")) var speciesColumn: String?
    @Option(help: ArgumentHelp("CSV column of a sighting's count (default: count).", valueName: "column")) var countColumn: String?
    @Option(help: ArgumentHelp("CSV column of a sighting's observed_at (default: observed_at).", valueName: "column")) var observedAtColumn: String?
    @Option(help: ArgumentHelp("CSV column of a place's or station's name (default: name).", valueName: "column")) var nameColumn: String?
    @Option(help: ArgumentHelp("CSV column of a place's category (default: category).", valueName: "column")) var categoryColumn: String?
    @Option(help: ArgumentHelp("CSV column of a place's dwell_minutes (default: dwell_minutes, optional).", valueName: "column")) var dwellMinutesColumn: String?
    @Option(help: ArgumentHelp("CSV column of a station's lines, separated by ';' (default: lines).", valueName: "column")) var linesColumn: String?

    @Argument(help: "The file to import; - reads standard input (then --format is required).")
    var file: String

    /// Record field to CSV column, for the mapping flags given.
    var columns: [String: String] {
        let flags: [(String, String?)] = [
            ("id", idColumn), ("lon", lonColumn), ("lat", latColumn), ("x", xColumn), ("y", yColumn),
            ("species", speciesColumn), ("count", countColumn), ("observed_at", observedAtColumn),
            ("name", nameColumn), ("category", categoryColumn), ("dwell_minutes", dwellMinutesColumn),
            ("lines", linesColumn),
        ]
        var columns: [String: String] = [:]
        for case let (field, column?) in flags { columns[field] = column }
        return columns
    }

    func validate() throws {
        do {
            try LayerDirectory.validateName(layer)
        } catch {
            throw ValidationError("--layer: \(error.description)")
        }
        let format = try resolvedFormat()
        if !columns.isEmpty && format != .csv {
            throw ValidationError("the --*-column options apply to CSV input only")
        }
        if crs == nil && (xColumn != nil || yColumn != nil) {
            throw ValidationError("--x-column and --y-column name projected coordinates and need --crs; use --lon-column and --lat-column for degrees")
        }
        if crs != nil && (lonColumn != nil || latColumn != nil) {
            throw ValidationError("with --crs the coordinates are projected; name their columns with --x-column and --y-column")
        }
        guard progressEvery > 0 else { throw ValidationError("--progress-every must be positive") }
    }

    private func resolvedFormat() throws -> ImportFormat {
        if let format {
            guard let parsed = ImportFormat(rawValue: format.lowercased()) else {
                throw ValidationError("--format \(format): expected csv, geojson or jsonl")
            }
            return parsed
        }
        guard let inferred = ImportFormat.inferred(fromPath: file) else {
            throw ValidationError("cannot tell the format of \(file) from its name; give --format csv, geojson or jsonl")
        }
        return inferred
    }

    func run() throws {
        var sourceCRS: CRS?
        if let crs {
            do {
                sourceCRS = try CRS(crs)
            } catch {
                throw ValidationError("--crs \(crs): \(error.description)")
            }
        }
        // A sightings layer that the directory's manifest lists with a species checklist
        // takes species by any of their names, stored by the scientific one.
        var checklist: SpeciesChecklist?
        if FileManager.default.fileExists(atPath: data + "/" + LayerCatalog.manifestName) {
            checklist = try LayerCatalog.specs(directory: data).first { $0.name == layer }?.speciesChecklist
        }
        let options = ImportOptions(layer: layer, kind: LayerKind(rawValue: kind.rawValue) ?? .points,
                                    format: try resolvedFormat(), crs: sourceCRS, columns: columns,
                                    skipInvalid: skipInvalid, speciesChecklist: checklist)
        let importer = try Importer(options: options)
        var input = try ByteChunkReader(path: file)
        var reporter = ProgressReporter(toTerminal: isatty(2) == 1, every: progressEvery)
        let result = try importer.run(&input) { reporter.report($0) }

        let errors = StandardError()
        for issue in result.issues {
            errors.write("\(input.name): \(issue)\n")
        }
        if result.invalidCount > result.issues.count {
            errors.write("... and \(result.invalidCount - result.issues.count) more\n")
        }
        guard result.shouldWrite(skipInvalid: skipInvalid) else {
            errors.write("\(result.invalidCount) of \(result.recordsRead) records are invalid; nothing was written "
                         + "(--skip-invalid writes the valid ones)\n")
            throw ExitCode(1)
        }
        let destination: String
        if let store {
            let location = try StoreLocation(parsing: store, dataDirectory: data)
            let journal = try location.open()
            // The store first: a layer the store holds but the manifest does not list yet is
            // ignored at start, while a listed layer with no file and no records in the
            // store could not load.
            _ = try journal.replaceLayer(layer, kind: options.kind, records: result.records.lazy.map(StoredRecord.init))
            try LayerDirectory.register(layer: layer, kind: options.kind, directory: data)
            destination = "the store \(location)"
        } else {
            destination = try LayerDirectory.write(result.records, layer: layer, kind: options.kind, directory: data)
        }
        var summary = "imported \(result.records.count) records into layer \"\(layer)\" (\(kind.rawValue)) at \(destination)"
        if result.invalidCount > 0 { summary += "; skipped \(result.invalidCount) invalid" }
        print(summary)
    }
}

/// Writes to stderr unbuffered.
struct StandardError {
    func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// Draws the progress of an import on stderr: a bar redrawn at most ten times a second on
/// a terminal, else a plain line every `every` records (for logs).
struct ProgressReporter {
    let toTerminal: Bool
    let every: Int
    private var nextLine: Int
    /// The record count of the last line written, so the end does not repeat it.
    private var lastLine = 0
    private var lastDraw: ContinuousClock.Instant?
    private let stderr = StandardError()

    init(toTerminal: Bool, every: Int) {
        self.toTerminal = toTerminal
        self.every = every
        nextLine = every
    }

    mutating func report(_ progress: ImportProgress) {
        if toTerminal {
            let now = ContinuousClock.now
            if !progress.finished, let lastDraw, now - lastDraw < .milliseconds(100) { return }
            lastDraw = now
            stderr.write("\r" + Self.bar(progress) + (progress.finished ? "\n" : ""))
        } else if progress.recordsRead >= nextLine
                    || (progress.finished && progress.recordsRead >= every && progress.recordsRead != lastLine) {
            stderr.write("read \(progress.recordsRead) records, \(progress.invalidCount) invalid, "
                         + "\(Self.megabytes(progress.bytesRead)) MB\n")
            nextLine = (progress.recordsRead / every + 1) * every
            lastLine = progress.recordsRead
        }
    }

    static func bar(_ progress: ImportProgress) -> String {
        let width = 30
        var text: String
        if let total = progress.totalBytes, total > 0 {
            let fraction = min(1, Double(progress.bytesRead) / Double(total))
            let filled = Int(fraction * Double(width))
            text = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            text += String(Int(fraction * 100)) + "% "
        } else {
            text = "\(megabytes(progress.bytesRead)) MB "
        }
        text += "\(progress.recordsRead) records"
        if progress.invalidCount > 0 { text += ", \(progress.invalidCount) invalid" }
        return text + "\u{1B}[K"
    }

    static func megabytes(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + 524_288) / 1_048_576
        return "\(tenths / 10).\(tenths % 10)"
    }
}
