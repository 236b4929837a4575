#include "core/rseq_release.hpp"

#include <algorithm>
#include <cerrno>

// The thread pointer read directly (what glibc documents as the area's base), on the two
// architectures where that is one instruction: __builtin_thread_pointer() is missing or
// broken on some compiler and target pairs (older clang on x86-64, GCC on ppc64le).
#if defined(__linux__) && defined(__GLIBC__) && defined(__has_include) && \
    (defined(__x86_64__) || defined(__aarch64__))
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(RSEQ_SIG) && defined(__NR_rseq)
#define PGSW_HAVE_GLIBC_RSEQ 1
#endif
#endif
#endif

namespace pgsw {

#ifdef PGSW_HAVE_GLIBC_RSEQ

namespace {

char *thread_pointer() noexcept {
    char *tp;
#if defined(__x86_64__)
    asm("mov %%fs:0, %0" : "=r"(tp));  // the TCB's first word points to itself
#else
    asm("mrs %0, tpidr_el0" : "=r"(tp));
#endif
    return tp;
}

// glibc's documented address of the thread's area: the thread pointer plus __rseq_offset.
volatile struct rseq *own_area() noexcept {
    return reinterpret_cast<volatile struct rseq *>(thread_pointer() + __rseq_offset);
}

}  // namespace

std::optional<int32_t> rseq_area_cpu_id() noexcept {
    if (__rseq_size == 0)
        return -1;  // glibc registered nothing (tunable glibc.pthread.rseq=0, or no kernel rseq)
    return static_cast<int32_t>(own_area()->cpu_id);
}

RseqReleaseResult release_rseq_registration() noexcept {
    const std::optional<int32_t> cpu_id = rseq_area_cpu_id();
    if (!cpu_id || *cpu_id < 0)
        return {RseqRelease::NotRegistered, 0};
    // The kernel wants the length and signature of the registration back. glibc registers at
    // least the original 32-byte area; newer ones register __rseq_size when it is larger.
    const unsigned length = std::max(__rseq_size, 32u);
    if (syscall(__NR_rseq, own_area(), length, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) == 0)
        return {RseqRelease::Released, 0};
    return {RseqRelease::Refused, errno};
}

#else

std::optional<int32_t> rseq_area_cpu_id() noexcept {
    return std::nullopt;
}

RseqReleaseResult release_rseq_registration() noexcept {
    return {RseqRelease::Unsupported, 0};
}

#endif

const char *describe(RseqRelease outcome) noexcept {
    switch (outcome) {
        case RseqRelease::Released:
            return "given back";
        case RseqRelease::NotRegistered:
            return "not registered";
        case RseqRelease::Unsupported:
            return "not available in this build";
        case RseqRelease::Refused:
            return "refused by the kernel, left registered";
    }
    return "unknown";
}

}  // namespace pgsw
