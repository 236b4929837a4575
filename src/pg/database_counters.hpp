// pg_stat_database's transaction and tuple counters summed over every database, read by the
// sampler, which has no database connection and no catalog (internals-round2.md §1):
//  * which databases: those of the processes sampled since the last reading (PGPROC
//    databaseId), those whose counters were read last time, and every 30 s all the database
//    entries of the shared statistics hash (a scan whose cost grows with every entry of every
//    kind, hence rare), plus database 0 (shared catalogs);
//  * each is fetched with pgstat_fetch_stat_dbentry(); a database whose entry is gone is
//    forgotten; deltas through CounterDeltas (first sight: baseline; a counter going down:
//    reset, counted in storage_wait_status().database_counter_resets).
// A database used only by connections shorter than a tick, created since the last scan, is
// missed until the next scan: its first transactions are not counted (documented).
// Include after pg_headers.hpp.
#pragma once

#include <cstdint>

#include "core/counter_deltas.hpp"
#include "core/fixed_map.hpp"
#include "core/tick_builder.hpp"

namespace pgsw::pg {

class DatabaseCounters {
  public:
    DatabaseCounters();
    // A sampled process's database (0 is ignored); no allocation.
    void note(uint32_t database_oid) noexcept {
        // Most processes of a tick share a database: one compare instead of a hash probe.
        if (database_oid == 0 || database_oid == last_noted_)
            return;
        last_noted_ = database_oid;
        (void)noted_.find_or_insert(database_oid);
    }
    // One reading: C-style (boundary.hpp), run inside pg_call. `scratch` is reset here: the
    // fetch functions palloc their results in the current memory context.
    DatabaseDeltas read(MemoryContext scratch, int64_t now_us);
    uint64_t resets() const noexcept { return deltas_.resets(); }
    uint64_t tracked() const noexcept { return deltas_.keys(); }

  private:
    struct Hash {
        size_t operator()(uint32_t k) const noexcept { return static_cast<size_t>(mix64(k)); }
    };
    void scan_shared_hash();
    void read_one(uint32_t database_oid, DatabaseDeltas &sum);
    CounterDeltas<5> deltas_;
    FixedMap<uint32_t, bool, Hash> noted_;       // to read at the next reading
    uint32_t last_noted_ = 0;                    // in noted_ (cleared with it)
    FixedMap<uint32_t, bool, Hash> candidates_;  // this reading's databases
    int64_t next_scan_us_ = 0;
};

}  // namespace pgsw::pg
