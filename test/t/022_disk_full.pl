# Disk full at shutdown: the data directory on a tiny ext4 loop filesystem, filled until the
# history file no longer fits. The save at shutdown fails with one WARNING, the server shuts
# down cleanly, the previous save is kept whole (the failed save wrote only its .tmp, which is
# removed), and the next start restores that previous save, even with the disk still full. A
# periodic save on the full disk logs one WARNING, not one per try. Once there is room again,
# the next shutdown saves.
#
# Needs the root-prepared filesystem: scripts/test.sh --only devices does it
# (test/devices_env.sh up makes DIR/tiny, then runs this test as the test user with
# PGSW_DEVICES_DIR=DIR). Without it, it says so and skips. WAL is on the ordinary filesystem:
# a full pg_wal is PostgreSQL's own PANIC, not what this test is about.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use Digest::MD5 qw(md5_hex);
use File::Basename qw(dirname);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $env = $ENV{PGSW_DEVICES_DIR} // '';
my $tiny = "$env/tiny";
plan skip_all => 'no prepared tiny filesystem (PGSW_DEVICES_DIR unset or without tiny/): run '
  . 'as root via scripts/test.sh --only devices (test/devices_env.sh)'
  unless $env ne '' && -d $tiny && -w $tiny && system("mountpoint -q '$tiny'") == 0;

sub avail_bytes
{
	my ($out) = `df -B1 --output=avail '$tiny'` =~ /(\d+)\s*$/;
	return $out;
}

my $node = PostgreSQL::Test::Cluster->new('disk_full');
my $pgdata = "$tiny/pgdata";
mkdir $pgdata or die "$pgdata: $!";
make_path(dirname($node->data_dir));
symlink($pgdata, $node->data_dir) or die "symlink: $!";
$node->init(extra => [ '--waldir', PostgreSQL::Test::Utils::tempdir() . '/pg_wal' ]);
# Periodic saves off (only at shutdown) until the periodic case below; no autovacuum, whose
# new free-space maps would meet the full disk first.
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_storage_wait'
pg_storage_wait.sample_interval = '10ms'
pg_storage_wait.save_interval = 0
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
ok(wait_for_ticks($node, 100), 'sampler ticks');
my $file = "$pgdata/pg_stat/pg_storage_wait.history";

# The previous save: written at a clean restart, while there is room.
$node->restart;
ok(-s $file, 'a save at a clean shutdown');
my $previous = md5_hex(slurp_file($file));
is(status_value($node, 'restored_from_disk'), 't', 'restored');

# Enough history that the next file cannot fit: 2,000 ticks of 496 bytes and more.
ok(wait_for_ticks($node, 2000), 'ticks to save');
my $history_min_bytes = status_value($node, 'ticks_retained') * 496;
my $keep = 256 * 1024;
open my $filler, '>:raw', "$tiny/filler" or die "filler: $!";
my $chunk = "\0" x (1024 * 1024);
my $left = avail_bytes() - $keep;
while ($left > 0)
{
	my $n = $left < length $chunk ? $left : length $chunk;
	print $filler substr($chunk, 0, $n) or last;    # the disk may fill a little early
	$left -= $n;
}
close $filler;
system('sync');
my $avail = avail_bytes();
note("free on the tiny filesystem: $avail bytes; the history needs at least $history_min_bytes");
cmp_ok($avail, '<', $history_min_bytes, 'the filesystem is too full for the history file');

sub stop_expect_failed_save
{
	my ($what) = @_;
	my $offset = -s $node->logfile;
	$node->stop;
	my $log = slurp_file($node->logfile, $offset);
	my @warnings = ($log =~ /WARNING:  pg_storage_wait: could not save history at shutdown: could not (?:write|fsync|close) "[^"]*pg_storage_wait.history.tmp": No space left on device/g);
	is(scalar @warnings, 1, "$what: one WARNING, naming the full disk")
	  or diag($log);
	like($log, qr/database system is shut down/, "$what: clean shutdown");
	unlike($log, qr/PANIC|FATAL|terminated by signal/, "$what: no crash");
	ok(!-e "$file.tmp", "$what: the temporary file is removed");
	is(md5_hex(slurp_file($file)), $previous, "$what: the previous save is kept, unchanged");
}

stop_expect_failed_save('disk full at shutdown');

# The next start restores the previous save, the disk still full.
my $offset = -s $node->logfile;
$node->start;
is(status_value($node, 'restored_from_disk'), 't', 'next start: the previous save is restored');
ok(wait_for_ticks($node, 20), 'next start: the sampler ticks');
ok(!$node->log_contains(qr/WARNING|ERROR|FATAL|PANIC/, $offset), 'next start: clean log');

# A periodic save on the full disk: one WARNING however often it fails; failures counted. First
# the history outgrows the free space again (the restored save is small enough to fit).
$avail = avail_bytes();
ok(poll_until($node, "SELECT ticks_retained * 496 > 2 * $avail FROM storage_wait_status()", 120),
	'the history outgrows the free space');
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET pg_storage_wait.save_interval = '1s'; SELECT pg_reload_conf()});
ok(poll_until($node, 'SELECT history_save_failures >= 3 FROM storage_wait_status()', 60),
	'periodic saves fail and are counted');
my @periodic = (slurp_file($node->logfile, $offset)
	  =~ /WARNING:  pg_storage_wait: could not save history: could not \w+ "[^"]*": No space left on device/g);
is(scalar @periodic, 1, 'periodic saves on a full disk: one WARNING');
is(status_value($node, 'history_saves'), '0', 'no periodic save succeeded');
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET pg_storage_wait.save_interval = 0; SELECT pg_reload_conf()});
stop_expect_failed_save('disk still full at the second shutdown');

# Room again: the next shutdown saves, without a warning.
unlink "$tiny/filler" or die "filler: $!";
$node->start;
$offset = -s $node->logfile;
$node->stop;
ok(!$node->log_contains(qr/WARNING/, $offset), 'room again: the shutdown saves without a WARNING');
isnt(md5_hex(slurp_file($file)), $previous, 'room again: a new save replaced the old one');
done_testing();
