// The five symptom rules (core/symptoms.hpp) on synthetic windows: every status of every rule.
#include <cstdint>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/symptoms.hpp"

namespace pgsw {
namespace {

constexpr int64_t kSecond = 1000 * 1000;
constexpr int64_t kT0 = int64_t{13000000} * 60 * kSecond;
constexpr uint32_t kWalRead = 0x0A000000u | 70;
constexpr uint64_t kMB = 1 << 20;

const WaitNameTable &names() {
    static const WaitNameTable table = [] {
        WaitNameTable t;
        t.add(kWalRead, "IO", "WALRead");
        return t;
    }();
    return table;
}

// One-second ticks with the counters read; `fill(i, record, entries)` sets the rest.
using Fill = std::function<void(int, IntervalRecord &, std::vector<ArenaEntry> &)>;
WindowRecords window(int n, const Fill &fill) {
    WindowRecords w;
    for (int i = 0; i < n; ++i) {
        RecordCopy c{};
        IntervalRecord &r = c.record;
        r.start_us = kT0 + i * kSecond, r.end_us = r.start_us + kSecond;
        r.elapsed_us = kSecond, r.ticks = 1;
        r.flags = kFlagTrackIoTiming | kFlagTrackWalIoTiming;
        r.ticks_io_timing = r.ticks_wal_timing = 1;
        r.ticks_db_counters = r.ticks_checkpointer = 1;
        fill(i, r, c.entries);
        w.ticks.push_back(std::move(c));
    }
    return w;
}

SymptomRows evaluate(const WindowRecords &w) {
    const WindowSummary s = summarize(w, names());
    return evaluate_symptoms(w, names(), s, [](uint16_t id) {
        return id == 7 ? std::string("sub_orders") : std::string();
    });
}

SymptomRow row(const WindowRecords &w, Symptom s) {
    return evaluate(w)[static_cast<size_t>(s)];
}

void reads(IntervalRecord &r, uint64_t count, double ms) {
    r.reads = count;
    r.read_time_us = uint64_t(double(count) * ms * 1000);
    r.read_latency_max_us = ms * 1000;
}

void load(IntervalRecord &r, uint64_t active, uint64_t storage, uint64_t tuples) {
    r.fg_active = active, r.fg_storage = storage, r.tuples_inserted = tuples;
}

TEST(Symptoms, FiveRowsInOrderWithNames) {
    const SymptomRows rows = evaluate(window(2, [](int, IntervalRecord &, auto &) {}));
    const char *expected[] = {"slow_ingestion", "inconsistent_read_latency", "delayed_autovacuum",
                              "slower_checkpoints", "replication_lag"};
    for (size_t i = 0; i < kSymptomCount; ++i)
        EXPECT_STREQ(symptom_name(rows[i].symptom), expected[i]);
}

// ---- slow_ingestion ----

TEST(SlowIngestion, UnknownWithoutCountersOrTime) {
    auto no_counters = window(60, [](int, IntervalRecord &r, auto &) { r.ticks_db_counters = 0; });
    SymptomRow x = row(no_counters, Symptom::SlowIngestion);
    EXPECT_EQ(x.status, SymptomStatus::Unknown);
    EXPECT_EQ(x.storage_implicated, -1);
    auto short_window = window(6, [](int, IntervalRecord &r, auto &) { load(r, 4, 0, 1000); });
    EXPECT_EQ(row(short_window, Symptom::SlowIngestion).status, SymptomStatus::Unknown);
    auto idle = window(60, [](int, IntervalRecord &r, auto &) { load(r, 0, 0, 2); });
    EXPECT_EQ(row(idle, Symptom::SlowIngestion).status, SymptomStatus::Unknown);
}

TEST(SlowIngestion, SteadyIsOk) {
    auto w = window(60, [](int, IntervalRecord &r, auto &) {
        load(r, 4, 1, 1000);
        reads(r, 100, 1);
    });
    const SymptomRow x = row(w, Symptom::SlowIngestion);
    EXPECT_EQ(x.status, SymptomStatus::Ok);
    EXPECT_EQ(x.storage_implicated, 0);
    EXPECT_NEAR(x.value, 1000, 1);
    EXPECT_NEAR(x.baseline, 1000, 1);
}

TEST(SlowIngestion, FallingWhileLatencyRisesIsPresent) {
    auto w = window(60, [](int i, IntervalRecord &r, auto &) {
        load(r, 4, i < 30 ? 1 : 3, i < 30 ? 1000 : 400);
        reads(r, 100, i < 30 ? 1 : 5);
    });
    const SymptomRow x = row(w, Symptom::SlowIngestion);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_EQ(x.storage_implicated, 1);
    EXPECT_NE(x.evidence.find("read latency rose from 1.00 to 5.00 ms"), std::string::npos)
        << x.evidence;
}

TEST(SlowIngestion, FallingWithoutStorageIsWatchNotImplicated) {
    auto w = window(60, [](int i, IntervalRecord &r, auto &) {
        load(r, 4, 1, i < 30 ? 1000 : 500);
        reads(r, 100, 1);
    });
    const SymptomRow x = row(w, Symptom::SlowIngestion);
    EXPECT_EQ(x.status, SymptomStatus::Watch);
    EXPECT_EQ(x.storage_implicated, 0);
}

TEST(SlowIngestion, TheLoadGoingAwayIsOk) {
    auto w = window(60, [](int i, IntervalRecord &r, auto &) {
        load(r, i < 30 ? 4 : 1, 1, i < 30 ? 1000 : 250);
        reads(r, 100, i < 30 ? 1 : 3);
    });
    const SymptomRow x = row(w, Symptom::SlowIngestion);
    EXPECT_EQ(x.status, SymptomStatus::Ok);
    EXPECT_NE(x.evidence.find("the load itself fell"), std::string::npos);
}

// ---- inconsistent_read_latency ----

TEST(InconsistentReads, UnknownWithoutTimingOrReads) {
    auto untimed = window(60, [](int, IntervalRecord &r, auto &) {
        r.flags = 0, r.ticks_io_timing = 0;
        r.reads = 100;
    });
    const SymptomRow x = row(untimed, Symptom::InconsistentReadLatency);
    EXPECT_EQ(x.status, SymptomStatus::Unknown);
    EXPECT_NE(x.evidence.find("track_io_timing"), std::string::npos) << x.evidence;
    auto few = window(60, [](int, IntervalRecord &r, auto &) { reads(r, 2, 1); });
    EXPECT_EQ(row(few, Symptom::InconsistentReadLatency).status, SymptomStatus::Unknown);
}

TEST(InconsistentReads, SteadyIsOk) {
    auto w = window(60, [](int, IntervalRecord &r, auto &) { reads(r, 100, 2); });
    const SymptomRow x = row(w, Symptom::InconsistentReadLatency);
    EXPECT_EQ(x.status, SymptomStatus::Ok);
    EXPECT_EQ(x.storage_implicated, 0);
}

TEST(InconsistentReads, FastButSpreadIsOk) {
    // Page-cache reads: large relative spread, nobody waits long.
    auto w =
        window(60, [](int i, IntervalRecord &r, auto &) { reads(r, 100, i % 10 ? 0.01 : 0.2); });
    EXPECT_EQ(row(w, Symptom::InconsistentReadLatency).status, SymptomStatus::Ok);
}

TEST(InconsistentReads, ASlowTailIsPresent) {
    auto w =
        window(100, [](int i, IntervalRecord &r, auto &) { reads(r, 100, i % 10 ? 0.5 : 20); });
    const SymptomRow x = row(w, Symptom::InconsistentReadLatency);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_EQ(x.storage_implicated, 1);
    EXPECT_GT(x.value, 3 * x.baseline);
}

TEST(InconsistentReads, AStepIsPresentASmallStepWatch) {
    auto step = window(60, [](int i, IntervalRecord &r, auto &) { reads(r, 100, i < 30 ? 1 : 4); });
    EXPECT_EQ(row(step, Symptom::InconsistentReadLatency).status, SymptomStatus::Present);
    auto small =
        window(60, [](int i, IntervalRecord &r, auto &) { reads(r, 100, i < 30 ? 1 : 1.6); });
    EXPECT_EQ(row(small, Symptom::InconsistentReadLatency).status, SymptomStatus::Watch);
}

// ---- delayed_autovacuum ----

void autovacuum(IntervalRecord &r, uint64_t busy, uint64_t max, uint64_t io, uint64_t delay) {
    r.ticks_autovacuum = 1;
    r.autovacuum_workers_busy = busy, r.autovacuum_workers_max = max;
    r.ticks_autovacuum_all_busy = busy >= max;
    r.autovacuum_samples_io = io, r.autovacuum_samples_delay = delay;
    r.autovacuum_samples_cpu = busy - io - delay;
}

TEST(DelayedAutovacuum, UnknownWhenAutovacuumCannotRun) {
    auto w = window(60, [](int, IntervalRecord &, auto &) {});
    const SymptomRow x = row(w, Symptom::DelayedAutovacuum);
    EXPECT_EQ(x.status, SymptomStatus::Unknown);
    EXPECT_NE(x.evidence.find("autovacuum"), std::string::npos);
    auto few = window(5, [](int, IntervalRecord &r, auto &) { autovacuum(r, 3, 3, 3, 0); });
    EXPECT_EQ(row(few, Symptom::DelayedAutovacuum).status, SymptomStatus::Unknown);
}

TEST(DelayedAutovacuum, AllBusyOnStorageIsPresentImplicated) {
    auto w = window(60, [](int, IntervalRecord &r, auto &) { autovacuum(r, 3, 3, 3, 0); });
    const SymptomRow x = row(w, Symptom::DelayedAutovacuum);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_EQ(x.storage_implicated, 1);
    EXPECT_DOUBLE_EQ(x.value, 100);
}

TEST(DelayedAutovacuum, AllBusyThrottledIsPresentNotImplicated) {
    auto w = window(60, [](int, IntervalRecord &r, auto &) { autovacuum(r, 3, 3, 0, 3); });
    const SymptomRow x = row(w, Symptom::DelayedAutovacuum);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_EQ(x.storage_implicated, 0);
    EXPECT_NE(x.evidence.find("VacuumDelay, a setting"), std::string::npos) << x.evidence;
}

TEST(DelayedAutovacuum, SometimesAllBusyIsWatchIdleIsOk) {
    auto some = window(60, [](int i, IntervalRecord &r, auto &) {
        i % 3 == 0 ? autovacuum(r, 3, 3, 3, 0) : autovacuum(r, 0, 3, 0, 0);
    });
    EXPECT_EQ(row(some, Symptom::DelayedAutovacuum).status, SymptomStatus::Watch);
    auto idle = window(60, [](int, IntervalRecord &r, auto &) { autovacuum(r, 0, 3, 0, 0); });
    const SymptomRow x = row(idle, Symptom::DelayedAutovacuum);
    EXPECT_EQ(x.status, SymptomStatus::Ok);
    EXPECT_EQ(x.storage_implicated, 0);
}

// ---- slower_checkpoints ----

void checkpoint_tick(IntervalRecord &r, bool inside, double read_ms) {
    reads(r, 100, read_ms);
    if (!inside)
        return;
    r.ticks_in_checkpoint = 1, r.flags |= kFlagInCheckpoint;
    r.reads_in_checkpoint = r.reads, r.read_time_us_in_checkpoint = r.read_time_us;
}

TEST(SlowerCheckpoints, UnknownWithoutCheckpointOrCounters) {
    auto none = window(60, [](int, IntervalRecord &r, auto &) { reads(r, 100, 1); });
    SymptomRow x = row(none, Symptom::SlowerCheckpoints);
    EXPECT_EQ(x.status, SymptomStatus::Unknown);
    EXPECT_NE(x.evidence.find("No checkpoint"), std::string::npos);
    auto unread = window(60, [](int i, IntervalRecord &r, auto &) {
        checkpoint_tick(r, i > 30, 1);
        r.ticks_checkpointer = 0;
    });
    EXPECT_EQ(row(unread, Symptom::SlowerCheckpoints).status, SymptomStatus::Unknown);
}

TEST(SlowerCheckpoints, SameLatencyIsOk) {
    auto w = window(60, [](int i, IntervalRecord &r, auto &) {
        checkpoint_tick(r, i >= 20 && i < 40, 1);
        if (i == 20)
            r.checkpoints_started = 1, r.checkpoints_timed = 1;
        if (i == 39)
            r.checkpoint_sync_time_ms = 30;
    });
    const SymptomRow x = row(w, Symptom::SlowerCheckpoints);
    EXPECT_EQ(x.status, SymptomStatus::Ok);
    EXPECT_NEAR(x.value, 1, 0.01);
}

TEST(SlowerCheckpoints, SlowerInsideIsPresentImplicated) {
    auto w = window(60, [](int i, IntervalRecord &r, auto &) {
        checkpoint_tick(r, i >= 20 && i < 40, i >= 20 && i < 40 ? 6 : 1);
    });
    const SymptomRow x = row(w, Symptom::SlowerCheckpoints);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_EQ(x.storage_implicated, 1);
    EXPECT_NEAR(x.value, 6, 0.01);
}

TEST(SlowerCheckpoints, LongDataFileSyncIsPresentModestRatioWatch) {
    auto sync = window(60, [](int i, IntervalRecord &r, auto &) {
        checkpoint_tick(r, i >= 20 && i < 40, 1);
        if (i == 20)
            r.checkpoints_started = 1;
        if (i == 39)
            r.checkpoint_sync_time_ms = 3000;
    });
    const SymptomRow x = row(sync, Symptom::SlowerCheckpoints);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_NE(x.evidence.find("3000 ms per checkpoint"), std::string::npos) << x.evidence;
    auto modest = window(60, [](int i, IntervalRecord &r, auto &) {
        checkpoint_tick(r, i >= 20 && i < 40, i >= 20 && i < 40 ? 1.5 : 1);
    });
    EXPECT_EQ(row(modest, Symptom::SlowerCheckpoints).status, SymptomStatus::Watch);
}

// ---- replication_lag ----

ArenaEntry slot(uint16_t id, uint8_t flags, uint64_t lag, uint64_t spill_bytes = 0) {
    ArenaEntry e{};
    e.slot = SlotEntry{EntryKind::Slot, flags, id, spill_bytes ? 1u : 0u, lag, lag, spill_bytes};
    return e;
}

ArenaEntry walsender(uint32_t wait, uint32_t samples) {
    ArenaEntry e{};
    e.wait = WaitGroupEntry{EntryKind::WaitGroup,
                            BackendKind::Walsender,
                            BackendStateCode::Active,
                            0,
                            wait,
                            0,
                            samples,
                            {}};
    return e;
}

TEST(ReplicationLag, NoSlotIsOk) {
    const SymptomRow x =
        row(window(60, [](int, IntervalRecord &, auto &) {}), Symptom::ReplicationLag);
    EXPECT_EQ(x.status, SymptomStatus::Ok);
    EXPECT_FALSE(x.value_valid);
}

TEST(ReplicationLag, AnUnconsumedSlotIsPresentWithItsNameAndLag) {
    auto w = window(60, [](int i, IntervalRecord &r, std::vector<ArenaEntry> &e) {
        r.wal_position = 0x10000000 + uint64_t(i) * 2 * kMB;
        e.push_back(slot(7, kSlotLogical, uint64_t(i) * 2 * kMB));
    });
    const SymptomRow x = row(w, Symptom::ReplicationLag);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_EQ(x.storage_implicated, 0);  // nobody reads it: not the storage
    EXPECT_NE(x.evidence.find("sub_orders"), std::string::npos) << x.evidence;
    EXPECT_NE(x.evidence.find("118.0 MB behind"), std::string::npos) << x.evidence;
    EXPECT_DOUBLE_EQ(x.value, double(118 * kMB));
}

TEST(ReplicationLag, AConsumedSlotIsOkAStableBacklogWatch) {
    auto consumed = window(60, [](int i, IntervalRecord &r, std::vector<ArenaEntry> &e) {
        r.wal_position = 0x10000000 + uint64_t(i) * 2 * kMB;
        e.push_back(slot(7, kSlotLogical | kSlotActive, 64 * 1024));
    });
    EXPECT_EQ(row(consumed, Symptom::ReplicationLag).status, SymptomStatus::Ok);
    auto backlog = window(60, [](int i, IntervalRecord &r, std::vector<ArenaEntry> &e) {
        r.wal_position = 0x10000000 + uint64_t(i) * 2 * kMB;
        e.push_back(slot(7, kSlotLogical | kSlotActive, 40 * kMB));
    });
    EXPECT_EQ(row(backlog, Symptom::ReplicationLag).status, SymptomStatus::Watch);
}

TEST(ReplicationLag, AWalsenderReadingWalImplicatesStorage) {
    auto w = window(60, [](int i, IntervalRecord &r, std::vector<ArenaEntry> &e) {
        r.wal_position = 0x10000000 + uint64_t(i) * 2 * kMB;
        e.push_back(walsender(kWalRead, 1));
        e.push_back(slot(7, kSlotLogical | kSlotActive, uint64_t(i) * kMB + 20 * kMB));
    });
    const SymptomRow x = row(w, Symptom::ReplicationLag);
    EXPECT_EQ(x.status, SymptomStatus::Present);
    EXPECT_EQ(x.storage_implicated, 1);
    EXPECT_NE(x.evidence.find("100 % in WAL read"), std::string::npos) << x.evidence;
}

}  // namespace
}  // namespace pgsw
