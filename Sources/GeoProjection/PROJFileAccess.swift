import CProj
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files PROJ may open for a context: regular files under its data directories,
/// read only, and nothing else.
///
/// A PROJ string names files of its own choosing (`+grids=`, `+nadgrids=`,
/// `+geoidgrids=`, `+init=`), and CRS texts come from clients. Left to itself PROJ opens
/// whatever path such a string names: `/dev/stdout` or a FIFO blocks the calling thread
/// forever, and any readable file is read. PROJ routes every grid and init file through
/// the context's file API, so the policy is enforced there, on the resolved path, rather
/// than by filtering strings: a path is opened only when its real path lies in one of
/// ``allowedDirectories`` and it is a regular file, and it is opened non-blocking before
/// that check, so that no open can wait on a writer. Writes, new directories, renames
/// and deletions are refused. Network access is switched off for the context.
enum PROJFileAccess {
    /// The real paths of PROJ's data directories (its search path: `PROJ_DATA` or the
    /// user's and the system's `share/proj`), each ending in "/".
    static let allowedDirectories: [String] = {
        let searchPath = proj_info().searchpath.map { String(cString: $0) } ?? ""
        return searchPath.split(separator: ":").compactMap { directory in
            realPath(String(directory)).map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        }
    }()

    /// Installs the policy on `context`. `refused` receives each path PROJ asked for and
    /// did not get; it is called synchronously from PROJ calls made on `context`.
    static func install(on context: OpaquePointer, userData: UnsafeMutableRawPointer) {
        _ = proj_context_set_enable_network(context, 0)
        withUnsafePointer(to: api) { pointer in
            _ = proj_context_set_fileapi(context, pointer, userData)
        }
    }

    /// The real path of `path` when it may be opened, else `nil`.
    static func permittedPath(_ path: String) -> String? {
        guard let resolved = realPath(path),
              allowedDirectories.contains(where: { resolved.hasPrefix($0) }) else { return nil }
        return resolved
    }

    /// Whether anything is at `path`, a dangling link or one into `/proc` included.
    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A file descriptor as PROJ's opaque handle: descriptor + 1, so that 0 is a handle too.
    private static func handle(_ descriptor: Int32) -> OpaquePointer? {
        OpaquePointer(bitPattern: Int(descriptor) + 1)
    }

    private static func descriptor(_ handle: OpaquePointer?) -> Int32 {
        Int32(truncatingIfNeeded: Int(bitPattern: UnsafeRawPointer(handle)) - 1)
    }

    private static let api = PROJ_FILE_API(
        version: 1,
        open_cbk: { _, filename, access, userData in
            guard let filename else { return nil }
            let path = String(cString: filename)
            // PROJ looks for a file in each directory of its search path in turn: one that
            // does not exist is simply absent.
            guard exists(path) else { return nil }
            guard access == PROJ_OPEN_ACCESS_READ_ONLY, let resolved = permittedPath(path) else {
                refuse(path, userData)
                return nil
            }
            // Non-blocking, so that opening a FIFO cannot wait for a writer; then only a
            // regular file is kept.
            let descriptor = open(resolved, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            var status = stat()
            guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                refuse(path, userData)
                return nil
            }
            return handle(descriptor)
        },
        read_cbk: { _, handle, buffer, size, _ in
            var total = 0
            while total < size {
                let count = read(descriptor(handle), buffer.map { $0 + total }, size - total)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                total += count
            }
            return total
        },
        write_cbk: { _, _, _, _, _ in 0 },
        seek_cbk: { _, handle, offset, whence, _ in
            lseek(descriptor(handle), off_t(offset), whence) >= 0 ? 1 : 0
        },
        tell_cbk: { _, handle, _ in
            UInt64(max(0, lseek(descriptor(handle), 0, SEEK_CUR)))
        },
        close_cbk: { _, handle, _ in
            close(descriptor(handle))
        },
        exists_cbk: { _, filename, userData in
            guard let filename else { return 0 }
            let path = String(cString: filename)
            // A path that does not exist is simply absent; one that exists elsewhere, or
            // is not a regular file, is refused.
            guard exists(path) else { return 0 }
            var status = stat()
            guard let resolved = permittedPath(path), stat(resolved, &status) == 0,
                  (status.st_mode & S_IFMT) == S_IFREG else {
                refuse(path, userData)
                return 0
            }
            return 1
        },
        mkdir_cbk: { _, _, _ in 0 },
        unlink_cbk: { _, _, _ in 0 },
        rename_cbk: { _, _, _, _ in 0 }
    )

    private static func refuse(_ path: String, _ userData: UnsafeMutableRawPointer?) {
        guard let userData else { return }
        Unmanaged<CoordinateTransformer>.fromOpaque(userData).takeUnretainedValue().recordRefusedFile(path)
    }
}
