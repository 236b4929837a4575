#include "core/cpp_only.hpp"
#pragma once
// The layout of pg_storage_wait's one shared-memory block, sized once at server start:
//
//   [SamplerStatus][NameDictionary][DeviceTable][ProbeTable][tick ring][roll-up ring]
//   [partial roll-up ring]                      (each ring: header, records, arena)
//
// The partial roll-up ring holds the minute being summed as the sampler saw it at its last
// whole second (window.hpp: a reader then needs at most one second of ticks after the last
// finished minute, whatever the sample interval). It keeps a few records so a reader copying
// the newest is not overtaken.
// SamplerStatus is written only by the sampler worker (and by the postmaster before any worker
// runs); each field is a naturally aligned 64-bit integer read and written with relaxed atomics,
// so readers get a value that was current at some moment, never a torn one. Fields are not
// updated together: a reader may see ticks of one tick and last_tick_us of the next.
// The rings' own protocol is in ring.hpp; the ProbeTable's (the opt-in probe's counts, written
// by the history saver) in probe_table.hpp.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/names.hpp"
#include "core/probe_table.hpp"
#include "core/ring.hpp"

namespace pgsw {

constexpr uint64_t kSharedMagic = 0x7067737700000004ULL;  // "pgsw" + layout version 4

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
    // Round 2.
    uint64_t cpu_cores;              // online CPUs seen by the worker (the what-if's CPU cap)
    uint64_t ticks_truncated;        // ticks whose groups did not all fit (kFlagEntriesTruncated)
    uint64_t rollups_truncated;      // roll-ups (and partials) cut likewise
    uint64_t torn_reads_skipped;     // records a reader gave up on after its retries
    uint64_t db_counter_resets;      // database counters seen going down (reset, drop)
    uint64_t databases_tracked;      // databases whose counters the last reading summed
    int64_t last_history_save_us;    // last periodic or shutdown save, 0 if none
    uint64_t history_saves;          // saves written since server start
    uint64_t history_save_failures;  // saves that failed (the log says why)
    uint64_t worker_disabled;        // 1: the worker stopped for good (disabled_reason)
    char disabled_reason[256];       // written once before worker_disabled is set
};

// The devices under the data directory, pg_wal and the tablespaces, as discovered last (at
// worker start, reload, and when a tablespace appears). Written by the sampler under a seqlock
// (`generation` odd while being rewritten); readers copy it and retry if it changed.
constexpr uint32_t kMaxDevices = 16;

enum class LimitSource : uint8_t { None = 0, Setting = 1, Cgroup = 2 };

struct DeviceInfo {
    uint16_t name;         // NameDictionary id of the kernel name; 0 when no block device (reason)
    uint8_t roles;         // DeviceRole bits
    uint8_t limit_source;  // LimitSource
    uint32_t major, minor;
    double iops_limit;                 // 0 = unknown
    double throughput_limit_mb_per_s;  // 0 = unknown
    char mount_point[256];
    char path[256];         // the first PostgreSQL path found on it (data directory, pg_wal, ...)
    char reason[160];       // why there is no block device (tmpfs, overlay, ...), else empty
    char tablespaces[128];  // names of the tablespaces on it, comma-separated
};

struct DeviceTable {
    uint64_t generation;  // seqlock: odd while the writer rewrites the table
    uint32_t count;
    uint32_t reserved;
    DeviceInfo devices[kMaxDevices];
};
static_assert(kMaxProbeSlots == kMaxDevices, "a probe slot for every device");

// Every field shared between processes is read and written as a whole 8-byte (or 4-byte)
// atomic: that must never fall back to a lock (a lock would live in one process's memory).
static_assert(__atomic_always_lock_free(sizeof(uint64_t), 0), "8-byte atomics must be lock-free");
static_assert(__atomic_always_lock_free(sizeof(uint32_t), 0), "4-byte atomics must be lock-free");

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

// Offsets of each part, computed with overflow checks (add_size/mul_size semantics: a size
// that does not fit in size_t makes `overflow` true, and the caller refuses to start).
struct SharedLayout {
    size_t names_offset;
    size_t devices_offset;
    size_t probes_offset;
    size_t ticks_offset;
    size_t rollups_offset;
    size_t partials_offset;
    size_t total_bytes;
    bool overflow;

    static SharedLayout compute(const SharedCapacities &c) noexcept {
        SharedLayout layout{};
        CheckedSize at(align64(sizeof(SamplerStatus)));
        layout.names_offset = at.value;
        at += align64(sizeof(NameDictionary));
        layout.devices_offset = at.value;
        at += align64(sizeof(DeviceTable));
        layout.probes_offset = at.value;
        at += align64(sizeof(ProbeTable));
        layout.ticks_offset = at.value;
        at += Ring::bytes_needed_checked(c.tick_records, c.tick_entries);
        layout.rollups_offset = at.value;
        at += Ring::bytes_needed_checked(c.rollup_records, c.rollup_entries);
        layout.partials_offset = at.value;
        at += Ring::bytes_needed_checked(c.partial_records, c.partial_entries);
        layout.total_bytes = at.value;
        layout.overflow = at.overflow;
        return layout;
    }

  private:
    static size_t align64(size_t n) noexcept { return (n + 63) & ~size_t{63}; }
};

// A process's view of the block.
struct SharedView {
    SamplerStatus *status = nullptr;
    NameDictionary *names = nullptr;
    DeviceTable *devices = nullptr;
    ProbeTable *probes = nullptr;
    Ring ticks;
    Ring rollups;
    Ring partials;  // the current minute's roll-up so far, republished every second

    static SharedView create(void *base, const SharedCapacities &c) noexcept;
    static SharedView attach(void *base, const SharedCapacities &c) noexcept;
    // False when the block was laid out by a build with another layout version (its magic):
    // every offset above would then be wrong, so nothing else in it may be read.
    bool laid_out_by_this_build() const noexcept {
        return status != nullptr && status_load(status->magic) == kSharedMagic;
    }
};

inline SharedView SharedView::create(void *base, const SharedCapacities &c) noexcept {
    const SharedLayout layout = SharedLayout::compute(c);
    auto *bytes = static_cast<char *>(base);
    auto *status = static_cast<SamplerStatus *>(base);
    *status = SamplerStatus{};
    status->magic = kSharedMagic;
    std::memset(bytes + layout.names_offset, 0, sizeof(NameDictionary));
    std::memset(bytes + layout.devices_offset, 0, sizeof(DeviceTable));
    std::memset(bytes + layout.probes_offset, 0, sizeof(ProbeTable));
    Ring::create(bytes + layout.ticks_offset, c.tick_records, c.tick_entries);
    Ring::create(bytes + layout.rollups_offset, c.rollup_records, c.rollup_entries);
    Ring::create(bytes + layout.partials_offset, c.partial_records, c.partial_entries);
    return attach(base, c);
}

inline SharedView SharedView::attach(void *base, const SharedCapacities &c) noexcept {
    const SharedLayout layout = SharedLayout::compute(c);
    auto *bytes = static_cast<char *>(base);
    return SharedView{static_cast<SamplerStatus *>(base),
                      reinterpret_cast<NameDictionary *>(bytes + layout.names_offset),
                      reinterpret_cast<DeviceTable *>(bytes + layout.devices_offset),
                      reinterpret_cast<ProbeTable *>(bytes + layout.probes_offset),
                      Ring::attach(bytes + layout.ticks_offset),
                      Ring::attach(bytes + layout.rollups_offset),
                      Ring::attach(bytes + layout.partials_offset)};
}

}  // namespace pgsw
