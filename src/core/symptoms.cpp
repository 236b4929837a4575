#include "core/symptoms.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/fixed_map.hpp"
#include "core/text_format.hpp"

namespace pgsw {
namespace {

double mb(uint64_t bytes) {
    return double(bytes) / double(1 << 20);
}

double ratio_or_zero(double a, double b) {
    return b > 0 ? a / b : 0;
}

// Mean latency (ms) of `count` operations taking `time_us`; 0 when nothing was timed.
double mean_ms(uint64_t count, uint64_t time_us) {
    return count > 0 ? double(time_us) / double(count) / 1000.0 : 0;
}

// One half of the window.
struct Half {
    double seconds = 0;
    bool counted = false;  // database counters read in it
    uint64_t tuples = 0, ticks = 0, fg_active = 0, fg_storage = 0;
    uint64_t reads = 0, read_time_us = 0, wal_syncs = 0, wal_sync_time_us = 0;

    void add(const IntervalRecord &r) {
        if (!(r.ticks == 1 && (r.flags & kFlagBaseline)))
            seconds += double(r.end_us - r.start_us) / 1e6;
        counted |= r.ticks_db_counters > 0;
        tuples += r.tuples_inserted + r.tuples_updated + r.tuples_deleted;
        ticks += r.ticks, fg_active += r.fg_active, fg_storage += r.fg_storage;
        reads += r.reads, read_time_us += r.read_time_us;
        wal_syncs += r.wal_syncs, wal_sync_time_us += r.wal_sync_time_us;
    }
    double tuples_per_s() const { return ratio_or_zero(double(tuples), seconds); }
    double active_avg() const { return ratio_or_zero(double(fg_active), double(ticks)); }
    double storage_pct() const {
        return 100 * ratio_or_zero(double(fg_storage), double(fg_active));
    }
};

struct SlotTrack {
    uint8_t flags = 0;
    uint64_t first_lag = 0, last_lag = 0, max_lag = 0;
    uint64_t spill_count = 0, spill_bytes = 0;
};

struct WindowFacts {
    Half early, late;
    uint64_t wal_first = 0, wal_last = 0;
    uint64_t walsender_active = 0, walsender_io = 0;
    std::vector<std::pair<uint16_t, SlotTrack>> slots;  // first-seen order
};

bool is_walsender_io(const WaitNameTable::Entry &name) {
    return name.type == "IO" &&
           (name.event == "WALRead" || name.event.rfind("ReorderBuffer", 0) == 0);
}

void add_slot(WindowFacts &f, const SlotEntry &e) {
    auto it = std::find_if(f.slots.begin(), f.slots.end(),
                           [&](const auto &s) { return s.first == e.slot; });
    if (it == f.slots.end()) {
        f.slots.push_back({e.slot, SlotTrack{}});
        it = f.slots.end() - 1;
        it->second.first_lag = e.lag_bytes;
    }
    SlotTrack &t = it->second;
    t.flags = e.flags;
    t.last_lag = e.lag_bytes;
    t.max_lag = std::max({t.max_lag, e.lag_max_bytes, e.lag_bytes});
    t.spill_count += e.spill_count;
    t.spill_bytes += e.spill_bytes;
}

WindowFacts gather(const RecordSource &records, const WaitNameTable &names) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    records.for_each(kNoEntries, [&](const RecordCopy &c, bool) {
        first = std::min(first, c.record.start_us);
        last = std::max(last, c.record.end_us);
    });
    const int64_t middle = first + (last - first) / 2;
    WindowFacts f;
    records.for_each(kWaitGroupEntries | kSlotEntries, [&](const RecordCopy &c, bool) {
        const IntervalRecord &r = c.record;
        (r.start_us + (r.end_us - r.start_us) / 2 < middle ? f.early : f.late).add(r);
        if (r.wal_position != 0) {
            f.wal_first = f.wal_first ? f.wal_first : r.wal_position;
            f.wal_last = r.wal_position;
        }
        for (const ArenaEntry &e : c.entries) {
            if (e.kind == EntryKind::Slot) {
                add_slot(f, e.slot);
            } else if (e.kind == EntryKind::WaitGroup && e.wait.backend == BackendKind::Walsender) {
                const WaitNameTable::Entry &name = names.find(e.wait.wait_event_info);
                if (name.wait_class.category == WaitCategory::Idle)
                    continue;
                f.walsender_active += e.wait.samples;
                f.walsender_io += is_walsender_io(name) ? e.wait.samples : 0;
            }
        }
    });
    return f;
}

SymptomRow unknown(Symptom s, std::string why, const char *metric, const char *unit) {
    SymptomRow row;
    row.symptom = s;
    row.status = SymptomStatus::Unknown;
    row.evidence = std::move(why);
    row.metric = metric;
    row.unit = unit;
    return row;
}

SymptomRow measured(Symptom s, SymptomStatus status, bool storage, std::string evidence,
                    const char *metric, double value, double baseline, const char *unit,
                    bool baseline_valid = true) {
    SymptomRow row;
    row.symptom = s;
    row.status = status;
    row.storage_implicated = storage ? 1 : 0;
    row.evidence = std::move(evidence);
    row.metric = metric;
    row.value_valid = true;
    row.value = value;
    row.baseline_valid = baseline_valid;
    row.baseline = baseline;
    row.unit = unit;
    return row;
}

// ---- slow_ingestion ----------------------------------------------------------------------

// The sessions' storage got worse from the early half to the late one: read or WAL flush
// latency up by kStorageRiseRatio, or the storage share of their samples up kStorageRisePts.
bool storage_rose(const Half &a, const Half &b, std::string &how) {
    const double r1 = mean_ms(a.reads, a.read_time_us), r2 = mean_ms(b.reads, b.read_time_us);
    const double w1 = mean_ms(a.wal_syncs, a.wal_sync_time_us);
    const double w2 = mean_ms(b.wal_syncs, b.wal_sync_time_us);
    if (a.reads >= kMinHalfReads && b.reads >= kMinHalfReads && r1 > 0 &&
        r2 >= kStorageRiseRatio * r1) {
        how = format("read latency rose from %.2f to %.2f ms", r1, r2);
        return true;
    }
    if (a.wal_syncs >= kMinHalfReads && b.wal_syncs >= kMinHalfReads && w1 > 0 &&
        w2 >= kStorageRiseRatio * w1) {
        how = format("WAL flush latency rose from %.2f to %.2f ms", w1, w2);
        return true;
    }
    if (a.fg_active > 0 && b.fg_active > 0 &&
        b.storage_pct() >= a.storage_pct() + kStorageRisePts) {
        how = format("storage waits rose from %.0f %% to %.0f %% of the sessions' time",
                     a.storage_pct(), b.storage_pct());
        return true;
    }
    how = "storage latency did not rise";
    return false;
}

SymptomRow slow_ingestion(const WindowFacts &f) {
    const Symptom s = Symptom::SlowIngestion;
    const char *metric = "tuples_written_per_s", *unit = "tuples/s";
    const Half &a = f.early, &b = f.late;
    if (!a.counted || !b.counted)
        return unknown(s, "The database counters were not read in both halves of the window.",
                       metric, unit);
    if (a.seconds + b.seconds < kMinHalvesSeconds || a.seconds <= 0 || b.seconds <= 0)
        return unknown(s,
                       format("The window covers %.0f s; at least %.0f s are needed.",
                              a.seconds + b.seconds, kMinHalvesSeconds),
                       metric, unit);
    const double r1 = a.tuples_per_s(), r2 = b.tuples_per_s();
    if (r1 < kMinIngestionPerS)
        return unknown(s, format("Only %.1f tuples/s were written early in the window.", r1),
                       metric, unit);
    const double drop_pct = 100 * (1 - r2 / r1);
    std::string how;
    const bool rose = storage_rose(a, b, how);
    SymptomStatus status = SymptomStatus::Ok;
    std::string why;
    if (drop_pct >= kIngestionDropWatchPct && b.active_avg() < kLoadKeptFraction * a.active_avg()) {
        why = format("; the active sessions fell from %.1f to %.1f, so the load itself fell",
                     a.active_avg(), b.active_avg());
    } else if (drop_pct >= kIngestionDropPresentPct) {
        status = rose ? SymptomStatus::Present : SymptomStatus::Watch;
    } else if (drop_pct >= kIngestionDropWatchPct && rose) {
        status = SymptomStatus::Watch;
    }
    const bool implicated = status != SymptomStatus::Ok && rose;
    return measured(s, status, implicated,
                    format("Tuples written went from %.0f/s to %.0f/s (%+.0f %%) between the "
                           "window's halves; %s%s.",
                           r1, r2, -drop_pct, how.c_str(), why.c_str()),
                    metric, r2, r1, unit);
}

// ---- inconsistent_read_latency -----------------------------------------------------------

SymptomRow inconsistent_reads(const WindowFacts &f, const WindowSummary &w) {
    const Symptom s = Symptom::InconsistentReadLatency;
    const char *metric = "read_latency_p95_ms", *unit = "ms";
    if (w.track_io_timing == 0 && !w.reads.valid)
        return unknown(s, "track_io_timing is off: read latency is not measured.", metric, unit);
    if (!w.reads.valid || w.reads.total_count < kMinTimedReads)
        return unknown(s,
                       format("%.0f timed reads in the window; at least %.0f are needed.",
                              w.reads.valid ? w.reads.total_count : 0.0, kMinTimedReads),
                       metric, unit);
    const double p50 = w.reads.p50_us / 1000, p95 = w.reads.p95_us / 1000;
    const double spread = ratio_or_zero(p95, p50);
    const Half &a = f.early, &b = f.late;
    double step = 1, m1 = 0, m2 = 0;
    if (a.reads >= kMinHalfReads && b.reads >= kMinHalfReads) {
        m1 = mean_ms(a.reads, a.read_time_us), m2 = mean_ms(b.reads, b.read_time_us);
        step = m1 > 0 && m2 > 0 ? std::max(m1, m2) / std::min(m1, m2) : 1;
    }
    const bool slow = p95 >= kSlowReadMs || std::max(m1, m2) >= kSlowReadMs;
    SymptomStatus status = SymptomStatus::Ok;
    if (slow && (spread >= kSpreadPresentRatio || step >= kStepPresentRatio))
        status = SymptomStatus::Present;
    else if (slow && (spread >= kSpreadWatchRatio || step >= kStepWatchRatio))
        status = SymptomStatus::Watch;
    std::string text = format("Read latency p95 %.2f ms vs p50 %.2f ms (%.1fx)", p95, p50, spread);
    if (m1 > 0 && m2 > 0)
        text += format("; mean %.2f ms early, %.2f ms late in the window", m1, m2);
    text += ".";
    return measured(s, status, status != SymptomStatus::Ok, text, metric, p95, p50, unit);
}

// ---- delayed_autovacuum ------------------------------------------------------------------

SymptomRow delayed_autovacuum(const IntervalRecord &t) {
    const Symptom s = Symptom::DelayedAutovacuum;
    const char *metric = "autovacuum_all_busy_pct", *unit = "pct";
    if (t.ticks_autovacuum == 0)
        return unknown(s, "Autovacuum cannot run (autovacuum or track_counts off, or a standby).",
                       metric, unit);
    if (t.ticks_autovacuum < kMinAutovacuumReadings)
        return unknown(
            s,
            format("%u autovacuum readings; at least %llu are needed.", t.ticks_autovacuum,
                   static_cast<unsigned long long>(kMinAutovacuumReadings)),
            metric, unit);
    const double n = double(t.ticks_autovacuum);
    const double all_busy_pct = 100 * t.ticks_autovacuum_all_busy / n;
    const double busy = double(t.autovacuum_workers_busy) / n;
    const double cap = double(t.autovacuum_workers_max) / n;
    const uint64_t samples = t.autovacuum_samples_io + t.autovacuum_samples_delay +
                             t.autovacuum_samples_cpu + t.autovacuum_samples_other;
    const double io_pct = 100 * ratio_or_zero(double(t.autovacuum_samples_io), double(samples));
    const double delay_pct =
        100 * ratio_or_zero(double(t.autovacuum_samples_delay), double(samples));
    SymptomStatus status = SymptomStatus::Ok;
    if (all_busy_pct >= kAllBusyPresentPct)
        status = SymptomStatus::Present;
    else if (all_busy_pct >= kAllBusyWatchPct || (cap > 0 && busy >= kBusyWatchFraction * cap))
        status = SymptomStatus::Watch;
    const bool implicated = status != SymptomStatus::Ok && io_pct >= kMostlyPct;
    const char *cause = io_pct >= kMostlyPct      ? "mostly storage waits"
                        : delay_pct >= kMostlyPct ? "mostly cost-based throttling "
                                                    "(Timeout:VacuumDelay, a setting)"
                        : samples > 0             ? "mostly CPU or locks"
                                                  : "no worker sampled";
    return measured(s, status, implicated,
                    format("All %.0f autovacuum workers were busy in %.0f %% of the window "
                           "(%.1f busy on average); their samples: %.0f %% storage, %.0f %% "
                           "VacuumDelay: %s.",
                           cap, all_busy_pct, busy, io_pct, delay_pct, cause),
                    metric, all_busy_pct, kAllBusyPresentPct, unit);
}

// ---- slower_checkpoints ------------------------------------------------------------------

struct InOut {
    const char *what;
    double in_ms = 0, out_ms = 0;
    bool valid = false;
};

InOut in_out(const char *what, uint64_t all, uint64_t all_time, uint64_t in, uint64_t in_time) {
    InOut r{what};
    if (in < kMinCheckpointOps || all - in < kMinCheckpointOps)
        return r;
    r.in_ms = mean_ms(in, in_time);
    r.out_ms = mean_ms(all - in, all_time - in_time);
    r.valid = r.in_ms > 0 && r.out_ms > 0;
    return r;
}

SymptomRow slower_checkpoints(const IntervalRecord &t) {
    const Symptom s = Symptom::SlowerCheckpoints;
    const char *metric = "latency_in_checkpoint_ratio", *unit = "x";
    if (t.ticks_checkpointer == 0)
        return unknown(s, "The checkpointer's counters were not read in the window.", metric, unit);
    if (t.ticks_in_checkpoint == 0 && t.checkpoints_started == 0)
        return unknown(s, "No checkpoint ran in the window.", metric, unit);
    const InOut reads = in_out("read", t.reads, t.read_time_us, t.reads_in_checkpoint,
                               t.read_time_us_in_checkpoint);
    const InOut flushes = in_out("WAL flush", t.wal_syncs, t.wal_sync_time_us,
                                 t.wal_syncs_in_checkpoint, t.wal_sync_time_us_in_checkpoint);
    const InOut *worst = nullptr;
    for (const InOut *x : {&reads, &flushes})
        if (x->valid && (!worst || x->in_ms / x->out_ms > worst->in_ms / worst->out_ms))
            worst = x;
    const double ratio = worst ? worst->in_ms / worst->out_ms : 1;
    const double extra_ms = worst ? worst->in_ms - worst->out_ms : 0;
    const uint64_t checkpoints =
        std::max<uint64_t>(1, t.checkpoints_started ? t.checkpoints_started : t.checkpoints_done);
    const double sync_ms = double(t.checkpoint_sync_time_ms) / double(checkpoints);
    SymptomStatus status = SymptomStatus::Ok;
    if ((ratio >= kCheckpointPresentRatio && extra_ms >= kCheckpointMinExtraMs) ||
        sync_ms >= kSyncPresentMsPerCheckpoint)
        status = SymptomStatus::Present;
    else if ((ratio >= kCheckpointWatchRatio && extra_ms >= kCheckpointMinExtraMs) ||
             sync_ms >= kSyncWatchMsPerCheckpoint)
        status = SymptomStatus::Watch;
    std::string text = format(
        "%llu checkpoint(s) began, %u ticks inside one; data-file sync %.0f ms "
        "per checkpoint",
        static_cast<unsigned long long>(t.checkpoints_started), t.ticks_in_checkpoint, sync_ms);
    if (worst)
        text += format("; %s latency %.2f ms inside vs %.2f ms outside (%.1fx)", worst->what,
                       worst->in_ms, worst->out_ms, ratio);
    if (t.checkpoints_requested > t.checkpoints_timed && t.checkpoints_requested >= 3)
        text += format("; %llu requested checkpoints (max_wal_size reached?)",
                       static_cast<unsigned long long>(t.checkpoints_requested));
    text += ".";
    return measured(s, status, status != SymptomStatus::Ok, text, metric, ratio, 1.0, unit);
}

// ---- replication_lag ---------------------------------------------------------------------

SymptomRow replication_lag(const WindowFacts &f, const SlotNameFn &slot_name) {
    const Symptom s = Symptom::ReplicationLag;
    const char *metric = "slot_lag_bytes", *unit = "bytes";
    if (f.slots.empty()) {
        SymptomRow row =
            measured(s, SymptomStatus::Ok, false, "No replication slot was read in the window.",
                     metric, 0, 0, unit, false);
        row.value_valid = false;
        return row;
    }
    const auto worst = std::max_element(f.slots.begin(), f.slots.end(), [](auto &x, auto &y) {
        return x.second.last_lag < y.second.last_lag;
    });
    const SlotTrack &t = worst->second;
    const uint64_t wal = f.wal_last > f.wal_first ? f.wal_last - f.wal_first : 0;
    const uint64_t growth = t.last_lag > t.first_lag ? t.last_lag - t.first_lag : 0;
    const bool falling_behind =
        growth >= kLagGrowthWatchBytes && double(growth) >= kLagGrowthShare * double(wal);
    SymptomStatus status = SymptomStatus::Ok;
    if ((t.last_lag >= kLagMinBytes && falling_behind) || t.last_lag >= kLagLargeBytes)
        status = SymptomStatus::Present;
    else if (t.last_lag >= kLagMinBytes || growth >= kLagGrowthWatchBytes)
        status = SymptomStatus::Watch;
    const double io_pct = 100 * ratio_or_zero(double(f.walsender_io), double(f.walsender_active));
    const bool storage =
        status != SymptomStatus::Ok && (io_pct >= kWalsenderIoPct || t.spill_bytes > 0);
    const std::string name = slot_name(worst->first);
    std::string text = format(
        "Slot %s (%s, %s) is %.1f MB behind; its lag grew %.1f MB while %.1f MB of WAL was "
        "written",
        name.empty() ? "(unnamed)" : name.c_str(),
        (t.flags & kSlotLogical) ? "logical" : "physical",
        (t.flags & kSlotActive) ? "active" : "inactive", mb(t.last_lag), mb(growth), mb(wal));
    if (f.walsender_active > 0)
        text += format("; walsenders %.0f %% in WAL read / spill I/O", io_pct);
    if (t.spill_bytes > 0)
        text += format("; decoding spilled %.1f MB to disk", mb(t.spill_bytes));
    text += ".";
    return measured(s, status, storage, text, metric, double(t.last_lag), double(t.first_lag),
                    unit);
}

}  // namespace

const char *symptom_name(Symptom s) noexcept {
    switch (s) {
        case Symptom::SlowIngestion:
            return "slow_ingestion";
        case Symptom::InconsistentReadLatency:
            return "inconsistent_read_latency";
        case Symptom::DelayedAutovacuum:
            return "delayed_autovacuum";
        case Symptom::SlowerCheckpoints:
            return "slower_checkpoints";
        case Symptom::ReplicationLag:
            return "replication_lag";
        default:
            return "unknown";
    }
}

const char *symptom_status_name(SymptomStatus s) noexcept {
    switch (s) {
        case SymptomStatus::Ok:
            return "ok";
        case SymptomStatus::Watch:
            return "watch";
        case SymptomStatus::Present:
            return "present";
        default:
            return "unknown";
    }
}

SymptomRows evaluate_symptoms(const RecordSource &records, const WaitNameTable &names,
                              const WindowSummary &summary, const SlotNameFn &slot_name) {
    const WindowFacts f = gather(records, names);
    return {slow_ingestion(f), inconsistent_reads(f, summary), delayed_autovacuum(summary.totals),
            slower_checkpoints(summary.totals), replication_lag(f, slot_name)};
}

}  // namespace pgsw
