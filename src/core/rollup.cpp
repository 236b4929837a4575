#include "core/rollup.hpp"

#include <algorithm>

#include "core/latency_stats.hpp"
#include "core/tick_builder.hpp"

namespace pgsw {
namespace {

constexpr size_t kMaxBins = 2 * 256;

uint64_t io_key(const IoDeltaEntry &io) noexcept {
    return io_cell_index(io.backend, io.object, io.context, io.op);
}

}  // namespace

RollupBuilder::RollupBuilder(size_t max_wait_groups, size_t max_query_groups)
    : waits_(max_wait_groups), queries_(max_query_groups), io_(kIoCells), bins_(kMaxBins) {
    entries_.reserve(max_wait_groups + max_query_groups + kIoCells + kMaxBins);
}

bool RollupBuilder::starts_new_bucket(const IntervalRecord &tick) const noexcept {
    return !empty() && rollup_bucket_of(tick.end_us) != bucket_;
}

void RollupBuilder::add(const IntervalRecord &tick, const ArenaEntry *entries, size_t n) noexcept {
    if (empty()) {
        bucket_ = rollup_bucket_of(tick.end_us);
        record_.start_us = tick.start_us;
    }
    add_record_totals(tick);
    for (size_t i = 0; i < n; ++i)
        add_entry(entries[i]);
    add_latency_point(LatencySeries::Reads, tick.reads, tick.read_time_us);
    add_latency_point(LatencySeries::WalSyncs, tick.wal_syncs, tick.wal_sync_time_us);
}

void RollupBuilder::add_record_totals(const IntervalRecord &t) noexcept {
    IntervalRecord &r = record_;
    r.end_us = t.end_us;
    r.flags |= t.flags & ~(kFlagBaseline | kFlagCountersNotRead);
    r.ticks += t.ticks;
    r.ticks_io_timing += t.ticks_io_timing;
    r.ticks_wal_timing += t.ticks_wal_timing;
    r.tick_cost_us += t.tick_cost_us;
    r.tick_cost_max_us = std::max(r.tick_cost_max_us, t.tick_cost_max_us);
    r.procs_sampled_max = std::max(r.procs_sampled_max, t.procs_sampled_max);
    r.procs_sampled += t.procs_sampled;
    r.fg_active += t.fg_active;
    r.fg_storage += t.fg_storage;
    r.fg_cpu += t.fg_cpu;
    r.fg_lock += t.fg_lock;
    r.reads += t.reads;
    r.read_time_us += t.read_time_us;
    r.wal_syncs += t.wal_syncs;
    r.wal_sync_time_us += t.wal_sync_time_us;
    r.wal_writes += t.wal_writes;
    r.wal_write_time_us += t.wal_write_time_us;
    r.read_latency_max_us = std::max(r.read_latency_max_us, t.read_latency_max_us);
    r.wal_sync_latency_max_us = std::max(r.wal_sync_latency_max_us, t.wal_sync_latency_max_us);
}

void RollupBuilder::add_entry(const ArenaEntry &e) noexcept {
    ArenaEntry *sum = nullptr;
    switch (e.kind) {
        case EntryKind::WaitGroup: {
            const WaitGroupEntry &w = e.wait;
            // The category is part of the key: LWLock:WALWrite is storage in some ticks and
            // lock in others (wait_class.hpp), and a roll-up keeps the two apart.
            const WaitKey key{uint64_t{w.wait_event_info} << 32 | w.database_oid,
                              uint64_t{w.category} << 16 |
                                  uint64_t{static_cast<uint8_t>(w.backend)} << 8 |
                                  static_cast<uint8_t>(w.state)};
            if ((sum = waits_.find_or_insert(key)) == nullptr)
                break;
            if (sum->kind != EntryKind::WaitGroup)
                *sum = e, sum->wait.samples = 0;
            sum->wait.samples += w.samples;
            return;
        }
        case EntryKind::QueryGroup: {
            const QueryGroupEntry &q = e.query;
            const WaitKey key{static_cast<uint64_t>(q.query_id), q.database_oid};
            if ((sum = queries_.find_or_insert(key)) == nullptr)
                break;
            if (sum->kind != EntryKind::QueryGroup)
                *sum = e, sum->query.samples = sum->query.storage_samples = 0;
            sum->query.samples += q.samples;
            sum->query.storage_samples += q.storage_samples;
            return;
        }
        case EntryKind::IoDelta: {
            if ((sum = io_.find_or_insert(io_key(e.io))) == nullptr)
                break;
            if (sum->kind != EntryKind::IoDelta)
                *sum = e, sum->io.count = sum->io.time_us = sum->io.bytes = 0;
            sum->io.count += e.io.count;
            sum->io.time_us += e.io.time_us;
            sum->io.bytes += e.io.bytes;
            return;
        }
        case EntryKind::LatencyBin:
            return;  // ticks carry none
    }
    record_.flags |= kFlagEntriesTruncated;
}

void RollupBuilder::add_latency_point(LatencySeries series, uint64_t count,
                                      uint64_t time_us) noexcept {
    if (count == 0 || time_us == 0)
        return;  // nothing timed: no latency to bin
    const uint8_t bin = latency_bin(static_cast<double>(time_us) / static_cast<double>(count));
    const uint64_t key = uint64_t{static_cast<uint8_t>(series)} << 8 | bin;
    ArenaEntry *sum = bins_.find_or_insert(key);
    if (sum == nullptr)
        return;
    if (sum->kind != EntryKind::LatencyBin) {
        *sum = ArenaEntry{};
        sum->bin = LatencyBinEntry{EntryKind::LatencyBin, series, bin, {}, 0.0, {}};
    }
    sum->bin.weight += static_cast<double>(count);
}

void RollupBuilder::snapshot() noexcept {
    out_record_ = record_;
    entries_.clear();
    auto append = [this](const auto &, const ArenaEntry &e) { entries_.push_back(e); };
    waits_.for_each(append);
    queries_.for_each(append);
    io_.for_each(append);
    bins_.for_each(append);
    out_record_.n_wait_groups = static_cast<uint32_t>(waits_.size());
    out_record_.n_query_groups = static_cast<uint32_t>(queries_.size());
    out_record_.n_io_deltas = static_cast<uint32_t>(io_.size());
    out_record_.n_latency_bins = static_cast<uint32_t>(bins_.size());
}

void RollupBuilder::finish() noexcept {
    snapshot();
    record_ = IntervalRecord{};
    waits_.clear();
    queries_.clear();
    io_.clear();
    bins_.clear();
}

}  // namespace pgsw
