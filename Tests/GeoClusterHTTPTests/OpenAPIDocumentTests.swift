import Foundation
import Hummingbird
import Testing
@testable import GeoClusterHTTP

/// docs/openapi.yaml describes every route the server has, and no other.
struct OpenAPIDocumentTests {
    static var document: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        }
    }

    /// The keys of `paths:`: lines indented by exactly two spaces that start with `/`.
    static func documentedPaths(_ text: String) -> Set<String> {
        var paths = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("  /") && line.hasSuffix(":") {
            paths.insert(String(line.dropFirst(2).dropLast()))
        }
        return paths
    }

    @Test func everyRouteIsDocumented() throws {
        let documented = Self.documentedPaths(try Self.document)
        let routes = Set(GeoClusterAPI.routePaths.map(\.description))
        #expect(routes.subtracting(documented).isEmpty, "undocumented: \(routes.subtracting(documented).sorted())")
        #expect(documented.subtracting(routes).isEmpty, "no such route: \(documented.subtracting(routes).sorted())")
    }
}
