#include <gtest/gtest.h>

#include "core/cpu_times.hpp"

namespace pgsw {
namespace {

TEST(CpuTimes, ParsesTheAggregateLineOfAModernKernel) {
    const auto t = parse_proc_stat_cpu(
        "cpu  100 5 50 1000 20 3 2 7 40 0\ncpu0 50 2 25 500 10 1 1 3 20 0\nintr 1 2 3\n");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->busy_ticks, 100u + 5 + 50 + 3 + 2 + 7);   // guest is inside user already
    EXPECT_EQ(t->total_ticks, t->busy_ticks + 1000 + 20);  // iowait is idle capacity
}

TEST(CpuTimes, OldKernelsWithFourFieldsStillParse) {
    const auto t = parse_proc_stat_cpu("cpu  10 0 5 85\n");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->busy_ticks, 15u);
    EXPECT_EQ(t->total_ticks, 100u);
}

TEST(CpuTimes, RefusesWhatIsNotTheAggregateLine) {
    EXPECT_FALSE(parse_proc_stat_cpu(""));
    EXPECT_FALSE(parse_proc_stat_cpu("cpu0 1 2 3 4\n"));  // a per-CPU line is not the sum
    EXPECT_FALSE(parse_proc_stat_cpu("cpu  1 2 3\n"));    // no idle field
    EXPECT_FALSE(parse_proc_stat_cpu("cpu  1 x 3 4\n"));
    EXPECT_FALSE(parse_proc_stat_cpu("cpu  99999999999999999999999 1 1 1\n"));  // overflow
}

TEST(CpuDeltas, FirstReadingIsABaselineThenMicrosecondsOfCpuTime) {
    CpuDeltas deltas(100);  // USER_HZ 100: a tick is 10 ms
    EXPECT_FALSE(deltas.observe({10, 100}).valid);
    const auto d = deltas.observe({60, 300});  // 2 cores for 1 s: 200 ticks, 50 busy
    ASSERT_TRUE(d.valid);
    EXPECT_EQ(d.busy_us, 500000u);
    EXPECT_EQ(d.total_us, 2000000u);
}

TEST(CpuDeltas, CountersGoingBackReBaseline) {
    CpuDeltas deltas(100);
    deltas.observe({100, 1000});
    EXPECT_FALSE(deltas.observe({50, 1100}).valid);
    EXPECT_TRUE(deltas.observe({60, 1200}).valid);
}

TEST(ProcStatReader, ReadsThisMachinesCountersAndTheyMove) {
    ProcStatReader reader;
    const auto first = reader.read();
    ASSERT_TRUE(first.has_value());
    EXPECT_GT(first->total_ticks, first->busy_ticks);
    ProcStatReader missing("/nonexistent/stat");
    EXPECT_FALSE(missing.read().has_value());
}

}  // namespace
}  // namespace pgsw
