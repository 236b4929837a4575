#include "core/cpp_only.hpp"
#pragma once
// Where users' sessions spend their time, and whether faster storage would shorten it.
//
// Samples: one per sampler tick per client backend or parallel worker that is running a
// statement (codes.hpp: is_foreground_active), outside idle waits, classified by
// wait_class.hpp into seven components:
//     data_read        storage waits of kind read (IO:DataFileRead, IPC:BufferIo, AIO waits)
//     wal_flush        storage waits of kind wal, and LWLock:WALWrite counted as storage
//     other_storage    every other storage wait (writes, extends, temp files, SLRU, ...)
//     sync_replication IPC:SyncRep (a commit waiting for a synchronous standby)
//     lock, cpu, other
//
// Little's law. With A active samples over T ticks, the average number of sessions working is
// AAS = A / T; with X transactions per second (pg_stat_database commits + rollbacks, all
// databases), each transaction spends W = AAS / X in the server: xact_time_ms. A component's
// share of the samples is its share of W. Invalid, and NULL with a reason, when the window has
// fewer than kMinTransactions transactions or none was measured, or when W exceeds the window
// (statements spanning it).
//
// The what-if. If every data-file read took the reference latency R_read instead of the
// measured mean L_read, the data_read time would shrink to R_read / L_read of itself (never
// grow: a component already at or under the reference keeps its time); wal_flush likewise with
// the WAL flush latency (queueing behind LWLock:WALWrite shrinks with the flush it waits for);
// other_storage with the data volume's read ratio (same device; kept whole when unknown).
// The rest is unchanged. That is the storage side, r_storage = A' / A, and
//     storage_bound_score = 100 x (1 - r_storage)   (0-100, 0.1 steps)
// is the share of the sessions' time spent waiting on storage beyond what the reference device
// would need: the time faster (or less throttled) storage would remove.
//
// The CPU caps what that buys. The sessions form a loop (Little's law over the N client
// sessions, active or idle): N = X (W + Z), where Z is the time per transaction spent outside
// the server (the client, the network, think time) — measured as Z = N / X - W. With the
// storage faster, W_s = W x r_storage and the same sessions would run X_s = N / (W_s + Z)
// transactions per second — but each transaction needs the cores for its work. PostgreSQL's
// processes were sampled on CPU S times per tick (sessions and background processes; at most
// C u, beyond which sessions queued for a core), and the machine had C cores, a share u of
// them busy (/proc/stat). S is a floor of the work: the CPU a process spends inside a wait
// (an I/O's system call, a wake-up's context switch) is sampled as the wait (at 005's RAM
// baseline, 17: PostgreSQL's processes spent 0.15 ms of CPU per transaction, the sessions were
// sampled on CPU for 0.05 ms of it). C u is a ceiling: it also holds the slow run's extra
// wake-ups (a session sleeping 2-8 ms per I/O cost the machine 1.4-1.8x the CPU per
// transaction of a saturated one on 17, 1.8-2.9x on 18 on another), the client if it runs
// here, and other processes. The work at the reference takes
//     D = S + k (C u - S),  k = kPersistingCpuShare = 0.25
// cores, and the cores allow at most X_cpu = X C / D. k is measured, not derived: in 005's
// runs (16 sessions on 2 cores, RAM baseline, +2/+4 and +5/+8 ms) the share of C u - S that
// the saturated run beside each still spent per transaction was -0.14 to 0.96, median 0.19
// (18 runs, 16-19, 2026-12-04); k is rounded up from it because a cap that promises too much
// costs a user more than one that promises too little. With S alone (k = 0) the cap promised
// 1.12-1.57x what the baselines reached on that machine (medians of three pairs) and 0.87-1.15x
// on another; with k = 0.25, 0.86-1.25x on the first (two runs each of 16-19, README).
// If X_s > X_cpu the sessions queue for the cores instead: X' = X_cpu and
//     W' = max(W_s, N / X_cpu - Z)            (cpu_capped)
// else W' = W_s. speedup_at_reference = W / W', xact_time_at_reference = W'. An open workload
// (arrivals that do not wait for answers, a pool of mostly idle connections) has a large Z:
// X_s barely grows, the cap does not bind, and W' = W_s, as it should. Without transactions the
// bound is W' >= (D / C) W (the Z = 0 loop); without a CPU reading, the foreground CPU samples
// over the cores. Limits: the work per transaction is taken as constant, and k as the same on
// every machine and workload (the cap is good to about +-30 %, not better); a client on the
// same machine is counted only through k (measured here: pgbench 0.01-0.02 ms of 0.16 ms per
// transaction at full speed); lock waits are kept as they are (a faster commit can shorten
// them); a workload that is not a loop is only bounded.
// A storage component with samples but no measured latency (timing off) is counted whole; if
// such components make up >= kUnknownLatencyPct of the active samples the score is NULL
// (whether faster storage would help is unknown) and the hint says to enable the timing.
//
// Verdict, first rule that matches (on the displayed, rounded values):
//     active < kMinActiveSamples          -> idle             (score NULL)
//     sync_rep_pct >= 50                  -> replication-bound
//     score >= 50 and speedup >= 1.5      -> storage-bound (faster storage would remove at
//                                            least half the time, and the cores allow a real
//                                            gain)
//     cpu_pct >= 60                       -> cpu-bound
//     lock_pct >= 40                      -> lock-bound
//     otherwise                           -> mixed (the hint names the largest part)
// The hint is one sentence: what to look at next, and when storage waits are large but faster
// storage would not shorten them (their latency is already at the reference), says so and what
// would (fewer WAL flushes per transaction, fewer reads).
#include <array>
#include <cstdint>
#include <string>

namespace pgsw {

constexpr int kVerdictVersion = 6;
constexpr uint64_t kMinActiveSamples = 10;
constexpr uint64_t kMinTransactions = 30;
constexpr double kStorageBoundScore = 50.0;
constexpr double kMinUsefulSpeedup = 1.5;
constexpr double kReplicationBoundPct = 50.0;
constexpr double kCpuBoundPct = 60.0;
constexpr double kLockBoundPct = 40.0;
constexpr double kUnknownLatencyPct = 10.0;
// The share of the machine's busy CPU beyond PostgreSQL's sampled work that the what-if's CPU
// cap counts as the transactions' work (measured: see the loop above).
constexpr double kPersistingCpuShare = 0.25;

enum class Component : uint8_t {
    DataRead,
    WalFlush,
    OtherStorage,
    SyncReplication,
    Lock,
    Cpu,
    Other,
    Count
};
constexpr size_t kComponentCount = static_cast<size_t>(Component::Count);
const char *component_name(Component c) noexcept;  // "data_read", ...

// Active foreground samples by component; counts taken at different moments may not add up:
// "other" is whatever `active` has beyond the rest, and a larger sum of the rest is the
// denominator instead.
struct SampleCounts {
    uint64_t active = 0;
    uint64_t storage = 0;  // all storage; read and wal are parts of it
    uint64_t storage_read = 0;
    uint64_t storage_wal = 0;
    uint64_t sync_rep = 0;
    uint64_t cpu = 0, lock = 0;
    uint64_t ticks = 0;           // over which they were taken
    uint64_t background_cpu = 0;  // other processes' samples on CPU, same ticks
};

struct LatencyFacts {
    bool reads_valid = false;          // read_avg_ms is known
    bool read_timing_missing = false;  // reads happened but track_io_timing was off
    double read_avg_ms = 0;
    bool fsync_valid = false;           // fsync_avg_ms (WAL flush) is known
    bool fsync_timing_missing = false;  // WAL flushes happened, track_wal_io_timing off
    double fsync_avg_ms = 0;
};

// The what-if's assumptions (pg_storage_wait.reference_*_latency; the worker's CPU count).
struct ReferenceFacts {
    double read_ms = 0.1;
    double flush_ms = 0.1;
    double cpu_cores = 0;  // 0: unknown, no CPU cap (fallback without a CPU reading)
};

// The machine over the window: its CPU (/proc/stat) and the client sessions.
struct MachineFacts {
    bool cpu_measured = false;
    double cpu_busy_fraction = 0;  // u: busy / total CPU time, all cores
    double cpu_cores = 0;          // cores the CPU time was counted over
    double client_sessions = 0;    // N: client backends per tick, any state
};

struct TransactionFacts {
    bool measured = false;  // the database counters were read in the window
    uint64_t xacts = 0;     // commits + rollbacks
    double seconds = 0;     // time the window's records cover
};

// Which limit of the volume the storage waits run into, as the device readings show it
// (core/devices.hpp decides; the physics is there): a provisioned ceiling pins IOPS or MB/s at
// one level while latency carries the load; without one, per-operation latency is the limit.
enum class StorageLimit : uint8_t { Unknown, IopsCeiling, ThroughputCeiling, Latency };
const char *storage_limit_name(StorageLimit limit) noexcept;  // "iops-ceiling", ...; nullptr

struct StorageLimitFacts {
    StorageLimit limit = StorageLimit::Unknown;
    std::string device;   // kernel name of the device at the limit ("loop0", "nvme1n1")
    double measured = 0;  // IOPS (reads + writes) or MB/s on it, over the window
    double ceiling = 0;   // the limit in the same unit; 0 when unknown
    bool ceiling_from_setting = false;  // pg_storage_wait.*_limit
    bool ceiling_from_cgroup = false;   // the server's own cgroup rule; neither: detected
    double at_limit_pct = 0;            // share of its readings at >= 95 % of the ceiling
    double device_await_ms = -1;     // the device's own read latency (kernel r_await); -1 unknown
    double pg_read_latency_ms = -1;  // PostgreSQL's mean read latency over the same readings
};

struct DiagnosisInput {
    SampleCounts samples;
    LatencyFacts latency;
    ReferenceFacts reference;
    TransactionFacts transactions;
    StorageLimitFacts limit;
    MachineFacts machine;
    // The hint is text built with snprintf: a time series of thousands of rows has no use for
    // it (storage_wait_history shows none), so its rows skip it.
    bool with_hint = true;
};

enum class Verdict : uint8_t { Idle, StorageBound, CpuBound, LockBound, Mixed, ReplicationBound };
const char *verdict_name(Verdict verdict) noexcept;

struct ComponentTime {
    uint64_t samples = 0;
    double share_pct = 0;
    bool latency_known = false;  // data_read, wal_flush: the measured mean and the reference
    double latency_ms = 0, reference_ms = 0;
    double kept_fraction = 1;  // of its time left at the reference latency (1: unchanged)
    double ms_per_xact = 0, ms_per_xact_at_reference = 0;  // when xacts_valid
};

struct Diagnosis {
    Verdict verdict = Verdict::Idle;
    std::string hint;
    bool pct_valid = false;  // false when there was no active sample at all
    double storage_pct = 0, cpu_pct = 0, lock_pct = 0, sync_rep_pct = 0, other_pct = 0;
    uint64_t active_samples = 0;  // the denominator
    std::array<ComponentTime, kComponentCount> components{};
    // The what-if (samples only: valid without transactions).
    bool score_valid = false;  // false below kMinActiveSamples or with unknown latencies
    // Unknown latencies because track_io_timing / track_wal_io_timing is off (else: on, but
    // nothing of that kind was timed in the window).
    bool latency_timing_off = false;
    double storage_bound_score = 0;
    double speedup_at_reference = 1;
    bool cpu_capped = false;  // the CPU, not the storage, limits the speedup
    // The loop behind the projection (when xacts_valid and the CPU was measured; else 0).
    double outside_server_ms = 0;         // Z
    double xacts_per_s_at_reference = 0;  // X'
    double xacts_per_s_cpu_limit = 0;     // X_cpu = X C / D
    // Little's law (needs transactions).
    bool xacts_valid = false;
    double xacts_per_s = 0, xact_time_ms = 0, xact_time_at_reference_ms = 0;
    std::string xacts_reason;  // why the per-transaction figures are NULL
    // When storage-bound: which limit (never Unknown then: without device evidence of a
    // ceiling, per-operation latency is the limit); Unknown otherwise.
    StorageLimit storage_limit = StorageLimit::Unknown;
};

// May throw std::bad_alloc (the strings); everything else is arithmetic.
Diagnosis diagnose(const DiagnosisInput &input);

}  // namespace pgsw
