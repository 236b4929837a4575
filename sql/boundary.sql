-- The C++/PostgreSQL boundary (issue 17). A C++ exception thrown inside an SQL function becomes
-- a PostgreSQL error with its SQLSTATE and hint once the C++ frames are gone (PGSW_SQL_FUNCTION,
-- src/pg/boundary.hpp), and the session goes on. The result's shape is checked against the
-- caller's declaration, by column name and type, before any row is written: a declaration the
-- library cannot fill (SQL objects and library of different versions) is refused, never misfilled.
SET client_min_messages = warning;  -- run alone or after the other files
CREATE EXTENSION IF NOT EXISTS pg_storage_wait;
RESET client_min_messages;

-- A column the library does not have: 0A000, with the way out in the hint.
CREATE FUNCTION pgsw_test_unknown_column(w interval DEFAULT '5 minutes')
  RETURNS TABLE (verdict text, no_such_column float8)
  AS '$libdir/pg_storage_wait', 'storage_wait_summary' LANGUAGE C;
SELECT * FROM pgsw_test_unknown_column('1 minute');
\echo :LAST_ERROR_SQLSTATE

-- A known column declared with another type: 42804.
CREATE FUNCTION pgsw_test_wrong_type(w interval DEFAULT '5 minutes')
  RETURNS TABLE (verdict integer, ticks bigint)
  AS '$libdir/pg_storage_wait', 'storage_wait_summary' LANGUAGE C;
SELECT * FROM pgsw_test_wrong_type('1 minute');
\echo :LAST_ERROR_SQLSTATE

-- A subset of the columns in another order is filled by name (how 1.0's declarations keep
-- working with the 1.1 library).
CREATE FUNCTION pgsw_test_subset(w interval DEFAULT '5 minutes')
  RETURNS TABLE (verdict text, ticks bigint)
  AS '$libdir/pg_storage_wait', 'storage_wait_summary' LANGUAGE C;
SELECT verdict IS NOT NULL AS verdict_filled, ticks IS NOT NULL AS ticks_filled
FROM pgsw_test_subset('1 minute');

-- The session survived both errors: the installed function answers.
SELECT count(*) AS rows FROM storage_wait_summary('1 minute');

DROP FUNCTION pgsw_test_unknown_column(interval), pgsw_test_wrong_type(interval),
  pgsw_test_subset(interval);
