#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/history_file.hpp"

namespace pgsw {
namespace {

struct Rings {
    Rings(uint64_t records = 32, uint64_t arena = 256)
        : tick_memory(Ring::bytes_needed(records, arena) / 8 + 8),
          rollup_memory(Ring::bytes_needed(records, arena) / 8 + 8),
          ticks(Ring::create(tick_memory.data(), records, arena)),
          rollups(Ring::create(rollup_memory.data(), records, arena)) {}
    std::vector<uint64_t> tick_memory, rollup_memory;
    Ring ticks, rollups;
};

void fill(Ring &ring, int n) {
    for (int i = 1; i <= n; ++i) {
        IntervalRecord r{};
        r.start_us = i * 1000;
        r.end_us = i * 1000 + 1000;
        r.reads = uint64_t(i);
        r.n_io_deltas = 2;
        ArenaEntry e[2] = {};
        e[0].io.kind = e[1].io.kind = EntryKind::IoDelta;
        e[0].io.count = uint64_t(i);
        e[1].io.count = uint64_t(i) * 2;
        ring.append(r, e, 2);
    }
}

std::string temp_path(const char *name) {
    return ::testing::TempDir() + "/pgsw_" + name + "_" +
           std::to_string(::testing::UnitTest::GetInstance()->random_seed());
}

TEST(HistoryFile, RoundTrip) {
    Rings source;
    fill(source.ticks, 20);
    fill(source.rollups, 5);
    const std::string path = temp_path("roundtrip");
    ASSERT_EQ(save_history(path, source.ticks, source.rollups), "");
    Rings target;
    const HistoryLoadResult result = load_history(path, target.ticks, target.rollups);
    ASSERT_EQ(result.status, HistoryLoadResult::Status::Loaded) << result.reason;
    EXPECT_EQ(result.records_loaded, 25u);
    auto ticks = target.ticks.read_since(0, true);
    ASSERT_EQ(ticks.size(), 20u);
    EXPECT_EQ(ticks.back().record.reads, 20u);
    ASSERT_EQ(ticks.back().entries.size(), 2u);
    EXPECT_EQ(ticks.back().entries[1].io.count, 40u);
    EXPECT_EQ(target.rollups.read_since(0, true).size(), 5u);
    std::remove(path.c_str());
}

TEST(HistoryFile, SmallerRingKeepsNewest) {
    Rings source;
    fill(source.ticks, 30);
    const std::string path = temp_path("smaller");
    ASSERT_EQ(save_history(path, source.ticks, source.rollups), "");
    Rings target(8, 64);
    ASSERT_EQ(load_history(path, target.ticks, target.rollups).status,
              HistoryLoadResult::Status::Loaded);
    auto ticks = target.ticks.read_since(0, false);
    ASSERT_EQ(ticks.size(), 7u);
    EXPECT_EQ(ticks.back().record.reads, 30u);
    std::remove(path.c_str());
}

TEST(HistoryFile, MissingFileIsNotAnError) {
    Rings target;
    EXPECT_EQ(load_history(temp_path("missing"), target.ticks, target.rollups).status,
              HistoryLoadResult::Status::Missing);
}

void expect_invalid_after(const std::function<void(std::string &)> &damage, const char *why) {
    Rings source;
    fill(source.ticks, 10);
    const std::string path = temp_path("damaged");
    ASSERT_EQ(save_history(path, source.ticks, source.rollups), "");
    std::string bytes;
    {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    damage(bytes);
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << bytes;
    }
    Rings target;
    const HistoryLoadResult result = load_history(path, target.ticks, target.rollups);
    EXPECT_EQ(result.status, HistoryLoadResult::Status::Invalid) << why;
    EXPECT_FALSE(result.reason.empty());
    EXPECT_EQ(target.ticks.end(), 0u) << "an invalid file must not touch the rings";
    std::remove(path.c_str());
}

TEST(HistoryFile, TruncatedFileIsRejected) {
    expect_invalid_after([](std::string &b) { b.resize(b.size() / 2); }, "truncated");
    expect_invalid_after([](std::string &b) { b.resize(10); }, "tiny");
    expect_invalid_after([](std::string &b) { b.clear(); }, "empty");
}

TEST(HistoryFile, CorruptByteIsRejected) {
    expect_invalid_after([](std::string &b) { b[b.size() / 2] ^= 0x5A; }, "flipped byte");
}

TEST(HistoryFile, ForeignFileIsRejected) {
    expect_invalid_after([](std::string &b) { b.replace(0, 8, "NOTOURS!"); }, "magic");
    expect_invalid_after([](std::string &b) { b[8] = 99; }, "version");
}

TEST(HistoryFile, Crc32MatchesKnownValue) {
    EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
}

}  // namespace
}  // namespace pgsw
