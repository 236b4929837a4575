# The volume, for real: the data directory on a loop device (ext4), pg_wal on a second one, the
# server in a cgroup v1 blkio group whose throttle rules make a real IOPS or throughput ceiling,
# and debug_io_direct = 'data' so reads reach the device. Checks storage_device_stats against
# the rule and against iostat -x, and storage_limit for a ceiling and for pure latency.
#
# fsync = on (the test framework turns it off): WAL flushes must reach the WAL device.
# Needs root-prepared devices: scripts/test.sh --only devices does it (test/devices_env.sh up,
# then this test as the test user with PGSW_DEVICES_DIR, then devices_env.sh down). Without
# them, or without iostat, it says so and skips.
#
# pgsw-tap: alone (its timings assume a quiet machine: test/prove_in_groups.sh)
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use File::Temp qw(tempdir);
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $env = $ENV{PGSW_DEVICES_DIR} // '';
plan skip_all => 'no prepared loop devices and blkio cgroup (PGSW_DEVICES_DIR unset): run as '
  . 'root via scripts/test.sh --only devices (test/devices_env.sh)'
  unless $env ne '' && -d "$env/data" && -f "$env/cgroup";

sub slurp_line
{
	my ($file) = @_;
	open my $fh, '<', $file or die "$file: $!";
	my $line = <$fh>;
	chomp $line;
	return $line;
}
my $cgroup = slurp_line("$env/cgroup");
my ($data_majmin, $wal_majmin) = map { slurp_line("$env/$_.majmin") } qw(data wal);
my ($data_dev, $wal_dev) = map { (split m{/}, slurp_line("$env/$_.dev"))[-1] } qw(data wal);
plan skip_all => "the cgroup $cgroup is not writable by this user" unless -w "$cgroup/cgroup.procs";

sub rule
{
	my ($file, $value) = @_;
	open my $fh, '>', "$cgroup/blkio.throttle.$file" or die "$file: $!";
	print $fh "$data_majmin $value\n";
	close $fh or die "$file: $!";
}

sub clear_rules
{
	rule($_, 0) for qw(read_iops_device write_iops_device read_bps_device write_bps_device);
}

# This process joins the group: the server it starts (postmaster, backends, I/O workers) is in
# it too. Rules apply to the data device only.
{
	open my $fh, '>', "$cgroup/cgroup.procs" or die "cgroup.procs: $!";
	print $fh "$$\n";
	close $fh or die "joining $cgroup: $!";
}
clear_rules();

my $inject_dir = tempdir(CLEANUP => 1);
system("make -s -C '$FindBin::RealBin/../inject' O='$inject_dir' '$inject_dir/pgsw_inject.so' "
	  . '>/dev/null') == 0
  or BAIL_OUT('could not build the latency injection library');
my $control = "$inject_dir/latency.conf";
sub inject
{
	my ($text) = @_;
	open my $fh, '>', "$control.tmp" or die $!;
	print $fh $text;
	close $fh;
	rename "$control.tmp", $control or die $!;
	usleep(300_000);    # the library re-reads the file within 100 ms
}
inject('');

my $node = PostgreSQL::Test::Cluster->new('devices');
my $pgdata = "$env/data/pgdata";
# The data directory on the data device (a symlink, as 008 does), pg_wal on the WAL device.
mkdir "$env/wal/pg_wal" or die $!;
use File::Basename qw(dirname);
use File::Path qw(make_path);
mkdir $pgdata or die $!;
make_path(dirname($node->data_dir));
symlink($pgdata, $node->data_dir) or die "symlink: $!";
$node->init(extra => [ '--waldir', "$env/wal/pg_wal/wal" ]);
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_storage_wait'
track_io_timing = on
track_wal_io_timing = on
pg_storage_wait.sample_interval = '100ms'
debug_io_direct = 'data'
fsync = on
shared_buffers = 16MB
max_connections = 40
checkpoint_timeout = 30min
max_wal_size = 2GB
});
# 18 reads through I/O workers: one per client keeps the throttle's queue in front of the
# device, not in front of three workers (with io_method = sync the detected-ceiling case read
# 370/s under a 300-IOPS rule: not understood yet, so the mode that was measured stays). 19
# has no io_workers: its sessions read themselves.
$node->append_conf('postgresql.conf', 'io_workers = 16') if $node->pg_version == 18;
$node->append_conf('postgresql.conf', 'io_method = sync') if $node->pg_version >= 19;
{
	local $ENV{LD_PRELOAD} = "$inject_dir/pgsw_inject.so";
	local $ENV{PGSW_INJECT_CONFIG} = $control;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
$node->command_ok([ 'pgbench', '-i', '-s', '10', '-q', $node->connstr('postgres') ], 'pgbench -i');
$node->safe_psql('postgres', 'VACUUM ANALYZE; CHECKPOINT');

# --- discovery: roles split over the two devices ----------------------------------------------
my $roles = $node->safe_psql('postgres',
	q{SELECT string_agg(device || '=' || roles::text, ' ' ORDER BY device) FROM storage_device_stats});
like($roles, qr/\b\Q$data_dev\E=\{data\}/, "data directory on $data_dev ($roles)");
like($roles, qr/\b\Q$wal_dev\E=\{wal\}/, "pg_wal on $wal_dev");

# A tablespace created while the server runs is found by the next reading, with no reload
# (the sampler watches pg_tblspc's modification time), and its role goes when it is dropped.
my $ts_dir = "$env/wal/tablespace";
mkdir $ts_dir or die "$ts_dir: $!";
$node->safe_psql('postgres', "CREATE TABLESPACE pgsw_ts LOCATION '$ts_dir'");
my $wal_roles = qq{SELECT roles::text FROM storage_device_stats WHERE device = '$wal_dev'};
ok(poll_until($node, "SELECT ($wal_roles) = '{wal,tablespace:pgsw_ts}'"),
	"CREATE TABLESPACE on $wal_dev: its role appears without a reload ("
	  . $node->safe_psql('postgres', $wal_roles) . ')');
$node->safe_psql('postgres', 'DROP TABLESPACE pgsw_ts');
ok(poll_until($node, "SELECT ($wal_roles) = '{wal}'"),
	"DROP TABLESPACE: the role goes (" . $node->safe_psql('postgres', $wal_roles) . ')');

# One measured run: the device row and the summary over $seconds of steady load, read while
# the load still runs and in one statement. Read after pgbench, a window held its ramp-up and
# an idle tail (rates diluted by a tenth), and two statements a second apart saw different
# windows: the device row once found no ceiling where the summary, a reading later, did.
sub run_load
{
	my ($label, $seconds, @args) = @_;
	my ($out, $err) = ('', '');
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '16', '-j', '2', '-T', $seconds + 6, @args,
			$node->connstr('postgres') ],
		'>', \$out, '2>', \$err);
	sleep 3;    # connections made, the queue in front of a ceiling formed
	my $since = $node->safe_psql('postgres', 'SELECT now()');
	sleep $seconds;
	my $window = "now() - '$since'::timestamptz";
	my %dev;
	my $hint;
	(@dev{qw(reads iops_limit mb_limit at_limit pg_ms await_ms read_mb verdict limit)}, $hint) =
	  split /\|/, $node->safe_psql('postgres', qq{
		SELECT d.reads_per_s, coalesce(d.iops_limit, -1), coalesce(d.throughput_limit_mb_per_s, -1),
		       coalesce(d.at_limit_pct, -1), coalesce(d.pg_read_latency_ms, -1),
		       coalesce(d.read_await_ms, -1), d.read_mb_per_s, s.verdict,
		       coalesce(s.storage_limit, 'NULL'), s.hint
		FROM storage_device_stats($window) d, storage_wait_summary($window) s
		WHERE d.device = '$data_dev'});
	my $shape = rate_shape($window);
	$bench->finish;
	ok($out =~ /tps = /, "$label: pgbench ran") or diag($err);
	diag("$label: per-second readings: $shape");
	diag("$label: reads $dev{reads}/s ($dev{read_mb} MB/s), iops_limit $dev{iops_limit}, "
		  . "MB/s limit $dev{mb_limit}, at limit $dev{at_limit} %, PostgreSQL $dev{pg_ms} ms vs "
		  . "device $dev{await_ms} ms; $dev{verdict}, $dev{limit}; $hint");
	return (\%dev, $dev{verdict}, $dev{limit}, $hint);
}

# The detector's evidence, for a failure's log: per-second data-device IOPS and PostgreSQL read
# latency over the window, and on the plateau (within 15 % of the median IOPS, as the detector
# keeps) the spreads of log IOPS and of the reads in flight C = IOPS x latency, their ratio
# (a detected ceiling needs <= 0.5) and, for comparison, the least-squares slope.
sub rate_shape
{
	my ($window) = @_;
	my @rows = map { [ split /\|/ ] } split /\n/, $node->safe_psql('postgres', qq{
		SELECT data_device_iops, read_latency_avg_ms
		FROM storage_wait_history($window, '1 second')
		WHERE data_device_iops > 0 AND read_latency_avg_ms > 0 ORDER BY sample_time});
	return 'none' if @rows < 3;
	my $series = sprintf('%d, IOPS %s; latency ms %s', scalar(@rows),
		join(' ', map { sprintf '%.0f', $_->[0] } @rows),
		join(' ', map { sprintf '%.2f', $_->[1] } @rows));
	my @sorted = sort { $a <=> $b } map { log $_->[0] } @rows;
	my $median = $sorted[ @sorted / 2 ];
	my (@x, @c);
	for (@rows)
	{
		my $x = log $_->[0];
		next if abs($x - $median) > 0.15;
		push @x, $x;
		push @c, $x + log $_->[1];
	}
	my $mean = sub { my $s = 0; $s += $_ for @_; $s / @_ };
	my $cov = sub {
		my ($a, $b) = @_;
		my ($ma, $mb) = ($mean->(@$a), $mean->(@$b));
		my $s = 0;
		$s += ($a->[$_] - $ma) * ($b->[$_] - $mb) for 0 .. $#$a;
		return $s / @$a;
	};
	my ($vx, $vc) = ($cov->(\@x, \@x), $cov->(\@c, \@c));
	return sprintf('%s; plateau %d: sd log IOPS %.4f, sd log C %.4f, spread ratio %.3f, '
		  . 'least-squares slope %.3f',
		$series, scalar(@x), sqrt($vx), sqrt($vc), $vc > 0 ? sqrt($vx / $vc) : 1,
		$vc > 0 ? $cov->(\@x, \@c) / $vc : 1);
}

# Reaching a ceiling and the verdict's CPU cap need cores for the 16 clients: with another
# process keeping them busy, those checks are TODO ones (PgswTest::busy_machine_todo).
our $TODO;
my $busy_todo = busy_machine_todo();

# --- an IOPS ceiling the sampler does not know of (set after discovery): detected -------------
my $iops = 300;
rule('read_iops_device', $iops);
my ($dev, $verdict, $limit, $hint) = run_load('300 read IOPS, detected', 20, '-S');
{
	local $TODO = $busy_todo;
	ok(abs($dev->{reads} - $iops) <= 0.1 * $iops, "reads_per_s $dev->{reads} within 10 % of $iops");
	is($limit, 'iops-ceiling', 'detected: storage_limit = iops-ceiling');
	like($hint, qr/IOPS ceiling/, 'hint names the IOPS ceiling');
	ok($dev->{iops_limit} > 0 && abs($dev->{iops_limit} - $iops) <= 0.1 * $iops,
		"the device row's detected iops_limit $dev->{iops_limit} near $iops");
}
ok($dev->{pg_ms} > 5 * $dev->{await_ms},
	"queue above the device: PostgreSQL $dev->{pg_ms} ms vs device $dev->{await_ms} ms");

# --- the same rule, known from the server's cgroup after a reload -----------------------------
$node->reload;
sleep 1;
($dev, $verdict, $limit, $hint) = run_load('300 read IOPS, cgroup rule known', 15, '-S');
is($dev->{iops_limit}, $iops, 'iops_limit is the cgroup rule');
{
	local $TODO = $busy_todo;
	is($limit, 'iops-ceiling', 'known: storage_limit = iops-ceiling');
	ok($dev->{at_limit} >= 50, "at_limit_pct $dev->{at_limit} >= 50");
}

# --- a throughput rule ----------------------------------------------------------------------
clear_rules();
my $bps = 3_000_000;
rule('read_bps_device', $bps);
$node->reload;
sleep 1;
($dev, $verdict, $limit, $hint) = run_load('3 MB/s reads, cgroup rule', 15, '-S');
{
	local $TODO = $busy_todo;
	is($limit, 'throughput-ceiling', 'storage_limit = throughput-ceiling');
	like($hint, qr/throughput/, 'hint names throughput');
	ok(abs($dev->{read_mb} - 3) <= 0.3, "read_mb_per_s $dev->{read_mb} within 10 % of 3");
}

# --- no ceiling, +4 ms per read: latency ----------------------------------------------------
clear_rules();
$node->reload;
sleep 1;
inject("read 4000\n");
($dev, $verdict, $limit, $hint) = run_load('+4 ms per read, no throttle', 15, '-S');
inject('');
{
	local $TODO = $busy_todo;
	is($verdict, 'storage-bound', 'storage-bound at +4 ms');
	is($limit, 'latency', 'storage_limit = latency');
	like($hint, qr/No IOPS or throughput ceiling/, 'hint: latency, not a ceiling');
}

# --- WAL flushes on the WAL device ----------------------------------------------------------
my $since = $node->safe_psql('postgres', 'SELECT now()');
$node->command_ok([ 'pgbench', '-n', '-c', '8', '-j', '2', '-T', '6', $node->connstr('postgres') ],
	'tpcb-like load');
my ($wal_flushes, $wal_writes) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT flushes_per_s, writes_per_s FROM storage_device_stats(now() - '$since'::timestamptz)
	WHERE device = '$wal_dev'});
diag("WAL device: $wal_writes writes/s, $wal_flushes flushes/s");
ok($wal_flushes > 10, "WAL flushes on the WAL device ($wal_flushes/s)");

# --- against iostat -x over the same 10 s ---------------------------------------------------
SKIP:
{
	my ($iostat) = grep { -x "$_/iostat" } split /:/, $ENV{PATH};
	skip 'iostat (sysstat) not installed', 4 unless $iostat;
	# A device reading every tick (100 ms), not every second: the window then starts and ends
	# within 0.1 s of iostat's. At the default 1 s the two windows were up to a second apart,
	# and pgbench's rates still drift then: ours read 4.4 % fewer reads and 5.9 % fewer writes
	# in one CI run (1863 vs 1948 r/s, 1440 vs 1529 w/s), 8.9 % more in another.
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET pg_storage_wait.io_read_interval = '100ms'; SELECT pg_reload_conf()");
	sleep 1;    # the worker re-reads its settings at its next tick
	my $bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '8', '-j', '2', '-T', '16', $node->connstr('postgres') ],
		'>', \my $out, '2>', \my $err);
	sleep 3;
	my $t0 = time;
	my $report = `S_TIME_FORMAT=ISO iostat -x -d -y $data_dev 10 1`;
	my $seconds = time - $t0;
	my @row = split /\|/, $node->safe_psql('postgres', qq{
		SELECT reads_per_s, writes_per_s, coalesce(read_await_ms, 0), util_pct
		FROM storage_device_stats(interval '$seconds seconds') WHERE device = '$data_dev'});
	$bench->finish;
	my ($header) = grep { /^Device/ } split /\n/, $report;
	my ($line) = grep { /^\Q$data_dev\E\s/ } split /\n/, $report;
	my @names = split ' ', $header;
	my @values = split ' ', $line;
	my %io = map { $names[$_] => $values[$_] } 0 .. $#names;
	diag("iostat over ${seconds}s: r/s $io{'r/s'} w/s $io{'w/s'} r_await $io{r_await} "
		  . "%util $io{'%util'}; storage_device_stats: @row");
	# Both sides cover 10 s, but ours is read once a second and queried after iostat ends: on a
	# busy machine the two windows drift apart (seen: r_await 0.889 vs 0.95 ms beside a soak).
	local $TODO = $busy_todo;
	my $close = sub {
		my ($ours, $theirs, $abs, $what) = @_;
		ok(abs($ours - $theirs) <= 0.05 * $theirs || abs($ours - $theirs) <= $abs,
			"$what: ours $ours vs iostat $theirs");
	};
	$close->($row[0], $io{'r/s'}, 1, 'reads_per_s');
	$close->($row[1], $io{'w/s'}, 1, 'writes_per_s');
	$close->($row[2], $io{r_await}, 0.05, 'read_await_ms');
	$close->($row[3], $io{'%util'}, 1, 'util_pct');
}

$node->stop;
done_testing();
