#include "core/cpp_only.hpp"
#pragma once
// The plain records that live in shared memory and in the history file.
//
// Both rings (per-tick detail and per-minute roll-up) hold IntervalRecords: a record sums
// `ticks` sampler ticks (1 in the tick ring). A record's variable part (wait-event groups, query
// groups, I/O deltas, latency histogram bins) is a run of 32-byte ArenaEntries in the ring's
// arena, in that order. Only fixed-size plain types here: no pointers, no std:: types, no
// PostgreSQL enum values (see codes.hpp), so the bytes mean the same in every process and build.
#include <cstddef>
#include <cstdint>

#include "core/codes.hpp"

namespace pgsw {

enum RecordFlag : uint32_t {
    kFlagBaseline = 1u << 0,          // first tick after (re)start or reset: no deltas recorded
    kFlagCountersReset = 1u << 1,     // pg_stat_io / WAL counters were reset: re-baselined
    kFlagTrackIoTiming = 1u << 2,     // track_io_timing was on at this tick
    kFlagTrackWalIoTiming = 1u << 3,  // track_wal_io_timing was on at this tick
    kFlagInRecovery = 1u << 4,        // the server was a hot standby / in recovery
    kFlagWalFromPgStatWal = 1u << 5,  // WAL figures from pg_stat_wal (16/17)
    kFlagWalFromPgStatIo = 1u << 6,   // WAL figures from pg_stat_io's WAL rows (18+)
    kFlagEntriesTruncated = 1u << 7,  // more groups than the tick could hold; counted in totals
    kFlagOverrun = 1u << 8,           // this tick started after one or more missed deadlines
    // pg_stat_io / WAL counters were not read at this tick (pg_storage_wait.io_read_interval):
    // its I/O is in the deltas of the next tick that reads them. Ticks only.
    kFlagCountersNotRead = 1u << 9,
};

// In a roll-up record, flags are OR-ed over its ticks, except that the timing flags are AND-ed
// through `timing_ticks` counters below.
struct IntervalRecord {
    uint64_t seq;          // seqlock change counter (odd while being written); see ring.hpp
    uint64_t record_no;    // 0-based position in the ring's history; identifies the record
    int64_t start_us;      // interval start (previous tick), PostgreSQL TimestampTz microseconds
    int64_t end_us;        // tick time (roll-up: last tick's time)
    uint64_t entry_start;  // first entry, absolute arena position
    uint32_t n_wait_groups;
    uint32_t n_query_groups;
    uint32_t n_io_deltas;
    uint32_t n_latency_bins;
    uint32_t flags;
    uint32_t ticks;             // sampler ticks summed in this record
    uint32_t ticks_io_timing;   // of which with track_io_timing on
    uint32_t ticks_wal_timing;  // of which with track_wal_io_timing on
    uint64_t tick_cost_us;      // sum of the ticks' own cost
    uint32_t tick_cost_max_us;
    uint32_t procs_sampled_max;  // most processes seen in one tick
    uint64_t procs_sampled;      // process samples (all types and states)
    // Samples of active foreground backends (codes.hpp: is_foreground_active), by category.
    uint64_t fg_active;
    uint64_t fg_storage;
    uint64_t fg_cpu;
    uint64_t fg_lock;
    // Headline series, pre-summed from the I/O deltas so that summaries need no entries:
    // relation data-file reads (all backend types and contexts) and WAL syncs at commit
    // (pg_stat_wal on 16/17; pg_stat_io object wal, context normal, op fsync on 18).
    uint64_t reads;
    uint64_t read_time_us;
    uint64_t wal_syncs;
    uint64_t wal_sync_time_us;
    uint64_t wal_writes;
    uint64_t wal_write_time_us;
    // Largest per-tick mean latency in the record (µs), 0 when no timed I/O.
    double read_latency_max_us;
    double wal_sync_latency_max_us;
};

enum class EntryKind : uint8_t { WaitGroup = 1, QueryGroup = 2, IoDelta = 3, LatencyBin = 4 };

// Samples of processes with one backend kind, state, wait event and database.
struct WaitGroupEntry {
    EntryKind kind;
    BackendKind backend;
    BackendStateCode state;
    uint8_t category;          // WaitCategory, classified when sampled
    uint32_t wait_event_info;  // raw, translated to names at read time
    uint32_t database_oid;     // 0 for processes without a database
    uint32_t samples;
    uint64_t reserved[2];
};

// Samples of active foreground backends running one query id.
struct QueryGroupEntry {
    EntryKind kind;
    uint8_t reserved0[3];
    uint32_t database_oid;
    uint32_t samples;
    uint32_t storage_samples;
    int64_t query_id;
    uint64_t reserved1;
};

// Change of one pg_stat_io cell over the record's interval.
struct IoDeltaEntry {
    EntryKind kind;
    BackendKind backend;
    IoObjectCode object;
    IoContextCode context;
    IoOpCode op;
    uint8_t reserved[3];
    uint64_t count;
    uint64_t time_us;
    uint64_t bytes;
};

enum class LatencySeries : uint8_t { Reads = 0, WalSyncs = 1 };

// Roll-up only: Δcount-weight of the ticks whose mean latency fell into one histogram bin.
struct LatencyBinEntry {
    EntryKind kind;
    LatencySeries series;
    uint8_t bin;  // latency_stats.hpp: latency_bin()
    uint8_t reserved0[5];
    double weight;
    uint64_t reserved1[2];
};

// Entry kinds as a bit mask, for readers that copy only some of a record's runs.
enum EntryKindMask : uint32_t {
    kWaitGroupEntries = 1u << 0,
    kQueryGroupEntries = 1u << 1,
    kIoDeltaEntries = 1u << 2,
    kLatencyBinEntries = 1u << 3,
    kNoEntries = 0,
    kAllEntries = 0xFu,
};

union ArenaEntry {
    EntryKind kind;
    WaitGroupEntry wait;
    QueryGroupEntry query;
    IoDeltaEntry io;
    LatencyBinEntry bin;
};
static_assert(sizeof(ArenaEntry) == 32, "arena entries are 32 bytes in memory and on disk");
static_assert(sizeof(IntervalRecord) % 8 == 0, "records are 8-byte aligned");

}  // namespace pgsw
