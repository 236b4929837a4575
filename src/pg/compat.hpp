// Every PostgreSQL version difference pg_storage_wait depends on, in one place (16, 17, 18).
// Include after pg_headers.hpp.
#pragma once

#include "core/codes.hpp"

namespace pgsw::compat {

inline BackendKind backend_kind(BackendType type) {
    switch (type) {
        case B_BACKEND:
            return BackendKind::ClientBackend;
        case B_AUTOVAC_LAUNCHER:
            return BackendKind::AutovacuumLauncher;
        case B_AUTOVAC_WORKER:
            return BackendKind::AutovacuumWorker;
        case B_BG_WORKER:
            return BackendKind::BackgroundWorker;
        case B_WAL_SENDER:
            return BackendKind::Walsender;
        case B_STANDALONE_BACKEND:
            return BackendKind::StandaloneBackend;
        case B_ARCHIVER:
            return BackendKind::Archiver;
        case B_BG_WRITER:
            return BackendKind::Bgwriter;
        case B_CHECKPOINTER:
            return BackendKind::Checkpointer;
        case B_STARTUP:
            return BackendKind::Startup;
        case B_WAL_RECEIVER:
            return BackendKind::Walreceiver;
        case B_WAL_WRITER:
            return BackendKind::Walwriter;
        case B_LOGGER:
            return BackendKind::Logger;
#if PG_VERSION_NUM >= 170000
        case B_SLOTSYNC_WORKER:
            return BackendKind::SlotsyncWorker;
        case B_WAL_SUMMARIZER:
            return BackendKind::Walsummarizer;
#endif
#if PG_VERSION_NUM >= 180000
        case B_DEAD_END_BACKEND:
            return BackendKind::DeadEndBackend;
        case B_IO_WORKER:
            return BackendKind::IoWorker;
#endif
        default:
            return BackendKind::Unknown;
    }
}

inline BackendStateCode backend_state(BackendState state) {
    switch (state) {
#if PG_VERSION_NUM >= 180000
        case STATE_STARTING:
            return BackendStateCode::Starting;
#endif
        case STATE_IDLE:
            return BackendStateCode::Idle;
        case STATE_RUNNING:
            return BackendStateCode::Active;
        case STATE_IDLEINTRANSACTION:
            return BackendStateCode::IdleInTransaction;
        case STATE_FASTPATH:
            return BackendStateCode::FastpathFunctionCall;
        case STATE_IDLEINTRANSACTION_ABORTED:
            return BackendStateCode::IdleInTransactionAborted;
        case STATE_DISABLED:
            return BackendStateCode::Disabled;
        default:
            return BackendStateCode::None;
    }
}

inline bool io_object(int object, IoObjectCode &code) {
    switch (object) {
        case IOOBJECT_RELATION:
            code = IoObjectCode::Relation;
            return true;
        case IOOBJECT_TEMP_RELATION:
            code = IoObjectCode::TempRelation;
            return true;
#if PG_VERSION_NUM >= 180000
        case IOOBJECT_WAL:
            code = IoObjectCode::Wal;
            return true;
#endif
        default:
            return false;
    }
}

inline bool io_context(int context, IoContextCode &code) {
    switch (context) {
        case IOCONTEXT_BULKREAD:
            code = IoContextCode::BulkRead;
            return true;
        case IOCONTEXT_BULKWRITE:
            code = IoContextCode::BulkWrite;
            return true;
        case IOCONTEXT_NORMAL:
            code = IoContextCode::Normal;
            return true;
        case IOCONTEXT_VACUUM:
            code = IoContextCode::Vacuum;
            return true;
#if PG_VERSION_NUM >= 180000
        case IOCONTEXT_INIT:
            code = IoContextCode::Init;
            return true;
#endif
        default:
            return false;
    }
}

inline bool io_op(int op, IoOpCode &code) {
    switch (op) {
        case IOOP_EVICT:
            code = IoOpCode::Evict;
            return true;
        case IOOP_EXTEND:
            code = IoOpCode::Extend;
            return true;
        case IOOP_FSYNC:
            code = IoOpCode::Fsync;
            return true;
        case IOOP_HIT:
            code = IoOpCode::Hit;
            return true;
        case IOOP_READ:
            code = IoOpCode::Read;
            return true;
        case IOOP_REUSE:
            code = IoOpCode::Reuse;
            return true;
        case IOOP_WRITE:
            code = IoOpCode::Write;
            return true;
        case IOOP_WRITEBACK:
            code = IoOpCode::Writeback;
            return true;
        default:
            return false;
    }
}

// Bytes moved by one pg_stat_io cell: counted on 18; 16/17 report op_bytes (BLCKSZ) per op.
inline uint64 io_bytes(const PgStat_BktypeIO &io, int object, int context, int op) {
#if PG_VERSION_NUM >= 180000
    return io.bytes[object][context][op];
#else
    const bool moves_blocks =
        op == IOOP_READ || op == IOOP_WRITE || op == IOOP_EXTEND || op == IOOP_WRITEBACK;
    return moves_blocks ? static_cast<uint64>(io.counts[object][context][op]) * BLCKSZ : 0;
#endif
}

// WAL writes and syncs: pg_stat_wal on 16/17; on 18 they are pg_stat_io's WAL rows instead.
constexpr bool kWalFromPgStatWal = PG_VERSION_NUM < 180000;

// The number of BackendStatusArray slots, to find that array in shared memory by name.
inline Size backend_status_slots() {
#if PG_VERSION_NUM >= 170000
    return MaxBackends + NUM_AUXILIARY_PROCS;
#else
    return MaxBackends + NUM_AUXPROCTYPES;
#endif
}

// The status slot of allProcs[index], or -1 when the version has no fixed mapping (16: the
// caller matches by pid).
inline int status_slot_of_proc(uint32 index) {
#if PG_VERSION_NUM >= 170000
    return index < backend_status_slots() ? static_cast<int>(index) : -1;
#else
    (void)index;
    return -1;
#endif
}

// procarray.c's private ProcArrayStruct, the same in 16, 17 and 18: pgprocnos[0 .. numProcs)
// are the allProcs indexes of every process that joined the proc array (all but auxiliary
// processes), in ascending order. Only its size is checked by the server (ShmemInitStruct):
// the sampler uses it only when that size and maxProcs match (sampler.cpp).
struct ProcArrayLayout {
    int numProcs;
    int maxProcs;
    int maxKnownAssignedXids;
    int numKnownAssignedXids;
    int tailKnownAssignedXids;
    int headKnownAssignedXids;
    TransactionId lastOverflowedXid;
    TransactionId replication_slot_xmin;
    TransactionId replication_slot_catalog_xmin;
    int pgprocnos[FLEXIBLE_ARRAY_MEMBER];
};

inline int proc_array_max_procs() {
    return MaxBackends + max_prepared_xacts;
}

// Auxiliary processes (checkpointer, WAL writer, startup, I/O workers, ...) own the PGPROC
// slots after the MaxBackends regular ones and never join the proc array.
inline uint32 first_auxiliary_proc() {
    return static_cast<uint32>(MaxBackends);
}

// A PGPROC slot is live when it has a pid; 16's ProcKill does not clear pid on exit.
inline bool proc_is_live(const volatile PGPROC *proc) {
#if PG_VERSION_NUM >= 170000
    return proc->pid != 0;
#else
    return proc->pid != 0 && proc->procLatch.owner_pid != 0;
#endif
}

// Infinite intervals exist since 17 ('infinity'::interval).
inline bool interval_is_infinite(const Interval &value) {
#ifdef INTERVAL_NOT_FINITE
    return INTERVAL_NOT_FINITE(&value);
#else
    (void)value;
    return false;
#endif
}

inline bool interval_is_plus_infinity(const Interval &value) {
#ifdef INTERVAL_IS_NOEND
    return INTERVAL_IS_NOEND(&value);
#else
    (void)value;
    return false;
#endif
}

}  // namespace pgsw::compat
