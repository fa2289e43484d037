import Foundation
import GeoClusterEngine

/// Where layers are stored, as `--store` names it (docs/STORAGE.md):
/// - `sqlite:PATH`: an SQLite file, created when missing;
/// - `sqlite:` with a data directory: `DIR/geo-cluster.sqlite`;
/// - `postgres://user[:password]@host[:port]/database`: a PostgreSQL database that
///   several replicas share.
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    /// The file name of the SQLite store that `sqlite:` without a path means in a data
    /// directory.
    public static let defaultSQLiteName = "geo-cluster.sqlite"

    /// Parses a `--store` value; `dataDirectory` is the `--data` directory, if given.
    public init(parsing text: String, dataDirectory: String?) throws(EngineError) {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            if !path.isEmpty {
                self = .sqlite(path: path)
                return
            }
            guard let dataDirectory else {
                throw .invalidField("store", reason: "\"sqlite:\" without a path needs --data DIR (it means DIR/\(Self.defaultSQLiteName))")
            }
            self = .sqlite(path: dataDirectory + "/" + Self.defaultSQLiteName)
            return
        }
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(url: text)
            return
        }
        throw .invalidField("store", reason: "expected sqlite:PATH, sqlite: (with --data) or postgres://user@host:port/database, got \"\(text)\"")
    }

    /// The location as `--store` takes it, with the path resolved and a password left out.
    public var description: String {
        switch self {
        case let .sqlite(path):
            return "sqlite:\(path)"
        case let .postgres(url):
            guard var parts = URLComponents(string: url), parts.password != nil else { return url }
            parts.password = nil
            return parts.string ?? url
        }
    }

    /// Opens the store.
    public func open() throws(EngineError) -> any LayerJournal {
        switch self {
        case let .sqlite(path): try SQLiteJournal(path: path)
        case let .postgres(url): try PostgresJournal(url: url)
        }
    }
}
