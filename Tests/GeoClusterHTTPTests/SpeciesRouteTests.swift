import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// `GET /v1/layers/{layer}/species` over the sample layers: the checklist's species with
/// their names and totals, named and ordered in the language asked.
struct SpeciesRouteTests {
    @Test func speciesAreNamedAndOrderedInTheLanguageAsked() async throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: ViewerPageTests.dataDirectory))
        try await withAPI(engine: engine) { client in
            let korean = try await client.get("/v1/layers/sightings/species?lang=ko")
            #expect(korean.status == .ok)
            #expect(korean.headers[.vary]?.contains("Accept-Language") == true)
            let species = try #require(try korean.json["species"]?.arrayValue)
            let names = species.compactMap { $0["name"]?.stringValue }
            #expect(names.count == species.count && !names.isEmpty)
            #expect(names == names.sorted(), "가나다 order")
            #expect(names.allSatisfy { $0.unicodeScalars.first.map { (0xAC00...0xD7A3).contains($0.value) } ?? false })
            // Totals are the layer's: they add up to its count.
            let sightings = species.compactMap { $0["sightings"]?.intValue }.reduce(0, +)
            #expect(sightings == (try await client.get("/v1/layers/sightings").json["count"]?.intValue))
            // The sample's sensitive species say so, and only they.
            let sensitive = Set(species.filter { $0["sensitive"] == true }.compactMap { $0["scientific"]?.stringValue })
            #expect(sensitive == ["Calidris pygmaea", "Haliaeetus pelagicus"])

            // Accept-Language picks the language when the query does not.
            let english = try await client.get("/v1/layers/sightings/species", [.acceptLanguage: "en-GB, ko;q=0.5"])
            #expect(try english.json["lang"] == "en")
            let crane = try english.json["species"]?.arrayValue?.first { $0["scientific"] == "Grus japonensis" }
            #expect(crane?["name"] == "Red-crowned Crane" && crane?["ko"] == "두루미")

            #expect(try await client.get("/v1/layers/places/species").status == .badRequest)
            #expect(try await client.get("/v1/layers/sightings/species?lang=fr").status == .badRequest)
        }
    }
}
