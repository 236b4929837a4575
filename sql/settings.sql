-- Bad settings are refused with a clear message.
SET pg_storage_wait.sample_interval = 50;
SET pg_storage_wait.tick_records = 10;
ALTER SYSTEM SET pg_storage_wait.sample_interval = 5;
ALTER SYSTEM SET pg_storage_wait.sample_interval = '2 hours';
ALTER SYSTEM SET pg_storage_wait.sample_interval = 'fast';
ALTER SYSTEM SET pg_storage_wait.io_read_interval = 0;
ALTER SYSTEM SET pg_storage_wait.io_read_interval = '2 hours';
ALTER SYSTEM SET pg_storage_wait.io_read_interval = 'often';
ALTER SYSTEM SET pg_storage_wait.tick_records = 10;
ALTER SYSTEM SET pg_storage_wait.rollup_records = 0;
ALTER SYSTEM SET pg_storage_wait.entries_per_tick = 1;
ALTER SYSTEM SET pg_storage_wait.save_history = 'maybe';
ALTER SYSTEM SET pg_storage_wait.no_such_setting = 1;
-- Units are accepted.
ALTER SYSTEM SET pg_storage_wait.sample_interval = '1s';
ALTER SYSTEM RESET pg_storage_wait.sample_interval;
ALTER SYSTEM SET pg_storage_wait.io_read_interval = '1s';
ALTER SYSTEM RESET pg_storage_wait.io_read_interval;
