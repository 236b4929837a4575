#include "core/cpp_only.hpp"
#pragma once
// Stable codes for what the sampler records. PostgreSQL's own enums (BackendType, BackendState,
// IOObject, IOContext, IOOp) change values between major versions; the rings and the history
// file store these codes instead, so a reader never misreads a tick written by another build.
// Append new codes at the end only: the history file format depends on them.
#include <cstdint>

namespace pgsw {

enum class BackendKind : uint8_t {
    Unknown = 0,
    ClientBackend,
    ParallelWorker,  // a background worker in a parallel query's lock group
    BackgroundWorker,
    AutovacuumLauncher,
    AutovacuumWorker,
    Bgwriter,
    Checkpointer,
    Walwriter,
    Walsender,
    Walreceiver,
    Walsummarizer,
    Startup,
    Archiver,
    Logger,
    SlotsyncWorker,
    IoWorker,
    StandaloneBackend,
    DeadEndBackend,
    Count
};

enum class BackendStateCode : uint8_t {
    None = 0,  // processes without a client state (auxiliary processes, workers)
    Starting,
    Idle,
    Active,
    IdleInTransaction,
    FastpathFunctionCall,
    IdleInTransactionAborted,
    Disabled,
    Count
};

enum class IoObjectCode : uint8_t { Relation = 0, TempRelation, Wal, Count };
enum class IoContextCode : uint8_t { BulkRead = 0, BulkWrite, Normal, Vacuum, Init, Count };
enum class IoOpCode : uint8_t {
    Evict = 0,
    Extend,
    Fsync,
    Hit,
    Read,
    Reuse,
    Write,
    Writeback,
    Count
};

// Names exactly as pg_stat_activity.backend_type / .state and pg_stat_io show them.
const char *backend_kind_name(BackendKind kind) noexcept;
const char *backend_state_name(BackendStateCode state) noexcept;  // nullptr for None
const char *io_object_name(IoObjectCode object) noexcept;
const char *io_context_name(IoContextCode context) noexcept;
const char *io_op_name(IoOpCode op) noexcept;

// Foreground samples feed the storage-bound score: client backends and parallel workers that are
// running a statement (active or fast-path function call).
PGSW_TICK_PATH bool is_foreground_active(BackendKind kind, BackendStateCode state) noexcept;

}  // namespace pgsw
