/* SPDX-License-Identifier: MIT
 *
 * ABI check of the installed libjobscope: built by tests/integration/test_libjobscope.py against the
 * installed header and library through pkg-config only (no source tree), as a user would. It checks the
 * layout of the public option struct, the version, and marks: `abi_check marks` sends phases and events
 * (from the main thread and 4 threads) and prints what each call returned; `abi_check embed` runs the
 * embedded monitor over itself and a child and prints the summary JSON.
 */
#define _POSIX_C_SOURCE 200809L
#include <jobscope.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* burn: `s` seconds of this thread's CPU (not wall time: on a busy machine 0.2 s of wall time may be a
 * fraction of that in CPU, and a phase cut at its marks gets exactly the CPU used inside it) */
static void burn(double s)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    volatile double x = 0;
    do {
        for (int i = 0; i < 10000; i++)
            x += i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}

static void *worker(void *arg)
{
    (void)arg;
    int bad = 0;
    for (int i = 0; i < 100; i++)
        bad |= js_phase_begin("worker") | js_phase_end("worker");
    return bad ? (void *)1 : NULL;
}

int main(int argc, char **argv)
{
    /* the layout a binding (ctypes, Fortran) relies on */
    if (sizeof(js_monitor_opts_t) != 56 || offsetof(js_monitor_opts_t, interval_s) != 8 ||
        offsetof(js_monitor_opts_t, output) != 16 || offsetof(js_monitor_opts_t, set_environment) != 32 ||
        offsetof(js_monitor_opts_t, pid) != 36 || offsetof(js_monitor_opts_t, levels) != 40 ||
        offsetof(js_monitor_opts_t, job_id) != 48) {
        fprintf(stderr, "unexpected js_monitor_opts_t layout: size %zu\n", sizeof(js_monitor_opts_t));
        return 2;
    }
    if (JS_API_VERSION != 2 || strcmp(js_version(), "0.1.0") != 0) {
        fprintf(stderr, "version %s\n", js_version());
        return 3;
    }
    const char *mode = argc > 1 ? argv[1] : "marks";
    if (strcmp(mode, "marks") == 0) {
        int r[5];
        r[0] = js_phase_begin("init");
        burn(0.2);
        r[1] = js_phase_end("init");
        r[2] = js_phase_begin("solve");
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, worker, NULL);
        burn(0.3);
        void *ret;
        int bad = 0;
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], &ret);
            bad |= ret != NULL;
        }
        r[3] = js_phase_end("solve");
        r[4] = js_event("checkpoint", "{\"step\": 10}");
        printf("active=%d rc=%d,%d,%d,%d,%d threads=%d dropped=%llu\n", js_marks_active(), r[0], r[1], r[2],
               r[3], r[4], bad, (unsigned long long)js_marks_dropped());
        return 0;
    }
    if (strcmp(mode, "embed") == 0) {
        js_monitor_opts_t o;
        memset(&o, 0, sizeof(o));
        o.size = 40; /* a program built against version 1 (40 bytes) still starts a monitor */
        o.interval_s = 0.1;
        o.set_environment = 1;
        int r = js_monitor_start(&o);
        if (r < 0) {
            fprintf(stderr, "js_monitor_start: %s\n", strerror(-r));
            return 4;
        }
        js_phase_begin("parent");
        burn(0.2);
        js_phase_end("parent");
        pid_t kid = fork();
        if (kid == 0) {
            js_phase_begin("child");
            burn(0.2);
            js_phase_end("child");
            _exit(0);
        }
        waitpid(kid, NULL, 0);
        if ((r = js_monitor_stop()) < 0) {
            fprintf(stderr, "js_monitor_stop: %s\n", strerror(-r));
            return 5;
        }
        char *s = js_monitor_summary();
        if (!s)
            return 6;
        fputs(s, stdout);
        js_free(s);
        return 0;
    }
    return 1;
}
