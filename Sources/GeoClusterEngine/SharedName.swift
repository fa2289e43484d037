import Glibc
import Synchronization

/// A name that many records repeat (who recorded a sighting, its species, a place's
/// category), kept once for the process: a record holds its number, 4 bytes, where a
/// Swift string longer than 15 bytes (a UUID, a name of six Hangul syllables or more) is
/// an allocation of its own, 64–80 bytes, in every record.
///
/// Numbers are given in the order names are first seen and never taken back: a name
/// stays in the table after the last record that held it is gone. The table is bounded by
/// the distinct names ever written, which memory bounds first (at 2^32 names the table
/// alone would take hundreds of gigabytes).
struct SharedName: Sendable, Hashable {
    /// 0 for no name; otherwise (index in its shard) * shardCount + shard + 1.
    private let number: UInt32

    static let none = SharedName(number: 0)

    private init(number: UInt32) { self.number = number }

    /// The number of `text`, given it if it has none yet.
    init(_ text: String) {
        self = SharedNameTable.shared.number(of: text, adding: true) ?? .none
    }

    /// `nil` for `nil`.
    init(_ text: String?) {
        self = text.map { SharedName($0) } ?? .none
    }

    /// The number of `text` when some record was given it, `nil` otherwise (no record
    /// holds that name): for filters, which add nothing to the table.
    static func existing(_ text: String) -> SharedName? {
        SharedNameTable.shared.number(of: text, adding: false)
    }

    /// The name, `nil` for ``none``.
    var text: String? {
        number == 0 ? nil : SharedNameTable.shared.name(number)
    }

    /// The name's UTF-8 bytes, `nil` for ``none``: read without a lock (answers write
    /// names of the records they show), and valid for the process's life.
    var utf8: UnsafeBufferPointer<UInt8>? {
        number == 0 ? nil : SharedNameTable.shared.bytes(number)
    }

    fileprivate static func make(_ number: UInt32) -> SharedName { SharedName(number: number) }
}

/// The names of ``SharedName``, in shards behind locks of their own, so that the threads
/// that read a file at once seldom wait on each other.
private final class SharedNameTable: Sendable {
    static let shared = SharedNameTable()

    static let shardCount = 16

    private struct Names {
        var numbers: [String: UInt32] = [:]
        var names: [String] = []
    }

    private final class Shard: Sendable {
        let names = Mutex(Names())
        /// The names' bytes by index, written under the lock of `names`.
        let bytes = NameBytes()
    }

    private let shards = (0..<SharedNameTable.shardCount).map { _ in Shard() }

    func number(of text: String, adding: Bool) -> SharedName? {
        let shard = Self.shard(of: text)
        return shards[shard].names.withLock { table -> SharedName? in
            if let number = table.numbers[text] { return .make(number) }
            guard adding else { return nil }
            let number = UInt32(truncatingIfNeeded: table.names.count * Self.shardCount + shard + 1)
            shards[shard].bytes.add(text, at: table.names.count)
            table.names.append(text)
            table.numbers[text] = number
            return .make(number)
        }
    }

    /// A name's shard from its length and last bytes (where ids made of a common prefix
    /// and a counter or random digits differ): the table's dictionary hashes the whole
    /// name again, and hashing it twice cost the file's start a tenth more CPU.
    private static func shard(of text: String) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var h = UInt(bytes.count)
            for byte in bytes.suffix(4) { h = h &* 31 &+ UInt(byte) }
            return Int(h % UInt(shardCount))
        }
    }

    /// The bytes of a name that ``number(of:adding:)`` gave: the number was handed out
    /// after its bytes were written, and reached the reader through whatever published
    /// the record that holds it.
    func bytes(_ number: UInt32) -> UnsafeBufferPointer<UInt8>? {
        let code = Int(number) - 1
        return shards[code % Self.shardCount].bytes[code / Self.shardCount]
    }

    func name(_ number: UInt32) -> String? {
        let code = Int(number) - 1
        let shard = code % Self.shardCount, index = code / Self.shardCount
        return shards[shard].names.withLock { table in index < table.names.count ? table.names[index] : nil }
    }
}

/// A name that many records share (a sighting's species, a place's category), as a record
/// keeps it: a number of the process's table of names (``SharedName``), 4 bytes where a
/// Swift string takes 16 and, past 15 bytes (six Hangul syllables or more), an allocation
/// of its own in every record. Equal when the names are.
public struct RecordName: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    let shared: SharedName

    public init(_ text: String) { shared = SharedName(text) }

    public init(stringLiteral text: String) { self.init(text) }

    public var text: String { shared.text ?? "" }

    public var description: String { text }
}

/// The UTF-8 bytes of a shard's names by index, for reading without its lock: chunks of
/// 4,096 pointers, each to a name's length (4 bytes) and bytes, from a directory that
/// covers every index a 32-bit number can have (2^16 chunks, 512 KB; mapped, so its
/// untouched pages take no memory). Nothing is ever freed or moved, as names are never taken back:
/// a pointer read once stays valid. Written only under the shard's lock, each slot once,
/// before the name's number is given out.
private final class NameBytes: @unchecked Sendable {
    private static let chunkBits = 12
    private static let chunkSize = 1 << chunkBits
    private static let chunks = 1 << 16

    private let directory: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeRawPointer?>?>

    init() {
        // Mapped rather than allocated: a `calloc` from the heap may clear (and so touch)
        // every page, where a mapping's pages are zero until written.
        let stride = MemoryLayout<UnsafeMutablePointer<UnsafeRawPointer?>?>.stride
        let mapped = mmap(nil, Self.chunks * stride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        let memory = mapped.flatMap { $0 == UnsafeMutableRawPointer(bitPattern: -1) ? nil : $0 }
            ?? calloc(Self.chunks, stride)!
        directory = memory.bindMemory(to: UnsafeMutablePointer<UnsafeRawPointer?>?.self, capacity: Self.chunks)
    }

    /// Keeps `text`'s bytes at `index` (under the shard's lock).
    func add(_ text: String, at index: Int) {
        let chunk = index >> Self.chunkBits
        guard chunk < Self.chunks else { return }
        if directory[chunk] == nil {
            directory[chunk] = calloc(Self.chunkSize, MemoryLayout<UnsafeRawPointer?>.stride)!
                .bindMemory(to: UnsafeRawPointer?.self, capacity: Self.chunkSize)
        }
        let count = text.utf8.count
        let entry = malloc(MemoryLayout<UInt32>.size + max(count, 1))!
        entry.storeBytes(of: UInt32(truncatingIfNeeded: count), as: UInt32.self)
        let bytes = (entry + MemoryLayout<UInt32>.size).bindMemory(to: UInt8.self, capacity: max(count, 1))
        _ = UnsafeMutableBufferPointer(start: bytes, count: count).initialize(from: text.utf8)
        directory[chunk]![index & (Self.chunkSize - 1)] = UnsafeRawPointer(entry)
    }

    subscript(index: Int) -> UnsafeBufferPointer<UInt8>? {
        let chunk = index >> Self.chunkBits
        guard index >= 0, chunk < Self.chunks, let slots = directory[chunk],
              let entry = slots[index & (Self.chunkSize - 1)] else { return nil }
        let count = Int(entry.load(as: UInt32.self))
        return UnsafeBufferPointer(start: (entry + MemoryLayout<UInt32>.size).assumingMemoryBound(to: UInt8.self),
                                   count: count)
    }
}
