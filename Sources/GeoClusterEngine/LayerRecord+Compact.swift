import GeoCluster
import GeoClusterWire

extension LayerRecord {
    /// The record of a GeoJSON Feature read without parsing it into a tree
    /// (``CompactJSON``): the text is checked once (and brought to the form answers
    /// write, if it differs in whitespace or in how numbers are spelt), then only the id,
    /// the geometry and the kind's fields are made into values, and the text is kept as
    /// the record's feature.
    ///
    /// `nil` whenever the text is not such a feature or the record would be refused: the
    /// caller then parses the text and builds the record with
    /// ``init(json:kind:layer:index:text:)``, which gives the same record or the error
    /// for it. So this only ever answers what that initializer answers, faster.
    init?(compactFeature feature: ArraySlice<UInt8>, kind: LayerKind, layer: String, index: Int, maxDepth: Int) {
        let text: ArraySlice<UInt8>
        switch feature.withUnsafeBufferPointer({ CompactJSON.check($0, maxDepth: maxDepth) }) {
        case .compact: text = feature
        case let .rewritten(rewritten): text = rewritten[...]
        case .refused: return nil
        }
        guard let record = text.withUnsafeBufferPointer({ text in
            Self.compact(text, kind: kind, layer: layer, index: index)
        }) else { return nil }
        self.init(idKey: record.idKey, coordinate: record.coordinate, fields: record.fields, featureText: text,
                  observerID: record.observerID, hasNote: record.hasNote)
    }

    /// What ``init(compactFeature:kind:layer:index:maxDepth:)`` reads from the checked text.
    private static func compact(_ text: UnsafeBufferPointer<UInt8>, kind: LayerKind, layer: String, index: Int)
        -> (idKey: String, coordinate: Coordinate, fields: RecordFields, observerID: String?, hasNote: Bool)?
    {
        guard text[0] == UInt8(ascii: "{") else { return nil }
        var type: Range<Int>?, id: Range<Int>?, geometry: Range<Int>?, properties: Range<Int>?
        CompactJSON.forEachMember(of: 0 ..< text.count, in: text) { key, value in
            if CompactJSON.bytes(key, in: text, equal: "type") { type = value }
            else if CompactJSON.bytes(key, in: text, equal: "id") { id = value }
            else if CompactJSON.bytes(key, in: text, equal: "geometry") { geometry = value }
            else if CompactJSON.bytes(key, in: text, equal: "properties") { properties = value }
            return true
        }
        guard let type, CompactJSON.bytes(type, in: text, equal: "\"Feature\""),
              let idKey = compactIDKey(id, in: text, kind: kind),
              let geometry, let position = compactPoint(geometry, in: text) else { return nil }
        let reader = RecordReader(layer: layer, index: index)
        guard let coordinate = try? reader.coordinate(longitude: .number(position.longitude),
                                                      latitude: .number(position.latitude)) else { return nil }

        // The kind's fields (and the owner's members) as values; the rest is only checked.
        var fields = CompactFieldValues(names: RecordReader.fieldNames(of: kind))
        var hasNote = false
        if let properties, !CompactJSON.bytes(properties, in: text, equal: "null") {
            guard text[properties.lowerBound] == UInt8(ascii: "{") else { return nil }
            let names = RecordReader.staticFieldNames(of: kind)
            CompactJSON.forEachMember(of: properties, in: text) { key, value in
                if CompactJSON.bytes(key, in: text, equal: "observer_id") {
                    fields.observer = CompactJSON.value(value, in: text)
                } else if CompactJSON.bytes(key, in: text, equal: "note") {
                    hasNote = true
                } else if let place = names.firstIndex(where: { CompactJSON.bytes(key, in: text, equal: $0) }) {
                    fields.set(place, CompactJSON.value(value, in: text))
                }
                return true
            }
        }
        guard let kindFields = try? reader.fields(kind, from: fields) else { return nil }
        return (idKey, coordinate, kindFields, fields.observer?.stringValue, hasNote)
    }

    /// The id key of a compact feature's `id` member (see ``RecordReader/id(_:kind:)``);
    /// `nil` when the record would be refused for it.
    private static func compactIDKey(_ id: Range<Int>?, in text: UnsafeBufferPointer<UInt8>, kind: LayerKind) -> String? {
        guard let id, !CompactJSON.bytes(id, in: text, equal: "null") else { return kind == .points ? "" : nil }
        if let string = CompactJSON.string(id, in: text) { return idKey(of: .string(string)) }
        if let number = CompactJSON.number(id, in: text) { return idKey(of: .number(number)) }
        return nil
    }

    /// The longitude and latitude of a compact feature's `geometry` when it is a Point
    /// whose coordinates follow ``positionRule`` (ranges unchecked), else `nil`.
    private static func compactPoint(_ geometry: Range<Int>, in text: UnsafeBufferPointer<UInt8>)
        -> (longitude: Double, latitude: Double)?
    {
        guard text[geometry.lowerBound] == UInt8(ascii: "{") else { return nil }
        var isPoint = false
        var coordinates: Range<Int>?
        CompactJSON.forEachMember(of: geometry, in: text) { key, value in
            if CompactJSON.bytes(key, in: text, equal: "type") {
                isPoint = CompactJSON.bytes(value, in: text, equal: "\"Point\"")
            } else if CompactJSON.bytes(key, in: text, equal: "coordinates") {
                coordinates = value
            }
            return true
        }
        guard isPoint, let coordinates, text[coordinates.lowerBound] == UInt8(ascii: "[") else { return nil }
        var numbers: (Double, Double, count: Int) = (0, 0, 0)
        var allNumbers = true
        CompactJSON.forEachElement(of: coordinates, in: text) { element in
            guard let number = CompactJSON.number(element, in: text) else {
                allNumbers = false
                return false
            }
            switch numbers.count {
            case 0: numbers.0 = number
            case 1: numbers.1 = number
            default: break
            }
            numbers.count += 1
            return numbers.count <= 3
        }
        guard allNumbers, numbers.count == 2 || numbers.count == 3 else { return nil }
        return (numbers.0, numbers.1)
    }
}

/// The kind fields and `observer_id` of a feature read in place, as values, without
/// building an object of them.
private struct CompactFieldValues: RecordFieldValues {
    /// ``RecordReader/fieldNames(of:)`` of the layer's kind (at most four); the values
    /// are kept at the same places.
    let names: [String]
    private var values: (JSONValue?, JSONValue?, JSONValue?, JSONValue?) = (nil, nil, nil, nil)
    var observer: JSONValue?

    init(names: [String]) {
        precondition(names.count <= 4, "at most four kind fields")
        self.names = names
    }

    mutating func set(_ place: Int, _ value: JSONValue) {
        switch place {
        case 0: values.0 = value
        case 1: values.1 = value
        case 2: values.2 = value
        default: values.3 = value
        }
    }

    subscript(field: String) -> JSONValue? {
        if field == "observer_id" { return observer }
        switch names.firstIndex(of: field) {
        case 0: return values.0
        case 1: return values.1
        case 2: return values.2
        case 3: return values.3
        default: return nil
        }
    }
}
