// The opt-in probe (pg_storage_wait.probe, core/probe.hpp): the history saver worker reads one
// random 8 kB block with O_DIRECT per probe_interval per data/tablespace device and hands the
// latency counts to the sampler through the ProbeTable in shared memory; the sampler records
// them at each tick that reads the I/O counters. Include after pg_headers.hpp.
#pragma once

#include <cstdint>

#include "core/shared_state.hpp"
#include "core/tick_builder.hpp"

namespace pgsw::pg {

struct ProbeSettings {
    bool enabled;     // pg_storage_wait.probe (reloadable, off by default)
    int interval_ms;  // pg_storage_wait.probe_interval (reloadable)
};
extern ProbeSettings probe_settings;

void define_probe_settings();  // from define_settings()

// The history saver's side. probe_worker_due() runs the probe round when due and returns the
// milliseconds until the next one (INT64_MAX when the probe is off); probe_worker_reload()
// applies a changed setting (off: files closed and removed).
void probe_worker_start(SharedView &shared);
int64_t probe_worker_due(SharedView &shared);
void probe_worker_reload(SharedView &shared);

// The sampler's side: at each tick that reads the I/O counters. With the probe off: one test.
// start_probe_collector() at start and after each reload.
void start_probe_collector();
void sample_probes(SharedView &shared, TickBuilder &tick);

}  // namespace pgsw::pg
