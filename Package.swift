// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "geo-cluster",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "GeoCluster", targets: ["GeoCluster"]),
        .library(name: "GeoProjection", targets: ["GeoProjection"]),
    ],
    targets: [
        // Pure Swift core: geometry, Web Mercator and tiles, the spatial index, clustering.
        .target(name: "GeoCluster", swiftSettings: strictSettings),
        // The PROJ C library (Debian libproj-dev) as a system module.
        .systemLibrary(
            name: "CProj",
            pkgConfig: "proj",
            providers: [.apt(["libproj-dev"])]
        ),
        // Swift wrapper over PROJ: transforms, geodesic distance, typed errors.
        .target(name: "GeoProjection", dependencies: ["CProj"], swiftSettings: strictSettings),

        .testTarget(name: "GeoClusterTests", dependencies: ["GeoCluster"], swiftSettings: strictSettings),
        .testTarget(name: "GeoProjectionTests", dependencies: ["GeoProjection"], swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
