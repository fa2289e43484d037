#if canImport(Glibc)
import Glibc
#endif

/// Gives the heap's free pages back to the system.
public enum HeapTrim {
    /// Calls glibc's `malloc_trim(0)`: after a load that freed many small blocks (parse
    /// trees), glibc keeps them for reuse and resident memory stays as high as at the
    /// peak. Looked up at run time because Swift's Glibc module does not declare it; a
    /// no-op where it is missing.
    public static func releaseFreePages() {
        #if canImport(Glibc)
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return }
        typealias MallocTrim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }
}
