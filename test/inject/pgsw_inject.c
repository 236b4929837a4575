/*
 * pgsw_inject: an LD_PRELOAD library that adds latency to the file I/O of the process it is
 * preloaded into -- a user-space stand-in for a slow storage device (there is no dm-delay on
 * the project's machines). pg_storage_wait's accuracy tests and scripts/demo.sh preload it into
 * a PostgreSQL server, so the latency the extension reports can be checked against a known
 * ground truth.
 *
 * What is delayed, and only for regular files (fstat S_ISREG: never pipes, sockets, devices,
 * directories):
 *   read   pread pread64 preadv preadv64 preadv2 preadv64v2
 *   write  pwrite pwrite64 pwritev pwritev64 pwritev2 pwritev64v2
 *   sync   fsync fdatasync
 * PostgreSQL (16-18) does all relation-file and WAL I/O through these: pg_pread/pg_pwrite and
 * pg_preadv/pg_pwritev (md.c via fd.c, xlog.c, the zero-fill of new WAL segments with
 * pg_pwrite_zeros), pg_fsync/pg_fdatasync (wal_sync_method fdatasync or fsync, checkpointer).
 * Plain read()/write() are left alone: the server uses them for pipes, sockets, its own
 * config/control files and COPY, none of which is what a slow data or WAL device slows down.
 * sync_file_range() is a writeback hint, not a wait for the device, and is left alone too.
 * O_DSYNC/open_datasync WAL writes would be "write" here, not "sync".
 * io_uring (io_method=io_uring in 18) bypasses libc entirely and cannot be delayed this way.
 *
 * Configuration: the file named by $PGSW_INJECT_CONFIG, one line per operation kind:
 *   read 2000                  every read of a regular file waits 2000 us first
 *   sync 5000                  every fsync/fdatasync waits 5000 us
 *   write 0                    no delay (the default for a kind not mentioned)
 *   read 95%:200,5%:20000      95 % of reads wait 200 us, 5 % wait 20 ms
 * Delays are integers in microseconds; percentages may have decimals and must add up to 100.
 * '#' starts a comment; blank lines are fine. A missing or empty file means no delay at all.
 * An invalid line is ignored, with one message per process and file version on stderr
 * (PostgreSQL's server log), never a crash. A later line for the same kind wins.
 *
 * The file is re-read when its mtime, size or inode changes, checked at most every 100 ms (a
 * stat(2) per check, nothing otherwise), so a test can step the latency of a running server
 * without restarting it. Replace the file atomically (write a temporary file, then rename it)
 * so that a process never reads a half-written version.
 *
 * Costs: a kind whose delay is 0 costs one predictable branch plus the 100 ms-coarse clock
 * read (vDSO) -- no fstat. A delayed kind adds one fstat per call (~0.1-0.3 us; see
 * check_inject.sh's measurement) before the sleep. The sleep is clock_nanosleep on an
 * absolute CLOCK_MONOTONIC deadline, restarted after signals (a real device does not return
 * early because the process got a signal), and it comes BEFORE the real call, so the
 * measured I/O time is the injected delay plus the real operation. Timer slack is set to
 * 1 ns. Waking up costs what it costs on a real device too (the process sleeps until the
 * interrupt): a baseline that should include that cost injects 1 us ("read 1").
 *
 * Delivered delays: if $PGSW_INJECT_STATS names an existing file of at least 4096 bytes, every
 * process maps it shared and adds, per kind, with atomic adds: the operations on regular files
 * (uint64 at offset 8 + 8*kind), the delays drawn for them in us (offset 32 + 8*kind) and the
 * time actually slept in ns (offset 56 + 8*kind), kinds in the order read, write, sync. A sleep
 * ends when the process runs again, which on a busy machine can be well after the deadline;
 * the slept time is the delay the I/O really got, so tests compare with it (as with a real
 * device, whose interrupt also has to wait for a CPU). The first 8 bytes are left alone.
 *
 * Randomness for mixed distributions: xorshift64*, per process, seeded from the pid (and
 * re-seeded after fork, so the backends of one postmaster do not share one sequence).
 *
 * Threads: PostgreSQL processes are single-threaded. For other programs the library is
 * "thread-safe enough": a reload is done by one thread at a time (a try-lock; the others keep
 * the previous configuration) and is published by flipping between two configuration slots.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/prctl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum kind { K_READ, K_WRITE, K_SYNC, K_COUNT };
static const char *const kind_names[K_COUNT] = {"read", "write", "sync"};

#define MAX_BUCKETS 16
#define CHECK_INTERVAL_NS (100 * 1000 * 1000LL)

/* A delay distribution: cum[i] is the cumulative probability (in 1/2^32 units) up to and
 * including bucket i; n == 0 means "no delay". */
struct dist {
    int n;
    uint64_t cum[MAX_BUCKETS];
    long long us[MAX_BUCKETS];
};

struct config {
    struct dist d[K_COUNT];
};

/* Two slots: a reload fills the one not in use, then flips `current`. */
static struct config slots[2];
static volatile int current; /* index into slots */
static volatile int lock;    /* reload try-lock */

static char config_path[4096]; /* copied at load: PostgreSQL's ps_status overwrites environ */
static int have_path;

/* What the last (re)load saw, to notice a new version of the file. */
static long long seen_mtime_ns = -1, seen_size = -1;
static ino_t seen_ino;
static int seen_exists = -1;
static long long next_check_ns; /* CLOCK_MONOTONIC_COARSE */

static char stats_path[4096];
static int stats_state; /* 0 not tried, 1 mapped, -1 unavailable */
static uint64_t *stats;  /* 4096 bytes, shared; see the header comment */

static pid_t rng_pid;
static uint64_t rng_state;

/* ---------------------------------------------------------------------------------------- */

/* stderr output without stdio (no locks, no buffers, no allocation inside an I/O call). */
static void say(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

static long long now_ns(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---------------------------------------------------------------------------------------- */
/* Parsing */

static int parse_uint(const char **p, long long *out) {
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return 0;
    long long v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > 3600LL * 1000000) /* an hour: surely a typo */
            return 0;
        s++;
    }
    *p = s;
    *out = v;
    return 1;
}

static int parse_percent(const char **p, double *out) {
    char *end;
    errno = 0;
    double v = strtod(*p, &end);
    if (end == *p || errno || !(v >= 0 && v <= 100) || *end != '%')
        return 0;
    *p = end + 1;
    *out = v;
    return 1;
}

static const char *skip_ws(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Parse one non-blank, comment-stripped line into cfg. Returns NULL or why it is invalid. */
static const char *parse_line(const char *s, struct config *cfg) {
    int k;
    size_t len = 0;
    while (s[len] && s[len] != ' ' && s[len] != '\t')
        len++;
    for (k = 0; k < K_COUNT; k++)
        if (strlen(kind_names[k]) == len && strncmp(s, kind_names[k], len) == 0)
            break;
    if (k == K_COUNT)
        return "unknown kind (want read, write or sync)";
    s = skip_ws(s + len);

    struct dist d = {0};
    long long us;
    if (strchr(s, '%') == NULL) { /* a fixed delay */
        if (!parse_uint(&s, &us))
            return "want a delay in microseconds (0-3600000000)";
        if (*skip_ws(s))
            return "trailing text after the delay";
        if (us > 0) {
            d.n = 1;
            d.us[0] = us;
            d.cum[0] = UINT64_MAX;
        }
        cfg->d[k] = d;
        return NULL;
    }
    /* A distribution: P%:US[,P%:US...] */
    double total = 0;
    int any_delay = 0;
    for (;;) {
        double pct;
        s = skip_ws(s);
        if (d.n == MAX_BUCKETS)
            return "too many buckets (at most 16)";
        if (!parse_percent(&s, &pct))
            return "want P%:US[,P%:US...] with 0 <= P <= 100";
        s = skip_ws(s);
        if (*s++ != ':')
            return "want ':' between a percentage and its delay";
        s = skip_ws(s);
        if (!parse_uint(&s, &us))
            return "want a delay in microseconds after ':'";
        total += pct;
        d.us[d.n] = us;
        d.cum[d.n] = total >= 100 ? UINT64_MAX : (uint64_t)(total / 100.0 * 18446744073709551615.0);
        any_delay |= us > 0 && pct > 0;
        d.n++;
        s = skip_ws(s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s)
            return "trailing text after the distribution";
        break;
    }
    if (total < 100 - 1e-6 || total > 100 + 1e-6)
        return "percentages must add up to 100";
    d.cum[d.n - 1] = UINT64_MAX; /* rounding: the last bucket takes the rest */
    if (!any_delay)
        d.n = 0;
    cfg->d[k] = d;
    return NULL;
}

/* Read and parse the file into cfg (all zero when it is missing or empty). */
static void load(struct config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    int fd = open(config_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[8192];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        if (len == sizeof buf - 1)
            break;
    }
    close(fd);
    buf[len] = '\0';

    int bad = 0, first_bad_no = 0, line_no = 0;
    char first_bad[128] = "";
    const char *first_why = "";
    for (char *line = buf; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line_no++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        size_t n = strlen(line);
        while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
            line[--n] = '\0';
        const char *s = skip_ws(line);
        if (*s) {
            const char *why = parse_line(s, cfg);
            if (why && bad++ == 0) {
                first_bad_no = line_no;
                snprintf(first_bad, sizeof first_bad, "%s", s);
                first_why = why;
            }
        }
        line = next;
    }
    if (bad)
        say("pgsw_inject[%d]: %s: ignored %d invalid line%s; first: line %d \"%s\": %s\n",
            (int)getpid(), config_path, bad, bad == 1 ? "" : "s", first_bad_no, first_bad,
            first_why);
}

/* Re-read the file when it changed; at most every 100 ms. */
static void maybe_reload(void) {
    long long now = now_ns(CLOCK_MONOTONIC_COARSE);
    if (now < next_check_ns)
        return;
    if (__atomic_test_and_set(&lock, __ATOMIC_ACQUIRE))
        return; /* another thread is at it: keep the current configuration */
    next_check_ns = now + CHECK_INTERVAL_NS;

    int saved_errno = errno;
    struct stat st;
    int exists = stat(config_path, &st) == 0;
    long long mtime = exists ? st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : -1;
    long long size = exists ? (long long)st.st_size : -1;
    if (exists != seen_exists || mtime != seen_mtime_ns || size != seen_size ||
        (exists && st.st_ino != seen_ino)) {
        seen_exists = exists;
        seen_mtime_ns = mtime;
        seen_size = size;
        seen_ino = exists ? st.st_ino : 0;
        int spare = !current;
        load(&slots[spare]);
        __atomic_store_n(&current, spare, __ATOMIC_RELEASE);
    }
    errno = saved_errno;
    __atomic_clear(&lock, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void init(void) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* 1 ns instead of 50 us; inherited by children */
    const char *p = getenv("PGSW_INJECT_CONFIG");
    if (p && *p && strlen(p) < sizeof config_path) {
        strcpy(config_path, p);
        have_path = 1;
    } else if (p && *p) {
        say("pgsw_inject: PGSW_INJECT_CONFIG is too long; no delays\n");
    }
    const char *sp = getenv("PGSW_INJECT_STATS");
    if (sp && *sp && strlen(sp) < sizeof stats_path)
        strcpy(stats_path, sp);
    else
        stats_state = -1;
}

/* Map the delivered-delay counters on first use (a forked child inherits the mapping). */
static uint64_t *stats_counters(void) {
    if (stats_state == 0) {
        stats_state = -1;
        int fd = open(stats_path, O_RDWR | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= 4096) {
            void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) {
                stats = m;
                stats_state = 1;
            }
        }
        if (fd >= 0)
            close(fd);
        if (stats_state != 1)
            say("pgsw_inject: cannot map PGSW_INJECT_STATS %s; not counting\n", stats_path);
    }
    return stats_state == 1 ? stats : NULL;
}

static void count_delay(enum kind k, long long drawn_us, long long slept_ns) {
    uint64_t *c = stats_counters();
    if (!c)
        return;
    __atomic_fetch_add(&c[1 + k], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c[4 + k], (uint64_t)drawn_us, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c[7 + k], (uint64_t)slept_ns, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------- */
/* The delay */

static uint64_t rng_next(void) {
    pid_t pid = getpid();
    if (pid != rng_pid) { /* first use, or a forked child */
        rng_pid = pid;
        rng_state = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)pid * 0xBF58476D1CE4E5B9ULL);
        if (!rng_state)
            rng_state = 1;
    }
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Sleep `us` and return the nanoseconds actually slept (until this process ran again). */
static long long sleep_us(long long us) {
    const long long start = now_ns(CLOCK_MONOTONIC);
    const long long deadline = start + us * 1000;
    struct timespec ts = {deadline / 1000000000LL, deadline % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ; /* a signal: keep waiting until the deadline */
    return now_ns(CLOCK_MONOTONIC) - start;
}

/* Wait as configured for an operation of this kind on fd, if fd is a regular file. */
static inline void delay(enum kind k, int fd) {
    if (!have_path)
        return;
    maybe_reload();
    const struct dist *d = &slots[__atomic_load_n(&current, __ATOMIC_ACQUIRE)].d[k];
    if (d->n == 0)
        return; /* the zero-cost path: no fstat */
    int saved_errno = errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        long long us = d->us[0];
        if (d->n > 1) {
            uint64_t r = rng_next();
            int i = 0;
            while (i < d->n - 1 && r > d->cum[i])
                i++;
            us = d->us[i];
        }
        count_delay(k, us, us > 0 ? sleep_us(us) : 0);
    }
    errno = saved_errno;
}

/* ---------------------------------------------------------------------------------------- */
/* The wrappers: resolve the next definition once, delay, call it. */

#define REAL(name)                                                 \
    static __typeof__(name) *real_##name;                          \
    if (!real_##name) {                                            \
        real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name); \
        if (!real_##name) {                                        \
            errno = ENOSYS;                                        \
            return -1;                                             \
        }                                                          \
    }

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off) {
    REAL(pread);
    delay(K_READ, fd);
    return real_pread(fd, buf, n, off);
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off) {
    REAL(pread64);
    delay(K_READ, fd);
    return real_pread64(fd, buf, n, off);
}

EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off) {
    REAL(preadv);
    delay(K_READ, fd);
    return real_preadv(fd, iov, cnt, off);
}

EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off) {
    REAL(preadv64);
    delay(K_READ, fd);
    return real_preadv64(fd, iov, cnt, off);
}

EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags) {
    REAL(preadv2);
    delay(K_READ, fd);
    return real_preadv2(fd, iov, cnt, off, flags);
}

EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags) {
    REAL(preadv64v2);
    delay(K_READ, fd);
    return real_preadv64v2(fd, iov, cnt, off, flags);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite);
    delay(K_WRITE, fd);
    return real_pwrite(fd, buf, n, off);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
    REAL(pwrite64);
    delay(K_WRITE, fd);
    return real_pwrite64(fd, buf, n, off);
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
    REAL(pwritev);
    delay(K_WRITE, fd);
    return real_pwritev(fd, iov, cnt, off);
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off) {
    REAL(pwritev64);
    delay(K_WRITE, fd);
    return real_pwritev64(fd, iov, cnt, off);
}

EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags) {
    REAL(pwritev2);
    delay(K_WRITE, fd);
    return real_pwritev2(fd, iov, cnt, off, flags);
}

EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags) {
    REAL(pwritev64v2);
    delay(K_WRITE, fd);
    return real_pwritev64v2(fd, iov, cnt, off, flags);
}

EXPORT int fsync(int fd) {
    REAL(fsync);
    delay(K_SYNC, fd);
    return real_fsync(fd);
}

EXPORT int fdatasync(int fd) {
    REAL(fdatasync);
    delay(K_SYNC, fd);
    return real_fdatasync(fd);
}
