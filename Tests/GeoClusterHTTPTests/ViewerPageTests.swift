import Foundation
import GeoCluster
import GeoClusterWire
import GeoClusterEngine
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import GeoClusterHTTP

/// Chromium in headless mode, found on the PATH (`make test` installs Debian's package).
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

    static let window = (width: 1000, height: 700)

    /// Seconds one run of chromium may take: a run takes seconds, but a loaded machine
    /// stretches it.
    static let stallSeconds = 60

    /// Loads `url` with its scripts' clocks run ahead by up to 10 s (fetches pending
    /// hold them back, so the page's requests complete), then writes a screenshot to
    /// `screenshot`, or returns the DOM as serialised after the scripts ran. Headless
    /// chromium now and then stalls in virtual time and never exits: a run that outlasts
    /// ``stallSeconds`` is killed with its child processes (coreutils' `timeout` runs it
    /// in a process group of its own) and made once more, and a second stall fails the
    /// test instead of holding up the whole suite.
    static func run(_ url: String, screenshot: URL? = nil) async throws -> String {
        for attempt in 1...2 {
            if let output = try await runOnce(url, screenshot: screenshot) { return output }
            print("chromium stalled on \(url) (run \(attempt) of 2) and was killed")
        }
        Issue.record("chromium stalled twice on \(url)")
        return ""
    }

    /// One run of chromium; `nil` when it stalled and was killed.
    private static func runOnce(_ url: String, screenshot: URL?) async throws -> String? {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=10", "\(stallSeconds)", try #require(path),
            // Root in a container has no user namespace sandbox to offer.
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=\(profile.path)", "--window-size=\(window.width),\(window.height)",
            "--virtual-time-budget=10000",
        ] + (screenshot.map { ["--screenshot=\($0.path)"] } ?? ["--dump-dom"]) + [url]
        // Output goes to a file, so that no thread blocks reading a pipe while it runs.
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let outputFile = profile.appendingPathComponent("stdout")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let finished = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
        }
        try process.run()
        for await _ in finished {}
        // `timeout` exits with 124 when it stopped the run, 137 when it had to kill it.
        if process.terminationStatus == 124 || process.terminationStatus == 137 { return nil }
        #expect(process.terminationStatus == 0, "chromium exited with \(process.terminationStatus)")
        return try String(contentsOf: outputFile, encoding: .utf8)
    }
}

/// The page `GET /` serves, drawn by a real browser against the server on a socket.
struct ViewerPageTests {
    static let clusterColor = (red: 0xE6, green: 0x55, blue: 0x0D)
    static let pointColor = (red: 0x31, green: 0x82, blue: 0xBD)
    /// The page's control panel covers this corner of the map.
    static let panel = (width: 300, height: 240)

    @Test func pageIsOneSelfContainedDocument() async throws {
        try await withAPI { client in
            let page = try await client.get("/")
            #expect(page.status == .ok)
            #expect(page.contentType == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("connect-src 'self'") == true)
            #expect(page.text.contains("<canvas"))
            // Nothing from elsewhere: no links, scripts or styles by URL.
            for reference in ["http://", "https://", "src=", "href=", "@import"] {
                #expect(!page.text.contains(reference), "\(reference)")
            }
            let head = try await client.execute(uri: "/", method: .head)
            #expect(head.status == .ok)
            let post = try await client.post("/", "")
            #expect(post.status == .methodNotAllowed)
        }
    }

    /// Web Mercator world pixels at `zoom` with 256-pixel tiles, as the page draws.
    static func worldPixel(longitude: Double, latitude: Double, zoom: Double) -> (x: Double, y: Double) {
        let size = 256 * pow(2, zoom)
        let sine = sin(latitude * .pi / 180)
        return ((longitude + 180) / 360 * size, (0.5 - log((1 + sine) / (1 - sine)) / (4 * .pi)) * size)
    }

    static func coordinate(x: Double, y: Double, zoom: Double) -> (longitude: Double, latitude: Double) {
        let size = 256 * pow(2, zoom)
        return (x / size * 360 - 180, atan(sinh(.pi * (1 - 2 * y / size))) * 180 / .pi)
    }

    /// The bbox query parameter the page sends for a view of `width` x `height` pixels.
    static func bbox(longitude: Double, latitude: Double, zoom: Double, width: Int, height: Int) -> String {
        let center = worldPixel(longitude: longitude, latitude: latitude, zoom: zoom)
        let northWest = coordinate(x: center.x - Double(width) / 2, y: center.y - Double(height) / 2, zoom: zoom)
        let southEast = coordinate(x: center.x + Double(width) / 2, y: center.y + Double(height) / 2, zoom: zoom)
        return [northWest.longitude, southEast.latitude, southEast.longitude, northWest.latitude]
            .map { String(format: "%.6f", $0) }.joined(separator: ",")
    }

    static var dataDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Data").path
    }

    /// The DOM attribute `name` of the first element that has it.
    static func attribute(_ name: String, in dom: String) -> String? {
        guard let start = dom.range(of: "\(name)=\"") else { return nil }
        return dom[start.upperBound...].prefix { $0 != "\"" }.description
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
    /// process of its own: the page's requests are answered by threads that nothing else
    /// in the test run can hold up, however busy the machine and the other suites are.
    /// Idle connections stay open, since browser runs may take long on a loaded machine.
    static func withSampleServer(_ test: @escaping @Sendable (SampleClient, Int) async throws -> Void)
        async throws {
        let server = try RawHTTP.Server(["--data", dataDirectory, "--idle-timeout", "0"])
        try await test(SampleClient(port: server.port), server.port)
        #expect(server.process.isRunning, "the server is still running")
    }

    @Test(.enabled(if: HeadlessBrowser.path != nil, "chromium is not installed; `make test` installs it"))
    func browserDrawsTheClustersTheAPIAnswers() async throws {
        let (longitude, latitude, zoom) = (127.8, 36.3, 7.0)
        try await Self.withSampleServer { client, port in
            let page = "http://127.0.0.1:\(port)/?layer=kr_cities&lon=\(longitude)&lat=\(latitude)&zoom=\(Int(zoom))"

            // What the page reports having drawn is what the API answers for its view.
            let dom = try await HeadlessBrowser.run(page)
            let drawnBBox = try #require(Self.attribute("data-bbox", in: dom), "the page drew nothing")
            let bounds = drawnBBox.split(separator: ",").compactMap { Double($0) }
            try #require(bounds.count == 4)
            #expect(abs((bounds[0] + bounds[2]) / 2 - longitude) < 0.01, "the view is centred where the URL says")
            let domAnswer = try client.get("/v1/layers/kr_cities/clusters?bbox=\(drawnBBox)&zoom=\(Int(zoom))")
            let domFeatures = try #require(domAnswer["features"]?.arrayValue)
            let domClusters = domFeatures.filter { $0["properties"]?["cluster"] == true }.count
            #expect(domClusters > 0)
            #expect(Self.attribute("data-clusters", in: dom) == "\(domClusters)")
            #expect(Self.attribute("data-points", in: dom) == "\(domFeatures.count - domClusters)")

            // The screenshot has cluster-coloured pixels where the API puts clusters. Chromium
            // lays the page out before it sizes the window for the screenshot, so the page
            // may have asked for the smaller view of the DOM run: the clusters drawn for
            // certain are those of that view, placed around the centre of the screenshot.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("viewer-\(UUID().uuidString).png")
            defer { try? FileManager.default.removeItem(at: file) }
            _ = try await HeadlessBrowser.run(page, screenshot: file)
            let image = try PNGImage(Array(try Data(contentsOf: file)))
            let center = Self.worldPixel(longitude: longitude, latitude: latitude, zoom: zoom)
            func pixels(_ features: [JSONValue]) -> [(x: Int, y: Int, cluster: Bool)] {
                features.compactMap { feature in
                    guard let pair = feature["geometry"]?["coordinates"]?.arrayValue,
                          let lon = pair[0].doubleValue, let lat = pair[1].doubleValue else { return nil }
                    let world = Self.worldPixel(longitude: lon, latitude: lat, zoom: zoom)
                    return (Int((world.x - center.x + Double(image.width) / 2).rounded()),
                            Int((world.y - center.y + Double(image.height) / 2).rounded()),
                            feature["properties"]?["cluster"] == true)
                }
            }
            let visible = pixels(domFeatures).filter { pixel in
                pixel.x >= 6 && pixel.y >= 6 && pixel.x < image.width - 6 && pixel.y < image.height - 6
                    && !(pixel.x < Self.panel.width && pixel.y < Self.panel.height)
            }
            let clusters = visible.filter(\.cluster)
            #expect(clusters.count >= 3, "the view shows several clusters")
            let undrawn = clusters.filter { !image.hasColor(Self.clusterColor, near: $0.x, $0.y, radius: 4) }
            #expect(undrawn.isEmpty, "no cluster drawn at \(undrawn.map { "\($0.x),\($0.y)" })")

            // ... and none in the part of the view farthest from every feature of the
            // screenshot's whole view.
            let bbox = Self.bbox(longitude: longitude, latitude: latitude, zoom: zoom, width: image.width, height: image.height)
            let answer = try client.get("/v1/layers/kr_cities/clusters?bbox=\(bbox)&zoom=\(Int(zoom))")
            let all = pixels(try #require(answer["features"]?.arrayValue))
            var empty = (x: 0, y: 0, distance: 0.0)
            for y in stride(from: Self.panel.height, to: image.height - 20, by: 10) {
                for x in stride(from: 20, to: image.width - 20, by: 10) {
                    let distance = all.map { hypot(Double($0.x - x), Double($0.y - y)) }.min() ?? .infinity
                    if distance > empty.distance { empty = (x, y, distance) }
                }
            }
            try #require(empty.distance > 60, "the view has an empty area")
            let emptyHasCluster = image.hasColor(Self.clusterColor, near: empty.x, empty.y, radius: 20)
            let emptyHasPoint = image.hasColor(Self.pointColor, near: empty.x, empty.y, radius: 20)
            #expect(!emptyHasCluster && !emptyHasPoint, "something drawn around \(empty.x),\(empty.y)")
        }
    }

    /// What the page shows: its view from the URL it keeps, and what it last drew.
    struct PageState {
        var longitude: Double, latitude: Double, zoom: Double
        var bbox: String, clusters: String, points: String
        var width: Double, height: Double
    }

    static func state(of browser: DevToolsPipe) throws -> PageState {
        let value = try browser.evaluate("""
            (() => { const q = new URLSearchParams(location.search), s = document.getElementById("status"),
                           c = document.getElementById("map");
                     return { lon: q.get("lon"), lat: q.get("lat"), zoom: q.get("zoom"), bbox: s.dataset.bbox,
                              clusters: s.dataset.clusters, points: s.dataset.points,
                              width: c.clientWidth, height: c.clientHeight }; })()
            """)
        return PageState(longitude: Double(value["lon"]?.stringValue ?? "") ?? .nan,
                         latitude: Double(value["lat"]?.stringValue ?? "") ?? .nan,
                         zoom: Double(value["zoom"]?.stringValue ?? "") ?? .nan,
                         bbox: value["bbox"]?.stringValue ?? "", clusters: value["clusters"]?.stringValue ?? "",
                         points: value["points"]?.stringValue ?? "",
                         width: value["width"]?.doubleValue ?? 0, height: value["height"]?.doubleValue ?? 0)
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

    /// The page drew exactly what the API answers for the view it reports.
    static func expectDrawnAsAnswered(_ state: PageState, client: SampleClient) async throws {
        let answer = try client.get("/v1/layers/kr_cities/clusters?bbox=\(state.bbox)&zoom=\(Int(state.zoom))")
        let features = try #require(answer["features"]?.arrayValue)
        let clusters = features.filter { $0["properties"]?["cluster"] == true }.count
        #expect(state.clusters == "\(clusters)" && state.points == "\(features.count - clusters)",
                "drew \(state.clusters) clusters and \(state.points) points at z\(state.zoom)")
    }

    /// A click on a cluster zooms to its expansion zoom centred on it, a drag pans by the
    /// distance dragged, and the wheel zooms in keeping the place under the pointer where
    /// it is: mouse events sent to the page through the DevTools protocol, as a user's.
    @Test(.enabled(if: HeadlessBrowser.path != nil, "chromium is not installed; `make test` installs it"))
    func clickDragAndWheelMoveTheView() async throws {
        try await Self.withSampleServer { client, port in
            let path = try #require(HeadlessBrowser.path)
            let browser = try DevToolsPipe(browser: path, width: HeadlessBrowser.window.width,
                                           height: HeadlessBrowser.window.height)
            let start = try await DevToolsPipe.detached {
                try browser.open("http://127.0.0.1:\(port)/?layer=kr_cities&lon=127.8&lat=36.3&zoom=7")
                try browser.wait(until: #"document.getElementById("status")?.dataset.bbox !== undefined"#, seconds: 120)
                return try Self.state(of: browser)
            }
            #expect(start.zoom == 7)
            try await Self.expectDrawnAsAnswered(start, client: client)

            // Click: the largest cluster clear of the panel and the edges that no other
            // feature's circle covers (the page draws a cluster with a radius of
            // min(28, 10 + 3 log2 count) pixels, a point with 5).
            func screen(_ longitude: Double, _ latitude: Double, in state: PageState) -> (x: Double, y: Double) {
                let point = Self.worldPixel(longitude: longitude, latitude: latitude, zoom: state.zoom)
                let center = Self.worldPixel(longitude: state.longitude, latitude: state.latitude, zoom: state.zoom)
                return (point.x - center.x + state.width / 2, point.y - center.y + state.height / 2)
            }
            let answer = try client.get("/v1/layers/kr_cities/clusters?bbox=\(start.bbox)&zoom=7")
            let drawn = try #require(answer["features"]?.arrayValue).compactMap { feature -> (JSONValue, Double, Double, Double)? in
                guard let pair = feature["geometry"]?["coordinates"]?.arrayValue,
                      let lon = pair[0].doubleValue, let lat = pair[1].doubleValue else { return nil }
                let (x, y) = screen(lon, lat, in: start)
                let count = feature["properties"]?["point_count"]?.doubleValue ?? 0
                return (feature, x, y, count > 0 ? min(28, 10 + 3 * log2(count)) : 5)
            }
            let target = try #require(drawn.filter { feature, x, y, _ in
                feature["properties"]?["cluster"] == true
                    && x > 40 && y > 40 && x < start.width - 40 && y < start.height - 40
                    && !(x < Double(Self.panel.width) + 30 && y < Double(Self.panel.height) + 30)
                    && drawn.allSatisfy { other, ox, oy, radius in
                        (ox == x && oy == y) || hypot(ox - x, oy - y) > radius + 2
                    }
            }.map(\.0).max { ($0["properties"]?["point_count"]?.intValue ?? 0) < ($1["properties"]?["point_count"]?.intValue ?? 0) },
                                      "a cluster to click")
            let id = try #require(target["properties"]?["cluster_id"]?.intValue)
            let pair = target["geometry"]?["coordinates"]?.arrayValue ?? []
            let coordinates = pair.compactMap(\.doubleValue)
            try #require(coordinates.count == 2)
            let expansion = try client.get("/v1/layers/kr_cities/clusters/\(id)/expansion-zoom")
            let (x, y) = screen(coordinates[0], coordinates[1], in: start)
            let expanded = try await Self.afterRedraw(browser) {
                try browser.mouse("mousePressed", x: x, y: y, buttons: 1)
                try browser.mouse("mouseReleased", x: x, y: y)
            }
            #expect(expanded.zoom == expansion["expansion_zoom"]?.doubleValue)
            #expect(abs(expanded.longitude - coordinates[0]) < 1e-5 && abs(expanded.latitude - coordinates[1]) < 1e-5,
                    "centred on \(expanded.longitude),\(expanded.latitude), not on the cluster at \(coordinates)")
            try await Self.expectDrawnAsAnswered(expanded, client: client)

            // Drag 120 px right and 80 px down: the map moves with the pointer.
            let (cx, cy) = (expanded.width / 2, expanded.height / 2)
            let dragged = try await Self.afterRedraw(browser) {
                try browser.mouse("mousePressed", x: cx, y: cy, buttons: 1)
                try browser.mouse("mouseMoved", x: cx + 60, y: cy + 40, buttons: 1)
                try browser.mouse("mouseMoved", x: cx + 120, y: cy + 80, buttons: 1)
                try browser.mouse("mouseReleased", x: cx + 120, y: cy + 80)
            }
            let before = Self.worldPixel(longitude: expanded.longitude, latitude: expanded.latitude, zoom: expanded.zoom)
            let expected = Self.coordinate(x: before.x - 120, y: before.y - 80, zoom: expanded.zoom)
            #expect(dragged.zoom == expanded.zoom)
            #expect(abs(dragged.longitude - expected.longitude) < 1e-4 && abs(dragged.latitude - expected.latitude) < 1e-4,
                    "centre \(dragged.longitude),\(dragged.latitude), expected \(expected)")
            try await Self.expectDrawnAsAnswered(dragged, client: client)

            // Wheel up at a point off centre: one zoom in, that point stays under the pointer.
            let (ax, ay) = (dragged.width * 0.7, dragged.height * 0.7)
            let center = Self.worldPixel(longitude: dragged.longitude, latitude: dragged.latitude, zoom: dragged.zoom)
            let anchor = Self.coordinate(x: center.x + ax - dragged.width / 2, y: center.y + ay - dragged.height / 2,
                                         zoom: dragged.zoom)
            let zoomed = try await Self.afterRedraw(browser) {
                try browser.mouse("mouseWheel", x: ax, y: ay, deltaY: -120)
            }
            #expect(zoomed.zoom == dragged.zoom + 1)
            let anchorNow = screen(anchor.longitude, anchor.latitude, in: zoomed)
            #expect(abs(anchorNow.x - ax) < 1 && abs(anchorNow.y - ay) < 1, "the point under the pointer moved to \(anchorNow)")
            try await Self.expectDrawnAsAnswered(zoomed, client: client)
        }
    }

    @Test(.enabled(if: HeadlessBrowser.path != nil, "chromium is not installed; `make test` installs it"))
    func browserMarksThePlacesReachableFromAStation() async throws {
        let departure = "2025-06-01T15:00:00%2B09:00", now = "2025-06-01T13:30:00%2B09:00"
        try await Self.withSampleServer { client, port in
            let answer = try client.get("/v1/reachable?layer=places&stations_layer=stations&station=seoul"
                                              + "&departure=\(departure)&now=\(now)&limit=500")
            let reachable = try #require(answer["reachable"]?.arrayValue)
            #expect(!reachable.isEmpty)
            let dom = try await HeadlessBrowser.run("http://127.0.0.1:\(port)/?layer=places&station=seoul"
                                                    + "&stations_layer=stations&places=places"
                                                    + "&departure=\(departure)&now=\(now)")
            #expect(Self.attribute("data-reachable", in: dom) == "\(reachable.count)")
            #expect(dom.contains("\(answer["total"]?.intValue ?? -1) places reachable"))
        }
    }
}
