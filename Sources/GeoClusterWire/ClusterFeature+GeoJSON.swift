import GeoCluster

/// GeoJSON and geojson-vt renderings of clustering answers, with supercluster's
/// property names so that frontends written for supercluster work unchanged.
extension ClusterFeature {
    /// supercluster's `point_count_abbreviated`: the count itself below 1,000, then
    /// "1.2k" style to one decimal below 10,000, then whole thousands ("12k").
    public static func abbreviatedCount(_ count: Int) -> JSONValue {
        if count >= 10_000 {
            let thousands = RadiusClusterIndex.roundHalfUp(Double(count) / 1_000)
            return .string("\(JSONValue.number(thousands).jsonString)k")
        }
        if count >= 1_000 {
            let tenths = RadiusClusterIndex.roundHalfUp(Double(count) / 100) / 10
            return .string("\(JSONValue.number(tenths).jsonString)k")
        }
        return .number(Double(count))
    }

    /// Appends the text of ``abbreviatedCount(_:)`` without making a value of it.
    public static func encodeAbbreviatedCount(_ count: Int, into buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxAbbreviatedCountBytes) { scratch in
            let start = scratch.baseAddress!
            let end = writeAbbreviatedCount(count, to: start)
            buffer.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    /// The most bytes ``writeAbbreviatedCount(_:to:)`` writes.
    static let maxAbbreviatedCountBytes = JSONValue.maxNumberBytes + 3

    /// Writes the text of ``abbreviatedCount(_:)`` into memory with room for
    /// ``maxAbbreviatedCountBytes``; returns the end. The rounding is in whole numbers (half
    /// up, as there: `count / 100` and `count / 1000` are exact at every half), the tenth
    /// written only when it is not 0.
    static func writeAbbreviatedCount(_ count: Int, to text: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        guard count >= 1_000 else { return JSONValue.writeWholeNumber(count, to: text) }
        var text = text.writeASCII("\"")
        if count >= 10_000 {
            // (count + 500) / 1000 without the sum overflowing near Int.max.
            text = JSONValue.writeWholeNumber(count / 1_000 + (count % 1_000 >= 500 ? 1 : 0), to: text)
        } else {
            let tenths = (count + 50) / 100
            text = JSONValue.writeWholeNumber(tenths / 10, to: text)
            if tenths % 10 != 0 {
                text[0] = UInt8(ascii: ".")
                text[1] = UInt8(ascii: "0") + UInt8(tenths % 10)
                text += 2
            }
        }
        return text.writeASCII(#"k""#)
    }

    /// `cluster`, `cluster_id`, `point_count` and `point_count_abbreviated`, after any
    /// `extra` properties (which they override on a name clash, as in supercluster).
    public static func clusterProperties(id: Int, pointCount: Int, extra: JSONObject = JSONObject()) -> JSONObject {
        var properties = extra
        properties["cluster"] = .bool(true)
        properties["cluster_id"] = .number(Double(id))
        properties["point_count"] = .number(Double(pointCount))
        properties["point_count_abbreviated"] = abbreviatedCount(pointCount)
        return properties
    }
}

extension ClusterFeature {
    /// Appends this feature as a GeoJSON Feature's JSON text. A cluster gets its id and
    /// supercluster's properties, after any extra members that `extraClusterMembers`
    /// writes as `"name":value,` (each followed by a comma; e.g. aggregates, whose names
    /// must differ from supercluster's). A single point is whatever `point` appends for
    /// its input index (usually the stored input feature's text).
    ///
    /// Written straight to text: for answers of hundreds of features a JSON tree would
    /// cost more to allocate than the query itself. A cluster's fixed parts and numbers
    /// are written to scratch memory and appended in two copies, before and after its
    /// extra members.
    public func encodeGeoJSON(into buffer: inout [UInt8], extraClusterMembers: (_ buffer: inout [UInt8]) -> Void = { _ in },
                              point: (_ index: Int, _ buffer: inout [UInt8]) -> Void) {
        switch kind {
        case let .point(index):
            point(index, &buffer)
        case let .cluster(id, count):
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maxClusterTextBytes) { scratch in
                let start = scratch.baseAddress!
                var text = start.writeASCII(#"{"type":"Feature","id":"#)
                text = JSONValue.writeWholeNumber(id, to: text)
                text = text.writeASCII(#","properties":{"#)
                buffer.append(contentsOf: UnsafeBufferPointer(start: start, count: text - start))
                extraClusterMembers(&buffer)
                text = start.writeASCII(#""cluster":true,"cluster_id":"#)
                text = JSONValue.writeWholeNumber(id, to: text)
                text = text.writeASCII(#","point_count":"#)
                text = JSONValue.writeWholeNumber(count, to: text)
                text = text.writeASCII(#","point_count_abbreviated":"#)
                text = Self.writeAbbreviatedCount(count, to: text)
                text = text.writeASCII(#"},"geometry":{"type":"Point","coordinates":["#)
                text = JSONValue.writeNumber(coordinate.longitude, to: text)
                text = text.writeASCII(",")
                text = JSONValue.writeNumber(coordinate.latitude, to: text)
                text = text.writeASCII("]}}")
                buffer.append(contentsOf: UnsafeBufferPointer(start: start, count: text - start))
            }
        }
    }

    /// Room for the longer of a cluster's two parts, the second: 121 bytes of names and
    /// punctuation, four numbers and the number of an abbreviated count.
    static let maxClusterTextBytes = 160 + 5 * JSONValue.maxNumberBytes
}

extension TileFeature {
    /// This feature in geojson-vt's tile form (`type` 1 = point, pixel `geometry`,
    /// `tags`), as supercluster's `getTile` returns it. `tags` and `id` are used for
    /// single points; clusters get their own.
    public func geoJSONVT(extraClusterProperties: JSONObject = JSONObject(),
                          pointTags: JSONValue, pointID: JSONValue?) -> JSONValue {
        var feature = JSONObject()
        feature["type"] = 1
        feature["geometry"] = .array([.array([.number(Double(pixelX)), .number(Double(pixelY))])])
        switch kind {
        case .point:
            feature["tags"] = pointTags
            if let pointID { feature["id"] = pointID }
        case let .cluster(id, count):
            feature["tags"] = .object(ClusterFeature.clusterProperties(id: id, pointCount: count,
                                                                       extra: extraClusterProperties))
            feature["id"] = .number(Double(id))
        }
        return .object(feature)
    }
}

/// Small GeoJSON builders shared by every output path.
public enum GeoJSON {
    /// `{"type":"Feature","id":…,"properties":…,"geometry":{"type":"Point","coordinates":[lon,lat]}}`;
    /// `id` is omitted when `nil`.
    public static func pointFeature(coordinate: Coordinate, properties: JSONValue, id: JSONValue? = nil) -> JSONValue {
        var feature = JSONObject()
        feature["type"] = "Feature"
        if let id { feature["id"] = id }
        feature["properties"] = properties
        feature["geometry"] = point(coordinate)
        return .object(feature)
    }

    /// `{"type":"Point","coordinates":[lon,lat]}`.
    public static func point(_ coordinate: Coordinate) -> JSONValue {
        var geometry = JSONObject()
        geometry["type"] = "Point"
        geometry["coordinates"] = .array([.number(coordinate.longitude), .number(coordinate.latitude)])
        return .object(geometry)
    }

    /// Appends the text of ``featureCollection(_:)`` for `count` features, each appended
    /// by `feature` for its position.
    public static func encodeFeatureCollection(count: Int, into buffer: inout [UInt8],
                                               feature: (_ position: Int, _ buffer: inout [UInt8]) -> Void) {
        buffer.appendASCII(#"{"type":"FeatureCollection","features":["#)
        for position in 0..<count {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            feature(position, &buffer)
        }
        buffer.appendASCII("]}")
    }

    /// `{"type":"FeatureCollection","features":[…]}`.
    public static func featureCollection(_ features: [JSONValue]) -> JSONValue {
        var collection = JSONObject()
        collection["type"] = "FeatureCollection"
        collection["features"] = .array(features)
        return .object(collection)
    }
}
