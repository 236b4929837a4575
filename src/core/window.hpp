#include "core/cpp_only.hpp"
#pragma once
// The answers over a window of history: summary, wait-event profile, per-cell I/O latency,
// time series and query ids. Pure functions of copied records (readers never touch the rings
// while computing), so each is unit-tested on synthetic records.
//
// Which records a window uses (plan_window):
//  * the per-tick ring when it reaches back to the window's start;
//  * otherwise the one-minute roll-ups from the window's start, followed by the ticks newer
//    than the last roll-up (the minute being summed now), so nothing is counted twice;
//  * a window longer than the retention is clamped to it (the caller raises a NOTICE);
//  * answers that only sum (not the time series) may also take the sampler's partial roll-up
//    of the current minute (shared_state.hpp) in place of its ticks, so a 5-minute window at a
//    10 ms interval reads ~5 roll-ups, one partial and at most ~1 s of ticks, not ~6,000 ticks.
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/latency_stats.hpp"
#include "core/ring.hpp"
#include "core/verdict.hpp"
#include "core/wait_class.hpp"

namespace pgsw {

// Names of raw wait_event_info values, resolved by the PostgreSQL layer (which alone can), and
// classified here. wait_event_info 0 is CPU.
class WaitNameTable {
  public:
    struct Entry {
        std::string type, event;
        WaitClass wait_class;
    };
    void add(uint32_t wait_event_info, const char *type, const char *event);
    const Entry &find(uint32_t wait_event_info) const;

  private:
    std::unordered_map<uint32_t, Entry> entries_;
    Entry unknown_{"", "", {WaitCategory::Other, StorageKind::None}};
    Entry cpu_{"CPU", "CPU", {WaitCategory::Cpu, StorageKind::None}};
};

struct WindowPlan {
    int64_t start_us = 0;
    int64_t end_us = 0;
    bool clamped = false;  // the request was longer than the retention
    bool use_rollups = false;
};

struct RetentionFacts {
    int64_t tick_retention_us;    // tick ring capacity x sample interval
    int64_t rollup_retention_us;  // roll-up ring capacity x one minute
    bool have_ticks;
    int64_t oldest_tick_start_us;
    bool have_rollups;
    int64_t oldest_rollup_start_us;
};

WindowPlan plan_window(int64_t now_us, int64_t window_us, const RetentionFacts &facts) noexcept;

// The records of a window, oldest roll-ups first, then ticks, visited one at a time. Each
// answer below makes one pass and asks only for the entry kinds it needs (EntryKindMask), so a
// 7-day window is never copied whole: a pass holds one record at a time.
class RecordSource {
  public:
    using Visitor = std::function<void(const RecordCopy &, bool rollup)>;
    virtual ~RecordSource() = default;
    virtual void for_each(uint32_t kinds, const Visitor &visit) const = 0;
};

// Records already copied (unit tests; entries of every kind are visited).
struct WindowRecords : RecordSource {
    std::vector<RecordCopy> rollups;  // oldest first
    std::vector<RecordCopy> ticks;    // oldest first, all newer than the last roll-up used
    void for_each(uint32_t kinds, const Visitor &visit) const override;
};

// Where RingWindow finds the current minute's partial roll-up. It is used only when it starts
// at or after the end of what the roll-ups and the window start already cover, is complete
// (not cut), and ends after the last storage_wait_reset() (reset_us).
struct PartialSource {
    const Ring *ring = nullptr;
    int64_t reset_us = 0;
};

// The window read straight from the rings. Which records belong to it is fixed when it is
// built (record numbers; the partial roll-up is copied then), so several passes see the same
// records, except those the sampler overwrites meanwhile, which are skipped like any record
// that is gone. A record still torn after the reader's retries is skipped too, and counted in
// `*torn_reads` when given (shared memory: SamplerStatus.torn_reads_skipped, added to
// atomically). May throw bad_alloc (the partial's copy).
class RingWindow : public RecordSource {
  public:
    RingWindow(const Ring &ticks, const Ring &rollups, const WindowPlan &plan,
               const PartialSource &partial = {}, uint64_t *torn_reads = nullptr);
    void for_each(uint32_t kinds, const Visitor &visit) const override;
    bool uses_partial() const noexcept { return have_partial_; }

  private:
    Ring ticks_, rollups_;
    uint64_t *torn_reads_ = nullptr;
    uint64_t first_rollup_ = 0, end_rollup_ = 0, first_tick_ = 0, end_tick_ = 0;
    // With a partial: ticks [first_tick_, partial_first_tick_), the partial, then ticks
    // [after_partial_tick_, end_tick_).
    bool have_partial_ = false;
    RecordCopy partial_;
    uint64_t partial_first_tick_ = 0, after_partial_tick_ = 0;
};

// Copies the window (tests and benchmarks that compare with RingWindow).
WindowRecords read_window(const Ring &ticks, const Ring &rollups, const WindowPlan &plan);
std::vector<uint32_t> distinct_wait_infos(const RecordSource &records);

// Samples that count as "active": client backends and parallel workers running a statement,
// and processes without a client state (auxiliary processes, workers), outside idle waits.
bool is_active_sample(const WaitGroupEntry &group, WaitCategory category) noexcept;

struct WindowSummary {
    uint64_t ticks = 0;
    uint64_t backend_samples = 0;  // active foreground samples: the score's denominator
    double active_backends_avg = 0;
    double covered_seconds = 0;  // time the used records cover
    Diagnosis diagnosis;
    std::string top_storage_wait;  // "IO:DataFileRead", empty when none
    double reads_per_s = 0, wal_fsyncs_per_s = 0;
    LatencySummary reads, wal_fsyncs;  // avg_us is exact (sum of time / sum of count)
    int track_io_timing = -1;          // -1 no ticks, 0 off in some tick, 1 on in every tick
    int track_wal_io_timing = -1;
    IntervalRecord totals{};  // every record's counters summed (accumulate())
    // Records whose breakdown is incomplete (kFlagEntriesTruncated: more groups than the tick,
    // the roll-up or the arena held, or entries overwritten): totals are whole, but events,
    // queries and top_storage_wait undercount. Raise entries_per_tick / entries_per_rollup.
    uint64_t records_truncated = 0;
    uint64_t records = 0;  // records summed
};

// `limit`: what the window's device readings say about the volume's limit (core/devices.hpp),
// for the storage_limit and the hint of a storage-bound verdict.
WindowSummary summarize(const RecordSource &records, const WaitNameTable &names,
                        const ReferenceFacts &reference = {}, const StorageLimitFacts &limit = {});
// The diagnosis of summed counters (a window, a history row), from the record fields alone.
Diagnosis diagnose_totals(const IntervalRecord &totals, double covered_seconds,
                          const LatencyFacts &latency, const ReferenceFacts &reference,
                          const StorageLimitFacts &limit = {}, bool with_hint = true);
// The machine's CPU and the client sessions over summed counters; known_cores: the CPUs the
// worker counted at start (0: estimated from the CPU time read).
MachineFacts machine_of_totals(const IntervalRecord &totals, double covered_seconds,
                               double known_cores);
// Mean latencies (ms) of summed counters; WAL flushes fall back to the WAL writes when no
// fsync was counted (wal_sync_method open_datasync: writes are the flushes).
LatencyFacts latency_of_totals(const IntervalRecord &totals);
// Seconds the records measure (baseline ticks measure none): the denominator of rates.
double covered_seconds(const RecordSource &records);

struct EventRow {
    const WaitNameTable::Entry *name;
    BackendKind backend;
    WaitCategory category;  // as counted: the name's, except LWLock:WALWrite counted as lock
    uint64_t samples;
    double share_pct;  // of all active samples in the window
};
std::vector<EventRow> wait_event_profile(const RecordSource &records, const WaitNameTable &names);

struct IoLatencyRow {
    BackendKind backend;
    IoObjectCode object;
    IoContextCode context;
    IoOpCode op;
    uint64_t ops;
    uint64_t bytes;
    LatencySummary latency;
};
std::vector<IoLatencyRow> io_latency(const RecordSource &records);

struct HistoryRow {
    int64_t sample_time_us;  // tick time, or bucket start when bucketed
    double covered_seconds;
    // The time the row's counter deltas (I/O, transactions, tuples) cover: a tick that reads
    // the counters after ticks that skipped them (io_read_interval) covers their time too; a
    // skipping tick covers none (its rates are NULL). The denominator of the row's rates.
    double counter_seconds;
    IntervalRecord totals;  // the row's records summed (accumulate())
    Diagnosis diagnosis;
};
// The start of the `resolution_us` bucket (> 0) that holds a record ending at end_us; a
// roll-up by the minute of its ticks. Saturates at INT64_MIN: a history file can hold any time.
int64_t history_bucket_us(int64_t end_us, bool rollup, int64_t resolution_us) noexcept;
// resolution_us 0: one row per record; else records summed into buckets aligned to it.
// Each row goes to `emit` when it is complete, in time order: one row in memory at a time
// (a vector of an hour's ~1 kB rows was most of storage_wait_history's cost: page faults).
using HistoryRowVisitor = std::function<void(const HistoryRow &)>;
void for_each_history_row(const RecordSource &records, int64_t resolution_us,
                          const ReferenceFacts &reference, const HistoryRowVisitor &emit);
// The same rows collected (tests, small windows).
std::vector<HistoryRow> history(const RecordSource &records, int64_t resolution_us,
                                const ReferenceFacts &reference = {});

struct QueryRow {
    int64_t query_id;
    uint32_t database_oid;
    uint64_t samples;          // active samples running the query
    uint64_t storage_samples;  // of which in storage waits
};
std::vector<QueryRow> query_profile(const RecordSource &records);

}  // namespace pgsw
