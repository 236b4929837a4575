#include "core/sampler_policy.hpp"

#include <algorithm>

namespace pgsw {

RollupPolicy::RollupPolicy(Ring &ticks, Ring &rollups, Ring &partials, RollupBuilder &rollup,
                           size_t max_tick_entries)
    : ticks_(ticks),
      rollups_(rollups),
      partials_(partials),
      rollup_(rollup),
      max_unfolded_ticks_(std::min<uint64_t>(128, (ticks.record_capacity() - 1) / 2)),
      max_unfolded_entries_(ticks.arena_capacity() / 4) {
    copy_.entries.reserve(max_tick_entries);
}

void RollupPolicy::publish_rollup() {
    rollup_.finish();
    const auto &entries = rollup_.entries();
    rollups_.append(rollup_.record(), entries.data(), entries.size());
    ++rollups_published_;
    // A minute whose breakdown is incomplete (a cut tick, the roll-up's tables, the arena).
    if ((rollup_.record().flags & kFlagEntriesTruncated) ||
        entries.size() > rollups_.arena_capacity() / 2)
        ++rollups_truncated_;
}

// After storage_wait_reset(), the minute being summed must not carry older ticks over, and a
// partial published while the reset ran may hold them.
void RollupPolicy::notice_reset(int64_t reset_us) {
    if (reset_us == reset_seen_us_)
        return;
    reset_seen_us_ = reset_us;
    if (!rollup_.empty())
        rollup_.finish();
    partials_.hide_all();
}

void RollupPolicy::fold(const IntervalRecord &tick, const ArenaEntry *entries, size_t n,
                        int64_t reset_us) {
    notice_reset(reset_us);
    if (rollup_.starts_new_bucket(tick) && rollup_bucket_of(tick.end_us) > rollup_.bucket())
        publish_rollup();
    rollup_.add(tick, entries, n);
}

// Sum the ticks appended since the last call, read back from the ring (the sampler's own
// records: never torn; hidden by a reset: skipped).
void RollupPolicy::fold_unfolded(int64_t reset_us) {
    notice_reset(reset_us);  // even when every unfolded tick is hidden by it
    const uint64_t end = ticks_.end();
    for (uint64_t no = first_unfolded_tick_; no < end; ++no) {
        const ReadStatus status = ticks_.read(no, copy_);
        if (status == ReadStatus::Ok || status == ReadStatus::EntriesGone)
            fold(copy_.record, copy_.entries.data(), copy_.entries.size(), reset_us);
    }
    first_unfolded_tick_ = end;
    unfolded_entries_ = 0;
}

void RollupPolicy::after_tick(int64_t tick_end_us, size_t tick_entries, int64_t reset_us) {
    unfolded_entries_ += tick_entries;
    const int64_t second = tick_end_us / 1000000;
    const bool new_second = second != partial_published_second_;
    const uint64_t unfolded = ticks_.end() - first_unfolded_tick_;
    if (!new_second && unfolded < max_unfolded_ticks_ && unfolded_entries_ < max_unfolded_entries_)
        return;
    fold_unfolded(reset_us);
    if (!new_second || rollup_.empty())
        return;
    partial_published_second_ = second;
    rollup_.snapshot();
    const auto &entries = rollup_.entries();
    partials_.append(rollup_.record(), entries.data(), entries.size());
    ++partials_published_;
}

void RollupPolicy::replay_unrolled(int64_t reset_us) {
    IntervalRecord last_rollup{};
    const uint64_t end = rollups_.end();
    int64_t rolled_until = 0;
    if (end > rollups_.first_readable() &&
        rollups_.read_record(end - 1, last_rollup) == ReadStatus::Ok)
        rolled_until = last_rollup.end_us;
    for (const RecordCopy &c : ticks_.read_since(rolled_until, true))
        fold(c.record, c.entries.data(), c.entries.size(), reset_us);
    first_unfolded_tick_ = ticks_.end();
}

}  // namespace pgsw
