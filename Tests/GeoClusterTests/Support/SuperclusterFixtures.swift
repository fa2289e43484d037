import Foundation
import GeoClusterWire

/// supercluster's conformance fixtures (ISC licence; places.json is Natural Earth data),
/// kept in the repository under Fixtures/supercluster with their licence and provenance
/// (Fixtures/supercluster/README.md), so that every clone checks the compatibility claim.
enum SuperclusterFixtures {
    // #filePath is <package>/Tests/GeoClusterTests/Support/SuperclusterFixtures.swift
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/supercluster").path

    static func json(_ name: String) throws -> JSONValue {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        return try JSONValue.parse([UInt8](data))
    }
}
