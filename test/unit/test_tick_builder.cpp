#include <cstring>
#include <memory_resource>

#include <gtest/gtest.h>

#include "core/tick_builder.hpp"

namespace pgsw {
namespace {

constexpr uint32_t kDataFileRead = 0x0A000000 | 9;  // any stable raw value

ProcSample active_client(WaitCategory category, uint32_t wait, int64_t query_id = 0) {
    return {BackendKind::ClientBackend, BackendStateCode::Active, category, wait, 5, query_id};
}

TEST(TickBuilder, GroupsSamplesAndCountsForeground) {
    TickBuilder tick(16);
    tick.begin(0, 1000000, kFlagTrackIoTiming);
    tick.add_sample(active_client(WaitCategory::Storage, kDataFileRead, 42));
    tick.add_sample(active_client(WaitCategory::Storage, kDataFileRead, 42));
    tick.add_sample(active_client(WaitCategory::Cpu, 0, 42));
    tick.add_sample(active_client(WaitCategory::Lock, 0x03000000, 7));
    tick.add_sample({BackendKind::ClientBackend, BackendStateCode::Idle, WaitCategory::Idle,
                     0x06000000, 5, 42});
    tick.add_sample({BackendKind::Checkpointer, BackendStateCode::None, WaitCategory::Storage,
                     kDataFileRead, 0, 0});
    tick.finish(12);
    const IntervalRecord &r = tick.record();
    EXPECT_EQ(r.procs_sampled, 6u);
    EXPECT_EQ(r.fg_active, 4u);
    EXPECT_EQ(r.fg_storage, 2u);
    EXPECT_EQ(r.fg_cpu, 1u);
    EXPECT_EQ(r.fg_lock, 1u);
    EXPECT_EQ(r.n_wait_groups, 5u);
    EXPECT_EQ(r.n_query_groups, 2u);
    EXPECT_EQ(r.tick_cost_us, 12u);
    uint32_t storage_samples_42 = 0, samples_42 = 0;
    for (const ArenaEntry &e : tick.entries())
        if (e.kind == EntryKind::QueryGroup && e.query.query_id == 42)
            samples_42 = e.query.samples, storage_samples_42 = e.query.storage_samples;
    EXPECT_EQ(samples_42, 3u);  // the idle sample does not count
    EXPECT_EQ(storage_samples_42, 2u);
}

TEST(TickBuilder, BeginClearsThePreviousTick) {
    TickBuilder tick(4);
    tick.begin(0, 1, 0);
    tick.add_sample(active_client(WaitCategory::Cpu, 0));
    tick.finish(1);
    tick.begin(1, 2, 0);
    tick.finish(1);
    EXPECT_EQ(tick.record().fg_active, 0u);
    EXPECT_TRUE(tick.entries().empty());
}

// Passes allocations on to the heap, counting them.
class CountingResource : public std::pmr::memory_resource {
  public:
    size_t allocations = 0;

  private:
    void *do_allocate(size_t bytes, size_t align) override {
        ++allocations;
        return std::pmr::new_delete_resource()->allocate(bytes, align);
    }
    void do_deallocate(void *p, size_t bytes, size_t align) override {
        std::pmr::new_delete_resource()->deallocate(p, bytes, align);
    }
    bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override {
        return this == &o;
    }
};

// The sampler places the builder in its huge-page region: every table must come from the
// resource given, and a tick (even one past capacity) must allocate nothing.
TEST(TickBuilder, AllocatesFromItsResourceAndOnlyAtConstruction) {
    CountingResource memory;
    std::pmr::memory_resource *default_resource =
        std::pmr::set_default_resource(std::pmr::null_memory_resource());
    TickBuilder tick(4, &memory);
    const size_t at_construction = memory.allocations;
    for (int t = 0; t < 3; ++t) {
        tick.begin(t, t + 1, 0);
        for (uint32_t w = 1; w <= 12; ++w)
            tick.add_sample(active_client(WaitCategory::Storage, w, w));
        tick.add_io_delta(BackendKind::ClientBackend, IoObjectCode::Relation, IoContextCode::Normal,
                          IoOpCode::Read, {3, 40, 3 * 8192});
        tick.finish(1);
    }
    std::pmr::set_default_resource(default_resource);
    EXPECT_GE(at_construction, 6u) << "two maps (slots, used) and two entry vectors";
    EXPECT_EQ(memory.allocations, at_construction);
    EXPECT_TRUE(tick.record().flags & kFlagEntriesTruncated);
}

TEST(TickBuilder, MoreDistinctGroupsThanCapacityAreCountedAndFlagged) {
    TickBuilder tick(2);  // room for 3 groups
    tick.begin(0, 1, 0);
    for (uint32_t w = 1; w <= 10; ++w)
        tick.add_sample(active_client(WaitCategory::Other, w));
    tick.finish(1);
    EXPECT_EQ(tick.record().fg_active, 10u);
    EXPECT_TRUE(tick.record().flags & kFlagEntriesTruncated);
}

// LWLock:WALWrite waiters count as storage only in a tick that saw some process in WAL I/O.
constexpr uint32_t kWalWriteLock = 0x01000000 | 8;  // any stable raw values
constexpr uint32_t kWalSync = 0x0A000000 | 77;

ProcSample flush_lock_waiter(int64_t query_id) {
    ProcSample s = active_client(WaitCategory::Storage, kWalWriteLock, query_id);
    s.role = WaitRole::FlushLock;
    return s;
}

uint8_t category_of(const TickBuilder &tick, uint32_t wait_event_info) {
    for (const ArenaEntry &e : tick.entries())
        if (e.kind == EntryKind::WaitGroup && e.wait.wait_event_info == wait_event_info)
            return e.wait.category;
    return 255;
}

ProcSample process(BackendKind kind, WaitCategory category, WaitRole role = WaitRole::None,
                   StorageKind storage = StorageKind::None) {
    return {kind, BackendStateCode::None, category, 0x0A000001, 0, 0, role, storage};
}

ProcSample client(WaitCategory category, StorageKind storage = StorageKind::None) {
    return {BackendKind::ClientBackend,
            BackendStateCode::Active,
            category,
            0x0A000002,
            5,
            0,
            WaitRole::None,
            storage};
}

// The breakdown components: storage by kind, and synchronous replication apart from "other".
TEST(TickBuilder, CountsBreakdownComponents) {
    TickBuilder tick(16);
    tick.begin(0, 1000000, 0);
    tick.add_sample(client(WaitCategory::Storage, StorageKind::Read));
    tick.add_sample(client(WaitCategory::Storage, StorageKind::Read));
    tick.add_sample(client(WaitCategory::Storage, StorageKind::Wal));
    tick.add_sample(client(WaitCategory::Storage, StorageKind::Temp));
    tick.add_sample(client(WaitCategory::SyncRep));
    tick.add_sample(client(WaitCategory::Other));
    tick.finish(1);
    const IntervalRecord &r = tick.record();
    EXPECT_EQ(r.fg_active, 6u);
    EXPECT_EQ(r.fg_storage, 4u);
    EXPECT_EQ(r.fg_storage_read, 2u);
    EXPECT_EQ(r.fg_storage_wal, 1u);
    EXPECT_EQ(r.fg_sync_rep, 1u);
    EXPECT_EQ(r.fg_cpu + r.fg_lock, 0u);
}

// A background worker sleeping on its latch (Extension:Extension) is idle: it is recorded in
// its wait group with category idle, and never counted as active.
TEST(TickBuilder, SleepingBackgroundWorkerIsIdle) {
    TickBuilder tick(4);
    tick.begin(0, 1000000, 0);
    tick.add_sample(
        process(BackendKind::BackgroundWorker, WaitCategory::Other, WaitRole::ExtensionGeneric));
    tick.finish(1);
    ASSERT_EQ(tick.entries().size(), 1u);
    EXPECT_EQ(tick.entries()[0].wait.category, uint8_t(WaitCategory::Idle));
}

TEST(TickBuilder, AutovacuumWorkersBusyAndTheirWaits) {
    TickBuilder tick(8);
    tick.begin(0, 1000000, 0);
    tick.set_autovacuum_max(3);
    tick.add_sample(process(BackendKind::AutovacuumWorker, WaitCategory::Storage));
    tick.add_sample(
        process(BackendKind::AutovacuumWorker, WaitCategory::Idle, WaitRole::VacuumDelay));
    tick.add_sample(process(BackendKind::AutovacuumWorker, WaitCategory::Cpu));
    tick.add_sample(process(BackendKind::AutovacuumLauncher, WaitCategory::Idle));
    tick.finish(1);
    const IntervalRecord &r = tick.record();
    EXPECT_EQ(r.ticks_autovacuum, 1u);
    EXPECT_EQ(r.autovacuum_workers_busy, 3u);
    EXPECT_EQ(r.autovacuum_workers_max, 3u);
    EXPECT_EQ(r.ticks_autovacuum_all_busy, 1u);
    EXPECT_EQ(r.autovacuum_samples_io, 1u);
    EXPECT_EQ(r.autovacuum_samples_delay, 1u);
    EXPECT_EQ(r.autovacuum_samples_cpu, 1u);
    // Unknown maximum (standby, autovacuum off): not measured.
    tick.begin(1, 2, 0);
    tick.finish(1);
    EXPECT_EQ(tick.record().ticks_autovacuum, 0u);
}

// Inside a checkpoint: the checkpointer in CheckpointWriteDelay, busy two ticks in a row, or
// the checkpoint counters moving. One busy tick alone (its loop's housekeeping) is not.
TEST(TickBuilder, MarksTicksInsideACheckpoint) {
    TickBuilder tick(4);
    auto run = [&](WaitCategory category, WaitRole role, CheckpointerDeltas counters = {}) {
        tick.begin(0, 1, 0);
        tick.add_sample(client(WaitCategory::Cpu));
        tick.add_sample(process(BackendKind::Checkpointer, category, role));
        tick.add_checkpointer(counters);
        tick.finish(1);
        return (tick.record().flags & kFlagInCheckpoint) != 0;
    };
    EXPECT_FALSE(run(WaitCategory::Idle, WaitRole::None));
    EXPECT_TRUE(run(WaitCategory::Idle, WaitRole::CheckpointWriteDelay));
    EXPECT_EQ(tick.record().ticks_in_checkpoint, 1u);
    EXPECT_EQ(tick.record().fg_active_in_checkpoint, 1u);
    EXPECT_FALSE(run(WaitCategory::Idle, WaitRole::None));
    EXPECT_FALSE(run(WaitCategory::Storage, WaitRole::None));  // busy once
    EXPECT_TRUE(run(WaitCategory::Storage, WaitRole::None));   // busy twice
    CheckpointerDeltas writing;
    writing.valid = true;
    writing.buffers_written = 100;
    EXPECT_TRUE(run(WaitCategory::Idle, WaitRole::None, writing));
    EXPECT_EQ(tick.record().checkpoint_buffers_written, 100u);
    EXPECT_EQ(tick.record().ticks_checkpointer, 1u);
}

TEST(TickBuilder, DatabaseDeltasOnlyWhenValid) {
    TickBuilder tick(4);
    tick.begin(0, 1, 0);
    tick.add_databases(DatabaseDeltas{});  // not measured
    tick.finish(1);
    EXPECT_EQ(tick.record().ticks_db_counters, 0u);
    tick.begin(1, 2, 0);
    tick.add_databases(DatabaseDeltas{true, 50, 10, 20, 30});
    tick.finish(1);
    EXPECT_EQ(tick.record().ticks_db_counters, 1u);
    EXPECT_EQ(tick.record().xacts, 50u);
    EXPECT_EQ(tick.record().tuples_deleted, 30u);
}

// Devices, probe bins and slots go after the I/O cells, in the ring's run order.
TEST(TickBuilder, LaysOutDevicesProbesAndSlotsInRunOrder) {
    TickBuilder tick(4);
    tick.begin(0, 1, 0);
    tick.add_sample(client(WaitCategory::Cpu));
    tick.add_slot({3, kSlotLogical, 4096, 1, 8192});
    DeviceIoEntry io{};
    io.device = 7, io.reads = 300, io.roles = kRoleData;
    DeviceTimeEntry time{};
    time.read_ms = 15, time.ticks = 1;
    tick.add_device(io, time);
    tick.add_probe_latency(7, 200.0);
    tick.add_probe_latency(7, 210.0);  // same bin
    tick.add_probe_latency(7, 20000.0);
    tick.finish(1);
    const IntervalRecord &r = tick.record();
    EXPECT_EQ(r.n_latency_bins, 2u);
    EXPECT_EQ(r.n_device_entries, 2u);
    EXPECT_EQ(r.n_slots, 1u);
    const auto &e = tick.entries();
    ASSERT_EQ(e.size(), 1u + 2 + 2 + 1);
    EXPECT_EQ(e[1].kind, EntryKind::LatencyBin);
    EXPECT_EQ(e[1].bin.series, LatencySeries::Probe);
    EXPECT_EQ(e[1].bin.weight, 2.0);
    EXPECT_EQ(e[3].kind, EntryKind::DeviceIo);
    EXPECT_EQ(e[4].kind, EntryKind::DeviceTime);
    EXPECT_EQ(e[4].device_time.device, 7);
    EXPECT_EQ(e[5].kind, EntryKind::Slot);
    EXPECT_EQ(e[5].slot.lag_bytes, 4096u);
}

TEST(TickBuilderWalFlushLock, StorageWhileSomeoneIsInWalIo) {
    TickBuilder tick(16);
    tick.begin(0, 1, 0);
    for (int i = 0; i < 3; ++i)
        tick.add_sample(flush_lock_waiter(9));
    ProcSample syncer = active_client(WaitCategory::Storage, kWalSync, 9);
    syncer.role = WaitRole::FlushIo;
    tick.add_sample(syncer);
    tick.finish(1);
    EXPECT_EQ(tick.record().fg_active, 4u);
    EXPECT_EQ(tick.record().fg_storage, 4u);
    EXPECT_EQ(tick.record().fg_lock, 0u);
    EXPECT_EQ(category_of(tick, kWalWriteLock), uint8_t(WaitCategory::Storage));
    for (const ArenaEntry &e : tick.entries()) {
        if (e.kind == EntryKind::QueryGroup) {
            EXPECT_EQ(e.query.storage_samples, 4u);
        }
    }
}

TEST(TickBuilderWalFlushLock, LockWhenNoProcessIsInWalIo) {
    TickBuilder tick(16);
    tick.begin(0, 1, 0);
    for (int i = 0; i < 3; ++i)
        tick.add_sample(flush_lock_waiter(9));
    tick.add_sample(active_client(WaitCategory::Storage, kDataFileRead, 9));  // not WAL I/O
    tick.finish(1);
    EXPECT_EQ(tick.record().fg_active, 4u);
    EXPECT_EQ(tick.record().fg_storage, 1u);
    EXPECT_EQ(tick.record().fg_lock, 3u);
    EXPECT_EQ(category_of(tick, kWalWriteLock), uint8_t(WaitCategory::Lock));
    for (const ArenaEntry &e : tick.entries()) {
        if (e.kind == EntryKind::QueryGroup) {
            EXPECT_EQ(e.query.storage_samples, 1u);
        }
    }
    // The next tick starts undecided again.
    tick.begin(1, 2, 0);
    ProcSample walwriter{
        BackendKind::Walwriter, BackendStateCode::None, WaitCategory::Storage, kWalSync, 0, 0,
        WaitRole::FlushIo};
    tick.add_sample(walwriter);  // the WAL writer's flush counts too, though it is background
    tick.add_sample(flush_lock_waiter(9));
    tick.finish(1);
    EXPECT_EQ(tick.record().fg_storage, 1u);
    EXPECT_EQ(tick.record().fg_lock, 0u);
}

class IoDeltaTrackerTest : public ::testing::Test {
  protected:
    void set_cell(IoObjectCode object, IoContextCode context, IoOpCode op, IoCounters value) {
        tracker.observe(
            tracker.track(io_cell_index(BackendKind::ClientBackend, object, context, op)), value);
    }
    uint32_t step(IoCounters reads, IoCounters wal_syncs, int64_t reset_at = 1) {
        tracker.next().io_reset_at_us = reset_at;
        set_cell(IoObjectCode::Relation, IoContextCode::Normal, IoOpCode::Read, reads);
        set_cell(IoObjectCode::Wal, IoContextCode::Normal, IoOpCode::Fsync, wal_syncs);
        tick.begin(0, 1, 0);
        const uint32_t flags = tracker.update(tick);
        tick.finish(0);
        return flags;
    }
    IoDeltaTracker tracker;
    TickBuilder tick{4};
};

TEST_F(IoDeltaTrackerTest, FirstSnapshotIsABaseline) {
    EXPECT_TRUE(step({100, 2000, 819200}, {5, 500, 0}) & kFlagBaseline);
    EXPECT_EQ(tick.record().reads, 0u);
    EXPECT_TRUE(tick.entries().empty());
}

TEST_F(IoDeltaTrackerTest, DeltasFeedCellsAndHeadlineSeries) {
    step({100, 2000, 819200}, {5, 500, 0});
    const uint32_t flags = step({160, 3200, 819200 + 60 * 8192}, {9, 900, 0});
    EXPECT_FALSE(flags & kFlagBaseline);
    EXPECT_TRUE(flags & kFlagWalFromPgStatIo);
    EXPECT_EQ(tick.record().reads, 60u);
    EXPECT_EQ(tick.record().read_time_us, 1200u);
    EXPECT_EQ(tick.record().wal_syncs, 4u);
    EXPECT_EQ(tick.record().wal_sync_time_us, 400u);
    EXPECT_DOUBLE_EQ(tick.record().read_latency_max_us, 20.0);
    ASSERT_EQ(tick.record().n_io_deltas, 2u);
    EXPECT_EQ(tick.entries()[0].io.bytes, uint64_t(60 * 8192));
}

TEST_F(IoDeltaTrackerTest, UnchangedCellsRecordNothing) {
    step({100, 2000, 0}, {5, 500, 0});
    step({100, 2000, 0}, {5, 500, 0});
    EXPECT_EQ(tick.record().n_io_deltas, 0u);
}

TEST_F(IoDeltaTrackerTest, CounterGoingDownIsAResetNotANegativeDelta) {
    step({1000, 2000, 0}, {5, 500, 0});
    const uint32_t flags = step({10, 20, 0}, {5, 500, 0});
    EXPECT_TRUE(flags & kFlagCountersReset);
    EXPECT_TRUE(flags & kFlagBaseline);
    EXPECT_EQ(tick.record().reads, 0u);
    // The next tick is measured from the new baseline.
    step({15, 30, 0}, {6, 600, 0});
    EXPECT_EQ(tick.record().reads, 5u);
    EXPECT_EQ(tick.record().wal_syncs, 1u);
}

TEST_F(IoDeltaTrackerTest, UnregisteredSlotsAreIgnoredEvenWhenTheyGoDown) {
    step({100, 2000, 0}, {5, 500, 0});
    tracker.observe(5, {999, 999, 999});  // a slot beyond the two registered ones
    const uint32_t flags = step({110, 2100, 0}, {5, 500, 0});
    EXPECT_FALSE(flags & kFlagCountersReset);
    EXPECT_EQ(tick.record().n_io_deltas, 1u);
    EXPECT_EQ(tick.record().reads, 10u);
}

TEST_F(IoDeltaTrackerTest, RegisteringANewCellStartsANewBaseline) {
    step({100, 2000, 0}, {5, 500, 0});
    const size_t cell = io_cell_index(BackendKind::Checkpointer, IoObjectCode::Relation,
                                      IoContextCode::Normal, IoOpCode::Fsync);
    const size_t slot = tracker.track(cell);
    EXPECT_EQ(slot, 2u);
    EXPECT_EQ(tracker.track(cell), slot);  // a repeat changes nothing
    tracker.observe(slot, {7, 70, 0});
    EXPECT_TRUE(step({110, 2100, 0}, {5, 500, 0}) & kFlagBaseline);
    tracker.observe(slot, {9, 90, 0});
    step({120, 2200, 0}, {5, 500, 0});
    ASSERT_EQ(tick.record().n_io_deltas, 2u);
    EXPECT_EQ(tick.entries()[0].io.count, 10u);  // slot order: the client read first
    EXPECT_EQ(tick.entries()[1].io.backend, BackendKind::Checkpointer);
    EXPECT_EQ(tick.entries()[1].io.op, IoOpCode::Fsync);
    EXPECT_EQ(tick.entries()[1].io.count, 2u);
}

TEST_F(IoDeltaTrackerTest, ChangedResetTimestampIsAReset) {
    step({1000, 2000, 0}, {5, 500, 0}, 1);
    // Counters grew past the old values after a reset: only the timestamp tells.
    EXPECT_TRUE(step({5000, 9000, 0}, {9, 900, 0}, 2) & kFlagCountersReset);
}

TEST_F(IoDeltaTrackerTest, PgStatWalSourceOn16And17) {
    IoSnapshot &s = tracker.next();
    s.wal_from_pg_stat_wal = true;
    s.wal_syncs = {10, 1000, 0};
    tick.begin(0, 1, 0);
    tracker.update(tick);
    IoSnapshot &s2 = tracker.next();
    s2.wal_from_pg_stat_wal = true;
    s2.wal_syncs = {13, 1600, 0};
    s2.wal_writes = {4, 40, 0};
    tick.begin(1, 2, 0);
    EXPECT_TRUE(tracker.update(tick) & kFlagWalFromPgStatWal);
    EXPECT_EQ(tick.record().wal_syncs, 3u);
    EXPECT_EQ(tick.record().wal_sync_time_us, 600u);
}

TEST(IoCellIndex, IsDenseAndUnique) {
    const size_t last = io_cell_index(BackendKind(uint8_t(BackendKind::Count) - 1),
                                      IoObjectCode::Wal, IoContextCode::Init, IoOpCode::Writeback);
    EXPECT_EQ(last, kIoCells - 1);
}

}  // namespace
}  // namespace pgsw
