#ifndef GEO_CLUSTER_CLIBFUZZER_H
#define GEO_CLUSTER_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver (compiler-rt, linked in by -sanitize=fuzzer): parses libFuzzer's
// command line and runs `callback` on each input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
