#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GeoReachability
import GeoCluster
import GeoClusterWire

/// Writes layers into a data directory that ``LayerCatalog/load(directory:)`` reads: a
/// GeoJSON FeatureCollection file per layer, listed in `layers.json`.
///
/// This is where `geo-cluster import` puts its records without a store; with one, the
/// records go to the store and only `layers.json` is written here (``register(layer:kind:directory:)``).
public enum LayerDirectory {
    /// Layer names become file names, so they are kept to letters, digits, `_`, `-` and
    /// `.`, not starting with `.`, at most 100 characters.
    public static func validateName(_ name: String) throws(EngineError) {
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0)
        }
        guard !name.isEmpty, name.count <= 100, allowed, !name.hasPrefix(".") else {
            throw .invalidField("layer", reason: "a layer name is 1 to 100 letters, digits, \"_\", \"-\" or \".\", not starting with \".\"; got \(JSONValue.string(name).jsonString)")
        }
    }

    /// Writes `records` as the layer `name` of `directory` (created when missing) and
    /// registers it in `layers.json`: an entry of that name keeps its other members
    /// (description, licence, options) and its file, with `kind` updated; a new entry is
    /// appended as `{"name", "kind", "file": "<name>.geojson"}`. Other entries and
    /// top-level members (`networks`) are kept as they are; the manifest is written with
    /// two-space indentation, the format of the shipped one.
    ///
    /// Each file is written to a temporary name and renamed into place, so a reader sees
    /// the old file or the new one. The layer file is renamed first: a failure between
    /// the two renames leaves a new layer file that the manifest does not list yet.
    /// - Returns: the path of the layer file.
    @discardableResult
    public static func write(_ records: [LayerRecord], layer name: String, kind: LayerKind,
                             directory: String) throws(EngineError) -> String {
        let (manifestPath, updated, file) = try updatedManifest(layer: name, kind: kind, directory: directory)
        let layerPath = directory + "/" + file

        var text: [UInt8] = []
        text.reserveCapacity(1 << 20)
        text += #"{"type":"FeatureCollection","features":["#.utf8
        try replaceFile(at: layerPath) { (append: (inout [UInt8]) throws(EngineError) -> Void) throws(EngineError) in
            for (position, record) in records.enumerated() {
                text += position == 0 ? "\n".utf8 : ",\n".utf8
                record.appendFeatureText(to: &text)
                if text.count >= 1 << 20 { try append(&text) }
            }
            text += "\n]}\n".utf8
            try append(&text)
        }
        try writeManifest(updated, at: manifestPath)
        return layerPath
    }

    /// Registers the layer `name` in `directory/layers.json` as ``write(_:layer:kind:directory:)``
    /// does, without writing a layer file: for imports whose records go to a store.
    public static func register(layer name: String, kind: LayerKind, directory: String) throws(EngineError) {
        let (manifestPath, updated, _) = try updatedManifest(layer: name, kind: kind, directory: directory)
        try writeManifest(updated, at: manifestPath)
    }

    /// The manifest's path, its content with the layer registered, and the layer's file;
    /// creates the directory when missing.
    private static func updatedManifest(layer name: String, kind: LayerKind,
                                        directory: String) throws(EngineError) -> (String, JSONValue, String) {
        try validateName(name)
        let (manifestPath, manifest) = try manifest(in: directory)
        let (updated, file) = try register(layer: name, kind: kind, in: manifest, path: manifestPath)
        return (manifestPath, updated, file)
    }

    /// The path and content of `directory/layers.json` (an empty one when missing, with
    /// the directory created).
    private static func manifest(in directory: String) throws(EngineError) -> (String, JSONValue) {
        let manifestPath = directory + "/" + LayerCatalog.manifestName
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: manifestPath) { return (manifestPath, try LayerCatalog.readJSON(manifestPath)) }
        do {
            try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .invalidLayerSource(path: directory, reason: "cannot be created: \(error.localizedDescription)")
        }
        return (manifestPath, ["layers": []])
    }

    /// Writes a walking network document (``OSMWalkingNetwork/document(description:source:)``)
    /// as `directory/<name>.json` and registers it under `networks` in `directory/layers.json`,
    /// replacing an entry of the same name; `serve --data` and `query --data` then load it.
    /// Returns the network file's path.
    @discardableResult
    public static func write(network document: [UInt8], name: String, description: String,
                             directory: String) throws(EngineError) -> String {
        try validateName(name)
        let (manifestPath, manifest) = try manifest(in: directory)
        guard var object = manifest.objectValue else {
            throw .invalidLayerSource(path: manifestPath, reason: "expected {\"layers\": [...]}")
        }
        var entries = object["networks"]?.arrayValue ?? []
        let file = name + ".json"
        let entry: JSONValue = ["name": .string(name), "file": .string(file),
                                "format": .string("\(WalkingNetwork.jsonFormatName) \(WalkingNetwork.jsonFormatVersion)"),
                                "description": .string(description), "license": "ODbL-1.0",
                                "attribution": "© OpenStreetMap contributors"]
        if let position = entries.firstIndex(where: { $0["name"]?.stringValue == name }) {
            entries[position] = entry
        } else {
            entries.append(entry)
        }
        object["networks"] = .array(entries)
        let path = directory + "/" + file
        var text = document
        try replaceFile(at: path) { append throws(EngineError) in try append(&text) }
        try writeManifest(.object(object), at: manifestPath)
        return path
    }

    private static func writeManifest(_ manifest: JSONValue, at path: String) throws(EngineError) {
        var manifestText = prettyPrinted(manifest)
        manifestText.append(UInt8(ascii: "\n"))
        try replaceFile(at: path) { append throws(EngineError) in try append(&manifestText) }
    }

    /// The manifest with the layer's entry added or updated, and the entry's file.
    static func register(layer name: String, kind: LayerKind, in manifest: JSONValue,
                         path: String) throws(EngineError) -> (JSONValue, String) {
        guard var object = manifest.objectValue, var entries = object["layers"]?.arrayValue else {
            throw .invalidLayerSource(path: path, reason: "expected {\"layers\": [...]}")
        }
        let position = entries.firstIndex { $0["name"]?.stringValue == name }
        var entry = position.flatMap { entries[$0].objectValue } ?? ["name": .string(name)]
        let file = entry["file"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? name + ".geojson"
        entry["kind"] = .string(kind.rawValue)
        entry["file"] = .string(file)
        if let position { entries[position] = .object(entry) } else { entries.append(.object(entry)) }
        object["layers"] = .array(entries)
        return (.object(object), file)
    }

    /// Writes through `body` to a temporary file next to `path`, then renames it over `path`.
    private static func replaceFile(
        at path: String,
        _ body: (_ append: (inout [UInt8]) throws(EngineError) -> Void) throws(EngineError) -> Void
    ) throws(EngineError) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp").path
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporary) else {
            throw .invalidLayerSource(path: temporary, reason: "cannot be written")
        }
        do throws(EngineError) {
            try body { (bytes: inout [UInt8]) throws(EngineError) in
                do {
                    try handle.write(contentsOf: bytes)
                } catch {
                    throw .invalidLayerSource(path: temporary, reason: "write failed: \(error.localizedDescription)")
                }
                bytes.removeAll(keepingCapacity: true)
            }
            do {
                try handle.synchronize()
                try handle.close()
            } catch {
                throw .invalidLayerSource(path: temporary, reason: "write failed: \(error.localizedDescription)")
            }
            guard rename(temporary, path) == 0 else {
                throw .invalidLayerSource(path: path, reason: "cannot be replaced: \(String(cString: strerror(errno)))")
            }
        } catch {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    /// JSON with two-space indentation and `": "` after keys, every array element and
    /// object member on its own line, non-ASCII characters as they are: byte for byte what
    /// Python's `json.dumps(value, ensure_ascii=False, indent=2)` writes for the values a
    /// manifest holds (strings, integers, booleans, null, plain decimals).
    static func prettyPrinted(_ value: JSONValue) -> [UInt8] {
        var buffer: [UInt8] = []
        appendPretty(value, indent: 0, into: &buffer)
        return buffer
    }

    private static func appendPretty(_ value: JSONValue, indent: Int, into buffer: inout [UInt8]) {
        func newline(_ level: Int) {
            buffer.append(UInt8(ascii: "\n"))
            buffer += repeatElement(UInt8(ascii: " "), count: 2 * level)
        }
        switch value {
        case let .array(elements) where !elements.isEmpty:
            buffer.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                appendPretty(element, indent: indent + 1, into: &buffer)
            }
            newline(indent)
            buffer.append(UInt8(ascii: "]"))
        case let .object(object) where !object.isEmpty:
            buffer.append(UInt8(ascii: "{"))
            for (position, member) in object.enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                JSONValue.string(member.key).encode(into: &buffer)
                buffer += ": ".utf8
                appendPretty(member.value, indent: indent + 1, into: &buffer)
            }
            newline(indent)
            buffer.append(UInt8(ascii: "}"))
        default:
            value.encode(into: &buffer)
        }
    }
}
