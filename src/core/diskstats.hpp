#include "core/cpp_only.hpp"
#pragma once
// /proc/diskstats: the kernel's cumulative per-device counters (Documentation/admin-guide/
// iostats.rst), the numbers iostat -x is computed from. One line per device:
//
//   major minor name  reads merged sectors ms  writes merged sectors ms  in_flight io_ms
//   weighted_ms  [discards merged sectors ms (4.18+)]  [flushes flush_ms (5.5+)]
//
// (partitions on kernels before 2.6.25 have 4 fields only: reads, sectors, writes, sectors).
// parse_diskstats() is a pure function of one buffer (the sampler reads the file with one
// pread) that fills only the wanted MAJ:MIN; DiskstatsDelta turns two readings into deltas.
// The "ios" fields are unsigned long (32 bits on 32-bit kernels), the time fields unsigned int
// (milliseconds: they wrap every ~49.7 days on every kernel), so a counter that went down by
// what a 32-bit wrap explains is a wrap; any other decrease is a reset (a device removed and
// another given its number, a counter reset): re-baseline, no delta.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pgsw {

struct DiskCounters {
    uint64_t reads = 0, read_sectors = 0, read_ms = 0;
    uint64_t writes = 0, write_sectors = 0, write_ms = 0;
    uint64_t in_flight = 0, io_ms = 0, queue_ms = 0;  // io_ms: busy time; queue_ms: weighted
    uint64_t flushes = 0, flush_ms = 0;
    bool has_times = false;    // false: the 4-field partition format (no times, no queue)
    bool has_flushes = false;  // the kernel reports flushes (5.5+)
};

struct DiskId {
    uint32_t major = 0, minor = 0;
};

// The kernel name of a device is at most 31 characters (DISK_NAME_LEN 32).
constexpr size_t kDiskNameMax = 32;

struct DiskReading {
    bool found = false;
    char name[kDiskNameMax] = {};
    DiskCounters counters;
};

// Fills out[i] for wanted[i] from the text of /proc/diskstats; returns how many were found.
// Lines of other devices are skipped after their first two numbers; malformed lines (too few
// or too many fields, a non-number, a number that overflows 64 bits) are skipped and counted
// in *malformed when given. Never allocates; any input is safe (fuzzed).
size_t parse_diskstats(std::string_view text, const DiskId *wanted, size_t count, DiskReading *out,
                       size_t *malformed = nullptr) noexcept;

// One device's /sys/dev/block/MAJ:MIN/stat: the same counters as its /proc/diskstats line,
// without major, minor and name (11, 15 or 17 numbers). The sampler reads these instead of
// /proc/diskstats when the host has many more devices than PostgreSQL uses: the kernel then
// formats only the devices asked for. False on malformed text (fuzzed like parse_diskstats).
bool parse_device_stat(std::string_view text, DiskCounters &out) noexcept;

// The number of lines (devices) in a /proc/diskstats text.
size_t diskstats_lines(std::string_view text) noexcept;

struct DiskDelta {
    uint64_t reads = 0, read_sectors = 0, read_ms = 0;
    uint64_t writes = 0, write_sectors = 0, write_ms = 0;
    uint64_t io_ms = 0, queue_ms = 0, flushes = 0, flush_ms = 0;
    bool has_flushes = false;
};

enum class DeltaStatus : uint8_t {
    Ok,        // `delta` holds the change (counters that wrapped at 32 bits included)
    Baseline,  // first reading, or the device (re)appeared: no delta yet
    Reset,     // a counter went down beyond a wrap, or the device changed: re-baselined
    Missing,   // the device is not in this reading (hot-removed): its baseline is dropped
};

// The deltas of one device across readings.
class DiskstatsDelta {
  public:
    DeltaStatus update(const DiskReading &reading, DiskDelta &delta) noexcept;
    void forget() noexcept { have_previous_ = false; }

  private:
    DiskCounters previous_{};
    char name_[kDiskNameMax] = {};
    bool have_previous_ = false;
};

// cur - prev for a counter that may have wrapped at 32 bits; false when neither explains it.
bool counter_delta(uint64_t previous, uint64_t current, uint64_t &delta) noexcept;

}  // namespace pgsw
