// The opt-in probe (core/probe.hpp, probe_table.hpp, probe_file.hpp): the shared hand-over
// between the saver and the sampler, the per-device bins in ticks and roll-ups, the per-read
// quantiles (p99.9 included), the rows' reasons, and the probe file on a real file system.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/latency_stats.hpp"
#include "core/probe.hpp"
#include "core/probe_file.hpp"
#include "core/probe_table.hpp"
#include "core/rollup.hpp"
#include "core/tick_builder.hpp"
#include "core/window.hpp"

namespace pgsw {
namespace {

constexpr int64_t kSecond = 1000 * 1000;
constexpr int64_t kT0 = 13000000LL * 60 * kSecond;  // a minute-aligned TimestampTz

std::unique_ptr<ProbeTable> new_table() {
    auto table = std::make_unique<ProbeTable>();
    std::memset(table.get(), 0, sizeof(ProbeTable));
    return table;
}

// Device 8:16 is name id 7, 8:32 is id 9; anything else is unknown to the sampler.
uint16_t name_of_device(uint32_t major, uint32_t minor) {
    if (major == 8 && minor == 16)
        return 7;
    if (major == 8 && minor == 32)
        return 9;
    return 0;
}

// What one reading records: weight per (device, bin).
struct Recorded {
    uint16_t device;
    uint8_t bin;
    double weight;
};
std::vector<Recorded> collect(ProbeCollector &c, const ProbeTable &t, TickBuilder &tick) {
    tick.begin(0, kSecond, 0);
    c.collect(t, name_of_device, tick);
    tick.finish(1);
    std::vector<Recorded> out;
    for (const ArenaEntry &e : tick.entries())
        if (e.kind == EntryKind::LatencyBin && e.bin.series == LatencySeries::Probe)
            out.push_back({e.bin.device, e.bin.bin, e.bin.weight});
    return out;
}

double total(const std::vector<Recorded> &r) {
    double sum = 0;
    for (const Recorded &x : r)
        sum += x.weight;
    return sum;
}

// ---- the shared table -------------------------------------------------------------------------

TEST(ProbeTable, AssignRecordAndReadBack) {
    auto t = new_table();
    ProbeSlot &slot = t->slots[0];
    probe_slot_assign(slot, 8, 16, ProbeState::Preparing, "/data/pg_stat_tmp/x.probe", "");
    probe_slot_update(slot, ProbeState::Probing, "");
    probe_slot_record(slot, 200.0);
    probe_slot_record(slot, 20000.0);
    probe_slot_failure(slot, "the last probe read failed: EIO");
    ProbeSlotView v = read_probe_slot(slot);
    ASSERT_TRUE(v.valid);
    EXPECT_EQ(v.epoch, 1u);
    EXPECT_EQ(v.major, 8u);
    EXPECT_EQ(v.minor, 16u);
    EXPECT_EQ(v.state, ProbeState::Probing);
    EXPECT_EQ(v.probes, 2u);
    EXPECT_EQ(v.failures, 1u);
    EXPECT_EQ(v.file, "/data/pg_stat_tmp/x.probe");
    EXPECT_EQ(v.reason, "the last probe read failed: EIO");
    EXPECT_EQ(slot.bins[latency_bin(200.0)], 1u);
    EXPECT_EQ(slot.bins[latency_bin(20000.0)], 1u);
    EXPECT_EQ(slot.generation % 2, 0u) << "the seqlock is even once written";

    // Another device: a new epoch, its counts from zero.
    probe_slot_assign(slot, 8, 32, ProbeState::Probing, "/ts/x.probe", "");
    v = read_probe_slot(slot);
    EXPECT_EQ(v.epoch, 2u);
    EXPECT_EQ(v.probes, 0u);
    EXPECT_EQ(slot.bins[latency_bin(200.0)], 0u);
    EXPECT_FALSE(read_probe_slot(t->slots[1]).valid) << "a slot never used";
}

TEST(ProbeTable, LongTextIsCut) {
    auto t = new_table();
    probe_slot_assign(t->slots[0], 1, 2, ProbeState::Failed, std::string(1000, 'f'),
                      std::string(1000, 'r'));
    const ProbeSlotView v = read_probe_slot(t->slots[0]);
    EXPECT_EQ(v.file.size(), kProbeTextBytes - 1);
    EXPECT_EQ(v.reason.size(), kProbeTextBytes - 1);
}

// ---- the sampler's collector -----------------------------------------------------------------

TEST(ProbeCollector, BaselineFirstThenEachReadExactlyOnce) {
    auto t = new_table();
    probe_slot_assign(t->slots[0], 8, 16, ProbeState::Probing, "f", "");
    t->count = 1;
    for (int i = 0; i < 5; ++i)
        probe_slot_record(t->slots[0], 150.0);  // before the sampler's first sight
    ProbeCollector c;
    TickBuilder tick(4);
    EXPECT_TRUE(collect(c, *t, tick).empty()) << "reads made before the sampler ran: a baseline";
    EXPECT_TRUE(collect(c, *t, tick).empty()) << "nothing new";

    probe_slot_record(t->slots[0], 150.0);
    probe_slot_record(t->slots[0], 152.0);  // the same bin as 150 (2^(1/8) wide)
    probe_slot_record(t->slots[0], 20000.0);
    const std::vector<Recorded> r = collect(c, *t, tick);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(total(r), 3.0);
    for (const Recorded &x : r) {
        EXPECT_EQ(x.device, 7);
        EXPECT_EQ(x.weight, x.bin == latency_bin(20000.0) ? 1.0 : 2.0);
    }
    EXPECT_TRUE(collect(c, *t, tick).empty()) << "recorded once, not again";
}

// A bin raised before `probes` (the writer between its two stores) is recorded at once, and
// not a second time when `probes` catches up.
TEST(ProbeCollector, ABinSeenEarlyIsCountedOnce) {
    auto t = new_table();
    probe_slot_assign(t->slots[0], 8, 16, ProbeState::Probing, "f", "");
    t->count = 1;
    ProbeCollector c;
    TickBuilder tick(4);
    (void)collect(c, *t, tick);
    probe_slot_record(t->slots[0], 300.0);
    t->slots[0].bins[latency_bin(900.0)] += 1;  // the next read, `probes` not yet stored
    EXPECT_EQ(total(collect(c, *t, tick)), 2.0);
    t->slots[0].probes += 1;  // the writer's second store
    EXPECT_TRUE(collect(c, *t, tick).empty());
}

TEST(ProbeCollector, NewEpochCountsFromZeroUnknownDeviceDropped) {
    auto t = new_table();
    probe_slot_assign(t->slots[0], 8, 16, ProbeState::Probing, "f", "");
    probe_slot_assign(t->slots[1], 9, 1, ProbeState::Probing, "g", "");  // unknown to the sampler
    t->count = 2;
    ProbeCollector c;
    TickBuilder tick(4);
    (void)collect(c, *t, tick);
    probe_slot_record(t->slots[1], 500.0);
    EXPECT_TRUE(collect(c, *t, tick).empty()) << "a device the sampler does not know";
    EXPECT_TRUE(collect(c, *t, tick).empty()) << "dropped, not retried every reading";

    // Slot 0 given to device 8:32 (id 9): its two reads are all new.
    probe_slot_assign(t->slots[0], 8, 32, ProbeState::Probing, "h", "");
    probe_slot_record(t->slots[0], 500.0);
    probe_slot_record(t->slots[0], 500.0);
    const std::vector<Recorded> r = collect(c, *t, tick);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].device, 9);
    EXPECT_EQ(r[0].weight, 2.0);
}

TEST(ProbeCollector, SlotBeingRewrittenIsLeftForTheNextReading) {
    auto t = new_table();
    probe_slot_assign(t->slots[0], 8, 16, ProbeState::Probing, "f", "");
    t->count = 1;
    ProbeCollector c;
    TickBuilder tick(4);
    (void)collect(c, *t, tick);
    probe_slot_record(t->slots[0], 400.0);
    t->slots[0].generation += 1;  // odd: the writer is inside its seqlock
    EXPECT_TRUE(collect(c, *t, tick).empty());
    t->slots[0].generation += 1;
    EXPECT_EQ(total(collect(c, *t, tick)), 1.0);
}

// More distinct bins than a tick holds (kMaxProbeBinsPerTick): the rest waits for the next
// reading instead of being lost.
TEST(ProbeCollector, BinsBeyondTheTicksRoomWaitForTheNextReading) {
    auto t = new_table();
    probe_slot_assign(t->slots[0], 8, 16, ProbeState::Probing, "f", "");
    t->count = 1;
    ProbeCollector c;
    TickBuilder tick(4);
    (void)collect(c, *t, tick);
    const size_t bins = kMaxProbeBinsPerTick + 20;
    for (size_t b = 0; b < bins; ++b)
        probe_slot_record(t->slots[0], latency_bin_mid_us(uint8_t(40 + b)));
    EXPECT_EQ(total(collect(c, *t, tick)), double(kMaxProbeBinsPerTick));
    EXPECT_EQ(total(collect(c, *t, tick)), 20.0);
    EXPECT_TRUE(collect(c, *t, tick).empty());
}

// ---- quantiles from the bins ------------------------------------------------------------------

TEST(ProbeQuantiles, P999AndMaxFromBins) {
    double weights[kProbeBinCount] = {};
    weights[latency_bin(100.0)] = 990;
    weights[latency_bin(5000.0)] = 9;
    weights[latency_bin(50000.0)] = 1;
    const LatencySummary s = latency_of_bins(weights);
    ASSERT_TRUE(s.valid);
    EXPECT_EQ(s.total_count, 1000.0);
    EXPECT_NEAR(s.p50_us, 100.0, 100.0 * kLatencyBinMaxRelError);
    EXPECT_NEAR(s.p99_us, 100.0, 100.0 * kLatencyBinMaxRelError) << "990 of 1000 at 0.1 ms";
    EXPECT_NEAR(s.p999_us, 5000.0, 5000.0 * kLatencyBinMaxRelError) << "the 999th read";
    EXPECT_NEAR(s.max_us, 50000.0, 50000.0 * kLatencyBinMaxRelError);
    double none[kProbeBinCount] = {};
    EXPECT_FALSE(latency_of_bins(none).valid) << "no reads: NULL, never 0";
}

// The example: 95 % of reads at 0.2 ms, 5 % at 20 ms. Per-second means (what pg_stat_io
// allows) all sit near 1.2 ms, so even their p99 shows no tail; the probe's bins show it.
TEST(ProbeQuantiles, ShowTheTailPerSecondMeansCannot) {
    LatencyAccumulator per_second;
    double weights[kProbeBinCount] = {};
    uint64_t rng = 42;
    for (int second = 0; second < 60; ++second) {
        double count = 0, time_us = 0;
        for (int read = 0; read < 1000; ++read) {
            const double us = probe_random(rng) % 100 < 5 ? 20000.0 : 200.0;
            count += 1, time_us += us;
            weights[latency_bin(us)] += 1;
        }
        per_second.add_interval(count, time_us);
    }
    const LatencySummary means = per_second.summary();
    const LatencySummary reads = latency_of_bins(weights);
    EXPECT_LT(means.p99_us, 2000.0) << "per-second means: p99 ~1.2 ms, no 20 ms tail";
    EXPECT_NEAR(reads.p50_us, 200.0, 200.0 * kLatencyBinMaxRelError);
    EXPECT_GE(reads.p99_us, 15000.0) << "per read: p99 in the 20 ms tail";
    EXPECT_NEAR(reads.p99_us, 20000.0, 20000.0 * kLatencyBinMaxRelError);
}

// Ticks carry the probe bins per device; roll-ups sum them; a window over roll-ups and the
// ticks after them counts each read once. Read/WAL series bins are not the probe's.
TEST(ProbeWindow, PerDeviceOverRollupsAndTicks) {
    RollupBuilder rollup(16, 16);
    WindowRecords w;
    TickBuilder tick(4);
    for (int i = 0; i < 70; ++i) {
        tick.begin(kT0 + i * kSecond, kT0 + (i + 1) * kSecond, 0);
        tick.add_probe_latency(7, i % 20 == 0 ? 20000.0 : 200.0);  // 5 % slow
        tick.add_probe_latency(9, 1000.0);
        tick.finish(1);
        const IntervalRecord &r = tick.record();
        if (rollup.starts_new_bucket(r)) {
            rollup.finish();
            w.rollups.push_back({rollup.record(), rollup.entries()});
        }
        if (w.rollups.empty())
            rollup.add(r, tick.entries().data(), tick.entries().size());
        else
            w.ticks.push_back({r, {tick.entries().begin(), tick.entries().end()}});
    }
    // A Reads-series bin in a roll-up is not a probe read.
    ArenaEntry reads{};
    reads.bin = LatencyBinEntry{EntryKind::LatencyBin, LatencySeries::Reads, 50, 0, 0, {}, 99, {}};
    w.rollups[0].entries.push_back(reads);
    w.rollups[0].record.n_latency_bins += 1;

    const std::vector<ProbeDeviceWindow> devices = probe_window(w);
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0].device, 7);
    EXPECT_EQ(devices[0].probes, 70.0);
    EXPECT_NEAR(devices[0].latency.p50_us, 200.0, 200.0 * kLatencyBinMaxRelError);
    EXPECT_NEAR(devices[0].latency.p99_us, 20000.0, 20000.0 * kLatencyBinMaxRelError);
    EXPECT_NEAR(devices[0].latency.max_us, 20000.0, 20000.0 * kLatencyBinMaxRelError);
    EXPECT_EQ(devices[1].device, 9);
    EXPECT_EQ(devices[1].probes, 70.0);
    EXPECT_NEAR(devices[1].latency.p999_us, 1000.0, 1000.0 * kLatencyBinMaxRelError);
}

// ---- reasons ----------------------------------------------------------------------------------

TEST(ProbeRowReason, NullOnlyWithAReason) {
    ProbeRowFacts f;
    f.block_device = false;
    f.no_device_reason = "no block device: tmpfs (tmpfs) at /dev/shm";
    EXPECT_EQ(probe_row_reason(f).rfind("no block device: tmpfs (tmpfs) at /dev/shm: nothing to "
                                        "probe",
                                        0),
              0u);
    f = ProbeRowFacts{};
    EXPECT_EQ(probe_row_reason(f), "pg_storage_wait.probe is off");
    f.probes_in_window = 3;
    EXPECT_EQ(probe_row_reason(f), "") << "figures: no reason";
    f = ProbeRowFacts{};
    f.probe_on = true;
    EXPECT_EQ(probe_row_reason(f), "no probe read in the window yet");
    f.slot_found = true, f.state = ProbeState::Preparing;
    EXPECT_NE(probe_row_reason(f).find("writing the probe file (256 MB)"), std::string::npos);
    f.state = ProbeState::Refused;
    f.slot_reason = probe_error_reason("cannot open the probe file", "/mnt/x", EINVAL);
    EXPECT_NE(probe_row_reason(f).find("refuses O_DIRECT (EINVAL)"), std::string::npos);
    f.state = ProbeState::Failed;
    f.slot_reason = probe_error_reason("cannot create the probe file", "/mnt/x", ENOSPC);
    EXPECT_NE(probe_row_reason(f).find("No space left on device"), std::string::npos);
}

// ---- the probe file on a real file system -----------------------------------------------------

std::string temp_path(const std::string &name) {
    return ::testing::TempDir() + "/pgsw_probe_" + name + "_" + std::to_string(::getpid());
}

constexpr uint64_t kSmallFile = 4 * kProbeWriteChunk;  // the tests' probe file: 4 MB

struct Removed {
    std::string path;
    ~Removed() {
        unlink(path.c_str());
        unlink((path + ".tmp").c_str());
    }
};

TEST(ProbeFile, CreatedOnceWithRealBlocksThenReused) {
    const Removed file{temp_path("create")};
    ProbeFile probe;
    ProbeOpenResult r = probe.open_or_create(file.path, kSmallFile);
    if (r.refused)
        GTEST_SKIP() << "O_DIRECT is refused here: " << r.reason;
    ASSERT_TRUE(r.ok) << r.reason;
    EXPECT_TRUE(r.created);
    struct stat st;
    ASSERT_EQ(stat(file.path.c_str(), &st), 0);
    EXPECT_EQ(uint64_t(st.st_size), kSmallFile);
    EXPECT_GE(uint64_t(st.st_blocks) * 512, kSmallFile) << "every block allocated: not sparse";
    EXPECT_NE(access((file.path + ".tmp").c_str(), F_OK), 0) << "renamed into place";
    // Not zeros: a compressing layer must store it.
    std::vector<char> bytes(8192);
    const int fd = open(file.path.c_str(), O_RDONLY);
    ASSERT_EQ(pread(fd, bytes.data(), bytes.size(), 4096), ssize_t(bytes.size()));
    close(fd);
    EXPECT_NE(std::count(bytes.begin(), bytes.end(), 0), ssize_t(bytes.size()));

    uint64_t rng = 7;
    for (int i = 0; i < 20; ++i) {
        const ProbeReadResult read = probe.read_random(rng);
        ASSERT_TRUE(read.ok) << std::strerror(read.error);
        EXPECT_GT(read.latency_us, 0.0);
        EXPECT_LT(read.latency_us, 10e6);
    }
    probe.close();
    EXPECT_FALSE(probe.read_random(rng).ok) << "closed";
    r = probe.open_or_create(file.path, kSmallFile);
    ASSERT_TRUE(r.ok) << r.reason;
    EXPECT_FALSE(r.created) << "an existing, complete file is reused";
}

// A file of the right size whose blocks are holes (or of another size) is written again.
TEST(ProbeFile, SparseOrShortFileIsRewritten) {
    const Removed file{temp_path("sparse")};
    const int fd = open(file.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t(kSmallFile)), 0);  // all holes
    close(fd);
    ProbeFile probe;
    const ProbeOpenResult r = probe.open_or_create(file.path, kSmallFile);
    if (r.refused)
        GTEST_SKIP() << "O_DIRECT is refused here: " << r.reason;
    ASSERT_TRUE(r.ok) << r.reason;
    EXPECT_TRUE(r.created);
    struct stat st;
    ASSERT_EQ(stat(file.path.c_str(), &st), 0);
    EXPECT_GE(uint64_t(st.st_blocks) * 512, kSmallFile);
}

TEST(ProbeFile, StopAbandonsTheCreationAndLeavesNothing) {
    const Removed file{temp_path("stop")};
    ProbeFile probe;
    const ProbeOpenResult r = probe.open_or_create(file.path, kSmallFile, [] { return true; });
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(probe.is_open());
    EXPECT_NE(access(file.path.c_str(), F_OK), 0);
    EXPECT_NE(access((file.path + ".tmp").c_str(), F_OK), 0);
}

TEST(ProbeFile, MissingDirectoryIsAFailureWithItsReason) {
    ProbeFile probe;
    const ProbeOpenResult r = probe.open_or_create(temp_path("nodir") + "/sub/x", kSmallFile);
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.refused);
    EXPECT_NE(r.reason.find("No such file or directory"), std::string::npos) << r.reason;
}

TEST(ProbeFile, AllocationCheck) {
    EXPECT_TRUE(probe_file_allocated(kProbeFileBytes, kProbeFileBytes / 512, kProbeFileBytes));
    EXPECT_FALSE(probe_file_allocated(kProbeFileBytes, 8, kProbeFileBytes)) << "sparse";
    EXPECT_FALSE(probe_file_allocated(kProbeFileBytes / 2, kProbeFileBytes, kProbeFileBytes));
}

}  // namespace
}  // namespace pgsw
