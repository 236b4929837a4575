// _PG_init, GUCs, shared memory and the history file.
//
// Shared memory: one block ("pg_storage_wait", layout in core/shared_state.hpp) requested in
// shmem_request_hook and laid out by the postmaster in shmem_startup_hook. No lock protects it:
// the sampler worker is its only writer and readers use the rings' seqlock protocol
// (core/ring.hpp). AddinShmemInitLock is held only while the block is created or attached.
//
// History file: the postmaster reads pg_stat/pg_storage_wait.history whenever it creates the
// block (server start, and the re-creation after a crash-restart) and keeps it: the history
// saver worker (history_saver.cpp) rewrites it every pg_storage_wait.save_interval, and the
// postmaster writes it from its on_shmem_exit callback at a clean shutdown, when no other
// process runs. After a crash the block is re-created and the last save restored; the time
// between that save and the crash is a gap (no records), never invented ticks.
#include <string>

#include "core/devices.hpp"
#include "core/history_file.hpp"
#include "core/shared_state.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/history_saver.hpp"
#include "pg/devices.hpp"
#include "pg/module.hpp"
#include "pg/probe.hpp"

extern "C" {
PG_MODULE_MAGIC;
PGDLLEXPORT void _PG_init(void);
}

namespace pgsw::pg {

Settings settings = {1000, 1000, 3600, 10080, 48, 64, true, 0.1, 0.1};

namespace {

constexpr const char *kShmemName = "pg_storage_wait";

shmem_request_hook_type previous_shmem_request_hook = nullptr;
shmem_startup_hook_type previous_shmem_startup_hook = nullptr;
SharedView shared_view;
bool preloaded = false;

void define_settings() {
    DefineCustomIntVariable(
        "pg_storage_wait.sample_interval", "Time between two samples of wait events and I/O.",
        "Ticks run on absolute deadlines; a missed deadline is counted as an overrun.",
        &settings.sample_interval_ms, 1000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr,
        nullptr, nullptr);
    DefineCustomIntVariable(
        "pg_storage_wait.io_read_interval",
        "Shortest time between two readings of the pg_stat_io and WAL counters.",
        "Backends publish their I/O counters at most once a second, so reading them at every "
        "tick of a short sample_interval costs CPU and adds little. The counters are "
        "read every round(io_read_interval / sample_interval) ticks, at least every tick.",
        &settings.io_read_interval_ms, 1000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr,
        nullptr, nullptr);
    DefineCustomIntVariable(
        "pg_storage_wait.tick_records", "Ticks kept at full detail in shared memory.",
        "At the default sample_interval, 3600 ticks keep the last hour.", &settings.tick_records,
        3600, 100, 10 * 1000 * 1000, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pg_storage_wait.rollup_records",
                            "One-minute roll-ups kept in shared memory.",
                            "10080 roll-ups keep 7 days.", &settings.rollup_records, 10080, 60,
                            1000 * 1000, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pg_storage_wait.entries_per_tick",
        "Average wait-event, query and I/O groups per tick that the tick arena holds.",
        "When ticks need more, the oldest ticks lose their breakdown (totals stay).",
        &settings.entries_per_tick, 48, 8, 65536, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pg_storage_wait.entries_per_rollup",
        "Average wait-event, query, I/O and histogram groups per roll-up that the arena holds.",
        nullptr, &settings.entries_per_rollup, 64, 8, 65536, PGC_POSTMASTER, 0, nullptr, nullptr,
        nullptr);
    DefineCustomBoolVariable(
        "pg_storage_wait.save_history",
        "Save the history (periodically and at shutdown) and restore it at start.",
        "Off: the history file is neither written nor read.", &settings.save_history, true,
        PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomRealVariable(
        "pg_storage_wait.reference_read_latency",
        "Read latency of the reference device for the what-if (local NVMe).",
        "storage_wait_summary's xact_time_at_reference_ms and the storage-bound score assume "
        "every data-file read took this long.",
        &settings.reference_read_latency_ms, 0.1, 0.001, 10000.0, PGC_USERSET, GUC_UNIT_MS, nullptr,
        nullptr, nullptr);
    DefineCustomRealVariable(
        "pg_storage_wait.reference_flush_latency",
        "WAL flush latency of the reference device for the what-if (local NVMe).",
        "storage_wait_summary's xact_time_at_reference_ms and the storage-bound score assume "
        "every WAL flush took this long.",
        &settings.reference_flush_latency_ms, 0.1, 0.001, 10000.0, PGC_USERSET, GUC_UNIT_MS,
        nullptr, nullptr, nullptr);
    define_history_settings();
    static const config_enum_entry fail_lookup_options[] = {
        {"none", kFailNoLookup, false},
        {"proc_array", kFailProcArray, false},
        {"backend_status", kFailBackendStatus, false},
        {nullptr, 0, false},
    };
    DefineCustomEnumVariable(
        "pg_storage_wait.test_fail_lookup",
        "Test only: make a lookup of a private server structure report a layout mismatch.",
        "proc_array: the sampler walks every process slot instead; backend_status: the sampler "
        "stops for good. For the fail-safe tests; never set it on a real server.",
        &settings.test_fail_lookup, kFailNoLookup, fail_lookup_options, PGC_POSTMASTER,
        GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, nullptr, nullptr, nullptr);
    // ---- the volume (issue 13): provisioned limits of the data and WAL devices ----
    const struct {
        const char *name, *description;
        double *value;
        int unit;
    } limits[] = {
        {"pg_storage_wait.data_iops_limit",
         "Provisioned IOPS (reads + writes per second) of the data directory's volume.",
         &device_settings.data_iops_limit, 0},
        {"pg_storage_wait.data_throughput_limit",
         "Provisioned throughput of the data directory's volume, in MB/s.",
         &device_settings.data_throughput_limit_mb_per_s, 0},
        {"pg_storage_wait.wal_iops_limit", "Provisioned IOPS of the pg_wal volume.",
         &device_settings.wal_iops_limit, 0},
        {"pg_storage_wait.wal_throughput_limit",
         "Provisioned throughput of the pg_wal volume, in MB/s.",
         &device_settings.wal_throughput_limit_mb_per_s, 0},
    };
    for (const auto &l : limits)
        DefineCustomRealVariable(l.name, l.description,
                                 "0 = unknown: the server's own cgroup rule (blkio / io.max) is "
                                 "used when there is one, else storage_device_stats detects a "
                                 "ceiling from the readings. The data limits also apply to "
                                 "tablespace devices, and to pg_wal when it shares the volume.",
                                 l.value, 0.0, 0.0, 1e9, PGC_SIGHUP, l.unit, nullptr, nullptr,
                                 nullptr);
    define_probe_settings();  // the opt-in probe: pg_storage_wait.probe, probe_interval
    MarkGUCPrefixReserved("pg_storage_wait");
}

void register_worker() {
    BackgroundWorker worker = {};
    // A connection to no database (like the logical replication launcher): the worker gets a
    // pg_stat_activity row and can be signalled, but needs no catalog access.
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    worker.bgw_start_time = BgWorkerStart_ConsistentState;
    worker.bgw_restart_time = 1;  // seconds; shared memory and history survive a restart
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "pg_storage_wait");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "pg_storage_wait_worker_main");
    snprintf(worker.bgw_name, BGW_MAXLEN, "pg_storage_wait sampler");
    snprintf(worker.bgw_type, BGW_MAXLEN, "pg_storage_wait sampler");
    RegisterBackgroundWorker(&worker);
}

Size shared_bytes() {
    return SharedLayout::compute(shared_capacities()).total_bytes;
}

// Physical memory, or 0 when the system does not say.
uint64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0 ? uint64_t(pages) * uint64_t(page_size) : 0;
}

// The setting that contributes most to the block, to name in the hint.
const char *largest_setting(const SharedCapacities &c) {
    const double ticks = double(c.tick_records) * double(sizeof(IntervalRecord)) +
                         double(c.tick_entries) * double(sizeof(ArenaEntry));
    const double rollups = double(c.rollup_records) * double(sizeof(IntervalRecord)) +
                           double(c.rollup_entries) * double(sizeof(ArenaEntry));
    if (ticks >= rollups)
        return c.tick_entries * sizeof(ArenaEntry) > c.tick_records * sizeof(IntervalRecord)
                   ? "pg_storage_wait.entries_per_tick or pg_storage_wait.tick_records"
                   : "pg_storage_wait.tick_records";
    return c.rollup_entries * sizeof(ArenaEntry) > c.rollup_records * sizeof(IntervalRecord)
               ? "pg_storage_wait.entries_per_rollup or pg_storage_wait.rollup_records"
               : "pg_storage_wait.rollup_records";
}

// Refuses, at start, settings whose shared memory does not fit in size_t, or would take more
// than half of the machine's memory: a monitoring extension that large starves shared_buffers
// and the page cache, and the kernel may refuse the segment or the OOM killer end the server
// at first touch. Half leaves PostgreSQL's own usual share (shared_buffers ~25 %) and the
// connections room; the defaults need ~30 MB.
void check_shared_size() {
    const SharedCapacities capacities = shared_capacities();
    const SharedLayout layout = SharedLayout::compute(capacities);
    if (layout.overflow)
        ereport(FATAL,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("pg_storage_wait: the shared memory asked for does not fit in memory"),
                 errhint("Lower pg_storage_wait.tick_records, pg_storage_wait.entries_per_tick, "
                         "pg_storage_wait.rollup_records or pg_storage_wait.entries_per_rollup.")));
    const uint64_t limit = physical_memory_bytes() / 2;
    if (limit > 0 && layout.total_bytes > limit)
        ereport(FATAL,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("pg_storage_wait: the settings ask for %llu MB of shared memory, more than "
                        "half of this machine's %llu MB",
                        static_cast<unsigned long long>(layout.total_bytes >> 20),
                        static_cast<unsigned long long>((limit * 2) >> 20)),
                 errhint("Lower %s.", largest_setting(capacities))));
}

void request_shmem() {
    if (previous_shmem_request_hook)
        previous_shmem_request_hook();
    RequestAddinShmemSpace(shared_bytes());
}

// The history file's C++ work, run where no PostgreSQL error may be raised (the postmaster's
// shmem hooks): any failure becomes a message for the log.
template <typename Fn>
bool run_cpp(Fn &&fn, char (&message)[256]) noexcept {
    try {
        fn();
        return true;
    } catch (const std::exception &e) {
        snprintf(message, sizeof message, "%s", e.what());
    } catch (...) {
        snprintf(message, sizeof message, "unknown C++ exception");
    }
    return false;
}

void save_history_at_exit(int code, Datum) {
    // Only a clean postmaster exit: after a crash the rings may be inconsistent (the file
    // then keeps the last periodic save).
    if (code != 0 || !settings.save_history || !shared_view.status)
        return;
    const std::string error = save_history_recorded(shared_view);
    if (!error.empty())
        ereport(WARNING,
                (errmsg("pg_storage_wait: could not save history at shutdown: %s", error.c_str()),
                 errdetail("The previous save, if any, is kept and restored at the "
                           "next start.")));
}

void restore_history() {
    if (!settings.save_history)
        return;  // off: the file is neither written nor read
    HistoryLoadResult result{};
    char message[256] = {0};
    const HistoryOwner owner{history_system_identifier(), GetCurrentTimestamp()};
    if (!run_cpp(
            [&] {
                result = load_history(kHistoryPath, shared_view.ticks, shared_view.rollups,
                                      *shared_view.names, owner);
            },
            message)) {
        ereport(WARNING, (errmsg("pg_storage_wait: could not restore history: %s", message),
                          errdetail("Starting with empty history.")));
        return;
    }
    if (result.status == HistoryLoadResult::Status::Invalid)
        ereport(WARNING, (errmsg("pg_storage_wait: ignoring history file \"%s\": %s", kHistoryPath,
                                 result.reason.c_str()),
                          errdetail("Starting with empty history.")));
    if (result.status == HistoryLoadResult::Status::Loaded && !result.warning.empty())
        ereport(WARNING, (errmsg("pg_storage_wait: history file \"%s\" restored from %s",
                                 kHistoryPath, result.warning.c_str())));
    if (result.status == HistoryLoadResult::Status::Loaded) {
        status_store(shared_view.status->restored_from_disk, uint64_t{1});
        status_store(shared_view.status->restored_records, result.records_loaded);
    }
    // An invalid file is left in place for inspection; the next save replaces it.
}

void startup_shmem() {
    if (previous_shmem_startup_hook)
        previous_shmem_startup_hook();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    void *base = ShmemInitStruct(kShmemName, shared_bytes(), &found);
    shared_view = found ? SharedView::attach(base, shared_capacities())
                        : SharedView::create(base, shared_capacities());
    LWLockRelease(AddinShmemInitLock);
    if (found || IsUnderPostmaster)
        return;
    restore_history();
    on_shmem_exit(save_history_at_exit, (Datum)0);
}

}  // namespace

// One slot more than configured: the ring keeps its oldest slot free for the next append.
SharedCapacities shared_capacities() {
    const auto ticks = static_cast<uint64_t>(settings.tick_records);
    const auto rollups = static_cast<uint64_t>(settings.rollup_records);
    return {ticks + 1, ticks * settings.entries_per_tick, rollups + 1,
            rollups * settings.entries_per_rollup};
}

SharedView &require_shared() {
    if (!preloaded || shared_view.status == nullptr)
        throw UserError(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "pg_storage_wait must be loaded via \"shared_preload_libraries\"",
                        "Add pg_storage_wait to shared_preload_libraries in postgresql.conf and "
                        "restart the server.");
    if (!shared_view.laid_out_by_this_build())
        throw UserError(ERRCODE_INTERNAL_ERROR,
                        "pg_storage_wait's shared memory was laid out by another build",
                        "Restart the server after installing one version of the library.");
    return shared_view;
}

}  // namespace pgsw::pg

void _PG_init(void) {
    using namespace pgsw::pg;
    // Loaded by a backend without the preload (for example by CREATE EXTENSION): stay inert;
    // every SQL function then raises SQLSTATE 55000 with a hint.
    if (!process_shared_preload_libraries_in_progress)
        return;
    preloaded = true;
    define_settings();
    check_shared_size();
    previous_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = request_shmem;
    previous_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = startup_shmem;
    register_worker();
    register_history_saver();
}
