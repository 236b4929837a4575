#include "core/cpp_only.hpp"
#pragma once
// Latency statistics over per-interval mean latencies, computed with Boost.Accumulators.
//
// PostgreSQL keeps only cumulative sums (count, time) per I/O series, so each sampler tick yields
// one point: the tick's mean latency Δtime_us / Δcount, weighted by Δcount. The percentiles below
// describe how that mean varied between ticks (like iostat's r_await per interval); they are NOT
// per-I/O percentiles, and a single slow I/O inside a busy second is diluted by the fast ones.
//
// Quantile definition (exact, no approximation). With the stored points (x_i, w_i) and
// W = sum of all w_i:
//     q(p) = min { x_i : sum of w_j over all x_j <= x_i  >=  p * W }
// the lower weighted quantile, i.e. the inverse of the weighted empirical CDF (numpy's
// "inverted_cdf" with weights). It is always one of the observed per-tick means. Boost's
// tag::weighted_tail_quantile<left> computes exactly this when its tail cache holds every point,
// which summary() guarantees by sizing the cache to the number of points.
//
// avg_us is total_time_us / total_count: the true mean per I/O, not a mean of the tick means.
//
// Ticks with Δcount > 0 and Δtime == 0 are "untimed" (track_io_timing or track_wal_io_timing was
// off): they are counted in untimed_count but kept out of every latency figure, because a 0 there
// means "not measured", not "instant". With only untimed ticks the summary is not valid and
// timing_missing is set, so the caller can say why the latency is NULL.
//
// Histogram bins for roll-ups: 8 bins per power of two starting at 1 us. Bin 0 holds everything
// below 1 us; bin b >= 1 holds [2^((b-1)/8), 2^(b/8)) us; bin 255 also takes everything above
// (its lower edge is 2^31.75 us, about 60 minutes). latency_bin_mid_us() returns the geometric
// midpoint, within 2^(1/16) - 1 = 4.43 % of every latency in bins 1..254. Quantiles commute with
// this monotone binning, so a quantile computed from bin midpoints (add_weighted_point) is
// within 4.43 % of the exact one whenever the exact one is >= 1 us.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pgsw {

struct LatencySummary {           // all latencies in microseconds
    bool valid = false;           // false: no timed I/O; callers report NULL, never 0
    bool timing_missing = false;  // I/O happened but none of it was timed (timing GUC off)
    bool incomplete = false;      // out of memory: some points were dropped from the quantiles
    double total_count = 0;       // timed I/Os (Δcount of timed ticks plus point weights)
    double total_time_us = 0;
    double untimed_count = 0;                   // I/Os in ticks whose Δtime was 0
    double avg_us = 0;                          // total_time_us / total_count
    double p50_us = 0, p95_us = 0, p99_us = 0;  // weighted quantiles of the per-tick means
    double p999_us = 0;                         // p99.9 (the probe's per-read tail)
    double max_us = 0;                          // largest per-tick mean
    uint64_t intervals = 0;                     // timed ticks or points that contributed
};

class LatencyAccumulator {
  public:
    // Reserves room for `expected_intervals` points (may throw std::bad_alloc); more may be added.
    explicit LatencyAccumulator(size_t expected_intervals = 0);

    // One sampler tick. Ignored when delta_count <= 0, when either input is negative or not
    // finite; delta_time_us == 0 with delta_count > 0 counts as untimed.
    void add_interval(double delta_count, double delta_time_us) noexcept;
    // A pre-binned point (a roll-up histogram bin: latency_bin_mid_us(bin) with its weight).
    // Ignored when weight <= 0 or either input is negative or not finite.
    void add_weighted_point(double latency_us, double weight) noexcept;

    // Never throws: on allocation failure it returns an invalid summary flagged incomplete.
    LatencySummary summary() const noexcept;

  private:
    struct Point {
        double latency_us;
        double weight;
    };
    void store(double latency_us, double weight) noexcept;
    void fill_quantiles(LatencySummary &s) const;  // may throw std::bad_alloc

    std::vector<Point> points_;
    double total_count_ = 0;
    double total_time_us_ = 0;
    double untimed_count_ = 0;
    bool dropped_ = false;
};

// ---- log-scale histogram for long-window roll-ups ------------------------------------------

constexpr int kLatencyBinsPerOctave = 8;
constexpr int kLatencyBinCount = 256;
// Largest relative distance between a latency in bins 1..254 and its bin's midpoint.
constexpr double kLatencyBinMaxRelError = 0.0443;

uint8_t latency_bin(double latency_us) noexcept;    // NaN and negatives go to bin 0
double latency_bin_mid_us(uint8_t bin) noexcept;    // bin 0: 0.5 us
double latency_bin_lower_us(uint8_t bin) noexcept;  // bin 0: 0 us

}  // namespace pgsw
