// swift-tools-version: 6.2
// The benchmarks of geo-cluster, a package of their own so that building or testing the
// service never resolves or builds package-benchmark. Run from the repository's root:
//   swift package --package-path Benchmarks benchmark --target Clustering
// (see README.md, "Benchmarks"). It depends on the service's package in the parent
// directory, through the library products it exports.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "geo-cluster-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "geo-cluster", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(name: "BenchmarkSupport", dependencies: [geoCluster("GeoCluster"), geoCluster("GeoClusterWire")],
                path: "BenchmarkSupport", swiftSettings: strictSettings),
        benchmarkTarget("Clustering", dependencies: ["GeoCluster", "GeoClusterWire", "GeoReachability"]),
        benchmarkTarget("Protocol", dependencies: ["GeoCluster", "GeoClusterWire", "GeoClusterEngine"]),
        benchmarkTarget("Operations", dependencies: ["GeoCluster", "GeoClusterWire", "GeoReachability", "GeoClusterEngine",
                                                     "GeoClusterHTTP"]),
        // Writes the benchmark point sets to files and measures one index on them, for
        // compare_pysupercluster.sh (same inputs, same process shape as the peer).
        .executableTarget(
            name: "bench-radius",
            dependencies: [geoCluster("GeoCluster"), geoCluster("GeoClusterWire"), "BenchmarkSupport",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "bench-radius",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// A library product of the service's package.
func geoCluster(_ product: String) -> Target.Dependency {
    .product(name: product, package: "geo-cluster")
}

/// A package-benchmark target in `name`/, with BenchmarkSupport and the benchmark library
/// besides the service's `products`.
func benchmarkTarget(_ name: String, dependencies products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: products.map(geoCluster) + ["BenchmarkSupport", .product(name: "Benchmark", package: "benchmark")],
        path: name,
        swiftSettings: strictSettings,
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}
