/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the typed summary table (src/model/figure.c) and of the summary built on it
 * (src/model/summary.c): paths with their placeholders and escapes, groups, errors that stick, the JSON
 * (every row at its path, methods under their keys, null for what is missing), the rows in document order,
 * the merge of a job's nodes; and one fixture summary rendered to JSON and to the short and full text, where
 * each headline figure must show the same value in its unit (tests/unit/test_report.c does the report,
 * compare and facts; tests/integration/test_summary_views.py the job summary and Python).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jtree.h"
#include "model/figure.h"
#include "model/summary.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *json_of(const js_summary_table_t *t)
{
    js_buf_t b = {0};
    assert_int_equal(figure_json(t, &b), 0);
    return b.p;
}

static void t_paths(void **state)
{
    (void)state;
    js_summary_table_t *t = figure_new();
    js_figure_t *r = figure_root(t);
    assert_non_null(fig_put_num(r, "cpu.total_s", "s", 1.5));
    fig_put_array(r, "gpu.devices");
    for (int i = 0; i < 3; i++) {
        fig_put_elem(r, "gpu.devices");
        fig_put_int(r, "gpu.devices[].index", NULL, i);
        fig_put_num(r, "gpu.devices[].energy_j", "J", 10.0 * i);
        fig_put_elem(r, "gpu.devices[].mig");
        fig_put_int(r, "gpu.devices[].mig[].mig_index", NULL, 7 + i);
    }
    fig_name(r, "perf.events", "odd.name[x]{y}\\z");
    fig_put_num(r, "perf.events.{}.count", "events", 42);
    assert_int_equal(figure_error(t), 0);

    assert_true(fig_num(r, "cpu.total_s") == 1.5);
    assert_true(fig_num(r, "gpu.devices[2].energy_j") == 20);
    assert_int_equal(fig_int(r, "gpu.devices[1].mig[0].mig_index", -1), 8);
    assert_int_equal(fig_count(fig_get(r, "gpu.devices")), 3);
    assert_true(isnan(fig_num(r, "gpu.devices[3].energy_j")));
    assert_true(isnan(fig_num(r, "cpu.nothing")));
    assert_null(fig_get(r, "cpu.total_s.deeper"));
    const js_figure_t *ev = fig_kid(fig_get(r, "perf.events"), 0);
    assert_string_equal(ev->name, "odd.name[x]{y}\\z");
    assert_true(fig_num(ev, "count") == 42);
    assert_string_equal(fig_get(r, "gpu.devices[0].energy_j")->unit, "J");

    /* every row's path reads it back, escapes included; rows come in the order they were put */
    js_buf_t p = {0};
    size_t rows = 0;
    const char *first = NULL;
    for (const js_figure_t *f = fig_next_row(r, NULL); f; f = fig_next_row(r, f)) {
        p.len = 0;
        assert_int_equal(fig_path(f, &p), 0);
        assert_ptr_equal(fig_get(r, p.p), f);
        if (!first)
            first = f->name;
        rows++;
    }
    assert_int_equal(rows, 1 + 3 * 3 + 1);
    assert_string_equal(first, "total_s");
    p.len = 0;
    assert_int_equal(fig_path(fig_get(r, "perf.events")->kids[0]->kids[0], &p), 0);
    assert_string_equal(p.p, "perf.events.odd\\.name\\[x\\]\\{y\\}\\\\z.count");
    p.len = 0;
    assert_int_equal(fig_path(fig_get(r, "gpu.devices[1].mig[0].mig_index"), &p), 0);
    assert_string_equal(p.p, "gpu.devices[1].mig[0].mig_index");
    buf_free(&p);

    /* a figure set again keeps its place and takes the new value */
    fig_put_num(r, "cpu.total_s", "s", 2.5);
    assert_true(fig_num(r, "cpu.total_s") == 2.5);
    assert_string_equal(fig_next_row(r, NULL)->name, "total_s");
    figure_free(t);
}

static void t_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "a..b", "a[", "a[x]", "a[1", ".a", "a.", "a{}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        js_summary_table_t *t = figure_new();
        assert_null(fig_put_num(figure_root(t), bad[i], NULL, 1));
        assert_int_equal(figure_error(t), -EINVAL);
        figure_free(t);
    }
    js_summary_table_t *t = figure_new();
    js_figure_t *r = figure_root(t);
    fig_put_num(r, "cpu.total_s", "s", 1);
    assert_null(fig_put_num(r, "cpu.total_s.x", "s", 1)); /* a value where a group would be */
    assert_int_equal(figure_error(t), -EINVAL);
    assert_non_null(fig_put_num(r, "cpu.user_s", "s", 1)); /* later puts still work; the error stays */
    assert_int_equal(figure_error(t), -EINVAL);
    figure_free(t);
    t = figure_new();
    r = figure_root(t);
    fig_put_array(r, "a");
    assert_null(fig_put_num(r, "a[].x", NULL, 1)); /* no element yet */
    assert_null(fig_put_num(r, "b.{}", NULL, 1));  /* no name given */
    assert_null(fig_put_object(r, "a"));           /* an array is not an object */
    assert_int_equal(figure_error(t), -EINVAL);
    figure_free(t);
}

static void t_json(void **state)
{
    (void)state;
    js_summary_table_t *t = figure_new();
    js_figure_t *r = figure_root(t);
    fig_put_text(r, "host", "h\"1");
    fig_put_json(r, "command", "[\"a\",\"b\"]");
    fig_exact(fig_how(fig_put_num(r, "cpu.total_s", "s", 0.25), "total_method", "cgroup: every task"), true);
    fig_put_int(r, "cpu.n", "count", 3);
    fig_put_null(fig_put_int(r, "exit_status", NULL, 0));
    fig_put_num(r, "memory.peak_bytes", "bytes", NAN);
    fig_how(fig_put_num(r, "cs.voluntary", "count", 1), "method", "status");
    fig_how(fig_put_num(r, "cs.involuntary", "count", 2), "method", "status");
    fig_how(fig_put_bool(r, "exact.cpu", false), "cpu_reason", NULL);
    fig_put_array(r, "top.by_cpu");
    fig_put_object(r, "errors");
    char *j = json_of(t);
    assert_string_equal(j, "{\n"
                           "  \"host\": \"h\\\"1\",\n"
                           "  \"command\": [\"a\",\"b\"],\n"
                           "  \"cpu\": {\n"
                           "    \"total_s\": 0.25,\n"
                           "    \"total_method\": \"cgroup: every task\",\n"
                           "    \"n\": 3\n"
                           "  },\n"
                           "  \"exit_status\": null,\n"
                           "  \"memory\": {\n"
                           "    \"peak_bytes\": null\n"
                           "  },\n"
                           "  \"cs\": {\n"
                           "    \"voluntary\": 1,\n"
                           "    \"method\": \"status\",\n"
                           "    \"involuntary\": 2\n"
                           "  },\n"
                           "  \"exact\": {\n"
                           "    \"cpu\": false,\n"
                           "    \"cpu_reason\": null\n"
                           "  },\n"
                           "  \"top\": {\n"
                           "    \"by_cpu\": []\n"
                           "  },\n"
                           "  \"errors\": {}\n"
                           "}\n");
    free(j);
    assert_int_equal(fig_get(r, "cpu.total_s")->exact, FIG_EXACT);
    assert_string_equal(fig_get(r, "cpu.total_s")->method, "cgroup: every task");
    figure_free(t);
}

static void t_merge(void **state)
{
    (void)state;
    js_summary_table_t *node[3], *job = figure_new();
    static const double cpu[3] = {1, NAN, 2}, peak[3] = {10, 30, 20};
    static const bool exact[3] = {true, true, false};
    for (int i = 0; i < 3; i++) {
        node[i] = figure_new();
        js_figure_t *r = figure_root(node[i]);
        fig_merge(fig_put_num(r, "cpu.total_s", "s", cpu[i]), FIG_MERGE_SUM);
        fig_merge(fig_put_num(r, "memory.peak_bytes", "bytes", peak[i]), FIG_MERGE_MAX);
        fig_merge(fig_put_bool(r, "exact.cpu", exact[i]), FIG_MERGE_ALL);
        fig_merge(fig_put_int(r, "gpu.job.devices", "count", i), FIG_MERGE_SUM);
        fig_put_num(r, "cpu.mean_cores", "cores", 1); /* says nothing: not merged */
        fig_merge(fig_put_num(r, "energy.node_energy_j", "J", NAN), FIG_MERGE_SUM);
        assert_int_equal(figure_merge(figure_root(job), figure_croot(node[i])), 0);
    }
    const js_figure_t *j = figure_croot(job);
    assert_true(fig_num(j, "cpu.total_s") == 3);
    assert_string_equal(fig_get(j, "cpu.total_s")->unit, "s");
    assert_true(fig_num(j, "memory.peak_bytes") == 30);
    assert_int_equal(fig_bool(j, "exact.cpu"), 0);
    assert_int_equal(fig_int(j, "gpu.job.devices", -1), 3);
    assert_int_equal(fig_get(j, "gpu.job.devices")->kind, FIG_INT);
    assert_null(fig_get(j, "cpu.mean_cores"));
    assert_true(isnan(fig_num(j, "energy.node_energy_j"))); /* missing everywhere: missing, not 0 */
    for (int i = 0; i < 3; i++)
        figure_free(node[i]);
    figure_free(job);
}

/* ---- one fixture summary, every text view ---- */

static void fixture(js_run_info_t *info, js_summary_t *s)
{
    *info = (js_run_info_t){.version = "0.1.0",
                            .command_json = "[\"./a.out\"]",
                            .command_shell = "./a.out",
                            .host = "node7",
                            .mode = "run",
                            .scope = "process tree",
                            .state = "complete",
                            .have_exit = true,
                            .exit_status = 3,
                            .stop_reason = "scope ended",
                            .recording = "run.db"};
    memset(s, 0, sizeof(*s));
    s->scope = JS_SCOPE_TREE;
    s->wall_s = 12.5;
    s->user_s = 7;
    s->system_s = 1.25;
    s->total_s = 8.25;
    s->tree_total_s = 8.25;
    s->sampled_s = 8;
    s->mean_cores = 0.66;
    s->max_cores = 1.9;
    s->cores_available = 4;
    s->efficiency = 0.165;
    s->cores_bound = "cpuset";
    s->peak_bytes = 3.0 * 1024 * 1024 * 1024;
    s->peak_method = "cgroup: the kernel's high-water mark of every page charged to the scope's cgroup";
    s->peak_exact = true;
    s->peak_pss = 2.5 * 1024 * 1024 * 1024;
    s->peak_private = 2 * 1024.0 * 1024 * 1024;
    s->peak_shared = 0.5 * 1024 * 1024 * 1024;
    s->peak_rss_sum = 4.0 * 1024 * 1024 * 1024;
    s->peak_rss_kernel = 2.75 * 1024 * 1024 * 1024;
    s->peak_kernel_tree = s->peak_bytes;
    s->peak_swap = 0;
    s->peak_rss_main = 1024 * 1024;
    s->peak_rss_desc = 4.0 * 1024 * 1024 * 1024;
    s->pss_samples = 5;
    s->io[IO_READ] = 1536;
    s->io[IO_WRITE] = 10 * 1024 * 1024;
    s->io[IO_RCHAR] = 2048;
    s->io[IO_WCHAR] = 10 * 1024 * 1024 + 7;
    s->io[IO_SYSCR] = 9;
    s->io[IO_SYSCW] = 11;
    s->minflt = 1000;
    s->majflt = 2;
    s->vol_ctxsw = 50;
    s->invol_ctxsw = 5;
    s->procs_total = 6;
    s->procs_max = 5;
    s->threads_max = 9;
    s->taken = 14;
    s->interval_s = 1;
    s->mon_cpu_s = 0.02;
    s->mon_max_rss = 5 * 1024 * 1024;
    s->mon_mean_cost_s = 0.0004;
    s->exact_cpu = true;
    s->exact_peak_rss = true;
    s->cpu_from_cgroup = true;
    s->cpu_file = "cpu.stat";
    s->unattributed_floor_s = 0.12;
    s->unattributed_cpu_s = 0.25;
    snprintf(s->peak_kernel_comm, sizeof(s->peak_kernel_comm), "worker");
    s->top_cpu[0] =
        (js_top_t){.comm = "worker", .cpu_s = 8, .peak_rss = 2.75 * 1024 * 1024 * 1024, .procs = 4};
    s->ntop_cpu = 1;
    s->peak_kernel_pid = 4242;
}

/* A headline figure and how the text summary shows its value (fmt: one %s, the value in its unit). */
typedef struct {
    const char *path, *unit, *fmt;
    bool in_short;
} headline_t;

static const headline_t headlines[] = {
    {"wall_time_s", "s", "wall time        %s", true},
    {"cpu.total_s", "s", "CPU time         %s", true},
    {"cpu.mean_cores", "cores", "mean %s", true},
    {"cpu.cores_available", "cores", " of %s ", true},
    {"cpu.efficiency", "fraction", "efficiency %s", true},
    {"memory.peak_bytes", "bytes", "peak %s [exact: the cgroup's high-water mark]", true},
    {"io.read_bytes", "bytes", "read %s", true},
    {"io.write_bytes", "bytes", "written %s (storage)", true},
    {"processes.total", "count", "processes        %s seen", true},
    {"memory.peak_pss_bytes", "bytes", "PSS              peak %s", false},
    {"memory.peak_rss_sum_bytes", "bytes", "RSS sum          peak %s", false},
    {"memory.peak_rss_kernel_bytes", "bytes", "largest process  %s", false},
    {"faults.minor", "count", "page faults      %s minor", false},
    {"cpu.max_cores", "cores", "max %s of 4 available", false},
    {"samples.taken", "count", "samples          %s every", false},
    {"monitor.cpu_s", "s", "monitor          %s CPU", false},
};

/* shown: a figure's value as the text summary writes its unit */
static const char *shown(char *buf, size_t cap, const char *path, const char *unit, double v)
{
    if (strcmp(unit, "bytes") == 0)
        return fmt_bytes(buf, cap, v);
    if (strcmp(unit, "fraction") == 0) {
        snprintf(buf, cap, "%.1f%%", v * 100);
        return buf;
    }
    if (strcmp(unit, "count") == 0) {
        snprintf(buf, cap, "%.0f", v);
        return buf;
    }
    if (strcmp(unit, "cores") == 0) {
        snprintf(buf, cap, strcmp(path, "cpu.cores_available") == 0 ? "%.4g" : "%.2f", v);
        return buf;
    }
    snprintf(buf, cap, "%.3f s", v); /* seconds */
    return buf;
}

/* jt_path_of: a figure path as jtree writes it ("a[0].b" is "a.0.b"); names here have no escapes */
static const jt_t *jt_path_of(const jt_t *root, const char *path)
{
    char p[256];
    size_t k = 0;
    for (const char *c = path; *c && k + 2 < sizeof(p); c++)
        if (*c == '[')
            p[k++] = '.';
        else if (*c != ']')
            p[k++] = *c;
    p[k] = '\0';
    return jt_path(root, p);
}

static void t_every_text_view(void **state)
{
    (void)state;
    js_run_info_t info;
    js_summary_t s;
    fixture(&info, &s);
    js_summary_table_t *t = summary_build(&info, &s, NULL);
    assert_non_null(t);
    const js_figure_t *r = figure_croot(t);
    js_buf_t full = {0}, brief = {0};
    char *json = json_of(t);
    assert_int_equal(summary_render_text(&full, t, JS_SUMMARY_FULL), 0);
    assert_int_equal(summary_render_text(&brief, t, JS_SUMMARY_SHORT), 0);
    jt_doc_t d;
    assert_int_equal(jt_parse(json, strlen(json), &d), 0);
    /* every row: the JSON has it at its path, with its value */
    js_buf_t p = {0};
    size_t rows = 0;
    for (const js_figure_t *f = fig_next_row(r, NULL); f; f = fig_next_row(r, f), rows++) {
        p.len = 0;
        assert_int_equal(fig_path(f, &p), 0);
        const jt_t *v = jt_path_of(d.root, p.p);
        if (!v)
            fail_msg("%s not in the JSON", p.p);
        if (!f->present)
            assert_int_equal(v->type, JT_NULL);
        else if (f->kind == FIG_NUM || f->kind == FIG_INT)
            assert_true(v->type == JT_NUM && v->num == fig_value(f));
        else if (f->kind == FIG_TEXT)
            assert_string_equal(v->str, f->text);
        else if (f->kind == FIG_BOOL)
            assert_true(v->type == JT_BOOL && v->b == f->b);
    }
    assert_true(rows > 60);
    /* the headline figures: the same value, in its unit, in the short and the full text */
    for (size_t i = 0; i < sizeof(headlines) / sizeof(headlines[0]); i++) {
        const headline_t *h = &headlines[i];
        const js_figure_t *f = fig_get(r, h->path);
        assert_non_null(f);
        assert_true(f->unit && strcmp(f->unit, h->unit) == 0);
        assert_true(jt_num(d.root, h->path) == fig_value(f));
        char v[64], want[160];
        snprintf(want, sizeof(want), h->fmt, shown(v, sizeof(v), h->path, h->unit, fig_value(f)));
        if (!strstr(full.p, want))
            fail_msg("full text lacks \"%s\":\n%s", want, full.p);
        if (h->in_short && !strstr(brief.p, want))
            fail_msg("short text lacks \"%s\":\n%s", want, brief.p);
    }
    /* how it was obtained, from the row */
    assert_non_null(strstr(brief.p, "8.250 s [exact: cgroup]"));
    assert_non_null(strstr(full.p, "[exact: cgroup cpu.stat]; process tree 8.250 s"));
    assert_non_null(strstr(full.p, "(kernel high-water of one process: worker, PID 4242)"));
    assert_non_null(
        strstr(full.p, "top CPU          worker 8.00 s (4 processes); 0.25 s not seen by sampling"));
    assert_non_null(strstr(brief.p, "jobscope 0.1.0: ./a.out on node7\n"));
    assert_non_null(strstr(brief.p, "; exit status 3\n"));
    jt_free(&d);
    free(json);
    buf_free(&p);
    buf_free(&full);
    buf_free(&brief);
    figure_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_paths), cmocka_unit_test(t_errors),          cmocka_unit_test(t_json),
        cmocka_unit_test(t_merge), cmocka_unit_test(t_every_text_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
