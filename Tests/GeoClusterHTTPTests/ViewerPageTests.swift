import Foundation
import GeoCluster
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

    /// Loads `url` with its scripts' clocks run ahead by up to 10 s (fetches pending
    /// hold them back, so the page's requests complete), then writes a screenshot to
    /// `screenshot`, or returns the DOM as serialised after the scripts ran.
    static func run(_ url: String, screenshot: URL? = nil) async throws -> String {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(path))
        process.arguments = [
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

    /// Runs `test` against the server on a loopback socket, with the sample layers of Data/.
    static func withSampleServer(_ test: @escaping @Sendable (any TestClientProtocol, Int) async throws -> Void)
        async throws {
        let directory = dataDirectory
        let engine = try Engine(entries: try LayerCatalog.load(directory: directory),
                                networks: try LayerCatalog.loadNetworks(directory: directory))
        let app = GeoClusterAPI(engine: engine).makeApplication(host: "127.0.0.1", port: 0,
                                                                 logger: Logger(label: "viewer-test"))
        try await app.test(.live) { client in
            try await test(client, try #require(client.port))
        }
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
            let domAnswer = try await client.get("/v1/layers/kr_cities/clusters?bbox=\(drawnBBox)&zoom=\(Int(zoom))").json
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
            let answer = try await client.get("/v1/layers/kr_cities/clusters?bbox=\(bbox)&zoom=\(Int(zoom))").json
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

    @Test(.enabled(if: HeadlessBrowser.path != nil, "chromium is not installed; `make test` installs it"))
    func browserMarksThePlacesReachableFromAStation() async throws {
        let departure = "2025-06-01T15:00:00%2B09:00", now = "2025-06-01T13:30:00%2B09:00"
        try await Self.withSampleServer { client, port in
            let answer = try await client.get("/v1/reachable?layer=places&stations_layer=stations&station=seoul"
                                              + "&departure=\(departure)&now=\(now)&limit=500").json
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
