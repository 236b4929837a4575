# Many sessions read the rings in a loop while the sampler ticks every 10 ms: no reader errors,
# no torn tick (the ring protocol hands out whole ticks only), and the worker is never blocked.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use PgswTest;

my $node = new_pgsw_node('readers', interval => '10ms',
	conf => "pg_storage_wait.tick_records = 500\nmax_connections = 40");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
ok(wait_for_ticks($node, 50), 'sampler ticks at 10 ms');

# Each reader checks every tick it reads for internal consistency: the categories add up, the
# time moves forward, and each tick's wait groups sum to the processes it sampled.
my $reader_sql = q{
DO $$
DECLARE bad int; loops int := 0;
BEGIN
  WHILE loops < 400 LOOP
    SELECT count(*) INTO bad FROM storage_wait_ticks(now() - interval '3 seconds')
    WHERE active_samples < storage_samples + cpu_samples + lock_samples
       OR interval_ms < 0 OR processes <= 0;
    IF bad > 0 THEN RAISE EXCEPTION 'inconsistent tick'; END IF;
    SELECT count(*) INTO bad FROM (
      SELECT s.sample_time, sum(s.samples) AS sampled
      FROM storage_wait_samples(now() - interval '3 seconds') s GROUP BY 1) g
      JOIN storage_wait_ticks(now() - interval '3 seconds') t USING (sample_time)
    WHERE g.sampled <> t.processes;
    IF bad > 0 THEN RAISE EXCEPTION 'torn tick: groups do not add up'; END IF;
    PERFORM count(*) FROM storage_io_deltas(now() - interval '3 seconds');
    loops := loops + 1;
  END LOOP;
END $$;
};

my $ticks0 = status_value($node, 'ticks');
my $overruns0 = status_value($node, 'overruns');
my $t0 = time;
my @readers;
for my $i (1 .. 8)
{
	my ($stdout, $stderr) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $reader_sql ],
		'>', \$stdout, '2>', \$stderr);
	push @readers, [ $h, \$stdout, \$stderr ];
}
my $failures = 0;
for my $r (@readers)
{
	my ($h, $stdout, $stderr) = @$r;
	$h->finish;
	if ($h->result != 0) { $failures++; diag("reader failed: $$stderr"); }
}
my $elapsed = time - $t0;
my $ticks = status_value($node, 'ticks') - $ticks0;
is($failures, 0, '8 concurrent readers: no error, no torn tick');
my $expected = $elapsed / 0.010;
my $missed = status_value($node, 'overruns') - $overruns0;
diag(sprintf('%.1f s of reading: %d ticks (%.0f expected at 10 ms), %d overruns',
	$elapsed, $ticks, $expected, $missed));
cmp_ok($ticks + $missed, '>=', 0.9 * $expected,
	'every deadline was either met or counted as an overrun');
cmp_ok($ticks, '>=', 0.5 * $expected, 'the worker kept ticking while readers read');

$node->stop;
done_testing();
