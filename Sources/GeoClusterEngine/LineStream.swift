#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The I/O loop of `geo-cluster query` over two file descriptors: splits the input at
/// newlines, answers each line through the shared ``LineProtocol`` and writes the answers.
///
/// Input is read in chunks of up to 64 KiB. Answers are written when the input read so
/// far has been answered, just before the loop waits for more input: an interactive
/// client gets each answer at once, and input that arrives in bulk is answered with one
/// large write per chunk read (or per MiB of answers). A line longer than the protocol's
/// limit is answered with an error and skipped without buffering it.
///
/// The loop does not touch signal dispositions: a process that wants a closed output to
/// end it quietly (as `geo-cluster query` does) keeps SIGPIPE's default action; with
/// SIGPIPE ignored, a closed output ends the loop with ``Outcome/outputClosed``.
public struct LineStream: Sendable {
    public let lineProtocol: LineProtocol
    /// The descriptor requests are read from (stdin for `geo-cluster query`).
    public var input: Int32
    /// The descriptor answers are written to (stdout for `geo-cluster query`).
    public var output: Int32

    /// Bytes asked of one `read`; the size of a pipe's buffer on Linux.
    static let readChunkBytes = 1 << 16
    /// Answers buffered before a write even when more input is waiting.
    static let writeThresholdBytes = 1 << 20

    /// How the loop ended.
    public enum Outcome: Equatable, Sendable {
        /// Every line up to the end of input was answered and written.
        case endOfInput
        /// The output's reader went away (EPIPE); answers were lost.
        case outputClosed
        /// Reading or writing failed otherwise, with the `errno` of the failure.
        case failed(errno: Int32)
    }

    public init(lineProtocol: LineProtocol, input: Int32 = 0, output: Int32 = 1) {
        self.lineProtocol = lineProtocol
        self.input = input
        self.output = output
    }

    /// Reads to the end of input, answering as it goes. Does not close either descriptor.
    public func run() -> Outcome {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Self.readChunkBytes)
        var answers: [UInt8] = []
        answers.reserveCapacity(Self.writeThresholdBytes + Self.readChunkBytes)
        var lineNumber = 0
        var skippingOverlongLine = false
        // The whole input stream is one batch for the protocol's answer budget.
        var batch = LineProtocol.Batch()

        while true {
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let failure = errno
                if let outcome = flush(&answers) { return outcome }
                return .failed(errno: failure)
            }
            if count == 0 { break }

            var start = pending.count
            pending.append(contentsOf: chunk[0..<count])
            var lineStart = 0
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                lineNumber += 1
                if skippingOverlongLine {
                    skippingOverlongLine = false
                } else {
                    lineProtocol.respond(to: pending[lineStart..<newline], lineNumber: lineNumber, batch: &batch,
                                         into: &answers)
                }
                lineStart = newline + 1
                start = lineStart
                if answers.count >= Self.writeThresholdBytes, let outcome = flush(&answers) { return outcome }
            }
            pending.removeFirst(lineStart)
            if pending.count > lineProtocol.maxLineBytes {
                if !skippingOverlongLine {
                    lineProtocol.respondToOverlongLine(lineNumber: lineNumber + 1, into: &answers)
                    skippingOverlongLine = true
                }
                pending.removeAll(keepingCapacity: true)
            }
            if let outcome = flush(&answers) { return outcome }
        }
        if !pending.isEmpty && !skippingOverlongLine {
            lineProtocol.respond(to: pending[...], lineNumber: lineNumber + 1, batch: &batch, into: &answers)
        }
        return flush(&answers) ?? .endOfInput
    }

    /// Writes everything; returns an outcome when the output can take no more.
    private func flush(_ bytes: inout [UInt8]) -> Outcome? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                // The reader is gone (EPIPE when SIGPIPE is ignored) or the output failed:
                // nothing more can be delivered.
                return errno == EPIPE ? .outputClosed : .failed(errno: errno)
            }
            offset += written
        }
        bytes.removeAll(keepingCapacity: true)
        return nil
    }
}
