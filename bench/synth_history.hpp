#pragma once
// Synthetic but realistic history for the benchmarks (fill_history, bench_core): ticks made by
// the real TickBuilder from per-process samples, one-minute roll-ups by the real RollupBuilder.
// Test-only: nothing here is used by the extension.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/ring.hpp"
#include "core/rollup.hpp"
#include "core/tick_builder.hpp"
#include "core/wait_class.hpp"

namespace pgsw::bench {

// A ring in heap memory, laid out as the server lays out its shared rings.
struct HeapRing {
    HeapRing(uint64_t records, uint64_t arena)
        : memory(Ring::bytes_needed(records, arena) / 8 + 16),
          ring(Ring::create(align(memory.data()), records, arena)) {}
    static void *align(uint64_t *p) {
        auto v = reinterpret_cast<uintptr_t>(p);
        return reinterpret_cast<void *>((v + 63) & ~uintptr_t{63});
    }
    std::vector<uint64_t> memory;
    Ring ring;
};

// The wait events a busy OLTP server shows, as (wait_event_info, category, backend, state).
struct WaitShape {
    uint32_t info;
    WaitCategory category;
    BackendKind backend;
    BackendStateCode state;
};

std::vector<WaitShape> make_wait_shapes(int n) {
    // PostgreSQL wait_event_info: class in the top byte (LWLock 0x01, Lock 0x03, Activity 0x05,
    // Client 0x06, IO 0x0A); distinct low bits give distinct events.
    std::vector<WaitShape> base = {
        {0, WaitCategory::Cpu, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x0A000010, WaitCategory::Storage, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x0A000011, WaitCategory::Storage, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x0A000030, WaitCategory::Storage, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x0A000031, WaitCategory::Storage, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x01000010, WaitCategory::Lock, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x01000011, WaitCategory::Lock, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x03000004, WaitCategory::Lock, BackendKind::ClientBackend, BackendStateCode::Active},
        {0x06000000, WaitCategory::Idle, BackendKind::ClientBackend, BackendStateCode::Idle},
        {0x06000000, WaitCategory::Idle, BackendKind::ClientBackend,
         BackendStateCode::IdleInTransaction},
        {0x05000001, WaitCategory::Idle, BackendKind::Checkpointer, BackendStateCode::None},
        {0x05000002, WaitCategory::Idle, BackendKind::Bgwriter, BackendStateCode::None},
        {0x05000003, WaitCategory::Idle, BackendKind::Walwriter, BackendStateCode::None},
        {0x05000004, WaitCategory::Idle, BackendKind::AutovacuumLauncher, BackendStateCode::None},
        {0x05000005, WaitCategory::Idle, BackendKind::BackgroundWorker, BackendStateCode::None},
        {0x0A000040, WaitCategory::Storage, BackendKind::Walwriter, BackendStateCode::None},
        {0x0A000050, WaitCategory::Storage, BackendKind::Checkpointer, BackendStateCode::None},
    };
    std::vector<WaitShape> shapes;
    for (int i = 0; i < n; ++i) {
        WaitShape s = base[static_cast<size_t>(i) % base.size()];
        if (i >= static_cast<int>(base.size()))  // more distinct events of the same kinds
            s.info = s.info ? s.info + 0x100u * static_cast<uint32_t>(i) : 0x0A000100u + i;
        shapes.push_back(s);
    }
    return shapes;
}

struct IoShape {
    BackendKind backend;
    IoObjectCode object;
    IoContextCode context;
    IoOpCode op;
};

std::vector<IoShape> make_io_shapes(int n) {
    const BackendKind backends[] = {BackendKind::ClientBackend, BackendKind::Checkpointer,
                                    BackendKind::Bgwriter, BackendKind::Walwriter,
                                    BackendKind::AutovacuumWorker};
    const IoOpCode ops[] = {IoOpCode::Hit,       IoOpCode::Read,  IoOpCode::Write, IoOpCode::Extend,
                            IoOpCode::Writeback, IoOpCode::Fsync, IoOpCode::Evict};
    std::vector<IoShape> shapes;
    for (const BackendKind b : backends)
        for (const IoOpCode op : ops) {
            if (static_cast<int>(shapes.size()) >= n)
                return shapes;
            const IoObjectCode object =
                (b == BackendKind::Walwriter) ? IoObjectCode::Wal : IoObjectCode::Relation;
            shapes.push_back({b, object, IoContextCode::Normal, op});
        }
    return shapes;
}

struct SynthOptions {
    uint64_t ticks = 3600;     // tick ring records
    uint64_t rollups = 10080;  // roll-up ring records
    int64_t interval_ms = 1000;
    int wait_groups = 30;
    int queries = 5;
    int io_cells = 20;
    uint64_t entries_per_tick = 48;
    uint64_t entries_per_rollup = 64;
    int64_t end_us = 0;  // PostgreSQL TimestampTz of the newest tick
    unsigned seed = 42;
};

struct SynthStats {
    uint64_t tick_count = 0, tick_entries = 0, rollup_count = 0, rollup_entries = 0, generated = 0;
};

// Fill `ticks` (newest opt.ticks ticks) and `rollups` (complete minutes) as the sampler would.
inline SynthStats synthesize(const SynthOptions &o, Ring &ticks, Ring &rollups) {
    SynthStats st;
    const int64_t interval_us = o.interval_ms * 1000;
    const int64_t rollup_span_us = static_cast<int64_t>(o.rollups + 1) * kRollupBucketUs;
    const int64_t tick_span_us = static_cast<int64_t>(o.ticks) * interval_us;
    const uint64_t total_ticks =
        static_cast<uint64_t>(std::max(rollup_span_us, tick_span_us) / interval_us);
    const int64_t first_tick_us = o.end_us - static_cast<int64_t>(total_ticks - 1) * interval_us;
    const size_t max_procs = 64 + static_cast<size_t>(o.wait_groups) * 2;
    TickBuilder tick(max_procs);
    RollupBuilder rollup(4 * max_procs + 256, 4 * max_procs + 256);
    std::mt19937_64 rng(o.seed);
    const auto waits = make_wait_shapes(o.wait_groups);
    const auto ios = make_io_shapes(o.io_cells);
    std::lognormal_distribution<double> read_latency(std::log(150.0), 0.6);  // µs
    std::lognormal_distribution<double> sync_latency(std::log(900.0), 0.4);  // µs
    const double scale = static_cast<double>(interval_us) / 1e6;
    const uint64_t ring_from = total_ticks > o.ticks ? total_ticks - o.ticks : 0;
    st.generated = total_ticks;
    for (uint64_t t = 0; t < total_ticks; ++t) {
        const int64_t at = first_tick_us + static_cast<int64_t>(t) * interval_us;
        tick.begin(at - interval_us, at, kFlagTrackIoTiming | kFlagTrackWalIoTiming);
        // Every wait shape is seen by one to three processes: ~wait_groups groups per tick.
        for (const WaitShape &s : waits) {
            const int procs = 1 + static_cast<int>(rng() % 3);
            for (int p = 0; p < procs; ++p) {
                const bool fg =
                    s.backend == BackendKind::ClientBackend && s.state == BackendStateCode::Active;
                const int64_t query_id =
                    fg ? 1000003 * (1 + static_cast<int64_t>(rng() % uint64_t(o.queries))) : 0;
                tick.add_sample({s.backend, s.state, s.category, s.info,
                                 s.backend == BackendKind::ClientBackend ? 16384u : 0u, query_id});
            }
        }
        const double rl = read_latency(rng), sl = sync_latency(rng);
        for (const IoShape &c : ios) {
            const uint64_t count = static_cast<uint64_t>(double(50 + rng() % 400) * scale) + 1;
            double per = 20;
            if (c.op == IoOpCode::Read)
                per = rl;
            else if (c.op == IoOpCode::Fsync)
                per = sl;
            else if (c.op == IoOpCode::Hit)
                per = 0;
            tick.add_io_delta(c.backend, c.object, c.context, c.op,
                              {count, static_cast<uint64_t>(double(count) * per), count * 8192});
        }
        const uint64_t syncs = static_cast<uint64_t>(double(100 + rng() % 200) * scale) + 1;
        tick.add_wal({syncs, syncs * 30, 0}, {syncs, static_cast<uint64_t>(double(syncs) * sl), 0});
        tick.finish(static_cast<uint32_t>(30 + rng() % 40));
        const IntervalRecord &rec = tick.record();
        const auto &entries = tick.entries();
        if (t >= ring_from) {
            ticks.append(rec, entries.data(), entries.size());
            st.tick_entries += entries.size();
            ++st.tick_count;
        }
        if (rollup.starts_new_bucket(rec)) {
            rollup.finish();
            rollups.append(rollup.record(), rollup.entries().data(), rollup.entries().size());
            st.rollup_entries += rollup.entries().size();
            ++st.rollup_count;
        }
        rollup.add(rec, entries.data(), entries.size());
    }
    // The current minute stays in the builder, as in the sampler: the server re-folds the
    // ticks newer than the last roll-up (replay_unrolled_ticks) when it starts.
    return st;
}

}  // namespace pgsw::bench
