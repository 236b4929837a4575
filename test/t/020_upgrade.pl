# The 1.0 -> 1.1 upgrade path. A database that installed 1.0 and ran ALTER EXTENSION ... UPDATE
# has exactly the objects, grants and comments of a fresh 1.1 install, and gives the same
# answers. And a history file written by the 1.0 library (history format 1, the committed
# fixture) is rejected at start with one WARNING naming both formats, never misread.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin";
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PgswTest;

my $fixture = "$FindBin::RealBin/../fixtures/history-format1-ext1.0.bin";
ok(-s $fixture, 'the format-1 history fixture is there');

my $node = new_pgsw_node('upgrade', interval => '100ms');
copy($fixture, $node->data_dir . '/pg_stat/pg_storage_wait.history') or die "copy: $!";
$node->start;

# --- the 1.0 history file: one WARNING naming both formats, an empty start ------------------
my $log = slurp_file($node->logfile);
my @warnings = grep { /WARNING:.*pg_storage_wait.*history/ } split /\n/, $log;
is(scalar @warnings, 1, 'one WARNING about the 1.0 history file')
  or diag(join "\n", @warnings);
# This build's format (2 in 1.1's first cut, 3 since the saver added fields) is named too.
like($warnings[0] // '', qr/format 1\b.*reads format [2-9]\b/,
	'the WARNING names format 1 and the format this build reads');
# The rejected file stays until this build saves over it (the saver's first save, or the clean
# shutdown's): from then on the history is this build's and restores without a WARNING.
$node->restart;
my $log_after = substr(slurp_file($node->logfile), length $log);
is(scalar(grep { /WARNING:.*pg_storage_wait.*history/ } split /\n/, $log_after), 0,
	'after a clean restart the history file is this build\'s: no WARNING again');

$node->safe_psql('postgres', 'CREATE DATABASE upgraded');
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('upgraded', "CREATE EXTENSION pg_storage_wait VERSION '1.0'");
$node->safe_psql('fresh', 'CREATE EXTENSION pg_storage_wait');
is($node->safe_psql('fresh', 'SELECT restored_from_disk FROM storage_wait_status()'), 't',
	'the restart restored this build\'s own history (the 1.0 file gave nothing)');
ok(poll_until_in($node, 'fresh', 'SELECT ticks >= 20 FROM storage_wait_status()'),
	'the sampler ticks');

# The 1.0 declarations keep working with the 1.1 library until the update has run.
is($node->safe_psql('upgraded',
		"SELECT extversion FROM pg_extension WHERE extname = 'pg_storage_wait'"), '1.0',
	'installed as 1.0');
my ($rc, $out, $err) = $node->psql('upgraded',
	"SELECT ticks > 0 FROM storage_wait_summary('1 hour')");
is($rc, 0, '1.0 summary with the 1.1 library: no error') or diag($err);
is($out, 't', '1.0 summary with the 1.1 library: ticks counted');

$node->safe_psql('upgraded', 'ALTER EXTENSION pg_storage_wait UPDATE');
is($node->safe_psql('upgraded',
		"SELECT extversion FROM pg_extension WHERE extname = 'pg_storage_wait'"), '1.1',
	'ALTER EXTENSION UPDATE reaches 1.1');

# --- the same objects, definitions, grants and comments -------------------------------------
# One line per member object: its description, its definition (functions: result, arguments
# and attributes; relations: kind and view text), its ACL and every comment on it.
my $members = q{
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) || E'\n    ' ||
       coalesce(CASE d.classid
           WHEN 'pg_proc'::regclass THEN (
               SELECT concat_ws(' ; ', pg_get_function_identity_arguments(p.oid),
                                pg_get_function_result(p.oid), p.provolatile, p.proparallel,
                                p.proisstrict, p.prorows, p.prosrc, p.probin,
                                'acl=' || coalesce(p.proacl::text, 'default'))
               FROM pg_proc p WHERE p.oid = d.objid)
           WHEN 'pg_class'::regclass THEN (
               SELECT concat_ws(' ; ', c.relkind, pg_get_viewdef(c.oid),
                                'acl=' || coalesce(c.relacl::text, 'default'))
               FROM pg_class c WHERE c.oid = d.objid)
           END, '') || E'\n    comments: ' ||
       coalesce((SELECT string_agg(objsubid || '=' || description, ' | ' ORDER BY objsubid)
                 FROM pg_description
                 WHERE classoid = d.classid AND objoid = d.objid), '')
FROM pg_depend d
JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
WHERE e.extname = 'pg_storage_wait' AND d.deptype = 'e'
ORDER BY 1};
my $fresh_members = $node->safe_psql('fresh', $members);
my $upgraded_members = $node->safe_psql('upgraded', $members);
my @lines = grep { /^\S/ } split /\n/, $fresh_members;
cmp_ok(scalar @lines, '>=', 15, 'the fresh install has its member objects')
  or diag($fresh_members);
ok((grep { /storage_wait_breakdown/ } @lines), 'the fresh install has 1.1 objects');
is($upgraded_members, $fresh_members,
	'upgraded and fresh installs: the same objects, definitions, grants and comments');
my $extension = q{SELECT extrelocatable, extversion, extconfig IS NULL, obj_description(oid, 'pg_extension')
  FROM pg_extension WHERE extname = 'pg_storage_wait'};
is($node->safe_psql('upgraded', $extension), $node->safe_psql('fresh', $extension),
	'the same extension row and comment');

# --- the same answers ----------------------------------------------------------------------
# A fixed past window of ticks, read in both databases, must be identical row for row.
my $window = $node->safe_psql('fresh',
	"SELECT min(sample_time), max(sample_time) FROM storage_wait_ticks('-infinity')");
my ($from, $to) = split /\|/, $window;
my $ticks = qq{SELECT count(*), md5(string_agg(t::text, ',' ORDER BY sample_time))
  FROM storage_wait_ticks('-infinity') t WHERE sample_time BETWEEN '$from' AND '$to'};
my $fresh_ticks = $node->safe_psql('fresh', $ticks);
like($fresh_ticks, qr/^[1-9]\d*\|/, 'the window holds ticks');
is($node->safe_psql('upgraded', $ticks), $fresh_ticks, 'the same ticks in both databases');

# The summary: the same columns (names and types), one non-error row in both.
my $columns = q{SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
  ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = 'storage_wait_summary'::regclass
  AND a.attnum > 0};
is($node->safe_psql('upgraded', $columns), $node->safe_psql('fresh', $columns),
	'storage_wait_summary: the same columns');
for my $db ('fresh', 'upgraded')
{
	($rc, $out, $err) = $node->psql($db,
		"SELECT count(*), bool_and(ticks > 0) FROM storage_wait_summary('1 hour')");
	is($rc, 0, "$db: storage_wait_summary('1 hour') without error") or diag($err);
	is($out, '1|t', "$db: storage_wait_summary answers one row over the ticks");
	($rc, $out, $err) = $node->psql($db,
		"SELECT count(*) FROM storage_wait_breakdown('1 hour')");
	is($rc, 0, "$db: storage_wait_breakdown('1 hour') without error") or diag($err);
}

$node->stop;
done_testing();

# poll_until for a database other than postgres.
sub poll_until_in
{
	my ($node, $db, $sql) = @_;
	for (my $waited = 0; $waited < 600; $waited++)
	{
		return 1 if $node->safe_psql($db, $sql) eq 't';
		select(undef, undef, undef, 0.1);
	}
	return 0;
}
