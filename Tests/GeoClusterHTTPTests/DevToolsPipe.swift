import Foundation
import GeoClusterTestSupport
import GeoCluster
import GeoClusterWire
#if canImport(Glibc)
import Glibc
#endif

/// Headless Chromium driven through the DevTools protocol over `--remote-debugging-pipe`:
/// the browser reads commands from its file descriptor 3 and writes answers and events to
/// 4, each message a JSON text ended by a NUL byte. With it a test can press, drag and
/// wheel the mouse on a page as a user does and read the page's state back.
///
/// Calls block until the browser answers, so they belong on a thread of their own (see
/// ``detached(_:)``), one at a time: the state is not guarded.
final class DevToolsPipe: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let pid: pid_t
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private let profile: URL
    private var pending: [UInt8] = []
    private var nextID = 0
    /// The page's session, for the commands that go to the page.
    private var session: String?

    init(browser path: String, width: Int, height: Int) throws {
        // Removed when closed, and again at exit: the browser may still write to it then.
        profile = try TemporaryDirectory.make("chromium")
        var commands: [Int32] = [0, 0], answers: [Int32] = [0, 0]
        guard pipe(&commands) == 0, pipe(&answers) == 0 else { throw Failure(description: "pipe() failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, commands[0], 3)
        posix_spawn_file_actions_adddup2(&actions, answers[1], 4)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [
            path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=\(profile.path)", "--window-size=\(width),\(height)", "--remote-debugging-pipe",
            "about:blank",
        ]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(commands[0])
        close(answers[1])
        guard status == 0 else {
            close(commands[1])
            close(answers[0])
            throw Failure(description: "could not start \(path): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        toBrowser = commands[1]
        fromBrowser = answers[0]
    }

    deinit {
        close(toBrowser)
        close(fromBrowser)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        try? FileManager.default.removeItem(at: profile)
    }

    /// Opens `url` in a new page and directs the page commands there.
    func open(_ url: String) throws {
        let target = try send("Target.createTarget", ["url": .string(url)], toPage: false)
        let targetID = try Self.require(target["targetId"]?.stringValue, "Target.createTarget gave no targetId")
        let attached = try send("Target.attachToTarget", ["targetId": .string(targetID), "flatten": true], toPage: false)
        session = try Self.require(attached["sessionId"]?.stringValue, "Target.attachToTarget gave no sessionId")
    }

    /// The value of a JavaScript expression in the page (awaited when it is a promise).
    func evaluate(_ expression: String) throws -> JSONValue {
        let result = try send("Runtime.evaluate", ["expression": .string(expression), "returnByValue": true,
                                                   "awaitPromise": true])
        if let exception = result["exceptionDetails"] {
            throw Failure(description: "\(expression) threw \(exception.jsonString.prefix(300))")
        }
        return result["result"]?["value"] ?? .null
    }

    /// Evaluates `expression` until it is true, for up to `seconds`.
    func wait(until expression: String, seconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try evaluate(expression) == true { return }
            usleep(50_000)
        }
        throw Failure(description: "timed out waiting for \(expression)")
    }

    /// A mouse event at page coordinates (`Input.dispatchMouseEvent`): `mousePressed`,
    /// `mouseMoved`, `mouseReleased` or `mouseWheel`.
    func mouse(_ type: String, x: Double, y: Double, buttons: Int = 0, deltaY: Double = 0) throws {
        var parameters: JSONObject = ["type": .string(type), "x": .number(x), "y": .number(y),
                                      "buttons": .number(Double(buttons))]
        switch type {
        case "mousePressed", "mouseReleased":
            parameters["button"] = "left"
            parameters["clickCount"] = 1
        case "mouseWheel":
            parameters["deltaX"] = 0
            parameters["deltaY"] = .number(deltaY)
        default:
            break
        }
        _ = try send("Input.dispatchMouseEvent", parameters)
    }

    /// The page as drawn now, as PNG bytes (`Page.captureScreenshot`).
    func screenshot() throws -> [UInt8] {
        let result = try send("Page.captureScreenshot", ["format": "png"])
        let text = try Self.require(result["data"]?.stringValue, "Page.captureScreenshot gave no data")
        return Array(try Self.require(Data(base64Encoded: text), "Page.captureScreenshot gave no base64"))
    }

    /// Sends a command and returns its result, skipping the events that come before it.
    @discardableResult
    func send(_ method: String, _ parameters: JSONObject = JSONObject(), toPage: Bool = true) throws -> JSONValue {
        nextID += 1
        var message: JSONObject = ["id": .number(Double(nextID)), "method": .string(method),
                                   "params": .object(parameters)]
        if toPage { message["sessionId"] = .string(try Self.require(session, "no page is open")) }
        var bytes = Array(JSONValue.object(message).jsonString.utf8)
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(toBrowser, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "writing \(method) to the browser failed") }
            written += n
        }
        while true {
            let reply = try readMessage()
            guard reply["id"]?.intValue == nextID else { continue }
            if let error = reply["error"] {
                throw Failure(description: "\(method) failed: \(error.jsonString)")
            }
            return reply["result"] ?? .null
        }
    }

    /// The next message from the browser, waiting at most 60 s for it.
    private func readMessage() throws -> JSONValue {
        while true {
            if let end = pending.firstIndex(of: 0) {
                let text = pending[..<end]
                pending.removeSubrange(...end)
                return try JSONValue.parse(text)
            }
            var poller = pollfd(fd: fromBrowser, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 60_000) == 1 else { throw Failure(description: "the browser did not answer") }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { read(fromBrowser, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "the browser closed its pipe") }
            pending.append(contentsOf: chunk[..<n])
        }
    }

    /// Runs blocking work on a thread of its own. Waiting for the browser on one of the
    /// few threads of Swift's cooperative pool would starve the server under test, whose
    /// handlers run there, and so the very page the test waits for.
    static func detached<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    private static func require<T>(_ value: T?, _ message: String) throws -> T {
        guard let value else { throw Failure(description: message) }
        return value
    }
}
