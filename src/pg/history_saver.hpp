// The history saver: a second, small background worker that writes the history file every
// pg_storage_wait.save_interval while the server runs, so a crash-restart or a kill -9 of the
// postmaster loses at most one interval. Include after pg_headers.hpp.
#pragma once

#include <string>

#include "core/shared_state.hpp"

namespace pgsw::pg {

extern int history_save_interval_s;  // pg_storage_wait.save_interval (reloadable), 0 = shutdown

// The saver's settings; called from define_settings().
void define_history_settings();
void register_history_saver();

// The history file (pg_stat/pg_storage_wait.history) and this server's identity for it.
extern const char *const kHistoryPath;
uint64_t history_system_identifier();

// Writes the file from the rings and records the outcome in SamplerStatus (saves, failures,
// last save time). Runs no PostgreSQL code that can raise an error. Returns "" or the error.
std::string save_history_recorded(SharedView &shared) noexcept;

extern "C" PGDLLEXPORT void pg_storage_wait_history_main(Datum arg);

}  // namespace pgsw::pg
