#include "core/cpp_only.hpp"
#pragma once
// The sampler's own thread gives back the restartable-sequences area that glibc (2.35+)
// registers for every thread (rseq(2)).
//
// Why: the sampler wakes every sample_interval, and every return to user space after a context
// switch makes the kernel read and update a registered thread's rseq area
// (__rseq_handle_notify_resume): ~5 % of the sampler's CPU at 10 ms on the benchmark machine
// (BENCHMARKS.md, section 9, sixth pass). The sampler runs no rseq critical section. glibc
// reads the area in sched_getcpu(), which falls back to getcpu() once the kernel has marked it
// unregistered (cpu_id < 0), and in pthread_create(), where a thread started from an
// unregistered one registers none: the sampler starts none. A preloaded library that uses rseq
// itself (tcmalloc's per-CPU caches) takes its slower path in this process only. Other threads
// and processes keep theirs: a registration belongs to one thread.
//
// x86-64 and aarch64 with glibc 2.35+ only; elsewhere the call says Unsupported.
#include <cstdint>
#include <optional>

namespace pgsw {

enum class RseqRelease : uint8_t {
    Released,       // the kernel no longer updates this thread's area
    NotRegistered,  // nothing to give back: glibc did not register it, or it was given back
    Unsupported,    // built without glibc's rseq interface (<sys/rseq.h>)
    Refused,        // the kernel said no (errno in RseqReleaseResult::error): left registered
};

struct RseqReleaseResult {
    RseqRelease outcome = RseqRelease::Unsupported;
    int error = 0;
};

// Gives back the calling thread's registration. Never throws; a refusal changes nothing.
RseqReleaseResult release_rseq_registration() noexcept;
const char *describe(RseqRelease outcome) noexcept;

// The calling thread's rseq area's cpu_id as the kernel keeps it: >= 0 while registered,
// negative once given back or never registered; nullopt when built without the interface.
std::optional<int32_t> rseq_area_cpu_id() noexcept;

}  // namespace pgsw
