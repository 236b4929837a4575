// The one boundary between C++ and PostgreSQL's error handling, in both directions, by
// construction (pg_duckdb's cpp_wrapper + PostgresFunctionGuard idea):
//
//  * C++ → PostgreSQL. Every SQL-callable function is defined with PGSW_SQL_FUNCTION: its
//    body is C++ that may throw; the generated entry point catches everything and raises the
//    PostgreSQL error only once the body's frames (and their destructors) are gone. A C++
//    exception therefore never reaches PostgreSQL's C frames. The worker's main loop is entered
//    the same way (run_worker_body()).
//  * PostgreSQL → C++. Inside those bodies, PostgreSQL is called only through pg_call(): it
//    runs the call under PG_TRY, copies an error raised there and rethrows it as a C++
//    exception (PgErrorThrown), which unwinds the C++ frames normally and is re-raised as the
//    very same PostgreSQL error by the entry point. So no ereport() longjmp ever crosses a C++
//    frame. The lambda given to pg_call may call PostgreSQL only and must create no C++ object
//    with a destructor (static_asserts check the result type; the rest is the rule below).
//
// Rule for the rest of src/pg: functions that call PostgreSQL directly (readers of server
// state, row output) are "C-style": no C++ object with a destructor on their stack, and they run
// inside pg_call() when called from C++ code. User-facing errors are thrown as UserError with a
// SQLSTATE, a message and a hint.
//
// Include after pg_headers.hpp.
#pragma once

#include <exception>
#include <string>
#include <type_traits>

#include "core/tick_path.hpp"

namespace pgsw::pg {

// An error for the user, raised by the entry point as ereport(ERROR) with these fields.
class UserError : public std::exception {
  public:
    UserError(int sqlstate, std::string message, std::string hint = {}, std::string detail = {})
        : sqlstate_(sqlstate),
          message_(std::move(message)),
          hint_(std::move(hint)),
          detail_(std::move(detail)) {}
    const char *what() const noexcept override { return message_.c_str(); }
    int sqlstate() const noexcept { return sqlstate_; }
    const std::string &hint() const noexcept { return hint_; }
    const std::string &detail() const noexcept { return detail_; }

  private:
    int sqlstate_;
    std::string message_, hint_, detail_;
};

// A PostgreSQL error caught by pg_call(), travelling up the C++ frames to be re-raised.
struct PgErrorThrown {
    ErrorData *data;  // copied out of the error context, in the caller's memory context
};

// Calls `call(arg)` under PG_TRY; returns the error it raised (copied into the caller's memory
// context, the error state flushed), or nullptr. The sigsetjmp lives in this one function,
// whose frame holds nothing but pointers.
PGSW_TICK_PATH ErrorData *pg_try(void (*call)(void *), void *arg) noexcept;

// pg_call for a plain function, where the code's place matters: pg_call's trampoline is a
// template instance that lands with the rest of its file's code, while a plain `call` can be
// marked PGSW_TICK_PATH and sit with the sampler's tick.
inline void pg_call_function(void (*call)(void *), void *arg) {
    if (ErrorData *error = pg_try(call, arg))
        throw PgErrorThrown{error};
}

// Runs `fn` (which calls PostgreSQL) and turns a PostgreSQL error into PgErrorThrown. Returns
// what fn returns (void, a pointer, a Datum, a number: trivially copyable types only).
template <typename Fn>
auto pg_call(Fn &&fn) -> decltype(fn()) {
    using Result = decltype(fn());
    using Callable = std::remove_reference_t<Fn>;
    static_assert(std::is_void_v<Result> || std::is_trivially_copyable_v<Result>,
                  "pg_call returns plain values only: no destructor may be skipped");
    if constexpr (std::is_void_v<Result>) {
        ErrorData *error =
            pg_try([](void *f) { (*static_cast<Callable *>(f))(); }, static_cast<void *>(&fn));
        if (error != nullptr)
            throw PgErrorThrown{error};
    } else {
        struct Call {
            Callable *fn;
            Result result;
        } call{&fn, Result{}};
        ErrorData *error = pg_try(
            [](void *c) {
                Call *self = static_cast<Call *>(c);
                self->result = (*self->fn)();
            },
            &call);
        if (error != nullptr)
            throw PgErrorThrown{error};
        return call.result;
    }
}

// CHECK_FOR_INTERRUPTS() for C++ loops (a cancel or terminate request unwinds the C++ frames).
void check_for_interrupts();

// The entry point's side of the boundary: runs `body`, returns its result, or raises the
// error it ended with after its frames are gone. Never lets an exception escape.
Datum run_sql_function_body(Datum (*body)(FunctionCallInfo), FunctionCallInfo fcinfo) noexcept;

// The same for the background worker's main function (an error ends the worker process).
void run_worker_body(void (*body)()) noexcept;

}  // namespace pgsw::pg

// Defines the SQL-callable function `name` (extern "C", exported, V1 calling convention) whose
// body follows the macro and receives `fcinfo`.
#define PGSW_SQL_FUNCTION(name)                                      \
    static Datum name##_body(FunctionCallInfo fcinfo);               \
    extern "C" {                                                     \
    PGDLLEXPORT Datum name(PG_FUNCTION_ARGS);                        \
    PG_FUNCTION_INFO_V1(name);                                       \
    }                                                                \
    Datum name(PG_FUNCTION_ARGS) {                                   \
        return pgsw::pg::run_sql_function_body(name##_body, fcinfo); \
    }                                                                \
    static Datum name##_body([[maybe_unused]] FunctionCallInfo fcinfo)
