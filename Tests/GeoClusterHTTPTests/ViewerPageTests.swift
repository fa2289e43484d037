import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import GeoReachability
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import GeoClusterHTTP
import GeoClusterTestSupport

/// Chromium in headless mode, found on the PATH (`make test` installs Debian's package),
/// and Leaflet where Debian's libjs-leaflet puts it (`make run` and `make test` install it).
enum HeadlessBrowser {
    static let path: String? = {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }()

    static let hasLeaflet = FileManager.default.fileExists(atPath: ViewerAssets.defaultLeafletDirectory + "/leaflet.js")
    static let ready = path != nil && hasLeaflet
    static let missing = "chromium or libjs-leaflet is not installed; `make test` installs them"

    static let window = (width: 1000, height: 700)
}

/// The page `GET /` serves and the files it loads, and the page drawn by a real browser
/// against `geo-cluster serve` over the sample layers of Data/.
struct ViewerPageTests {
    static let landColor = (red: 0xF2, green: 0xEF, blue: 0xE9)
    static let seaColor = (red: 0xA9, green: 0xCB, blue: 0xE0)

    @Test func pageLoadsNothingFromElsewhere() async throws {
        try await withAPI { client in
            let page = try await client.get("/")
            #expect(page.status == .ok)
            #expect(page.contentType == "text/html; charset=utf-8")
            let policy = page.headers[.contentSecurityPolicy] ?? ""
            for directive in ["default-src 'none'", "script-src 'self' 'unsafe-inline'", "connect-src 'self'"] {
                #expect(policy.contains(directive), "\(directive)")
            }
            for reference in ["http://", "https://", "@import", "//cdn"] {
                #expect(!page.text.contains(reference), "\(reference)")
            }
            // Every file it names is one of ours, under /viewer/.
            for attribute in ["src=\"", "href=\""] {
                var rest = page.text[...]
                while let found = rest.range(of: attribute) {
                    let value = rest[found.upperBound...].prefix { $0 != "\"" }
                    #expect(value.hasPrefix("/viewer/"), "\(attribute)\(value)")
                    rest = rest[found.upperBound...]
                }
            }
            // Without Leaflet, the page says so rather than staying blank.
            #expect(page.text.contains("data-problem=\"the map library is not loaded\""))
            let head = try await client.execute(uri: "/", method: .head)
            #expect(head.status == .ok)
            let post = try await client.post("/", "")
            #expect(post.status == .methodNotAllowed)
        }
    }

    /// A two-edge network and a loop, for the streets file.
    static func tinyNetwork() throws -> WalkingNetwork {
        try WalkingNetwork(nodes: [Coordinate(longitude: 24.94, latitude: 60.17),
                                   Coordinate(longitude: 24.95, latitude: 60.17),
                                   Coordinate(longitude: 24.95, latitude: 60.18)],
                           edges: [.init(from: 0, to: 1, lengthMeters: 555), .init(from: 1, to: 2, lengthMeters: 1112),
                                   .init(from: 2, to: 2, lengthMeters: 0)])
    }

    @Test func viewerFilesAreServedWithTagsAndCompression() async throws {
        let directory = try TemporaryDirectory.make("viewer")
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = "/* leaflet */ " + String(repeating: "var a = 1; ", count: 400)
        try script.write(to: directory.appendingPathComponent("leaflet.js"), atomically: true, encoding: .utf8)
        try ".leaflet-container {}".write(to: directory.appendingPathComponent("leaflet.css"), atomically: true, encoding: .utf8)
        let basemap = #"{"type":"FeatureCollection","attribution":"test coast","features":[]}"#
        try basemap.write(to: directory.appendingPathComponent("basemap.geojson"), atomically: true, encoding: .utf8)
        let assets = try ViewerAssets(leafletDirectory: directory.path, dataDirectory: directory.path,
                                      networks: ["tiny": try Self.tinyNetwork()])
        let api = GeoClusterAPI(engine: try Sample.engine(), viewerAssets: assets)
        try await Application(router: api.makeRouter()).test(.router) { client in
            let leaflet = try await client.get("/viewer/leaflet.js")
            #expect(leaflet.status == .ok)
            #expect(leaflet.contentType == "text/javascript; charset=utf-8")
            #expect(leaflet.text == script)
            let tag = try #require(leaflet.headers[.eTag])
            let again = try await client.get("/viewer/leaflet.js", [.ifNoneMatch: tag])
            #expect(again.status == .notModified)
            let compressed = try await client.get("/viewer/leaflet.js", [.acceptEncoding: "gzip"])
            #expect(compressed.headers[.contentEncoding] == "gzip")
            #expect(compressed.body.readableBytes < script.utf8.count / 4)
            #expect(try await client.get("/viewer/leaflet.css").contentType == "text/css; charset=utf-8")
            #expect(try await client.get("/viewer/basemap.geojson").text == basemap)

            // The network's streets: each edge once as a two-point line, the loop left out.
            let streets = try await client.get("/viewer/streets-tiny.geojson").json
            let lines = try #require(streets["geometry"]?["coordinates"]?.arrayValue)
            #expect(lines.count == 2)
            #expect(lines.first == .array([.array([24.94, 60.17]), .array([24.95, 60.17])]))

            let missing = try await client.get("/viewer/leaflet.min.js")
            #expect(missing.status == .notFound)
            #expect(try missing.json["error"]?["code"] == "not_found")
            // With Leaflet present, the page has no problem to report.
            #expect(try await client.get("/").text.contains("data-problem=\"\""))
        }
        // A directory without Leaflet: the page names it and what installs it.
        let without = try ViewerAssets(leafletDirectory: directory.path + "/nothing", dataDirectory: nil, networks: [:])
        #expect(String(decoding: without.page, as: UTF8.self).contains("is not installed in \(directory.path)/nothing"))
        #expect(without.files.isEmpty)
    }

    static var dataDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Data").path
    }

    /// The sample server's JSON answers, read over a socket of their own.
    struct SampleClient: Sendable {
        let port: Int

        func get(_ target: String) throws -> JSONValue {
            let answer = try RawHTTP.exchange(port: port, RawHTTP.request("GET", target))
            try #require(answer.status == 200, "GET \(target): \(answer.status) \(answer.text.prefix(200))")
            return try JSONValue.parse(answer.body)
        }
    }

    /// Runs `test` against `geo-cluster serve` over the sample layers of Data/, in a
    /// process of its own (so that nothing else in the test run holds up the page's
    /// requests), with a browser on the page at `path`, once the page has drawn its view.
    /// Idle connections stay open, since browser runs may take long on a loaded machine.
    static func withBrowser(_ path: String,
                            _ test: @escaping @Sendable (SampleClient, DevToolsPipe) async throws -> Void) async throws {
        let server = try RawHTTP.Server(["--data", dataDirectory, "--idle-timeout", "0"])
        let browser = try DevToolsPipe(browser: try #require(HeadlessBrowser.path),
                                       width: HeadlessBrowser.window.width, height: HeadlessBrowser.window.height)
        let port = server.port
        try await DevToolsPipe.detached {
            try browser.open("http://127.0.0.1:\(port)\(path)")
            try browser.wait(until: #"document.getElementById("status")?.dataset.bbox !== undefined"#, seconds: 120)
        }
        try await test(SampleClient(port: server.port), browser)
        #expect(server.process.isRunning, "the server is still running")
    }

    /// What the page last drew: its view and the `#status` data.
    struct PageState: Sendable {
        var zoom: Int, longitude: Double, latitude: Double, bbox: String, clusters: Int, points: Int
    }

    static func state(of browser: DevToolsPipe) throws -> PageState {
        let value = try browser.evaluate("""
            (() => { const s = document.getElementById("status").dataset, c = viewer.map.getCenter();
                     return { zoom: Number(s.zoom), lon: c.lng, lat: c.lat, bbox: s.bbox,
                              clusters: Number(s.clusters), points: Number(s.points) }; })()
            """)
        return PageState(zoom: value["zoom"]?.intValue ?? -1, longitude: value["lon"]?.doubleValue ?? .nan,
                         latitude: value["lat"]?.doubleValue ?? .nan, bbox: value["bbox"]?.stringValue ?? "",
                         clusters: value["clusters"]?.intValue ?? -1, points: value["points"]?.intValue ?? -1)
    }

    /// Runs `action`, then waits until the page has asked for and drawn its new view.
    static func afterRedraw(_ browser: DevToolsPipe, _ action: @escaping @Sendable () throws -> Void) async throws
        -> PageState {
        try await DevToolsPipe.detached {
            _ = try browser.evaluate(#"document.getElementById("status").dataset.bbox = """#)
            try action()
            try browser.wait(until: #"document.getElementById("status").dataset.bbox !== """#, seconds: 120)
            return try state(of: browser)
        }
    }

    /// The clusters the page draws: label, id, and the centre and width of the disc on screen.
    static func drawnClusters(_ browser: DevToolsPipe) throws -> [(label: String, id: Int, x: Double, y: Double, width: Double)] {
        let value = try browser.evaluate("""
            [...document.querySelectorAll(".cluster")].map((e) => { const r = e.getBoundingClientRect();
              return { label: e.textContent, id: e.dataset.clusterId, x: r.left + r.width / 2, y: r.top + r.height / 2,
                       width: r.width }; })
            """)
        return (value.arrayValue ?? []).map { item in
            (item["label"]?.stringValue ?? "", Int(item["id"]?.stringValue ?? "") ?? -1,
             item["x"]?.doubleValue ?? .nan, item["y"]?.doubleValue ?? .nan, item["width"]?.doubleValue ?? .nan)
        }
    }

    /// Where the page's map puts a coordinate on screen (Leaflet's own projection).
    static func screenPoint(_ browser: DevToolsPipe, longitude: Double, latitude: Double) throws -> (x: Double, y: Double) {
        let point = try browser.evaluate("(() => { const p = viewer.map.latLngToContainerPoint([\(latitude), \(longitude)]); return [p.x, p.y]; })()")
        let pair = point.arrayValue ?? []
        return (pair.first?.doubleValue ?? .nan, pair.last?.doubleValue ?? .nan)
    }

    /// Writes `png` to docs/images/`name` when `VIEWER_SCREENSHOTS=1`, so that README shows
    /// what the page looks like (`VIEWER_SCREENSHOTS=1 swift test --filter ViewerPageTests`).
    static func keepScreenshot(_ png: [UInt8], as name: String) throws {
        guard ProcessInfo.processInfo.environment["VIEWER_SCREENSHOTS"] == "1" else { return }
        let images = URL(fileURLWithPath: dataDirectory).deletingLastPathComponent().appendingPathComponent("docs/images")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        try Data(png).write(to: images.appendingPathComponent(name))
    }

    /// 902304 as "902,304".
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        return String(digits.enumerated().flatMap { index, digit in
            index > 0 && (digits.count - index) % 3 == 0 ? [",", digit] : [digit]
        })
    }

    /// The clusters drawn are those the API answers for the view, each at its position,
    /// labelled with its abbreviated count and no wider than the layer's radius; the base
    /// map is drawn under them, land where Korea is and sea where the Yellow Sea is.
    @Test(.enabled(if: HeadlessBrowser.ready, "\(HeadlessBrowser.missing)"))
    func browserDrawsTheClustersTheAPIAnswersOverTheBaseMap() async throws {
        try await Self.withBrowser("/?layer=kr_cities&lon=127.8&lat=36.3&zoom=7") { client, browser in
            try await DevToolsPipe.detached {
                try browser.wait(until: #"document.getElementById("status").dataset.basemap !== undefined"#, seconds: 120)
            }
            #expect(try browser.evaluate(#"document.getElementById("status").dataset.basemap"#) == "drawn")
            let state = try Self.state(of: browser)
            // Leaflet's zoom 7 is the API's zoom 6 at extent 512.
            #expect(state.zoom == 6)
            #expect(abs(state.longitude - 127.8) < 0.01 && abs(state.latitude - 36.3) < 0.01, "the view is where the URL says")
            let answer = try client.get("/v1/layers/kr_cities/clusters?bbox=\(state.bbox)&zoom=6")
            let features = try #require(answer["features"]?.arrayValue)
            let clusters = features.filter { $0["properties"]?["cluster"] == true }
            #expect(clusters.count > 3)
            #expect(state.clusters == clusters.count && state.points == features.count - clusters.count)

            let drawn = try Self.drawnClusters(browser)
            #expect(drawn.count == clusters.count)
            let radius = 40.0  // the layer's radius in screen pixels
            for cluster in clusters {
                let id = cluster["properties"]?["cluster_id"]?.intValue ?? -2
                let coordinates = (cluster["geometry"]?["coordinates"]?.arrayValue ?? []).compactMap(\.doubleValue)
                guard let disc = drawn.first(where: { $0.id == id }), coordinates.count == 2 else {
                    Issue.record("cluster \(id) is not drawn")
                    continue
                }
                // A number below 1,000, text such as "2.3k" above, as supercluster has it.
                let abbreviated = cluster["properties"]?["point_count_abbreviated"]
                #expect(disc.label == abbreviated?.stringValue ?? abbreviated?.intValue.map(String.init))
                #expect(disc.width <= radius + 0.5, "a disc \(disc.width) px wide")
                let expected = try Self.screenPoint(browser, longitude: coordinates[0], latitude: coordinates[1])
                #expect(abs(disc.x - expected.x) <= 1 && abs(disc.y - expected.y) <= 1, "cluster \(id) drawn off its position")
            }

            // The base map alone: land and sea where they are.
            let screenshot = try browser.screenshot()
            try Self.keepScreenshot(screenshot, as: "viewer-clusters.png")
            _ = try browser.evaluate("""
                document.querySelectorAll(".leaflet-marker-pane, .leaflet-tooltip-pane, #panel, .leaflet-control-container")
                  .forEach((e) => { e.style.visibility = "hidden"; })
                """)
            let image = try PNGImage(try browser.screenshot())
            for (name, longitude, latitude, color) in [
                ("Chungcheong, inland", 127.6, 36.5, Self.landColor), ("Gangwon, inland", 128.4, 37.5, Self.landColor),
                ("the Yellow Sea", 125.0, 36.0, Self.seaColor), ("the East Sea", 130.3, 37.0, Self.seaColor),
            ] {
                let point = try Self.screenPoint(browser, longitude: longitude, latitude: latitude)
                let (x, y) = (Int(point.x.rounded()), Int(point.y.rounded()))
                try #require(x >= 0 && y >= 0 && x < image.width && y < image.height, "\(name) is in view")
                let drawn = image.hasColor(color, near: x, y, radius: 0, tolerance: 6), pixel = image.rgb(x, y)
                #expect(drawn, "\(name) at \(x),\(y) is \(pixel)")
            }
        }
    }

    /// A click on a cluster zooms the map to the cluster's expansion zoom, centred on it.
    @Test(.enabled(if: HeadlessBrowser.ready, "\(HeadlessBrowser.missing)"))
    func clickingAClusterZoomsToItsExpansionZoom() async throws {
        try await Self.withBrowser("/?layer=kr_cities&lon=127.8&lat=36.3&zoom=7") { client, browser in
            let drawn = try Self.drawnClusters(browser)
            // A cluster clear of the panel and the controls, and of every other disc.
            let target = try #require(drawn.filter { disc in
                disc.x > 340 && disc.y > 60 && disc.x < 940 && disc.y < 560
                    && drawn.allSatisfy { $0.id == disc.id || hypot($0.x - disc.x, $0.y - disc.y) > $0.width }
            }.first, "a cluster to click")
            let expansion = try client.get("/v1/layers/kr_cities/clusters/\(target.id)/expansion-zoom")
            let zoom = try #require(expansion["expansion_zoom"]?.intValue)
            let before = try Self.state(of: browser)
            let answer = try client.get("/v1/layers/kr_cities/clusters?bbox=\(before.bbox)&zoom=\(before.zoom)")
            let feature = try #require(answer["features"]?.arrayValue?.first { $0["properties"]?["cluster_id"]?.intValue == target.id })
            let coordinates = (feature["geometry"]?["coordinates"]?.arrayValue ?? []).compactMap(\.doubleValue)
            try #require(coordinates.count == 2)

            let after = try await Self.afterRedraw(browser) {
                try browser.mouse("mousePressed", x: target.x, y: target.y, buttons: 1)
                try browser.mouse("mouseReleased", x: target.x, y: target.y)
                try browser.wait(until: "viewer.map.getZoom() === \(zoom + 1)", seconds: 120)
            }
            #expect(after.zoom == zoom, "the map shows the expansion zoom (Leaflet's one more)")
            // Centred on the cluster, to within a pixel at the new zoom.
            let centre = try Self.screenPoint(browser, longitude: coordinates[0], latitude: coordinates[1])
            let size = try browser.evaluate("[viewer.map.getSize().x, viewer.map.getSize().y]").arrayValue?.compactMap(\.doubleValue) ?? []
            try #require(size.count == 2)
            #expect(abs(centre.x - size[0] / 2) <= 1 && abs(centre.y - size[1] / 2) <= 1,
                    "the cluster is at \(centre) in a map of \(size)")
            let redrawn = try client.get("/v1/layers/kr_cities/clusters?bbox=\(after.bbox)&zoom=\(zoom)")
            let features = try #require(redrawn["features"]?.arrayValue)
            let clusters = features.filter { $0["properties"]?["cluster"] == true }.count
            #expect(after.clusters == clusters && after.points == features.count - clusters)
        }
    }

    /// The birding screen: a species named in Korean and months filter the clusters as the
    /// API filters them, and a cluster's aggregates show in Korean.
    @Test(.enabled(if: HeadlessBrowser.ready, "\(HeadlessBrowser.missing)"))
    func sightingsFilterBySpeciesNameAndShowAggregates() async throws {
        try await Self.withBrowser("/?layer=sightings&lon=127.5&lat=36.2&zoom=7&species=%EA%B0%80%EC%B0%BD%EC%98%A4%EB%A6%AC&months=1,2,12") { client, browser in
            let state = try Self.state(of: browser)
            // 가창오리 is Sibirionetta formosa, the Baikal Teal.
            let answer = try client.get("/v1/layers/sightings/clusters?bbox=\(state.bbox)&zoom=\(state.zoom)"
                                        + "&species=Sibirionetta%20formosa&months=1,2,12")
            let features = try #require(answer["features"]?.arrayValue)
            let clusters = features.filter { $0["properties"]?["cluster"] == true }
            #expect(!features.isEmpty)
            #expect(state.clusters == clusters.count && state.points == features.count - clusters.count)
            let unfiltered = try client.get("/v1/layers/sightings/clusters?bbox=\(state.bbox)&zoom=\(state.zoom)")
            #expect((unfiltered["features"]?.arrayValue?.count ?? 0) != features.count, "the filter changed the view")

            // Hovering the largest cluster shows its individuals and top species in Korean.
            let drawn = try Self.drawnClusters(browser)
            let largest = try #require(clusters.max { ($0["properties"]?["point_count"]?.intValue ?? 0) < ($1["properties"]?["point_count"]?.intValue ?? 0) })
            let id = largest["properties"]?["cluster_id"]?.intValue ?? -1
            let disc = try #require(drawn.first { $0.id == id })
            try await DevToolsPipe.detached {
                try browser.mouse("mouseMoved", x: disc.x, y: disc.y)
                try browser.wait(until: #"document.querySelector(".aggregates") !== null"#, seconds: 60)
            }
            let tooltip = try browser.evaluate(#"document.querySelector(".aggregates").innerText"#).stringValue ?? ""
            let individuals = largest["properties"]?["individuals"]?.intValue ?? -1
            #expect(tooltip.contains("개체 수 \(Self.grouped(individuals))"), "\(tooltip)")
            #expect(tooltip.contains("가창오리"), "\(tooltip)")
            try Self.keepScreenshot(try browser.screenshot(), as: "viewer-sightings.png")
        }
    }

    /// The travel screen: the places `/v1/reachable` lists, with their names, the whole
    /// minutes left and the 2-hour bar; the station's Korean name is drawn as a label in a
    /// font that has Korean.
    @Test(.enabled(if: HeadlessBrowser.ready, "\(HeadlessBrowser.missing)"))
    func travelScreenListsThePlacesReachableFromAStation() async throws {
        let departure = "2025-06-01T15:00:00%2B09:00", now = "2025-06-01T13:30:00%2B09:00"
        try await Self.withBrowser("/?layer=places&station=seoul&stations_layer=stations&places=places"
                                   + "&departure=\(departure)&now=\(now)") { client, browser in
            try await DevToolsPipe.detached {
                try browser.wait(until: #"document.getElementById("status").dataset.reachable !== undefined"#, seconds: 120)
                try browser.wait(until: #"document.getElementById("status").dataset.moving === undefined"#, seconds: 120)
            }
            let answer = try client.get("/v1/reachable?layer=places&stations_layer=stations&station=seoul"
                                        + "&departure=\(departure)&now=\(now)&limit=500&lang=ko")
            let reachable = try #require(answer["reachable"]?.arrayValue)
            #expect(reachable.count > 5)
            let listed = try browser.evaluate(##"[...document.querySelectorAll("#place-list li")].map((e) => e.textContent)"##)
                .arrayValue?.compactMap(\.stringValue) ?? []
            #expect(listed.count == reachable.count)
            for (item, place) in zip(listed, reachable) {
                let name = place["name"]?.stringValue ?? "?"
                let leaveBy = String((place["leave_by"]?.stringValue ?? "").dropFirst(11).prefix(5))
                #expect(item.hasPrefix(name) && item.contains(leaveBy + "까지"), "\(item) is not \(name), \(leaveBy)")
            }
            let shown = try browser.evaluate("""
                ({ remaining: document.getElementById("remaining").textContent,
                   bar: document.getElementById("progress").value,
                   status: document.getElementById("trip-status").textContent,
                   station: document.querySelector(".station-label")?.textContent,
                   korean: (() => {
                     // The label's fonts draw 서울 otherwise than two characters no font has
                     // (which every font draws as the same empty box).
                     const canvas = document.createElement("canvas"), g = canvas.getContext("2d");
                     canvas.width = 120; canvas.height = 60;
                     g.font = "40px " + getComputedStyle(document.querySelector(".station-label")).fontFamily;
                     const drawn = (text) => { g.clearRect(0, 0, 120, 60); g.fillText(text, 5, 45);
                                               return Array.from(g.getImageData(0, 0, 120, 60).data).join(); };
                     return drawn("서울") !== drawn("\u{10FFFD}\u{10FFFD}"); })() })
                """)
            #expect(shown["remaining"]?.stringValue == "90")
            #expect(shown["bar"]?.doubleValue == 90)
            #expect(shown["status"]?.stringValue == answer["reason"]?.stringValue)
            #expect(shown["station"]?.stringValue == "서울")
            #expect(shown["korean"] == true, "a font with Korean is installed and named by the page")
            try Self.keepScreenshot(try browser.screenshot(), as: "viewer-travel.png")
        }
    }

    /// A station typed by name is resolved by `/v1/reachable`: one that names several
    /// stations says so with the candidates rather than taking the first of a list.
    @Test(.enabled(if: HeadlessBrowser.ready, "\(HeadlessBrowser.missing)"))
    func aTypedStationNameIsResolvedByTheService() async throws {
        try await Self.withBrowser("/?layer=places&stations_layer=stations&places=places") { _, browser in
            let ask = #"showReachable("2025-06-01T15:00:00+09:00", "2025-06-01T13:30:00+09:00"); 0"#
            try await DevToolsPipe.detached {
                _ = try browser.evaluate(#"document.getElementById("station-name").value = "대"; "# + ask)
                try browser.wait(until: #"document.getElementById("error").textContent !== """#, seconds: 120)
            }
            let shown = try browser.evaluate(#"document.getElementById("error").textContent"#).stringValue ?? ""
            #expect(shown.hasPrefix("ambiguous_station"), "\(shown)")
            try await DevToolsPipe.detached {
                _ = try browser.evaluate(#"document.getElementById("station-name").value = "서울역"; "# + ask)
                try browser.wait(until: #"typeof trip !== "undefined" && trip !== null && trip.station === "seoul""#, seconds: 120)
            }
            #expect(try browser.evaluate(#"document.getElementById("error").textContent"#) == "")
        }
    }

    /// A click on a place opens its details and draws its walking route, the route
    /// `/v1/route` answers, over the walking network's streets.
    @Test(.enabled(if: HeadlessBrowser.ready, "\(HeadlessBrowser.missing)"))
    func clickingAPlaceShowsItsDetailsAndRoute() async throws {
        let departure = "2025-06-01T15:00:00%2B03:00", now = "2025-06-01T13:30:00%2B03:00"
        let query = "layer=helsinki_places&stations_layer=helsinki_stations&station=helsinki-central"
            + "&departure=\(departure)&now=\(now)"
        try await Self.withBrowser("/?places=helsinki_places&network=helsinki_walk&\(query)") { client, browser in
            try await DevToolsPipe.detached {
                try browser.wait(until: #"document.getElementById("status").dataset.reachable !== undefined"#, seconds: 120)
                try browser.wait(until: #"document.getElementById("status").dataset.streets === "helsinki_walk""#, seconds: 120)
            }
            let answer = try client.get("/v1/reachable?\(query)&travel=network&network=helsinki_walk&limit=500&lang=ko")
            // A place some way off, so that its route has turns (and shows in the screenshot).
            let places = try #require(answer["reachable"]?.arrayValue)
            let index = min(40, places.count - 1)
            let first = places[index]
            let id = try #require(first["id"]?.stringValue)
            let route = try client.get("/v1/route?\(query)&travel=network&network=helsinki_walk&place=\(id)")
            let points = try #require(route["place"]?["route"]?["coordinates"]?.arrayValue?.count)
            #expect(points > 2, "a network route has turns")
            try await DevToolsPipe.detached {
                _ = try browser.evaluate(##"document.querySelectorAll("#place-list li")[\##(index)].click()"##)
                try browser.wait(until: #"document.getElementById("details").dataset.routePoints !== undefined"#, seconds: 120)
                try browser.wait(until: #"document.getElementById("status").dataset.moving === undefined"#, seconds: 120)
            }
            let details = try browser.evaluate(#"({ place: document.getElementById("details").dataset.place, points: document.getElementById("details").dataset.routePoints, text: document.getElementById("details").textContent })"#)
            #expect(details["place"]?.stringValue == id)
            #expect(details["points"]?.stringValue == "\(points)")
            #expect(details["text"]?.stringValue?.hasPrefix(first["name"]?.stringValue ?? "?") == true)
            try Self.keepScreenshot(try browser.screenshot(), as: "viewer-route.png")
        }
    }
    /// The Leaflet example of docs/FRONTENDS.md, run as written in a page of its own
    /// (Leaflet from this server, the page from a file, so the API is another origin):
    /// it draws what the API answers for the view at its zoom minus one, and a click on a
    /// cluster flies to the expansion zoom plus one.
    @Test(.enabled(if: HeadlessBrowser.ready, "\(HeadlessBrowser.missing)"))
    func leafletExampleOfTheFrontendGuideWorks() async throws {
        let guide = try String(contentsOfFile: Self.dataDirectory + "/../docs/FRONTENDS.md", encoding: .utf8)
        let section = try #require(guide.range(of: "### Leaflet\n"), "FRONTENDS.md has a Leaflet section")
        let rest = guide[section.upperBound...]
        let start = try #require(rest.range(of: "```js\n"))
        let end = try #require(rest[start.upperBound...].range(of: "```"))
        let example = rest[start.upperBound..<end.lowerBound]

        let server = try RawHTTP.Server(["--data", Self.dataDirectory, "--idle-timeout", "0"])
        let api = "http://127.0.0.1:\(server.port)"
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("leaflet-example-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: page) }
        try """
            <!doctype html><html><head><meta charset="utf-8">
            <link rel="stylesheet" href="\(api)/viewer/leaflet.css"><script src="\(api)/viewer/leaflet.js"></script></head>
            <body style="margin:0"><div id="map" style="width:800px;height:600px"></div><script>
            const API = "\(api)";
            const map = L.map("map").setView([36.0, 127.8], 8);
            \(example)
            map.on("moveend", load);
            load();
            </script></body></html>
            """.write(to: page, atomically: true, encoding: .utf8)

        let browser = try DevToolsPipe(browser: try #require(HeadlessBrowser.path), width: 800, height: 600)
        let bbox = try await DevToolsPipe.detached { () -> String in
            try browser.open(page.absoluteString)
            try browser.wait(until: "typeof group !== \"undefined\" && group.getLayers().length === 1", seconds: 120)
            return try browser.evaluate("""
                (() => { const b = map.getBounds(); return [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].join(","); })()
                """).stringValue ?? ""
        }
        let client = SampleClient(port: server.port)
        let answer = try client.get("/v1/layers/places/clusters?bbox=\(bbox)&zoom=7")
        let features = try #require(answer["features"]?.arrayValue)
        let clusters = features.filter { $0["properties"]?["cluster"] == true }
        try #require(clusters.count >= 3)
        let drawn = try browser.evaluate("group.getLayers()[0].getLayers().length")
        #expect(drawn.intValue == features.count, "the example drew \(drawn) of \(features.count) features")

        let cluster = clusters[0]
        let id = try #require(cluster["properties"]?["cluster_id"]?.intValue)
        let expansion = try #require(try client.get("/v1/layers/places/clusters/\(id)/expansion-zoom")["expansion_zoom"]?.intValue)
        try await DevToolsPipe.detached {
            _ = try browser.evaluate("""
                group.getLayers()[0].getLayers().find((l) => l.feature.properties.cluster_id === \(id)).fire("click"), true
                """)
            try browser.wait(until: "map.getZoom() === \(min(expansion + 1, 18))", seconds: 120)
        }
        #expect(server.process.isRunning)
    }
}
