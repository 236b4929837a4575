#include "core/cpp_only.hpp"
#pragma once
// What one sampler tick computes, in plain C++: per-process samples aggregated into wait-event
// and query groups, pg_stat_io / WAL counter snapshots turned into per-tick deltas (with reset
// detection), and the resulting IntervalRecord plus entries ready for Ring::append(). All memory
// is allocated by the constructors; begin()/add_*()/finish() never allocate.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/fixed_map.hpp"
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

// One reading of the cumulative counters, flattened into stable codes by the PostgreSQL layer.
struct IoSnapshot {
    int64_t io_reset_at_us;   // pg_stat_io stat_reset_timestamp
    int64_t wal_reset_at_us;  // pg_stat_wal stat_reset_timestamp (16/17), else 0
    bool wal_from_pg_stat_wal;
    IoCounters wal_writes;       // 16/17: pg_stat_wal wal_write / wal_write_time
    IoCounters wal_syncs;        // 16/17: pg_stat_wal wal_sync / wal_sync_time
    IoCounters cells[kIoCells];  // only the cells registered with IoDeltaTracker::track() count
};

struct ProcSample {
    BackendKind backend;
    BackendStateCode state;
    WaitCategory category;
    uint32_t wait_event_info;
    uint32_t database_oid;
    int64_t query_id;  // 0 when unknown
};

class TickBuilder {
  public:
    explicit TickBuilder(size_t max_procs);

    // Start a tick: clears groups and sets the record's time and flags.
    void begin(int64_t start_us, int64_t end_us, uint32_t flags) noexcept;
    void add_sample(const ProcSample &sample) noexcept;
    void add_io_delta(BackendKind backend, IoObjectCode object, IoContextCode context, IoOpCode op,
                      const IoCounters &delta) noexcept;
    void add_wal(const IoCounters &writes, const IoCounters &syncs) noexcept;
    // Lay out the entries (waits, queries, I/O) and complete the record.
    void finish(uint32_t cost_us) noexcept;

    IntervalRecord &record() noexcept { return record_; }
    const IntervalRecord &record() const noexcept { return record_; }
    const std::vector<ArenaEntry> &entries() const noexcept { return entries_; }

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
    };

    IntervalRecord record_{};
    FixedMap<WaitKey, uint32_t, WaitKeyHash> waits_;
    FixedMap<QueryKey, QueryCounts, QueryKeyHash> queries_;
    std::vector<ArenaEntry> io_entries_;
    std::vector<ArenaEntry> entries_;
};

// Turns successive IoSnapshots into deltas. A counter that went down, or a changed reset
// timestamp, means the counters were reset (pg_stat_reset_shared, crash recovery): that tick is
// re-baselined and flagged kFlagCountersReset, never recorded as a negative or huge delta.
class IoDeltaTracker {
  public:
    IoDeltaTracker();
    // Register a cell the server version tracks (once, at start; repeats are ignored). Only
    // registered cells are compared, so a tick costs O(tracked cells), not O(kIoCells).
    void track(size_t cell);
    // The snapshot to fill before update(); owned here to avoid copies.
    IoSnapshot &next() noexcept { return *next_; }
    // Compare next() with the previous snapshot, feed deltas to `tick`, and return the flags
    // for the record (kFlagBaseline, kFlagCountersReset, kFlagWalFrom*).
    uint32_t update(TickBuilder &tick) noexcept;
    void forget() noexcept { have_previous_ = false; }

  private:
    struct TrackedCell {
        uint16_t index;
        BackendKind backend;
        IoObjectCode object;
        IoContextCode context;
        IoOpCode op;
    };
    bool reset_timestamps_or_wal_went_down() const noexcept;
    // One pass over the tracked cells: deltas into delta_; false if any counter went down.
    bool compute_deltas() noexcept;
    std::vector<TrackedCell> tracked_;
    std::vector<bool> is_tracked_;
    std::vector<IoCounters> delta_;  // parallel to tracked_
    std::unique_ptr<IoSnapshot> previous_;
    std::unique_ptr<IoSnapshot> next_;
    bool have_previous_ = false;
};

}  // namespace pgsw
