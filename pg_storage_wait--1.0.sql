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
    OUT wal_source text)
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
