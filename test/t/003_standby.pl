# The sampler starts at consistent state, so it runs and records on a hot standby.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $primary = new_pgsw_node('primary', init => { allows_streaming => 1 });
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres',
	'CREATE TABLE t AS SELECT g AS id, repeat(\'x\', 200) AS pad FROM generate_series(1, 50000) g');
$primary->wait_for_replay_catchup($standby);

ok(wait_for_ticks($standby, 5), 'the sampler ticks on the standby');
is(status_value($standby, 'in_recovery'), 't', 'the standby reports in_recovery');
is(status_value($primary, 'in_recovery'), 'f', 'the primary does not');
is($standby->safe_psql('postgres',
	"SELECT bool_and(in_recovery) FROM storage_wait_ticks(now() - interval '1 minute')"),
	't', 'standby ticks are flagged in recovery');
ok($standby->safe_psql('postgres',
	"SELECT count(*) > 0 FROM storage_wait_samples(now() - interval '1 minute')
	 WHERE backend_type IN ('startup', 'walreceiver')"),
	'the standby samples its startup and walreceiver processes');

# A read on the standby is recorded as standby I/O.
$standby->safe_psql('postgres', 'SELECT count(*) FROM t');
ok(poll_until($standby,
	"SELECT count(*) > 0 FROM storage_io_deltas(now() - interval '1 minute')
	 WHERE backend_type = 'client backend' AND operation IN ('read', 'hit')", 30),
	'client reads on the standby are recorded');

# Promotion mid-run (issue 18): the same worker keeps sampling through it, the ticks after it
# are no longer in recovery, and the history recorded as a standby is kept.
my $pid_before = status_value($standby, 'worker_pid');
my $starts_before = status_value($standby, 'worker_starts');
my $oldest = $standby->safe_psql('postgres', "SELECT min(sample_time) FROM storage_wait_ticks('-infinity')");
$primary->stop;
$standby->promote;
ok(poll_until($standby, "SELECT in_recovery = false FROM storage_wait_status()", 30),
	'after promotion the ticks are no longer in recovery');
ok(wait_for_ticks($standby, 5), 'the promoted server keeps ticking');
is(status_value($standby, 'worker_pid'), $pid_before, 'the same sampler runs through promotion');
is(status_value($standby, 'worker_starts'), $starts_before, 'no worker restart');
is($standby->safe_psql('postgres', "SELECT min(sample_time) FROM storage_wait_ticks('-infinity')"),
	$oldest, 'the standby history is kept');
is($standby->safe_psql('postgres', q{
	SELECT count(*) FROM storage_wait_ticks('-infinity') WHERE interval_ms < 0}), '0',
	'no negative interval across promotion');
$standby->safe_psql('postgres', 'CREATE TABLE after_promotion AS SELECT g FROM generate_series(1, 10000) g');
ok(poll_until($standby,
	"SELECT coalesce(sum(xacts), 0) > 0 FROM storage_wait_ticks(now() - interval '30 seconds')", 30),
	'the promoted server records its writes');

$standby->stop;
done_testing();
