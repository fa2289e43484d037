import GeoCluster
import GeoClusterWire
import Hummingbird

/// A JSON document as a response, written by our own encoder (the same bytes the
/// JSON-lines transport writes for the same value).
struct JSONResponse: ResponseGenerator {
    let value: JSONValue
    let status: HTTPResponse.Status
    let mediaType: MediaType

    typealias MediaType = ResponseMediaType

    init(_ value: JSONValue, status: HTTPResponse.Status = .ok, mediaType: MediaType = .json) {
        self.value = value
        self.status = status
        self.mediaType = mediaType
    }

    func response(from request: Request, context: some RequestContext) -> Response {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        value.encode(into: &bytes)
        return Self.response(bytes: bytes, status: status, mediaType: mediaType)
    }

    /// A response holding already encoded bytes.
    static func response(bytes: [UInt8], status: HTTPResponse.Status = .ok, mediaType: MediaType) -> Response {
        let buffer = ByteBuffer(bytes: bytes)
        var headers = HTTPFields()
        headers.reserveCapacity(4)
        headers[.contentType] = mediaType.rawValue
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }
}
