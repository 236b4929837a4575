-- Run on a server WITHOUT shared_preload_libraries = pg_storage_wait: CREATE EXTENSION works,
-- and every function raises SQLSTATE 55000 with a hint naming shared_preload_libraries.
CREATE EXTENSION pg_storage_wait;
SELECT * FROM storage_wait_status();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_ticks();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_samples();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_io_deltas();
\echo :LAST_ERROR_SQLSTATE
SELECT storage_wait_reset();
\echo :LAST_ERROR_SQLSTATE
DROP EXTENSION pg_storage_wait;
