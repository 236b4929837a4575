#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <iterator>
#include <string>
#include <vector>

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/history_file.hpp"

namespace pgsw {
namespace {

// Both rings and the names dictionary, as shared memory holds them (zeroed dictionary).
struct Rings {
    Rings(uint64_t records = 32, uint64_t arena = 256)
        : tick_memory(Ring::bytes_needed(records, arena) / 8 + 8),
          rollup_memory(Ring::bytes_needed(records, arena) / 8 + 8),
          ticks(Ring::create(tick_memory.data(), records, arena)),
          rollups(Ring::create(rollup_memory.data(), records, arena)),
          names(std::make_unique<NameDictionary>()) {}
    std::vector<uint64_t> tick_memory, rollup_memory;
    Ring ticks, rollups;
    std::unique_ptr<NameDictionary> names;

    std::string save(const std::string &path, const HistoryOwner &owner,
                     uint64_t *saved = nullptr) const {
        return save_history(path, ticks, rollups, *names, owner, saved);
    }
    HistoryLoadResult load(const std::string &path, const HistoryOwner &owner) {
        return load_history(path, ticks, rollups, *names, owner);
    }
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

constexpr HistoryOwner kOwner{0x1234567890ABCDEFull, 1000000};

// ctest runs each test in its own process, several at once: the process id keeps two tests
// that damage "the same" file from sharing it (a time-based seed collided within a millisecond).
std::string temp_path(const char *name) {
    return ::testing::TempDir() + "/pgsw_" + name + "_" + std::to_string(::getpid());
}

TEST(HistoryFile, RoundTrip) {
    Rings source;
    fill(source.ticks, 20);
    fill(source.rollups, 5);
    const std::string path = temp_path("roundtrip");
    ASSERT_EQ(source.save(path, kOwner), "");
    Rings target;
    const HistoryLoadResult result = target.load(path, kOwner);
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
    ASSERT_EQ(source.save(path, kOwner), "");
    Rings target(8, 64);
    ASSERT_EQ(target.load(path, kOwner).status, HistoryLoadResult::Status::Loaded);
    auto ticks = target.ticks.read_since(0, false);
    ASSERT_EQ(ticks.size(), 7u);
    EXPECT_EQ(ticks.back().record.reads, 30u);
    std::remove(path.c_str());
}

TEST(HistoryFile, MissingFileIsNotAnError) {
    Rings target;
    EXPECT_EQ(target.load(temp_path("missing"), kOwner).status, HistoryLoadResult::Status::Missing);
}

void expect_invalid_after(const std::function<void(std::string &)> &damage, const char *why) {
    Rings source;
    fill(source.ticks, 10);
    const std::string path = temp_path("damaged");
    ASSERT_EQ(source.save(path, kOwner), "");
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
    const HistoryLoadResult result = target.load(path, kOwner);
    EXPECT_EQ(result.status, HistoryLoadResult::Status::Invalid) << why;
    EXPECT_FALSE(result.reason.empty());
    EXPECT_EQ(target.ticks.end(), 0u) << "an invalid file must not touch the rings";
    EXPECT_EQ(target.names->count, 0u) << "nor the names";
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
    // A big-endian writer's byte-order mark reads 0x04030201 here.
    expect_invalid_after([](std::string &b) { std::swap(b[12], b[15]), std::swap(b[13], b[14]); },
                         "byte order");
}

HistoryLoadResult load_saved(const HistoryOwner &saver, const HistoryOwner &loader, Rings &target) {
    Rings source;
    fill(source.ticks, 10);
    const std::string path = temp_path("owner");
    uint64_t saved = 0;
    EXPECT_EQ(source.save(path, saver, &saved), "");
    EXPECT_EQ(saved, 10u);
    HistoryLoadResult result = target.load(path, loader);
    std::remove(path.c_str());
    return result;
}

TEST(HistoryFile, AnotherServersFileIsRejected) {
    Rings target;
    const HistoryLoadResult result =
        load_saved(kOwner, {kOwner.system_identifier + 1, kOwner.now_us}, target);
    EXPECT_EQ(result.status, HistoryLoadResult::Status::Invalid);
    EXPECT_NE(result.reason.find("another server"), std::string::npos) << result.reason;
    EXPECT_EQ(target.ticks.end(), 0u);
}

TEST(HistoryFile, FileFromTheFutureIsRejected) {
    // Saved at 1 h, loaded after the clock went back to 0: new ticks would precede old ones.
    Rings target;
    const int64_t hour = int64_t{3600} * 1000000;
    const HistoryLoadResult result =
        load_saved({kOwner.system_identifier, hour}, {kOwner.system_identifier, 0}, target);
    EXPECT_EQ(result.status, HistoryLoadResult::Status::Invalid);
    EXPECT_NE(result.reason.find("set back"), std::string::npos) << result.reason;
    // Within the slack (a save a few seconds "ahead"), it loads.
    Rings again;
    EXPECT_EQ(load_saved({kOwner.system_identifier, hour},
                         {kOwner.system_identifier, hour - 5000000}, again)
                  .status,
              HistoryLoadResult::Status::Loaded);
}

TEST(HistoryFile, UnreadableFileIsNotMissing) {
    // A directory where the file should be: open succeeds, read fails (EISDIR).
    const std::string path = temp_path("unreadable");
    ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
    Rings target;
    const HistoryLoadResult result = target.load(path, kOwner);
    EXPECT_EQ(result.status, HistoryLoadResult::Status::Invalid);
    EXPECT_NE(result.reason.find("could not"), std::string::npos) << result.reason;
    rmdir(path.c_str());
}

TEST(HistoryFile, FailedSaveKeepsThePreviousFile) {
    Rings source;
    fill(source.ticks, 3);
    const std::string path = temp_path("keep");
    ASSERT_EQ(source.save(path, kOwner), "");
    // The temporary file cannot be created (a directory is in the way): the save fails.
    const std::string tmp = path + ".tmp";
    ASSERT_EQ(mkdir(tmp.c_str(), 0700), 0);
    fill(source.ticks, 3);
    EXPECT_NE(source.save(path, kOwner), "");
    rmdir(tmp.c_str());
    Rings target;
    const HistoryLoadResult result = target.load(path, kOwner);
    ASSERT_EQ(result.status, HistoryLoadResult::Status::Loaded) << result.reason;
    EXPECT_EQ(result.records_loaded, 3u);
    std::remove(path.c_str());
}

// A file written by extension 1.0 (format 1) is rejected with both format versions named.
TEST(HistoryFile, Format1FileIsRejectedNamingBothVersions) {
    const std::string path = temp_path("format1");
    Rings source;
    fill(source.ticks, 3);
    ASSERT_EQ(source.save(path, kOwner), "");
    std::string bytes;
    {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const uint32_t format1 = 1;
    std::memcpy(&bytes[8], &format1, sizeof format1);
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << bytes;
    }
    Rings target;
    const HistoryLoadResult result = target.load(path, kOwner);
    EXPECT_EQ(result.status, HistoryLoadResult::Status::Invalid);
    EXPECT_NE(result.reason.find("format 1"), std::string::npos) << result.reason;
    EXPECT_NE(result.reason.find("reads format " + std::to_string(kHistoryFormatVersion)),
              std::string::npos)
        << result.reason;
    EXPECT_NE(result.reason.find("pg_storage_wait 1.0"), std::string::npos) << result.reason;
    EXPECT_EQ(target.ticks.end(), 0u);
    std::remove(path.c_str());
}

TEST(HistoryFile, Crc32MatchesKnownValue) {
    EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
}

TEST(HistoryFile, Crc32CombineMatchesTheWholeMessage) {
    std::string message(100000, '\0');
    for (size_t i = 0; i < message.size(); ++i)
        message[i] = char(i * 131 + i / 7);
    for (const size_t split :
         {size_t{0}, size_t{1}, size_t{8}, size_t{4095}, size_t{99999}, message.size()}) {
        const uint32_t a = crc32(message.data(), split);
        const uint32_t b = crc32(message.data() + split, message.size() - split);
        EXPECT_EQ(crc32_combine(a, b, message.size() - split),
                  crc32(message.data(), message.size()))
            << "split at " << split;
    }
}

// ---- names ---------------------------------------------------------------------------------

// A record whose entries name a device, a replication slot and a custom wait event.
void append_named(Ring &ring, int64_t end_us, uint16_t device, uint16_t slot, uint16_t event) {
    IntervalRecord r{};
    r.start_us = end_us - 1000, r.end_us = end_us, r.ticks = 1;
    ArenaEntry e[5] = {};
    e[0].wait.kind = EntryKind::WaitGroup;
    e[0].wait.wait_event_info = kCustomWaitEventClass | event;
    e[0].wait.samples = 1;
    e[1].bin.kind = EntryKind::LatencyBin;
    e[1].bin.series = LatencySeries::Probe;
    e[1].bin.device = device;
    e[2].device_io.kind = EntryKind::DeviceIo;
    e[2].device_io.device = device;
    e[3].device_time.kind = EntryKind::DeviceTime;
    e[3].device_time.device = device;
    e[4].slot.kind = EntryKind::Slot;
    e[4].slot.slot = slot;
    r.n_wait_groups = r.n_latency_bins = r.n_slots = 1;
    r.n_device_entries = 2;
    ring.append(r, e, 5);
}

struct NamesSeen {
    std::string device, probe_device, device_time, slot, event;
};

// What each name id in a restored record reads as.
NamesSeen names_in(const RecordCopy &c, const NameDictionary &names) {
    NamesSeen seen;
    for (const ArenaEntry &e : c.entries) {
        auto name = [&](uint16_t id, NameKind kind) {
            return std::string(name_of(names, id, kind));
        };
        if (e.kind == EntryKind::WaitGroup && is_custom_wait_event(e.wait.wait_event_info))
            seen.event = name(custom_wait_event_name(e.wait.wait_event_info), NameKind::WaitEvent);
        if (e.kind == EntryKind::LatencyBin)
            seen.probe_device = name(e.bin.device, NameKind::Device);
        if (e.kind == EntryKind::DeviceIo)
            seen.device = name(e.device_io.device, NameKind::Device);
        if (e.kind == EntryKind::DeviceTime)
            seen.device_time = name(e.device_time.device, NameKind::Device);
        if (e.kind == EntryKind::Slot)
            seen.slot = name(e.slot.slot, NameKind::Slot);
    }
    return seen;
}

// The bug this fixes: records refer to names by their id in the shared dictionary, which a
// restart re-creates empty. Before format 4 the restored records' ids indexed whatever the new
// server interned first, so a slot created after the restart (or a device or an extension's
// wait event met in another order) took over the name of an old one in the restored history.
TEST(HistoryNames, RestoredRecordsKeepTheirNamesWhenTheNextServerInternsInAnotherOrder) {
    Rings before;
    NameWriter writer(*before.names);
    writer.intern(NameKind::Slot, "slot_dropped_long_ago");  // used by no saved record
    const uint16_t sda = writer.intern(NameKind::Device, "sda");
    const uint16_t nvme = writer.intern(NameKind::Device, "nvme0n1");
    const uint16_t old_slot = writer.intern(NameKind::Slot, "slot_before_restart");
    const uint16_t event_a = writer.intern(NameKind::WaitEvent, "ExtensionAWait");
    const uint16_t event_b = writer.intern(NameKind::WaitEvent, "ExtensionBWait");
    append_named(before.ticks, 1000, sda, old_slot, event_a);
    append_named(before.ticks, 2000, nvme, old_slot, event_b);
    append_named(before.rollups, 60000, nvme, old_slot, event_a);
    const std::string path = temp_path("names_order");
    ASSERT_EQ(before.save(path, kOwner), "");

    Rings after;
    const HistoryLoadResult result = after.load(path, kOwner);
    std::remove(path.c_str());
    ASSERT_EQ(result.status, HistoryLoadResult::Status::Loaded) << result.reason;
    EXPECT_EQ(result.warning, "");
    // Only the names the restored records use, in their old order: the dropped slot is gone.
    EXPECT_EQ(name_count(*after.names), 6u);
    // The restarted server meets a new slot, the other extension and the devices in another
    // order; each new name takes a new id, the known ones keep theirs.
    NameWriter restarted(*after.names);
    const uint16_t new_slot = restarted.intern(NameKind::Slot, "slot_after_restart");
    const uint16_t new_event = restarted.intern(NameKind::WaitEvent, "ExtensionCWait");
    const uint16_t nvme_again = restarted.intern(NameKind::Device, "nvme0n1");
    EXPECT_EQ(new_slot, 6u);
    EXPECT_EQ(new_event, 7u);
    EXPECT_EQ(name_of(*after.names, nvme_again, NameKind::Device), "nvme0n1");

    const auto ticks = after.ticks.read_since(0, true);
    ASSERT_EQ(ticks.size(), 2u);
    const NamesSeen first = names_in(ticks[0], *after.names);
    EXPECT_EQ(first.device, "sda");
    EXPECT_EQ(first.device_time, "sda");
    EXPECT_EQ(first.probe_device, "sda");
    EXPECT_EQ(first.slot, "slot_before_restart");
    EXPECT_EQ(first.event, "ExtensionAWait");
    const NamesSeen second = names_in(ticks[1], *after.names);
    EXPECT_EQ(second.device, "nvme0n1");
    EXPECT_EQ(second.event, "ExtensionBWait");
    const auto rollups = after.rollups.read_since(0, true);
    ASSERT_EQ(rollups.size(), 1u);
    EXPECT_EQ(names_in(rollups[0], *after.names).device, "nvme0n1");
    EXPECT_EQ(names_in(rollups[0], *after.names).slot, "slot_before_restart");
    // The device a restored record names is the one the live server's readings name.
    for (const ArenaEntry &e : ticks[1].entries) {
        if (e.kind == EntryKind::DeviceIo) {
            EXPECT_EQ(e.device_io.device, nvme_again);
        }
    }
}

TEST(HistoryNames, ARingTooSmallForSomeRecordsDropsTheirNames) {
    Rings before;
    NameWriter writer(*before.names);
    const uint16_t old_device = writer.intern(NameKind::Device, "old_device");
    const uint16_t new_device = writer.intern(NameKind::Device, "new_device");
    const uint16_t slot = writer.intern(NameKind::Slot, "s");
    for (int i = 1; i <= 10; ++i)
        append_named(before.ticks, i * 1000, i <= 5 ? old_device : new_device, slot, 0);
    const std::string path = temp_path("names_small");
    ASSERT_EQ(before.save(path, kOwner), "");
    Rings after(4, 64);  // keeps the newest 3
    ASSERT_EQ(after.load(path, kOwner).status, HistoryLoadResult::Status::Loaded);
    std::remove(path.c_str());
    EXPECT_EQ(name_count(*after.names), 3u);  // slot 0, new_device, s
    EXPECT_EQ(name_of(*after.names, 1, NameKind::Device), "new_device");
    EXPECT_EQ(name_of(*after.names, 2, NameKind::Slot), "s");
}

// ---- the format-3 writer, kept as the reference ----------------------------------------------

// The writer before streaming and names (main 904c268's save_history: the whole file built in
// memory), verbatim but for `version`: with 3 it writes a format-3 file; with 4, the bytes the
// streaming writer must produce before its name table.
std::vector<char> whole_file_writer(const Ring &ticks, const Ring &rollups,
                                    const HistoryOwner &owner, uint32_t version) {
    std::vector<char> bytes;
    auto put = [&](const void *data, size_t n) {
        const auto *p = static_cast<const char *>(data);
        bytes.insert(bytes.end(), p, p + n);
    };
    auto put_u32 = [&](uint32_t v) { put(&v, sizeof v); };
    auto put_ring = [&](const Ring &ring) {
        std::vector<RecordCopy> copies;
        RecordCopy copy;
        for (uint64_t no = ring.first_readable(); no < ring.end(); ++no)
            if (ring.read(no, copy) == ReadStatus::Ok)
                copies.push_back(copy);
        const uint64_t n = copies.size();
        put(&n, sizeof n);
        for (const RecordCopy &c : copies) {
            put(&c.record, sizeof c.record);
            put(c.entries.data(), c.entries.size() * sizeof(ArenaEntry));
        }
    };
    put("PGSWHIST", 8);
    put_u32(version);
    put_u32(0x01020304);
    put_u32(sizeof(IntervalRecord));
    put_u32(sizeof(ArenaEntry));
    put_u32(2);
    put(&owner.system_identifier, sizeof owner.system_identifier);
    put(&owner.now_us, sizeof owner.now_us);
    put_ring(ticks);
    put_ring(rollups);
    return bytes;  // without its CRC
}

void append_crc(std::vector<char> &bytes) {
    const uint32_t crc = crc32(bytes.data(), bytes.size());
    const auto *p = reinterpret_cast<const char *>(&crc);
    bytes.insert(bytes.end(), p, p + sizeof crc);
}

void write_bytes(const std::string &path, const std::vector<char> &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::vector<char> read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A format-3 file: its records load, each name it cannot know reads "(unknown)" (never another
// name), and one warning names both formats.
TEST(HistoryNames, Format3FileLoadsWithNamesUnknown) {
    Rings before;
    NameWriter writer(*before.names);
    const uint16_t sda = writer.intern(NameKind::Device, "sda");
    const uint16_t sdb = writer.intern(NameKind::Device, "sdb");
    const uint16_t slot = writer.intern(NameKind::Slot, "a_slot");
    const uint16_t event = writer.intern(NameKind::WaitEvent, "AnEvent");
    append_named(before.ticks, 1000, sda, slot, event);
    append_named(before.ticks, 2000, sdb, slot, event);
    std::vector<char> bytes = whole_file_writer(before.ticks, before.rollups, kOwner, 3);
    append_crc(bytes);
    const std::string path = temp_path("format3");
    write_bytes(path, bytes);

    Rings after;
    const HistoryLoadResult result = after.load(path, kOwner);
    std::remove(path.c_str());
    ASSERT_EQ(result.status, HistoryLoadResult::Status::Loaded) << result.reason;
    EXPECT_EQ(result.records_loaded, 2u);
    EXPECT_NE(result.warning.find("format 3"), std::string::npos) << result.warning;
    EXPECT_NE(result.warning.find("format 4"), std::string::npos) << result.warning;
    EXPECT_NE(result.warning.find("(unknown)"), std::string::npos) << result.warning;
    // The next server's first names must not be read into the old records.
    NameWriter restarted(*after.names);
    restarted.intern(NameKind::Device, "sda");
    restarted.intern(NameKind::Slot, "a_new_slot");
    const auto ticks = after.ticks.read_since(0, true);
    ASSERT_EQ(ticks.size(), 2u);
    for (const RecordCopy &c : ticks) {
        const NamesSeen seen = names_in(c, *after.names);
        EXPECT_EQ(seen.device, "(unknown)");
        EXPECT_EQ(seen.probe_device, "(unknown)");
        EXPECT_EQ(seen.slot, "(unknown)");
        EXPECT_EQ(seen.event, "(unknown)");
    }
    // Two devices stay two: their rows are never summed as one.
    auto device_of = [](const RecordCopy &c) {
        for (const ArenaEntry &e : c.entries)
            if (e.kind == EntryKind::DeviceIo)
                return e.device_io.device;
        return uint16_t{0};
    };
    EXPECT_NE(device_of(ticks[0]), device_of(ticks[1]));
}

// ---- the name table, validated like the rest of the file -------------------------------------

// Saves a file whose last name is `name`, then lets `damage` change its name table (which
// starts at `table_at`) before the CRC is recomputed: only the name-table checks can refuse it.
void expect_names_refused(const std::function<void(std::vector<char> &, size_t table_at)> &damage,
                          const char *reason_part) {
    Rings before;
    NameWriter writer(*before.names);
    const uint16_t device = writer.intern(NameKind::Device, "sda");
    const uint16_t slot = writer.intern(NameKind::Slot, "a_slot");
    append_named(before.ticks, 1000, device, slot, 0);
    const std::string path = temp_path("name_table");
    ASSERT_EQ(before.save(path, kOwner), "");
    std::vector<char> bytes = read_bytes(path);
    bytes.resize(bytes.size() - sizeof(uint32_t));
    const size_t table_at = bytes.size() - (4 + 2 + 3 + 2 + 6);  // count, "sda", "a_slot"
    uint32_t count = 0;
    std::memcpy(&count, &bytes[table_at], sizeof count);
    ASSERT_EQ(count, 2u) << "the name table is where this test expects it";
    damage(bytes, table_at);
    append_crc(bytes);
    write_bytes(path, bytes);
    Rings after;
    const HistoryLoadResult result = after.load(path, kOwner);
    std::remove(path.c_str());
    EXPECT_EQ(result.status, HistoryLoadResult::Status::Invalid) << reason_part;
    EXPECT_NE(result.reason.find(reason_part), std::string::npos) << result.reason;
    EXPECT_EQ(after.ticks.end(), 0u);
    EXPECT_EQ(after.names->count, 0u);
}

TEST(HistoryNames, DamagedNameTableIsRefused) {
    auto set_u32 = [](std::vector<char> &b, size_t at, uint32_t v) {
        std::memcpy(&b[at], &v, sizeof v);
    };
    expect_names_refused([&](auto &b, size_t at) { set_u32(b, at, 5000); }, "more than 1023");
    expect_names_refused([&](auto &b, size_t at) { set_u32(b, at, 3); }, "truncated name table");
    expect_names_refused([&](auto &b, size_t at) { b.resize(at + 6); }, "truncated name table");
    expect_names_refused([](auto &b, size_t at) { b[at + 4] = 0; }, "unknown kind 0");
    expect_names_refused([](auto &b, size_t at) { b[at + 4] = 9; }, "unknown kind 9");
    expect_names_refused([](auto &b, size_t at) { b[at + 5] = 63; }, "more than 62");
    expect_names_refused([](auto &b, size_t) { b.push_back('x'); }, "after the name table");
    // The record's device is name 1: make it a slot, or drop name 2 the record's slot uses.
    expect_names_refused([](auto &b, size_t at) { b[at + 4] = uint8_t(NameKind::Slot); },
                         "of another kind");
    expect_names_refused(
        [&](auto &b, size_t at) {
            set_u32(b, at, 1);
            b.resize(at + 4 + 2 + 3);
        },
        "lacks");
}

// ---- streaming -----------------------------------------------------------------------------

// The writer's output in memory, with the size of each append.
struct MemorySink final : HistorySink {
    std::vector<char> bytes;
    size_t largest_append = 0, appends = 0;
    std::string append(const void *data, size_t n) override {
        const auto *p = static_cast<const char *>(data);
        bytes.insert(bytes.end(), p, p + n);
        largest_append = std::max(largest_append, n), ++appends;
        return "";
    }
    std::string overwrite(uint64_t offset, const void *data, size_t n) override {
        if (offset + n > bytes.size())
            return "overwrite past the end";
        std::memcpy(&bytes[offset], data, n);
        return "";
    }
};

void fill_named(Rings &rings, int ticks, int rollups) {
    NameWriter writer(*rings.names);
    const uint16_t device = writer.intern(NameKind::Device, "vda");
    const uint16_t slot = writer.intern(NameKind::Slot, "standby_1");
    const uint16_t event = writer.intern(NameKind::WaitEvent, "SomeExtensionWait");
    for (int i = 1; i <= ticks; ++i)
        append_named(rings.ticks, i * 1000, device, slot, event);
    for (int i = 1; i <= rollups; ++i)
        append_named(rings.rollups, i * 60000, device, slot, event);
}

// The streamed file is the whole-file writer's bytes, then the name table, then the CRC of it
// all: the same format whatever the buffer size, and the same records the old writer saved.
TEST(HistoryStream, BytesMatchTheWholeFileWriter) {
    Rings source(64, 512);
    fill_named(source, 50, 20);
    std::vector<char> expected = whole_file_writer(source.ticks, source.rollups, kOwner, 4);
    const uint32_t n_names = 3;
    expected.insert(expected.end(), reinterpret_cast<const char *>(&n_names),
                    reinterpret_cast<const char *>(&n_names) + 4);
    const std::pair<NameKind, std::string> names[] = {{NameKind::Device, "vda"},
                                                      {NameKind::Slot, "standby_1"},
                                                      {NameKind::WaitEvent, "SomeExtensionWait"}};
    for (const auto &[kind, text] : names) {
        expected.push_back(char(kind));
        expected.push_back(char(text.size()));
        expected.insert(expected.end(), text.begin(), text.end());
    }
    append_crc(expected);
    for (const size_t buffer : {size_t{64}, size_t{100}, size_t{4096}, kHistorySaveBufferBytes}) {
        MemorySink sink;
        uint64_t saved = 0;
        ASSERT_EQ(write_history(sink, source.ticks, source.rollups, *source.names, kOwner, buffer,
                                &saved),
                  "");
        EXPECT_EQ(saved, 70u);
        EXPECT_TRUE(sink.bytes == expected) << "buffer of " << buffer << " bytes";
        EXPECT_LE(sink.largest_append, buffer);
    }
    // And through the file, as the server saves it.
    const std::string path = temp_path("stream_file");
    ASSERT_EQ(source.save(path, kOwner), "");
    EXPECT_TRUE(read_bytes(path) == expected);
    std::remove(path.c_str());
}

// A sink that fails after `fail_after` bytes (a disk that fills up).
struct FullDiskSink final : HistorySink {
    size_t fail_after, written = 0;
    explicit FullDiskSink(size_t n) : fail_after(n) {}
    std::string append(const void *, size_t n) override {
        if (written + n > fail_after)
            return "No space left on device";
        written += n;
        return "";
    }
    std::string overwrite(uint64_t, const void *, size_t) override { return ""; }
};

TEST(HistoryStream, AWriteErrorStopsTheSave) {
    Rings source(64, 512);
    fill_named(source, 50, 20);
    FullDiskSink sink(10000);
    uint64_t saved = 12345;
    EXPECT_EQ(
        write_history(sink, source.ticks, source.rollups, *source.names, kOwner, 4096, &saved),
        "No space left on device");
    EXPECT_EQ(saved, 12345u) << "no count reported for a failed save";
    EXPECT_LE(sink.written, 10000u);
}

}  // namespace

// ---- memory: every heap allocation of this test program, counted while `tracking` -----------
// Replacing the global operator new/delete is how a test sees every allocation a function
// makes, its containers' included. Counting is off except inside HistoryStream.MemoryIsBounded.
namespace heap {
std::atomic<bool> tracking{false};
std::atomic<long long> live{0}, peak{0};
void *allocate(size_t n) {
    void *p = std::malloc(n ? n : 1);
    if (p == nullptr)
        throw std::bad_alloc();
    if (tracking.load(std::memory_order_relaxed)) {
        const long long now = live += static_cast<long long>(malloc_usable_size(p));
        long long seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
    }
    return p;
}
void release(void *p) {
    if (p != nullptr && tracking.load(std::memory_order_relaxed))
        live -= static_cast<long long>(malloc_usable_size(p));
    std::free(p);
}
// The largest amount of heap `fn` holds at once beyond what it started with.
template <typename Fn>
long long peak_growth(Fn &&fn) {
    live = 0, peak = 0;
    tracking = true;
    fn();
    tracking = false;
    return peak.load();
}
}  // namespace heap

namespace {

TEST(HistoryStream, MemoryIsBounded) {
    // ~4,000 records of 5 entries: a 2.6 MB file.
    Rings source(3001, 20000);
    fill_named(source, 3000, 1000);
    const size_t buffer = 64 * 1024;
    MemorySink discard;  // grows outside the tracked window: reserve the file's size first
    discard.bytes.reserve(size_t{8} << 20);
    long long file_bytes = 0;
    const long long streamed = heap::peak_growth([&] {
        ASSERT_EQ(
            write_history(discard, source.ticks, source.rollups, *source.names, kOwner, buffer),
            "");
        file_bytes = static_cast<long long>(discard.bytes.size());
    });
    ASSERT_GT(file_bytes, 2'000'000);
    // The buffer, one record's entries and a few small vectors: not the file.
    EXPECT_LT(streamed, static_cast<long long>(buffer) + 16 * 1024)
        << "the save held " << streamed << " bytes at once for a file of " << file_bytes;
    // The check can fail: the whole-file writer holds more than the file.
    const long long whole = heap::peak_growth(
        [&] { (void)whole_file_writer(source.ticks, source.rollups, kOwner, 4); });
    EXPECT_GT(whole, file_bytes);
    std::printf(
        "[ memory   ] file %lld bytes: streaming held %lld bytes at most, "
        "the whole-file writer %lld\n",
        file_bytes, streamed, whole);
}

}  // namespace
}  // namespace pgsw

// Every non-aligned form, nothrow included: a form left to the runtime (AddressSanitizer has its
// own) would pair its allocation with this release and be reported as a mismatch.
void *operator new(size_t n) {
    return pgsw::heap::allocate(n);
}
void *operator new(size_t n, const std::nothrow_t &) noexcept {
    try {
        return pgsw::heap::allocate(n);
    } catch (...) {
        return nullptr;
    }
}
void *operator new[](size_t n, const std::nothrow_t &) noexcept {
    try {
        return pgsw::heap::allocate(n);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void *p, const std::nothrow_t &) noexcept {
    pgsw::heap::release(p);
}
void operator delete[](void *p, const std::nothrow_t &) noexcept {
    pgsw::heap::release(p);
}
void *operator new[](size_t n) {
    return pgsw::heap::allocate(n);
}
void operator delete(void *p) noexcept {
    pgsw::heap::release(p);
}
void operator delete[](void *p) noexcept {
    pgsw::heap::release(p);
}
void operator delete(void *p, size_t) noexcept {
    pgsw::heap::release(p);
}
void operator delete[](void *p, size_t) noexcept {
    pgsw::heap::release(p);
}
