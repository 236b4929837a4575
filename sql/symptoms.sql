-- The five symptoms and the report: shape on a quiet server, bad windows, access.
SELECT pg_sleep(1);

-- Exactly five rows, in order, none present on a quiet server; unknown rows say why and
-- leave storage_implicated NULL.
SELECT symptom, status IN ('ok', 'watch', 'unknown') AS not_present,
       (status = 'unknown') = (storage_implicated IS NULL) AS null_when_unknown,
       length(evidence) > 10 AS has_evidence, metric, unit
FROM storage_wait_symptoms();
SELECT count(*) AS rows_in_view FROM storage_wait_symptoms;
SELECT count(*) AS rows_short_window FROM storage_wait_symptoms('10 seconds');
SELECT count(*) AS rows_all_history FROM storage_wait_symptoms('1000 years');

-- The report: at most 40 lines of at most 100 columns, every section.
SELECT count(*) BETWEEN 10 AND 40 AS lines_ok, max(length(line)) <= 100 AS width_ok
FROM storage_wait_report();
SELECT count(*) FILTER (WHERE line LIKE 'pg_storage_wait report:%') AS title,
       count(*) FILTER (WHERE line LIKE 'Verdict: %') AS verdict,
       count(*) FILTER (WHERE line LIKE 'Where a transaction''s time goes%') AS breakdown,
       count(*) FILTER (WHERE line = 'The volume:') AS volume,
       count(*) FILTER (WHERE line LIKE 'The five symptoms%') AS symptoms,
       count(*) FILTER (WHERE line = 'Next steps:') AS next_steps
FROM storage_wait_report('1 minute');
-- Called as a scalar set-returning function too; its length follows the server's state (which
-- symptoms have evidence, which next steps apply), always within the 40-line budget.
SELECT count(*) BETWEEN 5 AND 40 AS report_as_column FROM (SELECT storage_wait_report()) r;

-- Bad windows: 22023, as everywhere.
\set VERBOSITY sqlstate
SELECT * FROM storage_wait_symptoms(NULL);
SELECT * FROM storage_wait_symptoms('0 seconds');
SELECT * FROM storage_wait_symptoms('-1 minute');
SELECT * FROM storage_wait_symptoms('-1000 years');
SELECT * FROM storage_wait_report(NULL);
SELECT * FROM storage_wait_report('0 seconds');
SELECT * FROM storage_wait_report('-5 minutes');
\set VERBOSITY default

-- Readers for pg_monitor only.
CREATE ROLE pgsw_symptoms_plain LOGIN;
CREATE ROLE pgsw_symptoms_monitor LOGIN IN ROLE pg_monitor;
SET ROLE pgsw_symptoms_plain;
SELECT count(*) FROM storage_wait_symptoms();
SELECT count(*) FROM storage_wait_symptoms;
SELECT count(*) FROM storage_wait_report();
RESET ROLE;
SET ROLE pgsw_symptoms_monitor;
SELECT count(*) AS monitor_symptoms FROM storage_wait_symptoms;
SELECT count(*) > 0 AS monitor_report FROM storage_wait_report();
RESET ROLE;
DROP ROLE pgsw_symptoms_plain;
DROP ROLE pgsw_symptoms_monitor;
