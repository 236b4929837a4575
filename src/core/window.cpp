#include "core/window.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>

#include "core/fixed_map.hpp"
#include "core/rollup.hpp"
#include "core/tick_builder.hpp"

namespace pgsw {
namespace {

template <typename Fn>
void for_each_record(const RecordSource &w, uint32_t kinds, Fn &&fn) {
    // std::ref: the visitor is called through std::function without copying the lambda.
    w.for_each(kinds, std::ref(fn));
}

uint32_t mask_of(EntryKind kind) {
    return 1u << (static_cast<uint32_t>(kind) - 1);
}

template <typename Fn>
void for_each_entry(const RecordSource &w, EntryKind kind, Fn &&fn) {
    for_each_record(w, mask_of(kind), [&](const RecordCopy &c, bool) {
        for (const ArenaEntry &e : c.entries)
            if (e.kind == kind)
                fn(e);
    });
}

// Seconds of history a record measures: a baseline tick measures nothing. The monotonic time
// the sampler measured (elapsed_us) when the record has it, so a wall-clock step neither
// inflates nor negates a rate; wall time for records written before it was filled.
double record_seconds(const IntervalRecord &r) {
    if (r.ticks == 1 && (r.flags & kFlagBaseline))
        return 0;
    if (r.elapsed_us > 0)
        return double(r.elapsed_us) / 1e6;
    // Unsigned: a corrupt record (a history file) can hold any times; end - start of two
    // int64 may not fit in one (fuzz_history_file's second find).
    return r.end_us > r.start_us ? double(uint64_t(r.end_us) - uint64_t(r.start_us)) / 1e6 : 0;
}

// One latency series (reads or WAL fsyncs) over a window: a point per tick (its mean latency,
// weighted by its I/Os) and, for roll-ups, the histogram bins' weights summed across all
// roll-ups first, so a 7-day window adds at most kLatencyBinCount points instead of one per bin
// per minute. Equal values merged give the same weighted quantiles.
class SeriesAccumulator {
  public:
    SeriesAccumulator(LatencySeries series, size_t expected_points)
        : series_(series), acc_(expected_points) {}

    // Adds the record and returns the I/Os it times. A roll-up's bins weigh exactly its timed
    // ticks' counts, so a minute in which the timing GUC changed still divides its time by the
    // timed I/Os only; its untimed rest is counted as untimed.
    double add(const RecordCopy &c, bool rollup, uint64_t count, uint64_t time_us) {
        double binned = 0;
        if (rollup)
            for (const ArenaEntry &e : c.entries)
                if (e.kind == EntryKind::LatencyBin && e.bin.series == series_) {
                    bin_weight_[e.bin.bin] += e.bin.weight;
                    binned += e.bin.weight;
                }
        if (binned > 0) {
            if (double(count) > binned)
                acc_.add_interval(double(count) - binned, 0);
            return binned;
        }
        // Ticks, and roll-ups that lost their bins or were never timed: one point each.
        acc_.add_interval(double(count), double(time_us));
        return time_us ? double(count) : 0;
    }

    LatencySummary summary() {
        for (int bin = 0; bin < kLatencyBinCount; ++bin)
            if (bin_weight_[bin] > 0)
                acc_.add_weighted_point(latency_bin_mid_us(uint8_t(bin)), bin_weight_[bin]);
        bin_weight_.fill(0);
        return acc_.summary();
    }

  private:
    LatencySeries series_;
    LatencyAccumulator acc_;
    std::array<double, kLatencyBinCount> bin_weight_{};
};

// Make the average exact (bins only know midpoints) and the maximum the largest tick mean
// (max_us, exact in every record; 0 when unknown). A bin's midpoint can lie above every latency
// in the bin, so the percentiles are capped by the exact maximum too.
void settle(LatencySummary &s, double timed_count, uint64_t timed_time_us, double max_us) {
    if (!s.valid)
        return;
    s.avg_us = timed_count > 0 ? double(timed_time_us) / timed_count : s.avg_us;
    if (max_us > 0) {
        s.max_us = max_us;
        s.p50_us = std::min(s.p50_us, max_us);
        s.p95_us = std::min(s.p95_us, max_us);
        s.p99_us = std::min(s.p99_us, max_us);
        s.p999_us = std::min(s.p999_us, max_us);
    }
}

bool is_foreground(const WaitGroupEntry &g) {
    return is_foreground_active(g.backend, g.state);
}

// Samples per wait_event_info, summed with one hash probe per wait entry so that names are
// looked up and classified once per distinct event, not once per entry (a 7-day window has
// ~350,000 wait entries and tens to hundreds of distinct events).
class WaitTotals {
  public:
    void add(uint32_t wait_event_info, uint64_t samples) {
        if (uint64_t *total = fixed_.find_or_insert(wait_event_info))
            *total += samples;
        else
            overflow_[wait_event_info] += samples;
    }
    template <typename Fn>
    void for_each(Fn &&fn) const {
        fixed_.for_each(fn);
        for (const auto &[info, samples] : overflow_)
            fn(info, samples);
    }

  private:
    struct Hash {
        size_t operator()(uint32_t k) const noexcept { return mix64(k); }
    };
    FixedMap<uint32_t, uint64_t, Hash> fixed_{1024};
    std::unordered_map<uint32_t, uint64_t> overflow_;
};

std::string top_storage_wait(const WaitTotals &totals, const WaitNameTable &names) {
    uint32_t top = 0;
    uint64_t top_samples = 0;
    // Ties go to the smaller wait_event_info, so the answer does not depend on hash order.
    totals.for_each([&](uint32_t info, uint64_t samples) {
        if (names.find(info).wait_class.category != WaitCategory::Storage)
            return;
        if (samples > top_samples || (samples == top_samples && info < top))
            top = info, top_samples = samples;
    });
    if (top_samples == 0)
        return "";
    const WaitNameTable::Entry &name = names.find(top);
    return name.type + ":" + name.event;
}

// -1 no ticks, 0 the GUC was off in some tick, 1 on in every tick.
void note_timing(int &result, uint32_t timed_ticks, uint32_t ticks) {
    if (ticks == 0)
        return;
    result = (result == -1 ? 1 : result) & (timed_ticks == ticks ? 1 : 0);
}

}  // namespace

void WaitNameTable::add(uint32_t wait_event_info, const char *type, const char *event) {
    Entry entry{type ? type : "", event ? event : "", {WaitCategory::Other, StorageKind::None}};
    entry.wait_class = classify_wait_class(entry.type, entry.event);
    entries_[wait_event_info] = std::move(entry);
}

const WaitNameTable::Entry &WaitNameTable::find(uint32_t wait_event_info) const {
    if (wait_event_info == 0)
        return cpu_;
    const auto it = entries_.find(wait_event_info);
    return it == entries_.end() ? unknown_ : it->second;
}

WindowPlan plan_window(int64_t now_us, int64_t window_us, const RetentionFacts &f) noexcept {
    WindowPlan plan;
    const int64_t retention_us = std::max(f.tick_retention_us, f.rollup_retention_us);
    if (window_us > retention_us) {
        window_us = retention_us;
        plan.clamped = true;
    }
    plan.end_us = now_us;
    plan.start_us = now_us - window_us;
    const bool ticks_reach_start = f.have_ticks && f.oldest_tick_start_us <= plan.start_us;
    const bool rollups_reach_further =
        f.have_rollups && (!f.have_ticks || f.oldest_rollup_start_us < f.oldest_tick_start_us);
    plan.use_rollups = !ticks_reach_start && rollups_reach_further;
    return plan;
}

void WindowRecords::for_each(uint32_t, const Visitor &visit) const {
    for (const RecordCopy &c : rollups)
        visit(c, true);
    for (const RecordCopy &c : ticks)
        visit(c, false);
}

namespace {

bool read_newest_partial(const PartialSource &source, RecordCopy &out) {
    if (source.ring == nullptr || !source.ring->valid())
        return false;
    const Ring &ring = *source.ring;
    const uint64_t end = ring.end();
    if (end <= ring.first_readable() || ring.read(end - 1, out) != ReadStatus::Ok)
        return false;
    const IntervalRecord &r = out.record;
    return r.ticks > 0 && !(r.flags & kFlagEntriesTruncated) && r.end_us > source.reset_us;
}

}  // namespace

RingWindow::RingWindow(const Ring &ticks, const Ring &rollups, const WindowPlan &plan,
                       const PartialSource &partial, uint64_t *torn_reads)
    : ticks_(ticks), rollups_(rollups), torn_reads_(torn_reads) {
    // The partial is read before the roll-ups: if its minute is finished meanwhile, the roll-up
    // ring then shows that minute, and the partial (starting before its end) is left out.
    const bool partial_read = plan.use_rollups && read_newest_partial(partial, partial_);
    int64_t ticks_after = plan.start_us;
    if (plan.use_rollups) {
        first_rollup_ = rollups.first_after(plan.start_us);
        end_rollup_ = rollups.end();
        IntervalRecord last{};
        for (uint64_t no = end_rollup_; no-- > first_rollup_;)
            if (rollups.read_record(no, last) == ReadStatus::Ok) {
                ticks_after = std::max(ticks_after, last.end_us);
                break;
            }
    }
    end_tick_ = ticks.end();
    first_tick_ = std::min(ticks.first_after(ticks_after), end_tick_);
    have_partial_ = partial_read && partial_.record.start_us >= ticks_after &&
                    partial_.record.end_us > partial_.record.start_us;
    if (have_partial_) {
        // Ticks ending at or before the partial's start come before it; those ending inside it
        // are in it.
        partial_first_tick_ =
            std::clamp(ticks.first_after(partial_.record.start_us), first_tick_, end_tick_);
        after_partial_tick_ =
            std::clamp(ticks.first_after(partial_.record.end_us), partial_first_tick_, end_tick_);
    } else {
        partial_ = RecordCopy{};
    }
}

void RingWindow::for_each(uint32_t kinds, const Visitor &visit) const {
    RecordCopy copy;
    auto visit_range = [&](const Ring &ring, uint64_t first, uint64_t end, bool rollup) {
        for (uint64_t no = std::max(first, ring.first_readable()); no < end; ++no) {
            const ReadStatus status =
                kinds ? ring.read(no, copy, kinds) : ring.read_record(no, copy.record);
            if (status == ReadStatus::Ok || status == ReadStatus::EntriesGone)
                visit(copy, rollup);
            else if (status == ReadStatus::Torn && torn_reads_ != nullptr)
                __atomic_fetch_add(torn_reads_, 1, __ATOMIC_RELAXED);
        }
    };
    if (end_rollup_ > first_rollup_)
        visit_range(rollups_, first_rollup_, end_rollup_, true);
    if (!have_partial_) {
        visit_range(ticks_, first_tick_, end_tick_, false);
        return;
    }
    visit_range(ticks_, first_tick_, partial_first_tick_, false);
    visit(partial_, true);
    visit_range(ticks_, after_partial_tick_, end_tick_, false);
}

WindowRecords read_window(const Ring &ticks, const Ring &rollups, const WindowPlan &plan) {
    WindowRecords w;
    RingWindow(ticks, rollups, plan).for_each(kAllEntries, [&](const RecordCopy &c, bool rollup) {
        (rollup ? w.rollups : w.ticks).push_back(c);
    });
    return w;
}

std::vector<uint32_t> distinct_wait_infos(const RecordSource &w) {
    WaitTotals seen;
    for_each_entry(w, EntryKind::WaitGroup,
                   [&](const ArenaEntry &e) { seen.add(e.wait.wait_event_info, 0); });
    std::vector<uint32_t> infos;
    seen.for_each([&](uint32_t info, uint64_t) { infos.push_back(info); });
    std::sort(infos.begin(), infos.end());
    return infos;
}

bool is_active_sample(const WaitGroupEntry &g, WaitCategory category) noexcept {
    if (category == WaitCategory::Idle)
        return false;
    return g.state == BackendStateCode::Active ||
           g.state == BackendStateCode::FastpathFunctionCall || g.state == BackendStateCode::None;
}

double covered_seconds(const RecordSource &w) {
    double seconds = 0;
    for_each_record(w, kNoEntries,
                    [&](const RecordCopy &c, bool) { seconds += record_seconds(c.record); });
    return seconds;
}

namespace {

// What summarize() sums over a window, one record at a time.
class SummaryPass {
  public:
    void add(const RecordCopy &c, bool rollup) {
        const IntervalRecord &r = c.record;
        accumulate(s_.totals, r);
        s_.ticks += r.ticks;
        ++s_.records;
        s_.records_truncated += (r.flags & kFlagEntriesTruncated) ? 1 : 0;
        s_.covered_seconds += record_seconds(r);
        reads_ += r.reads, wal_syncs_ += r.wal_syncs;
        timed_read_us_ += r.read_time_us, timed_sync_us_ += r.wal_sync_time_us;
        read_max_us_ = std::max(read_max_us_, r.read_latency_max_us);
        sync_max_us_ = std::max(sync_max_us_, r.wal_sync_latency_max_us);
        timed_reads_ += read_acc_.add(c, rollup, r.reads, r.read_time_us);
        timed_syncs_ += sync_acc_.add(c, rollup, r.wal_syncs, r.wal_sync_time_us);
        note_timing(s_.track_io_timing, r.ticks_io_timing, r.ticks);
        note_timing(s_.track_wal_io_timing, r.ticks_wal_timing, r.ticks);
        // Storage as the tick counted it (LWLock:WALWrite may have counted as lock).
        for (const ArenaEntry &e : c.entries)
            if (e.kind == EntryKind::WaitGroup && is_foreground(e.wait) &&
                e.wait.category == uint8_t(WaitCategory::Storage))
                storage_waits_.add(e.wait.wait_event_info, e.wait.samples);
    }

    WindowSummary finish(const WaitNameTable &names, const ReferenceFacts &reference,
                         const StorageLimitFacts &limit) {
        s_.backend_samples = s_.totals.fg_active;
        s_.active_backends_avg = s_.ticks ? double(s_.totals.fg_active) / double(s_.ticks) : 0;
        if (s_.covered_seconds > 0) {
            s_.reads_per_s = double(reads_) / s_.covered_seconds;
            s_.wal_fsyncs_per_s = double(wal_syncs_) / s_.covered_seconds;
        }
        s_.reads = read_acc_.summary();
        s_.wal_fsyncs = sync_acc_.summary();
        settle(s_.reads, timed_reads_, timed_read_us_, read_max_us_);
        settle(s_.wal_fsyncs, timed_syncs_, timed_sync_us_, sync_max_us_);
        s_.top_storage_wait = top_storage_wait(storage_waits_, names);
        s_.diagnosis = diagnose_totals(s_.totals, s_.covered_seconds, latency(), reference, limit);
        return s_;
    }

  private:
    LatencyFacts latency() const {
        LatencyFacts f = latency_of_totals(s_.totals);
        // The summaries' exact averages over the timed records are the better figures.
        f.reads_valid = s_.reads.valid, f.read_avg_ms = s_.reads.avg_us / 1000;
        f.read_timing_missing = s_.reads.timing_missing;
        if (s_.wal_fsyncs.valid)
            f.fsync_valid = true, f.fsync_avg_ms = s_.wal_fsyncs.avg_us / 1000;
        f.fsync_timing_missing = !f.fsync_valid && s_.wal_fsyncs.timing_missing;
        return f;
    }
    WindowSummary s_;
    uint64_t reads_ = 0, wal_syncs_ = 0;
    double timed_reads_ = 0, timed_syncs_ = 0;
    uint64_t timed_read_us_ = 0, timed_sync_us_ = 0;
    double read_max_us_ = 0, sync_max_us_ = 0;
    SeriesAccumulator read_acc_{LatencySeries::Reads, kLatencyBinCount};
    SeriesAccumulator sync_acc_{LatencySeries::WalSyncs, kLatencyBinCount};
    WaitTotals storage_waits_;  // foreground samples counted as storage, per wait event
};

}  // namespace

WindowSummary summarize(const RecordSource &w, const WaitNameTable &names,
                        const ReferenceFacts &reference, const StorageLimitFacts &limit) {
    SummaryPass pass;
    for_each_record(w, kWaitGroupEntries | kLatencyBinEntries,
                    [&](const RecordCopy &c, bool rollup) { pass.add(c, rollup); });
    return pass.finish(names, reference, limit);
}

LatencyFacts latency_of_totals(const IntervalRecord &t) {
    LatencyFacts f;
    f.reads_valid = t.reads > 0 && t.read_time_us > 0;
    f.read_avg_ms = f.reads_valid ? double(t.read_time_us) / double(t.reads) / 1000 : 0;
    f.read_timing_missing = t.reads > 0 && t.read_time_us == 0;
    const bool syncs = t.wal_syncs > 0 && t.wal_sync_time_us > 0;
    const bool writes_only = t.wal_syncs == 0 && t.wal_writes > 0 && t.wal_write_time_us > 0;
    f.fsync_valid = syncs || writes_only;
    f.fsync_avg_ms = syncs         ? double(t.wal_sync_time_us) / double(t.wal_syncs) / 1000
                     : writes_only ? double(t.wal_write_time_us) / double(t.wal_writes) / 1000
                                   : 0;
    f.fsync_timing_missing = !f.fsync_valid && (t.wal_syncs > 0 || t.wal_writes > 0);
    return f;
}

MachineFacts machine_of_totals(const IntervalRecord &t, double covered_seconds,
                               double known_cores) {
    MachineFacts m;
    m.cpu_measured = t.ticks_cpu > 0 && t.cpu_total_us > 0;
    if (m.cpu_measured) {
        m.cpu_busy_fraction = double(t.cpu_busy_us) / double(t.cpu_total_us);
        // The CPUs /proc/stat sums over. Unknown, estimated from the readings: they are taken
        // every io_read_interval and each covers the time since the last, so together they
        // span about the covered time (not ticks_cpu ticks: at 20 ms ticks and 1 s readings
        // that would count 50 times the cores).
        m.cpu_cores = known_cores > 0       ? known_cores
                      : covered_seconds > 0 ? double(t.cpu_total_us) / (1e6 * covered_seconds)
                                            : 0;
    }
    m.client_sessions = t.ticks ? double(t.client_sessions) / double(t.ticks) : 0;
    return m;
}

Diagnosis diagnose_totals(const IntervalRecord &t, double covered_seconds,
                          const LatencyFacts &latency, const ReferenceFacts &reference,
                          const StorageLimitFacts &limit, bool with_hint) {
    DiagnosisInput in;
    in.with_hint = with_hint;
    in.samples.active = t.fg_active;
    in.samples.storage = t.fg_storage;
    in.samples.storage_read = t.fg_storage_read;
    in.samples.storage_wal = t.fg_storage_wal;
    in.samples.sync_rep = t.fg_sync_rep;
    in.samples.cpu = t.fg_cpu;
    in.samples.lock = t.fg_lock;
    in.samples.ticks = t.ticks;
    in.samples.background_cpu = t.background_cpu;
    in.latency = latency;
    in.reference = reference;
    in.transactions = {t.ticks_db_counters > 0, t.xacts, covered_seconds};
    in.limit = limit;
    in.machine = machine_of_totals(t, covered_seconds, reference.cpu_cores);
    return diagnose(in);
}

std::vector<EventRow> wait_event_profile(const RecordSource &w, const WaitNameTable &names) {
    // Keyed by the category the tick counted too: LWLock:WALWrite can be a storage row and a
    // lock row (wait_class.hpp, WAL flush lock).
    std::map<std::tuple<uint32_t, BackendKind, WaitCategory>, uint64_t> samples;
    uint64_t total = 0;
    for_each_entry(w, EntryKind::WaitGroup, [&](const ArenaEntry &e) {
        const WaitNameTable::Entry &name = names.find(e.wait.wait_event_info);
        // Idle as the tick counted it is idle whatever the name says: the per-process rule
        // (category_for: Extension:Extension in a background worker is a sleep on its latch).
        if (e.wait.category == uint8_t(WaitCategory::Idle) ||
            !is_active_sample(e.wait, name.wait_class.category))
            return;
        const WaitCategory counted = name.wait_class.category == WaitCategory::Storage &&
                                             e.wait.category == uint8_t(WaitCategory::Lock)
                                         ? WaitCategory::Lock
                                         : name.wait_class.category;
        samples[{e.wait.wait_event_info, e.wait.backend, counted}] += e.wait.samples;
        total += e.wait.samples;
    });
    std::vector<EventRow> rows;
    for (const auto &[key, n] : samples)
        rows.push_back({&names.find(std::get<0>(key)), std::get<1>(key), std::get<2>(key), n,
                        100.0 * double(n) / double(total)});
    // Stable: ties keep the map's order, so they come out by wait_event_info.
    std::stable_sort(rows.begin(), rows.end(), [](const EventRow &a, const EventRow &b) {
        return std::tie(b.samples, a.backend) < std::tie(a.samples, b.backend);
    });
    return rows;
}

std::vector<IoLatencyRow> io_latency(const RecordSource &w) {
    struct Cell {
        IoLatencyRow row{};
        LatencyAccumulator acc;
        uint64_t timed_count = 0, timed_time_us = 0;
        double max_us = 0;
    };
    std::map<size_t, Cell> cells;
    for_each_record(w, kIoDeltaEntries, [&](const RecordCopy &c, bool) {
        for (const ArenaEntry &e : c.entries) {
            if (e.kind != EntryKind::IoDelta)
                continue;
            const IoDeltaEntry &io = e.io;
            Cell &cell = cells[io_cell_index(io.backend, io.object, io.context, io.op)];
            cell.row.backend = io.backend, cell.row.object = io.object;
            cell.row.context = io.context, cell.row.op = io.op;
            cell.row.ops += io.count;
            cell.row.bytes += io.bytes;
            // One point per tick (per minute for roll-ups): the mean latency of that interval.
            cell.acc.add_interval(double(io.count), double(io.time_us));
            if (io.count && io.time_us) {
                cell.timed_count += io.count, cell.timed_time_us += io.time_us;
                cell.max_us = std::max(cell.max_us, double(io.time_us) / double(io.count));
            }
        }
    });
    std::vector<IoLatencyRow> rows;
    for (auto &[index, cell] : cells) {
        cell.row.latency = cell.acc.summary();
        settle(cell.row.latency, cell.timed_count, cell.timed_time_us, cell.max_us);
        rows.push_back(cell.row);
    }
    return rows;
}

int64_t history_bucket_us(int64_t end_us, bool rollup, int64_t resolution_us) noexcept {
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    // A roll-up belongs to the minute of its ticks' times; its start_us is the previous
    // minute's last tick time.
    int64_t anchor = end_us;
    if (rollup && __builtin_mul_overflow(rollup_bucket_of(end_us), kRollupBucketUs, &anchor))
        return kMin;
    int64_t offset = anchor % resolution_us;  // floor, without adding resolution_us (a huge one)
    if (offset < 0)
        offset += resolution_us;
    int64_t start = 0;
    return __builtin_sub_overflow(anchor, offset, &start) ? kMin : start;
}

void for_each_history_row(const RecordSource &w, int64_t resolution_us,
                          const ReferenceFacts &reference, const HistoryRowVisitor &emit) {
    HistoryRow row{};
    bool open = false;
    const auto finish = [&] {
        row.diagnosis = diagnose_totals(row.totals, row.counter_seconds,
                                        latency_of_totals(row.totals), reference, {}, false);
        emit(row);
    };
    // Ticks that skip the counters (io_read_interval) leave their I/O to the next reading tick:
    // that tick's deltas cover the time since the previous reading, not its own interval.
    double unread_seconds = 0;
    for_each_record(w, kNoEntries, [&](const RecordCopy &c, bool rollup) {
        const IntervalRecord &r = c.record;
        const double seconds = record_seconds(r);
        double counter_seconds = seconds;
        if (!rollup && (r.flags & kFlagCountersNotRead)) {
            unread_seconds += seconds;
            counter_seconds = 0;
        } else if (!rollup) {
            counter_seconds += unread_seconds;
            unread_seconds = 0;
        }
        const int64_t time_us =
            resolution_us > 0 ? history_bucket_us(r.end_us, rollup, resolution_us) : r.end_us;
        if (!open || row.sample_time_us != time_us || resolution_us == 0) {
            if (open)
                finish();
            row = HistoryRow{time_us, 0, 0, IntervalRecord{}, {}};
            open = true;
        }
        row.covered_seconds += seconds;
        row.counter_seconds += counter_seconds;
        accumulate(row.totals, r);
    });
    if (open)
        finish();
}

std::vector<HistoryRow> history(const RecordSource &w, int64_t resolution_us,
                                const ReferenceFacts &reference) {
    std::vector<HistoryRow> rows;
    for_each_history_row(w, resolution_us, reference,
                         [&rows](const HistoryRow &row) { rows.push_back(row); });
    return rows;
}

std::vector<QueryRow> query_profile(const RecordSource &w) {
    std::map<std::pair<int64_t, uint32_t>, QueryRow> queries;
    for_each_entry(w, EntryKind::QueryGroup, [&](const ArenaEntry &e) {
        QueryRow &row = queries[{e.query.query_id, e.query.database_oid}];
        row.query_id = e.query.query_id, row.database_oid = e.query.database_oid;
        row.samples += e.query.samples;
        row.storage_samples += e.query.storage_samples;
    });
    std::vector<QueryRow> rows;
    for (const auto &entry : queries)
        rows.push_back(entry.second);
    std::sort(rows.begin(), rows.end(), [](const QueryRow &a, const QueryRow &b) {
        return std::tie(b.storage_samples, b.samples, a.query_id, a.database_oid) <
               std::tie(a.storage_samples, a.samples, b.query_id, b.database_oid);
    });
    return rows;
}

}  // namespace pgsw
