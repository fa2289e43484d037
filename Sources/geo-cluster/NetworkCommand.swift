import ArgumentParser
import Foundation
import GeoClusterEngine

/// `geo-cluster network`: walking networks for `reachable`'s network travel.
struct NetworkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Build walking networks from OpenStreetMap extracts.",
        subcommands: [Import.self])

    /// `geo-cluster network import`: an OSM extract to a walking network file
    /// (``GeoClusterEngine/OSMWalkingNetwork``).
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Build a walking network file from an OpenStreetMap extract (.osm.pbf).",
            discussion: """
                Reads the extract with osmium (apt-get install osmium-tool), keeps the ways people may walk \
                (docs/REACHABILITY.md lists the rules), measures each segment as a WGS84 geodesic and writes \
                the largest connected component as a walking network file (Data/README.md). Name the file in \
                layers.json's "networks" to serve it. A damaged or truncated extract is an error and nothing \
                is written.
                """)

        @Option(help: ArgumentHelp("The OpenStreetMap extract (.osm.pbf, .osm or .opl).", valueName: "file"))
        var input: String

        @Option(help: ArgumentHelp("The data directory to write the network into, as <name>.json registered in its layers.json.",
                                   valueName: "dir"))
        var data: String?

        @Option(help: ArgumentHelp("The network's name in layers.json (`network` in reachable requests), with --data.",
                                   valueName: "name"))
        var name: String?

        @Option(help: ArgumentHelp("Or: the walking network file to write, registered nowhere.", valueName: "file"))
        var output: String?

        @Option(help: ArgumentHelp("The network's description in the file.", valueName: "text"))
        var description: String?

        @Option(help: ArgumentHelp("The osmium executable.", valueName: "path"))
        var osmium = "osmium"

        func validate() throws {
            switch (data, name, output) {
            case (.some, .some, nil), (nil, nil, .some): break
            default: throw ValidationError("give --data DIR and --name NAME (to serve the network), or --output FILE")
            }
            if let name {
                do { try LayerDirectory.validateName(name) } catch { throw ValidationError("--name: \(error.description)") }
            }
        }

        func run() throws {
            let started = ContinuousClock.now
            let network: OSMWalkingNetwork
            do {
                network = try OSMWalkingNetwork.importing(input, osmium: osmium) { report in
                    Self.log("read \(report.nodesRead) nodes and \(report.waysRead) ways")
                }
            } catch {
                Self.log("geo-cluster network import: \(error.description)")
                throw ExitCode(1)
            }
            let r = network.report
            let extract = URL(fileURLWithPath: input).lastPathComponent
            let describe = description
                ?? "Walking network of \(extract): the ways people may walk, largest connected component (\(network.nodes.count) nodes, \(network.edges.count) edges)."
            let text = network.document(
                description: describe, source: "OpenStreetMap extract \(extract), built by geo-cluster network import with osmium")
            let written: String
            do {
                if let data, let name {
                    written = try LayerDirectory.write(network: text, name: name, description: describe, directory: data)
                } else {
                    written = try Self.write(text, to: output ?? "")
                }
            } catch {
                Self.log("geo-cluster network import: \(error.description)")
                throw ExitCode(1)
            }
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            Self.log("""
                \(written): \(network.nodes.count) nodes, \(network.edges.count) edges, \
                \(Int(r.totalLengthMeters.rounded())) m; \(r.walkableWays) of \(r.waysRead) ways walkable, \
                \(r.components) components (\(r.nodesOutsideLargestComponent) nodes outside the largest left out), \
                \(r.segmentsWithMissingNodes) segments cut by the extract's edge; \(String(format: "%.1f", seconds)) s
                """)
        }

        /// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
        static func write(_ bytes: [UInt8], to path: String) throws(EngineError) -> String {
            let temporary = path + ".\(getpid()).tmp"
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: temporary))
            } catch {
                throw .invalidLayerSource(path: path, reason: "cannot be written: \(error.localizedDescription)")
            }
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: temporary)
                throw .invalidLayerSource(path: path, reason: "cannot be written: \(reason)")
            }
            return path
        }

        static func log(_ text: String) {
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }
    }
}
