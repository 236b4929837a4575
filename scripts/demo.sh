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
# and, as root on a machine with the cgroup v1 blkio hierarchy, a third time on a second
# throwaway cluster whose data directory and WAL live on a loop device (ext4) under a real
# IOPS ceiling (a blkio throttle rule, like a cloud volume's provisioned IOPS):
#
#   C "gp3 at its IOPS baseline"   PGSW_DEMO_IOPS read and as many write IOPS, no injection,
#                                  debug_io_direct = 'data' so reads reach the device
#
# It prints, side by side, pgbench's TPS and mean latency and the storage_wait_summary() rows,
# where a transaction's time goes (ms per transaction now and at the reference device), the
# volume's figures (storage_device_stats), then draws per-second read latency, WAL fsync
# latency and storage-wait share across the runs, and run C's device IOPS against its ceiling,
# into a PNG (gnuplot). The output and the chart are kept in ./demo-output/.
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
#   PGSW_DEMO_IOPS       run C's read and write IOPS ceilings (default 300; 0 leaves run C out)
#   PGSW_DEMO_SCALE_C    run C's pgbench scale (default 10: ~150 MB, ten times shared_buffers)
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
IOPS_C=${PGSW_DEMO_IOPS:-300}
SCALE_C=${PGSW_DEMO_SCALE_C:-10}
PORT=${PGSW_DEMO_PORT:-55432}
OUT=${PGSW_DEMO_OUT:-$REPO/demo-output}
DATA_BASE=${PGSW_DEMO_DATA_BASE:-/dev/shm}

LABEL_A="local NVMe-like"
LABEL_B="gp3-like"
LABEL_C="gp3 at its IOPS baseline"
RUNS=(A B) # C joins when its volume could be made

# Filled in as the demo goes; cleanup() looks at them.
WORK=     # the temporary folder: PostgreSQL copy, source copy, injection library, logs
DATA=     # the data directory (under DATA_BASE)
PG=       # $WORK/pg: the private PostgreSQL install
RUN_USER= # who runs the server and the clients
SERVER_STARTED=0
VOLUME=     # run C: test/devices_env.sh's folder (loop devices, mounts, cgroup)
DATA_C=     # run C's data directory, on the throttled loop device
SERVER_C_STARTED=0
SERVER_PORT=$PORT # the server sql() and pgbench talk to: run C's has its own port
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
		PGHOST="$WORK" PGPORT="$SERVER_PORT" PGUSER=postgres PGDATABASE=postgres)
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
	if [ "$SERVER_C_STARTED" = 1 ]; then
		say "stopping run C's server"
		as_user pg_ctl -D "$DATA_C" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	if [ -n "$VOLUME" ]; then
		kill_processes_under "$VOLUME"
		bash "$WORK/src/test/devices_env.sh" down "$VOLUME" >/dev/null 2>&1 ||
			warn "could not tear down run C's loop devices in $VOLUME: see test/devices_env.sh down"
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

# Run C's volume: a loop device (ext4) holding the second cluster's data directory and WAL (one
# volume, as a gp3 volume holds both), in a blkio cgroup the server is started in. Root only
# (losetup, mount, cgroup v1 blkio); elsewhere run C is left out, saying why.
volume_possible() {
	[ "$IOPS_C" -gt 0 ] || { say "run C left out (PGSW_DEMO_IOPS=0)"; return 1; }
	if [ "$(id -u)" != 0 ] || [ ! -d /sys/fs/cgroup/blkio ] || ! command -v losetup >/dev/null; then
		warn "run C (a real IOPS ceiling) needs root, losetup and the cgroup v1 blkio hierarchy: left out"
		return 1
	fi
}

step_volume() {
	volume_possible || return 0
	VOLUME=$WORK/volume
	say "run C: a loop device (ext4) for data and WAL, in a blkio cgroup that will throttle it"
	bash "$WORK/src/test/devices_env.sh" up "$VOLUME" "$RUN_USER" >/dev/null ||
		die "could not make run C's loop device (test/devices_env.sh up)"
	DATA_C=$VOLUME/data/pgdata
	as_user initdb -D "$DATA_C" -U postgres -A trust -E UTF8 --locale=C --no-sync --no-instructions \
		>"$WORK/initdb-c.log" 2>&1 || { cat "$WORK/initdb-c.log"; die "initdb (run C) failed"; }
	# As A/B, plus reads and writes of data files with O_DIRECT: with 24 GB of page cache a
	# ~150 MB table would otherwise never reach the device. WAL stays buffered (fdatasync).
	cat >>"$DATA_C/postgresql.conf" <<-CONF

		# scripts/demo.sh, run C
		port = $((PORT + 1))
		listen_addresses = ''
		unix_socket_directories = '$WORK'
		shared_preload_libraries = 'pg_storage_wait'
		track_io_timing = on
		track_wal_io_timing = on
		compute_query_id = on
		shared_buffers = 16MB
		max_connections = 40
		max_wal_size = 256MB
		checkpoint_timeout = 30min
		debug_io_direct = 'data'
	CONF
	SERVER_PORT=$((PORT + 1))
	say "starting run C's server inside the cgroup $(cat "$VOLUME/cgroup")"
	SERVER_C_STARTED=1
	# The shell joins the cgroup first: the postmaster and every process it forks (backends,
	# I/O workers) are then throttled.
	(
		echo "$BASHPID" >"$(cat "$VOLUME/cgroup")/cgroup.procs"
		as_user pg_ctl -D "$DATA_C" -l "$WORK/server-c.log" -w -t 60 start >/dev/null
	) || die "run C's server did not start"
	sql "CREATE EXTENSION pg_storage_wait" >/dev/null
	say "pgbench -i -s $SCALE_C on the loop device (not throttled yet)"
	as_user pgbench -i -s "$SCALE_C" -q >"$WORK/pgbench-init-c.log" 2>&1 ||
		{ tail -20 "$WORK/pgbench-init-c.log"; die "pgbench -i (run C) failed"; }
	sql "VACUUM ANALYZE" >/dev/null
	sql "CHECKPOINT" >/dev/null
	local cg majmin
	cg=$(cat "$VOLUME/cgroup")
	majmin=$(cat "$VOLUME/data.majmin")
	say "throttling $(cat "$VOLUME/data.dev") ($majmin) to $IOPS_C read IOPS and $IOPS_C write IOPS"
	echo "$majmin $IOPS_C" >"$cg/blkio.throttle.read_iops_device"
	echo "$majmin $IOPS_C" >"$cg/blkio.throttle.write_iops_device"
	# A reload makes the sampler re-read its cgroup's rules: the ceiling becomes a known one.
	sql "SELECT pg_reload_conf()" >/dev/null
	RUNS+=(C)
	SERVER_PORT=$PORT
}

# use_server KEY: sql() and pgbench talk to the server that ran (or runs) that run.
use_server() {
	if [ "$1" = C ]; then SERVER_PORT=$((PORT + 1)); else SERVER_PORT=$PORT; fi
}

run_label() {
	case $1 in A) echo "$LABEL_A" ;; B) echo "$LABEL_B" ;; C) echo "$LABEL_C" ;; esac
}

# run_conditions KEY: what the run's storage was given.
run_conditions() {
	case $1 in
	A) injection_text 0 0 ;;
	B) injection_text "$READ_US" "$SYNC_US" ;;
	C) echo "$IOPS_C read + $IOPS_C write IOPS" ;;
	esac
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
	local key=$1 label=$2 read_us=$3 sync_us=$4 scale=$SCALE
	[ "$key" != C ] || scale=$SCALE_C
	use_server "$key"
	# A checkpoint now, not during the run; then the new injection, and a quiet second so
	# that the run's window starts on a tick that saw none of that.
	sql "CHECKPOINT"
	set_injection "read $read_us" "sync $sync_us" "write 0"
	sleep 1.2
	say "run $key \"$label\" ($(run_conditions "$key")): $CLIENTS clients for $RUN_SECONDS s"
	local start end
	start=$(sql "SELECT clock_timestamp()")
	# -P: a progress line every 5 s; the last lines hold TPS and latency.
	as_user pgbench -n -c "$CLIENTS" -j 2 -T "$RUN_SECONDS" -s "$scale" -P 5 -f "$WORK/update.sql" \
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
	volume_rows "$start" >>"$WORK/run-$key.summary"
	breakdown_rows "$start" >"$WORK/run-$key.breakdown"
	local tps lat
	tps=$(pgbench_value tps "$key")
	lat=$(pgbench_value latency "$key")
	say "run $key done: $tps TPS, mean latency $lat ms; verdict $(summary_value verdict "$key")" \
		"(score $(summary_value storage_bound_score "$key")), $(summary_value read_latency_avg_ms "$key") ms per read," \
		"$(summary_value wal_fsync_latency_avg_ms "$key") ms per WAL fsync"
	use_server A
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

# volume_rows START: the data directory's device over the run (storage_device_stats), as
# summary lines "volume: column<TAB>value": the iostat -x figures, the ceiling and PostgreSQL's
# read latency beside the device's. A RAM-backed run has no block device: the reason is shown.
volume_rows() {
	have_function 'storage_device_stats(interval)' || return 0
	sql "SELECT j.key, coalesce(CASE json_typeof(j.value) WHEN 'number'
				THEN trim_scale(round((j.value #>> '{}')::numeric, 2))::text
				ELSE j.value #>> '{}' END, 'NULL')
		FROM (SELECT coalesce(device, 'no block device') AS \"volume: device\",
				reads_per_s AS \"volume: reads_per_s\", writes_per_s AS \"volume: writes_per_s\",
				iops_limit AS \"volume: iops_limit\", at_limit_pct AS \"volume: at_limit_pct\",
				read_await_ms AS \"volume: read_await_ms\",
				pg_read_latency_ms AS \"volume: pg_read_latency_ms\",
				util_pct AS \"volume: util_pct\"
			FROM storage_device_stats(clock_timestamp() - timestamptz '$1')
			WHERE 'data' = ANY (roles) OR device IS NULL
			ORDER BY device IS NULL LIMIT 1) s,
			json_each(row_to_json(s)) WITH ORDINALITY AS j(key, value, n)
		ORDER BY j.n"
}

# breakdown_rows START: where a transaction's time went (the talk's table), as
# "label<TAB>ms now<TAB>ms at the reference device" lines, when the extension has
# storage_wait_breakdown() and storage_wait_what_if(): reads, WAL, lock, CPU, the rest, the
# total, then the throughput and the projection's verdict on the CPU.
breakdown_rows() {
	have_function 'storage_wait_breakdown(interval)' || return 0
	local window="clock_timestamp() - timestamptz '$1'"
	sql "WITH b AS (SELECT CASE component WHEN 'data_read' THEN 'page reads'
				WHEN 'wal_flush' THEN 'WAL flush at commit' WHEN 'lock' THEN 'locks'
				WHEN 'other_storage' THEN 'other storage (writes...)'
				WHEN 'cpu' THEN 'CPU (incl. waiting for a core)' ELSE 'other' END AS part,
				ms_per_xact, ms_per_xact_at_reference
			FROM storage_wait_breakdown($window)),
		parts AS (SELECT part, sum(ms_per_xact) AS now_ms, sum(ms_per_xact_at_reference) AS ref_ms
			FROM b GROUP BY part)
		SELECT part, coalesce(round(now_ms::numeric, 2)::text, 'NULL'),
		       coalesce(round(ref_ms::numeric, 2)::text, 'NULL')
		FROM parts ORDER BY array_position(ARRAY['page reads', 'WAL flush at commit',
			'other storage (writes...)', 'locks', 'CPU (incl. waiting for a core)', 'other'], part)"
	have_function 'storage_wait_what_if(interval,double precision,double precision)' || return 0
	sql "SELECT 'transaction (server time)', coalesce(round(xact_time_ms::numeric, 2)::text, 'NULL'),
			coalesce(round(xact_time_at_reference_ms::numeric, 2)::text, 'NULL')
		FROM storage_wait_what_if($window)
		UNION ALL
		SELECT 'transactions per second', coalesce(round(xacts_per_s::numeric)::text, 'NULL'),
			coalesce(round(xacts_per_s_at_reference::numeric)::text, 'NULL')
			|| CASE WHEN cpu_capped THEN ' (CPU cap)' ELSE '' END
		FROM storage_wait_what_if($window)"
}

# The talk's table for every run: ms per transaction by component, now and at the reference.
print_breakdown() {
	[ -s "$WORK/run-A.breakdown" ] || return 0
	printf '\nwhere a transaction'"'"'s time goes (ms per transaction; "at ref": every read and WAL flush\n'
	printf 'at the reference latency, read %s / flush %s, capped by the CPU):\n' \
		"$(sql "SELECT current_setting('pg_storage_wait.reference_read_latency')")" \
		"$(sql "SELECT current_setting('pg_storage_wait.reference_flush_latency')")"
	local key files=() header
	header=$(printf '%-30s' '')
	for key in "${RUNS[@]}"; do
		header+=$(printf ' %9s %9s ' "$key now" "$key at ref")
		files+=("$WORK/run-$key.breakdown")
	done
	printf '%s\n' "$header"
	# Every file lists the same rows in the same order (breakdown_rows).
	paste "${files[@]}" | awk -F'\t' '{line = sprintf("%-30s", $1)
		for (i = 2; i <= NF; i += 3) line = line sprintf(" %9s %9s ", $i, $(i + 1)); print line}'
}

# The side-by-side table: pgbench's figures, then every summary column, then the hints.
print_comparison() {
	banner "pg_storage_wait demo: the same workload on ${#RUNS[@]} storage profiles"
	cat <<-EOF
		workload: pgbench, $CLIENTS clients, $RUN_SECONDS s per run, random single-row UPDATEs of
		  pgbench_accounts (runs A, B: scale $SCALE, $(sql "SELECT pg_size_pretty(pg_total_relation_size('pgbench_accounts'))"); shared_buffers 16MB)
		  \\set aid random(1, 100000 * :scale)
		  UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
		server: $("$PG/bin/postgres" --version), io_method $(sql "SHOW io_method"), data directory on $(stat -f -c %T "$DATA")
	EOF
	if [ -n "$DATA_C" ]; then
		printf '  run C: scale %s on a %s filesystem on %s (loop device), data and WAL, debug_io_direct = data\n' \
			"$SCALE_C" "$(stat -f -c %T "$DATA_C")" "$(cat "$VOLUME/data.dev")"
	fi
	echo
	local key files=()
	for key in "${RUNS[@]}"; do files+=("$WORK/run-$key.summary"); done
	{
		printf 'run'
		for key in "${RUNS[@]}"; do printf '\t%s: %s' "$key" "$(run_label "$key")"; done
		printf '\nstorage'
		for key in "${RUNS[@]}"; do printf '\t%s' "$(run_conditions "$key")"; done
		printf '\npgbench TPS'
		for key in "${RUNS[@]}"; do printf '\t%s' "$(pgbench_value tps "$key")"; done
		printf '\npgbench latency avg (ms)'
		for key in "${RUNS[@]}"; do printf '\t%s' "$(pgbench_value latency "$key")"; done
		printf '\n--\n'
		# Join the summaries by column name, in the order first seen; hints go below the table.
		awk -F'\t' 'FNR == 1 {f++}
			{if (!($1 in seen)) {seen[$1] = 1; order[++n] = $1} v[f, $1] = $2}
			END {for (i = 1; i <= n; i++) {k = order[i]; if (k == "hint") continue
				line = k; for (j = 1; j <= f; j++) line = line "\t" v[j, k]; print line}}' "${files[@]}"
	} | awk -F'\t' '$1 == "--" {printf "%s\n", "----------------------------------------------------------------------------------------------------"; next}
		{line = sprintf("%-28s", $1); for (i = 2; i <= NF; i++) line = line sprintf(" %-24s", $i); print line}'
	for key in "${RUNS[@]}"; do
		[ -n "$(summary_value hint "$key")" ] || continue
		printf '\nhint %s: %s\n' "$key" "$(summary_value hint "$key")" | fold -s -w 100
	done
	if ! have_function 'storage_wait_summary(interval)'; then
		printf '\n(this build has no storage_wait_summary(): the rows above aggregate storage_wait_ticks())\n'
	fi
}

# Per-tick series for the chart, one CSV row per tick inside a run:
#   seconds since run A started, run, read ms, WAL fsync ms, storage-wait share %, data device IOPS
# from storage_wait_history() (one row per tick) of the run's server. A blank line between the
# runs makes gnuplot break the lines there.
series_rows() { # series_rows KEY A_START
	local key=$1 a_start=$2 start end device
	IFS=$'\t' read -r start end <"$WORK/run-$key.times"
	use_server "$key"
	device=NULL
	have_function 'storage_device_stats(interval)' && device=data_device_iops
	# A tick at time t covers (t - interval, t]: the ticks of a run are those after its start
	# up to the first one at or after its end.
	sql "SELECT round(extract(epoch FROM sample_time - timestamptz '$a_start')::numeric, 2), '$key',
			coalesce(round(read_latency_avg_ms::numeric, 4)::text, 'NaN'),
			coalesce(round(wal_fsync_latency_avg_ms::numeric, 4)::text, 'NaN'),
			coalesce(round(storage_wait_pct::numeric, 1)::text, 'NaN'),
			coalesce(round(($device)::numeric, 1)::text, 'NaN')
		FROM storage_wait_history(clock_timestamp() - timestamptz '$start', NULL)
		WHERE sample_time > timestamptz '$start' AND sample_time <= timestamptz '$end' + interval '1 s'
		ORDER BY sample_time"
	use_server A
}

write_series() {
	local a_start a_end key
	IFS=$'\t' read -r a_start a_end <"$WORK/run-A.times"
	for key in "${RUNS[@]}"; do series_rows "$key" "$a_start"; done |
		awk -F'\t' 'BEGIN {OFS = ","; print "# t_s,run,read_ms,wal_fsync_ms,storage_wait_pct,data_device_iops"}
			prev != "" && $2 != prev {print ""} {prev = $2; print $1, $2, $3, $4, $5, $6}' \
			>"$OUT/storage-wait-demo.csv"
}

# run_span KEY A_START: the run's start and end in seconds since run A started.
run_span() {
	local start end
	IFS=$'\t' read -r start end <"$WORK/run-$1.times"
	sql "SELECT round(extract(epoch FROM timestamptz '$start' - '$2')),
		round(extract(epoch FROM timestamptz '$end' - '$2'))" | tr '\t' ' '
}

step_chart() {
	say "drawing the chart"
	write_series
	local a_start a_end key span=() objects='' labels='' last=0 n=0 colors=(e8f4e8 fbe9e7 e7eefb)
	IFS=$'\t' read -r a_start a_end <"$WORK/run-A.times"
	for key in "${RUNS[@]}"; do
		read -r -a span <<<"$(run_span "$key" "$a_start")"
		n=$((n + 1))
		objects+="set object $n rect from ${span[0]}, graph 0 to ${span[1]}, graph 1 fc rgb \"#${colors[n - 1]}\" fs solid 1.0 noborder behind"$'\n'
		labels+="set label $n \"$key: $(run_label "$key")\\n$(run_conditions "$key")\\n$(pgbench_value tps "$key") TPS\" at (${span[0]} + ${span[1]}) / 2.0, graph 0.92 center"$'\n'
		last=${span[1]}
	done
	local terminal='pngcairo size 1200,900 font "DejaVu Sans,11"' ceiling_plot=''
	gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo || terminal='png size 1200,900'
	if [ -n "$DATA_C" ]; then
		# Run C's device: reads + writes per second against the two rules' sum.
		ceiling_plot="set size 1, 0.35
			set origin 0, 0
			set title \"run C: the data volume's IOPS (reads + writes per second, /proc/diskstats) against its ceiling\"
			unset logscale y
			set yrange [0:$((IOPS_C * 2 * 13 / 10))]
			set ylabel \"IOPS\"
			unset y2label
			unset y2tics
			unset label
			set key inside top left
			plot \"$OUT/storage-wait-demo.csv\" using 1:6 with linespoints lw 2 pt 7 ps 0.6 lc rgb \"#9467bd\" title \"data device IOPS (r+w)\", \\
			     $((IOPS_C * 2)) with lines lw 2 dt 2 lc rgb \"#000000\" title \"ceiling: $IOPS_C read + $IOPS_C write IOPS\""
	fi
	gnuplot <<-GNUPLOT >"$WORK/gnuplot.log" 2>&1 || { cat "$WORK/gnuplot.log"; die "gnuplot failed"; }
		set terminal $terminal
		set output "$OUT/storage-wait-demo.png"
		set termoption noenhanced
		set datafile separator ","
		set datafile missing "NaN"
		set multiplot
		set lmargin at screen 0.07
		set rmargin at screen 0.9
		set size 1, $([ -n "$DATA_C" ] && echo 0.65 || echo 1)
		set origin 0, $([ -n "$DATA_C" ] && echo 0.35 || echo 0)
		set title "pg_storage_wait demo: pgbench random UPDATEs, $CLIENTS clients, shared_buffers 16MB"
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
		set xrange [-2:$((last + 3))]
		$objects
		$labels
		plot "$OUT/storage-wait-demo.csv" using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#1f77b4" title "data-file read latency (ms)", \\
		     "" using 1:4 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#d62728" title "WAL fsync latency (ms)", \\
		     "" using 1:5 axes x1y2 with steps lw 2 dt 2 lc rgb "#2ca02c" title "storage-wait share (%, right axis)"
		$ceiling_plot
		unset multiplot
	GNUPLOT
}

run_demo() {
	exec 3>&1 4>&2 # the output cleanup() writes to, whatever is redirected when it runs
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	say "pg_storage_wait demo: about $((3 * RUN_SECONDS / 60 + 3)) minutes once PostgreSQL is built; output in $OUT"
	pick_run_user
	step_provision
	step_stage
	step_build
	step_cluster
	run_workload A "$LABEL_A" 0 0
	run_workload B "$LABEL_B" "$READ_US" "$SYNC_US"
	step_volume
	[ -z "$DATA_C" ] || run_workload C "$LABEL_C" 0 0
	step_chart
	print_comparison
	print_breakdown
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
