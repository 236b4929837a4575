// Reading pg_stat_io for the tick. The tracked cells are read straight from the shared
// statistics under the per-backend-type LWLocks that pgstat_fetch_stat_io() takes: that
// function copies every backend type's whole PgStat_BktypeIO (~55 kB on 18) into a snapshot on
// each call, which was the largest part of a 10 ms tick, while a tick needs a few hundred
// cells. The layout used (PgStatShared_IO: locks[BACKEND_NUM_TYPES], then PgStat_IO) is the one
// pgstat_io_snapshot_cb() reads in 16 to 19. A build for an untested major keeps the public
// call (compat::kReadSharedIoInPlace).
#include <vector>

#include "core/tick_builder.hpp"

#include "pg/pg_headers.hpp"

extern "C" {
#include "utils/pgstat_internal.h"
}

#include "pg/compat.hpp"
#include "pg/io_counters.hpp"

namespace pgsw::pg {
namespace {

IoCounters cell_counters(const PgStat_BktypeIO &io, const IoCellSource &s) {
    return {static_cast<uint64_t>(io.counts[s.object][s.context][s.op]),
            static_cast<uint64_t>(io.times[s.object][s.context][s.op]),
            compat::io_bytes(io, s.object, s.context, s.op)};
}

void read_wal_counters(IoSnapshot &snapshot) {
    snapshot.wal_from_pg_stat_wal = compat::kWalFromPgStatWal;
    compat::WalIoCounters wal;
    if (!compat::pg_stat_wal_io(wal))
        return;
    snapshot.wal_reset_at_us = wal.reset_at;
    snapshot.wal_writes = {wal.writes, wal.write_time_us, 0};
    snapshot.wal_syncs = {wal.syncs, wal.sync_time_us, 0};
}

void read_shared_io_in_place(const std::vector<IoCellSource> &cells, IoDeltaTracker &tracker) {
    PgStatShared_IO &shared = pgStatLocal.shmem->io;
    // locks[0] also protects the reset timestamp (pgstat_io_snapshot_cb).
    LWLockAcquire(&shared.locks[0], LW_SHARED);
    tracker.next().io_reset_at_us = shared.stats.stat_reset_timestamp;
    LWLockRelease(&shared.locks[0]);
    for (size_t i = 0; i < cells.size();) {
        const int type = cells[i].backend_type;
        const PgStat_BktypeIO &io = shared.stats.stats[type];
        LWLockAcquire(&shared.locks[type], LW_SHARED);
        for (; i < cells.size() && cells[i].backend_type == type; ++i)
            tracker.observe(cells[i].slot, cell_counters(io, cells[i]));
        LWLockRelease(&shared.locks[type]);
    }
}

void read_public_io(const std::vector<IoCellSource> &cells, IoDeltaTracker &tracker) {
    pgstat_clear_snapshot();  // stats_fetch_consistency = none: a fresh copy each call
    const PgStat_IO *io = pgstat_fetch_stat_io();
    tracker.next().io_reset_at_us = io->stat_reset_timestamp;
    for (const IoCellSource &s : cells)
        tracker.observe(s.slot, cell_counters(io->stats[s.backend_type], s));
}

}  // namespace

void list_io_cells(IoDeltaTracker &tracker, std::vector<IoCellSource> &cells) {
    for (int b = 0; b < BACKEND_NUM_TYPES; ++b) {
        const auto type = static_cast<BackendType>(b);
        const BackendKind kind = compat::backend_kind(type);
        if (kind == BackendKind::Unknown || !pgstat_tracks_io_bktype(type))
            continue;
        for (int o = 0; o < IOOBJECT_NUM_TYPES; ++o)
            for (int c = 0; c < IOCONTEXT_NUM_TYPES; ++c)
                for (int p = 0; p < IOOP_NUM_TYPES; ++p) {
                    IoObjectCode object;
                    IoContextCode context;
                    IoOpCode op;
                    if (!compat::io_object(o, object) || !compat::io_context(c, context) ||
                        !compat::io_op(p, op))
                        continue;
                    if (!pgstat_tracks_io_object(type, IOObject(o), IOContext(c)) ||
                        !pgstat_tracks_io_op(type, IOObject(o), IOContext(c), IOOp(p)))
                        continue;
                    const size_t slot = tracker.track(io_cell_index(kind, object, context, op));
                    cells.push_back({b, o, c, p, slot});
                }
    }
}

void read_io_counters(const std::vector<IoCellSource> &cells, IoDeltaTracker &tracker) {
    if (compat::kReadSharedIoInPlace)
        read_shared_io_in_place(cells, tracker);
    else
        read_public_io(cells, tracker);
    read_wal_counters(tracker.next());
}

}  // namespace pgsw::pg
