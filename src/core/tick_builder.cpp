#include "core/tick_builder.hpp"

#include <algorithm>
#include <cstring>

#include "core/latency_stats.hpp"

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
      probe_bins_(memory),
      device_entries_(memory),
      slot_entries_(memory),
      entries_(memory) {
    io_entries_.reserve(kIoCells);
    probe_bins_.reserve(kMaxProbeBinsPerTick);
    device_entries_.reserve(2 * kMaxDevicesPerTick);
    slot_entries_.reserve(kMaxSlotsPerTick);
    entries_.reserve(2 * (max_procs + 1) + kIoCells + kMaxProbeBinsPerTick +
                     2 * kMaxDevicesPerTick + kMaxSlotsPerTick);
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
    probe_bins_.clear();
    device_entries_.clear();
    slot_entries_.clear();
    entries_.clear();
    wal_io_seen_ = false;
    flush_lock_info_ = 0;
    flush_lock_active_ = 0;
    checkpointer_ = CheckpointerActivity::Unseen;
    checkpoint_counters_moved_ = false;
    autovacuum_busy_ = 0;
    autovacuum_max_ = 0;  // set_autovacuum_max() each tick that knows it
}

void TickBuilder::add_sample(const ProcSample &s) noexcept {
    record_.procs_sampled++;
    const WaitCategory category = category_for(s.backend, s.category, s.role);
    const bool flush_lock = s.role == WaitRole::FlushLock;
    wal_io_seen_ |= s.role == WaitRole::FlushIo;
    if (flush_lock)
        flush_lock_info_ = s.wait_event_info;
    const WaitKey key{s.wait_event_info, s.database_oid, s.backend, s.state, category};
    if (uint32_t *samples = waits_.find_or_insert(key))
        ++*samples;
    else
        record_.flags |= kFlagEntriesTruncated;
    if (s.backend == BackendKind::Checkpointer)
        note_checkpointer(s, category);
    if (s.backend == BackendKind::AutovacuumWorker)
        note_autovacuum_worker(s, category);
    record_.client_sessions += s.backend == BackendKind::ClientBackend;
    // Idle waits (ClientRead during COPY FROM STDIN, PgSleep, ...) are not load: no denominator.
    if (!is_foreground_active(s.backend, s.state)) {
        const bool client =
            s.backend == BackendKind::ClientBackend || s.backend == BackendKind::ParallelWorker;
        record_.background_cpu += !client && category == WaitCategory::Cpu;
        return;
    }
    if (category == WaitCategory::Idle)
        return;
    count_foreground(s, category);
    if (s.query_id == 0)
        return;
    if (QueryCounts *q = queries_.find_or_insert({s.query_id, s.database_oid})) {
        q->samples++;
        if (flush_lock)
            q->flush_lock_samples++;
        else
            q->storage_samples += category == WaitCategory::Storage;
    } else {
        record_.flags |= kFlagEntriesTruncated;
    }
}

void TickBuilder::count_foreground(const ProcSample &s, WaitCategory category) noexcept {
    record_.fg_active++;
    if (s.role == WaitRole::FlushLock) {
        flush_lock_active_++;  // storage or lock: decided at finish()
        return;
    }
    record_.fg_cpu += category == WaitCategory::Cpu;
    record_.fg_lock += category == WaitCategory::Lock;
    record_.fg_sync_rep += category == WaitCategory::SyncRep;
    if (category != WaitCategory::Storage)
        return;
    record_.fg_storage++;
    record_.fg_storage_read += s.storage_kind == StorageKind::Read;
    record_.fg_storage_wal += s.storage_kind == StorageKind::Wal;
}

// The checkpointer sleeps in an Activity wait between checkpoints and in
// Timeout:CheckpointWriteDelay only inside a spread checkpoint; anything else is work. It also
// leaves its idle wait briefly on every loop (fsync requests, stats), so one busy sample alone
// does not mark a checkpoint: finish_checkpoint_flag() wants two in a row.
void TickBuilder::note_checkpointer(const ProcSample &s, WaitCategory category) noexcept {
    if (s.role == WaitRole::CheckpointWriteDelay)
        checkpointer_ = CheckpointerActivity::WriteDelay;
    else if (category == WaitCategory::Idle)
        checkpointer_ = CheckpointerActivity::Idle;
    else
        checkpointer_ = CheckpointerActivity::Busy;
}

void TickBuilder::note_autovacuum_worker(const ProcSample &s, WaitCategory category) noexcept {
    autovacuum_busy_++;  // a worker lives only while it processes a database
    if (s.role == WaitRole::VacuumDelay)
        record_.autovacuum_samples_delay++;
    else if (category == WaitCategory::Storage)
        record_.autovacuum_samples_io++;
    else if (category == WaitCategory::Cpu)
        record_.autovacuum_samples_cpu++;
    else
        record_.autovacuum_samples_other++;
}

void TickBuilder::add_databases(const DatabaseDeltas &d) noexcept {
    if (!d.valid)
        return;
    record_.ticks_db_counters = 1;
    record_.xacts += d.xacts;
    record_.tuples_inserted += d.tuples_inserted;
    record_.tuples_updated += d.tuples_updated;
    record_.tuples_deleted += d.tuples_deleted;
}

void TickBuilder::add_cpu(uint64_t busy_us, uint64_t total_us) noexcept {
    record_.ticks_cpu = 1;
    record_.cpu_busy_us = busy_us;
    record_.cpu_total_us = total_us;
}

void TickBuilder::add_checkpointer(const CheckpointerDeltas &c) noexcept {
    if (c.redo_advanced) {
        record_.checkpoints_started++;
        checkpoint_counters_moved_ = true;
    }
    if (!c.valid)
        return;
    record_.ticks_checkpointer = 1;
    record_.checkpoints_timed += c.timed;
    record_.checkpoints_requested += c.requested;
    record_.checkpoints_done += c.done;
    record_.checkpoint_write_time_ms += c.write_time_ms;
    record_.checkpoint_sync_time_ms += c.sync_time_ms;
    record_.checkpoint_buffers_written += c.buffers_written;
    // Buffers written by the checkpointer: it is inside a checkpoint (an immediate one shows
    // no CheckpointWriteDelay at all).
    checkpoint_counters_moved_ |= c.buffers_written > 0;
}

void TickBuilder::add_slot(const SlotReading &r) noexcept {
    if (slot_entries_.size() == slot_entries_.capacity()) {
        record_.flags |= kFlagEntriesTruncated;
        return;
    }
    ArenaEntry e{};
    e.slot = SlotEntry{EntryKind::Slot, r.flags,     r.slot,       r.spill_count,
                       r.lag_bytes,     r.lag_bytes, r.spill_bytes};
    slot_entries_.push_back(e);
}

void TickBuilder::add_device(const DeviceIoEntry &io, const DeviceTimeEntry &time) noexcept {
    if (device_entries_.size() + 2 > device_entries_.capacity()) {
        record_.flags |= kFlagEntriesTruncated;
        return;
    }
    ArenaEntry e{};
    e.device_io = io;
    e.device_io.kind = EntryKind::DeviceIo;
    device_entries_.push_back(e);
    e = ArenaEntry{};
    e.device_time = time;
    e.device_time.kind = EntryKind::DeviceTime;
    e.device_time.device = io.device;
    device_entries_.push_back(e);
}

void TickBuilder::add_probe_latency(uint16_t device, double latency_us) noexcept {
    if (!add_probe_bin(device, latency_bin(latency_us), 1))
        record_.flags |= kFlagEntriesTruncated;
}

bool TickBuilder::add_probe_bin(uint16_t device, uint8_t bin, uint64_t count) noexcept {
    for (ArenaEntry &e : probe_bins_)
        if (e.bin.device == device && e.bin.bin == bin) {
            e.bin.weight += double(count);
            return true;
        }
    if (probe_bins_.size() == probe_bins_.capacity())
        return false;
    ArenaEntry e{};
    e.bin = LatencyBinEntry{
        EntryKind::LatencyBin, LatencySeries::Probe, bin, 0, device, {}, double(count), {}};
    probe_bins_.push_back(e);
    return true;
}

void TickBuilder::finish_checkpoint_flag() noexcept {
    const bool busy = checkpointer_ == CheckpointerActivity::Busy;
    const bool in_checkpoint = checkpointer_ == CheckpointerActivity::WriteDelay ||
                               (busy && checkpointer_busy_before_) || checkpoint_counters_moved_;
    if (checkpointer_ != CheckpointerActivity::Unseen)
        checkpointer_busy_before_ = busy;
    if (!in_checkpoint)
        return;
    IntervalRecord &r = record_;
    r.flags |= kFlagInCheckpoint;
    r.ticks_in_checkpoint = 1;
    r.fg_active_in_checkpoint = r.fg_active;
    r.xacts_in_checkpoint = r.xacts;
    r.reads_in_checkpoint = r.reads;
    r.read_time_us_in_checkpoint = r.read_time_us;
    r.wal_syncs_in_checkpoint = r.wal_syncs;
    r.wal_sync_time_us_in_checkpoint = r.wal_sync_time_us;
}

void TickBuilder::finish_autovacuum() noexcept {
    if (autovacuum_max_ == 0)
        return;
    record_.ticks_autovacuum = 1;
    record_.autovacuum_workers_max = autovacuum_max_;
    record_.autovacuum_workers_busy = std::min(autovacuum_busy_, autovacuum_max_);
    record_.ticks_autovacuum_all_busy = autovacuum_busy_ >= autovacuum_max_ ? 1 : 0;
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
    if (record_.reads > 0 && record_.read_time_us > 0)
        record_.read_latency_m2 =
            double(record_.read_time_us) * double(record_.read_time_us) / double(record_.reads);
    const WaitCategory flush_lock = flush_lock_category();
    (flush_lock == WaitCategory::Storage ? record_.fg_storage : record_.fg_lock) +=
        flush_lock_active_;
    if (flush_lock == WaitCategory::Storage)
        record_.fg_storage_wal += flush_lock_active_;
    finish_checkpoint_flag();
    finish_autovacuum();
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
    // Most ticks have none of these: vector::insert is out of line, on a page of its own.
    if (!io_entries_.empty())
        entries_.insert(entries_.end(), io_entries_.begin(), io_entries_.end());
    if (!probe_bins_.empty())
        entries_.insert(entries_.end(), probe_bins_.begin(), probe_bins_.end());
    if (!device_entries_.empty())
        entries_.insert(entries_.end(), device_entries_.begin(), device_entries_.end());
    if (!slot_entries_.empty())
        entries_.insert(entries_.end(), slot_entries_.begin(), slot_entries_.end());
    record_.n_wait_groups = static_cast<uint32_t>(waits_.size());
    record_.n_query_groups = static_cast<uint32_t>(queries_.size());
    record_.n_io_deltas = static_cast<uint32_t>(io_entries_.size());
    record_.n_latency_bins = static_cast<uint32_t>(probe_bins_.size());
    record_.n_device_entries = static_cast<uint32_t>(device_entries_.size());
    record_.n_slots = static_cast<uint32_t>(slot_entries_.size());
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
