import GeoCluster
import GeoClusterWire

/// The JSON-lines protocol of `geo-cluster query`: one request object per line in, one
/// response object per line out, in the same order, each echoing the request's `id`.
///
/// `{"id":…,"ok":true,"result":…}` or
/// `{"id":…,"ok":false,"error":{"code":…,"message":…,"field":…,"line":N}}`.
/// A bad line gets an error line and the stream goes on. Lines holding only white space
/// are not requests and get no answer. This type frames nothing itself: the caller splits
/// the input at newlines and writes the output; both transports share it.
public struct LineProtocol: Sendable {
    public let engine: Engine
    /// Longest accepted line in bytes, without its newline.
    public var maxLineBytes: Int
    /// Deepest accepted nesting of arrays and objects in a request.
    public var maxDepth: Int
    /// Most bytes of answers one batch (a `POST /v1/query` body, a `geo-cluster query`
    /// input stream) may produce, `nil` for no bound. Each answer is bounded by the
    /// engine's features-per-answer limit; this bounds their sum, so that a small request
    /// of many whole-world lines cannot ask for gigabytes. See ``Batch``.
    public var maxBatchAnswerBytes: Int?

    public static let defaultMaxLineBytes = 1 << 20
    public static let defaultMaxDepth = 32

    /// Every `error.code` an answer can carry, as the error-code table of docs/PROTOCOL.md
    /// lists them: the framing and JSON codes first, then the engine's. Each one has a
    /// golden answer in Tests/GeoClusterEngineTests/Golden; a code added to the engine
    /// belongs here, in that table, and in a golden file.
    public static let errorCodes: [String] = [
        // The line itself.
        "invalid_json", "invalid_utf8", "duplicate_key", "number_out_of_range", "nesting_too_deep", "line_too_long",
        // The request envelope and fields.
        "invalid_request", "unknown_op", "missing_field", "invalid_field", "unknown_field",
        // Layers, clusters, tiles and answer sizes.
        "unknown_layer", "unknown_cluster", "invalid_bbox", "invalid_tile", "too_large", "invalid_filter",
        // Writes.
        "invalid_record", "duplicate_id", "unknown_species", "unknown_id", "storage_unavailable", "read_only_layer",
        // `nearby` and `reachable`.
        "not_live_layer", "wrong_layer_kind", "unknown_station", "ambiguous_station", "unknown_network", "invalid_remaining_time",
        "invalid_walking_speed", "unknown_walking_pace", "invalid_reachability_parameter",
        // `project`.
        "malformed_crs", "unknown_crs", "invalid_coordinate", "transform_failed", "proj_file_refused", "unsupported_crs",
        "grid_unavailable", "context_creation_failed",
        // API keys and owners (HTTP with keys; `geo-cluster query` takes no keys).
        "unauthorized", "forbidden", "not_owner",
    ]

    public init(engine: Engine, maxLineBytes: Int = defaultMaxLineBytes, maxDepth: Int = defaultMaxDepth,
                maxBatchAnswerBytes: Int? = nil) {
        self.engine = engine
        self.maxLineBytes = maxLineBytes
        self.maxDepth = maxDepth
        self.maxBatchAnswerBytes = maxBatchAnswerBytes
    }

    /// What one batch has answered so far, against ``maxBatchAnswerBytes``.
    ///
    /// The line whose answer would take the batch past the bound gets the error
    /// `too_large` instead (a write is never undone for it: a write's answer always
    /// counts and is kept), and so does every later line, without being executed.
    public struct Batch: Sendable {
        /// Bytes of answers written so far.
        public private(set) var answeredBytes = 0
        /// Set once an answer did not fit.
        public private(set) var isSpent = false

        public init() {}

        mutating func add(_ bytes: Int) { answeredBytes += bytes }
        mutating func spend() { isSpent = true }
    }

    /// Appends the response line for one input line of a batch with no answer budget.
    public func respond(to line: ArraySlice<UInt8>, lineNumber: Int, into output: inout [UInt8]) {
        var batch = Batch()
        respond(to: line, lineNumber: lineNumber, batch: &batch, into: &output)
    }

    /// Appends the response line (with its newline) for one input line, or nothing when
    /// the line is blank. `lineNumber` counts from 1 and is reported in errors; `batch`
    /// carries the answer budget from line to line.
    ///
    /// A write blocks the calling thread until its store has it; transports on Swift
    /// concurrency's threads use ``respond(to:lineNumber:batch:by:into:)`` instead.
    public func respond(to line: ArraySlice<UInt8>, lineNumber: Int, batch: inout Batch, into output: inout [UInt8]) {
        guard let pending = begin(line, lineNumber: lineNumber, batch: batch, into: &output) else { return }
        let failure: EngineError?
        do {
            try engine.encode(pending.request, into: &output)
            failure = nil
        } catch {
            failure = error
        }
        finish(pending, failure: failure, lineNumber: lineNumber, batch: &batch, into: &output)
    }

    /// As the synchronous form, but a write waits for its store without holding the
    /// thread (``Engine/perform(_:into:)``).
    /// `caller` is who sent the line (``Engine/authorize(_:by:)``). Returns the engine's
    /// error when it refused or failed the line's request (for the transport to count key
    /// refusals), `nil` otherwise, also for lines that were not requests.
    @discardableResult
    public func respond(to line: ArraySlice<UInt8>, lineNumber: Int, batch: inout Batch, by caller: Caller,
                        into output: inout [UInt8]) async -> EngineError? {
        guard let pending = begin(line, lineNumber: lineNumber, batch: batch, into: &output) else { return nil }
        let failure: EngineError?
        do {
            try await engine.perform(pending.request, by: caller, into: &output)
            failure = nil
        } catch {
            failure = error
        }
        finish(pending, failure: failure, lineNumber: lineNumber, batch: &batch, into: &output)
        return failure
    }

    /// A line's request, decoded, whose answer the engine writes after `start`.
    private struct Pending {
        var id: JSONValue
        var request: Request
        var start: Int
    }

    /// Decodes a line and writes the head of its answer, `{"id":…,"ok":true,"result":`,
    /// so that the engine writes the result in place; or writes the line's error line (or
    /// nothing for a blank line) and returns nil.
    private func begin(_ line: ArraySlice<UInt8>, lineNumber: Int, batch: Batch,
                       into output: inout [UInt8]) -> Pending? {
        var line = line
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        guard line.count <= maxLineBytes else {
            respondToOverlongLine(lineNumber: lineNumber, into: &output)
            return nil
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(line, maxDepth: maxDepth)
        } catch {
            write(id: .null, error: error.code, message: error.description, field: nil, lineNumber: lineNumber, into: &output)
            return nil
        }
        let id = json["id"] ?? .null
        do throws(EngineError) {
            let request = try Request(json: json)
            if batch.isSpent, let limit = maxBatchAnswerBytes { throw Self.batchTooLarge(limit) }
            let start = output.count
            output.appendASCII(#"{"id":"#)
            id.encode(into: &output)
            output.appendASCII(#","ok":true,"result":"#)
            return Pending(id: id, request: request, start: start)
        } catch {
            write(id: id, error: error.code, message: error.description, field: error.field,
                  lineNumber: lineNumber, into: &output)
            return nil
        }
    }

    /// Closes the answer the engine wrote, or replaces it with the error line; counts the
    /// answer against the batch's budget.
    private func finish(_ pending: Pending, failure: EngineError?, lineNumber: Int, batch: inout Batch,
                        into output: inout [UInt8]) {
        var failure = failure
        if failure == nil {
            output.appendASCII("}\n")
            let answered = output.count - pending.start
            if let limit = maxBatchAnswerBytes, batch.answeredBytes + answered > limit, !pending.request.isWrite {
                batch.spend()
                failure = Self.batchTooLarge(limit)
            } else {
                batch.add(answered)
            }
        }
        if let failure {
            output.removeSubrange(pending.start...)
            write(id: pending.id, error: failure.code, message: failure.description, field: failure.field,
                  lineNumber: lineNumber, into: &output)
        }
    }

    private static func batchTooLarge(_ limit: Int) -> EngineError {
        .tooLarge(what: "the total size in bytes of this batch's answers", limit: limit)
    }

    /// The error line for a line longer than ``maxLineBytes``; the caller skips the rest
    /// of that line without buffering it.
    public func respondToOverlongLine(lineNumber: Int, into output: inout [UInt8]) {
        write(id: .null, error: "line_too_long", message: "line exceeds \(maxLineBytes) bytes",
              field: nil, lineNumber: lineNumber, into: &output)
    }

    private func write(id: JSONValue, error code: String, message: String, field: String?,
                       lineNumber: Int, into output: inout [UInt8]) {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        if let field { error["field"] = .string(field) }
        error["line"] = .number(Double(lineNumber))
        var response: JSONObject = ["id": id, "ok": false]
        response["error"] = .object(error)
        JSONValue.object(response).encode(into: &output)
        output.append(0x0A)
    }
}
