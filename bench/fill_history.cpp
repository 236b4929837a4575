// Test-only fast-fill for the query-cost benchmark (bench/run.sh query-cost).
//
// Builds a realistic synthetic history ending at "now" with the core's own code paths and
// writes it as a pg_storage_wait history file, which the server restores at its next start
// (storage_wait_status().restored_from_disk = t). Nothing here is used by the extension.
//
//   fill_history OUT_FILE [--ticks N] [--rollups N] [--interval-ms MS] [--wait-groups N]
//                [--queries N] [--io-cells N] [--entries-per-tick N] [--entries-per-rollup N]
//                [--end-unix-us US] [--seed N] [--time-saves N]
//
// Ticks are made by the real TickBuilder from per-process samples (so ~--wait-groups distinct
// wait groups, --queries query groups and --io-cells pg_stat_io cells per tick), and the
// one-minute roll-ups by the real RollupBuilder from ticks at --interval-ms, exactly as the
// sampler folds them. The newest --ticks ticks go to the tick ring; every complete minute of
// the last --rollups minutes goes to the roll-up ring. The file is written with
// pgsw::save_history(), stop the server first and write to $PGDATA/pg_stat/pg_storage_wait.history.
// Ring capacities follow module.cpp (records + 1, records * entries_per_*), so use the same
// --entries-per-* as the server's pg_storage_wait.entries_per_tick / entries_per_rollup.
//
// --time-saves N: after writing OUT_FILE, saves the same rings N more times to OUT_FILE.bench
// (tmp, fsync, rename, as the server does) and prints each save's time and the memory the save
// added on top of the rings: the peak resident set during the save (VmHWM, reset first through
// /proc/self/clear_refs) minus the resident set before it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
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
    uint64_t system_identifier = 0;  // the target server's (pg_controldata): others are refused
    int time_saves = 0;
};

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: fill_history OUT_FILE [--ticks N] [--rollups N] [--interval-ms MS]\n"
                 "       [--wait-groups N] [--queries N] [--io-cells N] [--entries-per-tick N]\n"
                 "       [--entries-per-rollup N] [--end-unix-us US] [--seed N] [--time-saves N]\n"
                 "       --system-identifier ID (the target server's, from pg_controldata)\n");
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
        else if (a == "--time-saves")
            o.time_saves = std::atoi(next());
        else if (a == "--system-identifier")
            o.system_identifier = std::strtoull(next(), nullptr, 10);
        else if (!a.empty() && a[0] != '-' && o.out.empty())
            o.out = a;
        else
            usage();
    }
    if (o.out.empty() || o.interval_ms <= 0 || o.ticks < 1 || o.rollups < 1)
        usage();
    return o;
}

// A /proc/self/status field in kB (VmRSS, VmHWM), -1 when absent.
long status_kb(const char *field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const std::string prefix = std::string(field) + ":";
    while (std::getline(in, line))
        if (line.compare(0, prefix.size(), prefix) == 0)
            return std::atol(line.c_str() + prefix.size());
    return -1;
}

// Each save's wall time and the resident memory it added (peak during the save - before it).
template <typename Save>
void time_saves(int n, Save &&save) {
    for (int i = 0; i < n; ++i) {
        std::ofstream("/proc/self/clear_refs") << "5";  // reset VmHWM to the current RSS
        const long before_kb = status_kb("VmRSS");
        const auto t0 = std::chrono::steady_clock::now();
        const std::string error = save();
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        const long peak_kb = status_kb("VmHWM");
        std::printf("save %d: %s%.1f ms, resident memory +%ld kB during the save\n", i + 1,
                    error.empty() ? "" : (error + ", ").c_str(), ms, peak_kb - before_kb);
    }
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
    const HistoryOwner owner{o.system_identifier, so.end_us};
    const auto names = std::make_unique<NameDictionary>();  // zeroed: no names
    const std::string error = save_history(o.out, ticks.ring, rollups.ring, *names, owner);
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
    const std::string bench_path = o.out + ".bench";
    time_saves(o.time_saves,
               [&] { return save_history(bench_path, ticks.ring, rollups.ring, *names, owner); });
    if (o.time_saves > 0)
        std::remove(bench_path.c_str());
    return 0;
}
