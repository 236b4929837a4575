#include "core/tick_builder.hpp"

#include <algorithm>
#include <cstring>

namespace pgsw {
namespace {

IoCounters minus(const IoCounters &a, const IoCounters &b) noexcept {
    return {a.count - b.count, a.time_us - b.time_us, a.bytes - b.bytes};
}

bool below(const IoCounters &now, const IoCounters &before) noexcept {
    return now.count < before.count || now.time_us < before.time_us || now.bytes < before.bytes;
}

bool is_zero(const IoCounters &c) noexcept {
    return c.count == 0 && c.time_us == 0 && c.bytes == 0;
}

void note_max_latency(double &max_us, uint64_t count, uint64_t time_us) noexcept {
    if (count > 0 && time_us > 0)
        max_us = std::max(max_us, static_cast<double>(time_us) / static_cast<double>(count));
}

}  // namespace

TickBuilder::TickBuilder(size_t max_procs, std::pmr::memory_resource *memory)
    : waits_(max_procs + 1, memory),
      queries_(max_procs + 1, memory),
      io_entries_(memory),
      entries_(memory) {
    io_entries_.reserve(kIoCells);
    entries_.reserve(2 * (max_procs + 1) + kIoCells);
}

void TickBuilder::begin(int64_t start_us, int64_t end_us, uint32_t flags) noexcept {
    record_ = IntervalRecord{};
    record_.start_us = start_us;
    record_.end_us = end_us;
    record_.flags = flags;
    record_.ticks = 1;
    record_.ticks_io_timing = (flags & kFlagTrackIoTiming) ? 1 : 0;
    record_.ticks_wal_timing = (flags & kFlagTrackWalIoTiming) ? 1 : 0;
    waits_.clear();
    queries_.clear();
    io_entries_.clear();
    entries_.clear();
    wal_io_seen_ = false;
    flush_lock_info_ = 0;
    flush_lock_active_ = 0;
}

void TickBuilder::add_sample(const ProcSample &s) noexcept {
    record_.procs_sampled++;
    const bool flush_lock = s.wal_role == WalRole::FlushLock;
    wal_io_seen_ |= s.wal_role == WalRole::FlushIo;
    if (flush_lock)
        flush_lock_info_ = s.wait_event_info;
    const WaitKey key{s.wait_event_info, s.database_oid, s.backend, s.state, s.category};
    if (uint32_t *samples = waits_.find_or_insert(key))
        ++*samples;
    else
        record_.flags |= kFlagEntriesTruncated;
    // Idle waits (ClientRead during COPY FROM STDIN, PgSleep, ...) are not load: no denominator.
    if (!is_foreground_active(s.backend, s.state) || s.category == WaitCategory::Idle)
        return;
    record_.fg_active++;
    if (flush_lock) {
        flush_lock_active_++;
    } else {
        record_.fg_storage += s.category == WaitCategory::Storage;
        record_.fg_cpu += s.category == WaitCategory::Cpu;
        record_.fg_lock += s.category == WaitCategory::Lock;
    }
    if (s.query_id == 0)
        return;
    if (QueryCounts *q = queries_.find_or_insert({s.query_id, s.database_oid})) {
        q->samples++;
        if (flush_lock)
            q->flush_lock_samples++;
        else
            q->storage_samples += s.category == WaitCategory::Storage;
    } else {
        record_.flags |= kFlagEntriesTruncated;
    }
}

void TickBuilder::add_io_delta(BackendKind backend, IoObjectCode object, IoContextCode context,
                               IoOpCode op, const IoCounters &delta) noexcept {
    if (is_zero(delta))
        return;
    ArenaEntry entry{};
    entry.io = IoDeltaEntry{EntryKind::IoDelta, backend,       object,     context, op, {},
                            delta.count,        delta.time_us, delta.bytes};
    io_entries_.push_back(entry);
    if (object == IoObjectCode::Relation && op == IoOpCode::Read) {
        record_.reads += delta.count;
        record_.read_time_us += delta.time_us;
    }
    // 18+: WAL rows of pg_stat_io; commit flushes are context normal (init is new segments).
    if (object == IoObjectCode::Wal && context == IoContextCode::Normal) {
        if (op == IoOpCode::Fsync)
            add_wal({}, delta);
        if (op == IoOpCode::Write)
            add_wal(delta, {});
    }
}

void TickBuilder::add_wal(const IoCounters &writes, const IoCounters &syncs) noexcept {
    record_.wal_writes += writes.count;
    record_.wal_write_time_us += writes.time_us;
    record_.wal_syncs += syncs.count;
    record_.wal_sync_time_us += syncs.time_us;
}

void TickBuilder::finish(uint32_t cost_us) noexcept {
    record_.tick_cost_us = cost_us;
    record_.tick_cost_max_us = cost_us;
    record_.procs_sampled_max = static_cast<uint32_t>(record_.procs_sampled);
    note_max_latency(record_.read_latency_max_us, record_.reads, record_.read_time_us);
    note_max_latency(record_.wal_sync_latency_max_us, record_.wal_syncs, record_.wal_sync_time_us);
    const WaitCategory flush_lock = flush_lock_category();
    (flush_lock == WaitCategory::Storage ? record_.fg_storage : record_.fg_lock) +=
        flush_lock_active_;
    waits_.for_each([&](const WaitKey &k, uint32_t samples) {
        const WaitCategory category = flush_lock_info_ != 0 && k.wait_event_info == flush_lock_info_
                                          ? flush_lock
                                          : k.category;
        ArenaEntry e{};
        e.wait = WaitGroupEntry{
            EntryKind::WaitGroup, k.backend,      k.state, static_cast<uint8_t>(category),
            k.wait_event_info,    k.database_oid, samples, {}};
        entries_.push_back(e);
    });
    queries_.for_each([&](const QueryKey &k, const QueryCounts &c) {
        const uint32_t storage =
            c.storage_samples + (flush_lock == WaitCategory::Storage ? c.flush_lock_samples : 0);
        ArenaEntry e{};
        e.query = QueryGroupEntry{
            EntryKind::QueryGroup, {}, k.database_oid, c.samples, storage, k.query_id, 0};
        entries_.push_back(e);
    });
    entries_.insert(entries_.end(), io_entries_.begin(), io_entries_.end());
    record_.n_wait_groups = static_cast<uint32_t>(waits_.size());
    record_.n_query_groups = static_cast<uint32_t>(queries_.size());
    record_.n_io_deltas = static_cast<uint32_t>(io_entries_.size());
    record_.n_latency_bins = 0;
}

IoDeltaTracker::IoDeltaTracker() : slot_of_cell_(kIoCells, -1) {
    tracked_.reserve(kIoCells);
    last_.reserve(kIoCells);
    changes_.reserve(kIoCells);
}

size_t IoDeltaTracker::track(size_t cell) {
    if (slot_of_cell_.at(cell) >= 0)
        return size_t(slot_of_cell_[cell]);
    size_t rest = cell;
    const auto op = static_cast<IoOpCode>(rest % static_cast<size_t>(IoOpCode::Count));
    rest /= static_cast<size_t>(IoOpCode::Count);
    const auto context =
        static_cast<IoContextCode>(rest % static_cast<size_t>(IoContextCode::Count));
    rest /= static_cast<size_t>(IoContextCode::Count);
    const auto object = static_cast<IoObjectCode>(rest % static_cast<size_t>(IoObjectCode::Count));
    rest /= static_cast<size_t>(IoObjectCode::Count);
    slot_of_cell_[cell] = int(tracked_.size());
    tracked_.push_back({static_cast<BackendKind>(rest), object, context, op});
    last_.push_back({});
    // A cell added after the baseline has no previous value: measure it from the next tick.
    have_previous_ = false;
    return tracked_.size() - 1;
}

bool IoDeltaTracker::fixed_part_reset() const noexcept {
    return next_.io_reset_at_us != previous_.io_reset_at_us ||
           next_.wal_reset_at_us != previous_.wal_reset_at_us ||
           below(next_.wal_writes, previous_.wal_writes) ||
           below(next_.wal_syncs, previous_.wal_syncs);
}

uint32_t IoDeltaTracker::update(TickBuilder &tick) noexcept {
    uint32_t flags = next_.wal_from_pg_stat_wal ? kFlagWalFromPgStatWal : kFlagWalFromPgStatIo;
    if (!have_previous_) {
        flags |= kFlagBaseline;
    } else if (went_down_ || fixed_part_reset()) {
        flags |= kFlagBaseline | kFlagCountersReset;
    } else {
        // Slot order, so a tick's entries come out in the same order every tick.
        std::sort(changes_.begin(), changes_.end(),
                  [](const Change &a, const Change &b) { return a.slot < b.slot; });
        for (const Change &c : changes_) {
            const TrackedCell &t = tracked_[c.slot];
            tick.add_io_delta(t.backend, t.object, t.context, t.op, c.delta);
        }
        if (next_.wal_from_pg_stat_wal)
            tick.add_wal(minus(next_.wal_writes, previous_.wal_writes),
                         minus(next_.wal_syncs, previous_.wal_syncs));
    }
    previous_ = next_;
    changes_.clear();
    went_down_ = false;
    have_previous_ = true;
    return flags;
}

}  // namespace pgsw
