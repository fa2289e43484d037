#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connection to a loopback port, with a small receive buffer: raw bytes
/// to a server under test (malformed requests, slow readers, many writers at once).
public final class LoopbackConnection {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    private let socketDescriptor: Int32

    /// A connection whose `receive` and `send` wait at most `timeoutSeconds` (`nil`: as
    /// long as it takes) and then throw, so that a server that hangs fails the test
    /// instead of holding it up.
    public init(port: Int, receiveTimeoutSeconds timeoutSeconds: Int? = nil) throws {
        socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var bufferBytes: Int32 = 16 << 10
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        if let timeoutSeconds {
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(socketDescriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            close(socketDescriptor)
            throw Failure(description: "connect to port \(port): errno \(error)")
        }
    }

    deinit { close(socketDescriptor) }

    /// Sends every byte; a closed peer is an error, never SIGPIPE.
    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socketDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += count
        }
    }

    /// The next bytes that arrive (at most `maxBytes`), empty once the peer has closed
    /// the connection.
    public func receive(maxBytes: Int = 64 << 10) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maxBytes)
        let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else {
            throw Failure(description: errno == EAGAIN || errno == EWOULDBLOCK
                ? "nothing received before the receive timeout" : "recv: errno \(errno)")
        }
        return Array(buffer.prefix(count))
    }

    /// Everything until the peer closes the connection.
    public func receiveToEnd() throws -> [UInt8] {
        var received: [UInt8] = []
        while true {
            let more = try receive()
            if more.isEmpty { return received }
            received += more
        }
    }
}
