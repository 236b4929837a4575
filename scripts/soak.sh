#!/usr/bin/env bash
# Soak test of pg_storage_wait (issue 18): a server sampling every 10 ms under 32 concurrent
# readers, with storage_wait_reset() every minute, reloads changing sample_interval every
# 30 s, the sampler terminated every 5 minutes and a pgbench load. Every 10 s it records the
# private memory (RssAnon) of the sampler, the history saver and the 32 readers' backends, the
# tick/overrun/save counters (each must never go backwards), then at the end counts ERROR /
# FATAL / PANIC lines in the log (the sampler's expected "terminating background worker" FATAL
# excepted), restarts the server and checks that the history came back.
#
#   scripts/soak.sh [--minutes N] [--prefix PG_PREFIX] [--work DIR]
#
# PG_PREFIX: an installed PostgreSQL with pg_storage_wait installed into it. Default: a private
# copy of the cached PostgreSQL 18 build (release if provisioned, else assert; see
# scripts/provision-postgres.sh) in DIR/pg, with this tree's extension built and installed
# into it. Runs the server as `postgres` when started as root.
# Prints a CSV (time_s, sampler_rss_kb, saver_rss_kb, readers_rss_max_kb, readers_rss_sum_kb,
# ticks, overruns, worker_starts, history_saves, errors) and a summary; exit 1 on a failed check:
# a counter going backwards, an unexpected ERROR/FATAL/PANIC, a reader error, the history not
# restored, or private memory growing by more than 1 MB after the first minute (the sampler's,
# each incarnation against its own first reading; the readers' largest).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PGSW_TAG=soak

minutes=30
prefix=${PGSW_SOAK_PREFIX:-}
work=${PGSW_SOAK_WORK:-/tmp/pgsw-soak}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGSW_CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
readers=32
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=$2; shift 2 ;;
	--prefix) prefix=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	*) die "usage: $0 [--minutes N] [--prefix PG_PREFIX] [--work DIR]" ;;
	esac
done
assert_scratch_path "$work"
rm -rf "$work" && mkdir -p "$work"
if [ -z "$prefix" ]; then
	for flavour in release assert; do
		cached=$PGSW_CACHE/pg-18.6-$flavour
		[ -f "$cached/.complete" ] && break
	done
	[ -f "$cached/.complete" ] || die "no cached PostgreSQL 18 (scripts/provision-postgres.sh deps pg18-release)"
	say "staging $cached and this tree's extension in $work/pg"
	cp -a "$cached" "$work/pg"
	copy_tree "$REPO" "$work/src"
	make -s -C "$work/src" -j"$(nproc)" PG_CONFIG="$work/pg/bin/pg_config" >"$work/build.log" 2>&1 &&
		make -s -C "$work/src" PG_CONFIG="$work/pg/bin/pg_config" install >>"$work/build.log" 2>&1 ||
		{ tail -20 "$work/build.log"; die "building the extension failed"; }
	prefix=$work/pg
fi
bin=$prefix/bin
[ -x "$bin/postgres" ] || die "no PostgreSQL at $prefix"
port=$((56000 + RANDOM % 1000))
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
sql() { as_pg "$bin/psql" -X -q -At -h "$work" -p "$port" -d postgres -c "$1"; }

[ "$(id -u)" = 0 ] && chown postgres: "$work" && chmod 755 "$work"
mkdir -p "$work/data"
[ "$(id -u)" = 0 ] && chown postgres: "$work/data"
as_pg "$bin/initdb" -A trust --no-sync -D "$work/data" >/dev/null
cat >>"$work/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_storage_wait'
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
max_connections = 80
track_io_timing = on
compute_query_id = on
pg_storage_wait.sample_interval = '10ms'
pg_storage_wait.save_interval = '60s'
CONF
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	as_pg "$bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
as_pg "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w start >/dev/null
sql 'CREATE EXTENSION pg_storage_wait'
as_pg "$bin/pgbench" -h "$work" -p "$port" -i -s 5 -q postgres >/dev/null 2>&1

# Load: 4 pgbench clients for the whole run.
as_pg "$bin/pgbench" -h "$work" -p "$port" -c 4 -j 1 -T $((minutes * 60 + 30)) -n postgres \
	>"$work/pgbench.log" 2>&1 &
pids+=($!)
# 32 readers, each one long-lived session (one backend whose memory we follow).
for i in $(seq 1 "$readers"); do
	(while true; do
		echo "SELECT count(*) FROM storage_wait_summary('1 minute');"
		echo "SELECT count(*) FROM storage_wait_events('5 minutes');"
		echo "SELECT count(*) FROM storage_wait_history('10 minutes');"
		echo "SELECT count(*) FROM storage_wait_ticks(now() - interval '2 seconds');"
		echo "SELECT count(*) FROM storage_wait_samples(now() - interval '1 second');"
		sleep 0.5
	done | as_pg "$bin/psql" -X -q -At -h "$work" -p "$port" -d postgres \
		-c "SET application_name = 'soak_reader'" -f - >/dev/null 2>>"$work/readers.err") &
	pids+=($!)
done
sleep 2

rss_kb() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
saver_pid() { pgrep -f "postgres: pg_storage_wait history saver" -P "$(head -1 "$work/data/postmaster.pid")" | head -1; }
echo "time_s,sampler_rss_kb,saver_rss_kb,readers_rss_max_kb,readers_rss_sum_kb,ticks,overruns,worker_starts,history_saves,errors,readers_rss_median_kb" \
	| tee "$work/soak.csv"
start=$SECONDS prev_ticks=0 prev_overruns=0 prev_starts=0 prev_saves=0 backwards=0 interval=10
next_reset=60 next_reload=30 next_kill=300 resets=0 reloads=0 kills=0
while [ $((SECONDS - start)) -lt $((minutes * 60)) ]; do
	sleep 10
	t=$((SECONDS - start))
	if [ "$t" -ge "$next_reset" ]; then
		sql 'SELECT storage_wait_reset()' >/dev/null
		next_reset=$((next_reset + 60)) resets=$((resets + 1))
	fi
	if [ "$t" -ge "$next_reload" ]; then
		interval=$([ "$interval" = 10 ] && echo 20 || echo 10)
		sql "ALTER SYSTEM SET pg_storage_wait.sample_interval = '${interval}ms'" >/dev/null
		sql 'SELECT pg_reload_conf()' >/dev/null
		next_reload=$((next_reload + 30)) reloads=$((reloads + 1))
	fi
	if [ "$t" -ge "$next_kill" ]; then
		sql 'SELECT pg_terminate_backend(worker_pid) FROM storage_wait_status()' >/dev/null
		next_kill=$((next_kill + 300)) kills=$((kills + 1))
	fi
	IFS='|' read -r wpid ticks overruns starts saves < <(sql \
		'SELECT coalesce(worker_pid, 0), ticks, overruns, worker_starts, history_saves FROM storage_wait_status()')
	mapfile -t rpids < <(sql "SELECT pid FROM pg_stat_activity WHERE application_name = 'soak_reader'")
	max=0 sum=0 all=()
	for p in "${rpids[@]}"; do
		r=$(rss_kb "$p")
		sum=$((sum + r)) all+=("$r")
		[ "$r" -gt "$max" ] && max=$r
	done
	median=$(printf '%s\n' "${all[@]:-0}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
	spid=$(saver_pid || true)
	errors=$(grep -Ec '(ERROR|FATAL|PANIC):' "$work/server.log" || true)
	for pair in "$ticks:$prev_ticks" "$overruns:$prev_overruns" "$starts:$prev_starts" "$saves:$prev_saves"; do
		[ "${pair%%:*}" -lt "${pair##*:}" ] && backwards=$((backwards + 1))
	done
	prev_ticks=$ticks prev_overruns=$overruns prev_starts=$starts prev_saves=$saves
	echo "$t,$([ "$wpid" != 0 ] && rss_kb "$wpid" || echo 0),$([ -n "$spid" ] && rss_kb "$spid" || echo 0),$max,$sum,$ticks,$overruns,$starts,$saves,$errors,$median" \
		| tee -a "$work/soak.csv"
done

# Errors: everything but the sampler's own termination (asked for above).
unexpected=$(grep -E '(ERROR|FATAL|PANIC):' "$work/server.log" \
	| grep -Ev 'terminating background worker "pg_storage_wait sampler" due to administrator command' || true)
retained=$(sql 'SELECT ticks_retained + rollups_retained FROM storage_wait_status()')
# The readers stop before the restart: its shutdown would otherwise count as their errors.
# Killing a reader's subshell leaves its psql connected (a child of the pipeline): end the psql
# processes by their command line too, so that no session is cut by the shutdown.
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
pkill -f "application_name = 'soak_reader'" 2>/dev/null || true
pids=()
sleep 2
as_pg "$bin/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
as_pg "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w start >/dev/null
sleep 1
IFS='|' read -r restored after < <(sql 'SELECT restored_from_disk, ticks_retained + rollups_retained FROM storage_wait_status()')
say "minutes=$minutes readers=${#rpids[@]} resets=$resets reloads=$reloads worker_kills=$kills counters_backwards=$backwards unexpected_log_errors=$(printf '%s' "$unexpected" | grep -c . || true)"
say "history: $retained records before the restart, restored=$restored with $after after it"
# What psql or the server said; stopping the readers makes runuser and bash print their own
# lines ("Session terminated, killing shell...", "Terminated"), which are not reader errors.
reader_errors=$(grep -Ec '^psql:|(ERROR|FATAL|PANIC):|error:' "$work/readers.err" || true)
say "reader errors: $reader_errors (psql and server lines in $work/readers.err)"
[ -n "$unexpected" ] && printf '%s\n' "$unexpected" | head -20
ok=1
[ "$backwards" = 0 ] || ok=0
[ -z "$unexpected" ] || ok=0
[ "$reader_errors" = 0 ] || ok=0
[ "$restored" = t ] && [ "$after" -ge "$retained" ] || ok=0
# Memory: after the first minute (caches warm), growth of at most 1 MB. The sampler restarts
# every 5 minutes: each incarnation is compared with its own first reading after the minute.
# A reader's RssAnon is up to ~9 MB higher while a query runs (glibc returns large blocks at
# free), so the largest reader at one instant says which reader was mid-query, not growth: the
# readers are followed by their median, the second minute's median against the last minute's.
growth=$(awk -F, 'NR > 1 && $1 >= 60 && $2 > 0 {
		if ($8 != starts) { starts = $8; base = $2 }   # a new sampler incarnation
		if ($2 - base > g) g = $2 - base
	} END { printf "%d", g }' "$work/soak.csv")
readers_growth=$(awk -F, -v last=$((minutes * 60 - 60)) '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return a[int((n + 1) / 2)]
	}
	NR > 1 && $1 >= 60 && $1 < 120 { early[++ne] = $11 }
	NR > 1 && $1 >= last { late[++nl] = $11 }
	END { printf "%d", (ne && nl) ? median(late, nl) - median(early, ne) : 0 }' "$work/soak.csv")
sampler_growth=$growth
say "private memory growth after the first minute: sampler ${sampler_growth} kB, readers (median, second minute to last) ${readers_growth} kB (limit 1024 kB)"
[ "$sampler_growth" -le 1024 ] && [ "$readers_growth" -le 1024 ] || ok=0
[ "$ok" = 1 ] && say "PASS" || { say "FAIL"; exit 1; }
