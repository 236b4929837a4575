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

}  // namespace
}  // namespace pgsw
