#include "core/sampler_clock.hpp"

#include <algorithm>

namespace pgsw {

void SamplerClock::start(int64_t wall_us, int64_t mono_us, int64_t newest_end_us,
                         int64_t newest_seq_end_us) noexcept {
    seq_base_us_ = std::max(wall_us, newest_seq_end_us);
    mono_base_us_ = mono_us;
    previous_mono_us_ = mono_us;
    previous_end_us_ = newest_end_us;
    first_ = true;
    catching_up_ = false;
    steps_ = 0;
}

TickTimes SamplerClock::tick(int64_t wall_us, int64_t mono_us) noexcept {
    TickTimes t{};
    // A monotonic clock never goes back; guard anyway so elapsed can never wrap.
    mono_us = std::max(mono_us, previous_mono_us_);
    t.seq_end_us = seq_base_us_ + (mono_us - mono_base_us_);
    if (first_) {
        // The baseline: measures nothing; still after every record already in the rings.
        first_ = false;
        t.end_us = std::max(wall_us, previous_end_us_);
        t.start_us = t.end_us;
    } else {
        t.elapsed_us = static_cast<uint64_t>(mono_us - previous_mono_us_);
        const auto elapsed = static_cast<int64_t>(t.elapsed_us);
        const int64_t drift = wall_us - (previous_end_us_ + elapsed);
        if (drift > kClockStepToleranceUs) {
            t.step_us = drift;  // forward, also while slewing after a backward step
            ++steps_;
            catching_up_ = false;
        } else if (drift < -kClockStepToleranceUs && !catching_up_) {
            t.step_us = drift;
            ++steps_;
            catching_up_ = true;
        }
        const int64_t slewed = previous_end_us_ + elapsed / 2;
        if (catching_up_ && wall_us >= slewed)
            catching_up_ = false;  // the wall clock has met the ticks' time
        t.end_us = catching_up_ ? slewed : std::max(wall_us, previous_end_us_);
        // Contiguous with the previous tick, except across a forward step (a gap).
        t.start_us = t.step_us > 0 ? t.end_us - elapsed : previous_end_us_;
    }
    previous_mono_us_ = mono_us;
    previous_end_us_ = t.end_us;
    return t;
}

}  // namespace pgsw
