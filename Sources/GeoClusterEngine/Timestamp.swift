import GeoClusterWire

/// An instant written as an RFC 3339 date-time with a UTC offset, such as a sighting's
/// `observed_at`. It keeps both readings a filter needs: the instant (`epochSeconds`,
/// to order and compare) and the calendar date as written (`localDay`, `localMonth`, so
/// that "sightings in May" means May where the bird was seen, whatever the offset).
///
/// Accepted form (RFC 3339 §5.6): `YYYY-MM-DD` `T` `HH:MM:SS` `[.fraction]` `Z | +HH:MM | -HH:MM`,
/// with `t` or a space for `T` and `z` for `Z`. A date-time without an offset is rejected:
/// the instant it names is unknown. `-00:00` (RFC 3339 §4.3, "offset unknown") is
/// accepted as UTC, because the instant is still known. Years run 0001...9999.
///
/// Leap seconds: second 60 is accepted only where the time is 23:59:60 in UTC (RFC 3339
/// §5.7), without consulting the table of leap seconds actually inserted. Such a time
/// counts as 23:59:59, as POSIX time does, so `epochSeconds` never skips forward.
public struct Timestamp: Sendable, Hashable {
    /// Seconds since 1970-01-01T00:00:00Z, the fraction dropped (rounded towards the past).
    public let epochSeconds: Int64
    /// The input's bytes when it is not the form ``canonicalText`` writes again from the
    /// fields below (a fraction, a lower-case `t` or `z`, a space, a leap second); `nil`
    /// when it is. A sighting keeps its time, and a string of 25 bytes takes a heap
    /// allocation of its own: most inputs are in that form, and keep none. An array rather
    /// than a `String` (8 bytes rather than 16), and the fields below in 4 bytes, so that a
    /// timestamp takes 20 bytes and a record holding one fits in 104 (see
    /// `LayerRecordTests`).
    private let writtenBytes: [UInt8]?
    /// Minutes east of UTC of the offset as written.
    private let offsetMinutes: Int16
    private let month: UInt8
    /// How the offset is written: `Z`, `+` or `-` (for `-00:00`, which is UTC too).
    private let marker: UInt8

    /// ``epochSeconds`` with a fraction of a second rounded up (towards the future): the
    /// reading of a "now" from which time left is counted, so that the count never grows.
    public var epochSecondsRoundedUp: Int64 {
        guard let bytes = writtenBytes, let dot = bytes.firstIndex(of: UInt8(ascii: ".")) else { return epochSeconds }
        let digits = bytes[(dot + 1)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        return digits.contains { $0 != UInt8(ascii: "0") } ? epochSeconds + 1 : epochSeconds
    }

    /// Days since 1970-01-01 of the date as written, before applying the offset.
    public var localDay: Int32 {
        // Within years 1...9999 (checked when made), so the day fits.
        Int32(truncatingIfNeeded: Self.day(ofLocalSecond: epochSeconds + Int64(offsetMinutes) * 60))
    }

    /// The day since 1970-01-01 that a second since then falls in, rounded towards the past.
    private static func day(ofLocalSecond second: Int64) -> Int64 {
        second >= 0 ? second / 86_400 : (second - 86_399) / 86_400
    }

    /// The input when it is not in the form written again from the fields (see
    /// ``writtenBytes``), `nil` when it is.
    var writtenText: String? { writtenBytes.map { String(decoding: $0, as: UTF8.self) } }

    /// Month of the date as written, 1...12.
    public var localMonth: Int { Int(month) }

    /// The input, returned untouched.
    public var text: String { writtenText ?? String(decoding: canonicalText, as: UTF8.self) }

    /// The date as written, for comparison with filter dates.
    public var localDate: LocalDate { LocalDate(day: localDay) }

    /// Appends ``text`` as a JSON string, quotes included.
    public func encodeJSON(into output: inout [UInt8]) {
        if let writtenText {
            JSONValue.encodeString(writtenText, into: &output)
        } else {
            Self.encodeCanonicalJSON(epochSeconds: epochSeconds, offsetMinutes: offsetMinutes, marker: marker,
                                     into: &output)
        }
    }

    /// How the offset is written, in one byte, for a timestamp whose ``text`` is written
    /// again from its instant and offset and whose offset is a whole number of quarter
    /// hours (every offset in use); 0 for any other. With ``epochSeconds`` it is all that
    /// ``writeJSON(epochSeconds:offsetTag:to:)`` needs: a live index keeps it with each
    /// point's time, so that a cluster's latest time is written without reading its record.
    ///
    /// 1 is `Z`, 2 is `-00:00`, and `3 + 95 + q` is an offset of `q` quarter hours
    /// (-95...95) with the sign of `q` (`+00:00` for 0).
    public var offsetTag: UInt8 {
        guard writtenBytes == nil, offsetMinutes % 15 == 0 else { return 0 }
        switch marker {
        case UInt8(ascii: "Z"): return 1
        case UInt8(ascii: "-") where offsetMinutes == 0: return 2
        default: return UInt8(3 + 95 + Int(offsetMinutes) / 15)
        }
    }

    /// Writes, as a JSON string, the text of the timestamp that ``epochSeconds`` and
    /// ``offsetTag`` were read from, into memory with room for ``maxJSONLength`` bytes;
    /// returns the end of what it wrote, or `nil`, writing nothing that counts, for a tag
    /// of 0 or one no timestamp has, and for an instant whose date in that offset falls
    /// outside years 0001...9999.
    public static func writeJSON(epochSeconds: Int64, offsetTag: UInt8,
                                 to text: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>? {
        let offsetMinutes: Int16, marker: UInt8
        switch offsetTag {
        case 1: (offsetMinutes, marker) = (0, UInt8(ascii: "Z"))
        case 2: (offsetMinutes, marker) = (0, UInt8(ascii: "-"))
        case 3...193:
            offsetMinutes = (Int16(offsetTag) - 98) * 15
            marker = offsetMinutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")
        default: return nil
        }
        guard (firstLocalSecond - 86_400...lastLocalSecond + 86_400).contains(epochSeconds),
              (firstLocalSecond...lastLocalSecond).contains(epochSeconds + Int64(offsetMinutes) * 60) else { return nil }
        text[0] = UInt8(ascii: "\"")
        let count = writeCanonicalText(epochSeconds: epochSeconds, offsetMinutes: offsetMinutes, marker: marker,
                                       into: UnsafeMutableBufferPointer(start: text + 1, count: maxCanonicalLength))
        text[count + 1] = UInt8(ascii: "\"")
        return text + count + 2
    }

    /// The longest text ``writeJSON(epochSeconds:offsetTag:to:)`` writes: the canonical
    /// text in quotes.
    public static let maxJSONLength = maxCanonicalLength + 2

    /// Appends the canonical text in quotes, written in place rather than through an array.
    private static func encodeCanonicalJSON(epochSeconds: Int64, offsetMinutes: Int16, marker: UInt8,
                                            into output: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxCanonicalLength + 2) { buffer in
            buffer[0] = UInt8(ascii: "\"")
            let count = writeCanonicalText(epochSeconds: epochSeconds, offsetMinutes: offsetMinutes, marker: marker,
                                           into: UnsafeMutableBufferPointer(rebasing: buffer[1...]))
            buffer[count + 1] = UInt8(ascii: "\"")
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<(count + 2)]))
        }
    }

    private var canonicalText: [UInt8] {
        Self.canonicalText(epochSeconds: epochSeconds, offsetMinutes: offsetMinutes, marker: marker)
    }

    /// `YYYY-MM-DDTHH:MM:SS` in the offset as written, then `Z` or `±HH:MM`.
    private static func canonicalText(epochSeconds: Int64, offsetMinutes: Int16, marker: UInt8) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: maxCanonicalLength) { buffer, count in
            count = writeCanonicalText(epochSeconds: epochSeconds, offsetMinutes: offsetMinutes, marker: marker,
                                       into: buffer)
        }
    }

    /// The length of the longest ``canonicalText``: `YYYY-MM-DDTHH:MM:SS+HH:MM`.
    static let maxCanonicalLength = 25

    /// Writes ``canonicalText`` at the start of `bytes` (at least ``maxCanonicalLength``
    /// long) and returns its length.
    static func writeCanonicalText(epochSeconds: Int64, offsetMinutes: Int16, marker: UInt8,
                                   into bytes: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let local = epochSeconds + Int64(offsetMinutes) * 60
        let days = day(ofLocalSecond: local)
        let secondOfDay = Int(local - days * 86_400)
        let (year, month, day) = LocalDate.civil(daysSince1970: days)
        var count = 0
        func append(_ byte: UInt8) {
            bytes[count] = byte
            count += 1
        }
        func digits(_ value: Int, _ width: Int) {
            var value = value
            for position in stride(from: count + width - 1, through: count, by: -1) {
                bytes[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            count += width
        }
        digits(Int(year), 4); append(UInt8(ascii: "-")); digits(Int(month), 2)
        append(UInt8(ascii: "-")); digits(Int(day), 2); append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2); append(UInt8(ascii: ":")); digits(secondOfDay / 60 % 60, 2)
        append(UInt8(ascii: ":")); digits(secondOfDay % 60, 2)
        append(marker)
        if marker != UInt8(ascii: "Z") {
            let minutes = Int(offsetMinutes.magnitude)
            digits(minutes / 60, 2); append(UInt8(ascii: ":")); digits(minutes % 60, 2)
        }
        return count
    }

    /// `bytes` are the UTF-8 of `text`.
    private init(epochSeconds: Int64, localMonth: Int, offsetMinutes: Int, marker: UInt8,
                 bytes: UnsafeBufferPointer<UInt8>) {
        self.epochSeconds = epochSeconds
        self.month = UInt8(localMonth)
        self.offsetMinutes = Int16(offsetMinutes)
        self.marker = marker
        // Compared in a buffer on the stack: most inputs are canonical, and keep nothing.
        let isCanonical = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maxCanonicalLength) { buffer in
            let count = Self.writeCanonicalText(epochSeconds: epochSeconds, offsetMinutes: Int16(offsetMinutes),
                                                marker: marker, into: buffer)
            return bytes.count == count && bytes.elementsEqual(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
        writtenBytes = isCanonical ? nil : Array(bytes)
    }

    /// The instant and offset that ``text`` is written again from, or `nil` when the input
    /// was in another form and is kept as it came (``init(epochSeconds:offsetMinutes:marker:)``
    /// gives this timestamp back from them).
    var canonicalFields: (epochSeconds: Int64, offsetMinutes: Int16, marker: UInt8)? {
        writtenBytes == nil ? (epochSeconds, offsetMinutes, marker) : nil
    }

    /// The timestamp that parsing its canonical text gives (`YYYY-MM-DDTHH:MM:SS` then `Z`
    /// or `±HH:MM`), from the fields ``canonicalFields`` returned; `nil` for fields no such
    /// text has: a marker other than `Z`, `+` and `-`, an offset beyond 23:59, of the other
    /// sign than its marker or not 0 with `Z`, or a date as written outside years 0001...9999.
    init?(epochSeconds: Int64, offsetMinutes: Int16, marker: UInt8) {
        switch marker {
        case UInt8(ascii: "Z"): guard offsetMinutes == 0 else { return nil }
        case UInt8(ascii: "+"): guard (0...23 * 60 + 59).contains(offsetMinutes) else { return nil }
        case UInt8(ascii: "-"): guard (-(23 * 60 + 59)...0).contains(offsetMinutes) else { return nil }
        default: return nil
        }
        // Checked before adding the offset, so that nothing overflows.
        guard (Self.firstLocalSecond - 86_400...Self.lastLocalSecond + 86_400).contains(epochSeconds) else { return nil }
        let local = epochSeconds + Int64(offsetMinutes) * 60
        guard (Self.firstLocalSecond...Self.lastLocalSecond).contains(local) else { return nil }
        let day = Self.day(ofLocalSecond: local)
        self.epochSeconds = epochSeconds
        self.month = UInt8(LocalDate.civil(daysSince1970: day).month)
        self.offsetMinutes = offsetMinutes
        self.marker = marker
        self.writtenBytes = nil
    }

    /// The first and last second, in the offset as written, of the years a timestamp may have.
    private static let firstLocalSecond = Int64(LocalDate.daysFromCivil(year: 1, month: 1, day: 1)) * 86_400
    private static let lastLocalSecond = Int64(LocalDate.daysFromCivil(year: 9999, month: 12, day: 31)) * 86_400 + 86_399

    /// Parses an RFC 3339 date-time; see the type's documentation for what is accepted.
    public static func parse(_ text: String) throws(TimestampError) -> Timestamp {
        try withContiguousUTF8(of: text) { bytes throws(TimestampError) in try parse(text, bytes: bytes) }
    }

    private static func parse(_ text: String, bytes: UnsafeBufferPointer<UInt8>) throws(TimestampError) -> Timestamp {
        var scanner = DateScanner(text, bytes: bytes, form: "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)")
        let date = try scanner.date()
        guard let separator = scanner.peek, separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t")
            || separator == UInt8(ascii: " ")
        else {
            throw scanner.unexpected(expecting: "\"T\" after the date")
        }
        _ = scanner.next()
        let hour = try scanner.number(digits: 2, what: "hour")
        guard hour <= 23 else { throw TimestampError(text, "has hour \(hour), outside 00...23") }
        try scanner.expect(":", what: "hour")
        let minute = try scanner.number(digits: 2, what: "minute")
        guard minute <= 59 else { throw TimestampError(text, "has minute \(minute), outside 00...59") }
        try scanner.expect(":", what: "minute")
        let second = try scanner.number(digits: 2, what: "second")
        guard second <= 60 else { throw TimestampError(text, "has second \(second), outside 00...60") }

        if scanner.peek == UInt8(ascii: ".") {
            _ = scanner.next()
            guard scanner.peekIsDigit else { throw scanner.unexpected(expecting: "a digit of the fraction") }
            while scanner.peekIsDigit { _ = scanner.next() }
        }
        let marker = scanner.peek
        let offsetSeconds: Int
        var offsetMarker = UInt8(ascii: "Z")
        switch marker {
        case nil:
            throw TimestampError(text, "has no UTC offset (add Z or +HH:MM)")
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            _ = scanner.next()
            offsetSeconds = 0
        case let sign? where sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"):
            offsetMarker = sign
            _ = scanner.next()
            let offsetHour = try scanner.number(digits: 2, what: "offset hour")
            try scanner.expect(":", what: "offset hour")
            let offsetMinute = try scanner.number(digits: 2, what: "offset minute")
            guard offsetHour <= 23 else { throw TimestampError(text, "has offset hour \(offsetHour), outside 00...23") }
            guard offsetMinute <= 59 else { throw TimestampError(text, "has offset minute \(offsetMinute), outside 00...59") }
            offsetSeconds = (marker == UInt8(ascii: "-") ? -1 : 1) * (offsetHour * 3600 + offsetMinute * 60)
        default:
            throw scanner.unexpected(expecting: "Z, +HH:MM or -HH:MM after the time")
        }
        guard scanner.atEnd else {
            throw TimestampError(text, "has extra characters after the UTC offset, at offset \(scanner.position)")
        }

        // 23:59:60 UTC counts as 23:59:59 (see the type's documentation).
        let localSeconds = hour * 3600 + minute * 60 + min(second, 59)
        if second == 60 {
            let utcSecondOfDay = ((localSeconds - offsetSeconds) % 86_400 + 86_400) % 86_400
            guard utcSecondOfDay == 86_399 else {
                throw TimestampError(text, "has second 60, but a leap second can only be 23:59:60 UTC")
            }
        }
        let epochSeconds = Int64(date.day) * 86_400 + Int64(localSeconds - offsetSeconds)
        return Timestamp(epochSeconds: epochSeconds, localMonth: date.month,
                         offsetMinutes: offsetSeconds / 60, marker: offsetMarker, bytes: bytes)
    }
}

/// A calendar date without a time or an offset, such as the `from` and `to` of a date
/// filter. Compared with ``Timestamp/localDay``: the date as written where the record was made.
public struct LocalDate: Sendable, Hashable, Comparable {
    /// Days since 1970-01-01 (negative before it).
    public let day: Int32

    public init(day: Int32) { self.day = day }

    /// Parses `YYYY-MM-DD` (years 0001...9999), nothing before or after.
    public static func parse(_ text: String) throws(TimestampError) -> LocalDate {
        try withContiguousUTF8(of: text) { bytes throws(TimestampError) in try parse(text, bytes: bytes) }
    }

    private static func parse(_ text: String, bytes: UnsafeBufferPointer<UInt8>) throws(TimestampError) -> LocalDate {
        var scanner = DateScanner(text, bytes: bytes, form: "YYYY-MM-DD")
        let date = try scanner.date()
        guard scanner.atEnd else {
            throw TimestampError(text, "has extra characters after the date YYYY-MM-DD, at offset \(scanner.position)")
        }
        return LocalDate(day: date.day)
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.day < rhs.day }
}

/// Why a date or date-time was rejected. ``reason`` reads after the quoted input, as in
/// `"2024-02-30T10:00:00Z" has day 30, outside 01...29 for month 2 of year 2024`.
public struct TimestampError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input as given.
    public let text: String
    /// What is wrong with it, e.g. "has no UTC offset (add Z or +HH:MM)".
    public let reason: String

    public init(_ text: String, _ reason: String) {
        self.text = text
        self.reason = reason
    }

    public var description: String { "\"\(text)\" \(reason)" }
}

// MARK: - Civil calendar

extension LocalDate {
    /// Days since 1970-01-01 of a proleptic Gregorian date, after Howard Hinnant's
    /// `days_from_civil` (eras of 400 years, each 146,097 days, starting on 1 March).
    /// - Parameters: `month` 1...12, `day` 1...31; the caller checks the day exists.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400                                          // 0...399
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // 0...365, from 1 March
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear   // 0...146096
        return era * 146_097 + dayOfEra - 719_468                              // 719468: 0000-03-01 to 1970-01-01
    }

    /// The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    static func civil(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// `body` with the UTF-8 of `text` in one buffer (copied only when the string does not
/// keep it in one).
private func withContiguousUTF8<T>(of text: String,
                                   _ body: (UnsafeBufferPointer<UInt8>) throws(TimestampError) -> T) throws(TimestampError) -> T {
    var contiguous = text
    return try contiguous.withUTF8 { bytes in Result { () throws(TimestampError) in try body(bytes) } }.get()
}

/// Reads the ASCII fields of a date or date-time left to right, without allocating.
/// Offsets in errors count UTF-8 bytes from 0.
private struct DateScanner {
    /// The input, for errors.
    let text: String
    /// The UTF-8 of `text`.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The accepted form, quoted in syntax errors.
    let form: StaticString
    /// Offset of `peek` in UTF-8 bytes.
    private(set) var position = 0

    init(_ text: String, bytes: UnsafeBufferPointer<UInt8>, form: StaticString) {
        self.text = text
        self.bytes = bytes
        self.form = form
    }

    /// The next byte, `nil` at the end.
    var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    var atEnd: Bool { peek == nil }

    var peekIsDigit: Bool {
        guard let peek else { return false }
        return peek &- UInt8(ascii: "0") < 10
    }

    mutating func next() -> UInt8? {
        guard position < bytes.count else { return nil }
        position += 1
        return bytes[position - 1]
    }

    /// Exactly `digits` decimal digits.
    mutating func number(digits: Int, what: String) throws(TimestampError) -> Int {
        var value = 0
        for _ in 0..<digits {
            guard peekIsDigit, let byte = next() else { throw unexpected(expecting: "a digit of the \(what)") }
            value = value * 10 + Int(byte &- UInt8(ascii: "0"))
        }
        return value
    }

    mutating func expect(_ character: Unicode.Scalar, what: String) throws(TimestampError) {
        guard peek == UInt8(ascii: character) else { throw unexpected(expecting: "\"\(character)\" after the \(what)") }
        _ = next()
    }

    /// `YYYY-MM-DD`, checked to exist.
    mutating func date() throws(TimestampError) -> (day: Int32, month: Int) {
        let year = try number(digits: 4, what: "year")
        guard year >= 1 else { throw TimestampError(text, "has year 0000, outside 0001...9999") }
        try expect("-", what: "year")
        let month = try number(digits: 2, what: "month")
        guard (1...12).contains(month) else { throw TimestampError(text, "has month \(month), outside 01...12") }
        try expect("-", what: "month")
        let day = try number(digits: 2, what: "day")
        let monthLength = LocalDate.daysInMonth(year: year, month: month)
        guard (1...monthLength).contains(day) else {
            throw TimestampError(text, "has day \(day), outside 01...\(monthLength) for month \(month) of year \(year)")
        }
        return (Int32(LocalDate.daysFromCivil(year: year, month: month, day: day)), month)
    }

    /// A syntax error at the current position.
    func unexpected(expecting expected: String) -> TimestampError {
        if atEnd {
            return TimestampError(text, "ends early, expected \(expected) (form \(form))")
        }
        return TimestampError(text, "has an unexpected character at offset \(position), expected \(expected) (form \(form))")
    }
}
