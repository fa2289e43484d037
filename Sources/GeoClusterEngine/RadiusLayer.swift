import GeoCluster
import GeoClusterWire

/// A named set of point features and the clustering hierarchy built over them. Immutable:
/// a changed layer is a new value, so readers always see one consistent version.
public struct RadiusLayer: Sendable {
    public let name: String
    public let kind: LayerKind
    /// The input features as given, kept as their JSON text; single points are answered
    /// with these.
    public let features: EncodedFeatures
    public let index: RadiusClusterIndex
    /// `[west, south, east, north]` of the points, `nil` for an empty layer.
    public let bounds: [Double]?
    /// Wall-clock seconds the index took to build (projection and every zoom level),
    /// after the features were validated.
    public let buildSeconds: Double
    /// Licence and attribution shown in `layers` answers.
    public var metadata = LayerMetadata()

    /// Validates every feature (a GeoJSON Feature with Point geometry and valid
    /// coordinates; properties an object or null) and builds the index.
    public init(name: String, kind: LayerKind, features: [JSONValue],
                options: RadiusClusterOptions = RadiusClusterOptions()) throws(EngineError) {
        var coordinates: [Coordinate] = []
        coordinates.reserveCapacity(features.count)
        var west = Double.infinity, south = Double.infinity, east = -Double.infinity, north = -Double.infinity
        for (i, feature) in features.enumerated() {
            let c = try Self.coordinate(of: feature, layer: name, index: i)
            west = min(west, c.longitude)
            east = max(east, c.longitude)
            south = min(south, c.latitude)
            north = max(north, c.latitude)
            coordinates.append(c)
        }
        let start = ContinuousClock.now
        do {
            self.index = try RadiusClusterIndex(coordinates: coordinates, options: options)
        } catch {
            throw .core(error, field: "options")
        }
        self.buildSeconds = (ContinuousClock.now - start).inSeconds
        self.name = name
        self.kind = kind
        self.features = EncodedFeatures(features)
        self.bounds = features.isEmpty ? nil : [west, south, east, north]
    }

    private static func coordinate(of feature: JSONValue, layer: String, index: Int) throws(EngineError) -> Coordinate {
        guard case let .object(object) = feature, object["type"] == "Feature" else {
            throw .invalidFeature(layer: layer, index: index, reason: "not a GeoJSON Feature object")
        }
        if let properties = object["properties"], properties.objectValue == nil, !properties.isNull {
            throw .invalidFeature(layer: layer, index: index, reason: "properties must be an object or null")
        }
        if let id = object["id"], id.stringValue == nil, id.doubleValue == nil {
            throw .invalidFeature(layer: layer, index: index, reason: "id must be a string or a number")
        }
        guard let geometry = object["geometry"], geometry["type"] == "Point" else {
            throw .invalidFeature(layer: layer, index: index, reason: "geometry must be a Point")
        }
        guard let position = LayerRecord.position(ofPoint: geometry) else {
            throw .invalidFeature(layer: layer, index: index, reason: "coordinates must be \(LayerRecord.positionRule)")
        }
        do {
            return try Coordinate.validated(longitude: position.longitude, latitude: position.latitude, index: index)
        } catch {
            throw .invalidFeature(layer: layer, index: index, reason: error.description)
        }
    }

    /// Summary for `layers` answers.
    public var summary: JSONValue {
        let o = index.options
        var object: JSONObject = ["name": .string(name), "kind": .string(kind.rawValue),
                                  "count": .number(Double(features.count))]
        object["bounds"] = bounds.map { .array($0.map(JSONValue.number)) } ?? .null
        object["options"] = ["radius": .number(o.radiusPixels), "extent": .number(Double(o.extent)),
                             "min_zoom": .number(Double(o.minZoom)), "max_zoom": .number(Double(o.maxZoom)),
                             "min_points": .number(Double(o.minPoints))]
        return metadata.adding(to: .object(object))
    }
}
