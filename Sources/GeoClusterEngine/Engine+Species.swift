import GeoCluster
import GeoClusterWire
import GeoReachability

/// The language species are named and ordered in (`lang`).
public enum NameLanguage: String, Sendable, CaseIterable {
    case ko, en

    static func read(_ fields: inout FieldReader) throws(EngineError) -> NameLanguage? {
        guard let tag = try fields.optionalString("lang") else { return nil }
        // A language tag as browsers and phones send it: ko, ko-KR, KO, ko_KR.
        guard let language = ReachabilityLanguage(tag: tag).flatMap({ NameLanguage(rawValue: $0.rawValue) }) else {
            throw .invalidField("lang", reason: "must be \"ko\" or \"en\" (a tag such as ko-KR), got \"\(tag.prefix(40))\"")
        }
        return language
    }
}

extension Engine {
    /// The `species` operation: every species of a sightings layer, for a species picker
    /// and to name the species of answers (which carry scientific names) in the app's
    /// language. With a checklist, each of its species with its scientific, Korean and
    /// English names, whether it has sightings or not; without one, the species the layer
    /// has sightings of. Each with `sightings` and `individuals` (sums of `count`), and
    /// `sensitive` when its sightings are shown generalised. With `lang`, each also has
    /// `name` in that language, and the list is in that name's order (Korean names in
    /// 가나다 order); otherwise in scientific order.
    func species(of name: String, language: NameLanguage?) throws(EngineError) -> JSONValue {
        let layer = try liveLayer(name, field: "layer", kind: .sightings)
        var entries: [(order: String, value: JSONObject)] = []
        func entry(scientific: String, korean: String?, english: String?) -> (String, JSONObject) {
            var object: JSONObject = ["scientific": .string(scientific)]
            if let korean { object["ko"] = .string(korean) }
            if let english { object["en"] = .string(english) }
            let shown = switch language {
            case .ko: korean ?? scientific
            case .en: english ?? scientific
            case nil: scientific
            }
            if language != nil { object["name"] = .string(shown) }
            let totals = layer.totals(ofSpecies: scientific)
            object["sightings"] = .number(Double(totals.count))
            object["individuals"] = .number(Double(totals.weight))
            if layer.sensitiveSpecies.contains(scientific) { object["sensitive"] = true }
            return (shown, object)
        }
        if let checklist = layer.speciesChecklist {
            for species in checklist.species {
                entries.append(entry(scientific: species.scientific, korean: species.korean, english: species.english))
            }
        } else {
            for scientific in layer.speciesNames {
                entries.append(entry(scientific: scientific, korean: nil, english: nil))
            }
        }
        entries.sort { $0.order != $1.order ? $0.order < $1.order : ($0.value["scientific"]?.stringValue ?? "") < ($1.value["scientific"]?.stringValue ?? "") }
        var result: JSONObject = ["layer": .string(name)]
        if let language { result["lang"] = .string(language.rawValue) }
        result["species"] = .array(entries.map { .object($0.value) })
        return .object(result)
    }
}

extension LiveLayer {
    /// Sightings and individuals of one species (by scientific name) in this version.
    func totals(ofSpecies scientific: String) -> (count: Int, weight: Int) {
        guard let partition = partitionNumbers[scientific] else { return (0, 0) }
        return index.totals(ofPartition: partition) ?? (0, 0)
    }

    /// The species the layer has held sightings of, by scientific name.
    var speciesNames: [String] { kind == .sightings ? partitionNames : [] }
}
