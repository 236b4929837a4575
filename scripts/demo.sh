#!/usr/bin/env bash
# The demo: is this PostgreSQL waiting on storage? One command, on a fresh Debian 12 machine:
#
#   scripts/demo.sh
#
# It provisions PostgreSQL 18 (release build, cached in ~/.cache/pg_storage_wait), builds and
# installs pg_storage_wait into a private copy of it, builds the latency-injection library
# (test/inject), creates a throwaway cluster with the extension preloaded and I/O timing on, and
# runs the mission's workload -- pgbench random single-row UPDATEs on a table far larger than
# shared_buffers, 16 clients -- twice:
#
#   A "local NVMe-like"  no injected latency
#   B "gp3-like"         +3 ms on every data-file read, +2 ms on every fsync/fdatasync
#
# and prints, side by side, pgbench's TPS and mean latency and the two storage_wait_summary()
# rows, then draws per-second read latency, WAL fsync latency and storage-wait share across
# both runs into a PNG (gnuplot). The output and the chart are kept in ./demo-output/.
#
# Why B's numbers: the mission's gp3 transaction (37 ms) spent ~19 ms in page reads and ~11 ms
# in WAL fsync. This workload does ~1.7 data-file reads per transaction and a commit waits
# ~1.5 WAL flushes (its own plus the one in progress), so +3 ms per read and +2 ms per fsync
# split a transaction's storage waits about 19:11 as well (measured in run B: 59-63 % of
# samples IO:DataFileRead, 34-39 % WAL flush waits). The miniature is faster than the original
# (~11 ms instead of 37 ms per transaction); the TPS ratio comes out near the original 9:1
# (measured 6-7:1 on 2 cores, where run A is CPU-limited).
#
# Why the cluster lives in /dev/shm: with a RAM-backed data directory the storage itself adds
# (almost) nothing -- reads ~0.01 ms, fsync ~0.001 ms -- so run A is a device faster than any
# NVMe and run B's latencies are exactly what was injected: a known ground truth. On this
# project's VMs a disk-backed cluster already waits ~1.7 ms per WAL fsync without injection,
# which is not "NVMe-like". PGSW_DEMO_DATA_BASE=/some/disk/folder puts it on a disk instead.
# (Injection sleeps inside pread/fsync whether or not the page cache holds the data: it models
# the device, not the cache.)
#
# Environment (all optional):
#   PGSW_DEMO_SECONDS    length of each run in seconds (default 40)
#   PGSW_DEMO_SCALE      pgbench scale (default 50: 5 M rows, ~750 MB with the index)
#   PGSW_DEMO_CLIENTS    pgbench clients (default 16)
#   PGSW_DEMO_READ_US    run B's injected delay per data-file read, microseconds (default 3000)
#   PGSW_DEMO_SYNC_US    run B's injected delay per fsync/fdatasync, microseconds (default 2000)
#   PGSW_DEMO_PORT       the server's port (default 55432; the server listens only on a Unix
#                        socket in its private temporary folder, so it cannot clash)
#   PGSW_DEMO_OUT        where the output, chart and data are kept (default ./demo-output)
#   PGSW_DEMO_DATA_BASE  where the data directory is created (default /dev/shm)
#   PGSW_CACHE, PG18_VERSION, JOBS  as for scripts/provision-postgres.sh
#
# Runs as root (provisioning uses apt-get; the server runs as the unprivileged `postgres` user,
# or a system user `pgsw` created for it) or as a normal user once provisioning is done.
# Everything temporary is removed at the end, also after a failure or Ctrl-C.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC2034 # read by lib.sh
PGSW_TAG=demo
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$REPO/scripts/lib.sh"

HOME=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
export HOME
PGSW_CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
PG18_VERSION=${PG18_VERSION:-18.6}
export PGSW_CACHE PG18_VERSION # read by provision-postgres.sh
JOBS=${JOBS:-$(nproc)}

RUN_SECONDS=${PGSW_DEMO_SECONDS:-40}
SCALE=${PGSW_DEMO_SCALE:-50}
CLIENTS=${PGSW_DEMO_CLIENTS:-16}
READ_US=${PGSW_DEMO_READ_US:-3000}
SYNC_US=${PGSW_DEMO_SYNC_US:-2000}
PORT=${PGSW_DEMO_PORT:-55432}
OUT=${PGSW_DEMO_OUT:-$REPO/demo-output}
DATA_BASE=${PGSW_DEMO_DATA_BASE:-/dev/shm}

LABEL_A="local NVMe-like"
LABEL_B="gp3-like"

# Filled in as the demo goes; cleanup() looks at them.
WORK=     # the temporary folder: PostgreSQL copy, source copy, injection library, logs
DATA=     # the data directory (under DATA_BASE)
PG=       # $WORK/pg: the private PostgreSQL install
RUN_USER= # who runs the server and the clients
SERVER_STARTED=0
DEMO_START=$SECONDS

# ---------------------------------------------------------------------------------------------
# Helpers

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

# The server must not run as root (initdb refuses): `postgres`, else a system user `pgsw`.
pick_run_user() {
	if [ "$(id -u)" != 0 ]; then
		RUN_USER=$(id -un)
	elif id -u postgres >/dev/null 2>&1; then
		RUN_USER=postgres
	else
		id -u pgsw >/dev/null 2>&1 || {
			say "creating system user pgsw to run the demo server (initdb refuses root)"
			useradd --system --user-group --create-home --home-dir /var/lib/pgsw \
				--shell /usr/sbin/nologin pgsw
		}
		RUN_USER=pgsw
	fi
}

# as_user [VAR=value...] CMD...: run CMD as RUN_USER with a clean environment (a caller's
# PGHOST, PGDATA, LD_PRELOAD or LC_* must not leak in), plus the given assignments.
as_user() {
	local envs=(HOME="$WORK" PATH="$PG/bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8
		PGHOST="$WORK" PGPORT="$PORT" PGUSER=postgres PGDATABASE=postgres)
	while [[ $# -gt 0 && $1 == [A-Z_]*=* ]]; do
		envs+=("$1")
		shift
	done
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$RUN_USER" -- env -i "${envs[@]}" "$@"
	else
		env -i "${envs[@]}" "$@"
	fi
}

# sql QUERY: one query, unaligned, tuples only, tab-separated; stops the demo on an error.
sql() {
	as_user psql -X -q -A -t -F $'\t' -v ON_ERROR_STOP=1 -c "$1"
}

# Is this function (a regprocedure signature) installed? The demo adapts to the extension's
# version: storage_wait_summary and storage_wait_history arrived after the raw readers.
have_function() {
	[ "$(sql "SELECT to_regprocedure('$1') IS NOT NULL")" = t ]
}

# Write the injection control file atomically (temporary file + rename): the library re-reads
# it within 100 ms in every server process, without a restart.
set_injection() {
	printf '%s\n' "$@" >"$WORK/inject.conf.tmp"
	chmod 644 "$WORK/inject.conf.tmp"
	mv -f "$WORK/inject.conf.tmp" "$WORK/inject.conf"
}

cleanup() {
	local rc=$?
	# Finish the cleanup whatever happens: no second Ctrl-C, no stop at a failing command.
	trap '' INT TERM HUP
	trap - EXIT
	set +e
	cd /
	# Back to the demo's own output: a Ctrl-C can strike inside a { ...; } >build.log.
	exec 1>&3 2>&4
	if [ "$rc" = 130 ] || [ "$rc" = 143 ]; then
		warn "interrupted: cleaning up"
	elif [ "$rc" != 0 ] && [ -n "$WORK" ] && [ -f "$WORK/server.log" ]; then
		{ mkdir -p "$OUT" && cp -f "$WORK/server.log" "$OUT/server.log"; } 2>/dev/null || true
		show_file "$WORK/server.log" 40
		warn "the demo failed (exit $rc); the server log is kept in $OUT/server.log"
	fi
	if [ "$SERVER_STARTED" = 1 ]; then
		say "stopping the server"
		as_user pg_ctl -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	# Whatever is left (a pgbench or psql interrupted by Ctrl-C, a server pg_ctl could not
	# stop): processes whose working directory is one of our folders, and only those.
	[ -z "$DATA" ] || kill_processes_under "$DATA"
	[ -z "$WORK" ] || kill_processes_under "$WORK"
	[ -z "$DATA" ] || remove_scratch "$DATA"
	[ -z "$WORK" ] || remove_scratch "$WORK"
	[ "$rc" = 0 ] || say "cleaned up after the failure"
	exit "$rc"
}

# ---------------------------------------------------------------------------------------------
# Steps

step_provision() {
	say "provisioning: Debian packages and PostgreSQL $PG18_VERSION (release build; cached after the first run)"
	"$REPO/scripts/provision-postgres.sh" deps pg18-release
	command -v gnuplot >/dev/null || die "gnuplot is missing (scripts/provision-postgres.sh deps installs gnuplot-nox)"
}

# A private copy of the cached server (~100 MB, a second): `make install` then never touches
# the shared cache, and the unprivileged user owns everything it runs.
step_stage() {
	local prefix=$PGSW_CACHE/pg-$PG18_VERSION-release
	[ -f "$prefix/.complete" ] || die "PostgreSQL $PG18_VERSION (release) is not provisioned at $prefix"
	WORK=$(mktemp -d /tmp/pgsw-demo.XXXXXX)
	chmod 755 "$WORK"
	assert_scratch_path "$WORK"
	# The data directory: RAM-backed by default (see the header), when there is room (~3 GB:
	# the table, its index and the WAL of both runs).
	local free_kb
	free_kb=$(df -Pk "$DATA_BASE" 2>/dev/null | awk 'NR == 2 {print $4}')
	if [ -z "$free_kb" ] || [ "$free_kb" -lt $((SCALE * 60 * 1024)) ]; then
		warn "$DATA_BASE has too little free space ($((${free_kb:-0} / 1024)) MB); the data directory goes to $WORK (disk): run A's fsyncs will be the disk's"
		DATA_BASE=$WORK
	fi
	DATA=$(mktemp -d "$DATA_BASE/pgsw-demo-data.XXXXXX")
	assert_scratch_path "$DATA"
	say "staging PostgreSQL and the source tree in $WORK (data directory: $DATA)"
	PG=$WORK/pg
	cp -a -- "$prefix" "$PG"
	copy_tree "$REPO" "$WORK/src"
	printf '\\set aid random(1, 100000 * :scale)\nUPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n' \
		>"$WORK/update.sql"
	set_injection # empty: no delay
	if [ "$(id -u)" = 0 ]; then chown -R "$RUN_USER:" "$WORK" "$DATA"; fi
	chmod 700 "$DATA"
	cd "$WORK" # so that everything started from here can be found (and stopped) by folder
}

step_build() {
	say "building pg_storage_wait against $("$PG/bin/pg_config" --version) (release build)"
	{ as_user make -C "$WORK/src" -j"$JOBS" PG_CONFIG="$PG/bin/pg_config" &&
		as_user make -C "$WORK/src" PG_CONFIG="$PG/bin/pg_config" install; } >"$WORK/build.log" 2>&1 ||
		{ tail -30 "$WORK/build.log"; die "building or installing the extension failed (output above)"; }
	say "building the latency-injection library (test/inject)"
	as_user make -C "$WORK/src/test/inject" O="$WORK/inject" >>"$WORK/build.log" 2>&1 ||
		{ tail -30 "$WORK/build.log"; die "building test/inject failed (output above)"; }
}

step_cluster() {
	say "creating the cluster: shared_buffers 16MB, pg_storage_wait preloaded, I/O timing on"
	as_user initdb -D "$DATA" -U postgres -A trust -E UTF8 --locale=C --no-sync --no-instructions \
		>"$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log"; die "initdb failed"; }
	# Checkpoints only where the demo asks for them (before each run), so that neither run
	# pays for one the other caused: max_wal_size above the ~1 GB of WAL a run writes.
	cat >>"$DATA/postgresql.conf" <<-CONF

		# scripts/demo.sh
		port = $PORT
		listen_addresses = ''
		unix_socket_directories = '$WORK'
		shared_preload_libraries = 'pg_storage_wait'
		track_io_timing = on
		track_wal_io_timing = on
		compute_query_id = on
		shared_buffers = 16MB
		max_connections = 40
		max_wal_size = 4GB
		checkpoint_timeout = 30min
		log_checkpoints = on
	CONF
	say "starting the server with the injection library preloaded (no delay yet)"
	# LD_PRELOAD in the server's environment only (not in pgbench or psql); every backend is
	# forked from the postmaster and inherits it.
	SERVER_STARTED=1
	as_user LD_PRELOAD="$WORK/inject/pgsw_inject.so" PGSW_INJECT_CONFIG="$WORK/inject.conf" \
		pg_ctl -D "$DATA" -l "$WORK/server.log" -w -t 60 start >/dev/null ||
		die "the server did not start"
	local pid
	pid=$(head -n 1 "$DATA/postmaster.pid")
	grep -q pgsw_inject.so "/proc/$pid/maps" ||
		die "the server (pid $pid) did not load pgsw_inject.so: latency injection would do nothing"
	sql "CREATE EXTENSION pg_storage_wait" >/dev/null
	local t0=$SECONDS
	say "pgbench -i -s $SCALE: $((SCALE / 10)).$((SCALE % 10)) M rows (~$((SCALE * 15)) MB with the index, shared_buffers is 16 MB)"
	as_user pgbench -i -s "$SCALE" -q >"$WORK/pgbench-init.log" 2>&1 ||
		{ tail -20 "$WORK/pgbench-init.log"; die "pgbench -i failed"; }
	say "table ready in $((SECONDS - t0)) s: $(sql "SELECT pg_size_pretty(pg_total_relation_size('pgbench_accounts'))")"
}

# us_to_ms MICROSECONDS: "3", "2.5", "0.08"
us_to_ms() {
	awk -v u="$1" 'BEGIN {print u / 1000}'
}

# injection_text READ_US SYNC_US
injection_text() {
	if [ "$1" = 0 ] && [ "$2" = 0 ]; then
		echo "no injected latency"
	else
		echo "read +$(us_to_ms "$1") ms, fsync +$(us_to_ms "$2") ms"
	fi
}

# run_workload KEY LABEL READ_US SYNC_US: one pgbench run with that much latency injected
# into every data-file read and every fsync, then its storage_wait_summary() row. Leaves
# $WORK/run-KEY.{pgbench,summary,times}.
run_workload() {
	local key=$1 label=$2 read_us=$3 sync_us=$4
	# A checkpoint now, not during the run; then the new injection, and a quiet second so
	# that the run's window starts on a tick that saw none of that.
	sql "CHECKPOINT"
	set_injection "read $read_us" "sync $sync_us" "write 0"
	sleep 1.2
	say "run $key \"$label\" ($(injection_text "$read_us" "$sync_us")): $CLIENTS clients for $RUN_SECONDS s"
	local start end
	start=$(sql "SELECT clock_timestamp()")
	# -P: a progress line every 5 s; the last lines hold TPS and latency.
	as_user pgbench -n -c "$CLIENTS" -j 2 -T "$RUN_SECONDS" -s "$SCALE" -P 5 -f "$WORK/update.sql" \
		2>&1 | tee "$WORK/run-$key.pgbench" | sed -n 's/^progress: /    /p' ||
		{ tail -20 "$WORK/run-$key.pgbench"; die "pgbench failed (run $key)"; }
	end=$(sql "SELECT clock_timestamp()")
	# Wait for the sampler's first tick after the run: it holds the run's last I/O counters.
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(sql "SELECT last_tick_at > '$end' FROM storage_wait_status()")" = t ] && break
		sleep 0.1
	done
	printf '%s\t%s\n' "$start" "$end" >"$WORK/run-$key.times"
	summary_rows "$start" >"$WORK/run-$key.summary"
	top_waits "$start" >>"$WORK/run-$key.summary"
	local tps lat
	tps=$(pgbench_value tps "$key")
	lat=$(pgbench_value latency "$key")
	say "run $key done: $tps TPS, mean latency $lat ms; verdict $(summary_value verdict "$key")" \
		"(score $(summary_value storage_bound_score "$key")), $(summary_value read_latency_avg_ms "$key") ms per read," \
		"$(summary_value wal_fsync_latency_avg_ms "$key") ms per WAL fsync"
}

# pgbench_value tps|latency KEY
pgbench_value() {
	case $1 in
	tps) sed -nE 's/^tps = ([0-9.]+).*/\1/p' "$WORK/run-$2.pgbench" | awk '{printf "%.0f", $1}' ;;
	latency) sed -nE 's/^latency average = ([0-9.]+) ms.*/\1/p' "$WORK/run-$2.pgbench" | awk '{printf "%.2f", $1}' ;;
	esac
}

# summary_value COLUMN KEY
summary_value() {
	awk -F'\t' -v k="$1" '$1 == k {print $2}' "$WORK/run-$2.summary"
}

# summary_rows START: the run's summary as "column<TAB>value" lines, in column order, numbers
# rounded to 3-4 significant digits, timestamps cut to the time of day. The window is from the
# run's start to now (the tick just after its end): storage_wait_summary() when the extension
# has it, else an aggregate of storage_wait_ticks() (averages and maxima only).
summary_rows() {
	local start=$1 source
	if have_function 'storage_wait_summary(interval)'; then
		source="SELECT * FROM storage_wait_summary(clock_timestamp() - timestamptz '$start')"
	else
		source="SELECT min(sample_time - interval_ms * interval '1 ms') AS window_start,
			max(sample_time) AS window_end, count(*) AS ticks,
			sum(active_samples) AS backend_samples,
			sum(active_samples)::float8 / count(*) AS active_backends_avg,
			100.0 * sum(storage_samples) / nullif(sum(active_samples), 0) AS storage_wait_pct,
			100.0 * sum(cpu_samples) / nullif(sum(active_samples), 0) AS cpu_pct,
			100.0 * sum(lock_samples) / nullif(sum(active_samples), 0) AS lock_pct,
			1000.0 * sum(reads) / sum(interval_ms) AS reads_per_s,
			sum(read_time_ms) / nullif(sum(reads), 0) AS read_latency_avg_ms,
			max(read_time_ms / nullif(reads, 0)) AS read_latency_max_tick_ms,
			1000.0 * sum(wal_syncs) / sum(interval_ms) AS wal_fsyncs_per_s,
			sum(wal_sync_time_ms) / nullif(sum(wal_syncs), 0) AS wal_fsync_latency_avg_ms,
			max(wal_sync_time_ms / nullif(wal_syncs, 0)) AS wal_fsync_latency_max_tick_ms,
			'(per-tick aggregate: this build has no storage_wait_summary)' AS verdict
			FROM storage_wait_ticks(timestamptz '$start') WHERE NOT baseline"
	fi
	sql "SELECT j.key, CASE json_typeof(j.value)
			WHEN 'null' THEN 'NULL'
			WHEN 'number' THEN (SELECT trim_scale(round(v, CASE WHEN abs(v) >= 100 THEN 0
				WHEN abs(v) >= 10 THEN 1 WHEN abs(v) >= 1 THEN 2 ELSE 3 END))::text
				FROM (SELECT (j.value #>> '{}')::numeric AS v) n)
			ELSE regexp_replace(j.value #>> '{}',
				'^\\d{4}-\\d\\d-\\d\\dT(\\d\\d:\\d\\d:\\d\\d)(\\.\\d+)?.*$', '\\1') END
		FROM ($source) s, json_each(row_to_json(s)) WITH ORDINALITY AS j(key, value, n)
		ORDER BY j.n"
}

# top_waits START: the run's four most sampled wait events (all backend types; CPU is a NULL
# wait on an active backend), as summary lines "top wait #N<TAB>event share%", when the
# extension has storage_wait_events().
top_waits() {
	have_function 'storage_wait_events(interval)' || return 0
	sql "SELECT 'top wait #' || row_number() OVER (ORDER BY sum(samples) DESC),
			CASE WHEN wait_event_type = wait_event THEN wait_event
				ELSE wait_event_type || ':' || wait_event END
			|| ' ' || round(sum(share_pct)::numeric) || '%'
		FROM storage_wait_events(clock_timestamp() - timestamptz '$1')
		GROUP BY wait_event_type, wait_event ORDER BY sum(samples) DESC LIMIT 4"
}

# The side-by-side table: pgbench's figures, then every summary column, then the hints.
print_comparison() {
	banner "pg_storage_wait demo: the same workload on two storage profiles"
	cat <<-EOF
		workload: pgbench, $CLIENTS clients, $RUN_SECONDS s per run, random single-row UPDATEs of
		  pgbench_accounts (scale $SCALE, $(sql "SELECT pg_size_pretty(pg_total_relation_size('pgbench_accounts'))"); shared_buffers 16MB)
		  \\set aid random(1, 100000 * :scale)
		  UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
		server: $("$PG/bin/postgres" --version), io_method $(sql "SHOW io_method"), data directory on $(stat -f -c %T "$DATA")

	EOF
	{
		printf 'run\tA: %s\tB: %s\n' "$LABEL_A" "$LABEL_B"
		printf 'injected latency\t%s\t%s\n' "$(injection_text 0 0)" "$(injection_text "$READ_US" "$SYNC_US")"
		printf 'pgbench TPS\t%s\t%s\n' "$(pgbench_value tps A)" "$(pgbench_value tps B)"
		printf 'pgbench latency avg (ms)\t%s\t%s\n' "$(pgbench_value latency A)" "$(pgbench_value latency B)"
		printf '%s\t%s\t%s\n' -- -- --
		# Join the two summaries by column name, in A's order; hints go below the table.
		awk -F'\t' 'NR == FNR {b[$1] = $2; order[++n] = $1; next}
			$1 != "hint" {print $1 "\t" $2 "\t" b[$1]; seen[$1] = 1}
			END {for (i = 1; i <= n; i++) if (!seen[order[i]] && order[i] != "hint") print order[i] "\t\t" b[order[i]]}' \
			"$WORK/run-B.summary" "$WORK/run-A.summary"
	} | awk -F'\t' '$1 == "--" {printf "%s\n", "-------------------------------------------------------------------------------"; next}
		{printf "%-26s %-26s %s\n", $1, $2, $3}'
	local key
	for key in A B; do
		[ -n "$(summary_value hint "$key")" ] || continue
		printf '\nhint %s: %s\n' "$key" "$(summary_value hint "$key")" | fold -s -w 100
	done
	if ! have_function 'storage_wait_summary(interval)'; then
		printf '\n(this build has no storage_wait_summary(): the rows above aggregate storage_wait_ticks())\n'
	fi
}

# Per-tick series for the chart, one CSV row per tick inside either run:
#   seconds since run A started, run, read ms, WAL fsync ms, storage-wait share %
# from storage_wait_history() (one row per tick) when the extension has it, else from the raw
# storage_wait_ticks(). A blank line between the runs makes gnuplot break the lines there.
write_series() {
	local a_start a_end b_start b_end source
	IFS=$'\t' read -r a_start a_end <"$WORK/run-A.times"
	IFS=$'\t' read -r b_start b_end <"$WORK/run-B.times"
	if have_function 'storage_wait_history(interval,interval)'; then
		source="SELECT sample_time, read_latency_avg_ms AS read_ms, wal_fsync_latency_avg_ms AS fsync_ms,
			storage_wait_pct AS storage_pct
			FROM storage_wait_history(clock_timestamp() - timestamptz '$a_start', NULL)"
	else
		source="SELECT sample_time, read_time_ms / nullif(reads, 0) AS read_ms,
			wal_sync_time_ms / nullif(wal_syncs, 0) AS fsync_ms,
			100.0 * storage_samples / nullif(active_samples, 0) AS storage_pct
			FROM storage_wait_ticks(timestamptz '$a_start') WHERE NOT baseline"
	fi
	# A tick at time t covers (t - 1 s, t]: the ticks of a run are those after its start up
	# to the first one at or after its end.
	sql "SELECT round(extract(epoch FROM sample_time - timestamptz '$a_start')::numeric, 2),
			CASE WHEN sample_time <= timestamptz '$a_end' + interval '1 s' THEN 'A' ELSE 'B' END,
			coalesce(round(read_ms::numeric, 4)::text, 'NaN'),
			coalesce(round(fsync_ms::numeric, 4)::text, 'NaN'),
			coalesce(round(storage_pct::numeric, 1)::text, 'NaN')
		FROM ($source) s
		WHERE (sample_time > timestamptz '$a_start' AND sample_time <= timestamptz '$a_end' + interval '1 s')
		   OR (sample_time > timestamptz '$b_start' AND sample_time <= timestamptz '$b_end' + interval '1 s')
		ORDER BY sample_time" |
		awk -F'\t' 'BEGIN {OFS = ","; print "# t_s,run,read_ms,wal_fsync_ms,storage_wait_pct"}
			prev != "" && $2 != prev {print ""} {prev = $2; print $1, $2, $3, $4, $5}' \
			>"$OUT/storage-wait-demo.csv"
}

step_chart() {
	say "drawing the chart"
	write_series
	local a_start a_end b_start b_end a0 a1 b0 b1
	IFS=$'\t' read -r a_start a_end <"$WORK/run-A.times"
	IFS=$'\t' read -r b_start b_end <"$WORK/run-B.times"
	read -r a1 b0 b1 <<<"$(sql "SELECT round(extract(epoch FROM timestamptz '$a_end' - '$a_start')),
		round(extract(epoch FROM timestamptz '$b_start' - '$a_start')),
		round(extract(epoch FROM timestamptz '$b_end' - '$a_start'))" | tr '\t' ' ')"
	a0=0
	local terminal='pngcairo size 1200,700 font "DejaVu Sans,11"'
	gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo || terminal='png size 1200,700'
	gnuplot <<-GNUPLOT >"$WORK/gnuplot.log" 2>&1 || { cat "$WORK/gnuplot.log"; die "gnuplot failed"; }
		set terminal $terminal
		set output "$OUT/storage-wait-demo.png"
		set termoption noenhanced
		set title "pg_storage_wait demo: pgbench random UPDATEs, $CLIENTS clients, scale $SCALE, shared_buffers 16MB"
		set datafile separator ","
		set datafile missing "NaN"
		set key outside bottom center horizontal
		set xlabel "seconds since run A started (per-second ticks)"
		set ylabel "latency per operation, ms (log scale)"
		set logscale y
		set yrange [0.0005:1000]
		set format y "%g"
		set y2label "storage-wait share of active samples, %"
		set y2range [0:130]
		set y2tics 0, 20, 100
		set ytics nomirror
		set grid xtics ytics
		set xrange [$((a0 - 2)):$((b1 + 3))]
		set object 1 rect from $a0, graph 0 to $a1, graph 1 fc rgb "#e8f4e8" fs solid 1.0 noborder behind
		set object 2 rect from $b0, graph 0 to $b1, graph 1 fc rgb "#fbe9e7" fs solid 1.0 noborder behind
		set label 1 "A: $LABEL_A\\n$(injection_text 0 0)\\n$(pgbench_value tps A) TPS" at $a1 / 2.0, graph 0.92 center
		set label 2 "B: $LABEL_B\\n$(injection_text "$READ_US" "$SYNC_US")\\n$(pgbench_value tps B) TPS" at ($b0 + $b1) / 2.0, graph 0.92 center
		plot "$OUT/storage-wait-demo.csv" using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#1f77b4" title "data-file read latency (ms)", \\
		     "" using 1:4 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#d62728" title "WAL fsync latency (ms)", \\
		     "" using 1:5 axes x1y2 with steps lw 2 dt 2 lc rgb "#2ca02c" title "storage-wait share (%, right axis)"
	GNUPLOT
}

run_demo() {
	exec 3>&1 4>&2 # the output cleanup() writes to, whatever is redirected when it runs
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	say "pg_storage_wait demo: about $((2 * RUN_SECONDS / 60 + 2)) minutes once PostgreSQL is built; output in $OUT"
	pick_run_user
	step_provision
	step_stage
	step_build
	step_cluster
	run_workload A "$LABEL_A" 0 0
	run_workload B "$LABEL_B" "$READ_US" "$SYNC_US"
	step_chart
	print_comparison
	local took=$((SECONDS - DEMO_START))
	printf '\nchart: %s\ndata:  %s\ntext:  %s\n' "$OUT/storage-wait-demo.png" \
		"$OUT/storage-wait-demo.csv" "$OUT/storage-wait-demo.txt"
	say "demo finished in $((took / 60)) min $((took % 60)) s"
}

main() {
	case "${1:-}" in
	-h | --help)
		usage
		exit 0
		;;
	"") ;;
	*) die "unknown argument '$1' (the demo takes none; see --help)" ;;
	esac
	mkdir -p "$OUT"
	# Inside the repository, keep the output out of git without touching .gitignore.
	[ -f "$OUT/.gitignore" ] || printf '*\n' >"$OUT/.gitignore"
	rm -f "$OUT/server.log"
	# A text copy of everything. The copy ignores Ctrl-C and kill: it must outlive the demo's
	# cleanup (which prints what it did) and ends when the demo closes the pipe.
	run_demo 2>&1 | (
		trap '' INT TERM HUP
		exec tee "$OUT/storage-wait-demo.txt"
	)
}
main "$@"
