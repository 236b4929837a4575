// _PG_init, GUCs, shared memory and the history file.
//
// Shared memory: one block ("pg_storage_wait", layout in core/shared_state.hpp) requested in
// shmem_request_hook and laid out by the postmaster in shmem_startup_hook. No lock protects it:
// the sampler worker is its only writer and readers use the rings' seqlock protocol
// (core/ring.hpp). AddinShmemInitLock is held only while the block is created or attached.
//
// History file: the postmaster reads pg_stat/pg_storage_wait.history when it creates the block
// (then removes it, so a crash restart does not reload stale history) and writes it from its
// on_shmem_exit callback at a clean shutdown, when no other process runs.
#include <string>

#include "core/history_file.hpp"
#include "core/shared_state.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/module.hpp"

extern "C" {
PG_MODULE_MAGIC;
PGDLLEXPORT void _PG_init(void);
}

namespace pgsw::pg {

Settings settings = {1000, 1000, 3600, 10080, 48, 64, true};

namespace {

constexpr const char *kHistoryPath = PGSTAT_STAT_PERMANENT_DIRECTORY "/pg_storage_wait.history";
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
        "pg_storage_wait.save_history", "Save the history at shutdown and restore it at start.",
        nullptr, &settings.save_history, true, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
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

// Refuses, at start, settings whose shared memory does not even fit in size_t.
void check_shared_size() {
    if (SharedLayout::compute(shared_capacities()).overflow)
        ereport(FATAL,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("pg_storage_wait: the shared memory asked for does not fit in memory"),
                 errhint("Lower pg_storage_wait.tick_records, pg_storage_wait.entries_per_tick, "
                         "pg_storage_wait.rollup_records or pg_storage_wait.entries_per_rollup.")));
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
    // Only a clean postmaster exit: after a crash the rings may be inconsistent.
    if (code != 0 || !settings.save_history || !shared_view.status)
        return;
    char message[256] = {0};
    std::string error;
    const bool ok =
        run_cpp([&] { error = save_history(kHistoryPath, shared_view.ticks, shared_view.rollups); },
                message);
    if (!ok || !error.empty())
        ereport(LOG, (errmsg("pg_storage_wait: could not save history: %s",
                             ok ? error.c_str() : message)));
}

void restore_history() {
    HistoryLoadResult result{};
    char message[256] = {0};
    if (!run_cpp(
            [&] { result = load_history(kHistoryPath, shared_view.ticks, shared_view.rollups); },
            message)) {
        ereport(WARNING, (errmsg("pg_storage_wait: could not restore history: %s", message),
                          errdetail("Starting with empty history.")));
        return;
    }
    if (result.status == HistoryLoadResult::Status::Invalid)
        ereport(WARNING, (errmsg("pg_storage_wait: ignoring history file \"%s\": %s", kHistoryPath,
                                 result.reason.c_str()),
                          errdetail("Starting with empty history.")));
    if (result.status == HistoryLoadResult::Status::Loaded) {
        status_store(shared_view.status->restored_from_disk, uint64_t{1});
        status_store(shared_view.status->restored_records, result.records_loaded);
    }
    if (result.status != HistoryLoadResult::Status::Missing)
        unlink(kHistoryPath);
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
    if (status_load(shared_view.status->magic) != kSharedMagic)
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
}
