// Microbenchmarks of the core's hot paths: ring append (the sampler's tick), ring read (every
// SQL reader), tick aggregation, and latency percentiles over an hour of ticks.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/latency_stats.hpp"
#include "core/ring.hpp"
#include "core/tick_builder.hpp"

namespace pgsw {
namespace {

struct BenchRing {
    BenchRing(uint64_t records, uint64_t arena)
        : memory(Ring::bytes_needed(records, arena) / 8 + 8),
          ring(Ring::create(memory.data(), records, arena)) {}
    std::vector<uint64_t> memory;
    Ring ring;
};

void BM_RingAppend(benchmark::State &state) {
    BenchRing b(3600, 3600 * 48);
    std::vector<ArenaEntry> entries(static_cast<size_t>(state.range(0)));
    IntervalRecord record{};
    for (auto _ : state) {
        record.end_us += 1000000;
        b.ring.append(record, entries.data(), entries.size());
    }
}
BENCHMARK(BM_RingAppend)->Arg(8)->Arg(48)->Arg(256);

void BM_RingReadHour(benchmark::State &state) {
    BenchRing b(3601, 3601 * 48);
    std::vector<ArenaEntry> entries(32);
    IntervalRecord record{};
    for (int i = 0; i < 3600; ++i) {
        record.end_us += 1000000;
        b.ring.append(record, entries.data(), entries.size());
    }
    const bool with_entries = state.range(0) != 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(b.ring.read_since(0, with_entries));
}
BENCHMARK(BM_RingReadHour)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_TickAggregate(benchmark::State &state) {
    const auto procs = static_cast<size_t>(state.range(0));
    TickBuilder tick(procs);
    std::mt19937 rng(1);
    std::vector<ProcSample> samples(procs);
    for (auto &s : samples)
        s = {BackendKind::ClientBackend,
             BackendStateCode::Active,
             WaitCategory::Storage,
             uint32_t(0x0A000000u + rng() % 8),
             5,
             int64_t(rng() % 20)};
    for (auto _ : state) {
        tick.begin(0, 1, 0);
        for (const auto &s : samples)
            tick.add_sample(s);
        tick.finish(0);
        benchmark::DoNotOptimize(tick.entries().data());
    }
}
BENCHMARK(BM_TickAggregate)->Arg(100)->Arg(1000)->Arg(5000);

void BM_PercentilesHour(benchmark::State &state) {
    std::mt19937 rng(2);
    std::lognormal_distribution<double> latency(7.0, 0.5);
    std::vector<std::pair<double, double>> points(3600);
    for (auto &p : points)
        p = {double(rng() % 500 + 1), 0};
    for (auto &p : points)
        p.second = p.first * latency(rng);
    for (auto _ : state) {
        LatencyAccumulator acc(points.size());
        for (const auto &p : points)
            acc.add_interval(p.first, p.second);
        benchmark::DoNotOptimize(acc.summary());
    }
}
BENCHMARK(BM_PercentilesHour)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pgsw

BENCHMARK_MAIN();
