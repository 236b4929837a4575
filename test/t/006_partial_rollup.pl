# A window longer than the tick ring reads finished minutes, the sampler's partial roll-up of
# the current minute and the few ticks after it: at a 10 ms interval with a 1-second tick ring,
# every tick since the start must still be counted once (the worker folds ticks into the
# roll-up in batches, reading them back from the ring, and republishes the partial each second).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use PgswTest;

my $node = new_pgsw_node('partial', interval => '10ms', conf => 'pg_storage_wait.tick_records = 100');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');

ok(poll_until($node, 'SELECT rollups_retained >= 1 FROM storage_wait_status()', 90),
	'a minute was rolled up');
# Some seconds into the next minute, so that the minute being summed holds far more ticks than
# the ring (100 = 1 s): a window reading only the ring would miss most of them.
ok(poll_until($node, q{SELECT extract(second FROM now()) BETWEEN 5 AND 50}, 70),
	'inside a minute');

for my $round (1 .. 3)
{
	my $before = status_value($node, 'ticks');
	my ($ticks, $source) = split /\|/,
	  $node->safe_psql('postgres', q{SELECT ticks, source FROM storage_wait_summary('1 hour')});
	my $after = status_value($node, 'ticks');
	is($source, 'rollups', "round $round: the summary reads roll-ups");
	cmp_ok($ticks, '>=', $before, "round $round: no tick lost ($ticks counted, $before run before)");
	cmp_ok($ticks, '<=', $after, "round $round: no tick counted twice ($ticks counted, $after run after)");

	# The wait-event profile is summed from the same records: every active sample counted once.
	my ($backend_samples, $event_samples) = split /\|/, $node->safe_psql('postgres', q{
		WITH s AS (SELECT backend_samples FROM storage_wait_summary('1 hour')),
		     e AS (SELECT sum(samples) AS samples FROM storage_wait_events('1 hour'))
		SELECT s.backend_samples, e.samples FROM s, e});
	cmp_ok($event_samples, '>=', $backend_samples,
		"round $round: events cover the summary's active samples");
	usleep(700_000);
}

# Back on the ring only: a window shorter than the ring does not use the partial.
is($node->safe_psql('postgres', q{SELECT source FROM storage_wait_summary('500 ms')}),
	'ticks', 'a short window reads ticks');

# --- query ids: a running statement's samples carry its id -----------------------------------
my $work = 'SELECT count(*) FROM generate_series(1, 15000000)';
my ($queryid) = $node->safe_psql('postgres', "EXPLAIN (VERBOSE) $work") =~ /Query Identifier: (-?\d+)/;
ok(defined $queryid, 'the server computes query ids');
my $started = time;
$node->safe_psql('postgres', $work);
my $seconds = time - $started;
my $samples = $node->safe_psql('postgres',
	"SELECT coalesce(sum(samples), 0) FROM storage_wait_queries('1 minute') WHERE queryid = $queryid");
cmp_ok($samples, '>=', 20, "the statement's samples carry its query id ($samples samples, ~${seconds} s at 10 ms)");

$node->stop;
done_testing();
