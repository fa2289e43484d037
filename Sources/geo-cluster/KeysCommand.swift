import ArgumentParser
import Foundation
import GeoClusterEngine
import GeoClusterHTTP
import GeoClusterStore

/// `geo-cluster keys create|list|revoke`: the API keys kept in a store (docs/HTTP.md,
/// "Keys and owners"). A key is printed once, when it is created; the store keeps only
/// the SHA-256 of its secret.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list and revoke the API keys of a store (serve --keys writes|all asks for them).",
        subcommands: [Create.self, List.self, Revoke.self])

    struct StoreOptions: ParsableArguments {
        @Option(help: ArgumentHelp("""
            The store the server uses: sqlite:PATH, sqlite: with --data DIR, or postgres://user@host:port/database \
            (default: $GEO_CLUSTER_STORE).
            """, valueName: "store"))
        var store: String?

        @Option(help: ArgumentHelp("The data directory, for --store sqlite:.", valueName: "dir"))
        var data: String?

        func open() throws -> any KeyStore {
            guard let text = store ?? ProcessInfo.processInfo.environment["GEO_CLUSTER_STORE"] else {
                throw ValidationError("keys live in a store: give --store (or GEO_CLUSTER_STORE)")
            }
            let journal = try StoreLocation(parsing: text, dataDirectory: data ?? ProcessInfo.processInfo.environment["GEO_CLUSTER_DATA"]).open()
            guard let keys = journal as? any KeyStore else { throw ValidationError("this store does not keep keys") }
            return keys
        }
    }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key and print it (once: it cannot be shown again).")

        @OptionGroup var store: StoreOptions

        @Option(help: ArgumentHelp("Who the key acts for: the observer_id of the sightings written with it.",
                                   valueName: "owner"))
        var owner: String

        @Option(help: ArgumentHelp("Comma-separated scopes: read, write (own sightings), admin (any record).",
                                   valueName: "scopes"))
        var scopes = "read,write"

        @Option(help: ArgumentHelp("Comma-separated layers the key may reach (default: every layer).", valueName: "layers"))
        var layers: String?

        func validate() throws {
            guard !owner.isEmpty, owner.count <= LayerRecord.maxObserverIDLength else {
                throw ValidationError("--owner must be 1 to \(LayerRecord.maxObserverIDLength) characters")
            }
            _ = try KeyScope.parseList(scopes)
            if let layers, layers.split(separator: ",").isEmpty || layers == "*" {
                throw ValidationError("--layers must name at least one layer (leave it out for every layer)")
            }
        }

        func run() throws {
            let keys = try store.open()
            let token = APIKeyToken.generate()
            let names = layers.map { Set($0.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }) }
            let grant = KeyGrant(id: token.id, owner: owner, layers: names,
                                 scopes: try KeyScope.parseList(scopes), secretHash: token.secretHash)
            try keys.createKey(grant)
            print(token.text)
            FileHandle.standardError.write(Data("""
                created key \(grant.id) for \(owner) (scopes \(grant.scopesText), layers \(grant.layersText)); \
                the line above is the key, shown only now: clients send it as "Authorization: Bearer <key>"

                """.utf8))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys (never their secrets).")

        @OptionGroup var store: StoreOptions

        func run() throws {
            print(["id", "owner", "scopes", "layers", "created", "revoked"].joined(separator: "\t"))
            for grant in try store.open().keys() {
                print([grant.id, grant.owner, grant.scopesText, grant.layersText, grant.createdAt, grant.revokedAt ?? "-"]
                    .joined(separator: "\t"))
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key: every server on the store refuses it within its key refresh (about a second).")

        @OptionGroup var store: StoreOptions

        @Argument(help: ArgumentHelp("The key's id, as keys list shows it.", valueName: "id"))
        var id: String

        func run() throws {
            guard try store.open().revokeKey(id: id) else {
                throw ValidationError("no key with id \(id)")
            }
            print("revoked key \(id)")
        }
    }
}
