// libFuzzer harness: the history file reader (core/history_file.*) and every reader of the
// records it restores. The file lies in the data directory, where anything with write access
// there (or a disk fault) can leave any bytes: a trust boundary. load_history() must reject
// what it cannot prove well-formed, and what it accepts must be safe for every window reader.
//
// Input: one mode byte, then the file's bytes. Mode bit 0 set: the harness appends the right
// CRC-32, so mutations reach the parser and the readers behind the checksum (a random change
// almost never passes it); clear: the bytes are the whole file, CRC included. Bit 1 (format 3
// and later): load as another server than the file's (the refusal path).
//
// Names (format 4): a rejected file must leave the dictionary empty too; a loaded one must
// leave a well-formed dictionary (kinds known, lengths in bounds) in which every name id a
// restored record holds exists with the kind the record expects (format 3: as "(unknown)").
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "core/history_file.hpp"
#include "history_api.hpp"
#include "core/names.hpp"
#include "core/ring.hpp"
#include "core/window.hpp"

namespace {

using namespace pgsw;

constexpr uint64_t kRecords = 64, kArena = 512;

struct Rings {
    std::vector<uint64_t> tick_memory, rollup_memory;
    Rings()
        : tick_memory(Ring::bytes_needed(kRecords, kArena) / 8 + 8),
          rollup_memory(Ring::bytes_needed(kRecords, kArena) / 8 + 8) {}
};

std::string file_path() {
    static const std::string path = [] {
        char tmpl[] = "/tmp/pgsw-fuzz-history.XXXXXX";
        const int fd = mkstemp(tmpl);
        if (fd < 0)
            std::abort();
        close(fd);
        return std::string(tmpl);
    }();
    return path;
}

// The file as written: the input, with its CRC appended when asked.
std::vector<uint8_t> file_bytes(const uint8_t *data, size_t size, bool add_crc) {
    std::vector<uint8_t> bytes(data, data + size);
    if (add_crc) {
        const uint32_t crc = crc32(data, size);
        const auto *p = reinterpret_cast<const uint8_t *>(&crc);
        bytes.insert(bytes.end(), p, p + sizeof crc);
    }
    return bytes;
}

void write_file(const std::string &path, const std::vector<uint8_t> &bytes) {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr)
        std::abort();
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
        std::abort();
    std::fclose(f);
}

// Every answer over everything restored, from the rings as the SQL functions read them.
void read_everything(const Ring &ticks, const Ring &rollups) {
    WaitNameTable names;
    names.add(0x0A000000u, "IO", "DataFileRead");
    names.add(0x05000000u, "LWLock", "WALWrite");
    names.add(0x07000000u, "Extension", "Extension");
    for (const bool use_rollups : {false, true}) {
        WindowPlan plan;
        plan.start_us = INT64_MIN / 2;
        plan.end_us = INT64_MAX / 2;
        plan.use_rollups = use_rollups;
        const RingWindow window(ticks, rollups, plan);
        (void)summarize(window, names);
        (void)wait_event_profile(window, names);
        (void)io_latency(window);
        (void)history(window, 0);
        (void)history(window, 60'000'000);
        (void)query_profile(window);
        (void)distinct_wait_infos(window);
        (void)covered_seconds(window);
    }
}

// The name ids an entry holds, with the kind each must name (history_file.cpp's list).
bool entry_names_resolve(const ArenaEntry &e, const NameDictionary &names) {
    auto ok = [&](uint16_t id, NameKind kind) {
        return id == 0 || (id < name_count(names) && names.slots[id].kind == uint8_t(kind));
    };
    switch (e.kind) {
        case EntryKind::WaitGroup:
            return !is_custom_wait_event(e.wait.wait_event_info) ||
                   ok(custom_wait_event_name(e.wait.wait_event_info), NameKind::WaitEvent);
        case EntryKind::LatencyBin:
            return ok(e.bin.device, NameKind::Device);
        case EntryKind::DeviceIo:
            return ok(e.device_io.device, NameKind::Device);
        case EntryKind::DeviceTime:
            return ok(e.device_time.device, NameKind::Device);
        case EntryKind::Slot:
            return ok(e.slot.slot, NameKind::Slot);
        default:
            return true;
    }
}

void check_names(const Ring &ring, const NameDictionary &names, bool nameless) {
    const uint32_t count = name_count(names);
    for (uint32_t id = 1; id < count; ++id) {
        const NameSlot &slot = names.slots[id];
        if (slot.kind < 1 || slot.kind > 4 || slot.length > kNameMaxLength)
            std::abort();
        if (nameless && std::string_view(slot.text, slot.length) != kUnknownName)
            std::abort();  // a format-3 file cannot know a name
    }
    for (const RecordCopy &c : ring.read_since(INT64_MIN, true))
        for (const ArenaEntry &e : c.entries)
            if (!entry_names_resolve(e, names))
                std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    static Rings memory;
    static NameDictionary *names = new NameDictionary();
    std::memset(names, 0, sizeof *names);
    const std::string path = file_path();
    const std::vector<uint8_t> file = file_bytes(data + 1, size - 1, (data[0] & 1) != 0);
    write_file(path, file);

    Ring ticks = Ring::create(memory.tick_memory.data(), kRecords, kArena);
    Ring rollups = Ring::create(memory.rollup_memory.data(), kRecords, kArena);
    const HistoryLoadResult result =
        fuzz::load(path, file, (data[0] & 2) != 0, ticks, rollups, *names);
    if (result.status != HistoryLoadResult::Status::Loaded) {
        // Rejected: the rings and the names must be untouched.
        if (ticks.end() != 0 || rollups.end() != 0 || names->count != 0 || result.reason.empty())
            std::abort();
        return 0;
    }
    const bool nameless = !result.warning.empty();
    check_names(ticks, *names, nameless);
    check_names(rollups, *names, nameless);
    if (result.records_loaded > 0 && ticks.end() == 0 && rollups.end() == 0)
        std::abort();
    read_everything(ticks, rollups);
    return 0;
}
