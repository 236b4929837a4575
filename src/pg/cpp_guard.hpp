// The boundary between C++ and PostgreSQL's error handling (pg_duckdb's cpp_wrapper idea).
//  * run_cpp(): C++ work that may throw runs inside it; the exception becomes a message, and
//    the caller raises the PostgreSQL error only after every C++ object of that work is gone.
//  * owned_by_context(): a heap C++ object whose lifetime follows a memory context, so an
//    ereport() longjmp that skips our frames still frees it (no destructor is ever skipped,
//    and no C++ object lives on a stack frame that a longjmp can cross).
// Include after pg_headers.hpp.
#pragma once

#include <cstdio>
#include <exception>
#include <new>

namespace pgsw::pg {

struct CppError {
    bool out_of_memory = false;
    char message[256] = {0};
};

template <typename Fn>
bool run_cpp(Fn &&fn, CppError &error) noexcept {
    try {
        fn();
        return true;
    } catch (const std::bad_alloc &) {
        error.out_of_memory = true;
        snprintf(error.message, sizeof error.message, "out of memory");
    } catch (const std::exception &e) {
        snprintf(error.message, sizeof error.message, "%s", e.what());
    } catch (...) {
        snprintf(error.message, sizeof error.message, "unknown C++ exception");
    }
    return false;
}

// Raise a failed run_cpp() as a PostgreSQL error.
[[noreturn]] void raise_cpp_error(const CppError &error);

template <typename T>
T *owned_by_context(T *object, MemoryContext context) {
    auto *callback = static_cast<MemoryContextCallback *>(
        MemoryContextAllocZero(context, sizeof(MemoryContextCallback)));
    callback->func = [](void *arg) { delete static_cast<T *>(arg); };
    callback->arg = object;
    MemoryContextRegisterResetCallback(context, callback);
    return object;
}

// Run `fn` (returning T*) under run_cpp and hand the result to the memory context; raises the
// PostgreSQL error when the C++ side failed.
template <typename T, typename Fn>
T *make_owned(Fn &&fn, MemoryContext context) {
    T *object = nullptr;
    CppError error;
    if (!run_cpp([&] { object = fn(); }, error))
        raise_cpp_error(error);
    return owned_by_context(object, context);
}

}  // namespace pgsw::pg
