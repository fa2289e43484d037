import Foundation
import GeoCluster

extension LayerCatalog {
    /// Loads a layer with a store (docs/STORAGE.md): the layer's kind, algorithm and options
    /// come from `spec`, its records from `journal`.
    ///
    /// - A layer the store holds is rebuilt from the store; its file is not read.
    /// - A live layer the store does not hold yet is seeded from its file, in one
    ///   transaction, and its writes go to the store from then on.
    /// - A radius layer (read-only) the store does not hold is loaded from its file and not
    ///   copied to the store; one written by `import` into the store is built from there.
    public static func load(_ spec: LayerSpec, journal: any LayerJournal) throws(EngineError) -> EngineLayer {
        try loadUndescribed(spec, journal: journal).described(spec.metadata)
    }

    private static func loadUndescribed(_ spec: LayerSpec, journal: any LayerJournal) throws(EngineError) -> EngineLayer {
        let options = spec.liveOptions
        func checkKind(_ kind: LayerKind) throws(EngineError) {
            guard kind == spec.kind else {
                throw .invalidLayerSource(path: spec.name, reason: "the store holds this layer as \(kind.rawValue), "
                                          + "the layer list says \(spec.kind.rawValue)")
            }
        }
        switch spec.algorithm {
        case .radius:
            if let stored = try journal.loadLayer(spec.name) {
                try checkKind(stored.kind)
                let features = try stored.records.map { (record) throws(EngineError) in try record.feature(layer: spec.name) }
                return .radius(try RadiusLayer(name: spec.name, kind: spec.kind, features: features,
                                               options: spec.options))
            }
        case .live:
            // Records are validated on the other cores while the store reads the rest.
            let reader = StoredRecordReader(kind: spec.kind, layer: spec.name)
            if let sequence = try journal.loadLayer(spec.name, kind: checkKind, records: reader.add) {
                var layer = try LiveLayer(name: spec.name, kind: spec.kind, records: try reader.records(),
                                          options: options, sensitiveSpecies: spec.sensitiveSpecies)
                layer.speciesChecklist = spec.speciesChecklist
                return .live(LiveLayerStore(layer, journal: journal, sequence: sequence))
            }
        }
        // Neither in this store nor as a file: `import --store` wrote it into another store.
        guard FileManager.default.fileExists(atPath: spec.path) else {
            throw .invalidLayerSource(path: spec.path, reason: """
                is missing, and the store \(journal.location) does not hold layer "\(spec.name)" either; \
                a layer imported with --store lives only in that store: start with the --store it was imported into
                """)
        }
        if spec.algorithm == .radius {
            return try load(file: spec.path, name: spec.name, kind: spec.kind, algorithm: .radius, options: spec.options)
        }
        let records = try records(inFile: spec.path, kind: spec.kind, layer: spec.name)
        var layer = try LiveLayer(name: spec.name, kind: spec.kind, records: records, options: options,
                                  sensitiveSpecies: spec.sensitiveSpecies)
        layer.speciesChecklist = spec.speciesChecklist
        guard let sequence = try journal.seedLayer(spec.name, kind: spec.kind, records: records.lazy.map(StoredRecord.init)) else {
            // Another process seeded it between the two calls: take what it stored.
            return try load(spec, journal: journal)
        }
        return .live(LiveLayerStore(layer, journal: journal, sequence: sequence))
    }
}
