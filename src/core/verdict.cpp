#include "core/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pgsw {
namespace {

double round_tenth(double x) noexcept {
    return std::round(x * 10.0) / 10.0;
}

double percent(uint64_t part, uint64_t whole) noexcept {
    return round_tenth(100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string format(const char *fmt, double value) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, value);
    return buf;
}

// Milliseconds with about three significant digits: 0.42, 7.35, 12.3, 250.
std::string format_ms(double ms) {
    if (ms < 10.0)
        return format("%.2f", ms);
    if (ms < 100.0)
        return format("%.1f", ms);
    return format("%.0f", ms);
}

const char *const kTimingHint =
    "Storage waits dominate but I/O timing is off: enable track_io_timing (and "
    "track_wal_io_timing) to see read and fsync latency.";

std::string read_hint(const LatencyFacts &f) {
    const char *tail =
        ": check the data volume's provisioned IOPS/throughput and whether shared_buffers holds "
        "the working set.";
    if (f.reads_valid)
        return "Page reads average " + format_ms(f.read_avg_ms) + " ms" + tail;
    if (f.read_timing_missing)
        return kTimingHint;
    return std::string("Storage waits are mostly page reads") + tail;
}

std::string wal_hint(const LatencyFacts &f) {
    const char *tail =
        ": check the WAL device's write latency, and whether synchronous_commit or commit_delay "
        "fit the workload.";
    if (f.fsync_valid)
        return "WAL flushes average " + format_ms(f.fsync_avg_ms) + " ms" + tail;
    if (f.fsync_timing_missing)
        return kTimingHint;
    return std::string("Storage waits are mostly WAL writes and flushes") + tail;
}

std::string storage_hint(const LatencyFacts &f) {
    const double largest =
        std::max({f.read_wait_share, f.write_wait_share, f.wal_wait_share, f.temp_wait_share});
    if (!(largest > 0.0)) {
        if (f.read_timing_missing)
            return kTimingHint;
        return "Storage waits dominate: check the data volume's provisioned IOPS/throughput and "
               "the leading storage wait events.";
    }
    if (largest == f.read_wait_share)
        return read_hint(f);
    if (largest == f.wal_wait_share)
        return wal_hint(f);
    if (largest == f.temp_wait_share)
        return "Storage waits are mostly temporary-file I/O: raise work_mem for the queries that "
               "spill, or put temp_tablespaces on faster storage.";
    return "Storage waits are mostly backends writing or extending data files: check the data "
           "volume's write throughput and whether the background writer and checkpointer keep "
           "up.";
}

std::string mixed_hint(const Diagnosis &d) {
    struct Component {
        double pct;
        const char *text;
    };
    const Component components[] = {
        {d.storage_pct, "storage waits (%.1f%%), so start with the storage wait events."},
        {d.cpu_pct, "CPU (%.1f%%), so start with the top queries in pg_stat_statements."},
        {d.lock_pct, "lock waits (%.1f%%), so start with pg_locks and the blocking sessions."},
        {d.other_pct,
         "other waits such as IPC and extensions (%.1f%%), so start with the wait-event "
         "breakdown."},
    };
    const Component *largest = &components[0];
    for (const Component &c : components)
        if (c.pct > largest->pct)
            largest = &c;
    return "No single bottleneck; the largest share is " + format(largest->text, largest->pct);
}

Verdict verdict_of(const Diagnosis &d) noexcept {
    if (d.storage_pct >= kStorageBoundPct)
        return Verdict::StorageBound;
    if (d.cpu_pct >= kCpuBoundPct)
        return Verdict::CpuBound;
    if (d.lock_pct >= kLockBoundPct)
        return Verdict::LockBound;
    return Verdict::Mixed;
}

std::string hint_for(const Diagnosis &d, const LatencyFacts &facts) {
    switch (d.verdict) {
        case Verdict::Idle:
            return "Fewer than " + std::to_string(kMinActiveSamples) +
                   " active samples in the window: nothing to diagnose.";
        case Verdict::StorageBound:
            return storage_hint(facts);
        case Verdict::CpuBound:
            return "Most active time is on CPU: look at the top queries by total time in "
                   "pg_stat_statements.";
        case Verdict::LockBound:
            return "Most active time waits on locks: look at pg_locks joined with "
                   "pg_stat_activity for the blockers and the hot rows.";
        case Verdict::Mixed:
            return mixed_hint(d);
    }
    return {};
}

void fill_percentages(Diagnosis &d, const SampleCounts &c) noexcept {
    const uint64_t classified = c.storage + c.cpu + c.lock;
    // Counts that disagree (classified > active) must not give shares above 100 %.
    const uint64_t denominator = std::max(c.active, classified);
    d.active_samples = denominator;
    if (denominator == 0)
        return;
    d.pct_valid = true;
    d.storage_pct = percent(c.storage, denominator);
    d.cpu_pct = percent(c.cpu, denominator);
    d.lock_pct = percent(c.lock, denominator);
    d.other_pct = percent(denominator - classified, denominator);
}

}  // namespace

const char *verdict_name(Verdict verdict) noexcept {
    switch (verdict) {
        case Verdict::Idle:
            return "idle";
        case Verdict::StorageBound:
            return "storage-bound";
        case Verdict::CpuBound:
            return "cpu-bound";
        case Verdict::LockBound:
            return "lock-bound";
        case Verdict::Mixed:
            return "mixed";
    }
    return "mixed";
}

Diagnosis diagnose(const SampleCounts &counts, const LatencyFacts &facts) {
    Diagnosis d;
    fill_percentages(d, counts);
    if (d.active_samples >= kMinActiveSamples) {
        d.score_valid = true;
        d.storage_bound_score = d.storage_pct;
        d.verdict = verdict_of(d);
    }
    d.hint = hint_for(d, facts);
    return d;
}

}  // namespace pgsw
