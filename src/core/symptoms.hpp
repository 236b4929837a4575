#include "core/cpp_only.hpp"
#pragma once
// The five symptoms that look like different problems and often share one cause, storage
// (storage_wait_symptoms()): each a rule over one window's records, answering ok / watch /
// present / unknown, whether storage is implicated, and one sentence of evidence.
//
// Windows are compared with themselves: the "halves" rules split the records at the middle of
// the time they cover (early half = the baseline). The thresholds and their reasoning are in
// README.md ("The five symptoms"); the constants below are those thresholds.
//
//  slow_ingestion: tuples written per second (pg_stat_database inserted+updated+deleted)
//    falling from the early half to the late half while the sessions' storage latency or
//    storage share rises. present: rate down >= 30 % and storage rising; watch: down >= 30 %
//    without storage rising, or down >= 15 % with it. A fall of the active sessions themselves
//    (the load went away) is ok. unknown: counters not read, < 10 s covered, < 10 tuples/s.
//  inconsistent_read_latency: the spread of the per-tick mean read latency: p95 / p50 over the
//    window, and a step between the halves' means. present: p95 >= 3 x p50 or a step >= 2x,
//    with the slow side >= 1 ms; watch: >= 2x / 1.5x. unknown: track_io_timing off, < 200 reads.
//  delayed_autovacuum: the share of the autovacuum readings with every worker busy, and what
//    the workers wait on. present: all busy >= 50 % of the window (the queue of tables to
//    vacuum can only grow); storage implicated when their samples are mostly (>= 50 %) storage
//    waits, not when mostly Timeout:VacuumDelay (cost-based throttling: a setting). watch: all
//    busy >= 20 %, or on average half the workers busy. unknown: autovacuum cannot run (off,
//    standby), fewer than 10 readings.
//  slower_checkpoints: the sessions' mean read and WAL flush latency inside checkpoints vs
//    outside, and the checkpoints' own data-file sync time. present (storage): latency >= 2x
//    inside (and >= 0.5 ms more, for watch too), or >= 1 s of fsync per checkpoint; watch: >= 1.3x
//    or
//    >= 250 ms. unknown: no checkpointer counters, or no checkpoint in the window.
//  replication_lag: the slot furthest behind the WAL position. present: >= 16 MB behind and
//    its lag grew by at least half the WAL written (the consumer keeps less than half the
//    pace), or >= 1 GB behind; watch: >= 16 MB behind but keeping up, or growing by >= 4 MB.
//    Storage implicated when the walsenders' samples are mostly IO:WALRead / ReorderBuffer I/O,
//    or decoding spilled to disk. ok without slots.
#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "core/window.hpp"

namespace pgsw {

enum class Symptom : uint8_t {
    SlowIngestion,
    InconsistentReadLatency,
    DelayedAutovacuum,
    SlowerCheckpoints,
    ReplicationLag,
    Count
};
constexpr size_t kSymptomCount = static_cast<size_t>(Symptom::Count);
const char *symptom_name(Symptom s) noexcept;  // "slow_ingestion", ...

enum class SymptomStatus : uint8_t { Ok, Watch, Present, Unknown };
const char *symptom_status_name(SymptomStatus s) noexcept;  // "ok", ...

// Thresholds (README: "The five symptoms").
constexpr double kMinHalvesSeconds = 10;         // both halves need >= 5 s
constexpr double kMinIngestionPerS = 10;         // tuples/s in the early half
constexpr double kIngestionDropPresentPct = 30;  // fall of the write rate
constexpr double kIngestionDropWatchPct = 15;
constexpr double kLoadKeptFraction = 0.5;  // active sessions kept, else the load fell
constexpr double kStorageRiseRatio = 1.5;  // latency late / early
constexpr double kStorageRisePts = 10;     // storage share of active samples, points
constexpr double kMinTimedReads = 200;
constexpr double kMinHalfReads = 50;
constexpr double kSpreadPresentRatio = 3;  // p95 / p50
constexpr double kSpreadWatchRatio = 2;
constexpr double kStepPresentRatio = 2;  // half mean / other half mean
constexpr double kStepWatchRatio = 1.5;
constexpr double kSlowReadMs = 1;  // the slow side must be this slow
constexpr uint64_t kMinAutovacuumReadings = 10;
constexpr double kAllBusyPresentPct = 50;
constexpr double kAllBusyWatchPct = 20;
constexpr double kBusyWatchFraction = 0.5;
constexpr double kMostlyPct = 50;           // "mostly IO" / "mostly VacuumDelay"
constexpr uint64_t kMinCheckpointOps = 20;  // operations on each side
constexpr double kCheckpointPresentRatio = 2;
constexpr double kCheckpointWatchRatio = 1.3;
constexpr double kCheckpointMinExtraMs = 0.5;
constexpr double kSyncPresentMsPerCheckpoint = 1000;
constexpr double kSyncWatchMsPerCheckpoint = 250;
constexpr uint64_t kLagMinBytes = uint64_t{16} << 20;
constexpr uint64_t kLagLargeBytes = uint64_t{1} << 30;
constexpr uint64_t kLagGrowthWatchBytes = uint64_t{4} << 20;
constexpr double kLagGrowthShare = 0.5;  // of the WAL written
constexpr double kWalsenderIoPct = 30;

struct SymptomRow {
    Symptom symptom = Symptom::SlowIngestion;
    SymptomStatus status = SymptomStatus::Unknown;
    int storage_implicated = -1;  // -1 NULL (unknown), 0 false, 1 true
    std::string evidence;
    std::string metric;
    bool value_valid = false, baseline_valid = false;
    double value = 0, baseline = 0;
    std::string unit;
};
using SymptomRows = std::array<SymptomRow, kSymptomCount>;

// A slot's name (the name dictionary; the PostgreSQL layer resolves it).
using SlotNameFn = std::function<std::string(uint16_t slot)>;

// The five rows, in Symptom order. `summary`: summarize() of the same records (the latency
// quantiles and totals). May throw std::bad_alloc.
SymptomRows evaluate_symptoms(const RecordSource &records, const WaitNameTable &names,
                              const WindowSummary &summary, const SlotNameFn &slot_name);

}  // namespace pgsw
