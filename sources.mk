# The one list of sources, read by the Makefile (PGXS) and by CMakeLists.txt.
# CORE_SOURCES: pure C++ (no PostgreSQL headers), unit-tested without a server.
# PG_SOURCES: the PostgreSQL-facing layer; the only code that includes postgres.h.
CORE_SOURCES = \
	src/core/codes.cpp \
	src/core/history_file.cpp \
	src/core/latency_stats.cpp \
	src/core/names.cpp \
	src/core/records.cpp \
	src/core/ring.cpp \
	src/core/rollup.cpp \
	src/core/tick_builder.cpp \
	src/core/verdict.cpp \
	src/core/wait_class.cpp \
	src/core/window.cpp

PG_SOURCES = \
	src/pg/boundary.cpp \
	src/pg/database_counters.cpp \
	src/pg/io_counters.cpp \
	src/pg/module.cpp \
	src/pg/sampler.cpp \
	src/pg/sql_answer.cpp \
	src/pg/sql_common.cpp \
	src/pg/sql_raw.cpp

UNIT_TEST_SOURCES = \
	test/unit/test_counter_deltas.cpp \
	test/unit/test_fixed_map.cpp \
	test/unit/test_history_file.cpp \
	test/unit/test_latency_stats.cpp \
	test/unit/test_names.cpp \
	test/unit/test_ring.cpp \
	test/unit/test_rollup.cpp \
	test/unit/test_tick_builder.cpp \
	test/unit/test_verdict.cpp \
	test/unit/test_wait_class.cpp \
	test/unit/test_window.cpp

BENCH_SOURCES = \
	bench/micro/bench_core.cpp
