/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the embedded monitor (js_monitor_start and friends): it leaves the host's signals and
 * children alone (a signal reaches the host's handler, waitpid gets the child's status), its totals match the
 * kernel's rusage of the host and its children less the monitor thread's own CPU, marks from the host and a
 * child land in phases, summaries while running and after, the recording it writes reads back (summary and
 * export through the public API), and its errors (-EBUSY, -ESRCH, -EINVAL, -EEXIST). With `pid` (API
 * version 2): another process and its descendants, in attach mode, against the kernel's rusage of that child
 * (the host's own CPU is not counted), ending by itself when the attached tree is over.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/types.h>

#include "config.h"
#include "jobscope.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

/* burn: `s` seconds of this thread's CPU time (not wall time: the machine may be shared) */
static void burn(double s)
{
    volatile double x = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do {
        for (int i = 0; i < 10000; i++)
            x += i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}

static double ru_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* json_num: the number after the first occurrence of `"key": ` after `from` in `s`, NAN if none */
static double json_num(const char *s, const char *from, const char *key)
{
    const char *p = from ? strstr(s, from) : s;
    char k[128];
    snprintf(k, sizeof(k), "\"%s\": ", key);
    p = p ? strstr(p, k) : NULL;
    return p ? strtod(p + strlen(k), NULL) : -1;
}

static void test_embedded_run(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_embed_XXXXXX", path[128], csv[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/e.db", dir);
    snprintf(csv, sizeof(csv), "%s/phases.csv", dir);
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);

    js_monitor_opts_t o = {.size = sizeof(o), .interval_s = 0.05, .output = path, .set_environment = 1};
    assert_int_equal(js_monitor_start(&o), 0);
    double self0 = ru_s(RUSAGE_SELF), kids0 = ru_s(RUSAGE_CHILDREN); /* the first sample is taken */
    assert_int_equal(js_monitor_start(&o), -EBUSY);
    assert_non_null(js_monitor_address());
    assert_string_equal(getenv("JOBSCOPE_SOCKET"), js_monitor_address());
    assert_int_equal(js_marks_active(), 1);

    /* the host's signal reaches the host's handler (the monitor thread blocks them all) */
    kill(getpid(), SIGUSR1);
    for (int i = 0; i < 100 && !got_usr1; i++)
        usleep(1000);
    assert_true(got_usr1);

    assert_int_equal(js_phase_begin("host"), 0);
    burn(0.3);
    assert_int_equal(js_phase_end("host"), 0);
    assert_int_equal(js_phase_begin("child"), 0);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        js_event("from-child", "{\"k\": 1}");
        burn(0.3);
        _exit(7);
    }
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid); /* not stolen by the monitor */
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    assert_int_equal(js_phase_end("child"), 0);
    assert_int_equal(js_monitor_sample(), 0);

    char *live = js_monitor_summary();
    assert_non_null(live);
    assert_non_null(strstr(live, "\"state\": \"in progress\""));
    assert_non_null(strstr(live, "\"name\": \"host\""));
    assert_non_null(strstr(live, "\"name\": \"child\""));
    js_free(live);

    double self1 = ru_s(RUSAGE_SELF), kids1 = ru_s(RUSAGE_CHILDREN); /* the last sample is still to come */
    assert_int_equal(js_monitor_stop(), 0);
    assert_int_equal(js_monitor_stop(), -ESRCH);
    assert_null(js_monitor_address());
    assert_null(getenv("JOBSCOPE_SOCKET")); /* restored: it was not set before */
    assert_int_equal(js_marks_active(), 0);

    char *sum = js_monitor_summary();
    assert_non_null(sum);
    assert_non_null(strstr(sum, "\"state\": \"complete\""));
    assert_non_null(strstr(sum, "\"mode\": \"embedded\""));
    assert_non_null(strstr(sum, "\"name\": \"from-child\""));
    double total = json_num(sum, "\"cpu\": {", "total_s");
    double mon = json_num(sum, "\"monitor\": {", "cpu_s");
    double host = json_num(sum, "\"name\": \"host\"", "cpu_s");
    double child = json_num(sum, "\"name\": \"child\"", "cpu_s");
    /* the kernel's figures: the host's CPU (monitor thread included) and its reaped child's */
    double expect = (self1 - self0) - mon + (kids1 - kids0);
    print_message("tree %.3f s, kernel %.3f s (monitor thread %.3f s), host phase %.3f, child phase %.3f\n",
                  total, expect, mon, host, child);
    assert_true(mon > 0);
    assert_true(total > 0.55); /* 0.6 s of busy loops */
    /* the kernel's figure, up to a clock tick per process, the monitor's own first sample (before self0)
     * and what the host did between self1 and the closing sample; and `expect` takes off the monitor's CPU up
     * to its closing read of the host, after self1: what it spent in between (the closing sample, under
     * ASan 0.05 s) makes `expect` smaller by as much, a part of `mon` */
    assert_true(total > expect - 0.05);
    assert_true(total < expect + 0.05 + mon);
    assert_true(host > 0.25 && child > 0.25);
    js_free(sum);

    /* the recording reads back through the public API */
    char *rs = js_recording_summary(path);
    assert_non_null(rs);
    assert_non_null(strstr(rs, "\"mode\": \"embedded\""));
    assert_non_null(strstr(rs, "\"state\": \"complete\""));
    assert_true(json_num(rs, "\"cpu\": {", "total_s") > 0.3);
    js_free(rs);
    assert_int_equal(js_recording_export(path, "phases", "csv", csv), 0);
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof(line), f));
    assert_non_null(strstr(line, "time,unix_s,sample,phase,active"));
    fclose(f);
    assert_int_equal(js_recording_export(path, "no-such-view", "csv", csv), -ENOENT);
    assert_null(js_recording_summary("/nonexistent/x.db"));

    /* an existing output is refused unless overwrite */
    assert_int_equal(js_monitor_start(&o), -EEXIST);
    o.overwrite = 1;
    o.set_environment = 0;
    assert_int_equal(js_monitor_start(&o), 0);
    assert_null(getenv("JOBSCOPE_SOCKET"));
    assert_int_equal(js_monitor_stop(), 0);
    unlink(path);
    unlink(csv);
    rmdir(dir);
}

/* test_attached_pid: opts.pid = a child held on a pipe until the monitor has started; it burns 0.3 s and
 * reaps a grandchild that burns 0.2 s; the host burns 0.2 s meanwhile, which is not the scope's. */
static void test_attached_pid(void **state)
{
    (void)state;
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        burn(0.3);
        pid_t g = fork();
        if (g == 0) {
            burn(0.2);
            _exit(0);
        }
        int gst;
        waitpid(g, &gst, 0);
        _exit(3);
    }
    close(go[0]);
    js_monitor_opts_t o = {.size = sizeof(o), .interval_s = 0.05, .pid = kid};
    assert_int_equal(js_monitor_start(&o), 0);
    assert_null(getenv("JOBSCOPE_SOCKET")); /* set_environment 0 */
    double kids0 = ru_s(RUSAGE_CHILDREN);
    assert_int_equal(write(go[1], "x", 1), 1);
    close(go[1]);
    burn(0.2); /* the host's: not in the attached tree */
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    /* exited, not reaped: the closing sample still reads its times */
    assert_int_equal(waitid(P_PID, (id_t)kid, &si, WEXITED | WNOWAIT), 0);
    assert_int_equal(js_monitor_stop(), 0);
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    double kernel = ru_s(RUSAGE_CHILDREN) - kids0;
    char *sum = js_monitor_summary();
    assert_non_null(sum);
    assert_non_null(strstr(sum, "\"mode\": \"attach\""));
    assert_non_null(strstr(sum, "\"state\": \"complete\""));
    double total = json_num(sum, "\"cpu\": {", "total_s");
    print_message("attached tree %.3f s, kernel (RUSAGE_CHILDREN) %.3f s\n", total, kernel);
    assert_true(kernel > 0.45);
    assert_true(fabs(total - kernel) < 0.05); /* a clock tick per process, and the child's few instructions */
    js_free(sum);

    /* the scope over before stop: the monitor ended by itself, stop returns at once */
    pid_t quick = fork();
    assert_true(quick >= 0);
    if (quick == 0) {
        usleep(100000);
        _exit(0);
    }
    o.pid = quick;
    o.interval_s = 10; /* the root's exit wakes the loop (pidfd), not the next deadline */
    assert_int_equal(js_monitor_start(&o), 0);
    assert_int_equal(waitpid(quick, &st, 0), quick);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(js_monitor_stop(), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_true((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < 5);

    /* errors: no such process, a negative PID; this process's own PID is the default scope */
    o.interval_s = 0.05;
    o.pid = quick; /* reaped: gone */
    assert_int_equal(js_monitor_start(&o), -ESRCH);
    o.pid = -2;
    assert_int_equal(js_monitor_start(&o), -EINVAL);
    o.pid = getpid();
    assert_int_equal(js_monitor_start(&o), 0);
    assert_int_equal(js_monitor_stop(), 0);
    sum = js_monitor_summary();
    assert_non_null(strstr(sum, "\"mode\": \"embedded\""));
    js_free(sum);
    /* a version-1 caller (size without `pid`) is accepted and watches itself */
    o.size = offsetof(js_monitor_opts_t, pid);
    o.pid = -2; /* not read */
    assert_int_equal(js_monitor_start(&o), 0);
    assert_int_equal(js_monitor_stop(), 0);
}

/* count_fds: this process's open descriptors (its main thread's table) */
static int count_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

/* Issue 19: the embedded monitor is not the job. It records to a file every 20 ms while the host sleeps: the
 * host's I/O is its own (none), its threads its own (one), and the monitor's descriptors are not in its table
 * (but the wake-up eventfd), nor counted. */
static void test_monitor_is_not_the_job(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_embed_XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/quiet.db", dir);
    int fds0 = count_fds();
    js_monitor_opts_t o = {.size = sizeof(o), .interval_s = 0.02, .output = path};
    assert_int_equal(js_monitor_start(&o), 0);
    usleep(500000);
    assert_int_equal(js_monitor_sample(), 0);
    int fds_during = count_fds(); /* the host's own and the monitor's: recording, kept /proc files, timer */
    char *sum = js_monitor_summary(); /* the figures before this test's own writes below */
    assert_non_null(sum);
    /* the recording can be read while it is written, from this process too (SQLite's per-process state of
     * the file is shared by its connections: their descriptors must be in one table) */
    char csv[160];
    snprintf(csv, sizeof(csv), "%s/process.csv", dir);
    assert_int_equal(js_recording_export(path, "process", "csv", csv), 0);
    assert_int_equal(js_monitor_stop(), 0);
    assert_int_equal(js_recording_export(path, "process", "csv", csv), 0);
    /* the host's descriptors as the process view gives them: the monitor's taken off */
    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char line[4096];
    int col_pid = -1, col_fds = -1, rows = 0, fds_max = -1, fds_min = INT32_MAX, at_own = 0;
    while (fgets(line, sizeof(line), f)) {
        int col = 0, pid = -1, fds = -1;
        for (char *tok = line, *end; tok; tok = end ? end + 1 : NULL, col++) {
            end = strchr(tok, ',');
            if (end)
                *end = '\0';
            tok[strcspn(tok, "\r\n")] = '\0';
            if (col_pid < 0 && !strcmp(tok, "pid"))
                col_pid = col;
            else if (col_fds < 0 && !strcmp(tok, "fds"))
                col_fds = col;
            else if (col == col_pid)
                pid = atoi(tok);
            else if (col == col_fds && *tok)
                fds = atoi(tok);
        }
        if (pid == (int)getpid() && fds >= 0) {
            rows++;
            fds_max = fds > fds_max ? fds : fds_max;
            fds_min = fds < fds_min ? fds : fds_min;
            at_own += fds == fds0;
        }
    }
    fclose(f);
    unlink(csv);
    print_message("host descriptors: %d before, %d during (monitor's included), %d..%d in the process view "
                  "(%d of %d rows at %d)\n",
                  fds0, fds_during, fds_min, fds_max, at_own, rows, fds0);
    assert_true(fds_during > fds0 + 2); /* the monitor's are in the table ... */
    assert_true(rows > 0);
    /* ... and not in the host's figure, but while this thread's export above held its own two (the recording
     * it read and the file it wrote) */
    assert_int_equal(fds_min, fds0);
    assert_true(fds_max <= fds0 + 2);
    double wchar = json_num(sum, "\"io\": {", "write_chars"),
           wbytes = json_num(sum, "\"io\": {", "write_bytes");
    double threads = json_num(sum, "\"threads\": {", "main");
    double taken = json_num(sum, "\"samples\": {", "taken");
    print_message("%.0f samples recorded; host wrote %.0f bytes (%.0f to storage), %.0f thread(s)\n", taken,
                  wchar, wbytes, threads);
    js_free(sum);
    assert_true(taken >= 10);
    assert_true(wchar >= 0 && wchar < 1024); /* the recording's writes (tens of KiB) are the monitor's */
    assert_true(wbytes >= 0 && wbytes < 4096);
    assert_true(threads == 1);
    assert_int_equal(count_fds(), fds0);
    unlink(path);
    rmdir(dir);
}

static void test_bad_options(void **state)
{
    (void)state;
    js_monitor_opts_t o = {.size = sizeof(o), .interval_s = 0.001};
    assert_int_equal(js_monitor_start(&o), -EINVAL);
    o.interval_s = 5000;
    assert_int_equal(js_monitor_start(&o), -EINVAL);
    o.interval_s = 1;
    o.size = 8;
    assert_int_equal(js_monitor_start(&o), -EINVAL);
    assert_int_equal(js_monitor_start(NULL), -EINVAL);
    assert_int_equal(js_monitor_sample(), -ESRCH);
    assert_null(js_monitor_summary()); /* never started */
    assert_int_equal(errno, ESRCH);
    assert_string_equal(js_version(), JOBSCOPE_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_options),
        /* first: before the others' marks leave this process a mark connection (which is the embedding's) */
        cmocka_unit_test(test_monitor_is_not_the_job),
        cmocka_unit_test(test_embedded_run),
        cmocka_unit_test(test_attached_pid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
