#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "core/devices.hpp"

namespace pgsw {
namespace {

constexpr int64_t kSecond = 1000000;

// Deterministic noise in [-1, 1].
double noise(int i, int salt) {
    return std::sin(double(i) * 12.9898 + double(salt) * 78.233);
}

struct Tick {
    double reads, writes = 0;
    double request_kb = 8;
    double device_await_ms = 0.05;
    double pg_latency_ms;
    double queue_depth = 0;
    uint16_t at_limit = 0;
};

RecordCopy record(int i, const Tick &t, uint16_t device = 7, uint8_t roles = kRoleData,
                  uint8_t flags = 0) {
    RecordCopy c{};
    IntervalRecord &r = c.record;
    r.ticks = 1;
    r.start_us = int64_t(i) * kSecond;
    r.end_us = r.start_us + kSecond;
    r.elapsed_us = kSecond;
    r.reads = uint64_t(std::lround(t.reads));
    r.read_time_us = uint64_t(std::lround(t.reads * t.pg_latency_ms * 1000));
    ArenaEntry io{}, time{};
    io.device_io = {EntryKind::DeviceIo,
                    roles,
                    device,
                    uint32_t(std::lround(t.reads)),
                    uint32_t(std::lround(t.writes)),
                    0,
                    uint64_t(std::lround(t.reads * t.request_kb * 2)),
                    uint64_t(std::lround(t.writes * t.request_kb * 2))};
    time.device_time = {EntryKind::DeviceTime,
                        flags,
                        device,
                        uint32_t(std::lround(t.reads * t.device_await_ms)),
                        0,
                        0,
                        uint32_t(std::lround(std::min(1000.0, t.reads * t.device_await_ms))),
                        uint32_t(std::lround(t.queue_depth * 1000)),
                        1,
                        t.at_limit,
                        0};
    c.entries = {io, time};
    return c;
}

template <typename Fn>
WindowRecords window(int n, Fn &&tick) {
    WindowRecords w;
    for (int i = 0; i < n; ++i)
        w.ticks.push_back(record(i, tick(i)));
    return w;
}

StorageLimitFacts facts(const WindowRecords &w, const DeviceLimits &limits = {}) {
    return storage_limit_facts(
        device_window(w), [&](uint16_t) { return limits; }, [](uint16_t) { return "loop0"; });
}

// A 300-IOPS token bucket, 16 clients: the rate is pinned, the sessions in the queue carry the
// load (latency = in flight / rate), the device itself answers in 0.05 ms.
Tick token_bucket(int i, double clients_spread) {
    const double iops = 300 * (1 + 0.002 * noise(i, 1));
    const double in_flight = 16 * (1 + clients_spread * noise(i, 2));
    return {iops, 0, 8, 0.05, in_flight / iops * 1000};
}

TEST(Devices, TokenBucketIsAnIopsCeiling) {
    const StorageLimitFacts f = facts(window(60, [](int i) { return token_bucket(i, 0.06); }));
    EXPECT_EQ(f.limit, StorageLimit::IopsCeiling);
    EXPECT_EQ(f.device, "loop0");
    EXPECT_NEAR(f.measured, 300, 3);
    EXPECT_NEAR(f.ceiling, 300, 3);
    EXPECT_FALSE(f.ceiling_from_setting);
    EXPECT_GT(f.at_limit_pct, 90);
    EXPECT_NEAR(f.device_await_ms, 0.05, 0.01);
    EXPECT_NEAR(f.pg_read_latency_ms, 53.3, 1.5);
}

// Latency-bound: 4 ms per read whatever the queue; IOPS follows the clients in flight.
Tick latency_bound(int i, double clients_spread, double latency_spread) {
    const double latency = 4.05 * (1 + latency_spread * noise(i, 3));
    const double in_flight = 16 * (1 + clients_spread * noise(i, 4));
    return {in_flight / latency * 1000, 0, 8, 0.05, latency};
}

TEST(Devices, SteadyPerReadLatencyIsLatency) {
    const StorageLimitFacts f =
        facts(window(60, [](int i) { return latency_bound(i, 0.06, 0.005); }));
    EXPECT_EQ(f.limit, StorageLimit::Latency);
    EXPECT_NEAR(f.pg_read_latency_ms, 4.05, 0.1);
}

// The hard case: a steady closed loop where IOPS and latency both look flat (within 3 %).
// Under the bucket, what little varies is the latency; bound by latency, it is the rate.
TEST(Devices, ClosedLoopBothFlatIsToldApartByWhatCarriesTheFluctuation) {
    EXPECT_EQ(facts(window(120, [](int i) { return token_bucket(i, 0.015); })).limit,
              StorageLimit::IopsCeiling);
    EXPECT_EQ(facts(window(120, [](int i) { return latency_bound(i, 0.015, 0.003); })).limit,
              StorageLimit::Latency);
}

TEST(Devices, BytesPinnedWhileRequestSizesVaryIsAThroughputCeiling) {
    const StorageLimitFacts f = facts(window(60, [](int i) {
        const double kb = 64 + 56 * noise(i, 5);  // 8 .. 120 kB requests
        const double mbps = 10 * (1 + 0.002 * noise(i, 6));
        const double iops = mbps * 1e6 / (kb * 1024);
        const double in_flight = 16 * (1 + 0.05 * noise(i, 7));
        return Tick{iops, 0, kb, 0.2, in_flight / iops * 1000};
    }));
    EXPECT_EQ(f.limit, StorageLimit::ThroughputCeiling);
    EXPECT_NEAR(f.ceiling, 10.0, 0.3);
}

TEST(Devices, FixedSizeRequestsPinningBothGoToIopsUnlessLarge) {
    EXPECT_EQ(facts(window(60, [](int i) { return token_bucket(i, 0.05); })).limit,
              StorageLimit::IopsCeiling);
    const StorageLimitFacts large = facts(window(60, [](int i) {
        Tick t = token_bucket(i, 0.05);
        t.request_kb = 128;
        return t;
    }));
    EXPECT_EQ(large.limit, StorageLimit::ThroughputCeiling);
}

TEST(Devices, KnownLimitFromASettingDecidesByTheReadingsAtIt) {
    DeviceLimits limits;
    limits.iops = 3000, limits.from_setting = true;
    const StorageLimitFacts at =
        // 31 records: the first reading only starts the clock, 24 of the next 30 are at the limit
        facts(window(31,
                     [](int i) {
                         Tick t = latency_bound(i, 0.06, 0.005);  // ~3950 IOPS
                         t.at_limit = i % 5 != 0;                 // 80 % of the readings at >= 95 %
                         return t;
                     }),
              limits);
    EXPECT_EQ(at.limit, StorageLimit::IopsCeiling);
    EXPECT_TRUE(at.ceiling_from_setting);
    EXPECT_EQ(at.ceiling, 3000);
    EXPECT_NEAR(at.at_limit_pct, 80, 0.1);
    // A known limit overrides detection: a flat rate far below it is not a ceiling.
    limits.iops = 10000;
    EXPECT_EQ(facts(window(60, [](int i) { return token_bucket(i, 0.06); }), limits).limit,
              StorageLimit::Latency);
}

TEST(Devices, CgroupReadRuleIsAThroughputLimitWhenBytesAreNearest) {
    DeviceLimits limits;
    limits.read_mb_per_s = 2.5;
    const StorageLimitFacts f =
        facts(window(30,
                     [](int i) {
                         Tick t = token_bucket(i, 0.06);  // 300 x 8 kB = 2.46 MB/s
                         t.at_limit = 1;
                         return t;
                     }),
              limits);
    EXPECT_EQ(f.limit, StorageLimit::ThroughputCeiling);
    EXPECT_FALSE(f.ceiling_from_setting);
    EXPECT_DOUBLE_EQ(f.ceiling, 2.5);
}

// Open loop at a fixed offered rate, no queue anywhere: flat, but PostgreSQL's latency is the
// device's own. Not a ceiling.
TEST(Devices, FixedOfferedRateWithoutAQueueIsNotACeiling) {
    EXPECT_EQ(facts(window(60,
                           [](int i) {
                               const double lat = 0.2 * (1 + 0.1 * noise(i, 8));
                               return Tick{300 * (1 + 0.002 * noise(i, 9)), 0, 8, 0.18, lat};
                           }))
                  .limit,
              StorageLimit::Latency);
}

// Documented false positive: the same fixed offered rate while something else (a noisy
// neighbour, a hypervisor) makes each read wait above the device, varying: it looks like a
// token bucket.
TEST(Devices, FalsePositiveFixedOfferedRateWithAQueueAboveTheDevice) {
    EXPECT_EQ(facts(window(60,
                           [](int i) {
                               const double lat = 2 * (1 + 0.2 * noise(i, 10));
                               return Tick{300 * (1 + 0.002 * noise(i, 11)), 0, 8, 0.05, lat};
                           }))
                  .limit,
              StorageLimit::IopsCeiling);
}

TEST(Devices, WindowsMixingIdleAndLoadFindNoCeilingAndTooFewReadingsNone) {
    EXPECT_EQ(facts(window(60,
                           [](int i) {
                               Tick t = token_bucket(i, 0.06);
                               if (i % 3 == 0)
                                   t.reads = 20;
                               return t;
                           }))
                  .limit,
              StorageLimit::Latency);
    EXPECT_EQ(facts(window(5, [](int i) { return token_bucket(i, 0.06); })).limit,
              StorageLimit::Latency);
    EXPECT_EQ(facts(WindowRecords{}).limit, StorageLimit::Unknown);
}

// The load starts and stops inside the window's first and last readings: the plateau between
// them is still a ceiling.
TEST(Devices, PartialReadingsAtTheWindowsEdgesDoNotHideACeiling) {
    const StorageLimitFacts f = facts(window(30, [](int i) {
        Tick t = token_bucket(i, 0.06);
        if (i == 0 || i == 29)
            t.reads *= 0.4;
        return t;
    }));
    EXPECT_EQ(f.limit, StorageLimit::IopsCeiling);
    EXPECT_NEAR(f.ceiling, 300, 3);
}

// A read-only rule with unthrottled, varying writes beside it (hint bits, the background
// writer): reads are pinned, reads + writes are not.
TEST(Devices, ReadRuleWithVaryingWritesIsStillAnIopsCeiling) {
    const StorageLimitFacts f = facts(window(40, [](int i) {
        Tick t = token_bucket(i, 0.06);
        t.writes = 60 + 50 * noise(i, 12);
        return t;
    }));
    EXPECT_EQ(f.limit, StorageLimit::IopsCeiling);
    EXPECT_NEAR(f.ceiling, 300, 3);
}

TEST(Devices, FiguresAreIostatsArithmetic) {
    WindowRecords w;
    for (int i = 0; i < 10; ++i) {
        Tick t{200, 50, 8, 0.5, 2.0, 3.0};
        w.ticks.push_back(record(i, t, 7, kRoleData, kDeviceNoFlushFields));
    }
    const DeviceWindowSet set = device_window(w);
    ASSERT_EQ(set.devices.size(), 1u);
    EXPECT_DOUBLE_EQ(set.devices[0].seconds, 9);  // the first reading starts the clock
    const DeviceFigures f = device_figures(set.devices[0], {});
    EXPECT_DOUBLE_EQ(f.reads_per_s.value, 200);
    EXPECT_DOUBLE_EQ(f.writes_per_s.value, 50);
    EXPECT_NEAR(f.read_mb_per_s.value, 200 * 8 * 1024 / 1e6, 1e-9);
    EXPECT_NEAR(f.read_await_ms.value, 0.5, 1e-9);
    EXPECT_FALSE(f.write_await_ms.valid == false);
    EXPECT_NEAR(f.util_pct.value, 10, 1e-9);  // 100 ms busy per second
    EXPECT_NEAR(f.queue_depth_avg.value, 3, 1e-9);
    EXPECT_FALSE(f.flushes_per_s.valid);  // the kernel has no flush fields
    EXPECT_FALSE(f.flush_await_ms.valid);
    EXPECT_NEAR(f.pg_read_latency_ms.value, 2.0, 1e-9);
    EXPECT_FALSE(f.iops_limit.valid);
}

TEST(Devices, WalDeviceHasNoPostgresReadLatencyAndRanksBelowData) {
    WindowRecords w;
    for (int i = 0; i < 20; ++i) {
        RecordCopy c = record(i, token_bucket(i, 0.06), 7, kRoleData);
        RecordCopy wal = record(i, Tick{100, 400, 8, 0.1, 2.0}, 9, kRoleWal);
        c.entries.insert(c.entries.end(), wal.entries.begin(), wal.entries.end());
        w.ticks.push_back(c);
    }
    const DeviceWindowSet set = device_window(w);
    ASSERT_EQ(set.devices.size(), 2u);
    EXPECT_FALSE(device_figures(set.devices[1], {}).pg_read_latency_ms.valid);
    const StorageLimitFacts f = storage_limit_facts(
        set, [](uint16_t) { return DeviceLimits{}; },
        [](uint16_t d) { return d == 7 ? "loop0" : "loop1"; });
    EXPECT_EQ(f.device, "loop0");
    EXPECT_EQ(f.limit, StorageLimit::IopsCeiling);
}

TEST(Devices, ReadingAtLimit) {
    DeviceLimits l;
    l.read_iops = 300;
    DiskDelta d;
    d.reads = 290;
    EXPECT_TRUE(reading_at_limit(d, 1.0, l));
    d.reads = 250;
    EXPECT_FALSE(reading_at_limit(d, 1.0, l));
    EXPECT_FALSE(reading_at_limit(d, 0, l));
    l = DeviceLimits{};
    l.mb_per_s = 1;
    d.reads = 0, d.write_sectors = 1900;  // 0.97 MB
    EXPECT_TRUE(reading_at_limit(d, 1.0, l));
    EXPECT_DOUBLE_EQ(DeviceLimits{}.iops_shown(), 0);
}

TEST(Devices, HistoryBucketsDataAndWal) {
    WindowRecords w;
    for (int i = 0; i < 4; ++i) {
        RecordCopy c = record(i, Tick{100, 0, 8, 0.1, 1}, 7, kRoleData | kRoleWal);
        w.ticks.push_back(c);
    }
    const auto rows = device_history(w, 2 * kSecond);
    ASSERT_EQ(rows.size(), 3u);  // buckets [0,2), [2,4), [4,6) by end time 1..4 s
    EXPECT_DOUBLE_EQ(rows[1].data_ios, 200);
    EXPECT_DOUBLE_EQ(rows[1].wal_ios, 200);
    EXPECT_DOUBLE_EQ(rows[1].seconds, 2);
    EXPECT_EQ(device_history(w, 0).size(), 4u);
    // Devices read every other tick (io_read_interval): a reading's delta covers both ticks.
    WindowRecords sparse;
    for (int i = 0; i < 4; ++i) {
        RecordCopy c = record(i, Tick{200, 0, 8, 0.1, 1}, 7, kRoleData);
        if (i % 2 == 0)
            c.entries.clear();
        sparse.ticks.push_back(c);
    }
    const auto per_tick = device_history(sparse, 0);
    ASSERT_EQ(per_tick.size(), 4u);
    EXPECT_FALSE(per_tick[0].data_seen);
    // The first reading's delta began before the window: no rate (NULL), it starts the clock.
    EXPECT_EQ(per_tick[1].seconds, 0);
    EXPECT_DOUBLE_EQ(per_tick[3].data_ios / per_tick[3].seconds, 100);
}

// Ticks every 100 ms, devices read every second: the window's first reading carries a delta
// that began up to 0.9 s before the window. Counting it over the window's seconds overstated
// every rate by up to 9 % (013's comparison with iostat -x, 3338 vs 3066 r/s): here it
// gave 10,000 reads / 9.4 s = 1,064 r/s.
TEST(Devices, FirstReadingOfTheWindowOnlyStartsTheClock) {
    WindowRecords w;
    for (int i = 0; i < 94; ++i) {         // 9.4 s, ending at a reading
        const bool reading = i % 10 == 3;  // the window starts 0.7 s after a reading
        RecordCopy c = record(i, Tick{1000, 500, 8, 0.1, 1});
        c.record.start_us = int64_t(i) * kSecond / 10;
        c.record.end_us = c.record.start_us + kSecond / 10;
        if (!reading)
            c.entries.clear();
        w.ticks.push_back(c);
    }
    const DeviceWindowSet set = device_window(w);
    ASSERT_EQ(set.devices.size(), 1u);
    const DeviceWindow &d = set.devices[0];
    EXPECT_DOUBLE_EQ(d.seconds, 9.0);  // from the first reading (tick 3) to the last (tick 93)
    const DeviceFigures f = device_figures(d, {});
    EXPECT_DOUBLE_EQ(f.reads_per_s.value, 1000);
    EXPECT_DOUBLE_EQ(f.writes_per_s.value, 500);
    // One reading in the window: no rate, not one divided by the window.
    WindowRecords single;
    single.ticks.push_back(w.ticks[3]);
    EXPECT_FALSE(device_figures(device_window(single).devices.at(0), {}).reads_per_s.valid);
}

}  // namespace
}  // namespace pgsw
