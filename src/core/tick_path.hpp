#pragma once
// A macro only: safe to include before or after postgres.h (cpp_only.hpp includes it).

// Code run at every sampler tick. The tick wakes every few milliseconds to a cold instruction
// TLB and cache, and a profile put the library's own tick time at function entries spread over
// ~18 code pages (BENCHMARKS.md section 9): GCC puts hot functions in .text.hot and the linker
// groups that section, so the tick's code spans a few pages (7 kB). Mark the declaration.
#define PGSW_TICK_PATH [[gnu::hot]]
