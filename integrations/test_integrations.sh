#!/usr/bin/env bash
# The integrations test (scripts/test.sh stage `integrations`; root, under the heavy lock):
#
#   PGSW_WORK=/tmp/scratch integrations/test_integrations.sh SRC
#
#  1. promtool check rules + test rules on the alerts, and each of a few wrong rules must make
#     the unit tests fail; META.json's version against pg_storage_wait.control.
#  2. dpkg-buildpackage -us -uc of debian/ in the packaging chroot (provision step
#     `integrations`), lintian on the result (tags listed, not fatal).
#  3. The .deb installed into a clean copy of the PostgreSQL 17 chroot (an overlay over the
#     cached chroot, or cp -a where overlayfs is missing), the files checked to be the
#     package's; pg_regress (make installcheck, TAP left out) against the installed package.
#  4. On that server (library preloaded), after pgbench: every Grafana panel's SQL, as a
#     pg_monitor role, with and without pg_stat_statements; the real prometheus-postgres-exporter
#     with queries.yaml publishes exactly the pg_storage_wait_* series the README documents; a
#     real prometheus scrapes it on 127.0.0.1, loads the alerts, and /api/v1/query returns the
#     score.
#
# Every process it starts is stopped by its own pid (the server with pg_ctl), every mount
# undone, the scratch removed, also on failure. Nothing listens on anything but 127.0.0.1.
# Environment: PGSW_WORK (scratch, required), PGSW_CACHE, CHROOT17, PGSW_DEB_CHROOT, TEST_USER
# (runs the exporter and prometheus; default postgres), JOBS, PGSW_INTEGRATIONS_PORT (first of
# three ports: PostgreSQL, exporter, prometheus; default 55480), PGSW_INTEGRATIONS_EXTRA_SQL (a
# file run in both test databases after CREATE EXTENSION: for testing before a feature lands).
set -euo pipefail

SRC=$(cd "${1:?usage: test_integrations.sh SRC}" && pwd)
# shellcheck disable=SC2034 # read by lib.sh
PGSW_TAG=pgsw-integrations
# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$SRC/scripts/lib.sh"

HOME=${HOME:-/root}
PGSW_CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
CHROOT17=${CHROOT17:-$PGSW_CACHE/chroot-trixie-pg17}
DEB_CHROOT=${PGSW_DEB_CHROOT:-$PGSW_CACHE/chroot-trixie-pg17-deb}
WORK=${PGSW_WORK:?PGSW_WORK must name a scratch folder}
TEST_USER=${TEST_USER:-postgres}
JOBS=${JOBS:-2}
PG_PORT=${PGSW_INTEGRATIONS_PORT:-55480}
EXP_PORT=$((PG_PORT + 1))
PROM_PORT=$((PG_PORT + 2))
EXTRA_SQL=${PGSW_INTEGRATIONS_EXTRA_SQL:-}
PGBIN=/usr/lib/postgresql/17/bin
# Inside the packaging chroot, named after the scratch folder (parallel runs never share it).
BUILD_INNER=/build/pgsw-deb-$(basename "$WORK")
CLEAN=$WORK/chroot # the clean chroot the package is installed into
LIVE=/live         # the live server's folder, inside $CLEAN

assert_scratch_path "$WORK"
[ "$(id -u)" = 0 ] || die "needs root (chroot, mounts, dpkg)"
[ -f "$CHROOT17/.complete" ] || die "no PostgreSQL 17 chroot at $CHROOT17 (provision: pg17)"
[ -f "$DEB_CHROOT/.complete" ] || die "no packaging chroot at $DEB_CHROOT (provision: integrations)"
for t in promtool prometheus prometheus-postgres-exporter curl jq python3 setpriv; do
	command -v "$t" >/dev/null || die "$t missing (scripts/provision-postgres.sh integrations)"
done
PYTHON=/usr/bin/python3 # Debian's, standard library only
for p in "$PG_PORT" "$EXP_PORT" "$PROM_PORT"; do
	! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || die "port $p on 127.0.0.1 is in use: set PGSW_INTEGRATIONS_PORT"
done

MOUNTS=() # mounted, in order; undone in reverse
PIDS=()   # exporter, prometheus
SERVER_UP=0
T0=$SECONDS
TIMES=()
lap() { TIMES+=("$(printf '%-34s %4ss' "$1" $((SECONDS - LAP)))"); LAP=$SECONDS; }
LAP=$SECONDS

stop_pid() { # stop_pid PID NAME: SIGTERM, wait up to 10 s, then SIGKILL
	local pid=$1 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
	warn "$2 (pid $pid) ignored SIGTERM: SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
	local i p
	trap - EXIT
	for p in "${PIDS[@]}"; do stop_pid "$p" "pid $p"; done
	if [ "$SERVER_UP" = 1 ]; then
		in_clean postgres "$PGBIN/pg_ctl" -D "$LIVE/data" -m fast -w stop >/dev/null 2>&1 ||
			warn "pg_ctl stop failed"
	fi
	# Anything else still running from our folders (a killed run) goes by pid too.
	[ ! -d "$CLEAN" ] || kill_processes_under "$CLEAN"
	[ ! -d "$DEB_CHROOT$BUILD_INNER" ] || kill_processes_under "$DEB_CHROOT$BUILD_INNER"
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" || warn "could not unmount ${MOUNTS[i]}"
	done
	remove_scratch "$DEB_CHROOT$BUILD_INNER"
	remove_scratch "$WORK"
}
trap cleanup EXIT

bind_mounts() { # bind_mounts ROOT: /proc /dev /dev/shm into a chroot
	local m
	for m in proc dev dev/shm; do
		mountpoint -q "$1/$m" && die "$1/$m is already mounted (a killed run?): unmount it first"
		mkdir -p "$1/$m"
		mount --bind "/$m" "$1/$m"
		MOUNTS+=("$1/$m")
	done
}

run_in() { # run_in ROOT USER CMD...: a clean environment, as root or through runuser
	local root=$1 user=$2
	shift 2
	local envs=(HOME=/tmp PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
	if [ "$user" = root ]; then
		chroot "$root" /usr/bin/env -i "${envs[@]}" "$@"
	else
		chroot "$root" /usr/sbin/runuser -u "$user" -- /usr/bin/env -i "${envs[@]}" "$@"
	fi
}
in_clean() { run_in "$CLEAN" "$@"; }

mkdir -p "$WORK"

# ---- 1. alerts and META.json ---------------------------------------------------------------
banner "alerts (promtool) and META.json"
rules=$SRC/integrations/prometheus/pg_storage_wait.rules.yml
tests=$SRC/integrations/prometheus/pg_storage_wait.rules.test.yml
promtool check rules "$rules"
(cd "$(dirname "$tests")" && promtool test rules "$(basename "$tests")")
# Wrong rules the unit tests must catch: a shorter `for`, a watch counted as present, a
# stalled sampler's threshold too high, the latency limit taken for a ceiling.
mutations=('s/for: 15m/for: 5m/' 's/pg_storage_wait_symptom_status == 2/pg_storage_wait_symptom_status >= 1/'
	's/last_tick_age_seconds > 60/last_tick_age_seconds > 600/'
	's/iops-ceiling|throughput-ceiling"/iops-ceiling|throughput-ceiling|latency"/'
	's/worker_running == 0/worker_running == 2/')
mkdir -p "$WORK/mutants"
for m in "${mutations[@]}"; do
	cp "$tests" "$WORK/mutants/"
	sed "$m" "$rules" >"$WORK/mutants/$(basename "$rules")"
	cmp -s "$rules" "$WORK/mutants/$(basename "$rules")" && die "mutation '$m' changed nothing"
	if (cd "$WORK/mutants" && promtool test rules "$(basename "$tests")" >/dev/null 2>&1); then
		die "the rule unit tests pass with a wrong rule ($m)"
	fi
	say "the unit tests catch a wrong rule: $m"
done
"$PYTHON" "$SRC/integrations/check_dashboard.py" meta "$SRC/META.json" "$SRC/pg_storage_wait.control"
lap "promtool, rule mutants, META.json"

# ---- 2. the Debian package -----------------------------------------------------------------
banner "dpkg-buildpackage in $DEB_CHROOT"
bind_mounts "$DEB_CHROOT"
mkdir -p "$DEB_CHROOT$BUILD_INNER"
cp -a "$SRC" "$DEB_CHROOT$BUILD_INNER/pg-storage-wait"
run_in "$DEB_CHROOT" root sh -c "cd $BUILD_INNER/pg-storage-wait && pg_buildext checkcontrol" ||
	die "debian/control is not what debian/control.in gives: run pg_buildext updatecontrol"
run_in "$DEB_CHROOT" root env DEB_BUILD_OPTIONS="parallel=$JOBS nocheck" \
	sh -c "cd $BUILD_INNER/pg-storage-wait && dpkg-buildpackage -us -uc" >"$WORK/dpkg-buildpackage.log" 2>&1 || {
	tail -40 "$WORK/dpkg-buildpackage.log"
	die "dpkg-buildpackage failed (log above)"
}
debs=("$DEB_CHROOT$BUILD_INNER"/postgresql-17-pg-storage-wait_*.deb)
[ -f "${debs[0]}" ] || die "dpkg-buildpackage made no postgresql-17-pg-storage-wait .deb"
cp "${debs[0]}" "$WORK/"
DEB=$WORK/$(basename "${debs[0]}")
say "built $(basename "$DEB") ($(stat -c %s "$DEB") bytes):"
dpkg-deb -c "$DEB" | awk '{print "    " $6}'
run_in "$DEB_CHROOT" root sh -c "cd $BUILD_INNER && lintian --display-info --pedantic *.changes" \
	>"$WORK/lintian.txt" 2>&1 || true
say "lintian (tags are listed, not fatal; debian/README.source explains them):"
sed 's/^/    | /' "$WORK/lintian.txt"
grep -q '^E: .*: ' "$WORK/lintian.txt" && warn "lintian reports errors (E:)"
for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[i]}"; done
MOUNTS=()
remove_scratch "$DEB_CHROOT$BUILD_INNER"
lap "dpkg-buildpackage + lintian"

# ---- 3. installed into a clean chroot: CREATE EXTENSION and pg_regress ----------------------
banner "the package in a clean copy of $CHROOT17"
mkdir -p "$CLEAN" "$WORK/upper" "$WORK/ovwork"
if mount -t overlay overlay -o "lowerdir=$CHROOT17,upperdir=$WORK/upper,workdir=$WORK/ovwork" "$CLEAN" 2>/dev/null; then
	MOUNTS+=("$CLEAN")
	say "clean copy: an overlay over the cached chroot (writes go to $WORK/upper)"
else
	say "no overlayfs here: cp -a of the cached chroot"
	cp -a "$CHROOT17/." "$CLEAN/"
fi
bind_mounts "$CLEAN"
# Device discovery reads /sys/dev/block: the live server must see the host's /sys.
mkdir -p "$CLEAN/sys"
mount --bind /sys "$CLEAN/sys" && mount -o remount,bind,ro "$CLEAN/sys"
MOUNTS+=("$CLEAN/sys")
# The pg17 stage's `make install` may have left the extension in the cached chroot: remove it,
# so that what is tested is the package's files alone.
rm -f "$CLEAN"/usr/lib/postgresql/17/lib/pg_storage_wait.so "$CLEAN"/usr/share/postgresql/17/extension/pg_storage_wait*
rm -rf "$CLEAN"/usr/lib/postgresql/17/lib/bitcode/pg_storage_wait*
cp "$DEB" "$CLEAN/tmp/"
in_clean root env DEBIAN_FRONTEND=noninteractive dpkg -i "/tmp/$(basename "$DEB")" >"$WORK/dpkg-i.log" 2>&1 ||
	{ cat "$WORK/dpkg-i.log"; die "dpkg -i failed"; }
# shellcheck disable=SC2016 # dpkg-query fields, not shell
say "installed: $(in_clean root dpkg-query -W -f='${Package} ${Version} ${Status}' postgresql-17-pg-storage-wait)"
for f in /usr/lib/postgresql/17/lib/pg_storage_wait.so /usr/share/postgresql/17/extension/pg_storage_wait.control \
	/usr/share/postgresql/17/extension/pg_storage_wait--1.0--1.1.sql; do
	in_clean root dpkg -S "$f" | grep -q '^postgresql-17-pg-storage-wait: ' || die "$f is not the package's"
done
uid=$(awk -F: '$1 == "postgres" {print $3}' "$CLEAN/etc/passwd")
gid=$(awk -F: '$1 == "postgres" {print $4}' "$CLEAN/etc/passwd")
# The test files only (SQL, expected output, configuration): nothing built, nothing installed
# from this tree: pg_regress loads the package's library and scripts.
mkdir -p "$CLEAN/build/regress"
cp -a "$SRC/." "$CLEAN/build/regress/"
find "$CLEAN/build/regress" \( -name '*.so' -o -name '*.o' \) -delete
chown -R "$uid:$gid" "$CLEAN/build/regress"
if ! in_clean postgres make -C /build/regress PG_CONFIG=$PGBIN/pg_config with_llvm=no TAP_TESTS= installcheck \
	>"$WORK/installcheck.log" 2>&1; then
	cat "$WORK/installcheck.log"
	find "$CLEAN/build/regress" -name regression.diffs -print0 |
		while IFS= read -r -d '' f; do show_file "$f"; done
	die "pg_regress against the installed package failed"
fi
grep -E '^(# )?(All|ok|not ok)|tests passed|^ok ' "$WORK/installcheck.log" | sed 's/^/    | /' | tail -15
lap "install .deb + pg_regress"

# ---- 4. live server, dashboard SQL, exporter, prometheus -----------------------------------
banner "live server on 127.0.0.1:$PG_PORT: dashboard, exporter, prometheus"
# The data directory on the host's file system, not the overlay (which has no block device), so
# that storage_device_stats, the device panels and the device and probe series have a device.
mkdir -p "$CLEAN$LIVE" "$WORK/live"
mount --bind "$WORK/live" "$CLEAN$LIVE"
MOUNTS+=("$CLEAN$LIVE")
chown "$uid:$gid" "$CLEAN$LIVE"
in_clean postgres "$PGBIN/initdb" -D "$LIVE/data" -A trust -U postgres >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log"; die "initdb failed"; }
cat >>"$CLEAN$LIVE/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$LIVE'
shared_preload_libraries = 'pg_storage_wait,pg_stat_statements'
track_io_timing = on
track_wal_io_timing = on
compute_query_id = on
pg_storage_wait.sample_interval = 100
EOF
in_clean postgres "$PGBIN/pg_ctl" -D "$LIVE/data" -l "$LIVE/server.log" -w start >/dev/null ||
	{ cat "$CLEAN$LIVE/server.log"; die "the server did not start"; }
SERVER_UP=1
PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT")
sql() { in_clean postgres "${PSQL[@]}" "$@"; }
sql -d postgres -c "CREATE EXTENSION pg_storage_wait" -c "CREATE EXTENSION pg_stat_statements" \
	-c "CREATE DATABASE nopss" -c "CREATE ROLE pgsw_monitor LOGIN IN ROLE pg_monitor"
sql -d nopss -c "CREATE EXTENSION pg_storage_wait"
if [ -n "$EXTRA_SQL" ]; then
	warn "running PGSW_INTEGRATIONS_EXTRA_SQL=$EXTRA_SQL (stand-ins for features not merged yet)"
	cp "$EXTRA_SQL" "$CLEAN/tmp/extra.sql"
	chmod 644 "$CLEAN/tmp/extra.sql"
	sql -d postgres -f /tmp/extra.sql
	sql -d nopss -f /tmp/extra.sql
fi
in_clean postgres "$PGBIN/pgbench" -h 127.0.0.1 -p "$PG_PORT" -i -s 2 -q postgres >/dev/null 2>&1

# The exporter and prometheus run as the unprivileged test user; setpriv execs, so $! is theirs.
# PG_EXPORTER_* and the data source are passed explicitly: nothing from a caller's environment.
chown "$TEST_USER:" "$WORK"
mkdir -p "$WORK/prom/data"
chown -R "$TEST_USER:" "$WORK/prom"
setpriv --reuid="$TEST_USER" --regid="$(id -g "$TEST_USER")" --init-groups env -i \
	DATA_SOURCE_NAME="postgresql://pgsw_monitor@127.0.0.1:$PG_PORT/postgres?sslmode=disable" \
	prometheus-postgres-exporter --web.listen-address="127.0.0.1:$EXP_PORT" \
	--extend.query-path="$SRC/integrations/postgres_exporter/queries.yaml" \
	>"$WORK/exporter.log" 2>&1 &
PIDS+=($!)
say "prometheus-postgres-exporter pid ${PIDS[-1]} on 127.0.0.1:$EXP_PORT"
cat >"$WORK/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: pg
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
EOF
setpriv --reuid="$TEST_USER" --regid="$(id -g "$TEST_USER")" --init-groups env -i \
	prometheus --config.file="$WORK/prom/prometheus.yml" --storage.tsdb.path="$WORK/prom/data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
say "prometheus pid ${PIDS[-1]} on 127.0.0.1:$PROM_PORT"

say "pgbench: 4 clients, 6 s"
in_clean postgres "$PGBIN/pgbench" -h 127.0.0.1 -p "$PG_PORT" -c 4 -j 2 -T 6 postgres 2>&1 | grep -E '^tps' | sed 's/^/    /'
lap "server, pgbench"

# No block device (a container on an overlay, a tmpfs): storage_device_stats has no rows, so
# its panels may be empty and its series are absent; said loudly, never silently.
ndev=$(sql -d postgres -At -c "SELECT count(device) FROM storage_device_stats(interval '1 minute')")
ALLOW=()
if [ "$ndev" = 0 ]; then
	warn "storage_device_stats has no rows here (no block device): device panels may be empty, device series are not checked"
	ALLOW=(--allow-empty storage_device_stats)
fi
# Every panel's SQL, as a pg_monitor member (the grants a dashboard user has).
CHECK_PSQL="chroot $CLEAN /usr/sbin/runuser -u postgres -- $PGBIN/psql -h 127.0.0.1 -p $PG_PORT -U pgsw_monitor"
"$PYTHON" "$SRC/integrations/check_dashboard.py" dashboard "$SRC/integrations/grafana/pg_storage_wait.json" \
	--psql "$CHECK_PSQL -d postgres" --each-value --expect-nonnull query --interval 1m "${ALLOW[@]}"
say "again with \$__interval = 10s, and in a database without pg_stat_statements (ids only)"
"$PYTHON" "$SRC/integrations/check_dashboard.py" dashboard "$SRC/integrations/grafana/pg_storage_wait.json" \
	--psql "$CHECK_PSQL -d postgres" --interval 10s "${ALLOW[@]}" | tail -1
"$PYTHON" "$SRC/integrations/check_dashboard.py" dashboard "$SRC/integrations/grafana/pg_storage_wait.json" \
	--psql "$CHECK_PSQL -d nopss" "${ALLOW[@]}" | tail -1
# And the checker must fail on a broken dashboard: a time series without its time column, a
# table without a column its field overrides map.
jq '(.panels[] | select(.title == "Storage / CPU / lock shares") | .targets[0].rawSql) |=
	sub("sample_time AS time"; "sample_time")' \
	"$SRC/integrations/grafana/pg_storage_wait.json" >"$WORK/broken1.json"
jq '(.panels[] | select(.title == "Devices: IOPS and MB/s against the ceiling") | .targets[0].rawSql) |=
	sub("iops_limit,"; "")' "$WORK/broken1.json" >"$WORK/broken.json"
"$PYTHON" "$SRC/integrations/check_dashboard.py" dashboard "$WORK/broken.json" \
	--psql "$CHECK_PSQL -d postgres" "${ALLOW[@]}" >"$WORK/broken.log" 2>&1 || true
nfail=$(grep -c '^FAIL' "$WORK/broken.log" || true)
[ "$nfail" -ge 2 ] || { cat "$WORK/broken.log"; die "check_dashboard.py missed a broken panel ($nfail failures, 2 expected)"; }
say "check_dashboard.py fails the broken dashboard: $nfail failures"
lap "dashboard SQL"

# The exporter: the documented series, no more, no fewer.
curl -sf "http://127.0.0.1:$EXP_PORT/metrics" >"$WORK/metrics.txt" || die "no /metrics from the exporter"
grep -E '^pg_storage_wait_' "$WORK/metrics.txt" | sed -E 's/[{ ].*//' | sort -u >"$WORK/published.txt"
# shellcheck disable=SC2016 # backquotes: the README's code spans
awk '/^## Dashboards, alerts and packages/ {on = 1; next} on && /^## / {on = 0} on' "$SRC/README.md" |
	grep -oE '`pg_storage_wait_[a-z0-9_]+`' | tr -d '`' | sort -u >"$WORK/documented.txt"
[ "$ndev" != 0 ] || sed -i '/^pg_storage_wait_device_/d; /^pg_storage_wait_probe_/d' "$WORK/documented.txt"
[ -s "$WORK/documented.txt" ] || die "README's section 'Dashboards, alerts and packages' documents no series"
if ! diff "$WORK/documented.txt" "$WORK/published.txt" >"$WORK/series.diff"; then
	sed 's/^/    /' "$WORK/series.diff"
	grep -i 'level=error' "$WORK/exporter.log" | grep -i storage_wait | tail -5 || true
	die "published pg_storage_wait_* series differ from the README's (< documented only, > published only)"
fi
say "the exporter publishes the $(wc -l <"$WORK/published.txt") documented pg_storage_wait_* series"
n=$(grep -c '^pg_storage_wait_symptom_status{' "$WORK/metrics.txt" || true)
[ "$n" = 5 ] || die "expected 5 pg_storage_wait_symptom_status series, got $n"
grep -qE '^pg_storage_wait_verdict_info\{.*verdict="[a-z-]+".*\} 1$' "$WORK/metrics.txt" ||
	die "no pg_storage_wait_verdict_info{verdict=...} 1"
grep -E '^pg_storage_wait_(score|verdict_info|xacts_per_s|status_last_tick_age_seconds)' "$WORK/metrics.txt" | sed 's/^/    /'
if grep -i 'level=error' "$WORK/exporter.log" | grep -qi 'pg_storage_wait'; then
	grep -i 'level=error' "$WORK/exporter.log" | grep -i pg_storage_wait | tail -5
	die "the exporter logged errors for pg_storage_wait queries"
fi

# Prometheus: the target is up, the alerts load, the score can be queried.
query() { curl -sf -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
score=
for ((i = 0; i < 40; i++)); do
	score=$(query 'pg_storage_wait_score' 2>/dev/null | jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true)
	case "$score" in "" | NaN) sleep 0.5 ;; *) break ;; esac
done
case "$score" in "" | NaN) die "prometheus: /api/v1/query?query=pg_storage_wait_score gave '${score:-no result}'" ;; esac
"$PYTHON" -c "import sys; v = float(sys.argv[1]); sys.exit(0 if 0 <= v <= 100 else 1)" "$score" ||
	die "pg_storage_wait_score = $score, outside 0-100"
say "prometheus: pg_storage_wait_score = $score"
up=$(query 'up{job="pg"}' | jq -r '.data.result[0].value[1]')
[ "$up" = 1 ] || die "prometheus: up{job=\"pg\"} = $up"
rules_ok=$(curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/rules" |
	jq '[.data.groups[].rules[] | select(.health == "ok" or .health == "unknown")] | length')
[ "$rules_ok" = 4 ] || die "prometheus loaded $rules_ok healthy pg_storage_wait rules, expected 4"
say "prometheus: target up, 4 alert rules loaded"
lap "exporter + prometheus"

for p in "${PIDS[@]}"; do stop_pid "$p" "pid $p"; done
PIDS=()
in_clean postgres "$PGBIN/pg_ctl" -D "$LIVE/data" -m fast -w stop >/dev/null
SERVER_UP=0
cleanup
banner "integrations: passed in $((SECONDS - T0))s"
printf '    %s\n' "${TIMES[@]}"
