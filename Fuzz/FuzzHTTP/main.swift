import CLibFuzzer
#if canImport(Glibc)
import Glibc
#endif

// libFuzzer runs the target on every input it makes; its options (-max_total_time=60,
// -timeout=10, a corpus directory) are this program's arguments.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzHTTP(data, size) })
