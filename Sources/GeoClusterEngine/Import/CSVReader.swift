/// One record of a CSV file: its fields and the 1-based line it starts on.
public struct CSVRow: Sendable, Equatable {
    /// The physical line the record starts on, counting the header as line 1. A quoted
    /// field with line breaks makes a record span several lines.
    public var line: Int
    public var fields: [String]
    /// Why the record is malformed (text after a closing quote, invalid UTF-8, an
    /// unclosed quote at the end of the input), `nil` when it is well formed.
    public var problem: String?

    public init(line: Int, fields: [String], problem: String? = nil) {
        self.line = line
        self.fields = fields
        self.problem = problem
    }
}

/// A streaming RFC 4180 reader: bytes go in chunk by chunk, whole records come out, and
/// only the record being read is held.
///
/// - Fields are separated by commas; a field that starts with `"` is quoted and may hold
///   commas, line breaks and `""` (one quote). A quote inside an unquoted field is kept
///   as a literal character, as most producers expect.
/// - Records end at LF, CRLF or a lone CR. Line breaks inside quoted fields are kept as
///   given and counted in line numbers.
/// - A UTF-8 byte order mark at the start is dropped. Fields must be valid UTF-8.
/// - A blank line (no characters at all) is not a record.
/// - A record longer than ``maxRecordBytes`` stops the reading: it is almost always an
///   unclosed quote that would otherwise swallow the rest of the file.
public struct CSVReader {
    /// 1 MiB: far beyond a sane record, small enough to bound memory.
    public static let defaultMaxRecordBytes = 1 << 20

    private enum State {
        case fieldStart, unquoted, quoted, quoteInQuoted
    }

    /// The input's name, for the error that stops the reading.
    public let sourceName: String
    public let maxRecordBytes: Int

    private var bom = ByteOrderMarkStripper()
    private var state = State.fieldStart
    private var field: [UInt8] = []
    private var fieldIsQuoted = false
    private var fields: [String] = []
    private var problem: String?
    private var recordBytes = 0
    /// The line the next byte is on.
    private var line = 1
    private var recordLine = 1
    private var lastWasCR = false
    /// A CR ended the last record, so an LF right after it belongs to that line break.
    private var skipLineFeed = false

    public init(sourceName: String = "<input>", maxRecordBytes: Int = defaultMaxRecordBytes) {
        self.sourceName = sourceName
        self.maxRecordBytes = maxRecordBytes
    }

    /// Reads `chunk` and appends the records it completes to `rows`.
    /// - Throws: ``EngineError/invalidLayerSource(path:reason:)`` for an over-long record.
    public mutating func read(_ chunk: ArraySlice<UInt8>, into rows: inout [CSVRow]) throws(EngineError) {
        for byte in bom.strip(chunk) {
            try consume(byte, into: &rows)
        }
    }

    /// Completes the last record when the input does not end with a line break.
    public mutating func finish(into rows: inout [CSVRow]) throws(EngineError) {
        for byte in bom.finish() {
            try consume(byte, into: &rows)
        }
        switch state {
        case .quoted:
            problem = problem ?? "a quoted field is not closed at the end of the input"
            endRecord(into: &rows)
        case .fieldStart where fields.isEmpty && field.isEmpty && !fieldIsQuoted:
            break
        default:
            endRecord(into: &rows)
        }
    }

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    private mutating func consume(_ byte: UInt8, into rows: inout [CSVRow]) throws(EngineError) {
        let previousWasCR = lastWasCR
        lastWasCR = byte == Self.cr
        if byte == Self.cr || (byte == Self.lf && !previousWasCR) { line += 1 }
        if skipLineFeed {
            skipLineFeed = false
            if byte == Self.lf { return }
        }
        recordBytes += 1
        if recordBytes > maxRecordBytes {
            throw .invalidLayerSource(
                path: "\(sourceName), line \(recordLine)",
                reason: "a record is longer than \(maxRecordBytes) bytes; is a quote left open?")
        }
        switch state {
        case .quoted:
            if byte == Self.quote { state = .quoteInQuoted } else { field.append(byte) }
        case .quoteInQuoted:
            if byte == Self.quote {
                field.append(byte)
                state = .quoted
            } else if byte == Self.comma {
                endField()
            } else if byte == Self.cr || byte == Self.lf {
                endRecord(into: &rows)
                skipLineFeed = byte == Self.cr
            } else {
                problem = problem ?? "field \(fields.count + 1): a closing quote must be followed by a comma or a line break"
                field.append(byte)
                state = .unquoted
            }
        case .fieldStart, .unquoted:
            if byte == Self.comma {
                endField()
            } else if byte == Self.cr || byte == Self.lf {
                endRecord(into: &rows)
                skipLineFeed = byte == Self.cr
            } else if byte == Self.quote && state == .fieldStart {
                fieldIsQuoted = true
                state = .quoted
            } else {
                field.append(byte)
                state = .unquoted
            }
        }
    }

    private mutating func endField() {
        if let text = String(validating: field, as: UTF8.self) {
            fields.append(text)
        } else {
            problem = problem ?? "field \(fields.count + 1) is not valid UTF-8"
            fields.append(String(decoding: field, as: UTF8.self))
        }
        field.removeAll(keepingCapacity: true)
        fieldIsQuoted = false
        state = .fieldStart
    }

    private mutating func endRecord(into rows: inout [CSVRow]) {
        let blank = fields.isEmpty && field.isEmpty && !fieldIsQuoted && problem == nil
        if !blank {
            endField()
            rows.append(CSVRow(line: recordLine, fields: fields, problem: problem))
        }
        fields.removeAll(keepingCapacity: true)
        field.removeAll(keepingCapacity: true)
        fieldIsQuoted = false
        problem = nil
        state = .fieldStart
        recordBytes = 0
        recordLine = line
    }
}
