import GeoCluster
import GeoClusterWire

/// What a layer holds. Each kind has its own schema and filters; `points` is a layer of
/// any point features with free-form properties.
public enum LayerKind: String, Sendable, CaseIterable {
    case sightings, places, stations, points
}

/// The typed fields of one record, by layer kind (the schemas of DESIGN.md).
public enum RecordFields: Sendable, Equatable {
    /// `species` non-empty, `count` individuals in 1...``LayerRecord/maxSightingCount``,
    /// `observed_at` an RFC 3339 date-time with a UTC offset; optionally `observer_id`, who
    /// recorded it (``LayerRecord/observerID``), set from the writer's key when keys are on.
    /// A `note` among its free-form properties is the observer's own, which answers
    /// withhold (``withholdingNote()``).
    /// The species is kept as a ``RecordName`` (`.text` gives the name).
    /// `count` in 32 bits, as ``LayerRecord/maxSightingCount`` bounds it: with the names
    /// as numbers, that keeps a record at 80 bytes.
    case sighting(species: RecordName, count: Int32, observedAt: Timestamp)
    /// `name` and `category` non-empty; `dwell_minutes` optional, 0...1440 (one day).
    /// The category is kept as a ``RecordName``.
    case place(name: String, category: RecordName, dwellMinutes: Double?)
    /// `name` non-empty; `lines` at least one non-empty string, in the order given.
    case station(name: String, lines: [String])
    /// A `points` layer has no fields of its own; everything is free-form.
    case point
}

/// One validated point of a layer: its id, position, typed fields, and the GeoJSON
/// Feature that answers return for it.
///
/// Two input shapes are accepted; an object with a `type` member is read as a GeoJSON
/// Feature, any other object as a flat record:
/// - GeoJSON: `{"type":"Feature","id":…,"geometry":{"type":"Point","coordinates":[lon,lat]},
///   "properties":{…kind fields…, …free-form…}}`. Foreign members and `properties` are kept
///   as given; `feature` is the input itself. A third coordinate (altitude) is allowed.
/// - Flat: `{"id":…,"lon":…,"lat":…, …kind fields…, "properties":{…free-form…}}`. Any other
///   top-level member is an error (a misspelt field must not vanish silently). `feature` is
///   built with the kind fields first, then the free-form members; a free-form member named
///   like a kind field would shadow it, so it is an error.
///
/// Ids are a non-empty string or an integer with |id| <= 2^53 (exact in JSON). Every kind
/// but `points` requires one. A `null` value counts as absent only for optional members
/// (`dwell_minutes`, a `points` id, `properties`); elsewhere it is reported as a wrong type.
public struct LayerRecord: Sendable, Equatable {
    /// The id in the form used for uniqueness (see ``idKey(of:)``); empty when the record
    /// has no id, which only a `points` record may lack.
    public let idKey: String
    /// The id as given (a string or a number), `null` when absent: read back from
    /// ``idKey``, which is one-to-one with it.
    public var idJSON: JSONValue {
        guard let first = idKey.utf8.first else { return .null }
        guard first == UInt8(ascii: "#") else { return .string(idKey) }
        let rest = idKey.dropFirst()
        if rest.utf8.first == UInt8(ascii: "#") { return .string(String(rest)) }
        return Int(rest).map { .number(Double($0)) } ?? .string(idKey)
    }
    /// The validated position: finite, longitude in [-180, 180], latitude in [-90, 90].
    public let coordinate: Coordinate
    public let fields: RecordFields
    /// Whether the feature's properties have a `note` (``withholdingNote()``).
    let hasNote: Bool
    /// ``observerID`` as a number of the process's table of names: 4 bytes in each record
    /// where a string (36 characters for a UUID) was an allocation of its own. Declared
    /// here, beside ``hasNote``, so that it fills the bytes before the next word: a record
    /// is 80 bytes.
    let observer: SharedName
    /// The GeoJSON Feature answered for this record, as the JSON text answers write: a
    /// record keeps its feature as text (about a quarter of the memory of the value, and
    /// a few copies of bytes in an answer), without the parts every feature spells the
    /// same way (``FeatureText``). Made again at each read: answers append it with
    /// ``appendFeatureText(to:)``.
    public var featureText: [UInt8] { text.text(names: textNames) }
    private var text: FeatureText {
        switch texts {
        case let .shown(text): text
        case let .shownAndWritten(texts): texts.shown
        }
    }
    /// The feature's text, and its text as written when answers show it otherwise; one
    /// word in the record either way (a layer holds millions of records, and few are
    /// shown otherwise than written).
    private let texts: Texts

    /// Appends ``featureText``.
    public func appendFeatureText(to output: inout [UInt8]) { text.append(to: &output, names: textNames) }

    /// The id key and the names the record keeps as numbers, which its text is kept without.
    private var textNames: FeatureTextNames { Self.textNames(idKey, fields, observer: observer) }

    private static func textNames(_ idKey: String, _ fields: RecordFields, observer: SharedName) -> FeatureTextNames {
        switch fields {
        case let .sighting(species, _, observedAt):
            FeatureTextNames(id: idKey, species: species.shared, observer: observer,
                             time: FeatureTextNames.Time(observedAt))
        case let .place(_, category, _): FeatureTextNames(id: idKey, observer: observer, category: category.shared)
        case .station, .point: FeatureTextNames(id: idKey, observer: observer)
        }
    }

    /// Whether the feature's text is kept without its fixed parts (for tests).
    var featureTextIsCut: Bool { text.isCut }
    /// Whether the feature's text is kept without some of its names (for tests).
    var featureTextKeepsNames: Bool { text.keepsNames }
    /// Who recorded a sighting: the `observer_id` of its properties, `nil` when it has
    /// none. Kept apart from the feature's text, since `observer` filters and ownership
    /// checks read it for many records.
    public var observerID: String? { observer.text }
    /// For a record that answers show otherwise than written (at a generalised position,
    /// ``generalized()``, or without its note, ``withholdingNote()``), its feature as
    /// written, which only its owner and admin keys are given; `nil` otherwise.
    public var ownerFeatureText: [UInt8]? {
        guard case let .shownAndWritten(texts) = texts else { return nil }
        return texts.written
    }

    /// The GeoJSON Feature answered for this record, parsed from ``featureText`` (about a
    /// microsecond): for nearby answers and answers built as values.
    public var feature: JSONValue { JSONValue(encodedText: featureText[...]) }

    /// The feature's `properties` member (`null` when it has none), parsed from
    /// ``featureText``: a record keeps no tree of its properties (a tree of a sighting's
    /// few members took more memory than its text), so vector tiles, which read every
    /// point's properties, parse them per point.
    public var properties: JSONValue { feature["properties"] ?? .null }

    /// Largest `count` of a sighting. Sums over a million records stay below 10^15,
    /// exact in JSON's doubles (2^53 ≈ 9.0 × 10^15).
    public static let maxSightingCount = 1_000_000_000

    /// Largest magnitude of an integer id: 2^53, beyond which JSON numbers are not exact.
    public static let maxIntegerID = 1 << 53

    /// The uniqueness key of an id, `nil` when `id` is not a valid id.
    ///
    /// A string id is its own key, with a leading "#" doubled; an integer id is "#"
    /// followed by its decimal digits. So the string "7" (key `7`), the number 7 (key `#7`)
    /// and the string "#7" (key `##7`) are three different ids, and the usual string id
    /// costs no new string.
    public static func idKey(of id: JSONValue) -> String? {
        switch id {
        case let .string(string):
            guard let first = string.utf8.first else { return nil }
            return first == UInt8(ascii: "#") ? "#" + string : string
        case let .number(number):
            guard let integer = Int(exactly: number), integer.magnitude <= UInt(maxIntegerID) else { return nil }
            return "#\(integer)"
        default:
            return nil
        }
    }

    /// Validates `json` as a record of a `kind` layer.
    /// - Parameters:
    ///   - layer: the layer's name, for errors.
    ///   - index: the record's 0-based position in its batch or file, for errors.
    ///   - text: the JSON text `json` was parsed from, when that text is what answers
    ///     should write (a stored feature, which was written from a record's text): a
    ///     GeoJSON Feature then keeps it instead of encoding `json` again.
    /// - Throws: ``EngineError/invalidRecord(layer:index:id:field:reason:)`` naming the
    ///   first offending field.
    public init(json: JSONValue, kind: LayerKind, layer: String, index: Int,
                text: [UInt8]? = nil) throws(EngineError) {
        var reader = RecordReader(layer: layer, index: index)
        guard case let .object(object) = json else {
            throw reader.error("record", "must be a JSON object (a GeoJSON Feature or a flat record), got \(describe(json))")
        }
        if let type = object["type"] {
            guard type == "Feature" else {
                throw reader.error("type", "must be \"Feature\" (or absent for a flat record), got \(describe(type))")
            }
            idKey = try reader.id(object["id"], kind: kind).key
            coordinate = try reader.pointGeometry(object["geometry"])
            let properties = try reader.optionalObject(object["properties"], field: "properties")
            let fields = try reader.fields(kind, from: properties ?? JSONObject())
            let owner = Self.ownerMembers(of: properties)
            self.fields = fields
            (observer, hasNote) = owner
            texts = .shown(FeatureText(text ?? Self.text(json), names: Self.textNames(idKey, fields, observer: owner.observer)))
        } else {
            let id = try reader.id(object["id"], kind: kind)
            idKey = id.key
            let kindFields = RecordReader.fieldNames(of: kind)
            let properties = RecordReader.flatProperties(of: kind)
            for (key, _) in object
            where !RecordReader.flatMembers.contains(key) && !kindFields.contains(key) && !properties.contains(key) {
                throw reader.error(key, "is not a field of a \(kind.rawValue) record; free-form members go under \"properties\"")
            }
            coordinate = try reader.coordinate(longitude: object["lon"], latitude: object["lat"])
            let fields = try reader.fields(kind, from: object)
            var freeForm = try reader.optionalObject(object["properties"], field: "properties")
            // A place's opening hours, given beside its fields, are kept among its
            // properties, where a GeoJSON Feature has them.
            for key in properties {
                guard let value = object[key], value != .null else { continue }
                guard case .string = value else {
                    throw reader.error(key, "must be a string (OpenStreetMap's opening_hours syntax), got \(describe(value))")
                }
                guard freeForm?[key] == nil else {
                    throw reader.error("properties.\(key)", "is given twice: beside the record's fields and under \"properties\"")
                }
                var members = freeForm ?? JSONObject()
                members[key] = value
                freeForm = members
            }
            let feature = try reader.feature(flat: object, kindFields: kindFields, freeForm: freeForm, id: id.value)
            let owner = Self.ownerMembers(of: feature["properties"]?.objectValue)
            self.fields = fields
            (observer, hasNote) = owner
            texts = .shown(FeatureText(Self.text(feature), names: Self.textNames(idKey, fields, observer: owner.observer)))
        }
    }

    /// The `observer_id` (a string) and whether there is a `note`, of a feature's properties.
    private static func ownerMembers(of properties: JSONObject?) -> (observer: SharedName, hasNote: Bool) {
        guard let properties else { return (.none, false) }
        return (SharedName(properties["observer_id"]?.stringValue), properties["note"] != nil)
    }

    /// The feature's text in an array of its exact size: written into scratch space first,
    /// so that it is allocated once instead of growing through several reallocations.
    private static func text(_ feature: JSONValue) -> [UInt8] {
        var scratch: [UInt8] = []
        scratch.reserveCapacity(1_024)
        feature.encode(into: &scratch)
        return [UInt8](unsafeUninitializedCapacity: scratch.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: scratch)
        }
    }
}

/// Describes a wrong value for an error message: JSON text for scalars (long strings
/// cut), the shape for arrays and objects.
private func describe(_ value: JSONValue) -> String {
    switch value {
    case let .array(elements): elements.isEmpty ? "[]" : "an array"
    case let .object(object): object.isEmpty ? "{}" : "an object"
    case let .number(number) where !number.isFinite: "\(number)"
    case let .string(string) where string.count > 40: JSONValue.string(String(string.prefix(40)) + "…").jsonString
    default: value.jsonString
    }
}

/// Reads the members of one record, carrying what its errors report.
/// The members a record's kind fields are read from (see ``RecordReader/fields(_:from:)``).
protocol RecordFieldValues {
    subscript(_ field: String) -> JSONValue? { get }
}

extension JSONObject: RecordFieldValues {}

struct RecordReader {
    let layer: String
    let index: Int
    /// The id as JSON text once it is known valid.
    var idText: String?

    init(layer: String, index: Int) {
        self.layer = layer
        self.index = index
    }

    /// Members of a flat record besides the kind fields.
    static let flatMembers = ["id", "lon", "lat", "properties"]

    /// Members a flat record of the kind may give beside its fields that are kept among
    /// its properties: a place's `opening_hours`, which docs/LIVE.md lists with its fields.
    static func flatProperties(of kind: LayerKind) -> [String] {
        kind == .places ? ["opening_hours"] : []
    }
    static let sightingFields = staticFieldNames(of: .sightings).map(\.description)
    static let placeFields = staticFieldNames(of: .places).map(\.description)
    static let stationFields = staticFieldNames(of: .stations).map(\.description)

    static func fieldNames(of kind: LayerKind) -> [String] {
        switch kind {
        case .sightings: sightingFields
        case .places: placeFields
        case .stations: stationFields
        case .points: []
        }
    }

    /// The kind's fields, as compared with the bytes of a text read in place.
    static func staticFieldNames(of kind: LayerKind) -> [StaticString] {
        switch kind {
        case .sightings: staticSightingFields
        case .places: staticPlaceFields
        case .stations: staticStationFields
        case .points: []
        }
    }

    private static let staticSightingFields: [StaticString] = ["species", "count", "observed_at", "observer_id"]
    private static let staticPlaceFields: [StaticString] = ["name", "category", "dwell_minutes"]
    private static let staticStationFields: [StaticString] = ["name", "lines"]

    func error(_ field: String, _ reason: String) -> EngineError {
        .invalidRecord(layer: layer, index: index, id: idText, field: field, reason: reason)
    }

    // MARK: Id and position

    mutating func id(_ value: JSONValue?, kind: LayerKind) throws(EngineError) -> (key: String, value: JSONValue) {
        if kind == .points, value == nil || value == .null { return ("", .null) }
        guard let value else { throw error("id", "is missing") }
        guard let key = LayerRecord.idKey(of: value) else {
            throw error("id", "must be a non-empty string or an integer within ±2^53, got \(describe(value))")
        }
        idText = value.jsonString
        return (key, value)
    }

    func pointGeometry(_ geometry: JSONValue?) throws(EngineError) -> Coordinate {
        guard let geometry else { throw error("geometry", "is missing") }
        guard geometry["type"] == "Point" else {
            throw error("geometry", "must be a Point geometry, got \(describe(geometry["type"] ?? geometry))")
        }
        guard let position = LayerRecord.position(ofPoint: geometry) else {
            throw error("geometry.coordinates", "must be \(LayerRecord.positionRule), got "
                        + describe(geometry["coordinates"] ?? .null))
        }
        return try coordinate(longitude: .number(position.longitude), latitude: .number(position.latitude))
    }

    func coordinate(longitude: JSONValue?, latitude: JSONValue?) throws(EngineError) -> Coordinate {
        Coordinate(longitude: try degrees(longitude, field: "lon", limit: 180),
                   latitude: try degrees(latitude, field: "lat", limit: 90))
    }

    private func degrees(_ value: JSONValue?, field: String, limit: Double) throws(EngineError) -> Double {
        guard let value else { throw error(field, "is missing") }
        guard let number = value.doubleValue, (-limit...limit).contains(number) else {
            throw error(field, "must be a number within -\(Int(limit))...\(Int(limit)), got \(describe(value))")
        }
        return number
    }

    // MARK: Kind fields

    func fields(_ kind: LayerKind, from object: some RecordFieldValues) throws(EngineError) -> RecordFields {
        switch kind {
        case .sightings:
            let species = try nonEmptyString(object, "species")
            let count = try count(object["count"])
            guard let observedValue = object["observed_at"] else { throw error("observed_at", "is missing") }
            guard let text = observedValue.stringValue else {
                throw error("observed_at", "must be an RFC 3339 date-time string, got \(describe(observedValue))")
            }
            let observedAt: Timestamp
            do {
                observedAt = try Timestamp.parse(text)
            } catch {
                throw self.error("observed_at", error.description)
            }
            if let value = object["observer_id"], value != .null {
                guard let observer = value.stringValue, !observer.isEmpty,
                      observer.count <= LayerRecord.maxObserverIDLength else {
                    throw error("observer_id", "must be a non-empty string of at most \(LayerRecord.maxObserverIDLength) characters, got \(describe(value))")
                }
            }
            return .sighting(species: RecordName(species), count: Int32(truncatingIfNeeded: count), observedAt: observedAt)
        case .places:
            let name = try nonEmptyString(object, "name")
            let category = try nonEmptyString(object, "category")
            var dwellMinutes: Double?
            if let value = object["dwell_minutes"], value != .null {
                guard let minutes = value.doubleValue, (0...1440).contains(minutes) else {
                    throw error("dwell_minutes", "must be a number of minutes within 0...1440, got \(describe(value))")
                }
                dwellMinutes = minutes
            }
            return .place(name: name, category: RecordName(category), dwellMinutes: dwellMinutes)
        case .stations:
            let name = try nonEmptyString(object, "name")
            return .station(name: name, lines: try lines(object["lines"]))
        case .points:
            return .point
        }
    }

    private func nonEmptyString(_ object: some RecordFieldValues, _ field: String) throws(EngineError) -> String {
        guard let value = object[field] else { throw error(field, "is missing") }
        guard let string = value.stringValue, !string.isEmpty else {
            throw error(field, "must be a non-empty string, got \(describe(value))")
        }
        return string
    }

    private func count(_ value: JSONValue?) throws(EngineError) -> Int {
        guard let value else { throw error("count", "is missing") }
        guard let count = value.intValue, count >= 1 else {
            // An integer beyond Int's range is too large, not too small.
            if let number = value.doubleValue, number.rounded() == number, number > Double(LayerRecord.maxSightingCount) {
                throw error("count", "must be an integer <= \(LayerRecord.maxSightingCount), got \(describe(value))")
            }
            throw error("count", "must be an integer >= 1, got \(describe(value))")
        }
        guard count <= LayerRecord.maxSightingCount else {
            throw error("count", "must be an integer <= \(LayerRecord.maxSightingCount), got \(describe(value))")
        }
        return count
    }

    private func lines(_ value: JSONValue?) throws(EngineError) -> [String] {
        guard let value else { throw error("lines", "is missing") }
        guard let elements = value.arrayValue, !elements.isEmpty else {
            throw error("lines", "must be a non-empty array of non-empty strings, got \(describe(value))")
        }
        var lines: [String] = []
        lines.reserveCapacity(elements.count)
        for (position, element) in elements.enumerated() {
            guard let line = element.stringValue, !line.isEmpty else {
                throw error("lines", "element \(position) must be a non-empty string, got \(describe(element))")
            }
            lines.append(line)
        }
        return lines
    }

    // MARK: Free-form members and the built feature

    func optionalObject(_ value: JSONValue?, field: String) throws(EngineError) -> JSONObject? {
        guard let value, value != .null else { return nil }
        guard let object = value.objectValue else {
            throw error(field, "must be an object or null, got \(describe(value))")
        }
        return object
    }

    /// The Feature for a flat record: kind fields as given, then the free-form members.
    func feature(flat object: JSONObject, kindFields: [String], freeForm: JSONObject?,
                 id: JSONValue) throws(EngineError) -> JSONValue {
        var properties = JSONObject()
        properties.reserveCapacity(kindFields.count + (freeForm?.count ?? 0))
        for name in kindFields {
            if let value = object[name], value != .null { properties[name] = value }
        }
        for (key, value) in freeForm ?? JSONObject() {
            guard !kindFields.contains(key) else {
                throw error("properties.\(key)", "has the name of a field of the record; give it another name")
            }
            properties[key] = value
        }
        var feature: JSONObject = ["type": "Feature"]
        if id != .null { feature["id"] = id }
        feature["geometry"] = ["type": "Point", "coordinates": [object["lon"] ?? .null, object["lat"] ?? .null]]
        feature["properties"] = .object(properties)
        return .object(feature)
    }
}

extension LayerRecord {
    /// What a Point's `coordinates` must be, for error messages.
    static let positionRule = "[lon, lat] or [lon, lat, altitude] numbers"

    /// The longitude and latitude of a GeoJSON Point geometry whose `coordinates` follow
    /// ``positionRule``; nil otherwise. Ranges are checked by the caller. The one rule for
    /// positions of radius layers' features and live layers' records alike.
    static func position(ofPoint geometry: JSONValue) -> (longitude: Double, latitude: Double)? {
        guard let pair = geometry["coordinates"]?.arrayValue, pair.count == 2 || pair.count == 3,
              let longitude = pair[0].doubleValue, let latitude = pair[1].doubleValue,
              pair.count == 2 || pair[2].doubleValue != nil else { return nil }
        return (longitude, latitude)
    }
}

extension LayerRecord {
    /// Cells per degree of the grid that sightings of sensitive species are generalised
    /// to: 0.1 degree, about 11 km north-south and 9 km east-west in Korea.
    public static let generalizationCellsPerDegree = 10.0

    /// The record as it is shown to others when its species is sensitive: its position
    /// is the centre of its 0.1-degree grid cell, in the index and in the feature's
    /// geometry (altitude dropped), and its properties say so with
    /// `"position_generalized_deg": 0.1`. Every query gets the same cell, so no averaging
    /// over answers brings back the point. The record as written is what the store keeps,
    /// and what its owner reads by id (``ownerFeatureText``).
    func generalized() -> LayerRecord {
        let cells = Self.generalizationCellsPerDegree
        let shown = Self.generalized(coordinate)
        guard case var .object(feature) = feature else { return self }
        var properties = feature["properties"]?.objectValue ?? JSONObject()
        properties["position_generalized_deg"] = .number(1 / cells)
        feature["properties"] = .object(properties)
        feature["geometry"] = ["type": "Point", "coordinates": [.number(shown.longitude), .number(shown.latitude)]]
        return LayerRecord(idKey: idKey, coordinate: shown, fields: fields,
                           featureText: Self.text(.object(feature))[...], observer: observer, hasNote: hasNote,
                           writtenText: ownerFeatureText ?? featureText)
    }

    /// The sighting as written with `observer_id` set to `observer` and the `note` of its
    /// properties set to `note`, where given: an upsert keeps what the sighting it replaces
    /// had and it does not name (``LiveLayerStore``). Any other record is returned as it is.
    func keeping(observer: String?, note: JSONValue?, layer: String, index: Int) throws(EngineError) -> LayerRecord {
        guard case .sighting = fields, observer != nil || note != nil,
              case var .object(feature) = JSONValue(encodedText: (ownerFeatureText ?? featureText)[...]) else { return self }
        var properties = feature["properties"]?.objectValue ?? JSONObject()
        if let observer { properties["observer_id"] = .string(observer) }
        if let note { properties["note"] = note }
        feature["properties"] = .object(properties)
        return try LayerRecord(json: .object(feature), kind: .sightings, layer: layer, index: index)
    }

    /// The `note` of the sighting's properties as written (a layer's record withholds it
    /// from answers, and keeps it in ``ownerFeatureText``), `nil` when it has none.
    var writtenNote: JSONValue? {
        guard let written = ownerFeatureText ?? (hasNote ? featureText : nil) else { return nil }
        return JSONValue(encodedText: written[...])["properties"]?["note"]
    }

    /// The centre of the grid cell that a sensitive sighting at `coordinate` is shown at
    /// (``generalized()``).
    static func generalized(_ coordinate: Coordinate) -> Coordinate {
        let cells = generalizationCellsPerDegree
        func centre(_ degrees: Double, limit: Double) -> Double {
            let cell = (degrees * cells).rounded(.down)
            return Swift.min(limit, Swift.max(-limit, (cell + 0.5) / cells))
        }
        return Coordinate(longitude: centre(coordinate.longitude, limit: 180),
                          latitude: centre(coordinate.latitude, limit: 90))
    }

    /// The record without the `note` of its properties in answers (any JSON value; a
    /// free-form member, so records stored before it was withheld load as they are): a
    /// sighting's note is the observer's own,
    /// read back by id only with the owner's key or an admin key (``ownerFeatureText``);
    /// the store keeps it as written. The record itself when it has no note.
    func withholdingNote() -> LayerRecord {
        guard hasNote, case var .object(feature) = feature,
              case var .object(properties) = feature["properties"] ?? .null else { return self }
        properties["note"] = nil
        feature["properties"] = .object(properties)
        return LayerRecord(idKey: idKey, coordinate: coordinate, fields: fields,
                           featureText: Self.text(.object(feature))[...], observer: observer, hasNote: false,
                           writtenText: ownerFeatureText ?? featureText)
    }

    /// - Parameter writtenText: the feature as written, when `featureText` shows it
    ///   otherwise (``ownerFeatureText``).
    init(idKey: String, coordinate: Coordinate, fields: RecordFields, featureText: ArraySlice<UInt8>,
         observerID: String?, hasNote: Bool, writtenText: [UInt8]? = nil) {
        self.init(idKey: idKey, coordinate: coordinate, fields: fields, featureText: featureText,
                  observer: SharedName(observerID), hasNote: hasNote, writtenText: writtenText)
    }

    /// The same with the observer's number: a record made from another keeps it without
    /// reading its name back and looking it up again.
    private init(idKey: String, coordinate: Coordinate, fields: RecordFields, featureText: ArraySlice<UInt8>,
                 observer: SharedName, hasNote: Bool, writtenText: [UInt8]?) {
        self.idKey = idKey
        self.coordinate = coordinate
        self.fields = fields
        let shown = FeatureText(featureText, names: Self.textNames(idKey, fields, observer: observer))
        texts = writtenText.map { .shownAndWritten(ShownAndWrittenText(shown: shown, written: $0)) } ?? .shown(shown)
        self.observer = observer
        self.hasNote = hasNote
    }
}

/// A record's feature text, with its text as written when answers show it otherwise
/// (``LayerRecord/ownerFeatureText``): a reference or an array, so one word.
private enum Texts: Sendable, Equatable {
    case shown(FeatureText)
    case shownAndWritten(ShownAndWrittenText)
}

/// The texts of a record that answers show otherwise than written.
private final class ShownAndWrittenText: Sendable, Equatable {
    let shown: FeatureText
    let written: [UInt8]

    init(shown: FeatureText, written: [UInt8]) {
        self.shown = shown
        self.written = written
    }

    static func == (lhs: ShownAndWrittenText, rhs: ShownAndWrittenText) -> Bool {
        lhs.shown == rhs.shown && lhs.written == rhs.written
    }
}
