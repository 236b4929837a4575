// The window answers (window.hpp) over synthetic history: ticks built with the real TickBuilder,
// appended to a real Ring and folded into minute roll-ups by the real RollupBuilder, the way the
// sampler does it, then planned, read and summarized as the SQL functions do.
#include <limits>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/latency_stats.hpp"
#include "core/ring.hpp"
#include "core/rollup.hpp"
#include "core/shared_state.hpp"
#include "core/tick_builder.hpp"
#include "core/window.hpp"

namespace pgsw {
namespace {

constexpr int64_t kSecond = 1000 * 1000;
constexpr int64_t kMinute = kRollupBucketUs;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;
// A minute-aligned TimestampTz (microseconds since 2000-01-01), in 2024.
constexpr int64_t kT0 = 13000000 * kMinute;
constexpr uint32_t kDb = 16384;
constexpr uint32_t kTiming = kFlagTrackIoTiming | kFlagTrackWalIoTiming;

// Raw wait_event_info values laid out as PostgreSQL does (class << 24 | event); the event
// numbers are illustrative, only the names (registered below) carry meaning.
constexpr uint32_t kCpu = 0;
constexpr uint32_t kDataFileRead = 0x0A000000u | 9;
constexpr uint32_t kDataFileWrite = 0x0A000000u | 12;
constexpr uint32_t kDataFileSync = 0x0A000000u | 11;
constexpr uint32_t kWalSync = 0x0A000000u | 73;
constexpr uint32_t kBufferIo = 0x08000000u | 5;
constexpr uint32_t kMessageQueueReceive = 0x08000000u | 40;
constexpr uint32_t kWalWriteLock = 0x01000000u | 8;
constexpr uint32_t kBufferMapping = 0x01000000u | 53;
constexpr uint32_t kLockRelation = 0x03000000u | 0;
constexpr uint32_t kLockTransactionId = 0x03000000u | 4;
constexpr uint32_t kClientRead = 0x06000000u | 0;
constexpr uint32_t kPgSleep = 0x09000000u | 3;
constexpr uint32_t kBgwriterMain = 0x05000000u | 3;
constexpr uint32_t kUnregistered = 0x0B000000u | 1;

const WaitNameTable &names() {
    static const WaitNameTable table = [] {
        WaitNameTable t;
        t.add(kDataFileRead, "IO", "DataFileRead");
        t.add(kDataFileWrite, "IO", "DataFileWrite");
        t.add(kDataFileSync, "IO", "DataFileSync");
        t.add(kWalSync, "IO", "WalSync");
        t.add(kBufferIo, "IPC", "BufferIo");
        t.add(kMessageQueueReceive, "IPC", "MessageQueueReceive");
        t.add(kWalWriteLock, "LWLock", "WALWrite");
        t.add(kBufferMapping, "LWLock", "BufferMapping");
        t.add(kLockRelation, "Lock", "relation");
        t.add(kLockTransactionId, "Lock", "transactionid");
        t.add(kClientRead, "Client", "ClientRead");
        t.add(kPgSleep, "Timeout", "PgSleep");
        t.add(kBgwriterMain, "Activity", "BgwriterMain");
        return t;
    }();
    return table;
}

// ---- building ticks ------------------------------------------------------------------------

// `n` processes in one wait, classified by the name table as the sampler would.
void add_procs(TickBuilder &t, uint32_t wait, uint32_t n, int64_t query_id = 0,
               BackendKind kind = BackendKind::ClientBackend,
               BackendStateCode state = BackendStateCode::Active, uint32_t db = kDb) {
    // As the sampler classifies: category, storage kind and role from the name.
    const WaitNameTable::Entry &e = names().find(wait);
    const WaitRole role = wait_role(e.type, e.event);
    for (uint32_t i = 0; i < n; ++i)
        t.add_sample(ProcSample{kind, state, e.wait_class.category, wait, db, query_id, role,
                                e.wait_class.kind});
}

// Relation reads by client backends (pg_stat_io: relation, normal, read).
void add_reads(TickBuilder &t, uint64_t count, uint64_t time_us) {
    t.add_io_delta(BackendKind::ClientBackend, IoObjectCode::Relation, IoContextCode::Normal,
                   IoOpCode::Read, {count, time_us, count * 8192});
}

// WAL syncs from pg_stat_wal (16/17).
void add_syncs(TickBuilder &t, uint64_t count, uint64_t time_us) {
    t.add_wal({}, {count, time_us, 0});
}

// The sampler, minus PostgreSQL: one tick ring, one roll-up ring, and the roll-up builder that
// publishes a minute when the first tick of the next one arrives.
class Sampler {
  public:
    explicit Sampler(uint64_t tick_records = 4096, uint64_t rollup_records = 64,
                     int64_t interval_us = kSecond, int64_t start_us = kT0,
                     uint64_t partial_entries = kPartialEntries)
        : tick_memory_(words(tick_records, tick_records * 32)),
          rollup_memory_(words(rollup_records, rollup_records * 512)),
          partial_memory_(words(kPartialRecords, partial_entries)),
          ticks(Ring::create(tick_memory_.data(), tick_records, tick_records * 32)),
          rollups(Ring::create(rollup_memory_.data(), rollup_records, rollup_records * 512)),
          partials(Ring::create(partial_memory_.data(), kPartialRecords, partial_entries)),
          interval_us_(interval_us),
          now(start_us) {}
    Sampler(const Sampler &) = delete;
    Sampler &operator=(const Sampler &) = delete;

    // One tick of `interval_us` ending `interval_us` after the previous one; `fill` adds its
    // samples and I/O. Returns the record as appended.
    template <typename Fill>
    IntervalRecord tick(uint32_t flags, Fill &&fill) {
        builder_.begin(now, now + interval_us_, flags);
        fill(builder_);
        builder_.finish(7);
        append(builder_.record(), builder_.entries());
        now += interval_us_;
        ++ticks_appended;
        return builder_.record();
    }
    IntervalRecord tick(uint32_t flags = kTiming) {
        return tick(flags, [](TickBuilder &) {});
    }

    // What sql_answer.cpp tells plan_window.
    RetentionFacts facts() const {
        RetentionFacts f{};
        f.tick_retention_us = int64_t(ticks.record_capacity() - 1) * interval_us_;
        f.rollup_retention_us = int64_t(rollups.record_capacity() - 1) * kRollupBucketUs;
        IntervalRecord oldest;
        for (uint64_t no = ticks.first_readable(); no < ticks.end(); ++no)
            if (ticks.read_record(no, oldest) == ReadStatus::Ok) {
                f.have_ticks = true, f.oldest_tick_start_us = oldest.start_us;
                break;
            }
        for (uint64_t no = rollups.first_readable(); no < rollups.end(); ++no)
            if (rollups.read_record(no, oldest) == ReadStatus::Ok) {
                f.have_rollups = true, f.oldest_rollup_start_us = oldest.start_us;
                break;
            }
        return f;
    }

    WindowRecords window(int64_t window_us, WindowPlan *plan_out = nullptr) const {
        const WindowPlan plan = plan_window(now, window_us, facts());
        if (plan_out != nullptr)
            *plan_out = plan;
        return read_window(ticks, rollups, plan);
    }

  private:
    static size_t words(uint64_t records, uint64_t arena) {
        return Ring::bytes_needed(records, arena) / sizeof(uint64_t) + 8;
    }
    template <typename Entries>  // std::vector or std::pmr::vector
    void append(const IntervalRecord &r, const Entries &entries) {
        ticks.append(r, entries.data(), entries.size());
        if (rollup_.starts_new_bucket(r)) {
            rollup_.finish();
            rollups.append(rollup_.record(), rollup_.entries().data(), rollup_.entries().size());
            ++rollups_published;
        }
        rollup_.add(r, entries.data(), entries.size());
        // As the sampler does: the minute so far, once per whole second of sample time.
        if (publish_partials && r.end_us / kSecond != partial_second_) {
            partial_second_ = r.end_us / kSecond;
            rollup_.snapshot();
            partials.append(rollup_.record(), rollup_.entries().data(), rollup_.entries().size());
        }
    }

    std::vector<uint64_t> tick_memory_, rollup_memory_, partial_memory_;  // 8-byte aligned
    int64_t partial_second_ = 0;

  public:
    Ring ticks, rollups, partials;
    bool publish_partials = true;
    uint64_t ticks_appended = 0, rollups_published = 0;

  private:
    TickBuilder builder_{256};
    RollupBuilder rollup_{256, 256};
    int64_t interval_us_;

  public:
    int64_t now;  // end of the last tick
};

// ---- brute-force references ----------------------------------------------------------------

struct Point {
    double latency_us;
    double weight;
};

// q(p) = min x with cumulative weight >= p * W (latency_stats.hpp's definition).
double lower_quantile(std::vector<Point> points, double p) {
    std::sort(points.begin(), points.end(),
              [](const Point &a, const Point &b) { return a.latency_us < b.latency_us; });
    double total = 0;
    for (const Point &pt : points)
        total += pt.weight;
    const double threshold = total * p;
    double cumulative = 0;
    for (const Point &pt : points) {
        cumulative += pt.weight;
        if (cumulative >= threshold)
            return pt.latency_us;
    }
    return points.back().latency_us;
}

double max_latency(const std::vector<Point> &points) {
    double m = 0;
    for (const Point &pt : points)
        m = std::max(m, pt.latency_us);
    return m;
}

// Deterministic pseudo-random numbers (splitmix64), the same on every platform.
class Random {
  public:
    explicit Random(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    uint64_t below(uint64_t n) { return next() % n; }
    // Log-uniform in [lo, hi).
    double log_uniform(double lo, double hi) {
        const double u = double(next() >> 11) / double(uint64_t{1} << 53);
        return lo * std::pow(hi / lo, u);
    }

  private:
    uint64_t state_;
};

uint64_t sum_ticks(const WindowRecords &w) {
    uint64_t n = 0;
    for (const RecordCopy &c : w.rollups)
        n += c.record.ticks;
    for (const RecordCopy &c : w.ticks)
        n += c.record.ticks;
    return n;
}

// ---- WaitNameTable and distinct_wait_infos -------------------------------------------------

// 10 s of 20 ms ticks whose CPU was read once a second (io_read_interval): ten readings, each
// the CPU time of 2 cores over a second. The cores are 2, not 2 x 500 / 10.
TEST(WindowMachine, CoresFromReadingsThatSpanSeveralTicks) {
    IntervalRecord t{};
    t.ticks = 500;
    t.ticks_cpu = 10;
    t.cpu_total_us = 2 * 10 * kSecond;
    t.cpu_busy_us = 5 * kSecond;
    t.client_sessions = 500 * 16;
    const MachineFacts estimated = machine_of_totals(t, 10.0, 0);
    ASSERT_TRUE(estimated.cpu_measured);
    EXPECT_NEAR(estimated.cpu_cores, 2.0, 1e-9);
    EXPECT_NEAR(estimated.cpu_busy_fraction, 0.25, 1e-9);
    EXPECT_NEAR(estimated.client_sessions, 16.0, 1e-9);
    EXPECT_NEAR(machine_of_totals(t, 10.0, 2).cpu_cores, 2.0, 1e-9);  // the worker's count wins
    t.ticks_cpu = 0, t.cpu_total_us = 0;
    EXPECT_FALSE(machine_of_totals(t, 10.0, 2).cpu_measured);
}

TEST(WindowNames, ResolvesAndClassifies) {
    const WaitNameTable &t = names();
    EXPECT_EQ(t.find(kCpu).type, "CPU");
    EXPECT_EQ(t.find(kCpu).wait_class.category, WaitCategory::Cpu);
    EXPECT_EQ(t.find(kDataFileRead).event, "DataFileRead");
    EXPECT_EQ(t.find(kDataFileRead).wait_class.category, WaitCategory::Storage);
    EXPECT_EQ(t.find(kDataFileRead).wait_class.kind, StorageKind::Read);
    EXPECT_EQ(t.find(kWalWriteLock).wait_class.kind, StorageKind::Wal);
    EXPECT_EQ(t.find(kBufferMapping).wait_class.category, WaitCategory::Lock);
    EXPECT_EQ(t.find(kClientRead).wait_class.category, WaitCategory::Idle);
    EXPECT_EQ(t.find(kMessageQueueReceive).wait_class.category, WaitCategory::Other);
    // Unknown values resolve to an empty name of category other.
    EXPECT_EQ(t.find(kUnregistered).type, "");
    EXPECT_EQ(t.find(kUnregistered).wait_class.category, WaitCategory::Other);
}

TEST(WindowNames, AddToleratesNullNamesAndReplaces) {
    WaitNameTable t;
    t.add(kDataFileRead, nullptr, nullptr);
    EXPECT_EQ(t.find(kDataFileRead).type, "");
    // No type name means "no wait" to classify_wait_class: CPU.
    EXPECT_EQ(t.find(kDataFileRead).wait_class.category, WaitCategory::Cpu);
    t.add(kDataFileRead, "IO", "DataFileRead");
    EXPECT_EQ(t.find(kDataFileRead).wait_class.category, WaitCategory::Storage);
}

TEST(WindowNames, DistinctWaitInfosAreSortedAndUnique) {
    Sampler s;
    for (int i = 0; i < 70; ++i)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kWalSync, 2);
            add_procs(t, kDataFileRead, 1);
            add_procs(t, kCpu, 1);
        });
    s.tick(kTiming, [](TickBuilder &t) { add_procs(t, kLockRelation, 1); });
    // Roll-ups for minute 0 and the ticks of minute 1 together.
    WindowRecords w;
    w.rollups = s.rollups.read_since(0, true);
    ASSERT_EQ(w.rollups.size(), 1u);
    w.ticks = s.ticks.read_since(w.rollups.back().record.end_us, true);
    EXPECT_EQ(distinct_wait_infos(w),
              (std::vector<uint32_t>{kCpu, kLockRelation, kDataFileRead, kWalSync}));
    EXPECT_TRUE(distinct_wait_infos(WindowRecords{}).empty());
}

// ---- plan_window ---------------------------------------------------------------------------

RetentionFacts retention(int64_t now) {
    RetentionFacts f{};
    f.tick_retention_us = kHour;
    f.rollup_retention_us = 7 * kDay;
    f.have_ticks = true;
    f.oldest_tick_start_us = now - kHour + kSecond;
    f.have_rollups = true;
    f.oldest_rollup_start_us = now - 3 * kDay;
    return f;
}

TEST(WindowPlan, WindowWithinTickRetentionUsesTicks) {
    const int64_t now = kT0 + 5 * kDay;
    const WindowPlan plan = plan_window(now, 10 * kMinute, retention(now));
    EXPECT_EQ(plan.end_us, now);
    EXPECT_EQ(plan.start_us, now - 10 * kMinute);
    EXPECT_FALSE(plan.clamped);
    EXPECT_FALSE(plan.use_rollups);
}

TEST(WindowPlan, TicksReachingExactlyToTheStartAreEnough) {
    const int64_t now = kT0 + 5 * kDay;
    RetentionFacts f = retention(now);
    f.oldest_tick_start_us = now - 10 * kMinute;
    EXPECT_FALSE(plan_window(now, 10 * kMinute, f).use_rollups);
    EXPECT_TRUE(plan_window(now, 10 * kMinute + 1, f).use_rollups);
}

TEST(WindowPlan, OlderStartUsesRollupsWhenTheyReachFurther) {
    const int64_t now = kT0 + 5 * kDay;
    const WindowPlan plan = plan_window(now, kDay, retention(now));
    EXPECT_EQ(plan.start_us, now - kDay);
    EXPECT_EQ(plan.end_us, now);
    EXPECT_FALSE(plan.clamped);
    EXPECT_TRUE(plan.use_rollups);
    // Roll-ups that do not reach the start either are still the longer history.
    EXPECT_TRUE(plan_window(now, 5 * kDay, retention(now)).use_rollups);
}

TEST(WindowPlan, OlderStartStaysOnTicksWhenRollupsReachNoFurther) {
    // Just after a restart: the ticks go back further than the first roll-up.
    const int64_t now = kT0 + 5 * kDay;
    RetentionFacts f = retention(now);
    f.oldest_tick_start_us = now - 90 * kSecond;
    f.oldest_rollup_start_us = now - 30 * kSecond;
    const WindowPlan plan = plan_window(now, 10 * kMinute, f);
    EXPECT_FALSE(plan.use_rollups);
    EXPECT_EQ(plan.start_us, now - 10 * kMinute);
    f.oldest_rollup_start_us = f.oldest_tick_start_us;  // equal: no further
    EXPECT_FALSE(plan_window(now, 10 * kMinute, f).use_rollups);
}

TEST(WindowPlan, OnlyRollupsUsesRollups) {
    const int64_t now = kT0 + 5 * kDay;
    RetentionFacts f = retention(now);
    f.have_ticks = false;
    EXPECT_TRUE(plan_window(now, 1 * kMinute, f).use_rollups);
}

TEST(WindowPlan, LongerThanRetentionIsClamped) {
    const int64_t now = kT0 + 50 * kDay;
    const WindowPlan plan = plan_window(now, 30 * kDay, retention(now));
    EXPECT_TRUE(plan.clamped);
    EXPECT_EQ(plan.start_us, now - 7 * kDay);
    EXPECT_EQ(plan.end_us, now);
    EXPECT_TRUE(plan.use_rollups);
    // Exactly the retention is not clamped.
    EXPECT_FALSE(plan_window(now, 7 * kDay, retention(now)).clamped);
    // The retention is the longer of the two rings.
    RetentionFacts f = retention(now);
    f.tick_retention_us = 10 * kDay;
    const WindowPlan longer = plan_window(now, 30 * kDay, f);
    EXPECT_TRUE(longer.clamped);
    EXPECT_EQ(longer.start_us, now - 10 * kDay);
}

TEST(WindowPlan, HugeWindowDoesNotOverflow) {
    const int64_t now = kT0;
    const WindowPlan plan = plan_window(now, INT64_MAX, retention(now));
    EXPECT_TRUE(plan.clamped);
    EXPECT_EQ(plan.start_us, now - 7 * kDay);
}

TEST(WindowPlan, NoDataAtAll) {
    const int64_t now = kT0;
    RetentionFacts f{};
    f.tick_retention_us = kHour;
    f.rollup_retention_us = 7 * kDay;
    const WindowPlan plan = plan_window(now, 5 * kMinute, f);
    EXPECT_FALSE(plan.use_rollups);
    EXPECT_FALSE(plan.clamped);
    EXPECT_EQ(plan.start_us, now - 5 * kMinute);
    EXPECT_EQ(plan.end_us, now);

    Sampler s;
    WindowPlan empty_plan;
    const WindowRecords w = s.window(5 * kMinute, &empty_plan);
    EXPECT_FALSE(empty_plan.use_rollups);
    EXPECT_TRUE(w.ticks.empty());
    EXPECT_TRUE(w.rollups.empty());
}

// ---- read_window ---------------------------------------------------------------------------

// 630 one-second ticks from kT0: minute 0 has ticks ending at 1..59 s, minutes 1-9 have 60,
// minute 10 (ticks ending at 600..630 s) is still being summed. The tick ring keeps 99 ticks.
class WindowRead : public ::testing::Test {
  protected:
    void SetUp() override {
        for (uint64_t k = 1; k <= 630; ++k) {
            s.tick(kTiming, [&](TickBuilder &t) {
                add_procs(t, kDataFileRead, 1 + k % 3, int64_t(100 + k % 2));
                add_procs(t, kCpu, 1);
                add_reads(t, k, 100 * k);
            });
            reads += k;
        }
    }
    Sampler s{100, 64};
    uint64_t reads = 0;
};

TEST_F(WindowRead, RollupsThenNewerTicksCountEveryTickOnce) {
    ASSERT_EQ(s.rollups_published, 10u);
    WindowPlan plan;
    const WindowRecords w = s.window(20 * kMinute, &plan);
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_EQ(w.rollups.size(), 10u);
    ASSERT_EQ(w.ticks.size(), 31u);
    EXPECT_GT(w.ticks.front().record.end_us, w.rollups.back().record.end_us);
    EXPECT_EQ(w.ticks.front().record.end_us, kT0 + 600 * kSecond);
    EXPECT_EQ(sum_ticks(w), s.ticks_appended);

    const WindowSummary sum = summarize(w, names());
    EXPECT_EQ(sum.ticks, 630u);
    EXPECT_DOUBLE_EQ(sum.covered_seconds, 630.0);
    EXPECT_DOUBLE_EQ(covered_seconds(w), 630.0);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, double(reads) / 630.0);
    uint64_t history_reads = 0, history_ticks = 0;
    for (const HistoryRow &row : history(w, 0))
        history_reads += row.totals.reads, history_ticks += row.totals.ticks;
    EXPECT_EQ(history_reads, reads);
    EXPECT_EQ(history_ticks, 630u);
    // 2 backends on average in storage waits (1 + k%3), one on CPU.
    EXPECT_EQ(sum.backend_samples, 630u * 3u);
    uint64_t query_samples = 0;
    for (const QueryRow &q : query_profile(w))
        query_samples += q.samples;
    EXPECT_EQ(query_samples, 630u * 2u);
}

TEST_F(WindowRead, WindowStartingInsideTheRollupsTakesWholeMinutes) {
    // Start at 330 s: the roll-up of minute 5 (ticks ending at 300..359 s, starting at 299 s)
    // is the first that ends after it; minutes 5-9 and the 31 newer ticks.
    WindowPlan plan;
    const WindowRecords w = s.window(5 * kMinute, &plan);
    ASSERT_TRUE(plan.use_rollups);
    EXPECT_EQ(plan.start_us, kT0 + 330 * kSecond);
    ASSERT_EQ(w.rollups.size(), 5u);
    EXPECT_EQ(w.rollups.front().record.start_us, kT0 + 299 * kSecond);
    EXPECT_EQ(sum_ticks(w), 5u * 60u + 31u);
    EXPECT_DOUBLE_EQ(covered_seconds(w), 331.0);
}

TEST_F(WindowRead, ShortWindowReadsTicksOnly) {
    WindowPlan plan;
    const WindowRecords w = s.window(30 * kSecond, &plan);
    EXPECT_FALSE(plan.use_rollups);
    EXPECT_TRUE(w.rollups.empty());
    ASSERT_EQ(w.ticks.size(), 30u);
    EXPECT_EQ(w.ticks.back().record.end_us, s.now);
    EXPECT_EQ(summarize(w, names()).ticks, 30u);
}

TEST_F(WindowRead, RollupsOlderThanTheStartAreLeftOut) {
    // The plan asks for roll-ups, but none ends after the start: ticks only, from the start.
    WindowPlan plan;
    plan.end_us = s.now;
    plan.start_us = s.now - 20 * kSecond;
    plan.use_rollups = true;
    const WindowRecords w = read_window(s.ticks, s.rollups, plan);
    EXPECT_TRUE(w.rollups.empty());
    EXPECT_EQ(w.ticks.size(), 20u);
}

TEST_F(WindowRead, StreamingFromTheRingsGivesTheSameAnswersAsTheCopy) {
    // Each answer reads only the entry kinds it needs straight from the rings (RingWindow);
    // the copy (read_window) holds every kind. Both must agree exactly.
    for (const int64_t window_us : {30 * kSecond, 5 * kMinute, 20 * kMinute}) {
        SCOPED_TRACE(window_us);
        const WindowPlan plan = plan_window(s.now, window_us, s.facts());
        const RingWindow ring(s.ticks, s.rollups, plan);
        const WindowRecords copy = read_window(s.ticks, s.rollups, plan);
        EXPECT_EQ(distinct_wait_infos(ring), distinct_wait_infos(copy));
        const WindowSummary a = summarize(ring, names()), b = summarize(copy, names());
        EXPECT_EQ(a.ticks, b.ticks);
        EXPECT_EQ(a.backend_samples, b.backend_samples);
        EXPECT_EQ(a.top_storage_wait, b.top_storage_wait);
        EXPECT_EQ(a.reads.p50_us, b.reads.p50_us);
        EXPECT_EQ(a.reads.p99_us, b.reads.p99_us);
        EXPECT_EQ(a.reads.avg_us, b.reads.avg_us);
        EXPECT_EQ(a.diagnosis.storage_bound_score, b.diagnosis.storage_bound_score);
        EXPECT_EQ(a.diagnosis.hint, b.diagnosis.hint);
        EXPECT_EQ(covered_seconds(ring), covered_seconds(copy));
        EXPECT_EQ(wait_event_profile(ring, names()).size(),
                  wait_event_profile(copy, names()).size());
        EXPECT_EQ(io_latency(ring).size(), io_latency(copy).size());
        EXPECT_EQ(history(ring, 0).size(), history(copy, 0).size());
        const auto qa = query_profile(ring), qb = query_profile(copy);
        ASSERT_EQ(qa.size(), qb.size());
        for (size_t i = 0; i < qa.size(); ++i)
            EXPECT_EQ(qa[i].samples, qb[i].samples);
    }
}

TEST_F(WindowRead, RingWindowKeepsItsRecordsWhenNewTicksArrive) {
    const WindowPlan plan = plan_window(s.now, 20 * kMinute, s.facts());
    const RingWindow w(s.ticks, s.rollups, plan);
    const uint64_t before = summarize(w, names()).ticks;
    s.tick();
    s.tick();
    EXPECT_EQ(summarize(w, names()).ticks, before);
}

// ---- the current minute's partial roll-up ----------------------------------------------------

// Tick records a pass visits (roll-ups and the partial are not ticks).
uint64_t ticks_visited(const RecordSource &w) {
    uint64_t n = 0;
    w.for_each(kNoEntries, [&](const RecordCopy &, bool rollup) { n += rollup ? 0 : 1; });
    return n;
}

// The answers that may use the partial must count exactly what the ticks count; percentiles of
// the headline series move by at most one histogram bin (rollup.hpp: <= 4.5 %).
void expect_same_answers(const RecordSource &with, const RecordSource &without) {
    const WindowSummary a = summarize(with, names()), b = summarize(without, names());
    EXPECT_EQ(a.ticks, b.ticks);
    EXPECT_EQ(a.backend_samples, b.backend_samples);
    // Sums of seconds in another order: equal to rounding.
    EXPECT_NEAR(a.covered_seconds, b.covered_seconds, 1e-9 * b.covered_seconds);
    EXPECT_NEAR(a.reads_per_s, b.reads_per_s, 1e-9 * b.reads_per_s);
    EXPECT_DOUBLE_EQ(a.reads.avg_us, b.reads.avg_us);
    EXPECT_NEAR(a.reads.p50_us, b.reads.p50_us, 0.045 * b.reads.p50_us);
    EXPECT_NEAR(a.reads.p99_us, b.reads.p99_us, 0.045 * b.reads.p99_us);
    EXPECT_EQ(a.top_storage_wait, b.top_storage_wait);
    EXPECT_DOUBLE_EQ(a.diagnosis.storage_bound_score, b.diagnosis.storage_bound_score);
    const auto ea = wait_event_profile(with, names()), eb = wait_event_profile(without, names());
    ASSERT_EQ(ea.size(), eb.size());
    for (size_t i = 0; i < ea.size(); ++i) {
        EXPECT_EQ(ea[i].samples, eb[i].samples);
        EXPECT_DOUBLE_EQ(ea[i].share_pct, eb[i].share_pct);
    }
    const auto qa = query_profile(with), qb = query_profile(without);
    ASSERT_EQ(qa.size(), qb.size());
    for (size_t i = 0; i < qa.size(); ++i)
        EXPECT_EQ(qa[i].samples, qb[i].samples);
}

// 10 ms ticks for 2 min 30.5 s: two finished minutes, then 30.5 s of the third; the tick ring
// (7,000 ticks = 70 s) does not reach back 5 minutes, so the window uses roll-ups.
class PartialRollup : public ::testing::Test {
  protected:
    static constexpr int64_t kInterval = 10 * 1000;
    void run(Sampler &sampler, int n_ticks) {
        for (int k = 1; k <= n_ticks; ++k)
            sampler.tick(kTiming, [&](TickBuilder &t) {
                add_procs(t, kDataFileRead, 1 + k % 3, int64_t(100 + k % 2));
                add_procs(t, kCpu, 1 + k % 2);
                if (k % 10 == 0)  // counters read every 10th tick (io_read_interval)
                    add_reads(t, 10 + k % 7, (10 + k % 7) * (200 + 37 * (k % 50)));
            });
    }
    Sampler s{7000, 64, kInterval};
    void SetUp() override { run(s, 15050); }
    PartialSource partial() const { return {&s.partials, 0}; }
};

TEST_F(PartialRollup, ReplacesTheCurrentMinutesTicksAndCountsTheSame) {
    const WindowPlan plan = plan_window(s.now, 5 * kMinute, s.facts());
    ASSERT_TRUE(plan.use_rollups);
    const RingWindow with(s.ticks, s.rollups, plan, partial());
    const RingWindow without(s.ticks, s.rollups, plan);
    EXPECT_TRUE(with.uses_partial());
    EXPECT_FALSE(without.uses_partial());
    // The partial ends at the last whole second: at most one second of ticks after it.
    EXPECT_LE(ticks_visited(with), 100u);
    EXPECT_GT(ticks_visited(without), 3000u);
    expect_same_answers(with, without);
    EXPECT_EQ(summarize(with, names()).ticks, s.ticks_appended);
}

TEST_F(PartialRollup, AtEveryPointOfTheMinuteNoTickIsLostOrCountedTwice) {
    // Walk through a minute boundary and a second boundary, tick by tick.
    for (int k = 0; k < 250; ++k) {
        run(s, 7);
        const WindowPlan plan = plan_window(s.now, 5 * kMinute, s.facts());
        const RingWindow with(s.ticks, s.rollups, plan, partial());
        const RingWindow without(s.ticks, s.rollups, plan);
        ASSERT_EQ(summarize(with, names()).ticks, summarize(without, names()).ticks) << k;
        ASSERT_NEAR(covered_seconds(with), covered_seconds(without), 1e-9) << k;
    }
}

TEST_F(PartialRollup, KeepsTheStartOfAMinuteTheTickRingNoLongerHolds) {
    // A 2,000-tick ring holds 20 s at 10 ms: without the partial, the first 10.5 s of the
    // current minute would be missing from every window longer than the ring.
    Sampler small{2000, 64, kInterval};
    run(small, 15050);
    const WindowPlan plan = plan_window(small.now, 5 * kMinute, small.facts());
    EXPECT_EQ(summarize(RingWindow(small.ticks, small.rollups, plan, {&small.partials, 0}), names())
                  .ticks,
              15050u);
    EXPECT_EQ(summarize(RingWindow(small.ticks, small.rollups, plan), names()).ticks,
              15050u - 1052u);  // 1,999 readable ticks of the 3,051 since 2:00
}

TEST_F(PartialRollup, StalePartialOfAFinishedMinuteIsLeftOut) {
    // The sampler stops publishing partials; the minute that ends leaves the newest partial
    // behind (it starts before the last roll-up's end): the window reads ticks instead.
    s.publish_partials = false;
    run(s, 3000);  // crosses into the next minute
    const WindowPlan plan = plan_window(s.now, 5 * kMinute, s.facts());
    const RingWindow with(s.ticks, s.rollups, plan, partial());
    EXPECT_FALSE(with.uses_partial());
    expect_same_answers(with, RingWindow(s.ticks, s.rollups, plan));
}

TEST_F(PartialRollup, PartialOlderThanTheLastResetIsLeftOut) {
    const WindowPlan plan = plan_window(s.now, 5 * kMinute, s.facts());
    EXPECT_FALSE(RingWindow(s.ticks, s.rollups, plan, {&s.partials, s.now}).uses_partial());
    EXPECT_TRUE(
        RingWindow(s.ticks, s.rollups, plan, {&s.partials, s.now - kSecond}).uses_partial());
}

TEST_F(PartialRollup, WindowStartingInsideTheCurrentMinuteReadsTicks) {
    WindowPlan plan;
    plan.end_us = s.now;
    plan.start_us = s.now - 20 * kSecond;
    plan.use_rollups = true;
    const RingWindow with(s.ticks, s.rollups, plan, partial());
    EXPECT_FALSE(with.uses_partial());
    EXPECT_EQ(ticks_visited(with), 2000u);
}

TEST_F(PartialRollup, ShortWindowOnTicksNeverUsesIt) {
    const WindowPlan plan = plan_window(s.now, 30 * kSecond, s.facts());
    ASSERT_FALSE(plan.use_rollups);
    EXPECT_FALSE(RingWindow(s.ticks, s.rollups, plan, partial()).uses_partial());
}

TEST(PartialRollupCut, PartialCutForRoomIsLeftOut) {
    // A partial ring whose records hold at most 4 entries: the partial is cut and flagged.
    Sampler s{4000, 64, 10 * 1000, kT0, 8};
    for (int k = 1; k <= 7000; ++k)
        s.tick(kTiming, [&](TickBuilder &t) {
            for (uint32_t db = 1; db <= 6; ++db)
                add_procs(t, kDataFileRead, 1, 0, BackendKind::ClientBackend,
                          BackendStateCode::Active, db);
        });
    const WindowPlan plan = plan_window(s.now, 5 * kMinute, s.facts());
    ASSERT_TRUE(plan.use_rollups);
    const RingWindow with(s.ticks, s.rollups, plan, {&s.partials, 0});
    EXPECT_FALSE(with.uses_partial());
    EXPECT_EQ(summarize(with, names()).ticks, 7000u);
}

// ---- summarize on ticks --------------------------------------------------------------------

TEST(WindowSummary, RatesAverageAndPercentilesMatchBruteForce) {
    Sampler s;
    Random rnd(42);
    std::vector<Point> read_points, sync_points;
    uint64_t reads = 0, read_time = 0, syncs = 0, sync_time = 0;
    const int kTicks = 300;
    for (int k = 0; k < kTicks; ++k) {
        // Some ticks without reads; weights vary over two orders of magnitude.
        const uint64_t n_reads = rnd.below(7) == 0 ? 0 : 1 + rnd.below(400);
        const uint64_t t_reads =
            n_reads ? uint64_t(double(n_reads) * rnd.log_uniform(80, 30000)) : 0;
        const uint64_t n_syncs = 1 + rnd.below(50);
        const uint64_t t_syncs = uint64_t(double(n_syncs) * rnd.log_uniform(200, 8000));
        s.tick(kTiming, [&](TickBuilder &t) {
            add_procs(t, kDataFileRead, 2);
            add_procs(t, kCpu, 1);
            add_reads(t, n_reads, t_reads);
            add_syncs(t, n_syncs, t_syncs);
        });
        if (n_reads)
            read_points.push_back({double(t_reads) / double(n_reads), double(n_reads)});
        sync_points.push_back({double(t_syncs) / double(n_syncs), double(n_syncs)});
        reads += n_reads, read_time += t_reads, syncs += n_syncs, sync_time += t_syncs;
    }
    const WindowRecords w = s.window(kHour);
    ASSERT_EQ(w.ticks.size(), size_t(kTicks));
    const WindowSummary sum = summarize(w, names());

    EXPECT_EQ(sum.ticks, uint64_t(kTicks));
    EXPECT_DOUBLE_EQ(sum.covered_seconds, double(kTicks));
    EXPECT_DOUBLE_EQ(sum.reads_per_s, double(reads) / kTicks);
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs_per_s, double(syncs) / kTicks);

    ASSERT_TRUE(sum.reads.valid);
    EXPECT_FALSE(sum.reads.timing_missing);
    EXPECT_DOUBLE_EQ(sum.reads.avg_us, double(read_time) / double(reads));
    EXPECT_DOUBLE_EQ(sum.reads.p50_us, lower_quantile(read_points, 0.50));
    EXPECT_DOUBLE_EQ(sum.reads.p95_us, lower_quantile(read_points, 0.95));
    EXPECT_DOUBLE_EQ(sum.reads.p99_us, lower_quantile(read_points, 0.99));
    EXPECT_DOUBLE_EQ(sum.reads.max_us, max_latency(read_points));
    EXPECT_EQ(sum.reads.intervals, read_points.size());
    EXPECT_LT(sum.reads.p50_us, sum.reads.p95_us);
    EXPECT_LT(sum.reads.p95_us, sum.reads.p99_us);

    ASSERT_TRUE(sum.wal_fsyncs.valid);
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs.avg_us, double(sync_time) / double(syncs));
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs.p50_us, lower_quantile(sync_points, 0.50));
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs.p95_us, lower_quantile(sync_points, 0.95));
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs.p99_us, lower_quantile(sync_points, 0.99));
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs.max_us, max_latency(sync_points));

    EXPECT_EQ(sum.backend_samples, uint64_t(3 * kTicks));
    EXPECT_DOUBLE_EQ(sum.active_backends_avg, 3.0);
    EXPECT_EQ(sum.track_io_timing, 1);
    EXPECT_EQ(sum.track_wal_io_timing, 1);
}

TEST(WindowSummary, StorageBoundProfile) {
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kDataFileRead, 5);
            add_procs(t, kWalSync, 1);
            add_procs(t, kCpu, 1);
            add_procs(t, kLockRelation, 1);
            // Not load: COPY FROM STDIN waiting for the client, idle sessions, pg_sleep,
            // and background processes.
            add_procs(t, kClientRead, 2);
            add_procs(t, kClientRead, 20, 0, BackendKind::ClientBackend, BackendStateCode::Idle);
            add_procs(t, kPgSleep, 1);
            add_procs(t, kDataFileSync, 1, 0, BackendKind::Checkpointer, BackendStateCode::None, 0);
            add_reads(t, 200, 200 * 2500);
            add_syncs(t, 20, 20 * 1000);
        });
    const WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.ticks, 10u);
    EXPECT_EQ(sum.backend_samples, 80u);
    EXPECT_DOUBLE_EQ(sum.active_backends_avg, 8.0);
    const Diagnosis &d = sum.diagnosis;
    EXPECT_TRUE(d.score_valid);
    EXPECT_TRUE(d.pct_valid);
    EXPECT_EQ(d.verdict, Verdict::StorageBound);
    // Per tick: 5 read waits at 2.5 ms would take 0.1 ms (0.2 samples kept), the WAL sync at
    // 1 ms 0.1 ms (0.1 kept), CPU and lock stay: 2.3 of 8 kept.
    EXPECT_DOUBLE_EQ(d.storage_bound_score, 71.3);
    EXPECT_DOUBLE_EQ(d.storage_pct, 75.0);
    EXPECT_DOUBLE_EQ(d.cpu_pct, 12.5);
    EXPECT_DOUBLE_EQ(d.lock_pct, 12.5);
    EXPECT_DOUBLE_EQ(d.other_pct, 0.0);
    EXPECT_EQ(d.active_samples, 80u);
    EXPECT_EQ(sum.top_storage_wait, "IO:DataFileRead");
    // Read waits dominate and read timing is known: the hint quotes the read latency.
    EXPECT_NE(d.hint.find("Page reads average 2.50 ms"), std::string::npos) << d.hint;
}

TEST(WindowSummary, StorageBoundOnWalNamesTheWalWait) {
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kWalWriteLock, 3);  // group commit queue: storage, WAL
            add_procs(t, kWalSync, 2);
            add_procs(t, kCpu, 1);
            add_syncs(t, 40, 40 * 4000);
        });
    const WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.diagnosis.verdict, Verdict::StorageBound);
    EXPECT_EQ(sum.top_storage_wait, "LWLock:WALWrite");
    EXPECT_NE(sum.diagnosis.hint.find("WAL flushes average 4.00 ms"), std::string::npos)
        << sum.diagnosis.hint;
}

TEST(WindowSummary, CpuBoundProfile) {
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kCpu, 4);
            add_procs(t, kBufferIo, 1);  // another backend's read: storage
        });
    const WindowSummary sum = summarize(s.window(kHour), names());
    const Diagnosis &d = sum.diagnosis;
    EXPECT_EQ(d.verdict, Verdict::CpuBound);
    // A fifth of the time in read waits whose latency no counter measured: no score.
    EXPECT_FALSE(d.score_valid);
    EXPECT_DOUBLE_EQ(d.cpu_pct, 80.0);
    EXPECT_EQ(sum.top_storage_wait, "IPC:BufferIo");
    EXPECT_FALSE(sum.reads.valid);
    EXPECT_FALSE(sum.reads.timing_missing);  // no reads at all
}

TEST(WindowSummary, LockBoundProfile) {
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kLockTransactionId, 4);
            add_procs(t, kBufferMapping, 1);
            add_procs(t, kCpu, 3);
            add_procs(t, kDataFileRead, 2);
        });
    const Diagnosis d = summarize(s.window(kHour), names()).diagnosis;
    EXPECT_EQ(d.verdict, Verdict::LockBound);
    EXPECT_DOUBLE_EQ(d.lock_pct, 50.0);
    EXPECT_DOUBLE_EQ(d.cpu_pct, 30.0);
    EXPECT_DOUBLE_EQ(d.storage_pct, 20.0);
}

TEST(WindowSummary, MixedProfile) {
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kLockRelation, 3);
            add_procs(t, kCpu, 3);
            add_procs(t, kDataFileRead, 2);
            add_procs(t, kMessageQueueReceive, 2);
        });
    const Diagnosis d = summarize(s.window(kHour), names()).diagnosis;
    EXPECT_EQ(d.verdict, Verdict::Mixed);
    EXPECT_DOUBLE_EQ(d.other_pct, 20.0);
}

TEST(WindowSummary, FewerThanTenSamplesIsIdle) {
    Sampler s;
    for (int k = 0; k < 3; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kDataFileRead, 3);
            add_procs(t, kClientRead, 5, 0, BackendKind::ClientBackend, BackendStateCode::Idle);
        });
    const WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.backend_samples, 9u);
    EXPECT_DOUBLE_EQ(sum.active_backends_avg, 3.0);
    EXPECT_EQ(sum.diagnosis.verdict, Verdict::Idle);
    EXPECT_FALSE(sum.diagnosis.score_valid);
    EXPECT_TRUE(sum.diagnosis.pct_valid);  // shares are still shown
    EXPECT_DOUBLE_EQ(sum.diagnosis.storage_pct, 100.0);
    EXPECT_EQ(sum.top_storage_wait, "IO:DataFileRead");
}

TEST(WindowSummary, NoStorageWaitMeansNoTopStorageWait) {
    Sampler s;
    for (int k = 0; k < 12; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kCpu, 1);
            add_procs(t, kUnregistered, 1);  // unknown names are never storage
        });
    const WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.top_storage_wait, "");
    EXPECT_DOUBLE_EQ(sum.diagnosis.storage_pct, 0.0);
}

TEST(WindowSummary, TopStorageWaitTieGoesToTheLowerWaitEventInfo) {
    Sampler s;
    s.tick(kTiming, [](TickBuilder &t) {
        add_procs(t, kWalSync, 3);
        add_procs(t, kDataFileRead, 3);
        add_procs(t, kBufferIo, 2);
    });
    EXPECT_EQ(summarize(s.window(kHour), names()).top_storage_wait, "IO:DataFileRead");
    s.tick(kTiming, [](TickBuilder &t) { add_procs(t, kWalSync, 2); });
    EXPECT_EQ(summarize(s.window(kHour), names()).top_storage_wait, "IO:WalSync");
}

TEST(WindowSummary, TrackIoTimingIsOnOnlyWhenOnInEveryTick) {
    EXPECT_EQ(summarize(WindowRecords{}, names()).track_io_timing, -1);
    EXPECT_EQ(summarize(WindowRecords{}, names()).track_wal_io_timing, -1);
    Sampler s;
    for (int k = 0; k < 5; ++k)
        s.tick(kTiming);
    WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.track_io_timing, 1);
    EXPECT_EQ(sum.track_wal_io_timing, 1);
    s.tick(kFlagTrackWalIoTiming);  // track_io_timing off for one tick
    sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.track_io_timing, 0);
    EXPECT_EQ(sum.track_wal_io_timing, 1);
    s.tick(kTiming);
    sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.track_io_timing, 0);
    // Windows not reaching the untimed tick see timing on.
    EXPECT_EQ(summarize(s.window(1 * kSecond), names()).track_io_timing, 1);
    // Off in every tick.
    Sampler off;
    off.tick(0);
    EXPECT_EQ(summarize(off.window(kHour), names()).track_io_timing, 0);
    EXPECT_EQ(summarize(off.window(kHour), names()).track_wal_io_timing, 0);
}

TEST(WindowSummary, TimingOffGivesNoLatencyButCountsReads) {
    Sampler s;
    for (int k = 0; k < 20; ++k)
        s.tick(0, [](TickBuilder &t) {
            add_procs(t, kDataFileRead, 4);
            add_reads(t, 50, 0);
            add_syncs(t, 5, 0);
        });
    const WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_FALSE(sum.reads.valid);
    EXPECT_TRUE(sum.reads.timing_missing);
    EXPECT_DOUBLE_EQ(sum.reads.untimed_count, 1000.0);
    EXPECT_FALSE(sum.wal_fsyncs.valid);
    EXPECT_TRUE(sum.wal_fsyncs.timing_missing);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, 50.0);
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs_per_s, 5.0);
    EXPECT_EQ(sum.track_io_timing, 0);
    // All the time in storage waits of unknown latency: no claim that faster storage helps.
    EXPECT_FALSE(sum.diagnosis.score_valid);
    EXPECT_EQ(sum.diagnosis.verdict, Verdict::Mixed);
    EXPECT_NE(sum.diagnosis.hint.find("track_io_timing"), std::string::npos) << sum.diagnosis.hint;
}

TEST(WindowSummary, TimingTurnedOnMidWindowUsesOnlyTimedTicks) {
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(0, [](TickBuilder &t) { add_reads(t, 1000, 0); });
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 10, 10 * 300); });
    const WindowSummary sum = summarize(s.window(kHour), names());
    ASSERT_TRUE(sum.reads.valid);
    EXPECT_FALSE(sum.reads.timing_missing);
    EXPECT_DOUBLE_EQ(sum.reads.avg_us, 300.0);  // untimed reads are not "instant"
    EXPECT_DOUBLE_EQ(sum.reads.p50_us, 300.0);
    EXPECT_DOUBLE_EQ(sum.reads.max_us, 300.0);
    EXPECT_DOUBLE_EQ(sum.reads.untimed_count, 10000.0);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, 10100.0 / 20.0);
}

TEST(WindowSummary, EmptyWindow) {
    const WindowSummary sum = summarize(WindowRecords{}, names());
    EXPECT_EQ(sum.ticks, 0u);
    EXPECT_EQ(sum.backend_samples, 0u);
    EXPECT_DOUBLE_EQ(sum.active_backends_avg, 0.0);
    EXPECT_DOUBLE_EQ(sum.covered_seconds, 0.0);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, 0.0);
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs_per_s, 0.0);
    EXPECT_FALSE(sum.reads.valid);
    EXPECT_FALSE(sum.reads.timing_missing);
    EXPECT_FALSE(sum.wal_fsyncs.valid);
    EXPECT_FALSE(sum.wal_fsyncs.timing_missing);
    EXPECT_EQ(sum.diagnosis.verdict, Verdict::Idle);
    EXPECT_FALSE(sum.diagnosis.score_valid);
    EXPECT_FALSE(sum.diagnosis.pct_valid);
    EXPECT_EQ(sum.top_storage_wait, "");
    EXPECT_EQ(sum.track_io_timing, -1);
    EXPECT_EQ(sum.track_wal_io_timing, -1);
    EXPECT_DOUBLE_EQ(covered_seconds(WindowRecords{}), 0.0);
    EXPECT_TRUE(wait_event_profile(WindowRecords{}, names()).empty());
    EXPECT_TRUE(io_latency(WindowRecords{}).empty());
    EXPECT_TRUE(history(WindowRecords{}, 0).empty());
    EXPECT_TRUE(history(WindowRecords{}, 10 * kSecond).empty());
    EXPECT_TRUE(query_profile(WindowRecords{}).empty());
}

TEST(WindowSummary, OneTick) {
    Sampler s;
    s.tick(kTiming, [](TickBuilder &t) {
        add_procs(t, kDataFileRead, 1);
        add_reads(t, 10, 50000);
    });
    const WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.ticks, 1u);
    EXPECT_DOUBLE_EQ(sum.covered_seconds, 1.0);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, 10.0);
    ASSERT_TRUE(sum.reads.valid);
    EXPECT_DOUBLE_EQ(sum.reads.avg_us, 5000.0);
    EXPECT_DOUBLE_EQ(sum.reads.p50_us, 5000.0);
    EXPECT_DOUBLE_EQ(sum.reads.p95_us, 5000.0);
    EXPECT_DOUBLE_EQ(sum.reads.p99_us, 5000.0);
    EXPECT_DOUBLE_EQ(sum.reads.max_us, 5000.0);
    EXPECT_EQ(sum.backend_samples, 1u);
    EXPECT_EQ(sum.diagnosis.verdict, Verdict::Idle);
}

TEST(WindowSummary, AllZeroCounts) {
    Sampler s;
    for (int k = 0; k < 30; ++k)
        s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 0, 0); });
    const WindowSummary sum = summarize(s.window(kHour), names());
    EXPECT_EQ(sum.ticks, 30u);
    EXPECT_DOUBLE_EQ(sum.covered_seconds, 30.0);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, 0.0);
    EXPECT_FALSE(sum.reads.valid);
    EXPECT_FALSE(sum.reads.timing_missing);
    EXPECT_FALSE(sum.wal_fsyncs.valid);
    EXPECT_EQ(sum.backend_samples, 0u);
    EXPECT_FALSE(sum.diagnosis.pct_valid);
    EXPECT_EQ(sum.diagnosis.verdict, Verdict::Idle);
    EXPECT_EQ(sum.track_io_timing, 1);
}

TEST(WindowSummary, OneHugeOutlierMovesOnlyTheMaximum) {
    Sampler s;
    for (int k = 0; k < 99; ++k)
        s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 100, 100 * 1000); });
    s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 1, 5 * kSecond); });
    const WindowSummary sum = summarize(s.window(kHour), names());
    ASSERT_TRUE(sum.reads.valid);
    EXPECT_DOUBLE_EQ(sum.reads.p50_us, 1000.0);
    EXPECT_DOUBLE_EQ(sum.reads.p95_us, 1000.0);
    EXPECT_DOUBLE_EQ(sum.reads.p99_us, 1000.0);  // weight 1 of 9901
    EXPECT_DOUBLE_EQ(sum.reads.max_us, 5e6);
    EXPECT_DOUBLE_EQ(sum.reads.avg_us, (9900.0 * 1000.0 + 5e6) / 9901.0);
}

TEST(WindowSummary, CountersResetInsideTheWindow) {
    // Cumulative pg_stat_io / pg_stat_wal counters through the real IoDeltaTracker: a baseline
    // tick, five ticks of +100 reads, a reset (counters drop, new reset time), three of +50.
    Sampler s;
    IoDeltaTracker tracker;
    const size_t cell = io_cell_index(BackendKind::ClientBackend, IoObjectCode::Relation,
                                      IoContextCode::Normal, IoOpCode::Read);
    uint64_t cum_reads = 123456, cum_time = 987654321, cum_syncs = 5000, cum_sync_time = 777777;
    int64_t reset_at = kT0 - kDay;
    const size_t slot = tracker.track(cell);
    auto snapshot_tick = [&]() {
        IoSnapshot &snap = tracker.next();
        snap.io_reset_at_us = reset_at;
        snap.wal_reset_at_us = reset_at;
        snap.wal_from_pg_stat_wal = true;
        snap.wal_syncs = {cum_syncs, cum_sync_time, 0};
        tracker.observe(slot, {cum_reads, cum_time, cum_reads * 8192});
        return s.tick(kTiming, [&](TickBuilder &t) {
            add_procs(t, kDataFileRead, 2);
            t.record().flags |= tracker.update(t);
        });
    };
    const IntervalRecord baseline = snapshot_tick();
    EXPECT_TRUE(baseline.flags & kFlagBaseline);
    EXPECT_EQ(baseline.reads, 0u);
    for (int k = 0; k < 5; ++k) {
        cum_reads += 100, cum_time += 100 * 2000, cum_syncs += 10, cum_sync_time += 10 * 1500;
        snapshot_tick();
    }
    cum_reads = 30, cum_time = 30 * 900, cum_syncs = 3, cum_sync_time = 3 * 800;
    reset_at = kT0 + 6 * kSecond;
    const IntervalRecord reset = snapshot_tick();
    EXPECT_TRUE(reset.flags & kFlagCountersReset);
    EXPECT_TRUE(reset.flags & kFlagBaseline);
    EXPECT_EQ(reset.reads, 0u);
    EXPECT_EQ(reset.n_io_deltas, 0u);
    for (int k = 0; k < 3; ++k) {
        cum_reads += 50, cum_time += 50 * 4000, cum_syncs += 20, cum_sync_time += 20 * 500;
        snapshot_tick();
    }

    const WindowRecords w = s.window(kHour);
    ASSERT_EQ(w.ticks.size(), 10u);
    const WindowSummary sum = summarize(w, names());
    EXPECT_EQ(sum.ticks, 10u);
    EXPECT_DOUBLE_EQ(sum.covered_seconds, 8.0);  // two baselines measure nothing
    EXPECT_DOUBLE_EQ(sum.reads_per_s, (5 * 100 + 3 * 50) / 8.0);
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs_per_s, (5 * 10 + 3 * 20) / 8.0);
    ASSERT_TRUE(sum.reads.valid);
    EXPECT_DOUBLE_EQ(sum.reads.avg_us, (500.0 * 2000 + 150.0 * 4000) / 650.0);
    EXPECT_DOUBLE_EQ(sum.reads.p50_us, 2000.0);
    EXPECT_DOUBLE_EQ(sum.reads.max_us, 4000.0);
    EXPECT_DOUBLE_EQ(sum.wal_fsyncs.avg_us, (50.0 * 1500 + 60.0 * 500) / 110.0);
    EXPECT_EQ(sum.backend_samples, 20u);  // processes are sampled in baseline ticks too
    const std::vector<HistoryRow> rows = history(w, 0);
    ASSERT_EQ(rows.size(), 10u);
    EXPECT_DOUBLE_EQ(rows[0].covered_seconds, 0.0);
    EXPECT_DOUBLE_EQ(rows[6].covered_seconds, 0.0);
    EXPECT_EQ(rows[6].totals.reads, 0u);
    EXPECT_DOUBLE_EQ(rows[7].covered_seconds, 1.0);
    EXPECT_EQ(rows[7].totals.reads, 50u);
}

// io_read_interval 1 s at a 100 ms sample interval: nine ticks skip the counters and the tenth
// carries a second's reads. Its rate divides by that second, not by its own 100 ms (a 10x
// inflation found by the device tests: 3,164 reads/s reported for 300/s measured).
TEST(WindowHistory, ATickAfterSkippedReadingsCoversTheirTime) {
    Sampler s(4096, 64, kSecond / 10);
    s.tick(kTiming | kFlagBaseline, [](TickBuilder &) {});
    for (int second = 0; second < 3; ++second) {
        for (int i = 0; i < 9; ++i)
            s.tick(kTiming | kFlagCountersNotRead, [](TickBuilder &t) { add_procs(t, kCpu, 1); });
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kCpu, 1);
            add_reads(t, 300, 300 * 1000);
        });
    }
    const WindowRecords w = s.window(kHour);
    const std::vector<HistoryRow> rows = history(w, 0);
    ASSERT_EQ(rows.size(), 31u);
    for (size_t i = 1; i < rows.size(); ++i) {
        const bool reading = i % 10 == 0;
        EXPECT_NEAR(rows[i].counter_seconds, reading ? 1.0 : 0.0, 1e-9) << i;
        if (reading) {
            EXPECT_NEAR(double(rows[i].totals.reads) / rows[i].counter_seconds, 300.0, 1e-6);
        }
    }
    // Buckets of a second hold one reading each: the same rate.
    for (const HistoryRow &row : history(w, kSecond))
        if (row.totals.reads > 0) {
            EXPECT_NEAR(double(row.totals.reads) / row.counter_seconds, 300.0, 1e-6);
        }
}

// ---- summarize over roll-ups ---------------------------------------------------------------

TEST(WindowRollupSummary, PercentilesWithinOneBinOfTheTickTruth) {
    // 20.5 minutes of ticks with per-tick read and WAL-sync latencies spread over three decades;
    // the tick ring keeps 99 of them, so a 30-minute window reads the roll-ups.
    Sampler s(100, 64);
    Random rnd(7);
    std::vector<Point> read_points, sync_points;
    uint64_t reads = 0, read_time = 0, syncs = 0, sync_time = 0, storage = 0;
    const int kTicks = 1230;
    for (int k = 0; k < kTicks; ++k) {
        const uint64_t n_reads = rnd.below(10) == 0 ? 0 : 1 + rnd.below(500);
        const uint64_t t_reads =
            n_reads ? uint64_t(double(n_reads) * rnd.log_uniform(50, 50000)) : 0;
        const uint64_t n_syncs = 1 + rnd.below(30);
        const uint64_t t_syncs = uint64_t(double(n_syncs) * rnd.log_uniform(300, 20000));
        const uint32_t storage_procs = uint32_t(rnd.below(6));
        s.tick(kTiming, [&](TickBuilder &t) {
            add_procs(t, kDataFileRead, storage_procs);
            add_procs(t, kCpu, 2);
            add_reads(t, n_reads, t_reads);
            add_syncs(t, n_syncs, t_syncs);
        });
        if (n_reads)
            read_points.push_back({double(t_reads) / double(n_reads), double(n_reads)});
        sync_points.push_back({double(t_syncs) / double(n_syncs), double(n_syncs)});
        reads += n_reads, read_time += t_reads, syncs += n_syncs, sync_time += t_syncs;
        storage += storage_procs;
    }
    WindowPlan plan;
    const WindowRecords w = s.window(30 * kMinute, &plan);
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_FALSE(plan.clamped);
    ASSERT_EQ(w.rollups.size(), 20u);
    ASSERT_EQ(sum_ticks(w), uint64_t(kTicks));
    const WindowSummary sum = summarize(w, names());

    EXPECT_EQ(sum.ticks, uint64_t(kTicks));
    EXPECT_DOUBLE_EQ(sum.covered_seconds, double(kTicks));
    EXPECT_DOUBLE_EQ(sum.reads_per_s, double(reads) / kTicks);
    EXPECT_EQ(sum.backend_samples, storage + 2 * kTicks);
    EXPECT_EQ(sum.top_storage_wait, "IO:DataFileRead");
    EXPECT_EQ(sum.track_io_timing, 1);

    struct Series {
        const char *name;
        const LatencySummary &summary;
        const std::vector<Point> &points;
        double avg;
    };
    const Series series[] = {
        {"reads", sum.reads, read_points, double(read_time) / double(reads)},
        {"wal_fsyncs", sum.wal_fsyncs, sync_points, double(sync_time) / double(syncs)},
    };
    for (const Series &x : series) {
        SCOPED_TRACE(x.name);
        ASSERT_TRUE(x.summary.valid);
        EXPECT_NEAR(x.summary.avg_us, x.avg, x.avg * 1e-12);
        EXPECT_DOUBLE_EQ(x.summary.max_us, max_latency(x.points));
        for (const auto &[p, got] : {std::pair<double, double>{0.50, x.summary.p50_us},
                                     {0.95, x.summary.p95_us},
                                     {0.99, x.summary.p99_us}}) {
            const double truth = lower_quantile(x.points, p);
            EXPECT_NEAR(got, truth, truth * kLatencyBinMaxRelError) << "p" << p * 100;
        }
        EXPECT_LE(x.summary.p50_us, x.summary.p95_us);
        EXPECT_LE(x.summary.p95_us, x.summary.p99_us);
        EXPECT_LE(x.summary.p99_us, x.summary.max_us);
    }
}

TEST(WindowRollupSummary, MaxIsExactAndBoundsThePercentiles) {
    // Every tick at 940 us: its bin, [933.3, 1024) us, has its midpoint (977.5 us) above every
    // latency seen. The maximum is the exact largest tick mean, and no percentile exceeds it.
    ASSERT_GT(latency_bin_mid_us(latency_bin(940.0)), 940.0);
    Sampler s(30, 16);
    for (int k = 0; k < 200; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_reads(t, 10, 10 * 940);
            add_syncs(t, 4, 4 * 940);
        });
    WindowPlan plan;
    const WindowRecords w = s.window(10 * kMinute, &plan);
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_FALSE(w.rollups.empty());
    const WindowSummary sum = summarize(w, names());
    for (const LatencySummary *l : {&sum.reads, &sum.wal_fsyncs}) {
        ASSERT_TRUE(l->valid);
        EXPECT_DOUBLE_EQ(l->avg_us, 940.0);
        EXPECT_DOUBLE_EQ(l->max_us, 940.0);
        EXPECT_LE(l->p50_us, l->max_us);
        EXPECT_LE(l->p95_us, l->max_us);
        EXPECT_LE(l->p99_us, l->max_us);
        EXPECT_NEAR(l->p50_us, 940.0, 940.0 * kLatencyBinMaxRelError);
    }
}

TEST(WindowRollupSummary, TimingTurnedOnMidMinuteKeepsTheAverageExact) {
    // track_io_timing goes on half-way through minute 1: that roll-up sums 30 untimed ticks of
    // 1000 reads and 30 timed ticks of 10 reads at 300 us. Only the binned (timed) reads may
    // divide the read time.
    Sampler s(30, 16);
    uint64_t reads = 0;
    for (int k = 1; k <= 190; ++k) {
        const bool timed = k >= 90;
        s.tick(timed ? kTiming : 0,
               [&](TickBuilder &t) { timed ? add_reads(t, 10, 10 * 300) : add_reads(t, 1000, 0); });
        reads += timed ? 10 : 1000;
    }
    WindowPlan plan;
    const WindowRecords w = s.window(10 * kMinute, &plan);
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_EQ(w.rollups.size(), 3u);
    const WindowSummary sum = summarize(w, names());
    ASSERT_TRUE(sum.reads.valid);
    EXPECT_DOUBLE_EQ(sum.reads.avg_us, 300.0);
    EXPECT_DOUBLE_EQ(sum.reads.max_us, 300.0);
    EXPECT_NEAR(sum.reads.p50_us, 300.0, 300.0 * kLatencyBinMaxRelError);
    EXPECT_DOUBLE_EQ(sum.reads.untimed_count, 89.0 * 1000.0);
    EXPECT_EQ(sum.track_io_timing, 0);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, double(reads) / 190.0);
}

TEST(WindowRollupSummary, UntimedRollupsReportTimingMissing) {
    Sampler s(30, 16);
    for (int k = 0; k < 150; ++k)
        s.tick(0, [](TickBuilder &t) { add_reads(t, 7, 0); });
    WindowPlan plan;
    const WindowRecords w = s.window(10 * kMinute, &plan);
    ASSERT_TRUE(plan.use_rollups);
    const WindowSummary sum = summarize(w, names());
    EXPECT_FALSE(sum.reads.valid);
    EXPECT_TRUE(sum.reads.timing_missing);
    EXPECT_EQ(sum.track_io_timing, 0);
    EXPECT_DOUBLE_EQ(sum.reads_per_s, 7.0);
}

// ---- wait_event_profile --------------------------------------------------------------------

TEST(WindowEventProfile, ExcludesIdleSharesSumTo100SortedBySamples) {
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kDataFileRead, 4);
            add_procs(t, kCpu, 3);
            add_procs(t, kLockRelation, 1);
            add_procs(t, kDataFileRead, 2, 0, BackendKind::ParallelWorker);
            // Auxiliary processes have no client state and count.
            add_procs(t, kDataFileSync, 1, 0, BackendKind::Checkpointer, BackendStateCode::None, 0);
            // Idle: waiting for the client or for work, idle sessions.
            add_procs(t, kClientRead, 5);
            add_procs(t, kPgSleep, 1);
            add_procs(t, kBgwriterMain, 1, 0, BackendKind::Bgwriter, BackendStateCode::None, 0);
            add_procs(t, kCpu, 30, 0, BackendKind::ClientBackend, BackendStateCode::Idle);
            add_procs(t, kClientRead, 8, 0, BackendKind::ClientBackend,
                      BackendStateCode::IdleInTransaction);
        });
    const std::vector<EventRow> rows = wait_event_profile(s.window(kHour), names());
    ASSERT_EQ(rows.size(), 5u);
    double total_pct = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        total_pct += rows[i].share_pct;
        total += rows[i].samples;
        EXPECT_NE(rows[i].name->wait_class.category, WaitCategory::Idle);
        if (i > 0) {
            EXPECT_GE(rows[i - 1].samples, rows[i].samples);
        }
    }
    EXPECT_NEAR(total_pct, 100.0, 1e-9);
    EXPECT_EQ(total, 110u);
    EXPECT_EQ(rows[0].name->event, "DataFileRead");
    EXPECT_EQ(rows[0].backend, BackendKind::ClientBackend);
    EXPECT_EQ(rows[0].samples, 40u);
    EXPECT_NEAR(rows[0].share_pct, 100.0 * 40 / 110, 1e-9);
    EXPECT_EQ(rows[1].name->type, "CPU");
    EXPECT_EQ(rows[1].samples, 30u);
    EXPECT_EQ(rows[2].name->event, "DataFileRead");
    EXPECT_EQ(rows[2].backend, BackendKind::ParallelWorker);
    EXPECT_EQ(rows[2].samples, 20u);
    // Two rows of 10 samples: ties come out in a fixed order (backend, then wait event).
    EXPECT_EQ(rows[3].samples, 10u);
    EXPECT_EQ(rows[4].samples, 10u);
    EXPECT_EQ(rows[3].backend, BackendKind::ClientBackend);
    EXPECT_EQ(rows[3].name->type, "Lock");
    EXPECT_EQ(rows[4].backend, BackendKind::Checkpointer);
    EXPECT_EQ(rows[4].name->event, "DataFileSync");
}

TEST(WindowEventProfile, TiesOrderByBackendThenWaitEventInfo) {
    // 40 extension waits with 2 samples each in client backends and in parallel workers, added
    // in a scrambled order: enough rows that the sort's handling of ties shows.
    WaitNameTable table;
    std::vector<uint32_t> waits;
    for (uint32_t i = 0; i < 40; ++i) {
        const uint32_t info = 0x07000000u | (i * 37 % 40 + 1);
        waits.push_back(info);
        table.add(info, "Extension", ("Ext" + std::to_string(info & 0xFF)).c_str());
    }
    Sampler s;
    s.tick(kTiming, [&](TickBuilder &t) {
        for (uint32_t info : waits) {
            for (BackendKind kind : {BackendKind::ParallelWorker, BackendKind::ClientBackend})
                for (int n = 0; n < 2; ++n)
                    t.add_sample(ProcSample{kind, BackendStateCode::Active, WaitCategory::Other,
                                            info, kDb, 0});
        }
        add_procs(t, kCpu, 3);
    });
    const std::vector<EventRow> rows = wait_event_profile(s.window(kHour), table);
    ASSERT_EQ(rows.size(), 81u);
    EXPECT_EQ(rows[0].name->type, "CPU");
    for (size_t i = 1; i < rows.size(); ++i) {
        const size_t j = (i - 1) % 40;
        EXPECT_EQ(rows[i].samples, 2u);
        EXPECT_EQ(rows[i].backend,
                  i <= 40 ? BackendKind::ClientBackend : BackendKind::ParallelWorker);
        EXPECT_EQ(rows[i].name->event, "Ext" + std::to_string(j + 1)) << i;
    }
}

TEST(WindowEventProfile, SameOverRollupsAsOverTicks) {
    Sampler s(40, 16);
    for (int k = 0; k < 125; ++k)
        s.tick(kTiming, [k](TickBuilder &t) {
            add_procs(t, kDataFileRead, 1 + k % 4);
            add_procs(t, kCpu, 2);
            add_procs(t, kClientRead, 3);
        });
    WindowPlan plan;
    const std::vector<EventRow> rows = wait_event_profile(s.window(kHour, &plan), names());
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].name->event, "DataFileRead");
    EXPECT_EQ(rows[0].samples, 31u * 10u + 1u);  // 31 cycles of 1+2+3+4, then 1
    EXPECT_EQ(rows[1].samples, 250u);
}

// ---- io_latency ----------------------------------------------------------------------------

TEST(WindowIoLatency, PerCellSumsAndLatency) {
    Sampler s;
    Random rnd(3);
    std::vector<Point> read_points, write_points;
    uint64_t read_ops = 0, write_ops = 0, hits = 0, fsyncs = 0;
    for (int k = 0; k < 120; ++k) {
        const uint64_t r = 1 + rnd.below(300), rt = uint64_t(double(r) * rnd.log_uniform(60, 9000));
        const uint64_t wr = rnd.below(3) == 0 ? 0 : 1 + rnd.below(40);
        const uint64_t wt = wr ? uint64_t(double(wr) * rnd.log_uniform(20, 400)) : 0;
        const uint64_t h = 1000 + rnd.below(5000);
        s.tick(kTiming, [&](TickBuilder &t) {
            add_reads(t, r, rt);
            t.add_io_delta(BackendKind::ClientBackend, IoObjectCode::Relation,
                           IoContextCode::Normal, IoOpCode::Hit, {h, 0, 0});
            t.add_io_delta(BackendKind::Checkpointer, IoObjectCode::Relation, IoContextCode::Normal,
                           IoOpCode::Write, {wr, wt, wr * 8192});
            if (k % 30 == 0)
                t.add_io_delta(BackendKind::Checkpointer, IoObjectCode::Relation,
                               IoContextCode::Normal, IoOpCode::Fsync, {4, 0, 0});
        });
        read_points.push_back({double(rt) / double(r), double(r)});
        if (wr)
            write_points.push_back({double(wt) / double(wr), double(wr)});
        read_ops += r, write_ops += wr, hits += h;
        fsyncs += k % 30 == 0 ? 4 : 0;
    }
    const std::vector<IoLatencyRow> rows = io_latency(s.window(kHour));
    ASSERT_EQ(rows.size(), 4u);
    std::map<IoOpCode, const IoLatencyRow *> by_op;
    for (const IoLatencyRow &row : rows) {
        EXPECT_EQ(row.object, IoObjectCode::Relation);
        EXPECT_EQ(row.context, IoContextCode::Normal);
        by_op[row.op] = &row;
    }
    ASSERT_EQ(by_op.size(), 4u);

    const IoLatencyRow &read = *by_op[IoOpCode::Read];
    EXPECT_EQ(read.backend, BackendKind::ClientBackend);
    EXPECT_EQ(read.ops, read_ops);
    EXPECT_EQ(read.bytes, read_ops * 8192);
    ASSERT_TRUE(read.latency.valid);
    EXPECT_EQ(read.latency.intervals, 120u);
    EXPECT_DOUBLE_EQ(read.latency.p50_us, lower_quantile(read_points, 0.50));
    EXPECT_DOUBLE_EQ(read.latency.p95_us, lower_quantile(read_points, 0.95));
    EXPECT_DOUBLE_EQ(read.latency.p99_us, lower_quantile(read_points, 0.99));
    EXPECT_DOUBLE_EQ(read.latency.max_us, max_latency(read_points));

    const IoLatencyRow &write = *by_op[IoOpCode::Write];
    EXPECT_EQ(write.backend, BackendKind::Checkpointer);
    EXPECT_EQ(write.ops, write_ops);
    EXPECT_EQ(write.bytes, write_ops * 8192);
    ASSERT_TRUE(write.latency.valid);
    EXPECT_EQ(write.latency.intervals, write_points.size());
    EXPECT_DOUBLE_EQ(write.latency.p50_us, lower_quantile(write_points, 0.50));
    EXPECT_DOUBLE_EQ(write.latency.p99_us, lower_quantile(write_points, 0.99));
    EXPECT_DOUBLE_EQ(write.latency.max_us, max_latency(write_points));

    // Hits (and these untimed fsyncs) are never timed: counted, latency NULL.
    const IoLatencyRow &hit = *by_op[IoOpCode::Hit];
    EXPECT_EQ(hit.ops, hits);
    EXPECT_EQ(hit.bytes, 0u);
    EXPECT_FALSE(hit.latency.valid);
    EXPECT_TRUE(hit.latency.timing_missing);
    EXPECT_DOUBLE_EQ(hit.latency.untimed_count, double(hits));
    EXPECT_EQ(by_op[IoOpCode::Fsync]->ops, fsyncs);
    EXPECT_FALSE(by_op[IoOpCode::Fsync]->latency.valid);
}

TEST(WindowIoLatency, AvgIsExactOverTicks) {
    Sampler s;
    s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 3, 1000); });
    s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 7, 90000); });
    s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 5, 0); });  // untimed
    const std::vector<IoLatencyRow> rows = io_latency(s.window(kHour));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].ops, 15u);
    ASSERT_TRUE(rows[0].latency.valid);
    EXPECT_DOUBLE_EQ(rows[0].latency.avg_us, 91000.0 / 10.0);
    EXPECT_DOUBLE_EQ(rows[0].latency.max_us, 90000.0 / 7.0);
    EXPECT_DOUBLE_EQ(rows[0].latency.untimed_count, 5.0);
}

TEST(WindowIoLatency, OpsAddUpOverRollups) {
    Sampler s(40, 16);
    uint64_t ops = 0, time = 0;
    for (uint64_t k = 1; k <= 200; ++k) {
        s.tick(kTiming, [&](TickBuilder &t) { add_reads(t, k, k * 700); });
        ops += k, time += k * 700;
    }
    WindowPlan plan;
    const std::vector<IoLatencyRow> rows = io_latency(s.window(kHour, &plan));
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].ops, ops);
    EXPECT_EQ(rows[0].bytes, ops * 8192);
    ASSERT_TRUE(rows[0].latency.valid);
    EXPECT_DOUBLE_EQ(rows[0].latency.avg_us, 700.0);
    EXPECT_DOUBLE_EQ(rows[0].latency.max_us, 700.0);
}

// ---- history -------------------------------------------------------------------------------

TEST(WindowHistory, OneRowPerTickAtResolutionZero) {
    Sampler s;
    for (uint64_t k = 1; k <= 12; ++k)
        s.tick(kTiming, [&](TickBuilder &t) {
            add_procs(t, kDataFileRead, uint32_t(k % 3));
            add_procs(t, kCpu, 1);
            add_reads(t, k, k * 100);
            add_syncs(t, 2, 2 * 300);
        });
    const std::vector<HistoryRow> rows = history(s.window(kHour), 0);
    ASSERT_EQ(rows.size(), 12u);
    for (uint64_t k = 1; k <= 12; ++k) {
        const HistoryRow &row = rows[k - 1];
        EXPECT_EQ(row.sample_time_us, kT0 + int64_t(k) * kSecond);
        EXPECT_EQ(row.totals.ticks, 1u);
        EXPECT_DOUBLE_EQ(row.covered_seconds, 1.0);
        EXPECT_EQ(row.totals.fg_active, k % 3 + 1);
        EXPECT_EQ(row.totals.fg_storage, k % 3);
        EXPECT_EQ(row.totals.fg_cpu, 1u);
        EXPECT_EQ(row.totals.reads, k);
        EXPECT_EQ(row.totals.read_time_us, k * 100);
        EXPECT_EQ(row.totals.wal_syncs, 2u);
        EXPECT_EQ(row.totals.wal_sync_time_us, 600u);
        // Each row carries its own verdict: too few samples to judge.
        EXPECT_EQ(row.diagnosis.verdict, Verdict::Idle);
    }
}

TEST(WindowHistory, TicksSummedIntoAlignedBuckets) {
    // Ticks ending at 1..35 s: buckets [0,10) with 9 ticks, [10,20), [20,30) with 10, [30,40)
    // with 6.
    Sampler s;
    uint64_t reads = 0;
    for (uint64_t k = 1; k <= 35; ++k) {
        s.tick(kTiming, [&](TickBuilder &t) {
            add_procs(t, kDataFileRead, 2);
            add_reads(t, k, k * 2000);  // 2 ms per read
        });
        reads += k;
    }
    const WindowRecords w = s.window(kHour);
    const std::vector<HistoryRow> rows = history(w, 10 * kSecond);
    ASSERT_EQ(rows.size(), 4u);
    const uint64_t ticks[] = {9, 10, 10, 6};
    uint64_t total_ticks = 0, total_reads = 0, total_active = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].sample_time_us, kT0 + int64_t(i) * 10 * kSecond);
        EXPECT_EQ(rows[i].sample_time_us % (10 * kSecond), 0);
        EXPECT_EQ(rows[i].totals.ticks, ticks[i]);
        EXPECT_DOUBLE_EQ(rows[i].covered_seconds, double(ticks[i]));
        EXPECT_EQ(rows[i].totals.fg_active, 2 * ticks[i]);
        total_ticks += rows[i].totals.ticks, total_reads += rows[i].totals.reads;
        total_active += rows[i].totals.fg_active;
    }
    EXPECT_EQ(rows[1].totals.reads, 10u + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19);
    EXPECT_EQ(rows[1].totals.read_time_us, 2000 * rows[1].totals.reads);
    EXPECT_EQ(total_ticks, 35u);
    EXPECT_EQ(total_reads, reads);
    EXPECT_EQ(total_active, 70u);
    // The buckets with 20 samples are judged: reads at 2 ms, storage-bound.
    EXPECT_EQ(rows[1].diagnosis.verdict, Verdict::StorageBound);
    EXPECT_EQ(rows[3].diagnosis.verdict, Verdict::StorageBound);
}

TEST(WindowHistory, BucketsAlignToMultiplesOfTheResolutionNotToTheWindow) {
    // Ticks ending at kT0 + 0.5 s, 1.5 s, ...; kT0 is not a multiple of 7 s, yet 7 s buckets
    // start at multiples of 7 s (of the timestamp, not of the window's start).
    Sampler s(4096, 64, kSecond, kT0 - kSecond / 2);
    for (int k = 0; k < 50; ++k)
        s.tick(kTiming, [](TickBuilder &t) { add_reads(t, 1, 10); });
    const std::vector<HistoryRow> rows = history(s.window(kHour), 7 * kSecond);
    uint64_t ticks = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].sample_time_us % (7 * kSecond), 0);
        if (i > 0) {
            EXPECT_EQ(rows[i].sample_time_us - rows[i - 1].sample_time_us, 7 * kSecond);
        }
        ticks += rows[i].totals.ticks;
    }
    EXPECT_EQ(ticks, 50u);
}

TEST(WindowHistory, RollupsBucketIntoTheirOwnMinute) {
    // 5 minutes and 20 s of ticks from kT0; the tick ring keeps 40 of them, so an hour's window
    // reads the five published roll-ups and the 20 newer ticks.
    Sampler s(40, 16);
    uint64_t reads = 0;
    for (uint64_t k = 1; k <= 320; ++k) {
        s.tick(kTiming, [&](TickBuilder &t) {
            add_procs(t, kDataFileRead, 1);
            add_reads(t, k, k * 10);
        });
        reads += k;
    }
    WindowPlan plan;
    const WindowRecords w = s.window(kHour, &plan);
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_EQ(w.rollups.size(), 5u);

    const std::vector<HistoryRow> per_record = history(w, 0);
    ASSERT_EQ(per_record.size(), 5u + 21u);
    EXPECT_EQ(per_record[1].sample_time_us, kT0 + 119 * kSecond);  // a roll-up: its last tick
    EXPECT_EQ(per_record[1].totals.ticks, 60u);

    const std::vector<HistoryRow> minutes = history(w, kMinute);
    ASSERT_EQ(minutes.size(), 6u);
    const uint64_t ticks[] = {59, 60, 60, 60, 60, 21};
    uint64_t total_reads = 0;
    for (size_t i = 0; i < minutes.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(minutes[i].sample_time_us, kT0 + int64_t(i) * kMinute);
        EXPECT_EQ(minutes[i].totals.ticks, ticks[i]);
        EXPECT_EQ(minutes[i].totals.fg_active, ticks[i]);
        total_reads += minutes[i].totals.reads;
    }
    EXPECT_EQ(total_reads, reads);

    // Five-minute buckets: minutes 0-4 are one bucket, the ticks of minute 5 the next.
    const std::vector<HistoryRow> fives = history(w, 5 * kMinute);
    ASSERT_EQ(fives.size(), 2u);
    EXPECT_EQ(fives[0].sample_time_us, kT0);
    EXPECT_EQ(fives[0].totals.ticks, 299u);
    EXPECT_EQ(fives[1].sample_time_us, kT0 + 5 * kMinute);
    EXPECT_EQ(fives[1].totals.ticks, 21u);
}

TEST(WindowHistory, NegativeTimesFloorToTheBucketBelow) {
    // TimestampTz before 2000-01-01 is negative: buckets still floor, never round toward zero.
    Sampler s(4096, 64, kSecond, -25 * kSecond);
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming);
    const std::vector<HistoryRow> rows = history(s.window(kHour), 10 * kSecond);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].sample_time_us, -30 * kSecond);  // ticks ending at -24..-21 s
    EXPECT_EQ(rows[0].totals.ticks, 4u);
    EXPECT_EQ(rows[1].sample_time_us, -20 * kSecond);  // ticks ending at -20..-15 s
    EXPECT_EQ(rows[1].totals.ticks, 6u);
}

// ---- query_profile -------------------------------------------------------------------------

TEST(WindowQueryProfile, AggregatesAndOrdersByStorageSamples) {
    constexpr int64_t kQ1 = 0x1111, kQ2 = -0x2222, kQ3 = 0x3333, kQ4 = 0x4444;
    Sampler s;
    for (int k = 0; k < 10; ++k)
        s.tick(kTiming, [&](TickBuilder &t) {
            add_procs(t, kDataFileRead, 1, kQ1);  // q1: 20 samples, 10 storage
            add_procs(t, kCpu, 1, kQ1);
            add_procs(t, kCpu, 2, kQ2);  // q2: 20 samples, 0 storage
            if (k % 2 == 0)              // q3: 5 samples, 5 storage
                add_procs(t, kWalSync, 1, kQ3);
            if (k < 5)  // q4: 5 + 2 samples, 5 storage
                add_procs(t, kBufferIo, 1, kQ4);
            if (k < 2)
                add_procs(t, kLockRelation, 1, kQ4);
            // q1 in another database: a row of its own.
            if (k == 0)
                add_procs(t, kDataFileRead, 1, kQ1, BackendKind::ClientBackend,
                          BackendStateCode::Active, kDb + 1);
            // Not counted: idle waits, idle sessions, unknown query id, background processes.
            add_procs(t, kClientRead, 3, kQ2);
            add_procs(t, kCpu, 3, kQ3, BackendKind::ClientBackend, BackendStateCode::Idle);
            add_procs(t, kDataFileRead, 4, 0);
        });
    const std::vector<QueryRow> rows = query_profile(s.window(kHour));
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows[0].query_id, kQ1);
    EXPECT_EQ(rows[0].database_oid, kDb);
    EXPECT_EQ(rows[0].samples, 20u);
    EXPECT_EQ(rows[0].storage_samples, 10u);
    EXPECT_EQ(rows[1].query_id, kQ4);  // 5 storage, more samples than q3
    EXPECT_EQ(rows[1].samples, 7u);
    EXPECT_EQ(rows[1].storage_samples, 5u);
    EXPECT_EQ(rows[2].query_id, kQ3);
    EXPECT_EQ(rows[2].samples, 5u);
    EXPECT_EQ(rows[2].storage_samples, 5u);
    EXPECT_EQ(rows[3].query_id, kQ1);
    EXPECT_EQ(rows[3].database_oid, kDb + 1);
    EXPECT_EQ(rows[3].samples, 1u);
    EXPECT_EQ(rows[4].query_id, kQ2);
    EXPECT_EQ(rows[4].samples, 20u);
    EXPECT_EQ(rows[4].storage_samples, 0u);
    for (size_t i = 1; i < rows.size(); ++i)
        EXPECT_GE(rows[i - 1].storage_samples, rows[i].storage_samples);
}

TEST(WindowQueryProfile, TiesOrderByQueryIdThenDatabase) {
    Sampler s;
    s.tick(kTiming, [](TickBuilder &t) {
        add_procs(t, kDataFileRead, 1, 9, BackendKind::ClientBackend, BackendStateCode::Active,
                  kDb + 2);
        add_procs(t, kDataFileRead, 1, 9, BackendKind::ClientBackend, BackendStateCode::Active,
                  kDb);
        add_procs(t, kDataFileRead, 1, 5);
        add_procs(t, kDataFileRead, 1, 9, BackendKind::ClientBackend, BackendStateCode::Active,
                  kDb + 1);
    });
    const std::vector<QueryRow> rows = query_profile(s.window(kHour));
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[0].query_id, 5);
    for (size_t i = 1; i < 4; ++i) {
        EXPECT_EQ(rows[i].query_id, 9);
        EXPECT_EQ(rows[i].database_oid, kDb + uint32_t(i - 1));
    }
}

TEST(WindowQueryProfile, SameOverRollupsAsOverTicks) {
    Sampler s(40, 16);
    for (int k = 0; k < 150; ++k)
        s.tick(kTiming, [](TickBuilder &t) {
            add_procs(t, kDataFileRead, 2, 77);
            add_procs(t, kCpu, 1, 77);
            add_procs(t, kCpu, 1, 88);
        });
    WindowPlan plan;
    const std::vector<QueryRow> rows = query_profile(s.window(kHour, &plan));
    ASSERT_TRUE(plan.use_rollups);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].query_id, 77);
    EXPECT_EQ(rows[0].samples, 450u);
    EXPECT_EQ(rows[0].storage_samples, 300u);
    EXPECT_EQ(rows[1].query_id, 88);
    EXPECT_EQ(rows[1].samples, 150u);
}

}  // namespace
}  // namespace pgsw

namespace pgsw {
namespace {

// The fuzzer's find (a history file with a roll-up ending near INT64_MIN): the bucket start
// overflowed. It saturates now, and ordinary times keep their buckets.
TEST(HistoryBucket, AlignsAndSaturatesInsteadOfOverflowing) {
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    EXPECT_EQ(history_bucket_us(125 * kSecond, false, 60 * kSecond), 120 * kSecond);
    EXPECT_EQ(history_bucket_us(-5 * kSecond, false, 60 * kSecond), -60 * kSecond);
    EXPECT_EQ(history_bucket_us(60 * kSecond, false, 60 * kSecond), 60 * kSecond);
    // A roll-up ending at 12:01:00.5 holds the minute 12:01: its bucket is that minute's.
    EXPECT_EQ(history_bucket_us(61 * kSecond + 500000, true, 60 * kSecond), 60 * kSecond);
    EXPECT_EQ(history_bucket_us(kMin + 5, false, 60 * kSecond), kMin);
    EXPECT_EQ(history_bucket_us(kMin + 5, true, 60 * kSecond), kMin);
    EXPECT_EQ(history_bucket_us(kMax, false, kMax), kMax);
    EXPECT_EQ(history_bucket_us(-1, false, kMax), -kMax);  // a resolution near INT64_MAX
    EXPECT_EQ(history_bucket_us(kMin, false, kMax), kMin);
}

}  // namespace
}  // namespace pgsw
