import GeoClusterWire

/// What an API key allows (docs/HTTP.md, "Keys and owners").
public enum KeyScope: String, Sendable, CaseIterable, Comparable {
    /// Queries of the key's layers.
    case read
    /// Writes to the key's layers (and queries): a sighting written with the key belongs
    /// to the key's owner, and only its owner may change or delete it.
    case write
    /// Writes to any record of the key's layers, whoever owns it (and queries).
    case admin

    public static func < (a: KeyScope, b: KeyScope) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Scopes as a store keeps them; a name this binary does not know (written by a newer
    /// one, or by hand) grants nothing rather than making every key unreadable.
    public static func parseStored(_ text: String) -> Set<KeyScope> {
        Set(text.split(separator: ",").compactMap { KeyScope(rawValue: String($0.filter { $0 != " " })) })
    }

    /// Scopes from a comma-separated list such as `read,write`.
    public static func parseList(_ text: String) throws(EngineError) -> Set<KeyScope> {
        var scopes: Set<KeyScope> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = String(part.filter { $0 != " " })
            guard let scope = KeyScope(rawValue: name) else {
                throw .invalidField("scopes", reason: "\"\(name)\" is not a scope; scopes are read, write and admin")
            }
            scopes.insert(scope)
        }
        return scopes
    }
}

/// One API key as the store keeps it: never the key itself, only the SHA-256 of its
/// secret part.
public struct KeyGrant: Sendable, Equatable {
    /// The key's public identifier: the part of the key before its secret, shown by
    /// `geo-cluster keys list` and used to revoke it.
    public var id: String
    /// Who the key acts for: the `observer_id` of the sightings written with it.
    public var owner: String
    /// Layers the key may reach; `nil` for every layer.
    public var layers: Set<String>?
    public var scopes: Set<KeyScope>
    /// SHA-256 of the secret, lowercase hexadecimal.
    public var secretHash: String
    /// When it was created and revoked (RFC 3339, UTC), as the store recorded it.
    public var createdAt: String
    public var revokedAt: String?

    public init(id: String, owner: String, layers: Set<String>?, scopes: Set<KeyScope>, secretHash: String,
                createdAt: String = "", revokedAt: String? = nil) {
        self.id = id
        self.owner = owner
        self.layers = layers
        self.scopes = scopes
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// The layers as stored: `*` for all, otherwise the names separated by commas.
    public var layersText: String { layers.map { $0.sorted().joined(separator: ",") } ?? "*" }
    public var scopesText: String { scopes.sorted().map(\.rawValue).joined(separator: ",") }

    /// Reads ``layersText``.
    public static func layers(fromText text: String) -> Set<String>? {
        text == "*" ? nil : Set(text.split(separator: ",").map(String.init))
    }
}

/// Where API keys live: the same store as the layers (SQLite or PostgreSQL). Like
/// ``LayerJournal``, every method is synchronous and may block on I/O; the server calls
/// them from threads of its own, never from Swift concurrency's.
public protocol KeyStore: Sendable {
    /// Adds a key; `storage_unavailable` when the store refuses it (an id already taken).
    func createKey(_ grant: KeyGrant) throws(EngineError)
    /// Every key, revoked ones included, oldest first.
    func keys() throws(EngineError) -> [KeyGrant]
    /// Marks the key revoked; `false` when no key has that id.
    func revokeKey(id: String) throws(EngineError) -> Bool
    /// The keys created or revoked after change number `after`, and the last change number
    /// (`after` itself when there is none): what a server polls to follow the keys.
    func keyChanges(after: Int64) throws(EngineError) -> (keys: [KeyGrant], last: Int64)
}

/// Who sends a request, as the transport established it.
public enum Caller: Sendable, Equatable {
    /// A local, trusted channel (`geo-cluster query` on stdin), or a server run without
    /// keys: everything is allowed and nothing is stamped with an owner.
    case trusted
    /// A request without a key to a server that requires keys for writes: it may read.
    case anonymous
    /// A request with a valid, unrevoked key.
    case key(KeyGrant)
}

extension Engine {
    /// Checks that `caller` may make `request`: reads need any key scope (or no key, for
    /// an anonymous caller), writes a `write` or `admin` key whose layers include the layer.
    /// Owner rules of writes are applied by ``perform(_:by:)``.
    public func authorize(_ request: Request, by caller: Caller) throws(EngineError) {
        switch caller {
        case .trusted:
            return
        case .anonymous:
            if request.isWrite {
                throw .unauthorized(reason: "writes need an API key: send \"Authorization: Bearer <key>\"")
            }
        case let .key(grant):
            let needed: KeyScope = request.isWrite ? .write : .read
            guard grant.scopes.contains(where: { $0 >= needed }) else {
                throw .forbidden(reason: "key \(grant.id) has scopes \(grant.scopesText); \(request.isWrite ? "writes" : "queries") need \(needed.rawValue)\(needed == .read ? "" : " or admin")")
            }
            if let allowed = grant.layers {
                for layer in request.layerNames where !allowed.contains(layer) {
                    throw .forbidden(reason: "key \(grant.id) may not reach layer \"\(layer)\"")
                }
            }
        }
    }
}

extension Request {
    /// The layers a request reads or writes.
    public var layerNames: [String] {
        switch self {
        case .layers, .project: []
        case let .stats(layer): layer.map { [$0] } ?? []
        case let .clusters(layer, _, _, _), let .children(layer, _, _), let .leaves(layer, _, _, _, _, _),
             let .list(layer, _, _, _, _, _), let .expansionZoom(layer, _, _), let .tile(layer, _, _),
             let .write(layer, _), let .get(layer, _):
            [layer]
        case let .nearby(query): [query.layer]
        case let .reachable(query):
            // The stations layer is read only when the walk starts or ends at a station.
            if case .location = query.origin { [query.layer] } else { [query.layer, query.stationsLayer] }
        case let .stations(query): [query.stationsLayer]
        case let .species(layer, _): [layer]
        }
    }
}

extension LayerRecord {
    /// Most characters of an `observer_id`.
    public static let maxObserverIDLength = 200
}
