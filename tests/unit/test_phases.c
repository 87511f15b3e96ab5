/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the phases model part on hand-built samples with marks: interpolation between samples,
 * nesting (inclusive and self totals), the same phase from several senders, unmatched ends, peak RSS at
 * sample resolution, a mark that arrived late, the self totals adding up to the run's, the views, the
 * summary, and a recording round trip (marks written with their sample and read back give the same totals).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/replay.h"
#include "core/json.h"
#include "core/marks.h"
#include "core/nameindex.h"
#include "core/sample.h"
#include "model/model.h"
#include "model/summary.h"
#include "sinks/recording.h"
#include "sources/proc_tree.h"
#include "sources/registry.h"
#include "parts_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEC 1000000000LL

typedef struct {
    double t;         /* seconds */
    const char *kind; /* begin, end, event */
    const char *name;
    int32_t pid;
} fmark_t;

static bool g_for_marks; /* the next samples are taken for their marks (samples.for_marks) */

/* sample: one process (pid 10) with cumulative CPU `cpu_s` (whole ticks at 100 Hz), RSS `rss`, write_bytes
 * `wb`, and the given marks. */
static void sample(js_sample_t *s, double t, double cpu_s, int64_t rss, int64_t wb, const fmark_t *mk,
                   size_t n)
{
    sample_clear(s);
    js_value_t *sv = rows_add(sample_rows(s, &table_samples));
    val_int(&sv[SAMPLES_T_MONO], (int64_t)(t * SEC));
    val_int(&sv[SAMPLES_T_UNIX], 1700000000LL * SEC + (int64_t)(t * SEC));
    val_int(&sv[SAMPLES_MISSED], 0);
    val_int(&sv[SAMPLES_FOR_MARKS], g_for_marks);
    js_rows_t *proc = sample_rows(s, &table_proc);
    js_value_t *v = rows_add(proc);
    val_int(&v[PROC_PID], 10);
    val_int(&v[PROC_PPID], 1);
    val_int(&v[PROC_START_TICKS], 5);
    val_int(&v[PROC_UTIME], (int64_t)llround(cpu_s * 100));
    val_int(&v[PROC_STIME], 0);
    val_int(&v[PROC_CUTIME], 0);
    val_int(&v[PROC_CSTIME], 0);
    val_int(&v[PROC_THREADS], 1);
    val_int(&v[PROC_RSS], rss);
    val_int(&v[PROC_SHARED], rss / 4);
    for (int k = PROC_RCHAR; k <= PROC_WRITE_BYTES; k++)
        val_int(&v[k], 0);
    val_int(&v[PROC_WRITE_BYTES], wb);
    js_value_t *tr = rows_add(sample_rows(s, &table_tree));
    val_int(&tr[TREE_MEMBERS], 1);
    js_rows_t *mr = sample_rows(s, &table_marks);
    for (size_t i = 0; i < n; i++) {
        js_value_t *m = rows_add(mr);
        val_int(&m[MARK_T_MONO], (int64_t)(mk[i].t * SEC));
        val_int(&m[MARK_T_UNIX], 1700000000LL * SEC + (int64_t)(mk[i].t * SEC));
        rows_set_str(mr, &m[MARK_KIND], mk[i].kind, strlen(mk[i].kind));
        rows_set_str(mr, &m[MARK_NAME], mk[i].name, strlen(mk[i].name));
        val_int(&m[MARK_PID], mk[i].pid ? mk[i].pid : 10);
        val_int(&m[MARK_TID], mk[i].pid ? mk[i].pid : 10);
        val_int(&m[MARK_SENDER_DROPPED], 0);
    }
}

static js_model_t *run_model(void)
{
    js_model_cfg_t cfg = {.mode = JS_MODE_RUN,
                          .clk_tck = 100,
                          .monitor_pid = 1,
                          .root_pid = 10,
                          .interval_ns = SEC,
                          .start_mono_ns = 1,
                          .cores_available = 2}; /* started at ~0 s */
    return model_new(&cfg);
}

/* phase_row: the `phases` view row of `name` (the view of the last fed sample), or NULL. */
static const js_value_t *phase_row(js_model_t *m, const char *name, js_view_t *v)
{
    assert_int_equal(model_view(m, "phases", v), 0);
    int c = table_column(v->table, "phase");
    for (size_t i = 0; i < v->rows->nrows; i++) {
        const js_value_t *row = rows_row(v->rows, i);
        if (strcmp(rows_str(v->rows, &row[c]), name) == 0)
            return row;
    }
    return NULL;
}

static double col(const js_view_t *v, const js_value_t *row, const char *name)
{
    int c = table_column(v->table, name);
    assert_true(c >= 0);
    if (!row[c].present)
        return NAN;
    return v->table->cols[c].type == JS_REAL ? row[c].d : (double)row[c].i;
}

static void test_interpolation(void **state)
{
    (void)state;
    static const fmark_t m1[] = {{1.5, "begin", "a", 0}};
    static const fmark_t m3[] = {{3.25, "end", "a", 0}};
    const fmark_t *const marks[4] = {NULL, m1, NULL, m3};
    const size_t n[4] = {0, 1, 0, 1};
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = run_model();
    static const int64_t rss[4] = {100, 500, 200, 100};
    for (int k = 0; k < 4; k++) {
        sample(&s, k + 1, k + 1, rss[k], 1000 * (k + 1), marks[k], n[k]);
        assert_int_equal(model_feed(m, k, &s), 0);
    }
    js_view_t v;
    const js_value_t *a = phase_row(m, "a", &v);
    assert_non_null(a);
    assert_float_equal(col(&v, a, "wall_s"), 1.75, 1e-6);
    assert_float_equal(col(&v, a, "cpu_s"), 1.75, 1e-6); /* 1 core: CPU follows wall time */
    assert_float_equal(col(&v, a, "write_bytes"), 1750, 1e-6);
    assert_float_equal(col(&v, a, "peak_rss_sum_bytes"), 500,
                       0);                        /* intervals (1,2], (2,3], (3,4]: 500, 200, 100 */
    assert_true(isnan(col(&v, a, "peak_bytes"))); /* neither a cgroup nor PSS: no headline figure */
    assert_float_equal(col(&v, a, "activations"), 1, 0);
    assert_float_equal(col(&v, a, "active"), 0, 0);
    const js_value_t *out = phase_row(m, "(outside)", &v);
    assert_non_null(out);
    assert_float_equal(col(&v, out, "wall_s"), 4 - 1.75, 1e-6);
    assert_float_equal(col(&v, out, "cpu_s"), 4 - 1.75, 1e-6);
    model_free(m);
    sample_free(&s);
}

/* Issue 19: a sample taken for a mark is the scope at that mark: the interval's increase up to it goes to the
 * phase it ends, none to the stretch after it; a later sample's peak is not the ended phase's. Fed again
 * without samples.for_marks (a recording of an earlier version), the same marks are interpolated. */
static void test_cut_at_marks(void **state)
{
    (void)state;
    static const fmark_t m1[] = {{0.5, "begin", "a", 0}};
    static const fmark_t m2[] = {{1.9, "end", "a", 0}};
    const fmark_t *const marks[3] = {m1, m2, NULL};
    const size_t n[3] = {1, 1, 0};
    static const int64_t rss[3] = {100, 200, 900}, wb[3] = {0, 1000, 3000};
    for (int cut = 1; cut >= 0; cut--) {
        js_sample_t s;
        sample_init(&s);
        js_model_t *m = run_model();
        for (int k = 0; k < 3; k++) {
            g_for_marks = cut && k == 1;
            sample(&s, k + 1, 0.01 * k, rss[k], wb[k], marks[k], n[k]);
            assert_int_equal(model_feed(m, k, &s), 0);
        }
        g_for_marks = false;
        js_view_t v;
        const js_value_t *a = phase_row(m, "a", &v);
        assert_non_null(a);
        assert_float_equal(col(&v, a, "wall_s"), 1.4, 1e-6); /* wall time from the marks either way */
        /* written in (1, 2]: all of it a's when cut at the end mark, 9/10 interpolated */
        assert_float_equal(col(&v, a, "write_bytes"), cut ? 1000 : 900, 1e-6);
        assert_float_equal(col(&v, a, "peak_rss_sum_bytes"), 200, 0); /* its samples: 1 and 2, not 3's 900 */
        const js_value_t *out = phase_row(m, "(outside)", &v);
        assert_float_equal(col(&v, out, "write_bytes"), cut ? 2000 : 2100, 1e-6);
        assert_float_equal(col(&v, out, "wall_s"), 3 - 1.4, 1e-6);
        model_free(m);
        sample_free(&s);
    }
}

/* A sample taken for a mark but late (the monitor's budget for marks was spent, or the machine delayed it):
 * a phase begun at 1.05 s whose sample came at 2 s, with 0.9 s of CPU meanwhile, is not given 0 s while the
 * 0.05 s before its begin takes 0.9 s (18 cores over no time): the sample is spread over its interval. */
static void test_late_sample_for_marks(void **state)
{
    (void)state;
    static const fmark_t m1[] = {{1.05, "begin", "b", 0}};
    const fmark_t *const marks[3] = {NULL, m1, NULL};
    const size_t n[3] = {0, 1, 0};
    static const double cpu[3] = {0, 0.9, 1.9};
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = run_model();
    for (int k = 0; k < 3; k++) {
        g_for_marks = k == 1;
        sample(&s, k + 1, cpu[k], 100, 0, marks[k], n[k]);
        assert_int_equal(model_feed(m, k, &s), 0);
    }
    g_for_marks = false;
    js_view_t v;
    const js_value_t *b = phase_row(m, "b", &v);
    assert_non_null(b);
    assert_float_equal(col(&v, b, "wall_s"), 1.95, 1e-6);
    assert_float_equal(col(&v, b, "cpu_s"), 0.9 * 0.95 + 1.0, 1e-6);
    const js_value_t *out = phase_row(m, "(outside)", &v);
    assert_float_equal(col(&v, out, "cpu_s"), 0.9 * 0.05, 1e-6);
    model_free(m);
    sample_free(&s);
}

/* sum of self over phases + outside, for one column of the phases view */
static double self_sum(js_model_t *m, const char *c_self, const char *c_out)
{
    js_view_t v;
    assert_int_equal(model_view(m, "phases", &v), 0);
    int cn = table_column(v.table, "phase");
    double sum = 0;
    for (size_t i = 0; i < v.rows->nrows; i++) {
        const js_value_t *row = rows_row(v.rows, i);
        bool outside = strcmp(rows_str(v.rows, &row[cn]), "(outside)") == 0;
        sum += col(&v, row, outside ? c_out : c_self);
    }
    return sum;
}

static void test_nesting_and_sums(void **state)
{
    (void)state;
    static const fmark_t m0[] = {{0.5, "begin", "outer", 0}};
    static const fmark_t m1[] = {{1.5, "begin", "inner", 0}};
    static const fmark_t m2[] = {{2.5, "end", "inner", 0}};
    static const fmark_t m3[] = {{3.5, "end", "outer", 0}, {3.6, "event", "checkpoint", 0}};
    const fmark_t *const marks[4] = {m0, m1, m2, m3};
    const size_t n[4] = {1, 1, 1, 2};
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = run_model();
    for (int k = 0; k < 4; k++) {
        sample(&s, k + 1, k + 1, 100, 0, marks[k], n[k]);
        assert_int_equal(model_feed(m, k, &s), 0);
    }
    js_view_t v;
    const js_value_t *o = phase_row(m, "outer", &v);
    assert_float_equal(col(&v, o, "wall_s"), 3.0, 1e-6);
    assert_float_equal(col(&v, o, "self_wall_s"), 2.0, 1e-6);
    assert_float_equal(col(&v, o, "self_cpu_s"), 2.0, 1e-6);
    const js_value_t *i = phase_row(m, "inner", &v);
    assert_float_equal(col(&v, i, "wall_s"), 1.0, 1e-6);
    assert_float_equal(col(&v, i, "self_wall_s"), 1.0, 1e-6);
    /* the self totals and the outside partition the run: 4 s of wall time and 4 s of CPU */
    assert_float_equal(self_sum(m, "self_wall_s", "wall_s"), 4.0, 1e-6);
    assert_float_equal(self_sum(m, "self_cpu_s", "cpu_s"), 4.0, 1e-6);
    /* the marks view of the last sample: the phase each mark leaves active */
    assert_int_equal(model_view(m, "marks", &v), 0);
    assert_int_equal(v.rows->nrows, 2);
    int cp = table_column(v.table, "phase"), cd = table_column(v.table, "depth"),
        ct = table_column(v.table, "t_s");
    assert_false(rows_row(v.rows, 0)[cp].present); /* after `end outer`: none */
    assert_int_equal(rows_row(v.rows, 0)[cd].i, 0);
    assert_float_equal(rows_row(v.rows, 0)[ct].d, 3.5, 1e-6);
    /* the summary: a phases section whose run totals are the tree's */
    js_buf_t b = {0};
    assert_int_equal(parts_json(m, &b), 0);
    assert_non_null(strstr(b.p, "\"phases\": {"));
    assert_non_null(strstr(b.p, "\"name\": \"outer\""));
    assert_non_null(strstr(b.p, "\"name\": \"checkpoint\""));
    assert_non_null(strstr(b.p, "\"event_count\": 1")); /* once a second "events" member, beside the array */
    assert_non_null(strstr(b.p, "\"begins\": 2"));
    b.len = 0;
    assert_int_equal(parts_text(m, &b), 0);
    assert_non_null(strstr(b.p, "phases           2 phases, 1 event (5 marks)"));
    assert_non_null(strstr(b.p, "    outer "));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
}

static void test_same_phase_many_senders_and_unmatched(void **state)
{
    (void)state;
    static const fmark_t m1[] = {{1.0, "end", "a", 7}, /* nothing open: counted and ignored */
                                 {1.0, "begin", "a", 1},
                                 {1.5, "begin", "a", 2}};
    static const fmark_t m2[] = {{2.0, "end", "a", 1}};
    static const fmark_t m3[] = {{3.0, "end", "a", 2}};
    const fmark_t *const marks[4] = {NULL, m1, m2, m3};
    const size_t n[4] = {0, 3, 1, 1};
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = run_model();
    for (int k = 0; k < 4; k++) {
        sample(&s, k + 1, k + 1, 100, 0, marks[k], n[k]);
        assert_int_equal(model_feed(m, k, &s), 0);
    }
    js_view_t v;
    const js_value_t *a = phase_row(m, "a", &v);
    assert_float_equal(col(&v, a, "wall_s"), 2.0, 1e-6); /* from the first begin to the last end */
    assert_float_equal(col(&v, a, "activations"), 1, 0);
    js_buf_t b = {0};
    assert_int_equal(parts_json(m, &b), 0);
    assert_non_null(strstr(b.p, "\"unmatched_ends\": 1"));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
}

static void test_late_mark_and_short_phase_peak(void **state)
{
    (void)state;
    /* sample 2 holds a mark stamped at 0.5 s, before sample 1 (1 s): it is placed at 1 s; the short phase
     * b (1.2..1.4) gets the RSS of the sample ending its interval (500 at 2 s) */
    static const fmark_t m1[] = {{1.2, "begin", "b", 0}, {1.4, "end", "b", 0}};
    static const fmark_t m2[] = {{0.5, "begin", "late", 0}, {2.5, "end", "late", 0}};
    const fmark_t *const marks[4] = {NULL, m1, m2, NULL};
    const size_t n[4] = {0, 2, 2, 0};
    js_view_t v;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = run_model();
    static const int64_t rss[4] = {100, 500, 200, 100};
    for (int k = 0; k < 4; k++) {
        sample(&s, k + 1, k + 1, rss[k], 0, marks[k], n[k]);
        assert_int_equal(model_feed(m, k, &s), 0);
    }
    const js_value_t *b = phase_row(m, "b", &v);
    assert_float_equal(col(&v, b, "wall_s"), 0.2, 1e-6);
    assert_float_equal(col(&v, b, "cpu_s"), 0.2, 1e-6);
    assert_float_equal(col(&v, b, "peak_rss_sum_bytes"), 500, 0);
    const js_value_t *l = phase_row(m, "late", &v);
    assert_float_equal(col(&v, l, "wall_s"), 0.5, 1e-6); /* 2.0 (placed) .. 2.5 */
    assert_float_equal(self_sum(m, "self_wall_s", "wall_s"), 4.0, 1e-6);
    model_free(m);
    sample_free(&s);
}

/* The recording keeps the marks with their sample: replaying it gives the same phases as the live model. */
static void test_recording_roundtrip(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_phases_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/r.db", dir);
    js_recorder_t *w;
    char err[256];
    assert_int_equal(recorder_open(path, false, &w, err, sizeof(err)), 0);
    recorder_meta(w, "mode", "run");
    recorder_meta(w, "clk_tck", "100");
    recorder_meta(w, "root_pid", "10");
    recorder_meta(w, "interval_ns", "1000000000");
    recorder_meta(w, "start_mono_ns", "1");
    recorder_meta(w, "cores_available", "2");
    static const fmark_t m0[] = {{0.25, "begin", "solve", 0}};
    static const fmark_t m2[] = {{2.75, "end", "solve", 0}};
    const fmark_t *const marks[4] = {m0, NULL, m2, NULL};
    const size_t n[4] = {1, 0, 1, 0};
    js_sample_t s;
    sample_init(&s);
    js_model_t *live = run_model();
    for (int k = 0; k < 4; k++) {
        sample(&s, k + 1, 2 * (k + 1), 100, 0, marks[k], n[k]);
        assert_int_equal(model_feed(live, k, &s), 0);
        assert_int_equal(recorder_write(w, k, &s), 0);
    }
    recorder_meta(w, "stop_unix_ns", "1");
    recorder_close(w);
    js_view_t v;
    double live_cpu = col(&v, phase_row(live, "solve", &v), "cpu_s");
    assert_float_equal(live_cpu, 5.0, 1e-6); /* 2.5 s at 2 cores */
    js_recording_t *r;
    js_model_t *m;
    assert_int_equal(replay_open(path, &r, &m, NULL, NULL, err, sizeof(err)), 0);
    assert_float_equal(col(&v, phase_row(m, "solve", &v), "cpu_s"), live_cpu, 1e-6);
    model_free(m);
    recording_close(r);
    model_free(live);
    sample_free(&s);
    unlink(path);
    rmdir(dir);
}

/* the name index the part finds its phase and event names with: 20,000 distinct names (the table grows
 * many times), each found at its position, absent names not found, a name equal up to its last byte not
 * confused */
static const char *name_at(const void *ctx, size_t i)
{
    return ((char(*)[16])ctx)[i];
}

static void test_name_index(void **state)
{
    (void)state;
    enum { N = 20000 };
    char(*names)[16] = calloc(N, sizeof(*names));
    assert_non_null(names);
    js_nameindex_t x = {0};
    assert_int_equal(nameindex_find(&x, "ev0", name_at, names), -1);
    for (size_t i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "ev%zu", i);
        assert_int_equal(nameindex_find(&x, names[i], name_at, names), -1);
        assert_int_equal(nameindex_add(&x, names[i], i, name_at, names), 0);
    }
    assert_int_equal(x.count, N);
    assert_true(2 * x.count <= x.cap);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(nameindex_find(&x, names[i], name_at, names), (long)i);
    assert_int_equal(nameindex_find(&x, "ev20000", name_at, names), -1);
    assert_int_equal(nameindex_find(&x, "ev1x", name_at, names), -1);
    assert_int_equal(nameindex_find(&x, "", name_at, names), -1);
    nameindex_free(&x);
    assert_int_equal(nameindex_find(&x, "ev1", name_at, names), -1);
    free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_at_marks),
        cmocka_unit_test(test_interpolation),
        cmocka_unit_test(test_nesting_and_sums),
        cmocka_unit_test(test_same_phase_many_senders_and_unmatched),
        cmocka_unit_test(test_late_mark_and_short_phase_peak),
        cmocka_unit_test(test_recording_roundtrip),
        cmocka_unit_test(test_name_index),
        cmocka_unit_test(test_late_sample_for_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
