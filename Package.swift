// swift-tools-version: 6.2
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "geo-cluster",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "geo-cluster", targets: ["geo-cluster"]),
        .library(name: "GeoCluster", targets: ["GeoCluster"]),
        .library(name: "GeoClusterWire", targets: ["GeoClusterWire"]),
        .library(name: "GeoReachability", targets: ["GeoReachability"]),
        .library(name: "GeoProjection", targets: ["GeoProjection"]),
        .library(name: "GeoClusterEngine", targets: ["GeoClusterEngine"]),
        .library(name: "GeoClusterStore", targets: ["GeoClusterStore"]),
        .library(name: "GeoClusterHTTP", targets: ["GeoClusterHTTP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // SHA-256 of API keys (already built for postgres-nio's SCRAM authentication).
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3" ..< "5.0.0"),
    ],
    targets: [
        // Pure Swift core: geometry, Web Mercator and tiles, the spatial index, clustering.
        .target(name: "GeoCluster", swiftSettings: strictSettings),
        // The wire formats: the JSON value type and codec, GeoJSON, geojson-vt and Mapbox
        // Vector Tile writers of the core's answers.
        .target(name: "GeoClusterWire", dependencies: ["GeoCluster"], swiftSettings: strictSettings),
        // Remaining-time reachability: travel models, walking networks and their routes.
        .target(name: "GeoReachability", dependencies: ["GeoCluster", "GeoClusterWire"], swiftSettings: strictSettings),
        // The PROJ C library (Debian libproj-dev) as a system module.
        .systemLibrary(
            name: "CProj",
            pkgConfig: "proj",
            providers: [.apt(["libproj-dev"])]
        ),
        // libdeflate (Debian libdeflate-dev): gzip for response bodies, about three times
        // faster than zlib at the same size (docs/PERFORMANCE.md).
        .systemLibrary(
            name: "CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        // Swift wrapper over PROJ: transforms, geodesic distance, typed errors.
        .target(name: "GeoProjection", dependencies: ["CProj"], swiftSettings: strictSettings),
        // Layers, the request model and the one dispatcher every transport calls.
        .target(
            name: "GeoClusterEngine",
            dependencies: [
                "GeoCluster",
                "GeoClusterWire",
                "GeoReachability",
                "GeoProjection",
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: strictSettings
        ),
        // Durable stores behind live layers: SQLite through GRDB (Debian libsqlite3-dev), and
        // PostgreSQL through postgres-nio for several replicas with a change feed.
        .target(
            name: "GeoClusterStore",
            dependencies: [
                "GeoCluster",
                "GeoClusterEngine",
                "GeoClusterWire",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The HTTP transport: Hummingbird routes that translate HTTP to engine requests and back.
        .target(
            name: "GeoClusterHTTP",
            dependencies: [
                "GeoClusterEngine",
                // The viewer draws walking networks as streets.
                "GeoReachability",
                "GeoClusterWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                // HTTP/1.1 channel settings (idle timeout) and the connection limit.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                // gzip response bodies through libdeflate.
                "CDeflate",
                // A channel handler of our own (FlushBeforeClose).
                .product(name: "NIOCore", package: "swift-nio"),
                // HTTPParserError, and the HTTP parts the protocol guard sees.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                // SHA-256 of API keys' secrets.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The executable: argument parsing, configuration and the transports' I/O loops.
        .executableTarget(
            name: "geo-cluster",
            dependencies: [
                "GeoCluster",
                "GeoClusterEngine",
                "GeoClusterHTTP",
                "GeoClusterStore",
                "GeoClusterWire",
                "GeoReachability",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),

        // What the test targets share: running the built executable as a subprocess.
        .target(name: "GeoClusterTestSupport", path: "Tests/GeoClusterTestSupport", swiftSettings: strictSettings),
        // Fixtures/ holds supercluster's conformance fixtures, read from the source tree.
        .testTarget(name: "GeoClusterTests", dependencies: ["GeoCluster", "GeoClusterWire", "GeoReachability",
                                                            "GeoClusterTestSupport"],
                    exclude: ["Fixtures"], swiftSettings: strictSettings),
        .testTarget(name: "GeoProjectionTests", dependencies: ["GeoProjection"], swiftSettings: strictSettings),
        // Golden/ holds the protocol's request/response files, read from the source tree.
        .testTarget(name: "GeoClusterEngineTests", dependencies: ["GeoClusterEngine", "GeoClusterWire", "GeoReachability",
                                                                  "GeoProjection", "GeoClusterTestSupport"],
                    exclude: ["Golden"], swiftSettings: strictSettings),
        .testTarget(name: "GeoClusterStoreTests", dependencies: ["GeoClusterStore", "GeoClusterEngine", "GeoCluster", "GeoClusterWire",
                                                                 "GeoClusterTestSupport",
                                                                 .product(name: "GRDB", package: "GRDB.swift")],
                    swiftSettings: strictSettings),
        .testTarget(
            name: "GeoClusterHTTPTests",
            dependencies: ["GeoClusterHTTP", "GeoClusterWire", "GeoClusterTestSupport",
                           .product(name: "HummingbirdTesting", package: "hummingbird"),
                           // zlib, to read gzip bodies (and PNGs) with another implementation.
                           .product(name: "CompressNIO", package: "compress-nio")],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (`make fuzz`, see Fuzz/README.md), declared only when
// GEO_CLUSTER_FUZZ is set: they call libFuzzer's driver, which only a build with
// `-sanitize=fuzzer` links in, so an ordinary build could not link them.
if Context.environment["GEO_CLUSTER_FUZZ"] != nil {
    let entryPoint = strictSettings
    package.targets += [
        .target(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["GeoCluster", "GeoClusterWire", "GeoClusterEngine"], path: "Fuzz/FuzzSupport",
                swiftSettings: strictSettings),
        .executableTarget(name: "fuzz-lines", dependencies: ["CLibFuzzer", "FuzzSupport", "GeoCluster", "GeoClusterWire",
                                                             "GeoClusterEngine"],
                          path: "Fuzz/FuzzLines", swiftSettings: entryPoint),
        .executableTarget(
            name: "fuzz-http",
            dependencies: ["CLibFuzzer", "FuzzSupport", "GeoClusterHTTP",
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOEmbedded", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"),
                           .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                           .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras")],
            path: "Fuzz/FuzzHTTP", swiftSettings: entryPoint),
    ]
}
