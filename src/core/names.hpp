#include "core/cpp_only.hpp"
#pragma once
// Names that records refer to by a 16-bit id: block devices, replication slots, tablespaces and
// custom (extension) wait events. Entries are 32 bytes and cannot hold a name, and a name must
// mean the same thing in a record read days later, after restarts: the dictionary lives in
// shared memory, is append-only for the life of the shared memory, and is saved and restored
// with the history file (history_file.hpp), which renumbers the names the restored records
// use and rewrites those records' ids to match.
//
// Protocol: one writer (the sampler; the postmaster before any worker runs). A slot is written
// whole, then `count` is raised with a store-release; readers load `count` with acquire and read
// slots below it, which never change again. Id 0 means "no name". When the dictionary is full,
// new names get id 0 (shown as "(other)") and `refused` counts them.
//
// Custom wait events (PostgreSQL 17+ WaitEventExtensionNew) are stored in records as
// kCustomWaitEventClass | id instead of their raw wait_event_info: the raw id is only meaningful
// in the server that registered it, and after a restart it can name another extension's event.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/fixed_map.hpp"

namespace pgsw {

enum class NameKind : uint8_t { None = 0, Device = 1, Slot = 2, WaitEvent = 3, Tablespace = 4 };

constexpr uint32_t kNameCapacity = 1024;
constexpr size_t kNameMaxLength = 62;  // NAMEDATALEN - 2; longer names are cut
constexpr uint32_t kCustomWaitEventClass = 0xFE000000u;

struct NameSlot {
    uint8_t kind;  // NameKind
    uint8_t length;
    char text[kNameMaxLength];
};
static_assert(sizeof(NameSlot) == 64, "name slots are one cache line");

struct NameDictionary {
    uint32_t count;    // slots [1, count) are readable; slot 0 is "no name"
    uint32_t refused;  // names not added because the dictionary was full
    uint64_t reserved[7];
    NameSlot slots[kNameCapacity];
};

inline bool is_custom_wait_event(uint32_t stored_info) noexcept {
    return (stored_info & 0xFF000000u) == kCustomWaitEventClass;
}
inline uint16_t custom_wait_event_name(uint32_t stored_info) noexcept {
    return static_cast<uint16_t>(stored_info & 0xFFFFu);
}

// Slots [1, name_count) are readable (published with a store-release; this loads with acquire).
uint32_t name_count(const NameDictionary &names) noexcept;

// A reader's view: the name of an id, or empty when unknown (0, not yet published, another
// kind than expected).
std::string_view name_of(const NameDictionary &names, uint16_t id,
                         NameKind kind = NameKind::None) noexcept;

// The writer's view: finds or adds names, with a private index so that a lookup costs a hash
// probe, not a scan. Allocates its index at construction only.
class NameWriter {
  public:
    explicit NameWriter(NameDictionary &names);
    // The id of (kind, name), added if new; 0 when the dictionary is full.
    uint16_t intern(NameKind kind, std::string_view name) noexcept;
    // Re-index after the dictionary was filled from outside (history restored).
    void reindex() noexcept;

  private:
    struct KeyHash {
        size_t operator()(uint64_t k) const noexcept { return static_cast<size_t>(mix64(k)); }
    };
    NameDictionary &names_;
    FixedMap<uint64_t, uint16_t, KeyHash> index_;  // hash of (kind, name) -> first id
};

}  // namespace pgsw
