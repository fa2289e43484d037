import Foundation
import Testing
import GeoCluster
import GeoClusterWire

/// Test data that lives outside the repository, in `../shared` beside the package root
/// (or where `GEO_CLUSTER_SHARED` points). Tests that need it are disabled with a
/// printed reason when it is absent.
enum SharedFixtures {
    static let root: String = {
        if let override = ProcessInfo.processInfo.environment["GEO_CLUSTER_SHARED"], !override.isEmpty {
            return override
        }
        // #filePath is <package>/Tests/GeoClusterTests/Support/SharedFixtures.swift
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared").path
    }()

    static func path(_ relative: String) -> String { root + "/" + relative }

    static func exists(_ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: path(relative))
    }

    static func json(_ relative: String) throws -> JSONValue {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(relative)))
        return try JSONValue.parse([UInt8](data))
    }

    static let superclusterDirectory = "conformance/supercluster"
    static var superclusterAvailable: Bool {
        ["places.json", "places-z0-0-0.json", "places-z0-0-0-min5.json", "expected-supercluster-8.0.1.json"]
            .allSatisfy { exists(superclusterDirectory + "/" + $0) }
    }
    static var superclusterSkipReason: Comment {
        Comment(rawValue: "supercluster fixtures not found under \(path(superclusterDirectory)); "
                + "they are read from ../shared and never copied into the repository")
    }
}
