/*
 * ubsan_log_path: makes g++'s UBSan runtime honour UBSAN_OPTIONS' log_path inside a server
 * that has both sanitizer runtimes preloaded (scripts/test.sh, stage_sanitize). Preloaded
 * third, after libasan and libubsan.
 *
 * Why: libasan and libubsan each carry their own copy of sanitizer_common, and both export
 * __sanitizer_set_report_path. libubsan applies its log_path by calling that function through
 * its PLT, and with libasan first in LD_PRELOAD the dynamic linker binds the call to libasan's
 * copy: UBSan's own report file stays stderr, so every UBSan report went into the server log
 * and none into sanitizer-logs/ (found by the stage's canary: "shift exponent 40 is too large"
 * printed in the server log, no ubsan.* file). This constructor looks the function up in
 * libubsan itself (dlsym on libubsan's own handle, which is not interposed) and calls it with
 * the log_path from UBSAN_OPTIONS. Forked server processes inherit the setting; the runtime
 * opens one file per pid (log_path.PID) at the first report.
 *
 * Any failure is written to stderr (the server log) and otherwise ignored: the stage's canary
 * fails the run when no UBSan report reaches sanitizer-logs/, whatever the reason.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UBSAN_SONAME "libubsan.so.1"

/* The value of log_path in a colon-separated UBSAN_OPTIONS, copied into out; 0 when absent. */
static int log_path_option(const char *options, char *out, size_t out_size) {
    const char *p = options;
    while (p != NULL && *p != '\0') {
        if (strncmp(p, "log_path=", 9) == 0) {
            size_t len = strcspn(p + 9, ":");
            if (len == 0 || len >= out_size)
                return 0;
            memcpy(out, p + 9, len);
            out[len] = '\0';
            return 1;
        }
        p = strchr(p, ':');
        if (p != NULL)
            p++;
    }
    return 0;
}

__attribute__((constructor)) static void pgsw_set_ubsan_log_path(void) {
    char path[4096];
    void *ubsan;
    void (*set_report_path)(const char *);

    if (!log_path_option(getenv("UBSAN_OPTIONS"), path, sizeof path))
        return;
    ubsan = dlopen(UBSAN_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (ubsan == NULL) {
        fprintf(stderr, "ubsan_log_path: %s is not loaded; UBSan reports go to stderr\n",
                UBSAN_SONAME);
        return;
    }
    *(void **)&set_report_path = dlsym(ubsan, "__sanitizer_set_report_path");
    if (set_report_path == NULL)
        fprintf(stderr, "ubsan_log_path: no __sanitizer_set_report_path in %s: %s\n", UBSAN_SONAME,
                dlerror());
    else
        set_report_path(path);
    dlclose(ubsan);
}
