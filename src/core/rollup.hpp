#include "core/cpp_only.hpp"
#pragma once
// Sums sampler ticks into one roll-up record per wall-clock minute, for windows longer than the
// per-tick ring keeps. Groups and I/O cells are summed; the two headline latency series keep a
// log-scale histogram of the per-tick mean latencies (weighted by Δcount), so percentiles over
// days describe the same per-tick variation as over the last hour, within one bin (≤ 4.5 %).
// All memory is allocated in the constructor.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/fixed_map.hpp"
#include "core/records.hpp"

namespace pgsw {

constexpr int64_t kRollupBucketUs = 60 * 1000 * 1000;

// Floor division, total over int64 (a history file is read from disk: its times can be
// anything, INT64_MIN included, whose negation is undefined).
inline int64_t rollup_bucket_of(int64_t time_us) noexcept {
    const int64_t quotient = time_us / kRollupBucketUs;
    return time_us % kRollupBucketUs < 0 ? quotient - 1 : quotient;
}

class RollupBuilder {
  public:
    // Capacities for distinct wait groups and query groups per minute (I/O cells and
    // histogram bins have fixed bounds); groups beyond them are cut and the record flagged.
    RollupBuilder(size_t max_wait_groups, size_t max_query_groups);

    bool empty() const noexcept { return record_.ticks == 0; }
    int64_t bucket() const noexcept { return bucket_; }
    // True when `tick` falls in another minute than the ticks already summed.
    bool starts_new_bucket(const IntervalRecord &tick) const noexcept;
    void add(const IntervalRecord &tick, const ArenaEntry *entries, size_t n) noexcept;
    // Build the record and its entries (waits, queries, I/O, bins) from the ticks so far and
    // keep summing (the partial roll-up readers use for the current minute).
    void snapshot() noexcept;
    // snapshot(), then start empty.
    void finish() noexcept;
    const IntervalRecord &record() const noexcept { return out_record_; }
    const std::vector<ArenaEntry> &entries() const noexcept { return entries_; }

  private:
    struct U64Hash {
        size_t operator()(uint64_t k) const noexcept { return mix64(k); }
    };
    struct WaitKey {
        uint64_t a, b;
        bool operator==(const WaitKey &o) const noexcept { return a == o.a && b == o.b; }
    };
    struct WaitKeyHash {
        size_t operator()(const WaitKey &k) const noexcept { return mix64(k.a ^ mix64(k.b)); }
    };
    void add_record_totals(const IntervalRecord &tick) noexcept;
    void add_entry(const ArenaEntry &entry) noexcept;
    void add_latency_point(LatencySeries series, uint64_t count, uint64_t time_us) noexcept;

    int64_t bucket_ = 0;
    IntervalRecord record_{};
    FixedMap<WaitKey, ArenaEntry, WaitKeyHash> waits_;
    FixedMap<WaitKey, ArenaEntry, WaitKeyHash> queries_;
    FixedMap<uint64_t, ArenaEntry, U64Hash> io_;
    FixedMap<uint64_t, ArenaEntry, U64Hash> bins_;
    FixedMap<uint64_t, ArenaEntry, U64Hash> devices_;  // DeviceIo and DeviceTime, by device
    FixedMap<uint64_t, ArenaEntry, U64Hash> slots_;    // by slot name id
    IntervalRecord out_record_{};
    std::vector<ArenaEntry> entries_;
};

}  // namespace pgsw
