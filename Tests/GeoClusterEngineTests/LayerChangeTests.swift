import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

/// A batch as a journal stores it and as a follower reads it back: records as the text
/// they were written with, inserts and upserts as upserts, deletes by id key.
struct LayerChangeTests {
    @Test func aBatchReadsBackAsTheSameRecords() throws {
        let sighting = try LayerRecord(json: try JSONValue.parse(
            #"{"id":7,"lon":127,"lat":37.5,"species":"Ardea alba","count":2,"observed_at":"2025-05-01T06:30:00+09:00","properties":{"note":"둥지 근처"}}"#),
            kind: .sightings, layer: "birds", index: 0)
        let moved = try LayerRecord(json: try JSONValue.parse(
            #"{"type":"Feature","id":"s2","geometry":{"type":"Point","coordinates":[126.5,37.25,12]},"properties":{"species":"Grus japonensis","count":1,"observed_at":"2025-05-02T06:30:00+09:00"}}"#),
            kind: .sightings, layer: "birds", index: 1)
        let text = LayerChange.encode([.insert(sighting), .upsert(moved), .delete(idKey: "#3")])
        #expect(text.hasPrefix(#"[{"put":{"type":"Feature","id":7,"#))
        let read = try LayerChange.decode(text, kind: .sightings, layer: "birds")
        #expect(read == [.upsert(sighting), .upsert(moved), .delete(idKey: "#3")])
        if case let .upsert(record) = read[1] { #expect(record.featureText == moved.featureText) }
    }

    @Test func aRecordWithoutAnIdKeepsHavingNone() throws {
        let point = try LayerRecord(json: try JSONValue.parse(#"{"lon":1,"lat":2,"properties":{"name":"x"}}"#),
                                    kind: .points, layer: "pts", index: 0)
        let text = LayerChange.encode([.insert(point)])
        #expect(text.contains(#""no_id":true"#))
        let read = try LayerChange.decode(text, kind: .points, layer: "pts")
        #expect(read == [.upsert(point)])
    }

    @Test func aDamagedBatchIsAStorageError() {
        for text in ["[{", #"{"put":1}"#, #"[{"move":"x"}]"#, #"[{"put":{"type":"Feature"}}]"#] {
            #expect(throws: EngineError.self) { try LayerChange.decode(text, kind: .sightings, layer: "birds") }
        }
    }
}
