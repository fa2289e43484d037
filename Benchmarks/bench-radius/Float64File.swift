import Foundation
import GeoCluster

/// A file of raw little-endian IEEE 754 doubles, no header: what `numpy.fromfile(path,
/// dtype="<f8")` reads, so both sides of a comparison get the same bits.
enum Float64File {
    static func write(_ values: [Double], to path: String) throws {
        var data = Data(capacity: values.count * 8)
        for value in values {
            withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) }
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) throws -> [Double] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count % 8 == 0 else {
            throw Float64FileError(path: path, reason: "\(data.count) bytes is not a whole number of float64 values")
        }
        return data.withUnsafeBytes { raw in
            (0..<raw.count / 8).map {
                Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)))
            }
        }
    }
}

struct Float64FileError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "\(path): \(reason)" }
}

extension [Double] {
    /// Consecutive pairs: longitude, latitude.
    func pairs() -> [(Double, Double)] {
        stride(from: 0, to: count - 1, by: 2).map { (self[$0], self[$0 + 1]) }
    }

    /// Consecutive groups of five: west, south, east, north, zoom.
    func viewports() throws -> [(bbox: BoundingBox, zoom: Double)] {
        try stride(from: 0, to: count - 4, by: 5).map {
            (bbox: try BoundingBox(west: self[$0], south: self[$0 + 1], east: self[$0 + 2], north: self[$0 + 3]),
             zoom: self[$0 + 4])
        }
    }
}
