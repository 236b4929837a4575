// Database counters for the tick (database_counters.hpp). The hash scan needs
// utils/pgstat_internal.h, whose entry layout is the same in 16-19 (internals-round2.md §1).
#include "core/counter_deltas.hpp"
#include "core/tick_builder.hpp"

#include "pg/pg_headers.hpp"

extern "C" {
#include "lib/dshash.h"
#include "utils/pgstat_internal.h"
}

#include "pg/database_counters.hpp"

namespace pgsw::pg {
namespace {

constexpr size_t kMaxDatabases = 4096;
constexpr int64_t kScanIntervalUs = 30 * 1000 * 1000;

}  // namespace

DatabaseCounters::DatabaseCounters()
    : deltas_(kMaxDatabases), noted_(kMaxDatabases), candidates_(kMaxDatabases) {}

// Every database entry of the shared statistics (not dropped). The partition locks are taken
// shared one at a time by dshash_seq_next; nothing here can raise between init and term.
void DatabaseCounters::scan_shared_hash() {
    dshash_seq_status scan;
    dshash_seq_init(&scan, pgStatLocal.shared_hash, false);
    PgStatShared_HashEntry *entry;
    while ((entry = static_cast<PgStatShared_HashEntry *>(dshash_seq_next(&scan))) != nullptr)
        if (entry->key.kind == PGSTAT_KIND_DATABASE && !entry->dropped)
            (void)candidates_.find_or_insert(entry->key.dboid);
    dshash_seq_term(&scan);
}

void DatabaseCounters::read_one(uint32_t database_oid, DatabaseDeltas &sum) {
    const PgStat_StatDBEntry *db = pgstat_fetch_stat_dbentry(database_oid);
    if (db == nullptr)
        return;  // no entry (yet, or dropped): not observed, so forgotten
    const CounterDeltas<5>::Values now = {
        uint64_t(db->xact_commit), uint64_t(db->xact_rollback), uint64_t(db->tuples_inserted),
        uint64_t(db->tuples_updated), uint64_t(db->tuples_deleted)};
    CounterDeltas<5>::Values delta{};
    if (deltas_.observe(database_oid, now, delta) != CounterDeltas<5>::Result::Delta)
        return;
    sum.valid = true;
    sum.xacts += delta[0] + delta[1];
    sum.tuples_inserted += delta[2];
    sum.tuples_updated += delta[3];
    sum.tuples_deleted += delta[4];
}

DatabaseDeltas DatabaseCounters::read(MemoryContext scratch, int64_t now_us) {
    candidates_.clear();
    (void)candidates_.find_or_insert(0);  // shared catalogs' tuple counts
    noted_.for_each([this](uint32_t oid, bool) { (void)candidates_.find_or_insert(oid); });
    noted_.clear();
    last_noted_ = 0;
    deltas_.for_each_key([this](uint64_t oid) { (void)candidates_.find_or_insert(uint32_t(oid)); });
    if (now_us >= next_scan_us_) {
        scan_shared_hash();
        next_scan_us_ = now_us + kScanIntervalUs;
    }
    const MemoryContext old = MemoryContextSwitchTo(scratch);
    DatabaseDeltas sum;
    deltas_.begin();
    candidates_.for_each([this, &sum](uint32_t oid, bool) { read_one(oid, sum); });
    deltas_.end();
    MemoryContextSwitchTo(old);
    MemoryContextReset(scratch);
    return sum;
}

}  // namespace pgsw::pg
