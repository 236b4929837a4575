# History survives a worker restart and a clean server restart, with the names its records
# refer to (a replication slot); a corrupt, truncated or foreign history file is survived with a
# WARNING and an empty start.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use Compress::Zlib qw(crc32);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $node = new_pgsw_node('restart', interval => '100ms', conf => 'wal_level = replica');
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
ok(-e $node->data_dir . '/pg_stat/pg_storage_wait.history',
	'the history file is kept once read (a crash-restart restores the last save)');

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

# --- names: a replication slot keeps its name in the restored history --------------------------
# Records name a slot by its id in a dictionary that lives in shared memory; the history file
# carries it. Here the old slot is gone before the restart and a new one is created after it,
# so the restarted server's first slot name is the new one: were the dictionary not restored,
# the new slot would get the old one's id, and the restored readings would be shown under its
# name (their lag, the larger, wins the evidence).
sub slot_evidence
{
	my ($window) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT evidence FROM storage_wait_symptoms('$window') WHERE symptom = 'replication_lag'});
}
$node->safe_psql('postgres', q{SELECT pg_create_physical_replication_slot('pgsw_before_restart', true)});
# ~8 MB of WAL the slot holds back.
$node->safe_psql('postgres', q{
	CREATE TABLE filler AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 15000) g});
ok(poll_until($node, q{SELECT evidence ~ 'pgsw_before_restart .* is [1-9][0-9.]* MB behind'
	FROM storage_wait_symptoms('1 hour') WHERE symptom = 'replication_lag'}),
	'the history records the slot and its lag');
$node->safe_psql('postgres', q{SELECT pg_drop_replication_slot('pgsw_before_restart'); DROP TABLE filler});
$node->restart;
is(status_value($node, 'restored_from_disk'), 't', 'names: history restored');
$node->safe_psql('postgres', q{SELECT pg_create_physical_replication_slot('pgsw_after_restart', true)});
ok(poll_until($node, q{SELECT evidence ~ 'pgsw_after_restart' FROM storage_wait_symptoms('2 seconds')
	WHERE symptom = 'replication_lag'}), 'the restarted server reads the new slot');
like(slot_evidence('1 hour'), qr/^Slot pgsw_before_restart \(physical, inactive\) is [1-9][\d.]* MB behind/,
	'the restored readings keep the old slot\'s name, not the new slot\'s');
$node->safe_psql('postgres', q{SELECT pg_drop_replication_slot('pgsw_after_restart')});

# --- a format-3 file (before names were saved): loaded, its names "(unknown)", never another's --
# The same bytes without the trailing name table, version 3, CRC recomputed. Header: "PGSWHIST"
# u32 version u32 byte_order u32 record_size u32 entry_size u32 rings u64 sysid i64 saved_at.
sub as_format3
{
	my ($data) = @_;
	my ($record_size, $entry_size) = unpack('L<L<', substr($data, 16, 8));
	my $at = 44;
	for my $ring (1 .. 2)
	{
		my $count = unpack('Q<', substr($data, $at, 8));
		$at += 8;
		for (1 .. $count)
		{
			# n_wait_groups .. n_latency_bins at 40, n_device_entries and n_slots at 208
			my $entries = 0;
			$entries += $_ for unpack('L<4', substr($data, $at + 40, 16));
			$entries += $_ for unpack('L<2', substr($data, $at + 208, 8));
			$at += $record_size + $entry_size * $entries;
		}
	}
	my $v3 = substr($data, 0, $at);
	substr($v3, 8, 4) = pack('L<', 3);
	return $v3 . pack('V', crc32($v3));
}
$node->stop;
my $v3 = as_format3(slurp_file($file));
cmp_ok(length $v3, '<', -s $file, 'format 3: the name table is cut off');
open my $fh3, '>:raw', $file or die $!;
print $fh3 $v3;
close $fh3;
$log_offset = -s $node->logfile;
$node->start;
my @v3_warnings = (slurp_file($node->logfile, $log_offset) =~ /WARNING:  pg_storage_wait: .*history.*/g);
is(scalar @v3_warnings, 1, 'format 3: one WARNING');
like($v3_warnings[0] // '', qr/format 3, but this build writes format 4: .*"\(unknown\)"/,
	'format 3: the WARNING names both formats and what the names read');
is(status_value($node, 'restored_from_disk'), 't', 'format 3: its records are restored');
like(slot_evidence('1 hour'), qr/^Slot \(unknown\) \(physical, inactive\) is [1-9][\d.]* MB behind/,
	'format 3: the old slot\'s readings are there, its name unknown');

$node->stop;
done_testing();
