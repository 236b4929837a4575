# A live wall-clock step (libfaketime, Debian's `faketime` package; skipped without it): the
# server's wall clock jumps back one hour, later forward two hours (one hour past the slewed
# sample times), while CLOCK_MONOTONIC runs on. Sample times never go back, no interval is
# negative, no tick spans a step, and each step is one LOG line.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my ($lib) = grep { -e } map { "/usr/lib/$_/faketime/libfaketimeMT.so.1" }
	qw(x86_64-linux-gnu aarch64-linux-gnu);
plan skip_all => 'libfaketime is not installed (apt-get install faketime)' unless $lib;
# The sanitize stage preloads the ASan runtime into the server: with libfaketime beside it, both
# interposing the clock, the server hung at start (seen: pg_ctl waiting for minutes).
plan skip_all => 'under the sanitizer runtime (libfaketime and ASan together hang the server)'
  if $ENV{PGSW_SANITIZED};

my $node = new_pgsw_node('clock', interval => '100ms');
my $offset_file = $node->basedir . '/faketime_offset';
# Written aside and renamed: libfaketime re-reads the file at every clock call
# (FAKETIME_NO_CACHE) and exits the process that reads it half written ("failed to parse
# FAKETIME timestamp": seen on 17 as a server process gone mid-test).
sub set_offset
{
	open my $fh, '>', "$offset_file.tmp" or die $!;
	print $fh "$_[0]\n";
	close $fh or die $!;
	rename "$offset_file.tmp", $offset_file or die $!;
}
set_offset('+0');
{
	# Only the server runs under libfaketime; the monotonic clock is left real.
	local $ENV{LD_PRELOAD} = $lib;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $offset_file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
ok(wait_for_ticks($node, 10), 'sampler ticks under libfaketime');

my $log_offset = -s $node->logfile;
set_offset('-3600');
ok(wait_for_ticks($node, 20), 'sampler ticks after the backward step');
ok($node->log_contains(qr/LOG:  pg_storage_wait: the wall clock stepped back by 3[56]\d\d\.\d s/, $log_offset),
	'the backward step is logged');

$log_offset = -s $node->logfile;
set_offset('+3600');
ok(wait_for_ticks($node, 20), 'sampler ticks after the forward step');
ok($node->log_contains(qr/LOG:  pg_storage_wait: the wall clock stepped forward by 3[56]\d\d\.\d s/, $log_offset),
	'the forward step is logged');

is($node->safe_psql('postgres',
	"SELECT count(*) FROM storage_wait_ticks('-infinity') WHERE interval_ms < 0"), '0',
	'no negative interval');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT sample_time < lag(sample_time) OVER (ORDER BY ordinality) AS back
		FROM storage_wait_ticks('-infinity') WITH ORDINALITY) s
	WHERE back}), '0', 'sample times never go back in ring order');
# Every tick's interval is within its deadline's reach: no tick spans the hour of a step.
is($node->safe_psql('postgres',
	"SELECT count(*) FROM storage_wait_ticks('-infinity') WHERE interval_ms > 5000"), '0',
	'no tick spans a step (the forward step is a gap, not a long interval)');
$node->stop;
done_testing();
