#include <string>

#include <gtest/gtest.h>

#include "core/verdict.hpp"

namespace pgsw {
namespace {

SampleCounts counts(uint64_t active, uint64_t storage, uint64_t cpu, uint64_t lock) {
    SampleCounts c;
    c.active = active;
    c.storage = storage;
    c.cpu = cpu;
    c.lock = lock;
    return c;
}

bool contains(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

TEST(Verdict, Names) {
    EXPECT_STREQ(verdict_name(Verdict::Idle), "idle");
    EXPECT_STREQ(verdict_name(Verdict::StorageBound), "storage-bound");
    EXPECT_STREQ(verdict_name(Verdict::CpuBound), "cpu-bound");
    EXPECT_STREQ(verdict_name(Verdict::LockBound), "lock-bound");
    EXPECT_STREQ(verdict_name(Verdict::Mixed), "mixed");
}

TEST(Verdict, EmptyWindowIsIdleWithNullScore) {
    const Diagnosis d = diagnose(SampleCounts{}, LatencyFacts{});
    EXPECT_EQ(d.verdict, Verdict::Idle);
    EXPECT_FALSE(d.score_valid);
    EXPECT_FALSE(d.pct_valid);
    EXPECT_EQ(d.active_samples, 0u);
    EXPECT_EQ(d.hint, "Fewer than 10 active samples in the window: nothing to diagnose.");
}

TEST(Verdict, TooFewSamplesIsIdleButSharesAreShown) {
    const Diagnosis d = diagnose(counts(9, 9, 0, 0), LatencyFacts{});
    EXPECT_EQ(d.verdict, Verdict::Idle);
    EXPECT_FALSE(d.score_valid);
    EXPECT_TRUE(d.pct_valid);
    EXPECT_DOUBLE_EQ(d.storage_pct, 100.0);
    EXPECT_EQ(d.active_samples, 9u);
}

TEST(Verdict, MinimumSamplesIsEnough) {
    const Diagnosis d = diagnose(counts(kMinActiveSamples, 10, 0, 0), LatencyFacts{});
    EXPECT_TRUE(d.score_valid);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    EXPECT_DOUBLE_EQ(d.storage_bound_score, 100.0);
}

TEST(Verdict, InjectedStorageLatencyIsStorageBound) {
    LatencyFacts facts;
    facts.reads_valid = true;
    facts.read_avg_ms = 12.345;
    facts.read_wait_share = 0.9;
    facts.wal_wait_share = 0.1;
    const Diagnosis d = diagnose(counts(1000, 820, 150, 10), facts);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    EXPECT_TRUE(d.score_valid);
    EXPECT_DOUBLE_EQ(d.storage_bound_score, 82.0);
    EXPECT_GE(d.storage_bound_score, 70.0);
    EXPECT_DOUBLE_EQ(d.cpu_pct, 15.0);
    EXPECT_DOUBLE_EQ(d.lock_pct, 1.0);
    EXPECT_DOUBLE_EQ(d.other_pct, 2.0);
    EXPECT_EQ(d.hint,
              "Page reads average 12.3 ms: check the data volume's provisioned IOPS/throughput "
              "and whether shared_buffers holds the working set.");
}

TEST(Verdict, WalFlushesDominating) {
    LatencyFacts facts;
    facts.fsync_valid = true;
    facts.fsync_avg_ms = 3.2;
    facts.read_wait_share = 0.2;
    facts.wal_wait_share = 0.8;
    const Diagnosis d = diagnose(counts(500, 400, 100, 0), facts);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    EXPECT_TRUE(contains(d.hint, "WAL flushes average 3.20 ms")) << d.hint;
    EXPECT_TRUE(contains(d.hint, "synchronous_commit")) << d.hint;
}

TEST(Verdict, TimingOffAsksForTheTimingGucs) {
    LatencyFacts facts;
    facts.read_timing_missing = true;
    facts.read_wait_share = 1.0;
    const Diagnosis reads = diagnose(counts(100, 90, 10, 0), facts);
    EXPECT_TRUE(contains(reads.hint, "enable track_io_timing")) << reads.hint;

    LatencyFacts wal;
    wal.fsync_timing_missing = true;
    wal.wal_wait_share = 1.0;
    const Diagnosis flushes = diagnose(counts(100, 90, 10, 0), wal);
    EXPECT_TRUE(contains(flushes.hint, "track_wal_io_timing")) << flushes.hint;
}

TEST(Verdict, StorageHintsByKind) {
    LatencyFacts temp;
    temp.temp_wait_share = 0.7;
    temp.read_wait_share = 0.3;
    EXPECT_TRUE(contains(diagnose(counts(100, 80, 20, 0), temp).hint, "work_mem"));

    LatencyFacts writes;
    writes.write_wait_share = 0.6;
    EXPECT_TRUE(contains(diagnose(counts(100, 80, 20, 0), writes).hint, "background writer"));

    LatencyFacts reads_untimed_unknown;  // reads dominate, no read I/O counted at all
    reads_untimed_unknown.read_wait_share = 1.0;
    EXPECT_TRUE(contains(diagnose(counts(100, 80, 20, 0), reads_untimed_unknown).hint,
                         "mostly page reads"));

    const Diagnosis unknown = diagnose(counts(100, 80, 20, 0), LatencyFacts{});
    EXPECT_TRUE(contains(unknown.hint, "leading storage wait events")) << unknown.hint;
}

TEST(Verdict, InMemoryReadOnlyIsCpuBound) {
    const Diagnosis d = diagnose(counts(2000, 40, 1850, 60), LatencyFacts{});
    EXPECT_EQ(d.verdict, Verdict::CpuBound);
    EXPECT_DOUBLE_EQ(d.storage_bound_score, 2.0);
    EXPECT_LE(d.storage_bound_score, 20.0);
    EXPECT_TRUE(contains(d.hint, "pg_stat_statements")) << d.hint;
}

TEST(Verdict, HotRowUpdatesAreLockBound) {
    const Diagnosis d = diagnose(counts(1000, 100, 300, 600), LatencyFacts{});
    EXPECT_EQ(d.verdict, Verdict::LockBound);
    EXPECT_DOUBLE_EQ(d.lock_pct, 60.0);
    EXPECT_TRUE(contains(d.hint, "pg_locks")) << d.hint;
}

TEST(Verdict, ThresholdsAreInclusive) {
    EXPECT_EQ(diagnose(counts(100, 50, 10, 40), {}).verdict, Verdict::StorageBound);
    EXPECT_EQ(diagnose(counts(1000, 499, 100, 0), {}).verdict, Verdict::Mixed);
    EXPECT_EQ(diagnose(counts(100, 0, 60, 0), {}).verdict, Verdict::CpuBound);
    EXPECT_EQ(diagnose(counts(1000, 0, 599, 0), {}).verdict, Verdict::Mixed);
    EXPECT_EQ(diagnose(counts(100, 0, 0, 40), {}).verdict, Verdict::LockBound);
    EXPECT_EQ(diagnose(counts(1000, 0, 0, 399), {}).verdict, Verdict::Mixed);
}

TEST(Verdict, RulesApplyInOrder) {
    // Storage at 50 % beats lock at 40 %; CPU at 60 % beats lock at 40 %.
    EXPECT_EQ(diagnose(counts(100, 50, 10, 40), {}).verdict, Verdict::StorageBound);
    EXPECT_EQ(diagnose(counts(100, 0, 60, 40), {}).verdict, Verdict::CpuBound);
}

TEST(Verdict, RoundedSharesDecide) {
    // 49.96 % shows as 50.0 %, so the verdict agrees with the number shown.
    const Diagnosis d = diagnose(counts(10000, 4996, 3000, 0), {});
    EXPECT_DOUBLE_EQ(d.storage_bound_score, 50.0);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    EXPECT_DOUBLE_EQ(diagnose(counts(30, 10, 0, 0), {}).storage_bound_score, 33.3);
}

TEST(Verdict, MixedNamesTheLargestComponent) {
    const Diagnosis cpu = diagnose(counts(100, 30, 40, 20), {});
    EXPECT_EQ(cpu.verdict, Verdict::Mixed);
    EXPECT_EQ(cpu.hint,
              "No single bottleneck; the largest share is CPU (40.0%), so start with the top "
              "queries in pg_stat_statements.");
    const Diagnosis other = diagnose(counts(100, 20, 30, 5), {});
    EXPECT_DOUBLE_EQ(other.other_pct, 45.0);
    EXPECT_TRUE(contains(other.hint, "other waits such as IPC")) << other.hint;
    const Diagnosis storage = diagnose(counts(100, 45, 35, 20), {});
    EXPECT_TRUE(contains(storage.hint, "storage waits (45.0%)")) << storage.hint;
    const Diagnosis lock = diagnose(counts(100, 25, 30, 35), {});
    EXPECT_TRUE(contains(lock.hint, "lock waits (35.0%)")) << lock.hint;
}

TEST(Verdict, DisagreeingCountsNeverExceedHundredPercent) {
    const Diagnosis d = diagnose(counts(10, 8, 5, 0), {});
    EXPECT_EQ(d.active_samples, 13u);
    EXPECT_DOUBLE_EQ(d.storage_pct, 61.5);
    EXPECT_DOUBLE_EQ(d.other_pct, 0.0);
}

}  // namespace
}  // namespace pgsw
