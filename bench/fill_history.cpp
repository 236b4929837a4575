// Test-only fast-fill for the query-cost benchmark (bench/run.sh query-cost).
//
// Builds a realistic synthetic history ending at "now" with the core's own code paths and
// writes it as a pg_storage_wait history file, which the server restores at its next start
// (storage_wait_status().restored_from_disk = t). Nothing here is used by the extension.
//
//   fill_history OUT_FILE [--ticks N] [--rollups N] [--interval-ms MS] [--wait-groups N]
//                [--queries N] [--io-cells N] [--entries-per-tick N] [--entries-per-rollup N]
//                [--end-unix-us US] [--seed N]
//
// Ticks are made by the real TickBuilder from per-process samples (so ~--wait-groups distinct
// wait groups, --queries query groups and --io-cells pg_stat_io cells per tick), and the
// one-minute roll-ups by the real RollupBuilder from ticks at --interval-ms, exactly as the
// sampler folds them. The newest --ticks ticks go to the tick ring; every complete minute of
// the last --rollups minutes goes to the roll-up ring. The file is written with
// pgsw::save_history(), stop the server first and write to $PGDATA/pg_stat/pg_storage_wait.history.
// Ring capacities follow module.cpp (records + 1, records * entries_per_*), so use the same
// --entries-per-* as the server's pg_storage_wait.entries_per_tick / entries_per_rollup.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "synth_history.hpp"
#include "core/history_file.hpp"
#include "core/ring.hpp"
#include "core/rollup.hpp"
#include "core/tick_builder.hpp"
#include "core/wait_class.hpp"

using namespace pgsw;

namespace {

constexpr int64_t kPgEpochUnixUs = 946684800LL * 1000000LL;  // 2000-01-01 in Unix µs

struct Options {
    std::string out;
    uint64_t ticks = 3600;
    uint64_t rollups = 10080;
    int64_t interval_ms = 1000;
    int wait_groups = 30;
    int queries = 5;
    int io_cells = 20;
    uint64_t entries_per_tick = 48;
    uint64_t entries_per_rollup = 64;
    int64_t end_unix_us = 0;
    unsigned seed = 42;
};

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: fill_history OUT_FILE [--ticks N] [--rollups N] [--interval-ms MS]\n"
                 "       [--wait-groups N] [--queries N] [--io-cells N] [--entries-per-tick N]\n"
                 "       [--entries-per-rollup N] [--end-unix-us US] [--seed N]\n");
    std::exit(2);
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> const char * {
            if (i + 1 >= argc)
                usage();
            return argv[++i];
        };
        if (a == "--ticks")
            o.ticks = std::strtoull(next(), nullptr, 10);
        else if (a == "--rollups")
            o.rollups = std::strtoull(next(), nullptr, 10);
        else if (a == "--interval-ms")
            o.interval_ms = std::strtoll(next(), nullptr, 10);
        else if (a == "--wait-groups")
            o.wait_groups = std::atoi(next());
        else if (a == "--queries")
            o.queries = std::atoi(next());
        else if (a == "--io-cells")
            o.io_cells = std::atoi(next());
        else if (a == "--entries-per-tick")
            o.entries_per_tick = std::strtoull(next(), nullptr, 10);
        else if (a == "--entries-per-rollup")
            o.entries_per_rollup = std::strtoull(next(), nullptr, 10);
        else if (a == "--end-unix-us")
            o.end_unix_us = std::strtoll(next(), nullptr, 10);
        else if (a == "--seed")
            o.seed = static_cast<unsigned>(std::atoi(next()));
        else if (!a.empty() && a[0] != '-' && o.out.empty())
            o.out = a;
        else
            usage();
    }
    if (o.out.empty() || o.interval_ms <= 0 || o.ticks < 1 || o.rollups < 1)
        usage();
    return o;
}

}  // namespace

int main(int argc, char **argv) {
    const Options o = parse(argc, argv);
    int64_t end_unix = o.end_unix_us;
    if (end_unix == 0)
        end_unix = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    bench::SynthOptions so;
    so.ticks = o.ticks, so.rollups = o.rollups, so.interval_ms = o.interval_ms;
    so.wait_groups = o.wait_groups, so.queries = o.queries, so.io_cells = o.io_cells;
    so.entries_per_tick = o.entries_per_tick, so.entries_per_rollup = o.entries_per_rollup;
    so.end_us = end_unix - kPgEpochUnixUs;  // PostgreSQL TimestampTz
    so.seed = o.seed;
    bench::HeapRing ticks(o.ticks + 1, o.ticks * o.entries_per_tick);
    bench::HeapRing rollups(o.rollups + 1, o.rollups * o.entries_per_rollup);
    const bench::SynthStats st = bench::synthesize(so, ticks.ring, rollups.ring);
    const std::string error = save_history(o.out, ticks.ring, rollups.ring);
    if (!error.empty()) {
        std::fprintf(stderr, "fill_history: %s\n", error.c_str());
        return 1;
    }
    std::printf(
        "wrote %s: %llu ticks (%.1f entries each), %llu roll-ups (%.1f entries each), "
        "%llu ticks generated, ending at unix %lld us\n",
        o.out.c_str(), static_cast<unsigned long long>(st.tick_count),
        st.tick_count ? double(st.tick_entries) / double(st.tick_count) : 0.0,
        static_cast<unsigned long long>(st.rollup_count),
        st.rollup_count ? double(st.rollup_entries) / double(st.rollup_count) : 0.0,
        static_cast<unsigned long long>(st.generated), static_cast<long long>(end_unix));
    return 0;
}
