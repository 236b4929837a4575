#include <cmath>
#include <string>
#include <vector>

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

// A closed loop bound by latency where the reads in flight hardly vary: the rate moves only
// against the latency (IOPS = in flight / latency), C = IOPS x latency stays put. Both
// fluctuations are a few parts per thousand, and a least-squares slope of log IOPS on log C,
// over a dozen readings, is then mostly noise: it read <= 0.35 in a CI run (013, +4 ms per
// read, 3757 IOPS "detected" as a ceiling). The spread ratio is >= 1 whatever the noise.
TEST(Devices, LatencyBoundWithFewReadsInFlightChangesIsNotACeiling) {
    for (int salt = 0; salt < 40; ++salt) {
        const WindowRecords w = window(14, [&](int i) {
            const double latency = 4.14 * (1 + 0.004 * noise(i, 100 + salt));
            const double in_flight = 15.5 * (1 + 0.0005 * noise(i, 200 + salt));
            return Tick{in_flight / latency * 1000, 0, 8, 0.05, latency};
        });
        EXPECT_EQ(facts(w).limit, StorageLimit::Latency) << "salt " << salt;
    }
}

// Per-second readings measured in 013 on this project's test machine (storage_wait_history at
// 1 s, data device reads and PostgreSQL's read latency): three runs of each.
struct Measured {
    std::vector<double> iops, latency_ms;
};
WindowRecords measured_window(const Measured &m) {
    return window(int(m.iops.size()), [&](int i) {
        return Tick{m.iops[size_t(i)], 0, 8, 0.05, m.latency_ms[size_t(i)]};
    });
}

TEST(Devices, MeasuredInjectedLatencyIsLatency) {
    const Measured runs[] = {
        {{3756, 3767, 3748, 3731, 3766, 3761, 3772, 3766, 3757, 3739, 3752, 3776, 3759, 3771},
         {4.13, 4.14, 4.13, 4.15, 4.14, 4.13, 4.13, 4.13, 4.12, 4.14, 4.14, 4.13, 4.13, 4.12}},
        {{3785, 3789, 3779, 3770, 3764, 3760, 3707, 3772, 3751, 3743, 3735, 3725, 3707, 3701},
         {4.13, 4.11, 4.13, 4.12, 4.14, 4.12, 4.16, 4.13, 4.13, 4.14, 4.14, 4.15, 4.16, 4.16}},
        {{3745, 3778, 3724, 3728, 3732, 3736, 3775, 3715, 3721, 3733, 3771, 3769, 3731, 3734},
         {4.15, 4.12, 4.14, 4.15, 4.16, 4.16, 4.12, 4.14, 4.16, 4.14, 4.13, 4.12, 4.14, 4.15}},
    };
    for (const Measured &m : runs)
        EXPECT_EQ(facts(measured_window(m)).limit, StorageLimit::Latency);
}

TEST(Devices, MeasuredCgroupIopsRuleIsACeiling) {
    const Measured runs[] = {
        {{300, 300, 302, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300},
         {51.74, 53.02, 52.35, 53.04, 53.85, 52.19, 52.79, 52.93, 52.75, 52.74, 54.45, 50.76, 52.79,
          53.78, 54.28, 56.35, 56.07}},
        {{300, 300, 302, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300, 300},
         {53.23, 52.50, 52.88, 53.19, 52.91, 52.61, 52.83, 54.62, 51.89, 52.92, 53.75, 53.24, 51.87,
          53.08, 54.45, 56.08, 57.65}},
        {{300, 302, 300, 300, 300, 300, 300, 300, 300, 300, 298, 300, 300, 300, 300, 299, 300},
         {52.85, 52.11, 53.10, 53.68, 52.09, 54.06, 51.81, 52.55, 52.49, 53.30, 52.69, 52.47, 51.94,
          53.19, 54.21, 58.01, 55.08}},
        // The same rule before the sampler knew it: one reading caught a burst (392).
        {{300, 300, 300, 300, 302, 300, 298, 302, 305, 301, 301,
          302, 300, 300, 302, 300, 300, 300, 300, 392, 300, 300},
         {52.28, 53.84, 52.75, 52.90, 52.27, 52.32, 54.20, 52.17, 53.41, 52.81, 52.97,
          53.26, 50.88, 53.49, 53.88, 52.83, 52.46, 52.25, 53.08, 52.73, 56.20, 57.48}},
    };
    for (const Measured &m : runs) {
        const StorageLimitFacts f = facts(measured_window(m));
        EXPECT_EQ(f.limit, StorageLimit::IopsCeiling);
        EXPECT_NEAR(f.ceiling, 300, 3);
    }
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
