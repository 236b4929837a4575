// The history saver worker (history_saver.hpp).
//
// Why a worker of its own and not the sampler between ticks: a save reads every record of both
// rings (7 days of roll-ups at the defaults: tens of MB of file) and fsyncs the file and its
// directory; on a busy or slow disk that takes hundreds of milliseconds, longer than a 10 ms
// tick. Cut into chunks, the save would still need the fsyncs in one piece and its state held
// across ticks (the tick allocates nothing). A separate process reads the rings as any SQL
// reader does (seqlock: never blocks the sampler), may allocate, and may be slow without
// delaying a sample. It streams the file (history_file.hpp): its memory is a 1 MB buffer and
// one record's copy, whatever the rings' size. It needs shared memory only: no database
// connection, no PGPROC in the proc array (never sampled).
// The opt-in probe's reads (pg/probe.cpp) run here for the same reason.
#include <algorithm>
#include <ctime>
#include <string>

#include "core/history_file.hpp"
#include "core/shared_state.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/history_saver.hpp"
#include "pg/module.hpp"
#include "pg/probe.hpp"

namespace pgsw::pg {

int history_save_interval_s = 300;
const char *const kHistoryPath = PGSTAT_STAT_PERMANENT_DIRECTORY "/pg_storage_wait.history";

namespace {

// The last failure logged: a disk that stays full logs once, not at every interval.
std::string last_logged_error;

int64_t monotonic_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

void log_outcome(const std::string &error) {
    if (error.empty()) {
        if (!last_logged_error.empty())
            pg_call([] { ereport(LOG, (errmsg("pg_storage_wait: history saved again"))); });
        last_logged_error.clear();
        return;
    }
    if (error == last_logged_error)
        return;
    last_logged_error = error;
    const char *text = error.c_str();
    pg_call([text] {
        ereport(WARNING, (errmsg("pg_storage_wait: could not save history: %s", text),
                          errdetail("The previous save, if any, is kept; the next try is in "
                                    "pg_storage_wait.save_interval. Further failures with the same "
                                    "error are counted in storage_wait_status(), not logged.")));
    });
}

// Sleeps up to `timeout_ms` or until a signal; shutdown and reload requests arrive here.
void wait_for(int64_t timeout_ms) {
    pg_call([timeout_ms] {
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                        static_cast<long>(std::max<int64_t>(timeout_ms, 1)), PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
    });
}

// Saves every save_interval and, with pg_storage_wait.probe on, runs the probe's reads every
// probe_interval (pg/probe.hpp): both are work that may be slow and must not delay a tick.
void saver_main() {
    SharedView &shared = require_shared();
    probe_worker_start(shared);
    int64_t last_save_ms = monotonic_ms();
    while (!ShutdownRequestPending) {
        const int64_t interval_ms = int64_t{history_save_interval_s} * 1000;
        const bool enabled = settings.save_history && interval_ms > 0;
        const int64_t due_in = enabled ? last_save_ms + interval_ms - monotonic_ms() : 0;
        if (enabled && due_in <= 0) {
            log_outcome(save_history_recorded(shared));
            last_save_ms = monotonic_ms();
            continue;
        }
        const int64_t probe_due_in = probe_worker_due(shared);
        wait_for(std::min(enabled ? due_in : 60 * 1000, probe_due_in));
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            pg_call([] { ProcessConfigFile(PGC_SIGHUP); });
            probe_worker_reload(shared);
        }
    }
}

}  // namespace

uint64_t history_system_identifier() {
    return GetSystemIdentifier();
}

std::string save_history_recorded(SharedView &shared) noexcept {
    std::string error;
    uint64_t saved = 0;
    try {
        error = save_history(kHistoryPath, shared.ticks, shared.rollups, *shared.names,
                             {history_system_identifier(), GetCurrentTimestamp()}, &saved);
    } catch (const std::exception &e) {
        error = e.what();
    } catch (...) {
        error = "unknown C++ exception";
    }
    // The saver (or, at shutdown, the postmaster) is these fields' only writer.
    SamplerStatus &status = *shared.status;
    if (error.empty()) {
        status_store(status.history_saves, status_load(status.history_saves) + 1);
        status_store(status.last_history_save_us, int64_t{GetCurrentTimestamp()});
    } else {
        status_store(status.history_save_failures, status_load(status.history_save_failures) + 1);
    }
    return error;
}

void define_history_settings() {
    DefineCustomIntVariable(
        "pg_storage_wait.save_interval", "Time between two saves of the history while running.",
        "A crash-restart, or a kill of the postmaster, restores the last save. 0 saves only at "
        "a clean shutdown. Each save writes both rings to pg_stat/pg_storage_wait.history.",
        &history_save_interval_s, 300, 0, 7 * 24 * 3600, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr,
        nullptr);
}

void register_history_saver() {
    BackgroundWorker worker = {};
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
    worker.bgw_start_time = BgWorkerStart_ConsistentState;
    worker.bgw_restart_time = 10;
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "pg_storage_wait");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "pg_storage_wait_history_main");
    snprintf(worker.bgw_name, BGW_MAXLEN, "pg_storage_wait history saver");
    snprintf(worker.bgw_type, BGW_MAXLEN, "pg_storage_wait history saver");
    RegisterBackgroundWorker(&worker);
}

void pg_storage_wait_history_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    run_worker_body(saver_main);
    // At server shutdown the postmaster writes the file itself, once every process is gone.
    // Exit 1: a saver stopped on its own (a signal) is restarted after bgw_restart_time.
    proc_exit(1);
}

}  // namespace pgsw::pg
