// Module-wide state of pg_storage_wait: GUC values, the shared-memory view, and the checks SQL
// functions start with. Include after pg_headers.hpp.
#pragma once

#include "core/shared_state.hpp"

namespace pgsw::pg {

struct Settings {
    int sample_interval_ms;   // pg_storage_wait.sample_interval (reloadable)
    int io_read_interval_ms;  // pg_storage_wait.io_read_interval (reloadable)
    int tick_records;         // pg_storage_wait.tick_records
    int rollup_records;       // pg_storage_wait.rollup_records
    int entries_per_tick;     // pg_storage_wait.entries_per_tick
    int entries_per_rollup;   // pg_storage_wait.entries_per_rollup
    bool save_history;        // pg_storage_wait.save_history (reloadable)
    // The what-if's reference device (user-settable: a session can ask its own what-if).
    double reference_read_latency_ms;   // pg_storage_wait.reference_read_latency
    double reference_flush_latency_ms;  // pg_storage_wait.reference_flush_latency
    int test_fail_lookup;               // pg_storage_wait.test_fail_lookup (TestFailLookup)
};

// pg_storage_wait.test_fail_lookup, for test/t/023_private_lookups.pl only: a private-structure
// lookup reports a layout mismatch, as on a server this build does not match, so the fallbacks
// run where a test can see them.
enum TestFailLookup : int { kFailNoLookup = 0, kFailProcArray = 1, kFailBackendStatus = 2 };
extern Settings settings;

SharedCapacities shared_capacities();

// This process's view of the shared block; throws UserError 55000 (with a hint naming
// shared_preload_libraries) when the library was not preloaded. C++ callers only (boundary.hpp).
SharedView &require_shared();

// The worker's entry point (sampler.cpp).
extern "C" PGDLLEXPORT void pg_storage_wait_worker_main(Datum arg);

}  // namespace pgsw::pg
