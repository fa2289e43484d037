/// A feature's JSON text as a record keeps it: without the parts that the text of nearly
/// every feature spells the same way.
///
/// Records' features are written by one encoder, as
/// `{"type":"Feature","id":ID,"geometry":{"type":"Point","coordinates":[X,Y]},"properties":…}`:
/// 81 bytes of each (a third of a sighting's text) are always the same. A text of that
/// form is kept as the id's text, the coordinates' text and the rest, with the lengths of
/// the first two; any other text is kept whole. The cut is checked byte for byte where it
/// is made, so putting the fixed parts back gives the text given, whatever it holds.
struct FeatureText: Sendable, Equatable {
    /// A header, then the text's parts: `[0]` for a text kept whole; `[1, id length (2
    /// bytes, little-endian), coordinates length (2 bytes)]` for one kept in parts.
    private let storage: [UInt8]

    private static let whole: UInt8 = 0
    private static let parts: UInt8 = 1
    private static let partsHeader = 5

    static let beforeID: StaticString = #"{"type":"Feature","id":"#
    static let beforeCoordinates: StaticString = #","geometry":{"type":"Point","coordinates":["#
    static let beforeRest: StaticString = #"]},"properties":"#

    init(_ text: [UInt8]) { self.init(text[...]) }

    init(_ text: ArraySlice<UInt8>) {
        storage = text.withUnsafeBufferPointer { text in
            var storage = [UInt8]()
            guard let cut = Self.cut(text) else {
                storage.reserveCapacity(1 + text.count)
                storage.append(Self.whole)
                storage.append(contentsOf: text)
                return storage
            }
            storage.reserveCapacity(Self.partsHeader + text.count - Self.fixedCount)
            storage.append(Self.parts)
            storage.append(UInt8(truncatingIfNeeded: cut.id.count))
            storage.append(UInt8(truncatingIfNeeded: cut.id.count >> 8))
            storage.append(UInt8(truncatingIfNeeded: cut.coordinates.count))
            storage.append(UInt8(truncatingIfNeeded: cut.coordinates.count >> 8))
            storage.append(contentsOf: UnsafeBufferPointer(rebasing: text[cut.id]))
            storage.append(contentsOf: UnsafeBufferPointer(rebasing: text[cut.coordinates]))
            storage.append(contentsOf: UnsafeBufferPointer(rebasing: text[cut.rest]))
            return storage
        }
    }

    /// The text, made again.
    var text: [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(count)
        append(to: &text)
        return text
    }

    /// Bytes of the text.
    var count: Int {
        storage[0] == Self.whole ? storage.count - 1 : storage.count - Self.partsHeader + Self.fixedCount
    }

    /// Whether the text is kept in parts (for tests).
    var isCut: Bool { storage[0] == Self.parts }

    /// Appends the text.
    func append(to output: inout [UInt8]) {
        storage.withUnsafeBufferPointer { storage in
            guard storage[0] == Self.parts else {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: storage[1...]))
                return
            }
            let idEnd = Self.partsHeader + (Int(storage[1]) | Int(storage[2]) << 8)
            let coordinatesEnd = idEnd + (Int(storage[3]) | Int(storage[4]) << 8)
            Self.append(Self.beforeID, to: &output)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: storage[Self.partsHeader..<idEnd]))
            Self.append(Self.beforeCoordinates, to: &output)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: storage[idEnd..<coordinatesEnd]))
            Self.append(Self.beforeRest, to: &output)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: storage[coordinatesEnd...]))
        }
    }

    @inline(__always)
    private static func append(_ text: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static let fixedCount = beforeID.utf8CodeUnitCount + beforeCoordinates.utf8CodeUnitCount
        + beforeRest.utf8CodeUnitCount

    /// Where a text of the usual form has its id, its coordinates and the rest; `nil` for
    /// any other text, or parts too long for the header.
    private static func cut(_ text: UnsafeBufferPointer<UInt8>)
        -> (id: Range<Int>, coordinates: Range<Int>, rest: Range<Int>)?
    {
        guard var position = match(beforeID, in: text, at: 0) else { return nil }
        let idStart = position
        // The id: a string (escapes skipped) or a number.
        if position < text.count, text[position] == UInt8(ascii: "\"") {
            position += 1
            while position < text.count, text[position] != UInt8(ascii: "\"") {
                position += text[position] == UInt8(ascii: "\\") ? 2 : 1
            }
            position += 1
        } else {
            while position < text.count, isNumberByte(text[position]) { position += 1 }
        }
        guard position > idStart, position <= text.count else { return nil }
        let id = idStart..<position
        guard let coordinatesStart = match(beforeCoordinates, in: text, at: position) else { return nil }
        position = coordinatesStart
        while position < text.count, isNumberByte(text[position]) || text[position] == UInt8(ascii: ",") {
            position += 1
        }
        let coordinates = coordinatesStart..<position
        guard let restStart = match(beforeRest, in: text, at: position),
              id.count < Int(UInt16.max), coordinates.count < Int(UInt16.max) else { return nil }
        return (id, coordinates, restStart..<text.count)
    }

    /// The position after `fixed` when the text holds it at `position`.
    private static func match(_ fixed: StaticString, in text: UnsafeBufferPointer<UInt8>, at position: Int) -> Int? {
        let count = fixed.utf8CodeUnitCount
        guard position <= text.count - count else { return nil }
        for k in 0..<count where text[position + k] != fixed.utf8Start[k] { return nil }
        return position + count
    }

    @inline(__always)
    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
             UInt8(ascii: "e"), UInt8(ascii: "E"): true
        default: false
        }
    }
}
