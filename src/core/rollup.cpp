#include "core/rollup.hpp"

#include <algorithm>

#include "core/latency_stats.hpp"
#include "core/tick_builder.hpp"

namespace pgsw {
namespace {

// Read and WAL-sync bins, and probe bins of up to 16 devices.
constexpr size_t kMaxBins = (2 + 16) * 256;
constexpr size_t kMaxDeviceEntries = 4 * kMaxDevicesPerTick;  // devices can come and go

uint64_t bin_key(LatencySeries series, uint16_t device, uint8_t bin) noexcept {
    return uint64_t{static_cast<uint8_t>(series)} << 24 | uint64_t{device} << 8 | bin;
}

uint64_t device_key(EntryKind kind, uint16_t device) noexcept {
    return uint64_t{static_cast<uint8_t>(kind)} << 16 | device;
}

uint64_t io_key(const IoDeltaEntry &io) noexcept {
    return io_cell_index(io.backend, io.object, io.context, io.op);
}

}  // namespace

RollupBuilder::RollupBuilder(size_t max_wait_groups, size_t max_query_groups)
    : waits_(max_wait_groups),
      queries_(max_query_groups),
      io_(kIoCells),
      bins_(kMaxBins),
      devices_(kMaxDeviceEntries),
      slots_(kMaxSlotsPerTick) {
    entries_.reserve(max_wait_groups + max_query_groups + kIoCells + kMaxBins + kMaxDeviceEntries +
                     kMaxSlotsPerTick);
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
    record_.end_us = std::max(record_.end_us, t.end_us);  // a late tick cannot move it back
    accumulate(record_, t);
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
        case EntryKind::LatencyBin: {
            // Ticks carry only probe bins (one count per probe read): summed as they are.
            const LatencyBinEntry &b = e.bin;
            if ((sum = bins_.find_or_insert(bin_key(b.series, b.device, b.bin))) == nullptr)
                break;
            if (sum->kind != EntryKind::LatencyBin)
                *sum = e, sum->bin.weight = 0;
            sum->bin.weight += b.weight;
            return;
        }
        case EntryKind::DeviceIo: {
            const DeviceIoEntry &d = e.device_io;
            if ((sum = devices_.find_or_insert(device_key(e.kind, d.device))) == nullptr)
                break;
            if (sum->kind != EntryKind::DeviceIo)
                *sum = e, sum->device_io.reads = sum->device_io.writes = 0,
                sum->device_io.flushes = 0, sum->device_io.read_sectors = 0,
                sum->device_io.write_sectors = 0;
            DeviceIoEntry &to = sum->device_io;
            to.roles |= d.roles;
            to.reads += d.reads, to.writes += d.writes, to.flushes += d.flushes;
            to.read_sectors += d.read_sectors, to.write_sectors += d.write_sectors;
            return;
        }
        case EntryKind::DeviceTime: {
            const DeviceTimeEntry &d = e.device_time;
            if ((sum = devices_.find_or_insert(device_key(e.kind, d.device))) == nullptr)
                break;
            if (sum->kind != EntryKind::DeviceTime)
                *sum = ArenaEntry{}, sum->device_time.kind = EntryKind::DeviceTime,
                sum->device_time.device = d.device;
            DeviceTimeEntry &to = sum->device_time;
            to.flags |= d.flags;
            to.read_ms += d.read_ms, to.write_ms += d.write_ms, to.flush_ms += d.flush_ms;
            to.busy_ms += d.busy_ms, to.queue_ms += d.queue_ms, to.ticks += d.ticks;
            to.ticks_at_limit = static_cast<uint16_t>(
                std::min<uint32_t>(0xFFFFu, uint32_t{to.ticks_at_limit} + d.ticks_at_limit));
            return;
        }
        case EntryKind::Slot: {
            const SlotEntry &sl = e.slot;
            if ((sum = slots_.find_or_insert(sl.slot)) == nullptr)
                break;
            if (sum->kind != EntryKind::Slot)
                *sum = e, sum->slot.spill_count = 0, sum->slot.spill_bytes = 0,
                sum->slot.lag_max_bytes = 0;
            SlotEntry &to = sum->slot;
            to.flags = sl.flags;          // the newest reading's state
            to.lag_bytes = sl.lag_bytes;  // and lag
            to.lag_max_bytes = std::max(to.lag_max_bytes, sl.lag_max_bytes);
            to.spill_count += sl.spill_count;
            to.spill_bytes += sl.spill_bytes;
            return;
        }
    }
    record_.flags |= kFlagEntriesTruncated;
}

void RollupBuilder::add_latency_point(LatencySeries series, uint64_t count,
                                      uint64_t time_us) noexcept {
    if (count == 0 || time_us == 0)
        return;  // nothing timed: no latency to bin
    const uint8_t bin = latency_bin(static_cast<double>(time_us) / static_cast<double>(count));
    ArenaEntry *sum = bins_.find_or_insert(bin_key(series, 0, bin));
    if (sum == nullptr)
        return;
    if (sum->kind != EntryKind::LatencyBin) {
        *sum = ArenaEntry{};
        sum->bin = LatencyBinEntry{EntryKind::LatencyBin, series, bin, 0, 0, {}, 0.0, {}};
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
    devices_.for_each(append);
    slots_.for_each(append);
    out_record_.n_wait_groups = static_cast<uint32_t>(waits_.size());
    out_record_.n_query_groups = static_cast<uint32_t>(queries_.size());
    out_record_.n_io_deltas = static_cast<uint32_t>(io_.size());
    out_record_.n_latency_bins = static_cast<uint32_t>(bins_.size());
    out_record_.n_device_entries = static_cast<uint32_t>(devices_.size());
    out_record_.n_slots = static_cast<uint32_t>(slots_.size());
}

void RollupBuilder::finish() noexcept {
    snapshot();
    record_ = IntervalRecord{};
    waits_.clear();
    queries_.clear();
    io_.clear();
    bins_.clear();
    devices_.clear();
    slots_.clear();
}

}  // namespace pgsw
