#ifndef C_FUZZ_DRIVER_H
#define C_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, linked in by `-sanitize=fuzzer` (https://llvm.org/docs/LibFuzzer.html, "Using libFuzzer as a
/// library"). Only referenced when the fuzz targets are built with -DFUZZING.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

#endif
