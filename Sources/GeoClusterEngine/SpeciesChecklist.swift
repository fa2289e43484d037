import GeoCluster
import GeoClusterWire

/// The species a sightings layer knows, each by its scientific, Korean and English name,
/// so that filters and writes may name a species in any of them.
///
/// Names compare as the apps' users type them: Latin-script names without case, spaces,
/// hyphens or apostrophes (`red-crowned crane` is `Red-crowned Crane`), Korean names without
/// spaces. Records store the scientific name.
public struct SpeciesChecklist: Sendable, Equatable {
    public struct Species: Sendable, Equatable {
        public var scientific: String
        public var korean: String
        public var english: String

        public init(scientific: String, korean: String, english: String) {
            self.scientific = scientific
            self.korean = korean
            self.english = english
        }
    }

    public let species: [Species]
    /// Every name's key, to the scientific name.
    private let byKey: [String: String]

    /// Fails when two species answer to the same name.
    public init(_ species: [Species]) throws(EngineError) {
        var byKey: [String: String] = [:]
        for entry in species {
            for name in [entry.scientific, entry.korean, entry.english] {
                let key = Self.key(name)
                guard !key.isEmpty else {
                    throw .invalidLayerSource(path: "species checklist", reason: "\(entry.scientific) has an empty name")
                }
                if let other = byKey[key], other != entry.scientific {
                    throw .invalidLayerSource(path: "species checklist",
                                              reason: "\"\(name)\" names both \(other) and \(entry.scientific)")
                }
                byKey[key] = entry.scientific
            }
        }
        self.species = species
        self.byKey = byKey
    }

    /// Reads `{"species": [{"scientific", "ko", "en"}, …]}`.
    init(json: JSONValue, path: String) throws(EngineError) {
        guard let items = json["species"]?.arrayValue else {
            throw .invalidLayerSource(path: path, reason: "expected {\"species\": [...]}")
        }
        var species: [Species] = []
        for (i, item) in items.enumerated() {
            guard let scientific = item["scientific"]?.stringValue, let korean = item["ko"]?.stringValue,
                  let english = item["en"]?.stringValue else {
                throw .invalidLayerSource(path: path, reason: "species[\(i)] needs \"scientific\", \"ko\" and \"en\" strings")
            }
            species.append(Species(scientific: scientific, korean: korean, english: english))
        }
        do {
            try self.init(species)
        } catch {
            throw .invalidLayerSource(path: path, reason: error.description)
        }
    }

    /// The scientific name of the species with this name, if the checklist has it.
    public func scientificName(_ name: String) -> String? {
        byKey[Self.key(name)]
    }

    /// The species by its scientific name.
    public func entry(scientific: String) -> Species? {
        species.first { $0.scientific == scientific }
    }

    static func key(_ name: String) -> String { NameKey.of(name) }

    /// A sighting (flat record or GeoJSON Feature) whose species is given by any name of
    /// the checklist, with the scientific name in its place; `unknown_species` (naming
    /// `records[index].species`) for a name the checklist does not have. Other mistakes
    /// are left for the record's own checks. What writes and imports apply.
    public func namingScientifically(_ json: JSONValue, layer: String, index: Int) throws(EngineError) -> JSONValue {
        guard var object = json.objectValue else { return json }
        if let name = object["species"]?.stringValue {
            guard let scientific = scientificName(name) else {
                throw .unknownSpecies(field: "records[\(index)].species", layer: layer, name: name)
            }
            if scientific != name { object["species"] = .string(scientific) }
        } else if var properties = object["properties"]?.objectValue, let name = properties["species"]?.stringValue {
            guard let scientific = scientificName(name) else {
                throw .unknownSpecies(field: "records[\(index)].species", layer: layer, name: name)
            }
            if scientific != name {
                properties["species"] = .string(scientific)
                object["properties"] = .object(properties)
            }
        }
        return .object(object)
    }
}
