# Shared helpers for pg_storage_wait's TAP tests.
package PgswTest;

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use Exporter 'import';
our @EXPORT = qw(new_pgsw_node wait_for_ticks status_value poll_until);

# A node with pg_storage_wait preloaded and I/O timing on; extra settings appended.
sub new_pgsw_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opts{init} // {} });
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_storage_wait'
track_io_timing = on
track_wal_io_timing = on
compute_query_id = on
pg_storage_wait.sample_interval = '@{[ $opts{interval} // '100ms' ]}'
@{[ $opts{conf} // '' ]}
});
	return $node;
}

sub status_value
{
	my ($node, $column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM storage_wait_status()");
}

# Poll a boolean SQL expression until true (default 60 s); returns whether it became true.
sub poll_until
{
	my ($node, $sql, $timeout_s) = @_;
	$timeout_s //= 60;
	for (my $waited = 0; $waited < $timeout_s * 10; $waited++)
	{
		my $result = $node->safe_psql('postgres', $sql);
		return 1 if $result eq 't';
		usleep(100_000);
	}
	return 0;
}

# Wait until the sampler has recorded at least $n more ticks than now.
sub wait_for_ticks
{
	my ($node, $n) = @_;
	my $start = status_value($node, 'ticks');
	return poll_until($node,
		"SELECT ticks >= $start + $n FROM storage_wait_status()");
}

1;
