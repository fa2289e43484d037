import Foundation
@testable import GeoProjection
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// CRS texts come from clients, and PROJ strings name files: PROJ may read only regular
/// files in its data directories, and every transform it cannot carry out faithfully is
/// an error that says why.
@Suite struct PROJFileAccessTests {
    func error(from source: String = "EPSG:4326", to target: String) -> ProjectionError? {
        do {
            let transformer = try CoordinateTransformer()
            _ = try transformer.transform(CRSPoint(x: 126.97, y: 37.55), from: try CRS(source), to: try CRS(target))
            return nil
        } catch {
            return error
        }
    }

    /// Runs `body` on a thread of its own and waits for it at most `seconds`: a PROJ
    /// call that blocks on a file fails the test instead of hanging the suite.
    func withDeadline<T: Sendable>(seconds: Double = 60, _ body: @escaping @Sendable () -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        Thread.detachNewThread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success, let value = result.withLock({ $0 }) else {
            throw DeadlineExceeded()
        }
        return value
    }

    struct DeadlineExceeded: Error {}

    @Test func filesOutsidePROJsDataAreRefused() {
        for grids in ["+proj=longlat +ellps=GRS80 +nadgrids=/etc/passwd", "+proj=hgridshift +grids=/etc/hostname",
                      "+proj=tmerc +lon_0=127 +ellps=GRS80 +nadgrids=/etc/passwd"] {
            guard case let .fileAccessRefused(_, path)? = error(to: grids) else {
                Issue.record("\(grids): \(String(describing: error(to: grids)))")
                continue
            }
            #expect(path.hasPrefix("/etc/"))
        }
    }

    /// A FIFO, a terminal or a pipe would block PROJ's read forever (two such requests
    /// once stopped a whole server); none is ever opened.
    @Test func devicesAndFIFOsAreRefusedWithoutBlocking() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proj-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("grid.gsb").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for target in ["+proj=longlat +ellps=GRS80 +nadgrids=\(fifo)", "+proj=hgridshift +grids=/dev/stdin",
                       "+proj=hgridshift +grids=/dev/stdout", "+proj=longlat +ellps=GRS80 +nadgrids=/dev/zero"] {
            let found = try withDeadline { error(to: target) }
            guard case .fileAccessRefused? = found else {
                Issue.record("\(target): \(String(describing: found))")
                continue
            }
        }
    }

    @Test func missingGridsAreAnErrorEvenWhenMarkedOptional() {
        for target in ["+proj=longlat +ellps=GRS80 +nadgrids=no_such_grid.gsb",
                       "+proj=longlat +ellps=GRS80 +nadgrids=@no_such_grid.gsb"] {
            guard case let .gridUnavailable(_, grids)? = error(to: target) else {
                Issue.record("\(target): \(String(describing: error(to: target)))")
                continue
            }
            #expect(grids.contains { $0.contains("no_such_grid.gsb") })
        }
    }

    @Test(arguments: ["EPSG:4978", "EPSG:4979", "EPSG:5703"])
    func crsWithOtherThanTwoAxesIsUnsupported(_ crs: String) {
        guard case let .unsupportedCRS(identifier, _)? = error(to: crs) else {
            Issue.record("\(crs): \(String(describing: error(to: crs)))")
            return
        }
        #expect(identifier == crs)
        guard case .unsupportedCRS? = error(from: crs, to: "EPSG:4326") else {
            Issue.record("from \(crs)")
            return
        }
    }

    /// What stays allowed: EPSG codes, grids of PROJ's own data directory, and the
    /// Korean CRSs the importer sees.
    @Test func registryCodesAndInstalledGridsStillWork() throws {
        #expect(PROJFileAccess.allowedDirectories.contains { $0.hasSuffix("/share/proj/") })
        for target in ["EPSG:5186", "EPSG:5179", "EPSG:3857", "+proj=tmerc +lat_0=38 +lon_0=127 +k=1 +x_0=200000 +y_0=600000 +ellps=GRS80"] {
            #expect(error(to: target) == nil, "\(target)")
        }
        #expect(error(from: "EPSG:5174", to: "EPSG:4326") == nil)
    }
}
