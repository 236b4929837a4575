# Private structures fail safe (issue 17). The sampler reads the proc array and the backend
# status array through layouts taken from the server's headers, checked at start. A check that
# fails (a server this build does not match) must never be misread:
#   - the proc array: one LOG line with the reason, and the tick walks every process slot
#     instead (slower, same answer);
#   - the backend status array (nothing can be classified without it): one LOG line, the reason
#     in storage_wait_status().worker_disabled_reason, and the sampler stays down: no restart
#     every second filling the log.
# pg_storage_wait.test_fail_lookup (test only) makes a lookup report a mismatch.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $node = new_pgsw_node('lookups', conf => 'pg_storage_wait.test_fail_lookup = proc_array');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
ok(wait_for_ticks($node, 3), 'proc array mismatch: the sampler ticks');
my $log = slurp_file($node->logfile);
my @reasons = $log =~ /(the proc array is not laid out as this build expects; the sampler walks every process slot)/g;
is(scalar @reasons, 1, 'one LOG line says why');
like($log, qr/DETAIL:  forced by pg_storage_wait\.test_fail_lookup/, 'with the reason');
like($log, qr/sampler started \(interval 100 ms, walking every process slot, rseq /,
	'the sampler walks every slot');
# Same answer as the proc-array walk (007): every process pg_stat_activity lists but the sampler.
ok(poll_until($node, every_process_seen_sql(), 30), 'a tick still sees every process');
is(status_value($node, 'worker_disabled_reason'), '', 'not disabled');

# --- the backend status array: the sampler stops for good ------------------------------------
$node->stop;
$node->append_conf('postgresql.conf', 'pg_storage_wait.test_fail_lookup = backend_status');
my $offset = -s $node->logfile;
$node->start;
ok( poll_until(
		$node, 'SELECT worker_disabled_reason IS NOT NULL FROM storage_wait_status()', 30),
	'backend status mismatch: storage_wait_status() says the sampler is disabled');
is( status_value($node, 'worker_disabled_reason'),
	'the backend status array is not laid out as this build expects '
	  . '(forced by pg_storage_wait.test_fail_lookup)',
	'with the reason');
# The postmaster restarts a failed sampler after bgw_restart_time (1 s, module.cpp): an exit it
# would restart shows up as more LOG lines within 4 s.
sleep(4);
my $after = substr(slurp_file($node->logfile), $offset);
my @stops = $after =~ /(the sampler stops and will not restart)/g;
is(scalar @stops, 1, 'one LOG line, and no restart loop');
unlike($after, qr/pg_storage_wait sampler started/, 'the sampler never started ticking');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pg_storage_wait sampler'"),
	'0',
	'no sampler process is left');
# The server itself runs on: sessions work.
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is unaffected');
$node->stop;

done_testing();
