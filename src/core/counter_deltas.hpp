#include "core/cpp_only.hpp"
#pragma once
// Deltas of keyed cumulative counters between two readings (a database's pg_stat_database
// counters, a replication slot's spill statistics, the checkpointer's), with the rules the I/O
// counters follow:
//  * a key seen for the first time is a baseline: no delta (its totals are history, not this
//    tick's work);
//  * a counter that went down means the key was reset (pg_stat_reset, a slot re-created under
//    the same name, crash recovery): re-baselined, no delta, counted;
//  * a key not seen in a reading is forgotten (a dropped database, a removed slot), so it is a
//    baseline again if it comes back.
// All memory is allocated at construction; a reading allocates nothing. Keys beyond the
// capacity are ignored and counted.
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/fixed_map.hpp"

namespace pgsw {

template <size_t N>
class CounterDeltas {
  public:
    using Values = std::array<uint64_t, N>;
    enum class Result { Baseline, Delta, Reset, Full };

    explicit CounterDeltas(size_t max_keys) : a_(max_keys), b_(max_keys) {}

    void begin() noexcept { next().clear(); }
    Result observe(uint64_t key, const Values &now, Values &delta) noexcept {
        Values *kept = next().find_or_insert(key);
        if (kept == nullptr) {
            ++keys_refused_;
            return Result::Full;
        }
        *kept = now;
        const Values *before = current().find(key);
        if (before == nullptr)
            return Result::Baseline;
        for (size_t i = 0; i < N; ++i)
            if (now[i] < (*before)[i]) {
                ++resets_;
                return Result::Reset;
            }
        for (size_t i = 0; i < N; ++i)
            delta[i] = now[i] - (*before)[i];
        return Result::Delta;
    }
    // The reading is complete: keys it did not observe are forgotten.
    void end() noexcept { use_a_ = !use_a_; }
    void forget() noexcept {
        a_.clear();
        b_.clear();
    }

    size_t keys() const noexcept { return current().size(); }
    // The keys of the last complete reading.
    template <typename Fn>
    void for_each_key(Fn &&fn) const {
        current().for_each([&fn](uint64_t key, const Values &) { fn(key); });
    }
    uint64_t resets() const noexcept { return resets_; }
    uint64_t keys_refused() const noexcept { return keys_refused_; }

  private:
    struct Hash {
        size_t operator()(uint64_t k) const noexcept { return static_cast<size_t>(mix64(k)); }
    };
    using Map = FixedMap<uint64_t, Values, Hash>;
    Map &current() noexcept { return use_a_ ? a_ : b_; }
    const Map &current() const noexcept { return use_a_ ? a_ : b_; }
    Map &next() noexcept { return use_a_ ? b_ : a_; }
    Map a_, b_;
    bool use_a_ = true;
    uint64_t resets_ = 0;
    uint64_t keys_refused_ = 0;
};

}  // namespace pgsw
