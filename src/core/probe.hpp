#include "core/cpp_only.hpp"
#pragma once
// The opt-in probe (pg_storage_wait.probe): the true latency of single reads on each data and
// tablespace device, tail included.
//
// Why: PostgreSQL keeps sums (pg_stat_io), so every other latency here is a mean over an
// interval. A device where 5 % of reads take 20 ms and the rest 0.2 ms shows a mean of ~1.2 ms
// in every second: the per-second percentiles are all ~1.2 ms and the 20 ms tail is invisible.
// The probe times single reads: every pg_storage_wait.probe_interval the history saver worker
// reads one random 8 kB block with O_DIRECT (past the page cache) from a probe file of its own
// on each device (core/probe_file.hpp), times it with CLOCK_MONOTONIC and counts it in a
// log-scale histogram bin (latency_stats.hpp: 8 bins per octave, each latency within 4.43 % of
// its bin's midpoint). Its percentiles are per-read percentiles: with that 95 % / 5 % mix, p50
// ~0.2 ms and p99 ~20 ms.
//
// The read runs outside the sampler's tick (it can take tens of milliseconds under a throttle);
// the saver hands the counts over through the ProbeTable (probe_table.hpp) and the sampler, at
// each tick that reads the I/O counters, records their growth per device and bin as probe
// latency bins of the tick (ProbeCollector: a few loads per device when nothing moved, no
// allocation). Roll-ups sum the bins (rollup.cpp); probe_window() turns a window's bins into
// percentiles.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/latency_stats.hpp"
#include "core/probe_table.hpp"
#include "core/tick_builder.hpp"
#include "core/window.hpp"

namespace pgsw {

// The sampler's side: each reading records the probe reads made since the previous one.
class ProbeCollector {
  public:
    // `name_of(major, minor)`: the device's NameDictionary id; 0 when the sampler does not know
    // the device (its reads are then dropped).
    template <typename NameOf>
    void collect(const ProbeTable &table, NameOf &&name_of, TickBuilder &tick) noexcept;

  private:
    struct Seen {
        bool known = false;  // a copy of this slot was taken (a baseline at least)
        uint64_t epoch = 0;
        uint64_t probes = 0;
        uint64_t bins[kProbeBinCount] = {};
    };
    // Whether the slot has reads to record; if so `copy_` holds its bins and major/minor.
    bool moved(const ProbeSlot &slot, size_t index) noexcept;
    void record(size_t index, uint16_t device, TickBuilder &tick) noexcept;

    Seen seen_[kMaxProbeSlots];
    uint64_t copy_[kProbeBinCount] = {};
    uint64_t copy_epoch_ = 0, copy_probes_ = 0;
    uint32_t copy_major_ = 0, copy_minor_ = 0;
};

template <typename NameOf>
void ProbeCollector::collect(const ProbeTable &table, NameOf &&name_of,
                             TickBuilder &tick) noexcept {
    const uint64_t count = __atomic_load_n(&table.count, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < count && i < kMaxProbeSlots; ++i)
        if (moved(table.slots[i], i))
            record(i, name_of(copy_major_, copy_minor_), tick);
}

// One device's probe reads over a window.
struct ProbeDeviceWindow {
    uint16_t device = 0;  // NameDictionary id
    double probes = 0;
    LatencySummary latency;  // from the bins' midpoints: within 4.43 % of each read's latency
};
// Devices in the order first seen.
std::vector<ProbeDeviceWindow> probe_window(const RecordSource &records);

// The quantiles of a histogram of per-read latencies (the bins' midpoints, weighted by their
// counts): what probe_window() reports for one device.
LatencySummary latency_of_bins(const double (&weights)[kProbeBinCount]);

// Why a device's row of storage_probe_latency has no figures; "" when it has (reads in the
// window).
struct ProbeRowFacts {
    bool block_device = true;  // false: tmpfs, overlay (`no_device_reason` says which)
    std::string no_device_reason;
    double probes_in_window = 0;
    bool probe_on = false;    // the setting, or the saver still probing
    bool slot_found = false;  // the saver has a slot for the device
    ProbeState state = ProbeState::Off;
    std::string slot_reason;  // the saver's: refusal, failure, last read error
};
std::string probe_row_reason(const ProbeRowFacts &facts);

}  // namespace pgsw
