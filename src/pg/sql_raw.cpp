// SQL functions of the sampler: storage_wait_status(), the raw readers storage_wait_ticks(),
// storage_wait_samples(), storage_io_deltas(), and storage_wait_reset().
// They read shared memory directly (core/ring.hpp protocol) and never block the sampler.
#include <vector>

#include "core/ring.hpp"
#include "core/shared_state.hpp"
#include "core/wait_class.hpp"

#include "pg/pg_headers.hpp"

#include "pg/compat.hpp"
#include "pg/cpp_guard.hpp"
#include "pg/module.hpp"
#include "pg/sql_common.hpp"

extern "C" {
PGDLLEXPORT Datum storage_wait_status(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_wait_ticks(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_wait_samples(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_io_deltas(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum storage_wait_reset(PG_FUNCTION_ARGS);
PG_FUNCTION_INFO_V1(storage_wait_status);
PG_FUNCTION_INFO_V1(storage_wait_ticks);
PG_FUNCTION_INFO_V1(storage_wait_samples);
PG_FUNCTION_INFO_V1(storage_io_deltas);
PG_FUNCTION_INFO_V1(storage_wait_reset);
}

namespace pgsw::pg {

void wait_event_names(uint32 wait_event_info, const char **type, const char **event) {
    *type = *event = nullptr;
    if (wait_event_info == 0)
        return;
    MemoryContext context = CurrentMemoryContext;
    PG_TRY();
    {
        *type = pgstat_get_wait_event_type(wait_event_info);
        *event = pgstat_get_wait_event(wait_event_info);
    }
    PG_CATCH();
    {
        // 17+: the custom wait event's extension is gone since the sample was taken.
        MemoryContextSwitchTo(context);
        FlushErrorState();
        *type = "Extension";
        *event = "Extension";
    }
    PG_END_TRY();
}

TimestampTz since_argument(FunctionCallInfo fcinfo, int argno) {
    if (PG_ARGISNULL(argno))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("\"since\" must not be NULL"),
                 errhint("Pass a timestamp, for example now() - interval '5 minutes'.")));
    return PG_GETARG_TIMESTAMPTZ(argno);
}

double us_to_ms(double us) {
    return us / 1000.0;
}

void put_row(FunctionCallInfo fcinfo, RowBuilder &row) {
    auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row.values, row.nulls);
}

namespace {

std::vector<RecordCopy> *read_ticks_since(const Ring &ring, TimestampTz since, bool entries) {
    return make_owned<std::vector<RecordCopy>>(
        [&] { return new std::vector<RecordCopy>(ring.read_since(since, entries)); },
        CurrentMemoryContext);
}

const char *wal_source(uint32_t flags) {
    if (flags & kFlagWalFromPgStatWal)
        return "pg_stat_wal";
    if (flags & kFlagWalFromPgStatIo)
        return "pg_stat_io";
    return nullptr;
}

// Span of time the tick ring can hold at the current interval.
double tick_retention_seconds(const SharedView &shared) {
    return double(shared.ticks.record_capacity() - 1) *
           double(status_load(shared.status->sample_interval_ms)) / 1000.0;
}

void add_status_row(RowBuilder &row, const SharedView &shared) {
    const SamplerStatus &s = *shared.status;
    const uint64_t ticks = status_load(s.ticks);
    const uint64_t flags = status_load(s.last_tick_flags);
    const int64_t last_tick = status_load(s.last_tick_us);
    const int64_t pid = status_load(s.worker_pid);
    row.add_int64(int64(ticks));
    row.add(Int32GetDatum(int32(status_load(s.sample_interval_ms))));
    last_tick ? row.add(TimestampTzGetDatum(last_tick)) : row.add_null();
    row.add_int64(int64(status_load(s.overruns)));
    ticks ? row.add_float(double(status_load(s.tick_cost_total_us)) / double(ticks))
          : row.add_null();
    row.add_int64(int64(status_load(s.tick_cost_max_us)));
    row.add_int64(int64(SharedLayout::compute(shared_capacities()).total_bytes));
    row.add_float(tick_retention_seconds(shared));
    row.add_int64(int64(shared.rollups.record_capacity() - 1) * 60);
    row.add_bool(status_load(s.restored_from_disk) != 0);
    const bool seen = last_tick != 0;
    seen ? row.add_bool(flags & kFlagTrackIoTiming) : row.add_null();
    seen ? row.add_bool(flags & kFlagTrackWalIoTiming) : row.add_null();
    seen ? row.add_bool(flags & kFlagInRecovery) : row.add_null();
    pid ? row.add(Int32GetDatum(int32(pid))) : row.add_null();
    row.add_int64(int64(status_load(s.worker_starts)));
    row.add_int64(int64(status_load(s.counter_resets)));
    row.add_text(seen ? wal_source(uint32_t(flags)) : nullptr);
    row.add_int64(int64(shared.ticks.end() - shared.ticks.first_readable()));
    row.add_int64(int64(shared.rollups.end() - shared.rollups.first_readable()));
}

void add_tick_row(RowBuilder &row, const IntervalRecord &r) {
    row.add(TimestampTzGetDatum(r.end_us));
    row.add_float(us_to_ms(double(r.end_us - r.start_us)));
    row.add(Int32GetDatum(int32(r.tick_cost_us)));
    row.add(Int32GetDatum(int32(r.procs_sampled)));
    row.add_int64(int64(r.fg_active));
    row.add_int64(int64(r.fg_storage));
    row.add_int64(int64(r.fg_cpu));
    row.add_int64(int64(r.fg_lock));
    row.add_int64(int64(r.reads));
    row.add_float(us_to_ms(double(r.read_time_us)));
    row.add_int64(int64(r.wal_syncs));
    row.add_float(us_to_ms(double(r.wal_sync_time_us)));
    row.add_int64(int64(r.wal_writes));
    row.add_float(us_to_ms(double(r.wal_write_time_us)));
    row.add_bool(r.flags & kFlagBaseline);
    row.add_bool(r.flags & kFlagCountersReset);
    row.add_bool(r.flags & kFlagOverrun);
    row.add_bool(r.flags & kFlagTrackIoTiming);
    row.add_bool(r.flags & kFlagTrackWalIoTiming);
    row.add_bool(r.flags & kFlagInRecovery);
    row.add_text(wal_source(r.flags));
    row.add_bool(!(r.flags & kFlagCountersNotRead));
}

void add_sample_row(RowBuilder &row, const IntervalRecord &r, const WaitGroupEntry &w) {
    const char *type, *event;
    wait_event_names(w.wait_event_info, &type, &event);
    row.add(TimestampTzGetDatum(r.end_us));
    row.add_text(backend_kind_name(w.backend));
    row.add_text(backend_state_name(w.state));
    row.add_text(type);
    row.add_text(event);
    row.add_text(wait_category_name(static_cast<WaitCategory>(w.category)));
    w.database_oid ? row.add(ObjectIdGetDatum(w.database_oid)) : row.add_null();
    row.add(Int32GetDatum(int32(w.samples)));
    row.add_int64(int64(w.wait_event_info));
}

void add_io_row(RowBuilder &row, const IntervalRecord &r, const IoDeltaEntry &io) {
    row.add(TimestampTzGetDatum(r.end_us));
    row.add_float(us_to_ms(double(r.end_us - r.start_us)));
    row.add_text(backend_kind_name(io.backend));
    row.add_text(io_object_name(io.object));
    row.add_text(io_context_name(io.context));
    row.add_text(io_op_name(io.op));
    row.add_int64(int64(io.count));
    row.add_float(us_to_ms(double(io.time_us)));
    row.add_int64(int64(io.bytes));
}

}  // namespace
}  // namespace pgsw::pg

using namespace pgsw;
using namespace pgsw::pg;

Datum storage_wait_status(PG_FUNCTION_ARGS) {
    const SharedView &shared = require_shared();
    InitMaterializedSRF(fcinfo, 0);
    RowBuilder row;
    add_status_row(row, shared);
    put_row(fcinfo, row);
    return (Datum)0;
}

Datum storage_wait_ticks(PG_FUNCTION_ARGS) {
    const SharedView &shared = require_shared();
    const TimestampTz since = since_argument(fcinfo, 0);
    InitMaterializedSRF(fcinfo, 0);
    for (const RecordCopy &copy : *read_ticks_since(shared.ticks, since, false)) {
        RowBuilder row;
        add_tick_row(row, copy.record);
        put_row(fcinfo, row);
    }
    return (Datum)0;
}

Datum storage_wait_samples(PG_FUNCTION_ARGS) {
    const SharedView &shared = require_shared();
    const TimestampTz since = since_argument(fcinfo, 0);
    InitMaterializedSRF(fcinfo, 0);
    for (const RecordCopy &copy : *read_ticks_since(shared.ticks, since, true))
        for (const ArenaEntry &entry : copy.entries) {
            if (entry.kind != EntryKind::WaitGroup)
                continue;
            RowBuilder row;
            add_sample_row(row, copy.record, entry.wait);
            put_row(fcinfo, row);
        }
    return (Datum)0;
}

Datum storage_io_deltas(PG_FUNCTION_ARGS) {
    const SharedView &shared = require_shared();
    const TimestampTz since = since_argument(fcinfo, 0);
    InitMaterializedSRF(fcinfo, 0);
    for (const RecordCopy &copy : *read_ticks_since(shared.ticks, since, true))
        for (const ArenaEntry &entry : copy.entries) {
            if (entry.kind != EntryKind::IoDelta)
                continue;
            RowBuilder row;
            add_io_row(row, copy.record, entry.io);
            put_row(fcinfo, row);
        }
    return (Datum)0;
}

Datum storage_wait_reset(PG_FUNCTION_ARGS) {
    SharedView &shared = require_shared();
    if (!superuser())
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("permission denied to reset pg_storage_wait history"),
                        errhint("Only superusers can call storage_wait_reset().")));
    shared.ticks.hide_all();
    shared.rollups.hide_all();
    shared.partials.hide_all();
    status_store(shared.status->history_reset_us, int64_t{GetCurrentTimestamp()});
    PG_RETURN_VOID();
}
