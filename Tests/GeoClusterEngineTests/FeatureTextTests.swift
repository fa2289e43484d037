import Testing
import GeoClusterTestSupport
import GeoClusterWire
@testable import GeoClusterEngine

struct FeatureTextTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let phrases = (0..<FeatureText.phraseCount).map(FeatureText.phrase).map { String(decoding: UnsafeBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount), as: UTF8.self) }

    /// The text as kept, made again, and appended after other bytes.
    static func readBack(_ kept: FeatureText) -> (text: [UInt8], appended: [UInt8]) {
        var appended = Array("[x,".utf8)
        kept.append(to: &appended)
        return (kept.text, appended)
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
        // The header, "s0", the coordinates, and the rest (100 bytes) with 11 + 8 + 15 + 15 + 7
        // of them kept as 5.
        #expect(sighting.storedCount == 5 + 4 + 20 + (100 - 56 + 5))
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
        var cut = 0, phrasesKept = 0
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
        }
        // Changes inside the id, the coordinates or the rest keep the form.
        #expect(cut > 500)
        #expect(phrasesKept > 500)
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
    }
}
