\echo Use "CREATE EXTENSION pg_storage_wait" to load this file. \quit

-- Every reader is for monitoring roles only: REVOKEd from PUBLIC, GRANTed to pg_monitor.
-- None exposes query text.

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
    OUT rollups_retained bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_status'
LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1;

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
    OUT counters_read boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_ticks'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

CREATE FUNCTION storage_wait_samples(
    since timestamptz DEFAULT now() - interval '5 minutes',
    OUT sample_time timestamptz,
    OUT backend_type text,
    OUT state text,
    OUT wait_event_type text,
    OUT wait_event text,
    OUT wait_category text,
    OUT datid oid,
    OUT samples integer,
    OUT wait_event_info bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_samples'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

CREATE FUNCTION storage_io_deltas(
    since timestamptz DEFAULT now() - interval '5 minutes',
    OUT sample_time timestamptz,
    OUT interval_ms double precision,
    OUT backend_type text,
    OUT object text,
    OUT context text,
    OUT operation text,
    OUT ops bigint,
    OUT time_ms double precision,
    OUT bytes bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_io_deltas'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

CREATE FUNCTION storage_wait_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'storage_wait_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

REVOKE ALL ON FUNCTION storage_wait_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_ticks(timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_samples(timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_io_deltas(timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_reset() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage_wait_status() TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_ticks(timestamptz) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_samples(timestamptz) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_io_deltas(timestamptz) TO pg_monitor;

-- The answer: is the server waiting on storage? See README "How to read the score".
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
    OUT source text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_summary'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;

CREATE FUNCTION storage_wait_events(
    "window" interval DEFAULT interval '5 minutes',
    OUT wait_event_type text,
    OUT wait_event text,
    OUT backend_type text,
    OUT samples bigint,
    OUT share_pct double precision,
    OUT is_storage boolean,
    OUT wait_category text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_events'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

CREATE FUNCTION storage_io_latency(
    "window" interval DEFAULT interval '5 minutes',
    OUT backend_type text,
    OUT object text,
    OUT context text,
    OUT operation text,
    OUT ops bigint,
    OUT ops_per_s double precision,
    OUT latency_avg_ms double precision,
    OUT latency_p50_ms double precision,
    OUT latency_p95_ms double precision,
    OUT latency_p99_ms double precision,
    OUT latency_max_ms double precision,
    OUT bytes_per_s double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_io_latency'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

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
    OUT wal_fsync_latency_avg_ms double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_history'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

CREATE FUNCTION storage_wait_queries(
    "window" interval DEFAULT interval '5 minutes',
    OUT queryid bigint,
    OUT dbid oid,
    OUT samples bigint,
    OUT storage_samples bigint,
    OUT storage_pct double precision,
    OUT share_of_storage_pct double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'storage_wait_queries'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;

-- Views over the default windows, for psql and dashboards (Grafana, postgres_exporter).
CREATE VIEW storage_wait_summary AS SELECT * FROM storage_wait_summary();
CREATE VIEW storage_wait_events AS SELECT * FROM storage_wait_events();
CREATE VIEW storage_io_latency AS SELECT * FROM storage_io_latency();
CREATE VIEW storage_wait_queries AS SELECT * FROM storage_wait_queries();

REVOKE ALL ON FUNCTION storage_wait_summary(interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_events(interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_io_latency(interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_history(interval, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION storage_wait_queries(interval) FROM PUBLIC;
REVOKE ALL ON storage_wait_summary, storage_wait_events, storage_io_latency,
    storage_wait_queries FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage_wait_summary(interval) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_events(interval) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_io_latency(interval) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_history(interval, interval) TO pg_monitor;
GRANT EXECUTE ON FUNCTION storage_wait_queries(interval) TO pg_monitor;
GRANT SELECT ON storage_wait_summary, storage_wait_events, storage_io_latency,
    storage_wait_queries TO pg_monitor;
