#!/usr/bin/env bash
# Provision the PostgreSQL servers pg_storage_wait is built and tested against.
#
#   scripts/provision-postgres.sh [deps] [pg18-assert] [pg18-release] [pg17] [pg16] [pg19]
#                                 [pg16-release] [pg19-release] [integrations]
#
# deps          Debian packages for building the extension, PostgreSQL 18 and the tests
# pg18-assert   PostgreSQL 18 from Debian's source package, --enable-cassert --enable-debug
#               --enable-tap-tests (tests)
# pg18-release  the same source, release build with TAP (demo, benchmarks, test/t/005)
# pg17          PostgreSQL 17 from Debian 13 ("trixie") binary packages in a debootstrap chroot
# pg16          PostgreSQL 16.14 from the project's source archive (../shared/postgres-src/ from
#               the project root, checked against its SHA256SUMS), assert + TAP build like
#               pg18-assert
# pg19          the same for PostgreSQL 19beta2
# pg16-release, pg19-release
#               the same sources, release builds with TAP: test/t/005 compares timings with
#               pgbench's, which an assert build's own costs distort (scripts/test.sh)
# integrations  Debian's prometheus (with promtool) and prometheus-postgres-exporter, their
#               services never started; and a copy of the pg17 chroot with the Debian packaging
#               tools (debhelper, postgresql-server-dev-all, lintian) at $PGSW_DEB_CHROOT
#
# Idempotent: every artefact is cached under $PGSW_CACHE (default ~/.cache/pg_storage_wait),
# keyed by version and build flavour, and a finished step leaves a ".complete" marker, so a
# second run takes seconds. Prints where each result lives; fails with a clear message.
set -euo pipefail

PGSW_CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
PG18_VERSION=${PG18_VERSION:-18.6}
CHROOT17="$PGSW_CACHE/chroot-trixie-pg17"
PG16_VERSION=${PG16_VERSION:-16.14}
PG19_VERSION=${PG19_VERSION:-19beta2}
# The source archives of the majors no Debian release packages here sit beside the project:
# ../shared/postgres-src/ from its root. A clone made elsewhere (CI clones the repository into a
# folder of its own) looks beside the repository it was cloned from, then in the workplace's
# shared folder.
find_shared_src() {
	local root origin dir
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	origin=$(git -C "$root" remote get-url origin 2>/dev/null || true)
	for dir in "$root/../shared/postgres-src" ${origin:+"${origin%/.git}/../shared/postgres-src"} \
		/work/shared/postgres-src; do
		if [ -f "$dir/SHA256SUMS" ]; then
			(cd "$dir" && pwd)
			return
		fi
	done
	echo "$root/../shared/postgres-src"
}
PG_SHARED_SRC=${PG_SHARED_SRC:-$(find_shared_src)}
# The packaging chroot is a copy: the pg17 stage's chroot never gets the build tools.
PGSW_DEB_CHROOT=${PGSW_DEB_CHROOT:-$PGSW_CACHE/chroot-trixie-pg17-deb}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-}
JOBS=${JOBS:-$(nproc)}

say() { printf '[provision %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { printf '[provision] ERROR: %s\n' "$*" >&2; exit 1; }

need_root() {
	[ "$(id -u)" = 0 ] || die "$1 needs root (apt-get, debootstrap); run as root or provision once as root"
}

debian_mirror() {
	[ -n "$DEBIAN_MIRROR" ] && { echo "$DEBIAN_MIRROR"; return; }
	local uri
	uri=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ && $2 !~ /security/ {print $2; exit}' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	echo "${uri:-http://deb.debian.org/debian}"
}

DEPS=(g++ make cmake libboost-dev libgtest-dev libgmock-dev libbenchmark-dev clang-format
	bison flex libreadline-dev zlib1g-dev pkg-config libicu-dev libipc-run-perl perl
	debootstrap bzip2 gnuplot-nox sysstat postgresql-server-dev-15 dpkg-dev procps
	clang-16 libclang-rt-16-dev # clang-16 + its runtime: the libFuzzer harnesses (test.sh fuzz)
	faketime)                   # libfaketime: test/t/019_clock_step.pl steps the server's clock

provision_deps() {
	local missing=()
	for p in "${DEPS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then say "Debian packages: all present"; return; fi
	need_root "installing ${missing[*]}"
	say "installing Debian packages: ${missing[*]}"
	apt-get update -qq || die "apt-get update failed (is the Debian mirror reachable?)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
		>"$PGSW_CACHE/apt-install.log" 2>&1 ||
		{ tail -20 "$PGSW_CACHE/apt-install.log" >&2; die "apt-get install failed (see $PGSW_CACHE/apt-install.log)"; }
}

# The PostgreSQL 18 source: Debian's source package from sid, added as deb-src only (a binary
# sid line would half-upgrade the machine on the next apt-get install).
fetch_pg18_source() {
	local srcdir="$PGSW_CACHE/src"
	local tarball="$srcdir/postgresql-18_${PG18_VERSION}.orig.tar.bz2"
	[ -f "$tarball" ] && { echo "$tarball"; return; }
	need_root "fetching the PostgreSQL 18 source package"
	local list=/etc/apt/sources.list.d/pg-storage-wait-sid-src.sources
	if [ ! -f "$list" ]; then
		say "adding deb-src for Debian sid (source packages only) to $list"
		cat >"$list" <<SRC
Types: deb-src
URIs: $(debian_mirror)
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	fi
	say "apt-get update (for the sid source index)"
	apt-get update -qq || die "apt-get update failed (no network to the Debian mirror?)"
	mkdir -p "$srcdir"
	# `apt-get source pkg=VERSION` wants an exact Debian version (18.6-3), no wildcard: find
	# the newest revision of the upstream version we want in the source index.
	local version
	version=$(apt-cache showsrc postgresql-18 2>/dev/null |
		awk -v v="$PG18_VERSION" '$1 == "Version:" && index($2, v "-") == 1 {print $2}' |
		sort -V | tail -n 1)
	[ -n "$version" ] || die "Debian sid offers no postgresql-18 $PG18_VERSION source any more" \
		"(it has: $(apt-cache showsrc postgresql-18 2>/dev/null | awk '$1 == "Version:" {print $2}' |
			tr '\n' ' ')): set PG18_VERSION to one of those"
	say "downloading Debian's postgresql-18 $version source package"
	# APT::Sandbox::User=root: the download lands in a root-owned folder that the _apt sandbox
	# user cannot write ("Download is performed unsandboxed as root" warning otherwise).
	(cd "$srcdir" && apt-get source --download-only -qq -o APT::Sandbox::User=root \
		"postgresql-18=$version" >&2) ||
		die "apt-get source postgresql-18=$version failed (mirror unreachable, or the file is gone)"
	[ -f "$tarball" ] || {
		ls "$srcdir" >&2
		die "expected $tarball; sid now ships another 18.x: set PG18_VERSION to it"
	}
	echo "$tarball"
}

# A finished build with TAP support (the release builds had none before they ran test/t/005:
# such a cached build is made again, so a warm machine tests what a fresh one does).
cached_build() { # cached_build PREFIX
	[ -f "$1/.complete" ] &&
		grep -qE '^enable_tap_tests[[:space:]]*=[[:space:]]*yes' "$1/lib/postgresql/pgxs/src/Makefile.global"
}

# Build one flavour of PostgreSQL 18 from a fresh unpack (an in-place configured tree cannot be
# reused for a second flavour: it fails at link time).
build_pg18() {
	local flavour=$1 prefix="$PGSW_CACHE/pg-$PG18_VERSION-$1"
	if cached_build "$prefix"; then say "PostgreSQL $PG18_VERSION ($flavour): cached at $prefix"; return; fi
	local tarball; tarball=$(fetch_pg18_source)
	local work="$PGSW_CACHE/build/pg-$PG18_VERSION-$flavour"
	rm -rf "$work" "$prefix"; mkdir -p "$work"
	say "unpacking PostgreSQL $PG18_VERSION for the $flavour build"
	tar -xjf "$tarball" -C "$work" --strip-components=1
	local flags=(--prefix="$prefix" --without-icu --with-openssl=no)
	[ "$flavour" = assert ] && flags+=(--enable-cassert --enable-debug --enable-tap-tests)
	[ "$flavour" = release ] && flags+=(--enable-debug --enable-tap-tests)
	say "configure ${flags[*]}"
	(cd "$work" && ./configure "${flags[@]}" >"$work/configure.log" 2>&1) ||
		{ tail -20 "$work/configure.log" >&2; die "configure failed for $flavour (see $work/configure.log)"; }
	say "building PostgreSQL $PG18_VERSION ($flavour) with $JOBS jobs, a few minutes"
	(cd "$work" && make -s -j"$JOBS" >"$work/build.log" 2>&1 &&
		make -s -C contrib/pg_stat_statements -j"$JOBS" >>"$work/build.log" 2>&1) ||
		{ tail -30 "$work/build.log" >&2; die "build failed for $flavour (see $work/build.log)"; }
	(cd "$work" && make -s install >>"$work/build.log" 2>&1 &&
		make -s -C contrib/pg_stat_statements install >>"$work/build.log" 2>&1) ||
		{ tail -30 "$work/build.log" >&2; die "install failed for $flavour"; }
	touch "$prefix/.complete"
	rm -rf "$work"
	say "PostgreSQL $PG18_VERSION ($flavour) installed at $prefix"
}

# PostgreSQL VERSION from the shared source archive (a git archive: no pre-generated parser
# files, so bison and flex from DEPS), in FLAVOUR assert (--enable-cassert) or release, both
# with TAP, cached like pg18-assert.
build_shared() { # build_shared VERSION FLAVOUR
	local version=$1 flavour=$2 prefix="$PGSW_CACHE/pg-$1-$2"
	if cached_build "$prefix"; then say "PostgreSQL $version ($flavour): cached at $prefix"; return; fi
	local tarball="$PG_SHARED_SRC/postgresql-$version.tar.xz"
	[ -f "$tarball" ] || die "no $tarball (the source archives live in ../shared/postgres-src/ from the project root or from the repository it was cloned from; set PG_SHARED_SRC to their folder)"
	say "checking $tarball against $PG_SHARED_SRC/SHA256SUMS"
	(cd "$PG_SHARED_SRC" && grep " postgresql-$version.tar.xz\$" SHA256SUMS | sha256sum -c --quiet -) ||
		die "postgresql-$version.tar.xz does not match its SHA256SUMS line (or has none)"
	local work="$PGSW_CACHE/build/pg-$version-$flavour"
	rm -rf "$work" "$prefix"; mkdir -p "$work"
	say "unpacking PostgreSQL $version ($flavour)"
	tar -xJf "$tarball" -C "$work" --strip-components=1
	local flags=(--prefix="$prefix" --without-icu --with-openssl=no --enable-debug --enable-tap-tests)
	[ "$flavour" = assert ] && flags+=(--enable-cassert)
	say "configure ${flags[*]}"
	(cd "$work" && ./configure "${flags[@]}" >"$work/configure.log" 2>&1) ||
		{ tail -20 "$work/configure.log" >&2; die "configure failed for $version $flavour (see $work/configure.log)"; }
	say "building PostgreSQL $version ($flavour) with $JOBS jobs, several minutes"
	(cd "$work" && make -s -j"$JOBS" >"$work/build.log" 2>&1 &&
		make -s -C contrib/pg_stat_statements -j"$JOBS" >>"$work/build.log" 2>&1) ||
		{ tail -30 "$work/build.log" >&2; die "build failed for $version $flavour (see $work/build.log)"; }
	(cd "$work" && make -s install >>"$work/build.log" 2>&1 &&
		make -s -C contrib/pg_stat_statements install >>"$work/build.log" 2>&1) ||
		{ tail -30 "$work/build.log" >&2; die "install failed for $version $flavour"; }
	touch "$prefix/.complete"
	rm -rf "$work"
	say "PostgreSQL $version ($flavour) installed at $prefix"
}

# PostgreSQL 17 from Debian 13 binary packages in a chroot (trixie's postgresql-17 source is
# not on the mirror any more; the binaries are).
# What the pg17 stage needs inside the chroot (faketime: test/t/019_clock_step.pl).
CHROOT17_PKGS=(postgresql-17 postgresql-server-dev-17 postgresql-17-pg-wait-sampling g++ make
	libboost-dev libipc-run-perl perl procps faketime)

# A cached chroot made before a package joined the list gets it installed (a warm machine must
# test what a fresh one does).
complete_pg17_chroot() {
	local p missing=() m
	for p in "${CHROOT17_PKGS[@]}"; do
		chroot "$CHROOT17" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	need_root "installing ${missing[*]} into $CHROOT17"
	say "the cached PostgreSQL 17 chroot lacks ${missing[*]}: installing"
	if findmnt -rn -o TARGET | grep -qF "$CHROOT17/"; then
		die "something is still mounted under $CHROOT17: unmount it first, then run again"
	fi
	for m in proc dev; do mount --bind "/$m" "$CHROOT17/$m"; done
	# shellcheck disable=SC2064 # expand now
	trap "umount '$CHROOT17/dev' '$CHROOT17/proc' 2>/dev/null || true" EXIT
	install_without_services "$CHROOT17" "${missing[@]}"
	umount "$CHROOT17/dev" "$CHROOT17/proc"
	trap - EXIT
}

# One provisioning of the chroot at a time: scripts/test.sh starts it beside the PostgreSQL 18
# build and asks for it again in the background part, which then waits here and finds it ready.
lock_pg17_chroot() {
	[ -z "${CHROOT17_LOCK_FD:-}" ] || return 0 # held already (pg17, then integrations)
	mkdir -p "$PGSW_CACHE"
	exec {CHROOT17_LOCK_FD}>"$CHROOT17.lock"
	if ! flock -n "$CHROOT17_LOCK_FD"; then
		say "waiting for another provisioning of $CHROOT17 to finish"
		flock "$CHROOT17_LOCK_FD"
	fi
}

provision_pg17() {
	lock_pg17_chroot
	if [ -f "$CHROOT17/.complete" ]; then
		complete_pg17_chroot
		say "PostgreSQL 17 chroot: cached at $CHROOT17"
		return
	fi
	need_root "building the PostgreSQL 17 chroot"
	# Never empty a chroot with /proc or /dev still bound into it (a test run killed with
	# SIGKILL can leave them): rm would descend into the host's /dev. --one-file-system too.
	if findmnt -rn -o TARGET | grep -qF "$CHROOT17/"; then
		die "something is still mounted under $CHROOT17 ($(findmnt -rn -o TARGET | grep -F "$CHROOT17/" |
			tr '\n' ' ')): unmount it first (umount DIR), then run again"
	fi
	rm -rf --one-file-system "$CHROOT17"; mkdir -p "$CHROOT17"
	local pkgs
	pkgs=$(IFS=,; echo "${CHROOT17_PKGS[*]}")
	say "debootstrap trixie with $pkgs into $CHROOT17 (~2.5 minutes)"
	debootstrap --variant=minbase --include="$pkgs" trixie "$CHROOT17" "$(debian_mirror)" \
		>"$PGSW_CACHE/debootstrap.log" 2>&1 ||
		{ tail -20 "$PGSW_CACHE/debootstrap.log" >&2; die "debootstrap failed (see $PGSW_CACHE/debootstrap.log)"; }
	chroot "$CHROOT17" /usr/lib/postgresql/17/bin/postgres --version >&2 ||
		die "the chroot has no working PostgreSQL 17"
	touch "$CHROOT17/.complete"
	say "PostgreSQL 17 chroot ready at $CHROOT17"
}

# Debian packages whose postinst would start a service: a policy-rc.d that says 101 ("action
# forbidden") while apt runs keeps them stopped; any daemon found running after the install
# (a machine whose policy allowed it) is stopped by pid.
install_without_services() { # install_without_services ROOT(/ or a chroot) PACKAGE...
	local root=$1 policy added=0 pid
	shift
	policy=$root/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		added=1
	fi
	local rc=0
	if [ "$root" = / ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
			>"$PGSW_CACHE/apt-install.log" 2>&1 || rc=$?
	else
		chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
			sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"' sh "$@" \
			>"$root.apt-install.log" 2>&1 || rc=$?
	fi
	[ "$added" = 0 ] || rm -f "$policy"
	if [ "$rc" != 0 ]; then
		tail -20 "$PGSW_CACHE/apt-install.log" "$root.apt-install.log" 2>/dev/null >&2
		die "apt-get install $* failed in $root"
	fi
	[ "$root" = / ] || return 0
	# The exporter's process name is cut to 15 characters ("prometheus-post"): match its command.
	for pid in $(pgrep -x prometheus) $(pgrep -f '^(/usr/bin/)?prometheus-postgres-exporter( |$)'); do
		say "stopping a packaged service that started anyway: pid $pid ($(ps -o cmd= -p "$pid"))"
		kill "$pid" 2>/dev/null || true
	done
}

provision_integrations() {
	local p missing=()
	for p in prometheus prometheus-postgres-exporter; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		need_root "installing ${missing[*]}"
		say "installing ${missing[*]} (their services are not started)"
		apt-get update -qq || die "apt-get update failed"
		install_without_services / "${missing[@]}"
	fi
	if [ -f "$PGSW_DEB_CHROOT/.complete" ]; then say "packaging chroot: cached at $PGSW_DEB_CHROOT"; return; fi
	[ -f "$CHROOT17/.complete" ] || provision_pg17
	need_root "building the packaging chroot"
	local tmp=$PGSW_DEB_CHROOT.tmp m
	if findmnt -rn -o TARGET | grep -qF "$tmp/"; then die "something is still mounted under $tmp: unmount it first"; fi
	rm -rf --one-file-system "$tmp"
	mkdir -p "$(dirname "$tmp")"
	say "copying $CHROOT17 to $tmp, then apt-get install the packaging tools in it (~2 minutes)"
	cp -a "$CHROOT17" "$tmp"
	rm -f "$tmp/.complete"
	for m in proc dev; do mount --bind "/$m" "$tmp/$m"; done
	# shellcheck disable=SC2064 # expand $tmp now
	trap "umount '$tmp/dev' '$tmp/proc' 2>/dev/null || true" EXIT
	install_without_services "$tmp" build-essential debhelper postgresql-server-dev-all dpkg-dev libboost-dev lintian
	umount "$tmp/dev" "$tmp/proc"
	trap - EXIT
	touch "$tmp/.complete"
	mv "$tmp" "$PGSW_DEB_CHROOT"
	say "packaging chroot ready at $PGSW_DEB_CHROOT"
}

main() {
	mkdir -p "$PGSW_CACHE"
	[ $# -gt 0 ] || set -- deps pg18-assert pg17
	for step in "$@"; do
		case "$step" in
		deps) provision_deps ;;
		pg18-assert) build_pg18 assert ;;
		pg18-release) build_pg18 release ;;
		pg17) provision_pg17 ;;
		pg16) build_shared "$PG16_VERSION" assert ;;
		pg16-release) build_shared "$PG16_VERSION" release ;;
		pg19) build_shared "$PG19_VERSION" assert ;;
		pg19-release) build_shared "$PG19_VERSION" release ;;
		integrations) provision_integrations ;;
		*) die "unknown step '$step' (deps, pg18-assert, pg18-release, pg17, pg16, pg16-release, pg19, pg19-release, integrations)" ;;
		esac
	done
}
main "$@"
