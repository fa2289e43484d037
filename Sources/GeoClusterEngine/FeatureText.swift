import Foundation

/// A feature's JSON text as a record keeps it: without the parts that the text of nearly
/// every feature spells the same way.
///
/// Records' features are written by one encoder, as
/// `{"type":"Feature","id":ID,"geometry":{"type":"Point","coordinates":[X,Y]},"properties":…}`:
/// 81 bytes of each (a third of a sighting's text) are always the same. A text of that
/// form is kept as the id's text, the coordinates' text (two bytes to a byte: it holds
/// only digits, signs, exponents, points and commas) and the rest, with the lengths of the
/// first two; any other text is kept whole. In the rest, the members' names of the
/// layer kinds (`"species":`, `"observed_at":`, …, ``phrase(_:)``) are kept as one byte
/// each, a byte below 0x20, which JSON text never holds as itself (control characters
/// inside strings are escaped); a rest that holds such a byte anyway is kept as given.
/// A member whose value is a name the record keeps as a number of the process's table
/// (``SharedName``: a sighting's `species` and `observer_id`, a place's `category`) is kept
/// as one byte too, its name and quotes included, when its text is the name as is
/// (``FeatureTextNames``); putting it back reads the name from the table. So is a
/// sighting's `observed_at` when its text is the one its time writes again (the usual
/// `2025-05-01T06:30:00+09:00`), and an id that the record's id key gives as is (`"s7"` for
/// the key `s7`, `12` for `#12`).
/// The cut is checked byte for byte where it is made, so putting the fixed parts back
/// gives the text given, whatever it holds.
///
/// Sendable unchecked for its storage, a `ManagedBuffer` (which is not `Sendable`): its
/// bytes are written once, when the text is made, and only read afterwards.
struct FeatureText: @unchecked Sendable, Equatable {
    /// A header, then the text's parts. `[0]` and the text for a text kept whole. For one
    /// kept in parts, a first byte of flags (the form in its low two bits: 1, 2 when the
    /// rest's phrases are kept as one byte each, 3 when some of its members with their
    /// names are too; the id's in the next two, ``idKept``, ``idFromKey`` or
    /// ``idFromNumberKey``), the id's length (2 bytes, little-endian) when it is kept, the
    /// coordinates' length as text (2 bytes); then the id, the coordinates two bytes to a
    /// byte (``coordinateNibble(_:)``) and the rest.
    private let storage: Bytes

    /// Bytes kept once, with their count: an array keeps its count and its capacity in 16
    /// bytes beside the object's header, and a layer keeps one text per record (8 bytes
    /// fewer asked of malloc a record; with its 16-byte steps, 16 bytes a record less
    /// resident at 10M sightings).
    private typealias Bytes = ManagedBuffer<Int, UInt8>

    static func == (a: FeatureText, b: FeatureText) -> Bool {
        a.storage === b.storage || a.storage.withBuffer { a in b.storage.withBuffer { b in a.elementsEqual(b) } }
    }

    // Forms, in the low two bits of the first byte.
    private static let whole: UInt8 = 0
    private static let parts: UInt8 = 1
    private static let partsWithPhrases: UInt8 = 2
    private static let partsWithNames: UInt8 = 3

    // How the id is kept, in the next two bits.
    /// Kept, its length in the header.
    private static let idKept: UInt8 = 0
    /// Not kept: the key as a JSON string, between quotes (a string id without `#`).
    private static let idFromKey: UInt8 = 1 << 2
    /// Not kept: the key without its leading `#` (an integer id).
    private static let idFromNumberKey: UInt8 = 2 << 2

    @inline(__always)
    private static func form(_ storage: UnsafeBufferPointer<UInt8>) -> UInt8 { storage[0] & 3 }

    @inline(__always)
    private static func idMode(_ storage: UnsafeBufferPointer<UInt8>) -> UInt8 { storage[0] & (3 << 2) }

    static let beforeID: StaticString = #"{"type":"Feature","id":"#
    static let beforeCoordinates: StaticString = #","geometry":{"type":"Point","coordinates":["#
    static let beforeRest: StaticString = #"]},"properties":"#

    /// Text that the properties of nearly every record of a kind hold: the names of the
    /// members that sightings, places and stations are made of (and a note's), and the
    /// end of a time at Korea's offset. Phrase `k` is kept as the byte `k + 1`; each starts
    /// with a quote or a plus sign, and ``phrase(in:at:)`` tells them apart by their second
    /// byte. A switch rather than an array: answers read a phrase per member of every
    /// feature they write.
    @inline(__always)
    static func phrase(_ k: Int) -> StaticString {
        switch k {
        case 0: #""species":""#
        case 1: #""count":"#
        case 2: #""observed_at":""#
        case 3: #""observer_id":""#
        case 4: #""note":"#
        case 5: #""name":""#
        case 6: #""category":""#
        case 7: #""dwell_minutes":"#
        case 8: #""lines":"#
        default: #"+09:00""#
        }
    }

    static let phraseCount = 10

    init(_ text: [UInt8], names: FeatureTextNames = .none) { self.init(text[...], names: names) }

    /// - Parameter names: the record's id and names that its text may be kept without
    ///   (``FeatureTextNames``); the same must be given to read the text back.
    init(_ text: ArraySlice<UInt8>, names: FeatureTextNames = .none) {
        let texts = names.resolved
        storage = text.withUnsafeBufferPointer { text in
            guard let cut = Self.cut(text) else {
                return Bytes.make(count: 1 + text.count) { storage in
                    storage[0] = Self.whole
                    _ = Self.copy(text, to: storage + 1)
                }
            }
            let rest = UnsafeBufferPointer(rebasing: text[cut.rest])
            let id = UnsafeBufferPointer(rebasing: text[cut.id])
            let coordinates = UnsafeBufferPointer(rebasing: text[cut.coordinates])
            let idMode = Self.idMode(of: id, key: names.id)
            // Written to scratch space first, then copied to storage of its size: the rest
            // with its phrases is shorter than given.
            let bound = 5 + id.count + coordinates.count + rest.count
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { scratch in
                var output = scratch.baseAddress! + 1
                if idMode == Self.idKept {
                    output = Self.writeLength(id.count, to: output)
                }
                output = Self.writeLength(coordinates.count, to: output)
                if idMode == Self.idKept { output = Self.copy(id, to: output) }
                output = Self.packing(coordinates, to: output)
                let form: UInt8
                if let (end, keptNames) = Self.keepingPhrases(rest, to: output, names: texts) {
                    form = keptNames ? Self.partsWithNames : Self.partsWithPhrases
                    output = end
                } else {
                    form = Self.parts
                    output = Self.copy(rest, to: output)
                }
                scratch[0] = form | idMode
                let kept = UnsafeBufferPointer(start: scratch.baseAddress, count: output - scratch.baseAddress!)
                return Bytes.make(count: kept.count) { storage in _ = Self.copy(kept, to: storage) }
            }
        }
    }

    /// How the id is kept: not when the key gives its text as is.
    private static func idMode(of id: UnsafeBufferPointer<UInt8>, key: String) -> UInt8 {
        key.utf8.withContiguousStorageIfAvailable { key -> UInt8 in
            guard let first = key.first, let base = id.baseAddress else { return idKept }
            if first != UInt8(ascii: "#") {
                guard id.count == key.count + 2, id[0] == UInt8(ascii: "\""), id[id.count - 1] == UInt8(ascii: "\""),
                      memcmp(base + 1, key.baseAddress!, key.count) == 0 else { return idKept }
                return idFromKey
            }
            guard key.count > 1, key[1] != UInt8(ascii: "#"), id.count == key.count - 1,
                  memcmp(base, key.baseAddress! + 1, id.count) == 0 else { return idKept }
            return idFromNumberKey
        } ?? idKept
    }

    /// The text, made again, with the id and names it was made with.
    func text(names: FeatureTextNames) -> [UInt8] {
        var text: [UInt8] = []
        append(to: &text, names: names)
        return text
    }

    /// The text of one made without an id or names (for tests).
    var text: [UInt8] { text(names: .none) }

    /// Bytes of the text, with the id and names it was made with (for tests).
    func count(names: FeatureTextNames) -> Int {
        storage.withBuffer { storage in
            Self.count(storage, names: Self.form(storage) == Self.partsWithNames ? names.resolved : names.idOnly)
        }
    }

    /// Bytes of the text of one made without an id or names (for tests).
    var count: Int { count(names: .none) }

    /// Bytes of the text that `storage` keeps.
    private static func count(_ storage: UnsafeBufferPointer<UInt8>, names: FeatureTextNames.Texts) -> Int {
        guard form(storage) != whole else { return storage.count - 1 }
        let layout = Layout(storage)
        let rest = UnsafeBufferPointer(rebasing: storage[layout.restStart...])
        return idCount(storage, layout, key: names.id) + layout.coordinatesCount + fixedCount
            + (form(storage) == parts ? rest.count : countWithPhrases(rest, names: names))
    }

    /// Whether the text is kept in parts (for tests).
    var isCut: Bool { storage.withBuffer { Self.form($0) != Self.whole } }

    /// Whether the rest of the text is kept with its phrases as one byte each (for tests).
    var keepsPhrases: Bool { storage.withBuffer { Self.form($0) >= Self.partsWithPhrases } }

    /// Whether some members are kept with their names as one byte each (for tests).
    var keepsNames: Bool { storage.withBuffer { Self.form($0) == Self.partsWithNames } }

    /// Whether the id is written from the record's key rather than kept (for tests).
    var writesIDFromKey: Bool {
        storage.withBuffer { Self.form($0) != Self.whole && Self.idMode($0) != Self.idKept }
    }

    /// Bytes kept, the header included (for tests).
    var storedCount: Int { storage.withBuffer { $0.count } }

    /// Appends the text, with the id and names it was made with: written whole to scratch
    /// space, then appended in one copy.
    func append(to output: inout [UInt8], names: FeatureTextNames) {
        storage.withBuffer { storage in
            let form = Self.form(storage)
            guard form != Self.whole else {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: storage[1...]))
                return
            }
            let layout = Layout(storage)
            let rest = storage.count - layout.restStart
            // Most texts fit the stack's scratch space however many phrases their rest holds;
            // the others are measured first, as are those with names (read from the table
            // here, once).
            let texts = form == Self.partsWithNames ? names.resolved : names.idOnly
            let bound = form == Self.partsWithNames ? Self.count(storage, names: texts)
                : Self.idCount(storage, layout, key: names.id) + layout.coordinatesCount + Self.fixedCount
                    + (form == Self.partsWithPhrases ? rest * Self.longestPhrase : rest)
            let capacity = bound <= Self.scratchBytes ? Self.scratchBytes : Self.count(storage, names: texts)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
                let end = Self.write(storage, layout, to: scratch.baseAddress!, names: texts)
                output.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: end - scratch.baseAddress!))
            }
        }
    }

    /// Scratch space for ``append(to:)``, small enough for the stack.
    private static let scratchBytes = 1024

    /// Writes a text kept in parts whole; returns the end.
    private static func write(_ storage: UnsafeBufferPointer<UInt8>, _ layout: Layout, to text: UnsafeMutablePointer<UInt8>,
                              names: FeatureTextNames.Texts) -> UnsafeMutablePointer<UInt8>
    {
        let rest = UnsafeBufferPointer(rebasing: storage[layout.restStart...])
        var text = copy(beforeID, to: text)
        switch idMode(storage) {
        case idFromKey:
            text.pointee = UInt8(ascii: "\"")
            text = copy(names.id, droppingFirst: 0, to: text + 1)
            text.pointee = UInt8(ascii: "\"")
            text += 1
        case idFromNumberKey:
            text = copy(names.id, droppingFirst: 1, to: text)
        default:
            text = copy(UnsafeBufferPointer(rebasing: storage[layout.idStart..<layout.coordinatesStart]), to: text)
        }
        text = copy(beforeCoordinates, to: text)
        text = unpacking(storage, layout, to: text)
        text = copy(beforeRest, to: text)
        return form(storage) == parts ? copy(rest, to: text) : puttingPhrases(rest, to: text, names: names)
    }

    /// Where a text kept in parts has its id, its coordinates and its rest.
    private struct Layout {
        let idStart: Int
        let coordinatesStart: Int
        /// Of the coordinates as text; they are kept in half as many bytes, rounded up.
        let coordinatesCount: Int
        let restStart: Int

        @inline(__always)
        init(_ storage: UnsafeBufferPointer<UInt8>) {
            let idKept = FeatureText.idMode(storage) == FeatureText.idKept
            let lengths = idKept ? 3 : 1
            let idCount = idKept ? Int(storage[1]) | Int(storage[2]) << 8 : 0
            coordinatesCount = Int(storage[lengths]) | Int(storage[lengths + 1]) << 8
            idStart = lengths + 2
            coordinatesStart = idStart + idCount
            restStart = coordinatesStart + (coordinatesCount + 1) / 2
        }
    }

    @inline(__always)
    private static func writeLength(_ count: Int, to output: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        output[0] = UInt8(truncatingIfNeeded: count)
        output[1] = UInt8(truncatingIfNeeded: count >> 8)
        return output + 2
    }

    /// Bytes of the id's text.
    @inline(__always)
    private static func idCount(_ storage: UnsafeBufferPointer<UInt8>, _ layout: Layout, key: String) -> Int {
        switch idMode(storage) {
        case idFromKey: key.utf8.count + 2
        case idFromNumberKey: max(key.utf8.count - 1, 0)
        default: layout.coordinatesStart - layout.idStart
        }
    }

    // MARK: Coordinates two bytes to a byte

    /// The bytes of coordinates' text (digits, `.`, `,`, `-`, `+`, `e`, `E`: all that the
    /// cut lets through), by their number 0...15.
    private static let coordinateBytes: StaticString = "0123456789.,-+eE"

    /// The number of a byte of coordinates' text.
    @inline(__always)
    private static func coordinateNibble(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "."): 10
        case UInt8(ascii: ","): 11
        case UInt8(ascii: "-"): 12
        case UInt8(ascii: "+"): 13
        case UInt8(ascii: "e"): 14
        default: 15
        }
    }

    /// Writes `coordinates` two bytes to a byte, the first in the high half; returns the end.
    private static func packing(_ coordinates: UnsafeBufferPointer<UInt8>, to output: UnsafeMutablePointer<UInt8>)
        -> UnsafeMutablePointer<UInt8>
    {
        var output = output
        var i = 0
        while i < coordinates.count {
            let high = coordinateNibble(coordinates[i]) << 4
            let low = i + 1 < coordinates.count ? coordinateNibble(coordinates[i + 1]) : 0
            output.pointee = high | low
            output += 1
            i += 2
        }
        return output
    }

    /// Writes the coordinates' text back; returns the end.
    @inline(__always)
    private static func unpacking(_ storage: UnsafeBufferPointer<UInt8>, _ layout: Layout,
                                  to output: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
    {
        let bytes = coordinateBytes.utf8Start
        for i in 0..<layout.coordinatesCount {
            let packed = storage[layout.coordinatesStart + i >> 1]
            output[i] = bytes[Int(i & 1 == 0 ? packed >> 4 : packed & 15)]
        }
        return output + layout.coordinatesCount
    }

    /// Copies `text`'s bytes but the first `dropped`; returns the end.
    @inline(__always)
    private static func copy(_ text: String, droppingFirst dropped: Int, to output: UnsafeMutablePointer<UInt8>)
        -> UnsafeMutablePointer<UInt8>
    {
        if let end = text.utf8.withContiguousStorageIfAvailable({ bytes in
            copy(UnsafeBufferPointer(rebasing: bytes.dropFirst(dropped)), to: output)
        }) {
            return end
        }
        var output = output
        for byte in text.utf8.dropFirst(dropped) {
            output.pointee = byte
            output += 1
        }
        return output
    }

    @inline(__always)
    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, to output: UnsafeMutablePointer<UInt8>)
        -> UnsafeMutablePointer<UInt8>
    {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return output }
        output.initialize(from: base, count: bytes.count)
        return output + bytes.count
    }

    @inline(__always)
    private static func copy(_ text: StaticString, to output: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        copy(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount), to: output)
    }

    private static let fixedCount = beforeID.utf8CodeUnitCount + beforeCoordinates.utf8CodeUnitCount
        + beforeRest.utf8CodeUnitCount

    // MARK: Phrases and names

    /// Bytes below this one stand for phrases (``phrase(_:)``) and members with names
    /// (``firstNameByte``) in a rest kept with them.
    private static let firstUnusedByte: UInt8 = 0x20

    /// The byte of the first member kept with its name: `"species":"NAME"`; the next two
    /// `"observer_id":"NAME"` and `"category":"NAME"` (the order of
    /// ``FeatureTextNames/Texts``), after the phrases' bytes; then ``timeByte``.
    private static let firstNameByte = UInt8(phraseCount + 1)

    /// The byte of `"observed_at":"TIME"`, the time as its instant and offset write it.
    private static let timeByte = firstNameByte + 3

    /// The phrase that begins member `n` kept with its name.
    @inline(__always)
    private static func namePhrase(_ n: Int) -> Int {
        switch n {
        case 0: 0
        case 1: 3
        default: 6
        }
    }

    /// The member kept with its name that phrase `k` begins, if any.
    @inline(__always)
    private static func nameMember(ofPhrase k: Int) -> Int? {
        switch k {
        case 0: 0
        case 3: 1
        case 6: 2
        default: nil
        }
    }

    /// The phrase `"observed_at":"`.
    private static let timePhrase = 2

    /// Writes `rest` with each phrase it holds as its byte, and each member whose value is
    /// one of `names` as is, with its name and closing quote, as the member's byte;
    /// returns the end and whether a member was kept so, or `nil` when the rest holds a
    /// byte below ``firstUnusedByte`` (it is then kept as given). Phrases are looked for
    /// where they begin in a text of the usual form: a member's name after `{` or `,`, the
    /// end of a time at a plus sign. Any byte above `+` is copied as it is after one
    /// comparison: letters, digits, `,`, `:`, `-`, `.`, most of a text.
    private static func keepingPhrases(_ rest: UnsafeBufferPointer<UInt8>, to output: UnsafeMutablePointer<UInt8>,
                                       names: FeatureTextNames.Texts) -> (UnsafeMutablePointer<UInt8>, Bool)?
    {
        var output = output
        var position = 0
        var previous: UInt8 = 0
        var keptNames = false
        while position < rest.count {
            let byte = rest[position]
            output.pointee = byte
            output += 1
            position += 1
            let before = previous
            previous = byte
            guard byte <= UInt8(ascii: "+") else { continue }
            if byte < firstUnusedByte { return nil }
            let startsPhrase = byte == UInt8(ascii: "+")
                || (byte == UInt8(ascii: "\"") && (before == UInt8(ascii: "{") || before == UInt8(ascii: ",")))
            guard startsPhrase, let k = phrase(in: rest, at: position - 1) else { continue }
            let count = phrase(k).utf8CodeUnitCount
            if let n = nameMember(ofPhrase: k), let name = names[n],
               let end = match(name, in: rest, at: position - 1 + count) {
                output[-1] = firstNameByte + UInt8(n)
                position = end
                keptNames = true
            } else if k == timePhrase, let time = names.time, let end = match(time, in: rest, at: position - 1 + count) {
                output[-1] = timeByte
                position = end
                keptNames = true
            } else {
                output[-1] = UInt8(k + 1)
                position += count - 1
            }
            previous = rest[position - 1]
        }
        return (output, keptNames)
    }

    /// The position after `name` and a closing quote when `text` holds them at `position`.
    @inline(__always)
    private static func match(_ name: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, at position: Int)
        -> Int?
    {
        let count = name.count
        guard let base = text.baseAddress, position <= text.count - count - 1,
              text[position + count] == UInt8(ascii: "\""),
              count == 0 || memcmp(base + position, name.baseAddress!, count) == 0 else { return nil }
        return position + count + 1
    }

    /// The position after `time`'s text and a closing quote when `text` holds them at
    /// `position`.
    @inline(__always)
    private static func match(_ time: FeatureTextNames.Time, in text: UnsafeBufferPointer<UInt8>, at position: Int)
        -> Int?
    {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Timestamp.maxCanonicalLength) { buffer in
            let count = time.write(to: buffer.baseAddress!) - buffer.baseAddress!
            return match(UnsafeBufferPointer(rebasing: buffer[..<count]), in: text, at: position)
        }
    }

    /// The phrase that `text` holds at `position`, if any.
    @inline(__always)
    private static func phrase(in text: UnsafeBufferPointer<UInt8>, at position: Int) -> Int? {
        guard position + 1 < text.count else { return nil }
        // Told apart by their second byte, but for "name" and "note".
        let candidates: (Int, Int)
        switch text[position + 1] {
        case UInt8(ascii: "s"): candidates = (0, 0)
        case UInt8(ascii: "c"): candidates = (1, 6)
        case UInt8(ascii: "o"): candidates = (2, 3)
        case UInt8(ascii: "n"): candidates = (4, 5)
        case UInt8(ascii: "d"): candidates = (7, 7)
        case UInt8(ascii: "l"): candidates = (8, 8)
        case UInt8(ascii: "0"): candidates = (9, 9)
        default: return nil
        }
        if match(phrase(candidates.0), in: text, at: position) != nil { return candidates.0 }
        if candidates.1 != candidates.0, match(phrase(candidates.1), in: text, at: position) != nil {
            return candidates.1
        }
        return nil
    }

    /// Bytes of a rest kept with its phrases, once they and the names are put back.
    private static func countWithPhrases(_ rest: UnsafeBufferPointer<UInt8>, names: FeatureTextNames.Texts) -> Int {
        var count = rest.count
        for byte in rest where byte < firstUnusedByte {
            if byte < firstNameByte {
                count += phrase(Int(byte) - 1).utf8CodeUnitCount - 1
            } else if byte == timeByte {
                count += phrase(timePhrase).utf8CodeUnitCount + (names.time?.count ?? 0)
            } else {
                let n = Int(byte - firstNameByte)
                count += phrase(namePhrase(n)).utf8CodeUnitCount + (names[n]?.count ?? 0)
            }
        }
        return count
    }

    /// Writes a rest kept with its phrases as given; returns the end. Byte by byte: the runs
    /// between phrases are a few bytes each, shorter than a call to copy them.
    private static func puttingPhrases(_ rest: UnsafeBufferPointer<UInt8>, to output: UnsafeMutablePointer<UInt8>,
                                       names: FeatureTextNames.Texts) -> UnsafeMutablePointer<UInt8>
    {
        var output = output
        for byte in rest {
            if byte >= firstUnusedByte {
                output.pointee = byte
                output += 1
            } else if byte < firstNameByte {
                output = writePhrase(Int(byte) - 1, to: output)
            } else if byte == timeByte {
                output = writePhrase(timePhrase, to: output)
                if let time = names.time { output = time.write(to: output) }
                output.pointee = UInt8(ascii: "\"")
                output += 1
            } else {
                let n = Int(byte - firstNameByte)
                output = writePhrase(namePhrase(n), to: output)
                if let name = names[n] { output = copy(name, to: output) }
                output.pointee = UInt8(ascii: "\"")
                output += 1
            }
        }
        return output
    }

    @inline(__always)
    private static func writePhrase(_ k: Int, to output: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let phrase = phrase(k)
        for i in 0..<phrase.utf8CodeUnitCount { output[i] = phrase.utf8Start[i] }
        return output + phrase.utf8CodeUnitCount
    }

    /// The length of the longest phrase, `"dwell_minutes":`.
    static let longestPhrase = 16

    // MARK: The cut

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

    /// The position after `fixed` when the text holds it at `position` (one `memcmp`).
    @inline(__always)
    private static func match(_ fixed: StaticString, in text: UnsafeBufferPointer<UInt8>, at position: Int) -> Int? {
        let count = fixed.utf8CodeUnitCount
        guard position >= 0, position <= text.count - count, let base = text.baseAddress else { return nil }
        guard memcmp(base + position, fixed.utf8Start, count) == 0 else { return nil }
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

extension ManagedBuffer where Header == Int, Element == UInt8 {
    /// New storage of `count` bytes that `body` writes, from the first.
    fileprivate static func make(count: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Void) -> ManagedBuffer {
        let storage = create(minimumCapacity: count) { _ in count }
        storage.withUnsafeMutablePointerToElements(body)
        return storage
    }

    /// Calls `body` with the bytes.
    fileprivate func withBuffer<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { count, bytes in
            try body(UnsafeBufferPointer(start: bytes, count: count.pointee))
        }
    }
}

/// The names a record keeps as numbers of the process's table (``SharedName``) that its
/// feature's text may be kept without: a sighting's species and observer, a place's
/// category. A text kept without them is read back with the same names.
struct FeatureTextNames: Sendable, Equatable {
    /// The record's id key (``LayerRecord/idKey``): an id whose text it gives is not kept.
    var id = ""
    var species: SharedName = .none
    var observer: SharedName = .none
    var category: SharedName = .none
    /// A sighting's time, when its text is the one it writes again.
    var time: Time?

    static let none = FeatureTextNames()

    /// A time as the text `YYYY-MM-DDTHH:MM:SS` then `Z` or `±HH:MM` writes it
    /// (``Timestamp/canonicalFields``).
    struct Time: Sendable, Equatable {
        let epochSeconds: Int64
        let offsetMinutes: Int16
        let marker: UInt8

        init?(_ timestamp: Timestamp) {
            guard let fields = timestamp.canonicalFields else { return nil }
            (epochSeconds, offsetMinutes, marker) = fields
        }

        /// Bytes of the text.
        var count: Int { marker == UInt8(ascii: "Z") ? 20 : 25 }

        /// Writes the text (``count`` bytes); returns the end.
        func write(to output: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
            output + Timestamp.writeCanonicalText(
                epochSeconds: epochSeconds, offsetMinutes: offsetMinutes, marker: marker,
                into: UnsafeMutableBufferPointer(start: output, count: count))
        }
    }

    /// The id, and the names' bytes read from the table.
    var resolved: Texts {
        Texts(id: id, species: species.utf8, observer: observer.utf8, category: category.utf8, time: time)
    }

    /// The id alone, for a text kept without names.
    var idOnly: Texts { Texts(id: id) }

    /// The names' UTF-8 bytes (kept by the table for the process's life), by the member
    /// they are the value of: 0 `species`, 1 `observer_id`, 2 `category`.
    struct Texts {
        var id = ""
        var species: UnsafeBufferPointer<UInt8>?
        var observer: UnsafeBufferPointer<UInt8>?
        var category: UnsafeBufferPointer<UInt8>?
        var time: Time?

        subscript(member: Int) -> UnsafeBufferPointer<UInt8>? {
            switch member {
            case 0: species
            case 1: observer
            default: category
            }
        }
    }
}
