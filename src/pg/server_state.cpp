// Checkpointer, WAL position, autovacuum and replication slot readings for the tick
// (server_state.hpp).
#include <cstring>
#include <vector>

#include "core/names.hpp"
#include "core/server_readings.hpp"
#include "core/tick_builder.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/compat.hpp"
#include "pg/server_state.hpp"

namespace pgsw::pg {

ServerState::ServerState() : spills_(kMaxSlotsPerTick), slots_(kMaxSlotsPerTick) {}

void ServerState::read_checkpointer(TickBuilder &tick) {
    // A fixed-kind fetch returns a pointer into the local snapshot: copied at once.
    const PgStat_CheckpointerStats *stats = pgstat_fetch_stat_checkpointer();
    CheckpointerTotals totals;
    if (stats != nullptr)
        compat::checkpointer_totals(*stats, totals);
    tick.add_checkpointer(checkpointer_.observe(stats != nullptr, totals, GetRedoRecPtr()));
}

// The insert position is not maintained during recovery: a standby reports its replay.
uint64_t ServerState::read_wal_position() {
    return RecoveryInProgress() ? uint64_t(GetXLogReplayRecPtr(nullptr))
                                : uint64_t(GetXLogInsertRecPtr());
}

// The in-use slots, copied under ReplicationSlotControlLock (shared) and each slot's
// spinlock: only plain copies in between, nothing that can raise or take another lock.
size_t ServerState::copy_slots(bool &truncated) {
    const int count = compat::replication_slot_count();
    size_t n = 0;
    truncated = false;
    if (count <= 0)
        return 0;
    LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
    for (int i = 0; i < count; ++i) {
        ReplicationSlot *slot = &ReplicationSlotCtl->replication_slots[i];
        if (!slot->in_use)
            continue;
        if (n == slots_.size()) {
            truncated = true;
            break;
        }
        SlotCopy &copy = slots_[n++];
        SpinLockAcquire(&slot->mutex);
        std::memcpy(&copy.name, &slot->data.name, sizeof copy.name);
        copy.flags = uint8_t((slot->data.database != InvalidOid ? kSlotLogical : 0) |
                             (compat::slot_is_active(slot) ? kSlotActive : 0) |
                             (slot->data.invalidated != RS_INVAL_NONE ? kSlotInvalidated : 0));
        copy.restart_lsn = slot->data.restart_lsn;
        copy.confirmed_flush = slot->data.confirmed_flush;
        SpinLockRelease(&slot->mutex);
    }
    LWLockRelease(ReplicationSlotControlLock);
    return n;
}

void ServerState::read_slots(TickBuilder &tick, NameWriter &names, uint64_t position,
                             MemoryContext scratch) {
    bool truncated = false;
    const size_t n = copy_slots(truncated);
    if (truncated)
        tick.record().flags |= kFlagEntriesTruncated;
    const MemoryContext old = MemoryContextSwitchTo(scratch);
    // Spill statistics are a slow signal and the dearest part of a slot's reading (~1.5 us: a
    // lookup by name under the control lock, a shared-stats fetch and a copy): fetched every
    // kSpillReadEvery readings; the deltas of the next fetch cover the readings between.
    const bool spill_reading = spill_countdown_-- == 0;
    if (spill_reading) {
        spill_countdown_ = kSpillReadEvery - 1;
        spills_.begin();
    }
    for (size_t i = 0; i < n; ++i) {
        SlotCopy &copy = slots_[i];
        const bool logical = copy.flags & kSlotLogical;
        // Same bytes, same name, same id (the dictionary is append-only); a name whose bytes
        // differ after its terminator is only interned again.
        if (copy.name_id == 0 || std::memcmp(&copy.interned, &copy.name, sizeof copy.name) != 0) {
            copy.name_id = names.intern(NameKind::Slot, NameStr(copy.name));
            std::memcpy(&copy.interned, &copy.name, sizeof copy.name);
        }
        SlotReading reading{};
        reading.slot = copy.name_id;
        reading.flags = copy.flags;
        reading.lag_bytes =
            slot_lag_bytes(position, copy.restart_lsn, copy.confirmed_flush, logical);
        // Outside the control lock: the fetch takes it itself. Physical slots have no entry.
        if (logical && spill_reading)
            if (const PgStat_StatReplSlotEntry *s = pgstat_fetch_replslot(copy.name))
                spills_.observe(reading.slot, uint64_t(s->spill_count), uint64_t(s->spill_bytes),
                                reading);
        tick.add_slot(reading);
    }
    if (spill_reading)
        spills_.end();
    MemoryContextSwitchTo(old);
    MemoryContextReset(scratch);
}

void ServerState::read_all(TickBuilder &tick, NameWriter &names, MemoryContext scratch) {
    read_checkpointer(tick);
    tick.set_autovacuum_max(compat::autovacuum_worker_cap());
    const uint64_t position = read_wal_position();
    tick.set_wal_position(position);
    read_slots(tick, names, position, scratch);
}

void ServerState::read(TickBuilder &tick, NameWriter &names, MemoryContext scratch) {
    if (disabled_)
        return;
    try {
        pg_call([this, &tick, &names, scratch] { read_all(tick, names, scratch); });
    } catch (const PgErrorThrown &e) {
        disabled_ = true;
        const char *message = e.data->message ? e.data->message : "unknown error";
        pg_call([message] {
            ereport(LOG, (errmsg("pg_storage_wait: checkpointer, autovacuum and replication slot "
                                 "readings stop after an error; the symptoms that need them "
                                 "report unknown"),
                          errdetail_internal("%s", message)));
        });
    }
}

}  // namespace pgsw::pg
