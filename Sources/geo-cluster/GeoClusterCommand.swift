#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import GeoClusterStore

@main
struct GeoClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geo-cluster",
        abstract: "Map clustering and geospatial queries over in-memory point layers.",
        version: version,
        subcommands: [Query.self, Serve.self, ImportCommand.self, KeysCommand.self, NetworkCommand.self])

    /// The release this source tree is; `--version` prints it.
    static let version = "0.5.0"

    static func main() async {
        // Before any thread has a heap of its own: glibc sizes each new heap with the
        // step set here (see `HeapTrim.setForLoading`); a heap made before grows a few
        // pages at a time all through the load.
        HeapTrim.setForLoading()
        await main(nil)
    }
}

/// Where the layers come from; shared by every subcommand that serves queries.
struct LayerSourceOptions: ParsableArguments {
    @Option(help: "A data directory with layers.json describing its layer files.")
    var data: String?

    @Option(name: .customLong("layer-file"),
            help: ArgumentHelp("A GeoJSON FeatureCollection to load as a layer (repeatable).",
                               valueName: "[kind:]name=path"))
    var layerFiles: [String] = []

    @Option(help: ArgumentHelp("""
        Keep live layers' records in a store: sqlite:PATH, sqlite: for DIR/geo-cluster.sqlite with --data DIR, \
        or postgres://user@host:port/database, shared by several replicas. \
        Writes are committed there before they are acknowledged; at start layers are rebuilt from it, \
        and a layer it does not hold yet is seeded from its file (see docs/STORAGE.md).
        """, valueName: "store"))
    var store: String?

    @Option(help: "Most features in one clusters, children, tile or nearby answer; a larger answer is the error too_large.")
    var maxFeaturesPerAnswer = Engine.Limits().maxFeaturesPerResponse

    func validate() throws {
        guard maxFeaturesPerAnswer > 0 else {
            throw ValidationError("--max-features-per-answer \(maxFeaturesPerAnswer): expected 1 or more")
        }
    }

    /// Opens the store named by `--store`, if any. A SQLite store is held for the
    /// process's life (``holdSQLiteStore(_:)``).
    func openStore() throws -> (any LayerJournal)? {
        guard let store else { return nil }
        let location = try StoreLocation(parsing: store, dataDirectory: data)
        let journal = try location.open()
        if case let .sqlite(path) = location { try Self.holdSQLiteStore(path) }
        return journal
    }

    /// A SQLite store is one server's: a second process keeping its layers in memory would
    /// not follow the first one's writes (docs/STORAGE.md), so it is refused. An exclusive
    /// `flock` on the file, never released: it ends with the process, however it ends.
    /// SQLite's own locks are `fcntl` locks, which `flock` does not touch; `keys` and
    /// `import` open the store without it.
    static func holdSQLiteStore(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }  // the store has just opened it; nothing to hold otherwise
        guard flock(descriptor, LOCK_EX | LOCK_NB) != 0 else { return }  // held while the process runs
        let busy = errno == EWOULDBLOCK
        close(descriptor)
        if busy {
            throw EngineError.storageUnavailable(reason: """
                another geo-cluster process serves \(path): a SQLite store is one server's \
                (it would not see that process's writes); stop it, or run replicas on PostgreSQL (docs/DEPLOY.md)
                """)
        }
    }

    /// Loads every requested layer; any error stops the start-up with its message.
    func makeEngine() throws -> Engine {
        try makeEngineAndStore().engine
    }

    /// The engine and the store its live layers write to, if any.
    func makeEngineAndStore() throws -> (engine: Engine, store: (any LayerJournal)?) {
        var specs: [LayerCatalog.LayerSpec] = []
        if let data {
            specs += try LayerCatalog.specs(directory: data)
        }
        // Walking networks listed in the data directory's manifest, for `reachable`.
        let networks = try data.map { directory in try LayerCatalog.loadNetworks(directory: directory) } ?? [:]
        for spec in layerFiles {
            let (kind, name, path) = try Self.parse(spec)
            specs.append(LayerCatalog.LayerSpec(name: name, kind: kind, path: path))
        }
        let journal = try openStore()
        var layers: [EngineLayer] = []
        for spec in specs {
            if let journal {
                layers.append(try LayerCatalog.load(spec, journal: journal))
            } else {
                layers.append(try LayerCatalog.load(spec))
            }
        }
        let engine = try Engine(entries: layers, limits: Engine.Limits(maxFeaturesPerResponse: maxFeaturesPerAnswer),
                                networks: networks)
        // The heap's growth step set in `main` for the load, back to serving's.
        HeapTrim.setForServing()
        // Loading parsed every file into JSON trees that are garbage now; without this
        // the process would keep the memory they took (a 1M-point radius layer: 756 MB
        // resident without, 368 MB with).
        HeapTrim.releaseFreePages()
        return (engine, journal)
    }

    static func parse(_ spec: String) throws -> (LayerKind, String, String) {
        guard let equals = spec.firstIndex(of: "=") else {
            let file = spec.split(separator: "/").last.map(String.init) ?? spec
            let name = file.split(separator: ".").first.map(String.init) ?? file
            return (.points, name, spec)
        }
        let path = String(spec[spec.index(after: equals)...])
        let head = spec[..<equals]
        var kind = LayerKind.points
        var name = String(head)
        if let colon = head.firstIndex(of: ":") {
            let kindName = String(head[..<colon])
            guard let parsed = LayerKind(rawValue: kindName) else {
                throw ValidationError("--layer-file \(spec): unknown kind \"\(kindName)\"")
            }
            kind = parsed
            name = String(head[head.index(after: colon)...])
        }
        guard !name.isEmpty, !path.isEmpty else {
            throw ValidationError("--layer-file \(spec): expected [kind:]name=path")
        }
        return (kind, name, path)
    }
}

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer JSON-lines requests from stdin on stdout (see docs/PROTOCOL.md).")

    @OptionGroup var layers: LayerSourceOptions

    @Option(help: "Longest accepted request line in bytes.")
    var maxLineBytes = LineProtocol.defaultMaxLineBytes

    @Option(help: """
        Most bytes of answers to the whole input; the line that would pass it and every later line \
        get the error too_large. 0, the default, is no limit: the stream is the caller's own.
        """)
    var maxBatchAnswerBytes = 0

    func validate() throws {
        guard maxLineBytes > 0 else { throw ValidationError("--max-line-bytes \(maxLineBytes): expected 1 or more") }
        guard maxBatchAnswerBytes >= 0 else {
            throw ValidationError("--max-batch-answer-bytes \(maxBatchAnswerBytes): expected 0 or more")
        }
    }

    func run() async throws {
        let engine = try layers.makeEngine()
        // A closed stdout ends the process through SIGPIPE's default action (status 141),
        // quietly, as other Unix filters do.
        signal(SIGPIPE, SIG_DFL)
        let stream = LineStream(lineProtocol: LineProtocol(
            engine: engine, maxLineBytes: maxLineBytes, maxBatchAnswerBytes: maxBatchAnswerBytes > 0 ? maxBatchAnswerBytes : nil))
        switch stream.run() {
        case .endOfInput: return
        // Not reached while SIGPIPE keeps its default action; the conventional status all the same.
        case .outputClosed: throw ExitCode(141)
        case .failed: throw ExitCode(1)
        }
    }
}
