// The answer in SQL: storage_wait_summary(), storage_wait_breakdown(), storage_wait_events(),
// storage_io_latency(), storage_wait_history() and storage_wait_queries(). Each reads its window
// from shared memory (core/window.hpp decides ticks or roll-ups), resolves wait event names here
// (only PostgreSQL knows them), computes in the core, and emits rows by column name
// (sql_common.hpp). The bodies are C++; PostgreSQL is reached only through pg_call()
// (boundary.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/devices.hpp"
#include "core/rollup.hpp"
#include "core/shared_state.hpp"
#include "core/window.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/devices.hpp"
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
    // 1.1
    kXactsPerS,
    kXactTimeMs,
    kSyncRepPct,
    kXactTimeAtReferenceMs,
    kSpeedupAtReference,
    kStorageLimit,
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
    {"xacts_per_s", FLOAT8OID},
    {"xact_time_ms", FLOAT8OID},
    {"sync_rep_pct", FLOAT8OID},
    {"xact_time_at_reference_ms", FLOAT8OID},
    {"speedup_at_reference", FLOAT8OID},
    {"storage_limit", TEXTOID},
};

// The per-transaction figures: NULL (with the reason in the hint) without enough transactions.
void transaction_columns(Row &row, const Diagnosis &d, size_t xacts_per_s, size_t xact_time,
                         size_t at_reference) {
    d.xacts_per_s > 0 || d.xacts_valid ? row.float8(xacts_per_s, round_to(d.xacts_per_s, 2))
                                       : row.null(xacts_per_s);
    d.xacts_valid ? row.float8(xact_time, round_to(d.xact_time_ms, 3)) : row.null(xact_time);
    if (at_reference != SIZE_MAX)
        d.xacts_valid &&d.score_valid
            ? row.float8(at_reference, round_to(d.xact_time_at_reference_ms, 3))
            : row.null(at_reference);
}

// The diagnosis's hint, and a sentence when the window's breakdown was cut (reliability): the
// totals are whole, the events, queries and top wait are not.
std::string hint_with_truncation(const WindowSummary &s) {
    if (s.records_truncated == 0)
        return s.diagnosis.hint;
    const double pct =
        100.0 * double(s.records_truncated) / double(std::max<uint64_t>(s.records, 1));
    char note[512];
    snprintf(note, sizeof note,
             "%s%.1f %% of this window's records lost part of their breakdown (more wait events "
             "or queries than pg_storage_wait.entries_per_tick / entries_per_rollup hold): "
             "top_storage_wait, storage_wait_events and storage_wait_queries undercount; the "
             "totals are whole.",
             s.diagnosis.hint.empty() ? "" : " ", pct);
    return s.diagnosis.hint + note;
}

void summary_row(Row &row, const Window &w, const WindowSummary &s) {
    row.timestamptz(kWindowStart, w.plan.start_us);
    row.timestamptz(kWindowEnd, w.plan.end_us);
    row.int64(kTicks, int64_t(s.ticks));
    row.int64(kBackendSamples, int64_t(s.backend_samples));
    s.ticks ? row.float8(kActiveBackendsAvg, round_to(s.active_backends_avg, 2))
            : row.null(kActiveBackendsAvg);
    pct_columns(row, kStorageWaitPct, s.diagnosis);
    s.diagnosis.pct_valid ? row.float8(kSyncRepPct, s.diagnosis.sync_rep_pct)
                          : row.null(kSyncRepPct);
    row.text(kTopStorageWait, s.top_storage_wait.empty() ? nullptr : s.top_storage_wait.c_str());
    per_second(row, kReadsPerS, s.reads_per_s, s.covered_seconds > 0);
    latency_columns(row, kReadLatencyAvg, s.reads);
    per_second(row, kWalFsyncsPerS, s.wal_fsyncs_per_s, s.covered_seconds > 0);
    latency_columns(row, kWalFsyncLatencyAvg, s.wal_fsyncs);
    s.diagnosis.score_valid ? row.float8(kStorageBoundScore, s.diagnosis.storage_bound_score)
                            : row.null(kStorageBoundScore);
    row.text(kVerdict, verdict_name(s.diagnosis.verdict));
    row.text(kHint, hint_with_truncation(s).c_str());
    tristate(row, kTrackIoTiming, s.track_io_timing);
    tristate(row, kTrackWalIoTiming, s.track_wal_io_timing);
    row.text(kSource, w.plan.use_rollups ? "rollups" : "ticks");
    const Diagnosis &d = s.diagnosis;
    if (s.totals.ticks_db_counters > 0 && s.covered_seconds > 0)
        row.float8(kXactsPerS, round_to(d.xacts_per_s, 2));
    else
        row.null(kXactsPerS);
    transaction_columns(row, d, kXactsPerS, kXactTimeMs, kXactTimeAtReferenceMs);
    d.score_valid ? row.float8(kSpeedupAtReference, round_to(d.speedup_at_reference, 2))
                  : row.null(kSpeedupAtReference);
    row.text(kStorageLimit, storage_limit_name(d.storage_limit));
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
    // 1.1
    kHistXactsPerS,
    kHistXactTimeMs,
    kHistSyncRepPct,
    kHistTuplesWrittenPerS,
    kHistDataDeviceIops,  // the volume: data and WAL devices (pg/devices.hpp)
    kHistDataDeviceMbPerS,
    kHistWalDeviceIops,
    kHistWalDeviceMbPerS,
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
    {"xacts_per_s", FLOAT8OID},
    {"xact_time_ms", FLOAT8OID},
    {"sync_rep_pct", FLOAT8OID},
    {"tuples_written_per_s", FLOAT8OID},
    {"data_device_iops", FLOAT8OID},
    {"data_device_mb_per_s", FLOAT8OID},
    {"wal_device_iops", FLOAT8OID},
    {"wal_device_mb_per_s", FLOAT8OID},
};

// The data and WAL devices' IOPS and MB/s of a history row; NULL where no device was read.
void device_history_columns(Row &row, const DeviceHistoryRow *d) {
    const bool data = d && d->data_seen && d->seconds > 0, wal = d && d->wal_seen && d->seconds > 0;
    data ? rate(row, kHistDataDeviceIops, d->data_ios, d->seconds) : row.null(kHistDataDeviceIops);
    data ? rate(row, kHistDataDeviceMbPerS, d->data_bytes / 1e6, d->seconds)
         : row.null(kHistDataDeviceMbPerS);
    wal ? rate(row, kHistWalDeviceIops, d->wal_ios, d->seconds) : row.null(kHistWalDeviceIops);
    wal ? rate(row, kHistWalDeviceMbPerS, d->wal_bytes / 1e6, d->seconds)
        : row.null(kHistWalDeviceMbPerS);
}

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

// ---- storage_wait_breakdown ----------------------------------------------------------------

enum BreakdownColumn : size_t {
    kBdComponent,
    kBdSamples,
    kBdSharePct,
    kBdMsPerXact,
    kBdLatencyAvgMs,
    kBdReferenceLatencyMs,
    kBdMsPerXactAtReference,
};

constexpr Column kBreakdownColumns[] = {
    {"component", TEXTOID},
    {"samples", INT8OID},
    {"share_pct", FLOAT8OID},
    {"ms_per_xact", FLOAT8OID},
    {"latency_avg_ms", FLOAT8OID},
    {"reference_latency_ms", FLOAT8OID},
    {"ms_per_xact_at_reference", FLOAT8OID},
};

void breakdown_row(Row &row, Component component, const Diagnosis &d) {
    const ComponentTime &t = d.components[static_cast<size_t>(component)];
    row.text(kBdComponent, component_name(component));
    row.int64(kBdSamples, int64_t(t.samples));
    d.pct_valid ? row.float8(kBdSharePct, t.share_pct) : row.null(kBdSharePct);
    d.xacts_valid ? row.float8(kBdMsPerXact, round_to(t.ms_per_xact, 3)) : row.null(kBdMsPerXact);
    t.latency_known ? row.float8(kBdLatencyAvgMs, round_to(t.latency_ms, 3))
                    : row.null(kBdLatencyAvgMs);
    t.latency_known ? row.float8(kBdReferenceLatencyMs, round_to(t.reference_ms, 3))
                    : row.null(kBdReferenceLatencyMs);
    d.xacts_valid ? row.float8(kBdMsPerXactAtReference, round_to(t.ms_per_xact_at_reference, 3))
                  : row.null(kBdMsPerXactAtReference);
}

// ---- storage_wait_what_if ------------------------------------------------------------------

enum WhatIfColumn : size_t {
    kWiWindowStart,
    kWiWindowEnd,
    kWiXactsPerS,
    kWiXactTimeMs,
    kWiClientSessionsAvg,
    kWiOutsideServerMs,
    kWiCpuBusyPct,
    kWiCpuCores,
    kWiReadLatencyMs,
    kWiReferenceReadLatencyMs,
    kWiFlushLatencyMs,
    kWiReferenceFlushLatencyMs,
    kWiStorageBoundScore,
    kWiXactTimeAtReferenceMs,
    kWiSpeedupAtReference,
    kWiXactsPerSAtReference,
    kWiXactsPerSCpuLimit,
    kWiCpuCapped,
    kWiReason,
};

constexpr Column kWhatIfColumns[] = {
    {"window_start", TIMESTAMPTZOID},
    {"window_end", TIMESTAMPTZOID},
    {"xacts_per_s", FLOAT8OID},
    {"xact_time_ms", FLOAT8OID},
    {"client_sessions_avg", FLOAT8OID},
    {"outside_server_ms", FLOAT8OID},
    {"cpu_busy_pct", FLOAT8OID},
    {"cpu_cores", FLOAT8OID},
    {"read_latency_ms", FLOAT8OID},
    {"reference_read_latency_ms", FLOAT8OID},
    {"flush_latency_ms", FLOAT8OID},
    {"reference_flush_latency_ms", FLOAT8OID},
    {"storage_bound_score", FLOAT8OID},
    {"xact_time_at_reference_ms", FLOAT8OID},
    {"speedup_at_reference", FLOAT8OID},
    {"xacts_per_s_at_reference", FLOAT8OID},
    {"xacts_per_s_cpu_limit", FLOAT8OID},
    {"cpu_capped", BOOLOID},
    {"reason", TEXTOID},
};

// A latency argument in ms: NULL keeps the setting; otherwise finite and > 0 (22023).
double latency_argument_ms(FunctionCallInfo fcinfo, int argno, const char *name, double fallback) {
    if (PG_ARGISNULL(argno))
        return fallback;
    const double ms = pg_call([fcinfo, argno] { return PG_GETARG_FLOAT8(argno); });
    if (!(ms > 0) || !std::isfinite(ms))
        throw UserError(ERRCODE_INVALID_PARAMETER_VALUE,
                        std::string(name) + " must be a positive number of milliseconds",
                        "Pass for example 0.1 (100 microseconds), or NULL for the setting "
                        "pg_storage_wait.reference_read_latency / reference_flush_latency.");
    return ms;
}

void optional_ms(Row &row, size_t column, bool valid, double value) {
    valid ? row.float8(column, round_to(value, 3)) : row.null(column);
}

// Why the projection has no per-transaction figures, or empty when it has them.
std::string what_if_reason(const Diagnosis &d, const MachineFacts &m) {
    if (!d.score_valid)
        return d.active_samples < kMinActiveSamples
                   ? "fewer than " + std::to_string(kMinActiveSamples) + " active samples"
               : d.latency_timing_off
                   ? "the storage latency is unknown (track_io_timing / track_wal_io_timing off)"
                   : "the storage latency is unknown (no data-file read or WAL flush was timed "
                     "in the window)";
    if (!d.xacts_valid)
        return d.xacts_reason;
    if (!m.cpu_measured)
        return "the machine's CPU was not read (/proc/stat): the CPU cap is a bound from the "
               "sessions' CPU samples";
    return "";
}

void what_if_row(Row &row, const Window &w, const WindowSummary &s, const ReferenceFacts &ref) {
    const Diagnosis &d = s.diagnosis;
    const MachineFacts m = machine_of_totals(s.totals, s.covered_seconds, ref.cpu_cores);
    const bool loop = d.score_valid && d.xacts_valid && m.cpu_measured;
    row.timestamptz(kWiWindowStart, w.plan.start_us);
    row.timestamptz(kWiWindowEnd, w.plan.end_us);
    transaction_columns(row, d, kWiXactsPerS, kWiXactTimeMs, kWiXactTimeAtReferenceMs);
    s.ticks ? row.float8(kWiClientSessionsAvg, round_to(m.client_sessions, 2))
            : row.null(kWiClientSessionsAvg);
    optional_ms(row, kWiOutsideServerMs, loop, d.outside_server_ms);
    m.cpu_measured ? row.float8(kWiCpuBusyPct, round_to(100 * m.cpu_busy_fraction, 1))
                   : row.null(kWiCpuBusyPct);
    m.cpu_measured &&m.cpu_cores > 0 ? row.float8(kWiCpuCores, round_to(m.cpu_cores, 2))
                                     : row.null(kWiCpuCores);
    const ComponentTime &read = d.components[size_t(Component::DataRead)];
    const ComponentTime &wal = d.components[size_t(Component::WalFlush)];
    optional_ms(row, kWiReadLatencyMs, read.latency_known, read.latency_ms);
    row.float8(kWiReferenceReadLatencyMs, ref.read_ms);
    optional_ms(row, kWiFlushLatencyMs, wal.latency_known, wal.latency_ms);
    row.float8(kWiReferenceFlushLatencyMs, ref.flush_ms);
    d.score_valid ? row.float8(kWiStorageBoundScore, d.storage_bound_score)
                  : row.null(kWiStorageBoundScore);
    d.score_valid ? row.float8(kWiSpeedupAtReference, round_to(d.speedup_at_reference, 2))
                  : row.null(kWiSpeedupAtReference);
    loop ? row.float8(kWiXactsPerSAtReference, round_to(d.xacts_per_s_at_reference, 1))
         : row.null(kWiXactsPerSAtReference);
    loop &&d.xacts_per_s_cpu_limit > 0
        ? row.float8(kWiXactsPerSCpuLimit, round_to(d.xacts_per_s_cpu_limit, 1))
        : row.null(kWiXactsPerSCpuLimit);
    d.score_valid ? row.boolean(kWiCpuCapped, d.cpu_capped) : row.null(kWiCpuCapped);
    const std::string reason = what_if_reason(d, m);
    row.text(kWiReason, reason.empty() ? nullptr : reason.c_str());
}

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
    const WindowSummary s = summarize(*w.records, w.names, reference_facts(shared),
                                      window_storage_limit(shared, w.plan));
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
    const std::vector<DeviceHistoryRow> devices = device_history(*w.records, resolution_us);
    size_t next_device = 0;
    const auto emit = [&](const HistoryRow &h) {
        // Both passes see the same rows, except records overwritten in between: match by time.
        while (next_device < devices.size() &&
               devices[next_device].sample_time_us < h.sample_time_us)
            ++next_device;
        const bool matched =
            next_device < devices.size() && devices[next_device].sample_time_us == h.sample_time_us;
        const IntervalRecord &t = h.totals;
        const Diagnosis &d = h.diagnosis;
        Row row = result.row();
        row.timestamptz(kHistSampleTime, h.sample_time_us);
        row.int64(kHistTicks, int64_t(t.ticks));
        t.ticks
            ? row.float8(kHistActiveBackendsAvg, round_to(double(t.fg_active) / double(t.ticks), 2))
            : row.null(kHistActiveBackendsAvg);
        pct_columns(row, kHistStoragePct, d);
        d.score_valid ? row.float8(kHistScore, d.storage_bound_score) : row.null(kHistScore);
        row.text(kHistVerdict, verdict_name(d.verdict));
        rate(row, kHistReadsPerS, double(t.reads), h.counter_seconds);
        mean_ms(row, kHistReadLatencyAvg, t.reads, t.read_time_us);
        rate(row, kHistWalFsyncsPerS, double(t.wal_syncs), h.counter_seconds);
        mean_ms(row, kHistWalFsyncLatencyAvg, t.wal_syncs, t.wal_sync_time_us);
        const bool counted = t.ticks_db_counters > 0;
        counted ? rate(row, kHistXactsPerS, double(t.xacts), h.counter_seconds)
                : row.null(kHistXactsPerS);
        d.xacts_valid ? row.float8(kHistXactTimeMs, round_to(d.xact_time_ms, 3))
                      : row.null(kHistXactTimeMs);
        d.pct_valid ? row.float8(kHistSyncRepPct, d.sync_rep_pct) : row.null(kHistSyncRepPct);
        counted ? rate(row, kHistTuplesWrittenPerS,
                       double(t.tuples_inserted + t.tuples_updated + t.tuples_deleted),
                       h.counter_seconds)
                : row.null(kHistTuplesWrittenPerS);
        device_history_columns(row, matched ? &devices[next_device] : nullptr);
        result.put(row);
    };
    for_each_history_row(*w.records, resolution_us, reference_facts(shared), emit);
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_breakdown) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kBreakdownColumns);
    Window w = load_window(shared, window_us);
    resolve_wait_names(shared, w);
    const WindowSummary s = summarize(*w.records, w.names, reference_facts(shared),
                                      window_storage_limit(shared, w.plan));
    for (size_t c = 0; c < kComponentCount; ++c) {
        Row row = result.row();
        breakdown_row(row, static_cast<Component>(c), s.diagnosis);
        result.put(row);
    }
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_what_if) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ReferenceFacts reference = reference_facts(shared);
    reference.read_ms = latency_argument_ms(fcinfo, 1, "read_latency_ms", reference.read_ms);
    reference.flush_ms = latency_argument_ms(fcinfo, 2, "flush_latency_ms", reference.flush_ms);
    ResultSet result(fcinfo, kWhatIfColumns);
    Window w = load_window(shared, window_us);
    resolve_wait_names(shared, w);
    const WindowSummary s = summarize(*w.records, w.names, reference);
    Row row = result.row();
    what_if_row(row, w, s, reference);
    result.put(row);
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
