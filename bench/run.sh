#!/usr/bin/env bash
# pg_storage_wait benchmarks: the one command behind BENCHMARKS.md.
#
#   bench/run.sh [--quick] [SUBCOMMAND...]
#
#   throughput  pgbench TPC-B-like and select-only, 16 clients, PG 18 release: rounds of
#               {not loaded, sampling at 1 s, sampling at 10 ms} in rotating order, restart
#               between configs; ratio of each sampling run to the same round's unloaded run
#   sched       experiment: {none, 10 ms, 10 ms with the worker under SCHED_BATCH (chrt)}
#   peer        the same in the PG 17 chroot with {none, pg_storage_wait 10 ms,
#               pg_wait_sampling 10 ms}, plus the cost of reading each one's profile/history
#               while a select-only load runs
#   peer-read   only the read-cost part of peer
#   tick-cost   worker's own tick cost (storage_wait_ticks().tick_cost_us) at max_connections
#               100 / 1000 / 5000 with many idle and some active sessions
#   query-cost  storage_wait_summary/history/breakdown/what_if/symptoms/report over 5 min, 1 h,
#               7 d of history restored from a test-only fast-fill file (bench/fill_history.cpp)
#   state-cost  what the round-2 readings add to a tick that reads the counters: 100
#               connections (92 idle sessions + 8 select-only clients), counters read every 10 ms
#               tick, with 0 and then 10 logical replication slots (issue 14's budget case)
#   memory      shared_memory_bytes at defaults and at max_connections 5000; the worker's
#               VmRSS/RssAnon sampled over N ticks at 10 ms (100,000; --quick 6,000)
#   micro       Google Benchmark microbenchmarks of the core (bench/micro/bench_core.cpp)
#   cpu         the sampling process's own CPU time per sample, pg_storage_wait vs pg_wait_sampling
#               (PG 17 chroot, 10 ms, 8-client select-only load; /proc/<pid>/schedstat, ns)
#   cpu-together the same figure with both samplers in one server over the same seconds (the
#               host's state is then the same for both; each round's ratio is paired)
#   cpu-profile where each sampler's CPU goes: perf record (cpu-clock, call graphs) of each
#               sampling process over SECS seconds of the same load as cpu; reports by symbol
#   cpu-pages   the memory each sampler touches per wake-up, by mapping (both in one server
#               under the same load as cpu-together): the pages' accessed bits are cleared
#               (/proc/<pid>/clear_refs) and read back 12 ms later (smaps "Referenced"), 9 times;
#               after a 10-ms sleep each such page is a likely TLB and cache miss
#   all         micro, query-cost, tick-cost, memory, throughput, peer, cpu (default)
#
#   --quick     fewer/shorter runs (3 rounds x 8 s, fewer calls, 6,000 memory ticks)
#
# Needs root (servers run as the unprivileged user `postgres`, the PG 17 server in a chroot).
# Provisioned servers: scripts/provision-postgres.sh deps pg18-release pg17.
# Environment: PGSW_BENCH_WORK (scratch, default /tmp/pgsw-bench), PGSW_CACHE, ROUNDS, SECS,
# SCALE (pgbench scale, default 20), CLIENTS (16), MEMORY_TICKS, QUERY_CALLS (20), TOGETHER_CONF
# (more lines for cpu-together's server, e.g. "pg_storage_wait.io_read_interval = '1h'" to take
# the once-a-second counter readings out of the comparison).
# Results: $PGSW_BENCH_WORK/results/<subcommand>/ (raw logs) and summary.txt in each.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC2034 # read by lib.sh
PGSW_TAG=pgsw-bench
# shellcheck source=../scripts/lib.sh
. "$REPO/scripts/lib.sh"

HOME=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
PGSW_CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
W=${PGSW_BENCH_WORK:-/tmp/pgsw-bench}
RESULTS=$W/results
PG18_RELEASE=$PGSW_CACHE/pg-18.6-release
CHROOT_SRC=$PGSW_CACHE/chroot-trixie-pg17
CH=$W/chroot17 # a private copy: other runs' mounts and installs never touch ours
PG17_BIN=/usr/lib/postgresql/17/bin
USER_PG=postgres
PORT=${PORT:-55432}

QUICK=0
SUBS=()
for a in "$@"; do
	case "$a" in
	--quick) QUICK=1 ;;
	-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	throughput | sched | peer | peer-read | tick-cost | query-cost | state-cost | memory | micro | cpu | cpu-together | cpu-profile | cpu-pages | all) SUBS+=("$a") ;;
	*) die "unknown argument '$a' (see --help)" ;;
	esac
done
[ ${#SUBS[@]} -gt 0 ] || SUBS=(all)
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-3} SECS=${SECS:-8} MEMORY_TICKS=${MEMORY_TICKS:-6000} QUERY_CALLS=${QUERY_CALLS:-10}
else
	ROUNDS=${ROUNDS:-5} SECS=${SECS:-20} MEMORY_TICKS=${MEMORY_TICKS:-100000} QUERY_CALLS=${QUERY_CALLS:-20}
fi
SCALE=${SCALE:-20}
CLIENTS=${CLIENTS:-16}
[ "$(id -u)" = 0 ] || die "run as root (servers are started as '$USER_PG' via runuser, PG 17 in a chroot)"
id "$USER_PG" >/dev/null 2>&1 || die "needs a user '$USER_PG'"

# ---- helpers -------------------------------------------------------------------------------

# median / min / max of numbers on stdin, "median [min–max] (n)"
stats() {
	sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "n/a"; exit}
		m = (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2;
		printf "%.4g [%.4g–%.4g] (n=%d)\n", m, v[1], v[NR], NR}'
}
# p-th percentile (nearest rank) of numbers on stdin
pct() { sort -g | awk -v p="$1" '{v[NR]=$1} END {if (NR==0) {print "n/a"; exit} i=int(NR*p/100+0.999999); if(i<1)i=1; print v[i]}'; }

# MODE=18: host server from $W/pg18; MODE=17: chroot server. Paths of DATA are as the server
# sees them; HDATA is the same folder from the host.
set_mode() {
	MODE=$1
	if [ "$MODE" = 18 ]; then
		BIN=$W/pg18/bin DATA=$W/data18${2:-} HDATA=$W/data18${2:-}
	else
		BIN=$PG17_BIN DATA=/var/tmp/pgsw-bench/data17 HDATA=$CH/var/tmp/pgsw-bench/data17
	fi
}
as_pg() { # run as postgres with the mode's binaries first in PATH
	if [ "$MODE" = 18 ]; then
		runuser -u "$USER_PG" -- env -i PATH="$BIN:/usr/bin:/bin" HOME=/tmp LANG=C.UTF-8 PGPORT=$PORT PGHOST=/tmp PGDATABASE=postgres "$@"
	else
		chroot "$CH" /usr/sbin/runuser -u "$USER_PG" -- /usr/bin/env -i PATH="$BIN:/usr/bin:/bin" HOME=/tmp LANG=C.UTF-8 PGPORT=$PORT PGHOST=/tmp PGDATABASE=postgres "$@"
	fi
}
psqlq() { as_pg psql -X -qAt -v ON_ERROR_STOP=1 -c "$1"; }

CH_MOUNTS=(proc dev dev/shm)
chroot_umount() {
	local i m
	for ((i = ${#CH_MOUNTS[@]} - 1; i >= 0; i--)); do
		m=$CH/${CH_MOUNTS[$i]}
		mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	return 0
}
chroot_mount() {
	local m
	chroot_umount
	for m in "${CH_MOUNTS[@]}"; do mount --bind "/$m" "$CH/$m"; done
	MOUNTED=1
}
STARTED_DATA=() # servers this run started: the only ones cleanup stops
MOUNTED=0
cleanup() {
	set +e
	[ -n "${BG_PIDS:-}" ] && kill $BG_PIDS 2>/dev/null
	for d in "${STARTED_DATA[@]}"; do
		[ -f "$d/postmaster.pid" ] && kill -QUIT "$(head -1 "$d/postmaster.pid")" 2>/dev/null
	done
	sleep 2
	[ "$MOUNTED" = 1 ] && chroot_umount
}
trap cleanup EXIT

# ---- setup ---------------------------------------------------------------------------------

setup_tree() {
	[ -n "${TREE_DONE:-}" ] && return
	if [ -n "${PGSW_BENCH_NO_BUILD:-}" ] && [ -d "$W/src" ]; then TREE_DONE=1; return; fi
	mkdir -p "$W" "$RESULTS"
	chmod 755 "$W"
	remove_scratch "$W/src"
	copy_tree "$REPO" "$W/src"
	TREE_DONE=1
}
setup_tools() {
	setup_tree
	if [ -n "${PGSW_BENCH_NO_BUILD:-}" ] && [ -x "$W/bb/fill_history" ]; then return; fi
	say "building bench tools (Release) in $W/bb"
	cmake -S "$W/src/bench" -B "$W/bb" -DCMAKE_BUILD_TYPE=Release >"$W/bb.log" 2>&1
	cmake --build "$W/bb" -j"$(nproc)" >>"$W/bb.log" 2>&1 || { tail -30 "$W/bb.log"; die "bench build failed"; }
}
setup_pg18() {
	setup_tree
	[ -n "${PG18_DONE:-}" ] && return
	if [ -n "${PGSW_BENCH_NO_BUILD:-}" ] && [ -f "$("$W/pg18/bin/pg_config" --pkglibdir)/pg_storage_wait.so" ]; then PG18_DONE=1; return; fi
	[ -x "$PG18_RELEASE/bin/postgres" ] || die "no release PG 18 at $PG18_RELEASE: scripts/provision-postgres.sh pg18-release"
	if [ ! -x "$W/pg18/bin/postgres" ]; then
		say "staging a private copy of $PG18_RELEASE"
		cp -a "$PG18_RELEASE" "$W/pg18"
	fi
	say "building and installing pg_storage_wait for PG 18 (release)"
	(cd "$W/src" && make -s clean >/dev/null 2>&1; make -s -j"$(nproc)" PG_CONFIG="$W/pg18/bin/pg_config" &&
		make -s PG_CONFIG="$W/pg18/bin/pg_config" install) >"$W/ext18.log" 2>&1 || { tail -30 "$W/ext18.log"; die "build failed"; }
	if [ ! -f "$W/pg18/share/postgresql/extension/pg_prewarm.control" ]; then
		say "building contrib/pg_prewarm (the release build lacks it) for the warm-up"
		tar -C "$W" -xjf "$PGSW_CACHE/src/postgresql-18_18.6.orig.tar.bz2" postgresql-18.6/contrib/pg_prewarm
		make -s -C "$W/postgresql-18.6/contrib/pg_prewarm" USE_PGXS=1 PG_CONFIG="$W/pg18/bin/pg_config" install >/dev/null
	fi
	chmod -R a+rX "$W/pg18"
	PG18_DONE=1
}
setup_pg17() {
	setup_tree
	[ -n "${PG17_DONE:-}" ] && return
	if [ ! -x "$CH/usr/lib/postgresql/17/bin/postgres" ]; then
		[ -d "$CHROOT_SRC" ] || die "no PG 17 chroot at $CHROOT_SRC: scripts/provision-postgres.sh pg17"
		say "copying the PG 17 chroot to $CH"
		chroot_umount 2>/dev/null || true
		cp -a "$CHROOT_SRC" "$CH"
	fi
	chroot_mount
	if [ -n "${PGSW_BENCH_NO_BUILD:-}" ] && [ -f "$CH/usr/lib/postgresql/17/lib/pg_storage_wait.so" ]; then
		PG17_DONE=1
		return
	fi
	rm -rf "$CH/var/tmp/pgsw-src"
	cp -a "$W/src" "$CH/var/tmp/pgsw-src"
	(cd "$W/src" && make -s clean >/dev/null 2>&1) || true
	say "building and installing pg_storage_wait in the PG 17 chroot"
	chroot "$CH" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root sh -c \
		"cd /var/tmp/pgsw-src && make -s clean >/dev/null 2>&1; make -s -j2 with_llvm=no PG_CONFIG=$PG17_BIN/pg_config && make -s with_llvm=no PG_CONFIG=$PG17_BIN/pg_config install" \
		>"$W/ext17.log" 2>&1 || { tail -30 "$W/ext17.log"; die "PG 17 build failed"; }
	PG17_DONE=1
}

# ---- servers -------------------------------------------------------------------------------

BASE_CONF="
listen_addresses = ''
unix_socket_directories = '/tmp'
shared_buffers = 512MB
max_wal_size = 8GB
checkpoint_timeout = 30min
fsync = off
synchronous_commit = off
full_page_writes = off
track_io_timing = on
autovacuum = off
log_min_messages = warning
"

# initdb (once per mode) and pgbench -i
init_cluster() {
	if [ ! -f "$HDATA/PG_VERSION" ]; then
		mkdir -p "$HDATA"
		chmod 755 "$(dirname "$HDATA")"
		chmod 700 "$HDATA"
		if [ "$MODE" = 18 ]; then chown "$USER_PG" "$HDATA"; else chroot "$CH" chown "$USER_PG" "$DATA"; fi
		say "initdb $HDATA"
		as_pg initdb -D "$DATA" -U "$USER_PG" --no-sync >/dev/null
		printf "%s\ninclude_if_exists = '%s/bench.conf'\n" "$BASE_CONF" "$DATA" >>"$HDATA/postgresql.conf"
		: >"$HDATA/bench.conf"
		start_server ""
		say "pgbench -i -s $SCALE"
		as_pg pgbench -i -q -s "$SCALE" >/dev/null 2>&1
		stop_server
	fi
}
# start_server "extra conf lines"
start_server() {
	printf 'port = %s\n%s\n' "$PORT" "$1" >"$HDATA/bench.conf"
	STARTED_DATA+=("$HDATA")
	as_pg pg_ctl -D "$DATA" -l "$DATA/server.log" -w -t 300 start >/dev/null ||
		{ tail -20 "$HDATA/server.log"; die "server did not start"; }
}
stop_server() {
	as_pg pg_ctl -D "$DATA" -w -t 120 -m fast stop >/dev/null || true
}
conf_for() { # config name -> extra conf lines
	case "$1" in
	none) echo "" ;;
	pgsw_1s) printf "shared_preload_libraries = 'pg_storage_wait'\npg_storage_wait.sample_interval = 1000\n" ;;
	pgsw_10ms | pgsw_10ms_batch) printf "shared_preload_libraries = 'pg_storage_wait'\npg_storage_wait.sample_interval = 10\n" ;;
	pgws_10ms) printf "shared_preload_libraries = 'pg_wait_sampling'\npg_wait_sampling.profile_period = 10\npg_wait_sampling.history_period = 10\n" ;;
	both_10ms) printf "shared_preload_libraries = 'pg_storage_wait,pg_wait_sampling'\npg_storage_wait.sample_interval = 10\npg_wait_sampling.profile_period = 10\npg_wait_sampling.history_period = 10\n" ;;
	*) die "unknown config $1" ;;
	esac
}
# After a restart: load the tables into shared buffers, then create the extension if loaded.
warm_up() {
	psqlq "CREATE EXTENSION IF NOT EXISTS pg_prewarm" >/dev/null
	psqlq "SELECT pg_prewarm('pgbench_accounts'), pg_prewarm('pgbench_accounts_pkey'), pg_prewarm('pgbench_branches'), pg_prewarm('pgbench_tellers')" >/dev/null
	case "$1" in
	pgsw_*_batch)
		# Experiment: the sampler under SCHED_BATCH (no wake-up preemption of backends)
		psqlq "CREATE EXTENSION IF NOT EXISTS pg_storage_wait" >/dev/null
		chrt --batch -p 0 "$(psqlq "SELECT worker_pid FROM storage_wait_status()")"
		;;
	pgsw_*) psqlq "CREATE EXTENSION IF NOT EXISTS pg_storage_wait" >/dev/null ;;
	pgws_*) psqlq "CREATE EXTENSION IF NOT EXISTS pg_wait_sampling" >/dev/null ;;
	both_*)
		psqlq "CREATE EXTENSION IF NOT EXISTS pg_storage_wait" >/dev/null
		psqlq "CREATE EXTENSION IF NOT EXISTS pg_wait_sampling" >/dev/null
		;;
	esac
	psqlq "CHECKPOINT" >/dev/null
}
# pgbench run -> tps (excluding connections)
run_pgbench() { # workload secs logfile
	local args=(-n -c "$CLIENTS" -j 2 -T "$2")
	[ "$1" = select ] && args+=(-S)
	as_pg pgbench "${args[@]}" >"$3" 2>&1 || { cat "$3"; die "pgbench failed"; }
	grep -E '^tps = ' "$3" | head -1 | sed -E 's/^tps = ([0-9.]+).*/\1/'
}

# Rounds of CONFIGS in rotating order (round r starts at config r mod n); each run: restart,
# warm up, TPC-B for SECS, select-only for SECS. Results: out/<config>.<workload>.<round>
throughput_rounds() { # outdir configs...
	local out=$1 r i n c k tps
	shift
	local configs=("$@")
	n=${#configs[@]}
	mkdir -p "$out"
	: >"$out/runs.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((k = 0; k < n; k++)); do
			i=$(((r - 1 + k) % n))
			c=${configs[$i]}
			start_server "$(conf_for "$c")"
			warm_up "$c"
			for wl in tpcb select; do
				tps=$(run_pgbench "$wl" "$SECS" "$out/$c.$wl.$r.log")
				printf '%s\t%s\t%s\t%s\n' "$r" "$c" "$wl" "$tps" >>"$out/runs.tsv"
				say "round $r $c $wl: $tps tps"
			done
			if [ "$c" != none ] && [ "${c%%_*}" = pgsw ]; then
				psqlq "SELECT ticks, overruns, round(tick_cost_avg_us::numeric,1), tick_cost_max_us FROM storage_wait_status()" >"$out/$c.status.$r"
			fi
			stop_server
		done
	done
}
# Per workload and config: tps median [min–max], and ratio to the same round's `none`
summarize_rounds() { # outdir
	local out=$1
	awk -F'\t' '
		{ tps[$1,$2,$3] = $4; rounds[$1]; cfg[$2]; wl[$3] }
		END {
			for (w in wl) for (c in cfg) {
				n = 0; m = 0
				for (r in rounds) if ((r,c,w) in tps) { print w, c, "tps", tps[r,c,w] }
				if (c == "none") continue
				for (r in rounds) if ((r,c,w) in tps && (r,"none",w) in tps)
					print w, c, "ratio", tps[r,c,w] / tps[r,"none",w]
			}
		}' "$out/runs.tsv" >"$out/values.txt"
	{
		printf '%-8s %-10s %-34s %s\n' workload config "tps median [min–max]" "throughput vs none (median [min–max]); overhead = 1 - ratio"
		for w in tpcb select; do
			for c in $(awk '{print $2}' "$out/values.txt" | sort -u); do
				printf '%-8s %-10s %-34s %s\n' "$w" "$c" \
					"$(awk -v w="$w" -v c="$c" '$1==w && $2==c && $3=="tps" {print $4}' "$out/values.txt" | stats)" \
					"$(awk -v w="$w" -v c="$c" '$1==w && $2==c && $3=="ratio" {print $4}' "$out/values.txt" | stats)"
			done
		done
	} | tee "$out/summary.txt"
}

# ---- subcommands ---------------------------------------------------------------------------

# Experiment behind a recommendation in BENCHMARKS.md: the same worker at 10 ms with its
# scheduling policy switched to SCHED_BATCH from outside (chrt), vs the default policy.
bench_sched() {
	banner "sched experiment (PG 18 release): SCHED_BATCH sampler at 10 ms"
	setup_pg18
	set_mode 18
	init_cluster
	throughput_rounds "$RESULTS/sched" none pgsw_10ms pgsw_10ms_batch
	summarize_rounds "$RESULTS/sched"
}

bench_throughput() {
	banner "throughput (PG 18 release, $ROUNDS rounds x $SECS s, $CLIENTS clients, scale $SCALE)"
	setup_pg18
	set_mode 18
	init_cluster
	throughput_rounds "$RESULTS/throughput" none pgsw_1s pgsw_10ms
	summarize_rounds "$RESULTS/throughput"
}

# Time QUERY_CALLS calls of a query with psql \timing: one ms figure per line
time_query() { # sql
	local i
	{
		echo '\timing on'
		for ((i = 0; i < QUERY_CALLS; i++)); do echo "$1;"; done
	} | as_pg psql -X -qAt 2>&1 | sed -nE 's/^Time: ([0-9.]+) ms.*/\1/p'
}

bench_peer() {
	banner "peer: pg_storage_wait vs pg_wait_sampling (PG 17 chroot, both at 10 ms)"
	setup_pg17
	set_mode 17
	init_cluster
	local out=$RESULTS/peer c q
	throughput_rounds "$out" none pgsw_10ms pgws_10ms
	summarize_rounds "$out"
	peer_read_cost "$out"
}

bench_peer_read() {
	banner "peer read cost: pg_storage_wait vs pg_wait_sampling (PG 17 chroot, both at 10 ms)"
	setup_pg17
	set_mode 17
	init_cluster
	mkdir -p "$RESULTS/peer"
	peer_read_cost "$RESULTS/peer"
}

# Read cost while a select-only load runs (14 clients, so the reader has a slot), after 60 s
# of sampling at 10 ms.
peer_read_cost() {
	local out=$1 c q
	: >"$out/read_cost.txt"
	for c in pgsw_10ms pgws_10ms; do
		start_server "$(conf_for "$c")"
		warm_up "$c"
		as_pg pgbench -n -S -c 14 -j 2 -T $((QUERY_CALLS * 2 + 90)) >"$out/read_load.$c.log" 2>&1 &
		BG_PIDS=$!
		sleep 60 # let the profile/history fill (history ring, 5 min window) at 10 ms
		if [ "$c" = pgsw_10ms ]; then
			for q in "SELECT count(*) FROM storage_wait_summary('5 min')" \
				"SELECT count(*) FROM storage_wait_history('5 min')" \
				"SELECT count(*) FROM storage_wait_ticks(now() - interval '5 min')" \
				"SELECT count(*) FROM storage_wait_events('5 min')"; do
				printf '%s\t%s\t%s\n' "$c" "$q" "$(time_query "$q" | stats)" | tee -a "$out/read_cost.txt"
			done
		else
			for q in "SELECT count(*) FROM pg_wait_sampling_profile" \
				"SELECT count(*) FROM pg_wait_sampling_history" \
				"SELECT count(*) FROM pg_wait_sampling_current"; do
				printf '%s\t%s\t%s\n' "$c" "$q" "$(time_query "$q" | stats)" | tee -a "$out/read_cost.txt"
			done
		fi
		wait "$BG_PIDS" || true
		BG_PIDS=
		stop_server
	done
}

bench_tick_cost() {
	banner "tick cost vs process slots (PG 18 release, 10 ms interval)"
	setup_pg18
	set_mode 18
	init_cluster
	local out=$RESULTS/tick-cost slots idle active hold=40 settle
	[ "$QUICK" = 1 ] && hold=20
	mkdir -p "$out"
	[ -f "$out/summary.txt" ] && [ -n "${TICK_SLOTS:-}" ] || printf 'max_connections\tsessions_idle\tsessions_active\tprocesses_median\tticks\ttick_cost_median_us\tp95_us\tmax_us\tavg_us\n' >"$out/summary.txt"
	printf '\\sleep 500 ms\nSELECT 1;\n' >"$HDATA/idle.sql"
	chmod 644 "$HDATA/idle.sql"
	for slots in ${TICK_SLOTS:-100 1000 5000}; do
		# idle sessions: ~90 % of the slots, at most MAX_IDLE (2,500: ~2.5 MB private memory
		# each on this 24 GB machine); active: 8 select-only clients
		active=8
		idle=$((slots * 9 / 10 - active))
		[ "$idle" -le "${MAX_IDLE:-2500}" ] || idle=${MAX_IDLE:-2500}
		start_server "$(conf_for pgsw_10ms)
max_connections = $slots
shared_buffers = 256MB"
		warm_up pgsw_10ms
		settle=$((idle / 100 + 10)) # connection storm of the idle pool
		# in pgbench processes of at most 1,000 clients (one pgbench failed with EMFILE near 2,500)
		local p1="" left=$idle part k=0
		while [ "$left" -gt 0 ]; do
			part=$((left > 1000 ? 1000 : left))
			left=$((left - part))
			k=$((k + 1))
			(ulimit -n "$(ulimit -Hn)"; as_pg pgbench -n -c "$part" -j 2 -T $((hold + settle)) -f "$DATA/idle.sql" >"$out/idle.$slots.$k.log" 2>&1) &
			p1="$p1 $!"
		done
		sleep "$settle"
		as_pg pgbench -n -S -c "$active" -j 2 -T "$hold" >"$out/active.$slots.log" 2>&1 &
		local p2=$!
		BG_PIDS="$p1 $p2"
		sleep 5
		local since
		since=$(psqlq "SELECT now()")
		sleep $((hold - 10))
		psqlq "SELECT tick_cost_us, processes FROM storage_wait_ticks('$since') WHERE NOT baseline" >"$out/ticks.$slots.tsv"
		psqlq "SELECT count(*) FILTER (WHERE state='idle'), count(*) FILTER (WHERE state='active'), count(*) FROM pg_stat_activity" >"$out/activity.$slots.txt"
		wait $p1 $p2 || true
		BG_PIDS=
		local costs
		costs=$(cut -d'|' -f1 "$out/ticks.$slots.tsv")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$slots" "$idle" "$active" \
			"$(cut -d'|' -f2 "$out/ticks.$slots.tsv" | pct 50)" \
			"$(wc -l <"$out/ticks.$slots.tsv")" \
			"$(echo "$costs" | pct 50)" "$(echo "$costs" | pct 95)" "$(echo "$costs" | pct 100)" \
			"$(echo "$costs" | awk '{s+=$1} END {printf "%.1f", s/NR}')" | tee -a "$out/summary.txt"
		stop_server
	done
	column -t "$out/summary.txt"
}

bench_query_cost() {
	banner "query cost over fast-filled history (PG 18 release)"
	setup_pg18
	setup_tools
	set_mode 18
	init_cluster
	local out=$RESULTS/query-cost q w
	mkdir -p "$out"
	: >"$out/summary.txt"
	local conf
	conf="$(conf_for pgsw_1s)
pg_storage_wait.entries_per_tick = 64
pg_storage_wait.entries_per_rollup = 128"
	start_server "$conf" # create the extension once
	psqlq "CREATE EXTENSION IF NOT EXISTS pg_storage_wait" >/dev/null
	stop_server
	local sysid
	sysid=$("$W/pg18/bin/pg_controldata" "$HDATA" | awk -F: '/Database system identifier/ {gsub(/ /, "", $2); print $2}')
	"$W/bb/fill_history" "$HDATA/pg_stat/pg_storage_wait.history" --entries-per-tick 64 \
		--entries-per-rollup 128 --system-identifier "$sysid" | tee "$out/fill.txt"
	chown --reference="$HDATA/PG_VERSION" "$HDATA/pg_stat/pg_storage_wait.history"
	start_server "$conf"
	psqlq "SELECT restored_from_disk, ticks_retained, rollups_retained, retention_seconds, rollup_retention_seconds FROM storage_wait_status()" | tee "$out/status.txt"
	for w in "5 min" "1 hour" "7 days"; do
		for q in "SELECT count(*) FROM storage_wait_summary('$w')" \
			"SELECT count(*) FROM storage_wait_history('$w')" \
			"SELECT count(*) FROM storage_wait_breakdown('$w')" \
			"SELECT count(*) FROM storage_wait_what_if('$w')" \
			"SELECT count(*) FROM storage_wait_symptoms('$w')" \
			"SELECT count(*) FROM storage_wait_report('$w')" \
			"SELECT count(*) FROM storage_device_stats('$w')"; do
			time_query "$q" >/dev/null # warm the backend (catalog caches)
			printf '%s\t%s\n' "$q" "$(time_query "$q" | stats)" | tee -a "$out/summary.txt"
		done
	done
	as_pg psql -X -c "SELECT * FROM storage_wait_history('7 days') LIMIT 3" >"$out/sample_history.txt" 2>&1 || true
	stop_server
}

# Issue 14's budget: the server-state readings (checkpointer, WAL position, autovacuum,
# replication slots) at 100 processes and 10 slots. Every tick reads the counters
# (io_read_interval = sample_interval = 10 ms), so each tick carries the whole reading; the
# same server is measured with 0 and with 10 logical slots. The counter-tick median drifts by
# ±10 µs over minutes on this 2-core VM, more than the effect measured (a few µs, 2026-12-02):
# one load runs through all phases (no connection storm per phase), the phases are short and
# alternate in ABBA order (0,10 then 10,0) over STATE_ROUNDS rounds (8; --quick 4), and the
# figure is the median of the per-round differences of the phases' medians, with the
# sampler's own CPU per tick (/proc/<pid>/schedstat) as a second reading.
bench_state_cost() {
	banner "server-state readings: tick cost at 100 connections, 0 vs 10 logical slots (PG 18 release)"
	setup_pg18
	set_mode 18
	init_cluster
	local out=$RESULTS/state-cost hold=20 rounds=${STATE_ROUNDS:-8} round slots since until p1 p2 i pid c0 c1 order
	[ "$QUICK" = 1 ] && hold=10 rounds=${STATE_ROUNDS:-4}
	mkdir -p "$out"
	rm -f "$out"/ticks.*.tsv
	printf 'round\tslots\tprocesses_median\tticks\ttick_cost_median_us\tp95_us\tavg_us\tcpu_us_per_tick\n' >"$out/phases.tsv"
	printf '\\sleep 500 ms\nSELECT 1;\n' >"$HDATA/idle.sql"
	chmod 644 "$HDATA/idle.sql"
	start_server "$(conf_for pgsw_10ms)
pg_storage_wait.io_read_interval = 10
max_connections = 100
wal_level = logical
max_replication_slots = 20"
	warm_up pgsw_10ms
	pid=$(psqlq "SELECT worker_pid FROM storage_wait_status()")
	psqlq "SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots" >/dev/null
	# one load for all phases (stopped below): 82 idle sessions + 8 select-only clients
	as_pg pgbench -n -c 82 -j 2 -T 86400 -f "$DATA/idle.sql" >"$out/idle.log" 2>&1 &
	p1=$!
	sleep 5
	as_pg pgbench -n -S -c 8 -j 2 -T 86400 >"$out/active.log" 2>&1 &
	p2=$!
	BG_PIDS="$p1 $p2"
	sleep 5
	for ((round = 1; round <= rounds; round++)); do
		order="0 10"
		[ $((round % 2)) = 0 ] && order="10 0"
		for slots in $order; do
			psqlq "SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots" >/dev/null
			for ((i = 0; i < slots; i++)); do
				psqlq "SELECT pg_create_logical_replication_slot('bench_slot_$i', 'pgoutput')" >/dev/null
			done
			sleep 2
			since=$(psqlq "SELECT now()")
			c0=$(worker_cpu_ns "$pid")
			sleep "$hold"
			c1=$(worker_cpu_ns "$pid")
			until=$(psqlq "SELECT now()")
			psqlq "SELECT tick_cost_us, processes FROM storage_wait_ticks('$since') WHERE NOT baseline AND counters_read AND sample_time <= '$until'" >"$out/ticks.$round.$slots.tsv"
			local costs
			costs=$(cut -d'|' -f1 "$out/ticks.$round.$slots.tsv")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$slots" \
				"$(cut -d'|' -f2 "$out/ticks.$round.$slots.tsv" | pct 50)" \
				"$(wc -l <"$out/ticks.$round.$slots.tsv")" \
				"$(echo "$costs" | pct 50)" "$(echo "$costs" | pct 95)" \
				"$(echo "$costs" | awk '{s+=$1} END {printf "%.1f", s/NR}')" \
				"$(awk -v t="$((c1 - c0))" -v h="$hold" 'BEGIN {printf "%.1f", t / 1000 / (h * 100)}')" | tee -a "$out/phases.tsv"
		done
	done
	kill $p1 $p2 2>/dev/null || true
	wait $p1 $p2 2>/dev/null || true
	BG_PIDS=
	psqlq "SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots" >/dev/null
	stop_server
	# per round: 10 slots minus 0 slots, of the counter-tick median, mean and the CPU per tick
	{
		cat "$out/phases.tsv"
		for c in 5 7 8; do
			printf 'slots10_minus_0\t%s\t%s\n' "$(head -1 "$out/phases.tsv" | cut -f"$c")" \
				"$(awk -F'\t' -v c="$c" 'NR > 1 {v[$1, $2] = $c; r[$1] = 1} END {for (i in r) if ((i, 0) in v && (i, 10) in v) print v[i, 10] - v[i, 0]}' "$out/phases.tsv" | stats)"
		done
		for slots in 0 10; do
			printf 'slots_%s\ttick_cost_median_us\t%s\n' "$slots" "$(awk -F'\t' -v s="$slots" 'NR > 1 && $2 == s {print $5}' "$out/phases.tsv" | stats)"
		done
	} >"$out/summary.txt"
	column -t "$out/summary.txt"
}

bench_memory() {
	banner "memory (PG 18 release): shared memory and worker RSS over $MEMORY_TICKS ticks"
	setup_pg18
	local out=$RESULTS/memory pid t ticks
	mkdir -p "$out"
	set_mode 18 -mem
	local port_saved=$PORT
	PORT=$((PORT + 1))
	init_cluster
	start_server "$(conf_for pgsw_10ms)"
	psqlq "CREATE EXTENSION IF NOT EXISTS pg_storage_wait" >/dev/null
	echo "defaults (max_connections 100): shared_memory_bytes=$(psqlq "SELECT shared_memory_bytes FROM storage_wait_status()")" | tee "$out/summary.txt"
	stop_server
	start_server "$(conf_for pgsw_10ms)
max_connections = 5000
shared_buffers = 256MB"
	echo "max_connections 5000: shared_memory_bytes=$(psqlq "SELECT shared_memory_bytes FROM storage_wait_status()")" | tee -a "$out/summary.txt"
	stop_server
	start_server "$(conf_for pgsw_10ms)"
	pid=$(psqlq "SELECT worker_pid FROM storage_wait_status()")
	# a light load so the ticks have content: 2 clients, select-only, 100 tps
	as_pg pgbench -n -S -c 2 -j 1 -R 100 -T $((MEMORY_TICKS / 100 + 120)) >"$out/load.log" 2>&1 &
	BG_PIDS=$!
	printf 'elapsed_s\tticks\tVmRSS_kB\tRssAnon_kB\tRssShmem_kB\n' >"$out/rss.tsv"
	t=0
	while :; do
		ticks=$(psqlq "SELECT ticks FROM storage_wait_status()")
		printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$ticks" \
			"$(awk '/^VmRSS/ {print $2}' /proc/"$pid"/status)" \
			"$(awk '/^RssAnon/ {print $2}' /proc/"$pid"/status)" \
			"$(awk '/^RssShmem/ {print $2}' /proc/"$pid"/status)" | tee -a "$out/rss.tsv"
		[ "$ticks" -ge "$MEMORY_TICKS" ] && break
		sleep 30
		t=$((t + 30))
	done
	psqlq "SELECT ticks, overruns, tick_cost_avg_us, tick_cost_max_us, worker_pid FROM storage_wait_status()" >>"$out/summary.txt"
	kill "$BG_PIDS" 2>/dev/null || true
	wait "$BG_PIDS" 2>/dev/null || true
	BG_PIDS=
	stop_server
	PORT=$port_saved
	cat "$out/summary.txt"
}

bench_micro() {
	banner "microbenchmarks (Google Benchmark, Release)"
	setup_tools
	local out=$RESULTS/micro
	mkdir -p "$out"
	local reps=5
	[ "$QUICK" = 1 ] && reps=3
	"$W/bb/pgsw_bench_core" --benchmark_repetitions=$reps --benchmark_report_aggregates_only=false \
		--benchmark_out="$out/bench.json" --benchmark_out_format=json | tee "$out/bench.txt"
}

# CPU time of the sampling process itself, per sample, over SECS seconds of a select-only load:
# the direct cost that pgbench's noise hides. /proc/<pid>/schedstat's first field is the time
# on CPU in nanoseconds (user + system); /proc/<pid>/stat's utime + stime count CLK_TCK ticks,
# 2.5 µs per sample over 40 s, too coarse for a 5 µs difference. schedstat's third field counts
# the times the process was put on a CPU: wake-ups per sample (one, unless something else wakes
# it or it skips samples).
# The server with sampler config C, an 8-client select-only load for SECS + 10 s (BG_PIDS) logged
# to LOG, 5 s of it already run; the sampling process's pid in SAMPLER_PID.
start_sampler_under_load() { # start_sampler_under_load C LOG
	local c=$1
	start_server "$(conf_for "$c")"
	warm_up "$c"
	if [ "$c" = pgsw_10ms ]; then
		SAMPLER_PID=$(psqlq "SELECT worker_pid FROM storage_wait_status()")
	else
		SAMPLER_PID=$(psqlq "SELECT pid FROM pg_stat_activity WHERE backend_type LIKE 'pg_wait_sampling%' LIMIT 1")
	fi
	[ -n "$SAMPLER_PID" ] || die "no sampler process for $c"
	as_pg pgbench -n -S -c 8 -j 2 -T $((SECS + 10)) >"$2" 2>&1 &
	BG_PIDS=$!
	sleep 5
}
worker_cpu_ns() { awk '{print $1}' "/proc/$1/schedstat"; }
worker_runs() { awk '{print $3}' "/proc/$1/schedstat"; }
bench_cpu() {
	banner "sampler CPU per sample: pg_storage_wait vs pg_wait_sampling (PG 17 chroot, 10 ms)"
	setup_pg17
	set_mode 17
	init_cluster
	local out=$RESULTS/cpu c r pid t0 t1 w0 w1 n0 n1
	mkdir -p "$out"
	printf 'round\tconfig\tseconds\tcpu_s\tsamples\tus_per_sample\tpct_of_one_core\truns_per_sample\n' \
		>"$out/runs.tsv"
	for r in $(seq 1 "$ROUNDS"); do
		for c in pgsw_10ms pgws_10ms; do
			start_sampler_under_load "$c" "$out/load.$c.$r.log"
			pid=$SAMPLER_PID
			t0=$(worker_cpu_ns "$pid") n0=$(worker_runs "$pid") w0=$(date +%s.%N)
			sleep "$SECS"
			t1=$(worker_cpu_ns "$pid") n1=$(worker_runs "$pid") w1=$(date +%s.%N)
			wait "$BG_PIDS" || true
			BG_PIDS=
			stop_server
			awk -v r="$r" -v c="$c" -v t="$((t1 - t0))" -v runs="$((n1 - n0))" -v w0="$w0" -v w1="$w1" 'BEGIN {
				s = w1 - w0; cpu = t / 1e9; n = s / 0.010
				printf "%s\t%s\t%.1f\t%.4f\t%d\t%.2f\t%.3f\t%.2f\n", r, c, s, cpu, n, cpu / n * 1e6,
					100 * cpu / s, runs / n
			}' | tee -a "$out/runs.tsv"
		done
	done
	{
		for c in pgsw_10ms pgws_10ms; do
			printf '%s\tus_per_sample\t%s\n' "$c" "$(awk -v c="$c" '$2 == c {print $6}' "$out/runs.tsv" | stats)"
			printf '%s\truns_per_sample\t%s\n' "$c" "$(awk -v c="$c" '$2 == c {print $8}' "$out/runs.tsv" | stats)"
		done
		printf 'pgsw/pgws\tratio_per_round\t%s\n' "$(awk '$2 == "pgsw_10ms" {a[$1] = $6} $2 == "pgws_10ms" {b[$1] = $6}
			END {for (r in a) if (b[r] > 0) print a[r] / b[r]}' "$out/runs.tsv" | stats)"
	} | tee "$out/summary.txt"
}

# The same figure with both samplers in one server, read over the same seconds: the host's
# state (which swings either sampler's cost by +-30 % between runs minutes apart) is then the
# same for both, and each round's ratio compares like with like. Both wake every 10 ms; ours
# keeps absolute deadlines and pg_wait_sampling sleeps a period after each sample, so their
# phases drift past each other and neither is always the first to touch the shared lines.
bench_cpu_together() {
	banner "sampler CPU per sample, both samplers in one server over the same seconds (PG 17 chroot, 10 ms)"
	setup_pg17
	set_mode 17
	init_cluster
	local out=$RESULTS/cpu-together r pgsw pgws a0 a1 b0 b1 m0 m1 n0 n1 w0 w1
	mkdir -p "$out"
	printf 'round\tseconds\tpgsw_us_per_sample\tpgws_us_per_sample\tratio\tpgsw_runs_per_sample\tpgws_runs_per_sample\n' \
		>"$out/runs.tsv"
	for r in $(seq 1 "$ROUNDS"); do
		start_server "$(conf_for both_10ms)
${TOGETHER_CONF:-}"
		warm_up both_10ms
		pgsw=$(psqlq "SELECT worker_pid FROM storage_wait_status()")
		pgws=$(psqlq "SELECT pid FROM pg_stat_activity WHERE backend_type LIKE 'pg_wait_sampling%' LIMIT 1")
		[ -n "$pgsw" ] && [ -n "$pgws" ] || die "both samplers must run (pg_storage_wait: '$pgsw', pg_wait_sampling: '$pgws')"
		as_pg pgbench -n -S -c 8 -j 2 -T $((SECS + 10)) >"$out/load.$r.log" 2>&1 &
		BG_PIDS=$!
		sleep 5
		a0=$(worker_cpu_ns "$pgsw") b0=$(worker_cpu_ns "$pgws") m0=$(worker_runs "$pgsw") n0=$(worker_runs "$pgws") w0=$(date +%s.%N)
		sleep "$SECS"
		a1=$(worker_cpu_ns "$pgsw") b1=$(worker_cpu_ns "$pgws") m1=$(worker_runs "$pgsw") n1=$(worker_runs "$pgws") w1=$(date +%s.%N)
		wait "$BG_PIDS" || true
		BG_PIDS=
		stop_server
		awk -v r="$r" -v a="$((a1 - a0))" -v b="$((b1 - b0))" -v ra="$((m1 - m0))" -v rb="$((n1 - n0))" \
			-v w0="$w0" -v w1="$w1" 'BEGIN {
			s = w1 - w0; n = s / 0.010
			printf "%s\t%.1f\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\n", r, s, a / 1e3 / n, b / 1e3 / n, a / b, ra / n, rb / n
		}' | tee -a "$out/runs.tsv"
	done
	{
		printf 'pgsw\tus_per_sample\t%s\n' "$(awk 'NR > 1 {print $3}' "$out/runs.tsv" | stats)"
		printf 'pgws\tus_per_sample\t%s\n' "$(awk 'NR > 1 {print $4}' "$out/runs.tsv" | stats)"
		printf 'pgsw/pgws\tratio_per_round\t%s\n' "$(awk 'NR > 1 {print $5}' "$out/runs.tsv" | stats)"
	} | tee "$out/summary.txt"
}

# Where each sampler's CPU goes, same load and settings as bench_cpu: perf's cpu-clock samples
# of the sampling process (symbols from the chroot's binaries), a report per sampler by symbol
# (self time) and by caller, and its system calls over 10 s (strace -c).
bench_cpu_profile() {
	banner "sampler CPU profile: pg_storage_wait vs pg_wait_sampling (PG 17 chroot, 10 ms)"
	command -v perf >/dev/null || die "needs perf (apt-get install linux-perf)"
	setup_pg17
	set_mode 17
	init_cluster
	local out=$RESULTS/cpu-profile c pid
	mkdir -p "$out"
	for c in pgsw_10ms pgws_10ms; do
		start_sampler_under_load "$c" "$out/load.$c.log"
		pid=$SAMPLER_PID
		perf record -q -e cpu-clock -F 20000 -g -p "$pid" -o "$out/perf.$c.data" -- sleep "$SECS" 2>/dev/null
		# System calls per sample: on a paravirtualised guest each one is a world switch.
		if command -v strace >/dev/null; then
			timeout -s INT 10 strace -c -p "$pid" -o "$out/syscalls.$c.txt" 2>/dev/null || true
		fi
		wait "$BG_PIDS" || true
		BG_PIDS=
		stop_server
		perf report -q --no-children --stdio --symfs="$CH" -i "$out/perf.$c.data" \
			--sort dso,sym -g none --percent-limit 0.3 >"$out/self.$c.txt" 2>/dev/null
		perf report -q --children --stdio --symfs="$CH" -i "$out/perf.$c.data" \
			--sort sym -g none --percent-limit 1 >"$out/children.$c.txt" 2>/dev/null
		say "$c: $(perf report --stdio -i "$out/perf.$c.data" 2>/dev/null | grep -m1 "^# Samples")"
		head -40 "$out/self.$c.txt"
		[ -f "$out/syscalls.$c.txt" ] && cat "$out/syscalls.$c.txt"
	done
}

# Pages per wake-up: kB referenced per mapping over a 12-ms window (about one wake-up: a window
# that held a counter reading or none shows as an outlier, hence the median of 9), per sampler.
# Mappings are named by file; anonymous ones as [anon], PostgreSQL's shared memory as
# "shared memory" (/dev/zero; with huge_pages in use it is an anon_hugepage mapping, never
# counted); the tick memory's 2-MB huge page counts 2048 kB under [anon]: one TLB entry. The
# window is approximate: it includes starting sleep and awk.
referenced_kb() { # referenced_kb PID: "mapping kB" lines for one window
	echo 1 >"/proc/$1/clear_refs"
	sleep 0.012
	awk '/^[0-9a-f]+-[0-9a-f]+ / {m = $6 == "" ? "[anon]" : $6; sub(/.*\//, "", m)
		if (m == "zero") m = "shared memory"; else if (m ~ /^PostgreSQL\.[0-9]+$/) m = "dynamic shared memory"
		if ($2 ~ /x/) m = m " (code)"}
		/^Referenced:/ {r[m] += $2} END {for (m in r) if (r[m] > 0) print m "\t" r[m]}' "/proc/$1/smaps"
}
# median_of_windows FILE (window, mapping, kB): per mapping the median over the 9 windows, a
# window that did not touch it counting 0; then the median window's total.
median_of_windows() {
	awk -F'\t' '
		function median(m,   i, j, t, a) {
			for (i = 1; i <= 9; i++) a[i] = ((m, i) in v) ? v[m, i] : 0
			for (i = 2; i <= 9; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return a[5]
		}
		{ v[$2, $1] = $3; v["total", $1] += $3; maps[$2] = 1 }
		END { for (m in maps) if (median(m) > 0) print m "\t" median(m); print "total (median window)\t" median("total") }' "$1" |
		sort -t"$(printf '\t')" -k2,2nr
}
bench_cpu_pages() {
	banner "memory each sampler touches per wake-up (PG 17 chroot, 10 ms, both in one server)"
	setup_pg17
	set_mode 17
	init_cluster
	local out=$RESULTS/cpu-pages pid name i
	mkdir -p "$out"
	start_server "$(conf_for both_10ms)"
	warm_up both_10ms
	as_pg pgbench -n -S -c 8 -j 2 -T 15 >"$out/load.log" 2>&1 &
	BG_PIDS=$!
	sleep 5
	for name in pgsw pgws; do
		if [ $name = pgsw ]; then
			pid=$(psqlq "SELECT worker_pid FROM storage_wait_status()")
		else
			pid=$(psqlq "SELECT pid FROM pg_stat_activity WHERE backend_type LIKE 'pg_wait_sampling%' LIMIT 1")
		fi
		[ -n "$pid" ] || die "no $name sampler"
		for i in $(seq 1 9); do referenced_kb "$pid" | sed "s/^/$i\t/"; done >"$out/windows.$name.tsv"
	done
	wait "$BG_PIDS" || true
	BG_PIDS=
	stop_server
	{
		printf 'sampler\tmapping\tkB_median_of_9\n'
		for name in pgsw pgws; do
			median_of_windows "$out/windows.$name.tsv" | sed "s/^/$name\t/"
		done
	} | tee "$out/summary.txt"
}

for s in "${SUBS[@]}"; do
	case "$s" in
	all) bench_micro; bench_query_cost; bench_tick_cost; bench_memory; bench_throughput; bench_peer; bench_cpu ;;
	throughput) bench_throughput ;;
	sched) bench_sched ;;
	peer) bench_peer ;;
	peer-read) bench_peer_read ;;
	tick-cost) bench_tick_cost ;;
	query-cost) bench_query_cost ;;
	state-cost) bench_state_cost ;;
	memory) bench_memory ;;
	micro) bench_micro ;;
	cpu) bench_cpu ;;
	cpu-together) bench_cpu_together ;;
	cpu-profile) bench_cpu_profile ;;
	cpu-pages) bench_cpu_pages ;;
	esac
done
say "results in $RESULTS"
