# pg_storage_wait: PGXS build.
#   make [PG_CONFIG=/path/to/pg_config] [WERROR=1]
#   make install
#   make installcheck    # pg_regress on a temporary instance, then the TAP tests
PG_CONFIG ?= pg_config

# Refuse PostgreSQL 15 and older at once, before any compiler runs: pg_stat_io (16+) is the
# foundation of every measurement.
PG_VERSION_TEXT := $(shell $(PG_CONFIG) --version 2>/dev/null)
PG_MAJOR := $(shell echo '$(PG_VERSION_TEXT)' | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
ifeq ($(PG_VERSION_TEXT),)
$(error cannot run '$(PG_CONFIG) --version': set PG_CONFIG=/path/to/pg_config of PostgreSQL 16 or later)
endif
ifeq ($(shell test '$(PG_MAJOR)' -ge 16 2>/dev/null && echo ok),)
$(error pg_storage_wait requires PostgreSQL 16 or later (pg_stat_io); $(PG_CONFIG) is $(PG_VERSION_TEXT))
endif

include sources.mk

MODULE_big = pg_storage_wait
OBJS = $(CORE_SOURCES:.cpp=.o) $(PG_SOURCES:.cpp=.o)
EXTENSION = pg_storage_wait
DATA = pg_storage_wait--1.0.sql
PGFILEDESC = "pg_storage_wait - is PostgreSQL waiting on storage?"

# pg_regress on a temporary instance with the library preloaded (test/regress.conf) ...
REGRESS = status raw_readers answer privileges settings
REGRESS_OPTS = --temp-instance=./tmp_check_regress --temp-config=$(srcdir)/test/regress.conf
# ... and a second one on an instance without it, for the "not preloaded" errors.
REGRESS_NOT_PRELOADED = not_preloaded
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# Boost from Debian lives in /usr/include (already a system directory); elsewhere pass
# BOOST_INCLUDE=/path so its headers are read as system headers too.
BOOST_INCLUDE ?=
WARNINGS = -Wall -Wextra -Wshadow -Wno-missing-field-initializers
PG_CXXFLAGS = -std=c++17 $(WARNINGS)
PG_CPPFLAGS = -I$(srcdir)/src $(if $(BOOST_INCLUDE),-isystem $(BOOST_INCLUDE))
ifeq ($(WERROR),1)
PG_CXXFLAGS += -Werror
endif
SHLIB_LINK = -lstdc++

EXTRA_CLEAN = tmp_check_regress tmp_check_not_preloaded results_not_preloaded

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Server headers are third-party code to us: read them as system headers so -Wextra and
# -Werror judge only our own code. (-isystem wins over the -I PGXS adds for the same folder.)
override CPPFLAGS := $(CPPFLAGS) -isystem $(includedir_server) -isystem $(includedir_internal)

installcheck: installcheck-not-preloaded
installcheck-not-preloaded:
	$(pg_regress_installcheck) --temp-instance=./tmp_check_not_preloaded \
		--outputdir=./results_not_preloaded $(REGRESS_NOT_PRELOADED)
.PHONY: installcheck-not-preloaded
