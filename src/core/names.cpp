#include "core/names.hpp"

#include <algorithm>
#include <cstring>

namespace pgsw {
namespace {

uint32_t load_count(const NameDictionary &names) noexcept {
    return __atomic_load_n(&names.count, __ATOMIC_ACQUIRE);
}

uint64_t name_key(NameKind kind, std::string_view name) noexcept {
    uint64_t h = 1469598103934665603ULL ^ static_cast<uint8_t>(kind);  // FNV-1a
    for (const char c : name)
        h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
    return h;
}

bool slot_is(const NameSlot &slot, NameKind kind, std::string_view name) noexcept {
    return slot.kind == static_cast<uint8_t>(kind) &&
           name == std::string_view(slot.text, slot.length);
}

}  // namespace

uint32_t name_count(const NameDictionary &names) noexcept {
    return std::min(load_count(names), kNameCapacity);
}

std::string_view name_of(const NameDictionary &names, uint16_t id, NameKind kind) noexcept {
    if (id == 0 || id >= std::min(load_count(names), kNameCapacity))
        return {};
    const NameSlot &slot = names.slots[id];
    if (kind != NameKind::None && slot.kind != static_cast<uint8_t>(kind))
        return {};
    return {slot.text, std::min<size_t>(slot.length, kNameMaxLength)};
}

NameWriter::NameWriter(NameDictionary &names) : names_(names), index_(kNameCapacity) {
    reindex();
}

void NameWriter::reindex() noexcept {
    index_.clear();
    if (names_.count == 0)
        names_.count = 1;  // slot 0 is "no name"
    names_.count = std::min(names_.count, kNameCapacity);
    for (uint32_t id = 1; id < names_.count; ++id) {
        NameSlot &slot = names_.slots[id];
        slot.length = static_cast<uint8_t>(std::min<size_t>(slot.length, kNameMaxLength));
        uint16_t *first = index_.find_or_insert(
            name_key(static_cast<NameKind>(slot.kind), std::string_view(slot.text, slot.length)));
        if (first != nullptr && *first == 0)
            *first = static_cast<uint16_t>(id);
    }
}

uint16_t NameWriter::intern(NameKind kind, std::string_view name) noexcept {
    name = name.substr(0, kNameMaxLength);
    const uint64_t key = name_key(kind, name);
    uint16_t *first = index_.find_or_insert(key);
    if (first != nullptr && *first != 0) {
        // A hash collision between two names is possible: confirm, else scan (rare).
        if (slot_is(names_.slots[*first], kind, name))
            return *first;
        for (uint32_t id = 1; id < names_.count; ++id)
            if (slot_is(names_.slots[id], kind, name))
                return static_cast<uint16_t>(id);
    }
    const uint32_t id = names_.count;
    if (id >= kNameCapacity) {
        names_.refused++;
        return 0;
    }
    NameSlot &slot = names_.slots[id];
    slot.kind = static_cast<uint8_t>(kind);
    slot.length = static_cast<uint8_t>(name.size());
    std::memset(slot.text, 0, sizeof slot.text);
    std::memcpy(slot.text, name.data(), name.size());
    __atomic_store_n(&names_.count, id + 1, __ATOMIC_RELEASE);
    if (first != nullptr && *first == 0)
        *first = static_cast<uint16_t>(id);
    return static_cast<uint16_t>(id);
}

}  // namespace pgsw
