import Logging
import Synchronization
import Testing
@testable import GeoClusterHTTP

/// The server's log handler keeps request metadata as values and gives it to the handler
/// that writes lines only when it writes one.
struct LazyMetadataLogHandlerTests {
    final class Recorder: Sendable {
        struct State {
            var metadataChanges = 0
            var lines: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] = []
        }

        let state = Mutex(State())
    }

    /// Counts every change of its metadata, as `StreamLogHandler` formats it on each one.
    struct Recording: LogHandler {
        let recorder: Recorder
        var metadata: Logger.Metadata = [:] {
            didSet { recorder.state.withLock { $0.metadataChanges += 1 } }
        }
        var logLevel: Logger.Level = .info
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.state.withLock { $0.lines.append((event.level, "\(event.message)", metadata)) }
        }
    }

    @Test func metadataReachesTheWritingHandlerOnlyWithALine() {
        let recorder = Recorder()
        var logger = Logger(label: "test") { _ in LazyMetadataLogHandler(Recording(recorder: recorder)) }
        logger.logLevel = .warning
        #expect(logger.logLevel == .warning)
        // What the server does per request at a level that writes nothing for it.
        for request in 0 ..< 100 {
            var requestLogger = logger
            requestLogger[metadataKey: "hb.request.id"] = "\(request)"
            requestLogger.info("not written")
        }
        #expect(recorder.state.withLock { $0.metadataChanges } == 0)
        #expect(recorder.state.withLock { $0.lines.isEmpty })

        logger[metadataKey: "hb.request.id"] = "7"
        logger[metadataKey: "layer"] = "birds"
        #expect(logger[metadataKey: "hb.request.id"] == "7")
        logger.warning("written")
        let lines = recorder.state.withLock { $0.lines }
        #expect(lines.count == 1)
        #expect(lines.first?.level == .warning && lines.first?.message == "written")
        #expect(lines.first?.metadata == ["hb.request.id": "7", "layer": "birds"])
    }
}
