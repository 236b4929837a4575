// The entry points' side of the C++/PostgreSQL boundary (boundary.hpp).
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"

namespace pgsw::pg {
namespace {

// What a body ended with, in plain storage: it outlives the exception object, and raising it
// leaves no C++ object with a destructor behind.
struct PendingError {
    ErrorData *pg_error = nullptr;  // a PostgreSQL error caught by pg_call
    bool failed = false;            // a C++ error: the fields below
    int sqlstate = ERRCODE_INTERNAL_ERROR;
    char message[1024] = {0};
    char hint[512] = {0};
    char detail[512] = {0};
};

template <size_t N>
void copy_text(char (&to)[N], const char *from) noexcept {
    std::strncpy(to, from, N - 1);
    to[N - 1] = '\0';
}

void note_exception(PendingError &pending) noexcept {
    pending.failed = true;
    try {
        throw;
    } catch (const PgErrorThrown &e) {
        pending.failed = false;
        pending.pg_error = e.data;
    } catch (const UserError &e) {
        pending.sqlstate = e.sqlstate();
        copy_text(pending.message, e.what());
        copy_text(pending.hint, e.hint().c_str());
        copy_text(pending.detail, e.detail().c_str());
    } catch (const std::bad_alloc &) {
        pending.sqlstate = ERRCODE_OUT_OF_MEMORY;
        copy_text(pending.message, "pg_storage_wait: out of memory");
    } catch (const std::exception &e) {
        copy_text(pending.message, "pg_storage_wait: ");
        std::strncat(pending.message, e.what(), sizeof pending.message - 20);
    } catch (...) {
        copy_text(pending.message, "pg_storage_wait: unknown C++ exception");
    }
}

// A C++ exception may have left a PG_TRY without its PG_END_TRY: put the stacks back.
struct ErrorStacks {
    sigjmp_buf *exception_stack = PG_exception_stack;
    ErrorContextCallback *context_stack = error_context_stack;
    void restore() const noexcept {
        PG_exception_stack = exception_stack;
        error_context_stack = context_stack;
    }
};

void raise_pending(const PendingError &e) {
    if (e.pg_error != nullptr)
        ReThrowError(e.pg_error);
    ereport(ERROR,
            (errcode(e.sqlstate), errmsg("%s", e.message), e.hint[0] ? errhint("%s", e.hint) : 0,
             e.detail[0] ? errdetail_internal("%s", e.detail) : 0));
}

}  // namespace

ErrorData *pg_try(void (*call)(void *), void *arg) noexcept {
    const MemoryContext caller_context = CurrentMemoryContext;
    ErrorData *volatile error = nullptr;
    PG_TRY();
    { call(arg); }
    PG_CATCH();
    {
        MemoryContextSwitchTo(caller_context);
        error = CopyErrorData();
        FlushErrorState();
    }
    PG_END_TRY();
    return error;
}

void check_for_interrupts() {
    pg_call([] { CHECK_FOR_INTERRUPTS(); });
}

Datum run_sql_function_body(Datum (*body)(FunctionCallInfo), FunctionCallInfo fcinfo) noexcept {
    const ErrorStacks stacks;
    PendingError pending;
    Datum result = (Datum)0;
    try {
        result = body(fcinfo);
    } catch (...) {
        note_exception(pending);
    }
    stacks.restore();
    if (pending.failed || pending.pg_error != nullptr)
        raise_pending(pending);
    return result;
}

void run_worker_body(void (*body)()) noexcept {
    const ErrorStacks stacks;
    PendingError pending;
    try {
        body();
    } catch (...) {
        note_exception(pending);
    }
    stacks.restore();
    if (pending.failed || pending.pg_error != nullptr)
        raise_pending(pending);  // in the worker: the process ends and is restarted
}

}  // namespace pgsw::pg
