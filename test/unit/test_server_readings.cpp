// The sampler's server-state policy (core/server_readings.hpp): checkpointer deltas with resets
// and the redo pointer, slot lag, spill deltas.
#include <gtest/gtest.h>

#include "core/server_readings.hpp"

namespace pgsw {
namespace {

CheckpointerTotals totals(uint64_t timed, uint64_t buffers, uint64_t sync_ms) {
    CheckpointerTotals t;
    t.timed = timed, t.done = timed, t.buffers_written = buffers, t.sync_time_ms = sync_ms;
    return t;
}

TEST(CheckpointerTracker, FirstReadingIsABaselineThenDeltas) {
    CheckpointerTracker c;
    CheckpointerDeltas d = c.observe(true, totals(5, 1000, 40), 0x1000);
    EXPECT_FALSE(d.valid);
    EXPECT_FALSE(d.redo_advanced);
    d = c.observe(true, totals(6, 1300, 90), 0x1000);
    ASSERT_TRUE(d.valid);
    EXPECT_EQ(d.timed, 1u);
    EXPECT_EQ(d.buffers_written, 300u);
    EXPECT_EQ(d.sync_time_ms, 50u);
    EXPECT_FALSE(d.redo_advanced);
}

TEST(CheckpointerTracker, RedoAdvanceMeansACheckpointBegan) {
    CheckpointerTracker c;
    (void)c.observe(true, totals(1, 0, 0), 0x1000);
    EXPECT_TRUE(c.observe(true, totals(2, 0, 0), 0x2000).redo_advanced);
    EXPECT_FALSE(c.observe(true, totals(2, 0, 0), 0x2000).redo_advanced);
    // Unknown redo (0) neither advances nor forgets the last one.
    EXPECT_FALSE(c.observe(true, totals(2, 0, 0), 0).redo_advanced);
    EXPECT_TRUE(c.observe(false, totals(0, 0, 0), 0x3000).redo_advanced);
}

TEST(CheckpointerTracker, AResetIsNotADelta) {
    CheckpointerTracker c;
    (void)c.observe(true, totals(10, 5000, 100), 1);
    EXPECT_FALSE(c.observe(true, totals(0, 3, 0), 1).valid);  // pg_stat_reset_shared
    EXPECT_EQ(c.resets(), 1u);
    const CheckpointerDeltas d = c.observe(true, totals(1, 10, 2), 1);
    ASSERT_TRUE(d.valid);
    EXPECT_EQ(d.buffers_written, 7u);
}

TEST(CheckpointerTracker, UnreadCountersAreNotValid) {
    CheckpointerTracker c;
    (void)c.observe(true, totals(1, 1, 1), 1);
    EXPECT_FALSE(c.observe(false, totals(9, 9, 9), 1).valid);
}

TEST(SlotLag, LogicalUsesConfirmedFlushPhysicalRestartLsn) {
    EXPECT_EQ(slot_lag_bytes(10000, 2000, 9000, true), 1000u);
    EXPECT_EQ(slot_lag_bytes(10000, 2000, 9000, false), 8000u);
}

TEST(SlotLag, UnknownOrAheadIsZero) {
    EXPECT_EQ(slot_lag_bytes(0, 100, 100, true), 0u);     // no position
    EXPECT_EQ(slot_lag_bytes(1000, 0, 0, false), 0u);     // never reserved WAL
    EXPECT_EQ(slot_lag_bytes(1000, 1200, 0, false), 0u);  // restart_lsn ahead of replay
}

TEST(SpillTracker, DeltasByNameWithBaselineAndReset) {
    SpillTracker s(4);
    SlotReading r{};
    s.begin(), s.observe(3, 10, 1000, r), s.end();
    EXPECT_EQ(r.spill_count, 0u);
    s.begin(), s.observe(3, 12, 5000, r), s.end();
    EXPECT_EQ(r.spill_count, 2u);
    EXPECT_EQ(r.spill_bytes, 4000u);
    s.begin(), s.observe(3, 0, 0, r), s.end();  // pg_stat_reset_replication_slot
    EXPECT_EQ(r.spill_bytes, 0u);
    EXPECT_EQ(s.resets(), 1u);
    s.begin(), s.end();  // the slot was dropped: forgotten
    s.begin(), s.observe(3, 50, 50, r), s.end();
    EXPECT_EQ(r.spill_count, 0u);  // re-created under the name: a baseline
}

}  // namespace
}  // namespace pgsw
