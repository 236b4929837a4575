// Microbenchmarks of the core's hot paths: ring append (the sampler's tick), ring read (every
// SQL reader), tick aggregation, and latency percentiles over an hour of ticks.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/latency_stats.hpp"
#include "core/ring.hpp"
#include "core/tick_builder.hpp"
#include "core/window.hpp"
#include "../synth_history.hpp"

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

// ---- the SQL answers over a window (storage_wait_summary / storage_wait_history) ----------
// A full default-sized history (3600 ticks at 1 s, 10080 one-minute roll-ups), as
// bench/fill_history.cpp writes it for the server-side query-cost benchmark. Arg 0: the last
// hour (tick ring), 1: seven days (roll-ups). Split into the copy out of the rings (read_window)
// and the computation on the copies, to show where a query's time goes.
struct SynthHistory {
    SynthHistory() : ticks(3601, 3600 * 64), rollups(10081, 10080 * 128) {
        bench::SynthOptions o;
        o.entries_per_tick = 64, o.entries_per_rollup = 128;
        o.end_us = now_us;
        bench::synthesize(o, ticks.ring, rollups.ring);
        RetentionFacts f{};
        f.tick_retention_us = 3600LL * 1000000, f.rollup_retention_us = 10080LL * 60 * 1000000;
        f.have_ticks = f.have_rollups = true;
        IntervalRecord r{};
        ticks.ring.read_record(ticks.ring.first_readable(), r);
        f.oldest_tick_start_us = r.start_us;
        rollups.ring.read_record(rollups.ring.first_readable(), r);
        f.oldest_rollup_start_us = r.start_us;
        facts = f;
        for (const uint32_t info :
             distinct_wait_infos(read_window(ticks.ring, rollups.ring, plan(1))))
            names.add(info,
                      (info >> 24) == 0x0A   ? "IO"
                      : (info >> 24) == 0x01 ? "LWLock"
                                             : "Lock",
                      (info >> 24) == 0x0A ? "DataFileRead" : "BufferContent");
    }
    WindowPlan plan(int64_t which) const {
        const int64_t window = which ? 7LL * 86400 * 1000000 : 3600LL * 1000000 - 1000000;
        return plan_window(now_us + 1, window, facts);
    }
    static SynthHistory &get() {
        static SynthHistory h;
        return h;
    }
    int64_t now_us = 848000000LL * 1000000;  // 2026-11 in PostgreSQL microseconds
    bench::HeapRing ticks, rollups;
    RetentionFacts facts{};
    WaitNameTable names;
};

void BM_WindowRead(benchmark::State &state) {
    SynthHistory &h = SynthHistory::get();
    const WindowPlan plan = h.plan(state.range(0));
    size_t n = 0;
    for (auto _ : state) {
        WindowRecords w = read_window(h.ticks.ring, h.rollups.ring, plan);
        n = w.ticks.size() + w.rollups.size();
        benchmark::DoNotOptimize(w);
    }
    state.counters["records"] = double(n);
}
BENCHMARK(BM_WindowRead)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_WindowSummarize(benchmark::State &state) {
    SynthHistory &h = SynthHistory::get();
    const WindowRecords w = read_window(h.ticks.ring, h.rollups.ring, h.plan(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(summarize(w, h.names));
}
BENCHMARK(BM_WindowSummarize)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_WindowDistinctWaits(benchmark::State &state) {
    SynthHistory &h = SynthHistory::get();
    const WindowRecords w = read_window(h.ticks.ring, h.rollups.ring, h.plan(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(distinct_wait_infos(w));
}
BENCHMARK(BM_WindowDistinctWaits)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_WindowHistory(benchmark::State &state) {
    SynthHistory &h = SynthHistory::get();
    const WindowRecords w = read_window(h.ticks.ring, h.rollups.ring, h.plan(state.range(0)));
    for (auto _ : state)
        benchmark::DoNotOptimize(history(w, 0));
}
BENCHMARK(BM_WindowHistory)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// What storage_wait_summary() and storage_wait_history() do in the core, straight from the
// rings (RingWindow: one record at a time, only the entry kinds each answer needs): the pass
// that lists wait events for naming, then the answer's own pass.
void BM_SummaryFromRings(benchmark::State &state) {
    SynthHistory &h = SynthHistory::get();
    const WindowPlan plan = h.plan(state.range(0));
    for (auto _ : state) {
        const RingWindow w(h.ticks.ring, h.rollups.ring, plan);
        benchmark::DoNotOptimize(distinct_wait_infos(w));
        benchmark::DoNotOptimize(summarize(w, h.names));
    }
}
BENCHMARK(BM_SummaryFromRings)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_HistoryFromRings(benchmark::State &state) {
    SynthHistory &h = SynthHistory::get();
    const WindowPlan plan = h.plan(state.range(0));
    for (auto _ : state)
        benchmark::DoNotOptimize(history(RingWindow(h.ticks.ring, h.rollups.ring, plan), 0));
}
BENCHMARK(BM_HistoryFromRings)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// One tick's aggregation plus its ring append and roll-up fold: the sampler's core work per
// tick outside PostgreSQL (reading PGPROC / PgBackendStatus is not included).
void BM_TickAppendFold(benchmark::State &state) {
    const auto procs = static_cast<size_t>(state.range(0));
    TickBuilder tick(procs);
    RollupBuilder rollup(4 * procs + 256, 4 * procs + 256);
    BenchRing ring(3601, 3600 * 48);
    BenchRing rollups(10081, 10080 * 64);
    std::mt19937 rng(3);
    std::vector<ProcSample> samples(procs);
    for (auto &s : samples)
        s = {BackendKind::ClientBackend,
             BackendStateCode::Idle,
             WaitCategory::Idle,
             uint32_t(0x06000000u + rng() % 2),
             5,
             0};
    for (size_t i = 0; i < procs / 10 + 1 && i < procs; ++i)
        samples[i] = {BackendKind::ClientBackend,
                      BackendStateCode::Active,
                      WaitCategory::Storage,
                      uint32_t(0x0A000000u + rng() % 8),
                      5,
                      int64_t(rng() % 20)};
    int64_t t = 0;
    for (auto _ : state) {
        t += 10000;
        tick.begin(t - 10000, t, 0);
        for (const auto &s : samples)
            tick.add_sample(s);
        for (int c = 0; c < 20; ++c)
            tick.add_io_delta(BackendKind::ClientBackend, IoObjectCode::Relation,
                              IoContextCode::Normal, IoOpCode(c % 8), {1, 1, 8192});
        tick.finish(0);
        ring.ring.append(tick.record(), tick.entries().data(), tick.entries().size());
        if (rollup.starts_new_bucket(tick.record())) {
            rollup.finish();
            rollups.ring.append(rollup.record(), rollup.entries().data(), rollup.entries().size());
        }
        rollup.add(tick.record(), tick.entries().data(), tick.entries().size());
    }
}
BENCHMARK(BM_TickAppendFold)->Arg(100)->Arg(1000)->Arg(5000);

}  // namespace
}  // namespace pgsw

BENCHMARK_MAIN();
