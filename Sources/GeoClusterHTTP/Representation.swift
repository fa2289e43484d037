import CDeflate
import GeoClusterWire
import Hummingbird
import Synchronization

/// Content types of the bodies this service writes.
enum ResponseMediaType: String, Sendable {
    case json = "application/json"
    /// RFC 7946 documents: FeatureCollections, with foreign members such as `total`.
    case geoJSON = "application/geo+json"
    /// One JSON document per line, each ended by a newline.
    case ndjson = "application/x-ndjson"
    /// Mapbox Vector Tile 2.1 (protobuf), as MapLibre and Mapbox GL request it.
    case mapboxVectorTile = "application/vnd.mapbox-vector-tile"
    /// Prometheus' text exposition format 0.0.4.
    case prometheusText = "text/plain; version=0.0.4; charset=utf-8"
    /// The map viewer page.
    case html = "text/html; charset=utf-8"
    /// The viewer's map library.
    case javaScript = "text/javascript; charset=utf-8"
    case css = "text/css; charset=utf-8"
}

/// How the answers of the `GET` query routes are sent: with a strong `ETag` (a hash of
/// the body) that `If-None-Match` turns into a 304 without a body, a `Cache-Control`
/// lifetime, and gzip compression when the client accepts it and the body is large
/// enough to gain from it.
public struct ResponsePolicy: Sendable {
    /// `max-age` of `Cache-Control: public, max-age=…`; 0 sends `no-cache` instead, so
    /// that clients revalidate every time (cheaply, through the ETag).
    public var cacheMaxAgeSeconds: Int {
        didSet { cacheControl = Self.cacheControl(maxAge: cacheMaxAgeSeconds) }
    }
    /// Bodies shorter than this are sent as they are: below about 1 KB gzip's header and
    /// the CPU time cost more than the bytes saved.
    public var minimumGzipBytes: Int

    /// libdeflate's level, 1 (fastest) to 12 (smallest). On clusters answers of 46, 104
    /// and 433 KB, level 1 took 0.10, 0.29 and 1.19 ms for bodies 1-2 % larger than zlib's
    /// level 4 (the level used before), which took 0.42, 0.95 and 3.63 ms: a quarter to a
    /// third of the CPU (docs/PERFORMANCE.md). Time is what a 2-core server runs out of;
    /// level 4 halves zlib's time for bodies 1-5 % smaller, level 6 equals it for 8-15 %.
    public var gzipLevel: Int

    public static let defaultCacheMaxAgeSeconds = 60
    public static let defaultMinimumGzipBytes = 1024
    public static let defaultGzipLevel = 1

    public init(cacheMaxAgeSeconds: Int = defaultCacheMaxAgeSeconds,
                minimumGzipBytes: Int = defaultMinimumGzipBytes, gzipLevel: Int = defaultGzipLevel) {
        self.cacheMaxAgeSeconds = cacheMaxAgeSeconds
        self.cacheControl = Self.cacheControl(maxAge: cacheMaxAgeSeconds)
        self.minimumGzipBytes = minimumGzipBytes
        self.gzipLevel = min(12, max(1, gzipLevel))
    }

    /// The `Cache-Control` value, written once rather than for every answer.
    private(set) var cacheControl: String

    private static func cacheControl(maxAge: Int) -> String {
        maxAge > 0 ? "public, max-age=\(maxAge)" : "no-cache"
    }

    /// The response for a successful answer `body` to `request`: 200 with the body
    /// (gzip-compressed when negotiated), or 304 with only the validators when the
    /// client's `If-None-Match` already names this representation.
    ///
    /// The gzip representation is a different representation, so it has its own strong
    /// ETag (the identity one with `-gzip` appended); `If-None-Match` matches either, as
    /// the body behind both is the same, and the 304 carries the tag of the
    /// representation this request would have been given.
    func response(body: [UInt8], mediaType: ResponseMediaType, request: Request) -> Response {
        response(PreparedAnswer(body), mediaType: mediaType, request: request)
    }

    /// As ``response(body:mediaType:request:)``, for an answer whose tag (and gzip form,
    /// once a client asked for it) are kept with it: an answer from ``AnswerCache`` is
    /// neither hashed nor compressed again.
    func response(_ answer: PreparedAnswer, mediaType: ResponseMediaType, request: Request) -> Response {
        let body = answer.body
        let gzip = body.count >= minimumGzipBytes && AcceptEncoding.allowsGzip(request.headers[values: .acceptEncoding])
        var headers = HTTPFields()
        headers.reserveCapacity(6)
        headers[.eTag] = gzip ? answer.gzipTag : answer.tag
        headers[.cacheControl] = cacheControl
        headers[.vary] = "Accept-Encoding"

        if let ifNoneMatch = request.headers[values: .ifNoneMatch].nonEmpty, answer.isNamed(by: ifNoneMatch) {
            return Response(status: .notModified, headers: headers, body: ResponseBody())
        }

        headers[.contentType] = mediaType.rawValue
        if gzip {
            // Compression failing (it does not, short of memory) leaves the plain body.
            if let compressed = answer.gzipped(level: gzipLevel) {
                headers[.contentEncoding] = "gzip"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: compressed))
            }
            headers[.eTag] = answer.tag
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// An answer's body with its entity tags, and its gzip form once it was needed.
final class PreparedAnswer: Sendable {
    let body: [UInt8]
    let digest: String
    /// The tags as sent, quotes included: of the body as it is, and of its gzip form.
    let tag: String
    let gzipTag: String
    private let compressed = Mutex<ByteBuffer?>(nil)

    init(_ body: [UInt8]) {
        self.body = body
        self.digest = EntityTag.digest(of: body)
        self.tag = EntityTag.quoted(digest, gzip: false)
        self.gzipTag = EntityTag.quoted(digest, gzip: true)
    }

    /// Whether `If-None-Match` field values name this answer (``EntityTag/ifNoneMatch(_:matches:)``).
    /// A client revalidating sends back the one tag it was given, so that is compared
    /// first, without reading the list.
    func isNamed(by ifNoneMatch: [String]) -> Bool {
        if ifNoneMatch.count == 1, ifNoneMatch[0] == tag || ifNoneMatch[0] == gzipTag { return true }
        return EntityTag.ifNoneMatch(ifNoneMatch, matches: digest)
    }

    /// The body compressed with gzip at `level`, computed the first time (two requests at
    /// once may both compute it; either result is the same).
    func gzipped(level: Int) -> ByteBuffer? {
        if let done = compressed.withLock({ $0 }) { return done }
        guard let result = Gzip.compress(body, level: level) else { return nil }
        compressed.withLock { $0 = result }
        return result
    }
}

/// gzip (RFC 1952) through libdeflate, which compresses a whole buffer at once: about three
/// times faster than zlib's streaming deflate at the same size. A compressor holds tables
/// of some hundred kilobytes, so used ones are kept for the next body (a few per level,
/// each used by one thread at a time).
enum Gzip {
    /// A libdeflate compressor. It is in the pool or in the hands of one thread, never both,
    /// which is what makes passing it between threads safe.
    private struct Compressor: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static let idle = Mutex<[Int: [Compressor]]>([:])
    /// Compressors kept per level: one per thread that compresses at once, about.
    private static let keptPerLevel = 8

    /// `bytes` as a gzip member, or `nil` when libdeflate cannot allocate a compressor.
    static func compress(_ bytes: [UInt8], level: Int) -> ByteBuffer? {
        let level = min(12, max(1, level))
        guard let taken = idle.withLock({ $0[level]?.popLast() })
                ?? libdeflate_alloc_compressor(Int32(level)).map(Compressor.init(pointer:))
        else { return nil }
        let compressor = taken.pointer
        defer {
            let kept = idle.withLock { idle -> Bool in
                guard idle[level, default: []].count < keptPerLevel else { return false }
                idle[level, default: []].append(taken)
                return true
            }
            if !kept { libdeflate_free_compressor(compressor) }
        }
        let bound = libdeflate_gzip_compress_bound(compressor, bytes.count)
        var buffer = ByteBufferAllocator().buffer(capacity: bound)
        let written = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { output in
            bytes.withUnsafeBytes { input in
                libdeflate_gzip_compress(compressor, input.baseAddress, input.count, output.baseAddress, output.count)
            }
        }
        // 0 means the output did not fit, which the bound rules out.
        return written > 0 ? buffer : nil
    }
}

extension Array {
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}

/// Strong entity tags of response bodies, and `If-None-Match` matching (RFC 9110 §8.8.3,
/// §13.1.2).
enum EntityTag {
    /// A 64-bit hash of the body (``ContentHash``) as 16 hex digits: enough to tell
    /// versions of an answer apart, cheap enough to compute for every answer (no state, no
    /// version bookkeeping: any change of the data that changes the bytes changes the tag).
    static func digest(of body: [UInt8]) -> String {
        let hex = String(ContentHash.hash(body), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    static let gzipSuffix = "-gzip"

    /// The tag as it is sent: `"digest"` or `"digest-gzip"`.
    static func quoted(_ digest: String, gzip: Bool) -> String {
        gzip ? "\"\(digest)\(gzipSuffix)\"" : "\"\(digest)\""
    }

    /// Whether the `If-None-Match` field values name the body with this digest: `*`, or
    /// any listed tag whose opaque part is the digest with or without the gzip suffix.
    /// The comparison is the weak one, as RFC 9110 requires for `If-None-Match`, so a
    /// `W/` prefix is ignored.
    static func ifNoneMatch(_ values: [String], matches digest: String) -> Bool {
        for value in values {
            if value.trimmingSpaces == "*" { return true }
            for tag in opaqueTags(in: value) {
                let opaque = tag.hasSuffix(gzipSuffix) ? tag.dropLast(gzipSuffix.count) : tag[...]
                if opaque == digest { return true }
            }
        }
        return false
    }

    /// The opaque parts (between the quotes) of a list of entity tags. Tags may contain
    /// commas, so the list is read quote to quote rather than split at commas.
    static func opaqueTags(in value: String) -> [String] {
        var tags: [String] = []
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "\"") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "\"") else { break }
            tags.append(String(rest[afterOpen..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return tags
    }
}

/// `Accept-Encoding` negotiation (RFC 9110 §12.5.3), for gzip only.
enum AcceptEncoding {
    /// Whether the field values accept gzip: `gzip` (or `x-gzip`) listed with a non-zero
    /// `q`, or not listed and `*` listed with a non-zero `q`. No field means "no
    /// preference", which a server may answer uncompressed; it is.
    static func allowsGzip(_ values: [String]) -> Bool {
        var gzip: Bool?
        var any: Bool?
        for value in values {
            for item in QualityList.items(value) {
                let accepted = (item.q ?? 1) > 0
                switch item.token.lowercased() {
                case "gzip", "x-gzip": gzip = accepted
                case "*": any = accepted
                default: break
                }
            }
        }
        return gzip ?? any ?? false
    }
}

/// A header of comma-separated tokens with optional `;q=` weights (`Accept-Encoding`,
/// `Accept-Language`; RFC 9110 §12.4.2).
enum QualityList {
    /// The items in order: each token, and its `q` when one is given as a number (`nil`
    /// when absent or unreadable; callers say what that means).
    static func items(_ value: String) -> [(token: Substring, q: Double?)] {
        var items: [(token: Substring, q: Double?)] = []
        for item in value.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let token = parts.first?.trimmingSpaces, !token.isEmpty else { continue }
            var q: Double?
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingSpaces.lowercased() == "q" { q = Double(pair[1].trimmingSpaces) }
            }
            items.append((token, q))
        }
        return items
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return Substring() }
        let end = lastIndex(where: { !isSpace($0) }) ?? start
        return Substring(self[start...end])
    }
}
