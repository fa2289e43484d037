import Foundation
import GeoCluster
import GeoClusterWire
import GeoProjection
import GeoReachability

/// A walking network built from an OpenStreetMap extract, in the walking network file
/// format (Data/README.md), as `geo-cluster network import` writes it.
///
/// The extract is read by osmium (Debian's `osmium-tool`, libosmium's command-line tool):
/// `osmium tags-filter` keeps the ways that may be walked and the nodes they use and
/// writes them as OPL, osmium's line-per-object text format, which this type reads. OPL
/// keeps every way's node ids, so ways that share a node meet in the graph exactly as
/// they do in OSM; a GeoJSON export (`osmium export`) gives coordinates only, and joins
/// would have to be guessed from equal positions. osmium reads .osm.pbf, .osm, .osm.bz2
/// and .opl, and reports a damaged or truncated file instead of passing part of it on.
///
/// The walkability rules are those of ``isWalkable(_:)``. Each pair of consecutive nodes
/// of a walkable way is an undirected edge measured as the WGS84 geodesic between its ends
/// (Karney's algorithm, through PROJ), rounded up to the centimetre so that no edge is
/// shorter than the straight line; loops are dropped and, of parallel edges, the shortest
/// kept. The largest connected component is the network.
public struct OSMWalkingNetwork: Sendable {
    /// Nodes as `(OSM id, lon, lat)`, by id.
    public private(set) var nodes: [(id: Int64, longitude: Double, latitude: Double)] = []
    /// Edges as positions in ``nodes``, `from < to`, by `from` then `to`.
    public private(set) var edges: [(from: Int, to: Int, lengthMeters: Double)] = []
    /// What the import read and left out, for its report.
    public private(set) var report = Report()

    public struct Report: Sendable, Equatable {
        public var nodesRead = 0
        public var waysRead = 0
        public var walkableWays = 0
        /// Segments of walkable ways whose node is not in the extract (a way cut by the
        /// extract's boundary).
        public var segmentsWithMissingNodes = 0
        public var components = 0
        /// Nodes of the components other than the largest, left out.
        public var nodesOutsideLargestComponent = 0
        public var totalLengthMeters = 0.0
    }

    // MARK: Walkability

    /// `highway` values people may walk along (when no other tag says otherwise). Cycleways
    /// are among them: many are shared paths (in Korea
    /// along the Han river), and a bicycle-only one says `foot=no`. Trunk roads too: in Korea, as in much of the world, their sidewalks are rarely
    /// mapped as ways of their own, and pedestrians may use them unless `foot=no` or
    /// `motorroad=yes` (a road for motor vehicles only, 자동차전용도로) says so.
    static let walkableHighways: Set<String> = [
        "footway", "pedestrian", "path", "steps", "living_street", "residential", "service", "unclassified", "road",
        "tertiary", "tertiary_link", "secondary", "secondary_link", "primary", "primary_link", "trunk", "trunk_link",
        "track", "corridor", "elevator", "bridleway", "platform", "cycleway",
    ]

    /// `highway` values built for people on foot, which stay walkable in a tunnel.
    static let pedestrianHighways: Set<String> = ["footway", "pedestrian", "path", "steps", "corridor", "elevator", "platform"]

    /// `foot` values that allow walking whatever `access` says.
    static let footAllowed: Set<String> = ["yes", "designated", "permissive"]

    /// Whether a way with these tags may be walked:
    /// - a `highway` of ``walkableHighways``, or a railway or public transport platform (`railway=platform`, `public_transport=platform`);
    ///   never a motorway, a road under construction or only proposed, or any other value;
    /// - not `foot=no` or `foot=use_sidepath`, not `access=no` or `private` unless `foot`
    ///   allows walking, not `motorroad=yes`;
    /// - in a tunnel (`tunnel=yes`, `building_passage` excepted) only when built for people
    ///   on foot: a road tunnel has no pavement, and a place snapped onto the tunnel under
    ///   its street would get the tunnel's walk;
    /// - an area (`area=yes`) only when it is a pedestrian street, footway or platform: its
    ///   outline is walked, which joins every path that touches it (crossing it straight
    ///   would be shorter, so this errs on the long side).
    public static func isWalkable(_ tags: [String: String]) -> Bool {
        let foot = tags["foot"]
        let highway: String
        if let value = tags["highway"] {
            highway = value
        } else if tags["railway"] == "platform" || tags["public_transport"] == "platform" {
            highway = "platform"
        } else {
            return false
        }
        guard walkableHighways.contains(highway) else { return false }
        if foot == "no" || foot == "use_sidepath" { return false }
        if let access = tags["access"], access == "no" || access == "private",
           !(foot.map(footAllowed.contains) ?? false) { return false }
        if tags["motorroad"] == "yes" { return false }
        if let tunnel = tags["tunnel"], tunnel != "no", tunnel != "building_passage",
           !pedestrianHighways.contains(highway) { return false }
        if tags["area"] == "yes", !["pedestrian", "footway", "platform"].contains(highway) { return false }
        return true
    }

    // MARK: Reading OPL

    private var positions: [Int64: (Double, Double)] = [:]
    private var segments: [Int64: [Int64: Double]] = [:]

    public init() {}

    /// Reads one OPL line (a node, a way; relations and anything else are skipped).
    /// Throws for a line that is not OPL.
    public mutating func read(line: Substring) throws(EngineError) {
        guard let kind = line.first else { return }
        switch kind {
        case "n":
            var id: Int64?, x: Double?, y: Double?
            for field in line.split(separator: " ") {
                switch field.first {
                case "n": id = Int64(field.dropFirst())
                case "x": x = Double(field.dropFirst())
                case "y": y = Double(field.dropFirst())
                default: break
                }
            }
            guard let id else { throw Self.malformed(line) }
            report.nodesRead += 1
            // A node without a position (deleted, or outside a clipped extract) has empty x and y.
            if let x, let y, (-180...180).contains(x), (-90...90).contains(y) { positions[id] = (x, y) }
        case "w":
            var tagsField: Substring = "", refsField: Substring = ""
            for field in line.split(separator: " ") {
                switch field.first {
                case "T": tagsField = field.dropFirst()
                case "N": refsField = field.dropFirst()
                default: break
                }
            }
            report.waysRead += 1
            guard Self.isWalkable(Self.tags(tagsField)) else { return }
            report.walkableWays += 1
            var previous: Int64?
            for ref in refsField.split(separator: ",") {
                guard ref.first == "n", let id = Int64(ref.dropFirst()) else { throw Self.malformed(line) }
                defer { previous = id }
                guard let previous, previous != id else { continue }
                guard let a = positions[previous], let b = positions[id] else {
                    report.segmentsWithMissingNodes += 1
                    continue
                }
                let length = Self.ceilCentimetre(Geodesic.wgs84.distanceMeters(
                    from: GeographicPoint(longitudeDegrees: a.0, latitudeDegrees: a.1),
                    to: GeographicPoint(longitudeDegrees: b.0, latitudeDegrees: b.1)))
                let (low, high) = previous < id ? (previous, id) : (id, previous)
                segments[low, default: [:]][high] = min(segments[low]?[high] ?? .infinity, length)
            }
        case "r", "c":
            return
        default:
            throw Self.malformed(line)
        }
    }

    /// The tags of an OPL `T` field: `key=value` pairs separated by commas, with OPL's
    /// `%hex%` escapes decoded (a comma or an equals sign inside a value is escaped).
    static func tags(_ field: Substring) -> [String: String] {
        var tags: [String: String] = [:]
        for pair in field.split(separator: ",") {
            guard let equals = pair.firstIndex(of: "=") else { continue }
            tags[unescape(pair[..<equals])] = unescape(pair[pair.index(after: equals)...])
        }
        return tags
    }

    private static func unescape(_ text: Substring) -> String {
        guard text.contains("%") else { return String(text) }
        var result = ""
        var rest = text[...]
        while let start = rest.firstIndex(of: "%") {
            result += rest[..<start]
            let after = rest.index(after: start)
            guard let end = rest[after...].firstIndex(of: "%"), let code = UInt32(rest[after..<end], radix: 16),
                  let scalar = Unicode.Scalar(code) else {
                result += rest[start...]
                return result
            }
            result.unicodeScalars.append(scalar)
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    private static func malformed(_ line: Substring) -> EngineError {
        .invalidLayerSource(path: "OPL", reason: "not an OPL line: \"\(line.prefix(60))\"")
    }

    static func ceilCentimetre(_ meters: Double) -> Double { (meters * 100).rounded(.up) / 100 }

    /// Builds the graph from what was read: the largest connected component, nodes by id.
    public mutating func finish() {
        var adjacency: [Int64: [Int64]] = [:]
        for (low, ends) in segments {
            for high in ends.keys {
                adjacency[low, default: []].append(high)
                adjacency[high, default: []].append(low)
            }
        }
        var component: [Int64: Int] = [:]
        var sizes: [Int] = []
        for start in adjacency.keys.sorted() where component[start] == nil {
            let label = sizes.count
            var stack = [start], size = 0
            component[start] = label
            while let node = stack.popLast() {
                size += 1
                for next in adjacency[node] ?? [] where component[next] == nil {
                    component[next] = label
                    stack.append(next)
                }
            }
            sizes.append(size)
        }
        report.components = sizes.count
        guard let largest = sizes.indices.max(by: { sizes[$0] < sizes[$1] }) else { return }
        let kept = component.filter { $0.value == largest }.keys.sorted()
        report.nodesOutsideLargestComponent = component.count - kept.count
        var position: [Int64: Int] = [:]
        nodes = kept.enumerated().map { i, id in
            position[id] = i
            let (lon, lat) = positions[id]!
            return (id, lon, lat)
        }
        edges = []
        for (low, ends) in segments {
            guard let from = position[low] else { continue }
            for (high, length) in ends {
                guard let to = position[high] else { continue }
                edges.append(from < to ? (from, to, length) : (to, from, length))
            }
        }
        edges.sort { ($0.from, $0.to) < ($1.from, $1.to) }
        report.totalLengthMeters = edges.reduce(0) { $0 + $1.lengthMeters }
        positions = [:]
        segments = [:]
    }

    // MARK: Writing

    /// The network as a walking network document (``WalkingNetwork/init(json:)`` reads
    /// it), one node or edge per line.
    public func document(description: String, source: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 * (nodes.count + edges.count) + 1_024)
        func member(_ name: String, _ value: JSONValue) {
            JSONValue.encodeString(name, into: &out)
            out.append(UInt8(ascii: ":"))
            value.encode(into: &out)
            out += ",\n".utf8
        }
        out += "{\n".utf8
        member("format", .string(WalkingNetwork.jsonFormatName))
        member("version", .number(Double(WalkingNetwork.jsonFormatVersion)))
        member("description", .string(description))
        member("source", .string(source))
        member("license", "ODbL-1.0")
        member("attribution", "© OpenStreetMap contributors")
        member("node_count", .number(Double(nodes.count)))
        member("edge_count", .number(Double(edges.count)))
        member("total_length_m", .number((report.totalLengthMeters * 100).rounded() / 100))
        member("node_fields", ["id", "lon", "lat"])
        member("edge_fields", ["from", "to", "length_m"])
        out += "\"nodes\":[\n".utf8
        for (i, node) in nodes.enumerated() {
            out += "[\(node.id),".utf8
            JSONValue.encodeNumber(node.longitude, into: &out)
            out.append(UInt8(ascii: ","))
            JSONValue.encodeNumber(node.latitude, into: &out)
            out += (i + 1 < nodes.count ? "],\n" : "]\n").utf8
        }
        out += "],\n\"edges\":[\n".utf8
        for (i, edge) in edges.enumerated() {
            out += "[\(edge.from),\(edge.to),".utf8
            JSONValue.encodeNumber(edge.lengthMeters, into: &out)
            out += (i + 1 < edges.count ? "],\n" : "]\n").utf8
        }
        out += "]\n}\n".utf8
        return out
    }
}

extension OSMWalkingNetwork {
    /// The osmium arguments that keep the ways that may be walked (and the nodes they use),
    /// written as OPL on stdout. The filter is broad; ``isWalkable(_:)`` decides.
    static func osmiumArguments(input: String) -> [String] {
        ["tags-filter", "--no-progress", input, "w/highway", "w/railway=platform", "w/public_transport=platform",
         "-f", "opl", "-o", "-"]
    }

    /// Imports `input` (any file osmium reads) by running `osmium` (found on `PATH`
    /// unless `osmium` is a path); `progress` is called every million objects read.
    public static func importing(_ input: String, osmium: String = "osmium",
                                 progress: (Report) -> Void = { _ in }) throws(EngineError) -> OSMWalkingNetwork {
        guard FileManager.default.isReadableFile(atPath: input) else {
            throw .invalidLayerSource(path: input, reason: "cannot be read")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [osmium] + osmiumArguments(input: input)
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .invalidLayerSource(path: input, reason: "osmium could not be started: \(error.localizedDescription)")
        }
        // stderr is drained on a thread of its own so that a chatty osmium never blocks on it.
        let errorText = ErrorCollector()
        let drain = Thread { errorText.collect(errors.fileHandleForReading) }
        drain.start()

        var network = OSMWalkingNetwork()
        var pending: [UInt8] = []
        var failure: EngineError?
        var objects = 0
        let reader = output.fileHandleForReading
        while failure == nil {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            pending += chunk
            guard let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n")) else { continue }
            for line in pending[..<lastNewline].split(separator: UInt8(ascii: "\n")) {
                do {
                    try network.read(line: Substring(decoding: line, as: UTF8.self))
                } catch {
                    failure = error
                    break
                }
                objects += 1
                if objects % 1_000_000 == 0 { progress(network.report) }
            }
            pending.removeSubrange(...lastNewline)
        }
        if failure != nil { process.terminate() }
        process.waitUntilExit()
        errorText.wait()
        if let failure { throw failure }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let message = errorText.text.split(separator: "\n").last.map(String.init) ?? "exit status \(process.terminationStatus)"
            if process.terminationStatus == 127 || message.contains("No such file") && message.contains(osmium) {
                throw .invalidLayerSource(path: input, reason: "osmium is not installed (apt-get install osmium-tool)")
            }
            throw .invalidLayerSource(path: input, reason: "osmium could not read it: \(message)")
        }
        if !pending.isEmpty {
            do { try network.read(line: Substring(decoding: pending, as: UTF8.self)) } catch { throw error }
        }
        network.finish()
        guard !network.nodes.isEmpty else {
            throw .invalidLayerSource(path: input, reason: "has no walkable way")
        }
        return network
    }
}

/// The text a child process writes to stderr, read to its end on another thread.
private final class ErrorCollector: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var bytes = Data()

    func collect(_ handle: FileHandle) {
        bytes = handle.readDataToEndOfFile()
        done.signal()
    }

    func wait() { done.wait() }

    /// Read only after ``wait()``.
    var text: String { String(decoding: bytes, as: UTF8.self) }
}
