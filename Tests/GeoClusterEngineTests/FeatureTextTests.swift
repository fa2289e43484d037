import Testing
import GeoClusterTestSupport
import GeoClusterWire
@testable import GeoClusterEngine

struct FeatureTextTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let phrases = (0..<FeatureText.phraseCount).map(FeatureText.phrase).map { String(decoding: UnsafeBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount), as: UTF8.self) }

    /// The text as kept, made again, and appended after other bytes.
    static func readBack(_ kept: FeatureText, names: FeatureTextNames = .none) -> (text: [UInt8], appended: [UInt8]) {
        var appended = Array("[x,".utf8)
        kept.append(to: &appended, names: names)
        return (kept.text(names: names), appended)
    }

    static let usual = [
        #"{"type":"Feature","id":"s7","geometry":{"type":"Point","coordinates":[126.9,37.5]},"properties":{"species":"Grus monacha","count":3}}"#,
        #"{"type":"Feature","id":12,"geometry":{"type":"Point","coordinates":[-0.5,1e-7,12]},"properties":null}"#,
        #"{"type":"Feature","id":-3.5e2,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}"#,
        // Quotes, escapes and the fixed parts' own text inside the id and the properties.
        #"{"type":"Feature","id":"a\"b\\","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"k":"]},\"properties\":"}}"#,
        #"{"type":"Feature","id":"x\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[","geometry":{"type":"Point","coordinates":[3,4]},"properties":{"이름":"순천만"},"extra":[1]}"#,
    ]

    @Test func textsOfTheUsualFormAreKeptWithoutTheirFixedParts() {
        for text in Self.usual {
            let kept = FeatureText(Self.bytes(text))
            #expect(kept.isCut, "\(text)")
            #expect(kept.count == text.utf8.count)
            let (made, appended) = Self.readBack(kept)
            #expect(String(decoding: made, as: UTF8.self) == text)
            #expect(String(decoding: appended, as: UTF8.self) == "[x," + text)
        }
    }

    /// A sighting, a place and a station as the encoder writes them, and a note.
    static let withPhrases = [
        #"{"type":"Feature","id":"s0","geometry":{"type":"Point","coordinates":[128.016847,33.137559]},"properties":{"species":"species-70","count":1,"observed_at":"2025-05-01T06:30:00+09:00","observer_id":"user-0"}}"#,
        #"{"type":"Feature","id":"p1","geometry":{"type":"Point","coordinates":[127.4,36.3]},"properties":{"name":"한밭수목원","category":"park","dwell_minutes":40}}"#,
        #"{"type":"Feature","id":"st","geometry":{"type":"Point","coordinates":[127.43,36.33]},"properties":{"name":"대전","lines":["KTX"]}}"#,
        #"{"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"note":"\"species\":\"x\" +09:00\"","name":"a"}}"#,
        // Longer than the scratch space of an append.
        #"{"type":"Feature","id":8,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":""#
            + String(repeating: "두루미 ", count: 300) + #"","category":"park","dwell_minutes":40}}"#,
    ]

    /// The members' names are kept as one byte each: a sighting's four names and the end
    /// of its time take 51 bytes less.
    @Test func membersNamesAreKeptAsOneByteEach() {
        for text in Self.withPhrases {
            let kept = FeatureText(Self.bytes(text))
            #expect(kept.isCut && kept.keepsPhrases, "\(text)")
            #expect(kept.count == text.utf8.count)
            let (made, appended) = Self.readBack(kept)
            #expect(String(decoding: made, as: UTF8.self) == text)
            #expect(String(decoding: appended, as: UTF8.self) == "[x," + text)
        }
        #expect((0..<FeatureText.phraseCount).map { FeatureText.phrase($0).utf8CodeUnitCount }.max()
                == FeatureText.longestPhrase)
        let sighting = FeatureText(Self.bytes(Self.withPhrases[0]))
        // The header, "s0", the coordinates (20 bytes) two to a byte, and the rest (100 bytes)
        // with 11 + 8 + 15 + 15 + 7 of them kept as 5.
        #expect(sighting.storedCount == 5 + 4 + 10 + (100 - 56 + 5))
    }

    /// A rest holding bytes that stand for phrases is kept as given.
    @Test func restsWithControlBytesAreKeptAsGiven() {
        for text in [
            "{\"type\":\"Feature\",\"id\":1,\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]},\"properties\":{\"species\":\"a\u{01}\"}}",
            "{\"type\":\"Feature\",\"id\":1,\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]},\"properties\":{\"count\":\u{00}}}",
        ] {
            let kept = FeatureText(Self.bytes(text))
            #expect(kept.isCut && !kept.keepsPhrases)
            #expect(kept.text == Self.bytes(text))
            #expect(kept.count == text.utf8.count)
        }
    }

    static let other = [
        "",
        "null",
        #"{"type":"Feature","id":"#,
        #"{"type":"Feature","id":"s7"#,
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":null}"#,
        #"{"type":"Feature","id":"s7","properties":null,"geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"s7","geometry":{"type":"Point","coordinates":[1,2]}}"#,
        #"{"type":"Feature","id":"s7","geometry":{"type":"MultiPoint","coordinates":[[1,2]]},"properties":null}"#,
        #"{"type":"Feature","id":"s7","geometry":{"type":"Point","coordinates":[1,2]},"properties""#,
        #"{"type":"Feature","id":"unterminated\"#,
        #"{ "type":"Feature","id":"s7","geometry":{"type":"Point","coordinates":[1,2]},"properties":null}"#,
    ]

    @Test func otherTextsAreKeptWhole() {
        for text in Self.other {
            let kept = FeatureText(Self.bytes(text))
            #expect(!kept.isCut, "\(text)")
            #expect(kept.count == text.utf8.count)
            let (made, appended) = Self.readBack(kept)
            #expect(String(decoding: made, as: UTF8.self) == text)
            #expect(String(decoding: appended, as: UTF8.self) == "[x," + text)
        }
    }

    /// Two kept texts are equal when their texts are: made apart from the same text, and
    /// not when a byte, the length or the way they are kept differs.
    @Test func keptTextsAreEqualWhenTheirTextsAre() {
        let texts = Self.usual + Self.withPhrases + Self.other
        for (i, text) in texts.enumerated() {
            let kept = FeatureText(Self.bytes(text))
            #expect(kept == FeatureText(Self.bytes(text)), "\(text)")
            for (j, other) in texts.enumerated() where j != i {
                #expect(kept != FeatureText(Self.bytes(other)), "\(text) and \(other)")
            }
            #expect(kept != FeatureText(Self.bytes(text) + [0x20]), "\(text)")
            guard !text.isEmpty else { continue }
            var changed = Self.bytes(text)
            changed[changed.count / 2] ^= 1
            #expect(kept != FeatureText(changed), "\(text)")
            #expect(kept != FeatureText(Array(Self.bytes(text).dropLast())), "\(text)")
        }
    }

    /// Coordinates are kept two bytes to a byte, whatever bytes of numbers they hold and
    /// however many.
    @Test func coordinatesAreKeptInHalfTheBytes() {
        for coordinates in ["126.9,37.5", "1,2", "-0.5,1e-7,12", "1E+300,-2.5e-3", "0123456789.,-+eE", "7", "",
                            String(repeating: "12.5,", count: 500) + "3"] {
            let text = #"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":["# + coordinates
                + #"]},"properties":null}"#
            let kept = FeatureText(Self.bytes(text))
            #expect(kept.isCut && kept.text == Self.bytes(text), "\(coordinates)")
            // The header, the id, the coordinates and `null}`.
            #expect(kept.storedCount == 5 + 1 + (coordinates.utf8.count + 1) / 2 + 5, "\(coordinates)")
        }
    }

    /// Parts longer than the header can say are kept whole, not cut short.
    @Test func longPartsAreKeptWhole() {
        let longID = String(repeating: "a", count: Int(UInt16.max))
        let longCoordinates = String(repeating: "1,", count: 40_000) + "1"
        for text in [
            #"{"type":"Feature","id":""# + longID + #"","geometry":{"type":"Point","coordinates":[1,2]},"properties":null}"#,
            #"{"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":["# + longCoordinates + #"]},"properties":null}"#,
        ] {
            let kept = FeatureText(Self.bytes(text))
            #expect(!kept.isCut)
            #expect(kept.text == Self.bytes(text))
        }
        let justShort = #"{"type":"Feature","id":""# + String(repeating: "a", count: Int(UInt16.max) - 3)
            + #"","geometry":{"type":"Point","coordinates":[1,2]},"properties":null}"#
        let kept = FeatureText(Self.bytes(justShort))
        #expect(kept.isCut)
        #expect(kept.text == Self.bytes(justShort))
    }

    /// Whatever bytes are changed, dropped or added, the text comes back as given, kept in
    /// parts or whole.
    @Test func anyTextComesBackAsGiven() {
        var random = SeededRandom(seed: 26)
        var cut = 0, phrasesKept = 0, namesKept = 0, idsFromKey = 0
        for round in 0..<5_000 {
            let texts = Self.usual + Self.withPhrases
            var text = Self.bytes(texts[round % texts.count])
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<text.count, using: &random)
                let byte = [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: ","), UInt8(ascii: "]"),
                            UInt8(ascii: "7"), UInt8(ascii: "}"), 0xEC, 0x01, 0x0A, UInt8(ascii: "+"),
                            UInt8(ascii: "s")][Int.random(in: 0..<11, using: &random)]
                switch Int.random(in: 0..<4, using: &random) {
                case 0: text[position] = byte
                case 1: text.remove(at: position)
                case 2: text.insert(byte, at: position)
                default:
                    // A phrase, whole or cut short, where it may or may not belong.
                    let phrase = Array(Self.phrases[Int.random(in: 0..<Self.phrases.count, using: &random)].utf8)
                    text.insert(contentsOf: phrase.prefix(Int.random(in: 1...phrase.count, using: &random)), at: position)
                }
            }
            let kept = FeatureText(text)
            if kept.isCut { cut += 1 }
            if kept.keepsPhrases { phrasesKept += 1 }
            #expect(kept.text == text)
            #expect(kept.count == text.count)
            // And with the names of the sighting and the place of `withPhrases`.
            let withNames = FeatureText(text, names: Self.names)
            if withNames.keepsNames { namesKept += 1 }
            if withNames.writesIDFromKey { idsFromKey += 1 }
            #expect(withNames.text(names: Self.names) == text)
            #expect(withNames.count(names: Self.names) == text.count)
        }
        // Changes inside the id, the coordinates or the rest keep the form.
        #expect(cut > 500)
        #expect(phrasesKept > 500)
        #expect(namesKept > 500)
        #expect(idsFromKey > 100)
    }

    /// An id that the record's key gives as is, a string id between quotes or an integer
    /// id, is written from the key and not kept; any other is kept.
    @Test func idsThatTheKeyGivesAreWrittenFromIt() {
        func text(_ id: String) -> String {
            #"{"type":"Feature","id":"# + id + #","geometry":{"type":"Point","coordinates":[126.9,37.5]},"properties":{"count":1}}"#
        }
        let uuid = "5e0c9a1d-3b7f-4e26-8d4a-9f1b2c3d4e5f"
        for (id, key, fromKey) in [
            (#""s7""#, "s7", true), (#""\#(uuid)""#, uuid, true), ("12", "#12", true), ("-3", "#-3", true),
            (##""#7""##, "##7", false), (#""한밭""#, "한밭", true), ("1e3", "#1000", false), (#""a\"b""#, #"a"b"#, false),
            (#""s7""#, "s8", false), (#""s7""#, "s", false), (#""s7""#, "", false), ("12", "#1", false), ("12", "12", false),
            (#""\#(String(repeating: "k", count: 2_000))""#, String(repeating: "k", count: 2_000), true),
        ] {
            let names = FeatureTextNames(id: key)
            let kept = FeatureText(Self.bytes(text(id)), names: names)
            #expect(kept.isCut && kept.writesIDFromKey == fromKey, "\(id) \(key)")
            #expect(kept.count(names: names) == text(id).utf8.count, "\(id) \(key)")
            let (made, appended) = Self.readBack(kept, names: names)
            #expect(String(decoding: made, as: UTF8.self) == text(id))
            #expect(String(decoding: appended, as: UTF8.self) == "[x," + text(id))
            if fromKey {
                // The id, and its length in the header.
                #expect(kept.storedCount == FeatureText(Self.bytes(text(id))).storedCount - id.utf8.count - 2)
            }
        }
    }

    /// A sighting's `observed_at` whose text its time writes again is kept as one byte;
    /// another text of the same time, or a time other than the record's, is kept as given.
    @Test func aTimeThatItsInstantWritesIsKeptAsOneByte() throws {
        func text(_ time: String) -> String {
            #"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"species":"a","observed_at":""#
                + time + #"","count":1}}"#
        }
        for (written, time, kept) in [
            ("2025-05-01T06:30:00+09:00", "2025-05-01T06:30:00+09:00", true),
            ("2025-05-01T06:30:00Z", "2025-05-01T06:30:00Z", true),
            ("1999-12-31T23:59:59-03:30", "1999-12-31T23:59:59-03:30", true),
            ("2025-05-01T06:30:00-00:00", "2025-05-01T06:30:00-00:00", true),
            ("2025-05-01T06:30:00+09:00", "2025-05-01T06:30:01+09:00", false),
            ("2025-05-01T06:30:00+09:00", "2025-04-30T21:30:00Z", false),
            ("2025-05-01T06:30:00.5+09:00", "2025-05-01T06:30:00.5+09:00", false),
            ("2025-05-01t06:30:00z", "2025-05-01t06:30:00z", false),
        ] {
            let names = FeatureTextNames(time: FeatureTextNames.Time(try Timestamp.parse(time)))
            let keptText = FeatureText(Self.bytes(text(written)), names: names)
            #expect(keptText.keepsNames == kept, "\(written) \(time)")
            #expect(keptText.count(names: names) == text(written).utf8.count)
            let (made, appended) = Self.readBack(keptText, names: names)
            #expect(String(decoding: made, as: UTF8.self) == text(written))
            #expect(String(decoding: appended, as: UTF8.self) == "[x," + text(written))
            if kept {
                // The time and its closing quote, less the byte the end of a time at +09:00 took.
                let saved = written.utf8.count + 1 - (written.hasSuffix("+09:00") ? 6 : 0)
                #expect(keptText.storedCount == FeatureText(Self.bytes(text(written))).storedCount - saved)
            }
        }
    }

    /// Names of a sighting and a place of ``withPhrases`` (one made up, a name no text holds).
    static let names = FeatureTextNames(id: "s0", species: SharedName("species-70"), observer: SharedName("user-0"),
                                        category: SharedName("park"),
                                        time: (try? Timestamp.parse("2025-05-01T06:30:00+09:00")).flatMap(FeatureTextNames.Time.init))

    /// A member whose value is one of the record's names is kept as one byte, its name
    /// included, when its text is the name as is; read back with the same names, the text
    /// is the one given.
    @Test func membersWithTheRecordsNamesAreKeptAsOneByteEach() {
        let uuid = "8d4f2c3a-1b7e-4f60-9a3d-2c5e7b1f0a94"
        let species = "노랑부리저어새"
        let korean = #"{"type":"Feature","id":"s1","geometry":{"type":"Point","coordinates":[126.9,37.5]},"properties":{"species":""#
            + species + #"","count":2,"observed_at":"2025-05-01T06:30:00+09:00","observer_id":""# + uuid + #""}}"#
        let names = FeatureTextNames(species: SharedName(species), observer: SharedName(uuid))
        let withoutNames = FeatureText(Self.bytes(korean))
        let kept = FeatureText(Self.bytes(korean), names: names)
        #expect(kept.isCut && kept.keepsPhrases && kept.keepsNames && !withoutNames.keepsNames)
        // The names and their closing quotes: 21 + 1 and 36 + 1 bytes fewer.
        #expect(kept.storedCount == withoutNames.storedCount - 59)
        #expect(!kept.writesIDFromKey)
        #expect(kept.count(names: names) == korean.utf8.count)
        let (made, appended) = Self.readBack(kept, names: names)
        #expect(String(decoding: made, as: UTF8.self) == korean)
        #expect(String(decoding: appended, as: UTF8.self) == "[x," + korean)

        for (text, names, keepsNames) in [
            // A place's category; the same member twice, inside an object of the properties.
            (Self.withPhrases[1], Self.names, true),
            (#"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"species":"species-70","seen":{"species":"species-70","observer_id":"user-0"}}}"#,
             Self.names, true),
            // Names the members do not hold as is: escaped, another name, a longer or
            // shorter one, a name that is not a member's value.
            (#"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"species":"species\u002d70"}}"#,
             Self.names, false),
            (#"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"species":"species-7","x":"species-70\""}}"#,
             Self.names, false),
            (#"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"species":"species-700"}}"#,
             Self.names, false),
            (#"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"species":"species-70"#,
             Self.names, false),
            (#"{"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"park","category":1}}"#,
             Self.names, false),
            (Self.withPhrases[0], FeatureTextNames.none, false),
            // A name longer than the scratch space of an append.
            (#"{"type":"Feature","id":9,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"species":""#
                + String(repeating: "두루미", count: 200) + #""}}"#,
             FeatureTextNames(species: SharedName(String(repeating: "두루미", count: 200))), true),
        ] {
            let kept = FeatureText(Self.bytes(text), names: names)
            #expect(kept.isCut && kept.keepsNames == keepsNames, "\(text)")
            #expect(kept.count(names: names) == text.utf8.count, "\(text)")
            let (made, appended) = Self.readBack(kept, names: names)
            #expect(String(decoding: made, as: UTF8.self) == text)
            #expect(String(decoding: appended, as: UTF8.self) == "[x," + text)
        }
    }

    @Test func recordsKeepTheirFeaturesCutAndAnswerThemWhole() throws {
        let record = try LayerRecord(json: .object(LayerRecordTests.sighting), kind: .sightings, layer: "test", index: 0)
        #expect(record.featureTextIsCut)
        let written = record.feature.jsonString
        #expect(String(decoding: record.featureText, as: UTF8.self) == written)
        var output: [UInt8] = []
        record.appendFeatureText(to: &output)
        #expect(String(decoding: output, as: UTF8.self) == written)
        #expect(written.hasPrefix(#"{"type":"Feature","id":"s7","geometry":{"type":"Point","coordinates":[126.9,37.5]},"#))
        #expect(record.featureTextKeepsNames)
    }

    /// A record's text is kept without its species, observer or category and written with
    /// them, from a feature, a flat record, a stored row and the record shown to others.
    @Test func recordsWriteTheNamesTheirTextsAreKeptWithout() throws {
        let uuid = "0b8e5d1c-7a2f-4c39-b6e1-5f0d9a3c2e71"
        let sighting = try LayerRecord(json: .object(["id": "k1", "lon": 127.5, "lat": 37.2, "species": "노랑부리저어새",
                                                      "count": 2, "observed_at": "2025-05-01T06:30:00+09:00",
                                                      "observer_id": .string(uuid), "properties": ["note": "둥지 근처"]]),
                                       kind: .sightings, layer: "test", index: 0)
        let place = try LayerRecord(json: .object(["id": "p1", "lon": 127.4, "lat": 36.3, "name": "한밭수목원",
                                                   "category": "수목원", "dwell_minutes": 40]),
                                    kind: .places, layer: "test", index: 0)
        for record in [sighting, place, sighting.generalized(), sighting.withholdingNote()] {
            #expect(record.featureTextKeepsNames)
            let text = String(decoding: record.featureText, as: UTF8.self)
            #expect(text == record.feature.jsonString)
            var output: [UInt8] = []
            record.appendFeatureText(to: &output)
            #expect(output == record.featureText)
            let again = try LayerRecord(json: record.feature, kind: record.idKey == "p1" ? .places : .sightings,
                                        layer: "test", index: 0, text: record.featureText)
            #expect(again.featureText == record.featureText)
        }
        #expect(String(decoding: sighting.featureText, as: UTF8.self).contains(#""species":"노랑부리저어새""#))
        #expect(String(decoding: sighting.featureText, as: UTF8.self).contains(#""observer_id":""# + uuid + "\""))
        #expect(String(decoding: place.featureText, as: UTF8.self).contains(#""category":"수목원""#))
        #expect(sighting.withholdingNote().ownerFeatureText == sighting.featureText)
    }
}
