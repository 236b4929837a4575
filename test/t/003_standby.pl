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

$standby->stop;
$primary->stop;
done_testing();
