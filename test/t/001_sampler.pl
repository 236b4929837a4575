# The sampler ticks on schedule, follows a reload of its interval, survives a counter reset
# with no negative or absurd delta, and records exactly what pg_stat_io recorded.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use PgswTest;

# fsync = on: the test framework turns it off, and WAL syncs are part of the ground truth.
my $node = new_pgsw_node('sampler', interval => '1s', conf => 'fsync = on');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');

# --- about one tick a second at the default interval -------------------------------------
ok(wait_for_ticks($node, 1), 'sampler ticks');
my ($t0, $ticks0) = (time, status_value($node, 'ticks'));
sleep 5;
my ($t1, $ticks1) = (time, status_value($node, 'ticks'));
my $rate = ($ticks1 - $ticks0) / ($t1 - $t0);
cmp_ok($rate, '>', 0.7, "about one tick per second (measured $rate/s)");
cmp_ok($rate, '<', 1.3, "no more than about one tick per second (measured $rate/s)");
is($node->safe_psql('postgres',
	"SELECT count(*) FROM storage_wait_ticks(now() - interval '4 seconds')
	 WHERE interval_ms NOT BETWEEN 900 AND 1100 AND NOT baseline"),
	'0', 'ticks are one second apart (absolute deadlines)');

# --- a reload of the interval takes effect -----------------------------------------------
$node->append_conf('postgresql.conf', "pg_storage_wait.sample_interval = '100ms'");
$node->reload;
ok(poll_until($node, 'SELECT sample_interval_ms = 100 FROM storage_wait_status()', 10),
	'reload changes the interval');
($t0, $ticks0) = (time, status_value($node, 'ticks'));
sleep 3;
($t1, $ticks1) = (time, status_value($node, 'ticks'));
$rate = ($ticks1 - $ticks0) / ($t1 - $t0);
cmp_ok($rate, '>', 7, "about ten ticks per second after reload (measured $rate/s)");
cmp_ok($rate, '<', 12, "no burst after reload (measured $rate/s)");

# --- io_read_interval: counters are read every third tick at 100 ms / 300 ms ----------------
# The rest of the file runs with it, so the ground truth below also checks that skipped ticks
# lose nothing (their I/O lands in the next reading's deltas).
$node->append_conf('postgresql.conf', "pg_storage_wait.io_read_interval = '300ms'");
$node->reload;
ok(poll_until($node, "SELECT current_setting('pg_storage_wait.io_read_interval') = '300ms'", 10),
	'reload changes io_read_interval');
wait_for_ticks($node, 5);
my $read_since = $node->safe_psql('postgres', 'SELECT now()');
sleep 3;
my ($reading, $skipping, $skipping_with_io) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE counters_read), count(*) FILTER (WHERE NOT counters_read),
	       count(*) FILTER (WHERE NOT counters_read
	                          AND (reads > 0 OR wal_syncs > 0 OR wal_source IS NOT NULL))
	FROM storage_wait_ticks('$read_since')});
my $share = $reading / ($reading + $skipping);
cmp_ok($share, '>', 0.25, "about every third tick reads the counters ($reading of " . ($reading + $skipping) . ')');
cmp_ok($share, '<', 0.42, "two ticks in three skip them ($skipping skipped)");
is($skipping_with_io, '0', 'a tick that skips the counters records no I/O');

# --- ground truth: recorded deltas add up to pg_stat_io's own change ------------------------
$node->command_ok(['pgbench', '-i', '-s', '5', '-q', $node->connstr('postgres')],
	'pgbench init');
$node->safe_psql('postgres', 'CHECKPOINT');

# The cells compared: client backends' relation reads, and WAL syncs with their time.
my $io_cells = q{
	SELECT backend_type || '/' || object || '/' || context AS cell,
	       reads, read_time
	FROM pg_stat_io
	WHERE backend_type = 'client backend' AND object = 'relation' AND reads IS NOT NULL
	ORDER BY 1};
my $wal_sql = $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000
  ? q{SELECT sum(fsyncs), sum(fsync_time) FROM pg_stat_io
      WHERE object = 'wal' AND context = 'normal'}
  : q{SELECT wal_sync, wal_sync_time FROM pg_stat_wal};

# A snapshot of the counters that stays still across one tick, so that tick saw exactly it.
sub quiet_snapshot
{
	for my $attempt (1 .. 20)
	{
		sleep 2;    # backends flush pending stats within a second of going idle
		my $before = $node->safe_psql('postgres', $io_cells) . "\n" . $node->safe_psql('postgres', $wal_sql);
		wait_for_ticks($node, 4);    # at least one of them reads the counters
		my $after = $node->safe_psql('postgres', $io_cells) . "\n" . $node->safe_psql('postgres', $wal_sql);
		return ($before, status_value($node, 'last_tick_at')) if $before eq $after;
	}
	die 'counters never stood still';
}

my ($snap0, $since) = quiet_snapshot();
$node->command_ok(['pgbench', '-c', '4', '-j', '2', '-T', '4', '-n', $node->connstr('postgres')],
	'pgbench run');
my ($snap1, $until) = quiet_snapshot();

sub parse_snapshot
{
	my ($text) = @_;
	my (%cells, $wal);
	for my $line (split /\n/, $text)
	{
		my @f = split /\|/, $line;
		if (@f == 3) { $cells{ $f[0] } = [ $f[1], $f[2] ]; }
		elsif (@f == 2) { $wal = [ @f ]; }
	}
	return (\%cells, $wal);
}
my ($cells0, $wal0) = parse_snapshot($snap0);
my ($cells1, $wal1) = parse_snapshot($snap1);

my $recorded = $node->safe_psql('postgres', qq{
	SELECT backend_type || '/' || object || '/' || context, sum(ops), sum(time_ms)
	FROM storage_io_deltas('$since') WHERE sample_time <= '$until'
	  AND backend_type = 'client backend' AND object = 'relation' AND operation = 'read'
	GROUP BY 1 ORDER BY 1});
my %recorded = map { my @f = split /\|/; ($f[0] => [ $f[1], $f[2] ]) } split /\n/, $recorded;
my $compared = 0;
for my $cell (sort keys %$cells1)
{
	my $reads = $cells1->{$cell}[0] - $cells0->{$cell}[0];
	my $time = $cells1->{$cell}[1] - $cells0->{$cell}[1];
	next if $reads == 0;
	$compared++;
	is($recorded{$cell}[0] // 0, $reads, "$cell: recorded reads equal pg_stat_io's change");
	cmp_ok(abs(($recorded{$cell}[1] // 0) - $time), '<', 0.01,
		"$cell: recorded read time equals pg_stat_io's change ($time ms)");
}
cmp_ok($compared, '>=', 1, 'at least one read cell moved during pgbench');
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM storage_io_deltas('$since') d
	JOIN storage_wait_ticks('$since') t USING (sample_time) WHERE NOT t.counters_read}), '0',
	'I/O deltas only on ticks that read the counters');

my ($syncs, $sync_ms) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT sum(wal_syncs), sum(wal_sync_time_ms) FROM storage_wait_ticks('$since')
	WHERE sample_time <= '$until'});
is($syncs, $wal1->[0] - $wal0->[0], 'recorded WAL syncs equal the server counter change');
cmp_ok(abs($sync_ms - ($wal1->[1] - $wal0->[1])), '<', 0.01,
	'recorded WAL sync time equals the server counter change');
cmp_ok($syncs, '>', 0, 'pgbench caused WAL syncs');

# --- a counter reset mid-run gives no negative or absurd delta --------------------------------
my $resets0 = status_value($node, 'counter_resets');
my $reset_at = $node->safe_psql('postgres', 'SELECT now()');
$node->command_ok(['pgbench', '-c', '2', '-T', '2', '-n', $node->connstr('postgres')], 'load before reset');
# 16/17 keep WAL counters apart (pg_stat_wal): reset both, in one statement. A tick can still
# fall between the two resets, and then each is (rightly) flagged on its own tick.
my $resets_issued = $node->safe_psql('postgres', 'SHOW server_version_num') < 180000 ? 2 : 1;
$node->safe_psql('postgres', $resets_issued == 2
	? "SELECT pg_stat_reset_shared('io'), pg_stat_reset_shared('wal')"
	: "SELECT pg_stat_reset_shared('io')");
$node->command_ok(['pgbench', '-c', '2', '-T', '2', '-n', $node->connstr('postgres')], 'load after reset');
wait_for_ticks($node, 3);
cmp_ok(status_value($node, 'counter_resets'), '>', $resets0, 'the reset was detected');
my $flagged = $node->safe_psql('postgres', qq{
	SELECT count(*) FROM storage_wait_ticks('$reset_at') WHERE counters_reset});
ok($flagged >= 1 && $flagged <= $resets_issued,
	"one tick per reset is flagged as a counter reset ($flagged flagged, $resets_issued issued)");
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM storage_io_deltas('$reset_at')
	WHERE ops < 0 OR ops > 10000000 OR time_ms < 0 OR time_ms > 3600000}), '0',
	'no negative or absurd delta across the reset');

$node->stop;
done_testing();
