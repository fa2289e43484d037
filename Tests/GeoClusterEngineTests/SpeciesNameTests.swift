import Foundation
import Testing
@testable import GeoCluster
@testable import GeoClusterWire
@testable import GeoClusterEngine

/// Species by any name: a sightings layer with a checklist takes a species' scientific,
/// Korean or English name in filters and writes, stores the scientific one, and refuses
/// names it does not have.
struct SpeciesNameTests {
    static func engine() throws -> Engine {
        let checklist = try SpeciesChecklist([
            .init(scientific: "Grus japonensis", korean: "두루미", english: "Red-crowned Crane"),
            .init(scientific: "Grus monacha", korean: "흑두루미", english: "Hooded Crane"),
        ])
        let records = try [("a", "Grus japonensis", 127.0), ("b", "Grus monacha", 127.1), ("c", "Grus japonensis", 127.2)]
            .enumerated().map { i, row in
                try LayerRecord(json: ["id": .string(row.0), "lon": .number(row.2), "lat": 38.2, "species": .string(row.1),
                                       "count": 2, "observed_at": "2025-01-02T08:00:00+09:00"],
                                kind: .sightings, layer: "sightings", index: i)
            }
        var layer = try LiveLayer(name: "sightings", kind: .sightings, records: records)
        layer.speciesChecklist = checklist
        return try Engine(entries: [.live(LiveLayerStore(layer))])
    }

    static func count(_ engine: Engine, species: JSONValue) throws -> Int {
        let answer = try engine.handle(["op": "clusters", "layer": "sightings", "bbox": [-180, -85, 180, 85], "zoom": 20,
                                        "species": species]).get()
        return answer["features"]?.arrayValue?.count ?? -1
    }

    @Test func filtersTakeEveryNameOfASpecies() throws {
        let engine = try Self.engine()
        for name in ["두루미", "두 루 미", "Red-crowned Crane", "red crowned crane", "REDCROWNED-CRANE", "grus japonensis"] {
            #expect(try Self.count(engine, species: .string(name)) == 2, "\(name)")
        }
        #expect(try Self.count(engine, species: ["흑두루미", "Red-crowned Crane"]) == 3)
        if case let .failure(error) = engine.handle(["op": "clusters", "layer": "sightings", "bbox": [-180, -85, 180, 85],
                                                     "zoom": 3, "species": ["두루미", "펭귄"]]) {
            #expect(error.code == "unknown_species" && error.field == "species")
            #expect(error.description.contains("펭귄"))
        } else {
            Issue.record("a species the checklist does not have must be an error, not an empty answer")
        }
    }

    @Test func writesStoreTheScientificNameAndRefuseOthers() throws {
        let engine = try Self.engine()
        let inserted = engine.handle(["op": "insert", "layer": "sightings", "records": [
            ["id": "d", "lon": 127.3, "lat": 38.2, "species": "흑두루미", "count": 1, "observed_at": "2025-01-03T08:00:00+09:00"],
            ["type": "Feature", "id": "e", "geometry": ["type": "Point", "coordinates": [127.4, 38.2]],
             "properties": ["species": "hooded crane", "count": 1, "observed_at": "2025-01-03T08:00:00+09:00"]],
        ]])
        #expect(try inserted.get()["applied"] == 2)
        let stored = try engine.handle(["op": "get", "layer": "sightings", "ids": ["d", "e"]]).get()
        #expect(stored["features"]?.arrayValue?.map { $0["properties"]?["species"] } == ["Grus monacha", "Grus monacha"])
        #expect(try Self.count(engine, species: "Hooded Crane") == 3)

        // One unknown name refuses the whole batch.
        let refused = engine.handle(["op": "insert", "layer": "sightings", "records": [
            ["id": "f", "lon": 127.5, "lat": 38.2, "species": "두루미", "count": 1, "observed_at": "2025-01-03T08:00:00+09:00"],
            ["id": "g", "lon": 127.6, "lat": 38.2, "species": "Dodo", "count": 1, "observed_at": "2025-01-03T08:00:00+09:00"],
        ]])
        guard case let .failure(error) = refused else {
            Issue.record("a species the checklist does not have must be refused")
            return
        }
        #expect(error.code == "unknown_species" && error.field == "records[1].species")
        #expect(try Self.count(engine, species: "두루미") == 2)
    }

    @Test func aChecklistWithOneNameForTwoSpeciesIsRefused() {
        #expect(throws: EngineError.self) {
            try SpeciesChecklist([.init(scientific: "A a", korean: "새", english: "Bird"),
                                  .init(scientific: "B b", korean: "새", english: "Other bird")])
        }
    }

    @Test func theSampleChecklistNamesEverySampleSpecies() throws {
        let engine = try HelsinkiReachableTests.engine()
        for name in ["두루미", "Red-crowned Crane", "Grus japonensis", "넓적부리도요", "Spoon-billed Sandpiper"] {
            let answer = try engine.handle(["op": "clusters", "layer": "sightings", "bbox": [124, 33, 132, 39], "zoom": 3,
                                            "species": .string(name)]).get()
            let features = answer["features"]?.arrayValue ?? []
            #expect(features.count > 0, "\(name)")
        }
    }
}
