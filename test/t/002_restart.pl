# History survives a worker restart and a clean server restart; a corrupt, truncated or
# foreign history file is survived with a WARNING and an empty start.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $node = new_pgsw_node('restart', interval => '100ms');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
ok(wait_for_ticks($node, 20), 'sampler ticks');

# --- the worker is terminated: it comes back, with the recorded history intact --------------
my $pid = status_value($node, 'worker_pid');
my $retained = status_value($node, 'ticks_retained');
my $oldest = $node->safe_psql('postgres', 'SELECT min(sample_time) FROM storage_wait_ticks(\'-infinity\')');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(poll_until($node, "SELECT worker_pid IS NOT NULL AND worker_pid <> $pid FROM storage_wait_status()", 30),
	'the worker restarts after being terminated');
is(status_value($node, 'worker_starts'), '2', 'worker_starts counts the restart');
ok(wait_for_ticks($node, 5), 'the restarted worker ticks');
cmp_ok(status_value($node, 'ticks_retained'), '>=', $retained, 'history kept across the worker restart');
is($node->safe_psql('postgres', 'SELECT min(sample_time) FROM storage_wait_ticks(\'-infinity\')'),
	$oldest, 'the oldest tick is still there');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM storage_wait_ticks('-infinity') WHERE baseline"), '2',
	'each worker start begins with one baseline tick');

# --- clean restart: history written at shutdown and read back -------------------------------
$retained = status_value($node, 'ticks_retained');
$node->restart;
is(status_value($node, 'restored_from_disk'), 't', 'history restored after a clean restart');
cmp_ok(status_value($node, 'ticks_retained'), '>=', $retained, 'all retained ticks came back');
is($node->safe_psql('postgres', 'SELECT min(sample_time) FROM storage_wait_ticks(\'-infinity\')'),
	$oldest, 'the oldest tick survived the restart');
ok(!-e $node->data_dir . '/pg_stat/pg_storage_wait.history',
	'the history file is removed once read (a crash must not reload stale history)');

# --- a damaged history file: WARNING and an empty start, never a crash ---------------------
my $file = $node->data_dir . '/pg_stat/pg_storage_wait.history';
my @damages = (
	[ 'corrupt', sub { my $b = shift; substr($b, length($b) / 2, 4) = 'XXXX'; $b } ],
	[ 'truncated', sub { my $b = shift; substr($b, 0, length($b) / 3) } ],
	[ 'foreign', sub { 'this is not a pg_storage_wait history file' x 10 } ],
);
for my $damage (@damages)
{
	my ($name, $mangle) = @$damage;
	$node->stop;
	ok(-s $file, "history written at shutdown (before $name test)");
	my $bytes = slurp_file($file);
	open my $fh, '>:raw', $file or die $!;
	print $fh $mangle->($bytes);
	close $fh;
	my $log_offset = -s $node->logfile;
	$node->start;
	ok($node->log_contains(qr/WARNING:.*pg_storage_wait: ignoring history file/, $log_offset),
		"$name history file: WARNING in the log");
	is(status_value($node, 'restored_from_disk'), 'f', "$name history file: empty start");
	ok(wait_for_ticks($node, 3), "$name history file: sampler runs");
}

# --- a missing file is an ordinary empty start, without a warning ----------------------------
$node->stop;
unlink $file;
my $log_offset = -s $node->logfile;
$node->start;
ok(!$node->log_contains(qr/pg_storage_wait: ignoring history file/, $log_offset),
	'missing history file: no warning');
ok(wait_for_ticks($node, 3), 'missing history file: sampler runs');

$node->stop;
done_testing();
