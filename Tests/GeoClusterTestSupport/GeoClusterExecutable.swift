import Foundation

/// The built `geo-cluster` executable, run by the tests as a user or a batch job would run it.
public enum GeoClusterExecutable {
    /// Thrown when the executable is not in the build directory (for example when the tests
    /// were built without the executable product).
    public struct NotFound: Error, CustomStringConvertible {
        public var description: String { "geo-cluster executable not found next to the tests" }
    }

    /// The executable sits next to the test bundle in the build directory.
    public static let url: URL? = {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL { candidates.append(bundle.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL.deletingLastPathComponent()) }
        return candidates.map { $0.appendingPathComponent("geo-cluster") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Starts the executable with `arguments`. A standard stream given no pipe is
    /// connected to `/dev/null`.
    public static func start(_ arguments: [String], stdin: Pipe? = nil, stdout: Pipe? = nil,
                             stderr: Pipe? = nil) throws -> Process {
        guard let url else { throw NotFound() }
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.standardInput = stdin ?? FileHandle.nullDevice
        process.standardOutput = stdout ?? FileHandle.nullDevice
        process.standardError = stderr ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs the executable to its end with no input: its exit status and what it wrote
    /// to stdout and stderr.
    public static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let stdout = Pipe(), stderr = Pipe()
        let process = try start(arguments, stdout: stdout, stderr: stderr)
        // Both pipes drain concurrently so that neither can fill up and stall the process.
        let errors = ReadToEnd(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self),
                String(decoding: errors.wait(), as: UTF8.self))
    }
}

/// Reads a file handle to its end on a thread of its own.
public final class ReadToEnd: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    public func wait() -> Data {
        done.wait()
        return data
    }
}
