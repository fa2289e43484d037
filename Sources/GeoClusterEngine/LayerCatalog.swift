import Foundation
import GeoCluster

/// Loads layers from files: a data directory described by `layers.json`, or single
/// GeoJSON files.
///
/// `layers.json` is `{"layers":[{"name":…,"kind":…,"file":…,"options":{…}}]}`; `file` is
/// relative to the directory, `options` (optional) takes `radius`, `extent`, `min_zoom`,
/// `max_zoom` and `min_points`. Other members (description, licence) are documentation.
public enum LayerCatalog {
    public static let manifestName = "layers.json"

    /// Every layer listed in `directory/layers.json`.
    public static func load(directory: String) throws(EngineError) -> [Layer] {
        let manifestPath = directory + "/" + manifestName
        let manifest = try readJSON(manifestPath)
        guard let entries = manifest["layers"]?.arrayValue else {
            throw .invalidLayerSource(path: manifestPath, reason: "expected {\"layers\": [...]}")
        }
        var layers: [Layer] = []
        for (i, entry) in entries.enumerated() {
            let place = "\(manifestPath), layers[\(i)]"
            guard let name = entry["name"]?.stringValue, !name.isEmpty else {
                throw .invalidLayerSource(path: place, reason: "\"name\" must be a non-empty string")
            }
            guard let file = entry["file"]?.stringValue, !file.isEmpty else {
                throw .invalidLayerSource(path: place, reason: "\"file\" must be a non-empty string")
            }
            let kindName = entry["kind"]?.stringValue ?? LayerKind.points.rawValue
            guard let kind = LayerKind(rawValue: kindName) else {
                let known = LayerKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidLayerSource(path: place, reason: "unknown kind \"\(kindName)\" (known: \(known))")
            }
            let options = try clusterOptions(entry["options"], place: place)
            layers.append(try load(file: directory + "/" + file, name: name, kind: kind, options: options))
        }
        return layers
    }

    /// One layer from a GeoJSON FeatureCollection file.
    public static func load(file path: String, name: String, kind: LayerKind = .points,
                            options: RadiusClusterOptions = RadiusClusterOptions()) throws(EngineError) -> Layer {
        let collection = try readJSON(path)
        guard collection["type"] == "FeatureCollection", let features = collection["features"]?.arrayValue else {
            throw .invalidLayerSource(path: path, reason: "expected a GeoJSON FeatureCollection")
        }
        return try Layer(name: name, kind: kind, features: features, options: options)
    }

    /// Reads cluster options from a manifest entry's `options` object.
    static func clusterOptions(_ value: JSONValue?, place: String) throws(EngineError) -> RadiusClusterOptions {
        var options = RadiusClusterOptions()
        guard let value, !value.isNull else { return options }
        guard let object = value.objectValue else {
            throw .invalidLayerSource(path: place, reason: "\"options\" must be an object")
        }
        for (key, item) in object {
            guard let number = item.doubleValue else {
                throw .invalidLayerSource(path: place, reason: "option \"\(key)\" must be a number")
            }
            let integer = item.intValue
            switch key {
            case "radius": options.radiusPixels = number
            case "extent", "min_zoom", "max_zoom", "min_points":
                guard let integer else {
                    throw .invalidLayerSource(path: place, reason: "option \"\(key)\" must be an integer")
                }
                switch key {
                case "extent": options.extent = integer
                case "min_zoom": options.minZoom = integer
                case "max_zoom": options.maxZoom = integer
                default: options.minPoints = integer
                }
            default:
                throw .invalidLayerSource(path: place, reason: "unknown option \"\(key)\"")
            }
        }
        do {
            try options.validate()
        } catch {
            throw .invalidLayerSource(path: place, reason: error.description)
        }
        return options
    }

    static func readJSON(_ path: String) throws(EngineError) -> JSONValue {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidLayerSource(path: path, reason: "cannot be read")
        }
        do {
            return try JSONValue.parse([UInt8](data), maxDepth: 64)
        } catch {
            throw .invalidLayerSource(path: path, reason: error.description)
        }
    }
}
