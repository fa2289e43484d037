#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Clocks and resident memory of this process, read the same way as the Python side of
/// the comparison reads its own.
enum ProcessUsage {
    /// A clock reading in nanoseconds. The Python side reads the same clocks:
    /// `CLOCK_MONOTONIC` (`time.perf_counter_ns`), `CLOCK_THREAD_CPUTIME_ID`
    /// (`time.thread_time_ns`) and `CLOCK_PROCESS_CPUTIME_ID` (`time.process_time`).
    static func nanoseconds(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// CPU time of the process, user and system, all threads, in seconds.
    static func cpuSeconds() -> Double {
        Double(nanoseconds(CLOCK_PROCESS_CPUTIME_ID)) * 1e-9
    }

    /// Current resident set size in bytes, from the second field of /proc/self/statm
    /// (pages); 0 where that file does not exist.
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Peak resident set size in bytes (`ru_maxrss`, which Linux reports in KiB).
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1_024
    }
}
