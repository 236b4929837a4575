# The tick walks the proc array (regular processes) and the auxiliary slots instead of every
# PGPROC slot: it must still see every process pg_stat_activity lists, sessions that connect
# later, and parallel workers (as "parallel worker", carrying their leader's query id).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $node = new_pgsw_node('walk', interval => '100ms');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_storage_wait');
ok(wait_for_ticks($node, 2), 'sampler ticks');
like(slurp_file($node->logfile), qr/sampler started \(interval 100 ms, walking the proc array, /,
	'the sampler found the proc array');
# It gives back the rseq area glibc registers for every thread (2.35+), which the kernel would
# otherwise update at every wake-up (core/rseq_release.hpp). Built for x86-64 and aarch64 with
# glibc 2.35+, it must be able to: "not registered" then means only that glibc made no area
# (a tunable, or a kernel without rseq); a refusal is always a failure.
my ($glibc_major, $glibc_minor) = `getconf GNU_LIBC_VERSION 2>/dev/null` =~ /glibc (\d+)\.(\d+)/;
my $arch = `uname -m`;
my $supported = defined $glibc_major
  && ($glibc_major > 2 || ($glibc_major == 2 && $glibc_minor >= 35))
  && $arch =~ /^(x86_64|aarch64)$/;
my ($rseq) = slurp_file($node->logfile) =~ /sampler started \([^)]*, rseq ([^)]*)\)/;
like($rseq // '', $supported ? qr/^(given back|not registered)$/ : qr/^(given back|not registered|not available in this build)$/,
	"the sampler's rseq registration: given back, or there was none");
diag("rseq: $rseq") if defined $rseq && $rseq ne 'given back';

my $every_process_seen = every_process_seen_sql();
my $watch = $node->background_psql('postgres');
sub watch_until
{
	my ($sql) = @_;
	for (1 .. 100)
	{
		return 1 if $watch->query_safe($sql) eq 't';
		select(undef, undef, undef, 0.2);
	}
	return 0;
}
ok(watch_until($every_process_seen), 'a tick sees every process pg_stat_activity lists');
my $clients = q{
	SELECT coalesce(sum(samples), 0) FROM storage_wait_samples(now() - interval '2 seconds')
	WHERE backend_type = 'client backend'
	  AND sample_time = (SELECT max(sample_time) FROM storage_wait_ticks(now() - interval '2 seconds'))};
my $clients_before = $watch->query_safe($clients);

my @sessions = map { $node->background_psql('postgres') } 1 .. 3;
ok(watch_until("SELECT ($clients) = $clients_before + 3"),
	'three sessions that connected later are seen');
ok(watch_until($every_process_seen), 'and still every process');
is($watch->query_safe(q{
	SELECT string_agg(t, ',' ORDER BY t) FROM (
	    SELECT DISTINCT backend_type AS t FROM storage_wait_samples(now() - interval '2 seconds')
	    WHERE backend_type IN ('checkpointer', 'background writer', 'walwriter')) s}),
	'background writer,checkpointer,walwriter', 'auxiliary processes are seen');
$_->quit for @sessions;

# --- parallel workers: classified by their lock group leader, sampled with its query id ------
$node->safe_psql('postgres', 'CREATE TABLE big AS SELECT g FROM generate_series(1, 3000000) g; VACUUM ANALYZE big');
my $work = q{SELECT count(*) FROM big WHERE md5(g::text) < '1'};
my ($queryid) = $node->safe_psql('postgres', "EXPLAIN (VERBOSE) $work") =~ /Query Identifier: (-?\d+)/;
ok(defined $queryid, 'the server computes query ids');
my $parallel = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;};
like($node->safe_psql('postgres', "$parallel EXPLAIN $work"), qr/Workers Planned: 2/,
	'the statement runs with two parallel workers');
my $start = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', "$parallel $work");
my ($ticks, $worker_samples, $query_samples) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM storage_wait_ticks('$start')),
	       (SELECT coalesce(sum(samples), 0) FROM storage_wait_samples('$start')
	        WHERE backend_type = 'parallel worker'),
	       (SELECT coalesce(sum(samples), 0) FROM storage_wait_queries('1 minute')
	        WHERE queryid = $queryid)});
cmp_ok($worker_samples, '>', 0, "parallel workers are sampled ($worker_samples samples in $ticks ticks)");
# The leader alone gives at most one sample per tick: more means the workers carried the id.
cmp_ok($query_samples, '>', $ticks,
	"parallel workers' samples carry the query id ($query_samples samples in $ticks ticks)");

$watch->quit;
$node->stop;
done_testing();
