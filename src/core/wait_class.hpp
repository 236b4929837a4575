#include "core/cpp_only.hpp"
#pragma once
// Classification of wait events by name, exactly as pg_stat_activity shows wait_event_type and
// wait_event. Versioned: kWaitClassificationVersion changes whenever a rule below changes, so
// stored results can say which rules produced them.
//
// Names compare ASCII case-insensitively. PostgreSQL 17 began generating event names from
// wait_event_names.txt by camel-casing the C names, which re-cased many of them without other
// change (16 -> 17+: IO:WALSync -> WalSync, BufFileRead -> BuffileRead, SLRURead -> SlruRead,
// DSMAllocate -> DsmAllocate, BaseBackupRead -> BasebackupRead; IPC:BufferIO -> BufferIo). One
// rule then covers both spellings. LWLock and Lock names were not re-cased.
//
// How a wait is classified: an explicit rule for (type, event) wins; otherwise the type's default.
//
// Type defaults
//   (no wait: type "")   cpu      an active backend with no wait is on CPU (or runnable)
//   IO                   storage  file I/O of every kind, unless listed below
//   LWLock               lock     unless listed below
//   Lock, BufferPin      lock     heavyweight locks and buffer pins (16-18)
//   Buffer               lock     19's name for class 0x04 (BufferPin renamed): buffer pins
//                                 (Buffer:BufferCleanup) and the buffer content locks that
//                                 were LWLock:BufferContent before 19 (Buffer:BufferShared,
//                                 BufferShareExclusive, BufferExclusive) -- lock waits, as
//                                 LWLock:BufferContent is
//   Activity, Client     idle     waiting for work or for the client: no load on the server
//   Timeout              idle     sleeps and throttling, unless listed below
//   IPC                  other    unless listed below
//   Extension, InjectionPoint, unknown types   other
//
// Explicit rules (16 = present in 16, 17 and 18; "16 spelling" only where 16 differs by case)
//   type:event (17/18 spelling)     16 spelling          since  category  kind
//   IO:DataFileRead                                      16     storage   read
//   IO:DataFilePrefetch                                  16     storage   read
//   IO:DataFileWrite                                     16     storage   write
//   IO:DataFileExtend                                    16     storage   write
//   IO:DataFileFlush                                     16     storage   write
//   IO:DataFileSync                                      16     storage   write
//   IO:DataFileImmediateSync                             16     storage   write
//   IO:DataFileTruncate                                  16     storage   write
//   IO:WalSync                      WALSync              16     storage   wal
//   IO:WalWrite                     WALWrite             16     storage   wal
//   IO:WalInitSync, WalInitWrite    WALInit...           16     storage   wal
//   IO:WalCopyRead/Sync/Write       WALCopy...           16     storage   wal
//   IO:WalBootstrapSync/Write       WALBootstrap...      16     storage   wal
//   IO:WalRead                      WALRead              16     storage   other
//   IO:BuffileRead/Write/Truncate   BufFile...           16     storage   temp
//   IO:SlruRead/Write/Sync/FlushSync SLRU...             16     storage   other
//   IO:RelationMapRead/Write/Replace                     16     storage   other
//   IO:AioIoCompletion                                   18     storage   read
//   IO:AioIoUringSubmit                                  18     storage   read
//   IO:AioIoUringExecution                               18     storage   read
//   IO:DsmAllocate                  DSMAllocate          16     other     -   (shared memory)
//   IO:DsmFillZeroWrite             DSMFillZeroWrite     16     other     -   (shared memory)
//   IO:CopyFromRead, CopyToWrite                         19     other     -   (COPY's pipe, file
//                                   or program I/O, not relation storage)
//   IPC:BufferIo                    BufferIO             16     storage   read  (another
//                                   backend's I/O on the same buffer; LWLock:BufferIO ended in 13)
//   LWLock:WALWrite                                      16     storage   wal   (group commit:
//                                   queued behind another backend's WAL write and flush; see
//                                   "WAL flush lock" below: per tick it may count as lock)
//   LWLock:AioUringCompletion                            18     storage   read
//   LWLock:XactBuffer, CommitTsBuffer, SubtransBuffer, MultiXactOffsetBuffer,
//          MultiXactMemberBuffer, NotifyBuffer, SerialBuffer
//                                                        16     storage   other (I/O on an SLRU
//                                   buffer by another backend)
//   LWLock:ReplicationSlotIO                             16     storage   other
//   Timeout:RegisterSyncRequest                          16     storage   write (fsync request
//                                   queue full: the checkpointer is behind on fsyncs)
//   Timeout:SpinDelay                                    16     lock      -   (contended spinlock)
//   Timeout:PgSleep                                      16     idle      -   (asked to sleep)
//   Timeout:VacuumDelay, VacuumTruncate                  16     idle      -   (throttling)
//   IPC:SyncRep                                          16     sync_replication (version 3:
//                                   a commit waiting for a synchronous standby's confirmation)
//   Timeout:CommitDelay                                  19     other     -   (commit_delay's
//                                   sleep inside a commit: not idle; before 19 it shows no wait)
//
// Per process (version 3, category_for()): Extension:Extension -- the generic extension wait,
// which is what a background worker sleeping on its latch shows (pg_wait_sampling's collector,
// pg_prewarm's autoprewarm, pg_cron's launcher, ...) -- is idle for every process but client
// backends and parallel workers, for which it stays "other" (a statement inside an extension
// waiting for something). Beside pg_wait_sampling 1.1.8 on PostgreSQL 17 (10 ms, pgbench
// TPC-B, 16 clients), 13.9 % of version 2's "active" samples were such sleeping workers.
//
// WAL flush lock (version 2). LWLock:WALWrite is held by the process writing and flushing WAL
// for everyone queued behind it. Its waiters wait for storage only while the holder is in WAL
// I/O; while it is on CPU (copying into the page cache, a RAM-backed or battery-cached WAL whose
// fsync takes microseconds) they are in lock contention. A tick cannot see the holder, but it
// sees whether any process is in a WAL I/O wait (WaitRole::FlushIo: the IO events of kind wal) at
// that instant: the tick counts its WALWrite samples as storage if one is, else as lock
// (TickBuilder). Over many ticks the storage share of WALWrite is the share of the flush's
// critical section spent in I/O.
//
// Other IO events of 16-18 (ControlFile*, CopyFile*, LockFile*, LogicalRewrite*, ReorderBuffer*,
// ReplicationSlot*, Snapbuild*, TimelineHistory*, TwophaseFile*, VersionFile*, WalSummary*,
// WalsenderTimelineHistoryRead, WalSyncMethodAssign, Basebackup*, 18's CopyFileCopy) are storage
// by the IO default, kind other.
//
// Version 4 adds PostgreSQL 19's names (the Buffer class, IO:CopyFromRead/CopyToWrite,
// Timeout:CommitDelay); nothing a 16-18 server reports changes category.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/codes.hpp"

namespace pgsw {

constexpr int kWaitClassificationVersion = 6;

// Stored in the rings and the history file: values are fixed, append new ones only.
enum class WaitCategory : uint8_t {
    Cpu = 0,
    Storage = 1,
    Lock = 2,
    Other = 3,
    Idle = 4,
    SyncRep = 5,  // version 3
};

// Which storage path a storage wait is on; None for waits that are not storage.
enum class StorageKind : uint8_t { None = 0, Read = 1, Write = 2, Wal = 3, Temp = 4, Other = 5 };

struct WaitClass {
    WaitCategory category;
    StorageKind kind;
};

// What else a wait tells the tick besides its category: its part in WAL flushing (the WAL
// flush lock rule above), and the waits that mark a process's activity for the symptoms
// (autovacuum throttled by its cost delay, the checkpointer inside a spread checkpoint).
enum class WaitRole : uint8_t {
    None = 0,
    FlushIo = 1,               // an IO wait of kind wal
    FlushLock = 2,             // LWLock:WALWrite
    VacuumDelay = 3,           // Timeout:VacuumDelay
    CheckpointWriteDelay = 4,  // Timeout:CheckpointWriteDelay (only inside a checkpoint)
    ExtensionGeneric = 5,      // Extension:Extension (see "Per process" above)
};

struct WaitRule {
    const char *type;   // wait_event_type
    const char *event;  // wait_event, 17+ spelling
    WaitCategory category;
    StorageKind kind;
    uint8_t since_pg_version;  // 16 means 16 or older
};

// `type` "" means no wait (CPU); `event` is then ignored.
WaitClass classify_wait_class(std::string_view type, std::string_view event) noexcept;
inline WaitCategory classify_wait(std::string_view type, std::string_view event) noexcept {
    return classify_wait_class(type, event).category;
}

WaitRole wait_role(std::string_view type, std::string_view event) noexcept;

// The category a process's sample counts in: the wait's own, except the per-process rule
// above (Extension:Extension is idle outside client backends and parallel workers).
PGSW_TICK_PATH WaitCategory category_for(BackendKind backend, WaitCategory category,
                                         WaitRole role) noexcept;

// "cpu","storage","lock","other","idle","sync_replication"
const char *wait_category_name(WaitCategory category) noexcept;
const char *storage_kind_name(StorageKind kind) noexcept;  // "none","read",...,"other"

// The explicit rules above, for tests and for a SQL view of the classification.
const WaitRule *wait_rules(size_t *count) noexcept;

}  // namespace pgsw
