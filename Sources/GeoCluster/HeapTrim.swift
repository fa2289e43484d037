#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Gives the heap's free pages back to the system, and sets how it grows while layers
/// load and while the server answers.
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

    /// Sets glibc's heap parameters for loading layers: the heap grows in steps of
    /// ``loadingTopPad`` rather than of what each allocation lacks, and a thread's new
    /// heap is made writable that far at once. A load allocates hundreds of megabytes in
    /// small blocks, and growing heaps a few pages at a time was a tenth of a 1M-point
    /// store start's CPU time (`sysmalloc`, `mprotect` and their page-table work). Only
    /// heaps made after the call have the larger step: call it before the process starts
    /// threads. Call ``setForServing()`` once the layers are loaded. A no-op without glibc.
    public static func setForLoading() {
        setParameter(topPad, loadingTopPad)
    }

    /// Sets glibc's heap parameters for serving after ``setForLoading()``: the step back
    /// to glibc's default (a heap would otherwise keep up to a step of freed memory
    /// resident), and, since setting any of them stops glibc from adjusting its mmap and
    /// trim thresholds to the blocks freed (a block mapped on its own raises the mmap
    /// threshold to its size when freed, and the trim threshold to twice that), the
    /// thresholds that adjustment reaches with answers of up to a few megabytes: those
    /// reuse heap memory rather than being mapped and faulted in anew for each request.
    public static func setForServing() {
        setParameter(topPad, 128 << 10)
        setParameter(mmapThreshold, 4 << 20)
        setParameter(trimThreshold, 8 << 20)
    }

    /// The heap's growth step while layers load.
    static let loadingTopPad: Int32 = 64 << 20

    // `mallopt` parameters (malloc.h).
    private static let trimThreshold: Int32 = -1
    private static let topPad: Int32 = -2
    private static let mmapThreshold: Int32 = -3

    private static func setParameter(_ parameter: Int32, _ value: Int32) {
        #if canImport(Glibc)
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        _ = unsafeBitCast(symbol, to: Mallopt.self)(parameter, value)
        #endif
    }

    private static let pending = Atomic<Bool>(false)

    /// ``releaseFreePages()`` about a second from now, on a background queue; calls in the
    /// meantime share that one trim. For a server that just dropped large buffers (the
    /// answers of clients it closed for not reading), dropped kept groups, or replaced a
    /// layer's nodes with a write: glibc keeps a freed block in the arena of the thread
    /// that freed it, so without a trim each event loop's arena can hold on to its own.
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
