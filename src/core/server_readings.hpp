#include "core/cpp_only.hpp"
#pragma once
// The policy of the sampler's server-state readings (pg/server_state.cpp reads, this decides),
// pure so that it is unit-tested without a server:
//  * checkpointer counters are cumulative: deltas with CounterDeltas' rules (first reading a
//    baseline, a counter going down a reset: pg_stat_reset_shared('checkpointer'/'bgwriter')
//    stores an offset the fetch subtracts, so the values fall to ~0);
//  * the redo pointer advances exactly when a checkpoint or restartpoint really begins;
//  * a slot's lag is the WAL position minus what its consumer has confirmed (logical:
//    confirmed_flush) or still needs (physical: restart_lsn), never negative (a physical slot's
//    restart_lsn can run ahead of a standby's replay position for a moment);
//  * logical decoding spill statistics are deltas keyed by the slot's name id.
// All memory is allocated at construction.
#include <cstddef>
#include <cstdint>

#include "core/counter_deltas.hpp"
#include "core/tick_builder.hpp"

namespace pgsw {

// One reading of the checkpointer's cumulative counters, as the version's view defines them
// (compat.hpp maps the fields).
struct CheckpointerTotals {
    uint64_t timed = 0, requested = 0, done = 0;
    uint64_t write_time_ms = 0, sync_time_ms = 0, buffers_written = 0;
};

class CheckpointerTracker {
  public:
    CheckpointerTracker() : deltas_(1) {}
    // `have_totals` false: the counters could not be read (the deltas are not valid); the redo
    // pointer is still compared. A redo pointer of 0 means unknown.
    CheckpointerDeltas observe(bool have_totals, const CheckpointerTotals &t,
                               uint64_t redo) noexcept;
    uint64_t resets() const noexcept { return deltas_.resets(); }

  private:
    CounterDeltas<6> deltas_;
    uint64_t last_redo_ = 0;
};

// Bytes of WAL a slot's consumer is behind `position`; 0 when unknown (no position or no
// reference LSN) or ahead.
uint64_t slot_lag_bytes(uint64_t position, uint64_t restart_lsn, uint64_t confirmed_flush,
                        bool logical) noexcept;

// Spill deltas of logical slots, keyed by the slot's name id. One reading: begin(), observe()
// each logical slot with statistics, end().
class SpillTracker {
  public:
    explicit SpillTracker(size_t max_slots) : deltas_(max_slots) {}
    void begin() noexcept { deltas_.begin(); }
    // Sets the reading's spill deltas (0 on a baseline or a reset).
    void observe(uint16_t slot, uint64_t spill_count, uint64_t spill_bytes,
                 SlotReading &reading) noexcept;
    void end() noexcept { deltas_.end(); }
    uint64_t resets() const noexcept { return deltas_.resets(); }

  private:
    CounterDeltas<2> deltas_;
};

}  // namespace pgsw
