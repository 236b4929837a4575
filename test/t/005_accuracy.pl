# Ground truth: with latency injected into the server's file I/O (test/inject, LD_PRELOAD), the
# reported latencies, scores and verdicts match what was injected. Baselines are measured in the
# same run, on the mission's workload: random single-row updates of a table much larger than
# shared_buffers, 16 clients.
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
use Time::HiRes qw(time usleep);
use PgswTest;

# PGSW_ACCURACY_TESTS=0 skips this file (it takes ~2 minutes per server version).
plan skip_all => 'PGSW_ACCURACY_TESTS=0: latency-injection accuracy tests skipped'
  if defined $ENV{PGSW_ACCURACY_TESTS} && $ENV{PGSW_ACCURACY_TESTS} eq '0';

my $run_seconds = $ENV{PGSW_ACCURACY_SECONDS} // 8;

# --- the injection library, built for this machine's libc --------------------------------------
my $inject_dir = tempdir(CLEANUP => 1);
my $inject_src = "$FindBin::RealBin/../inject";
system("make -s -C '$inject_src' O='$inject_dir' '$inject_dir/pgsw_inject.so' >/dev/null") == 0
  or BAIL_OUT('could not build the latency injection library');
my $control = "$inject_dir/latency.conf";
# What the library really delivered (its header comment): per kind, operations and ns slept.
my $stats_file = "$inject_dir/delivered.stats";
{
	open my $fh, '>', $stats_file or die $!;
	print $fh "\0" x 4096;
	close $fh;
}
sub delivered
{
	open my $fh, '<', $stats_file or die $!;
	binmode $fh;
	read($fh, my $bytes, 80) == 80 or die "short read of $stats_file";
	close $fh;
	my @v = unpack('Q<10', $bytes);
	return { read_ops => $v[1], sync_ops => $v[3], read_ns => $v[7], sync_ns => $v[9] };
}

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

# The WAL lives on tmpfs, where a real fsync costs microseconds: the injected delay is then the
# whole device, and "baseline + injected" is the truth. On a disk the real fsync (~1.5 ms here)
# changes with the load the injection itself changes (fewer commits per second at +4 ms), which
# is the disk's behaviour, not the instrument's error.
my $waldir_parent = -d '/dev/shm' && -w '/dev/shm' ? '/dev/shm' : undef;
diag('no writable /dev/shm: WAL on disk, fsync baselines include the disk') unless $waldir_parent;
my @init = $waldir_parent
  ? (init => { extra => [ '--waldir', tempdir(DIR => $waldir_parent, CLEANUP => 1) . '/pg_wal' ] })
  : ();
# 20 ms ticks: the breakdown's shares are counts of samples. The sessions move in step with
# group commit (released together by a WAL flush, they read together), so the number of them in
# a read at one tick varies twice as much (variance) as for independent sessions: 8 s at 100 ms
# ticks gave ~400 read samples and a data_read that spread +-6 % at one sigma between runs
# (measured, 18.6, +2 ms), too much for a +-15 % check; 20 ms ticks give 5x the samples (+-2.7 %;
# 1.5-3 % measured at 10 ms). The counters are still read every second (io_read_interval), so
# each reading covers a second's I/O as before.
# log_statement = none: the test framework logs every statement, which in a run at 5,000
# transactions per second is a line per transaction appended to one file on the disk (46 MB per
# run of this test), CPU and file-lock time the truth runs should not carry.
my $node = new_pgsw_node('accuracy', interval => '20ms', @init, conf => q{
log_statement = none
fsync = on
shared_buffers = 16MB
max_connections = 40
autovacuum = off
checkpoint_timeout = 30min
max_wal_size = 2GB
});
# 18+ read through I/O workers by default (io_method = worker), but a single-block read of an
# index scan is flagged synchronous and executed by the session itself (bufmgr.c
# ReadBuffer_common: READ_BUFFERS_SYNCHRONOUSLY; aio.c pgaio_io_needs_synchronous_execution), in
# IO:DataFileRead, as with io_method = sync: measured here, worker and sync gave the same
# data_read against reads x latency. sync keeps the reads in the session whatever path a
# read takes.
$node->append_conf('postgresql.conf', 'io_method = sync') if $node->pg_version >= 18;
{
	local $ENV{LD_PRELOAD} = "$inject_dir/pgsw_inject.so";
	local $ENV{PGSW_INJECT_CONFIG} = $control;
	local $ENV{PGSW_INJECT_STATS} = $stats_file;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
# Another process keeping the cores busy turns the load-sensitive checks below into TODO ones.
our $TODO;
my $busy_todo = busy_machine_todo();
my $pg18 = $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000;
my $assert_build = $node->safe_psql('postgres', 'SHOW debug_assertions') eq 'on';
diag('server build: ' . ($assert_build ? 'assert (--enable-cassert)' : 'release'));

# Scale 10: pgbench_accounts is ~130 MB, eight times shared_buffers, so most reads miss it and
# go to the (injected) file system.
my $scale = 10;
$node->command_ok(['pgbench', '-i', '-s', $scale, '-q', $node->connstr('postgres')], 'pgbench -i');
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
# A hot counter row updated first in a transaction that then works for a moment: the other
# sessions queue on the row lock (with the WAL on tmpfs, a bare single-row update commits too
# fast for a queue to form).
my $hot_row_update = script('hot_row_update.sql', <<'SQL');
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1;
SELECT count(*) FROM generate_series(1, 20000);
END;
SQL
# Sums over 1,000 cached rows: enough work per query that sessions are active (not waiting for
# their client) most of the time, so 1-second ticks collect well over the 10-sample minimum.
my $cached_select = script('cached_select.sql', <<'SQL');
\set aid random(1, 1000)
SELECT sum(abalance) FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid + 999;
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

# Where the machine's CPU went during a run, in CPU seconds: the server's processes (the
# postmaster's reaped children, the backends, plus the live ones), the clients (pgbench, this
# script's waited-for children) and the whole machine (/proc/stat, every core). A diagnostic of
# the what-if's CPU cap, which counts only PostgreSQL's sampled work (verdict.hpp).
sub cpu_seconds
{
	my $hz = 100;    # USER_HZ: /proc's clock ticks on Linux
	open(my $pidfile, '<', $node->data_dir . '/postmaster.pid') or return undef;
	my $pm = <$pidfile>;
	chomp $pm;
	my $server = 0;
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open(my $f, '<', $stat) or next;
		my $line = <$f> // next;
		$line =~ s/^.*\) //;    # past the command name, which may hold spaces
		my @v = split ' ', $line;    # $v[0] is field 3 (state)
		if ($stat eq "/proc/$pm/stat") { $server += $v[11] + $v[12] + $v[13] + $v[14] }
		elsif ($v[1] == $pm) { $server += $v[11] + $v[12] }
	}
	my (undef, undef, $cuser, $csys) = times;
	open(my $f, '<', '/proc/stat') or return undef;
	my (undef, @jiffies) = split ' ', scalar <$f>;
	my $busy = 0;
	$busy += $jiffies[$_] // 0 for (0, 1, 2, 5, 6, 7);    # user nice system irq softirq steal
	return { server => $server / $hz, client => $cuser + $csys, machine => $busy / $hz };
}

# Run a workload and return the summary row of exactly its ticks, plus pg_stat_io's own view.
sub measure
{
	my ($label, $script, %opt) = @_;
	# One transaction of the script first, on one connection: the catalog pages a new session
	# reads at its start (evicted by the last run: shared_buffers is small) are then cached when
	# pgbench's 16 sessions start together. Else one of them reads each page while the others
	# wait for its read (PostgreSQL 18: IO:AioIoCompletion, even with io_method = sync, or
	# IPC:BufferIO), which the window's data_read rightly counts but 18's pg_stat_io does not
	# time (the waiter counts a buffer hit): measured, 0.8-3 s of session time per start and
	# data_read 3-9 % above reads x latency on 18 (at 100 ms ticks one or two ticks of 14-16
	# sessions in reads: with the sampling spread, 15-20 % in some runs), while 19 adds that
	# wait to read_time with no operation. See README, Little's law.
	$node->pgbench_output($script, undef, transactions => 1);
	my $since = quiet_tick();
	my $io_before = pg_stat_io_reads();
	my $d0 = delivered();
	my $cpu0 = cpu_seconds();
	my $out = $node->pgbench_output($script, $opt{seconds} // $run_seconds);
	my $cpu1 = cpu_seconds();
	my $until = quiet_tick();
	my $io_after = pg_stat_io_reads();
	my $d1 = delivered();
	my ($r0, $t0) = split /\|/, $io_before;
	my ($r1, $t1) = split /\|/, $io_after;
	my $mean_ms = sub {
		my ($ops, $ns) = @_;
		my $n = $d1->{$ops} - $d0->{$ops};
		return $n > 0 ? ($d1->{$ns} - $d0->{$ns}) / $n / 1e6 : 0;
	};
	my %row = (label => $label, pgbench => $out,
		io_reads => $r1 - $r0, io_read_ms => $t1 - $t0,
		delivered_read_ms => $mean_ms->('read_ops', 'read_ns'),
		delivered_sync_ms => $mean_ms->('sync_ops', 'sync_ns'));
	my @cols = qw(ticks backend_samples storage_wait_pct cpu_pct lock_pct top_storage_wait
	  reads_per_s read_latency_avg_ms read_latency_p50_ms read_latency_p95_ms read_latency_p99_ms
	  read_latency_max_ms wal_fsyncs_per_s wal_fsync_latency_avg_ms wal_fsync_latency_p50_ms
	  wal_fsync_latency_p95_ms storage_bound_score verdict xacts_per_s xact_time_ms
	  xact_time_at_reference_ms speedup_at_reference hint);
	# The summary, the what-if (to latencies given: the baseline's) and the breakdown of the same
	# window, in one statement: each window ends when its function runs, and separate queries
	# ended seconds apart on a loaded machine (the test's own polling sessions were sampled in
	# between, so the three disagreed by 10 %).
	my $window = "now() - '$since'::timestamptz";
	my $what_if = $opt{what_if}
	  ? '(SELECT concat_ws(\'|\', '
	  . join(', ', map { "coalesce(${_}::text, 'NULL')" }
		  qw(xact_time_at_reference_ms speedup_at_reference cpu_capped xacts_per_s_at_reference
		  xacts_per_s_cpu_limit cpu_busy_pct outside_server_ms))
	  . ") FROM storage_wait_what_if($window, $opt{what_if}[0], $opt{what_if}[1]))"
	  : "''";
	# Sessions waiting for another session's read of the same page (with io_method = sync a
	# session waits in IO:AioIoCompletion only for that): part of data_read, untimed by 18.
	my ($values, $what_if_values, $breakdown, $foreign_read_waits) = split /\x1e/,
	  $node->safe_psql('postgres',
		"SELECT concat_ws(chr(30), concat_ws('|', "
		  . join(', ', map { "coalesce(${_}::text, 'NULL')" } @cols) . "), coalesce($what_if, ''),
			coalesce((SELECT string_agg(component || '=' || coalesce(ms_per_xact::text, 'NULL')
			                            || '=' || samples, ',')
			 FROM storage_wait_breakdown($window)), ''),
			(SELECT coalesce(sum(samples), 0) FROM storage_wait_events($window)
			 WHERE backend_type = 'client backend'
			   AND lower(wait_event) IN ('aioiocompletion', 'bufferio')))
		 FROM storage_wait_summary($window)");
	@row{@cols} = split /\|/, $values;
	$row{since} = $since;
	$row{until} = $until;
	$row{window} = $window;
	$row{pgbench_latency_ms} = ($out =~ /latency average = ([\d.]+) ms/)[0];
	$row{pgbench_tps} = ($out =~ /tps = ([\d.]+)/)[0];
	@row{qw(wi_at_reference wi_speedup wi_capped wi_x_at_reference wi_x_cpu wi_cpu_pct wi_z_ms)} =
	  split /\|/, $what_if_values
	  if $opt{what_if};
	# component -> ms per transaction (and samples)
	for (split /,/, $breakdown)
	{
		my ($component, $ms, $samples) = split /=/;
		$row{breakdown}{$component} = $ms;
		$row{breakdown_samples}{$component} = $samples;
	}
	$row{foreign_read_wait_samples} = $foreign_read_waits;
	diag(sprintf('%-22s tps %-8s score %-5s %-13s read avg %s p50 %s p95 %s p99 %s | fsync avg %s p50 %s (%s/s) top %s | delivered read %.3f sync %.3f ms',
		$label, ($out =~ /tps = ([\d.]+)/)[0] // '?', @row{qw(storage_bound_score verdict
		read_latency_avg_ms read_latency_p50_ms read_latency_p95_ms read_latency_p99_ms
		wal_fsync_latency_avg_ms wal_fsync_latency_p50_ms wal_fsyncs_per_s top_storage_wait
		delivered_read_ms delivered_sync_ms)}));
	if ($cpu0 && $cpu1 && $out =~ /number of transactions actually processed: (\d+)/ && $1 > 0)
	{
		my $n = $1;
		my %per = map { $_ => 1000 * ($cpu1->{$_} - $cpu0->{$_}) / $n } qw(server client machine);
		diag(sprintf('%-22s CPU ms per transaction: server %.3f, pgbench %.3f, rest of the '
			  . 'machine %.3f, machine %.3f', $label, @per{qw(server client)},
			$per{machine} - $per{server} - $per{client}, $per{machine}));
	}
	diag(sprintf('%-22s xacts/s %s xact %s ms (pgbench %s ms) at reference %s ms (%sx) | %s', $label,
		@row{qw(xacts_per_s xact_time_ms pgbench_latency_ms xact_time_at_reference_ms
		speedup_at_reference)},
		join(' ', map { "$_=$row{breakdown}{$_}" } sort keys %{ $row{breakdown} })));
	return \%row;
}

package PostgreSQL::Test::Cluster;
# 16 clients for $seconds, or (transactions => N) one client for N transactions.
sub pgbench_output
{
	my ($self, $script, $seconds, %opt) = @_;
	my ($stdout, $stderr);
	my @run = $opt{transactions} ? ('-c', '1', '-t', $opt{transactions})
	  : ('-c', '16', '-j', '2', '-T', $seconds);
	my $ok = IPC::Run::run(
		# -s: a custom script's :scale is 1 unless given, which would pick aids from the first
		# 100,000 rows only (13 MB: all in shared_buffers).
		[ 'pgbench', '-n', '-s', $scale, @run, '-f', $script,
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
# The truth: baseline + the delay the library delivered. A sleep of R ends when the backend
# runs again, which on 2 cores shared by 16 clients is R plus a scheduling delay that grows
# with the load (0.1-0.9 ms measured); the library times every sleep (PGSW_INJECT_STATS) and
# that delivered mean, not the nominal R, is what the I/O really took longer. The baseline
# device adds 1 us but still sleeps, so its own sleep-and-wake cost is subtracted likewise.
# The what-if is checked on three pairs run side by side: a baseline run, then the first level
# projected to that run's latencies. One 8-s run at 16 clients on 2 cores (CPU-bound) varies with
# the host: back-to-back baselines differed by 5-35 % (2026-12-03, 16-19); on 19 single ones
# reached 2,864 to 6,195 transactions per second; on 18, a first level's sessions were on CPU
# 0.49 ms per transaction in one busy minute against 0.28-0.32 ms in three other runs. Compared
# across minutes, one slow baseline made the projection look 32 % too generous and one busy
# first level made it 45 % too meagre; a pair shares its minute, and the median of three pairs
# drops one bad minute. The other checks use the first pair.
# [ read us, sync us ]. Levels well above the device's own latency: a WAL fsync's real part
# grows when slower flushes batch more commits, so "baseline + injected" is the truth only when
# the injected part dominates.
my @levels = ([ 2000, 4000 ], [ 5000, 8000 ]);
my $level_label = sub { "read $_[0] us, sync $_[1] us" };
my @pairs;
for my $pair (1 .. 3)
{
	inject("read 1\nsync 1\n");
	my $baseline = measure($pair == 1 ? 'baseline' : "baseline ($pair)", $random_update);
	inject(sprintf("read %d\nsync %d\n", @{ $levels[0] }));
	my $first = measure($level_label->(@{ $levels[0] }) . ($pair == 1 ? '' : " ($pair)"),
		$random_update,
		what_if => [ $baseline->{read_latency_avg_ms}, $baseline->{wal_fsync_latency_avg_ms} ]);
	push @pairs, [ $baseline, $first ];
}
my $base = $pairs[0][0];
my @injected = ($pairs[0][1]);
inject(sprintf("read %d\nsync %d\n", @{ $levels[1] }));
push @injected, measure($level_label->(@{ $levels[1] }), $random_update,
	what_if => [ $base->{read_latency_avg_ms}, $base->{wal_fsync_latency_avg_ms} ]);
inject('');

for my $i (0 .. $#levels)
{
	my ($read_us, $sync_us) = @{ $levels[$i] };
	my $row = $injected[$i];
	my $label = "read +$read_us us, fsync +$sync_us us";
	diag(sprintf('%s: delivered read delay %.3f ms (nominal %.3f), fsync %.3f ms (nominal %.3f)',
		$label, $row->{delivered_read_ms}, $read_us / 1000, $row->{delivered_sync_ms}, $sync_us / 1000));
	cmp_ok($row->{delivered_read_ms}, '>=', $read_us / 1000, "$label: reads were delayed at least as injected");
	within($row->{read_latency_p50_ms},
		$base->{read_latency_p50_ms} - $base->{delivered_read_ms} + $row->{delivered_read_ms}, 0.15,
		"$label: read p50 = baseline + injected");
	my $io_avg = $row->{io_reads} ? $row->{io_read_ms} / $row->{io_reads} : 0;
	within($row->{read_latency_avg_ms}, $io_avg, 0.02,
		"$label: read avg = pg_stat_io's own read_time/reads over the same ticks");
	within($row->{wal_fsync_latency_p50_ms},
		$base->{wal_fsync_latency_p50_ms} - $base->{delivered_sync_ms} + $row->{delivered_sync_ms}, 0.15,
		"$label: WAL fsync p50 = baseline + injected");
	{
		# storage-bound also needs the cores to leave room for a 1.5x gain
		local $TODO = $busy_todo;
		is($row->{verdict}, 'storage-bound', "$label: verdict storage-bound");
	}
	cmp_ok($row->{storage_bound_score}, '>=', 70, "$label: score >= 70");
}
cmp_ok($injected[1]{read_latency_p50_ms}, '>', $injected[0]{read_latency_p50_ms},
	'more injected read latency reads as more latency');

# --- where a transaction's time goes (Little's law) ----------------------------------------------
# xact_time_ms = active sessions / transactions per second: the server time of a transaction,
# which for this one-statement script is what pgbench measures minus the socket round trip.
for my $row (@injected)
{
	my $label = $row->{label};
	{
		# pgbench's latency includes its own waits for a core
		local $TODO = $busy_todo;
		within($row->{xact_time_ms}, $row->{pgbench_latency_ms}, 0.15,
			"$label: xact_time_ms = pgbench's latency average");
	}
	my $sum = 0;
	$sum += $_ for grep { $_ ne 'NULL' } values %{ $row->{breakdown} };
	within($sum, $row->{xact_time_ms}, 0.01, "$label: the breakdown rows add up to xact_time_ms");
	# data_read = reads per transaction x the measured mean read latency: the sessions' sampled
	# time in reads against pg_stat_io's timed reads. That compares like with like only while the
	# sessions hardly wait for each other's reads (untimed by 18): the warm-up in measure() sees
	# to it (0-0.2 % of the read samples measured with it, 1.6-8 % without).
	my $reads_per_xact = $row->{reads_per_s} / $row->{xacts_per_s};
	my $read_samples = $row->{breakdown_samples}{data_read};
	cmp_ok($row->{foreign_read_wait_samples}, '<=', 0.01 * $read_samples,
		"$label: sessions waiting for another session's read: at most 1 % of the read samples");
	within($row->{breakdown}{data_read}, $reads_per_xact * $row->{read_latency_avg_ms}, 0.15,
		sprintf('%s: data_read = %.2f reads per transaction x %.3f ms (%d read samples, %.1f %% '
			  . 'waiting for another session\'s read)', $label, $reads_per_xact,
			$row->{read_latency_avg_ms}, $read_samples,
			$read_samples ? 100 * $row->{foreign_read_wait_samples} / $read_samples : 0));
}

# --- the what-if against reality: the slower runs projected to the baseline's latencies -------
# storage_wait_what_if() with the baseline's measured read and flush latencies must land on what
# the baseline run really did: its transaction time or, when the projection says the cores cap
# it (16 clients at full speed on 2 cores: they do here), the throughput the baseline reached at
# that cap (pgbench's tps: the window's xacts_per_s also counts the idle seconds around the run),
# on the first level, the one nearest the issue's "+3 ms run", on the median of the three pairs,
# within +-30 %; the second level (+5/+8 ms) against the median baseline, half to +30 %.
# The cap (verdict.hpp) is PostgreSQL's sampled CPU work plus a quarter of the machine's busy
# time beyond it (classification version 5). The sampled work alone is a floor: a process's CPU
# inside a wait (system calls, wake-ups: ~0.1 ms per transaction here) is sampled as the wait.
# The busy time is a ceiling: a slow run's transactions cost the machine more CPU than a
# saturated one (cpu_seconds(), 17: 1.4-1.8x; 18 on another machine: 0.45-0.52 against
# 0.18-0.25 ms per transaction), mostly waking sessions around their waits. With the sampled
# work alone (version 4) the medians were 0.87-1.15 on one machine (2026-12-04, release
# builds) and 1.12-1.57 on another (same day, 17 and 18; assert builds of 16 and 19
# 1.09-1.31), with the busy share alone (version 3) 0.47-0.52.
# An assert build (--enable-cassert) is not a user's server: its checks cost more in a session
# that wakes to cold caches, and its sampled CPU per transaction in a slow run moves with that
# (medians 0.68-0.98 on one machine, 1.09-1.31 on another, against 0.87-1.15 and 1.12-1.57 on
# release builds). On an assert build the +-30 % is therefore reported (TODO), half to +30 %
# enforced; scripts/test.sh runs this file on release builds of 17 and 18 (and of 16 and 19 with
# PGSW_RELEASE_ACCURACY).
# How much faster the projection promises than the baseline ran: the cap over the throughput
# reached when the cores cap it, else the time taken over the time projected (> 1: promises
# too much).
sub promised_over_real
{
	my ($projected, $baseline) = @_;
	return $projected->{wi_capped} =~ /^t(rue)?$/
	  ? $projected->{wi_x_at_reference} / $baseline->{pgbench_tps}
	  : $baseline->{xact_time_ms} / $projected->{wi_at_reference};
}

sub describe_projection
{
	my ($projected, $baseline) = @_;
	diag(sprintf('%s projected to the baseline latencies: %s ms (%sx, CPU %s %% busy, outside '
		  . 'the server %s ms, capped %s at %s xacts/s); %s took %s ms at %s xacts/s: %.3f',
		$projected->{label}, @$projected{qw(wi_at_reference wi_speedup wi_cpu_pct wi_z_ms
		wi_capped wi_x_at_reference)}, $baseline->{label}, $baseline->{xact_time_ms},
		$baseline->{pgbench_tps}, promised_over_real($projected, $baseline)));
}

{
	local $TODO = $busy_todo;    # a busy machine's own noise: the pairs stop sharing a minute
	describe_projection(reverse @$_) for @pairs;
	my $ratio = (sort { $a <=> $b } map { promised_over_real(reverse @$_) } @pairs)[1];
	my $level = $injected[0]{label};
	{
		local $TODO = $TODO
		  // ($assert_build ? 'an assert build\'s CPU around the waits lowers the cap (see above)' : undef);
		ok(abs($ratio - 1) <= 0.30,
			"$level: the projection lands within 30 % of what the baseline did (median of three "
			  . "pairs: $ratio)");
	}
	cmp_ok($ratio, '>=', 0.5, "$level: the projection promises at least half of what the baseline did");
	cmp_ok($ratio, '<=', 1.3, "$level: the projection promises no more than the baseline did (+30 %)");

	# The second level has no baseline of its own minute. Whether it promises more than the
	# machine can do is judged against the fastest of the three baselines (a shared machine's
	# noise only ever slows a run, so the fastest is the best estimate of what the cores can
	# do); whether it promises too little, against their median.
	my @baselines = sort { $a->{pgbench_tps} <=> $b->{pgbench_tps} } map { $_->[0] } @pairs;
	my ($median_baseline, $fastest_baseline) = @baselines[ 1, -1 ];
	my $second = $injected[1];
	describe_projection($second, $_) for $median_baseline, $fastest_baseline;
	cmp_ok(promised_over_real($second, $fastest_baseline), '<=', 1.3,
		"$second->{label}: the projection promises no more than the fastest baseline did (+30 %)");
	cmp_ok(promised_over_real($second, $median_baseline), '>=', 0.5,
		"$second->{label}: the projection promises at least half of what the median baseline did");
}
isnt($base->{verdict}, 'storage-bound', 'baseline (WAL on tmpfs, data cached): not storage-bound');

# Verdicts need samples, latency percentiles need I/Os per tick: the verdict cases below sample
# every 100 ms (the sampler follows a reload), the latency cases every second.
sub set_interval
{
	my ($interval) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET pg_storage_wait.sample_interval = '$interval'");
	$node->reload;
	poll_until($node, qq{SELECT sample_interval_ms = extract(epoch FROM interval '$interval') * 1000
		FROM storage_wait_status()}) or die "the sampler did not take interval $interval";
}

# --- CPU-bound: read-only, in memory, asynchronous commit, no injection -------------------------
set_interval('100ms');
$node->safe_psql('postgres', 'SELECT count(*) FROM pgbench_accounts WHERE aid <= 2000');
my $cpu;
{
	local $ENV{PGOPTIONS} = '-c synchronous_commit=off';    # asynchronous commit
	$cpu = measure('cached read-only', $cached_select);
}
cmp_ok($cpu->{backend_samples}, '>=', 30, 'in-memory read-only workload: enough active samples to judge');
is($cpu->{verdict}, 'cpu-bound', 'in-memory read-only workload: cpu-bound');
cmp_ok($cpu->{storage_bound_score}, '<=', 20, 'in-memory read-only workload: score <= 20');

# --- lock-bound: every client updates the same row, no injection ---------------------------------
my $lock = measure('hot-row updates', $hot_row_update);
is($lock->{verdict}, 'lock-bound', 'hot-row updates: lock-bound');
set_interval('1s');

# --- a step from 0 to 5 ms mid-run shows within two ticks ----------------------------------------
{
	my $since = quiet_tick();
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-s', $scale, '-c', '16', '-j', '2', '-T', '10', '-f', $random_update,
		  $node->connstr('postgres') ], '>', \my $out, '2>', \my $err);
	sleep 5;
	# The step's time: when the library has begun delaying reads (it looks at its file at most
	# every 100 ms), not when the file was written.
	my $before_step = delivered();
	inject("read 5000\n");
	for (my $waited = 0; $waited < 500 && delivered()->{read_ns} - $before_step->{read_ns} < 5e6; $waited++)
	{
		usleep(20_000);
	}
	my $step_at = $node->safe_psql('postgres', 'SELECT now()');
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
# 20 ticks: enough for p50, p95 and p99 to be different ticks' means.
my $mixed = measure('read 95%:0 5%:20ms', $random_update, seconds => 20);
diag('mixed: reads:mean ms per tick: ' . $node->safe_psql('postgres', qq{
	SELECT string_agg(reads || ':' || coalesce(round(read_time_ms::numeric / nullif(reads, 0), 2)::text, '-'), ' '
	  ORDER BY sample_time)
	FROM storage_wait_ticks('$mixed->{since}') WHERE sample_time <= '$mixed->{until}'}));
inject('');
# Each tick's mean read latency is baseline + 0.05 x 20 ms = +1 ms on average (+ the delivered
# excess of the slow sleeps), with a spread between ticks of 20 ms x sqrt(0.05 x 0.95 / n) for
# n reads per tick.
my $expected_p50 = $base->{read_latency_p50_ms} - $base->{delivered_read_ms} + $mixed->{delivered_read_ms};
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

diag('WAL written: ' . $node->safe_psql('postgres',
	q{SELECT pg_size_pretty(pg_current_wal_lsn() - '0/0')}));
$node->stop;
done_testing();
