#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

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

    private static let pending = Atomic<Bool>(false)

    /// ``releaseFreePages()`` about a second from now, on a background queue; calls in the
    /// meantime share that one trim. For a server that just dropped large buffers (the
    /// answers of clients it closed for not reading): glibc keeps a freed block of a few
    /// megabytes in the arena of the thread that freed it, so without a trim each event
    /// loop's arena can hold on to its own.
    public static func releaseFreePagesSoon() {
        guard pending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) {
            pending.store(false, ordering: .releasing)
            releaseFreePages()
        }
    }
}
