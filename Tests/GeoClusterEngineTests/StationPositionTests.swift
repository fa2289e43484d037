import Foundation
import Testing
import GeoCluster
import GeoClusterWire

/// The shipped `stations` sample (Data/stations.geojson, compiled by hand into
/// Data/tools/stations.csv) against an independent list of Korail station positions,
/// `data/korail_stations/korail_stations.csv` in `../shared` (or where
/// `GEO_CLUSTER_SHARED` points). The reference is read here only, never copied into the
/// repository; without it the test is skipped with the reason.
///
/// Stations are matched by normalised Korean name (no spaces, no trailing 역; a name with a
/// part in parentheses such as 김천(구미) also tries 김천구미 and then 김천; 경주 and 신경주
/// are one station, renamed in 2021). Every matched station must lie within
/// ``maxErrorMeters`` of the reference; the median and largest error and the stations
/// without a match are printed.
@Suite(.enabled(if: KorailStationReference.available, KorailStationReference.skipReason))
struct StationPositionTests {
    static let maxErrorMeters = 500.0

    static let dataDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Data")

    struct Station {
        let id: String
        let name: String
        let coordinate: Coordinate
    }

    @Test func everyShippedStationIsWithin500MetresOfTheReference() throws {
        let shipped = try Self.shippedStations()
        let reference = try Self.referenceStations()
        #expect(!shipped.isEmpty)
        #expect(!reference.isEmpty)

        // Reference stations by their full normalised name and by the name without the part
        // in parentheses; a key that several stations share matches none of them.
        var byFullName: [String: [Station]] = [:]
        var byBaseName: [String: [Station]] = [:]
        for station in reference {
            let full = Self.normalised(station.name)
            for key in Set([full, Self.parenthesesDropped(full)]) { byFullName[key, default: []].append(station) }
            byBaseName[Self.withoutParentheses(full), default: []].append(station)
        }
        func unique(_ stations: [Station]?) -> Station? {
            guard let stations, stations.count == 1 else { return nil }
            return stations[0]
        }

        var errors: [(id: String, meters: Double)] = []
        var unmatched: [String] = []
        for station in shipped {
            let full = Self.normalised(station.name)
            let own = [full, Self.parenthesesDropped(full), Self.withoutParentheses(full)]
            let names = own + own.compactMap { Self.renamed[$0] }
            var match: Station?
            // Full names first (김천(구미) must not become the other station called 김천),
            // then the names without their parentheses.
            for name in names where match == nil { match = unique(byFullName[name]) }
            for name in names where match == nil { match = unique(byBaseName[name]) }
            guard let match else {
                unmatched.append(station.id)
                continue
            }
            errors.append((station.id, GreatCircle.haversineMeters(from: station.coordinate, to: match.coordinate)))
        }

        let sorted = errors.map(\.meters).sorted()
        var median = "-"
        if !sorted.isEmpty {
            let middle = sorted.count % 2 == 1 ? sorted[sorted.count / 2]
                : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
            median = "\(Int(middle.rounded())) m"
        }
        var largest = "-"
        if let worst = errors.max(by: { $0.meters < $1.meters }) {
            largest = "\(Int(worst.meters.rounded())) m (\(worst.id))"
        }
        print("""
            StationPositionTests: \(shipped.count) stations shipped, \(errors.count) matched; \
            position error median \(median), max \(largest); \
            unmatched: \(unmatched.isEmpty ? "none" : unmatched.joined(separator: ", "))
            """)

        #expect(errors.count * 10 >= shipped.count * 9, "at least nine in ten stations find their reference")
        for (id, meters) in errors {
            #expect(meters <= Self.maxErrorMeters, """
                station \(id) is \(Int(meters.rounded())) m from its reference position \
                (at most \(Int(Self.maxErrorMeters)) m)
                """)
        }
    }

    // MARK: Names

    /// Former and current names of one station, both ways.
    static let renamed = ["경주": "신경주", "신경주": "경주"]

    /// Without spaces and a trailing 역.
    static func normalised(_ name: String) -> String {
        var text = name.filter { !$0.isWhitespace }
        if text.hasSuffix("역"), text.count > 1 { text.removeLast() }
        return text
    }

    /// With the parentheses but not their content dropped: 김천(구미) → 김천구미.
    static func parenthesesDropped(_ name: String) -> String {
        name.filter { !"()（）".contains($0) }
    }

    /// Without a part in parentheses: 김천(구미) → 김천.
    static func withoutParentheses(_ name: String) -> String {
        guard let open = name.firstIndex(where: { $0 == "(" || $0 == "（" }) else { return name }
        let base = String(name[..<open])
        return base.isEmpty ? name : base
    }

    // MARK: Files

    static func shippedStations() throws -> [Station] {
        let url = dataDirectory.appendingPathComponent("stations.geojson")
        let document = try JSONValue.parse([UInt8](Data(contentsOf: url)))
        return try #require(document["features"]?.arrayValue).map { feature in
            let position = feature["geometry"]?["coordinates"]
            return Station(
                id: try #require(feature["id"]?.stringValue),
                name: try #require(feature["properties"]?["name"]?.stringValue),
                coordinate: Coordinate(longitude: try #require(position?[0]?.doubleValue),
                                       latitude: try #require(position?[1]?.doubleValue)))
        }
    }

    /// The reference rows, columns found by the header (`id,name_ko,name_en,lat,lon`).
    static func referenceStations() throws -> [Station] {
        let text = try String(contentsOfFile: KorailStationReference.path, encoding: .utf8)
        var rows = text.split(whereSeparator: \.isNewline).map { fields(of: String($0)) }
        guard !rows.isEmpty else { return [] }
        let header = rows.removeFirst().map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let id = try #require(header.firstIndex(of: "id"))
        let name = try #require(header.firstIndex(of: "name_ko"))
        let lat = try #require(header.firstIndex(of: "lat"))
        let lon = try #require(header.firstIndex(of: "lon"))
        return rows.compactMap { row in
            guard row.count > max(id, name, lat, lon),
                  let latitude = Double(row[lat].trimmingCharacters(in: .whitespaces)),
                  let longitude = Double(row[lon].trimmingCharacters(in: .whitespaces)),
                  !row[name].isEmpty else { return nil }
            return Station(id: row[id], name: row[name],
                           coordinate: Coordinate(longitude: longitude, latitude: latitude))
        }
    }

    /// The fields of one CSV line (RFC 4180 quoting; no line breaks inside fields).
    static func fields(of line: String) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var previousWasQuote = false
        for character in line {
            if quoted {
                if character == "\"" { quoted = false; previousWasQuote = true } else { field.append(character) }
                continue
            }
            switch character {
            case "\"":
                if previousWasQuote { field.append("\"") }
                quoted = true
            case ",":
                fields.append(field)
                field = ""
            default:
                field.append(character)
            }
            previousWasQuote = false
        }
        fields.append(field)
        return fields
    }
}

/// The reference list in `../shared` beside the package root (or where `GEO_CLUSTER_SHARED`
/// points); the test is skipped with the reason printed when it is absent.
enum KorailStationReference {
    static let sharedRoot: String = {
        if let override = ProcessInfo.processInfo.environment["GEO_CLUSTER_SHARED"], !override.isEmpty {
            return override
        }
        // #filePath is <package>/Tests/GeoClusterEngineTests/StationPositionTests.swift
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared").path
    }()

    static let path = sharedRoot + "/data/korail_stations/korail_stations.csv"

    static var available: Bool {
        let found = FileManager.default.fileExists(atPath: path)
        if !found { print("StationPositionTests skipped: \(path) not found") }
        return found
    }

    static var skipReason: Comment {
        Comment(rawValue: "reference station list not found at \(path); "
                + "it is read from ../shared and never copied into the repository")
    }
}
