# A commit waiting for a synchronous standby is its own category. With the standby's WAL flush
# slowed (the latency-injection library preloaded into the standby only), the primary's
# sessions spend their time in IPC:SyncRep: sync_replication dominates and the verdict is
# replication-bound, with a hint naming quorum commit and the standbys' WAL devices.
#
# pgsw-tap: alone (its timings assume a quiet machine: test/prove_in_groups.sh)
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $inject_dir = tempdir(CLEANUP => 1);
system("make -s -C '$FindBin::RealBin/../inject' O='$inject_dir' '$inject_dir/pgsw_inject.so' >/dev/null") == 0
  or BAIL_OUT('could not build the latency injection library');
my $control = "$inject_dir/latency.conf";
PostgreSQL::Test::Utils::append_to_file($control, "sync 10000\nwrite 2000\n");

# Synchronous replication is switched on only once the standby streams: with it on before,
# every commit (CREATE EXTENSION, pgbench -i) would wait for a standby that does not exist yet.
# allows_streaming lowers max_connections to 10: room for the 16 clients.
my $primary = new_pgsw_node('primary', init => { allows_streaming => 1 }, conf => q{
fsync = on
max_connections = 40
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
$primary->command_ok(['pgbench', '-i', '-s', '1', '-q', $primary->connstr('postgres')], 'pgbench -i');
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('sync_standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', 'fsync = on');
{
	# The standby's WAL device: +10 ms per flush, +2 ms per write.
	local $ENV{LD_PRELOAD} = "$inject_dir/pgsw_inject.so";
	local $ENV{PGSW_INJECT_CONFIG} = $control;
	$standby->start;
}
ok(poll_until($primary, q{SELECT count(*) = 1 FROM pg_stat_replication WHERE state = 'streaming'}),
	'the standby streams');
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'ANY 1 (sync_standby)'");
$primary->reload;
ok(poll_until($primary, q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')}),
	'the standby is synchronous');

my $since = $primary->safe_psql('postgres', 'SELECT now()');
$primary->command_ok([ 'pgbench', '-n', '-c', '16', '-j', '2', '-T', '6', '-b', 'simple-update',
	$primary->connstr('postgres') ], 'pgbench on the primary');
my ($verdict, $sync_rep_pct, $storage_pct, $hint) = split /\|/, $primary->safe_psql('postgres', qq{
	SELECT verdict, sync_rep_pct, storage_wait_pct, hint
	FROM storage_wait_summary(now() - '$since'::timestamptz)});
diag("verdict $verdict, sync_rep $sync_rep_pct %, storage $storage_pct %; $hint");
my $largest = $primary->safe_psql('postgres', qq{
	SELECT component FROM storage_wait_breakdown(now() - '$since'::timestamptz)
	ORDER BY samples DESC LIMIT 1});
is($largest, 'sync_replication', 'sync_replication is the largest component');
cmp_ok($sync_rep_pct, '>=', 50, 'most of the active time waits for the standby');
is($verdict, 'replication-bound', 'the verdict is replication-bound');
like($hint, qr/ANY 1/, 'the hint names quorum commit');
is($primary->safe_psql('postgres', qq{
	SELECT count(*) FROM storage_wait_events(now() - '$since'::timestamptz)
	WHERE wait_event = 'SyncRep' AND wait_category = 'sync_replication'}), '1',
	'IPC:SyncRep is counted as sync_replication in the wait profile');

$standby->stop;
$primary->stop;
done_testing();
