// The history file API as the fuzz harness and the seed generator use it: format 3 and later
// take a HistoryOwner (the server's system identifier and the clock), format 4 and later the
// names dictionary too. The calls sit in templates behind `if constexpr`, so only the branch
// of the header at hand is compiled.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/history_file.hpp"

namespace pgsw::fuzz {

// Owner of the seeds' files (format 3+); any value, as long as loading uses the same one.
constexpr uint64_t kSeedSystemIdentifier = 7000000000000000001ULL;

// RingT is Ring: a template parameter so that both branches' calls are dependent (looked up
// only when instantiated).
template <typename Names, typename RingT = Ring>
std::string save(const std::string &path, const RingT &ticks, const RingT &rollups,
                 const Names &names) {
    const HistoryOwner owner{kSeedSystemIdentifier, int64_t(1) << 50};
    if constexpr (kHistoryFormatVersion >= 4)
        return save_history(path, ticks, rollups, names, owner);
    else
        return save_history(path, ticks, rollups, owner);
}

// Loads `path` as the server whose identifier the file names (the harness fuzzes what lies
// behind that check), or another one when `foreign`, with a clock far ahead.
template <typename Names, typename RingT = Ring>
HistoryLoadResult load(const std::string &path, const std::vector<uint8_t> &file, bool foreign,
                       RingT &ticks, RingT &rollups, Names &names) {
    uint64_t system_identifier = 0;
    constexpr size_t kAt = 8 + 5 * sizeof(uint32_t);  // magic, version..ring_count
    if (file.size() >= kAt + sizeof system_identifier)
        std::memcpy(&system_identifier, file.data() + kAt, sizeof system_identifier);
    const HistoryOwner owner{foreign ? ~system_identifier : system_identifier, int64_t(1) << 60};
    if constexpr (kHistoryFormatVersion >= 4)
        return load_history(path, ticks, rollups, names, owner);
    else
        return load_history(path, ticks, rollups, owner);
}

}  // namespace pgsw::fuzz
