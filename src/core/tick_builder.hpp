#include "core/cpp_only.hpp"
#pragma once
// What one sampler tick computes, in plain C++: per-process samples aggregated into wait-event
// and query groups (and the autovacuum, checkpointer and breakdown counts they imply),
// pg_stat_io / WAL counter snapshots turned into per-tick deltas (with reset detection), the
// database, checkpointer, device and replication-slot readings, and the resulting
// IntervalRecord plus entries ready for Ring::append(). All memory is allocated by the
// constructors; begin()/add_*()/finish() never allocate.
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <vector>

#include "core/fixed_map.hpp"
#include "core/names.hpp"
#include "core/records.hpp"
#include "core/wait_class.hpp"

namespace pgsw {

constexpr size_t kIoCells =
    static_cast<size_t>(BackendKind::Count) * static_cast<size_t>(IoObjectCode::Count) *
    static_cast<size_t>(IoContextCode::Count) * static_cast<size_t>(IoOpCode::Count);

inline size_t io_cell_index(BackendKind backend, IoObjectCode object, IoContextCode context,
                            IoOpCode op) noexcept {
    size_t index = static_cast<size_t>(backend);
    index = index * static_cast<size_t>(IoObjectCode::Count) + static_cast<size_t>(object);
    index = index * static_cast<size_t>(IoContextCode::Count) + static_cast<size_t>(context);
    return index * static_cast<size_t>(IoOpCode::Count) + static_cast<size_t>(op);
}

struct IoCounters {
    uint64_t count;
    uint64_t time_us;
    uint64_t bytes;
};

// The fixed part of one reading of the cumulative counters: reset timestamps and, on 16/17,
// pg_stat_wal. The pg_stat_io cells go through IoDeltaTracker::observe().
struct IoSnapshot {
    int64_t io_reset_at_us;   // pg_stat_io stat_reset_timestamp
    int64_t wal_reset_at_us;  // pg_stat_wal stat_reset_timestamp (16/17), else 0
    bool wal_from_pg_stat_wal;
    IoCounters wal_writes;  // 16/17: pg_stat_wal wal_write / wal_write_time
    IoCounters wal_syncs;   // 16/17: pg_stat_wal wal_sync / wal_sync_time
};

struct ProcSample {
    BackendKind backend;
    BackendStateCode state;
    WaitCategory category;     // the wait's own; the tick applies category_for() per process
    uint32_t wait_event_info;  // as stored (a custom wait event: kCustomWaitEventClass | id)
    uint32_t database_oid;
    int64_t query_id;  // 0 when unknown
    WaitRole role = WaitRole::None;
    StorageKind storage_kind = StorageKind::None;
};

// One reading of the server's database, checkpointer and autovacuum state, as deltas (the
// pg layer reads, CounterDeltas subtracts). A family whose `valid` is false was not measured
// in this tick (no baseline yet, a reset, or not read at all).
struct DatabaseDeltas {
    bool valid = false;
    uint64_t xacts = 0;  // commits + rollbacks
    uint64_t tuples_inserted = 0, tuples_updated = 0, tuples_deleted = 0;
};

struct CheckpointerDeltas {
    bool valid = false;
    uint64_t timed = 0, requested = 0, done = 0;
    uint64_t write_time_ms = 0, sync_time_ms = 0, buffers_written = 0;
    bool redo_advanced = false;  // a checkpoint or restartpoint began since the last reading
};

struct SlotReading {
    uint16_t slot;  // NameDictionary id
    uint8_t flags;  // SlotFlags
    uint64_t lag_bytes;
    uint32_t spill_count;  // deltas (0 on a baseline)
    uint64_t spill_bytes;
};

class TickBuilder {
  public:
    // `memory`: where its tables live; every allocation is made here.
    explicit TickBuilder(size_t max_procs,
                         std::pmr::memory_resource *memory = std::pmr::get_default_resource());

    // Start a tick: clears groups and sets the record's time and flags.
    PGSW_TICK_PATH void begin(int64_t start_us, int64_t end_us, uint32_t flags) noexcept;
    PGSW_TICK_PATH void add_sample(const ProcSample &sample) noexcept;
    void add_io_delta(BackendKind backend, IoObjectCode object, IoContextCode context, IoOpCode op,
                      const IoCounters &delta) noexcept;
    void add_wal(const IoCounters &writes, const IoCounters &syncs) noexcept;
    void add_databases(const DatabaseDeltas &d) noexcept;
    void add_checkpointer(const CheckpointerDeltas &c) noexcept;
    // The machine's CPU time since the last reading (cpu_times.hpp), when valid.
    void add_cpu(uint64_t busy_us, uint64_t total_us) noexcept;
    // autovacuum_max_workers (the effective cap); 0 when autovacuum cannot run (standby, off).
    void set_autovacuum_max(uint32_t max_workers) noexcept { autovacuum_max_ = max_workers; }
    void set_wal_position(uint64_t position) noexcept { record_.wal_position = position; }
    void add_slot(const SlotReading &slot) noexcept;
    // One device's deltas; its DeviceIo and DeviceTime entries go after the I/O cells.
    void add_device(const DeviceIoEntry &io, const DeviceTimeEntry &time) noexcept;
    // One probe read's latency (pg_storage_wait.probe) on a device: a histogram bin count.
    void add_probe_latency(uint16_t device, double latency_us) noexcept;
    // `count` probe reads of a device in one bin (core/probe.hpp: the probe's counts handed to
    // the sampler). False when the tick has no room left for another bin: not recorded, and
    // the caller keeps it for the next reading.
    bool add_probe_bin(uint16_t device, uint8_t bin, uint64_t count) noexcept;
    // Lay out the entries (waits, queries, I/O, devices, slots) and complete the record.
    PGSW_TICK_PATH void finish(uint32_t cost_us) noexcept;

    IntervalRecord &record() noexcept { return record_; }
    const IntervalRecord &record() const noexcept { return record_; }
    const std::pmr::vector<ArenaEntry> &entries() const noexcept { return entries_; }
    // The most entries one tick can have (every group and I/O cell).
    size_t max_entries() const noexcept { return entries_.capacity(); }

  private:
    struct WaitKey {
        uint32_t wait_event_info;
        uint32_t database_oid;
        BackendKind backend;
        BackendStateCode state;
        WaitCategory category;
        bool operator==(const WaitKey &o) const noexcept {
            return wait_event_info == o.wait_event_info && database_oid == o.database_oid &&
                   backend == o.backend && state == o.state;
        }
    };
    struct WaitKeyHash {
        size_t operator()(const WaitKey &k) const noexcept {
            return mix64(
                (uint64_t{k.wait_event_info} << 32 | k.database_oid) ^
                (uint64_t{static_cast<uint8_t>(k.backend)} << 8 | static_cast<uint8_t>(k.state)) *
                    0x9E3779B97F4A7C15ULL);
        }
    };
    struct QueryKey {
        int64_t query_id;
        uint32_t database_oid;
        bool operator==(const QueryKey &o) const noexcept {
            return query_id == o.query_id && database_oid == o.database_oid;
        }
    };
    struct QueryKeyHash {
        size_t operator()(const QueryKey &k) const noexcept {
            return mix64(static_cast<uint64_t>(k.query_id) ^ k.database_oid);
        }
    };
    struct QueryCounts {
        uint32_t samples;
        uint32_t storage_samples;
        uint32_t flush_lock_samples;  // LWLock:WALWrite, storage or lock at finish()
    };
    WaitCategory flush_lock_category() const noexcept {
        return wal_io_seen_ ? WaitCategory::Storage : WaitCategory::Lock;
    }
    // What the checkpointer was doing at this tick (symptoms: slower checkpoints).
    enum class CheckpointerActivity : uint8_t { Unseen, Idle, WriteDelay, Busy };
    PGSW_TICK_PATH void note_checkpointer(const ProcSample &s, WaitCategory category) noexcept;
    PGSW_TICK_PATH void note_autovacuum_worker(const ProcSample &s, WaitCategory category) noexcept;
    PGSW_TICK_PATH void count_foreground(const ProcSample &s, WaitCategory category) noexcept;
    PGSW_TICK_PATH void finish_checkpoint_flag() noexcept;
    PGSW_TICK_PATH void finish_autovacuum() noexcept;

    IntervalRecord record_{};
    // The WAL flush lock rule (wait_class.hpp): decided at finish(), once the tick has seen
    // whether any process was in WAL I/O.
    bool wal_io_seen_ = false;
    uint32_t flush_lock_info_ = 0;  // LWLock:WALWrite's wait_event_info, when sampled
    uint64_t flush_lock_active_ = 0;
    CheckpointerActivity checkpointer_ = CheckpointerActivity::Unseen;
    bool checkpointer_busy_before_ = false;  // at the previous tick (kept across ticks)
    bool checkpoint_counters_moved_ = false;
    uint32_t autovacuum_max_ = 0;
    uint32_t autovacuum_busy_ = 0;
    FixedMap<WaitKey, uint32_t, WaitKeyHash> waits_;
    FixedMap<QueryKey, QueryCounts, QueryKeyHash> queries_;
    std::pmr::vector<ArenaEntry> io_entries_;
    std::pmr::vector<ArenaEntry> probe_bins_;
    std::pmr::vector<ArenaEntry> device_entries_;
    std::pmr::vector<ArenaEntry> slot_entries_;
    std::pmr::vector<ArenaEntry> entries_;
};

// Capacities of the variable-count families one tick can record.
constexpr size_t kMaxDevicesPerTick = 16;
constexpr size_t kMaxSlotsPerTick = 256;
constexpr size_t kMaxProbeBinsPerTick = 64;

// Turns successive readings of the cumulative counters into deltas. A counter that went down,
// or a changed reset timestamp, means the counters were reset (pg_stat_reset_shared, crash
// recovery): that tick is re-baselined and flagged kFlagCountersReset, never recorded as a
// negative or huge delta.
//
// A reading: fill next(), observe() every tracked slot, then update(). observe() compares each
// cell with its previous value as it is read and keeps only the cells that changed, so a tick
// touches the previous values once and writes a few changes, not two full snapshots.
class IoDeltaTracker {
  public:
    IoDeltaTracker();
    // Register a cell the server version tracks (once, at start) and return its slot for
    // observe(); a repeat returns the same slot. Registering starts a new baseline.
    size_t track(size_t cell);
    IoSnapshot &next() noexcept { return next_; }
    // The current value of a tracked slot, once per reading.
    void observe(size_t slot, const IoCounters &value) noexcept {
        // Unregistered slots, and a slot observed twice in a reading, must not grow changes_.
        if (slot >= last_.size() || changes_.size() == changes_.capacity())
            return;
        IoCounters &last = last_[slot];
        if (value.count == last.count && value.time_us == last.time_us && value.bytes == last.bytes)
            return;
        went_down_ |=
            value.count < last.count || value.time_us < last.time_us || value.bytes < last.bytes;
        changes_.push_back(
            {static_cast<uint32_t>(slot),
             {value.count - last.count, value.time_us - last.time_us, value.bytes - last.bytes}});
        last = value;
    }
    // Feed the reading's deltas to `tick` and return the flags for the record (kFlagBaseline,
    // kFlagCountersReset, kFlagWalFrom*).
    uint32_t update(TickBuilder &tick) noexcept;
    void forget() noexcept { have_previous_ = false; }

  private:
    struct TrackedCell {
        BackendKind backend;
        IoObjectCode object;
        IoContextCode context;
        IoOpCode op;
    };
    struct Change {
        uint32_t slot;
        IoCounters delta;
    };
    bool fixed_part_reset() const noexcept;
    std::vector<TrackedCell> tracked_;  // by slot
    std::vector<int> slot_of_cell_;     // -1: not tracked
    std::vector<IoCounters> last_;      // by slot: the latest value observed
    std::vector<Change> changes_;       // of this reading; capacity: every slot
    bool went_down_ = false;
    IoSnapshot previous_{}, next_{};
    bool have_previous_ = false;
};

}  // namespace pgsw
