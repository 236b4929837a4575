#include "core/cpp_only.hpp"
#pragma once
// What the sampler does with a tick once it is in the ring: fold it into the one-minute
// roll-up, publish the minute so far as the partial roll-up once per second of sample time,
// replay ticks not yet rolled up after a restart, and honour storage_wait_reset(). Moved out of
// src/pg/sampler.cpp so it is unit-tested without a server; the caller injects the reset time
// (SamplerStatus::history_reset_us) instead of this code reading shared memory.
//
//  - Ticks are folded in batches read back from the ring (the roll-up's tables stay warm for a
//    batch): once per new second of sample time, or before the unfolded ticks could be
//    overwritten (half the ring, a quarter of the arena, at most 128 ticks).
//  - A roll-up is published when a tick falls in a later minute than the one being summed. A
//    tick of an earlier minute (history restored after the clock went back, which SamplerClock
//    otherwise prevents) is summed into the current minute: a finished minute never gets a
//    second roll-up.
//  - After a reset the minute being summed is dropped (it holds ticks the reset hides) and the
//    partials are hidden.
#include <cstddef>
#include <cstdint>

#include "core/ring.hpp"
#include "core/rollup.hpp"

namespace pgsw {

class RollupPolicy {
  public:
    // `max_tick_entries`: the largest tick's entries (the fold's copy is reserved for it).
    RollupPolicy(Ring &ticks, Ring &rollups, Ring &partials, RollupBuilder &rollup,
                 size_t max_tick_entries);

    // At worker start: fold the ticks in the ring that no roll-up holds yet (the worker
    // restarted, or the server did and restored its history), then start after them.
    void replay_unrolled(int64_t reset_us);
    // After each tick was appended to the tick ring.
    PGSW_TICK_PATH void after_tick(int64_t tick_end_us, size_t tick_entries, int64_t reset_us);

    uint64_t rollups_published() const noexcept { return rollups_published_; }
    uint64_t rollups_truncated() const noexcept { return rollups_truncated_; }
    uint64_t partials_published() const noexcept { return partials_published_; }

  private:
    void notice_reset(int64_t reset_us);
    void fold(const IntervalRecord &tick, const ArenaEntry *entries, size_t n, int64_t reset_us);
    void fold_unfolded(int64_t reset_us);
    void publish_rollup();

    // What after_tick() reads at every tick comes first, on one or two lines; the fold's
    // record copy (~500 bytes, used once a second) last.
    Ring &ticks_, &rollups_, &partials_;
    RollupBuilder &rollup_;
    uint64_t first_unfolded_tick_ = 0;
    uint64_t unfolded_entries_ = 0;
    uint64_t max_unfolded_ticks_;
    uint64_t max_unfolded_entries_;
    int64_t partial_published_second_ = 0;
    int64_t reset_seen_us_ = 0;
    uint64_t rollups_published_ = 0, rollups_truncated_ = 0, partials_published_ = 0;
    RecordCopy copy_;
};

}  // namespace pgsw
