#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

#include "core/rseq_release.hpp"

namespace pgsw {
namespace {

// Each case runs on a thread of its own: a registration belongs to one thread, and the test
// process's main thread keeps its own, which the last case checks.
template <class Body>
void on_new_thread(Body body) {
    std::thread(body).join();
}

TEST(RseqRelease, GivesBackTheThreadsRegistrationAndSchedGetcpuStillWorks) {
    if (!rseq_area_cpu_id())
        GTEST_SKIP() << "built without glibc's rseq interface";
    on_new_thread([] {
        const std::optional<int32_t> before = rseq_area_cpu_id();
        if (*before < 0)
            GTEST_SKIP() << "glibc registered no rseq area here (tunable or kernel)";
        const RseqReleaseResult r = release_rseq_registration();
        ASSERT_EQ(r.outcome, RseqRelease::Released) << "errno " << r.error;
        // The kernel marks the area: it no longer writes the CPU there.
        EXPECT_LT(*rseq_area_cpu_id(), 0);
        // glibc's only reader of the area falls back to getcpu().
        for (int i = 0; i < 100; ++i) {
            const int cpu = sched_getcpu();
            ASSERT_GE(cpu, 0);
            ASSERT_LT(cpu, CPU_SETSIZE);
        }
        // A second release finds nothing to give back and asks the kernel nothing.
        EXPECT_EQ(release_rseq_registration().outcome, RseqRelease::NotRegistered);
    });
}

TEST(RseqRelease, OtherThreadsKeepTheirs) {
    const std::optional<int32_t> main_before = rseq_area_cpu_id();
    if (!main_before || *main_before < 0)
        GTEST_SKIP() << "no registered rseq area on this thread";
    on_new_thread([] { EXPECT_EQ(release_rseq_registration().outcome, RseqRelease::Released); });
    // Registered still: the kernel keeps writing the CPU this thread runs on.
    EXPECT_GE(*rseq_area_cpu_id(), 0);
}

TEST(RseqRelease, EveryOutcomeIsDescribed) {
    for (RseqRelease o : {RseqRelease::Released, RseqRelease::NotRegistered,
                          RseqRelease::Unsupported, RseqRelease::Refused})
        EXPECT_STRNE(describe(o), "unknown");
}

}  // namespace
}  // namespace pgsw
