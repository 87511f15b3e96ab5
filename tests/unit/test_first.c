/* SPDX-License-Identifier: MIT
 *
 * The report's first screen (src/report/first.c) on summary tables and facts built here: where the time went
 * (a missing figure says "not recorded", never 0%), the memory headline and the request with headroom,
 * core-hours and kWh for a long run (never "3120481 s"), seconds for a short one, the phases by name with
 * their figures and the time outside them, the phase list capped with a count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/buf.h"
#include "model/figure.h"
#include "report/advice.h"
#include "report/first.h"
#include "report/html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)

static char *render(const js_facts_t *f, js_summary_table_t **sums, size_t n, js_buf_t *b)
{
    js_html_t h = {.buf = b};
    assert_int_equal(first_screen(&h, f, (const js_summary_table_t *const *)sums, n), 0);
    assert_non_null(b->p); /* buf_append keeps it NUL-terminated */
    return b->p;
}

static void add_phase(js_figure_t *r, const char *name, double wall, double cpu, double peak)
{
    fig_put_elem(r, "phases.phases");
    fig_put_text(r, "phases.phases[].name", name);
    fig_put_num(r, "phases.phases[].peak_bytes", "bytes", peak);
    fig_put_num(r, "phases.phases[].self.wall_s", "s", wall);
    fig_put_num(r, "phases.phases[].self.cpu_s", "s", cpu);
    fig_put_num(r, "phases.phases[].self.mean_cores", "cores", cpu / wall);
    fig_put_num(r, "phases.phases[].self.read_bytes", "bytes", 1024 * 1024);
    fig_put_num(r, "phases.phases[].self.write_bytes", "bytes", 1024 * 1024);
    fig_put_num(r, "phases.phases[].self.energy_j", "J", 7.2e6);
}

static void t_request(void **state)
{
    (void)state;
    assert_true(isnan(first_request_bytes(NAN)));
    assert_true(isnan(first_request_bytes(0)));
    assert_true(first_request_bytes(100 * 1024 * 1024) == 256 * 1024 * 1024); /* 125 MiB -> 256 MiB */
    assert_true(first_request_bytes(1 * GiB) == 1.25 * GiB);
    assert_true(first_request_bytes(10 * GiB) == 13 * GiB); /* 12.5 GiB -> 13 GiB */
    char b[32];
    assert_string_equal(first_duration(b, sizeof(b), 3120481), "866.8 h");
    assert_string_equal(first_duration(b, sizeof(b), 42), "42 s");
    assert_string_equal(first_duration(b, sizeof(b), 0.0042), "4 ms"); /* not "0 s" */
    assert_string_equal(first_duration(b, sizeof(b), 0.0001), "< 1 ms");
    assert_string_equal(first_duration(b, sizeof(b), 0), "0 s");
    assert_string_equal(first_duration(b, sizeof(b), 1.3), "1.3 s");
    assert_string_equal(first_duration(b, sizeof(b), 144), "2 min 24 s"); /* not "2:24", a clock time */
    assert_string_equal(first_duration(b, sizeof(b), 3599.7), "1 h 00 min");
    assert_string_equal(first_duration(b, sizeof(b), 3723), "1 h 02 min");
}

/* a long two-node job: core-hours, kWh, the phases by name */
static void t_long_job(void **state)
{
    (void)state;
    js_facts_t f;
    facts_init(&f);
    f.wall_s = 3120481 / 64.0; /* 13.5 h */
    f.cores_available = 64;
    f.cpu_s = 3120481;
    f.mean_cores = f.cpu_s / f.wall_s;
    f.efficiency = f.mean_cores / 64;
    f.psi_cpu_some_job_mean = 0.05;
    f.psi_io_some_mean = 0.12;
    js_summary_table_t *s[2] = {figure_new(), figure_new()};
    for (int k = 0; k < 2; k++) {
        js_figure_t *r = figure_root(s[k]);
        fig_put_num(r, "memory.peak_bytes", "bytes", (k + 1) * 4 * GiB);
        fig_put_num(r, "io.read_bytes", "bytes", GiB);
        fig_put_num(r, "io.write_bytes", "bytes", GiB);
        fig_put_num(r, "energy.node_energy_j", "J", 3.6e7); /* 10 kWh each */
    }
    js_figure_t *r0 = figure_root(s[0]);
    add_phase(r0, "load data", 600, 600, GiB);
    add_phase(r0, "train", 40000, 2.5e6, 8 * GiB);
    fig_put_num(r0, "phases.outside.wall_s", "s", 100);
    fig_put_num(r0, "phases.outside.cpu_s", "s", 50);
    js_buf_t b = {0};
    const char *page = render(&f, s, 2, &b);
    assert_non_null(strstr(page, "id=\"first\""));
    assert_non_null(strstr(page, "867 core-hours")); /* never "3120481 s" */
    assert_null(strstr(page, "3120481"));
    assert_non_null(strstr(page, "20 kWh"));
    assert_non_null(strstr(page, "8 GiB")); /* the largest node's peak */
    assert_non_null(strstr(page, "10 GiB per node (peak + 25%, rounded up)"));
    assert_non_null(strstr(page, "4 GiB")); /* storage: 4 x 1 GiB */
    /* where the time went: the job's pressure, the host's I/O pressure, the idle cores */
    assert_non_null(strstr(page, "waiting for CPU"));
    assert_non_null(strstr(page, "of the time, some task of the job (PSI)"));
    assert_non_null(strstr(page, "of the time, some task of the host (PSI)"));
    assert_non_null(strstr(page, "value=\"0.1200\""));
    /* the phases, by name, with the time outside them */
    const char *ph = strstr(page, "id=\"first-phases\"");
    assert_non_null(ph);
    assert_non_null(strstr(ph, "load data"));
    assert_non_null(strstr(ph, ">10 min 00 s<"));  /* the phase's wall time */
    assert_non_null(strstr(ph, "694 core-hours")); /* 2.5e6 s */
    assert_non_null(strstr(ph, "(outside every phase)"));
    assert_non_null(strstr(ph, "2 kWh"));
    buf_free(&b);
    figure_free(s[0]);
    figure_free(s[1]);
}

/* a short run without PSI, GPUs idle, many phases */
static void t_short_run(void **state)
{
    (void)state;
    js_facts_t f;
    facts_init(&f);
    f.wall_s = 90;
    f.cores_available = 2;
    f.cpu_s = 45;
    f.mean_cores = 0.5;
    f.efficiency = 0.25;
    f.ngpus = 2;
    f.gpu_util_mean[0] = 0.02;
    f.gpu_util_mean[1] = 0.04;
    js_summary_table_t *s = figure_new();
    js_figure_t *r = figure_root(s);
    fig_put_num(r, "memory.peak_bytes", "bytes", 300 * 1024 * 1024);
    char name[32];
    for (int i = 0; i < FIRST_MAX_PHASES + 3; i++) {
        snprintf(name, sizeof(name), "epoch %d", i);
        add_phase(r, name, 5, 2, GiB);
    }
    js_buf_t b = {0};
    const char *page = render(&f, &s, 1, &b);
    assert_non_null(strstr(page, ">45 s<")); /* CPU time in seconds, not core-hours */
    assert_null(strstr(page, "core-hours"));
    assert_null(strstr(page, "kWh"));
    assert_non_null(strstr(page, "not recorded")); /* no PSI: said, not shown as 0% */
    assert_non_null(strstr(page, "GPUs idle"));
    assert_non_null(strstr(page, "value=\"0.9700\"")); /* 1 - mean 3% */
    assert_non_null(strstr(page, "512 MiB (peak + 25%, rounded up)"));
    assert_non_null(strstr(page, "the first 12 of 15"));
    assert_non_null(strstr(page, "epoch 11"));
    assert_null(strstr(page, "epoch 12"));
    buf_free(&b);
    figure_free(s);
}

/* compare: phases matched by name, A's order first, then B's own; CPU B / A */
static void t_compare_phases(void **state)
{
    (void)state;
    js_summary_table_t *a = figure_new(), *b = figure_new(), *none = figure_new();
    add_phase(figure_root(a), "load", 60, 30, GiB);
    add_phase(figure_root(a), "train", 600, 1200, 4 * GiB);
    add_phase(figure_root(b), "train", 300, 1800, 5 * GiB);
    add_phase(figure_root(b), "eval", 30, 15, GiB);
    js_buf_t buf = {0};
    js_html_t h = {.buf = &buf};
    assert_int_equal(first_compare_phases(&h, a, b, "A", "B"), 0);
    const char *page = buf.p;
    assert_non_null(strstr(page, "id=\"phases\""));
    const char *load = strstr(page, ">load<"), *train = strstr(page, ">train<"),
               *eval = strstr(page, ">eval<");
    assert_non_null(load);
    assert_non_null(train);
    assert_non_null(eval);
    assert_true(load < train && train < eval);
    assert_non_null(strstr(train, ">10 min 00 s<")); /* A's wall */
    assert_non_null(strstr(train, ">5 min 00 s<"));  /* B's */
    assert_non_null(strstr(train, ">1.5<"));         /* CPU B / A: 1800 / 1200 */
    assert_non_null(strstr(load, "\u2014"));         /* load: B has none */
    buf_free(&buf);
    /* neither run has phases: nothing */
    js_buf_t empty = {0};
    js_html_t he = {.buf = &empty};
    assert_int_equal(first_compare_phases(&he, none, none, "A", "B"), 0);
    assert_int_equal(empty.len, 0);
    buf_free(&empty);
    figure_free(a);
    figure_free(b);
    figure_free(none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_request),
        cmocka_unit_test(t_long_job),
        cmocka_unit_test(t_short_run),
        cmocka_unit_test(t_compare_phases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
