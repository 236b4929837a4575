// The sanitize stage's canary (scripts/test.sh, stage_sanitize): two deliberate bugs, built
// with the same COPT (-fsanitize=address,undefined) against the same server as the extension
// and run in that server, so every run proves that a bug inside a server process is reported
// under sanitizer-logs/. Without it the stage could pass blind: a wrapper that stopped
// preloading the runtime, a log_path nobody writes to, or a flag PGXS dropped would all look
// like "zero reports". Never installed, never part of pg_storage_wait.so (test/sanitizer/
// Makefile builds it alone).
//
// Each bug sits behind an argument, so the compiler cannot see at build time that it happens:
//   pgsw_canary_heap_write(size, at)  mallocs `size` bytes and writes byte `at`: at >= size is a
//                                     heap-buffer-overflow (ASan; abort_on_error=1 ends the
//                                     backend, the postmaster then crash-restarts);
//   pgsw_canary_shift(by)             returns 1 << by: by >= 32 is UB that -fwrapv (which PGXS
//                                     adds) does not define, reported by UBSan as
//                                     "shift exponent ... is too large" (the backend goes on,
//                                     halt_on_error=0).
// Called in range, both are correct code: the stage calls them so first, to tell "the canary
// did not load or run" apart from "it ran and nothing was reported".
extern "C" {
#include "postgres.h"
#include "fmgr.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(pgsw_canary_heap_write);
PG_FUNCTION_INFO_V1(pgsw_canary_shift);
}

#include <cstdlib>

extern "C" Datum pgsw_canary_heap_write(PG_FUNCTION_ARGS) {
    const int32 size = PG_GETARG_INT32(0);
    const int32 at = PG_GETARG_INT32(1);
    if (size < 1 || size > 4096 || at < 0 || at > size + 64)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("pgsw_canary_heap_write: size must be 1..4096, at 0..size+64")));
    // malloc, not palloc: ASan sees the malloc heap only (PostgreSQL's memory contexts carve
    // chunks out of big blocks with no redzones between them).
    auto *volatile bytes = static_cast<char *>(std::malloc(static_cast<size_t>(size)));
    if (bytes == nullptr)
        ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
    bytes[at] = 'x';
    const int32 read_back = bytes[at];
    std::free(bytes);
    PG_RETURN_INT32(read_back);
}

extern "C" Datum pgsw_canary_shift(PG_FUNCTION_ARGS) {
    const int32 by = PG_GETARG_INT32(0);
    if (by < 0 || by > 63)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("pgsw_canary_shift: by must be 0..63")));
    volatile int32 one = 1;
    PG_RETURN_INT32(one << by);
}
