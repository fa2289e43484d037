import CompressNIO
import Hummingbird

/// A PNG decoded to RGB pixels: just what a browser's screenshot needs (8-bit RGB or
/// RGBA, not interlaced). Chunks other than IHDR and IDAT are skipped unchecked.
struct PNGImage {
    struct DecodingError: Error, CustomStringConvertible {
        let description: String
    }

    let width: Int
    let height: Int
    /// Bytes per pixel in `rows`: 3 (RGB) or 4 (RGBA).
    private let bytesPerPixel: Int
    /// Unfiltered scanlines, `width * bytesPerPixel` bytes each.
    private let rows: [[UInt8]]

    init(_ bytes: [UInt8]) throws {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw DecodingError(description: "not a PNG file")
        }
        func uint32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var width = 0, height = 0, bytesPerPixel = 0
        var compressed = ByteBuffer()
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = uint32(offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let data = offset + 8
            guard data + length + 4 <= bytes.count else { throw DecodingError(description: "truncated \(type) chunk") }
            switch type {
            case "IHDR":
                width = uint32(data)
                height = uint32(data + 4)
                let (depth, colorType, interlace) = (bytes[data + 8], bytes[data + 9], bytes[data + 12])
                guard depth == 8, colorType == 2 || colorType == 6, interlace == 0 else {
                    throw DecodingError(description: "depth \(depth), colour type \(colorType), interlace \(interlace)")
                }
                bytesPerPixel = colorType == 2 ? 3 : 4
            case "IDAT":
                compressed.writeBytes(bytes[data..<data + length])
            default:
                break
            }
            offset = data + length + 4
        }
        guard width > 0, height > 0 else { throw DecodingError(description: "no IHDR chunk") }
        let inflated = Array(try compressed.decompress(with: .zlib()).readableBytesView)
        let stride = width * bytesPerPixel
        guard inflated.count == height * (stride + 1) else {
            throw DecodingError(description: "\(inflated.count) bytes of image data for \(width)x\(height)")
        }
        var rows: [[UInt8]] = []
        rows.reserveCapacity(height)
        var previous = [UInt8](repeating: 0, count: stride)
        for y in 0..<height {
            let start = y * (stride + 1)
            let filter = inflated[start]
            var row = Array(inflated[start + 1..<start + 1 + stride])
            for x in 0..<stride {
                let left = x >= bytesPerPixel ? Int(row[x - bytesPerPixel]) : 0
                let up = Int(previous[x])
                let upLeft = x >= bytesPerPixel ? Int(previous[x - bytesPerPixel]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = left
                case 2: predictor = up
                case 3: predictor = (left + up) / 2
                case 4:
                    let estimate = left + up - upLeft
                    let (a, b, c) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
                    predictor = a <= b && a <= c ? left : b <= c ? up : upLeft
                default: throw DecodingError(description: "unknown filter \(filter) in row \(y)")
                }
                row[x] = UInt8(truncatingIfNeeded: Int(row[x]) + predictor)
            }
            rows.append(row)
            previous = row
        }
        self.width = width
        self.height = height
        self.bytesPerPixel = bytesPerPixel
        self.rows = rows
    }

    /// The red, green and blue of a pixel; `x` and `y` must be inside the image.
    func rgb(_ x: Int, _ y: Int) -> (red: Int, green: Int, blue: Int) {
        let i = x * bytesPerPixel
        return (Int(rows[y][i]), Int(rows[y][i + 1]), Int(rows[y][i + 2]))
    }

    /// Whether a pixel within `radius` of (`x`, `y`) is within `tolerance` of `color` in
    /// every channel.
    func hasColor(_ color: (red: Int, green: Int, blue: Int), near x: Int, _ y: Int, radius: Int,
                  tolerance: Int = 16) -> Bool {
        for py in max(0, y - radius)...min(height - 1, y + radius) {
            for px in max(0, x - radius)...min(width - 1, x + radius) where (px - x) * (px - x) + (py - y) * (py - y) <= radius * radius {
                let pixel = rgb(px, py)
                if abs(pixel.red - color.red) <= tolerance, abs(pixel.green - color.green) <= tolerance,
                   abs(pixel.blue - color.blue) <= tolerance {
                    return true
                }
            }
        }
        return false
    }
}
