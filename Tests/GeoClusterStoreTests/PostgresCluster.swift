#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A throwaway PostgreSQL cluster for the replica tests: `initdb` and `pg_ctl` from the
/// Debian packages (run as the `postgres` user when the tests run as root, since the
/// server refuses root), listening on a free loopback port, in a temporary directory.
final class PostgresCluster {
    let directory: URL
    /// Chosen at start; another if the server could not bind the first one.
    private(set) var port: Int
    let bin: String
    private let asPostgres: Bool

    /// Why the cluster cannot start here, or `nil` when it can.
    static var unavailableReason: String? {
        binDirectory() == nil ? "PostgreSQL server binaries (initdb, pg_ctl) not found; `make test` installs them" : nil
    }

    static func binDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }

    init() throws {
        guard let bin = Self.binDirectory() else { throw ClusterError("no PostgreSQL binaries") }
        self.bin = bin
        asPostgres = getuid() == 0
        directory = URL(fileURLWithPath: "/tmp/geo-cluster-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if asPostgres {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: directory.path)
        }
        port = try freePort()
        try run("\(bin)/initdb", ["-D", directory.path + "/data", "-U", "geo", "-A", "trust", "-E", "UTF8", "--no-sync"])
        // A port free when it was chosen can be taken before the server binds it (another
        // test's server or cluster choosing the same one): then another port, a few times.
        let serverLog = directory.appendingPathComponent("server.log").path
        for attempt in 1... {
            do {
                try startServer()
                break
            } catch {
                let log = (try? String(contentsOfFile: serverLog, encoding: .utf8)) ?? ""
                guard attempt < 5, log.contains("could not bind") else { throw error }
                try? FileManager.default.removeItem(atPath: serverLog)
                port = try freePort()
            }
        }
    }

    func startServer() throws {
        try run("\(bin)/pg_ctl", ["-D", directory.path + "/data", "-l", directory.path + "/server.log", "-w", "-o",
                                  "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1", "start"])
    }

    /// Stops the server, keeping its data, as an outage would.
    func stopServer() throws {
        try run("\(bin)/pg_ctl", ["-D", directory.path + "/data", "-m", "fast", "-w", "stop"])
    }

    /// The URL of `database` for `--store`.
    func url(_ database: String) -> String { "postgres://geo@127.0.0.1:\(port)/\(database)" }

    func createDatabase(_ name: String) throws {
        try run("\(bin)/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "geo", name])
    }

    /// Runs `sql` in `database` with `psql`; returns what it prints (unaligned, tuples only).
    @discardableResult
    func psql(_ database: String, _ sql: String) throws -> String {
        try run("\(bin)/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "geo", "-d", database, "-v", "ON_ERROR_STOP=1",
                                "-tA", "-c", sql])
    }

    func stop() {
        _ = try? run("\(bin)/pg_ctl", ["-D", directory.path + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a tool to its end, its output in a log file that errors quote.
    ///
    /// Through posix_spawn and waitpid rather than Foundation's Process: on Linux, Process
    /// learns of the exit through a socket that the child inherits, and the server that
    /// `pg_ctl start` leaves running would hold it open, so the wait would never end.
    @discardableResult
    private func run(_ tool: String, _ arguments: [String]) throws -> String {
        let argv = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", tool] + arguments : [tool] + arguments
        let log = directory.path + "/tool-\(UUID().uuidString.prefix(8)).log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw ClusterError("cannot start \(argv[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS, which Swift does not import: a normal exit has no
        // signal bits, and its status is in the second byte.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw ClusterError("\(tool) failed (wait status \(status)): \(text)")
        }
        return text
    }
}

struct ClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A loopback TCP port that was free a moment ago.
func freePort() throws -> Int {
    // Below the kernel's ephemeral range (32768-60999 here), from which every server the
    // tests start with `--port 0` takes its port: one of those could otherwise be given,
    // between this check and the bind, the port returned here, and a script waiting for
    // "its" server would talk to another test's.
    for _ in 0..<500 {
        let port = Int.random(in: 20_000..<32_000)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ClusterError("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound == 0 { return port }
    }
    throw ClusterError("no free port in 20000..<32000")
}
