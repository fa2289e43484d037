import Logging

/// A log handler that writes what another handler writes (swift-log's `StreamLogHandler`
/// to standard error, for `serve`), and hands it the metadata only when a line is logged.
///
/// The server gives every request's logger its own request id. `StreamLogHandler` formats
/// its whole metadata into text each time an item of it changes, so at a level that logs
/// nothing for a request every request still paid for that text (about 2.5% of the CPU
/// of a `/healthz`). Here the metadata is kept as values and formatted by the wrapped
/// handler when, and only when, a line is written; the lines are the wrapped handler's.
public struct LazyMetadataLogHandler<Wrapped: LogHandler>: LogHandler {
    private var wrapped: Wrapped
    public var metadata: Logger.Metadata

    public init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
        self.metadata = wrapped.metadata
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var handler = wrapped
        handler.metadata = metadata
        handler.log(event: event)
    }
}
