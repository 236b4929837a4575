# A server whose data directory and WAL live in RAM (tmpfs), running flat out with 16 clients:
# sessions queue behind WAL flushes and touch data-file reads, but every one takes microseconds.
# Faster storage cannot help such a server: it must never be called storage-bound, and the
# hint must say so. (Issue: at 38,000 commits/s the share-of-samples rule called RAM "storage".)
#
# pgsw-tap: alone (its timings assume a quiet machine: test/prove_in_groups.sh)
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

plan skip_all => 'no writable /dev/shm (tmpfs) for a RAM-backed data directory'
  unless -d '/dev/shm' && -w '/dev/shm';

# The data directory itself on tmpfs: a symlink to an empty folder there, which initdb fills.
my $node = PostgreSQL::Test::Cluster->new('ram');
my $ram = tempdir(DIR => '/dev/shm', CLEANUP => 1);
make_path(dirname($node->data_dir));
symlink($ram, $node->data_dir) or die "symlink: $!";
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_storage_wait'
track_io_timing = on
track_wal_io_timing = on
pg_storage_wait.sample_interval = '100ms'
fsync = on
shared_buffers = 16MB
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
$node->command_ok(['pgbench', '-i', '-s', '10', '-q', $node->connstr('postgres')], 'pgbench -i');

my $random_update = $node->basedir . '/random_update.sql';
PostgreSQL::Test::Utils::append_to_file($random_update, <<'SQL');
\set aid random(1, 100000 * :scale)
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
SQL

for my $workload ([ 'TPC-B-like read-write', [ '-b', 'tpcb-like' ] ],
	[ 'random single-row updates', [ '-f', $random_update ] ])
{
	my ($label, $args) = @$workload;
	my $since = $node->safe_psql('postgres', 'SELECT now()');
	$node->command_ok([ 'pgbench', '-n', '-s', '10', '-c', '16', '-j', '2', '-T', '6', @$args,
		$node->connstr('postgres') ], "$label: pgbench");
	sleep 2;    # backends publish their counters within a second of going idle
	my ($verdict, $score, $storage_pct, $read_ms, $fsync_ms, $xacts, $hint) = split /\|/,
	  $node->safe_psql('postgres', qq{
		SELECT verdict, coalesce(storage_bound_score::text, 'NULL'), storage_wait_pct,
		       coalesce(read_latency_avg_ms::text, 'NULL'),
		       coalesce(wal_fsync_latency_avg_ms::text, 'NULL'), xacts_per_s, hint
		FROM storage_wait_summary(now() - '$since'::timestamptz)});
	diag("$label: $xacts xacts/s, verdict $verdict, score $score, storage waits $storage_pct %, "
		  . "reads $read_ms ms, WAL flushes $fsync_ms ms; hint: $hint");
	isnt($verdict, 'storage-bound', "$label on tmpfs: not storage-bound");
	cmp_ok($score, '<', 20, "$label on tmpfs: faster storage would remove little time");
	like($hint, qr/faster storage will not help/, "$label on tmpfs: the hint says so")
	  if $storage_pct > 0;
}

$node->stop;
done_testing();
