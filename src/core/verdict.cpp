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

// Milliseconds with about three significant digits: 0.003, 0.42, 7.35, 12.3, 250.
std::string format_ms(double ms) {
    if (ms < 0.1)
        return format("%.3f", ms);
    if (ms < 10.0)
        return format("%.2f", ms);
    if (ms < 100.0)
        return format("%.1f", ms);
    return format("%.0f", ms);
}

std::string format_pct(double pct) {
    return format("%.1f%%", pct);
}

ComponentTime &at(Diagnosis &d, Component c) {
    return d.components[static_cast<size_t>(c)];
}
const ComponentTime &at(const Diagnosis &d, Component c) {
    return d.components[static_cast<size_t>(c)];
}

// ---- shares --------------------------------------------------------------------------------

void fill_components(Diagnosis &d, const SampleCounts &c) {
    const uint64_t storage_other = c.storage - std::min(c.storage, c.storage_read + c.storage_wal);
    const uint64_t classified = c.storage + c.sync_rep + c.cpu + c.lock;
    const uint64_t denominator = std::max(c.active, classified);
    const uint64_t samples[kComponentCount] = {std::min(c.storage_read, c.storage),
                                               std::min(c.storage_wal, c.storage),
                                               storage_other,
                                               c.sync_rep,
                                               c.lock,
                                               c.cpu,
                                               denominator - classified};
    d.active_samples = denominator;
    for (size_t i = 0; i < kComponentCount; ++i)
        d.components[i].samples = samples[i];
    if (denominator == 0)
        return;
    d.pct_valid = true;
    for (ComponentTime &t : d.components)
        t.share_pct = percent(t.samples, denominator);
    d.storage_pct = percent(c.storage, denominator);
    d.cpu_pct = percent(c.cpu, denominator);
    d.lock_pct = percent(c.lock, denominator);
    d.sync_rep_pct = percent(c.sync_rep, denominator);
    d.other_pct = at(d, Component::Other).share_pct;
}

// ---- the what-if ---------------------------------------------------------------------------

// The fraction of a component's time left if its mean latency fell to the reference.
double kept_fraction(double measured_ms, double reference_ms) {
    return measured_ms > reference_ms ? reference_ms / measured_ms : 1.0;
}

// Fills latency and kept fraction per component; returns the share (%) of the active samples
// in storage components whose latency is unknown (counted whole).
double apply_references(Diagnosis &d, const LatencyFacts &f, const ReferenceFacts &ref) {
    ComponentTime &read = at(d, Component::DataRead);
    ComponentTime &wal = at(d, Component::WalFlush);
    ComponentTime &other = at(d, Component::OtherStorage);
    double unknown = 0;
    if (f.reads_valid) {
        read.latency_known = true;
        read.latency_ms = f.read_avg_ms, read.reference_ms = ref.read_ms;
        read.kept_fraction = kept_fraction(f.read_avg_ms, ref.read_ms);
        other.kept_fraction = read.kept_fraction;  // same volume
    } else {
        unknown += read.share_pct + other.share_pct;
    }
    if (f.fsync_valid) {
        wal.latency_known = true;
        wal.latency_ms = f.fsync_avg_ms, wal.reference_ms = ref.flush_ms;
        wal.kept_fraction = kept_fraction(f.fsync_avg_ms, ref.flush_ms);
    } else {
        unknown += wal.share_pct;
    }
    return unknown;
}

// The storage side: the share of the sampled time left at the reference latencies.
double storage_ratio(const Diagnosis &d) {
    double kept_samples = 0;
    for (const ComponentTime &t : d.components)
        kept_samples += double(t.samples) * t.kept_fraction;
    return std::min(1.0, kept_samples / double(d.active_samples));
}

// D, the cores the transactions' work takes: PostgreSQL's processes sampled on CPU (foreground
// and background; at most the cores the machine had busy: beyond that, sessions queued for a
// core), plus kPersistingCpuShare of the machine's busy time beyond them (verdict.hpp). 0 when
// unknown.
double cpu_demand_cores(const DiagnosisInput &in) {
    const SampleCounts &c = in.samples;
    const MachineFacts &m = in.machine;
    if (c.ticks == 0 || m.cpu_cores <= 0)
        return 0;
    const double busy = m.cpu_cores * m.cpu_busy_fraction;
    const double on_cpu = std::min(double(c.cpu + c.background_cpu) / double(c.ticks), busy);
    return on_cpu + kPersistingCpuShare * (busy - on_cpu);
}

// The share of its throughput the machine was using: X / X_cpu (the busy share u when the
// sampled work is unknown).
double cpu_share_used(const DiagnosisInput &in) {
    const double demand = cpu_demand_cores(in);
    return demand > 0 ? demand / in.machine.cpu_cores : in.machine.cpu_busy_fraction;
}

// Without transactions: W' >= (X / X_cpu) W (the loop with Z = 0); without a CPU reading, the
// foreground CPU samples over the cores the background leaves.
double cpu_ratio_bound(const DiagnosisInput &in) {
    if (in.machine.cpu_measured)
        return cpu_share_used(in);
    const SampleCounts &c = in.samples;
    if (in.reference.cpu_cores <= 0 || c.ticks == 0)
        return 0;
    const double background = double(c.background_cpu) / double(c.ticks);
    const double cores = std::max(0.5, in.reference.cpu_cores - background);
    return double(c.cpu) / double(c.ticks) / cores;
}

void what_if_bounded(Diagnosis &d, const DiagnosisInput &in, double r_storage) {
    const double r_cpu = cpu_ratio_bound(in);
    const double r = std::min(1.0, std::max(r_storage, r_cpu));
    d.cpu_capped = r_cpu > r_storage && r_storage < 1.0;
    d.speedup_at_reference = r > 0 ? 1.0 / r : 1.0;
}

// The closed loop N = X (W + Z) with the CPU cap X_cpu (verdict.hpp).
void what_if_loop(Diagnosis &d, const DiagnosisInput &in, double r_storage) {
    const double n = in.machine.client_sessions, x = d.xacts_per_s;
    const double w = d.xact_time_ms / 1000.0, w_storage = w * r_storage;
    const double z = std::max(0.0, n / x - w);
    const double used = cpu_share_used(in);
    const double x_storage = w_storage + z > 0 ? n / (w_storage + z) : 0;
    const double x_cpu = used > 0 ? x / used : 0;
    double w_new = w_storage, x_new = x_storage;
    if (x_cpu > 0 && x_storage > x_cpu) {
        w_new = std::max(w_storage, n / x_cpu - z);
        x_new = x_cpu;
        d.cpu_capped = r_storage < 1.0;
    }
    w_new = std::min(w_new, w);
    d.outside_server_ms = 1000.0 * z;
    d.xacts_per_s_at_reference = x_new;
    d.xacts_per_s_cpu_limit = x_cpu;
    d.speedup_at_reference = w_new > 0 ? w / w_new : 1.0;
    d.xact_time_at_reference_ms = 1000.0 * w_new;
}

void what_if(Diagnosis &d, const DiagnosisInput &in) {
    const double r_storage = storage_ratio(d);
    d.storage_bound_score = round_tenth(100.0 * (1.0 - r_storage));
    const bool loop = d.xacts_valid && in.machine.cpu_measured && in.machine.client_sessions > 0;
    loop ? what_if_loop(d, in, r_storage) : what_if_bounded(d, in, r_storage);
    if (d.xacts_valid && !loop)
        d.xact_time_at_reference_ms = d.xact_time_ms / d.speedup_at_reference;
}

// ---- Little's law --------------------------------------------------------------------------

void per_transaction(Diagnosis &d, const DiagnosisInput &in) {
    const TransactionFacts &t = in.transactions;
    if (!t.measured || t.seconds <= 0) {
        d.xacts_reason =
            "no transaction was counted in the window (the database counters were "
            "not read yet)";
        return;
    }
    d.xacts_per_s = double(t.xacts) / t.seconds;
    if (t.xacts < kMinTransactions) {
        d.xacts_reason = "only " + std::to_string(t.xacts) + " transactions in the window, too " +
                         "few for a time per transaction";
        return;
    }
    if (in.samples.ticks == 0 || d.active_samples == 0) {
        d.xacts_reason = "no active session samples in the window";
        return;
    }
    const double aas = double(d.active_samples) / double(in.samples.ticks);
    const double w_ms = 1000.0 * aas / d.xacts_per_s;
    // Little's law needs every working session's time to end in a counted transaction.
    if (w_ms > 1000.0 * t.seconds) {
        d.xacts_reason =
            "sessions were active longer than the counted transactions account for "
            "(statements spanning the window)";
        return;
    }
    d.xacts_valid = true;
    d.xact_time_ms = w_ms;
    for (ComponentTime &c : d.components) {
        c.ms_per_xact = w_ms * double(c.samples) / double(d.active_samples);
        c.ms_per_xact_at_reference = c.ms_per_xact * c.kept_fraction;
    }
}

// ---- verdict and hint ----------------------------------------------------------------------

Verdict verdict_of(const Diagnosis &d) noexcept {
    if (d.sync_rep_pct >= kReplicationBoundPct)
        return Verdict::ReplicationBound;
    if (d.score_valid && d.storage_bound_score >= kStorageBoundScore &&
        d.speedup_at_reference >= kMinUsefulSpeedup)
        return Verdict::StorageBound;
    if (d.cpu_pct >= kCpuBoundPct)
        return Verdict::CpuBound;
    if (d.lock_pct >= kLockBoundPct)
        return Verdict::LockBound;
    return Verdict::Mixed;
}

// "at local-NVMe latency these transactions would take ~A ms instead of B ms (Nx faster)".
std::string projection(const Diagnosis &d) {
    std::string text = "at the reference latency ";
    if (d.xacts_valid)
        text += "these transactions would take ~" + format_ms(d.xact_time_at_reference_ms) +
                " ms instead of " + format_ms(d.xact_time_ms) + " ms";
    else
        text += "the sessions' time would shrink";
    text += format(" (%.1fx faster", d.speedup_at_reference);
    text += d.cpu_capped ? ", capped by the CPU)" : ")";
    return text;
}

// The fix for the limit the device readings show (the talk's "confirm at the volume" step).
std::string limit_advice(const Diagnosis &d, const StorageLimitFacts &f) {
    const std::string on = f.device.empty() ? std::string("the data volume") : f.device;
    const std::string ceiling =
        f.ceiling > 0 ? format(f.limit == StorageLimit::IopsCeiling ? "%.0f" : "%.1f", f.ceiling)
                      : std::string("a flat level");
    const char *source = f.ceiling_from_setting  ? " provisioned"
                         : f.ceiling_from_cgroup ? " set by the server's cgroup rule"
                                                 : " detected";
    switch (d.storage_limit) {
        case StorageLimit::IopsCeiling:
            return " The volume is at its IOPS ceiling: " + on + " did " +
                   format("%.0f", f.measured) + " IOPS against " + ceiling + source +
                   format(" (%.0f%% of readings at the ceiling)", f.at_limit_pct) +
                   ", and the time is queueing in front of it: raise the provisioned IOPS (on "
                   "EBS: aws ec2 modify-volume --iops), or read less (a larger shared_buffers).";
        case StorageLimit::ThroughputCeiling:
            return " The volume is at its throughput ceiling: " + on + " moved " +
                   format("%.1f", f.measured) + " MB/s against " + ceiling + " MB/s" + source +
                   ": raise the provisioned throughput (on EBS: aws ec2 modify-volume "
                   "--throughput), or move less data (fewer sequential scans, compression).";
        case StorageLimit::Latency:
            return " No IOPS or throughput ceiling is in sight" +
                   std::string(f.device.empty() ? " (no block device was observed)" : "") +
                   ": each round trip is slow, and more IOPS would not shorten it; lower-latency "
                   "storage (local NVMe) or more memory for the working set would.";
        case StorageLimit::Unknown:
            break;
    }
    return "";
}

std::string storage_bound_hint(const Diagnosis &d, const StorageLimitFacts &f) {
    const ComponentTime &read = at(d, Component::DataRead);
    const ComponentTime &wal = at(d, Component::WalFlush);
    const double read_saved = double(read.samples) * (1 - read.kept_fraction);
    const double wal_saved = double(wal.samples) * (1 - wal.kept_fraction);
    if (wal_saved > read_saved)
        return "WAL flushes average " + format_ms(wal.latency_ms) + " ms against " +
               format_ms(wal.reference_ms) + " ms on local NVMe: " + projection(d) +
               ". Check the WAL device's write latency; fewer flushes per transaction "
               "(commit_delay, batching commits, synchronous_commit = off where losing the last "
               "commits in a crash is acceptable) help on any device." +
               limit_advice(d, f);
    return "Page reads average " + format_ms(read.latency_ms) + " ms against " +
           format_ms(read.reference_ms) + " ms on local NVMe: " + projection(d) + "." +
           limit_advice(d, f);
}

// Said when sessions wait on storage but those waits would not shrink on faster storage.
// A latency "near the reference": within twice it (or unknown, or unused).
bool near_reference(const ComponentTime &t) {
    return !t.latency_known || t.samples == 0 || t.latency_ms <= 2 * t.reference_ms;
}

std::string storage_not_the_fix(const Diagnosis &d) {
    const ComponentTime &read = at(d, Component::DataRead);
    const ComponentTime &wal = at(d, Component::WalFlush);
    std::string latencies;
    if (read.latency_known)
        latencies += "reads take " + format_ms(read.latency_ms) + " ms";
    if (wal.latency_known)
        latencies += (latencies.empty() ? "" : " and ") + std::string("WAL flushes ") +
                     format_ms(wal.latency_ms) + " ms";
    const std::string waits = " Storage waits are " + format_pct(d.storage_pct) +
                              " of the active time, but " +
                              (latencies.empty() ? std::string("they") : latencies);
    if (near_reference(read) && near_reference(wal))
        return waits +
               ", already near local-NVMe latency: faster storage will not help; fewer WAL "
               "flushes per transaction (commit_delay, batching commits, synchronous_commit) or "
               "fewer reads (a larger shared_buffers) will.";
    // Slow operations, but too little of the time spent in them for faster storage to matter.
    return waits + ": faster storage will not help, it would remove only " +
           format_pct(d.storage_bound_score) + " of the sessions' time.";
}

std::string mixed_hint(const Diagnosis &d) {
    struct Part {
        double pct;
        const char *text;
    };
    const Part parts[] = {
        {d.storage_pct, "storage waits (%.1f%%), so start with the storage wait events."},
        {d.cpu_pct, "CPU (%.1f%%), so start with the top queries in pg_stat_statements."},
        {d.lock_pct, "lock waits (%.1f%%), so start with pg_locks and the blocking sessions."},
        {d.sync_rep_pct,
         "synchronous replication (%.1f%%), so start with the standbys' WAL devices."},
        {d.other_pct,
         "other waits such as IPC and extensions (%.1f%%), so start with the wait-event "
         "breakdown."},
    };
    const Part *largest = &parts[0];
    for (const Part &p : parts)
        if (p.pct > largest->pct)
            largest = &p;
    return "No single bottleneck; the largest share is " + format(largest->text, largest->pct);
}

// Storage waits of unknown latency: the timing settings off, or on but nothing of that kind
// was timed in the window (backends publish their I/O statistics about once a second, so a
// window of a few seconds can hold the waits and not yet their I/O).
std::string unknown_latency_hint(const Diagnosis &d, bool timing_off) {
    const std::string waits = "Storage waits are " + format_pct(d.storage_pct) +
                              " of the active time, but their latency is unknown ";
    if (timing_off)
        return waits +
               "(track_io_timing or track_wal_io_timing is off), so whether faster storage "
               "would help cannot be told: enable them.";
    return waits +
           "(no data-file read or WAL flush was timed in the window; backends publish their I/O "
           "statistics about once a second), so whether faster storage would help cannot be "
           "told: widen the window.";
}

std::string verdict_hint(const Diagnosis &d, const StorageLimitFacts &limit,
                         double unknown_latency_pct, bool timing_off) {
    switch (d.verdict) {
        case Verdict::Idle:
            return "Fewer than " + std::to_string(kMinActiveSamples) +
                   " active samples in the window: nothing to diagnose.";
        case Verdict::ReplicationBound:
            return "Commits wait for synchronous standbys " + format_pct(d.sync_rep_pct) +
                   " of the active time (IPC:SyncRep): check the standbys' WAL device latency "
                   "and the network to them; with quorum commit (synchronous_standby_names = "
                   "'ANY 1 (s1, s2)') a commit waits only for the fastest standby.";
        case Verdict::StorageBound:
            return storage_bound_hint(d, limit);
        case Verdict::CpuBound:
            return "Most active time is on CPU: look at the top queries by total time in "
                   "pg_stat_statements.";
        case Verdict::LockBound:
            return "Most active time waits on locks: look at pg_locks joined with "
                   "pg_stat_activity for the blockers and the hot rows.";
        case Verdict::Mixed:
            break;
    }
    if (unknown_latency_pct >= kUnknownLatencyPct)
        return unknown_latency_hint(d, timing_off);
    return mixed_hint(d);
}

// Said when the storage excess is large but the cores would not let the sessions go faster.
std::string cpu_is_the_cap(const Diagnosis &d) {
    return " Storage waits beyond the reference device are " + format_pct(d.storage_bound_score) +
           " of the time, but the CPU is the cap: faster storage alone would make transactions " +
           format("only %.1fx faster.", d.speedup_at_reference);
}

std::string hint_for(const Diagnosis &d, const StorageLimitFacts &limit, double unknown_latency_pct,
                     bool timing_off) {
    std::string hint = verdict_hint(d, limit, unknown_latency_pct, timing_off);
    // A NULL score always says why: a mixed verdict's sentence is the reason itself; CPU-,
    // lock- and replication-bound windows add it to theirs.
    if (d.verdict != Verdict::Idle && d.verdict != Verdict::Mixed &&
        unknown_latency_pct >= kUnknownLatencyPct)
        return hint + (timing_off ? " No score: whether faster storage would help cannot be "
                                    "told with track_io_timing or track_wal_io_timing off."
                                  : " No score: whether faster storage would help cannot be "
                                    "told, nothing was timed in the window (widen it).");
    if (d.verdict != Verdict::Idle && d.verdict != Verdict::StorageBound && d.score_valid &&
        d.storage_bound_score >= kStorageBoundScore)
        return hint + cpu_is_the_cap(d);
    const bool not_the_fix = d.score_valid && d.storage_bound_score < 20.0;
    if (d.verdict != Verdict::Idle && d.verdict != Verdict::StorageBound && d.storage_pct > 0 &&
        not_the_fix)
        hint += storage_not_the_fix(d);
    return hint;
}

}  // namespace

const char *component_name(Component c) noexcept {
    switch (c) {
        case Component::DataRead:
            return "data_read";
        case Component::WalFlush:
            return "wal_flush";
        case Component::OtherStorage:
            return "other_storage";
        case Component::SyncReplication:
            return "sync_replication";
        case Component::Lock:
            return "lock";
        case Component::Cpu:
            return "cpu";
        case Component::Other:
        case Component::Count:
            break;
    }
    return "other";
}

const char *storage_limit_name(StorageLimit limit) noexcept {
    switch (limit) {
        case StorageLimit::IopsCeiling:
            return "iops-ceiling";
        case StorageLimit::ThroughputCeiling:
            return "throughput-ceiling";
        case StorageLimit::Latency:
            return "latency";
        case StorageLimit::Unknown:
            break;
    }
    return nullptr;
}

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
        case Verdict::ReplicationBound:
            return "replication-bound";
    }
    return "mixed";
}

Diagnosis diagnose(const DiagnosisInput &in) {
    Diagnosis d;
    fill_components(d, in.samples);
    double unknown_latency_pct = 0;
    if (d.active_samples > 0) {
        unknown_latency_pct = apply_references(d, in.latency, in.reference);
        per_transaction(d, in);
        what_if(d, in);
    } else {
        per_transaction(d, in);
    }
    if (d.active_samples >= kMinActiveSamples) {
        d.score_valid = unknown_latency_pct < kUnknownLatencyPct;
        d.verdict = verdict_of(d);
    }
    if (d.verdict == Verdict::StorageBound)
        d.storage_limit =
            in.limit.limit == StorageLimit::Unknown ? StorageLimit::Latency : in.limit.limit;
    d.latency_timing_off = in.latency.read_timing_missing || in.latency.fsync_timing_missing;
    if (!in.with_hint)
        return d;
    d.hint = hint_for(d, in.limit, unknown_latency_pct, d.latency_timing_off);
    if (!d.xacts_valid)
        d.hint += " No time per transaction: " + d.xacts_reason + ".";
    return d;
}

}  // namespace pgsw
