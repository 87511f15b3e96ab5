/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the model layer on hand-built samples: deltas and rates, exact totals in run mode (a child
 * reaped between samples is counted once, through RUSAGE_CHILDREN), attach-mode accounting of vanished
 * members, missing values, PID reuse, the rate window's short-tail rule, and the summary arithmetic
 * (gpu_tracker's sum percent / hardware percent semantics).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/model.h"
#include "core/util.h"
#include "core/sample.h"
#include "sources/proc_tree.h"
#include "sources/registry.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const js_table_t table_self;

typedef struct {
    int32_t pid, ppid;
    int64_t start, ut, st, cut, cst;
    int64_t rss;    /* <0: missing */
    int64_t uss;    /* <0: missing */
    int64_t wbytes; /* <0: missing */
} fake_proc_t;

static void add_sample(js_sample_t *s, int64_t t_ns, const fake_proc_t *p, size_t n, int64_t reaped_us,
                       int64_t reaped_wbytes)
{
    sample_clear(s);
    js_value_t *sv = rows_add(sample_rows(s, &table_samples));
    val_int(&sv[0], t_ns);
    val_int(&sv[1], 1700000000000000000LL + t_ns);
    val_int(&sv[3], 0);
    js_rows_t *proc = sample_rows(s, &table_proc);
    for (size_t i = 0; i < n; i++) {
        js_value_t *v = rows_add(proc);
        val_int(&v[PROC_PID], p[i].pid);
        val_int(&v[PROC_PPID], p[i].ppid);
        val_int(&v[PROC_START_TICKS], p[i].start);
        val_int(&v[PROC_UTIME], p[i].ut);
        val_int(&v[PROC_STIME], p[i].st);
        val_int(&v[PROC_CUTIME], p[i].cut);
        val_int(&v[PROC_CSTIME], p[i].cst);
        val_int(&v[PROC_THREADS], 1);
        if (p[i].rss >= 0)
            val_int(&v[PROC_RSS], p[i].rss);
        if (p[i].uss >= 0)
            val_int(&v[PROC_USS], p[i].uss);
        if (p[i].wbytes >= 0) {
            for (int k = PROC_RCHAR; k <= PROC_WRITE_BYTES; k++)
                val_int(&v[k], 0);
            val_int(&v[PROC_WRITE_BYTES], p[i].wbytes);
        }
    }
    js_value_t *t = rows_add(sample_rows(s, &table_tree));
    val_int(&t[TREE_MEMBERS], (int64_t)n);
    if (reaped_us >= 0) {
        val_int(&t[TREE_REAPED_UTIME], reaped_us);
        val_int(&t[TREE_REAPED_STIME], 0);
        for (int k = TREE_REAPED_RCHAR; k <= TREE_REAPED_WRITE_BYTES; k++)
            val_int(&t[k], 0);
        val_int(&t[TREE_REAPED_WRITE_BYTES], reaped_wbytes);
    }
}

static js_model_t *new_model(js_mode_t mode, double cores)
{
    js_model_cfg_t cfg = {.mode = mode,
                          .clk_tck = 100,
                          .monitor_pid = 1,
                          .root_pid = 10,
                          .interval_ns = 1000000000,
                          .start_mono_ns = 0,
                          .cores_available = cores};
    return model_new(&cfg);
}

#define SEC 1000000000LL

static void test_rates_and_deltas(void **state)
{
    (void)state;
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    fake_proc_t p = {10, 1, 500, 100, 50, 0, 0, 4096, -1, 0};
    add_sample(&s, 1 * SEC, &p, 1, 0, 0);
    assert_int_equal(model_feed(m, 0, &s), 0);
    const js_tree_point_t *pt = model_point(m);
    assert_true(isnan(pt->dt_s));
    assert_float_equal(pt->cpu_s, 1.5, 1e-9);
    assert_true(isnan(pt->cpu_cores)); /* no start time configured: no rate for the first sample */
    p.ut = 250;                        /* +1.5 s user over 1 s... with stime +0.5 s = 2 cores */
    p.st = 100;
    add_sample(&s, 2 * SEC, &p, 1, 0, 0);
    assert_int_equal(model_feed(m, 1, &s), 0);
    pt = model_point(m);
    assert_float_equal(pt->dt_s, 1.0, 1e-9);
    assert_float_equal(pt->cpu_s, 3.5, 1e-9);
    assert_float_equal(pt->user_s, 2.5, 1e-9);
    assert_float_equal(pt->cpu_cores, 2.0, 1e-9);
    assert_float_equal(pt->rss, 4096, 0);
    assert_true(isnan(pt->uss)); /* never read: missing, not 0 */
    size_t n;
    const js_proc_point_t *pp = model_procs(m, &n);
    assert_int_equal(n, 1);
    assert_float_equal(pp[0].cpu_cores, 2.0, 1e-9);
    model_free(m);
    sample_free(&s);
}

/* A child that lives between two samples is never seen, but its CPU arrives through RUSAGE_CHILDREN of the
 * monitor (if the monitor reaped it) or the parent's cutime (if the parent did): counted once either way. */
static void test_run_mode_exact_short_children(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    fake_proc_t parent = {10, 1, 500, 10, 0, 0, 0, 1000, -1, 0};
    add_sample(&s, 1 * SEC, &parent, 1, 0, 0);
    model_feed(m, 0, &s);
    /* the parent reaped 30 short children of 2 ticks each: cutime 60 */
    parent.cut = 60;
    add_sample(&s, 2 * SEC, &parent, 1, 0, 0);
    model_feed(m, 1, &s);
    assert_float_equal(model_point(m)->cpu_s, 0.7, 1e-9);
    /* a seen child, then it exits and the parent reaps it: its 0.5 s move into the parent's cutime */
    fake_proc_t two[2] = {parent, {11, 10, 600, 50, 0, 0, 0, 1000, -1, 0}};
    add_sample(&s, 3 * SEC, two, 2, 0, 0);
    model_feed(m, 2, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.2, 1e-9);
    parent.cut = 60 + 50;
    add_sample(&s, 4 * SEC, &parent, 1, 0, 0);
    model_feed(m, 3, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.2, 1e-9);
    /* the parent exits and the monitor reaps it: RUSAGE_CHILDREN holds all of it (1.2 s + 0.1 s more) */
    add_sample(&s, 5 * SEC, NULL, 0, 1300000, 0);
    model_feed(m, 4, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.3, 1e-9);
    js_summary_t su;
    model_summary(m, &su);
    assert_float_equal(su.total_s, 1.3, 1e-9);
    assert_true(su.exact_cpu);
    /* sampling alone saw only 0.1 (parent) + 0.5 (child) */
    assert_float_equal(su.sampled_s, 0.6, 1e-9);
    assert_int_equal(su.procs_total, 2);
    model_free(m);
    sample_free(&s);
}

/* Attach mode: a member whose parent is outside the tree vanishes: its last-seen totals are kept; one whose
 * live parent reaps it is not added twice. */
static void test_attach_mode_vanished(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_ATTACH, 2);
    fake_proc_t a[2] = {{10, 1, 500, 100, 0, 0, 0, 1, -1, 0}, {11, 10, 600, 100, 0, 0, 0, 1, -1, 0}};
    add_sample(&s, 1 * SEC, a, 2, -1, 0);
    model_feed(m, 0, &s);
    assert_float_equal(model_point(m)->cpu_s, 0, 1e-9); /* attach counts from the first sample */
    a[0].ut = 200;
    a[1].ut = 150;
    add_sample(&s, 2 * SEC, a, 2, -1, 0);
    model_feed(m, 1, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.5, 1e-9);
    /* child 11 exits and is reaped by 10: cutime += 150 */
    a[0].cut = 150;
    add_sample(&s, 3 * SEC, a, 1, -1, 0);
    model_feed(m, 2, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.5, 1e-9);
    /* the root exits (its parent is outside): its last-seen 200+150 ticks stay counted */
    add_sample(&s, 4 * SEC, NULL, 0, -1, 0);
    model_feed(m, 3, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.5, 1e-9);
    js_summary_t su;
    model_summary(m, &su);
    assert_false(su.exact_cpu);
    assert_float_equal(su.wall_s, 3.0, 1e-9);
    model_free(m);
    sample_free(&s);
}

/* A chain that vanishes in one sample (a child and its grandchild) under a live member: the member's cutime
 * takes both (the child's cutime held the grandchild), nothing is counted twice. */
static void test_attach_chain_vanished(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_ATTACH, 2);
    fake_proc_t a[3] = {{10, 1, 500, 0, 0, 0, 0, 1, -1, 0},
                        {11, 10, 600, 0, 0, 0, 0, 1, -1, 0},
                        {12, 11, 700, 0, 0, 0, 0, 1, -1, 0}};
    add_sample(&s, 1 * SEC, a, 3, -1, 0);
    model_feed(m, 0, &s);
    a[1].ut = 50;
    a[2].ut = 300;
    add_sample(&s, 2 * SEC, a, 3, -1, 0);
    model_feed(m, 1, &s);
    assert_float_equal(model_point(m)->cpu_s, 3.5, 1e-9);
    /* 12 ends (reaped by 11: +300 +100 more), then 11 (reaped by 10), both before the next sample */
    a[0].cut = 50 + 400;
    add_sample(&s, 3 * SEC, a, 1, -1, 0);
    model_feed(m, 2, &s);
    assert_float_equal(model_point(m)->cpu_s, 4.5, 1e-9);
    js_summary_t su;
    model_summary(m, &su);
    assert_float_equal(su.total_s, 4.5, 1e-9);
    model_free(m);
    sample_free(&s);
}

static void add_stepd(js_sample_t *s, int32_t pid, int64_t start, int64_t cut)
{
    js_value_t *v = rows_add(sample_rows(s, &table_stepd));
    val_int(&v[STEPD_PID], pid);
    val_int(&v[STEPD_START_TICKS], start);
    val_int(&v[STEPD_CUTIME], cut);
    val_int(&v[STEPD_CSTIME], 0);
}

/* jobscope job's slurmstepd roots: counted from the tasks' start (no attach baseline); a task that ends is
 * absorbed by its slurmstepd's cutime while that lives; a task last seen as a zombie (final figures) whose
 * slurmstepd is gone too keeps them, and the total stays exact; a task that vanished with its slurmstepd
 * before its end was read makes the total inexact. */
static void test_stepd_roots(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_cfg_t cfg = {
        .mode = JS_MODE_WATCH, .clk_tck = 100, .interval_ns = SEC, .cores_available = 2, .stepd_roots = true};
    js_model_t *m = model_new(&cfg);
    /* two steps: slurmstepd 50 with task 100 (child 101), slurmstepd 60 with task 200 */
    fake_proc_t a[3] = {{100, 50, 700, 10, 0, 0, 0, 1, -1, 0},
                        {101, 100, 710, 90, 0, 0, 0, 1, -1, 0},
                        {200, 60, 720, 40, 0, 0, 0, 1, -1, 0}};
    add_sample(&s, 1 * SEC, a, 3, -1, 0);
    add_stepd(&s, 50, 600, 0);
    add_stepd(&s, 60, 610, 0);
    model_feed(m, 0, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.4, 1e-9); /* from the start, not from the first sample */
    /* 101 and 100 end; slurmstepd 50 reaped 100 (which held 101): cutime 10 + 150 */
    a[0] = (fake_proc_t){200, 60, 720, 80, 0, 0, 0, 1, -1, 0};
    add_sample(&s, 2 * SEC, a, 1, -1, 0);
    add_stepd(&s, 50, 600, 160);
    add_stepd(&s, 60, 610, 0);
    model_feed(m, 1, &s);
    assert_float_equal(model_point(m)->cpu_s, 2.4, 1e-9);
    /* slurmstepd 50 goes: what it reaped stays; 200 becomes a zombie with its final figures */
    add_sample(&s, 3 * SEC, a, 1, -1, 0);
    rows_row(sample_rows(&s, &table_proc), 0)[PROC_UTIME].i = 95;
    rows_set_str(sample_rows(&s, &table_proc), &rows_row(sample_rows(&s, &table_proc), 0)[PROC_STATE], "Z",
                 1);
    add_stepd(&s, 60, 610, 0);
    model_feed(m, 2, &s);
    assert_float_equal(model_point(m)->cpu_s, 2.55, 1e-9);
    /* 200 and slurmstepd 60 both gone: the zombie's figures were final */
    add_sample(&s, 4 * SEC, NULL, 0, -1, 0);
    model_feed(m, 3, &s);
    assert_float_equal(model_point(m)->cpu_s, 2.55, 1e-9);
    js_summary_t su;
    model_summary(m, &su);
    assert_true(su.exact_cpu);
    model_free(m);

    /* the same end without the zombie sample: the task's last interval is missing, and said so */
    m = model_new(&cfg);
    fake_proc_t b[1] = {{200, 60, 720, 40, 0, 0, 0, 1, -1, 0}};
    add_sample(&s, 1 * SEC, b, 1, -1, 0);
    add_stepd(&s, 60, 610, 0);
    model_feed(m, 0, &s);
    add_sample(&s, 2 * SEC, NULL, 0, -1, 0);
    model_feed(m, 1, &s);
    assert_float_equal(model_point(m)->cpu_s, 0.4, 1e-9);
    model_summary(m, &su);
    assert_false(su.exact_cpu);
    assert_non_null(su.inexact_cpu_reason);
    model_free(m);
    sample_free(&s);
}

/* A member read after its parent already reaped it would be counted twice for one sample; cumulative values
 * never decrease, and a missing counter gives a missing tree value, never 0. */
static void test_missing_and_monotone(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 1);
    fake_proc_t p = {10, 1, 500, 100, 0, 0, 0, 100, 5000, 1024};
    add_sample(&s, 1 * SEC, &p, 1, 0, 0);
    model_feed(m, 0, &s);
    const js_tree_point_t *pt = model_point(m);
    assert_float_equal(pt->uss, 5000, 0);
    assert_float_equal(pt->io[IO_WRITE], 1024, 0);
    /* utime goes backwards (a reset or a misread): cumulative stays */
    p.ut = 50;
    p.uss = -1;
    add_sample(&s, 2 * SEC, &p, 1, 0, 0);
    model_feed(m, 1, &s);
    pt = model_point(m);
    assert_float_equal(pt->cpu_s, 1.0, 1e-9);
    assert_float_equal(pt->cpu_cores, 0, 1e-9);
    assert_float_equal(pt->uss, 5000, 0); /* not read this sample: the last reading stands */
    /* two members, one whose io and smaps_rollup cannot be read (another user's): one unreadable process does
     * not void the totals (it did: n/a for the whole tree); it is left out and counted */
    fake_proc_t two[2] = {p, {12, 10, 700, 0, 0, 0, 0, 100, -1, -1}};
    add_sample(&s, 3 * SEC, two, 2, 0, 0);
    model_feed(m, 2, &s);
    assert_float_equal(model_point(m)->io[IO_WRITE], 1024, 0);
    assert_float_equal(model_point(m)->uss, 5000, 0);
    /* a zombie whose files are gone is no unreadable process: its reaper's counters take its I/O */
    fake_proc_t three[3] = {p, two[1], {13, 10, 800, 0, 0, 0, 0, 0, -1, -1}};
    add_sample(&s, 4 * SEC, three, 3, 0, 0);
    rows_set_str(sample_rows(&s, &table_proc), &rows_row(sample_rows(&s, &table_proc), 2)[PROC_STATE], "Z",
                 1);
    model_feed(m, 3, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_float_equal(su.peak_private, 5000, 0);
    assert_float_equal(su.peak_rss_sum, 200, 0);
    assert_float_equal(su.io[IO_WRITE], 1024, 0);
    assert_int_equal(su.io_unreadable, 1);
    assert_int_equal(su.uss_unreadable, 1);
    model_free(m);
    sample_free(&s);
}

static void test_pid_reuse(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 1);
    fake_proc_t p[2] = {{10, 1, 500, 0, 0, 0, 0, 1, -1, -1}, {11, 10, 600, 100, 0, 0, 0, 1, -1, -1}};
    add_sample(&s, 1 * SEC, p, 2, 0, 0);
    model_feed(m, 0, &s);
    p[1].start = 650; /* PID 11 now names another process */
    p[1].ut = 10;
    p[0].cut = 100; /* the first 11 was reaped by 10 */
    add_sample(&s, 2 * SEC, p, 2, 0, 0);
    model_feed(m, 1, &s);
    assert_float_equal(model_point(m)->cpu_s, 1.1, 1e-9);
    size_t n;
    const js_proc_point_t *pp = model_procs(m, &n);
    assert_true(isnan(pp[1].cpu_cores)); /* a new process has no rate yet */
    js_summary_t su;
    model_summary(m, &su);
    assert_int_equal(su.procs_total, 3);
    model_free(m);
    sample_free(&s);
}

static void test_rate_carry(void **state)
{
    (void)state;
    rate_carry_t c;
    rate_carry_init(&c, 2.0, JS_NS_PER_S);
    assert_true(isnan(c.max_rate));
    assert_true(isnan(rate_carry_step(&c, 1.0, 0)));
    assert_float_equal(rate_carry_step(&c, 1.0, JS_NS_PER_S), 1.0, 1e-12);
    assert_float_equal(rate_carry_step(&c, 2.0, JS_NS_PER_S), 2.0, 1e-12);
    assert_float_equal(c.max_rate, 2.0, 1e-12);
    /* 0.5 s of CPU that became visible at reap, 5 ms after the previous sample: capped, carried, no new max
     */
    assert_float_equal(rate_carry_step(&c, 0.5, 5000000), 2.0, 1e-12);
    assert_float_equal(c.carry, 0.49, 1e-12);
    assert_float_equal(c.max_rate, 2.0, 1e-12);
    /* the carry is spread over the next interval: 0.49 + 0.2 over 1 s */
    assert_float_equal(rate_carry_step(&c, 0.2, JS_NS_PER_S), 0.69, 1e-12);
    assert_float_equal(c.carry, 0, 1e-12);
    /* a burst above the cap over a full interval: capped, the rest carried */
    assert_float_equal(rate_carry_step(&c, 3.0, JS_NS_PER_S), 2.0, 1e-12);
    assert_float_equal(rate_carry_step(&c, 0.0, JS_NS_PER_S), 1.0, 1e-12);
    /* no cap: the raw rate; a negative delta adds nothing */
    rate_carry_init(&c, 0, JS_NS_PER_S);
    assert_float_equal(rate_carry_step(&c, 5.0, JS_NS_PER_S), 5.0, 1e-12);
    assert_float_equal(rate_carry_step(&c, -1.0, JS_NS_PER_S), 0.0, 1e-12);
}

/* gpu_tracker: sum percent = sum over units of their percent (here: cores busy x 100); hardware percent =
 * sum percent / units. jobscope reports them as cores (sum / 100) and fractions (hardware / 100). */
static void test_summary_arithmetic(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_cfg_t cfg = {.mode = JS_MODE_RUN,
                          .clk_tck = 100,
                          .monitor_pid = 1,
                          .root_pid = 10,
                          .interval_ns = SEC,
                          .start_mono_ns = 1 * SEC,
                          .cores_available = 4};
    js_model_t *m = model_new(&cfg);
    /* 3 cores busy for 1 s, then 1 core for 1 s, then the tree ends and everything is reaped */
    fake_proc_t p = {10, 1, 500, 300, 0, 0, 0, 10, -1, -1};
    add_sample(&s, 2 * SEC, &p, 1, 0, 0);
    model_feed(m, 0, &s);
    assert_true(isnan(model_point(m)->cpu_cores)); /* no previous sample: no rate in the row */
    p.ut = 400;
    add_sample(&s, 3 * SEC, &p, 1, 0, 0);
    model_feed(m, 1, &s);
    add_sample(&s, 3 * SEC + 5000000, NULL, 0, 4000000, 0);
    model_feed(m, 2, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_float_equal(su.total_s, 4.0, 1e-9);
    assert_float_equal(su.wall_s, 2.005, 1e-9);
    assert_float_equal(su.mean_cores, 4.0 / 2.005, 1e-9);     /* mean sum percent / 100 */
    assert_float_equal(su.max_cores, 3.0, 1e-9);              /* max sum percent / 100 */
    assert_float_equal(su.efficiency, 4.0 / 2.005 / 4, 1e-9); /* mean hardware fraction */
    assert_float_equal(su.cores_available, 4, 0);
    assert_int_equal(su.taken, 3);
    model_free(m);
    sample_free(&s);
}

static js_value_t *proc_row(js_sample_t *s, size_t i)
{
    return rows_row(sample_rows(s, &table_proc), i);
}

static void add_info(js_sample_t *s, int32_t pid, int64_t start, const char *comm)
{
    js_rows_t *info = sample_rows(s, &table_proc_info);
    js_value_t *v = rows_add(info);
    val_int(&v[INFO_PID], pid);
    val_int(&v[INFO_START_TICKS], start);
    rows_set_str(info, &v[INFO_COMM], comm, strlen(comm));
}

/* A member whose SIGCHLD is ignored has its children reaped by the kernel with no accounting: not exact. */
static void test_sigchld_ignored(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    fake_proc_t p = {10, 1, 500, 10, 0, 0, 0, 100, -1, 0};
    add_sample(&s, 1 * SEC, &p, 1, 0, 0);
    val_int(&proc_row(&s, 0)[PROC_SIGIGNORE], 0x1000); /* SIGPIPE only */
    model_feed(m, 0, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_true(su.exact_cpu);
    assert_null(su.inexact_cpu_reason);
    add_sample(&s, 2 * SEC, &p, 1, 0, 0);
    add_info(&s, 10, 500, "parent");
    val_int(&proc_row(&s, 0)[PROC_SIGIGNORE], 0x10000); /* bit 16: SIGCHLD (17) */
    model_feed(m, 1, &s);
    model_summary(m, &su);
    assert_false(su.exact_cpu);
    assert_non_null(strstr(su.inexact_cpu_reason, "SIGCHLD"));
    assert_int_equal(su.sigchld_pid, 10);
    assert_string_equal(su.sigchld_comm, "parent");
    model_free(m);
    sample_free(&s);
}

/* A parent whose children vanish without their CPU reaching its cutime (a SIGCHLD handler with SA_NOCLDWAIT:
 * /proc shows nothing of it) is caught by the accounting itself: not exact, and what sampling saw of the
 * children is counted. A parent that reaps its child late (after its row of the sample where the child
 * vanished) is not taken for one. */
static void nocldwait_case(bool reaps, bool late, double *ret_total, bool *ret_exact, int32_t *ret_pid)
{
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    fake_proc_t p[2] = {{10, 1, 500, 5, 0, 0, 0, 100, -1, -1}, {11, 10, 600, 30, 0, 0, 0, 100, -1, -1}};
    add_sample(&s, 1 * SEC, p, 1, 0, 0);
    add_info(&s, 10, 500, "server");
    model_feed(m, 0, &s);
    add_sample(&s, 2 * SEC, p, 2, 0, 0);
    model_feed(m, 1, &s);
    p[1].ut = 60;
    add_sample(&s, 3 * SEC, p, 2, 0, 0);
    model_feed(m, 2, &s);
    if (reaps && !late)
        p[0].cut = 61; /* waited for: its utime (a tick more than last seen) is in the parent's cutime */
    add_sample(&s, 4 * SEC, p, 1, 0, 0); /* the child is gone */
    model_feed(m, 3, &s);
    if (reaps)
        p[0].cut = 61;
    add_sample(&s, 5 * SEC, p, 1, 0, 0);
    model_feed(m, 4, &s);
    add_sample(&s, 6 * SEC, p, 1, 0, 0);
    model_feed(m, 5, &s);
    js_summary_t su;
    model_summary(m, &su);
    *ret_total = su.total_s;
    *ret_exact = su.exact_cpu && su.exact_peak_rss;
    *ret_pid = su.autoreap_pid;
    model_free(m);
    sample_free(&s);
}

static void test_nocldwait_detected(void **state)
{
    (void)state;
    double total;
    bool exact;
    int32_t pid;
    nocldwait_case(false, false, &total, &exact, &pid); /* auto-reaped: 0.60 s would be lost */
    assert_false(exact);
    assert_int_equal(pid, 10);
    assert_float_equal(total, 0.05 + 0.60, 1e-9);      /* the child as last seen */
    nocldwait_case(true, false, &total, &exact, &pid); /* reaped in time */
    assert_true(exact);
    assert_int_equal(pid, 0);
    assert_float_equal(total, 0.05 + 0.61, 1e-9);
    nocldwait_case(true, true, &total, &exact, &pid); /* reaped after the parent's row: seen a sample later */
    assert_true(exact);
    assert_int_equal(pid, 0);
    assert_float_equal(total, 0.05 + 0.61, 1e-9);
}

/* Unreadable is not zero: a member whose io could not be read leaves the I/O totals missing, even after it
 * has gone (attach to another user's process, then it exits). */
static void test_io_unreadable_is_missing(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_ATTACH, 2);
    fake_proc_t p = {10, 1, 500, 10, 0, 0, 0, 100, -1, -1};
    add_sample(&s, 1 * SEC, &p, 1, -1, 0);
    model_feed(m, 0, &s);
    add_sample(&s, 2 * SEC, NULL, 0, -1, 0);
    model_feed(m, 1, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_int_equal(su.io_unreadable, 1);
    assert_true(isnan(su.io[IO_READ]));
    assert_true(isnan(su.io[IO_WRITE]));
    model_free(m);
    sample_free(&s);
}

/* The closing row a few ms after the previous one shows the mean over both intervals, which is a candidate
 * for max_cores: no export row shows more than the summary's maximum. */
static void test_short_closing_row(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_cfg_t cfg = {.mode = JS_MODE_RUN,
                          .clk_tck = 100,
                          .monitor_pid = 1,
                          .root_pid = 10,
                          .interval_ns = SEC,
                          .start_mono_ns = 0,
                          .cores_available = 2};
    js_model_t *m = model_new(&cfg);
    fake_proc_t p = {10, 1, 500, 0, 0, 0, 0, 100, -1, 0};
    add_sample(&s, 0, &p, 1, 0, 0);
    model_feed(m, 0, &s);
    p.ut = 90; /* 0.9 cores over 1 s */
    add_sample(&s, 1 * SEC, &p, 1, 0, 0);
    model_feed(m, 1, &s);
    /* reaped 6 ms later: 0.1 s more became visible (tick truncation of a live process) */
    add_sample(&s, 1 * SEC + 6000000, NULL, 0, 1000000, 0);
    model_feed(m, 2, &s);
    double last = model_point(m)->cpu_cores;
    assert_float_equal(last, 1.0 / 1.006, 1e-9);
    js_summary_t su;
    model_summary(m, &su);
    assert_true(su.max_cores >= last);
    assert_true(su.max_cores >= su.mean_cores);
    model_free(m);
    sample_free(&s);
}

/* attach: CPU a process used before monitoring began counts neither in the total nor in the sampled figure,
 * and the maximum rate is never below the mean. */
static void test_attach_baseline(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_ATTACH, 2);
    fake_proc_t p = {10, 1, 500, 16800, 0, 0, 0, 100, -1, 0}; /* 168 s used before attaching */
    add_sample(&s, 1 * SEC, &p, 1, -1, 0);
    model_feed(m, 0, &s);
    p.ut = 16801;
    add_sample(&s, 1 * SEC + 400000000, &p, 1, -1, 0); /* the target exits 0.4 s later (closing sample) */
    model_feed(m, 1, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_float_equal(su.total_s, 0.01, 1e-9);
    assert_true(su.sampled_s <= su.total_s + 1e-9);
    assert_true(su.max_cores >= su.mean_cores);
    model_free(m);
    sample_free(&s);
}

/* The top list by CPU goes past JS_TOP_N until it covers 90% of the CPU sampling saw (at most
 * JS_TOP_CPU_MAX commands); the rest are "others", counted. */
static void top_cpu_covering(size_t ncomm, int want_top, int64_t want_others, double others_s)
{
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    fake_proc_t p[40];
    char comm[32];
    for (size_t i = 0; i < ncomm; i++)
        p[i] = (fake_proc_t){(int32_t)(100 + i), 1, 500, 0, 0, 0, 0, 1000, -1, 0};
    add_sample(&s, 1 * SEC, p, ncomm, 0, 0);
    for (size_t i = 0; i < ncomm; i++) {
        snprintf(comm, sizeof(comm), "c%zu", i);
        add_info(&s, p[i].pid, 500, comm);
    }
    model_feed(m, 0, &s);
    for (size_t i = 0; i < ncomm; i++)
        p[i].ut = 100; /* 1 s each */
    add_sample(&s, 2 * SEC, p, ncomm, 0, 0);
    model_feed(m, 1, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_int_equal(su.ntop_cpu, want_top);
    assert_int_equal(su.ntop_rss, ncomm < JS_TOP_N ? (int)ncomm : JS_TOP_N);
    assert_int_equal(su.others_commands, want_others);
    assert_float_equal(su.others_cpu_s, others_s, 1e-9);
    model_free(m);
    sample_free(&s);
}

static void test_top_cpu_covers_90pct(void **state)
{
    (void)state;
    top_cpu_covering(12, 11, 1, 1.0);   /* 11 of 12 equal commands cover 91.7% */
    top_cpu_covering(30, 20, 10, 10.0); /* at most 20 listed */
    top_cpu_covering(3, 3, 0, 0.0);     /* fewer than 5: all, nothing else */
}

/* The summary's top lists: per command name, CPU of its processes and their largest RSS. */
static void test_top_lists(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    fake_proc_t p[3] = {{10, 1, 500, 0, 0, 0, 0, 1000, -1, 0},
                        {11, 10, 501, 0, 0, 0, 0, 9000, -1, 0},
                        {12, 10, 502, 0, 0, 0, 0, 2000, -1, 0}};
    add_sample(&s, 1 * SEC, p, 3, 0, 0);
    add_info(&s, 10, 500, "sh");
    add_info(&s, 11, 501, "big");
    add_info(&s, 12, 502, "busy");
    model_feed(m, 0, &s);
    p[2].ut = 300;
    p[1].ut = 10;
    add_sample(&s, 2 * SEC, p, 3, 0, 0);
    model_feed(m, 1, &s);
    add_sample(&s, 3 * SEC, p, 1, 0, 0); /* 11 and 12 gone: their figures stay */
    model_feed(m, 2, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_int_equal(su.ntop_cpu, 2);
    assert_string_equal(su.top_cpu[0].comm, "busy");
    assert_float_equal(su.top_cpu[0].cpu_s, 3.0, 1e-9);
    assert_string_equal(su.top_rss[0].comm, "big");
    assert_float_equal(su.top_rss[0].peak_rss, 9000, 0);
    assert_float_equal(su.peak_rss_kernel, 9000, 0); /* never below one process's sampled RSS */
    model_free(m);
    sample_free(&s);
}

/* watch --node --top: a process that was running before the watch and becomes a top process later counts from
 * its first row, not from its start (it showed 4.49 s where the node's whole window was 2.31 s); one that
 * started during the watch counts whole. The window's start comes from the tree row's t_boot_ns. */
static void test_top_counts_the_window_only(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_cfg_t cfg = {.mode = JS_MODE_WATCH,
                          .scope = JS_SCOPE_NODE,
                          .clk_tck = 100,
                          .monitor_pid = 1,
                          .interval_ns = SEC,
                          .cores_available = 2};
    js_model_t *m = model_new(&cfg);
    /* the window starts at boot + 1000 s (tick 100000) */
    fake_proc_t other = {20, 1, 5000, 100, 0, 0, 0, 1000, -1, -1};
    add_sample(&s, 1 * SEC, &other, 1, -1, 0);
    add_info(&s, 20, 5000, "daemon");
    val_int(&rows_row(sample_rows(&s, &table_tree), 0)[TREE_T_BOOT], 1000 * SEC);
    model_feed(m, 0, &s);
    /* hog.sh (started at tick 90000, before the watch, 449 ticks so far) and new (started during it) */
    fake_proc_t p[2] = {{30, 1, 90000, 449, 0, 0, 0, 1000, -1, -1},
                        {31, 1, 100050, 40, 0, 0, 0, 1000, -1, -1}};
    add_sample(&s, 2 * SEC, p, 2, -1, 0);
    add_info(&s, 30, 90000, "hog.sh");
    add_info(&s, 31, 100050, "new");
    val_int(&rows_row(sample_rows(&s, &table_tree), 0)[TREE_T_BOOT], 1001 * SEC);
    model_feed(m, 1, &s);
    p[0].ut = 480;
    p[1].ut = 60;
    add_sample(&s, 3 * SEC, p, 2, -1, 0);
    val_int(&rows_row(sample_rows(&s, &table_tree), 0)[TREE_T_BOOT], 1002 * SEC);
    model_feed(m, 2, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_int_equal(su.ntop_cpu, 2);
    assert_string_equal(su.top_cpu[0].comm, "new");
    assert_float_equal(su.top_cpu[0].cpu_s, 0.60, 1e-9); /* all of it: it started in the window */
    assert_string_equal(su.top_cpu[1].comm, "hog.sh");
    assert_float_equal(su.top_cpu[1].cpu_s, 0.31, 1e-9); /* from its first row, not 4.80 s */
    model_free(m);
    sample_free(&s);
}

/* Members that could not be read (descriptor limit) make the totals inexact, and say so. */
static void test_unread_members(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    fake_proc_t p = {10, 1, 500, 0, 0, 0, 0, 100, -1, 0};
    add_sample(&s, 1 * SEC, &p, 1, 0, 0);
    val_int(&rows_row(sample_rows(&s, &table_tree), 0)[TREE_UNREAD], 3);
    model_feed(m, 0, &s);
    js_summary_t su;
    model_summary(m, &su);
    assert_false(su.exact_cpu);
    assert_int_equal(su.unread_max, 3);
    assert_int_equal(su.unread_samples, 1);
    model_free(m);
    sample_free(&s);
}

/* mem_row: one member with RSS, and PSS/USS when read (>= 0), VmHWM when known (>= 0) */
static void mem_row(js_sample_t *s, int32_t pid, int64_t rss, int64_t pss, int64_t uss, int64_t hwm)
{
    js_value_t *v = rows_add(sample_rows(s, &table_proc));
    val_int(&v[PROC_PID], pid);
    val_int(&v[PROC_PPID], pid == 10 ? 1 : 10);
    val_int(&v[PROC_START_TICKS], 500 + pid);
    val_int(&v[PROC_UTIME], 0);
    val_int(&v[PROC_STIME], 0);
    val_int(&v[PROC_THREADS], 1);
    val_int(&v[PROC_RSS], rss);
    if (pss >= 0) {
        val_int(&v[PROC_PSS], pss);
        val_int(&v[PROC_USS], uss);
    }
    if (hwm >= 0)
        val_int(&v[PROC_HWM], hwm);
}

static void mem_sample(js_sample_t *s, int64_t t_ns, size_t members)
{
    js_value_t *t = rows_add(sample_rows(s, &table_tree));
    val_int(&t[TREE_MEMBERS], (int64_t)members);
    js_value_t *sv = rows_add(sample_rows(s, &table_samples));
    val_int(&sv[SAMPLES_T_MONO], t_ns);
    val_int(&sv[SAMPLES_T_UNIX], 1700000000000000000LL + t_ns);
}

/* Issue 19: a parent holding 400 MiB that forks 4 workers used 400 MiB, not 2 GiB. The PSS sum of one
 * sample (every member read at once) counts each page once; between reads a member's figures move with its
 * RSS; the largest process's kernel high-water mark is a floor of the headline. */
static void test_memory_headline(void **state)
{
    (void)state;
    const int64_t M = 1 << 20;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    /* the parent alone: 400 MiB, all private */
    sample_clear(&s);
    mem_sample(&s, 1 * SEC, 1);
    mem_row(&s, 10, 400 * M, 400 * M, 400 * M, -1);
    assert_int_equal(model_feed(m, 0, &s), 0);
    assert_true(model_point(m)->pss_read);
    /* 4 workers share its pages: every member read at the same sample */
    sample_clear(&s);
    mem_sample(&s, 2 * SEC, 5);
    mem_row(&s, 10, 400 * M, 80 * M, 0, -1);
    for (int32_t k = 0; k < 4; k++)
        mem_row(&s, 11 + k, 400 * M, 80 * M, 0, -1);
    assert_int_equal(model_feed(m, 1, &s), 0);
    const js_tree_point_t *pt = model_point(m);
    assert_float_equal(pt->rss, 2000.0 * M, 0);
    assert_float_equal(pt->pss, 400.0 * M, 0);
    assert_float_equal(pt->uss, 0, 0);
    /* one worker writes 100 MiB of its own between reads: its figures move with its RSS (the series); the
     * peaks are sums measured at one sample */
    sample_clear(&s);
    mem_sample(&s, 3 * SEC, 5);
    mem_row(&s, 10, 400 * M, -1, -1, -1);
    mem_row(&s, 11, 500 * M, -1, -1, -1);
    for (int32_t k = 1; k < 4; k++)
        mem_row(&s, 11 + k, 400 * M, -1, -1, -1);
    assert_int_equal(model_feed(m, 2, &s), 0);
    pt = model_point(m);
    assert_false(pt->pss_read);
    assert_float_equal(pt->pss, 500.0 * M, 0);
    assert_float_equal(pt->uss, 100.0 * M, 0);
    js_summary_t su;
    model_summary(m, &su);
    assert_float_equal(su.peak_pss, 400.0 * M, 0);
    assert_float_equal(su.peak_rss_sum, 2100.0 * M, 0);
    /* but one process's RSS (500 MiB, each of its pages once) is a floor: the headline, and says so */
    assert_float_equal(su.peak_bytes, 500.0 * M, 0);
    assert_non_null(strstr(su.peak_method, "largest process"));
    /* the next read measures it */
    sample_clear(&s);
    mem_sample(&s, 4 * SEC, 5);
    mem_row(&s, 10, 400 * M, 80 * M, 0, -1);
    mem_row(&s, 11, 500 * M, 180 * M, 100 * M, -1);
    for (int32_t k = 1; k < 4; k++)
        mem_row(&s, 11 + k, 400 * M, 80 * M, 0, -1);
    assert_int_equal(model_feed(m, 3, &s), 0);
    model_summary(m, &su);
    assert_float_equal(su.peak_pss, 500.0 * M, 0);
    assert_float_equal(su.peak_bytes, 500.0 * M, 0);
    assert_non_null(strstr(su.peak_method, "PSS"));
    assert_false(su.peak_exact);
    assert_float_equal(su.peak_private, 400.0 * M, 0); /* the parent alone, at the first sample */
    assert_float_equal(su.peak_shared, 400.0 * M, 0);  /* PSS - USS: the parent's pages, once for the tree */
    assert_int_equal(su.pss_samples, 3);
    /* the largest process's VmHWM above the PSS sum (a peak between samples): it is the headline */
    sample_clear(&s);
    mem_sample(&s, 5 * SEC, 1);
    mem_row(&s, 10, 400 * M, -1, -1, 700 * M);
    assert_int_equal(model_feed(m, 4, &s), 0);
    model_summary(m, &su);
    assert_float_equal(su.peak_bytes, 700.0 * M, 0);
    assert_non_null(strstr(su.peak_method, "VmHWM"));
    model_free(m);

    /* a command gone before the first sample (`run -- true`): no sampled figure, not 0 B */
    m = new_model(JS_MODE_RUN, 2);
    sample_clear(&s);
    mem_sample(&s, 1 * SEC, 0);
    assert_int_equal(model_feed(m, 0, &s), 0);
    model_summary(m, &su);
    assert_true(isnan(su.peak_rss_sum));
    assert_true(isnan(su.peak_pss));
    assert_true(isnan(su.peak_bytes));
    model_free(m);
    sample_free(&s);
}

static void test_empty_summary(void **state)
{
    (void)state;
    js_model_t *m = new_model(JS_MODE_RUN, 2);
    js_summary_t su;
    model_summary(m, &su);
    assert_true(isnan(su.total_s));
    assert_true(isnan(su.peak_rss_sum));
    assert_true(isnan(su.peak_bytes));
    assert_true(isnan(su.tree_total_s)); /* the command never ran: null, not 0 (docs/FORMAT.md) */
    assert_true(isnan(su.peak_kernel_tree));
    assert_int_equal(su.taken, 0);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates_and_deltas),
        cmocka_unit_test(test_run_mode_exact_short_children),
        cmocka_unit_test(test_attach_mode_vanished),
        cmocka_unit_test(test_attach_chain_vanished),
        cmocka_unit_test(test_stepd_roots),
        cmocka_unit_test(test_missing_and_monotone),
        cmocka_unit_test(test_pid_reuse),
        cmocka_unit_test(test_rate_carry),
        cmocka_unit_test(test_summary_arithmetic),
        cmocka_unit_test(test_empty_summary),
        cmocka_unit_test(test_sigchld_ignored),
        cmocka_unit_test(test_nocldwait_detected),
        cmocka_unit_test(test_io_unreadable_is_missing),
        cmocka_unit_test(test_short_closing_row),
        cmocka_unit_test(test_attach_baseline),
        cmocka_unit_test(test_top_lists),
        cmocka_unit_test(test_top_cpu_covers_90pct),
        cmocka_unit_test(test_top_counts_the_window_only),
        cmocka_unit_test(test_unread_members),
        cmocka_unit_test(test_memory_headline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
