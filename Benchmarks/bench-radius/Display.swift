import ArgumentParser
import BenchmarkSupport
import GeoCluster

/// How the live algorithm's map compares with the radius algorithm's (supercluster's) on
/// the same points and options: features per zoom of the world and over the benchmark
/// viewports, and the share of features drawn closer than half the radius to another.
struct Display: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare the live and radius algorithms' features and crowding per zoom.",
        discussion: """
            SET is geonames (GeoNames cities500 from ../shared, skipped with the reason when \
            absent), korea or uniform (PointSets, --count points). For each radius, prints per \
            zoom the features of the world in each algorithm, their ratio, and the features \
            closer than radius/2 pixels to another; then the totals, and for korea and uniform \
            the features over the 200 benchmark viewports.
            """
    )

    @Option(help: "geonames, korea or uniform.")
    var set: String = "geonames"

    @Option(help: "Points of a korea or uniform set.")
    var count: Int = 1_000_000

    @Option(help: "Radii in pixels, comma-separated.")
    var radii: String = "40,60,80"

    @Option(help: "Tile extent in pixels.")
    var extent: Int = 512

    @Option(help: "Highest zoom compared (and clustered).")
    var maxZoom: Int = 16

    func run() throws {
        let coordinates: [Coordinate]
        var views: [PointSets.Viewport] = []
        if set == "geonames" {
            guard let loaded = GeoNamesCities.load() else { return }
            coordinates = loaded
        } else if let distribution = PointSets.Distribution(rawValue: set) {
            coordinates = PointSets.points(distribution, count: count)
            views = PointSets.viewports(over: coordinates)
        } else {
            throw ValidationError("unknown set '\(set)'; use geonames, korea or uniform")
        }
        let radiusList = radii.split(separator: ",").compactMap { Double($0) }
        guard !radiusList.isEmpty else { throw ValidationError("--radii needs at least one number") }
        print("set \(set), \(coordinates.count) points, extent \(extent), zooms 0-\(maxZoom)")
        let livePoints = coordinates.map { LivePoint(coordinate: $0) }
        for radius in radiusList {
            let options = RadiusClusterOptions(radiusPixels: radius, extent: extent, maxZoom: maxZoom)
            let reference = try RadiusClusterIndex(coordinates: coordinates, options: options)
            let liveOptions = LiveClusterOptions(options)
            let live = try LiveClusterIndex(points: livePoints, options: liveOptions)
            print("\nradius \(radius): live cells \(liveOptions.grid.cellPixels) px "
                  + "(\(liveOptions.grid.span) x \(liveOptions.grid.span) quadtree cells of zoom + \(liveOptions.grid.levelShift))")
            print("zoom  radius-features  live-features  ratio  crowded-radius  crowded-live")
            var totals = (radius: 0, live: 0, crowdedRadius: 0, crowdedLive: 0)
            var ratios: [Double] = []
            var worstZoom = (zoom: 0, share: 0.0)
            for zoom in 0...maxZoom {
                let a = try reference.clusters(in: .world, zoom: Double(zoom)).map(\.coordinate)
                let b = try live.clusters(in: .world, zoom: Double(zoom)).features.map(\.coordinate)
                let ca = DisplayCrowding.crowded(a, zoom: zoom, radius: radius, extent: extent).count
                let cb = DisplayCrowding.crowded(b, zoom: zoom, radius: radius, extent: extent).count
                let ratio = Double(b.count) / Double(max(1, a.count))
                ratios.append(ratio)
                let share = Double(cb) / Double(max(1, b.count))
                if share > worstZoom.share { worstZoom = (zoom, share) }
                totals = (totals.radius + a.count, totals.live + b.count, totals.crowdedRadius + ca, totals.crowdedLive + cb)
                print(String(format: "%4d  %15d  %13d  %5.3f  %14d  %12d", zoom, a.count, b.count, ratio, ca, cb))
            }
            print(String(format: "ratio %.3f-%.3f over zooms 0-%d; crowded: radius %.4f%%, live %.4f%% (worst zoom %d: %.4f%%)",
                         ratios.min() ?? 0, ratios.max() ?? 0, maxZoom,
                         100 * Double(totals.crowdedRadius) / Double(max(1, totals.radius)),
                         100 * Double(totals.crowdedLive) / Double(max(1, totals.live)),
                         worstZoom.zoom, 100 * worstZoom.share))
            if !views.isEmpty {
                var sums = (radius: 0, live: 0)
                for view in views {
                    sums.radius += try reference.clusters(in: view.bbox, zoom: view.zoom).count
                    sums.live += try live.clusters(in: view.bbox, zoom: view.zoom).features.count
                }
                print(String(format: "%d viewports: radius %d features, live %d (ratio %.3f)",
                             views.count, sums.radius, sums.live, Double(sums.live) / Double(max(1, sums.radius))))
            }
        }
    }
}
