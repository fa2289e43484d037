import Foundation
import Synchronization

/// Fresh directories under the system's temporary directory for tests, removed when the
/// test process exits, so that a test that fails (or returns) early leaves nothing behind.
public enum TemporaryDirectory {
    private static let made = Mutex<[URL]>([])

    /// A new empty directory whose name starts with `prefix`.
    public static func make(_ prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        made.withLock { made in
            if made.isEmpty { atexit { TemporaryDirectory.removeAll() } }
            made.append(url)
        }
        return url
    }

    private static func removeAll() {
        for url in made.withLock({ $0 }) { try? FileManager.default.removeItem(at: url) }
    }
}
