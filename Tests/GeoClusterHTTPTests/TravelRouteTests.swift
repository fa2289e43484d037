import GeoCluster
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GeoClusterHTTP

/// The travel app's routes: a station by name, one place's details, answers in Korean.
struct TravelRouteTests {
    @Test func onePlaceIsReadByID() async throws {
        try await withAPI(engine: ReachableRouteTests.engine()) { client in
            let found = try await client.get("/v1/layers/places/points/near")
            #expect(found.status == .ok)
            #expect(found.contentType == "application/geo+json")
            #expect(found.headers[.eTag] != nil)
            let feature = try found.json
            #expect(feature["type"] == "Feature" && feature["id"] == "near")
            #expect(feature["properties"]?["category"] == "cafe")
            let byNumber = try await client.get("/v1/layers/stations/points/7")
            #expect(try byNumber.json["id"] == 7)
            let missing = try await client.get("/v1/layers/places/points/nope")
            #expect(missing.status == .notFound)
            #expect(try missing.json["error"]?["code"] == "unknown_id")
        }
    }

    /// Over HTTP too, a sensitive species' sighting is shown at its cell's centre: read
    /// by id, and in a clusters answer filtered by its Korean name.
    @Test func sensitiveSightingsAreGeneralisedOverHTTP() async throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: ViewerPageTests.dataDirectory))
        let sighting = try #require(try engine.execute(.clusters(layer: "sightings", bbox: .world, zoom: 20,
                                                                 filter: LayerFilter(species: ["Calidris pygmaea"])))["features"]?[0])
        let id = try #require(sighting["id"]?.stringValue)
        try await withAPI(engine: engine) { client in
            let record = try await client.get("/v1/layers/sightings/points/\(id)")
            let coordinates = try record.json["geometry"]?["coordinates"]?.arrayValue ?? []
            for degrees in coordinates.compactMap(\.doubleValue) {
                #expect(abs((degrees * 10 - 0.5) - (degrees * 10 - 0.5).rounded()) < 1e-9, "\(coordinates)")
            }
            #expect(try record.json["properties"]?["position_generalized_deg"] == 0.1)
            let clusters = try await client.get("/v1/layers/sightings/clusters?bbox=124,33,132,39&zoom=20&species=%EB%84%93%EC%A0%81%EB%B6%80%EB%A6%AC%EB%8F%84%EC%9A%94")
            let features = try clusters.json["features"]?.arrayValue ?? []
            #expect(features.count == 50)
            #expect(features.allSatisfy { $0["properties"]?["position_generalized_deg"] == 0.1 })
        }
    }

    /// The birding app's list of a cluster's sightings, newest first, over HTTP.
    @Test func leavesAreSortedByObservationTime() async throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: ViewerPageTests.dataDirectory))
        let cluster = try #require(try engine.execute(.clusters(layer: "sightings", bbox: .world, zoom: 3))["features"]?[0])
        let id = try #require(cluster["properties"]?["cluster_id"]?.intValue)
        try await withAPI(engine: engine) { client in
            let newest = try await client.get("/v1/layers/sightings/clusters/\(id)/leaves?sort=-observed_at&limit=5")
            let times = try (newest.json["features"]?.arrayValue ?? []).compactMap { $0["properties"]?["observed_at"]?.stringValue }
            #expect(times.count == 5)
            #expect(times.first?.hasPrefix("2025-12") == true, "\(times)")
            let wrong = try await client.get("/v1/layers/sightings/clusters/\(id)/leaves?sort=newest")
            #expect(wrong.status == .badRequest)
            #expect(try wrong.json["error"]?["field"] == "sort")

            // The sightings in a view, newest first (the `list` operation).
            let list = try await client.get("/v1/layers/sightings/points?bbox=126.6,37.6,126.8,37.8&sort=-observed_at&limit=3&species=%EB%91%90%EB%A3%A8%EB%AF%B8")
            #expect(list.status == .ok)
            #expect(list.contentType == "application/geo+json")
            let listed = try list.json
            #expect(listed["features"]?.arrayValue?.count == 3 && (listed["total"]?.intValue ?? 0) > 3)
            #expect(listed["features"]?[0]?["properties"]?["species"] == "Grus japonensis")
            let radius = try await client.get("/v1/layers/kr_cities/points?bbox=126,37,127,38&sort=-observed_at")
            #expect(radius.status == .badRequest)
        }
    }

    /// `top_by=individuals` over HTTP answers what the JSON line does, species ranked by
    /// individuals, each with its individuals.
    @Test func topSpeciesByIndividualsOverHTTP() async throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: ViewerPageTests.dataDirectory))
        try await withAPI(engine: engine) { client in
            let rest = try await client.get("/v1/layers/sightings/clusters?bbox=124,33,132,39&zoom=5&top_by=individuals")
            let line = #"{"op":"clusters","layer":"sightings","bbox":[124,33,132,39],"zoom":5,"top_by":"individuals"}"#
            let batch = try await client.post("/v1/query", line)
            #expect(rest.status == .ok)
            #expect(rest.text == (try batch.lines.first?["result"])?.jsonString)
            let top = try (rest.json["features"]?.arrayValue ?? []).compactMap { $0["properties"]?["top_species"]?.arrayValue }
            #expect(top.contains { $0.count > 1 })
            for ranked in top {
                let individuals = ranked.compactMap { $0["individuals"]?.intValue }
                #expect(individuals.count == ranked.count && individuals == individuals.sorted(by: >), "\(ranked)")
            }
            let wrong = try await client.get("/v1/layers/places/clusters?bbox=124,33,132,39&zoom=5&top_by=individuals")
            #expect(wrong.status == .badRequest)
            #expect(try wrong.json["error"]?["field"] == "top_by")
        }
    }

    @Test func stationsAreFoundByName() async throws {
        try await withAPI(engine: ReachableRouteTests.engine()) { client in
            let answer = try await client.get("/v1/stations?q=seoul%20station")
            #expect(answer.status == .ok)
            #expect(try answer.json["stations"]?[0]?["id"] == 7)
            let byName = try await client.get("/v1/reachable?layer=places&station=Seoul&remaining_minutes=60")
            #expect(try byName.json["station"]?["id"] == 7)
        }
    }

    @Test func acceptLanguagePicksKoreanUnlessTheQuerySaysOtherwise() async throws {
        try await withAPI(engine: ReachableRouteTests.engine()) { client in
            let uri = "/v1/reachable?layer=places&station=7&remaining_minutes=60"
            let korean = try await client.get(uri, [.acceptLanguage: "ko-KR,ko;q=0.9,en-US;q=0.8"])
            #expect(try korean.json["reason"]?.stringValue?.hasPrefix("출발까지 60분") == true)
            #expect(try korean.json["reachable"]?[0]?["category_label"] == "카페")
            #expect(korean.headers[.vary] == "Accept-Encoding, Accept-Language")
            let preferred = try await client.get(uri, [.acceptLanguage: "fr, en;q=0.9, ko;q=0.5"])
            #expect(try preferred.json["reason"]?.stringValue?.hasPrefix("60 minutes remain") == true)
            let refused = try await client.get(uri, [.acceptLanguage: "ko;q=0, en"])
            #expect(try refused.json["reason"]?.stringValue?.hasPrefix("60 minutes remain") == true)
            let query = try await client.get(uri + "&lang=en", [.acceptLanguage: "ko"])
            #expect(try query.json["reason"]?.stringValue?.hasPrefix("60 minutes remain") == true)
            let other = try await client.get("/v1/layers/places/nearby?lon=126.9707&lat=37.5547&k=1")
            #expect(other.headers[.vary] == "Accept-Encoding")
        }
    }

    @Test func preferredLanguageReadsQualities() {
        #expect(Endpoint.preferredLanguage("ko") == .korean)
        #expect(Endpoint.preferredLanguage("en-GB;q=0.4, ko-KR;q=0.6") == .korean)
        #expect(Endpoint.preferredLanguage("de, *") == nil)
        #expect(Endpoint.preferredLanguage("ko;q=abc, en;q=0.1") == .korean)
        #expect(Endpoint.preferredLanguage(";;;,,,=") == nil)
    }
}
