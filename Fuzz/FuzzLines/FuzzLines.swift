import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import FuzzSupport

/// libFuzzer's entry point for the JSON-lines protocol: the input is a batch of request
/// lines (the JSON parser, request decoding, every operation, the answer writer),
/// answered by a fresh engine within one answer budget. Any trap is a crash libFuzzer
/// saves; an input that takes longer than `-timeout` is a hang it saves.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLines(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lineProtocol = LineProtocol(engine: FuzzEngine.make(), maxLineBytes: 1 << 16, maxBatchAnswerBytes: 1 << 22)
    var batch = LineProtocol.Batch()
    var output: [UInt8] = []
    var lineNumber = 0
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
        lineNumber += 1
        lineProtocol.respond(to: line, lineNumber: lineNumber, batch: &batch, into: &output)
    }
    // Every answer the protocol writes is one JSON text per line.
    for answer in output.split(separator: 0x0A) {
        guard (try? JSONValue.parse(answer)) != nil else { fatalError("an answer is not JSON: \(answer)") }
    }
    return 0
}
