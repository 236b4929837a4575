#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/latency_stats.hpp"

namespace pgsw {
namespace {

struct Point {
    double latency_us;
    double weight;
};

// Brute force: sort ascending, walk the cumulative weight, return the first latency at which it
// reaches p * W. W is summed in insertion order, as Boost's sum_of_weights does, so that integer
// and real weights round the same way on both sides.
double reference_quantile(std::vector<Point> points, double p) {
    double total = 0;
    for (const Point &pt : points)
        total += pt.weight;
    std::sort(points.begin(), points.end(),
              [](const Point &a, const Point &b) { return a.latency_us < b.latency_us; });
    double cumulative = 0;
    for (const Point &pt : points) {
        cumulative += pt.weight;
        if (cumulative >= p * total)
            return pt.latency_us;
    }
    return points.back().latency_us;
}

std::vector<Point> random_points(uint32_t seed, size_t n, bool integer_weights, bool ties) {
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> latency(6.0, 1.2);  // median ~400 us
    std::uniform_int_distribution<int> count(1, 2000);
    std::uniform_real_distribution<double> real_weight(0.01, 50.0);
    std::vector<Point> points(n);
    for (Point &pt : points) {
        pt.latency_us = latency(rng);
        if (ties)
            pt.latency_us = std::round(pt.latency_us / 100.0) * 100.0 + 50.0;
        pt.weight = integer_weights ? count(rng) : real_weight(rng);
    }
    return points;
}

LatencySummary summarize_points(const std::vector<Point> &points) {
    LatencyAccumulator acc(points.size());
    for (const Point &pt : points)
        acc.add_weighted_point(pt.latency_us, pt.weight);
    return acc.summary();
}

void expect_matches_reference(const std::vector<Point> &points) {
    const LatencySummary s = summarize_points(points);
    ASSERT_TRUE(s.valid);
    EXPECT_EQ(s.p50_us, reference_quantile(points, 0.50));
    EXPECT_EQ(s.p95_us, reference_quantile(points, 0.95));
    EXPECT_EQ(s.p99_us, reference_quantile(points, 0.99));
    double max_us = 0;
    for (const Point &pt : points)
        max_us = std::max(max_us, pt.latency_us);
    EXPECT_EQ(s.max_us, max_us);
    EXPECT_EQ(s.intervals, points.size());
}

TEST(LatencyStats, QuantilesMatchBruteForceOnRandomData) {
    const size_t sizes[] = {1, 2, 3, 7, 10, 100, 999, 3600, 5000};
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        for (size_t n : sizes) {
            SCOPED_TRACE(testing::Message() << "seed " << seed << " n " << n);
            expect_matches_reference(random_points(seed, n, true, false));
            expect_matches_reference(random_points(seed + 100, n, false, false));
            expect_matches_reference(random_points(seed + 200, n, true, true));
        }
    }
}

TEST(LatencyStats, IntervalsAreWeightedByCount) {
    // 90 I/Os at 1 ms in one tick and 10 at 100 ms in another: p50 stays at 1 ms although half
    // the ticks are slow; p95 lands on the slow tick.
    LatencyAccumulator acc;
    acc.add_interval(90, 90 * 1000.0);
    acc.add_interval(10, 10 * 100000.0);
    const LatencySummary s = acc.summary();
    ASSERT_TRUE(s.valid);
    EXPECT_DOUBLE_EQ(s.p50_us, 1000.0);
    EXPECT_DOUBLE_EQ(s.p95_us, 100000.0);
    EXPECT_DOUBLE_EQ(s.avg_us, (90 * 1000.0 + 10 * 100000.0) / 100.0);
    EXPECT_DOUBLE_EQ(s.total_count, 100.0);
    EXPECT_EQ(s.intervals, 2u);
}

TEST(LatencyStats, ExactBoundaryTakesTheLowerValue) {
    // Two equal weights: the cumulative weight reaches exactly W/2 at the first point.
    LatencyAccumulator acc;
    acc.add_interval(5, 5 * 200.0);
    acc.add_interval(5, 5 * 100.0);
    EXPECT_DOUBLE_EQ(acc.summary().p50_us, 100.0);
}

TEST(LatencyStats, EmptyIsNotValid) {
    const LatencySummary s = LatencyAccumulator().summary();
    EXPECT_FALSE(s.valid);
    EXPECT_FALSE(s.timing_missing);
    EXPECT_EQ(s.intervals, 0u);
    EXPECT_EQ(s.total_count, 0.0);
}

TEST(LatencyStats, OneTick) {
    LatencyAccumulator acc(1);
    acc.add_interval(4, 1000);
    const LatencySummary s = acc.summary();
    ASSERT_TRUE(s.valid);
    EXPECT_DOUBLE_EQ(s.avg_us, 250.0);
    EXPECT_DOUBLE_EQ(s.p50_us, 250.0);
    EXPECT_DOUBLE_EQ(s.p99_us, 250.0);
    EXPECT_DOUBLE_EQ(s.max_us, 250.0);
}

TEST(LatencyStats, ZeroAndInvalidCountsAreIgnored) {
    LatencyAccumulator acc;
    acc.add_interval(0, 0);
    acc.add_interval(0, 500);  // time without I/O: a counter glitch, not a latency
    acc.add_interval(-3, 100);
    acc.add_interval(3, -100);
    acc.add_interval(std::numeric_limits<double>::quiet_NaN(), 100);
    acc.add_interval(2, std::numeric_limits<double>::infinity());
    acc.add_weighted_point(100, 0);
    acc.add_weighted_point(-1, 5);
    const LatencySummary s = acc.summary();
    EXPECT_FALSE(s.valid);
    EXPECT_FALSE(s.timing_missing);
    EXPECT_EQ(s.intervals, 0u);
}

TEST(LatencyStats, HugeOutlierMovesOnlyTheMax) {
    LatencyAccumulator acc;
    for (int i = 0; i < 999; ++i)
        acc.add_interval(100, 100 * (200.0 + i % 7));
    acc.add_interval(100, 100 * 5e6);  // one tick of 5-second reads
    const LatencySummary s = acc.summary();
    ASSERT_TRUE(s.valid);
    EXPECT_GE(s.p50_us, 200.0);
    EXPECT_LE(s.p50_us, 206.0);
    EXPECT_LE(s.p99_us, 206.0);
    EXPECT_DOUBLE_EQ(s.max_us, 5e6);
}

TEST(LatencyStats, TimingOffIsReportedNotZero) {
    LatencyAccumulator acc;
    for (int i = 0; i < 60; ++i)
        acc.add_interval(50, 0);
    const LatencySummary s = acc.summary();
    EXPECT_FALSE(s.valid);
    EXPECT_TRUE(s.timing_missing);
    EXPECT_DOUBLE_EQ(s.untimed_count, 3000.0);
    EXPECT_EQ(s.total_count, 0.0);
}

TEST(LatencyStats, UntimedTicksStayOutOfTimedFigures) {
    // track_io_timing switched on mid-window: only the timed ticks give latencies.
    LatencyAccumulator acc;
    acc.add_interval(1000, 0);
    acc.add_interval(10, 5000);
    const LatencySummary s = acc.summary();
    ASSERT_TRUE(s.valid);
    EXPECT_FALSE(s.timing_missing);
    EXPECT_DOUBLE_EQ(s.avg_us, 500.0);
    EXPECT_DOUBLE_EQ(s.p50_us, 500.0);
    EXPECT_DOUBLE_EQ(s.untimed_count, 1000.0);
    EXPECT_DOUBLE_EQ(s.total_count, 10.0);
}

TEST(LatencyStats, GrowsPastTheExpectedSize) {
    LatencyAccumulator acc(2);
    for (int i = 1; i <= 20000; ++i)
        acc.add_interval(1, i);
    const LatencySummary s = acc.summary();
    ASSERT_TRUE(s.valid);
    EXPECT_DOUBLE_EQ(s.p50_us, 10000.0);
    EXPECT_DOUBLE_EQ(s.p99_us, 19800.0);
    EXPECT_DOUBLE_EQ(s.max_us, 20000.0);
}

// ---- histogram -----------------------------------------------------------------------------

TEST(LatencyHistogram, BinEdges) {
    EXPECT_EQ(latency_bin(0.0), 0);
    EXPECT_EQ(latency_bin(0.999), 0);
    EXPECT_EQ(latency_bin(-5.0), 0);
    EXPECT_EQ(latency_bin(std::numeric_limits<double>::quiet_NaN()), 0);
    EXPECT_EQ(latency_bin(1.0), 1);
    EXPECT_EQ(latency_bin(2.0), 1 + kLatencyBinsPerOctave);
    EXPECT_EQ(latency_bin(1024.0), 1 + 10 * kLatencyBinsPerOctave);
    EXPECT_EQ(latency_bin(100e6), 213);  // 100 s still has its own bin
    EXPECT_EQ(latency_bin(1e12), 255);
    EXPECT_EQ(latency_bin(std::numeric_limits<double>::infinity()), 255);
    for (int b = 1; b < kLatencyBinCount; ++b) {
        EXPECT_EQ(latency_bin(latency_bin_mid_us(uint8_t(b))), b);
        EXPECT_EQ(latency_bin(latency_bin_lower_us(uint8_t(b)) * (1 + 1e-12)), b);
    }
}

TEST(LatencyHistogram, MidpointWithinBoundOfEveryValue) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> octaves(0.0, 31.7);
    for (int i = 0; i < 200000; ++i) {
        const double x = std::exp2(octaves(rng));
        const double mid = latency_bin_mid_us(latency_bin(x));
        ASSERT_LE(std::fabs(mid / x - 1.0), kLatencyBinMaxRelError) << x;
    }
}

TEST(LatencyHistogram, QuantilesFromBinsWithinBound) {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
        const std::vector<Point> points = random_points(seed, 3600, true, false);
        std::vector<double> bin_weight(kLatencyBinCount, 0.0);
        for (const Point &pt : points)
            bin_weight[latency_bin(pt.latency_us)] += pt.weight;
        LatencyAccumulator binned;
        for (int b = 0; b < kLatencyBinCount; ++b)
            binned.add_weighted_point(latency_bin_mid_us(uint8_t(b)), bin_weight[b]);
        const LatencySummary exact = summarize_points(points);
        const LatencySummary approx = binned.summary();
        ASSERT_TRUE(approx.valid);
        EXPECT_LE(std::fabs(approx.p50_us / exact.p50_us - 1), kLatencyBinMaxRelError);
        EXPECT_LE(std::fabs(approx.p95_us / exact.p95_us - 1), kLatencyBinMaxRelError);
        EXPECT_LE(std::fabs(approx.p99_us / exact.p99_us - 1), kLatencyBinMaxRelError);
        EXPECT_LE(std::fabs(approx.max_us / exact.max_us - 1), kLatencyBinMaxRelError);
        EXPECT_DOUBLE_EQ(approx.total_count, exact.total_count);
    }
}

}  // namespace
}  // namespace pgsw
