import Foundation
import Testing
@testable import GeoCluster
@testable import GeoClusterEngine
import GeoClusterTestSupport

struct LayerCatalogTests {
    /// <package>/Data, where `make run` finds its layers.
    static let dataDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Data").path

    @Test func theShippedSampleLayersLoad() throws {
        let layers = try LayerCatalog.load(directory: Self.dataDirectory)
        #expect(layers.map(\.name) == ["sightings", "places", "stations", "kr_cities", "helsinki_places", "helsinki_stations"])
        #expect(layers.map(\.kind) == [.sightings, .places, .stations, .places, .places, .stations])
        for layer in layers {
            guard case let .live(store) = layer else {
                Issue.record("\(layer.name) should be a live layer")
                continue
            }
            #expect(store.layer.count > 0)
            let bounds = try #require(store.layer.index.bounds)
            if layer.name.hasPrefix("helsinki_") {
                #expect(bounds[0] > 24.9 && bounds[2] < 25 && bounds[1] > 60.1 && bounds[3] < 60.2, "\(layer.name) lies in central Helsinki")
            } else {
                #expect(bounds[0] > 124 && bounds[2] < 132 && bounds[1] > 33 && bounds[3] < 39, "\(layer.name) lies in Korea")
            }
        }
        let engine = try Engine(entries: layers)
        let clusters = try engine.execute(.clusters(layer: "sightings", bbox: BoundingBox([124, 33, 132, 39]), zoom: 5))
        let total = clusters["features"]?.arrayValue?.reduce(0) { $0 + ($1["properties"]?["point_count"]?.intValue ?? 1) }
        #expect(total == layers[0].pointCount)
    }

    /// Each layer's licence and attribution from layers.json are in its summary, and stay
    /// there through writes.
    @Test func summariesCarryTheLayersCredit() throws {
        let engine = try Engine(entries: try LayerCatalog.load(directory: Self.dataDirectory))
        let layers = try engine.execute(.layers)["layers"]?.arrayValue ?? []
        let cities = try #require(layers.first { $0["name"] == "kr_cities" })
        #expect(cities["license"] == "CC-BY-4.0" && cities["attribution"] == "GeoNames, geonames.org")
        let helsinki = try #require(layers.first { $0["name"] == "helsinki_places" })
        #expect(helsinki["attribution"] == "© OpenStreetMap contributors")
        _ = try engine.execute(.write(layer: "places", batch: .delete(ids: [.string("seoul-s01")])))
        #expect(try engine.execute(.stats(layer: "places"))["attribution"] == "geo-cluster sample data")
        #expect(try LayerCatalog.load(file: Self.dataDirectory + "/places.geojson", name: "p", kind: .places).summary["license"] == nil)
    }

    @Test func manifestErrorsNameTheFileAndTheEntry() throws {
        let directory = try TemporaryDirectory.make("catalog")
        let manifest = directory.appendingPathComponent("layers.json")
        try #"{"layers":[{"name":"a","kind":"birds","file":"a.geojson"}]}"#.write(to: manifest, atomically: true, encoding: .utf8)
        #expect(throws: EngineError.invalidLayerSource(path: "\(directory.path)/layers.json, layers[0]",
                                                       reason: "unknown kind \"birds\" (known: sightings, places, stations, points)")) {
            try LayerCatalog.load(directory: directory.path)
        }
        try #"{"layers":[{"name":"a","file":"missing.geojson","options":{"radius":-1}}]}"#.write(to: manifest, atomically: true, encoding: .utf8)
        #expect(throws: EngineError.self) { try LayerCatalog.load(directory: directory.path) }
        try #"{"layers":[{"name":"a","file":"missing.geojson"}]}"#.write(to: manifest, atomically: true, encoding: .utf8)
        #expect(throws: EngineError.invalidLayerSource(path: "\(directory.path)/missing.geojson", reason: "cannot be read")) {
            try LayerCatalog.load(directory: directory.path)
        }
    }

    /// `kept_items` sets how many items a live layer's kept groups may hold: the index
    /// takes it as its budget, the layer's summary shows it; the radius algorithm, a
    /// number that is not an integer and one out of range are refused, naming the entry.
    @Test func keptItemsSetTheKeptGroupsBudget() throws {
        let directory = try TemporaryDirectory.make("catalog")
        let feature = #"{"type":"Feature","id":"p1","properties":{"name":"A","category":"cafe"},"geometry":{"type":"Point","coordinates":[127,37.5]}}"#
        try #"{"type":"FeatureCollection","features":[\#(feature)]}"#
            .write(to: directory.appendingPathComponent("a.geojson"), atomically: true, encoding: .utf8)
        let manifest = directory.appendingPathComponent("layers.json")
        func write(_ options: String, kind: String = "places") throws {
            try #"{"layers":[{"name":"a","kind":"\#(kind)","file":"a.geojson","options":\#(options)}]}"#
                .write(to: manifest, atomically: true, encoding: .utf8)
        }
        try write(#"{"radius":60,"kept_items":2000000}"#)
        let layers = try LayerCatalog.load(directory: directory.path)
        guard case let .live(store) = try #require(layers.first) else {
            Issue.record("a places layer is live")
            return
        }
        #expect(store.layer.index.options.keptItems == 2_000_000)
        #expect(store.layer.index.keptBudget == 2_000_000)
        #expect(store.layer.summary["options"]?["kept_items"] == 2_000_000)
        try write(#"{"radius":60}"#)
        guard case let .live(plain) = try #require(try LayerCatalog.load(directory: directory.path).first) else { return }
        #expect(plain.layer.index.keptBudget == 65_536)
        #expect(plain.layer.summary["options"]?["kept_items"] == nil)

        let place = "\(directory.path)/layers.json, layers[0]"
        for (options, kind, reason) in [
            (#"{"kept_items":2000000}"#, "points", #"option "kept_items" applies to the live algorithm"#),
            (#"{"kept_items":100000.5}"#, "places", #"option "kept_items" must be an integer"#),
            (#"{"kept_items":"many"}"#, "places", #"option "kept_items" must be an integer"#),
            (#"{"kept_items":1000}"#, "places", "invalid options: kept_items must be within 65536...4294967296, got 1000"),
        ] {
            try write(options, kind: kind)
            #expect(throws: EngineError.invalidLayerSource(path: place, reason: reason), "\(options)") {
                try LayerCatalog.load(directory: directory.path)
            }
        }
    }

    /// A layer file that is not a whole FeatureCollection, or holds a feature that is not
    /// JSON, is refused, naming the file; a good one loads as either algorithm.
    @Test func layerFilesAreCheckedWhole() throws {
        let directory = try TemporaryDirectory.make("catalog")
        let file = directory.appendingPathComponent("a.geojson")
        let good = #"{"type":"Feature","id":"p1","properties":{"name":"A","category":"cafe"},"geometry":{"type":"Point","coordinates":[127,37.5]}}"#
        for algorithm in [LayerCatalog.Algorithm.live, .radius] {
            let second = good.replacingOccurrences(of: "p1", with: "q1")
            try #"{"type":"FeatureCollection","features":[\#(good),\#(second)]}"#
                .write(to: file, atomically: true, encoding: .utf8)
            let layer = try LayerCatalog.load(file: file.path, name: "a", kind: .places, algorithm: algorithm)
            #expect(layer.pointCount == 2)
            for bad in [#"{"type":"FeatureCollection","features":[\#(good),{"type":"Feature",,}]}"#,
                        #"{"type":"FeatureCollection","features":[\#(good)"#, #"{"type":"Feature"}"#] {
                try bad.write(to: file, atomically: true, encoding: .utf8)
                do {
                    _ = try LayerCatalog.load(file: file.path, name: "a", kind: .places, algorithm: algorithm)
                    Issue.record("loaded \(bad)")
                } catch {
                    guard case let .invalidLayerSource(path, _) = error else { Issue.record("\(error)"); continue }
                    #expect(path == file.path)
                }
            }
        }
    }
}
