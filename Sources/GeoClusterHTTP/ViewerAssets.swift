import Foundation
import GeoCluster
import GeoClusterEngine
import GeoReachability
import GeoClusterWire
import Hummingbird

/// The files the viewer page loads from this server under `/viewer/`: the map library
/// (Leaflet, read from the directory Debian's `libjs-leaflet` installs), the base map
/// (`basemap.geojson` of the data directory) and the streets of each walking network
/// (`streets-NAME.geojson`: its edges as GeoJSON lines). They are read once at start-up and sent with an ETag,
/// gzip-compressed once when a client accepts it; none of them is fetched from elsewhere.
public struct ViewerAssets: Sendable {
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public static let defaultLeafletDirectory = "/usr/share/javascript/leaflet"
    /// The base map's file name in a data directory.
    public static let basemapName = "basemap.geojson"

    struct Asset: Sendable {
        let answer: PreparedAnswer
        let mediaType: ResponseMediaType
    }

    private(set) var files: [String: Asset] = [:]
    /// The page `GET /` serves (``ViewerPage``), saying what is missing.
    private(set) var page: [UInt8] = []
    /// Why the map library is missing, for the page to say; `nil` when it was read.
    public private(set) var leafletProblem: String?

    /// No files: the page says that the map library is missing.
    public init() {
        leafletProblem = "the map library is not loaded"
        page = Array(ViewerPage.html(leafletProblem: leafletProblem).utf8)
    }

    /// Reads Leaflet from `leafletDirectory` and the base map from `dataDirectory`, and
    /// draws each network's streets. A missing file is left out (the page then says what
    /// is missing); a file that exists but cannot be read is an error.
    public init(leafletDirectory: String?, dataDirectory: String?, networks: [String: WalkingNetwork]) throws {
        if let leafletDirectory {
            let script = leafletDirectory + "/leaflet.js", style = leafletDirectory + "/leaflet.css"
            if FileManager.default.fileExists(atPath: script) && FileManager.default.fileExists(atPath: style) {
                files["leaflet.js"] = Asset(answer: PreparedAnswer(try Self.read(script)), mediaType: .javaScript)
                files["leaflet.css"] = Asset(answer: PreparedAnswer(try Self.read(style)), mediaType: .css)
            } else {
                leafletProblem = "Leaflet is not installed in \(leafletDirectory) (Debian: apt-get install libjs-leaflet)"
            }
        } else {
            leafletProblem = "the map library is not loaded"
        }
        if let dataDirectory {
            let basemap = dataDirectory + "/" + Self.basemapName
            if FileManager.default.fileExists(atPath: basemap) {
                files[Self.basemapName] = Asset(answer: PreparedAnswer(try Self.read(basemap)), mediaType: .geoJSON)
            }
        }
        for (name, network) in networks {
            files["streets-\(name).geojson"] = Asset(answer: PreparedAnswer(Self.streets(of: network)),
                                                     mediaType: .geoJSON)
        }
        page = Array(ViewerPage.html(leafletProblem: leafletProblem).utf8)
    }

    /// Whether the base map was read.
    var hasBasemap: Bool { files[Self.basemapName] != nil }

    private static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UnreadableFile(path: path)
        }
        return Array(data)
    }

    struct UnreadableFile: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) exists but cannot be read" }
    }

    /// A network's edges as one GeoJSON Feature with a MultiLineString, each edge a
    /// two-point line (coordinates to 1e-6 degrees, about 0.1 m).
    static func streets(of network: WalkingNetwork) -> [UInt8] {
        var text = #"{"type":"Feature","properties":{"kind":"street"},"geometry":{"type":"MultiLineString","coordinates":["#
        var first = true
        func point(_ node: Int) -> String {
            let c = network.nodes[node]
            return "[" + String(format: "%.6f", c.longitude) + "," + String(format: "%.6f", c.latitude) + "]"
        }
        for node in 0..<network.nodeCount {
            for halfEdge in Int(network.edgeStart[node])..<Int(network.edgeStart[node + 1]) {
                let target = Int(network.edgeTarget[halfEdge])
                guard node < target else { continue }  // each edge once, loops not at all
                if !first { text += "," }
                first = false
                text += "[" + point(node) + "," + point(target) + "]"
            }
        }
        text += "]}}"
        return Array(text.utf8)
    }

    /// The response for `/viewer/{file}`, or `nil` when there is no such file.
    func response(file: String, policy: ResponsePolicy, request: Request) -> Response? {
        guard let asset = files[file] else { return nil }
        return policy.response(asset.answer, mediaType: asset.mediaType, request: request)
    }
}
