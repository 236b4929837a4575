#include "core/cpp_only.hpp"
#pragma once
// Storage-bound score and verdict over the samples of active foreground backends.
//
// Samples: one per sampler tick per client backend or parallel worker in state active or
// fastpath function call (codes.hpp: is_foreground_active), classified by wait_class.hpp. Waits
// of category idle (e.g. Client:ClientRead during COPY FROM STDIN, Timeout:PgSleep) put no load
// on the server and belong in no denominator: callers leave them out of `active`.
//
// Formula (rounded to 0.1):
//     storage_bound_score = 100 * storage / active
//     storage_pct = score, cpu_pct = 100 * cpu / active, lock_pct = 100 * lock / active,
//     other_pct = 100 * (active - storage - cpu - lock) / active
// i.e. the share of active foreground samples spent in storage waits. The sample count is
// returned beside it (active_samples) so a reader can judge it.
//
// Verdict rules, first match wins, applied to the rounded percentages so that what is shown
// agrees with the verdict:
//     active < kMinActiveSamples   -> idle          (score NULL: too few samples to judge)
//     storage_pct >= 50            -> storage-bound
//     cpu_pct     >= 60            -> cpu-bound
//     lock_pct    >= 40            -> lock-bound
//     otherwise                    -> mixed         (the hint names the largest component)
// kMinActiveSamples = 10: with 1 s ticks, a window with less than ten backend-seconds of active
// work has nothing worth diagnosing, and one sample more or less would swing the score by 10
// points or more.
//
// The hint is one sentence naming what to look at next; it uses the latency facts (read and
// WAL-flush latency, or the missing timing GUCs) for storage-bound windows.
#include <cstdint>
#include <string>

namespace pgsw {

constexpr uint64_t kMinActiveSamples = 10;
constexpr double kStorageBoundPct = 50.0;
constexpr double kCpuBoundPct = 60.0;
constexpr double kLockBoundPct = 40.0;

// "other" is the rest of `active`. Should storage + cpu + lock exceed `active` (counts taken
// at different moments), their sum is used as the denominator so no share exceeds 100 %.
struct SampleCounts {
    uint64_t active = 0;  // active foreground samples outside idle-category waits
    uint64_t storage = 0, cpu = 0, lock = 0;
};

struct LatencyFacts {
    bool reads_valid = false;          // read_avg_ms is known
    bool read_timing_missing = false;  // reads happened but track_io_timing was off
    double read_avg_ms = 0;
    bool fsync_valid = false;           // fsync_avg_ms (WAL flush) is known
    bool fsync_timing_missing = false;  // WAL flushes happened, track_wal_io_timing off
    double fsync_avg_ms = 0;
    // Shares (0..1) of the storage samples by StorageKind (wait_class.hpp).
    double read_wait_share = 0, write_wait_share = 0, wal_wait_share = 0, temp_wait_share = 0;
};

enum class Verdict : uint8_t { Idle, StorageBound, CpuBound, LockBound, Mixed };
const char *verdict_name(Verdict verdict) noexcept;  // "idle","storage-bound",...,"mixed"

struct Diagnosis {
    bool score_valid = false;  // false below kMinActiveSamples: report NULL, never 0
    double storage_bound_score = 0;
    Verdict verdict = Verdict::Idle;
    std::string hint;
    bool pct_valid = false;  // false when there was no active sample at all
    double storage_pct = 0, cpu_pct = 0, lock_pct = 0, other_pct = 0;
    uint64_t active_samples = 0;  // the denominator
};

// May throw std::bad_alloc (the hint string); everything else is arithmetic.
Diagnosis diagnose(const SampleCounts &counts, const LatencyFacts &facts);

}  // namespace pgsw
