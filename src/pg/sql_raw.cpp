// SQL functions of the sampler: storage_wait_status(), the raw readers storage_wait_ticks(),
// storage_wait_samples(), storage_io_deltas(), and storage_wait_reset(). They read shared
// memory directly (core/ring.hpp protocol), never block the sampler, and stream: one record
// is copied at a time, with a cancel check every few records, so a reader's memory does not
// grow with the window.
#include <vector>

#include "core/names.hpp"
#include "core/ring.hpp"
#include "core/shared_state.hpp"
#include "core/wait_class.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/module.hpp"
#include "pg/sql_common.hpp"

namespace pgsw::pg {
namespace {

using Row = ResultSet::Row;

double us_to_ms(double us) {
    return us / 1000.0;
}

const char *wal_source(uint64_t flags) {
    if (flags & kFlagWalFromPgStatWal)
        return "pg_stat_wal";
    if (flags & kFlagWalFromPgStatIo)
        return "pg_stat_io";
    return nullptr;
}

// Visits the records of `ring` ending after `since_us`, oldest first, one copy at a time.
// A record the reader gave up on (torn after its retries) is counted in the status.
template <typename Fn>
void for_each_record_since(const SharedView &shared, const Ring &ring, int64_t since_us,
                           uint32_t kinds, Fn &&fn) {
    RecordCopy copy;
    const uint64_t end = ring.end();
    uint64_t visited = 0;
    for (uint64_t no = ring.first_after(since_us); no < end; ++no) {
        const ReadStatus status =
            kinds ? ring.read(no, copy, kinds) : ring.read_record(no, copy.record);
        if (status == ReadStatus::Torn)
            __atomic_fetch_add(&shared.status->torn_reads_skipped, 1, __ATOMIC_RELAXED);
        if (status != ReadStatus::Ok && status != ReadStatus::EntriesGone)
            continue;
        if (copy.record.end_us <= since_us)
            continue;
        fn(copy);
        if (++visited % 64 == 0)
            check_for_interrupts();
    }
}

// ---- storage_wait_status -------------------------------------------------------------------

enum StatusColumn : size_t {
    kStTicks,
    kStSampleIntervalMs,
    kStLastTickAt,
    kStOverruns,
    kStTickCostAvgUs,
    kStTickCostMaxUs,
    kStSharedMemoryBytes,
    kStRetentionSeconds,
    kStRollupRetentionSeconds,
    kStRestoredFromDisk,
    kStTrackIoTiming,
    kStTrackWalIoTiming,
    kStInRecovery,
    kStWorkerPid,
    kStWorkerStarts,
    kStCounterResets,
    kStWalSource,
    kStTicksRetained,
    kStRollupsRetained,
    // 1.1
    kStTicksTruncated,
    kStRollupsTruncated,
    kStTornReadsSkipped,
    kStDatabaseCounterResets,
    kStDatabasesTracked,
    kStNamesUsed,
    kStLastHistorySaveAt,
    kStHistorySaves,
    kStHistorySaveFailures,
    kStWorkerDisabledReason,
    kStClassificationVersion,
};

constexpr Column kStatusColumns[] = {
    {"ticks", INT8OID},
    {"sample_interval_ms", INT4OID},
    {"last_tick_at", TIMESTAMPTZOID},
    {"overruns", INT8OID},
    {"tick_cost_avg_us", FLOAT8OID},
    {"tick_cost_max_us", INT8OID},
    {"shared_memory_bytes", INT8OID},
    {"retention_seconds", FLOAT8OID},
    {"rollup_retention_seconds", INT8OID},
    {"restored_from_disk", BOOLOID},
    {"track_io_timing", BOOLOID},
    {"track_wal_io_timing", BOOLOID},
    {"in_recovery", BOOLOID},
    {"worker_pid", INT4OID},
    {"worker_starts", INT8OID},
    {"counter_resets", INT8OID},
    {"wal_source", TEXTOID},
    {"ticks_retained", INT8OID},
    {"rollups_retained", INT8OID},
    {"ticks_truncated", INT8OID},
    {"rollups_truncated", INT8OID},
    {"torn_reads_skipped", INT8OID},
    {"database_counter_resets", INT8OID},
    {"databases_tracked", INT8OID},
    {"names_used", INT4OID},
    {"last_history_save_at", TIMESTAMPTZOID},
    {"history_saves", INT8OID},
    {"history_save_failures", INT8OID},
    {"worker_disabled_reason", TEXTOID},
    {"wait_classification_version", INT4OID},
};

void status_row(Row &row, const SharedView &shared) {
    const SamplerStatus &s = *shared.status;
    const uint64_t ticks = status_load(s.ticks);
    const uint64_t flags = status_load(s.last_tick_flags);
    const int64_t last_tick = status_load(s.last_tick_us);
    const int64_t pid = status_load(s.worker_pid);
    const bool seen = last_tick != 0;
    row.int64(kStTicks, int64_t(ticks));
    row.int32(kStSampleIntervalMs, int32_t(status_load(s.sample_interval_ms)));
    seen ? row.timestamptz(kStLastTickAt, last_tick) : row.null(kStLastTickAt);
    row.int64(kStOverruns, int64_t(status_load(s.overruns)));
    ticks ? row.float8(kStTickCostAvgUs, double(status_load(s.tick_cost_total_us)) / double(ticks))
          : row.null(kStTickCostAvgUs);
    row.int64(kStTickCostMaxUs, int64_t(status_load(s.tick_cost_max_us)));
    row.int64(kStSharedMemoryBytes,
              int64_t(SharedLayout::compute(shared_capacities()).total_bytes));
    row.float8(kStRetentionSeconds, double(shared.ticks.record_capacity() - 1) *
                                        double(status_load(s.sample_interval_ms)) / 1000.0);
    row.int64(kStRollupRetentionSeconds, int64_t(shared.rollups.record_capacity() - 1) * 60);
    row.boolean(kStRestoredFromDisk, status_load(s.restored_from_disk) != 0);
    seen ? row.boolean(kStTrackIoTiming, flags & kFlagTrackIoTiming) : row.null(kStTrackIoTiming);
    seen ? row.boolean(kStTrackWalIoTiming, flags & kFlagTrackWalIoTiming)
         : row.null(kStTrackWalIoTiming);
    seen ? row.boolean(kStInRecovery, flags & kFlagInRecovery) : row.null(kStInRecovery);
    pid ? row.int32(kStWorkerPid, int32_t(pid)) : row.null(kStWorkerPid);
    row.int64(kStWorkerStarts, int64_t(status_load(s.worker_starts)));
    row.int64(kStCounterResets, int64_t(status_load(s.counter_resets)));
    row.text(kStWalSource, seen ? wal_source(flags) : nullptr);
    row.int64(kStTicksRetained, int64_t(shared.ticks.end() - shared.ticks.first_readable()));
    row.int64(kStRollupsRetained, int64_t(shared.rollups.end() - shared.rollups.first_readable()));
    row.int64(kStTicksTruncated, int64_t(status_load(s.ticks_truncated)));
    row.int64(kStRollupsTruncated, int64_t(status_load(s.rollups_truncated)));
    row.int64(kStTornReadsSkipped, int64_t(status_load(s.torn_reads_skipped)));
    row.int64(kStDatabaseCounterResets, int64_t(status_load(s.db_counter_resets)));
    row.int64(kStDatabasesTracked, int64_t(status_load(s.databases_tracked)));
    row.int32(kStNamesUsed, int32_t(__atomic_load_n(&shared.names->count, __ATOMIC_ACQUIRE)));
    const int64_t saved = status_load(s.last_history_save_us);
    saved ? row.timestamptz(kStLastHistorySaveAt, saved) : row.null(kStLastHistorySaveAt);
    row.int64(kStHistorySaves, int64_t(status_load(s.history_saves)));
    row.int64(kStHistorySaveFailures, int64_t(status_load(s.history_save_failures)));
    // The reason is written before the flag is set, once: read it only after the flag.
    row.text(kStWorkerDisabledReason, status_load(s.worker_disabled) ? s.disabled_reason : nullptr);
    row.int32(kStClassificationVersion, kWaitClassificationVersion);
}

// ---- storage_wait_ticks --------------------------------------------------------------------

enum TickColumn : size_t {
    kTkSampleTime,
    kTkIntervalMs,
    kTkTickCostUs,
    kTkProcesses,
    kTkActiveSamples,
    kTkStorageSamples,
    kTkCpuSamples,
    kTkLockSamples,
    kTkReads,
    kTkReadTimeMs,
    kTkWalSyncs,
    kTkWalSyncTimeMs,
    kTkWalWrites,
    kTkWalWriteTimeMs,
    kTkBaseline,
    kTkCountersReset,
    kTkOverrun,
    kTkTrackIoTiming,
    kTkTrackWalIoTiming,
    kTkInRecovery,
    kTkWalSource,
    kTkCountersRead,
    // 1.1
    kTkSyncRepSamples,
    kTkXacts,
    kTkTuplesWritten,
    kTkInCheckpoint,
};

constexpr Column kTickColumns[] = {
    {"sample_time", TIMESTAMPTZOID},
    {"interval_ms", FLOAT8OID},
    {"tick_cost_us", INT4OID},
    {"processes", INT4OID},
    {"active_samples", INT8OID},
    {"storage_samples", INT8OID},
    {"cpu_samples", INT8OID},
    {"lock_samples", INT8OID},
    {"reads", INT8OID},
    {"read_time_ms", FLOAT8OID},
    {"wal_syncs", INT8OID},
    {"wal_sync_time_ms", FLOAT8OID},
    {"wal_writes", INT8OID},
    {"wal_write_time_ms", FLOAT8OID},
    {"baseline", BOOLOID},
    {"counters_reset", BOOLOID},
    {"overrun", BOOLOID},
    {"track_io_timing", BOOLOID},
    {"track_wal_io_timing", BOOLOID},
    {"in_recovery", BOOLOID},
    {"wal_source", TEXTOID},
    {"counters_read", BOOLOID},
    {"sync_rep_samples", INT8OID},
    {"xacts", INT8OID},
    {"tuples_written", INT8OID},
    {"in_checkpoint", BOOLOID},
};

void tick_row(Row &row, const IntervalRecord &r) {
    row.timestamptz(kTkSampleTime, r.end_us);
    row.float8(kTkIntervalMs, us_to_ms(double(r.end_us - r.start_us)));
    row.int32(kTkTickCostUs, int32_t(r.tick_cost_us));
    row.int32(kTkProcesses, int32_t(r.procs_sampled));
    row.int64(kTkActiveSamples, int64_t(r.fg_active));
    row.int64(kTkStorageSamples, int64_t(r.fg_storage));
    row.int64(kTkCpuSamples, int64_t(r.fg_cpu));
    row.int64(kTkLockSamples, int64_t(r.fg_lock));
    row.int64(kTkReads, int64_t(r.reads));
    row.float8(kTkReadTimeMs, us_to_ms(double(r.read_time_us)));
    row.int64(kTkWalSyncs, int64_t(r.wal_syncs));
    row.float8(kTkWalSyncTimeMs, us_to_ms(double(r.wal_sync_time_us)));
    row.int64(kTkWalWrites, int64_t(r.wal_writes));
    row.float8(kTkWalWriteTimeMs, us_to_ms(double(r.wal_write_time_us)));
    row.boolean(kTkBaseline, r.flags & kFlagBaseline);
    row.boolean(kTkCountersReset, r.flags & kFlagCountersReset);
    row.boolean(kTkOverrun, r.flags & kFlagOverrun);
    row.boolean(kTkTrackIoTiming, r.flags & kFlagTrackIoTiming);
    row.boolean(kTkTrackWalIoTiming, r.flags & kFlagTrackWalIoTiming);
    row.boolean(kTkInRecovery, r.flags & kFlagInRecovery);
    row.text(kTkWalSource, wal_source(r.flags));
    row.boolean(kTkCountersRead, !(r.flags & kFlagCountersNotRead));
    row.int64(kTkSyncRepSamples, int64_t(r.fg_sync_rep));
    r.ticks_db_counters ? row.int64(kTkXacts, int64_t(r.xacts)) : row.null(kTkXacts);
    r.ticks_db_counters
        ? row.int64(kTkTuplesWritten,
                    int64_t(r.tuples_inserted + r.tuples_updated + r.tuples_deleted))
        : row.null(kTkTuplesWritten);
    row.boolean(kTkInCheckpoint, r.flags & kFlagInCheckpoint);
}

// ---- storage_wait_samples ------------------------------------------------------------------

enum SampleColumn : size_t {
    kSmSampleTime,
    kSmBackendType,
    kSmState,
    kSmWaitEventType,
    kSmWaitEvent,
    kSmWaitCategory,
    kSmDatid,
    kSmSamples,
    kSmWaitEventInfo,
};

constexpr Column kSampleColumns[] = {
    {"sample_time", TIMESTAMPTZOID},
    {"backend_type", TEXTOID},
    {"state", TEXTOID},
    {"wait_event_type", TEXTOID},
    {"wait_event", TEXTOID},
    {"wait_category", TEXTOID},
    {"datid", OIDOID},
    {"samples", INT4OID},
    {"wait_event_info", INT8OID},
};

void sample_row(Row &row, const SharedView &shared, const IntervalRecord &r,
                const WaitGroupEntry &w) {
    const WaitEventName name = wait_event_names(shared, w.wait_event_info);
    row.timestamptz(kSmSampleTime, r.end_us);
    row.text(kSmBackendType, backend_kind_name(w.backend));
    row.text(kSmState, backend_state_name(w.state));
    row.text(kSmWaitEventType, w.wait_event_info ? name.type.c_str() : nullptr);
    row.text(kSmWaitEvent, w.wait_event_info ? name.event.c_str() : nullptr);
    row.text(kSmWaitCategory, wait_category_name(static_cast<WaitCategory>(w.category)));
    w.database_oid ? row.oid(kSmDatid, w.database_oid) : row.null(kSmDatid);
    row.int32(kSmSamples, int32_t(w.samples));
    row.int64(kSmWaitEventInfo, int64_t(w.wait_event_info));
}

// ---- storage_io_deltas ---------------------------------------------------------------------

enum IoDeltaColumn : size_t {
    kIdSampleTime,
    kIdIntervalMs,
    kIdBackendType,
    kIdObject,
    kIdContext,
    kIdOperation,
    kIdOps,
    kIdTimeMs,
    kIdBytes,
};

constexpr Column kIoDeltaColumns[] = {
    {"sample_time", TIMESTAMPTZOID},
    {"interval_ms", FLOAT8OID},
    {"backend_type", TEXTOID},
    {"object", TEXTOID},
    {"context", TEXTOID},
    {"operation", TEXTOID},
    {"ops", INT8OID},
    {"time_ms", FLOAT8OID},
    {"bytes", INT8OID},
};

void io_delta_row(Row &row, const IntervalRecord &r, const IoDeltaEntry &io) {
    row.timestamptz(kIdSampleTime, r.end_us);
    row.float8(kIdIntervalMs, us_to_ms(double(r.end_us - r.start_us)));
    row.text(kIdBackendType, backend_kind_name(io.backend));
    row.text(kIdObject, io_object_name(io.object));
    row.text(kIdContext, io_context_name(io.context));
    row.text(kIdOperation, io_op_name(io.op));
    row.int64(kIdOps, int64_t(io.count));
    row.float8(kIdTimeMs, us_to_ms(double(io.time_us)));
    row.int64(kIdBytes, int64_t(io.bytes));
}

}  // namespace
}  // namespace pgsw::pg

using namespace pgsw;
using namespace pgsw::pg;

PGSW_SQL_FUNCTION(storage_wait_status) {
    const SharedView &shared = require_shared();
    ResultSet result(fcinfo, kStatusColumns);
    Row row = result.row();
    status_row(row, shared);
    result.put(row);
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_ticks) {
    const SharedView &shared = require_shared();
    const int64_t since = since_argument(fcinfo, 0);
    ResultSet result(fcinfo, kTickColumns);
    for_each_record_since(shared, shared.ticks, since, kNoEntries, [&](const RecordCopy &copy) {
        Row row = result.row();
        tick_row(row, copy.record);
        result.put(row);
    });
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_samples) {
    const SharedView &shared = require_shared();
    const int64_t since = since_argument(fcinfo, 0);
    ResultSet result(fcinfo, kSampleColumns);
    for_each_record_since(shared, shared.ticks, since, kWaitGroupEntries,
                          [&](const RecordCopy &copy) {
                              for (const ArenaEntry &entry : copy.entries) {
                                  if (entry.kind != EntryKind::WaitGroup)
                                      continue;
                                  Row row = result.row();
                                  sample_row(row, shared, copy.record, entry.wait);
                                  result.put(row);
                              }
                          });
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_io_deltas) {
    const SharedView &shared = require_shared();
    const int64_t since = since_argument(fcinfo, 0);
    ResultSet result(fcinfo, kIoDeltaColumns);
    for_each_record_since(shared, shared.ticks, since, kIoDeltaEntries,
                          [&](const RecordCopy &copy) {
                              for (const ArenaEntry &entry : copy.entries) {
                                  if (entry.kind != EntryKind::IoDelta)
                                      continue;
                                  Row row = result.row();
                                  io_delta_row(row, copy.record, entry.io);
                                  result.put(row);
                              }
                          });
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_reset) {
    SharedView &shared = require_shared();
    if (!pg_call([] { return superuser(); }))
        throw UserError(ERRCODE_INSUFFICIENT_PRIVILEGE,
                        "permission denied to reset pg_storage_wait history",
                        "Only superusers can call storage_wait_reset().");
    shared.ticks.hide_all();
    shared.rollups.hide_all();
    shared.partials.hide_all();
    status_store(shared.status->history_reset_us, now_us());
    PG_RETURN_VOID();
}
