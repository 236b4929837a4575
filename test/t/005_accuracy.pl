# Ground truth: with latency injected into the server's file I/O (test/inject, LD_PRELOAD), the
# reported latencies, scores and verdicts match what was injected. Baselines are measured in the
# same run, on the mission's workload: random single-row updates of a table much larger than
# shared_buffers, 16 clients.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use PgswTest;

# Opt-in until its tolerances are settled on an idle machine (issue 5 is open): on a loaded
# 2-core machine the wake-up after each injected sleep adds 0.3-0.9 ms that "baseline +
# injected" does not yet account for.
plan skip_all => 'set PGSW_ACCURACY_TESTS=1 to run the latency-injection accuracy tests'
  unless $ENV{PGSW_ACCURACY_TESTS};

my $run_seconds = $ENV{PGSW_ACCURACY_SECONDS} // 8;

# --- the injection library, built for this machine's libc --------------------------------------
my $inject_dir = tempdir(CLEANUP => 1);
my $inject_src = "$FindBin::RealBin/../inject";
system("make -s -C '$inject_src' O='$inject_dir' '$inject_dir/pgsw_inject.so' >/dev/null") == 0
  or BAIL_OUT('could not build the latency injection library');
my $control = "$inject_dir/latency.conf";

sub inject
{
	my ($config) = @_;
	open my $fh, '>', "$control.tmp" or die $!;
	print $fh $config;
	close $fh;
	rename "$control.tmp", $control or die $!;
	usleep(300_000);    # the library looks at the file at most every 100 ms
}
inject('');

my $node = new_pgsw_node('accuracy', interval => '1s', conf => q{
fsync = on
shared_buffers = 16MB
max_connections = 40
autovacuum = off
checkpoint_timeout = 30min
max_wal_size = 4GB
});
# 18 reads through I/O workers (io_method = worker, 3 by default): with 16 clients sleeping in
# injected reads, three workers would queue them and the ground truth would include queueing.
# One worker per client keeps each read's latency what was injected.
$node->append_conf('postgresql.conf', 'io_workers = 16') if $node->pg_version >= 18;
{
	local $ENV{LD_PRELOAD} = "$inject_dir/pgsw_inject.so";
	local $ENV{PGSW_INJECT_CONFIG} = $control;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
my $pg18 = $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000;

# Scale 10: pgbench_accounts is ~130 MB, eight times shared_buffers, so most reads miss it and
# go to the (injected) file system.
$node->command_ok(['pgbench', '-i', '-s', '10', '-q', $node->connstr('postgres')], 'pgbench -i');
$node->safe_psql('postgres', 'VACUUM ANALYZE; CHECKPOINT');

my $scripts = tempdir(CLEANUP => 1);
sub script
{
	my ($name, $text) = @_;
	open my $fh, '>', "$scripts/$name" or die $!;
	print $fh $text;
	close $fh;
	return "$scripts/$name";
}
my $random_update = script('random_update.sql', <<'SQL');
\set aid random(1, 100000 * :scale)
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
SQL
my $hot_row_update = script('hot_row_update.sql', <<'SQL');
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1;
SQL
my $cached_select = script('cached_select.sql', <<'SQL');
\set aid random(1, 2000)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SQL

# The tick after which the counters stood still: a window starting there holds the run only.
sub quiet_tick
{
	sleep 2;    # backends flush their I/O counters within a second of going idle
	wait_for_ticks($node, 2);
	return status_value($node, 'last_tick_at');
}

sub pg_stat_io_reads
{
	return $node->safe_psql('postgres', q{
		SELECT sum(reads), sum(read_time) FROM pg_stat_io WHERE object = 'relation'});
}

# Run a workload and return the summary row of exactly its ticks, plus pg_stat_io's own view.
sub measure
{
	my ($label, $script, @extra) = @_;
	my $since = quiet_tick();
	my $io_before = pg_stat_io_reads();
	my $out = $node->pgbench_output($script, @extra);
	my $until = quiet_tick();
	my $io_after = pg_stat_io_reads();
	my ($r0, $t0) = split /\|/, $io_before;
	my ($r1, $t1) = split /\|/, $io_after;
	my %row = (label => $label, pgbench => $out,
		io_reads => $r1 - $r0, io_read_ms => $t1 - $t0);
	my @cols = qw(ticks backend_samples storage_wait_pct cpu_pct lock_pct top_storage_wait
	  reads_per_s read_latency_avg_ms read_latency_p50_ms read_latency_p95_ms read_latency_p99_ms
	  read_latency_max_ms wal_fsyncs_per_s wal_fsync_latency_avg_ms wal_fsync_latency_p50_ms
	  wal_fsync_latency_p95_ms storage_bound_score verdict);
	my $values = $node->safe_psql('postgres', 'SELECT ' . join(', ', map { "coalesce(${_}::text, 'NULL')" } @cols)
		  . " FROM storage_wait_summary(now() - '$since'::timestamptz)");
	@row{@cols} = split /\|/, $values;
	$row{since} = $since;
	$row{until} = $until;
	diag(sprintf('%-22s tps %-8s score %-5s %-13s read avg %s p50 %s p95 %s p99 %s | fsync avg %s p50 %s (%s/s) top %s',
		$label, ($out =~ /tps = ([\d.]+)/)[0] // '?', @row{qw(storage_bound_score verdict
		read_latency_avg_ms read_latency_p50_ms read_latency_p95_ms read_latency_p99_ms
		wal_fsync_latency_avg_ms wal_fsync_latency_p50_ms wal_fsyncs_per_s top_storage_wait)}));
	return \%row;
}

package PostgreSQL::Test::Cluster;
sub pgbench_output
{
	my ($self, $script, @extra) = @_;
	my ($stdout, $stderr);
	my $ok = IPC::Run::run(
		[ 'pgbench', '-n', '-c', '16', '-j', '2', '-T', $run_seconds, '-f', $script, @extra,
		  $self->connstr('postgres') ], '>', \$stdout, '2>', \$stderr);
	die "pgbench failed: $stderr" unless $ok;
	return $stdout;
}
package main;

sub within
{
	my ($got, $want, $tolerance, $name) = @_;
	my $ok = $got ne 'NULL' && abs($got - $want) <= $tolerance * $want;
	ok($ok, sprintf('%s: %s within %.0f %% of %.3f', $name, $got, $tolerance * 100, $want));
}

# --- baseline and two injected levels ----------------------------------------------------------
# The baseline device adds 1 us but still blocks: every read and fsync then includes the cost
# of sleeping and being woken (on 2 busy cores, a few hundred us), as with injected latency
# and as with a real device, so "baseline + injected" is the truth to compare with.
inject("read 1\nsync 1\n");
my $base = measure('baseline', $random_update);
# [ read us, sync us ]. Levels well above the device's own latency: a WAL fsync's real part
# grows when slower flushes batch more commits, so "baseline + injected" is the truth only when
# the injected part dominates.
my @levels = ([ 2000, 4000 ], [ 5000, 8000 ]);
my @injected;
for my $level (@levels)
{
	my ($read_us, $sync_us) = @$level;
	inject("read $read_us\nsync $sync_us\n");
	push @injected, measure("read $read_us us, sync $sync_us us", $random_update);
}
inject('');

for my $i (0 .. $#levels)
{
	my ($read_us, $sync_us) = @{ $levels[$i] };
	my $row = $injected[$i];
	my $label = "read +$read_us us, fsync +$sync_us us";
	within($row->{read_latency_p50_ms}, $base->{read_latency_p50_ms} + $read_us / 1000, 0.15,
		"$label: read p50 = baseline + injected");
	my $io_avg = $row->{io_reads} ? $row->{io_read_ms} / $row->{io_reads} : 0;
	within($row->{read_latency_avg_ms}, $io_avg, 0.02,
		"$label: read avg = pg_stat_io's own read_time/reads over the same ticks");
	within($row->{wal_fsync_latency_p50_ms}, $base->{wal_fsync_latency_p50_ms} + $sync_us / 1000, 0.15,
		"$label: WAL fsync p50 = baseline + injected");
	is($row->{verdict}, 'storage-bound', "$label: verdict storage-bound");
	cmp_ok($row->{storage_bound_score}, '>=', 70, "$label: score >= 70");
}
cmp_ok($injected[1]{read_latency_p50_ms}, '>', $injected[0]{read_latency_p50_ms},
	'more injected read latency reads as more latency');

# --- CPU-bound: read-only, in memory, asynchronous commit, no injection -------------------------
$node->safe_psql('postgres', 'SELECT count(*) FROM pgbench_accounts WHERE aid <= 2000');
my $cpu = measure('cached read-only', $cached_select);
is($cpu->{verdict}, 'cpu-bound', 'in-memory read-only workload: cpu-bound');
cmp_ok($cpu->{storage_bound_score}, '<=', 20, 'in-memory read-only workload: score <= 20');

# --- lock-bound: every client updates the same row, no injection ---------------------------------
my $lock = measure('hot-row updates', $hot_row_update);
is($lock->{verdict}, 'lock-bound', 'hot-row updates: lock-bound');

# --- a step from 0 to 5 ms mid-run shows within two ticks ----------------------------------------
{
	my $since = quiet_tick();
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '16', '-j', '2', '-T', '10', '-f', $random_update,
		  $node->connstr('postgres') ], '>', \my $out, '2>', \my $err);
	sleep 5;
	my $step_at = $node->safe_psql('postgres', 'SELECT now()');
	inject("read 5000\n");
	$bench->finish;
	inject('');
	my $first = $node->safe_psql('postgres', qq{
		SELECT min(sample_time) FROM storage_wait_history(now() - '$since'::timestamptz)
		WHERE sample_time > '$step_at' AND read_latency_avg_ms > $base->{read_latency_p50_ms} + 1.0});
	ok($first ne '', 'the step to 5 ms shows in storage_wait_history');
	my $ticks_after = $node->safe_psql('postgres', qq{
		SELECT count(*) FROM storage_wait_ticks('$step_at') WHERE sample_time <= '$first'});
	cmp_ok($ticks_after, '<=', 2, "the step shows within two ticks (tick $ticks_after after it)");
}

# --- a mixed distribution: the per-tick method sees the mean move, not the per-I/O tail --------
inject("read 95%:0,5%:20000\n");
my $mixed = measure('read 95%:0 5%:20ms', $random_update);
inject('');
# Each tick's mean read latency is baseline + 0.05 x 20 ms = +1 ms on average, with a spread
# between ticks of 20 ms x sqrt(0.05 x 0.95 / n) for n reads per tick.
my $expected_p50 = $base->{read_latency_p50_ms} + 1.0;
within($mixed->{read_latency_p50_ms}, $expected_p50, 0.3,
	'mixed: p50 of per-tick means = baseline + the mean injected delay');
my $reads_per_tick = $mixed->{reads_per_s};
my $sigma_ms = 20 * sqrt(0.05 * 0.95 / ($reads_per_tick > 1 ? $reads_per_tick : 1));
diag(sprintf('mixed: %.0f reads per tick, predicted spread between ticks %.3f ms', $reads_per_tick, $sigma_ms));
cmp_ok($mixed->{read_latency_p95_ms}, '>', $mixed->{read_latency_p50_ms}, 'mixed: p95 above p50');
cmp_ok($mixed->{read_latency_p99_ms}, '>=', $mixed->{read_latency_p95_ms}, 'mixed: p99 at or above p95');
cmp_ok($mixed->{read_latency_p95_ms} - $mixed->{read_latency_p50_ms}, '<', 1.645 * $sigma_ms * 4 + 0.5,
	'mixed: p95 - p50 is of the size the per-tick spread predicts');
cmp_ok($mixed->{read_latency_p99_ms}, '<', 10,
	'mixed: p99 of per-tick means does not show the 20 ms per-I/O tail (documented limit)');
cmp_ok($mixed->{read_latency_p50_ms}, '>', $base->{read_latency_p50_ms} + 0.5,
	'mixed: but the mean shift is visible in every tick');

$node->stop;
done_testing();
