// The answer in SQL: storage_wait_summary(), storage_wait_events(), storage_io_latency(),
// storage_wait_history() and storage_wait_queries(). Each reads its window from shared memory
// (core/window.hpp decides ticks or roll-ups), resolves wait event names here (only PostgreSQL
// knows them), computes in the core, and emits rows by column name (sql_common.hpp). The
// bodies are C++; PostgreSQL is reached only through pg_call() (boundary.hpp).
#include <cmath>
#include <string>
#include <vector>

#include "core/rollup.hpp"
#include "core/shared_state.hpp"
#include "core/window.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/module.hpp"
#include "pg/sql_common.hpp"

namespace pgsw::pg {
namespace {

using Row = ResultSet::Row;

void ms_or_null(Row &row, size_t column, const LatencySummary &s, double us) {
    s.valid ? row.float8(column, round_to(us / 1000.0, 3)) : row.null(column);
}

// The five latency columns of one series, starting at `first` (avg, p50, p95, p99, max).
void latency_columns(Row &row, size_t first, const LatencySummary &s) {
    ms_or_null(row, first, s, s.avg_us);
    ms_or_null(row, first + 1, s, s.p50_us);
    ms_or_null(row, first + 2, s, s.p95_us);
    ms_or_null(row, first + 3, s, s.p99_us);
    ms_or_null(row, first + 4, s, s.max_us);
}

// storage, cpu, lock, other: four consecutive columns starting at `first`.
void pct_columns(Row &row, size_t first, const Diagnosis &d) {
    const double values[] = {d.storage_pct, d.cpu_pct, d.lock_pct, d.other_pct};
    for (size_t i = 0; i < 4; ++i)
        d.pct_valid ? row.float8(first + i, values[i]) : row.null(first + i);
}

void tristate(Row &row, size_t column, int value) {
    value < 0 ? row.null(column) : row.boolean(column, value != 0);
}

void rate(Row &row, size_t column, double count, double seconds) {
    seconds > 0 ? row.float8(column, round_to(count / seconds, 2)) : row.null(column);
}

void per_second(Row &row, size_t column, double value, bool valid) {
    valid ? row.float8(column, round_to(value, 2)) : row.null(column);
}

// ---- storage_wait_summary ------------------------------------------------------------------

enum SummaryColumn : size_t {
    kWindowStart,
    kWindowEnd,
    kTicks,
    kBackendSamples,
    kActiveBackendsAvg,
    kStorageWaitPct,
    kCpuPct,
    kLockPct,
    kOtherWaitPct,
    kTopStorageWait,
    kReadsPerS,
    kReadLatencyAvg,  // .. max: 5 columns
    kWalFsyncsPerS = kReadLatencyAvg + 5,
    kWalFsyncLatencyAvg,  // .. max: 5 columns
    kStorageBoundScore = kWalFsyncLatencyAvg + 5,
    kVerdict,
    kHint,
    kTrackIoTiming,
    kTrackWalIoTiming,
    kSource,
};

constexpr Column kSummaryColumns[] = {
    {"window_start", TIMESTAMPTZOID},
    {"window_end", TIMESTAMPTZOID},
    {"ticks", INT8OID},
    {"backend_samples", INT8OID},
    {"active_backends_avg", FLOAT8OID},
    {"storage_wait_pct", FLOAT8OID},
    {"cpu_pct", FLOAT8OID},
    {"lock_pct", FLOAT8OID},
    {"other_wait_pct", FLOAT8OID},
    {"top_storage_wait", TEXTOID},
    {"reads_per_s", FLOAT8OID},
    {"read_latency_avg_ms", FLOAT8OID},
    {"read_latency_p50_ms", FLOAT8OID},
    {"read_latency_p95_ms", FLOAT8OID},
    {"read_latency_p99_ms", FLOAT8OID},
    {"read_latency_max_ms", FLOAT8OID},
    {"wal_fsyncs_per_s", FLOAT8OID},
    {"wal_fsync_latency_avg_ms", FLOAT8OID},
    {"wal_fsync_latency_p50_ms", FLOAT8OID},
    {"wal_fsync_latency_p95_ms", FLOAT8OID},
    {"wal_fsync_latency_p99_ms", FLOAT8OID},
    {"wal_fsync_latency_max_ms", FLOAT8OID},
    {"storage_bound_score", FLOAT8OID},
    {"verdict", TEXTOID},
    {"hint", TEXTOID},
    {"track_io_timing", BOOLOID},
    {"track_wal_io_timing", BOOLOID},
    {"source", TEXTOID},
};

void summary_row(Row &row, const Window &w, const WindowSummary &s) {
    row.timestamptz(kWindowStart, w.plan.start_us);
    row.timestamptz(kWindowEnd, w.plan.end_us);
    row.int64(kTicks, int64_t(s.ticks));
    row.int64(kBackendSamples, int64_t(s.backend_samples));
    s.ticks ? row.float8(kActiveBackendsAvg, round_to(s.active_backends_avg, 2))
            : row.null(kActiveBackendsAvg);
    pct_columns(row, kStorageWaitPct, s.diagnosis);
    row.text(kTopStorageWait, s.top_storage_wait.empty() ? nullptr : s.top_storage_wait.c_str());
    per_second(row, kReadsPerS, s.reads_per_s, s.covered_seconds > 0);
    latency_columns(row, kReadLatencyAvg, s.reads);
    per_second(row, kWalFsyncsPerS, s.wal_fsyncs_per_s, s.covered_seconds > 0);
    latency_columns(row, kWalFsyncLatencyAvg, s.wal_fsyncs);
    s.diagnosis.score_valid ? row.float8(kStorageBoundScore, s.diagnosis.storage_bound_score)
                            : row.null(kStorageBoundScore);
    row.text(kVerdict, verdict_name(s.diagnosis.verdict));
    row.text(kHint, s.diagnosis.hint.c_str());
    tristate(row, kTrackIoTiming, s.track_io_timing);
    tristate(row, kTrackWalIoTiming, s.track_wal_io_timing);
    row.text(kSource, w.plan.use_rollups ? "rollups" : "ticks");
}

// ---- storage_wait_events -------------------------------------------------------------------

enum EventColumn : size_t {
    kEventType,
    kEventName,
    kEventBackendType,
    kEventSamples,
    kEventSharePct,
    kEventIsStorage,
    kEventCategory,
};

constexpr Column kEventColumns[] = {
    {"wait_event_type", TEXTOID}, {"wait_event", TEXTOID},  {"backend_type", TEXTOID},
    {"samples", INT8OID},         {"share_pct", FLOAT8OID}, {"is_storage", BOOLOID},
    {"wait_category", TEXTOID},
};

// ---- storage_io_latency --------------------------------------------------------------------

enum IoColumn : size_t {
    kIoBackendType,
    kIoObject,
    kIoContext,
    kIoOperation,
    kIoOps,
    kIoOpsPerS,
    kIoLatencyAvg,  // .. max: 5 columns
    kIoBytesPerS = kIoLatencyAvg + 5,
};

constexpr Column kIoColumns[] = {
    {"backend_type", TEXTOID},
    {"object", TEXTOID},
    {"context", TEXTOID},
    {"operation", TEXTOID},
    {"ops", INT8OID},
    {"ops_per_s", FLOAT8OID},
    {"latency_avg_ms", FLOAT8OID},
    {"latency_p50_ms", FLOAT8OID},
    {"latency_p95_ms", FLOAT8OID},
    {"latency_p99_ms", FLOAT8OID},
    {"latency_max_ms", FLOAT8OID},
    {"bytes_per_s", FLOAT8OID},
};

// ---- storage_wait_history ------------------------------------------------------------------

enum HistoryColumn : size_t {
    kHistSampleTime,
    kHistTicks,
    kHistActiveBackendsAvg,
    kHistStoragePct,  // storage, cpu, lock, other: 4 columns
    kHistScore = kHistStoragePct + 4,
    kHistVerdict,
    kHistReadsPerS,
    kHistReadLatencyAvg,
    kHistWalFsyncsPerS,
    kHistWalFsyncLatencyAvg,
};

constexpr Column kHistoryColumns[] = {
    {"sample_time", TIMESTAMPTZOID},
    {"ticks", INT8OID},
    {"active_backends_avg", FLOAT8OID},
    {"storage_wait_pct", FLOAT8OID},
    {"cpu_pct", FLOAT8OID},
    {"lock_pct", FLOAT8OID},
    {"other_wait_pct", FLOAT8OID},
    {"storage_bound_score", FLOAT8OID},
    {"verdict", TEXTOID},
    {"reads_per_s", FLOAT8OID},
    {"read_latency_avg_ms", FLOAT8OID},
    {"wal_fsyncs_per_s", FLOAT8OID},
    {"wal_fsync_latency_avg_ms", FLOAT8OID},
};

// Mean latency in ms of `count` operations taking `time_us`; NULL unless both moved (19 can
// add read time with no read counted: a backend waiting for another's read).
void mean_ms(Row &row, size_t column, uint64_t count, uint64_t time_us) {
    count > 0 && time_us > 0
        ? row.float8(column, round_to(double(time_us) / double(count) / 1000.0, 3))
        : row.null(column);
}

// ---- storage_wait_queries ------------------------------------------------------------------

enum QueryColumn : size_t {
    kQueryId,
    kQueryDbid,
    kQuerySamples,
    kQueryStorageSamples,
    kQueryStoragePct,
    kQueryShareOfStoragePct,
};

constexpr Column kQueryColumns[] = {
    {"queryid", INT8OID},         {"dbid", OIDOID},           {"samples", INT8OID},
    {"storage_samples", INT8OID}, {"storage_pct", FLOAT8OID}, {"share_of_storage_pct", FLOAT8OID},
};

}  // namespace
}  // namespace pgsw::pg

using namespace pgsw;
using namespace pgsw::pg;

PGSW_SQL_FUNCTION(storage_wait_summary) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kSummaryColumns);
    Window w = load_window(shared, window_us);
    resolve_wait_names(shared, w);
    const WindowSummary s = summarize(*w.records, w.names);
    Row row = result.row();
    summary_row(row, w, s);
    result.put(row);
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_events) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kEventColumns);
    Window w = load_window(shared, window_us);
    resolve_wait_names(shared, w);
    for (const EventRow &e : wait_event_profile(*w.records, w.names)) {
        Row row = result.row();
        row.text(kEventType, e.name->type.c_str());
        row.text(kEventName, e.name->event.c_str());
        row.text(kEventBackendType, backend_kind_name(e.backend));
        row.int64(kEventSamples, int64_t(e.samples));
        row.float8(kEventSharePct, round_to(e.share_pct, 2));
        row.boolean(kEventIsStorage, e.category == WaitCategory::Storage);
        row.text(kEventCategory, wait_category_name(e.category));
        result.put(row);
    }
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_io_latency) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kIoColumns);
    const Window w = load_window(shared, window_us, PartialUse::TicksOnly);
    const double seconds = covered_seconds(*w.records);
    for (const IoLatencyRow &io : io_latency(*w.records)) {
        Row row = result.row();
        row.text(kIoBackendType, backend_kind_name(io.backend));
        row.text(kIoObject, io_object_name(io.object));
        row.text(kIoContext, io_context_name(io.context));
        row.text(kIoOperation, io_op_name(io.op));
        row.int64(kIoOps, int64_t(io.ops));
        rate(row, kIoOpsPerS, double(io.ops), seconds);
        latency_columns(row, kIoLatencyAvg, io.latency);
        rate(row, kIoBytesPerS, double(io.bytes), seconds);
        result.put(row);
    }
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_history) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    // 'infinity' as a resolution would silently mean "per tick": refused.
    const int64_t resolution_us =
        PG_ARGISNULL(1) ? 0 : interval_argument_us(fcinfo, 1, "resolution", false);
    ResultSet result(fcinfo, kHistoryColumns);
    const Window w = load_window(shared, window_us, PartialUse::TicksOnly);
    for (const HistoryRow &h : history(*w.records, resolution_us)) {
        Row row = result.row();
        row.timestamptz(kHistSampleTime, h.sample_time_us);
        row.int64(kHistTicks, int64_t(h.ticks));
        h.ticks ? row.float8(kHistActiveBackendsAvg,
                             round_to(double(h.samples.active) / double(h.ticks), 2))
                : row.null(kHistActiveBackendsAvg);
        pct_columns(row, kHistStoragePct, h.diagnosis);
        h.diagnosis.score_valid ? row.float8(kHistScore, h.diagnosis.storage_bound_score)
                                : row.null(kHistScore);
        row.text(kHistVerdict, verdict_name(h.diagnosis.verdict));
        rate(row, kHistReadsPerS, double(h.reads), h.covered_seconds);
        mean_ms(row, kHistReadLatencyAvg, h.reads, h.read_time_us);
        rate(row, kHistWalFsyncsPerS, double(h.wal_syncs), h.covered_seconds);
        mean_ms(row, kHistWalFsyncLatencyAvg, h.wal_syncs, h.wal_sync_time_us);
        result.put(row);
    }
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_queries) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kQueryColumns);
    const Window w = load_window(shared, window_us);
    const std::vector<QueryRow> rows = query_profile(*w.records);
    uint64_t storage_total = 0;
    for (const QueryRow &q : rows)
        storage_total += q.storage_samples;
    for (const QueryRow &q : rows) {
        Row row = result.row();
        row.int64(kQueryId, q.query_id);
        row.oid(kQueryDbid, q.database_oid);
        row.int64(kQuerySamples, int64_t(q.samples));
        row.int64(kQueryStorageSamples, int64_t(q.storage_samples));
        row.float8(kQueryStoragePct,
                   round_to(100.0 * double(q.storage_samples) / double(q.samples), 2));
        storage_total
            ? row.float8(kQueryShareOfStoragePct,
                         round_to(100.0 * double(q.storage_samples) / double(storage_total), 2))
            : row.null(kQueryShareOfStoragePct);
        result.put(row);
    }
    return (Datum)0;
}
