// Every PostgreSQL version difference pg_storage_wait depends on, in one place (16, 17, 18,
// 19). pg_headers.hpp includes it after PostgreSQL's headers, so every src/pg file is checked
// against the tested majors before anything else of it compiles.
#pragma once

#include "core/codes.hpp"

// ---- the majors this build knows ----------------------------------------------------------
// A new major may move the private structures the sampler reads (the proc array, the backend
// status array, pg_stat_io's shared counters): a build against one that nobody has checked here
// must not misread them silently. Supporting a new major: read its changes to those structures
// and to the wait events (internals-round2.md), extend the sections below, raise
// PGSW_NEWEST_TESTED_MAJOR and add the major to scripts/test.sh.
#define PGSW_NEWEST_TESTED_MAJOR 19

#if PG_VERSION_NUM < 160000
#error "pg_storage_wait requires PostgreSQL 16 or later (pg_stat_io)"
#endif

#if PG_VERSION_NUM >= (PGSW_NEWEST_TESTED_MAJOR + 1) * 10000 && !defined(PGSW_UNTESTED_MAJOR)
#error \
    "pg_storage_wait is tested with PostgreSQL 16 to 19, not with this newer major: extend src/pg/compat.hpp for it, or build with make PGSW_UNTESTED_MAJOR=1 to let the start-up checks of the private structures decide at run time"
#endif

namespace pgsw::compat {

// Built for a major newer than the newest tested (make PGSW_UNTESTED_MAJOR=1): the sampler
// then reads pg_stat_io through the public call, whose copy is slower but never misread, and
// says so once in the log (sampler.cpp); the proc array and backend status array keep their
// size checks, which fall back or disable the sampler on a mismatch.
constexpr bool kUntestedMajor = PG_VERSION_NUM >= (PGSW_NEWEST_TESTED_MAJOR + 1) * 10000;

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

struct WalIoCounters {
    TimestampTz reset_at;
    uint64 writes, write_time_us, syncs, sync_time_us;
};

// pg_stat_wal's write and sync counters (16/17); false on 18+, which has no such fields.
inline bool pg_stat_wal_io(WalIoCounters &out) {
#if PG_VERSION_NUM < 180000
    const PgStat_WalStats *wal = pgstat_fetch_stat_wal();
    out = {wal->stat_reset_timestamp, uint64(wal->wal_write), uint64(wal->wal_write_time),
           uint64(wal->wal_sync), uint64(wal->wal_sync_time)};
    return true;
#else
    (void)out;
    return false;
#endif
}

// pg_stat_io's shared counters (utils/pgstat_internal.h: PgStatShared_IO, one LWLock per
// backend type, the same in 16 to 19) are read in place, under the locks that
// pgstat_io_snapshot_cb() takes; not for an untested major (kUntestedMajor).
constexpr bool kReadSharedIoInPlace = !kUntestedMajor;

// The number of BackendStatusArray slots, to find that array in shared memory by name.
inline Size backend_status_slots() {
#if PG_VERSION_NUM >= 170000
    return MaxBackends + NUM_AUXILIARY_PROCS;
#else
    return MaxBackends + NUM_AUXPROCTYPES;
#endif
}

// The status slot of allProcs[index], or -1 when the version has no fixed mapping (16: the
// caller matches by pid). `status_slots`: backend_status_slots(), read once by the caller.
inline int status_slot_of_proc(uint32 index, Size status_slots) {
#if PG_VERSION_NUM >= 170000
    return index < status_slots ? static_cast<int>(index) : -1;
#else
    (void)index;
    (void)status_slots;
    return -1;
#endif
}

// procarray.c's private ProcArrayStruct: pgprocnos[0 .. numProcs) are the allProcs indexes of
// every process that joined the proc array (all but auxiliary processes), in ascending order.
// The same in 17, 18 and 19; 16 still has the spinlock over the known-assigned-xids head and
// tail (17 removed it), which shifts every later field (pgprocnos at 40, not 36, on x86-64).
// Only its size is checked by the server (ShmemInitStruct): the sampler uses it only when that
// size and maxProcs match (sampler.cpp).
struct ProcArrayLayout {
    int numProcs;
    int maxProcs;
    int maxKnownAssignedXids;
    int numKnownAssignedXids;
    int tailKnownAssignedXids;
    int headKnownAssignedXids;
#if PG_VERSION_NUM < 170000
    slock_t known_assigned_xids_lck;
#endif
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

// Injection points (17+) have a wait class of their own.
inline bool is_injection_point_class(uint32 wait_class) {
#ifdef PG_WAIT_INJECTIONPOINT
    return wait_class == PG_WAIT_INJECTIONPOINT;
#else
    (void)wait_class;
    return false;
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

// ---- server state for the symptoms (pg/server_state.cpp) ------------------------------------
// Checkpointer counters, the autovacuum cap and the replication slot array per version
// (internals-round2.md §2-§4).
extern "C" {
#include "access/xlogrecovery.h"
#include "postmaster/autovacuum.h"
#include "replication/slot.h"
}

namespace pgsw::compat {

// The checkpointer's counters from pgstat_fetch_stat_checkpointer() (16: pg_stat_bgwriter's
// checkpoint columns live in this struct under their old names). Restartpoints count with the
// checkpoints (16 counts them there itself). `done`: 18+ counts performed ones; 16/17 only
// started ones (skipped idle checkpoints included).
template <typename Totals>
void checkpointer_totals(const PgStat_CheckpointerStats &s, Totals &out) {
#if PG_VERSION_NUM >= 170000
    out.timed = uint64(s.num_timed + s.restartpoints_timed);
    out.requested = uint64(s.num_requested + s.restartpoints_requested);
#if PG_VERSION_NUM >= 180000
    out.done = uint64(s.num_performed + s.restartpoints_performed);
#else
    out.done = out.timed + out.requested;
#endif
    out.write_time_ms = uint64(s.write_time);
    out.sync_time_ms = uint64(s.sync_time);
    out.buffers_written = uint64(s.buffers_written);
#else
    out.timed = uint64(s.timed_checkpoints);
    out.requested = uint64(s.requested_checkpoints);
    out.done = out.timed + out.requested;
    out.write_time_ms = uint64(s.checkpoint_write_time);
    out.sync_time_ms = uint64(s.checkpoint_sync_time);
    out.buffers_written = uint64(s.buf_written_checkpoints);
#endif
}

// How many autovacuum workers can run at once; 0 when none can (standby, autovacuum or
// track_counts off). 18+: the smaller of the SIGHUP setting and the PGPROC slots.
inline uint32 autovacuum_worker_cap() {
    if (RecoveryInProgress() || !AutoVacuumingActive())
        return 0;
#if PG_VERSION_NUM >= 180000
    return uint32(Min(autovacuum_max_workers, autovacuum_worker_slots));
#else
    return uint32(autovacuum_max_workers);
#endif
}

// The replication slots to read: the first max_replication_slots (19 appends REPACK slots
// after them, which are not replication and are not read).
inline int replication_slot_count() {
    return ReplicationSlotCtl != nullptr ? max_replication_slots : 0;
}

// Whether a process streams from the slot; read under the slot's spinlock.
inline bool slot_is_active(const volatile ReplicationSlot *slot) {
#if PG_VERSION_NUM >= 190000
    return slot->active_proc != INVALID_PROC_NUMBER;
#else
    return slot->active_pid != 0;
#endif
}

}  // namespace pgsw::compat
