#include <cctype>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/wait_class.hpp"

namespace pgsw {
namespace {

constexpr WaitCategory kCpu = WaitCategory::Cpu;
constexpr WaitCategory kStorage = WaitCategory::Storage;
constexpr WaitCategory kLock = WaitCategory::Lock;
constexpr WaitCategory kOther = WaitCategory::Other;
constexpr WaitCategory kIdle = WaitCategory::Idle;

TEST(WaitClass, NoWaitIsCpu) {
    EXPECT_EQ(classify_wait("", ""), kCpu);
    EXPECT_EQ(classify_wait("", "anything"), kCpu);
    EXPECT_EQ(classify_wait_class("", "").kind, StorageKind::None);
}

TEST(WaitClass, DataFileWaitsAreStorage) {
    for (const char *event :
         {"DataFileRead", "DataFileWrite", "DataFileExtend", "DataFileFlush", "DataFileSync",
          "DataFilePrefetch", "DataFileImmediateSync", "DataFileTruncate"})
        EXPECT_EQ(classify_wait("IO", event), kStorage) << event;
    EXPECT_EQ(classify_wait_class("IO", "DataFileRead").kind, StorageKind::Read);
    EXPECT_EQ(classify_wait_class("IO", "DataFileExtend").kind, StorageKind::Write);
}

TEST(WaitClass, BothSpellingsOfRecasedNames) {
    // 16 spelling, then 17/18 spelling.
    const char *pairs[][2] = {
        {"WALSync", "WalSync"},
        {"WALWrite", "WalWrite"},
        {"WALInitSync", "WalInitSync"},
        {"WALInitWrite", "WalInitWrite"},
        {"WALRead", "WalRead"},
        {"WALCopyWrite", "WalCopyWrite"},
        {"BufFileRead", "BuffileRead"},
        {"BufFileWrite", "BuffileWrite"},
        {"SLRURead", "SlruRead"},
        {"SLRUFlushSync", "SlruFlushSync"},
        {"BaseBackupRead", "BasebackupRead"},
        {"LockFileAddToDataDirRead", "LockFileAddtodatadirRead"},
    };
    for (const auto &pair : pairs) {
        EXPECT_EQ(classify_wait("IO", pair[0]), kStorage) << pair[0];
        EXPECT_EQ(classify_wait("IO", pair[1]), kStorage) << pair[1];
        EXPECT_EQ(classify_wait_class("IO", pair[0]).kind, classify_wait_class("IO", pair[1]).kind);
    }
    EXPECT_EQ(classify_wait("IPC", "BufferIO"), kStorage);
    EXPECT_EQ(classify_wait("IPC", "BufferIo"), kStorage);
    EXPECT_EQ(classify_wait_class("IO", "WALSync").kind, StorageKind::Wal);
    EXPECT_EQ(classify_wait_class("IO", "BufFileWrite").kind, StorageKind::Temp);
}

TEST(WaitClass, SharedMemoryIoIsNotStorage) {
    EXPECT_EQ(classify_wait("IO", "DSMAllocate"), kOther);
    EXPECT_EQ(classify_wait("IO", "DsmAllocate"), kOther);
    EXPECT_EQ(classify_wait("IO", "DSMFillZeroWrite"), kOther);
    EXPECT_EQ(classify_wait("IO", "DsmFillZeroWrite"), kOther);
}

TEST(WaitClass, AsynchronousIoOf18) {
    EXPECT_EQ(classify_wait("IO", "AioIoCompletion"), kStorage);
    EXPECT_EQ(classify_wait("IO", "AioIoUringSubmit"), kStorage);
    EXPECT_EQ(classify_wait("IO", "AioIoUringExecution"), kStorage);
    EXPECT_EQ(classify_wait("LWLock", "AioUringCompletion"), kStorage);
    EXPECT_EQ(classify_wait("LWLock", "AioWorkerSubmissionQueue"), kLock);
}

TEST(WaitClass, UnlistedIoDefaultsToStorage) {
    EXPECT_EQ(classify_wait("IO", "ControlFileSync"), kStorage);
    EXPECT_EQ(classify_wait("IO", "CopyFileCopy"), kStorage);
    EXPECT_EQ(classify_wait("IO", "SomeFutureFileRead"), kStorage);
    EXPECT_EQ(classify_wait_class("IO", "ControlFileSync").kind, StorageKind::Other);
}

TEST(WaitClass, LwLocks) {
    EXPECT_EQ(classify_wait("LWLock", "WALWrite"), kStorage);  // group commit
    EXPECT_EQ(classify_wait_class("LWLock", "WALWrite").kind, StorageKind::Wal);
    EXPECT_EQ(classify_wait("LWLock", "XactBuffer"), kStorage);
    EXPECT_EQ(classify_wait("LWLock", "ReplicationSlotIO"), kStorage);
    for (const char *event : {"WALInsert", "BufferContent", "BufferMapping", "LockManager",
                              "ProcArray", "XactSLRU", "WALBufMapping", "extension"})
        EXPECT_EQ(classify_wait("LWLock", event), kLock) << event;
}

TEST(WaitClass, HeavyweightLocksAndPins) {
    for (const char *event : {"relation", "extend", "tuple", "transactionid", "virtualxid",
                              "advisory", "object", "page", "spectoken", "frozenid"})
        EXPECT_EQ(classify_wait("Lock", event), kLock) << event;
    EXPECT_EQ(classify_wait("BufferPin", "BufferPin"), kLock);
}

// 19 renames class 0x04 BufferPin -> Buffer (the pin wait becomes Buffer:BufferCleanup) and
// moves the buffer content locks there from LWLock:BufferContent: lock waits in every version.
TEST(WaitClass, BufferClassOf19) {
    for (const char *event :
         {"BufferCleanup", "BufferShared", "BufferShareExclusive", "BufferExclusive"}) {
        EXPECT_EQ(classify_wait("Buffer", event), kLock) << event;
        EXPECT_EQ(classify_wait_class("Buffer", event).kind, StorageKind::None) << event;
        EXPECT_EQ(wait_role("Buffer", event), WaitRole::None) << event;
    }
    EXPECT_EQ(classify_wait("LWLock", "BufferContent"), classify_wait("Buffer", "BufferShared"));
    EXPECT_EQ(classify_wait("Buffer", "SomeFutureBufferWait"), kLock);
}

// 19's COPY waits read or write the client's pipe, a file or a program: not relation storage.
TEST(WaitClass, CopyIoOf19IsNotStorage) {
    EXPECT_EQ(classify_wait("IO", "CopyFromRead"), kOther);
    EXPECT_EQ(classify_wait("IO", "CopyToWrite"), kOther);
    EXPECT_EQ(wait_role("IO", "CopyFromRead"), WaitRole::None);
    EXPECT_EQ(classify_wait("IO", "CopyFileCopy"), kStorage);  // 18's CREATE DATABASE copy
}

TEST(WaitClass, OtherNewWaitsOf19) {
    EXPECT_EQ(classify_wait("Timeout", "CommitDelay"), kOther);
    for (const char *event : {"WaitForWalFlush", "WaitForWalReplay", "WaitForWalWrite",
                              "ChecksumEnableStartCondition", "RepackWorkerExport"})
        EXPECT_EQ(classify_wait("IPC", event), kOther) << event;
    for (const char *event : {"WaitLSN", "LogicalDecodingControl", "DataChecksumsWorker",
                              "AioWorkerControl", "NotifyChannelHash"})
        EXPECT_EQ(classify_wait("LWLock", event), kLock) << event;
}

TEST(WaitClass, IdlenessIsIdle) {
    EXPECT_EQ(classify_wait("Client", "ClientRead"), kIdle);
    EXPECT_EQ(classify_wait("Client", "ClientWrite"), kIdle);
    EXPECT_EQ(classify_wait("Activity", "WalWriterMain"), kIdle);
    EXPECT_EQ(classify_wait("Activity", "IoWorkerMain"), kIdle);
    EXPECT_EQ(classify_wait("Timeout", "PgSleep"), kIdle);
    EXPECT_EQ(classify_wait("Timeout", "VacuumDelay"), kIdle);
    EXPECT_EQ(classify_wait("Timeout", "VacuumTruncate"), kIdle);
    EXPECT_EQ(classify_wait("Timeout", "CheckpointWriteDelay"), kIdle);
}

TEST(WaitClass, TimeoutExceptions) {
    EXPECT_EQ(classify_wait("Timeout", "SpinDelay"), kLock);
    EXPECT_EQ(classify_wait("Timeout", "RegisterSyncRequest"), kStorage);
}

TEST(WaitClass, OtherTypes) {
    EXPECT_EQ(classify_wait("IPC", "ExecuteGather"), kOther);
    EXPECT_EQ(classify_wait("IPC", "MessageQueueReceive"), kOther);
    EXPECT_EQ(classify_wait("Extension", "Extension"), kOther);
    EXPECT_EQ(classify_wait("Extension", "MyCustomWait"), kOther);
    EXPECT_EQ(classify_wait("InjectionPoint", "test-point"), kOther);
    EXPECT_EQ(classify_wait("???", "unknown wait event"), kOther);
}

// Version 3: a commit waiting for a synchronous standby is its own category.
TEST(WaitClass, SyncRepIsSyncReplication) {
    EXPECT_EQ(classify_wait("IPC", "SyncRep"), WaitCategory::SyncRep);
    EXPECT_STREQ(wait_category_name(WaitCategory::SyncRep), "sync_replication");
}

// Version 3: Extension:Extension is a background worker sleeping on its latch (pg_wait_sampling's
// collector, autoprewarm): idle, except for client backends and parallel workers, where it is a
// statement waiting inside an extension.
TEST(WaitClass, GenericExtensionWaitIsIdleForBackgroundProcesses) {
    const WaitRole role = wait_role("Extension", "Extension");
    EXPECT_EQ(role, WaitRole::ExtensionGeneric);
    EXPECT_EQ(category_for(BackendKind::BackgroundWorker, kOther, role), kIdle);
    EXPECT_EQ(category_for(BackendKind::Walsender, kOther, role), kIdle);
    EXPECT_EQ(category_for(BackendKind::ClientBackend, kOther, role), kOther);
    EXPECT_EQ(category_for(BackendKind::ParallelWorker, kOther, role), kOther);
    // A custom (named) extension wait keeps its category everywhere.
    EXPECT_EQ(wait_role("Extension", "MyCustomWait"), WaitRole::None);
    EXPECT_EQ(category_for(BackendKind::BackgroundWorker, kOther, WaitRole::None), kOther);
}

TEST(WaitRole, SymptomRoles) {
    EXPECT_EQ(wait_role("Timeout", "VacuumDelay"), WaitRole::VacuumDelay);
    EXPECT_EQ(wait_role("Timeout", "CheckpointWriteDelay"), WaitRole::CheckpointWriteDelay);
    EXPECT_EQ(wait_role("Activity", "CheckpointerMain"), WaitRole::None);
}

TEST(WaitClass, NamesMatchWholeStringsOnly) {
    EXPECT_EQ(classify_wait("IPC", "BufferIoX"), kOther);
    EXPECT_EQ(classify_wait("LWLock", "WALWriteX"), kLock);
    EXPECT_EQ(classify_wait("IOX", "DataFileRead"), kOther);
}

TEST(WaitClass, CategoryNames) {
    EXPECT_STREQ(wait_category_name(kCpu), "cpu");
    EXPECT_STREQ(wait_category_name(kStorage), "storage");
    EXPECT_STREQ(wait_category_name(kLock), "lock");
    EXPECT_STREQ(wait_category_name(kOther), "other");
    EXPECT_STREQ(wait_category_name(kIdle), "idle");
    EXPECT_STREQ(wait_category_name(static_cast<WaitCategory>(200)), "other");
    EXPECT_STREQ(storage_kind_name(StorageKind::Wal), "wal");
    EXPECT_STREQ(storage_kind_name(StorageKind::None), "none");
}

TEST(WaitClass, StoredValuesAreStable) {
    EXPECT_EQ(static_cast<int>(kCpu), 0);
    EXPECT_EQ(static_cast<int>(kStorage), 1);
    EXPECT_EQ(static_cast<int>(kLock), 2);
    EXPECT_EQ(static_cast<int>(kOther), 3);
    EXPECT_EQ(static_cast<int>(kIdle), 4);
}

TEST(WaitClass, RuleTableIsConsistent) {
    size_t n = 0;
    const WaitRule *rules = wait_rules(&n);
    ASSERT_GT(n, 40u);
    std::set<std::string> seen;
    for (size_t i = 0; i < n; ++i) {
        const WaitRule &r = rules[i];
        std::string key = std::string(r.type) + ":" + r.event;
        for (char &c : key)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        EXPECT_TRUE(seen.insert(key).second) << "duplicate rule " << key;
        EXPECT_TRUE(r.since_pg_version == 16 || r.since_pg_version == 18 ||
                    r.since_pg_version == 19)
            << key;
        EXPECT_EQ(r.kind != StorageKind::None, r.category == kStorage) << key;
        EXPECT_EQ(classify_wait(r.type, r.event), r.category) << key;
    }
}

TEST(WaitRole, FlushLockAndFlushIo) {
    EXPECT_EQ(wait_role("LWLock", "WALWrite"), WaitRole::FlushLock);
    EXPECT_EQ(wait_role("IO", "WalSync"), WaitRole::FlushIo);
    EXPECT_EQ(wait_role("IO", "WALSync"), WaitRole::FlushIo);  // 16's spelling
    EXPECT_EQ(wait_role("IO", "WalWrite"), WaitRole::FlushIo);
    EXPECT_EQ(wait_role("IO", "WalInitSync"), WaitRole::FlushIo);
    EXPECT_EQ(wait_role("IO", "DataFileRead"), WaitRole::None);
    EXPECT_EQ(wait_role("IO", "WalRead"), WaitRole::None);  // kind other: reading, not flushing
    EXPECT_EQ(wait_role("LWLock", "WALInsert"), WaitRole::None);
    EXPECT_EQ(wait_role("", ""), WaitRole::None);
}

}  // namespace
}  // namespace pgsw
