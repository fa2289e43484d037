import Testing
import GeoClusterTestSupport
import GeoClusterWire
@testable import GeoClusterEngine

struct FeatureTextTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

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
        var cut = 0
        for round in 0..<5_000 {
            var text = Self.bytes(Self.usual[round % Self.usual.count])
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<text.count, using: &random)
                let byte = [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: ","), UInt8(ascii: "]"),
                            UInt8(ascii: "7"), UInt8(ascii: "}"), 0xEC][Int.random(in: 0..<7, using: &random)]
                switch Int.random(in: 0..<3, using: &random) {
                case 0: text[position] = byte
                case 1: text.remove(at: position)
                default: text.insert(byte, at: position)
                }
            }
            let kept = FeatureText(text)
            if kept.isCut { cut += 1 }
            #expect(kept.text == text)
            #expect(kept.count == text.count)
        }
        // Changes inside the id, the coordinates or the rest keep the form.
        #expect(cut > 500)
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
