import Testing
import GeoCluster
import GeoClusterWire
@testable import GeoClusterEngine

struct LineProtocolTests {
    private func respond(_ lines: [String], maxLineBytes: Int = LineProtocol.defaultMaxLineBytes) throws -> [JSONValue] {
        let lineProtocol = LineProtocol(engine: try SampleLayer.engine(), maxLineBytes: maxLineBytes)
        var output: [UInt8] = []
        for (i, line) in lines.enumerated() {
            lineProtocol.respond(to: Array(line.utf8)[...], lineNumber: i + 1, into: &output)
        }
        #expect(output.last == 0x0A || output.isEmpty)
        return try output.split(separator: 0x0A).map { try JSONValue.parse(Array($0)) }
    }

    @Test func answersEchoTheRequestID() throws {
        let answers = try respond([
            #"{"id":7,"op":"stats"}"#,
            #"{"id":"a-1","op":"stats"}"#,
            #"{"id":{"batch":3,"n":[1,2]},"op":"stats"}"#,
            #"{"op":"stats"}"#,
        ])
        #expect(answers.map { $0["id"] } == [7, "a-1", ["batch": 3, "n": [1, 2]], .null])
        #expect(answers.allSatisfy { $0["ok"] == true && $0["result"]?["points"] == 4 })
    }

    /// The id comes back as the same JSON value, written anew (docs/PROTOCOL.md): strings
    /// exactly, numbers in their shortest form as doubles.
    @Test func idsAreEchoedAsTheSameValueWrittenAnew() throws {
        let lineProtocol = LineProtocol(engine: try SampleLayer.engine())
        var output: [UInt8] = []
        for (i, id) in [#""9007199254740993""#, "9007199254740993", "1E5", "-0", "7.50", #"{"a": [1, "x"]}"#, "true"]
            .enumerated() {
            lineProtocol.respond(to: Array(#"{"id":\#(id),"op":"stats"}"#.utf8)[...], lineNumber: i + 1, into: &output)
        }
        // The id's text: what stands between `{"id":` and `,"ok":`.
        let ids = output.split(separator: 0x0A).map { line in
            String(decoding: line, as: UTF8.self).dropFirst(#"{"id":"#.count).components(separatedBy: #","ok":"#)[0]
        }
        #expect(ids == [#""9007199254740993""#, "9007199254740992", "100000", "0", "7.5", #"{"a":[1,"x"]}"#, "true"])
    }

    @Test func badLinesGetAnErrorLineAndTheStreamGoesOn() throws {
        let lines = [
            #"{"id":1,"op":"stats"}"#,
            #"{"id":2,"op":"stats""#,              // truncated JSON
            "{\"id\":3,\"op\":\"st\u{FFFD}ats\"}",  // a valid request for an unknown op
            #"{"id":4,"op":"clusters","layer":"stations","bbox":[0,0,1,1]}"#,
            #"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
            "   ",
            #"{"id":5,"op":"layers"}"#,
        ]
        let answers = try respond(lines)
        #expect(answers.count == 6, "the blank line gets no answer")
        #expect(answers.map { $0["ok"] } == [true, false, false, false, false, true])
        #expect(answers.map { $0["error"]?["code"] } == [nil, "invalid_json", "unknown_op", "missing_field", "nesting_too_deep", nil])
        #expect(answers.map { $0["error"]?["line"] } == [nil, 2, 3, 4, 5, nil])
        #expect(answers[3]["id"] == 4, "a request that parsed keeps its id in the error")
        #expect(answers[3]["error"]?["field"] == "zoom")
        #expect(answers[1]["id"] == .null)
        #expect(answers[5]["id"] == 5)
    }

    @Test func invalidUTF8AndOverlongLinesAreReported() throws {
        let lineProtocol = LineProtocol(engine: try SampleLayer.engine(), maxLineBytes: 64)
        var output: [UInt8] = []
        lineProtocol.respond(to: [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D][...], lineNumber: 1, into: &output)
        lineProtocol.respond(to: Array(repeating: 0x20, count: 10) + Array(#"{"op":"stats","pad":""#.utf8) + Array(repeating: 0x61, count: 60) + [0x22, 0x7D], lineNumber: 2, into: &output)
        let answers = try output.split(separator: 0x0A).map { try JSONValue.parse(Array($0)) }
        #expect(answers.map { $0["error"]?["code"] } == ["invalid_utf8", "line_too_long"])
        #expect(answers.map { $0["error"]?["line"] } == [1, 2])
    }

    /// A batch may answer up to its byte budget: the line whose answer would pass it,
    /// and every later line (a write too, which is then not applied), get `too_large`;
    /// a write already applied keeps its answer.
    @Test func aBatchStopsAnsweringAtItsBudget() throws {
        let places = try LiveLayer(name: "places", kind: .places, records: [
            LayerRecord(json: ["id": "p1", "lon": 127, "lat": 37.5, "name": "One", "category": "cafe"],
                        kind: .places, layer: "places", index: 0),
        ])
        let engine = try Engine(entries: [.live(LiveLayerStore(places)), .radius(RadiusLayer(name: "stations", kind: .points,
                                                                                     features: SampleLayer.features))])
        let all = #"{"id":"all","op":"clusters","layer":"stations","bbox":[-180,-85,180,85],"zoom":20}"#
        var output: [UInt8] = []
        LineProtocol(engine: engine).respond(to: Array(all.utf8)[...], lineNumber: 1, into: &output)
        let oneAnswer = output.count
        // Room for two whole answers and a write's, not for a third whole answer.
        let lineProtocol = LineProtocol(engine: engine, maxBatchAnswerBytes: 2 * oneAnswer + 200)
        let insert = { (id: String) in
            #"{"id":"w-\#(id)","op":"insert","layer":"places","records":[{"id":"\#(id)","lon":127,"lat":37.5,"name":"N","category":"cafe"}]}"#
        }
        let lines = [all, insert("p2"), all, all, #"{"id":"s","op":"stats"}"#, insert("p3")]
        var batch = LineProtocol.Batch()
        output = []
        for (i, line) in lines.enumerated() {
            lineProtocol.respond(to: Array(line.utf8)[...], lineNumber: i + 1, batch: &batch, into: &output)
        }
        let answers = try output.split(separator: 0x0A).map { try JSONValue.parse(Array($0)) }
        #expect(answers.map { $0["ok"] } == [true, true, true, false, false, false])
        #expect(answers.dropFirst(3).allSatisfy { $0["error"]?["code"] == "too_large" })
        #expect(answers[3]["id"] == "all" && answers[3]["error"]?["line"] == 4)
        #expect(batch.isSpent && batch.answeredBytes <= 2 * oneAnswer + 200)
        // p2 was written before the budget ran out; p3 came after and was not.
        #expect(try engine.handle(["op": "stats", "layer": "places"]).get()["count"] == 2)

        // Another batch has a budget of its own.
        var next = LineProtocol.Batch()
        output = []
        lineProtocol.respond(to: Array(all.utf8)[...], lineNumber: 1, batch: &next, into: &output)
        #expect(try JSONValue.parse(Array(output.dropLast()))["ok"] == true)
    }

    /// A cluster id or offset past 2^53 - 1 could stand for its neighbour as a JSON
    /// number (9007199254740993 reads as 9007199254740992): out of range, not another id.
    @Test func integersPastExactDoublesAreOutOfRange() throws {
        let answers = try respond([
            #"{"op":"children","layer":"stations","cluster_id":9007199254740993}"#,
            #"{"op":"leaves","layer":"stations","cluster_id":9007199254740992}"#,
            #"{"op":"leaves","layer":"stations","cluster_id":1,"offset":9007199254740992}"#,
            #"{"op":"expansion_zoom","layer":"stations","cluster_id":9007199254740991}"#,
        ])
        #expect(answers.map { $0["error"]?["code"] } == ["invalid_field", "invalid_field", "invalid_field", "unknown_cluster"])
    }

    @Test func carriageReturnsBeforeTheNewlineAreIgnored() throws {
        let answers = try respond(["{\"id\":1,\"op\":\"stats\"}\r"])
        #expect(answers.first?["ok"] == true)
    }
}
