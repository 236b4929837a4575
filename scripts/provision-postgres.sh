#!/usr/bin/env bash
# Provision the PostgreSQL servers pg_storage_wait is built and tested against.
#
#   scripts/provision-postgres.sh [deps] [pg18-assert] [pg18-release] [pg17] ...
#
# deps          Debian packages for building the extension, PostgreSQL 18 and the tests
# pg18-assert   PostgreSQL 18 from Debian's source package, --enable-cassert --enable-debug
#               --enable-tap-tests (tests)
# pg18-release  the same source, plain release build (demo, benchmarks)
# pg17          PostgreSQL 17 from Debian 13 ("trixie") binary packages in a debootstrap chroot
#
# Idempotent: every artefact is cached under $PGSW_CACHE (default ~/.cache/pg_storage_wait),
# keyed by version and build flavour, and a finished step leaves a ".complete" marker, so a
# second run takes seconds. Prints where each result lives; fails with a clear message.
set -euo pipefail

PGSW_CACHE=${PGSW_CACHE:-$HOME/.cache/pg_storage_wait}
PG18_VERSION=${PG18_VERSION:-18.6}
CHROOT17="$PGSW_CACHE/chroot-trixie-pg17"
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
	debootstrap bzip2 gnuplot-nox sysstat postgresql-server-dev-15 dpkg-dev procps)

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

# Build one flavour of PostgreSQL 18 from a fresh unpack (an in-place configured tree cannot be
# reused for a second flavour: it fails at link time).
build_pg18() {
	local flavour=$1 prefix="$PGSW_CACHE/pg-$PG18_VERSION-$1"
	if [ -f "$prefix/.complete" ]; then say "PostgreSQL $PG18_VERSION ($flavour): cached at $prefix"; return; fi
	local tarball; tarball=$(fetch_pg18_source)
	local work="$PGSW_CACHE/build/pg-$PG18_VERSION-$flavour"
	rm -rf "$work" "$prefix"; mkdir -p "$work"
	say "unpacking PostgreSQL $PG18_VERSION for the $flavour build"
	tar -xjf "$tarball" -C "$work" --strip-components=1
	local flags=(--prefix="$prefix" --without-icu --with-openssl=no)
	[ "$flavour" = assert ] && flags+=(--enable-cassert --enable-debug --enable-tap-tests)
	[ "$flavour" = release ] && flags+=(--enable-debug)
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

# PostgreSQL 17 from Debian 13 binary packages in a chroot (trixie's postgresql-17 source is
# not on the mirror any more; the binaries are).
provision_pg17() {
	if [ -f "$CHROOT17/.complete" ]; then say "PostgreSQL 17 chroot: cached at $CHROOT17"; return; fi
	need_root "building the PostgreSQL 17 chroot"
	# Never empty a chroot with /proc or /dev still bound into it (a test run killed with
	# SIGKILL can leave them): rm would descend into the host's /dev. --one-file-system too.
	if findmnt -rn -o TARGET | grep -qF "$CHROOT17/"; then
		die "something is still mounted under $CHROOT17 ($(findmnt -rn -o TARGET | grep -F "$CHROOT17/" |
			tr '\n' ' ')): unmount it first (umount DIR), then run again"
	fi
	rm -rf --one-file-system "$CHROOT17"; mkdir -p "$CHROOT17"
	local pkgs=postgresql-17,postgresql-server-dev-17,postgresql-17-pg-wait-sampling,g++,make,libboost-dev,libipc-run-perl,perl,procps
	say "debootstrap trixie with $pkgs into $CHROOT17 (~2.5 minutes)"
	debootstrap --variant=minbase --include="$pkgs" trixie "$CHROOT17" "$(debian_mirror)" \
		>"$PGSW_CACHE/debootstrap.log" 2>&1 ||
		{ tail -20 "$PGSW_CACHE/debootstrap.log" >&2; die "debootstrap failed (see $PGSW_CACHE/debootstrap.log)"; }
	chroot "$CHROOT17" /usr/lib/postgresql/17/bin/postgres --version >&2 ||
		die "the chroot has no working PostgreSQL 17"
	touch "$CHROOT17/.complete"
	say "PostgreSQL 17 chroot ready at $CHROOT17"
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
		*) die "unknown step '$step' (deps, pg18-assert, pg18-release, pg17)" ;;
		esac
	done
}
main "$@"
