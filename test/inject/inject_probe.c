/*
 * inject_probe: the test driver for pgsw_inject.so (see check_inject.sh). It makes I/O calls
 * through libc, as PostgreSQL does, and times each one, so the script can check what the
 * preloaded library did to them.
 *
 *   inject_probe OP TARGET N [SLOW_US]
 *       N calls of OP (pread pread64 preadv preadv2 pwrite pwritev fsync fdatasync) on TARGET
 *       (a file path, or "pipe" for the read end of a pipe, where pread fails with ESPIPE);
 *       prints "calls=N total_ms=T slow=K min_us=A max_us=B" (slow: calls >= SLOW_US).
 *   inject_probe timeline FILE DURATION_MS
 *       preads FILE for DURATION_MS, 1 ms apart; prints "EPOCH_US LATENCY_US" per call.
 *   inject_probe bench FILE N
 *       the average cost in ns of N 8 KiB preads of FILE and of N fstat calls:
 *       "pread_ns=X fstat_ns=Y".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 8192

static long long now_ns(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "inject_probe: %s: %s\n", what, strerror(errno));
    exit(2);
}

static int open_target(const char *target, int for_write) {
    if (strcmp(target, "pipe") == 0) {
        int p[2];
        if (pipe(p) != 0)
            die("pipe");
        return p[0];
    }
    int fd = open(target, for_write ? O_RDWR : O_RDONLY);
    if (fd < 0)
        die(target);
    return fd;
}

/* One call of op; the result does not matter (a pipe gives ESPIPE), only its duration. */
static void one_call(const char *op, int fd, char *buf, off_t off) {
    struct iovec iov = {buf, BLOCK};
    ssize_t r = 0;
    if (strcmp(op, "pread") == 0)
        r = pread(fd, buf, BLOCK, off);
    else if (strcmp(op, "pread64") == 0)
        r = pread64(fd, buf, BLOCK, off);
    else if (strcmp(op, "preadv") == 0)
        r = preadv(fd, &iov, 1, off);
    else if (strcmp(op, "preadv2") == 0)
        r = preadv2(fd, &iov, 1, off, 0);
    else if (strcmp(op, "pwrite") == 0)
        r = pwrite(fd, buf, BLOCK, off);
    else if (strcmp(op, "pwritev") == 0)
        r = pwritev(fd, &iov, 1, off);
    else if (strcmp(op, "fsync") == 0)
        r = fsync(fd);
    else if (strcmp(op, "fdatasync") == 0)
        r = fdatasync(fd);
    else {
        fprintf(stderr, "inject_probe: unknown op %s\n", op);
        exit(2);
    }
    (void)r;
}

static int run_ops(const char *op, const char *target, int n, long long slow_us) {
    int for_write = strncmp(op, "pwrite", 6) == 0; /* fsync works on a read-only fd, and a folder */
    int fd = open_target(target, for_write);
    static char buf[BLOCK];
    struct stat st;
    long long blocks = fstat(fd, &st) == 0 && st.st_size >= BLOCK ? st.st_size / BLOCK : 1;
    long long total = 0, min = -1, max = 0;
    int slow = 0;
    for (int i = 0; i < n; i++) {
        long long t0 = now_ns(CLOCK_MONOTONIC);
        one_call(op, fd, buf, (off_t)((i * 7919LL) % blocks) * BLOCK);
        long long us = (now_ns(CLOCK_MONOTONIC) - t0) / 1000;
        total += us;
        if (min < 0 || us < min)
            min = us;
        if (us > max)
            max = us;
        if (slow_us > 0 && us >= slow_us)
            slow++;
    }
    printf("calls=%d total_ms=%.1f slow=%d min_us=%lld max_us=%lld\n", n, total / 1000.0, slow, min,
           max);
    return 0;
}

static int run_timeline(const char *file, long long duration_ms) {
    int fd = open_target(file, 0);
    static char buf[BLOCK];
    long long end = now_ns(CLOCK_MONOTONIC) + duration_ms * 1000000LL;
    struct timespec gap = {0, 1000000};
    while (now_ns(CLOCK_MONOTONIC) < end) {
        long long wall = now_ns(CLOCK_REALTIME) / 1000;
        long long t0 = now_ns(CLOCK_MONOTONIC);
        if (pread(fd, buf, BLOCK, 0) < 0)
            die("pread");
        printf("%lld %lld\n", wall, (now_ns(CLOCK_MONOTONIC) - t0) / 1000);
        nanosleep(&gap, NULL);
    }
    return 0;
}

static int run_bench(const char *file, int n) {
    int fd = open_target(file, 0);
    static char buf[BLOCK];
    struct stat st;
    long long t0 = now_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < n; i++)
        if (pread(fd, buf, BLOCK, 0) < 0)
            die("pread");
    long long t1 = now_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < n; i++)
        if (fstat(fd, &st) != 0)
            die("fstat");
    long long t2 = now_ns(CLOCK_MONOTONIC);
    printf("pread_ns=%lld fstat_ns=%lld\n", (t1 - t0) / n, (t2 - t1) / n);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "timeline") == 0)
        return run_timeline(argv[2], atoll(argv[3]));
    if (argc >= 4 && strcmp(argv[1], "bench") == 0)
        return run_bench(argv[2], atoi(argv[3]));
    if (argc >= 4)
        return run_ops(argv[1], argv[2], atoi(argv[3]), argc > 4 ? atoll(argv[4]) : 0);
    fprintf(stderr,
            "usage: inject_probe OP TARGET N [SLOW_US] | timeline FILE MS | bench FILE N\n");
    return 2;
}
