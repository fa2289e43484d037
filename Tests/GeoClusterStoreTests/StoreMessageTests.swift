import Foundation
import Testing
import GeoClusterEngine
import GeoClusterStore

/// What a user reads when a store cannot serve: the reason, not a bare code.
struct StoreMessageTests {
    /// A layer imported into one store, started with another: the message says where the
    /// layer lives instead of only that its file cannot be read.
    @Test func aLayerInAnotherStoreSaysSo() throws {
        let directory = try StoreFixtures.directory()
        let spec = LayerCatalog.LayerSpec(name: "birds", kind: .sightings,
                                          path: directory.appendingPathComponent("birds.geojson").path)
        let first = try SQLiteJournal(path: directory.appendingPathComponent("a.sqlite").path)
        _ = try first.replaceLayer("birds", kind: .sightings, records: [])
        _ = try LayerCatalog.load(spec, journal: first)

        let second = try SQLiteJournal(path: directory.appendingPathComponent("b.sqlite").path)
        #expect {
            _ = try LayerCatalog.load(spec, journal: second)
        } throws: { error in
            let text = "\(error)"
            return text.contains("does not hold layer \"birds\"") && text.contains("b.sqlite")
                && text.contains("start with the --store it was imported into")
        }
    }

    /// An unreachable PostgreSQL says why it cannot be reached.
    @Test func anUnreachableDatabaseSaysWhy() throws {
        let port = try freePort()  // nothing listens there
        #expect {
            _ = try PostgresJournal(url: "postgres://geo@127.0.0.1:\(port)/nowhere")
        } throws: { error in
            let text = "\(error)"
            return text.contains("cannot reach the database") && text.contains("refused")
        }
    }
}
