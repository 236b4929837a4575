#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "core/diskstats.hpp"

namespace pgsw {
namespace {

// 6.x layout (17 numbers), 4.18 layout (15), 4.x (11), old partition (4).
const char *kSample =
    "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 259       0 nvme0n1 1200 5 96000 340 800 7 64000 910 2 1500 1250 0 0 0 0 60 45\n"
    " 259       1 nvme0n1p1 100 0 800 30 50 0 400 20 0 40 50 3 0 24 1\n"
    "   8       0 sda 10 1 80 7 20 2 160 9 1 12 16\n"
    "   8       1 sda1 10 80 20 160\n";

TEST(Diskstats, ParsesEachKernelLayoutOfTheWantedDevicesOnly) {
    const DiskId wanted[] = {{259, 0}, {259, 1}, {8, 0}, {8, 1}, {9, 9}};
    DiskReading out[5];
    size_t malformed = 99;
    EXPECT_EQ(parse_diskstats(kSample, wanted, 5, out, &malformed), 4u);
    EXPECT_EQ(malformed, 0u);
    EXPECT_STREQ(out[0].name, "nvme0n1");
    EXPECT_EQ(out[0].counters.reads, 1200u);
    EXPECT_EQ(out[0].counters.read_sectors, 96000u);
    EXPECT_EQ(out[0].counters.read_ms, 340u);
    EXPECT_EQ(out[0].counters.writes, 800u);
    EXPECT_EQ(out[0].counters.write_sectors, 64000u);
    EXPECT_EQ(out[0].counters.write_ms, 910u);
    EXPECT_EQ(out[0].counters.in_flight, 2u);
    EXPECT_EQ(out[0].counters.io_ms, 1500u);
    EXPECT_EQ(out[0].counters.queue_ms, 1250u);
    EXPECT_TRUE(out[0].counters.has_flushes);
    EXPECT_EQ(out[0].counters.flushes, 60u);
    EXPECT_EQ(out[0].counters.flush_ms, 45u);
    EXPECT_TRUE(out[1].found);
    EXPECT_FALSE(out[1].counters.has_flushes);  // 15 fields: discards, no flushes
    EXPECT_EQ(out[1].counters.queue_ms, 50u);
    EXPECT_TRUE(out[2].counters.has_times);
    EXPECT_FALSE(out[2].counters.has_flushes);
    EXPECT_EQ(out[2].counters.write_ms, 9u);
    EXPECT_FALSE(out[3].counters.has_times);  // old partition line
    EXPECT_EQ(out[3].counters.writes, 20u);
    EXPECT_EQ(out[3].counters.write_sectors, 160u);
    EXPECT_FALSE(out[4].found);
}

TEST(Diskstats, MalformedLinesAreSkippedAndCounted) {
    const DiskId wanted[] = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 6}, {1, 7}};
    const std::string text =
        "1 1 a 1 2 3\n"                                         // too few fields
        "1 2 b 1 2 3 4 5 6 7 8 9 10 x\n"                        // not a number
        "1 3 c 1 2 3 4 5 6 7 8 9 10 99999999999999999999999\n"  // overflows 64 bits
        "1 4 d 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"        // 16 fields: no layout
        "x y z\n"
        "1 5 \n"  // no name
        "1 6 " +
        std::string(40, 'n') +
        " 1 2 3 4\n"  // name too long
        "\n   \n"
        "1 7 ok 1 2 3 4 5 6 7 8 9 10 11";  // no final newline
    DiskReading out[7];
    size_t malformed = 0;
    EXPECT_EQ(parse_diskstats(text, wanted, 7, out, &malformed), 1u);
    EXPECT_EQ(malformed, 7u);
    for (int i = 0; i < 6; ++i)
        EXPECT_FALSE(out[i].found) << i;
    EXPECT_TRUE(out[6].found);
    EXPECT_EQ(out[6].counters.queue_ms, 11u);
}

TEST(Diskstats, ARepeatedLineKeepsTheFirstAndEmptyInputFindsNothing) {
    const DiskId wanted[] = {{8, 0}};
    DiskReading out[1];
    EXPECT_EQ(parse_diskstats("8 0 sda 5 0 0 0 0 0 0 0 0 0 0\n8 0 sdb 6 0 0 0 0 0 0 0 0 0 0\n",
                              wanted, 1, out),
              1u);
    EXPECT_STREQ(out[0].name, "sda");
    EXPECT_EQ(out[0].counters.reads, 5u);
    EXPECT_EQ(parse_diskstats("", wanted, 1, out), 0u);
    EXPECT_FALSE(out[0].found);
    EXPECT_EQ(parse_diskstats(std::string_view("8 0 sda\0 1", 10), wanted, 1, out), 0u);
}

TEST(Diskstats, PerDeviceStatFileHasTheSameFieldsWithoutTheName) {
    DiskCounters c;
    EXPECT_TRUE(parse_device_stat(
        "    1200        5    96000      340      800        7    64000      910        2     1500 "
        "    1250        0        0        0        0       60       45\n",
        c));
    EXPECT_EQ(c.reads, 1200u);
    EXPECT_EQ(c.queue_ms, 1250u);
    EXPECT_TRUE(c.has_flushes);
    EXPECT_EQ(c.flush_ms, 45u);
    EXPECT_TRUE(parse_device_stat("1 2 3 4 5 6 7 8 9 10 11", c));
    EXPECT_FALSE(c.has_flushes);
    EXPECT_FALSE(parse_device_stat("1 2 3 4", c));  // no times: not a stat file
    EXPECT_FALSE(parse_device_stat("", c));
    EXPECT_FALSE(parse_device_stat("1 2 3 4 5 6 7 8 9 10 11\n1 2 3 4 5 6 7 8 9 10 11\n", c));
    EXPECT_FALSE(parse_device_stat("1 2 3 4 5 6 7 8 9 10 -11", c));
    EXPECT_EQ(diskstats_lines(kSample), 5u);
    EXPECT_EQ(diskstats_lines("a\nb"), 2u);
    EXPECT_EQ(diskstats_lines(""), 0u);
}

TEST(Diskstats, CounterDeltaHandles32BitWrapsAndRefusesResets) {
    uint64_t d = 0;
    EXPECT_TRUE(counter_delta(10, 25, d));
    EXPECT_EQ(d, 15u);
    EXPECT_TRUE(counter_delta(0xFFFFFFF0u, 0x10u, d));  // wrapped at 32 bits
    EXPECT_EQ(d, 0x20u);
    EXPECT_FALSE(counter_delta(0x70000000u, 0x10u, d));    // more than half the range: a reset
    EXPECT_FALSE(counter_delta(uint64_t{1} << 40, 5, d));  // a 64-bit counter went down
}

DiskReading reading(const char *name, uint64_t reads, uint64_t read_ms, bool flushes = true) {
    DiskReading r;
    r.found = true;
    std::strcpy(r.name, name);
    r.counters.reads = reads, r.counters.read_ms = read_ms, r.counters.read_sectors = reads * 8;
    r.counters.has_times = true, r.counters.has_flushes = flushes;
    return r;
}

TEST(Diskstats, DeltasBaselineWrapResetAndHotRemoval) {
    DiskstatsDelta tracker;
    DiskDelta d;
    EXPECT_EQ(tracker.update(reading("sda", 100, 50), d), DeltaStatus::Baseline);
    EXPECT_EQ(tracker.update(reading("sda", 130, 60), d), DeltaStatus::Ok);
    EXPECT_EQ(d.reads, 30u);
    EXPECT_EQ(d.read_sectors, 240u);
    EXPECT_EQ(d.read_ms, 10u);
    EXPECT_TRUE(d.has_flushes);
    // The ms counter wraps (unsigned int in the kernel): still a delta.
    EXPECT_EQ(tracker.update(reading("sda", 100, 50), d), DeltaStatus::Reset);  // went down
    EXPECT_EQ(d.reads, 0u);
    EXPECT_EQ(tracker.update(reading("sda", 110, 0xFFFFFFFFu), d), DeltaStatus::Ok);
    EXPECT_EQ(tracker.update(reading("sda", 120, 4), d), DeltaStatus::Ok);
    EXPECT_EQ(d.read_ms, 5u);
    // Hot-removed, then another device gets the number: a new baseline, never a delta.
    EXPECT_EQ(tracker.update(DiskReading{}, d), DeltaStatus::Missing);
    EXPECT_EQ(tracker.update(reading("sda", 500, 9), d), DeltaStatus::Baseline);
    EXPECT_EQ(tracker.update(reading("sdb", 600, 10), d), DeltaStatus::Reset);
    EXPECT_EQ(tracker.update(reading("sdb", 601, 10, false), d), DeltaStatus::Reset);  // layout
    EXPECT_EQ(tracker.update(reading("sdb", 602, 11, false), d), DeltaStatus::Ok);
    EXPECT_FALSE(d.has_flushes);
}

}  // namespace
}  // namespace pgsw
