/// A coordinate reference system, identified the way PROJ understands it.
///
/// Accepted forms, checked up front so that a typo fails with a clear message instead of a
/// PROJ database lookup:
/// - an EPSG code: "EPSG:5186", "epsg:5186" or the bare "5186" (1 to 9 decimal digits);
/// - a PROJ string: "+proj=tmerc +lat_0=38 ...". PROJ reads such a string as an operation
///   unless it carries `+type=crs`, so that token is appended when missing.
///
/// Whether the CRS actually exists is only known once a `CoordinateTransformer` asks PROJ.
/// Two values are equal when their normalised definitions are, so "epsg:4326", "4326" and
/// "EPSG:4326" share one cached transformation.
public struct CRS: Hashable, Sendable, CustomStringConvertible {
    /// The normalised text handed to PROJ: "EPSG:<code>" or a PROJ string with `+type=crs`.
    public let definition: String

    /// Parses and normalises `text`; surrounding whitespace is ignored.
    public init(_ text: String) throws(ProjectionError) {
        let trimmed = Self.trimmingWhitespace(text)
        if trimmed.isEmpty {
            throw .malformedCRS(text: text, reason: "empty CRS identifier")
        }
        if trimmed.utf8.contains(0) {
            throw .malformedCRS(text: text, reason: "contains a NUL character")
        }
        if trimmed.hasPrefix("+") {
            definition = try Self.normalizedPROJString(trimmed, original: text)
            return
        }
        if trimmed.contains("=") {
            // Most likely a PROJ string whose leading "+" was lost, as a URL query turns "+"
            // into a space.
            throw .malformedCRS(text: text, reason: "a PROJ string must start with \"+proj=<name>\"")
        }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        let digits: Substring
        switch parts.count {
        case 1:
            digits = parts[0]
        case 2 where parts[0].lowercased() == "epsg":
            digits = parts[1]
        case 2:
            throw .malformedCRS(
                text: text, reason: "only EPSG codes and PROJ strings are accepted, not authority \"\(parts[0])\"")
        default:
            throw .malformedCRS(text: text, reason: "expected \"EPSG:<code>\", \"<code>\" or \"+proj=...\"")
        }
        guard let code = Self.epsgCode(digits) else {
            throw .malformedCRS(text: text, reason: "EPSG code must be 1 to 9 decimal digits")
        }
        definition = "EPSG:\(code)"
    }

    /// An EPSG code, e.g. `CRS(epsg: 5186)`. Codes outside 1...999_999_999 cannot be EPSG codes.
    public init(epsg code: Int) throws(ProjectionError) {
        guard (1...Self.maxEPSGCode).contains(code) else {
            throw .malformedCRS(text: "EPSG:\(code)", reason: "EPSG code must be in 1...\(Self.maxEPSGCode)")
        }
        definition = "EPSG:\(code)"
    }

    private init(knownEPSG code: Int) {
        definition = "EPSG:\(code)"
    }

    public var description: String { definition }

    /// WGS 84 longitude/latitude in degrees, the CRS of GPS and of every API response.
    public static let wgs84 = CRS(knownEPSG: 4326)
    /// WGS 84 / Pseudo-Mercator in metres, the CRS of web map tiles.
    public static let webMercator = CRS(knownEPSG: 3857)
    /// Korea 2000 / Unified CS (UTM-K) in metres, used by national address and road data.
    public static let koreaUnified = CRS(knownEPSG: 5179)
    /// Korea 2000 / Central Belt 2010 in metres, common in municipal open data.
    public static let koreaCentralBelt2010 = CRS(knownEPSG: 5186)
    /// Korean 1985 / Modified Central Belt (Bessel ellipsoid) in metres, found in older data.
    public static let korea1985ModifiedCentralBelt = CRS(knownEPSG: 5174)

    /// Nine digits keep every code within `Int32`, which is what PROJ's database stores.
    private static let maxEPSGCode = 999_999_999

    private static func epsgCode(_ digits: Substring) -> Int? {
        guard (1...9).contains(digits.utf8.count),
              digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let code = Int(digits), code >= 1
        else { return nil }
        return code
    }

    private static func normalizedPROJString(_ text: String, original: String) throws(ProjectionError) -> String {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        guard let first = tokens.first, first.hasPrefix("+proj="), first.count > "+proj=".count else {
            throw .malformedCRS(text: original, reason: "a PROJ string must start with \"+proj=<name>\"")
        }
        let normalized = tokens.joined(separator: " ")
        return tokens.contains("+type=crs") ? normalized : normalized + " +type=crs"
    }

    private static func trimmingWhitespace(_ text: String) -> String {
        guard let start = text.firstIndex(where: { !$0.isWhitespace }),
              let end = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(text[start...end])
    }
}
