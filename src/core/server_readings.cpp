#include "core/server_readings.hpp"

#include <limits>

namespace pgsw {

CheckpointerDeltas CheckpointerTracker::observe(bool have_totals, const CheckpointerTotals &t,
                                                uint64_t redo) noexcept {
    CheckpointerDeltas d;
    // The first reading only learns where the redo pointer is.
    d.redo_advanced = redo != 0 && last_redo_ != 0 && redo > last_redo_;
    if (redo != 0)
        last_redo_ = redo;
    if (!have_totals)
        return d;
    using Values = CounterDeltas<6>::Values;
    const Values now = {t.timed,         t.requested,    t.done,
                        t.write_time_ms, t.sync_time_ms, t.buffers_written};
    Values delta{};
    deltas_.begin();
    const auto result = deltas_.observe(0, now, delta);
    deltas_.end();
    if (result != CounterDeltas<6>::Result::Delta)
        return d;
    d.valid = true;
    d.timed = delta[0], d.requested = delta[1], d.done = delta[2];
    d.write_time_ms = delta[3], d.sync_time_ms = delta[4], d.buffers_written = delta[5];
    return d;
}

uint64_t slot_lag_bytes(uint64_t position, uint64_t restart_lsn, uint64_t confirmed_flush,
                        bool logical) noexcept {
    const uint64_t reference = logical ? confirmed_flush : restart_lsn;
    if (position == 0 || reference == 0 || reference >= position)
        return 0;
    return position - reference;
}

void SpillTracker::observe(uint16_t slot, uint64_t spill_count, uint64_t spill_bytes,
                           SlotReading &reading) noexcept {
    CounterDeltas<2>::Values delta{};
    reading.spill_count = 0;
    reading.spill_bytes = 0;
    if (deltas_.observe(slot, {spill_count, spill_bytes}, delta) != CounterDeltas<2>::Result::Delta)
        return;
    constexpr uint64_t kMax32 = std::numeric_limits<uint32_t>::max();
    reading.spill_count = static_cast<uint32_t>(delta[0] < kMax32 ? delta[0] : kMax32);
    reading.spill_bytes = delta[1];
}

}  // namespace pgsw
