// Helpers of the SQL-callable functions (sql_common.hpp).
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/names.hpp"
#include "core/rollup.hpp"
#include "core/shared_state.hpp"
#include "core/window.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/compat.hpp"
#include "pg/module.hpp"
#include "pg/sql_common.hpp"

namespace pgsw::pg {

// ---- ResultSet -----------------------------------------------------------------------------

ResultSet::ResultSet(FunctionCallInfo fcinfo, const Column *columns, size_t count)
    : attribute_of_(count, -1) {
    rsinfo_ = pg_call([fcinfo] {
        InitMaterializedSRF(fcinfo, 0);
        return reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    });
    const TupleDesc desc = rsinfo_->setDesc;
    natts_ = desc->natts;
    for (int att = 0; att < natts_; ++att) {
        const Form_pg_attribute a = TupleDescAttr(desc, att);
        if (a->attisdropped)
            continue;
        const char *name = NameStr(a->attname);
        size_t column = 0;
        while (column < count && std::strcmp(columns[column].name, name) != 0)
            ++column;
        if (column == count)
            throw UserError(ERRCODE_FEATURE_NOT_SUPPORTED,
                            std::string("pg_storage_wait does not provide the column \"") + name +
                                "\" declared by this function",
                            "The extension's SQL objects and its library do not match: install "
                            "the matching library, or run ALTER EXTENSION pg_storage_wait UPDATE.");
        if (a->atttypid != columns[column].type)
            throw UserError(ERRCODE_DATATYPE_MISMATCH,
                            std::string("column \"") + name +
                                "\" is declared with another type than pg_storage_wait returns",
                            "Run ALTER EXTENSION pg_storage_wait UPDATE.");
        attribute_of_[column] = att;
    }
    row_memory_ = pg_call([] {
        return AllocSetContextCreate(CurrentMemoryContext, "pg_storage_wait row",
                                     ALLOCSET_SMALL_SIZES);
    });
}

void ResultSet::put(const Row &row) {
    // std::vector<bool> is packed: the tuple store wants bool[].
    std::vector<char> nulls(row.nulls_.begin(), row.nulls_.end());
    static_assert(sizeof(bool) == sizeof(char), "bool[] and char[] share a layout here");
    Datum *values = const_cast<Datum *>(row.values_.data());
    bool *null_flags = reinterpret_cast<bool *>(nulls.data());
    ReturnSetInfo *rsinfo = rsinfo_;
    MemoryContext row_memory = row_memory_;
    pg_call([rsinfo, values, null_flags, row_memory] {
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, null_flags);
        MemoryContextReset(row_memory);
    });
}

ResultSet::Row::Row(const ResultSet &set)
    : set_(set), values_(size_t(set.natts_), Datum(0)), nulls_(size_t(set.natts_), true) {}

int ResultSet::Row::attribute(size_t column) const noexcept {
    return column < set_.attribute_of_.size() ? set_.attribute_of_[column] : -1;
}

bool ResultSet::Row::wanted(size_t column) const noexcept {
    return attribute(column) >= 0;
}

void ResultSet::Row::datum(size_t column, Datum value) noexcept {
    const int att = attribute(column);
    if (att < 0)
        return;
    values_[size_t(att)] = value;
    nulls_[size_t(att)] = false;
}

void ResultSet::Row::null(size_t column) noexcept {
    const int att = attribute(column);
    if (att >= 0)
        nulls_[size_t(att)] = true;
}

// 8-byte values are passed by reference on 32-bit builds (palloc): through pg_call.
void ResultSet::Row::float8(size_t column, double value) {
    if (wanted(column))
        datum(column, pg_call([value] { return Float8GetDatum(value); }));
}

void ResultSet::Row::int64(size_t column, int64_t value) {
    if (wanted(column))
        datum(column, pg_call([value] { return Int64GetDatum(value); }));
}

void ResultSet::Row::int32(size_t column, int32_t value) {
    datum(column, Int32GetDatum(value));
}

void ResultSet::Row::boolean(size_t column, bool value) noexcept {
    datum(column, BoolGetDatum(value));
}

void ResultSet::Row::oid(size_t column, uint32_t value) noexcept {
    datum(column, ObjectIdGetDatum(value));
}

void ResultSet::Row::timestamptz(size_t column, int64_t value) {
    if (wanted(column))
        datum(column, pg_call([value] { return TimestampTzGetDatum(value); }));
}

void ResultSet::Row::text(size_t column, const char *value) {
    if (value == nullptr) {
        null(column);
        return;
    }
    if (!wanted(column))
        return;
    const MemoryContext memory = set_.row_memory_;
    datum(column, pg_call([value, memory] {
              const MemoryContext old = MemoryContextSwitchTo(memory);
              const Datum d = CStringGetTextDatum(value);
              MemoryContextSwitchTo(old);
              return d;
          }));
}

void ResultSet::Row::text_array(size_t column, const std::vector<const char *> &values) {
    if (!wanted(column))
        return;
    const MemoryContext memory = set_.row_memory_;
    const char *const *items = values.data();
    const int n = int(values.size());
    datum(column, pg_call([items, n, memory] {
              const MemoryContext old = MemoryContextSwitchTo(memory);
              Datum *elements = static_cast<Datum *>(palloc(sizeof(Datum) * (n > 0 ? n : 1)));
              for (int i = 0; i < n; ++i)
                  elements[i] = CStringGetTextDatum(items[i]);
              ArrayType *array = construct_array_builtin(elements, n, TEXTOID);
              MemoryContextSwitchTo(old);
              return PointerGetDatum(array);
          }));
}

// ---- arguments -----------------------------------------------------------------------------

void throw_invalid_argument(const char *message, const char *hint) {
    throw UserError(ERRCODE_INVALID_PARAMETER_VALUE, message, hint);
}

int64_t interval_argument_us(FunctionCallInfo fcinfo, int argno, const char *name,
                             bool infinity_allowed) {
    if (PG_ARGISNULL(argno))
        throw UserError(ERRCODE_INVALID_PARAMETER_VALUE, std::string(name) + " must not be NULL",
                        "Pass an interval, for example interval '5 minutes'.");
    Interval value = *pg_call([fcinfo, argno] { return PG_GETARG_INTERVAL_P(argno); });
    if (compat::interval_is_infinite(value)) {
        if (infinity_allowed && compat::interval_is_plus_infinity(value))
            return INT64_MAX;
        throw UserError(ERRCODE_INVALID_PARAMETER_VALUE,
                        std::string(name) + " must be a finite positive interval",
                        "Pass an interval such as interval '5 minutes'.");
    }
    const double us = double(value.time) + double(value.day) * USECS_PER_DAY +
                      double(value.month) * DAYS_PER_MONTH * USECS_PER_DAY;
    if (!(us > 0))
        throw UserError(ERRCODE_INVALID_PARAMETER_VALUE,
                        std::string(name) + " must be a positive interval",
                        "Pass an interval such as interval '5 minutes'.");
    return us >= 9e18 ? INT64_MAX : int64_t(us);
}

int64_t since_argument(FunctionCallInfo fcinfo, int argno) {
    if (PG_ARGISNULL(argno))
        throw UserError(ERRCODE_INVALID_PARAMETER_VALUE, "\"since\" must not be NULL",
                        "Pass a timestamp, for example now() - interval '5 minutes'.");
    return pg_call([fcinfo, argno] { return int64_t(PG_GETARG_TIMESTAMPTZ(argno)); });
}

int64_t now_us() {
    return GetCurrentTimestamp();  // reads the clock: cannot raise
}

// ---- names ---------------------------------------------------------------------------------

WaitEventName wait_event_names(const SharedView &shared, uint32_t info) {
    if (info == 0)
        return {};
    if (is_custom_wait_event(info)) {
        const std::string_view name =
            name_of(*shared.names, custom_wait_event_name(info), NameKind::WaitEvent);
        return {"Extension", name.empty() ? "Extension" : std::string(name)};
    }
    // A raw custom id (history of 1.0, which stored them) may name another extension's event
    // now, and looking it up can raise: never resolved.
    if ((info & 0xFF000000) == PG_WAIT_EXTENSION)
        return {"Extension", "Extension"};
    // Built-in classes: pgstat_get_wait_event*() only index tables (unknown ids read "???").
    const char *type = pg_call([info] { return pgstat_get_wait_event_type(info); });
    const char *event = pg_call([info] { return pgstat_get_wait_event(info); });
    return {type ? type : "", event ? event : ""};
}

// ---- windows -------------------------------------------------------------------------------

namespace {

RetentionFacts retention_facts(const SharedView &shared) {
    RetentionFacts f{};
    const int64_t interval_us = status_load(shared.status->sample_interval_ms) * 1000;
    f.tick_retention_us = int64_t(shared.ticks.record_capacity() - 1) * interval_us;
    f.rollup_retention_us = int64_t(shared.rollups.record_capacity() - 1) * kRollupBucketUs;
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

}  // namespace

Window load_window(const SharedView &shared, int64_t window_us, PartialUse partial_use) {
    Window w;
    w.plan = plan_window(now_us(), window_us, retention_facts(shared));
    if (w.plan.clamped) {
        const double seconds = double(w.plan.end_us - w.plan.start_us) / 1e6;
        pg_call([seconds] {
            ereport(NOTICE,
                    (errmsg("window exceeds the retained history; using the last %.0f seconds",
                            seconds),
                     errhint("pg_storage_wait.tick_records and pg_storage_wait.rollup_records "
                             "set the retention.")));
        });
    }
    PartialSource partial;
    if (partial_use == PartialUse::Allowed)
        partial = {&shared.partials, status_load(shared.status->history_reset_us)};
    w.records = std::make_unique<RingWindow>(shared.ticks, shared.rollups, w.plan, partial,
                                             &shared.status->torn_reads_skipped);
    return w;
}

void resolve_wait_names(const SharedView &shared, Window &w) {
    for (uint32_t info : distinct_wait_infos(*w.records)) {
        const WaitEventName name = wait_event_names(shared, info);
        w.names.add(info, name.type.c_str(), name.event.c_str());
    }
}

double round_to(double value, int digits) {
    const double scale = std::pow(10.0, digits);
    return std::round(value * scale) / scale;
}

ReferenceFacts reference_facts(const SharedView &shared) {
    ReferenceFacts r;
    r.read_ms = settings.reference_read_latency_ms;
    r.flush_ms = settings.reference_flush_latency_ms;
    r.cpu_cores = double(status_load(shared.status->cpu_cores));
    return r;
}

}  // namespace pgsw::pg
