#include "core/cpp_only.hpp"
#pragma once
// The volume under PostgreSQL: per-device figures over a window (the columns of
// storage_device_stats, iostat -x's arithmetic) and which limit the storage waits run into.
//
// Rates divide the window's summed /proc/diskstats deltas by the seconds those deltas cover,
// from the device's first reading in the window to its last (DeviceWindow::seconds):
//   reads_per_s = Δreads / s, read_mb_per_s = Δsectors x 512 / 1e6 / s,
//   read_await_ms = Δread_ms / Δreads (r_await), util_pct = Δio_ms / (s x 1000) x 100,
//   queue_depth_avg = Δweighted_ms / (s x 1000) (aqu-sz).
// pg_read_latency_ms is PostgreSQL's mean data-file read latency (pg_stat_io) over the records
// that carry the device: the ticks that read the I/O counters read the devices too, so both
// cover the same intervals. A large gap between it and read_await_ms is time spent queueing
// above the device (a cgroup throttle, a hypervisor or a cloud volume's token bucket).
//
// Which limit (storage_limit_facts), per device holding data, then WAL:
//  * a known limit (pg_storage_wait.*_limit settings, or the server's own cgroup blkio/io.max
//    rule): the device is at that ceiling when >= 50 % of its readings were at >= 95 % of it;
//  * otherwise detected from the readings (ticks, or roll-ups for long windows; >= 10 with I/O).
//    A token bucket pins the rate: the readings' IOPS (or MB/s) are flat, within 3 %
//    (standard deviation of their logarithm), while the latency carries the load. The
//    fluctuations tell the two limits apart even in a steady closed loop (fixed clients, where
//    both look flat): by Little's law the reads in flight per reading are C = IOPS x latency;
//    under a ceiling IOPS is pinned and the latency (the queue) carries C's fluctuation, bound
//    by latency log IOPS = log C - log latency varies at least as much as log C. The spread
//    ratio sd(log IOPS) / sd(log C) is near 0 under a ceiling and >= 1 bound by latency (a
//    least-squares slope is not used: over a dozen steady readings it is noise). A ceiling is
//    detected when the rate is flat, the spread ratio is <= 0.5, and a queue is visible:
//    PostgreSQL's read latency >= 3 x the device's own await (queue above the device) or the
//    device's queue depth >= 2 (a volume that queues in the device, as EBS does).
//    The series tried: all operations, reads alone, all bytes, read bytes alone (a cgroup or
//    hypervisor rule may pin reads while unthrottled writes vary). IOPS or throughput: the
//    flatter qualifying series; within 1 % of each other (fixed-size requests pin both),
//    throughput when requests average >= 64 kB, else IOPS.
//  * no ceiling: per-operation latency is the limit (StorageLimit::Latency).
// False positives (README): an open-loop client issuing a fixed rate while the device queues
// for another reason (a noisy neighbour on the same disk) looks like a ceiling; a window that
// mixes idle and busy periods is not flat and finds none (use a window inside the load).
#include <cstdint>
#include <string>
#include <vector>

#include "core/diskstats.hpp"
#include "core/names.hpp"
#include "core/records.hpp"
#include "core/verdict.hpp"
#include "core/window.hpp"

namespace pgsw {

constexpr double kAtLimitFraction = 0.95;     // a reading at >= 95 % of a limit is "at" it
constexpr double kCeilingAtLimitPct = 50.0;   // a known limit: >= half the readings at it
constexpr size_t kMinCeilingReadings = 10;    // readings with I/O a detection needs
constexpr double kFlatLogSpread = 0.03;       // rate flat within ~3 %
constexpr double kCeilingSpreadRatio = 0.5;   // sd log rate / sd log in-flight
constexpr double kQueueLatencyRatio = 3.0;    // PostgreSQL latency / device await
constexpr double kQueueDepthCeiling = 2.0;    // or a queue at the device
constexpr double kLargeRequestBytes = 65536;  // throughput, not IOPS, when both are pinned

// Limits known for a device, as the sampler applies them to each reading.
struct DeviceLimits {
    double iops = 0;                       // reads + writes per s (a provisioned volume's IOPS)
    double mb_per_s = 0;                   // read + write MB/s (provisioned throughput)
    double read_iops = 0, write_iops = 0;  // cgroup rules (blkio / io.max)
    double read_mb_per_s = 0, write_mb_per_s = 0;
    bool from_setting = false;  // iops / mb_per_s come from pg_storage_wait.*_limit
    bool any() const noexcept {
        return iops > 0 || mb_per_s > 0 || read_iops > 0 || write_iops > 0 || read_mb_per_s > 0 ||
               write_mb_per_s > 0;
    }
    // The single figures storage_device_stats shows: the setting, else the cgroup's.
    double iops_shown() const noexcept;
    double mb_per_s_shown() const noexcept;
};

// Whether one reading (a delta over `seconds`) is at >= 95 % of any known limit.
bool reading_at_limit(const DiskDelta &delta, double seconds, const DeviceLimits &limits) noexcept;
// How close a reading is to its nearest IOPS and throughput limits (0 when none known).
struct LimitRatios {
    double iops = 0, throughput = 0;
};
LimitRatios limit_ratios(uint64_t reads, uint64_t writes, uint64_t read_sectors,
                         uint64_t write_sectors, double seconds,
                         const DeviceLimits &limits) noexcept;

// One reading of a device (per record carrying it).
struct DeviceReading {
    double seconds;             // since the previous record carrying the device
    double iops, mb_per_s;      // reads + writes
    double pg_read_latency_ms;  // PostgreSQL's mean read latency in the record, 0 when none
    double read_iops, write_iops, read_mb_per_s, write_mb_per_s;
};

// A device's counters summed over the window, and its readings.
struct DeviceWindow {
    uint16_t device = 0;  // NameDictionary id
    uint8_t roles = 0;    // DeviceRole bits seen
    uint8_t flags = 0;    // DeviceFlags OR-ed
    uint64_t reads = 0, writes = 0, flushes = 0, read_sectors = 0, write_sectors = 0;
    uint64_t read_ms = 0, write_ms = 0, flush_ms = 0, busy_ms = 0, queue_ms = 0;
    uint64_t ticks = 0, ticks_at_limit = 0;
    uint64_t pg_reads = 0, pg_read_time_us = 0;  // over the records carrying the device
    // The time the summed deltas cover: from the device's first reading in the window to its
    // last (the first only starts the clock); the rates' denominator, 0 with a single reading.
    double seconds = 0;
    std::vector<DeviceReading> readings;
};

struct DeviceWindowSet {
    std::vector<DeviceWindow> devices;
};
DeviceWindowSet device_window(const RecordSource &records);

// A nullable figure.
struct Maybe {
    bool valid = false;
    double value = 0;
};

// storage_device_stats' figures of one device (the limits: `known`, else a detected ceiling).
struct DeviceFigures {
    Maybe reads_per_s, writes_per_s, read_mb_per_s, write_mb_per_s;
    Maybe read_await_ms, write_await_ms, flushes_per_s, flush_await_ms;
    Maybe queue_depth_avg, util_pct;
    Maybe iops_limit, throughput_limit_mb_per_s, at_limit_pct;
    Maybe pg_read_latency_ms;
    StorageLimit limit = StorageLimit::Unknown;  // IopsCeiling / ThroughputCeiling / Latency
    bool ceiling_from_setting = false;
    bool ceiling_known = false;  // from a setting or a cgroup rule, not detected
};
DeviceFigures device_figures(const DeviceWindow &w, const DeviceLimits &known);

// The verdict's input: the device (data first, then WAL) at a ceiling, else the data device's
// latency figures. `limits_of(device id)` gives the known limits, `name_of(device id)` the
// kernel name. Unknown when no device reading is in the window.
template <typename LimitsOf, typename NameOf>
StorageLimitFacts storage_limit_facts(const DeviceWindowSet &set, LimitsOf &&limits_of,
                                      NameOf &&name_of);

// Exposed for the template and the tests.
StorageLimitFacts facts_of(const DeviceWindow &w, const DeviceFigures &f, std::string name);
int limit_rank(const DeviceWindow &w, const DeviceFigures &f) noexcept;

template <typename LimitsOf, typename NameOf>
StorageLimitFacts storage_limit_facts(const DeviceWindowSet &set, LimitsOf &&limits_of,
                                      NameOf &&name_of) {
    StorageLimitFacts best;
    int best_rank = 0;
    for (const DeviceWindow &w : set.devices) {
        const DeviceFigures f = device_figures(w, limits_of(w.device));
        const int rank = limit_rank(w, f);
        if (rank > best_rank) {
            best_rank = rank;
            best = facts_of(w, f, std::string(name_of(w.device)));
        }
    }
    return best;
}

// Per bucket of storage_wait_history: the data and WAL devices' IOPS and MB/s.
struct DeviceHistoryRow {
    int64_t sample_time_us = 0;
    double seconds = 0;  // time the row's device readings cover (since the previous reading)
    bool data_seen = false, wal_seen = false;
    double data_ios = 0, data_bytes = 0, wal_ios = 0, wal_bytes = 0;
};
// The same rows (times) as history(): resolution_us 0, one per record.
std::vector<DeviceHistoryRow> device_history(const RecordSource &records, int64_t resolution_us);

}  // namespace pgsw
