// The sampler's cumulative I/O counters: which pg_stat_io cells this server version tracks, and
// one reading of them (plus pg_stat_wal on 16/17) per tick. Include after pg_headers.hpp.
#pragma once

#include <vector>

#include "core/tick_builder.hpp"

namespace pgsw::pg {

// One pg_stat_io cell this server version tracks, with its IoDeltaTracker slot.
struct IoCellSource {
    int backend_type, object, context, op;
    size_t slot;
};

// Lists the tracked cells (ordered by backend type) and registers each with `tracker`.
void list_io_cells(IoDeltaTracker &tracker, std::vector<IoCellSource> &cells);

// One reading of the counters into `tracker` (next() and observe() for every cell; the caller
// then calls update()). Takes one shared LWLock per backend type, as pg_stat_io itself does;
// allocates nothing.
void read_io_counters(const std::vector<IoCellSource> &cells, IoDeltaTracker &tracker);

}  // namespace pgsw::pg
