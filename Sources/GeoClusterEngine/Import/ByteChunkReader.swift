import Foundation

/// The bytes of an import source in chunks of at most ``chunkSize``, from a file, standard
/// input or memory, so that a big file is never held whole.
public struct ByteChunkReader {
    private enum Source {
        case handle(FileHandle)
        case memory([UInt8])
    }

    /// 64 KiB: large enough that reading costs little per byte, small enough to stay in cache.
    public static let defaultChunkSize = 1 << 16

    private let source: Source
    /// The path or a label such as `<stdin>`, for error messages.
    public let name: String
    public let chunkSize: Int
    /// The size of the input in bytes when known (a regular file, memory); `nil` for a pipe.
    public let totalBytes: Int?
    public private(set) var bytesRead = 0
    private var finished = false

    /// Opens the file at `path`; `-` means standard input.
    public init(path: String, chunkSize: Int = defaultChunkSize) throws(EngineError) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        self.chunkSize = chunkSize
        if path == "-" {
            source = .handle(.standardInput)
            name = "<stdin>"
            totalBytes = nil
            return
        }
        name = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let handle = FileHandle(forReadingAtPath: path) else {
            throw .invalidLayerSource(path: path, reason: "cannot be read")
        }
        source = .handle(handle)
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        totalBytes = (attributes?[.size] as? NSNumber)?.intValue
    }

    /// Bytes held in memory, read in chunks like a file (for tests and small inputs).
    public init(bytes: [UInt8], name: String = "<memory>", chunkSize: Int = defaultChunkSize) {
        precondition(chunkSize > 0, "chunkSize must be positive")
        source = .memory(bytes)
        self.name = name
        self.chunkSize = chunkSize
        totalBytes = bytes.count
    }

    /// The next chunk, never empty; `nil` at the end of the input.
    public mutating func next() throws(EngineError) -> ArraySlice<UInt8>? {
        guard !finished else { return nil }
        let chunk: ArraySlice<UInt8>
        switch source {
        case let .memory(bytes):
            let end = min(bytes.count, bytesRead + chunkSize)
            chunk = bytes[bytesRead..<end]
        case let .handle(handle):
            do {
                chunk = try handle.read(upToCount: chunkSize).map { [UInt8]($0)[...] } ?? []
            } catch {
                throw .invalidLayerSource(path: name, reason: "read failed after \(bytesRead) bytes: \(error)")
            }
        }
        guard !chunk.isEmpty else {
            finished = true
            return nil
        }
        bytesRead += chunk.count
        return chunk
    }
}

/// Drops a UTF-8 byte order mark (EF BB BF) at the start of a stream, however the stream
/// is split into chunks.
struct ByteOrderMarkStripper {
    private static let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private var head: [UInt8] = []
    private var decided = false

    /// The bytes of `chunk` that follow the mark; empty while the first three bytes are
    /// still undecided.
    mutating func strip(_ chunk: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard !decided else { return chunk }
        head += chunk
        if head.count < Self.mark.count && head.elementsEqual(Self.mark.prefix(head.count)) { return [] }
        return finish()
    }

    /// Whatever is held back at the end of the input.
    mutating func finish() -> ArraySlice<UInt8> {
        guard !decided else { return [] }
        decided = true
        let bytes = head.starts(with: Self.mark) ? head.dropFirst(Self.mark.count) : head[...]
        head = []
        return bytes
    }
}
