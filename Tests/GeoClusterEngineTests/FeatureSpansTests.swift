import Foundation
import Synchronization
import Testing
import GeoClusterTestSupport
@testable import GeoClusterEngine
@testable import GeoClusterWire

/// Layer files read feature by feature on every core (``FeatureSpans``) give what the
/// whole-document parse gives: the same features, the same records, the same errors.
struct FeatureSpansTests {
    static func spans(_ text: String) -> [String]? {
        let bytes = Array(text.utf8)
        return FeatureSpans.scan(bytes)?.map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    @Test func findsEachFeatureWhateverItsStringsHold() {
        let tricky = #"{"type":"Feature","id":"a]}\"{[","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"n":"\\","m":[[],{}],"k":"한국 😀"}}"#
        let text = " {\n \"name\" : \"x\", \"features\" : [ \(tricky) ,\n{\"type\":\"Feature\"} ] ,\"type\":\"FeatureCollection\", \"bbox\":[0,0,1,1]}\n"
        #expect(Self.spans(text) == [tricky, #"{"type":"Feature"}"#])
        #expect(Self.spans(#"{"type":"FeatureCollection","features":[]}"#) == [])
    }

    /// Layouts the scan leaves to the whole parse: it says `nil`, never a wrong answer.
    @Test(arguments: [
        #"{"type":"FeatureCollection"}"#,                                   // no features
        #"{"type":"Feature","features":[]}"#,                               // not a collection
        #"{"type":"FeatureCollection","features":{}}"#,                     // features not an array
        #"{"type":"FeatureCollection","features":[],"features":[]}"#,       // a second features
        #"{"ty\u0070e":"FeatureCollection","features":[]}"#,               // a key with an escape
        #"{"type":"FeatureCollection","features":[{}]} x"#,                 // bytes after the end
        #"{"type":"FeatureCollection","features":[{} {}]}"#,                // no comma
        #"{"type":"FeatureCollection","features":[{"a":"]}"#,               // unterminated
        #"{"type":"FeatureCollection" "features":[]}"#,                     // no comma between members
        #"{"type":FeatureCollection,"features":[]}"#,                       // type not JSON
        #"[]"#, #""#,
    ])
    func leavesOtherLayoutsToTheWholeParse(_ text: String) {
        #expect(Self.spans(text) == nil)
    }

    /// A long `features` array scanned in two halves at once gives what one scan gives,
    /// wherever the halfway guess lands: at a feature's start, inside a string holding
    /// `},{`, inside a nested array of objects, or after the array.
    @Test func aScanInTwoHalvesFindsWhatOneScanFinds() {
        let variants = [
            #"{"type":"Feature","properties":{}}"#,
            #"{"type":"Feature","properties":{"s":"},{\"type\":\"Feature\"},{"}}"#,
            #"{"type":"Feature","properties":{"list":[{"a":1},{"b":[{"c":"]"}]},{"d":2}]}}"#,
            #"{ "type" : "Feature" ,"properties":{"s":"\\"} }"#,
            #"{"type":"Feature","properties":{"long":"\#(String(repeating: "},{x", count: 200))"}}"#,
        ]
        var random = SeededRandom(seed: 11)
        var texts: [String] = []
        for _ in 0..<400 {
            let features = (0..<Int.random(in: 1...40, using: &random)).map { _ in
                variants[Int.random(in: 0..<variants.count, using: &random)]
            }
            let separator = Bool.random(using: &random) ? "," : " ,\n "
            let trailer = Bool.random(using: &random) ? "" : #","bbox":[{"a":1},{"b":2}]"#
            texts.append(#"{"type":"FeatureCollection","features":["# + features.joined(separator: separator) + "]" + trailer + "}")
        }
        // Broken after the halfway point: both scans give up.
        texts.append(#"{"type":"FeatureCollection","features":["# + Array(repeating: variants[0], count: 9).joined(separator: ",")
                     + #",{"type":"Feature"]}"#)
        var scanned = 0
        for text in texts {
            let bytes = Array(text.utf8)
            let whole = FeatureSpans.scan(bytes, splitAbove: .max)
            #expect(FeatureSpans.scan(bytes, splitAbove: 0) == whole, "\(text)")
            if whole != nil { scanned += 1 }
        }
        #expect(scanned == 400)
    }

    static func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spans-\(UUID().uuidString).geojson").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A file large enough to be read in several chunks at once.
    static func sightings(_ count: Int, breaking broken: Set<Int> = []) -> String {
        let features = (0..<count).map { i in
            let species = i % 3 == 0 ? "Grus japonensis" : "Anas \\\"quoted\\\" ]}"
            let count = broken.contains(i) ? "0" : "\(1 + i % 7)"
            return #"{"type":"Feature","id":"s\#(i)","geometry":{"type":"Point","coordinates":[\#(126 + Double(i % 1000) / 1000),\#(35 + Double(i / 1000) / 100)]},"properties":{"species":"\#(species)","count":\#(count),"observed_at":"2024-01-0\#(1 + i % 9)T08:00:00+09:00","note":{"a":[1,{"b":"}"}]}}}"#
        }
        return #"{"type":"FeatureCollection","name":"t","features":["# + features.joined(separator: ",\n") + "]}"
    }

    @Test func recordsAreThoseOfTheWholeParse() throws {
        let path = try Self.file(Self.sightings(10_000))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bytes = try LayerCatalog.readBytes(path)
        #expect(FeatureSpans.scan(bytes)?.count == 10_000, "the fast path is taken")
        let fast = try LayerCatalog.records(inFile: path, kind: .sightings, layer: "s")
        let whole = try LayerCatalog.readFeatures(path, bytes: bytes).enumerated().map { i, feature in
            try LayerRecord(json: feature, kind: .sightings, layer: "s", index: i)
        }
        #expect(fast.count == whole.count)
        #expect(fast.map(\.featureText) == whole.map(\.featureText))
        #expect(fast.map(\.coordinate) == whole.map(\.coordinate))
        #expect(try LayerCatalog.readFeatures(path) == LayerCatalog.readFeatures(path, bytes: bytes))
    }

    /// The first bad record of the file is the error, as when the file is read in order,
    /// although later chunks are read at the same time.
    @Test func theFirstBadRecordIsTheError() throws {
        for broken in [0, 4_095, 9_998] {
            // And one more at the end, in the last chunk, read at the same time.
            let path = try Self.file(Self.sightings(10_000, breaking: [broken, 9_999]))
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(throws: EngineError.self) { try LayerCatalog.records(inFile: path, kind: .sightings, layer: "s") }
            do {
                _ = try LayerCatalog.records(inFile: path, kind: .sightings, layer: "s")
            } catch {
                #expect(error.description.contains(#"(id "s\#(broken)")"#), "\(error.description)")
                #expect(error.field == "count", "\(error)")
            }
        }
    }

    /// A feature that is not JSON: the error of the whole parse, with its byte offset in
    /// the file.
    @Test func aFeatureThatIsNotJSONGetsTheWholeParsesError() throws {
        let text = Self.sightings(5_000).replacingOccurrences(of: #""id":"s4321","#, with: #""id":"s4321",,"#)
        let path = try Self.file(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected: String
        do {
            _ = try JSONValue.parse(Array(text.utf8), maxDepth: 64)
            Issue.record("the text should not parse")
            return
        } catch {
            expected = error.description
        }
        do {
            _ = try LayerCatalog.records(inFile: path, kind: .sightings, layer: "s")
            Issue.record("the file should not load")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    /// Each chunk that ends without an error is reported once, as it ends, so that a
    /// caller may let go of what the chunk read; a chunk that fails is not.
    @Test func concurrentMapReportsEachChunkThatEnds() throws {
        let done = Mutex<[Range<Int>]>([])
        let values = try FeatureSpans.concurrentMap(100_000, chunkDone: { range in done.withLock { $0.append(range) } }) {
            i throws(EngineError) in i
        }
        #expect(values.count == 100_000)
        let ranges = done.withLock { $0 }.sorted { $0.lowerBound < $1.lowerBound }
        #expect(ranges.count > 1)
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == 100_000)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })

        done.withLock { $0 = [] }
        #expect(throws: EngineError.self) {
            _ = try FeatureSpans.concurrentMap(100_000, chunkDone: { range in done.withLock { $0.append(range) } }) {
                i throws(EngineError) in
                if i == 99_999 { throw .invalidRequest(reason: "no") }
                return i
            }
        }
        #expect(!done.withLock { $0 }.contains { $0.contains(99_999) })
        #expect(done.withLock { $0 }.contains { $0.contains(0) })
    }

    /// The pages of a run of a file's bytes given back read as zeros; the bytes beside
    /// the run, on pages it shares with them, keep their values.
    @Test func releasedPagesReadAsZerosAndTheBytesBesideThemStay() {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var bytes = [UInt8](repeating: 0xAB, count: 6 * page)
        let range = 100 ..< 4 * page + 50
        let base = bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        bytes.withUnsafeBufferPointer { LayerCatalog.releasePages(at: UInt(bitPattern: $0.baseAddress), range) }
        var released = 0
        var wrong: [Int] = []
        for i in bytes.indices {
            let pageStart = (base + UInt(i)) / UInt(page) * UInt(page)
            let inside = pageStart >= base + UInt(range.lowerBound) && pageStart + UInt(page) <= base + UInt(range.upperBound)
            if inside { released += 1 }
            if bytes[i] != (inside ? 0 : 0xAB) { wrong.append(i) }
        }
        #expect(released >= 3 * page)
        #expect(wrong.isEmpty, "\(wrong.count) bytes, the first \(wrong.first ?? -1)")
        bytes[0] = 1
        #expect(bytes.count == 6 * page)
    }

    @Test func concurrentMapKeepsTheOrder() throws {
        let values = try FeatureSpans.concurrentMap(100_000) { i throws(EngineError) in i * 3 }
        #expect(values == (0..<100_000).map { $0 * 3 })
        #expect(try FeatureSpans.concurrentMap(3) { i throws(EngineError) in i } == [0, 1, 2])
        #expect(try FeatureSpans.concurrentMap(0) { i throws(EngineError) in i }.isEmpty)
    }
}
