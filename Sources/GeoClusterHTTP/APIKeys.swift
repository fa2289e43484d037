import Crypto
import GeoClusterEngine
import Synchronization

/// When the HTTP API asks for a key (`serve --keys`).
public enum KeyRequirement: String, Sendable, CaseIterable {
    /// No keys: every request may read and write. The default, for a server on loopback
    /// or behind a gateway that authenticates, and the only choice without a store.
    case off
    /// Writes need a `write` or `admin` key; queries are open.
    case writes
    /// Every route but `/`, `/healthz`, `/readyz` and `/metrics` needs a key.
    case all
}

/// An API key as clients send it: `gck_<id>_<secret>`, where `id` (16 hexadecimal
/// digits) names the key in listings and revocations and `secret` (64 hexadecimal
/// digits, 256 random bits) is known only to its holder; the store keeps its SHA-256.
public struct APIKeyToken: Sendable, Equatable {
    public var id: String
    public var secret: String

    static let prefix = "gck_"

    /// A new key from the system's cryptographically secure generator (getrandom(2) on
    /// Linux).
    public static func generate() -> APIKeyToken {
        var generator = SystemRandomNumberGenerator()
        func hex(_ bytes: Int) -> String {
            (0..<bytes).map { _ in
                let byte = UInt8.random(in: 0...255, using: &generator)
                return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }.joined()
        }
        return APIKeyToken(id: hex(8), secret: hex(32))
    }

    /// Reads a key's text; `nil` when it is not of the key's form: `gck_`, 16 and 64
    /// lowercase hexadecimal digits separated by `_`. Read byte by byte, with no
    /// intermediate strings: every authenticated request parses one.
    public init?(parsing given: some StringProtocol) {
        let bytes = Array(given.utf8)
        let prefix = Array(Self.prefix.utf8)
        guard bytes.count == prefix.count + 16 + 1 + 64, bytes.starts(with: prefix),
              bytes[prefix.count + 16] == UInt8(ascii: "_") else { return nil }
        func isHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }
        let id = bytes[prefix.count..<(prefix.count + 16)], secret = bytes[(prefix.count + 17)...]
        guard id.allSatisfy(isHex), secret.allSatisfy(isHex) else { return nil }
        self.init(id: String(decoding: id, as: UTF8.self), secret: String(decoding: secret, as: UTF8.self))
    }

    public init(id: String, secret: String) {
        self.id = id
        self.secret = secret
    }

    public var text: String { Self.prefix + id + "_" + secret }

    /// SHA-256 of the secret, lowercase hexadecimal: what the store keeps.
    public var secretHash: String { Self.hash(secret) }

    static func hash(_ secret: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Array(secret.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

/// The keys a server knows, kept in memory and brought up to date from the store by
/// ``refresh()`` (the `serve` process calls it once a second from a thread of its own),
/// so a key revoked on any replica stops working everywhere within that delay, and a
/// request never waits on the store to be authenticated.
public final class KeyRing: Sendable {
    public let store: any KeyStore
    private let state = Mutex<(keys: [String: KeyGrant], last: Int64)>(([:], 0))

    /// Loads every key of `store`.
    public init(store: any KeyStore) throws(EngineError) {
        self.store = store
        try refresh()
    }

    /// Takes the keys created or revoked since the last call.
    public func refresh() throws(EngineError) {
        let after = state.withLock { $0.last }
        let (changed, last) = try store.keyChanges(after: after)
        guard last != after else { return }
        state.withLock { state in
            for grant in changed { state.keys[grant.id] = grant }
            state.last = max(state.last, last)
        }
    }

    /// Keys known, revoked ones included.
    public var count: Int { state.withLock { $0.keys.count } }

    /// The caller an `Authorization` header names: `.anonymous` without one, the key's
    /// grant for a valid, unrevoked key. The secret's hash is compared in constant time.
    /// - Throws: ``EngineError/unauthorized(reason:)`` for anything else (never echoing
    ///   the header).
    public func caller(authorization: String?) throws(EngineError) -> Caller {
        guard let authorization else { return .anonymous }
        // "Bearer" in any case, then one or more spaces, then the key (RFC 6750 §2.1).
        let scheme = "bearer ".utf8
        guard authorization.utf8.count > scheme.count,
              zip(authorization.utf8, scheme).allSatisfy({ $0 | 0x20 == $1 }) else {
            throw .unauthorized(reason: "the Authorization header must be \"Bearer <key>\"")
        }
        guard let token = APIKeyToken(parsing: authorization.dropFirst(scheme.count).drop { $0 == " " }) else {
            throw .unauthorized(reason: "the key is not a geo-cluster API key (gck_…)")
        }
        guard let grant = state.withLock({ $0.keys[token.id] }),
              Self.constantTimeEqual(token.secretHash.utf8, grant.secretHash.utf8) else {
            throw .unauthorized(reason: "the key is not valid")
        }
        guard grant.revokedAt == nil else { throw .unauthorized(reason: "the key \(grant.id) was revoked") }
        return .key(grant)
    }

    /// Whether two byte strings are equal, in a time that depends only on their length.
    static func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
