import Foundation
import Testing
import GeoClusterTestSupport

/// README's "In 30 seconds" section, run as one script, in order, as a user would run it
/// from the repository's root after `make run`'s build: every command must succeed, and
/// every output line the README shows (`# → …` after a command) must be in the output.
///
/// Only what a test needs is changed: the built binary stands in for the release one (the
/// section's `swift build` is skipped), `/tmp/` becomes a fresh directory, and ports 8080
/// and 8081 become free ones; `curl` fails on an HTTP error status.
struct ReadmeExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `sh` blocks of the section, in order.
    static func examples() throws -> [String] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "\n## In 30 seconds\n"),
              let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex) else { return [] }
        var blocks: [String] = []
        var current: [Substring]?
        for line in readme[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```sh" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "curl not found"))
    func theExamplesRunAsWritten() throws {
        let binary = try #require(GeoClusterExecutable.url, "the geo-cluster executable is built with the tests")
        let blocks = try Self.examples()
        #expect(blocks.count >= 5, "README's examples section has its sh blocks")
        let work = try TemporaryDirectory.make("geo-cluster-readme")
        defer { try? FileManager.default.removeItem(at: work) }
        let port1 = try freePort()
        var port2 = try freePort()
        while port2 == port1 { port2 = try freePort() }

        // In this order, so that no replacement reaches into text an earlier one put in:
        // the work directory's name may hold "8080", the binary may lie under /tmp.
        func adapted(_ text: String) -> String {
            text.replacingOccurrences(of: "8080", with: "\(port1)")
                .replacingOccurrences(of: "8081", with: "\(port2)")
                .replacingOccurrences(of: "/tmp/", with: work.path + "/")
                .replacingOccurrences(of: ".build/release/geo-cluster", with: binary.path)
        }
        var expected: [String] = []
        var script = """
            set -euo pipefail
            trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
            curl() { command curl -sS --fail-with-body -m 60 "$@"; echo; }

            """
        for block in blocks {
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("# → ") {
                    expected.append(adapted(String(line.dropFirst("# → ".count))))
                } else if !line.hasPrefix("swift build") {
                    script += adapted(String(line)) + "\n"
                }
            }
        }
        #expect(expected.count >= 4, "README shows outputs to compare")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["600", "/bin/bash", "-c", script]
        process.currentDirectoryURL = Self.packageRoot
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errorText = ReadToEnd(errors.fileHandleForReading)
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let stderr = String(decoding: errorText.wait(), as: UTF8.self)

        #expect(process.terminationStatus == 0, "the examples failed:\n\(stderr.suffix(2_000))")
        let lines = Set(stdout.split(separator: "\n").map(String.init))
        for line in expected {
            let given = lines.contains(line)
            #expect(given, "README shows an output line the examples do not give:\n\(line)")
        }
    }
}
