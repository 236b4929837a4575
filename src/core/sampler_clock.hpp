#include "core/cpp_only.hpp"
#pragma once
// The sampler's two clocks, turned into a tick's times. The wall clock (TimestampTz µs) is what
// people read and what windows are asked in; CLOCK_MONOTONIC is what a tick really measured.
// NTP or an operator can step the wall clock either way; the monotonic clock never steps.
//
//  - elapsed_us: monotonic time since the previous tick (0 for the first: a baseline). Rates
//    divide by it, so a step neither inflates nor negates them.
//  - end_us (wall, for display and windows) never goes back. After a backward step larger than
//    kClockStepToleranceUs the ticks' wall time advances at half the monotonic rate until the
//    wall clock meets it (a 1 h step: 2 h), the way adjtime slews: a finished minute never gets
//    a second roll-up and no interval is negative. A forward step moves end_us with the wall
//    clock and leaves a gap (the tick's own interval stays its elapsed time: no rate diluted).
//  - start_us = the previous tick's end_us (contiguous ticks), except after a forward step:
//    end_us - elapsed_us.
//  - seq_end_us: the sampler timeline across restarts: it starts at max(wall clock, newest
//    restored seq_end_us) and advances with the monotonic clock only.
// Every input is injected: the policy is unit-tested without a clock.
#include <cstdint>

namespace pgsw {

constexpr int64_t kClockStepToleranceUs = 1000 * 1000;

struct TickTimes {
    int64_t start_us;
    int64_t end_us;
    int64_t seq_end_us;
    uint64_t elapsed_us;
    int64_t step_us;  // wall-clock step first seen at this tick (wall - expected), else 0
};

class SamplerClock {
  public:
    // At worker start. `newest_end_us` / `newest_seq_end_us`: the newest record already in the
    // rings (restored history, or the ticks of a previous worker), 0 when none.
    void start(int64_t wall_us, int64_t mono_us, int64_t newest_end_us,
               int64_t newest_seq_end_us) noexcept;
    PGSW_TICK_PATH TickTimes tick(int64_t wall_us, int64_t mono_us) noexcept;
    // Wall-clock steps seen since start (either way).
    uint64_t steps() const noexcept { return steps_; }

  private:
    int64_t seq_base_us_ = 0;
    int64_t mono_base_us_ = 0;
    int64_t previous_mono_us_ = 0;
    int64_t previous_end_us_ = 0;
    bool first_ = true;
    bool catching_up_ = false;  // after a backward step: end_us slews toward the wall clock
    uint64_t steps_ = 0;
};

}  // namespace pgsw
