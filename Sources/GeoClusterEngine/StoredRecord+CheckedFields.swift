import GeoCluster
import GeoClusterWire

/// The fields of a validated record in a few bytes, stored beside its feature's text so
/// that a layer rebuilt from the store takes them as they are instead of reading and
/// checking every feature again (docs/STORAGE.md, "Checked fields").
///
/// They hold a hash of the text they were read from (``ContentHash``): a row whose text
/// was changed without them (by a version that did not write them, or by hand) no longer
/// matches, and is validated from its text as before. Any other surprise (another format
/// version, another kind, bytes cut short, a value out of range) does the same; reading
/// them never traps.
///
/// Layout, integers and doubles little-endian, strings as a 32-bit byte count and UTF-8:
/// format (1 byte), kind (1), flags (1: a note, an observer, a dwell time, a time kept as
/// text), the text's hash (8), longitude and latitude (8 + 8), the id key, the observer
/// when flagged, then by kind: a sighting's count (8), species and `observed_at`; a
/// place's name, category and dwell minutes when flagged (8); a station's name and its
/// lines (a 32-bit count, then each).
///
/// `observed_at` is its instant (8), offset in minutes (2) and offset marker (1) when its
/// text is the one written again from them (``Timestamp/canonicalFields``), so that a
/// rebuild does not parse it; otherwise (a fraction, a lower-case letter, a leap second)
/// a flag says so and the text follows. Format 1, written before, always held the text;
/// its rows are still read.
enum CheckedFields {
    /// Bump when the layout or what validation accepts changes: rows of a format not
    /// read here are validated from their text.
    static let format: UInt8 = 2

    /// The formats ``decode(_:text:kind:)`` reads.
    private static let readableFormats: ClosedRange<UInt8> = 1...2

    private static let noteFlag: UInt8 = 1, observerFlag: UInt8 = 2, dwellFlag: UInt8 = 4, writtenTimeFlag: UInt8 = 8

    private static func code(_ kind: LayerKind) -> UInt8 {
        switch kind {
        case .sightings: 0
        case .places: 1
        case .stations: 2
        case .points: 3
        }
    }

    /// The checked fields of `record`, whose ``LayerRecord/featureText`` is the text stored
    /// with them; `format` 1 only for tests of rows written before.
    static func encode(_ record: LayerRecord, format: UInt8 = Self.format) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + record.idKey.utf8.count)
        var flags: UInt8 = record.hasNote ? noteFlag : 0
        if record.observerID != nil { flags |= observerFlag }
        let kind: LayerKind
        var time: (epochSeconds: Int64, offsetMinutes: Int16, marker: UInt8)?
        switch record.fields {
        case let .sighting(_, _, observedAt):
            kind = .sightings
            time = format == 1 ? nil : observedAt.canonicalFields
            if format > 1 && time == nil { flags |= writtenTimeFlag }
        case let .place(_, _, dwell):
            kind = .places
            if dwell != nil { flags |= dwellFlag }
        case .station: kind = .stations
        case .point: kind = .points
        }
        bytes += [format, code(kind), flags]
        append(ContentHash.hash(record.featureText), to: &bytes)
        append(record.coordinate.longitude.bitPattern, to: &bytes)
        append(record.coordinate.latitude.bitPattern, to: &bytes)
        append(record.idKey, to: &bytes)
        if let observer = record.observerID { append(observer, to: &bytes) }
        switch record.fields {
        case let .sighting(species, count, observedAt):
            append(UInt64(truncatingIfNeeded: count), to: &bytes)
            append(species.text, to: &bytes)
            if let time {
                append(time.epochSeconds, to: &bytes)
                append(time.offsetMinutes, to: &bytes)
                bytes.append(time.marker)
            } else {
                append(observedAt.text, to: &bytes)
            }
        case let .place(name, category, dwell):
            append(name, to: &bytes)
            append(category.text, to: &bytes)
            if let dwell { append(dwell.bitPattern, to: &bytes) }
        case let .station(name, lines):
            append(name, to: &bytes)
            append(UInt32(truncatingIfNeeded: lines.count), to: &bytes)
            for line in lines { append(line, to: &bytes) }
        case .point:
            break
        }
        return bytes
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private static func append(_ string: String, to bytes: inout [UInt8]) {
        append(UInt32(truncatingIfNeeded: string.utf8.count), to: &bytes)
        bytes += string.utf8
    }

    /// The record that `text` validates to, read from `fields` when they were written
    /// for exactly that text and a `kind` record; `nil` otherwise (validate the text).
    static func decode(_ fields: ArraySlice<UInt8>, text: ArraySlice<UInt8>, kind: LayerKind) -> LayerRecord? {
        fields.withUnsafeBytes { buffer -> LayerRecord? in
            var reader = Reader(bytes: buffer)
            guard let format = reader.byte(), readableFormats.contains(format), reader.byte() == code(kind),
                  let flags = reader.byte(), flags & ~(noteFlag | observerFlag | dwellFlag | writtenTimeFlag) == 0,
                  kind == .places || flags & dwellFlag == 0,
                  (kind == .sightings && format > 1) || flags & writtenTimeFlag == 0,
                  let hash = reader.integer(UInt64.self), hash == text.withUnsafeBytes({ ContentHash.hash($0) }),
                  let longitude = reader.double(), let latitude = reader.double(),
                  longitude.isFinite, latitude.isFinite, abs(longitude) <= 180, abs(latitude) <= 90,
                  let idKey = reader.string(), kind == .points || !idKey.isEmpty else { return nil }
            var observer: String?
            if flags & observerFlag != 0 {
                guard let value = reader.string(), !value.isEmpty else { return nil }
                observer = value
            }
            let recordFields: RecordFields
            switch kind {
            case .sightings:
                guard let count = reader.integer(UInt64.self), (1...UInt64(LayerRecord.maxSightingCount)).contains(count),
                      let species = reader.string(), !species.isEmpty else { return nil }
                let observedAt: Timestamp
                if format == 1 || flags & writtenTimeFlag != 0 {
                    guard let written = reader.string(), let parsed = try? Timestamp.parse(written) else { return nil }
                    observedAt = parsed
                } else {
                    guard let epochSeconds = reader.integer(Int64.self), let offsetMinutes = reader.integer(Int16.self),
                          let marker = reader.byte(),
                          let time = Timestamp(epochSeconds: epochSeconds, offsetMinutes: offsetMinutes, marker: marker)
                    else { return nil }
                    observedAt = time
                }
                recordFields = .sighting(species: RecordName(species), count: Int32(truncatingIfNeeded: count),
                                         observedAt: observedAt)
            case .places:
                guard let name = reader.string(), !name.isEmpty,
                      let category = reader.string(), !category.isEmpty else { return nil }
                var dwell: Double?
                if flags & dwellFlag != 0 {
                    guard let minutes = reader.double(), (0...1440).contains(minutes) else { return nil }
                    dwell = minutes
                }
                recordFields = .place(name: name, category: RecordName(category), dwellMinutes: dwell)
            case .stations:
                // Each line takes at least 5 bytes (a length and one byte): a count beyond
                // what is left is refused before anything is reserved for it.
                guard let name = reader.string(), !name.isEmpty,
                      let count = reader.integer(UInt32.self), count > 0, Int(count) <= reader.remaining / 5 else { return nil }
                var lines: [String] = []
                lines.reserveCapacity(Int(count))
                for _ in 0..<count {
                    guard let line = reader.string(), !line.isEmpty else { return nil }
                    lines.append(line)
                }
                recordFields = .station(name: name, lines: lines)
            case .points:
                recordFields = .point
            }
            guard reader.isAtEnd else { return nil }
            return LayerRecord(idKey: idKey, coordinate: Coordinate(longitude: longitude, latitude: latitude),
                               fields: recordFields, featureText: text, observerID: observer,
                               hasNote: flags & noteFlag != 0)
        }
    }

    /// Reads values off the bytes, `nil` once they run short.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }
        var remaining: Int { bytes.count - offset }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            let size = MemoryLayout<T>.size
            guard bytes.count - offset >= size else { return nil }
            defer { offset += size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }

        mutating func double() -> Double? {
            integer(UInt64.self).map(Double.init(bitPattern:))
        }

        mutating func string() -> String? {
            guard let count = integer(UInt32.self), bytes.count - offset >= Int(count) else { return nil }
            defer { offset += Int(count) }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + Int(count)]), as: UTF8.self)
        }
    }
}
