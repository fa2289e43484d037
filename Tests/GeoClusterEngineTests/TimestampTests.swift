import Testing
import GeoClusterWire
@testable import GeoClusterEngine

struct TimestampTests {
    // Values checked by hand: 2024-01-01 is day 19723 (54 years of 365 days plus 13 leap
    // days: 19710 + 13), so 2024-02-29 is 19723 + 31 + 28 = 19782.

    @Test func anOffsetIsSubtractedButTheWrittenDateIsKept() throws {
        let t = try Timestamp.parse("2024-02-29T23:30:00+09:00")
        #expect(t.epochSeconds == 1_709_217_000)  // 19782 × 86400 + 23.5 h − 9 h
        #expect(t.localDay == 19782)
        #expect(t.localMonth == 2)
        #expect(t.localDate == LocalDate(day: 19782))
        #expect(t.text == "2024-02-29T23:30:00+09:00")
    }

    @Test func theEpochIsZero() throws {
        let t = try Timestamp.parse("1970-01-01T00:00:00Z")
        #expect(t.epochSeconds == 0)
        #expect(t.localDay == 0)
        #expect(t.localMonth == 1)
    }

    @Test func aNegativeOffsetCrossesIntoTheNextUTCDay() throws {
        // 2023-12-31 20:00 at −05:00 is 2024-01-01 01:00 UTC = 19723 × 86400 + 3600.
        let t = try Timestamp.parse("2023-12-31T20:00:00-05:00")
        #expect(t.epochSeconds == 1_704_070_800)
        #expect(t.localDay == 19722)
        #expect(t.localMonth == 12)
    }

    @Test func separatorsFractionsAndOffsetSpellings() throws {
        let reference = try Timestamp.parse("2024-05-01T12:00:00Z").epochSeconds
        for text in ["2024-05-01t12:00:00z", "2024-05-01 12:00:00Z", "2024-05-01T12:00:00.999999999Z",
                     "2024-05-01T12:00:00-00:00", "2024-05-01T21:30:00.5+09:30", "2024-05-01T00:00:00-12:00"] {
            #expect(try Timestamp.parse(text).epochSeconds == reference, "\(text)")
        }
        // The fraction is dropped, so instants before 1970 round towards the past.
        #expect(try Timestamp.parse("1969-12-31T23:59:59.999Z").epochSeconds == -1)
    }

    @Test func theTextIsReturnedAsWritten() throws {
        for text in ["2024-02-29T23:30:00+09:00", "1970-01-01T00:00:00Z", "2023-12-31T20:00:00-05:00",
                     "2024-05-01t12:00:00z", "2024-05-01 12:00:00Z", "2024-05-01T12:00:00.999999999Z",
                     "2024-05-01T12:00:00-00:00", "2024-05-01T12:00:00+00:00", "2024-05-01T21:30:00.5+09:30",
                     "2024-05-01T00:00:00-12:00", "0001-01-01T00:00:00Z", "0999-03-01T00:00:00+14:00",
                     "9999-12-31T23:00:00-05:00", "2016-12-31T23:59:60Z", "2017-01-01T08:59:60+09:00",
                     "1969-12-31T23:59:59.999Z"] {
            let timestamp = try Timestamp.parse(text)
            #expect(timestamp.text == text)
            var json: [UInt8] = []
            timestamp.encodeJSON(into: &json)
            #expect(String(decoding: json, as: UTF8.self) == JSONValue.string(text).jsonString)
        }
        // The usual forms are written again from the instant and offset, not kept.
        for text in ["2024-02-29T23:30:00+09:00", "1970-01-01T00:00:00Z", "2023-12-31T20:00:00-05:00",
                     "2024-05-01T12:00:00-00:00", "0001-01-01T00:00:00Z"] {
            #expect(try Timestamp.parse(text).writtenText == nil, "\(text)")
        }
        // The same instant written two ways is two timestamps; written one way, one.
        #expect(try Timestamp.parse("2024-05-01T12:00:00Z") != Timestamp.parse("2024-05-01T12:00:00+00:00"))
        #expect(try Timestamp.parse("2024-05-01T12:00:00Z") != Timestamp.parse("2024-05-01T12:00:00.0Z"))
        #expect(try Timestamp.parse("2024-05-01T12:00:00Z") == Timestamp.parse("2024-05-01T12:00:00Z"))
    }

    /// A timestamp in its canonical form comes back whole from its instant, offset and
    /// marker (as stored beside a sighting); fields no canonical text has give none.
    @Test func theCanonicalFieldsGiveTheTimestampBack() throws {
        for text in ["2024-02-29T23:30:00+09:00", "1970-01-01T00:00:00Z", "2023-12-31T20:00:00-05:00",
                     "2024-05-01T12:00:00-00:00", "2024-05-01T12:00:00+00:00", "0001-01-01T00:00:00Z",
                     "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "1969-12-31T23:59:59Z",
                     "2024-12-31T23:30:00+14:00", "1900-03-01T00:00:00-00:30"] {
            let parsed = try Timestamp.parse(text)
            let fields = try #require(parsed.canonicalFields, "\(text)")
            let rebuilt = try #require(Timestamp(epochSeconds: fields.epochSeconds, offsetMinutes: fields.offsetMinutes,
                                                 marker: fields.marker), "\(text)")
            #expect(rebuilt == parsed, "\(text)")
            #expect(rebuilt.localMonth == parsed.localMonth && rebuilt.localDate == parsed.localDate)
        }
        for text in ["2024-05-01t12:00:00z", "2024-05-01T12:00:00.5Z", "2016-12-31T23:59:60Z"] {
            #expect(try Timestamp.parse(text).canonicalFields == nil, "\(text)")
        }
        let z = UInt8(ascii: "Z"), plus = UInt8(ascii: "+"), minus = UInt8(ascii: "-")
        let first: Int64 = -62_135_596_800, last: Int64 = 253_402_300_799
        #expect(Timestamp(epochSeconds: first, offsetMinutes: 0, marker: z) != nil)
        #expect(Timestamp(epochSeconds: last, offsetMinutes: 0, marker: z) != nil)
        for (epoch, offset, marker) in [(first - 1, 0, z), (last + 1, 0, z), (first + 59, -1, minus), (last - 59, 1, plus),
                                        (0, 5, z), (0, -60, plus), (0, 60, minus), (0, 24 * 60, plus),
                                        (0, -24 * 60, minus), (0, 0, UInt8(ascii: "z")), (0, 0, 0),
                                        (Int64.max, 0, z), (Int64.min, 0, z), (Int64.max, Int16.max, plus),
                                        (Int64.min, Int16.min, minus)] as [(Int64, Int16, UInt8)] {
            #expect(Timestamp(epochSeconds: epoch, offsetMinutes: offset, marker: marker) == nil,
                    "\(epoch) \(offset) \(marker)")
        }
    }

    /// The offset's tag and the instant write the text as written again, for every
    /// quarter-hour offset and both spellings of UTC; other offsets and texts not written
    /// again from their fields have no tag, and tags no timestamp has write nothing.
    @Test func theOffsetTagAndTheInstantWriteTheTextAgain() throws {
        var texts = ["1970-01-01T00:00:00Z", "2024-05-01T12:00:00-00:00", "2024-05-01T12:00:00+00:00",
                     "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00+23:45",
                     "9999-12-31T23:59:59-23:45"]
        for quarters in 1...95 {
            let offset = "\(quarters * 15 / 60 < 10 ? "0" : "")\(quarters * 15 / 60):\(quarters * 15 % 60 == 0 ? "00" : "\(quarters * 15 % 60)")"
            texts += ["2025-05-27T06:30:00+\(offset)", "2025-05-27T06:30:00-\(offset)"]
        }
        var tags = Set<UInt8>()
        for text in texts {
            let parsed = try Timestamp.parse(text)
            #expect(parsed.offsetTag != 0, "\(text)")
            tags.insert(parsed.offsetTag)
            var expected: [UInt8] = []
            parsed.encodeJSON(into: &expected)
            let written = Self.written(parsed.epochSeconds, parsed.offsetTag)
            #expect(written == expected && written == Array("\"\(text)\"".utf8), "\(text)")
        }
        #expect(tags.count == 2 + 191, "every offset has a tag of its own")
        for text in ["2025-05-27T06:30:00+05:31", "2025-05-27T06:30:00-23:59", "2024-05-01t12:00:00z",
                     "2024-05-01T12:00:00.5Z", "2016-12-31T23:59:60Z"] {
            #expect(try Timestamp.parse(text).offsetTag == 0, "\(text)")
        }
        for tag in [0, 194, 255] as [UInt8] {
            #expect(Self.written(0, tag) == nil, "tag \(tag)")
        }
        let first: Int64 = -62_135_596_800, last: Int64 = 253_402_300_799
        let utc = try Timestamp.parse("1970-01-01T00:00:00Z").offsetTag
        let east = try Timestamp.parse("1970-01-01T00:00:00+09:00").offsetTag
        for (epoch, tag) in [(first - 1, utc), (last + 1, utc), (last - 9 * 3600 + 1, east), (Int64.max, east),
                             (Int64.min, utc)] {
            #expect(Self.written(epoch, tag) == nil, "\(epoch)")
        }
    }

    /// What ``Timestamp/writeJSON(epochSeconds:offsetTag:to:)`` writes, `nil` when it writes nothing.
    static func written(_ epochSeconds: Int64, _ tag: UInt8) -> [UInt8]? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Timestamp.maxJSONLength) { buffer in
            let start = buffer.baseAddress!
            return Timestamp.writeJSON(epochSeconds: epochSeconds, offsetTag: tag, to: start)
                .map { Array(UnsafeBufferPointer(start: start, count: $0 - start)) }
        }
    }

    /// The local day is read from the instant and the offset: it is the date as written,
    /// whatever the offset, at the ends of the years, days and of the range, and at a leap
    /// second.
    @Test func theLocalDayIsTheDateAsWritten() throws {
        for text in ["2024-02-29T23:30:00+09:00", "2024-03-01T00:00:00+09:00", "2024-02-29T00:00:00-23:59",
                     "2024-02-29T23:59:59+23:59", "1970-01-01T00:00:00+14:00", "1969-12-31T23:59:59-12:00",
                     "1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00+23:59", "0001-01-01T00:00:00-23:59",
                     "9999-12-31T23:59:59-23:59", "9999-12-31T23:59:59+23:59", "2016-12-31T23:59:60Z",
                     "2017-01-01T08:59:60+09:00", "2016-12-31T14:59:60-09:00", "1900-03-01 00:00:00-00:30"] {
            let timestamp = try Timestamp.parse(text)
            let date = try LocalDate.parse(String(text.prefix(10)))
            #expect(timestamp.localDate == date, "\(text)")
            #expect(timestamp.localMonth == Int(text.dropFirst(5).prefix(2)), "\(text)")
        }
    }

    @Test func theExtremeYears() throws {
        let first = try Timestamp.parse("0001-01-01T00:00:00Z")
        #expect(first.epochSeconds == -62_135_596_800)
        #expect(first.localDay == -719_162)
        #expect(try Timestamp.parse("9999-12-31T23:59:59Z").epochSeconds == 253_402_300_799)
        // The offset may carry the instant past the range of written years.
        #expect(try Timestamp.parse("9999-12-31T23:00:00-05:00").epochSeconds == 253_402_315_200)
    }

    @Test func leapSecondsOnlyAtTheEndOfAUTCDay() throws {
        let lastSecond = try Timestamp.parse("2016-12-31T23:59:59Z").epochSeconds
        #expect(try Timestamp.parse("2016-12-31T23:59:60Z").epochSeconds == lastSecond)
        #expect(try Timestamp.parse("2017-01-01T08:59:60+09:00").epochSeconds == lastSecond)
        #expect(throws: TimestampError("2016-12-31T12:00:60Z", "has second 60, but a leap second can only be 23:59:60 UTC")) {
            try Timestamp.parse("2016-12-31T12:00:60Z")
        }
    }

    @Test func leapYears() throws {
        #expect(try Timestamp.parse("2000-02-29T00:00:00Z").localMonth == 2)
        #expect(throws: TimestampError("1900-02-29T00:00:00Z", "has day 29, outside 01...28 for month 2 of year 1900")) {
            try Timestamp.parse("1900-02-29T00:00:00Z")
        }
        #expect(throws: TimestampError("2023-02-29T00:00:00Z", "has day 29, outside 01...28 for month 2 of year 2023")) {
            try Timestamp.parse("2023-02-29T00:00:00Z")
        }
    }

    @Test func rejectionsSayWhatIsWrong() {
        let form = "(form YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM))"
        let cases: [(String, String)] = [
            ("2024-01-01T10:00:00", "has no UTC offset (add Z or +HH:MM)"),
            ("2024-01-01T10:00:00.250", "has no UTC offset (add Z or +HH:MM)"),
            ("2024-02-30T10:00:00Z", "has day 30, outside 01...29 for month 2 of year 2024"),
            ("2024-04-31T10:00:00Z", "has day 31, outside 01...30 for month 4 of year 2024"),
            ("2024-01-00T10:00:00Z", "has day 0, outside 01...31 for month 1 of year 2024"),
            ("2024-13-01T10:00:00Z", "has month 13, outside 01...12"),
            ("2024-00-01T10:00:00Z", "has month 0, outside 01...12"),
            ("0000-01-01T10:00:00Z", "has year 0000, outside 0001...9999"),
            ("2024-01-01T24:00:00Z", "has hour 24, outside 00...23"),
            ("2024-01-01T23:60:00Z", "has minute 60, outside 00...59"),
            ("2024-01-01T23:59:61Z", "has second 61, outside 00...60"),
            ("2024-01-01T10:00:00+24:00", "has offset hour 24, outside 00...23"),
            ("2024-01-01T10:00:00+09:60", "has offset minute 60, outside 00...59"),
            ("2024-01-01T10:00:00Z ", "has extra characters after the UTC offset, at offset 20"),
            ("2024-01-01", "ends early, expected \"T\" after the date \(form)"),
            ("", "ends early, expected a digit of the year \(form)"),
            ("2024-1-01T10:00:00Z", "has an unexpected character at offset 6, expected a digit of the month \(form)"),
            ("2024-01-01X10:00:00Z", "has an unexpected character at offset 10, expected \"T\" after the date \(form)"),
            ("2024-01-01T10:00Z", "has an unexpected character at offset 16, expected \":\" after the minute \(form)"),
            ("2024-01-01T10:00:00.Z", "has an unexpected character at offset 20, expected a digit of the fraction \(form)"),
            ("2024-01-01T10:00:00+0900", "has an unexpected character at offset 22, expected \":\" after the offset hour \(form)"),
            ("2024-01-01T10:00:00 UTC", "has an unexpected character at offset 19, expected Z, +HH:MM or -HH:MM after the time \(form)"),
            ("２024-01-01T10:00:00Z", "has an unexpected character at offset 0, expected a digit of the year \(form)"),
        ]
        for (text, reason) in cases {
            #expect(throws: TimestampError(text, reason), "\(text)") { try Timestamp.parse(text) }
        }
        #expect(TimestampError("2024-01-01T10:00:00", "has no UTC offset (add Z or +HH:MM)").description
                == #""2024-01-01T10:00:00" has no UTC offset (add Z or +HH:MM)"#)
    }

    @Test func localDates() throws {
        #expect(try LocalDate.parse("1970-01-01") == LocalDate(day: 0))
        #expect(try LocalDate.parse("2024-02-29") == LocalDate(day: 19782))
        #expect(try LocalDate.parse("1969-12-31") < LocalDate.parse("1970-01-01"))
        #expect(throws: TimestampError("2024-02-29T00:00:00Z", "has extra characters after the date YYYY-MM-DD, at offset 10")) {
            try LocalDate.parse("2024-02-29T00:00:00Z")
        }
        #expect(throws: TimestampError("2024-2-29", "has an unexpected character at offset 6, expected a digit of the month (form YYYY-MM-DD)")) {
            try LocalDate.parse("2024-2-29")
        }
        #expect(throws: TimestampError("2023-02-29", "has day 29, outside 01...28 for month 2 of year 2023")) {
            try LocalDate.parse("2023-02-29")
        }
    }

    /// Oracle: walk the calendar one day at a time over every supported year and check
    /// that the closed formula counts the same days.
    @Test func daysFromCivilAgreesWithCountingDays() {
        var expected = LocalDate.daysFromCivil(year: 1, month: 1, day: 1)
        #expect(expected == -719_162)
        for year in 1...9999 {
            for month in 1...12 {
                for day in 1...LocalDate.daysInMonth(year: year, month: month) {
                    if LocalDate.daysFromCivil(year: year, month: month, day: day) != expected {
                        Issue.record("\(year)-\(month)-\(day)")
                        return
                    }
                    expected += 1
                }
            }
        }
        #expect(expected == 2_932_897)  // 9999-12-31 is day 2932896
    }
}
