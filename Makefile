# pg_storage_wait: PGXS build.
#   make [PG_CONFIG=/path/to/pg_config] [WERROR=1]
#   make install
#   make installcheck    # pg_regress on a temporary instance, then the TAP tests
PG_CONFIG ?= pg_config

# Goals that compile nothing work with any pg_config (`make clean` with Debian 12's default
# PostgreSQL 15, say); every other goal needs PostgreSQL 16 or later.
PGSW_NO_COMPILE_GOALS := clean distclean maintainer-clean
PGSW_COMPILES := $(filter-out $(PGSW_NO_COMPILE_GOALS),$(or $(MAKECMDGOALS),all))

# Refuse PostgreSQL 15 and older at once, before any compiler runs: pg_stat_io (16+) is the
# foundation of every measurement. Majors newer than the newest tested one are refused by
# src/pg/compat.hpp at compile time unless PGSW_UNTESTED_MAJOR=1.
PG_VERSION_TEXT := $(shell $(PG_CONFIG) --version 2>/dev/null)
PG_MAJOR := $(shell echo '$(PG_VERSION_TEXT)' | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
ifeq ($(PG_VERSION_TEXT),)
$(error cannot run '$(PG_CONFIG) --version': set PG_CONFIG=/path/to/pg_config of PostgreSQL 16 or later)
endif
ifneq ($(PGSW_COMPILES),)
ifeq ($(shell test '$(PG_MAJOR)' -ge 16 2>/dev/null && echo ok),)
$(error pg_storage_wait requires PostgreSQL 16 or later (pg_stat_io); $(PG_CONFIG) is $(PG_VERSION_TEXT))
endif
endif

include sources.mk

MODULE_big = pg_storage_wait
OBJS = $(CORE_SOURCES:.cpp=.o) $(PG_SOURCES:.cpp=.o)
EXTENSION = pg_storage_wait
DATA = pg_storage_wait--1.0.sql pg_storage_wait--1.0--1.1.sql
PGFILEDESC = "pg_storage_wait - is PostgreSQL waiting on storage?"

# pg_regress on a temporary instance with the library preloaded (test/regress.conf) ...
REGRESS = status raw_readers answer privileges settings
# A feature adds its own files on a `REGRESS += name` line below.
REGRESS += reliability
REGRESS += devices
REGRESS += symptoms
REGRESS += probe
REGRESS += boundary
REGRESS_OPTS = --temp-instance=./tmp_check_regress --temp-config=$(srcdir)/test/regress.conf
# ... and a second one on an instance without it, for the "not preloaded" errors.
REGRESS_NOT_PRELOADED = not_preloaded
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# Boost from Debian lives in /usr/include (already a system directory); elsewhere pass
# BOOST_INCLUDE=/path so its headers are read as system headers too.
BOOST_INCLUDE ?=
WARNINGS = -Wall -Wextra -Wshadow -Wno-missing-field-initializers
# -fno-plt: calls into PostgreSQL and libc load their address from the GOT (a page every tick
# touches anyway) instead of jumping through the PLT, one more page each tick touched cold
# after its sleep (BENCHMARKS.md section 9, seventh pass).
PG_CXXFLAGS = -std=c++17 -fno-plt $(WARNINGS)
PG_CPPFLAGS = -I$(srcdir)/src $(if $(BOOST_INCLUDE),-isystem $(BOOST_INCLUDE))
ifeq ($(WERROR),1)
PG_CXXFLAGS += -Werror
endif
ifeq ($(PGSW_UNTESTED_MAJOR),1)
PG_CPPFLAGS += -DPGSW_UNTESTED_MAJOR
endif
SHLIB_LINK = -lstdc++

EXTRA_CLEAN = tmp_check_regress tmp_check_not_preloaded results_not_preloaded $(PGSW_STAMP)

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# prove prints each TAP file's wall time (PGXS sets PROVE_FLAGS empty above this line).
PROVE_FLAGS += --timer
# TAP files in two groups (test/prove_in_groups.sh): most PGSW_TAP_JOBS at a time, then those
# marked `# pgsw-tap: alone` (timings that assume a quiet machine) one by one.
PGSW_TAP_JOBS ?= 2
ifneq ($(PROVE),)
PGSW_REAL_PROVE := $(PROVE)
PROVE = PGSW_REAL_PROVE='$(PGSW_REAL_PROVE)' PGSW_TAP_JOBS='$(PGSW_TAP_JOBS)' \
	$(abspath $(srcdir))/test/prove_in_groups.sh
endif

# Server headers are third-party code to us: read them as system headers so -Wextra and
# -Werror judge only our own code. (-isystem wins over the -I PGXS adds for the same folder.)
override CPPFLAGS := $(CPPFLAGS) -isystem $(includedir_server) -isystem $(includedir_internal)

# Objects compiled against one server's headers must never be linked for another (16's server
# refused a library holding one 18 object: "undefined symbol: pqsignal_be"). The stamp records
# the server (version, bindir) and the flags that change what compiles; when they differ from
# the last build's it is rewritten, which makes every object out of date.
PGSW_STAMP := .pgsw-build-stamp
PGSW_STAMP_TEXT := $(PG_VERSION_TEXT) $(shell $(PG_CONFIG) --bindir) untested=$(PGSW_UNTESTED_MAJOR)
ifneq ($(PGSW_COMPILES),)
ifneq ($(shell cat $(PGSW_STAMP) 2>/dev/null),$(PGSW_STAMP_TEXT))
$(shell echo '$(PGSW_STAMP_TEXT)' >$(PGSW_STAMP))
endif
endif
$(OBJS) $(OBJS:.o=.bc): $(PGSW_STAMP)

installcheck: installcheck-not-preloaded
installcheck-not-preloaded:
	$(pg_regress_installcheck) --temp-instance=./tmp_check_not_preloaded \
		--outputdir=./results_not_preloaded $(REGRESS_NOT_PRELOADED)
.PHONY: installcheck-not-preloaded
