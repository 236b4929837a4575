#include "core/cpp_only.hpp"
#pragma once
// The layout of pg_storage_wait's one shared-memory block, sized once at server start:
//
//   [SamplerStatus][tick ring][roll-up ring][partial roll-up ring]   (each: header, records,
//                                                                     arena)
//
// The partial roll-up ring holds the minute being summed as the sampler saw it at its last
// whole second (window.hpp: a reader then needs at most one second of ticks after the last
// finished minute, whatever the sample interval). It keeps a few records so a reader copying
// the newest is not overtaken.
// SamplerStatus is written only by the sampler worker (and by the postmaster before any worker
// runs); each field is a naturally aligned 64-bit integer read and written with relaxed atomics,
// so readers get a value that was current at some moment, never a torn one. Fields are not
// updated together: a reader may see ticks of one tick and last_tick_us of the next.
// The rings' own protocol is in ring.hpp.
#include <cstddef>
#include <cstdint>

#include "core/ring.hpp"

namespace pgsw {

constexpr uint64_t kSharedMagic = 0x7067737700000002ULL;  // "pgsw" + layout version 2

struct SamplerStatus {
    uint64_t magic;
    int64_t worker_pid;         // 0 when no worker runs
    int64_t worker_started_us;  // TimestampTz
    uint64_t worker_starts;     // worker starts since server start (restarts after errors)
    int64_t sample_interval_ms;
    uint64_t ticks;     // ticks since server start
    uint64_t overruns;  // deadlines missed (ticks skipped, not queued)
    uint64_t tick_cost_total_us;
    uint64_t tick_cost_max_us;
    int64_t last_tick_us;
    uint64_t last_tick_flags;     // RecordFlag bits of the last tick
    uint64_t counter_resets;      // ticks that saw pg_stat_io / WAL counters reset
    uint64_t restored_from_disk;  // 1 when history was read back at server start
    uint64_t restored_records;
    int64_t history_reset_us;  // last storage_wait_reset(), 0 if never
};

template <typename T>
inline T status_load(const T &field) noexcept {
    return __atomic_load_n(&field, __ATOMIC_RELAXED);
}
template <typename T>
inline void status_store(T &field, T value) noexcept {
    __atomic_store_n(&field, value, __ATOMIC_RELAXED);
}

// The partial roll-up ring: 4 slots (3 readable), each partial up to half the arena (Ring's
// rule); a larger partial is cut, flagged, and not used by readers (they read ticks instead).
constexpr uint64_t kPartialRecords = 4;
constexpr uint64_t kPartialEntries = 16384;  // 512 kB

struct SharedCapacities {
    uint64_t tick_records;
    uint64_t tick_entries;
    uint64_t rollup_records;
    uint64_t rollup_entries;
    uint64_t partial_records = kPartialRecords;
    uint64_t partial_entries = kPartialEntries;
};

struct SharedLayout {
    size_t ticks_offset;
    size_t rollups_offset;
    size_t partials_offset;
    size_t total_bytes;

    static SharedLayout compute(const SharedCapacities &c) noexcept {
        SharedLayout layout{};
        layout.ticks_offset = (sizeof(SamplerStatus) + 63) & ~size_t{63};
        layout.rollups_offset =
            layout.ticks_offset + Ring::bytes_needed(c.tick_records, c.tick_entries);
        layout.partials_offset =
            layout.rollups_offset + Ring::bytes_needed(c.rollup_records, c.rollup_entries);
        layout.total_bytes =
            layout.partials_offset + Ring::bytes_needed(c.partial_records, c.partial_entries);
        return layout;
    }
};

// A process's view of the block.
struct SharedView {
    SamplerStatus *status = nullptr;
    Ring ticks;
    Ring rollups;
    Ring partials;  // the current minute's roll-up so far, republished every second

    static SharedView create(void *base, const SharedCapacities &c) noexcept;
    static SharedView attach(void *base, const SharedCapacities &c) noexcept;
};

inline SharedView SharedView::create(void *base, const SharedCapacities &c) noexcept {
    const SharedLayout layout = SharedLayout::compute(c);
    auto *bytes = static_cast<char *>(base);
    auto *status = static_cast<SamplerStatus *>(base);
    *status = SamplerStatus{};
    status->magic = kSharedMagic;
    Ring::create(bytes + layout.ticks_offset, c.tick_records, c.tick_entries);
    Ring::create(bytes + layout.rollups_offset, c.rollup_records, c.rollup_entries);
    Ring::create(bytes + layout.partials_offset, c.partial_records, c.partial_entries);
    return attach(base, c);
}

inline SharedView SharedView::attach(void *base, const SharedCapacities &c) noexcept {
    const SharedLayout layout = SharedLayout::compute(c);
    auto *bytes = static_cast<char *>(base);
    return SharedView{static_cast<SamplerStatus *>(base), Ring::attach(bytes + layout.ticks_offset),
                      Ring::attach(bytes + layout.rollups_offset),
                      Ring::attach(bytes + layout.partials_offset)};
}

}  // namespace pgsw
