import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

/// The checked fields stored beside a record's text give the record that validating the
/// text gives, and are ignored whenever they do not describe exactly that text.
@Suite struct CheckedFieldsTests {
    /// Records of every kind, with the members that change what is kept: notes, observers,
    /// altitudes, times with fractions and offsets, escapes and Korean text, ids of both
    /// kinds and none.
    static let records: [(LayerKind, String)] = [
        (.sightings, #"{"type":"Feature","id":"s1","geometry":{"type":"Point","coordinates":[126.97,37.56]},"properties":{"species":"Grus japonensis","count":2,"observed_at":"2026-01-05T07:30:00+09:00"}}"#),
        (.sightings, #"{"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[-180,-90,12.5]},"properties":{"species":"두루미","count":1000000000,"observed_at":"2026-01-05t07:30:00.125z","observer_id":"kim","note":"둥지 근처 \"조용히\"","extra":[1,{"a":null}]}}"#),
        (.sightings, ##"{"id":"#7","lon":129.1,"lat":35.2,"species":"Egretta garzetta","count":3,"observed_at":"2025-12-31T23:59:60-00:00","observer_id":"lee","properties":{"habitat":"갯벌"}}"##),
        (.sightings, #"{"id":"s4","lon":128.6,"lat":35.87,"species":"Ardea alba","count":1,"observed_at":"1999-12-31T23:59:59-00:00"}"#),
        (.places, #"{"type":"Feature","id":"p1","geometry":{"type":"Point","coordinates":[126.98,37.57]},"properties":{"name":"경복궁","category":"palace","dwell_minutes":90}}"#),
        (.places, #"{"id":"p2","lon":126.99,"lat":37.58,"name":"Cafe \u00e9","category":"cafe","dwell_minutes":null}"#),
        (.stations, #"{"type":"Feature","id":"st1","geometry":{"type":"Point","coordinates":[126.9707,37.5547]},"properties":{"name":"서울역","lines":["KTX","1호선","공항철도"]}}"#),
        (.points, #"{"type":"Feature","geometry":{"type":"Point","coordinates":[0.5,-0.25]},"properties":null}"#),
        (.points, #"{"type":"Feature","id":-9007199254740992,"geometry":{"type":"Point","coordinates":[180,90]},"properties":{"observer_id":"x","note":1}}"#),
    ]

    static func record(_ entry: (LayerKind, String)) throws -> LayerRecord {
        try LayerRecord(json: try JSONValue.parse(entry.1), kind: entry.0, layer: "test", index: 0)
    }

    @Test(arguments: 0..<records.count) func theFieldsGiveTheRecordItsTextValidatesTo(_ i: Int) throws {
        let (kind, _) = Self.records[i]
        let record = try Self.record(Self.records[i])
        let stored = StoredRecord(record)
        let fields = try #require(stored.checkedFields)
        let fast = try #require(CheckedFields.decode(fields, text: stored.featureText, kind: kind))
        #expect(fast == record)
        let validated = try LayerRecord(stored: StoredRecord(idKey: stored.idKey, featureText: stored.featureText),
                                        kind: kind, layer: "test", index: 0)
        #expect(validated == fast)
        #expect(try LayerRecord(stored: stored, kind: kind, layer: "test", index: 0) == record)
    }

    /// The record comes from the fields when they match the text, not from the text:
    /// fields changed by hand (the text's hash left as it was) are what it shows.
    @Test func theRecordIsTakenFromMatchingFields() throws {
        var stored = StoredRecord(try Self.record(Self.records[0]))
        var fields = Array(try #require(stored.checkedFields))
        let species = Array("Grus japonensis".utf8)
        let at = try #require((0...(fields.count - species.count)).first { fields[$0..<$0 + species.count].elementsEqual(species) })
        fields[at + species.count - 1] = UInt8(ascii: "X")
        stored.checkedFields = fields[...]
        let record = try LayerRecord(stored: stored, kind: .sightings, layer: "test", index: 0)
        guard case let .sighting(shown, _, _) = record.fields else {
            Issue.record("not a sighting: \(record.fields)")
            return
        }
        #expect(shown == "Grus japonensiX")
    }

    /// A text changed without its fields (a row updated by a version that did not write
    /// them) is read from the text: its values, or its error.
    @Test func aChangedTextIsValidatedAgain() throws {
        var stored = StoredRecord(try Self.record(Self.records[0]))
        let text = String(decoding: stored.featureText, as: UTF8.self)
        stored.featureText = ArraySlice(text.replacingOccurrences(of: "Grus japonensis", with: "Grus monacha").utf8)
        #expect(CheckedFields.decode(stored.checkedFields!, text: stored.featureText, kind: .sightings) == nil)
        let record = try LayerRecord(stored: stored, kind: .sightings, layer: "test", index: 0)
        guard case let .sighting(species, _, _) = record.fields else {
            Issue.record("not a sighting: \(record.fields)")
            return
        }
        #expect(species == "Grus monacha")

        stored.featureText = ArraySlice(text.replacingOccurrences(of: #""count":2"#, with: #""count":0"#).utf8)
        #expect(throws: EngineError.self) { try LayerRecord(stored: stored, kind: .sightings, layer: "test", index: 4) }
    }

    /// Fields cut short, of another format or kind, or with bytes after them are not
    /// read (the record comes from its text); no such bytes trap.
    @Test func fieldsThatDoNotFitAreIgnored() throws {
        for (i, entry) in Self.records.enumerated() {
            let record = try Self.record(entry)
            let stored = StoredRecord(record)
            let fields = try #require(stored.checkedFields)
            for length in 0..<fields.count {
                #expect(CheckedFields.decode(fields[..<length], text: stored.featureText, kind: entry.0) == nil,
                        "record \(i) cut to \(length) bytes")
            }
            #expect(CheckedFields.decode((Array(fields) + [0])[...], text: stored.featureText, kind: entry.0) == nil)
            var otherFormat = fields
            otherFormat[otherFormat.startIndex] &+= 1
            #expect(CheckedFields.decode(otherFormat, text: stored.featureText, kind: entry.0) == nil)
            var unknownFlag = fields
            unknownFlag[unknownFlag.startIndex + 2] |= 16
            #expect(CheckedFields.decode(unknownFlag, text: stored.featureText, kind: entry.0) == nil)
            if entry.0 != .sightings {
                var writtenTime = fields
                writtenTime[writtenTime.startIndex + 2] |= 8
                #expect(CheckedFields.decode(writtenTime, text: stored.featureText, kind: entry.0) == nil)
            }
            if entry.0 != .places {
                var dwell = fields
                dwell[dwell.startIndex + 2] |= 4
                #expect(CheckedFields.decode(dwell, text: stored.featureText, kind: entry.0) == nil)
            }
            for kind in LayerKind.allCases where kind != entry.0 {
                #expect(CheckedFields.decode(fields, text: stored.featureText, kind: kind) == nil)
            }
            // Every byte flipped: whatever comes back, nothing traps, and the header and
            // the hash are never taken when wrong.
            for position in fields.indices {
                var flipped = fields
                flipped[position] ^= 0xFF
                let decoded = CheckedFields.decode(flipped, text: stored.featureText, kind: entry.0)
                if position < 11 && position != 2 { #expect(decoded == nil, "record \(i), byte \(position)") }
            }
            for garbage: [UInt8] in [[], [1], [1, 0, 0], [UInt8](repeating: 0xFF, count: 64)] {
                #expect(CheckedFields.decode(garbage[...], text: stored.featureText, kind: entry.0) == nil)
            }
            #expect(try LayerRecord(stored: StoredRecord(idKey: stored.idKey, featureText: stored.featureText,
                                                         checkedFields: fields.dropLast()),
                                    kind: entry.0, layer: "test", index: 0) == record)
        }
    }

    /// A sighting's time is stored as its instant and offset when its text is written
    /// again from them, and as text otherwise; rows of format 1 (the time always as text,
    /// written before) still give the record.
    @Test(arguments: 0..<records.count) func theTimeIsStoredAsAnInstantOrAsText(_ i: Int) throws {
        let (kind, _) = Self.records[i]
        let record = try Self.record(Self.records[i])
        let text = Array(record.featureText)
        let current = CheckedFields.encode(record)
        #expect(current.first == CheckedFields.format)
        if case let .sighting(_, _, observedAt) = record.fields {
            let timeAsText = current[2] & 8 != 0
            #expect(timeAsText == (observedAt.canonicalFields == nil))
            #expect(current.count == (timeAsText ? CheckedFields.encode(record, format: 1).count
                                                 : CheckedFields.encode(record, format: 1).count - 4 - observedAt.text.utf8.count + 11))
        }
        let old = CheckedFields.encode(record, format: 1)
        #expect(old.first == 1 && old[2] & 8 == 0)
        #expect(CheckedFields.decode(old[...], text: text[...], kind: kind) == record)
        #expect(try LayerRecord(stored: StoredRecord(idKey: record.idKey, featureText: record.featureText[...],
                                                     checkedFields: old[...]),
                                kind: kind, layer: "test", index: 0) == record)
        // A time in format 1's layout read as format 2's, and the other way: refused or
        // another record, never a trap.
        var swapped = old
        swapped[0] = 2
        _ = CheckedFields.decode(swapped[...], text: text[...], kind: kind)
        var back = current
        back[0] = 1
        if kind == .sightings && current[2] & 8 == 0 { #expect(CheckedFields.decode(back[...], text: text[...], kind: kind) == nil) }
    }

    /// The hash answers give as entity tags is fixed: tags stay valid across restarts and
    /// versions, and stored fields keep matching their text.
    @Test func theContentHashIsTheSameInEveryProcess() {
        #expect(ContentHash.hash([]) == 0x7a62_0700_f645_141b)
        #expect(ContentHash.hash(Array("a".utf8)) == 0x6563_2a34_8588_800b)
    }
}
