#pragma once
// A macro only: safe to include before or after postgres.h (cpp_only.hpp includes it).

// Code run at every sampler tick. The tick wakes every few milliseconds to a cold instruction
// TLB and cache (under virtualisation a TLB miss is a costly nested walk): GCC puts hot
// functions in .text.hot and the linker groups that section, so the tick's code spans a few
// pages instead of one or two per source file. Mark the declaration.
#define PGSW_TICK_PATH [[gnu::hot]]
