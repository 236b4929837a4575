#!/usr/bin/env bash
# What the probe (pg_storage_wait.probe) costs the sampler's tick: BENCHMARKS.md section 3's
# method (10 ms ticks, 82 idle sessions + 8 select-only clients, tick_cost_us of every
# non-baseline tick from storage_wait_ticks()), four configurations in rotating order:
#
#   before   the commit this branch started from (BASE, default: the merge base with main)
#   off      this tree, pg_storage_wait.probe = off (the default)
#   on_1s    this tree, probe on, probe_interval 1 s (the default interval)
#   on_10ms  this tree, probe on, probe_interval 10 ms (100 reads a second)
#
# The probe's reading runs only at ticks that read the I/O counters (every io_read_interval,
# 1 s: one tick in 100 at 10 ms), so the table gives those ticks ("counter ticks") apart.
#
#   bench/probe_cost.sh            (root; servers run as the user `postgres`)
# Environment: PGSW_PROBE_BENCH_WORK (default /tmp/pgsw-probe-bench), PG_PREFIX (a provisioned
# server; default the PostgreSQL 18 assert build, else pg-18.6-release if present), ROUNDS (3),
# HOLD (seconds measured per run, 30), BASE (git revision of "before"), PORT (55490).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
W=${PGSW_PROBE_BENCH_WORK:-/tmp/pgsw-probe-bench}
if [ -z "${PG_PREFIX:-}" ]; then
	PG_PREFIX=$CACHE/pg-18.6-assert
	[ -f "$CACHE/pg-18.6-release/.complete" ] && PG_PREFIX=$CACHE/pg-18.6-release
fi
ROUNDS=${ROUNDS:-3}
HOLD=${HOLD:-30}
PORT=${PORT:-55490}
BASE=${BASE:-$(git -C "$REPO" merge-base HEAD main)}
USER_PG=postgres

[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
[ -f "$PG_PREFIX/.complete" ] || { echo "no server at $PG_PREFIX" >&2; exit 1; }

say() { printf '[probe-cost %s] %s\n' "$(date +%T)" "$*" >&2; }
as_pg() { runuser -u "$USER_PG" -- env -i PATH="$1/pg/bin:/usr/bin:/bin" HOME=/tmp LANG=C.UTF-8 PGPORT=$PORT PGHOST=/tmp PGDATABASE=postgres "${@:2}"; }
pct() { sort -g | awk -v p="$1" '{v[NR]=$1} END {if (NR==0) {print "n/a"; exit} i=int(NR*p/100+0.999999); if(i<1)i=1; print v[i]}'; }
mean() { awk '{s+=$1} END {if (NR) printf "%.1f", s/NR; else print "n/a"}'; }

STARTED=()
cleanup() {
	set +e
	[ -n "${BG:-}" ] && kill $BG 2>/dev/null
	for d in "${STARTED[@]}"; do
		[ -f "$d/postmaster.pid" ] && kill -INT "$(head -1 "$d/postmaster.pid")" 2>/dev/null
	done
	sleep 2
}
trap cleanup EXIT

# A private server copy and the extension built from a source tree, per build.
setup_build() { # setup_build NAME (source in $W/NAME/src already)
	local dir=$W/$1
	say "$1: server copy and build ($(basename "$PG_PREFIX"))"
	rm -rf "$dir/pg" "$dir/data"
	cp -a "$PG_PREFIX" "$dir/pg"
	chown -R "$USER_PG:" "$dir"
	as_pg "$dir" make -s -C "$dir/src" -j2 PG_CONFIG="$dir/pg/bin/pg_config" >/dev/null
	as_pg "$dir" make -s -C "$dir/src" PG_CONFIG="$dir/pg/bin/pg_config" install >/dev/null
	as_pg "$dir" initdb -D "$dir/data" -A trust >/dev/null
	cat >>"$dir/data/postgresql.conf" <<EOF
port = $PORT
unix_socket_directories = '/tmp'
shared_preload_libraries = 'pg_storage_wait'
track_io_timing = on
track_wal_io_timing = on
pg_storage_wait.sample_interval = '10ms'
max_connections = 100
shared_buffers = 256MB
EOF
	printf '\\sleep 500 ms\nSELECT 1;\n' >"$dir/idle.sql"
	chown "$USER_PG:" "$dir/idle.sql"
}

run_config() { # run_config CONFIG BUILD EXTRA_OPTIONS
	local config=$1 dir=$W/$2 opts=$3 out=$W/results
	as_pg "$dir" pg_ctl -D "$dir/data" -l "$dir/server.log" -w -o "$opts" start >/dev/null
	STARTED+=("$dir/data")
	if [ ! -f "$dir/.initialized" ]; then
		as_pg "$dir" psql -X -q -c 'CREATE EXTENSION pg_storage_wait'
		as_pg "$dir" pgbench -i -s 10 -q >/dev/null 2>&1
		touch "$dir/.initialized"
	fi
	as_pg "$dir" pgbench -n -c 82 -j 2 -T $((HOLD + 20)) -f "$dir/idle.sql" >/dev/null 2>&1 &
	local idle=$!
	sleep 10
	as_pg "$dir" pgbench -n -S -c 8 -j 2 -T $((HOLD + 5)) >/dev/null 2>&1 &
	local active=$!
	BG="$idle $active"
	sleep 3
	local since
	since=$(as_pg "$dir" psql -X -qAt -c 'SELECT now()')
	sleep "$HOLD"
	as_pg "$dir" psql -X -qAt -F ' ' -c "SELECT tick_cost_us, counters_read::int, processes
		FROM storage_wait_ticks('$since') WHERE NOT baseline" >>"$out/$config.ticks"
	as_pg "$dir" psql -X -qAt -c "SELECT coalesce(sum(probes), 0) FROM storage_probe_latency(now() - '$since'::timestamptz)" \
		>>"$out/$config.probes" 2>/dev/null || echo 0 >>"$out/$config.probes"
	wait $idle $active || true
	BG=
	as_pg "$dir" pg_ctl -D "$dir/data" -m fast -w stop >/dev/null
}

mkdir -p "$W"
chmod 755 "$W"
rm -rf "$W/results" "$W/before/src" "$W/probe/src"
mkdir -p "$W/results" "$W/before/src" "$W/probe/src"
git -C "$REPO" archive "$BASE" | tar -x -C "$W/before/src"
(cd "$REPO" && tar --exclude=.git -cf - .) | tar -x -C "$W/probe/src"
setup_build before
setup_build probe

configs=(before off on_1s on_10ms)
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < ${#configs[@]}; k++)); do
		c=${configs[$(((k + r) % ${#configs[@]}))]}
		say "round $((r + 1))/$ROUNDS: $c"
		case $c in
		before) run_config before before "" ;;
		off) run_config off probe "" ;;
		on_1s) run_config on_1s probe "-c pg_storage_wait.probe=on -c pg_storage_wait.probe_interval=1s" ;;
		on_10ms) run_config on_10ms probe "-c pg_storage_wait.probe=on -c pg_storage_wait.probe_interval=10ms" ;;
		esac
	done
done

{
	printf 'config\tticks\tmedian_us\tp95_us\tmean_us\tcounter_ticks\tcounter_median_us\tcounter_p95_us\tcounter_mean_us\tprobes\n'
	for c in "${configs[@]}"; do
		f=$W/results/$c.ticks
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$(wc -l <"$f")" \
			"$(cut -d' ' -f1 "$f" | pct 50)" "$(cut -d' ' -f1 "$f" | pct 95)" "$(cut -d' ' -f1 "$f" | mean)" \
			"$(awk '$2 == 1' "$f" | wc -l)" "$(awk '$2 == 1 {print $1}' "$f" | pct 50)" \
			"$(awk '$2 == 1 {print $1}' "$f" | pct 95)" "$(awk '$2 == 1 {print $1}' "$f" | mean)" \
			"$(paste -sd+ "$W/results/$c.probes" | bc)"
	done
} | tee "$W/results/summary.tsv" | column -t
say "server: $(basename "$PG_PREFIX"); base $BASE; results in $W/results"
