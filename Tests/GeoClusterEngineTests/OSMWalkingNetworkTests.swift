import Foundation
import Testing
import GeoCluster
import GeoClusterWire
import GeoProjection
import GeoReachability
import GeoClusterTestSupport
@testable import GeoClusterEngine

/// Walking networks from OpenStreetMap: the walkability rules, the graph built from
/// osmium's OPL, and real extracts (Seoul's Yeouido and central Helsinki) read from
/// ../shared, skipped with the reason printed when absent.
struct OSMWalkingNetworkTests {
    /// Every rule, with a case that keeps a way and one that drops it.
    @Test(arguments: [
        (["highway": "residential"], true),
        (["highway": "footway"], true),
        (["highway": "steps"], true),
        (["highway": "trunk"], true),
        (["highway": "cycleway"], true),
        (["highway": "cycleway", "foot": "no"], false),
        (["highway": "motorway"], false),
        (["highway": "motorway_link", "foot": "yes"], false),
        (["highway": "construction"], false),
        (["highway": "proposed"], false),
        (["highway": "bus_stop"], false),
        (["building": "yes"], false),
        (["railway": "platform"], true),
        (["public_transport": "platform", "area": "yes"], true),
        (["railway": "rail"], false),
        (["highway": "primary", "foot": "no"], false),
        (["highway": "primary", "foot": "use_sidepath"], false),
        (["highway": "service", "access": "private"], false),
        (["highway": "service", "access": "no", "foot": "yes"], true),
        (["highway": "service", "access": "private", "foot": "designated"], true),
        (["highway": "trunk", "motorroad": "yes"], false),
        (["highway": "service", "tunnel": "yes"], false),
        (["highway": "secondary", "tunnel": "building_passage"], true),
        (["highway": "footway", "tunnel": "yes"], true),
        (["highway": "steps", "tunnel": "yes"], true),
        (["highway": "pedestrian", "area": "yes"], true),
        (["highway": "service", "area": "yes"], false),
    ])
    func walkability(tags: [String: String], walkable: Bool) {
        #expect(OSMWalkingNetwork.isWalkable(tags) == walkable, "\(tags)")
    }

    /// A small network as OPL: a street with a footway off it, a motorway crossing that
    /// is not walked, a loop, a segment mapped twice, a way cut by the extract's edge and
    /// an island of its own.
    static let opl = """
        n1 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x126.9000000 y37.5000000
        n2 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x126.9010000 y37.5000000
        n3 v1 dV c0 t2024-01-01T00:00:00Z i0 u Thighway=crossing x126.9020000 y37.5000000
        n4 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x126.9010000 y37.5010000
        n5 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x126.9030000 y37.5000000
        n6 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x126.9500000 y37.5500000
        n7 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x126.9501000 y37.5500000
        n8 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x126.9010000 y37.4990000
        n9 v1 dV c0 t2024-01-01T00:00:00Z i0 u T x y
        w10 v1 dV c0 t2024-01-01T00:00:00Z i0 u Thighway=residential,name=%c5ec%%c758%%b300%%b85c% Nn1,n2,n3
        w11 v1 dV c0 t2024-01-01T00:00:00Z i0 u Thighway=footway Nn2,n4,n4
        w12 v1 dV c0 t2024-01-01T00:00:00Z i0 u Thighway=motorway Nn3,n5
        w13 v1 dV c0 t2024-01-01T00:00:00Z i0 u Thighway=service Nn2,n1
        w14 v1 dV c0 t2024-01-01T00:00:00Z i0 u Thighway=footway Nn6,n7
        w15 v1 dV c0 t2024-01-01T00:00:00Z i0 u Thighway=steps Nn2,n8,n9,n99
        r16 v1 dV c0 t2024-01-01T00:00:00Z i0 u Ttype=route Mw10@
        """

    static func check(_ network: OSMWalkingNetwork) throws {
        #expect(network.nodes.map(\.id) == [1, 2, 3, 4, 8])
        #expect(network.edges.map { [$0.from, $0.to] } == [[0, 1], [1, 2], [1, 3], [1, 4]])
        let r = network.report
        #expect(r.walkableWays == 5 && r.waysRead == 6 && r.nodesRead == 9)
        #expect(r.segmentsWithMissingNodes == 2)
        #expect(r.components == 2 && r.nodesOutsideLargestComponent == 2)
        for edge in network.edges {
            let a = network.nodes[edge.from], b = network.nodes[edge.to]
            let geodesic = Geodesic.wgs84.distanceMeters(
                from: GeographicPoint(longitudeDegrees: a.longitude, latitudeDegrees: a.latitude),
                to: GeographicPoint(longitudeDegrees: b.longitude, latitudeDegrees: b.latitude))
            #expect(edge.lengthMeters >= geodesic && edge.lengthMeters < geodesic + 0.01)
        }
        // 0.001 degrees of longitude at 37.5 N is about 88.4 m.
        #expect(abs(network.edges[0].lengthMeters - 88.4) < 0.2)
        // The document is one WalkingNetwork reads.
        let walking = try WalkingNetwork(json: network.document(description: "test", source: "test"))
        #expect(walking.nodeCount == 5 && walking.edgeCount == 4 && walking._checkInvariants())
    }

    @Test func theGraphFromOPL() throws {
        var network = OSMWalkingNetwork()
        for line in Self.opl.split(separator: "\n") { try network.read(line: line) }
        network.finish()
        try Self.check(network)
        #expect(OSMWalkingNetwork.tags("highway=residential,name=%c5ec%%c758%%b300%%b85c%,x=a%2c%b")
                == ["highway": "residential", "name": "여의대로", "x": "a,b"])
        var bad = OSMWalkingNetwork()
        #expect(throws: EngineError.self) { try bad.read(line: "<?xml version='1.0'?>") }
    }

    /// The same through osmium, from OPL and from the PBF osmium writes of it; a truncated
    /// PBF is an error, and the command writes nothing then.
    @Test(.enabled(if: OSMInputs.osmium != nil, OSMInputs.noOsmium))
    func throughOsmium() throws {
        let directory = try TemporaryDirectory.make("osm")
        defer { try? FileManager.default.removeItem(at: directory) }
        let opl = directory.appendingPathComponent("small.opl").path
        try (Self.opl + "\n").write(toFile: opl, atomically: true, encoding: .utf8)
        try Self.check(try OSMWalkingNetwork.importing(opl))

        let pbf = directory.appendingPathComponent("small.osm.pbf").path
        let convert = Process()
        convert.executableURL = URL(fileURLWithPath: try #require(OSMInputs.osmium))
        convert.arguments = ["cat", "--no-progress", opl, "-o", pbf]
        try convert.run()
        convert.waitUntilExit()
        #expect(convert.terminationStatus == 0)
        try Self.check(try OSMWalkingNetwork.importing(pbf))

        let bytes = try Data(contentsOf: URL(fileURLWithPath: pbf))
        let truncated = directory.appendingPathComponent("truncated.osm.pbf").path
        try bytes.prefix(bytes.count * 2 / 3).write(to: URL(fileURLWithPath: truncated))
        do {
            _ = try OSMWalkingNetwork.importing(truncated)
            Issue.record("a truncated extract was read")
        } catch {
            #expect(error.description.contains("osmium could not read it"), "\(error)")
        }
        let output = directory.appendingPathComponent("net.json").path
        let run = try GeoClusterExecutable.run(["network", "import", "--input", truncated, "--output", output])
        #expect(run.status == 1)
        #expect(run.stderr.contains("osmium could not read it"))
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasSuffix(".tmp") })

        // Written into a data directory, the network is registered and loaded by name.
        let data = directory.appendingPathComponent("data").path
        let registered = try GeoClusterExecutable.run(["network", "import", "--input", pbf, "--data", data, "--name", "small"])
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(registered.stderr.contains("5 nodes, 4 edges"))
        let networks = try LayerCatalog.loadNetworks(directory: data)
        #expect(networks["small"]?.nodeCount == 5)

        #expect(throws: EngineError.self) { try OSMWalkingNetwork.importing("/nonexistent.osm.pbf") }
        #expect(throws: EngineError.self) { try OSMWalkingNetwork.importing(opl, osmium: "no-such-osmium") }
    }

    /// Seoul's Yeouido extract: one component, edges no shorter than the geodesic, and
    /// Yeouido station on it. Yeongdeungpo station is not: within 400 m of it the extract
    /// holds only three residential streets, and the pieces around it meet the rest only
    /// through streets the extract does not have (docs/REACHABILITY.md).
    @Test(.enabled(if: OSMInputs.osmium != nil, OSMInputs.noOsmium), .enabled(if: OSMInputs.has(OSMInputs.yeouido), OSMInputs.absent))
    func yeouido() throws {
        let network = try Self.walking(OSMInputs.yeouido)
        #expect(network.nodeCount > 1_500)
        #expect(Set(network.componentOfNode).count == 1)
        let yeouidoStation = network.nearestNode(to: Coordinate(longitude: 126.9241053, latitude: 37.5217071))
        #expect(yeouidoStation.distanceMeters < 100)
        let yeongdeungpo = network.nearestNode(to: Coordinate(longitude: 126.9072076, latitude: 37.5153957))
        #expect(yeongdeungpo.distanceMeters > 1_000)

        // reachable says so: Yeongdeungpo lies outside the network's bounds (an error that
        // says so), a point across the river inside them is off it, Yeouido on it.
        let stations = try [("yeouido", 126.9241053, 37.5217071), ("yeongdeungpo", 126.9072076, 37.5153957),
                            ("noryangjin-side", 126.956, 37.5175)]
            .enumerated().map { i, station in
                try LayerRecord(json: ["id": .string(station.0), "lon": .number(station.1), "lat": .number(station.2),
                                       "name": .string(station.0), "lines": ["1"]],
                                kind: .stations, layer: "stations", index: i)
            }
        let place = try LayerRecord(json: ["id": "p", "lon": 126.925, "lat": 37.522, "name": "P", "category": "cafe"],
                                    kind: .places, layer: "places", index: 0)
        let engine = try Engine(entries: [.live(LiveLayerStore(try LiveLayer(name: "stations", kind: .stations, records: stations))),
                                          .live(LiveLayerStore(try LiveLayer(name: "places", kind: .places, records: [place])))],
                                networks: ["yeouido_walk": network])
        let outside = engine.handle(["op": "reachable", "layer": "places", "station": "yeongdeungpo",
                                     "remaining_minutes": 60, "travel": "network"])
        guard case let .failure(error) = outside else { Issue.record("Yeongdeungpo is outside the network"); return }
        #expect(error.code == "unknown_network" && error.description.contains("no loaded walking network covers"))
        for (station, off) in [("yeouido", false), ("noryangjin-side", true)] {
            let answer = try engine.handle(["op": "reachable", "layer": "places", "station": .string(station),
                                            "remaining_minutes": 60, "travel": "network"]).get()
            #expect((answer["station_off_network"] == true) == off, "\(station)")
            #expect((answer["station_to_network_m"]?.doubleValue ?? -1) > (off ? 1_000 : 0))
        }
    }

    /// Central Helsinki, from the same OSM extract as Data/helsinki_walk.json: the railway
    /// station on the network, and about as large as the shipped network.
    @Test(.enabled(if: OSMInputs.osmium != nil, OSMInputs.noOsmium), .enabled(if: OSMInputs.has(OSMInputs.helsinki), OSMInputs.absent))
    func helsinki() throws {
        let network = try Self.walking(OSMInputs.helsinki)
        #expect((5_500...7_500).contains(network.nodeCount), "\(network.nodeCount)")
        let station = network.nearestNode(to: Coordinate(longitude: 24.9414566, latitude: 60.1713198))
        #expect(station.distanceMeters < 60)
    }


    /// The network of an extract, checked edge by edge and loaded as reachability loads it.
    static func walking(_ path: String) throws -> WalkingNetwork {
        let imported = try OSMWalkingNetwork.importing(path)
        for edge in imported.edges {
            let a = imported.nodes[edge.from], b = imported.nodes[edge.to]
            let geodesic = Geodesic.wgs84.distanceMeters(
                from: GeographicPoint(longitudeDegrees: a.longitude, latitudeDegrees: a.latitude),
                to: GeographicPoint(longitudeDegrees: b.longitude, latitudeDegrees: b.latitude))
            #expect(edge.lengthMeters >= geodesic)
        }
        let network = try WalkingNetwork(json: imported.document(description: "test", source: path))
        #expect(network._checkInvariants())
        return network
    }
}

/// osmium, and the OSM extracts of ../shared (read from there for tests only, never copied
/// into the repository).
enum OSMInputs {
    static let osmium: String? = {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        return directories.map { "\($0)/osmium" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static let noOsmium: Comment = "osmium is not installed; `make test` installs osmium-tool"
    static let absent: Comment = "the OSM extract is not in ../shared/data; it is read from there and never copied"

    static let shared = KorailStationReference.sharedRoot + "/data"
    static let yeouido = shared + "/osm_seoul_yeouido/yeouido.osm.pbf"
    static let helsinki = shared + "/osm_helsinki_central/helsinki.osm.pbf"

    static func has(_ path: String) -> Bool {
        let found = FileManager.default.fileExists(atPath: path)
        if !found { print("OSMWalkingNetworkTests: \(path) not found; skipped") }
        return found
    }
}
