// Writes the history_file seed corpus (test/fuzz/corpus/history_file/): real files from
// save_history() with records that carry entries of every kind, the names they refer to (a
// device, a replication slot, a custom wait event) and a name no record uses, in the harness's
// input format (mode byte 1 + the file without its CRC; mode byte 0 + the whole file); and the
// same as format 3 (no name table), which is loaded with its names as "(unknown)". Re-run after a
// file format change (test/fuzz/run.sh also writes a fresh set next to the committed one at
// every run, so a format change never leaves the harness with only stale seeds):
//   clang++-16 -std=c++17 -Isrc test/fuzz/make_history_seeds.cpp <core sources> -o /tmp/seeds
//   /tmp/seeds test/fuzz/corpus/history_file
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/history_file.hpp"
#include "core/names.hpp"
#include "core/wait_class.hpp"
#include "history_api.hpp"

using namespace pgsw;

namespace {

struct NameIds {
    uint16_t device, slot, wait_event;
};

void fill(Ring &ring, int records, bool rollup, const NameIds &ids) {
    for (int i = 1; i <= records; ++i) {
        IntervalRecord r{};
        r.start_us = i * 1'000'000;
        r.end_us = r.start_us + (rollup ? 60'000'000 : 1'000'000);
        r.ticks = rollup ? 60 : 1;
        r.ticks_io_timing = r.ticks_wal_timing = r.ticks;
        r.fg_active = 10, r.fg_storage = 4, r.fg_cpu = 3, r.fg_lock = 1;
        r.reads = 100, r.read_time_us = 5000, r.wal_syncs = 20, r.wal_sync_time_us = 4000;
        // Runs in arena order: wait groups, queries, I/O, latency bins, devices, slots.
        std::vector<ArenaEntry> e(8);
        e[0].wait.kind = EntryKind::WaitGroup;
        e[0].wait.backend = BackendKind::ClientBackend;
        e[0].wait.category = uint8_t(WaitCategory::Storage);
        e[0].wait.wait_event_info = 0x0A000000u;
        e[0].wait.samples = 4;
        e[1].wait = e[0].wait;  // a custom wait event: its name's id
        e[1].wait.category = uint8_t(WaitCategory::Other);
        e[1].wait.wait_event_info = kCustomWaitEventClass | ids.wait_event;
        e[2].query.kind = EntryKind::QueryGroup;
        e[2].query.samples = 3;
        e[3].io.kind = EntryKind::IoDelta;
        e[3].io.count = 100, e[3].io.time_us = 5000;
        e[4].bin.kind = EntryKind::LatencyBin;
        e[4].bin.bin = 40, e[4].bin.weight = 100;
        e[5].device_io.kind = EntryKind::DeviceIo;
        e[5].device_io.reads = 100;
        e[5].device_io.device = ids.device;
        e[6].device_time.kind = EntryKind::DeviceTime;
        e[6].device_time.device = ids.device;
        e[6].device_time.read_ms = 7;
        e[7].slot.kind = EntryKind::Slot;
        e[7].slot.lag_bytes = 4096;
        e[7].slot.slot = ids.slot;
        r.n_wait_groups = 2;
        r.n_query_groups = r.n_io_deltas = r.n_latency_bins = 1;
        r.n_device_entries = 2;
        r.n_slots = 1;
        ring.append(r, e.data(), e.size());
    }
}

void write_seed(const std::string &path, char mode, const std::vector<char> &bytes, size_t n) {
    std::ofstream out(path, std::ios::binary);
    out.put(mode);
    out.write(bytes.data(), std::streamsize(n));
}

// The bytes of a format-3 file with the same rings: without the name table, version 3 (its
// CRC left for the harness to append: mode 1).
std::vector<char> as_format3(std::vector<char> bytes, size_t name_table_bytes) {
    bytes.resize(bytes.size() - sizeof(uint32_t) - name_table_bytes);
    const uint32_t version = 3;
    std::memcpy(bytes.data() + 8, &version, sizeof version);
    return bytes;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2)
        return 2;
    const std::string dir = argv[1];
    auto names = std::make_unique<NameDictionary>();
    NameWriter writer(*names);
    writer.intern(NameKind::Tablespace, "unused_by_any_record");
    const NameIds ids{writer.intern(NameKind::Device, "loop7"),
                      writer.intern(NameKind::Slot, "pgsw_slot"),
                      writer.intern(NameKind::WaitEvent, "PgswCustomWait")};
    // u32 count, then per name: kind, length, its bytes
    const size_t name_table_bytes = sizeof(uint32_t) + 4 * 2 + std::strlen("unused_by_any_record") +
                                    std::strlen("loop7") + std::strlen("pgsw_slot") +
                                    std::strlen("PgswCustomWait");
    const int sizes[][2] = {{0, 0}, {1, 0}, {3, 2}};
    for (const auto &size : sizes) {
        std::vector<uint64_t> a(Ring::bytes_needed(16, 128) / 8 + 8), b(a.size());
        Ring ticks = Ring::create(a.data(), 16, 128), rollups = Ring::create(b.data(), 16, 128);
        fill(ticks, size[0], false, ids);
        fill(rollups, size[1], true, ids);
        const std::string tmp = dir + "/.seed";
        if (!fuzz::save(tmp, ticks, rollups, *names).empty())
            return 1;
        std::ifstream in(tmp, std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                      std::istreambuf_iterator<char>());
        std::remove(tmp.c_str());
        const std::string base =
            dir + "/t" + std::to_string(size[0]) + "r" + std::to_string(size[1]);
        write_seed(base + "-fixcrc", 1, bytes, bytes.size() - 4);
        write_seed(base + "-whole", 0, bytes, bytes.size());
        const std::vector<char> format3 = as_format3(bytes, name_table_bytes);
        write_seed(base + "-format3-fixcrc", 1, format3, format3.size());
    }
    // Regression seed (fuzz_history_file's first find): records without entries, as baseline
    // ticks are; loading one copied 0 bytes to a null pointer (undefined behaviour).
    std::vector<uint64_t> a(Ring::bytes_needed(16, 128) / 8 + 8), b(a.size());
    Ring ticks = Ring::create(a.data(), 16, 128), rollups = Ring::create(b.data(), 16, 128);
    for (int i = 1; i <= 2; ++i) {
        IntervalRecord r{};
        r.start_us = i * 1'000'000, r.end_us = r.start_us + 1'000'000, r.ticks = 1;
        r.flags = kFlagBaseline;
        ticks.append(r, nullptr, 0);
    }
    const std::string tmp = dir + "/.seed";
    const auto no_names = std::make_unique<NameDictionary>();
    if (!fuzz::save(tmp, ticks, rollups, *no_names).empty())
        return 1;
    std::ifstream in(tmp, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    std::remove(tmp.c_str());
    write_seed(dir + "/regression-record-without-entries", 1, bytes, bytes.size() - 4);
    return 0;
}
