#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeoClusterEngine

/// The stdin/stdout loop of `geo-cluster query`: splits input at newlines, answers each
/// line through the shared ``LineProtocol`` and writes the answers.
///
/// Answers are written when the input read so far has been answered, just before the
/// loop waits for more input: an interactive client gets each answer at once, and input
/// that arrives in bulk is answered with one large write per 64 KiB read. A line longer
/// than the protocol's limit is answered with an error and skipped without buffering it.
/// A closed stdout ends the process through SIGPIPE's default action (status 141),
/// quietly, as other Unix filters do.
struct LineStream {
    let lineProtocol: LineProtocol
    var input: Int32 = 0
    var output: Int32 = 1

    /// Reads to the end of input and returns the process's exit status: 0 at the end of
    /// input, 141 (the conventional SIGPIPE status) when the reader went away, 1 when
    /// stdout failed otherwise.
    func run() -> Int32 {
        signal(SIGPIPE, SIG_DFL)
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var answers: [UInt8] = []
        answers.reserveCapacity(1 << 17)
        var lineNumber = 0
        var skippingOverlongLine = false

        while true {
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                break
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
                    lineProtocol.respond(to: pending[lineStart..<newline], lineNumber: lineNumber, into: &answers)
                }
                lineStart = newline + 1
                start = lineStart
                if answers.count >= 1 << 20, let status = flush(&answers) { return status }
            }
            pending.removeFirst(lineStart)
            if pending.count > lineProtocol.maxLineBytes {
                if !skippingOverlongLine {
                    lineProtocol.respondToOverlongLine(lineNumber: lineNumber + 1, into: &answers)
                    skippingOverlongLine = true
                }
                pending.removeAll(keepingCapacity: true)
            }
            if let status = flush(&answers) { return status }
        }
        if !pending.isEmpty && !skippingOverlongLine {
            lineProtocol.respond(to: pending[...], lineNumber: lineNumber + 1, into: &answers)
        }
        return flush(&answers) ?? 0
    }

    /// Writes everything; returns an exit status when stdout can take no more.
    private func flush(_ bytes: inout [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                // The reader is gone (EPIPE when a parent ignores SIGPIPE) or stdout
                // failed: nothing more can be delivered.
                return errno == EPIPE ? 141 : 1
            }
            offset += written
        }
        bytes.removeAll(keepingCapacity: true)
        return nil
    }
}
