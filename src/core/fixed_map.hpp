#include "core/cpp_only.hpp"
#pragma once
// An open-addressing hash map with a capacity fixed at construction: the sampler's tick must not
// allocate, so every table it uses is sized once at worker start. Clearing costs O(entries used).
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <vector>

namespace pgsw {

template <typename Key, typename Value, typename Hash>
class FixedMap {
  public:
    // Holds up to `max_entries`; the table is at least twice as large to keep probes short.
    // `memory`: where the table lives (the sampler keeps its per-tick tables together).
    explicit FixedMap(size_t max_entries,
                      std::pmr::memory_resource *memory = std::pmr::get_default_resource())
        : max_entries_(max_entries), slots_(memory), used_(memory) {
        size_t slots = 16;
        while (slots < max_entries * 2)
            slots <<= 1;
        slots_.resize(slots);
        used_.reserve(max_entries);
    }

    // The value for `key`, inserted value-initialised if new; nullptr when full.
    PGSW_TICK_PATH Value *find_or_insert(const Key &key) noexcept {
        const size_t mask = slots_.size() - 1;
        for (size_t i = Hash{}(key)&mask;; i = (i + 1) & mask) {
            Slot &slot = slots_[i];
            if (slot.occupied && slot.key == key)
                return &slot.value;
            if (slot.occupied)
                continue;
            if (used_.size() >= max_entries_)
                return nullptr;
            slot.occupied = true;
            slot.key = key;
            slot.value = Value{};
            used_.push_back(i);
            return &slot.value;
        }
    }

    PGSW_TICK_PATH const Value *find(const Key &key) const noexcept {
        const size_t mask = slots_.size() - 1;
        for (size_t i = Hash{}(key)&mask;; i = (i + 1) & mask) {
            const Slot &slot = slots_[i];
            if (!slot.occupied)
                return nullptr;
            if (slot.key == key)
                return &slot.value;
        }
    }

    PGSW_TICK_PATH void clear() noexcept {
        for (size_t i : used_)
            slots_[i].occupied = false;
        used_.clear();
    }

    size_t size() const noexcept { return used_.size(); }

    // Visit entries in insertion order.
    template <typename Fn>
    void for_each(Fn &&fn) const {
        for (size_t i : used_)
            fn(slots_[i].key, slots_[i].value);
    }

  private:
    struct Slot {
        Key key{};
        Value value{};
        bool occupied = false;
    };
    size_t max_entries_;
    std::pmr::vector<Slot> slots_;
    std::pmr::vector<size_t> used_;
};

// The last N distinct keys remembered, kept together in a line or two and searched before a
// larger table: a sampler tick meets a handful of distinct wait events, and scanning a few
// adjacent lines costs less than one cold line of a large hash table per key. Replaced
// round-robin once full.
template <typename Key, typename Value, size_t N>
class RecentValues {
  public:
    PGSW_TICK_PATH const Value *find(const Key &key) const noexcept {
        size_t found = N;
        for (size_t i = 0; i < size_; ++i)
            found = keys_[i] == key ? i : found;
        return found < N ? &values_[found] : nullptr;
    }

    // Call only for a key find() did not return.
    PGSW_TICK_PATH void remember(const Key &key, const Value &value) noexcept {
        keys_[next_] = key;
        values_[next_] = value;
        next_ = (next_ + 1) % N;
        if (size_ < N)
            ++size_;
    }

    size_t size() const noexcept { return size_; }

  private:
    Key keys_[N]{};
    Value values_[N]{};
    size_t size_ = 0;
    size_t next_ = 0;
};

inline uint64_t mix64(uint64_t x) noexcept {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

}  // namespace pgsw
