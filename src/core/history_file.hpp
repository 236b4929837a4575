#include "core/cpp_only.hpp"
#pragma once
// The history file: both rings written at clean shutdown and read back at start-up, so a
// restart keeps the history. Format (little-endian, this machine's struct layout):
//
//   "PGSWHIST" | u32 format_version | u32 record_size | u32 entry_size | u32 ring_count (2)
//   per ring: u64 record_count, then per record: IntervalRecord, then its entries
//   u32 CRC-32 of every byte before it
//
// The reader validates everything (magic, version, sizes, counts against the file length,
// entry counts, CRC) before it touches a ring, then re-appends the records oldest first, so a
// ring whose capacity changed since the file was written keeps the newest records that fit.
// A missing file is not an error; a truncated, corrupt or foreign one is reported and ignored.
#include <cstdint>
#include <string>

#include "core/ring.hpp"

namespace pgsw {

constexpr uint32_t kHistoryFormatVersion = 2;  // 2: extension 1.1 records (format 2)

struct HistoryLoadResult {
    enum class Status { Loaded, Missing, Invalid } status;
    std::string reason;  // for Invalid: what is wrong, for the WARNING
    uint64_t records_loaded = 0;
};

// Writes `path`.tmp, fsyncs and renames it over `path`. Returns "" or an error description.
std::string save_history(const std::string &path, const Ring &ticks, const Ring &rollups);

// Reads `path` into the (empty) rings.
HistoryLoadResult load_history(const std::string &path, Ring &ticks, Ring &rollups);

uint32_t crc32(const void *data, size_t length, uint32_t crc = 0) noexcept;

}  // namespace pgsw
