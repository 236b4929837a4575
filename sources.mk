# The one list of sources, read by the Makefile (PGXS) and by CMakeLists.txt.
# CORE_SOURCES: pure C++ (no PostgreSQL headers), unit-tested without a server.
# PG_SOURCES: the PostgreSQL-facing layer; the only code that includes postgres.h.
# A feature adds its files on `VAR += file ...` lines of its own at the end (both readers take
# them), so that features added side by side do not edit the same lines.
CORE_SOURCES = \
	src/core/codes.cpp \
	src/core/cpu_times.cpp \
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
	test/unit/test_cpu_times.cpp \
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

UNIT_TEST_SOURCES += test/unit/test_hardening.cpp
# Reliability: the sampler's clocks, the history saver worker.
CORE_SOURCES += src/core/sampler_clock.cpp
PG_SOURCES += src/pg/history_saver.cpp
UNIT_TEST_SOURCES += test/unit/test_sampler_clock.cpp
CORE_SOURCES += src/core/sampler_policy.cpp
UNIT_TEST_SOURCES += test/unit/test_sampler_policy.cpp
# The volume (issue 13): /proc/diskstats, devices, ceilings.
CORE_SOURCES += src/core/diskstats.cpp src/core/devices.cpp
PG_SOURCES += src/pg/devices.cpp src/pg/sql_devices.cpp
UNIT_TEST_SOURCES += test/unit/test_diskstats.cpp test/unit/test_devices.cpp
BENCH_SOURCES += bench/micro/bench_devices.cpp
# The five symptoms and the report (issue 14).
CORE_SOURCES += src/core/server_readings.cpp src/core/symptoms.cpp src/core/report.cpp
PG_SOURCES += src/pg/server_state.cpp src/pg/sql_symptoms.cpp
UNIT_TEST_SOURCES += test/unit/test_server_readings.cpp test/unit/test_symptoms.cpp test/unit/test_report.cpp
# The opt-in probe (issue 13 item 6): true per-read latency per device.
CORE_SOURCES += src/core/probe.cpp src/core/probe_file.cpp
PG_SOURCES += src/pg/probe.cpp src/pg/sql_probe.cpp
UNIT_TEST_SOURCES += test/unit/test_probe.cpp
BENCH_SOURCES += bench/micro/bench_probe.cpp
# The sampler gives back its thread's rseq registration (issue 12: sampler CPU).
CORE_SOURCES += src/core/rseq_release.cpp
UNIT_TEST_SOURCES += test/unit/test_rseq_release.cpp
