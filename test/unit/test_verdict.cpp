#include <string>

#include <gtest/gtest.h>

#include "core/verdict.hpp"

namespace pgsw {
namespace {

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

// 16 sessions over 100 ticks: active samples split into components.
DiagnosisInput busy(uint64_t read, uint64_t wal, uint64_t other_storage, uint64_t cpu,
                    uint64_t lock = 0, uint64_t sync_rep = 0) {
    DiagnosisInput in;
    SampleCounts &c = in.samples;
    c.storage_read = read, c.storage_wal = wal;
    c.storage = read + wal + other_storage;
    c.cpu = cpu, c.lock = lock, c.sync_rep = sync_rep;
    c.active = c.storage + cpu + lock + sync_rep;
    c.ticks = 100;
    return in;
}

void latencies(DiagnosisInput &in, double read_ms, double fsync_ms) {
    in.latency.reads_valid = in.latency.fsync_valid = true;
    in.latency.read_avg_ms = read_ms, in.latency.fsync_avg_ms = fsync_ms;
}

void transactions(DiagnosisInput &in, uint64_t xacts, double seconds) {
    in.transactions = {true, xacts, seconds};
}

const ComponentTime &component(const Diagnosis &d, Component c) {
    return d.components[static_cast<size_t>(c)];
}

TEST(Verdict, Names) {
    EXPECT_STREQ(verdict_name(Verdict::Idle), "idle");
    EXPECT_STREQ(verdict_name(Verdict::StorageBound), "storage-bound");
    EXPECT_STREQ(verdict_name(Verdict::CpuBound), "cpu-bound");
    EXPECT_STREQ(verdict_name(Verdict::LockBound), "lock-bound");
    EXPECT_STREQ(verdict_name(Verdict::Mixed), "mixed");
    EXPECT_STREQ(verdict_name(Verdict::ReplicationBound), "replication-bound");
    EXPECT_STREQ(component_name(Component::DataRead), "data_read");
    EXPECT_STREQ(component_name(Component::SyncReplication), "sync_replication");
    EXPECT_STREQ(component_name(Component::Other), "other");
}

TEST(Verdict, EmptyWindowIsIdleWithNullScoreAndNoTransactionTime) {
    const Diagnosis d = diagnose(DiagnosisInput{});
    EXPECT_EQ(d.verdict, Verdict::Idle);
    EXPECT_FALSE(d.score_valid);
    EXPECT_FALSE(d.pct_valid);
    EXPECT_FALSE(d.xacts_valid);
    EXPECT_EQ(d.hint,
              "Fewer than 10 active samples in the window: nothing to diagnose. No time "
              "per transaction: no transaction was counted in the window (the database "
              "counters were not read yet).");
}

TEST(Verdict, TooFewSamplesIsIdleButSharesAreShown) {
    DiagnosisInput in = busy(9, 0, 0, 0);
    latencies(in, 5, 5);
    const Diagnosis d = diagnose(in);
    EXPECT_EQ(d.verdict, Verdict::Idle);
    EXPECT_FALSE(d.score_valid);
    EXPECT_TRUE(d.pct_valid);
    EXPECT_DOUBLE_EQ(d.storage_pct, 100.0);
}

// The case: data and WAL in RAM, tens of thousands of commits a second. Half the
// samples are in storage waits, but each takes microseconds: faster storage removes nothing.
TEST(Verdict, RamBackedStorageIsNeverStorageBound) {
    DiagnosisInput in = busy(70, 360, 90, 450);
    latencies(in, 0.003, 0.0);
    in.reference.cpu_cores = 2;
    const Diagnosis d = diagnose(in);
    EXPECT_TRUE(d.score_valid);
    EXPECT_DOUBLE_EQ(d.storage_bound_score, 0.0);
    EXPECT_DOUBLE_EQ(d.speedup_at_reference, 1.0);
    EXPECT_NE(d.verdict, Verdict::StorageBound);
    EXPECT_TRUE(contains(d.hint, "faster storage will not help")) << d.hint;
    EXPECT_TRUE(contains(d.hint, "commit_delay")) << d.hint;
}

// Injected +2 ms reads and +4 ms fsyncs: the storage waits shrink 20-40x at the reference.
// A history row's diagnosis skips the hint (text built per row, never shown there) and
// nothing else.
TEST(Verdict, WithoutHintTheFiguresAreTheSame) {
    DiagnosisInput in = busy(1000, 400, 0, 100);
    latencies(in, 2.1, 4.0);
    in.reference.cpu_cores = 2;
    const Diagnosis full = diagnose(in);
    in.with_hint = false;
    const Diagnosis bare = diagnose(in);
    EXPECT_FALSE(full.hint.empty());
    EXPECT_TRUE(bare.hint.empty());
    EXPECT_EQ(bare.verdict, full.verdict);
    EXPECT_EQ(bare.storage_bound_score, full.storage_bound_score);
    EXPECT_EQ(bare.speedup_at_reference, full.speedup_at_reference);
    EXPECT_EQ(bare.cpu_capped, full.cpu_capped);
}

TEST(Verdict, SlowStorageIsStorageBoundWithItsSpeedup) {
    DiagnosisInput in = busy(1000, 400, 0, 100);
    latencies(in, 2.1, 4.0);
    in.reference.cpu_cores = 16;
    const Diagnosis d = diagnose(in);
    // kept: 1000 x 0.1/2.1 + 400 x 0.1/4 + 100 = 157.6 of 1500 -> r = 0.105; one session on CPU
    // of 16 cores caps nothing.
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    EXPECT_NEAR(d.storage_bound_score, 89.5, 0.1);
    EXPECT_NEAR(d.speedup_at_reference, 9.52, 0.01);
    EXPECT_FALSE(d.cpu_capped);
    // On 2 cores the same session on CPU caps the gain at 2x: still well worth it.
    in.reference.cpu_cores = 2;
    const Diagnosis capped = diagnose(in);
    EXPECT_EQ(capped.verdict, Verdict::StorageBound);
    EXPECT_NEAR(capped.storage_bound_score, 89.5, 0.1);  // the storage excess itself
    EXPECT_DOUBLE_EQ(capped.speedup_at_reference, 2.0);
    EXPECT_TRUE(capped.cpu_capped);
    EXPECT_TRUE(contains(capped.hint, "capped by the CPU")) << capped.hint;
    EXPECT_TRUE(contains(d.hint, "Page reads average 2.10 ms against 0.10 ms")) << d.hint;
}

TEST(Verdict, WalFlushesLeadTheHintWhenTheySaveMore) {
    DiagnosisInput in = busy(100, 900, 0, 100);
    latencies(in, 0.5, 3.0);
    const Diagnosis d = diagnose(in);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    EXPECT_TRUE(contains(d.hint, "WAL flushes average 3.00 ms")) << d.hint;
    EXPECT_TRUE(contains(d.hint, "synchronous_commit")) << d.hint;
}

// The cores cap the what-if: 1.5 sessions on CPU per tick out of 2 cores means the time can
// shrink to 75 % of itself at most, whatever the storage.
TEST(Verdict, TheCpuCapsTheSpeedup) {
    DiagnosisInput in = busy(1450, 0, 0, 150);  // 16 sessions, 1.5 of them on CPU
    latencies(in, 5.0, 0.01);
    in.reference.cpu_cores = 2;
    const Diagnosis d = diagnose(in);
    EXPECT_TRUE(d.cpu_capped);
    EXPECT_NEAR(d.speedup_at_reference, 1.0 / 0.75, 1e-9);
    EXPECT_NEAR(d.storage_bound_score, 88.8, 0.1);  // 1450 x (1 - 0.1/5) of 1600 samples
    EXPECT_NE(d.verdict, Verdict::StorageBound);    // but the gain would be 1.33x only
    EXPECT_TRUE(contains(d.hint, "the CPU is the cap")) << d.hint;
    // Other processes on CPU leave fewer cores to the sessions.
    in.samples.background_cpu = 50;  // half a core
    EXPECT_NEAR(diagnose(in).speedup_at_reference, 1.0, 1e-9);
}

// Little's law: 16 sessions active on average, 1,600 transactions a second -> 10 ms each; the
// components split it by their samples and add up to it.
TEST(Verdict, LittlesLawBreakdownAddsUpToTheTransactionTime) {
    DiagnosisInput in = busy(800, 400, 0, 400);  // 1,600 samples / 100 ticks = 16 sessions
    latencies(in, 2.0, 4.0);
    transactions(in, 16000, 10.0);
    const Diagnosis d = diagnose(in);
    ASSERT_TRUE(d.xacts_valid);
    EXPECT_DOUBLE_EQ(d.xacts_per_s, 1600.0);
    EXPECT_DOUBLE_EQ(d.xact_time_ms, 10.0);
    double sum = 0, sum_at_reference = 0;
    for (const ComponentTime &t : d.components)
        sum += t.ms_per_xact, sum_at_reference += t.ms_per_xact_at_reference;
    EXPECT_NEAR(sum, 10.0, 1e-9);
    EXPECT_DOUBLE_EQ(component(d, Component::DataRead).ms_per_xact, 5.0);
    EXPECT_DOUBLE_EQ(component(d, Component::DataRead).ms_per_xact_at_reference, 5.0 * 0.1 / 2.0);
    EXPECT_DOUBLE_EQ(component(d, Component::WalFlush).ms_per_xact_at_reference, 2.5 * 0.1 / 4.0);
    EXPECT_NEAR(d.xact_time_at_reference_ms, sum_at_reference, 1e-9);  // no CPU cap here
    EXPECT_TRUE(contains(d.hint, "would take ~2.81 ms instead of 10.0 ms")) << d.hint;
}

TEST(Verdict, TooFewTransactionsGiveNullWithAReason) {
    DiagnosisInput in = busy(800, 0, 0, 200);
    latencies(in, 2.0, 2.0);
    transactions(in, kMinTransactions - 1, 10.0);
    Diagnosis d = diagnose(in);
    EXPECT_FALSE(d.xacts_valid);
    EXPECT_TRUE(contains(d.xacts_reason, "too few")) << d.xacts_reason;
    EXPECT_TRUE(contains(d.hint, "No time per transaction: only 29 transactions")) << d.hint;
    EXPECT_DOUBLE_EQ(d.xacts_per_s, 2.9);  // the rate itself is known
    EXPECT_TRUE(d.score_valid);            // the what-if needs no transactions
    in.transactions = {};
    d = diagnose(in);
    EXPECT_TRUE(contains(d.xacts_reason, "not\nread") || contains(d.xacts_reason, "not read"))
        << d.xacts_reason;
    EXPECT_TRUE(contains(d.hint, "the sessions' time would shrink")) << d.hint;
}

// A long statement keeps sessions busy with no transaction ending: more time than the window.
TEST(Verdict, StatementsSpanningTheWindowGiveNull) {
    DiagnosisInput in = busy(0, 0, 0, 3500);  // 35 sessions on CPU all window long
    transactions(in, 70, 1.0);                // 35 x 1 s / 70 xacts: 0.5 s each
    EXPECT_TRUE(diagnose(in).xacts_valid);
    transactions(in, 35, 1.0);  // 35 s of work in 35 xacts ending in 1 s: 1 s each, still fits
    EXPECT_TRUE(diagnose(in).xacts_valid);
    transactions(in, 34, 1.0);  // more session time than the transactions ending can account for
    const Diagnosis d = diagnose(in);
    EXPECT_FALSE(d.xacts_valid);
    EXPECT_TRUE(contains(d.xacts_reason, "spanning")) << d.xacts_reason;
}

TEST(Verdict, SynchronousReplicationIsItsOwnVerdict) {
    DiagnosisInput in = busy(0, 100, 0, 100, 0, 800);
    latencies(in, 0.05, 0.05);
    const Diagnosis d = diagnose(in);
    EXPECT_EQ(d.verdict, Verdict::ReplicationBound);
    EXPECT_DOUBLE_EQ(d.sync_rep_pct, 80.0);
    EXPECT_DOUBLE_EQ(d.storage_pct + d.cpu_pct + d.lock_pct + d.sync_rep_pct + d.other_pct, 100.0);
    EXPECT_TRUE(contains(d.hint, "ANY 1")) << d.hint;
}

// Timing off: storage waits can't be weighed, so no claim either way.
TEST(Verdict, UnknownStorageLatencyGivesANullScoreAndSaysWhy) {
    DiagnosisInput in = busy(800, 0, 0, 200);
    in.latency.read_timing_missing = true;
    const Diagnosis d = diagnose(in);
    EXPECT_FALSE(d.score_valid);
    EXPECT_EQ(d.verdict, Verdict::Mixed);
    EXPECT_TRUE(contains(d.hint, "track_io_timing")) << d.hint;
    // A small unknown part is counted whole (an upper bound) and the score stays.
    DiagnosisInput small = busy(5, 0, 0, 95);
    EXPECT_TRUE(diagnose(small).score_valid);
}

// Timing on, but no read or flush was timed in the window (a window of a few seconds: the
// waits are sampled, the backends' I/O statistics not yet published; or extend/SLRU waits with
// no read beside them). Same NULL score, but the hint must not tell a user whose settings are
// on to turn them on.
TEST(Verdict, UnmeasuredLatencyWithTimingOnSaysWidenTheWindow) {
    DiagnosisInput in = busy(0, 0, 500, 500);  // extends and writes, no read in the window
    const Diagnosis d = diagnose(in);
    EXPECT_FALSE(d.score_valid);
    EXPECT_TRUE(contains(d.hint, "latency is unknown")) << d.hint;
    EXPECT_TRUE(contains(d.hint, "widen the window")) << d.hint;
    EXPECT_FALSE(contains(d.hint, "is off")) << d.hint;
    EXPECT_FALSE(d.latency_timing_off);
    in.latency.fsync_timing_missing = true;  // one of the settings is off: that is the reason
    EXPECT_TRUE(contains(diagnose(in).hint, "track_wal_io_timing is off")) << diagnose(in).hint;
    EXPECT_TRUE(diagnose(in).latency_timing_off);
    // A CPU-bound window with a NULL score says why too, after its own advice.
    DiagnosisInput cpu = busy(0, 0, 300, 700);
    const Diagnosis c = diagnose(cpu);
    EXPECT_EQ(c.verdict, Verdict::CpuBound);
    EXPECT_FALSE(c.score_valid);
    EXPECT_TRUE(contains(c.hint, "Most active time is on CPU")) << c.hint;
    EXPECT_TRUE(contains(c.hint, "whether faster storage would help cannot be told")) << c.hint;
}

TEST(Verdict, CpuAndLockBound) {
    DiagnosisInput cpu = busy(10, 0, 0, 90);
    latencies(cpu, 0.01, 0.01);
    EXPECT_EQ(diagnose(cpu).verdict, Verdict::CpuBound);
    DiagnosisInput lock = busy(10, 0, 0, 40, 50);
    latencies(lock, 0.01, 0.01);
    EXPECT_EQ(diagnose(lock).verdict, Verdict::LockBound);
    DiagnosisInput mixed = busy(0, 0, 0, 45, 35);
    mixed.samples.active = 100;  // 20 in other waits
    const Diagnosis d = diagnose(mixed);
    EXPECT_EQ(d.verdict, Verdict::Mixed);
    EXPECT_TRUE(contains(d.hint, "CPU (45.0%)")) << d.hint;
}

// Counts taken at different moments must not give shares above 100 %.
TEST(Verdict, InconsistentCountsAreClamped) {
    DiagnosisInput in = busy(60, 0, 0, 60);
    in.samples.active = 100;
    const Diagnosis d = diagnose(in);
    EXPECT_EQ(d.active_samples, 120u);
    EXPECT_DOUBLE_EQ(d.storage_pct, 50.0);
    EXPECT_DOUBLE_EQ(d.other_pct, 0.0);
}

// ---- the what-if's loop: N = X (W + Z), the CPU cap X / u ---------------------------------

void machine(DiagnosisInput &in, double busy_fraction, double sessions) {
    in.machine.cpu_measured = true;
    in.machine.cpu_busy_fraction = busy_fraction;
    in.machine.cpu_cores = 2;
    in.machine.client_sessions = sessions;
}

// The talk's gp3 run shape: 16 sessions, ~36 ms per transaction of which most is reads and WAL
// flushes at network latency; the CPU is mostly idle, so faster storage would buy nearly all of
// the storage excess.
TEST(WhatIf, IdleCpuLetsTheStorageExcessGo) {
    DiagnosisInput in = busy(510, 300, 0, 60, 130);  // 1000 samples: 10 sessions active
    latencies(in, 2.0, 5.0);
    transactions(in, 280, 1.0);  // X = 280/s; W = 10 / 280 = 35.7 ms
    machine(in, 0.10, 16);       // u = 10 %; Z = 16 / 280 - W = 21.4 ms
    const Diagnosis d = diagnose(in);
    ASSERT_TRUE(d.xacts_valid);
    EXPECT_NEAR(d.xact_time_ms, 35.71, 0.01);
    EXPECT_NEAR(d.outside_server_ms, 1000.0 * (16.0 / 280 - 10.0 / 280), 0.01);
    // Storage side: reads 0.1/2 and flushes 0.1/5 of their time stay.
    const double r_storage = (510 * 0.05 + 300 * 0.02 + 60 + 130) / 1000.0;
    EXPECT_NEAR(d.storage_bound_score, 100 * (1 - r_storage), 0.051);  // 0.1 steps
    // X_s = 16 / (W r + Z) = 16 / (7.7 + 21.4 ms) = 550/s, under X / u = 2,800/s: no cap.
    EXPECT_FALSE(d.cpu_capped);
    EXPECT_NEAR(d.xact_time_at_reference_ms, d.xact_time_ms * r_storage, 0.01);
    EXPECT_NEAR(d.xacts_per_s_at_reference,
                16 / (d.xact_time_ms * r_storage / 1000 + d.outside_server_ms / 1000), 0.5);
    EXPECT_NEAR(d.xacts_per_s_cpu_limit, 2800, 0.5);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
}

// A closed loop with no time outside the server: faster storage lets the same 16 sessions run
// so many more transactions that the cores fill first; the projection stops at the cap.
TEST(WhatIf, TheCoresCapAClosedLoop) {
    DiagnosisInput in = busy(800, 150, 0, 50);  // 10 active sessions, storage-heavy
    latencies(in, 5.0, 8.0);
    transactions(in, 1000, 1.0);  // W = 10 ms
    machine(in, 0.25, 10);        // Z = 0; the machine can do 4x the throughput
    const Diagnosis d = diagnose(in);
    ASSERT_TRUE(d.xacts_valid);
    EXPECT_NEAR(d.outside_server_ms, 0, 1e-9);
    EXPECT_TRUE(d.cpu_capped);
    EXPECT_NEAR(d.xacts_per_s_at_reference, 4000, 0.5);
    EXPECT_NEAR(d.xact_time_at_reference_ms, 10.0 * 0.25, 1e-6);  // W' = N / X_cpu
    EXPECT_NEAR(d.speedup_at_reference, 4.0, 1e-6);
    EXPECT_GE(d.storage_bound_score, 90);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    EXPECT_TRUE(contains(d.hint, "capped by the CPU"));
}

// 005's first level, measured (PG 18, +2 ms reads, +4 ms flushes, RAM baseline): 1,365
// transactions per second with the machine 39 % busy (0.78 cores), but PostgreSQL sampled on
// CPU only 0.34 sessions per tick; most of the rest woke sessions around their waits. The cap
// counts the sampled work and a quarter of the rest: D = 0.34 + 0.25 x 0.44 = 0.45 cores,
// 2 / 0.45 x 1,365 = 6,067/s (the baseline ran 7,550-10,185/s), not X / u = 3,500/s.
TEST(WhatIf, CpuSpentAroundTheWaitsIsNotTheCap) {
    DiagnosisInput in = busy(500, 930, 0, 34, 6);  // 100 ticks: 14.7 sessions active, W 10.8 ms
    latencies(in, 2.17, 4.07);
    transactions(in, 1365, 1.0);
    machine(in, 0.39, 16);
    const Diagnosis d = diagnose(in);
    ASSERT_TRUE(d.xacts_valid);
    const double demand = 0.34 + kPersistingCpuShare * (0.78 - 0.34);
    EXPECT_NEAR(d.xacts_per_s_cpu_limit, 1365 * 2 / demand, 0.5);
    EXPECT_TRUE(d.cpu_capped);
    EXPECT_NEAR(d.xacts_per_s_at_reference, 1365 * 2 / demand, 0.5);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    // Between the busy share's cap (X / u) and the sampled work's alone.
    EXPECT_GT(d.xacts_per_s_cpu_limit, 1365 * 2 / 0.78);
    EXPECT_LT(d.xacts_per_s_cpu_limit, 1365 * 2 / 0.34);
    // Background processes on CPU count as work too.
    in.samples.background_cpu = 34;
    EXPECT_NEAR(diagnose(in).xacts_per_s_cpu_limit,
                1365 * 2 / (0.68 + kPersistingCpuShare * (0.78 - 0.68)), 0.5);
    // Sampled work above the busy cores (2 x 0.39) is sessions queued for a core: X / u again.
    in.samples.background_cpu = 0;
    in.samples.cpu = 100;
    in.samples.active = 500 + 930 + 100 + 6;
    EXPECT_NEAR(diagnose(in).xacts_per_s_cpu_limit, 1365 / 0.39, 0.5);
}

// A saturated machine: the storage waits are large, but every extra transaction would need a
// core that is not there. Faster storage alone buys nothing, and the verdict says so.
TEST(WhatIf, ASaturatedCpuIsNotStorageBound) {
    DiagnosisInput in = busy(600, 100, 0, 300);
    latencies(in, 3.0, 4.0);
    transactions(in, 1000, 1.0);
    machine(in, 0.98, 10);
    const Diagnosis d = diagnose(in);
    EXPECT_GE(d.storage_bound_score, 50);
    EXPECT_TRUE(d.cpu_capped);
    EXPECT_LT(d.speedup_at_reference, 1.1);
    EXPECT_NE(d.verdict, Verdict::StorageBound);
    EXPECT_TRUE(contains(d.hint, "the CPU is the cap"));
}

// An open workload through a pool of mostly idle connections: Z is large, the throughput
// hardly moves, the cap does not bind, and the whole storage excess goes.
TEST(WhatIf, AnOpenWorkloadKeepsItsThroughput) {
    DiagnosisInput in = busy(400, 100, 0, 100);  // 6 active sessions
    latencies(in, 4.0, 4.0);
    transactions(in, 200, 1.0);  // W = 30 ms
    machine(in, 0.5, 200);       // 200 pooled sessions: Z = 970 ms
    const Diagnosis d = diagnose(in);
    EXPECT_FALSE(d.cpu_capped);
    EXPECT_NEAR(d.xacts_per_s_at_reference, 200 * (1000.0 / (970 + d.xact_time_at_reference_ms)),
                0.5);
    EXPECT_LT(d.xacts_per_s_at_reference, 206);
    const double r_storage = (400 * 0.1 / 4 + 100 * 0.1 / 4 + 100) / 600.0;
    EXPECT_NEAR(d.xact_time_at_reference_ms, 30 * r_storage, 0.01);
}

// Without transactions the loop is unknown: the bound W' >= u W (Z = 0) is used.
TEST(WhatIf, WithoutTransactionsTheCpuShareBoundsTheSpeedup) {
    DiagnosisInput in = busy(900, 0, 0, 100);
    latencies(in, 10.0, 0.05);
    machine(in, 0.4, 10);
    const Diagnosis d = diagnose(in);
    EXPECT_FALSE(d.xacts_valid);
    EXPECT_TRUE(d.cpu_capped);
    EXPECT_NEAR(d.speedup_at_reference, 1 / 0.4, 1e-9);
}

// Slow flushes behind a dominant other cause: the hint must not call 3.7 ms "near local NVMe".
TEST(Verdict, SlowButSmallStorageWaitsAreNotCalledFast) {
    DiagnosisInput in = busy(5, 10, 0, 10, 5, 70);  // sync replication dominates
    latencies(in, 0.016, 3.66);
    const Diagnosis d = diagnose(in);
    EXPECT_EQ(d.verdict, Verdict::ReplicationBound);
    EXPECT_FALSE(contains(d.hint, "near local-NVMe"));
    EXPECT_TRUE(contains(d.hint, "faster storage will not help, it would remove only"));
}

}  // namespace
}  // namespace pgsw
