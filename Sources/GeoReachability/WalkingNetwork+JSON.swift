import GeoCluster
import GeoClusterWire

// MARK: - Reading the network file format

extension WalkingNetwork {
    /// The `format` member of a walking network document.
    public static let jsonFormatName = "geo-cluster-walking-network"
    /// The document version this reader understands.
    public static let jsonFormatVersion = 1

    /// Builds a network from the bytes of a walking network document (Data/README.md
    /// describes the format; Data/helsinki_walk.json is one). The caller reads the file:
    /// the core does no I/O.
    ///
    /// Throws ``GeoClusterError/invalidWalkingNetwork(reason:)`` when the bytes are not JSON
    /// or the document not in the format, and whatever ``init(nodes:edges:)`` throws for
    /// the graph it describes.
    public init(json bytes: [UInt8]) throws(GeoClusterError) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw .invalidWalkingNetwork(reason: "not JSON: \(error.description)")
        }
        try self.init(json: document)
    }

    /// Builds a network from a parsed walking network document:
    ///
    /// ```
    /// {"format": "geo-cluster-walking-network", "version": 1,
    ///  "nodes": [[id, lon, lat], ...],
    ///  "edges": [[from, to, length_m], ...], ...}
    /// ```
    ///
    /// `id` is the source's node id (an OSM node id), kept for tracing and not read here;
    /// `lon` and `lat` are WGS84 degrees; `from` and `to` are 0-based positions in `nodes`;
    /// `length_m` is the length of the undirected edge in metres. Other members (source,
    /// licence, counts) are documentation.
    public init(json document: JSONValue) throws(GeoClusterError) {
        guard document["format"]?.stringValue == Self.jsonFormatName else {
            throw .invalidWalkingNetwork(reason: "\"format\" must be \"\(Self.jsonFormatName)\"")
        }
        guard document["version"]?.intValue == Self.jsonFormatVersion else {
            throw .invalidWalkingNetwork(reason: "\"version\" must be \(Self.jsonFormatVersion)")
        }
        guard let nodeRows = document["nodes"]?.arrayValue else {
            throw .invalidWalkingNetwork(reason: "\"nodes\" must be an array")
        }
        guard let edgeRows = document["edges"]?.arrayValue else {
            throw .invalidWalkingNetwork(reason: "\"edges\" must be an array")
        }
        var nodes: [Coordinate] = []
        nodes.reserveCapacity(nodeRows.count)
        for (i, row) in nodeRows.enumerated() {
            guard let fields = row.arrayValue, fields.count == 3,
                  let longitude = fields[1].doubleValue, let latitude = fields[2].doubleValue
            else { throw .invalidWalkingNetwork(reason: "nodes[\(i)] must be [id, lon, lat] with numeric lon and lat") }
            nodes.append(Coordinate(longitude: longitude, latitude: latitude))
        }
        var edges: [Edge] = []
        edges.reserveCapacity(edgeRows.count)
        for (i, row) in edgeRows.enumerated() {
            guard let fields = row.arrayValue, fields.count == 3,
                  let from = fields[0].intValue, let to = fields[1].intValue,
                  let lengthMeters = fields[2].doubleValue
            else { throw .invalidWalkingNetwork(reason: "edges[\(i)] must be [from, to, length_m] with integer ends") }
            edges.append(Edge(from: from, to: to, lengthMeters: lengthMeters))
        }
        try self.init(nodes: nodes, edges: edges)
    }
}
