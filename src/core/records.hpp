#include "core/cpp_only.hpp"
#pragma once
// The plain records that live in shared memory and in the history file.
//
// Both rings (per-tick detail and per-minute roll-up) hold IntervalRecords: a record sums
// `ticks` sampler ticks (1 in the tick ring). A record's variable part (wait-event groups, query
// groups, I/O deltas, latency histogram bins, devices, replication slots) is a run of 32-byte
// ArenaEntries in the ring's arena, in that order. Only fixed-size plain types here: no pointers,
// no std:: types, no PostgreSQL enum values (see codes.hpp), so the bytes mean the same in every
// process and build.
#include <array>
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
    // Round 2. A checkpoint or restartpoint was running during this tick (roll-up: in some).
    kFlagInCheckpoint = 1u << 10,
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

    // ---- Format 2 (extension 1.1). Fields are only appended: a format-1 record converts by
    // copying its bytes, and the zeros it then carries here read as "not measured" because
    // every family below has a ticks_* counter of the ticks that measured it.

    // The sampler's own timeline (history: restarts and clock steps): seq_end_us continues
    // across worker and server restarts and never goes back; elapsed_us is the CLOCK_MONOTONIC
    // time the record measures (0 for a baseline tick). Rates divide by elapsed, not by wall
    // time, so a wall-clock step neither inflates nor negates them.
    int64_t seq_end_us;
    uint64_t elapsed_us;
    // Runs after the format-1 ones, in this order: DeviceIo/DeviceTime pairs, then Slots.
    uint32_t n_device_entries;
    uint32_t n_slots;

    // Active foreground samples by breakdown component, subsets of fg_storage, plus synchronous
    // replication (its own category; not in fg_storage/cpu/lock): the rest of fg_active is
    // "other". wal counts LWLock:WALWrite samples the tick counted as storage.
    uint64_t fg_storage_read;  // StorageKind::Read: data-file reads, IPC:BufferIo, AIO waits
    uint64_t fg_storage_wal;   // StorageKind::Wal and LWLock:WALWrite counted as storage
    uint64_t fg_sync_rep;      // IPC:SyncRep: a commit waiting for a synchronous standby
    uint64_t fg_active_in_checkpoint;  // fg_active of kFlagInCheckpoint ticks

    // Database counters summed over all databases (pg_stat_database): deltas of the ticks that
    // read them with a baseline, ticks_db_counters of them.
    uint32_t ticks_db_counters;
    uint32_t ticks_checkpointer;  // ticks that read the checkpointer counters with a baseline
    uint64_t xacts;               // xact_commit + xact_rollback
    uint64_t tuples_inserted;
    uint64_t tuples_updated;
    uint64_t tuples_deleted;
    uint64_t xacts_in_checkpoint;  // of xacts, in kFlagInCheckpoint ticks

    // Checkpointer counters (pg_stat_checkpointer 17+, pg_stat_bgwriter 16), deltas.
    uint64_t checkpoints_timed;
    uint64_t checkpoints_requested;
    uint64_t checkpoints_done;  // 18+: num_done; 16/17: timed + requested (skipped included)
    uint64_t checkpoint_write_time_ms;
    uint64_t checkpoint_sync_time_ms;
    uint64_t checkpoint_buffers_written;
    uint32_t ticks_in_checkpoint;  // ticks with kFlagInCheckpoint
    uint32_t checkpoints_started;  // redo pointer advances seen (a checkpoint really began)
    // Reads and WAL syncs of the kFlagInCheckpoint ticks (subsets of reads, wal_syncs).
    uint64_t reads_in_checkpoint;
    uint64_t read_time_us_in_checkpoint;
    uint64_t wal_syncs_in_checkpoint;
    uint64_t wal_sync_time_us_in_checkpoint;

    // Autovacuum workers: ticks_autovacuum ticks knew autovacuum_max_workers (0 on a standby
    // or with autovacuum off), busy/max summed over them; samples of the workers by wait.
    uint32_t ticks_autovacuum;
    uint32_t ticks_autovacuum_all_busy;
    uint64_t autovacuum_workers_busy;
    uint64_t autovacuum_workers_max;
    uint64_t autovacuum_samples_io;     // storage waits
    uint64_t autovacuum_samples_delay;  // Timeout:VacuumDelay (cost-based throttling)
    uint64_t autovacuum_samples_cpu;
    uint64_t autovacuum_samples_other;  // locks, other waits

    // Spread of the per-tick mean read latency (ceiling detection: a queue carries the load):
    // sum over timed ticks of Δreads x (Δtime/Δreads)^2, beside read_time_us (= sum of
    // Δreads x mean). Roll-ups sum it.
    double read_latency_m2;
    // Replication: WAL insert (primary) or replay (standby) position at the record's end.
    uint64_t wal_position;
    // Samples of other processes on CPU (checkpointer, WAL writer, autovacuum, walsenders,
    // background workers): the cores they take are not there for user sessions (the what-if's
    // CPU cap).
    uint64_t background_cpu;
    // The machine's CPU (/proc/stat, all cores, every process on it: PostgreSQL, its clients if
    // they run here, the rest), µs of CPU time over the ticks that read it (ticks_cpu):
    // busy / total is the utilisation, total / elapsed the cores. The what-if's CPU cap.
    uint64_t cpu_busy_us;
    uint64_t cpu_total_us;
    uint32_t ticks_cpu;
    // Client backend samples in any state (active, idle, idle in transaction): the sessions N
    // of the closed loop N = X (W + Z) behind the what-if (verdict.hpp).
    uint32_t reserved_format2;
    uint64_t client_sessions;
};

enum class EntryKind : uint8_t {
    WaitGroup = 1,
    QueryGroup = 2,
    IoDelta = 3,
    LatencyBin = 4,
    // Format 2.
    DeviceIo = 5,    // a block device's operations and sectors
    DeviceTime = 6,  // the same device's times; always right after its DeviceIo
    Slot = 7,        // a replication slot
};

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

// Reads and WalSyncs: roll-up only, the Δcount-weight of the ticks whose mean latency fell
// into a bin. Probe: ticks and roll-ups, one count per probe read (a true per-I/O latency) of
// the device `device`.
enum class LatencySeries : uint8_t { Reads = 0, WalSyncs = 1, Probe = 2 };

struct LatencyBinEntry {
    EntryKind kind;
    LatencySeries series;
    uint8_t bin;  // latency_stats.hpp: latency_bin()
    uint8_t reserved0;
    uint16_t device;  // Probe: NameDictionary id of the device; else 0
    uint8_t reserved2[2];
    double weight;
    uint64_t reserved1[2];
};

// Roles of a device, as bits (a device can hold several).
enum DeviceRole : uint8_t {
    kRoleData = 1u << 0,        // the data directory
    kRoleWal = 1u << 1,         // pg_wal (after following its symlink)
    kRoleTablespace = 1u << 2,  // a tablespace
};

// Change of one block device's /proc/diskstats counters over the record. `device` is the
// NameDictionary id of its kernel name (e.g. "nvme0n1p2"); `roles` DeviceRole bits.
struct DeviceIoEntry {
    EntryKind kind;
    uint8_t roles;
    uint16_t device;
    uint32_t reads;          // completed
    uint32_t writes;         // completed
    uint32_t flushes;        // completed (kernel 5.5+; else 0, and kDeviceNoFlushFields)
    uint64_t read_sectors;   // 512-byte units, as the kernel counts them
    uint64_t write_sectors;  // 512-byte units
};

enum DeviceFlags : uint8_t {
    kDeviceNoFlushFields = 1u << 0,  // the kernel has no flush counters
    kDeviceHasLimit = 1u << 1,       // an IOPS or throughput limit was known in some tick
};

struct DeviceTimeEntry {
    EntryKind kind;
    uint8_t flags;  // DeviceFlags
    uint16_t device;
    uint32_t read_ms;         // time spent reading (sum over requests)
    uint32_t write_ms;        // time spent writing
    uint32_t flush_ms;        // time spent flushing
    uint32_t busy_ms;         // io_ticks: time with at least one request in flight (util)
    uint32_t queue_ms;        // weighted time in queue (queue depth x time)
    uint32_t ticks;           // ticks with a delta for this device
    uint16_t ticks_at_limit;  // ticks at >= 95 % of a known IOPS or throughput limit
    uint16_t reserved;
};

enum SlotFlags : uint8_t {
    kSlotLogical = 1u << 0,
    kSlotActive = 1u << 1,       // a process was streaming from it at the reading
    kSlotInvalidated = 1u << 2,  // the server invalidated it (WAL removed, ...)
};

// One replication slot at the record's last reading. Roll-ups keep the last reading's lag and
// the largest, and sum the spill deltas.
struct SlotEntry {
    EntryKind kind;
    uint8_t flags;           // SlotFlags
    uint16_t slot;           // NameDictionary id of its name
    uint32_t spill_count;    // Δ spill_count (logical decoding spilled a transaction to disk)
    uint64_t lag_bytes;      // WAL position - (confirmed_flush for logical, restart_lsn) at end
    uint64_t lag_max_bytes;  // largest lag read in the record
    uint64_t spill_bytes;    // Δ spill_bytes
};

// Entry kinds as a bit mask, for readers that copy only some of a record's runs.
enum EntryKindMask : uint32_t {
    kWaitGroupEntries = 1u << 0,
    kQueryGroupEntries = 1u << 1,
    kIoDeltaEntries = 1u << 2,
    kLatencyBinEntries = 1u << 3,
    kDeviceEntries = 1u << 4,  // DeviceIo and DeviceTime
    kSlotEntries = 1u << 5,
    kNoEntries = 0,
    kAllEntries = 0x3Fu,
};

union ArenaEntry {
    EntryKind kind;
    WaitGroupEntry wait;
    QueryGroupEntry query;
    IoDeltaEntry io;
    LatencyBinEntry bin;
    DeviceIoEntry device_io;
    DeviceTimeEntry device_time;
    SlotEntry slot;
};
static_assert(sizeof(ArenaEntry) == 32, "arena entries are 32 bytes in memory and on disk");
static_assert(sizeof(IntervalRecord) % 8 == 0, "records are 8-byte aligned");
static_assert(sizeof(DeviceIoEntry) == 32 && sizeof(DeviceTimeEntry) == 32 &&
                  sizeof(SlotEntry) == 32 && sizeof(LatencyBinEntry) == 32,
              "every entry kind fills exactly one 32-byte arena slot");
// The format-1 record (extension 1.0) ended at wal_sync_latency_max_us: later fields only
// append, so a format-1 record is a prefix of this one.
constexpr size_t kFormat1RecordSize = 192;
static_assert(offsetof(IntervalRecord, seq_end_us) == kFormat1RecordSize,
              "format-2 fields must follow the format-1 record unchanged");

// A record's entry runs in arena order, with the mask of each run's kinds.
constexpr size_t kEntryRunCount = 6;
constexpr uint32_t kEntryRunMasks[kEntryRunCount] = {kWaitGroupEntries, kQueryGroupEntries,
                                                     kIoDeltaEntries,   kLatencyBinEntries,
                                                     kDeviceEntries,    kSlotEntries};
using EntryRuns = std::array<uint32_t *, kEntryRunCount>;
inline EntryRuns entry_runs(IntervalRecord &r) noexcept {
    return {&r.n_wait_groups,  &r.n_query_groups,   &r.n_io_deltas,
            &r.n_latency_bins, &r.n_device_entries, &r.n_slots};
}
inline uint64_t entry_count(const IntervalRecord &r) noexcept {
    return uint64_t{r.n_wait_groups} + r.n_query_groups + r.n_io_deltas + r.n_latency_bins +
           r.n_device_entries + r.n_slots;
}

// Adds the counters of `r` into `sum` (a roll-up or a window's total): the one place that
// knows how each field combines. Leaves the ring bookkeeping (seq, record_no, entry_start,
// n_*) and the time span alone; flags are OR-ed except the per-tick ones.
void accumulate(IntervalRecord &sum, const IntervalRecord &r) noexcept;

}  // namespace pgsw
