\echo Use "ALTER EXTENSION pg_storage_wait UPDATE TO '1.1'" to load this file. \quit

-- pg_storage_wait 1.0 -> 1.1. A fresh CREATE EXTENSION runs 1.0 and then this script, so an
-- upgraded database and a new one have exactly the same objects. Functions whose result columns
-- grow are dropped and created again (with their views); their grants are given again below.
-- The 1.1 library fills result columns by name, so the 1.0 declarations keep working with it
-- until this script has run.

-- ---- the summary, history, status and ticks gain columns ----------------------------------

DROP VIEW storage_wait_summary;
DROP FUNCTION storage_wait_summary(interval);
CREATE FUNCTION storage_wait_summary(
    "window" interval DEFAULT interval '5 minutes',
    OUT window_start timestamptz,
    OUT window_end timestamptz,
    OUT ticks bigint,
    OUT backend_samples bigint,
    OUT active_backends_avg double precision,
    OUT storage_wait_pct double precision,
    OUT cpu_pct double precision,
    OUT lock_pct double precision,
    OUT other_wait_pct double precision,
    OUT top_storage_wait text,
    OUT reads_per_s double precision,
    OUT read_latency_avg_ms double precision,
    OUT read_latency_p50_ms double precision,
    OUT read_latency_p95_ms double precision,
    OUT read_latency_p99_ms double precision,
    OUT read_latency_max_ms double precision,
    OUT wal_fsyncs_per_s double precision,
    OUT wal_fsync_latency_avg_ms double precision,
    OUT wal_fsync_latency_p50_ms double precision,
    OUT wal_fsync_latency_p95_ms double precision,
    OUT wal_fsync_latency_p99_ms double precision,
    OUT wal_fsync_latency_max_ms double precision,
    OUT storage_bound_score double precision,
    OUT verdict text,
    OUT hint text,
    OUT track_io_timing boolean,
    OUT track_wal_io_timing boolean,
    OUT source text,
    OUT xacts_per_s double precision,
    OUT xact_time_ms double precision,
    OUT sync_rep_pct double precision,
    OUT xact_time_at_reference_ms double precision,
    OUT speedup_at_reference double precision,
    OUT storage_limit text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_summary'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;
CREATE VIEW storage_wait_summary AS SELECT * FROM storage_wait_summary();

DROP FUNCTION storage_wait_history(interval, interval);
CREATE FUNCTION storage_wait_history(
    "window" interval DEFAULT interval '1 hour',
    resolution interval DEFAULT NULL,
    OUT sample_time timestamptz,
    OUT ticks bigint,
    OUT active_backends_avg double precision,
    OUT storage_wait_pct double precision,
    OUT cpu_pct double precision,
    OUT lock_pct double precision,
    OUT other_wait_pct double precision,
    OUT storage_bound_score double precision,
    OUT verdict text,
    OUT reads_per_s double precision,
    OUT read_latency_avg_ms double precision,
    OUT wal_fsyncs_per_s double precision,
    OUT wal_fsync_latency_avg_ms double precision,
    OUT xacts_per_s double precision,
    OUT xact_time_ms double precision,
    OUT sync_rep_pct double precision,
    OUT tuples_written_per_s double precision,
    OUT data_device_iops double precision,
    OUT data_device_mb_per_s double precision,
    OUT wal_device_iops double precision,
    OUT wal_device_mb_per_s double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_history'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

DROP FUNCTION storage_wait_status();
CREATE FUNCTION storage_wait_status(
    OUT ticks bigint,
    OUT sample_interval_ms integer,
    OUT last_tick_at timestamptz,
    OUT overruns bigint,
    OUT tick_cost_avg_us double precision,
    OUT tick_cost_max_us bigint,
    OUT shared_memory_bytes bigint,
    OUT retention_seconds double precision,
    OUT rollup_retention_seconds bigint,
    OUT restored_from_disk boolean,
    OUT track_io_timing boolean,
    OUT track_wal_io_timing boolean,
    OUT in_recovery boolean,
    OUT worker_pid integer,
    OUT worker_starts bigint,
    OUT counter_resets bigint,
    OUT wal_source text,
    OUT ticks_retained bigint,
    OUT rollups_retained bigint,
    OUT ticks_truncated bigint,
    OUT rollups_truncated bigint,
    OUT torn_reads_skipped bigint,
    OUT database_counter_resets bigint,
    OUT databases_tracked bigint,
    OUT names_used integer,
    OUT last_history_save_at timestamptz,
    OUT history_saves bigint,
    OUT history_save_failures bigint,
    OUT worker_disabled_reason text,
    OUT wait_classification_version integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_status'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1;

DROP FUNCTION storage_wait_ticks(timestamptz);
CREATE FUNCTION storage_wait_ticks(
    since timestamptz DEFAULT now() - interval '5 minutes',
    OUT sample_time timestamptz,
    OUT interval_ms double precision,
    OUT tick_cost_us integer,
    OUT processes integer,
    OUT active_samples bigint,
    OUT storage_samples bigint,
    OUT cpu_samples bigint,
    OUT lock_samples bigint,
    OUT reads bigint,
    OUT read_time_ms double precision,
    OUT wal_syncs bigint,
    OUT wal_sync_time_ms double precision,
    OUT wal_writes bigint,
    OUT wal_write_time_ms double precision,
    OUT baseline boolean,
    OUT counters_reset boolean,
    OUT overrun boolean,
    OUT track_io_timing boolean,
    OUT track_wal_io_timing boolean,
    OUT in_recovery boolean,
    OUT wal_source text,
    OUT counters_read boolean,
    OUT sync_rep_samples bigint,
    OUT xacts bigint,
    OUT tuples_written bigint,
    OUT in_checkpoint boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_ticks'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

-- Resetting writes to shared memory: never in a parallel worker.
ALTER FUNCTION storage_wait_reset() PARALLEL UNSAFE;

-- ---- where a transaction's time goes (storage_wait_breakdown) -----------------------------

CREATE FUNCTION storage_wait_breakdown(
    "window" interval DEFAULT interval '5 minutes',
    OUT component text,
    OUT samples bigint,
    OUT share_pct double precision,
    OUT ms_per_xact double precision,
    OUT latency_avg_ms double precision,
    OUT reference_latency_ms double precision,
    OUT ms_per_xact_at_reference double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_breakdown'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT ROWS 7;
CREATE VIEW storage_wait_breakdown AS SELECT * FROM storage_wait_breakdown();

-- ---- what faster storage would buy (storage_wait_what_if) ---------------------------------

CREATE FUNCTION storage_wait_what_if(
    "window" interval DEFAULT interval '5 minutes',
    read_latency_ms double precision DEFAULT NULL,
    flush_latency_ms double precision DEFAULT NULL,
    OUT window_start timestamptz,
    OUT window_end timestamptz,
    OUT xacts_per_s double precision,
    OUT xact_time_ms double precision,
    OUT client_sessions_avg double precision,
    OUT outside_server_ms double precision,
    OUT cpu_busy_pct double precision,
    OUT cpu_cores double precision,
    OUT read_latency_ms double precision,
    OUT reference_read_latency_ms double precision,
    OUT flush_latency_ms double precision,
    OUT reference_flush_latency_ms double precision,
    OUT storage_bound_score double precision,
    OUT xact_time_at_reference_ms double precision,
    OUT speedup_at_reference double precision,
    OUT xacts_per_s_at_reference double precision,
    OUT xacts_per_s_cpu_limit double precision,
    OUT cpu_capped boolean,
    OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_what_if'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;
COMMENT ON FUNCTION storage_wait_what_if(interval, double precision, double precision) IS
  'The window''s transactions projected to other read and WAL flush latencies (NULL: the reference settings), with the CPU cap';
REVOKE ALL ON FUNCTION storage_wait_what_if(interval, double precision, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage_wait_what_if(interval, double precision, double precision) TO pg_monitor;

-- ---- the volume (storage_device_stats, storage_probe_latency) -----------------------------

CREATE FUNCTION storage_device_stats(
    "window" interval DEFAULT interval '5 minutes',
    OUT device text,
    OUT mount_point text,
    OUT roles text[],
    OUT reads_per_s double precision,
    OUT writes_per_s double precision,
    OUT read_mb_per_s double precision,
    OUT write_mb_per_s double precision,
    OUT read_await_ms double precision,
    OUT write_await_ms double precision,
    OUT flushes_per_s double precision,
    OUT flush_await_ms double precision,
    OUT queue_depth_avg double precision,
    OUT util_pct double precision,
    OUT iops_limit double precision,
    OUT throughput_limit_mb_per_s double precision,
    OUT at_limit_pct double precision,
    OUT pg_read_latency_ms double precision,
    OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_device_stats'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;
CREATE VIEW storage_device_stats AS SELECT * FROM storage_device_stats();
COMMENT ON FUNCTION storage_device_stats(interval) IS
    'The block devices under the data directory, pg_wal and the tablespaces over a window: iostat -x figures, limits, and PostgreSQL''s read latency beside the device''s';
REVOKE ALL ON FUNCTION storage_device_stats(interval) FROM PUBLIC;
REVOKE ALL ON storage_device_stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage_device_stats(interval) TO pg_monitor;
GRANT SELECT ON storage_device_stats TO pg_monitor;

-- The opt-in probe (pg_storage_wait.probe): per-read latency percentiles of one random 8 kB
-- O_DIRECT read per probe_interval per data/tablespace device.
CREATE FUNCTION storage_probe_latency(
    "window" interval DEFAULT interval '5 minutes',
    OUT device text,
    OUT mount_point text,
    OUT roles text[],
    OUT probes bigint,
    OUT latency_p50_ms double precision,
    OUT latency_p95_ms double precision,
    OUT latency_p99_ms double precision,
    OUT latency_p999_ms double precision,
    OUT latency_max_ms double precision,
    OUT probe_file text,
    OUT reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_probe_latency'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;
CREATE VIEW storage_probe_latency AS SELECT * FROM storage_probe_latency();
COMMENT ON FUNCTION storage_probe_latency(interval) IS
    'The probe''s true per-read latency (p50/p95/p99/p99.9/max) of each data and tablespace device over a window; needs pg_storage_wait.probe';
REVOKE ALL ON FUNCTION storage_probe_latency(interval) FROM PUBLIC;
REVOKE ALL ON storage_probe_latency FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage_probe_latency(interval) TO pg_monitor;
GRANT SELECT ON storage_probe_latency TO pg_monitor;

-- ---- the five symptoms and the report -----------------------------------------------------

-- Five symptoms that look like different problems and often share one cause, storage
-- (README: "The five symptoms"): exactly one row each.
CREATE FUNCTION storage_wait_symptoms(
    "window" interval DEFAULT interval '1 hour',
    OUT symptom text,
    OUT status text,
    OUT storage_implicated boolean,
    OUT evidence text,
    OUT metric text,
    OUT value double precision,
    OUT baseline double precision,
    OUT unit text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_symptoms'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT ROWS 5;
CREATE VIEW storage_wait_symptoms AS SELECT * FROM storage_wait_symptoms();

-- The whole diagnosis as plain text for psql: at most 40 lines of at most 100 columns.
CREATE FUNCTION storage_wait_report(
    "window" interval DEFAULT interval '15 minutes',
    OUT line text)
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'storage_wait_report'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT ROWS 40;

COMMENT ON FUNCTION storage_wait_symptoms(interval) IS
    'slow ingestion, inconsistent read latency, delayed autovacuum, slower checkpoints, replication lag: status and evidence';
COMMENT ON FUNCTION storage_wait_report(interval) IS
    'the storage diagnosis as a plain-text report, one line per row';
REVOKE ALL ON FUNCTION storage_wait_symptoms(interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_report(interval) FROM PUBLIC;
REVOKE ALL ON storage_wait_symptoms FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage_wait_symptoms(interval) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_report(interval) TO pg_monitor;
GRANT SELECT ON storage_wait_symptoms TO pg_monitor;

-- ---- access: readers for pg_monitor only --------------------------------------------------

REVOKE ALL ON FUNCTION storage_wait_summary(interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_history(interval, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_ticks(timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_breakdown(interval) FROM PUBLIC;
REVOKE ALL ON storage_wait_summary, storage_wait_breakdown FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage_wait_summary(interval) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_history(interval, interval) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_status() TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_ticks(timestamptz) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_breakdown(interval) TO pg_monitor;
GRANT SELECT ON storage_wait_summary, storage_wait_breakdown TO pg_monitor;
