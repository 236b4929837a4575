#include "core/records.hpp"

#include <algorithm>

namespace pgsw {

void accumulate(IntervalRecord &s, const IntervalRecord &r) noexcept {
    // Flags describe the record as a whole; baseline and counters-not-read describe one tick.
    s.flags |= r.flags & ~(kFlagBaseline | kFlagCountersNotRead);
    s.ticks += r.ticks;
    s.ticks_io_timing += r.ticks_io_timing;
    s.ticks_wal_timing += r.ticks_wal_timing;
    s.tick_cost_us += r.tick_cost_us;
    s.tick_cost_max_us = std::max(s.tick_cost_max_us, r.tick_cost_max_us);
    s.procs_sampled_max = std::max(s.procs_sampled_max, r.procs_sampled_max);
    s.procs_sampled += r.procs_sampled;
    s.fg_active += r.fg_active;
    s.fg_storage += r.fg_storage;
    s.fg_cpu += r.fg_cpu;
    s.fg_lock += r.fg_lock;
    s.reads += r.reads;
    s.read_time_us += r.read_time_us;
    s.wal_syncs += r.wal_syncs;
    s.wal_sync_time_us += r.wal_sync_time_us;
    s.wal_writes += r.wal_writes;
    s.wal_write_time_us += r.wal_write_time_us;
    s.read_latency_max_us = std::max(s.read_latency_max_us, r.read_latency_max_us);
    s.wal_sync_latency_max_us = std::max(s.wal_sync_latency_max_us, r.wal_sync_latency_max_us);
    // Format 2.
    s.seq_end_us = std::max(s.seq_end_us, r.seq_end_us);
    s.elapsed_us += r.elapsed_us;
    s.fg_storage_read += r.fg_storage_read;
    s.fg_storage_wal += r.fg_storage_wal;
    s.fg_sync_rep += r.fg_sync_rep;
    s.fg_active_in_checkpoint += r.fg_active_in_checkpoint;
    s.ticks_db_counters += r.ticks_db_counters;
    s.ticks_checkpointer += r.ticks_checkpointer;
    s.xacts += r.xacts;
    s.tuples_inserted += r.tuples_inserted;
    s.tuples_updated += r.tuples_updated;
    s.tuples_deleted += r.tuples_deleted;
    s.xacts_in_checkpoint += r.xacts_in_checkpoint;
    s.checkpoints_timed += r.checkpoints_timed;
    s.checkpoints_requested += r.checkpoints_requested;
    s.checkpoints_done += r.checkpoints_done;
    s.checkpoint_write_time_ms += r.checkpoint_write_time_ms;
    s.checkpoint_sync_time_ms += r.checkpoint_sync_time_ms;
    s.checkpoint_buffers_written += r.checkpoint_buffers_written;
    s.ticks_in_checkpoint += r.ticks_in_checkpoint;
    s.checkpoints_started += r.checkpoints_started;
    s.reads_in_checkpoint += r.reads_in_checkpoint;
    s.read_time_us_in_checkpoint += r.read_time_us_in_checkpoint;
    s.wal_syncs_in_checkpoint += r.wal_syncs_in_checkpoint;
    s.wal_sync_time_us_in_checkpoint += r.wal_sync_time_us_in_checkpoint;
    s.ticks_autovacuum += r.ticks_autovacuum;
    s.ticks_autovacuum_all_busy += r.ticks_autovacuum_all_busy;
    s.autovacuum_workers_busy += r.autovacuum_workers_busy;
    s.autovacuum_workers_max += r.autovacuum_workers_max;
    s.autovacuum_samples_io += r.autovacuum_samples_io;
    s.autovacuum_samples_delay += r.autovacuum_samples_delay;
    s.autovacuum_samples_cpu += r.autovacuum_samples_cpu;
    s.autovacuum_samples_other += r.autovacuum_samples_other;
    s.read_latency_m2 += r.read_latency_m2;
    s.background_cpu += r.background_cpu;
    s.cpu_busy_us += r.cpu_busy_us;
    s.cpu_total_us += r.cpu_total_us;
    s.ticks_cpu += r.ticks_cpu;
    s.client_sessions += r.client_sessions;
    if (r.wal_position != 0)
        s.wal_position = r.wal_position;
}

}  // namespace pgsw
