import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterTestSupport
import Testing

/// Clients that ask for large answers and never read them: each connection is closed
/// after the write timeout, `/metrics` counts it, the memory its answer held goes, and
/// the server answers everyone else meanwhile.
@Suite(.serialized)
struct NonReadingClientTests {
    /// Resident memory of a process, from /proc.
    static func residentBytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    static func writeTimeouts(_ port: Int) throws -> Int {
        let metrics = try RawHTTP.exchange(port: port, RawHTTP.request("GET", "/metrics")).text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("geocluster_http_write_timeouts_total ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    @Test func clientsThatDoNotReadAreClosedAfterTheWriteTimeout() throws {
        let layer = try GracefulShutdownTests.gridLayerFile(count: 100_000)
        defer { try? FileManager.default.removeItem(at: layer.deletingLastPathComponent()) }
        let server = try RawHTTP.Server(["--layer-file", "grid=\(layer.path)", "--write-timeout", "2", "--idle-timeout", "0"])
        let before = try #require(Self.residentBytes(server.process.processIdentifier))

        // Each asks for every point (about 12 MB of GeoJSON, more than the kernel's socket
        // buffers take) and reads nothing; two waves of them.
        let clients = 20
        let request = RawHTTP.request("GET", "/v1/layers/grid/clusters?bbox=-180,-85,180,85&zoom=20")
        var connections: [LoopbackConnection] = []
        var resident: [Int] = []
        for wave in 1...2 {
            for _ in 0..<clients {
                let connection = try LoopbackConnection(port: server.port, receiveTimeoutSeconds: 60)
                try connection.send(Array(request.utf8))
                connections.append(connection)
            }
            // The server answers others meanwhile, and closes the stalled ones in time.
            let deadline = ContinuousClock.now + .seconds(120)
            var closed = 0
            while closed < wave * clients, ContinuousClock.now < deadline {
                #expect(try RawHTTP.exchange(port: server.port, RawHTTP.request("GET", "/healthz")).status == 200)
                closed = try Self.writeTimeouts(server.port)
                if closed < wave * clients { Thread.sleep(forTimeInterval: 0.2) }
            }
            try #require(closed == wave * clients, "\(closed) of \(wave * clients) stalled connections closed within 120 s")
            resident.append(try #require(Self.residentBytes(server.process.processIdentifier)))
        }
        // What a closed connection held goes back: the server trims its heap about a second
        // after closing stalled clients, so the second wave leaves little beyond the first
        // (each held about 12 MB; 20 kept would add 240 MB). Waited for, not timed.
        let settled = ContinuousClock.now + .seconds(60)
        while resident[1] >= resident[0] + (150 << 20), ContinuousClock.now < settled {
            Thread.sleep(forTimeInterval: 0.2)
            resident[1] = try #require(Self.residentBytes(server.process.processIdentifier))
        }
        print("server RSS before \(before >> 20) MB, after each wave of \(clients) stalled clients \(resident.map { $0 >> 20 }) MB")
        #expect(resident[1] < resident[0] + (150 << 20), "RSS \(resident.map { $0 >> 20 }) MB")
        // Each stalled client finds its connection closed after the part it could take.
        for connection in connections.prefix(3) {
            _ = try? connection.receiveToEnd()
        }
        #expect(server.process.isRunning)
    }
}
