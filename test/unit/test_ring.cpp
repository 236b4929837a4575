#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/ring.hpp"

namespace pgsw {
namespace {

// A record whose every field is derived from `n`, so a reader can tell a torn copy.
IntervalRecord make_record(uint64_t n, uint32_t entries) {
    IntervalRecord r{};
    r.start_us = int64_t(n) * 1000;
    r.end_us = int64_t(n) * 1000 + 1000;
    r.ticks = 1;
    r.reads = n * 3;
    r.read_time_us = n * 7;
    r.fg_active = n;
    r.n_wait_groups = entries;
    return r;
}

std::vector<ArenaEntry> make_entries(uint64_t n, uint32_t count) {
    std::vector<ArenaEntry> entries(count);
    for (uint32_t i = 0; i < count; ++i) {
        entries[i] = ArenaEntry{};
        entries[i].wait.kind = EntryKind::WaitGroup;
        entries[i].wait.wait_event_info = uint32_t(n);
        entries[i].wait.samples = i;
    }
    return entries;
}

bool consistent(const RecordCopy &c) {
    const uint64_t n = c.record.fg_active;
    if (c.record.end_us != int64_t(n) * 1000 + 1000 || c.record.reads != n * 3 ||
        c.record.read_time_us != n * 7)
        return false;
    for (uint32_t i = 0; i < c.entries.size(); ++i)
        if (c.entries[i].wait.wait_event_info != uint32_t(n) || c.entries[i].wait.samples != i)
            return false;
    return true;
}

struct RingFixture {
    RingFixture(uint64_t records, uint64_t arena)
        : memory(Ring::bytes_needed(records, arena) + 64),
          ring(Ring::create(memory.data(), records, arena)) {}
    std::vector<uint64_t> memory;  // 8-byte aligned
    Ring ring;
};

TEST(Ring, EmptyRingReadsNothing) {
    RingFixture f(8, 64);
    EXPECT_EQ(f.ring.end(), 0u);
    EXPECT_TRUE(f.ring.read_since(0, true).empty());
    RecordCopy copy;
    EXPECT_EQ(f.ring.read(0, copy), ReadStatus::NotWritten);
}

TEST(Ring, AppendsAndReadsBackInOrder) {
    RingFixture f(8, 64);
    for (uint64_t n = 1; n <= 5; ++n) {
        auto e = make_entries(n, 3);
        f.ring.append(make_record(n, 3), e.data(), e.size());
    }
    auto all = f.ring.read_since(0, true);
    ASSERT_EQ(all.size(), 5u);
    for (uint64_t i = 0; i < 5; ++i) {
        EXPECT_EQ(all[i].record.record_no, i);
        EXPECT_EQ(all[i].entries.size(), 3u);
        EXPECT_TRUE(consistent(all[i]));
    }
}

TEST(Ring, ReadSinceIsExclusiveOfOlderRecords) {
    RingFixture f(16, 64);
    for (uint64_t n = 1; n <= 10; ++n)
        f.ring.append(make_record(n, 0), nullptr, 0);
    auto recent = f.ring.read_since(int64_t(7) * 1000 + 1000, false);  // after n=7
    ASSERT_EQ(recent.size(), 3u);
    EXPECT_EQ(recent.front().record.fg_active, 8u);
}

TEST(Ring, WrapsAroundKeepingCapacityMinusOne) {
    RingFixture f(4, 64);
    for (uint64_t n = 1; n <= 10; ++n)
        f.ring.append(make_record(n, 0), nullptr, 0);
    auto all = f.ring.read_since(0, false);
    ASSERT_EQ(all.size(), 3u);  // the oldest slot is the next one rewritten: not readable
    EXPECT_EQ(all.back().record.fg_active, 10u);
    RecordCopy copy;
    EXPECT_EQ(f.ring.read(0, copy), ReadStatus::Gone);
}

TEST(Ring, ArenaOverwriteKeepsTotalsButDropsEntries) {
    RingFixture f(64, 16);  // arena much smaller than records x entries
    for (uint64_t n = 1; n <= 10; ++n) {
        auto e = make_entries(n, 4);
        f.ring.append(make_record(n, 4), e.data(), e.size());
    }
    RecordCopy copy;
    EXPECT_EQ(f.ring.read(0, copy), ReadStatus::EntriesGone);
    EXPECT_TRUE(copy.entries.empty());
    EXPECT_EQ(copy.record.reads, 3u);  // totals intact
    EXPECT_EQ(f.ring.read(9, copy), ReadStatus::Ok);
    EXPECT_TRUE(consistent(copy));
}

// Entries of all four kinds, in arena order, each tagged with its position.
std::vector<ArenaEntry> mixed_entries(uint32_t waits, uint32_t queries, uint32_t io,
                                      uint32_t bins) {
    std::vector<ArenaEntry> entries;
    const std::pair<EntryKind, uint32_t> runs[] = {{EntryKind::WaitGroup, waits},
                                                   {EntryKind::QueryGroup, queries},
                                                   {EntryKind::IoDelta, io},
                                                   {EntryKind::LatencyBin, bins}};
    for (const auto &[kind, n] : runs)
        for (uint32_t i = 0; i < n; ++i) {
            ArenaEntry e{};
            e.kind = kind;
            e.query.samples = uint32_t(entries.size());  // same offset in every member
            entries.push_back(e);
        }
    return entries;
}

TEST(Ring, ReadCopiesOnlyTheRequestedKindsAcrossTheArenaWrap) {
    RingFixture f(8, 40);
    for (uint64_t n = 1; n <= 4; ++n) {  // 14 entries each, arena of 40: record 2 wraps
        IntervalRecord r = make_record(n, 0);
        r.n_wait_groups = 3, r.n_query_groups = 2, r.n_io_deltas = 4, r.n_latency_bins = 5;
        const auto e = mixed_entries(3, 2, 4, 5);
        f.ring.append(r, e.data(), e.size());
    }
    RecordCopy copy;
    ASSERT_EQ(f.ring.read(2, copy, kAllEntries), ReadStatus::Ok);
    ASSERT_EQ(copy.entries.size(), 14u);
    for (uint32_t i = 0; i < 14; ++i)
        EXPECT_EQ(copy.entries[i].query.samples, i);

    ASSERT_EQ(f.ring.read(2, copy, kWaitGroupEntries | kLatencyBinEntries), ReadStatus::Ok);
    ASSERT_EQ(copy.entries.size(), 8u);
    EXPECT_EQ(copy.record.n_wait_groups, 3u);
    EXPECT_EQ(copy.record.n_query_groups, 0u);
    EXPECT_EQ(copy.record.n_io_deltas, 0u);
    EXPECT_EQ(copy.record.n_latency_bins, 5u);
    for (uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(copy.entries[i].kind, EntryKind::WaitGroup);
        EXPECT_EQ(copy.entries[i].query.samples, i);
    }
    for (uint32_t i = 3; i < 8; ++i) {
        EXPECT_EQ(copy.entries[i].kind, EntryKind::LatencyBin);
        EXPECT_EQ(copy.entries[i].query.samples, i + 6);  // after 2 queries and 4 I/O deltas
    }

    ASSERT_EQ(f.ring.read(2, copy, kIoDeltaEntries), ReadStatus::Ok);
    ASSERT_EQ(copy.entries.size(), 4u);
    EXPECT_EQ(copy.entries.front().query.samples, 5u);

    ASSERT_EQ(f.ring.read(2, copy, kNoEntries), ReadStatus::Ok);
    EXPECT_TRUE(copy.entries.empty());
    EXPECT_EQ(copy.record.reads, 9u);  // totals intact whatever the mask
}

TEST(Ring, FirstAfterFindsTheBoundary) {
    RingFixture f(8, 64);
    EXPECT_EQ(f.ring.first_after(0), 0u);
    for (uint64_t n = 1; n <= 10; ++n)  // record n ends at n * 1000 + 1000
        f.ring.append(make_record(n, 0), nullptr, 0);
    EXPECT_EQ(f.ring.first_after(8000), 7u);    // records 7.. end after 8000 (n = 8..)
    EXPECT_EQ(f.ring.first_after(11000), 10u);  // none: end()
    EXPECT_EQ(f.ring.first_after(0), f.ring.first_readable());
}

// The prefetch is a hint: at every slot and arena position, across both wraps, the ring's
// memory is the same after it, and the next append and read work as without it.
TEST(Ring, PrefetchNextAppendChangesNothing) {
    RingFixture f(4, 16);
    for (uint64_t n = 1; n <= 12; ++n) {
        const std::vector<uint64_t> before = f.memory;
        f.ring.prefetch_next_append();
        EXPECT_EQ(f.memory, before) << "append " << n;
        auto e = make_entries(n, 5);
        const uint64_t no = f.ring.append(make_record(n, 5), e.data(), e.size());
        RecordCopy copy;
        ASSERT_EQ(f.ring.read(no, copy), ReadStatus::Ok);
        EXPECT_TRUE(consistent(copy));
    }
}

TEST(Ring, OversizedRecordIsCutAndFlagged) {
    RingFixture f(8, 8);
    auto e = make_entries(1, 20);
    f.ring.append(make_record(1, 20), e.data(), e.size());
    RecordCopy copy;
    ASSERT_EQ(f.ring.read(0, copy), ReadStatus::Ok);
    EXPECT_EQ(copy.entries.size(), 4u);
    EXPECT_TRUE(copy.record.flags & kFlagEntriesTruncated);
}

TEST(Ring, HideAllHidesOnlyWhatWasWritten) {
    RingFixture f(8, 64);
    for (uint64_t n = 1; n <= 3; ++n)
        f.ring.append(make_record(n, 0), nullptr, 0);
    f.ring.hide_all();
    EXPECT_TRUE(f.ring.read_since(0, false).empty());
    f.ring.append(make_record(4, 0), nullptr, 0);
    auto after = f.ring.read_since(0, false);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].record.fg_active, 4u);
}

TEST(Ring, AttachSeesTheSameRing) {
    RingFixture f(8, 64);
    f.ring.append(make_record(1, 0), nullptr, 0);
    Ring other = Ring::attach(f.memory.data());
    EXPECT_EQ(other.end(), 1u);
    EXPECT_EQ(other.record_capacity(), 8u);
}

// One writer appends as fast as it can into a small ring while readers copy records: a reader
// must never accept a torn record or torn entries, and the writer never waits for anybody.
TEST(Ring, ConcurrentReadersNeverSeeTornRecords) {
    RingFixture f(16, 16 * 6);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> accepted{0}, torn_seen{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t)
        readers.emplace_back([&] {
            RecordCopy copy;
            while (!stop.load(std::memory_order_relaxed)) {
                const uint64_t end = f.ring.end();
                for (uint64_t no = f.ring.first_readable(); no < end; ++no) {
                    const ReadStatus s = f.ring.read(no, copy);
                    if (s == ReadStatus::Ok) {
                        if (!consistent(copy))
                            torn_seen++;
                        accepted++;
                    }
                }
            }
        });
    for (uint64_t n = 1; n <= 200000; ++n) {
        auto e = make_entries(n, uint32_t(n % 7));
        f.ring.append(make_record(n, uint32_t(n % 7)), e.data(), e.size());
    }
    stop = true;
    for (auto &r : readers)
        r.join();
    EXPECT_EQ(torn_seen.load(), 0u);
    EXPECT_GT(accepted.load(), 0u);
}

}  // namespace
}  // namespace pgsw
