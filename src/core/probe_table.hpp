#include "core/cpp_only.hpp"
#pragma once
// The probe's hand-over in shared memory (pg_storage_wait.probe; core/probe.hpp says what the
// probe is). A plain struct, one writer: the history saver worker, which does the reads. The
// sampler records what it finds here into its ticks; SQL readers copy the states.
//
// Protocol (no lock; 8-byte fields read and written whole with __atomic builtins):
//  * A slot's identity (epoch, device, state, file, reason) is rewritten under the slot's seqlock:
//    `generation` is odd while it is rewritten. Giving a slot to another device bumps `epoch` and
//    zeroes its counts inside that same write.
//  * A timed read adds 1 to its latency bin, then stores `probes` + 1 with release. Counts only
//    grow within an epoch. A reader loads `probes` with acquire; when it moved, it copies the
//    bins between two loads of `generation` (equal and even: the copy belongs to that epoch).
//    A bin raised before `probes` is simply seen one reading early: every read is counted
//    exactly once by a reader that keeps its previous copy (ProbeCollector).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pgsw {

constexpr size_t kMaxProbeSlots = 16;   // one per data or tablespace device (kMaxDevices)
constexpr size_t kProbeBinCount = 256;  // latency_stats.hpp: kLatencyBinCount
constexpr size_t kProbeTextBytes = 256;

enum class ProbeState : uint32_t {
    Off = 0,        // slot unused (or the probe was turned off)
    Preparing = 1,  // creating or opening the probe file
    Probing = 2,    // one read per pg_storage_wait.probe_interval
    Refused = 3,    // the file system refuses O_DIRECT: a read would time the page cache
    Failed = 4,     // the probe file could not be created or opened (see reason)
};

struct ProbeSlot {
    uint64_t generation;  // seqlock over the fields up to `reason`
    uint64_t epoch;       // bumped when the slot is given to a device
    uint32_t major, minor;
    uint32_t state;  // ProbeState
    uint32_t reserved0;
    uint64_t probes;    // timed reads of this epoch (release-stored after the bin)
    uint64_t failures;  // reads that failed (reason holds the last error)
    char file[kProbeTextBytes];
    char reason[kProbeTextBytes];
    uint64_t bins[kProbeBinCount];  // timed reads per latency bin, this epoch
};

struct ProbeTable {
    uint64_t enabled;  // 1 while the writer has the probe on
    uint64_t count;    // slots [0, count) have been used
    uint64_t reserved[6];
    ProbeSlot slots[kMaxProbeSlots];
};

// ---- the writer (the history saver) ---------------------------------------------------------

// Gives `slot` to device major:minor: new epoch, counts zeroed, state, file and reason set.
void probe_slot_assign(ProbeSlot &slot, uint32_t major, uint32_t minor, ProbeState state,
                       std::string_view file, std::string_view reason) noexcept;
// The same device, another state or reason (the counts are kept).
void probe_slot_update(ProbeSlot &slot, ProbeState state, std::string_view reason) noexcept;
// One timed read.
void probe_slot_record(ProbeSlot &slot, double latency_us) noexcept;
// One failed read: counted, `reason` kept as the last error.
void probe_slot_failure(ProbeSlot &slot, std::string_view reason) noexcept;

// ---- readers ----------------------------------------------------------------------------------

struct ProbeSlotView {
    bool valid = false;  // false: the writer kept rewriting it (or never used it)
    uint64_t epoch = 0;
    uint32_t major = 0, minor = 0;
    ProbeState state = ProbeState::Off;
    uint64_t probes = 0, failures = 0;
    std::string file, reason;
};
// A consistent copy of a slot's identity and totals (SQL readers; may allocate).
ProbeSlotView read_probe_slot(const ProbeSlot &slot);

}  // namespace pgsw
