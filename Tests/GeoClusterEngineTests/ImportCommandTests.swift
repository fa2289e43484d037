import Foundation
import Testing
import GeoCluster
import GeoClusterTestSupport
@testable import GeoClusterEngine

/// Runs `geo-cluster import` as a user would, then loads what it wrote.
@Suite(.serialized)
struct ImportCommandTests {
    static func temporaryDirectory() throws -> URL {
        try TemporaryDirectory.make("geo-cluster-import")
    }

    private func run(_ arguments: [String]) throws -> (Int32, String, String) {
        try GeoClusterExecutable.run(arguments)
    }

    @Test func importsACSVInEPSG5186ThatServeAndQueryCanLoad() throws {
        let work = try Self.temporaryDirectory()
        let data = work.appendingPathComponent("data").path
        let csv = work.appendingPathComponent("stations.csv")
        // Seoul Station in EPSG:5186, and a second station 1 km east and 1 km north of it.
        let good = "\u{FEFF}code,E,N,name,lines,operator\r\n"
            + "seoul,197411.0256,550575.5461,\"Seoul, main\",KTX;Gyeongbu Line,Korail\r\n"
            + "east,198411.0256,551575.5461,East,KTX,\r\n"
        let bad = good + "east,198411.0256,551575.5461,East again,KTX,\r\n"
            + "north,197411.0256,nowhere,North,KTX,\r\n"
        let arguments = ["import", "--layer", "rail", "--kind", "stations", "--data", data, "--crs", "EPSG:5186",
                         "--id-column", "code", "--x-column", "E", "--y-column", "N", "--progress-every", "1", csv.path]

        try bad.write(to: csv, atomically: true, encoding: .utf8)
        let (failedStatus, failedOutput, failedErrors) = try run(arguments)
        #expect(failedStatus == 1)
        #expect(failedOutput.isEmpty)
        #expect(failedErrors.contains(#"line 4 (id "east"): field "id" (column "code"): duplicates the id of line 3"#))
        #expect(failedErrors.contains(#"line 5 (id "north"): field "y" (column "N"): must be a number in EPSG:5186, got "nowhere""#))
        #expect(failedErrors.contains("2 of 4 records are invalid; nothing was written"))
        #expect(!FileManager.default.fileExists(atPath: data), "nothing is written")

        try good.write(to: csv, atomically: true, encoding: .utf8)
        let (status, output, errors) = try run(arguments)
        #expect(status == 0, "\(errors)")
        #expect(output == "imported 2 records into layer \"rail\" (stations) at \(data)/rail.geojson\n")
        #expect(errors.contains("read 2 records, 0 invalid"), "plain progress lines when stderr is not a terminal")

        let layers = try LayerCatalog.load(directory: data)
        #expect(layers.map(\.name) == ["rail"])
        #expect(layers.map(\.kind) == [.stations])
        guard case let .live(store) = try #require(layers.first) else {
            Issue.record("an imported stations layer is live")
            return
        }
        let bounds = try #require(store.layer.index.bounds)
        #expect(abs(bounds[0] - 126.9707) < 1e-6 && abs(bounds[1] - 37.5547) < 1e-6)
        let engine = try Engine(entries: layers)
        let answer = try engine.execute(.clusters(layer: "rail", bbox: BoundingBox([126, 37, 128, 38]), zoom: 20))
        let names = answer["features"]?.arrayValue?.compactMap { $0["properties"]?["name"]?.stringValue }.sorted()
        #expect(names == ["East", "Seoul, main"])
    }

    /// Into a sightings layer that the manifest lists with a species checklist, species
    /// by any of their names are stored by their scientific name, and a species not on the
    /// checklist is an issue of its line, with nothing written.
    @Test func importIntoALayerWithAChecklistNamesSpeciesScientifically() throws {
        let work = try Self.temporaryDirectory()
        let data = work.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try #"{"species":[{"scientific":"Grus japonensis","ko":"두루미","en":"Red-crowned Crane"}]}"#
            .write(to: data.appendingPathComponent("species.json"), atomically: true, encoding: .utf8)
        try #"{"layers":[{"name":"birds","kind":"sightings","file":"birds.geojson","species_checklist":"species.json"}]}"#
            .write(to: data.appendingPathComponent("layers.json"), atomically: true, encoding: .utf8)
        try #"{"type":"FeatureCollection","features":[]}"#
            .write(to: data.appendingPathComponent("birds.geojson"), atomically: true, encoding: .utf8)
        let csv = work.appendingPathComponent("birds.csv")
        let arguments = ["import", "--layer", "birds", "--kind", "sightings", "--data", data.path, csv.path]

        try "id,lon,lat,species,count,observed_at\n"
            .appending("a,127,37.5,두루미,2,2025-01-05T07:00:00+09:00\n")
            .appending("b,127.1,37.5,Dodo,1,2025-01-05T07:00:00+09:00\n")
            .write(to: csv, atomically: true, encoding: .utf8)
        let (failed, _, failedErrors) = try run(arguments)
        #expect(failed == 1)
        #expect(failedErrors.contains(#"line 3 (id "b"): field "species": "Dodo" is not on the layer's species checklist"#),
                "\(failedErrors)")

        try "id,lon,lat,species,count,observed_at\n"
            .appending("a,127,37.5,두루미,2,2025-01-05T07:00:00+09:00\n")
            .appending("b,127.1,37.5,red-crowned crane,1,2025-01-05T07:00:00+09:00\n")
            .write(to: csv, atomically: true, encoding: .utf8)
        let (status, _, errors) = try run(arguments)
        #expect(status == 0, "\(errors)")
        let written = try String(contentsOf: data.appendingPathComponent("birds.geojson"), encoding: .utf8)
        #expect(written.components(separatedBy: #""species":"Grus japonensis""#).count == 3, "\(written)")
        #expect(!written.contains("두루미"))
    }

    @Test func badFlagsAreRefusedBeforeReading() throws {
        let work = try Self.temporaryDirectory()
        let (status, _, errors) = try run(["import", "--layer", "x", "--kind", "places", "--data", work.path,
                                           "--x-column", "E", "input.csv"])
        #expect(status != 0)
        #expect(errors.contains("need --crs"))
    }
}
