// The five symptoms and the report in SQL: storage_wait_symptoms() and storage_wait_report().
// Both read one window (the summary's: roll-ups, partial, ticks), compute in the core
// (core/symptoms.hpp, core/report.hpp) and emit rows by column name (sql_common.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/names.hpp"
#include "core/report.hpp"
#include "core/shared_state.hpp"
#include "core/symptoms.hpp"
#include "core/window.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/devices.hpp"
#include "pg/module.hpp"
#include "pg/sql_common.hpp"

namespace pgsw::pg {
namespace {

using Row = ResultSet::Row;

struct Evaluated {
    Window window;
    WindowSummary summary;
    SymptomRows rows;
};

Evaluated evaluate(const SharedView &shared, int64_t window_us) {
    Evaluated e{load_window(shared, window_us), {}, {}};
    resolve_wait_names(shared, e.window);
    e.summary = summarize(*e.window.records, e.window.names, reference_facts(shared));
    const NameDictionary &dict = *shared.names;
    e.rows = evaluate_symptoms(*e.window.records, e.window.names, e.summary, [&dict](uint16_t id) {
        return std::string(name_of(dict, id, NameKind::Slot));
    });
    return e;
}

enum SymptomColumn : size_t {
    kSymptom,
    kStatus,
    kStorageImplicated,
    kEvidence,
    kMetric,
    kValue,
    kBaseline,
    kUnit,
};

constexpr Column kSymptomColumns[] = {
    {"symptom", TEXTOID},    {"status", TEXTOID}, {"storage_implicated", BOOLOID},
    {"evidence", TEXTOID},   {"metric", TEXTOID}, {"value", FLOAT8OID},
    {"baseline", FLOAT8OID}, {"unit", TEXTOID},
};

void symptom_row(Row &row, const SymptomRow &s) {
    row.text(kSymptom, symptom_name(s.symptom));
    row.text(kStatus, symptom_status_name(s.status));
    s.storage_implicated < 0 ? row.null(kStorageImplicated)
                             : row.boolean(kStorageImplicated, s.storage_implicated > 0);
    row.text(kEvidence, s.evidence.c_str());
    row.text(kMetric, s.metric.c_str());
    s.value_valid ? row.float8(kValue, round_to(s.value, 3)) : row.null(kValue);
    s.baseline_valid ? row.float8(kBaseline, round_to(s.baseline, 3)) : row.null(kBaseline);
    row.text(kUnit, s.unit.c_str());
}

// The report returns SETOF text (one OUT column makes it scalar, which ResultSet's composite
// rows do not cover): one text column, materialized against the caller's expected descriptor.
ReturnSetInfo *begin_text_rows(FunctionCallInfo fcinfo) {
    return pg_call([fcinfo] {
        InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
        return reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    });
}

void put_text_row(ReturnSetInfo *rsinfo, const char *line) {
    pg_call([rsinfo, line] {
        Datum value = CStringGetTextDatum(line);
        bool isnull = false;
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
        pfree(DatumGetPointer(value));
    });
}

std::string timestamp_text(int64_t us) {
    // timestamptz_to_str formats into a static buffer: copied at once.
    const char *text = pg_call([us] { return timestamptz_to_str(TimestampTz(us)); });
    return std::string(text).substr(0, 19);
}

// The volume: one line per device with readings in the window (storage_device_stats'
// figures), the data and WAL devices first; a path without a block device says why.
std::vector<std::string> volume_lines(const SharedView &shared, int64_t window_us) {
    const Window w = load_window(shared, window_us, PartialUse::TicksOnly);
    const DeviceTable table = read_device_table(shared);
    const DeviceWindowSet set = device_window(*w.records);
    std::vector<std::string> lines;
    for (const DeviceWindow &d : set.devices) {
        const DeviceFigures f = device_figures(d, table_limits(table, d.device));
        std::string roles;
        const std::pair<uint8_t, const char *> role_texts[] = {
            {kRoleData, "data"}, {kRoleWal, "wal"}, {kRoleTablespace, "tablespace"}};
        for (const auto &[bit, text] : role_texts)
            if (d.roles & bit)
                roles += (roles.empty() ? "" : ", ") + std::string(text);
        const std::string name(name_of(*shared.names, d.device, NameKind::Device));
        lines.push_back(device_report_line(name.empty() ? "(other)" : name, roles, f));
    }
    for (uint32_t i = 0; i < table.count; ++i)
        if (table.devices[i].name == 0 && table.devices[i].reason[0])
            lines.push_back(std::string(table.devices[i].path) + ": " + table.devices[i].reason);
    return lines;
}

}  // namespace
}  // namespace pgsw::pg

using namespace pgsw;
using namespace pgsw::pg;

PGSW_SQL_FUNCTION(storage_wait_symptoms) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kSymptomColumns);
    const Evaluated e = evaluate(shared, window_us);
    for (const SymptomRow &s : e.rows) {
        Row row = result.row();
        symptom_row(row, s);
        result.put(row);
    }
    return (Datum)0;
}

PGSW_SQL_FUNCTION(storage_wait_report) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ReturnSetInfo *rsinfo = begin_text_rows(fcinfo);
    const Evaluated e = evaluate(shared, window_us);
    ReportInput in;
    in.window_seconds = double(e.window.plan.end_us - e.window.plan.start_us) / 1e6;
    in.window_start = timestamp_text(e.window.plan.start_us);
    in.window_end = timestamp_text(e.window.plan.end_us);
    in.summary = &e.summary;
    in.symptoms = &e.rows;
    in.volume_lines = volume_lines(shared, window_us);
    for (const std::string &line : build_report(in))
        put_text_row(rsinfo, line.c_str());
    return (Datum)0;
}
