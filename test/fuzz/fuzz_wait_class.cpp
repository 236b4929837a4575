// libFuzzer harness: wait-event classification (core/wait_class.*) of arbitrary type and event
// strings (pg_stat_activity's names come from the server and from extensions: any bytes).
// Beyond "no crash", it checks the documented properties: names compare ASCII
// case-insensitively, every result is a defined enum value with a name, a storage kind only on
// storage waits, Extension:Extension idle exactly outside client backends and parallel workers.
//
// Input: type bytes, a NUL, event bytes (no NUL: the whole input is the type).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/wait_class.hpp"

namespace {

using namespace pgsw;

void check(bool ok) {
    if (!ok)
        std::abort();
}

std::string flip_case(std::string_view s) {
    std::string out(s);
    for (char &c : out)
        if (c >= 'a' && c <= 'z')
            c = char(c - 'a' + 'A');
        else if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return out;
}

bool same(WaitClass a, WaitClass b) {
    return a.category == b.category && a.kind == b.kind;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = reinterpret_cast<const char *>(data);
    const void *nul = std::memchr(text, '\0', size);
    const size_t type_length = nul ? size_t(static_cast<const char *>(nul) - text) : size;
    const std::string_view type(text, type_length);
    const std::string_view event =
        nul ? std::string_view(text + type_length + 1, size - type_length - 1) : std::string_view();

    const WaitClass wc = classify_wait_class(type, event);
    check(uint8_t(wc.category) <= uint8_t(WaitCategory::SyncRep));
    check(uint8_t(wc.kind) <= uint8_t(StorageKind::Other));
    check((wc.kind != StorageKind::None) == (wc.category == WaitCategory::Storage));
    check(type.empty() == (wc.category == WaitCategory::Cpu));
    check(std::strlen(wait_category_name(wc.category)) > 0);
    check(std::strlen(storage_kind_name(wc.kind)) > 0);
    check(classify_wait(type, event) == wc.category);

    const std::string type2 = flip_case(type), event2 = flip_case(event);
    check(same(classify_wait_class(type2, event2), wc));
    const WaitRole role = wait_role(type, event);
    check(wait_role(type2, event2) == role);
    check(uint8_t(role) <= uint8_t(WaitRole::ExtensionGeneric));
    const bool io_type = type.size() == 2 && (type[0] | 0x20) == 'i' && (type[1] | 0x20) == 'o';
    if (role != WaitRole::FlushLock && role != WaitRole::VacuumDelay &&
        role != WaitRole::CheckpointWriteDelay && role != WaitRole::ExtensionGeneric)
        check((role == WaitRole::FlushIo) ==
              (io_type && wc.category == WaitCategory::Storage && wc.kind == StorageKind::Wal));

    for (int b = 0; b < int(BackendKind::Count); ++b) {
        const auto backend = static_cast<BackendKind>(b);
        const WaitCategory counted = category_for(backend, wc.category, role);
        const bool foreground =
            backend == BackendKind::ClientBackend || backend == BackendKind::ParallelWorker;
        if (role == WaitRole::ExtensionGeneric && !foreground)
            check(counted == WaitCategory::Idle);
        else
            check(counted == wc.category);
    }
    return 0;
}
