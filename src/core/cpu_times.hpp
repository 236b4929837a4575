#include "core/cpp_only.hpp"
#pragma once
// The machine's CPU time from the first line of /proc/stat, for the what-if's CPU cap: the
// faster the storage, the more transactions the same sessions run, until the cores are full.
// The line sums all online CPUs in USER_HZ ticks (proc(5)):
//     cpu  user nice system idle iowait irq softirq steal guest guest_nice
// busy = user + nice + system + irq + softirq + steal (steal: a hypervisor gave the core to
// someone else, so it is not ours to use); idle = idle + iowait (iowait is an idle core whose
// process waits for I/O: capacity, not work). guest time is already inside user and nice.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace pgsw {

struct CpuTimes {
    uint64_t busy_ticks = 0;
    uint64_t total_ticks = 0;  // busy + idle
};

// Parses the aggregate "cpu " line at the start of `proc_stat`; nullopt when it is not there
// or malformed (fewer than the four fields every kernel has: user nice system idle).
std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view proc_stat) noexcept;

// Successive readings to deltas in microseconds of CPU time (summed over cores). A reading
// whose counters went back (impossible short of a counter reset) re-baselines.
class CpuDeltas {
  public:
    explicit CpuDeltas(uint64_t ticks_per_second) noexcept
        : us_per_tick_(ticks_per_second > 0 ? 1000000 / ticks_per_second : 10000) {}
    struct Delta {
        bool valid = false;
        uint64_t busy_us = 0, total_us = 0;
    };
    Delta observe(const CpuTimes &now) noexcept;
    void forget() noexcept { have_previous_ = false; }

  private:
    uint64_t us_per_tick_;
    CpuTimes previous_{};
    bool have_previous_ = false;
};

// /proc/stat kept open and read with one pread into a fixed buffer (the aggregate line comes
// first; a reading allocates nothing). A file that cannot be opened or read gives nullopt.
class ProcStatReader {
  public:
    explicit ProcStatReader(const char *path = "/proc/stat") noexcept;
    ~ProcStatReader();
    ProcStatReader(const ProcStatReader &) = delete;
    ProcStatReader &operator=(const ProcStatReader &) = delete;
    std::optional<CpuTimes> read() noexcept;

  private:
    int fd_ = -1;
    std::array<char, 512> buffer_{};  // the first line of a 1024-CPU machine fits
};

}  // namespace pgsw
