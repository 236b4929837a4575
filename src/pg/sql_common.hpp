// What the SQL-callable functions share: their result set (rows filled by column name, checked
// against the caller's tuple descriptor), argument checks, windows, and wait-event names. All
// of it is C++ that calls PostgreSQL only through pg_call() (boundary.hpp). Include after
// pg_headers.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/records.hpp"
#include "core/shared_state.hpp"
#include "core/window.hpp"

namespace pgsw::pg {

// A column a function can produce: its name and type as the SQL declaration must have them.
struct Column {
    const char *name;
    Oid type;
};

// The rows of a set-returning function, materialized. Each function lists every column it can
// produce; the caller's declaration (its tuple descriptor) may ask for any subset, in any order:
// an older SQL declaration keeps working with a newer library until ALTER EXTENSION UPDATE.
// A declared column the library does not produce, or of another type, is an error at once.
class ResultSet {
  public:
    ResultSet(FunctionCallInfo fcinfo, const Column *columns, size_t count);
    template <size_t N>
    ResultSet(FunctionCallInfo fcinfo, const Column (&columns)[N])
        : ResultSet(fcinfo, columns, N) {}

    class Row {
      public:
        void null(size_t column) noexcept;
        void datum(size_t column, Datum value) noexcept;
        void float8(size_t column, double value);
        void int64(size_t column, int64_t value);
        void int32(size_t column, int32_t value);
        void boolean(size_t column, bool value) noexcept;
        void timestamptz(size_t column, int64_t value);
        void oid(size_t column, uint32_t value) noexcept;
        void text(size_t column, const char *value);  // nullptr: NULL
        void text_array(size_t column, const std::vector<const char *> &values);
        // Whether the caller's declaration has this column (skip costly values it lacks).
        bool wanted(size_t column) const noexcept;

      private:
        friend class ResultSet;
        explicit Row(const ResultSet &set);
        int attribute(size_t column) const noexcept;
        const ResultSet &set_;
        std::vector<Datum> values_;
        std::vector<bool> nulls_;
    };

    Row row() const { return Row(*this); }
    void put(const Row &row);

  private:
    ReturnSetInfo *rsinfo_;
    std::vector<int> attribute_of_;  // by column: the declaration's attribute number, or -1
    int natts_;
    MemoryContext row_memory_;  // text and array values of one row, reset after each put
};

// A user error for a bad argument (SQLSTATE 22023).
[[noreturn]] void throw_invalid_argument(const char *message, const char *hint);

// A positive interval argument in microseconds; NULL, zero or negative: 22023; +infinity
// means "all retained history" where `infinity_allowed`, else 22023 too.
int64_t interval_argument_us(FunctionCallInfo fcinfo, int argno, const char *name,
                             bool infinity_allowed = true);
// A `since` timestamp argument; NULL: 22023.
int64_t since_argument(FunctionCallInfo fcinfo, int argno);

int64_t now_us();

// Names of a stored wait_event_info as pg_stat_activity shows them ("IO", "DataFileRead");
// custom wait events from the name dictionary; both empty for CPU (0).
struct WaitEventName {
    std::string type, event;
};
WaitEventName wait_event_names(const SharedView &shared, uint32_t wait_event_info);

// The window of `window_us` ending now, planned over the rings (a NOTICE when clamped).
enum class PartialUse { Allowed, TicksOnly };
struct Window {
    WindowPlan plan;
    std::unique_ptr<RingWindow> records;
    WaitNameTable names;  // filled by resolve_wait_names()
};
Window load_window(const SharedView &shared, int64_t window_us,
                   PartialUse partial_use = PartialUse::Allowed);
void resolve_wait_names(const SharedView &shared, Window &window);

// Display rounding: `digits` decimals.
double round_to(double value, int digits);

// The what-if's assumptions: this session's reference latencies, the server's cores.
ReferenceFacts reference_facts(const SharedView &shared);

}  // namespace pgsw::pg
