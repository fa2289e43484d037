import GeoCluster
import GeoClusterWire
import GeoProjection

extension Request {
    /// Most coordinate pairs in one `project` request. 10,000 pairs take PROJ a few
    /// milliseconds and fit a request line of about 300 KB, well inside the 1 MiB line limit.
    public static let maxProjectCoordinates = 10_000

    /// Reads the fields of `project`: `from` and `to` (CRSs as `CRS` accepts them) and
    /// `coordinates`, an array of 1 to ``maxProjectCoordinates`` `[x, y]` pairs. A single
    /// point is a one-pair array; there is no other shape.
    static func project(reading fields: inout FieldReader) throws(EngineError) -> Request {
        .project(from: try fields.crs("from"), to: try fields.crs("to"),
                 coordinates: try fields.coordinatePairs("coordinates", limit: maxProjectCoordinates))
    }
}

extension FieldReader {
    /// A CRS: "EPSG:5179", "5179" or a PROJ string. Only the syntax is checked here; whether
    /// PROJ knows the CRS is learnt when the request runs.
    mutating func crs(_ name: String) throws(EngineError) -> CRS {
        let text = try string(name)
        do {
            return try CRS(text)
        } catch {
            throw .projection(error, field: name)
        }
    }

    /// An array of `[x, y]` number pairs in visualisation order (longitude/latitude or
    /// easting/northing); in text, `x,y` pairs separated by `;`. An error about one pair
    /// names it as `name[i]`.
    mutating func coordinatePairs(_ name: String, limit: Int) throws(EngineError) -> [CRSPoint] {
        var points: [CRSPoint] = []
        switch field(name) {
        case nil:
            throw .missingField(name)
        case let .json(value)?:
            guard let items = value.arrayValue else {
                throw .invalidField(name, reason: "must be an array of [x, y] pairs")
            }
            guard (1...limit).contains(items.count) else {
                throw .invalidField(name, reason: "must hold 1 to \(limit) [x, y] pairs, got \(items.count)")
            }
            points.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                guard let pair = item.arrayValue, pair.count == 2,
                      let x = pair[0].doubleValue, let y = pair[1].doubleValue
                else {
                    throw .invalidField("\(name)[\(i)]", reason: "must be an array of two numbers [x, y]")
                }
                points.append(CRSPoint(x: x, y: y))
            }
        case let .text(text)?:
            for (i, pair) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
                let parts = pair.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2, let x = JSONValue.number(text: parts[0]), let y = JSONValue.number(text: parts[1]) else {
                    throw .invalidField("\(name)[\(i)]", reason: "must be two comma-separated numbers x,y, got \"\(pair.prefix(40))\"")
                }
                points.append(CRSPoint(x: x, y: y))
            }
        }
        guard (1...limit).contains(points.count) else {
            throw .invalidField(name, reason: "must hold 1 to \(limit) [x, y] pairs, got \(points.count)")
        }
        return points
    }
}
