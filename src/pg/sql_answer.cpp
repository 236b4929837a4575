// The answer in SQL: storage_wait_summary(), storage_wait_events(), storage_io_latency(),
// storage_wait_history() and storage_wait_queries(). Each reads its window from shared memory
// (core/window.hpp decides ticks or roll-ups), resolves wait event names here (only PostgreSQL
// knows them), computes in the core under run_cpp(), and emits rows. The C++ results are heap
// objects owned by the function's memory context (cpp_guard.hpp), so no ereport() can skip a
// destructor.
#include <cmath>
#include <string>
#include <vector>

#include "core/shared_state.hpp"
#include "core/rollup.hpp"
#include "core/window.hpp"

#include "pg/pg_headers.hpp"

#include "pg/cpp_guard.hpp"
#include "pg/module.hpp"
#include "pg/sql_common.hpp"

extern "C" {
PGDLLEXPORT Datum storage_wait_summary(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_wait_events(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_io_latency(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_wait_history(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_wait_queries(PG_FUNCTION_ARGS);
PG_FUNCTION_INFO_V1(storage_wait_summary);
PG_FUNCTION_INFO_V1(storage_wait_events);
PG_FUNCTION_INFO_V1(storage_io_latency);
PG_FUNCTION_INFO_V1(storage_wait_history);
PG_FUNCTION_INFO_V1(storage_wait_queries);
}

namespace pgsw::pg {
namespace {

constexpr double kUsPerSecond = 1e6;

// A positive interval argument in microseconds; raises SQLSTATE 22023 for NULL, zero or
// negative. +infinity means "all retained history".
int64 interval_argument_us(FunctionCallInfo fcinfo, int argno, const char *name) {
    if (PG_ARGISNULL(argno))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must not be NULL", name),
                 errhint("Pass an interval, for example interval '5 minutes'.")));
    const Interval *value = PG_GETARG_INTERVAL_P(argno);
#ifdef INTERVAL_IS_NOEND
    if (INTERVAL_IS_NOEND(value))
        return PG_INT64_MAX;
#endif
    const double us = double(value->time) + double(value->day) * USECS_PER_DAY +
                      double(value->month) * DAYS_PER_MONTH * USECS_PER_DAY;
    if (!(us > 0))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s must be a positive interval", name),
                        errhint("Pass an interval such as interval '5 minutes'.")));
    return us >= 9e18 ? PG_INT64_MAX : int64(us);
}

RetentionFacts retention_facts(const SharedView &shared) {
    RetentionFacts f{};
    const int64 interval_us = status_load(shared.status->sample_interval_ms) * 1000;
    f.tick_retention_us = int64(shared.ticks.record_capacity() - 1) * interval_us;
    f.rollup_retention_us = int64(shared.rollups.record_capacity() - 1) * kRollupBucketUs;
    IntervalRecord oldest;
    for (uint64_t no = shared.ticks.first_readable(); no < shared.ticks.end(); ++no)
        if (shared.ticks.read_record(no, oldest) == ReadStatus::Ok) {
            f.have_ticks = true, f.oldest_tick_start_us = oldest.start_us;
            break;
        }
    for (uint64_t no = shared.rollups.first_readable(); no < shared.rollups.end(); ++no)
        if (shared.rollups.read_record(no, oldest) == ReadStatus::Ok) {
            f.have_rollups = true, f.oldest_rollup_start_us = oldest.start_us;
            break;
        }
    return f;
}

struct Window {
    WindowPlan plan;
    RingWindow *records;
    WaitNameTable *names;  // filled by resolve_wait_names() for the answers that name waits
};

void resolve_wait_names(Window &w) {
    w.names = make_owned<WaitNameTable>([] { return new WaitNameTable(); }, CurrentMemoryContext);
    std::vector<uint32_t> *infos = make_owned<std::vector<uint32_t>>(
        [&] { return new std::vector<uint32_t>(distinct_wait_infos(*w.records)); },
        CurrentMemoryContext);
    for (uint32_t info : *infos) {
        const char *type, *event;
        wait_event_names(info, &type, &event);
        CppError error;
        if (!run_cpp([&] { w.names->add(info, type, event); }, error))
            raise_cpp_error(error);
    }
}

// Whether an answer may take the current minute's partial roll-up in place of its ticks: not
// the time series (its rows show the ticks) nor the per-cell latency (one point per tick; the
// headline series keep their per-tick variation in the roll-ups' histogram bins).
enum class PartialUse { Allowed, TicksOnly };

// Plan the window of `window_us` ending now and fix its records (they are read by each answer's
// pass, one at a time). A window longer than the retention is clamped, with a NOTICE.
Window load_window(int64 window_us, PartialUse partial_use = PartialUse::Allowed) {
    const SharedView &shared = require_shared();
    Window w;
    w.plan = plan_window(GetCurrentTimestamp(), window_us, retention_facts(shared));
    if (w.plan.clamped)
        ereport(NOTICE,
                (errmsg("window exceeds the retained history; using the last %.0f seconds",
                        double(w.plan.end_us - w.plan.start_us) / kUsPerSecond),
                 errhint("pg_storage_wait.tick_records and pg_storage_wait.rollup_records set "
                         "the retention.")));
    PartialSource partial;
    if (partial_use == PartialUse::Allowed)
        partial = {&shared.partials, status_load(shared.status->history_reset_us)};
    w.records = make_owned<RingWindow>(
        [&] { return new RingWindow(shared.ticks, shared.rollups, w.plan, partial); },
        CurrentMemoryContext);
    w.names = nullptr;
    return w;
}

// Round for display to `digits` decimals (dividing by a power of ten keeps 52.91 exact).
double round_to(double value, int digits) {
    const double scale = std::pow(10.0, digits);
    return std::round(value * scale) / scale;
}

void add_ms_or_null(RowBuilder &row, const LatencySummary &s, double us) {
    s.valid ? row.add_float(round_to(us / 1000.0, 3)) : row.add_null();
}

void add_latency_columns(RowBuilder &row, const LatencySummary &s) {
    add_ms_or_null(row, s, s.avg_us);
    add_ms_or_null(row, s, s.p50_us);
    add_ms_or_null(row, s, s.p95_us);
    add_ms_or_null(row, s, s.p99_us);
    add_ms_or_null(row, s, s.max_us);
}

void add_pct_columns(RowBuilder &row, const Diagnosis &d, bool with_other) {
    if (!d.pct_valid) {
        for (int i = 0; i < (with_other ? 4 : 3); ++i)
            row.add_null();
        return;
    }
    row.add_float(d.storage_pct);
    row.add_float(d.cpu_pct);
    row.add_float(d.lock_pct);
    if (with_other)
        row.add_float(d.other_pct);
}

void add_tristate(RowBuilder &row, int value) {
    value < 0 ? row.add_null() : row.add_bool(value);
}

void add_rate(RowBuilder &row, double count, double seconds) {
    seconds > 0 ? row.add_float(round_to(count / seconds, 2)) : row.add_null();
}

void add_summary_row(RowBuilder &row, const Window &w, const WindowSummary &s) {
    row.add(TimestampTzGetDatum(w.plan.start_us));
    row.add(TimestampTzGetDatum(w.plan.end_us));
    row.add_int64(int64(s.ticks));
    row.add_int64(int64(s.backend_samples));
    s.ticks ? row.add_float(round_to(s.active_backends_avg, 2)) : row.add_null();
    add_pct_columns(row, s.diagnosis, true);
    row.add_text(s.top_storage_wait.empty() ? nullptr : s.top_storage_wait.c_str());
    s.covered_seconds > 0 ? row.add_float(round_to(s.reads_per_s, 2)) : row.add_null();
    add_latency_columns(row, s.reads);
    s.covered_seconds > 0 ? row.add_float(round_to(s.wal_fsyncs_per_s, 2)) : row.add_null();
    add_latency_columns(row, s.wal_fsyncs);
    s.diagnosis.score_valid ? row.add_float(s.diagnosis.storage_bound_score) : row.add_null();
    row.add_text(verdict_name(s.diagnosis.verdict));
    row.add_text(s.diagnosis.hint.c_str());
    add_tristate(row, s.track_io_timing);
    add_tristate(row, s.track_wal_io_timing);
    row.add_text(w.plan.use_rollups ? "rollups" : "ticks");
}

template <typename T, typename Fn>
T *compute(Fn &&fn) {
    return make_owned<T>([&] { return new T(fn()); }, CurrentMemoryContext);
}

}  // namespace
}  // namespace pgsw::pg

using namespace pgsw;
using namespace pgsw::pg;

Datum storage_wait_summary(PG_FUNCTION_ARGS) {
    require_shared();
    const int64 window_us = interval_argument_us(fcinfo, 0, "window");
    InitMaterializedSRF(fcinfo, 0);
    Window w = load_window(window_us);
    resolve_wait_names(w);
    const WindowSummary *s =
        compute<WindowSummary>([&] { return summarize(*w.records, *w.names); });
    RowBuilder row;
    add_summary_row(row, w, *s);
    put_row(fcinfo, row);
    return (Datum)0;
}

Datum storage_wait_events(PG_FUNCTION_ARGS) {
    require_shared();
    const int64 window_us = interval_argument_us(fcinfo, 0, "window");
    InitMaterializedSRF(fcinfo, 0);
    Window w = load_window(window_us);
    resolve_wait_names(w);
    for (const EventRow &e : *compute<std::vector<EventRow>>(
             [&] { return wait_event_profile(*w.records, *w.names); })) {
        RowBuilder row;
        row.add_text(e.name->type.c_str());
        row.add_text(e.name->event.c_str());
        row.add_text(backend_kind_name(e.backend));
        row.add_int64(int64(e.samples));
        row.add_float(round_to(e.share_pct, 2));
        row.add_bool(e.category == WaitCategory::Storage);
        row.add_text(wait_category_name(e.category));
        put_row(fcinfo, row);
    }
    return (Datum)0;
}

Datum storage_io_latency(PG_FUNCTION_ARGS) {
    require_shared();
    const int64 window_us = interval_argument_us(fcinfo, 0, "window");
    InitMaterializedSRF(fcinfo, 0);
    const Window w = load_window(window_us, PartialUse::TicksOnly);
    const double *seconds = compute<double>([&] { return covered_seconds(*w.records); });
    for (const IoLatencyRow &io :
         *compute<std::vector<IoLatencyRow>>([&] { return io_latency(*w.records); })) {
        RowBuilder row;
        row.add_text(backend_kind_name(io.backend));
        row.add_text(io_object_name(io.object));
        row.add_text(io_context_name(io.context));
        row.add_text(io_op_name(io.op));
        row.add_int64(int64(io.ops));
        add_rate(row, double(io.ops), *seconds);
        add_latency_columns(row, io.latency);
        add_rate(row, double(io.bytes), *seconds);
        put_row(fcinfo, row);
    }
    return (Datum)0;
}

Datum storage_wait_history(PG_FUNCTION_ARGS) {
    require_shared();
    const int64 window_us = interval_argument_us(fcinfo, 0, "window");
    const int64 resolution_us = PG_ARGISNULL(1) ? 0 : interval_argument_us(fcinfo, 1, "resolution");
    InitMaterializedSRF(fcinfo, 0);
    const Window w = load_window(window_us, PartialUse::TicksOnly);
    for (const HistoryRow &h : *compute<std::vector<HistoryRow>>([&] {
             return history(*w.records, resolution_us == PG_INT64_MAX ? 0 : resolution_us);
         })) {
        RowBuilder row;
        row.add(TimestampTzGetDatum(h.sample_time_us));
        row.add_int64(int64(h.ticks));
        h.ticks ? row.add_float(round_to(double(h.samples.active) / double(h.ticks), 2))
                : row.add_null();
        add_pct_columns(row, h.diagnosis, true);
        h.diagnosis.score_valid ? row.add_float(h.diagnosis.storage_bound_score) : row.add_null();
        row.add_text(verdict_name(h.diagnosis.verdict));
        add_rate(row, double(h.reads), h.covered_seconds);
        h.read_time_us
            ? row.add_float(round_to(double(h.read_time_us) / double(h.reads) / 1000.0, 3))
            : row.add_null();
        add_rate(row, double(h.wal_syncs), h.covered_seconds);
        h.wal_sync_time_us
            ? row.add_float(round_to(double(h.wal_sync_time_us) / double(h.wal_syncs) / 1000.0, 3))
            : row.add_null();
        put_row(fcinfo, row);
    }
    return (Datum)0;
}

Datum storage_wait_queries(PG_FUNCTION_ARGS) {
    require_shared();
    const int64 window_us = interval_argument_us(fcinfo, 0, "window");
    InitMaterializedSRF(fcinfo, 0);
    const Window w = load_window(window_us);
    const std::vector<QueryRow> *rows =
        compute<std::vector<QueryRow>>([&] { return query_profile(*w.records); });
    uint64_t storage_total = 0;
    for (const QueryRow &q : *rows)
        storage_total += q.storage_samples;
    for (const QueryRow &q : *rows) {
        RowBuilder row;
        row.add_int64(q.query_id);
        row.add(ObjectIdGetDatum(q.database_oid));
        row.add_int64(int64(q.samples));
        row.add_int64(int64(q.storage_samples));
        row.add_float(round_to(100.0 * double(q.storage_samples) / double(q.samples), 2));
        storage_total
            ? row.add_float(round_to(100.0 * double(q.storage_samples) / double(storage_total), 2))
            : row.add_null();
        put_row(fcinfo, row);
    }
    return (Datum)0;
}
