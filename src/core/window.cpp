#include "core/window.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/rollup.hpp"
#include "core/tick_builder.hpp"

namespace pgsw {
namespace {

template <typename Fn>
void for_each_record(const WindowRecords &w, Fn &&fn) {
    for (const RecordCopy &c : w.rollups)
        fn(c, true);
    for (const RecordCopy &c : w.ticks)
        fn(c, false);
}

template <typename Fn>
void for_each_entry(const WindowRecords &w, EntryKind kind, Fn &&fn) {
    for_each_record(w, [&](const RecordCopy &c, bool) {
        for (const ArenaEntry &e : c.entries)
            if (e.kind == kind)
                fn(e);
    });
}

// Seconds of history a record measures: a baseline tick measures nothing.
double record_seconds(const IntervalRecord &r) {
    if (r.ticks == 1 && (r.flags & kFlagBaseline))
        return 0;
    return double(r.end_us - r.start_us) / 1e6;
}

// Adds the record's points for one series and returns the I/Os they time. A roll-up's bins
// weigh exactly its timed ticks' counts, so a minute in which the timing GUC changed still
// divides its time by the timed I/Os only; its untimed rest is counted as untimed.
double add_series(LatencyAccumulator &acc, const RecordCopy &c, bool rollup, LatencySeries series,
                  uint64_t count, uint64_t time_us) {
    double binned = 0;
    if (rollup)
        for (const ArenaEntry &e : c.entries)
            if (e.kind == EntryKind::LatencyBin && e.bin.series == series) {
                acc.add_weighted_point(latency_bin_mid_us(e.bin.bin), e.bin.weight);
                binned += e.bin.weight;
            }
    if (binned > 0) {
        if (double(count) > binned)
            acc.add_interval(double(count) - binned, 0);
        return binned;
    }
    // Ticks, and roll-ups that lost their bins or were never timed: one point each.
    acc.add_interval(double(count), double(time_us));
    return time_us ? double(count) : 0;
}

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
    }
}

bool is_foreground(const WaitGroupEntry &g) {
    return is_foreground_active(g.backend, g.state);
}

LatencyFacts latency_facts(const WindowSummary &s, const WindowRecords &w,
                           const WaitNameTable &names) {
    LatencyFacts f;
    f.reads_valid = s.reads.valid;
    f.read_timing_missing = s.reads.timing_missing;
    f.read_avg_ms = s.reads.avg_us / 1000;
    f.fsync_valid = s.wal_fsyncs.valid;
    f.fsync_timing_missing = s.wal_fsyncs.timing_missing;
    f.fsync_avg_ms = s.wal_fsyncs.avg_us / 1000;
    double by_kind[6] = {0}, total = 0;
    for_each_entry(w, EntryKind::WaitGroup, [&](const ArenaEntry &e) {
        const WaitClass &wc = names.find(e.wait.wait_event_info).wait_class;
        if (!is_foreground(e.wait) || wc.category != WaitCategory::Storage)
            return;
        by_kind[static_cast<int>(wc.kind) % 6] += e.wait.samples;
        total += e.wait.samples;
    });
    if (total > 0) {
        f.read_wait_share = by_kind[static_cast<int>(StorageKind::Read)] / total;
        f.write_wait_share = by_kind[static_cast<int>(StorageKind::Write)] / total;
        f.wal_wait_share = by_kind[static_cast<int>(StorageKind::Wal)] / total;
        f.temp_wait_share = by_kind[static_cast<int>(StorageKind::Temp)] / total;
    }
    return f;
}

std::string top_storage_wait(const WindowRecords &w, const WaitNameTable &names) {
    std::map<uint32_t, uint64_t> samples;
    for_each_entry(w, EntryKind::WaitGroup, [&](const ArenaEntry &e) {
        if (is_foreground(e.wait) &&
            names.find(e.wait.wait_event_info).wait_class.category == WaitCategory::Storage)
            samples[e.wait.wait_event_info] += e.wait.samples;
    });
    if (samples.empty())
        return "";
    const auto top = std::max_element(samples.begin(), samples.end(), [](auto &a, auto &b) {
        return a.second < b.second || (a.second == b.second && a.first > b.first);
    });
    const WaitNameTable::Entry &name = names.find(top->first);
    return name.type + ":" + name.event;
}

int all_ticks_had(const WindowRecords &w, uint32_t IntervalRecord::*timed_ticks) {
    int result = -1;
    for_each_record(w, [&](const RecordCopy &c, bool) {
        if (c.record.ticks == 0)
            return;
        const bool all = c.record.*timed_ticks == c.record.ticks;
        result = (result == -1 ? 1 : result) & (all ? 1 : 0);
    });
    return result;
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

WindowRecords read_window(const Ring &ticks, const Ring &rollups, const WindowPlan &plan) {
    WindowRecords w;
    int64_t ticks_after = plan.start_us;
    if (plan.use_rollups) {
        w.rollups = rollups.read_since(plan.start_us, true);
        if (!w.rollups.empty())
            ticks_after = std::max(ticks_after, w.rollups.back().record.end_us);
    }
    w.ticks = ticks.read_since(ticks_after, true);
    return w;
}

std::vector<uint32_t> distinct_wait_infos(const WindowRecords &w) {
    std::vector<uint32_t> infos;
    for_each_entry(w, EntryKind::WaitGroup,
                   [&](const ArenaEntry &e) { infos.push_back(e.wait.wait_event_info); });
    std::sort(infos.begin(), infos.end());
    infos.erase(std::unique(infos.begin(), infos.end()), infos.end());
    return infos;
}

bool is_active_sample(const WaitGroupEntry &g, WaitCategory category) noexcept {
    if (category == WaitCategory::Idle)
        return false;
    return g.state == BackendStateCode::Active ||
           g.state == BackendStateCode::FastpathFunctionCall || g.state == BackendStateCode::None;
}

double covered_seconds(const WindowRecords &w) {
    double seconds = 0;
    for_each_record(w, [&](const RecordCopy &c, bool) { seconds += record_seconds(c.record); });
    return seconds;
}

WindowSummary summarize(const WindowRecords &w, const WaitNameTable &names) {
    WindowSummary s;
    SampleCounts counts;
    uint64_t reads = 0, wal_syncs = 0;
    double timed_reads = 0, timed_syncs = 0;
    uint64_t timed_read_us = 0, timed_sync_us = 0;
    double read_max_us = 0, sync_max_us = 0;
    LatencyAccumulator read_acc(w.ticks.size()), sync_acc(w.ticks.size());
    for_each_record(w, [&](const RecordCopy &c, bool rollup) {
        const IntervalRecord &r = c.record;
        s.ticks += r.ticks;
        s.covered_seconds += record_seconds(r);
        counts.active += r.fg_active, counts.storage += r.fg_storage;
        counts.cpu += r.fg_cpu, counts.lock += r.fg_lock;
        reads += r.reads, wal_syncs += r.wal_syncs;
        timed_read_us += r.read_time_us, timed_sync_us += r.wal_sync_time_us;
        read_max_us = std::max(read_max_us, r.read_latency_max_us);
        sync_max_us = std::max(sync_max_us, r.wal_sync_latency_max_us);
        timed_reads +=
            add_series(read_acc, c, rollup, LatencySeries::Reads, r.reads, r.read_time_us);
        timed_syncs += add_series(sync_acc, c, rollup, LatencySeries::WalSyncs, r.wal_syncs,
                                  r.wal_sync_time_us);
    });
    s.backend_samples = counts.active;
    s.active_backends_avg = s.ticks ? double(counts.active) / double(s.ticks) : 0;
    if (s.covered_seconds > 0) {
        s.reads_per_s = double(reads) / s.covered_seconds;
        s.wal_fsyncs_per_s = double(wal_syncs) / s.covered_seconds;
    }
    s.reads = read_acc.summary();
    s.wal_fsyncs = sync_acc.summary();
    settle(s.reads, timed_reads, timed_read_us, read_max_us);
    settle(s.wal_fsyncs, timed_syncs, timed_sync_us, sync_max_us);
    s.track_io_timing = all_ticks_had(w, &IntervalRecord::ticks_io_timing);
    s.track_wal_io_timing = all_ticks_had(w, &IntervalRecord::ticks_wal_timing);
    s.top_storage_wait = top_storage_wait(w, names);
    s.diagnosis = diagnose(counts, latency_facts(s, w, names));
    return s;
}

std::vector<EventRow> wait_event_profile(const WindowRecords &w, const WaitNameTable &names) {
    std::map<std::pair<uint32_t, BackendKind>, uint64_t> samples;
    uint64_t total = 0;
    for_each_entry(w, EntryKind::WaitGroup, [&](const ArenaEntry &e) {
        const WaitNameTable::Entry &name = names.find(e.wait.wait_event_info);
        if (!is_active_sample(e.wait, name.wait_class.category))
            return;
        samples[{e.wait.wait_event_info, e.wait.backend}] += e.wait.samples;
        total += e.wait.samples;
    });
    std::vector<EventRow> rows;
    for (const auto &[key, n] : samples)
        rows.push_back({&names.find(key.first), key.second, n, 100.0 * double(n) / double(total)});
    // Stable: ties keep the map's order, so they come out by wait_event_info.
    std::stable_sort(rows.begin(), rows.end(), [](const EventRow &a, const EventRow &b) {
        return std::tie(b.samples, a.backend) < std::tie(a.samples, b.backend);
    });
    return rows;
}

std::vector<IoLatencyRow> io_latency(const WindowRecords &w) {
    struct Cell {
        IoLatencyRow row{};
        LatencyAccumulator acc;
        uint64_t timed_count = 0, timed_time_us = 0;
        double max_us = 0;
    };
    std::map<size_t, Cell> cells;
    for_each_record(w, [&](const RecordCopy &c, bool) {
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

std::vector<HistoryRow> history(const WindowRecords &w, int64_t resolution_us) {
    std::vector<HistoryRow> rows;
    for_each_record(w, [&](const RecordCopy &c, bool rollup) {
        const IntervalRecord &r = c.record;
        int64_t time_us = r.end_us;
        if (resolution_us > 0) {
            // A roll-up belongs to the minute of its ticks' times; its start_us is the previous
            // minute's last tick time.
            const int64_t anchor = rollup ? rollup_bucket_of(r.end_us) * kRollupBucketUs : r.end_us;
            time_us = anchor - ((anchor % resolution_us) + resolution_us) % resolution_us;
        }
        if (rows.empty() || rows.back().sample_time_us != time_us || resolution_us == 0)
            rows.push_back(HistoryRow{time_us, 0, 0, {}, {}, 0, 0, 0, 0});
        HistoryRow &row = rows.back();
        row.ticks += r.ticks;
        row.covered_seconds += record_seconds(r);
        row.samples.active += r.fg_active, row.samples.storage += r.fg_storage;
        row.samples.cpu += r.fg_cpu, row.samples.lock += r.fg_lock;
        row.reads += r.reads, row.read_time_us += r.read_time_us;
        row.wal_syncs += r.wal_syncs, row.wal_sync_time_us += r.wal_sync_time_us;
    });
    for (HistoryRow &row : rows)
        row.diagnosis = diagnose(row.samples, LatencyFacts{});
    return rows;
}

std::vector<QueryRow> query_profile(const WindowRecords &w) {
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
