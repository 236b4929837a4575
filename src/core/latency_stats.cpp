#include "core/latency_stats.hpp"

#include <cmath>
#include <new>

// Order matters: weighted_tail_quantile.hpp uses sum_of_weights and tail_weights unqualified.
#include <boost/accumulators/accumulators.hpp>
#include <boost/accumulators/statistics/max.hpp>
#include <boost/accumulators/statistics/stats.hpp>
#include <boost/accumulators/statistics/sum.hpp>
#include <boost/accumulators/statistics/tail_variate.hpp>
#include <boost/accumulators/statistics/weighted_tail_quantile.hpp>

namespace pgsw {
namespace {

namespace ba = boost::accumulators;

// The left tail sorted ascending; with a cache as large as the sample count it holds every
// point, so the quantile walk over it is exact (see the header for the definition).
using QuantileSet =
    ba::accumulator_set<double, ba::stats<ba::tag::weighted_tail_quantile<ba::left>, ba::tag::max>,
                        double>;

bool finite_non_negative(double x) noexcept {
    return std::isfinite(x) && x >= 0.0;
}

double quantile_at(const QuantileSet &acc, double probability, double fallback) {
    const double q = ba::quantile(acc, ba::quantile_probability = probability);
    // NaN only if rounding left the sorted weight sum below p * W: the answer is then the top.
    return std::isnan(q) ? fallback : q;
}

}  // namespace

LatencyAccumulator::LatencyAccumulator(size_t expected_intervals) {
    points_.reserve(expected_intervals);
}

void LatencyAccumulator::add_interval(double delta_count, double delta_time_us) noexcept {
    if (!(delta_count > 0.0) || !std::isfinite(delta_count))
        return;
    if (!finite_non_negative(delta_time_us))
        return;
    if (delta_time_us == 0.0) {
        untimed_count_ += delta_count;
        return;
    }
    total_count_ += delta_count;
    total_time_us_ += delta_time_us;
    store(delta_time_us / delta_count, delta_count);
}

void LatencyAccumulator::add_weighted_point(double latency_us, double weight) noexcept {
    if (!(weight > 0.0) || !std::isfinite(weight))
        return;
    if (!finite_non_negative(latency_us))
        return;
    total_count_ += weight;
    total_time_us_ += latency_us * weight;
    store(latency_us, weight);
}

void LatencyAccumulator::store(double latency_us, double weight) noexcept {
    try {
        points_.push_back(Point{latency_us, weight});
    } catch (const std::bad_alloc &) {
        dropped_ = true;  // totals stay exact; quantiles cover the points kept
    }
}

void LatencyAccumulator::fill_quantiles(LatencySummary &s) const {
    QuantileSet acc(ba::tag::tail<ba::left>::cache_size = points_.size());
    for (const Point &p : points_)
        acc(p.latency_us, ba::weight = p.weight);
    s.max_us = ba::max(acc);
    s.p50_us = quantile_at(acc, 0.50, s.max_us);
    s.p95_us = quantile_at(acc, 0.95, s.max_us);
    s.p99_us = quantile_at(acc, 0.99, s.max_us);
    s.p999_us = quantile_at(acc, 0.999, s.max_us);
}

LatencySummary LatencyAccumulator::summary() const noexcept {
    LatencySummary s;
    s.untimed_count = untimed_count_;
    s.incomplete = dropped_;
    s.total_count = total_count_;
    s.total_time_us = total_time_us_;
    s.intervals = points_.size();
    if (points_.empty()) {
        s.timing_missing = untimed_count_ > 0.0 && total_count_ == 0.0;
        return s;
    }
    s.avg_us = total_time_us_ / total_count_;
    try {
        fill_quantiles(s);
        s.valid = true;
    } catch (const std::bad_alloc &) {
        s.incomplete = true;
    }
    return s;
}

// ---- histogram -----------------------------------------------------------------------------

uint8_t latency_bin(double latency_us) noexcept {
    if (!(latency_us >= 1.0))
        return 0;  // also NaN
    const double octaves = std::log2(latency_us);
    if (octaves >= double(kLatencyBinCount - 1) / kLatencyBinsPerOctave)
        return kLatencyBinCount - 1;
    return static_cast<uint8_t>(std::floor(octaves * kLatencyBinsPerOctave) + 1);
}

double latency_bin_mid_us(uint8_t bin) noexcept {
    if (bin == 0)
        return 0.5;
    return std::exp2((double(bin) - 0.5) / kLatencyBinsPerOctave);
}

double latency_bin_lower_us(uint8_t bin) noexcept {
    if (bin == 0)
        return 0.0;
    return std::exp2(double(bin - 1) / kLatencyBinsPerOctave);
}

}  // namespace pgsw
