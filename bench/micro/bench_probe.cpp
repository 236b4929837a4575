// What the probe adds to a tick that reads the I/O counters (pg/probe.cpp sample_probes): the
// sampler's ProbeCollector over the shared ProbeTable. /Idle: the probe on, no new read since
// the last reading, Arg devices; /OneRead: one new read on one of Arg devices since the last
// reading (a copy of its 256 bins and one add_probe_bin), the common case at the default
// probe_interval = io_read_interval = 1 s.
#include <cstring>
#include <memory>

#include <benchmark/benchmark.h>

#include "core/probe.hpp"
#include "core/probe_table.hpp"
#include "core/tick_builder.hpp"

namespace pgsw {
namespace {

std::unique_ptr<ProbeTable> table_with(size_t devices) {
    auto t = std::make_unique<ProbeTable>();
    std::memset(t.get(), 0, sizeof(ProbeTable));
    for (size_t i = 0; i < devices; ++i)
        probe_slot_assign(t->slots[i], 8, uint32_t(16 * i), ProbeState::Probing, "f", "");
    t->count = devices;
    return t;
}

uint16_t name_of(uint32_t, uint32_t minor) {
    return uint16_t(minor / 16 + 1);
}

void BM_ProbeCollectIdle(benchmark::State &state) {
    auto t = table_with(size_t(state.range(0)));
    ProbeCollector c;
    TickBuilder tick(100);
    tick.begin(0, 1, 0);
    c.collect(*t, name_of, tick);  // the baseline
    for (auto _ : state) {
        c.collect(*t, name_of, tick);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_ProbeCollectIdle)->Arg(1)->Arg(16);

// One read recorded by the writer, then the reading (the tick's begin() and the writer's
// record are in the loop: BM_ProbeRecordOnly measures them alone, to subtract).
template <bool kCollect>
void one_read(benchmark::State &state) {
    auto t = table_with(size_t(state.range(0)));
    ProbeCollector c;
    TickBuilder tick(1);
    tick.begin(0, 1, 0);
    c.collect(*t, name_of, tick);
    double latency = 100;
    for (auto _ : state) {
        tick.begin(0, 1, 0);
        probe_slot_record(t->slots[0], latency);
        latency = latency > 1e5 ? 100 : latency * 1.1;
        if (kCollect)
            c.collect(*t, name_of, tick);
        benchmark::ClobberMemory();
    }
}
void BM_ProbeCollectOneRead(benchmark::State &state) {
    one_read<true>(state);
}
void BM_ProbeRecordOnly(benchmark::State &state) {
    one_read<false>(state);
}
BENCHMARK(BM_ProbeCollectOneRead)->Arg(1)->Arg(16);
BENCHMARK(BM_ProbeRecordOnly)->Arg(1);

}  // namespace
}  // namespace pgsw
