// Helpers shared by the SQL-callable functions. Include after pg_headers.hpp.
#pragma once

#include "core/records.hpp"

namespace pgsw::pg {

// Names of a raw wait_event_info as pg_stat_activity shows them ("IO", "DataFileRead"); a
// custom wait event whose name is no longer registered reads as "Extension".
void wait_event_names(uint32 wait_event_info, const char **type, const char **event);

// A window argument: `since` must not be NULL; raises SQLSTATE 22023 otherwise.
TimestampTz since_argument(FunctionCallInfo fcinfo, int argno);

double us_to_ms(double us);

struct RowBuilder {
    Datum values[32];
    bool nulls[32];
    int n = 0;
    void add(Datum value) { values[n] = value, nulls[n++] = false; }
    void add_null() { values[n] = (Datum)0, nulls[n++] = true; }
    void add_text(const char *text) { text ? add(CStringGetTextDatum(text)) : add_null(); }
    void add_float(double v) { add(Float8GetDatum(v)); }
    void add_int64(int64 v) { add(Int64GetDatum(v)); }
    void add_bool(bool v) { add(BoolGetDatum(v)); }
};

void put_row(FunctionCallInfo fcinfo, RowBuilder &row);

}  // namespace pgsw::pg
