#include <gtest/gtest.h>

#include "core/rollup.hpp"
#include "core/sampler_clock.hpp"
#include "core/window.hpp"

namespace pgsw {
namespace {

constexpr int64_t kSecond = 1000000;
constexpr int64_t kWall0 = int64_t{1700000000} * kSecond;  // some wall time
constexpr int64_t kMono0 = 5 * kSecond;

TEST(SamplerClock, SteadyTicksAreContiguous) {
    SamplerClock clock;
    clock.start(kWall0, kMono0, 0, 0);
    const TickTimes base = clock.tick(kWall0, kMono0);
    EXPECT_EQ(base.elapsed_us, 0u);
    EXPECT_EQ(base.start_us, base.end_us);
    EXPECT_EQ(base.seq_end_us, kWall0);
    const TickTimes t = clock.tick(kWall0 + kSecond + 30, kMono0 + kSecond);
    EXPECT_EQ(t.elapsed_us, uint64_t(kSecond));
    EXPECT_EQ(t.start_us, base.end_us);  // 30 µs of drift keeps ticks contiguous
    EXPECT_EQ(t.end_us, kWall0 + kSecond + 30);
    EXPECT_EQ(t.seq_end_us, kWall0 + kSecond);
    EXPECT_EQ(t.step_us, 0);
    EXPECT_EQ(clock.steps(), 0u);
}

TEST(SamplerClock, BackwardStepNeverGoesBackNorOpensAFinishedMinute) {
    SamplerClock clock;
    clock.start(kWall0, kMono0, 0, 0);
    clock.tick(kWall0, kMono0);
    const TickTimes before = clock.tick(kWall0 + kSecond, kMono0 + kSecond);
    // NTP steps the wall clock back one hour between two ticks.
    const TickTimes after = clock.tick(kWall0 + 2 * kSecond - 3600 * kSecond, kMono0 + 2 * kSecond);
    EXPECT_EQ(after.elapsed_us, uint64_t(kSecond));
    EXPECT_EQ(after.start_us, before.end_us);
    EXPECT_GT(after.end_us, after.start_us);  // no negative interval
    EXPECT_EQ(after.end_us, before.end_us + kSecond / 2);
    EXPECT_LT(after.step_us, -3000 * kSecond);
    EXPECT_EQ(clock.steps(), 1u);
    EXPECT_GE(rollup_bucket_of(after.end_us), rollup_bucket_of(before.end_us));
    EXPECT_EQ(after.seq_end_us, before.seq_end_us + kSecond);
}

TEST(SamplerClock, BackwardStepSlewsUntilTheWallClockMeetsIt) {
    SamplerClock clock;
    clock.start(kWall0, kMono0, 0, 0);
    clock.tick(kWall0, kMono0);
    // Back by 3 s at mono +1 s: from then on wall = W + mono - 3 s.
    auto wall = [](int64_t s) { return kWall0 + s * kSecond - 3 * kSecond; };
    int64_t previous_end = kWall0;
    uint64_t steps_seen = 0;
    for (int64_t s = 1; s <= 8; ++s) {
        const TickTimes t = clock.tick(wall(s), kMono0 + s * kSecond);
        EXPECT_GE(t.start_us, previous_end);
        EXPECT_GT(t.end_us, t.start_us);
        EXPECT_EQ(t.elapsed_us, uint64_t(kSecond));
        steps_seen += t.step_us != 0;
        previous_end = t.end_us;
    }
    EXPECT_EQ(steps_seen, 1u) << "one step, not one per tick while catching up";
    // Half speed from W + 0.5 s: met after ~7 s; the ticks follow the wall clock again.
    EXPECT_EQ(previous_end, wall(8));
    const TickTimes t = clock.tick(wall(9), kMono0 + 9 * kSecond);
    EXPECT_EQ(t.end_us, wall(9));
    EXPECT_EQ(t.start_us, wall(8));
    EXPECT_EQ(clock.steps(), 1u);
}

TEST(SamplerClock, ForwardStepWhileSlewingEndsTheSlew) {
    SamplerClock clock;
    clock.start(kWall0, kMono0, 0, 0);
    clock.tick(kWall0, kMono0);
    clock.tick(kWall0 + kSecond - 3600 * kSecond, kMono0 + kSecond);  // back 1 h: slewing
    const TickTimes t = clock.tick(kWall0 + 2 * kSecond + 3600 * kSecond, kMono0 + 2 * kSecond);
    EXPECT_GT(t.step_us, 3599 * kSecond);
    EXPECT_EQ(t.end_us, kWall0 + 3602 * kSecond);
    EXPECT_EQ(t.end_us - t.start_us, kSecond);
    EXPECT_EQ(clock.steps(), 2u);
    const TickTimes next = clock.tick(kWall0 + 3603 * kSecond, kMono0 + 3 * kSecond);
    EXPECT_EQ(next.step_us, 0);
    EXPECT_EQ(next.end_us, kWall0 + 3603 * kSecond);
}

TEST(SamplerClock, ForwardStepLeavesAGapNotALongInterval) {
    SamplerClock clock;
    clock.start(kWall0, kMono0, 0, 0);
    clock.tick(kWall0, kMono0);
    const TickTimes t = clock.tick(kWall0 + kSecond + 600 * kSecond, kMono0 + kSecond);
    EXPECT_EQ(t.elapsed_us, uint64_t(kSecond));
    EXPECT_EQ(t.end_us, kWall0 + 601 * kSecond);
    EXPECT_EQ(t.end_us - t.start_us, kSecond);  // rates over 1 s, not 601 s
    EXPECT_GT(t.step_us, 599 * kSecond);
    EXPECT_EQ(t.seq_end_us, kWall0 + kSecond);
}

TEST(SamplerClock, RestartContinuesAfterRestoredHistory) {
    // Restored history ends 30 s "after" the wall clock (within the loader's slack): the
    // baseline and the next ticks come after it, and the timeline continues from it.
    SamplerClock clock;
    const int64_t restored_end = kWall0 + 30 * kSecond;
    clock.start(kWall0, kMono0, restored_end, restored_end);
    const TickTimes base = clock.tick(kWall0, kMono0);
    EXPECT_EQ(base.end_us, restored_end);
    EXPECT_EQ(base.seq_end_us, restored_end);
    const TickTimes t = clock.tick(kWall0 + kSecond, kMono0 + kSecond);
    EXPECT_GE(t.start_us, restored_end);
    EXPECT_GT(t.end_us, t.start_us);
    EXPECT_EQ(t.seq_end_us, restored_end + kSecond);
    // A restart after a crash with the clock sane: the timeline jumps with the wall clock.
    SamplerClock later;
    later.start(kWall0 + 3600 * kSecond, kMono0, restored_end, restored_end);
    EXPECT_EQ(later.tick(kWall0 + 3600 * kSecond, kMono0).seq_end_us, kWall0 + 3600 * kSecond);
}

TEST(SamplerClock, MonotonicGoingBackIsClamped) {
    SamplerClock clock;
    clock.start(kWall0, kMono0, 0, 0);
    clock.tick(kWall0, kMono0);
    const TickTimes t = clock.tick(kWall0, kMono0 - kSecond);
    EXPECT_EQ(t.elapsed_us, 0u);
    EXPECT_EQ(t.end_us, t.start_us);
}

// Rates divide by the monotonic time a record measured, not its wall-clock span: a tick
// stretched by a clock step (or a format-1 record without elapsed_us) still reads right.
TEST(WindowTime, RatesUseElapsedTimeAndTruncationIsCounted) {
    WindowRecords w;
    auto add = [&](int64_t start, int64_t end, uint64_t elapsed, uint64_t reads, uint32_t flags) {
        RecordCopy c{};
        c.record.start_us = start;
        c.record.end_us = end;
        c.record.elapsed_us = elapsed;
        c.record.ticks = 1;
        c.record.reads = reads;
        c.record.flags = flags;
        w.ticks.push_back(c);
    };
    add(kWall0, kWall0, 0, 0, kFlagBaseline);                        // measures 0
    add(kWall0, kWall0 + 601 * kSecond, uint64_t(kSecond), 100, 0);  // forward step
    add(kWall0 + 601 * kSecond, kWall0 + 602 * kSecond, 0, 100, kFlagEntriesTruncated);  // old
    const WindowSummary s = summarize(w, WaitNameTable{});
    EXPECT_DOUBLE_EQ(s.covered_seconds, 2.0);
    EXPECT_DOUBLE_EQ(s.reads_per_s, 100.0);
    EXPECT_EQ(s.records, 3u);
    EXPECT_EQ(s.records_truncated, 1u);
    // A record whose wall span is negative (written before the clock policy) counts nothing.
    WindowRecords bad;
    RecordCopy c{};
    c.record.start_us = kWall0 + kSecond;
    c.record.end_us = kWall0;
    c.record.ticks = 1;
    bad.ticks.push_back(c);
    EXPECT_DOUBLE_EQ(covered_seconds(bad), 0.0);
}

}  // namespace
}  // namespace pgsw
