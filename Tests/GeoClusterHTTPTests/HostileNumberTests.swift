import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterTestSupport
import Testing
@testable import GeoClusterHTTP

/// Numbers at and past every boundary, in every numeric field of every operation, over
/// both transports, against the real executable: each request gets exactly one answer
/// (an error that names the field, or a value), and the process lives on. A number that
/// trapped (`abs(Int.min)`, `Int(1e300)`, an overflowing `+`) would end the process and
/// fail the count.
@Suite(.serialized)
struct HostileNumberTests {
    /// Raw JSON texts put where a number belongs. Some are not JSON at all (`NaN`), some
    /// are JSON numbers no integer holds, some are strings and other types.
    static let hostile = [
        "-9223372036854775808", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
        "18446744073709551616", "9007199254740993", "9007199254740992", "-9007199254740993",
        "-0", "0", "1e308", "-1e308", "1e309", "-1e309", "4.9e-324", "0.5", "-1", "1e-7", "2147483648",
        "NaN", "Infinity", "-Infinity", "\"NaN\"", "\"-9223372036854775808\"", "[]", "{}", "null", "true",
    ]

    /// Optional numeric fields added to the first request of each operation, where the
    /// golden requests do not already carry them.
    static let optionalNumericFields = [
        "zoom", "cluster_id", "limit", "offset", "k", "radius_m", "lon", "lat", "z", "x", "y",
        "remaining_minutes", "detour_factor", "boarding_buffer_minutes", "min_minutes", "tight_minutes", "pace",
        "months", "ids",
    ]

    static var packageDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static var dataDirectory: String { packageDirectory.appendingPathComponent("Data").path }

    /// The request lines of every golden file (every operation and error class of the
    /// protocol), parsed.
    static func goldenRequests() throws -> [JSONObject] {
        let directory = packageDirectory.appendingPathComponent("Tests/GeoClusterEngineTests/Golden")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".request.jsonl") }.sorted()
        var requests: [JSONObject] = []
        for file in files {
            // The framing file holds lines that are not UTF-8 or not JSON: those are skipped.
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
            for line in bytes.split(separator: 0x0A) {
                if case let .object(object)? = try? JSONValue.parse(Array(line)) { requests.append(object) }
            }
        }
        return requests
    }

    /// Every golden request once for each value in it but its `op` (at any depth: bbox
    /// corners, coordinate pairs, record fields, ids, strings where an id may be a
    /// number) replaced by each hostile text, and the first request of each operation
    /// once for each optional numeric field set to each hostile text (in an array for
    /// the fields that take one).
    static func hostileLines() throws -> [String] {
        let marker = "\u{1}hostile\u{1}"
        let markerJSON = JSONValue.string(marker).jsonString
        var lines: [String] = []
        func emit(_ value: JSONValue) {
            let text = value.jsonString
            for token in hostile { lines.append(text.replacingOccurrences(of: markerJSON, with: token)) }
        }
        var seenOps: Set<String> = []
        for request in try goldenRequests() {
            for path in scalarPaths(in: .object(request)) where path != [.key("op")] {
                emit(replacing(path, in: .object(request), with: .string(marker)))
            }
            guard let op = request["op"]?.stringValue, seenOps.insert(op).inserted else { continue }
            for field in optionalNumericFields where request[field] == nil {
                var mutated = request
                mutated[field] = ["months", "ids"].contains(field) ? [.string(marker)] : .string(marker)
                emit(.object(mutated))
            }
        }
        return lines
    }

    enum PathStep: Hashable { case key(String), index(Int) }

    /// The paths to every number, string, boolean and null in `value`.
    static func scalarPaths(in value: JSONValue, prefix: [PathStep] = []) -> [[PathStep]] {
        switch value {
        case let .array(items):
            return items.enumerated().flatMap { scalarPaths(in: $1, prefix: prefix + [.index($0)]) }
        case let .object(object):
            return object.keys.flatMap { key in scalarPaths(in: object[key] ?? .null, prefix: prefix + [.key(key)]) }
        default: return [prefix]
        }
    }

    static func replacing(_ path: [PathStep], in value: JSONValue, with replacement: JSONValue) -> JSONValue {
        guard let step = path.first else { return replacement }
        let rest = Array(path.dropFirst())
        switch (step, value) {
        case let (.key(key), .object(object)):
            var copy = object
            copy[key] = replacing(rest, in: object[key] ?? .null, with: replacement)
            return .object(copy)
        case let (.index(index), .array(items)):
            var copy = items
            copy[index] = replacing(rest, in: items[index], with: replacement)
            return .array(copy)
        default:
            return value
        }
    }

    /// The three radius-layer points the golden requests call `pts`, as a layer file.
    static func pointsLayerFile() throws -> URL {
        let file = try TemporaryDirectory.make("pts").appendingPathComponent("pts.geojson")
        let features = [("seoul", 126.9707, 37.5547, "Seoul Station"), ("seoullo", 126.9723, 37.5559, "Seoullo 7017"),
                        ("busan", 129.0403, 35.1151, "Busan Station")].map { id, lon, lat, name in
            GeoJSON.pointFeature(coordinate: Coordinate(longitude: lon, latitude: lat),
                                 properties: ["name": .string(name)], id: .string(id))
        }
        try GeoJSON.featureCollection(features).jsonString.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The sample layers and `pts`, with answers of at most 1,000 features, as the golden
    /// files are answered: a hostile bbox corner or zoom may ask for the whole world.
    static func layerArguments(_ pointsLayer: URL) -> [String] {
        ["--data", dataDirectory, "--layer-file", "pts=\(pointsLayer.path)", "--max-features-per-answer", "1000"]
    }

    /// Each answer line is an object with `ok`, and a failed one has an error code.
    static func expectWellFormed(_ answers: [Substring], count: Int, transport: String) {
        #expect(answers.count == count, "\(transport): \(count) requests, \(answers.count) answers")
        var malformed = 0
        for answer in answers {
            guard let json = try? JSONValue.parse(String(answer)), let ok = json["ok"]?.boolValue,
                  ok || json["error"]?["code"]?.stringValue != nil else {
                malformed += 1
                if malformed <= 3 { Issue.record("\(transport): malformed answer \(answer.prefix(200))") }
                continue
            }
        }
    }

    @Test func everyNumericFieldOverJSONLines() throws {
        let lines = try Self.hostileLines()
        #expect(lines.count > 2_000)
        let layer = try Self.pointsLayerFile()
        defer { try? FileManager.default.removeItem(at: layer) }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: input) }

        let executable = try #require(GeoClusterExecutable.url, "the geo-cluster executable is built next to the tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["query"] + Self.layerArguments(layer)
        process.standardInput = try FileHandle(forReadingFrom: input)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let answers = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                "geo-cluster query ended with \(process.terminationReason == .exit ? "status" : "signal") \(process.terminationStatus)")
        Self.expectWellFormed(String(decoding: answers, as: UTF8.self).split(separator: "\n"), count: lines.count,
                              transport: "geo-cluster query")
    }

    /// Valid values for every route parameter, so that each route is reached with one
    /// hostile number at a time.
    static let validQuery: [String: String] = [
        "clusters": "bbox=124,33,132,39&zoom=6",
        "leaves": "limit=10&offset=0",
        "project": "from=EPSG:4326&to=EPSG:5179&coordinates=126.97,37.55",
        "nearby": "lon=126.97&lat=37.55&radius_m=1000",
        "reachable": "layer=places&station=seoul&remaining_minutes=90",
    ]

    /// How many numbers each numeric route parameter holds (`bbox` four, a `coordinates`
    /// pair two, a list such as `months` one per item); every other parameter is text.
    static let numbersIn: [String: Int] = [
        "cluster_id": 1, "z": 1, "x": 1, "y": 1, "bbox": 4, "zoom": 1, "limit": 1, "offset": 1, "months": 1,
        "coordinates": 2, "lon": 1, "lat": 1, "radius_m": 1, "k": 1, "remaining_minutes": 1, "detour_factor": 1,
        "boarding_buffer_minutes": 1, "min_minutes": 1, "tight_minutes": 1,
    ]

    /// The route parameters that are text.
    static let textParameters: Set<String> = [
        "layer", "species", "from", "to", "category", "line", "observer", "sort", "stations_layer", "station",
        "departure", "now", "pace", "travel", "network", "include_unreachable", "lang", "dwell_minutes", "q", "top_by", "include", "place",
    ]

    /// A parameter added to a route is listed here as numeric or text, so that the hostile
    /// numbers reach every numeric one.
    @Test func everyRouteParameterIsClassified() {
        for endpoint in Endpoint.all + [Endpoint.vectorTile] {
            for name in endpoint.pathParameters + endpoint.queryParameters {
                #expect((Self.numbersIn[name] != nil) != Self.textParameters.contains(name), "\(endpoint.path) \(name)")
            }
        }
    }

    static let validPath: [String: String] = ["layer": "sightings", "cluster_id": "1", "z": "6", "x": "54", "y": "24"]

    /// Each REST route with each numeric parameter (each number of a list) set to each
    /// hostile text, and each write route with each hostile id.
    static func hostileTargets() -> [(method: String, target: String, body: String?)] {
        var targets: [(String, String, String?)] = []
        let hostileTexts = hostile.map { $0.replacingOccurrences(of: "\"", with: "") }
        for endpoint in Endpoint.all + [Endpoint.vectorTile] {
            let base = validQuery[endpoint.op].map { $0.split(separator: "&").map(String.init) } ?? []
            func target(path: [String: String], query: [String]) -> String {
                var text = endpoint.path.description
                for (name, value) in Self.validPath.merging(path, uniquingKeysWith: { $1 }) {
                    text = text.replacingOccurrences(of: "{\(name)}", with: value)
                }
                return query.isEmpty ? text : text + "?" + query.joined(separator: "&")
            }
            for name in endpoint.pathParameters where Self.numbersIn[name] != nil {
                for token in hostileTexts {
                    targets.append(("GET", target(path: [name: RawHTTP.encoded(token)], query: base), nil))
                }
            }
            for name in endpoint.queryParameters {
                guard let count = Self.numbersIn[name] else { continue }
                let parameter = (name: name, count: count)
                let valid = base.first { $0.hasPrefix("\(parameter.name)=") }
                    .map { String($0.dropFirst(parameter.name.count + 1)).split(separator: ",").map(String.init) }
                    ?? Array(repeating: "1", count: count)
                let others = base.filter { !$0.hasPrefix("\(parameter.name)=") }
                for position in 0..<count {
                    for token in hostileTexts {
                        var values = valid
                        values[position] = RawHTTP.encoded(token)
                        targets.append(("GET", target(path: [:], query: others + ["\(parameter.name)=\(values.joined(separator: ","))"]),
                                        nil))
                    }
                }
            }
        }
        for token in hostileTexts {
            let path = "/v1/layers/places/points/\(RawHTTP.encoded(token))"
            targets.append(("DELETE", path, nil))
            targets.append(("PUT", path, #"{"lon":127.03,"lat":37.5,"name":"Cafe","category":"cafe"}"#))
        }
        for token in hostile {
            targets.append(("POST", "/v1/layers/places/points",
                            #"{"id":\#(token),"lon":127.03,"lat":37.5,"name":"Cafe","category":"cafe"}"#))
            targets.append(("DELETE", "/v1/layers/places/points", #"{"ids":[\#(token)]}"#))
        }
        return targets
    }

    @Test func everyNumericFieldOverHTTP() throws {
        let layer = try Self.pointsLayerFile()
        defer { try? FileManager.default.removeItem(at: layer) }
        let server = try RawHTTP.Server(Self.layerArguments(layer) + ["--max-batch-answer-bytes", "0"])

        // The JSON-lines requests, as one POST /v1/query body.
        let lines = try Self.hostileLines()
        let batch = try RawHTTP.exchange(port: server.port, RawHTTP.request(
            "POST", "/v1/query", body: lines.joined(separator: "\n"), headers: ["Content-Type: application/x-ndjson"]))
        #expect(batch.status == 200)
        Self.expectWellFormed(batch.text.split(separator: "\n"), count: lines.count, transport: "POST /v1/query")

        // The REST and write routes: each answers at once, never with a 5xx, and an
        // error answer is our JSON error body.
        let targets = Self.hostileTargets()
        #expect(targets.count > 500)
        var failures: [String] = []
        for (method, target, body) in targets {
            let answer = try RawHTTP.exchange(port: server.port, RawHTTP.request(
                method, target, body: body, headers: body == nil ? [] : ["Content-Type: application/json"]))
            let errorCode = (try? JSONValue.parse(answer.text))?["error"]?["code"]?.stringValue
            if answer.status >= 500 || (answer.status >= 400 && errorCode == nil) {
                failures.append("\(method) \(target) -> \(answer.status) \(answer.text.prefix(120))")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) bad answers, first: \(failures.prefix(5))")
        #expect(server.process.isRunning)
        #expect(try RawHTTP.exchange(port: server.port, RawHTTP.request("GET", "/healthz")).status == 200)
    }
}
