// The server state the symptoms need, read by the sampler at each counters-reading tick with
// no database connection (internals-round2.md §2-§4), and handed to the TickBuilder:
//  * checkpointer counters (pgstat_fetch_stat_checkpointer, a fixed-kind fetch: one shared
//    LWLock, copied at once) as deltas, and whether the redo pointer advanced (GetRedoRecPtr,
//    the info_lck spinlock): a checkpoint or restartpoint began;
//  * the WAL position: the insert position, or the replay position on a standby;
//  * the autovacuum worker cap (0 when autovacuum cannot run);
//  * replication slots: ReplicationSlotControlLock shared, each in-use slot's fields copied
//    under its spinlock (nothing else is done under either), then, after release, names
//    interned (only when the name at that position changed since the last reading) and logical
//    slots' spill statistics fetched every tenth reading
//    (pgstat_fetch_replslot takes the control lock itself and pallocs its result in the tick's
//    scratch context, reset here).
// At most kMaxSlotsPerTick slots are read (more set kFlagEntriesTruncated). A PostgreSQL error
// in a reading is logged once and stops these readings for the worker's life (fail safe: the
// rest of the tick is unaffected).
// Include after pg_headers.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/names.hpp"
#include "core/server_readings.hpp"
#include "core/tick_builder.hpp"

namespace pgsw::pg {

class ServerState {
  public:
    ServerState();
    // One reading into `tick`; C++ side of the boundary (catches and logs its own errors).
    void read(TickBuilder &tick, NameWriter &names, MemoryContext scratch);
    bool disabled() const noexcept { return disabled_; }

  private:
    struct SlotCopy {
        NameData name;
        uint8_t flags;  // SlotFlags
        uint64_t restart_lsn, confirmed_flush;
        // The name last interned at this position and its id, kept across readings: the slot
        // set rarely changes, and interning costs ~0.3 us a slot at every reading (a hash of
        // the name and two cold cache lines, the index's and the shared dictionary's).
        NameData interned;
        uint16_t name_id = 0;  // 0: none yet (or the dictionary was full): intern
    };
    // C-style (boundary.hpp): run inside pg_call.
    void read_checkpointer(TickBuilder &tick);
    uint64_t read_wal_position();
    size_t copy_slots(bool &truncated);
    void read_slots(TickBuilder &tick, NameWriter &names, uint64_t position, MemoryContext scratch);
    void read_all(TickBuilder &tick, NameWriter &names, MemoryContext scratch);

    // Spill statistics every this many readings (10 s at the default io_read_interval).
    static constexpr int kSpillReadEvery = 10;
    CheckpointerTracker checkpointer_;
    SpillTracker spills_;
    int spill_countdown_ = 0;      // readings until the next spill fetch (0: this one)
    std::vector<SlotCopy> slots_;  // sized at construction: kMaxSlotsPerTick
    bool disabled_ = false;
};

}  // namespace pgsw::pg
