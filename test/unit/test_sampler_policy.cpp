// The sampler's roll-up policy (core/sampler_policy.hpp) driven by synthetic ticks: fold into
// minutes, partial once per second, replay after a restart, reset, and time going back.
#include <vector>

#include <gtest/gtest.h>

#include "core/sampler_policy.hpp"

namespace pgsw {
namespace {

constexpr int64_t kSecond = 1000000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kT0 = int64_t{13333333} * kMinute;  // a whole minute

struct Rings {
    explicit Rings(uint64_t tick_records = 512)
        : tick_memory(Ring::bytes_needed(tick_records, 4096) / 8 + 8),
          rollup_memory(Ring::bytes_needed(64, 4096) / 8 + 8),
          partial_memory(Ring::bytes_needed(4, 1024) / 8 + 8),
          ticks(Ring::create(tick_memory.data(), tick_records, 4096)),
          rollups(Ring::create(rollup_memory.data(), 64, 4096)),
          partials(Ring::create(partial_memory.data(), 4, 1024)) {}
    std::vector<uint64_t> tick_memory, rollup_memory, partial_memory;
    Ring ticks, rollups, partials;
};

struct Worker {
    explicit Worker(Rings &r)
        : rings(r), rollup(64, 64), policy(r.ticks, r.rollups, r.partials, rollup, 8) {}
    // One tick ending at `end_us`, `interval` long.
    void tick(int64_t end_us, int64_t reset_us = 0, int64_t interval = kSecond) {
        IntervalRecord t{};
        t.start_us = end_us - interval;
        t.end_us = end_us;
        t.ticks = 1;
        t.reads = 1;
        t.elapsed_us = uint64_t(interval);
        rings.ticks.append(t, nullptr, 0);
        policy.after_tick(end_us, 0, reset_us);
    }
    Rings &rings;
    RollupBuilder rollup;
    RollupPolicy policy;
};

std::vector<IntervalRecord> rollups_of(const Ring &ring) {
    std::vector<IntervalRecord> out;
    for (const RecordCopy &c : ring.read_since(0, false))
        out.push_back(c.record);
    return out;
}

TEST(RollupPolicy, FoldsMinutesAndPublishesAPartialEachSecond) {
    Rings rings;
    Worker w(rings);
    for (int64_t s = 1; s <= 150; ++s)
        w.tick(kT0 + s * kSecond);
    const auto minutes = rollups_of(rings.rollups);
    ASSERT_EQ(minutes.size(), 2u);
    EXPECT_EQ(minutes[0].ticks, 59u);  // ticks ending at 1..59 s
    EXPECT_EQ(minutes[1].ticks, 60u);  // 60..119 s
    EXPECT_EQ(w.policy.partials_published(), 150u);
    RecordCopy partial;
    ASSERT_EQ(rings.partials.read(rings.partials.end() - 1, partial), ReadStatus::Ok);
    EXPECT_EQ(partial.record.ticks, 31u);  // 120..150 s so far
}

TEST(RollupPolicy, ShortTicksAreFoldedInBatchesAtMostOncePerSecond) {
    Rings rings;
    Worker w(rings);
    for (int64_t k = 1; k <= 500; ++k)  // 10 ms ticks: 5 s
        w.tick(kT0 + k * 10000, 0, 10000);
    EXPECT_LE(w.policy.partials_published(), 6u);
    RecordCopy partial;
    ASSERT_EQ(rings.partials.read(rings.partials.end() - 1, partial), ReadStatus::Ok);
    EXPECT_EQ(partial.record.ticks, 500u);  // the tick at 5.00 s opened the 5th second
}

TEST(RollupPolicy, ReplayAfterARestartCountsEveryTickOnce) {
    Rings rings;
    {
        Worker first(rings);
        for (int64_t s = 1; s <= 90; ++s)
            first.tick(kT0 + s * kSecond);
    }  // the worker dies with minute 1 (60..90 s) summed in its memory only
    Worker second(rings);
    second.policy.replay_unrolled(0);
    for (int64_t s = 91; s <= 130; ++s)
        second.tick(kT0 + s * kSecond);
    const auto minutes = rollups_of(rings.rollups);
    ASSERT_EQ(minutes.size(), 2u);
    EXPECT_EQ(minutes[0].ticks, 59u);
    EXPECT_EQ(minutes[1].ticks, 60u) << "the replayed 31 ticks plus the new 29, none twice";
}

TEST(RollupPolicy, ResetDropsTheMinuteSummedSoFarAndHidesPartials) {
    Rings rings;
    Worker w(rings);
    for (int64_t s = 61; s <= 90; ++s)
        w.tick(kT0 + s * kSecond);
    const int64_t reset_us = kT0 + 90 * kSecond + 1;
    rings.ticks.hide_all();
    rings.rollups.hide_all();
    for (int64_t s = 91; s <= 125; ++s)
        w.tick(kT0 + s * kSecond, reset_us);
    const auto minutes = rollups_of(rings.rollups);
    ASSERT_EQ(minutes.size(), 1u);
    EXPECT_EQ(minutes[0].ticks, 29u) << "only the ticks after the reset (91..119 s)";
    EXPECT_GE(minutes[0].start_us, reset_us - kSecond);
}

TEST(RollupPolicy, AnEarlierMinuteNeverGetsASecondRollup) {
    Rings rings;
    Worker w(rings);
    for (int64_t s = 1; s <= 130; ++s)
        w.tick(kT0 + s * kSecond);
    ASSERT_EQ(w.policy.rollups_published(), 2u);
    // Ticks stamped in minute 0 again (restored history after the clock went back).
    for (int64_t s = 10; s <= 20; ++s)
        w.tick(kT0 + s * kSecond);
    EXPECT_EQ(w.policy.rollups_published(), 2u);
    for (int64_t s = 180; s <= 181; ++s)
        w.tick(kT0 + s * kSecond);
    const auto minutes = rollups_of(rings.rollups);
    ASSERT_EQ(minutes.size(), 3u);
    EXPECT_EQ(minutes[2].ticks, 11u + 11u) << "the late ticks are summed into the open minute";
    EXPECT_LT(rollup_bucket_of(minutes[1].end_us), rollup_bucket_of(minutes[2].end_us));
}

}  // namespace
}  // namespace pgsw
