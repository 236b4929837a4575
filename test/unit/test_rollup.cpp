#include <limits>

#include <gtest/gtest.h>

#include "core/latency_stats.hpp"
#include "core/rollup.hpp"
#include "core/wait_class.hpp"

namespace pgsw {
namespace {

IntervalRecord tick_at(int64_t end_us, uint64_t reads, uint64_t read_time_us) {
    IntervalRecord r{};
    r.start_us = end_us - 1000000;
    r.end_us = end_us;
    r.ticks = 1;
    r.ticks_io_timing = 1;
    r.fg_active = 4;
    r.fg_storage = 3;
    r.reads = reads;
    r.read_time_us = read_time_us;
    r.read_latency_max_us = reads ? double(read_time_us) / double(reads) : 0;
    r.tick_cost_us = 10;
    r.tick_cost_max_us = 10;
    return r;
}

ArenaEntry wait_entry(uint32_t wait, uint32_t samples) {
    ArenaEntry e{};
    e.wait = WaitGroupEntry{EntryKind::WaitGroup,
                            BackendKind::ClientBackend,
                            BackendStateCode::Active,
                            1,
                            wait,
                            5,
                            samples,
                            {}};
    return e;
}

TEST(RollupBucket, FloorsToWholeMinutes) {
    EXPECT_EQ(rollup_bucket_of(0), 0);
    EXPECT_EQ(rollup_bucket_of(kRollupBucketUs - 1), 0);
    EXPECT_EQ(rollup_bucket_of(kRollupBucketUs), 1);
    EXPECT_EQ(rollup_bucket_of(-1), -1);
    EXPECT_EQ(rollup_bucket_of(-kRollupBucketUs), -1);
    EXPECT_EQ(rollup_bucket_of(-kRollupBucketUs - 1), -2);
    // The extremes a corrupt history file can hold (the fuzzer found INT64_MIN's negation).
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    EXPECT_EQ(rollup_bucket_of(kMin), kMin / kRollupBucketUs - 1);
    EXPECT_EQ(rollup_bucket_of(kMax), kMax / kRollupBucketUs);
}

TEST(Rollup, SumsTicksOfOneMinute) {
    RollupBuilder rollup(16, 16);
    const int64_t minute = 10 * kRollupBucketUs;
    for (int s = 1; s <= 3; ++s) {
        const ArenaEntry e[2] = {wait_entry(100, 2), wait_entry(200, 1)};
        const IntervalRecord t = tick_at(minute + s * 1000000, 10, 10 * 1000 * s);
        ASSERT_FALSE(rollup.starts_new_bucket(t));
        rollup.add(t, e, 2);
    }
    EXPECT_TRUE(rollup.starts_new_bucket(tick_at(minute + kRollupBucketUs, 1, 1)));
    rollup.finish();
    const IntervalRecord &r = rollup.record();
    EXPECT_EQ(r.ticks, 3u);
    EXPECT_EQ(r.reads, 30u);
    EXPECT_EQ(r.read_time_us, 60000u);
    EXPECT_EQ(r.fg_storage, 9u);
    EXPECT_DOUBLE_EQ(r.read_latency_max_us, 3000.0);
    EXPECT_EQ(r.n_wait_groups, 2u);
    EXPECT_EQ(r.n_latency_bins, 3u);  // 1, 2 and 3 ms fall in different bins
    uint32_t samples_100 = 0;
    double bin_weight = 0;
    for (const ArenaEntry &e : rollup.entries()) {
        if (e.kind == EntryKind::WaitGroup && e.wait.wait_event_info == 100)
            samples_100 = e.wait.samples;
        if (e.kind == EntryKind::LatencyBin)
            bin_weight += e.bin.weight;
    }
    EXPECT_EQ(samples_100, 6u);
    EXPECT_DOUBLE_EQ(bin_weight, 30.0);
    EXPECT_TRUE(rollup.empty());
}

TEST(Rollup, KeepsOneWaitCountedAsStorageAndAsLockApart) {
    // LWLock:WALWrite counts as storage in ticks with WAL I/O in progress, as lock in others.
    RollupBuilder rollup(16, 16);
    const int64_t minute = 10 * kRollupBucketUs;
    ArenaEntry as_storage = wait_entry(300, 4), as_lock = wait_entry(300, 1);
    as_lock.wait.category = uint8_t(WaitCategory::Lock);
    rollup.add(tick_at(minute + 1000000, 0, 0), &as_storage, 1);
    rollup.add(tick_at(minute + 2000000, 0, 0), &as_lock, 1);
    rollup.add(tick_at(minute + 3000000, 0, 0), &as_storage, 1);
    rollup.finish();
    uint32_t storage = 0, lock = 0;
    for (const ArenaEntry &e : rollup.entries())
        if (e.kind == EntryKind::WaitGroup)
            (e.wait.category == uint8_t(WaitCategory::Lock) ? lock : storage) += e.wait.samples;
    EXPECT_EQ(rollup.record().n_wait_groups, 2u);
    EXPECT_EQ(storage, 8u);
    EXPECT_EQ(lock, 1u);
}

TEST(Rollup, UntimedTicksAddNoLatencyBins) {
    RollupBuilder rollup(4, 4);
    rollup.add(tick_at(kRollupBucketUs + 1, 50, 0), nullptr, 0);
    rollup.finish();
    EXPECT_EQ(rollup.record().reads, 50u);
    EXPECT_EQ(rollup.record().n_latency_bins, 0u);
}

TEST(Rollup, SumsIoCells) {
    RollupBuilder rollup(4, 4);
    ArenaEntry io{};
    io.io = IoDeltaEntry{EntryKind::IoDelta,
                         BackendKind::Checkpointer,
                         IoObjectCode::Relation,
                         IoContextCode::Normal,
                         IoOpCode::Fsync,
                         {},
                         2,
                         3000,
                         0};
    rollup.add(tick_at(1, 0, 0), &io, 1);
    rollup.add(tick_at(2, 0, 0), &io, 1);
    rollup.finish();
    ASSERT_EQ(rollup.record().n_io_deltas, 1u);
    EXPECT_EQ(rollup.entries()[0].io.count, 4u);
    EXPECT_EQ(rollup.entries()[0].io.time_us, 6000u);
}

// Devices and probe bins are summed; a slot keeps its newest lag, its largest, and the sum of
// its spills.
TEST(Rollup, SumsDevicesProbesAndSlots) {
    RollupBuilder rollup(16, 16);
    for (int i = 0; i < 3; ++i) {
        IntervalRecord t = tick_at(60000000 + i * 1000000, 0, 0);
        t.n_latency_bins = 1, t.n_device_entries = 2, t.n_slots = 1;
        ArenaEntry e[4] = {};
        e[0].bin =
            LatencyBinEntry{EntryKind::LatencyBin, LatencySeries::Probe, 40, 0, 7, {}, 2.0, {}};
        e[1].device_io = DeviceIoEntry{EntryKind::DeviceIo, kRoleData, 7, 100, 10, 1, 800, 80};
        e[2].device_time = DeviceTimeEntry{EntryKind::DeviceTime, 0, 7, 5, 1, 0, 50, 60, 1, 1, 0};
        e[3].slot =
            SlotEntry{EntryKind::Slot,          kSlotLogical, 3, 1, uint64_t(1000 * (i + 1)),
                      uint64_t(1000 * (i + 1)), 100};
        rollup.add(t, e, 4);
    }
    rollup.finish();
    const IntervalRecord &r = rollup.record();
    EXPECT_EQ(r.ticks, 3u);
    EXPECT_EQ(r.n_latency_bins, 1u);
    EXPECT_EQ(r.n_device_entries, 2u);
    EXPECT_EQ(r.n_slots, 1u);
    bool saw_io = false, saw_time = false, saw_slot = false, saw_bin = false;
    for (const ArenaEntry &e : rollup.entries()) {
        if (e.kind == EntryKind::LatencyBin && e.bin.series == LatencySeries::Probe) {
            saw_bin = true;
            EXPECT_EQ(e.bin.weight, 6.0);
            EXPECT_EQ(e.bin.device, 7);
        } else if (e.kind == EntryKind::DeviceIo) {
            saw_io = true;
            EXPECT_EQ(e.device_io.reads, 300u);
            EXPECT_EQ(e.device_io.read_sectors, 2400u);
        } else if (e.kind == EntryKind::DeviceTime) {
            saw_time = true;
            EXPECT_EQ(e.device_time.busy_ms, 150u);
            EXPECT_EQ(e.device_time.ticks, 3u);
            EXPECT_EQ(e.device_time.ticks_at_limit, 3);
        } else if (e.kind == EntryKind::Slot) {
            saw_slot = true;
            EXPECT_EQ(e.slot.lag_bytes, 3000u);
            EXPECT_EQ(e.slot.lag_max_bytes, 3000u);
            EXPECT_EQ(e.slot.spill_bytes, 300u);
            EXPECT_EQ(e.slot.spill_count, 3u);
        }
    }
    EXPECT_TRUE(saw_io && saw_time && saw_slot && saw_bin);
}

// accumulate() is the one place that sums records: every format-2 counter goes through it.
TEST(Accumulate, SumsFormat2CountersAndKeepsTheNewestWalPosition) {
    IntervalRecord a{}, b{};
    b.xacts = 10, b.tuples_inserted = 3, b.checkpoint_sync_time_ms = 7, b.fg_sync_rep = 2;
    b.autovacuum_samples_delay = 4, b.elapsed_us = 1000, b.seq_end_us = 50, b.wal_position = 99;
    b.flags = kFlagInCheckpoint | kFlagBaseline;
    accumulate(a, b);
    accumulate(a, b);
    EXPECT_EQ(a.xacts, 20u);
    EXPECT_EQ(a.tuples_inserted, 6u);
    EXPECT_EQ(a.checkpoint_sync_time_ms, 14u);
    EXPECT_EQ(a.fg_sync_rep, 4u);
    EXPECT_EQ(a.autovacuum_samples_delay, 8u);
    EXPECT_EQ(a.elapsed_us, 2000u);
    EXPECT_EQ(a.seq_end_us, 50);
    EXPECT_EQ(a.wal_position, 99u);
    EXPECT_EQ(a.flags, uint32_t{kFlagInCheckpoint});  // baseline describes one tick only
}

}  // namespace
}  // namespace pgsw
