#include "core/wait_class.hpp"

#include <iterator>

namespace pgsw {
namespace {

constexpr WaitCategory kStorage = WaitCategory::Storage;
constexpr WaitCategory kLock = WaitCategory::Lock;
constexpr WaitCategory kOther = WaitCategory::Other;
constexpr WaitCategory kIdle = WaitCategory::Idle;

// The explicit rules; wait_class.hpp documents each. Keep it in the header's order.
constexpr WaitRule kRules[] = {
    {"IO", "DataFileRead", kStorage, StorageKind::Read, 16},
    {"IO", "DataFilePrefetch", kStorage, StorageKind::Read, 16},
    {"IO", "DataFileWrite", kStorage, StorageKind::Write, 16},
    {"IO", "DataFileExtend", kStorage, StorageKind::Write, 16},
    {"IO", "DataFileFlush", kStorage, StorageKind::Write, 16},
    {"IO", "DataFileSync", kStorage, StorageKind::Write, 16},
    {"IO", "DataFileImmediateSync", kStorage, StorageKind::Write, 16},
    {"IO", "DataFileTruncate", kStorage, StorageKind::Write, 16},
    {"IO", "WalSync", kStorage, StorageKind::Wal, 16},
    {"IO", "WalWrite", kStorage, StorageKind::Wal, 16},
    {"IO", "WalInitSync", kStorage, StorageKind::Wal, 16},
    {"IO", "WalInitWrite", kStorage, StorageKind::Wal, 16},
    {"IO", "WalCopyRead", kStorage, StorageKind::Wal, 16},
    {"IO", "WalCopySync", kStorage, StorageKind::Wal, 16},
    {"IO", "WalCopyWrite", kStorage, StorageKind::Wal, 16},
    {"IO", "WalBootstrapSync", kStorage, StorageKind::Wal, 16},
    {"IO", "WalBootstrapWrite", kStorage, StorageKind::Wal, 16},
    {"IO", "WalRead", kStorage, StorageKind::Other, 16},
    {"IO", "BuffileRead", kStorage, StorageKind::Temp, 16},
    {"IO", "BuffileWrite", kStorage, StorageKind::Temp, 16},
    {"IO", "BuffileTruncate", kStorage, StorageKind::Temp, 16},
    {"IO", "SlruRead", kStorage, StorageKind::Other, 16},
    {"IO", "SlruWrite", kStorage, StorageKind::Other, 16},
    {"IO", "SlruSync", kStorage, StorageKind::Other, 16},
    {"IO", "SlruFlushSync", kStorage, StorageKind::Other, 16},
    {"IO", "RelationMapRead", kStorage, StorageKind::Other, 16},
    {"IO", "RelationMapWrite", kStorage, StorageKind::Other, 16},
    {"IO", "RelationMapReplace", kStorage, StorageKind::Other, 16},
    {"IO", "AioIoCompletion", kStorage, StorageKind::Read, 18},
    {"IO", "AioIoUringSubmit", kStorage, StorageKind::Read, 18},
    {"IO", "AioIoUringExecution", kStorage, StorageKind::Read, 18},
    {"IO", "DsmAllocate", kOther, StorageKind::None, 16},
    {"IO", "DsmFillZeroWrite", kOther, StorageKind::None, 16},
    {"IO", "CopyFromRead", kOther, StorageKind::None, 19},
    {"IO", "CopyToWrite", kOther, StorageKind::None, 19},
    {"IPC", "BufferIo", kStorage, StorageKind::Read, 16},
    {"LWLock", "WALWrite", kStorage, StorageKind::Wal, 16},
    {"LWLock", "AioUringCompletion", kStorage, StorageKind::Read, 18},
    {"LWLock", "XactBuffer", kStorage, StorageKind::Other, 16},
    {"LWLock", "CommitTsBuffer", kStorage, StorageKind::Other, 16},
    {"LWLock", "SubtransBuffer", kStorage, StorageKind::Other, 16},
    {"LWLock", "MultiXactOffsetBuffer", kStorage, StorageKind::Other, 16},
    {"LWLock", "MultiXactMemberBuffer", kStorage, StorageKind::Other, 16},
    {"LWLock", "NotifyBuffer", kStorage, StorageKind::Other, 16},
    {"LWLock", "SerialBuffer", kStorage, StorageKind::Other, 16},
    {"LWLock", "ReplicationSlotIO", kStorage, StorageKind::Other, 16},
    {"Timeout", "RegisterSyncRequest", kStorage, StorageKind::Write, 16},
    {"Timeout", "SpinDelay", kLock, StorageKind::None, 16},
    {"Timeout", "PgSleep", kIdle, StorageKind::None, 16},
    {"Timeout", "VacuumDelay", kIdle, StorageKind::None, 16},
    {"Timeout", "VacuumTruncate", kIdle, StorageKind::None, 16},
    {"IPC", "SyncRep", WaitCategory::SyncRep, StorageKind::None, 16},
    {"Timeout", "CommitDelay", kOther, StorageKind::None, 19},
};

struct TypeDefault {
    const char *type;
    WaitClass wait_class;
};

// clang-format off
constexpr TypeDefault kTypeDefaults[] = {
    {"IO",             {kStorage, StorageKind::Other}},
    {"LWLock",         {kLock, StorageKind::None}},
    {"Lock",           {kLock, StorageKind::None}},
    {"BufferPin",      {kLock, StorageKind::None}},
    {"Buffer",         {kLock, StorageKind::None}},
    {"Activity",       {kIdle, StorageKind::None}},
    {"Client",         {kIdle, StorageKind::None}},
    {"Timeout",        {kIdle, StorageKind::None}},
    {"IPC",            {kOther, StorageKind::None}},
    {"Extension",      {kOther, StorageKind::None}},
    {"InjectionPoint", {kOther, StorageKind::None}},
};
// clang-format on

constexpr WaitClass kUnknownType = {kOther, StorageKind::None};

char ascii_lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

// 17 re-cased many names (WALSync -> WalSync): compare without case.
bool same_name(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    return true;
}

const WaitRule *find_rule(std::string_view type, std::string_view event) noexcept {
    for (const WaitRule &rule : kRules)
        if (same_name(type, rule.type) && same_name(event, rule.event))
            return &rule;
    return nullptr;
}

WaitClass type_default(std::string_view type) noexcept {
    for (const TypeDefault &d : kTypeDefaults)
        if (same_name(type, d.type))
            return d.wait_class;
    return kUnknownType;
}

}  // namespace

WaitClass classify_wait_class(std::string_view type, std::string_view event) noexcept {
    if (type.empty())
        return {WaitCategory::Cpu, StorageKind::None};
    if (const WaitRule *rule = find_rule(type, event))
        return {rule->category, rule->kind};
    return type_default(type);
}

WaitRole wait_role(std::string_view type, std::string_view event) noexcept {
    if (same_name(type, "LWLock") && same_name(event, "WALWrite"))
        return WaitRole::FlushLock;
    if (same_name(type, "Timeout") && same_name(event, "VacuumDelay"))
        return WaitRole::VacuumDelay;
    if (same_name(type, "Timeout") && same_name(event, "CheckpointWriteDelay"))
        return WaitRole::CheckpointWriteDelay;
    if (same_name(type, "Extension") && same_name(event, "Extension"))
        return WaitRole::ExtensionGeneric;
    const WaitClass wc = classify_wait_class(type, event);
    if (same_name(type, "IO") && wc.category == WaitCategory::Storage &&
        wc.kind == StorageKind::Wal)
        return WaitRole::FlushIo;
    return WaitRole::None;
}

WaitCategory category_for(BackendKind backend, WaitCategory category, WaitRole role) noexcept {
    const bool foreground =
        backend == BackendKind::ClientBackend || backend == BackendKind::ParallelWorker;
    if (role == WaitRole::ExtensionGeneric && !foreground)
        return WaitCategory::Idle;
    return category;
}

const char *wait_category_name(WaitCategory category) noexcept {
    switch (category) {
        case WaitCategory::Cpu:
            return "cpu";
        case WaitCategory::Storage:
            return "storage";
        case WaitCategory::Lock:
            return "lock";
        case WaitCategory::Other:
            return "other";
        case WaitCategory::Idle:
            return "idle";
        case WaitCategory::SyncRep:
            return "sync_replication";
    }
    return "other";  // a value read from a corrupt or newer record
}

const char *storage_kind_name(StorageKind kind) noexcept {
    switch (kind) {
        case StorageKind::None:
            return "none";
        case StorageKind::Read:
            return "read";
        case StorageKind::Write:
            return "write";
        case StorageKind::Wal:
            return "wal";
        case StorageKind::Temp:
            return "temp";
        case StorageKind::Other:
            return "other";
    }
    return "other";
}

const WaitRule *wait_rules(size_t *count) noexcept {
    if (count != nullptr)
        *count = std::size(kRules);
    return kRules;
}

}  // namespace pgsw
