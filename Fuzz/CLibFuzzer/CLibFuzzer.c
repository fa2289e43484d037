// Declarations only: see include/CLibFuzzer.h.
