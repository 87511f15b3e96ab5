/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the report builder (src/report/report.c, advice.c; tests/jtree.c reads its JSON):
 *   - the JSON reader on the summary's own output, escapes, paths and malformed text;
 *   - every advice rule: fires past its threshold with the evidence, stays silent below it and when its
 *     facts are missing; the order by severity;
 *   - data extraction: the series the report keeps equal the model's derived values sample by sample (golden:
 *     fed the same synthetic run, tests/synth.c);
 *   - a synthetic 24 h run at 1 s (86,400 samples): the page stays within a few MB, and every chart's drawn
 *     data keeps each series' maximum and minimum (and the memory spikes at their exact times);
 *   - a batch job of three nodes (the path merged recordings will take): per-node charts and sections, the
 *     nodes x time heat map, job-level facts, and the imbalance advice;
 *   - a view jobscope does not know: charted generically per unit; the gpu view: curated charts per device
 *     and the GPU advice, or the generic charts when its columns were renamed;
 *   - phases and events from a marks view shaded and marked on the charts;
 *   - an unclosed recording says where its data ends; phases and events shade every time chart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/json.h"
#include "core/jsoncheck.h"
#include "model/summary.h"
#include "report/advice.h"
#include "jtree.h"
#include "report/report.h"
#include "report/units.h"
#include "synth.h"
#include "sources/registry.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GiB (1024.0 * 1024 * 1024)

/* ---- helpers ---- */

typedef struct {
    double *cores, *rss;
    size_t n;
} golden_t;

/* build_node: feed a synthetic run to a model and to node `name` of `rep`; finish it with `state`. Keeps the
 * model's per-sample cores and RSS in *gold when given. */
static void build_node(js_report_t *rep, const synth_cfg_t *cfg, const char *name, const char *state,
                       golden_t *gold)
{
    synth_t *g = synth_new(cfg);
    assert_non_null(g);
    js_model_cfg_t mc;
    synth_model_cfg(g, &mc);
    js_model_t *m = model_new(&mc);
    assert_non_null(m);
    js_sample_t s = {0};
    assert_int_equal(sample_init(&s), 0);
    size_t node, n = synth_count(g);
    assert_int_equal(report_add_node(rep, name, &node), 0);
    if (gold) {
        gold->cores = malloc(n * sizeof(double));
        gold->rss = malloc(n * sizeof(double));
        gold->n = 0;
        assert_non_null(gold->cores);
        assert_non_null(gold->rss);
    }
    int64_t seq = 0;
    int r;
    while ((r = synth_next(g, &s)) == 1) {
        assert_int_equal(model_feed(m, seq++, &s), 0);
        assert_int_equal(report_feed(rep, node, m, &s), 0);
        if (gold) {
            gold->cores[gold->n] = model_point(m)->cpu_cores;
            gold->rss[gold->n++] = model_point(m)->rss;
        }
    }
    assert_int_equal(r, 0);
    js_summary_t su;
    model_summary(m, &su);
    bool complete = strcmp(state, "complete") == 0;
    js_run_info_t info = {.version = "0.1.0",
                          .command_json = "[\"./run.sh\",\"--synthetic\"]",
                          .command_shell = "./run.sh --synthetic",
                          .host = name,
                          .mode = "run",
                          .scope = "process tree",
                          .state = state,
                          .have_exit = complete,
                          .exit_status = 0,
                          .recording = "synthetic.db"};
    js_report_run_t run = {.start_unix_ns = 1714564800LL * 1000000000LL,
                           .stop_unix_ns =
                               complete ? 1714564800LL * 1000000000LL + (int64_t)(cfg->hours * 3600e9) : 0};
    assert_int_equal(report_finish_node(rep, node, m, &info, &su, &run), 0);
    model_free(m);
    sample_free(&s);
    synth_free(g);
}

static char *page_of(js_report_t *rep)
{
    js_buf_t b = {0};
    assert_int_equal(report_html(rep, &b), 0);
    assert_non_null(b.p);
    return b.p; /* caller frees */
}

/* figure: the markup of the figure with id `id` (a pointer into page, NUL-terminated copy returned). */
static char *figure(const char *page, const char *id)
{
    char key[128];
    snprintf(key, sizeof(key), "id=\"%s\">", id);
    const char *a = strstr(page, key);
    if (!a)
        return NULL;
    while (a > page && strncmp(a, "<figure", 7) != 0)
        a--;
    const char *b = strstr(a, "</figure>");
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

/* chart_json: the parsed data block of a figure. */
static void chart_json(const char *fig, jt_doc_t *doc)
{
    const char *a = strstr(fig, "class=\"cd\">");
    assert_non_null(a);
    a += strlen("class=\"cd\">");
    const char *b = strstr(a, "</script>");
    assert_non_null(b);
    assert_int_equal(jt_parse(a, (size_t)(b - a), doc), 0);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static bool close6(double a, double b)
{
    return fabs(a - b) <= 1e-5 * fmax(fabs(a), fabs(b)) + 1e-12;
}

/* ---- the JSON reader ---- */

static void t_jtree(void **state)
{
    (void)state;
    const char *txt =
        "{\"a\": {\"b\": [1, 2.5e3, -0.25, {\"c\": \"x\\u00e9\\ud83d\\ude00\\n\"}]}, \"t\": true, "
        "\"f\": false, \"z\": null, \"s\": \"q\\\"\\\\/\"}";
    jt_doc_t d;
    assert_int_equal(jt_parse(txt, strlen(txt), &d), 0);
    assert_true(jt_num(d.root, "a.b.0") == 1);
    assert_true(jt_num(d.root, "a.b.1") == 2500);
    assert_true(jt_num(d.root, "a.b.2") == -0.25);
    assert_string_equal(jt_str(d.root, "a.b.3.c"), "x\xc3\xa9\xf0\x9f\x98\x80\n");
    assert_string_equal(jt_str(d.root, "s"), "q\"\\/");
    assert_true(jt_path(d.root, "t")->b);
    assert_int_equal(jt_path(d.root, "z")->type, JT_NULL);
    assert_true(isnan(jt_num(d.root, "z")));
    assert_true(isnan(jt_num(d.root, "a.b.9")));
    assert_null(jt_path(d.root, "a.x"));
    assert_null(jt_str(d.root, "a.b.0"));
    assert_int_equal(jt_path(d.root, "a.b")->len, 4);
    jt_free(&d);

    static const char *const bad[] = {"",    "{",          "[1,]",     "{\"a\" 1}", "01",
                                      "1.",  "-",          "\"\\x\"",  "[1] 2",     "\"a\nb\"",
                                      "nul", "{\"a\":1,}", "\"\\u12\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(jt_parse(bad[i], strlen(bad[i]), &d), -EINVAL);
        jt_free(&d);
    }
    /* nesting beyond 64 levels */
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    assert_int_equal(jt_parse(deep, 200, &d), -EINVAL);
    jt_free(&d);

    /* the summary's own output reads back */
    js_model_cfg_t mc = {.clk_tck = 100, .interval_ns = 1000000000};
    js_model_t *m = model_new(&mc);
    js_summary_t su;
    model_summary(m, &su);
    js_run_info_t info = {.version = "0.1.0",
                          .command_json = "[\"a\\u0001\"]",
                          .host = "h",
                          .mode = "run",
                          .state = "complete"};
    js_buf_t b = {0};
    assert_int_equal(summary_json(&b, &info, &su, m), 0);
    assert_int_equal(jt_parse(b.p, b.len, &d), 0);
    assert_string_equal(jt_str(d.root, "host"), "h");
    assert_string_equal(jt_str(d.root, "command.0"), "a\x01");
    assert_true(jt_path(d.root, "cpu.total_s")->type == JT_NULL);
    jt_free(&d);
    buf_free(&b);
    model_free(m);
}

/* whatever `jobscope mark` accepts as data (json_valid: up to JSONCHECK_DEPTH_MAX deep, numbers of any
 * length) reads back from where the summary puts it (phases.events[i].last_data) */
static void t_jtree_mark_data(void **state)
{
    (void)state;
    enum { CAP = 8192 };
    static char data[CAP], doc[CAP + 128];
    jt_doc_t d;
    /* a number of 4000 digits (mark takes 4096 bytes), then one beyond a double's range */
    memset(data, '9', 4000);
    data[4000] = '\0';
    const char *nums[] = {data, "1e999", "-1e999",
                          "0.000000000000000000000000000000000000000000000000000000001e-400"};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        assert_true(json_valid(nums[i], strlen(nums[i])));
        int n = snprintf(doc, sizeof(doc),
                         "{\"phases\": {\"events\": [{\"name\": \"e\", \"last_data\": %s}]}}", nums[i]);
        assert_int_equal(jt_parse(doc, (size_t)n, &d), 0);
        double v = jt_num(d.root, "phases.events.0.last_data");
        assert_true(i == 0 || i == 1 ? v > 1e300 : i == 2 ? v < -1e300 : v == 0);
        jt_free(&d);
    }
    /* the deepest value mark accepts, objects and arrays */
    for (int obj = 0; obj < 2; obj++) {
        size_t n = 0;
        for (int k = 0; k < JSONCHECK_DEPTH_MAX; k++)
            n += (size_t)snprintf(data + n, CAP - n, "%s", obj ? "{\"a\":" : "[");
        n += (size_t)snprintf(data + n, CAP - n, "1");
        for (int k = 0; k < JSONCHECK_DEPTH_MAX; k++)
            data[n++] = obj ? '}' : ']';
        data[n] = '\0';
        assert_true(json_valid(data, n));
        int m = snprintf(doc, sizeof(doc),
                         "{\"phases\": {\"events\": [{\"name\": \"e\", \"last_data\": %s}]}}", data);
        assert_int_equal(jt_parse(doc, (size_t)m, &d), 0);
        assert_non_null(jt_path(d.root, "phases.events.0.last_data"));
        jt_free(&d);
    }
}

/* ---- advice ---- */

static size_t fire(const js_facts_t *f, const char *rule, js_advice_item_t *ret)
{
    js_advice_item_t items[32];
    size_t n = advice_eval(f, items, 32), hit = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i].rule, rule) == 0) {
            if (ret)
                *ret = items[i];
            hit++;
        }
    return hit;
}

static js_facts_t base_facts(void)
{
    js_facts_t f;
    facts_init(&f);
    f.wall_s = 3600;
    f.interval_s = 1;
    f.taken = 3601;
    f.missed = 0;
    f.cores_available = 8;
    f.cpu_s = 8 * 3600 * 0.9;
    f.mean_cores = 7.2;
    f.max_cores = 8;
    f.p95_cores = 7.9;
    f.efficiency = 0.9;
    f.peak_rss = f.peak_rss_kernel = f.mem_peak = 2 * GiB;
    f.host_mem_total = 64 * GiB;
    f.peak_swap = 0;
    f.majflt = 0;
    f.unattributed_cpu_s = 10;
    f.mon_cpu_s = 3;
    f.psi_cpu_some_job_mean = 0.01;
    f.psi_cpu_some_host_mean = 0.05;
    f.host_busy_mean = 0.6;
    f.steal_mean = 0;
    f.throttled_fraction = 0;
    return f;
}

/* A job that waited for CPU is never told to request fewer cores: the cause is named instead. */
static void t_advice_starved(void **state)
{
    (void)state;
    js_advice_item_t it;
    /* the complaint of issue 24: a low core count on a saturated host, 60% of the time waiting */
    js_facts_t f = base_facts();
    f.mean_cores = 1;
    f.p95_cores = f.max_cores = 1.9;
    f.efficiency = 0.125;
    f.psi_cpu_some_job_mean = 0.6;
    f.psi_cpu_some_host_mean = 0.8;
    f.host_busy_mean = 1;
    assert_int_equal(fire(&f, "cpu-starved", &it), 1);
    assert_int_equal(it.severity, ADVICE_WARN);
    assert_non_null(strstr(it.sentence, "while the host was busy"));
    assert_non_null(
        strstr(it.evidence, "CPU pressure (some) job 60%, host 80% of the time; host busy 100%; steal 0%"));
    assert_non_null(strstr(it.threshold, "above 20% on average"));
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    js_advice_item_t items[32];
    size_t n = advice_eval(&f, items, 32);
    for (size_t i = 0; i < n; i++)
        assert_null(strstr(items[i].sentence, "Request 1 core"));
    /* at the threshold: silent; the allocation rule judges again */
    f.psi_cpu_some_job_mean = 0.2;
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 1);
    /* every core of its own busy and still waiting: more threads than cores */
    f = base_facts();
    f.mean_cores = 7.9;
    f.efficiency = 7.9 / 8;
    f.psi_cpu_some_job_mean = 0.5;
    assert_int_equal(fire(&f, "cpu-starved", &it), 1);
    assert_non_null(strstr(it.sentence, "more runnable threads than cores"));
    /* no cgroup: the host's pressure counts only while the host was busy */
    f = base_facts();
    f.mean_cores = 2;
    f.efficiency = 0.25;
    f.psi_cpu_some_job_mean = NAN;
    f.psi_cpu_some_host_mean = 0.5;
    f.host_busy_mean = 0.95;
    assert_int_equal(fire(&f, "cpu-starved", NULL), 1);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    f.host_busy_mean = 0.85;
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 1);
    f.host_busy_mean = 0.95;
    f.psi_cpu_some_job_mean = 0.05; /* the job's own pressure, when known, decides */
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    /* steal */
    f = base_facts();
    f.mean_cores = 2;
    f.efficiency = 0.25;
    f.steal_mean = 0.11;
    assert_int_equal(fire(&f, "cpu-starved", &it), 1);
    assert_non_null(strstr(it.sentence, "steal"));
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    f.steal_mean = 0.1;
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    /* quota throttling: its own rule, and no advice to shrink the allocation */
    f = base_facts();
    f.mean_cores = 1;
    f.max_cores = 1.1;
    f.efficiency = 0.125;
    f.throttled_fraction = 0.11;
    assert_int_equal(fire(&f, "cpu-throttled", &it), 1);
    assert_non_null(strstr(it.evidence, "throttled in 11% of the quota periods"));
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    f.psi_cpu_some_job_mean = 0.9; /* the quota's throttling is the job's pressure: one rule, the quota's */
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    assert_int_equal(fire(&f, "cpu-throttled", NULL), 1);
    f.psi_cpu_some_job_mean = 0.01;
    assert_true(advice_cpu_starved(&f));
    f.throttled_fraction = 0.1;
    assert_false(advice_cpu_starved(&f));
    assert_int_equal(fire(&f, "cpu-serial", NULL), 1);
    /* I/O bound: the job's own pressure first */
    f = base_facts();
    f.psi_io_some_mean = 0.01;
    f.psi_io_some_job_mean = 0.3;
    assert_int_equal(fire(&f, "io-pressure", &it), 1);
    assert_non_null(strstr(it.evidence, "I/O pressure (some) job 30%, host 1% of the time"));
    f.psi_io_some_job_mean = 0.05;
    f.psi_io_some_mean = 0.5; /* another job's I/O does not make this one I/O bound */
    assert_int_equal(fire(&f, "io-pressure", NULL), 0);
}

static void t_advice_rules(void **state)
{
    (void)state;
    js_advice_item_t it;
    /* a healthy run: nothing fires; missing facts fire nothing either */
    js_facts_t f = base_facts();
    js_advice_item_t items[32];
    assert_int_equal(advice_eval(&f, items, 32), 0);
    js_facts_t empty;
    facts_init(&empty);
    assert_int_equal(advice_eval(&empty, items, 32), 0);

    /* over-allocated: below 50% fires with the recommendation from the 95th percentile */
    f = base_facts();
    f.mean_cores = 2;
    f.efficiency = 0.25 - 1e-9;
    f.p95_cores = 2.6;
    f.max_cores = 3.1;
    assert_int_equal(fire(&f, "cpu-over-allocated", &it), 1);
    assert_int_equal(it.severity, ADVICE_WARN);
    assert_non_null(strstr(it.sentence, "Request 3 cores"));
    assert_non_null(strstr(it.evidence, "CPU efficiency 25%"));
    assert_non_null(strstr(it.evidence, "CPU pressure (some) job 1%, host 5% of the time; host busy 60%"));
    assert_non_null(strstr(it.threshold, "below 50% of the cores available"));
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    f.efficiency = 0.49;
    assert_int_equal(fire(&f, "cpu-over-allocated", &it), 1);
    assert_int_equal(it.severity, ADVICE_INFO);
    f.efficiency = 0.5;
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    /* serial: one core busy of many */
    f.efficiency = 0.1;
    f.max_cores = 1.05;
    assert_int_equal(fire(&f, "cpu-serial", &it), 1);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    assert_non_null(strstr(it.sentence, "ran serially"));
    assert_non_null(strstr(it.threshold, "below 1.2 cores"));
    f.max_cores = 1.2;
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    f.max_cores = 1.05;
    f.cores_available = 1; /* one core: nothing to give back */
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    f.cores_available = 8;
    f.wall_s = 5; /* too short to judge */
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);

    /* pressure facts unknown (no PSI): the allocation rules still judge, and say so */
    f = base_facts();
    f.psi_cpu_some_job_mean = f.psi_cpu_some_host_mean = f.host_busy_mean = f.steal_mean = NAN;
    f.mean_cores = f.p95_cores = f.max_cores = 2;
    f.efficiency = 0.25;
    assert_int_equal(fire(&f, "cpu-over-allocated", &it), 1);
    assert_non_null(strstr(it.evidence, "CPU pressure not recorded; throttled in 0% of the quota periods"));
    /* memory near the limit, far below it, on the node without one, OOM kills */
    f = base_facts();
    f.mem_limit = 10 * GiB;
    f.mem_peak = 9 * GiB;
    assert_int_equal(fire(&f, "memory-near-limit", &it), 1);
    assert_non_null(strstr(it.evidence, "peak 9 GiB of a limit of 10 GiB (90%)"));
    f.mem_peak = 8.99 * GiB;
    assert_int_equal(fire(&f, "memory-near-limit", NULL), 0);
    assert_int_equal(fire(&f, "memory-far-below", NULL), 0);
    f.mem_peak = 2 * GiB;
    assert_int_equal(fire(&f, "memory-far-below", &it), 1);
    assert_non_null(strstr(it.sentence, "request 3 GiB instead of 10 GiB"));
    f.mem_limit = 2.5 * GiB; /* less than 1 GiB unused: not worth it */
    f.mem_peak = 0.5 * GiB;
    assert_int_equal(fire(&f, "memory-far-below", NULL), 1);
    f.mem_limit = 1.2 * GiB;
    f.mem_peak = 0.25 * GiB;
    assert_int_equal(fire(&f, "memory-far-below", NULL), 0);
    f = base_facts();
    f.peak_rss = 60 * GiB;
    assert_int_equal(fire(&f, "memory-host", &it), 1);
    assert_non_null(strstr(it.evidence, "of 64 GiB on the node"));
    f.mem_limit = 100 * GiB; /* with a limit the limit rules apply instead */
    assert_int_equal(fire(&f, "memory-host", NULL), 0);
    f = base_facts();
    f.oom_kills = 2;
    assert_int_equal(fire(&f, "oom-kill", &it), 1);
    assert_int_equal(it.severity, ADVICE_CRIT);
    assert_non_null(strstr(it.evidence, "2 OOM kills"));
    f.oom_kills = 0;
    assert_int_equal(fire(&f, "oom-kill", NULL), 0);

    /* swapping and pressure */
    f = base_facts();
    f.peak_swap = 4096;
    assert_int_equal(fire(&f, "swap", NULL), 1);
    f.peak_swap = 0;
    f.psi_mem_some_mean = 0.06;
    assert_int_equal(fire(&f, "swap", NULL), 1);
    f.psi_mem_some_mean = 0.05;
    assert_int_equal(fire(&f, "swap", NULL), 0);
    f.psi_io_some_mean = 0.11;
    assert_int_equal(fire(&f, "io-pressure", &it), 1);
    assert_non_null(strstr(it.evidence, "I/O pressure (some) host 11% of the time"));
    f.psi_io_some_mean = 0.1;
    assert_int_equal(fire(&f, "io-pressure", NULL), 0);
    f.psi_io_some_mean = NAN;
    f.iowait_mean = 0.2; /* without PSI: iowait */
    assert_int_equal(fire(&f, "io-pressure", NULL), 1);

    /* GPUs: idle below 5%, underused below 50% */
    f = base_facts();
    f.ngpus = 4;
    const double util[4] = {0.95, 0.02, 0.3, 0.049};
    for (int g = 0; g < 4; g++) {
        snprintf(f.gpu_name[g], sizeof(f.gpu_name[0]), "GPU %d", g);
        f.gpu_util_mean[g] = util[g];
    }
    assert_int_equal(fire(&f, "gpu-idle", &it), 1);
    assert_non_null(strstr(it.sentence, "2 of the job's 4 GPUs"));
    assert_non_null(strstr(it.evidence, "GPU 1 2%, GPU 3 4.9%"));
    assert_int_equal(fire(&f, "gpu-low", &it), 1);
    assert_non_null(strstr(it.evidence, "GPU 2 30%"));
    assert_null(strstr(it.evidence, "GPU 0"));

    /* imbalance across nodes */
    f = base_facts();
    f.nnodes = 3;
    const double per[3] = {6, 5.5, 4};
    for (int k = 0; k < 3; k++) {
        snprintf(f.node_name[k], sizeof(f.node_name[0]), "node%d", k + 1);
        f.node_mean_cores[k] = per[k];
    }
    assert_int_equal(fire(&f, "node-imbalance", &it), 1);
    assert_non_null(strstr(it.evidence, "6 cores on node1, 4 cores on node3"));
    f.node_mean_cores[2] = 4.81;
    assert_int_equal(fire(&f, "node-imbalance", NULL), 0);

    /* samples missed, short-lived processes, the monitor's cost, an unclosed recording */
    f = base_facts();
    f.missed = 40;
    assert_int_equal(fire(&f, "samples-missed", &it), 1);
    assert_non_null(strstr(it.sentence, "-i 2 s or more"));
    f.missed = 36;
    assert_int_equal(fire(&f, "samples-missed", NULL), 0);
    f = base_facts();
    f.unattributed_cpu_s = 0.2 * f.cpu_s;
    assert_int_equal(fire(&f, "short-lived", NULL), 1);
    f.mon_cpu_s = 0.021 * f.wall_s;
    assert_int_equal(fire(&f, "monitor-overhead", NULL), 1);
    f = base_facts();
    f.complete = false;
    f.data_end_s = 754;
    assert_int_equal(fire(&f, "incomplete", &it), 1);
    assert_non_null(strstr(it.sentence, "the data ends 12:34 after the start"));

    /* order: problems first, then warnings, then notes */
    f = base_facts();
    f.oom_kills = 1;
    f.missed = 1000;
    f.mon_cpu_s = 1000;
    size_t n = advice_eval(&f, items, 32);
    assert_int_equal(n, 3);
    assert_string_equal(items[0].rule, "oom-kill");
    assert_string_equal(items[1].rule, "samples-missed");
    assert_string_equal(items[2].rule, "monitor-overhead");
    /* every rule has an id, a threshold text with exactly one %s when it has a limit unit */
    for (size_t i = 0; i < advice_nrules; i++) {
        assert_non_null(advice_rules[i].id);
        const char *p = strstr(advice_rules[i].rule_text, "%s");
        assert_true(advice_rules[i].limit_unit ? p && !strstr(p + 2, "%s") : !p);
    }
}

/* ---- extraction and the 24 h page ---- */

/* The job's demand (cores in use + its CPU pressure, per sample) decides serial against parallel whatever the
 * load: one thread waiting on a saturated host is serial (and not told it was starved), several threads held
 * to under a core are not. */
static void t_advice_demand(void **state)
{
    (void)state;
    js_advice_item_t it;
    /* one thread on a saturated host: waited 60% of the time, ran 0.4 cores; demand 1 core */
    js_facts_t f = base_facts();
    f.mean_cores = 0.4;
    f.max_cores = 0.6;
    f.p95_cores = 0.55;
    f.efficiency = 0.05;
    f.psi_cpu_some_job_mean = 0.6;
    f.host_busy_mean = 1;
    f.peak_demand_cores = 1.02;
    assert_int_equal(fire(&f, "cpu-serial", &it), 1);
    assert_non_null(strstr(it.sentence, "Request 1 core"));
    assert_non_null(strstr(it.sentence, "It also waited for CPU (60% of the time)"));
    assert_non_null(strstr(it.evidence, "demand (cores in use + waiting) at most 1.02 cores"));
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    /* at the threshold: several threads wanted cores; starved, and no advice to request fewer */
    f.peak_demand_cores = 1.2;
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    assert_int_equal(fire(&f, "cpu-starved", NULL), 1);
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    /* without the job's pressure: the old rule (a job that waited is not judged) */
    f.peak_demand_cores = NAN;
    f.psi_cpu_some_job_mean = NAN;
    f.psi_cpu_some_host_mean = 0.6;
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    assert_int_equal(fire(&f, "cpu-starved", NULL), 1);
    /* a quota: cpu-throttled, whatever the demand */
    f = base_facts();
    f.mean_cores = 0.1;
    f.max_cores = 0.1;
    f.efficiency = 0.0125;
    f.throttled_fraction = 0.9;
    f.peak_demand_cores = 1;
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    assert_int_equal(fire(&f, "cpu-throttled", NULL), 1);
    /* a parallel burst held under 1.2 cores by the load, then idle: over-allocated, not serial */
    f = base_facts();
    f.mean_cores = 0.1;
    f.max_cores = 0.7;
    f.p95_cores = 0.5;
    f.efficiency = 0.0125;
    f.psi_cpu_some_job_mean = 0.1;
    f.peak_demand_cores = 1.7;
    assert_int_equal(fire(&f, "cpu-over-allocated", &it), 1);
    assert_non_null(strstr(it.threshold, "a peak demand"));
    assert_int_equal(fire(&f, "cpu-serial", NULL), 0);
    assert_int_equal(fire(&f, "cpu-starved", NULL), 0);
    f.peak_demand_cores = 1.1; /* its demand stayed at one core: serial instead */
    assert_int_equal(fire(&f, "cpu-over-allocated", NULL), 0);
    assert_int_equal(fire(&f, "cpu-serial", NULL), 1);
}

static void t_extraction_golden(void **state)
{
    (void)state;
    js_report_t *rep = report_new();
    golden_t gold;
    synth_cfg_t cfg = {.hours = 0.25};
    build_node(rep, &cfg, "node001", "complete", &gold);
    const double *t, *v;
    size_t n;
    assert_non_null(v = report_series(rep, 0, "tree", "cpu_cores", "", &t, &n));
    assert_int_equal(n, gold.n);
    assert_int_equal(n, 901);
    for (size_t i = 0; i < n; i++) {
        assert_true(t[i] == (double)i);
        assert_true((isnan(v[i]) && isnan(gold.cores[i])) || v[i] == gold.cores[i]);
    }
    assert_non_null(v = report_series(rep, 0, "tree", "rss_sum_bytes", "", &t, &n));
    for (size_t i = 0; i < n; i++)
        assert_true(v[i] == gold.rss[i]);
    /* labelled views: a series per group; per-CPU views as mean, min, max in display units (Hz) */
    assert_non_null(report_series(rep, 0, "network", "rx_bytes_per_s", "eth0", &t, &n));
    assert_non_null(report_series(rep, 0, "energy", "power_w", "intel-rapl:0 package-0", &t, &n));
    const double *mean = report_series(rep, 0, "cpufreq", "freq_mhz", "mean", &t, &n);
    const double *lo = report_series(rep, 0, "cpufreq", "freq_mhz", "min", &t, &n);
    const double *hi = report_series(rep, 0, "cpufreq", "freq_mhz", "max", &t, &n);
    assert_non_null(mean);
    assert_true(lo[5] >= 2e9 && lo[5] <= mean[5] && mean[5] <= hi[5] && hi[5] <= 3.2e9);
    assert_null(report_series(rep, 0, "cpufreq", "freq_mhz", "cpu 0", &t, &n));
    assert_null(report_series(rep, 0, "process", "cpu_cores", "", &t, &n)); /* per process: not kept */
    assert_null(report_series(rep, 0, "tree", "dt_s", "", &t, &n));
    assert_null(report_series(rep, 0, "tree", "cpu_s", "", &t, &n)); /* cumulative: the rate is kept */
    assert_non_null(report_series(rep, 0, "energy", "energy_j", "intel-rapl:0 package-0", &t, &n));

    const js_facts_t *f = report_facts(rep);
    assert_non_null(f);
    assert_true(f->complete);
    assert_true(f->cores_available == 8);
    assert_true(f->p95_cores > f->mean_cores && f->p95_cores <= 8);
    assert_true(f->host_mem_total == 64 * GiB);
    assert_true(f->psi_io_some_mean > 0.01 && f->psi_io_some_mean < 0.1);
    free(gold.cores);
    free(gold.rss);
    report_free(rep);
}

static void t_day_page(void **state)
{
    (void)state;
    js_report_t *rep = report_new();
    synth_cfg_t cfg = {.hours = 24};
    build_node(rep, &cfg, "node001", "complete", NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *page = page_of(rep);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t len = strlen(page);
    print_message("24 h page: %zu bytes, rendered in %.3f s\n", len,
                  (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    assert_true(len < 4 * 1024 * 1024);
    assert_true(len > 100 * 1024);

    /* every line chart's drawn data keeps each series' extremes */
    static const char *const charts[] = {"cpu",   "host-cpu", "cpufreq",   "mem",      "host-mem",
                                         "io",    "io-calls", "host-disk", "pressure", "net",
                                         "power", "energy",   "temp",      "procs"};
    for (size_t c = 0; c < sizeof(charts) / sizeof(charts[0]); c++) {
        char *fig = figure(page, charts[c]);
        if (!fig)
            fail_msg("chart %s missing", charts[c]);
        jt_doc_t d;
        chart_json(fig, &d);
        const jt_t *series = jt_path(d.root, "s");
        assert_non_null(series);
        assert_true(series->len >= 1);
        for (const jt_t *s = series->child; s; s = s->next) {
            const jt_t *v = jt_get(s, "v");
            double mx = -INFINITY, mn = INFINITY;
            for (const jt_t *x = v->child; x; x = x->next)
                if (x->type == JT_NUM) {
                    mx = fmax(mx, x->num);
                    mn = fmin(mn, x->num);
                }
            assert_true(v->len <= 8 * 724);
            assert_true(isfinite(mx));
            (void)mn;
        }
        jt_free(&d);
        free(fig);
    }
    /* the memory chart: the RSS series' maximum and minimum, and every spike at its second */
    const double *t, *v;
    size_t n;
    v = report_series(rep, 0, "tree", "rss_sum_bytes", "", &t, &n);
    assert_int_equal(n, 86401);
    double vmax = -INFINITY, vmin = INFINITY;
    for (size_t i = 0; i < n; i++) {
        vmax = fmax(vmax, v[i]);
        vmin = fmin(vmin, v[i]);
    }
    char *fig = figure(page, "mem");
    jt_doc_t d;
    chart_json(fig, &d);
    assert_string_equal(jt_str(jt_path(d.root, "s.0"), "n"),
                        "memory (no page twice)"); /* the headline first */
    const jt_t *rss = jt_path(d.root, "s.1");
    assert_string_equal(jt_str(rss, "n"), "RSS sum (shared pages per process)");
    const jt_t *tt = jt_get(rss, "t"), *vv = jt_get(rss, "v");
    double dmax = -INFINITY, dmin = INFINITY;
    for (const jt_t *x = vv->child; x; x = x->next) {
        dmax = fmax(dmax, x->num);
        dmin = fmin(dmin, x->num);
    }
    assert_true(close6(dmax, vmax));
    assert_true(close6(dmin, vmin));
    /* the cores in use and the host's busy share likewise */
    static const struct {
        const char *chart, *view, *col;
    } more[] = {{"cpu", "tree", "cpu_cores"}, {"host-cpu", "system", "cpu_util_fraction"}};
    for (size_t k = 0; k < sizeof(more) / sizeof(more[0]); k++) {
        const double *mt, *mv;
        size_t mn;
        assert_non_null(mv = report_series(rep, 0, more[k].view, more[k].col, "", &mt, &mn));
        double smax = -INFINITY, smin = INFINITY, cmax = -INFINITY, cmin = INFINITY;
        for (size_t i = 0; i < mn; i++)
            if (isfinite(mv[i])) {
                smax = fmax(smax, mv[i]);
                smin = fmin(smin, mv[i]);
            }
        char *f2 = figure(page, more[k].chart);
        jt_doc_t d2;
        chart_json(f2, &d2);
        for (const jt_t *x = jt_path(d2.root, "s.0.v")->child; x; x = x->next)
            if (x->type == JT_NUM) {
                cmax = fmax(cmax, x->num);
                cmin = fmin(cmin, x->num);
            }
        assert_true(close6(cmax, smax));
        assert_true(close6(cmin, smin));
        jt_free(&d2);
        free(f2);
    }
    synth_t *g = synth_new(&cfg);
    for (unsigned k = 0; k < SYNTH_SPIKES; k++) {
        size_t at;
        double bytes;
        synth_spike(g, k, &at, &bytes);
        bool found = false;
        const jt_t *x = tt->child, *y = vv->child;
        for (; x && y && !found; x = x->next, y = y->next)
            found = x->num == t[at] && close6(y->num, v[at]);
        assert_true(found);
        assert_true(v[at] > bytes); /* the tree sum at the spike holds it */
    }
    synth_free(g);
    jt_free(&d);
    free(fig);
    /* the kernel peak is marked, the cores available drawn */
    assert_non_null(strstr(page, "kernel peak 11.7 GiB"));
    assert_non_null(strstr(page, "cores available 8"));
    free(page);
    report_free(rep);
}

/* ---- several nodes ---- */

static void t_nodes(void **state)
{
    (void)state;
    js_report_t *rep = report_new();
    const char *names[3] = {"node001", "node002", "node003"};
    for (unsigned k = 0; k < 3; k++) {
        synth_cfg_t cfg = {.hours = 0.5, .node = k};
        build_node(rep, &cfg, names[k], "complete", NULL);
    }
    const js_facts_t *f = report_facts(rep);
    assert_non_null(f);
    assert_int_equal(f->nnodes, 3);
    assert_true(f->cores_available == 24);
    assert_true(f->node_mean_cores[0] > f->node_mean_cores[1] &&
                f->node_mean_cores[1] > f->node_mean_cores[2]);
    char *page = page_of(rep);
    /* the heat map: one row per node */
    char *heat = figure(page, "node-heat");
    assert_non_null(heat);
    jt_doc_t d;
    chart_json(heat, &d);
    assert_int_equal(jt_path(d.root, "rows")->len, 3);
    assert_int_equal(jt_path(d.root, "v")->len, 3);
    for (unsigned k = 0; k < 3; k++)
        assert_string_equal(jt_str(d.root, (const char *[]){"rows.0", "rows.1", "rows.2"}[k]), names[k]);
    /* node003 runs at half node001's load: its cells are darker (lower) on average */
    double mean[3] = {0, 0, 0};
    for (unsigned k = 0; k < 3; k++) {
        const jt_t *row = jt_path(d.root, (const char *[]){"v.0", "v.1", "v.2"}[k]);
        size_t cnt = 0;
        for (const jt_t *x = row->child; x; x = x->next)
            if (x->type == JT_NUM) {
                mean[k] += x->num;
                cnt++;
            }
        mean[k] /= (double)cnt;
    }
    assert_true(mean[0] > mean[1] && mean[1] > mean[2] && mean[0] <= 1);
    jt_free(&d);
    free(heat);
    /* combined charts: one series per node */
    char *cpu = figure(page, "cpu-nodes");
    assert_non_null(cpu);
    chart_json(cpu, &d);
    assert_int_equal(jt_path(d.root, "s")->len, 3);
    assert_string_equal(jt_str(d.root, "s.2.n"), "node003");
    jt_free(&d);
    free(cpu);
    assert_non_null(strstr(page, "id=\"mem-nodes\""));
    /* each node's own charts and tables, and the job row */
    for (unsigned k = 1; k <= 3; k++) {
        char id[32];
        snprintf(id, sizeof(id), "id=\"n%u-cpu\"", k);
        assert_non_null(strstr(page, id));
        snprintf(id, sizeof(id), "id=\"n%u-sec-memory\"", k);
        assert_non_null(strstr(page, id));
    }
    assert_non_null(strstr(page, "job (all nodes)"));
    assert_non_null(strstr(page, "spread unevenly across the nodes"));
    assert_non_null(strstr(page, "node001, node002, node003"));
    free(page);
    report_free(rep);
}

/* ---- views jobscope does not know, and GPUs ---- */

/* a view of another build: charted generically, one chart per unit */
static const js_column_t accel_cols[] = {
    {"dev", "id", JS_INT, JS_LABEL, 0, "device index"},
    {"util_fraction", "fraction", JS_REAL, JS_GAUGE, 0, "busy share"},
    {"memory_used_bytes", "bytes", JS_INT, JS_GAUGE, 0, "memory in use"},
    {"power_w", "W", JS_REAL, JS_GAUGE, 0, "power"},
    {"energy_j", "J", JS_REAL, JS_COUNTER, 0, "energy so far"},
    {"xid_errors", "count", JS_INT, JS_COUNTER, 0, "errors so far (not charted)"},
    {"errno", "errno", JS_INT, JS_GAUGE, 0, "not charted"},
};
static const js_table_t accel_view = {"accel", "accelerators, one row per device and sample", 7, accel_cols};

/* the model's gpu view (the columns the curated charts use) */
static const js_column_t gpu_cols[] = {
    {"vendor", "text", JS_TEXT, JS_LABEL, 0, "nvidia or amd"},
    {"gpu", "id", JS_INT, JS_LABEL, 0, "device index"},
    {"util_fraction", "fraction", JS_REAL, JS_GAUGE, 0, "busy share"},
    {"mem_used_bytes", "bytes", JS_REAL, JS_GAUGE, 0, "memory in use"},
    {"mem_total_bytes", "bytes", JS_REAL, JS_GAUGE, 0, "memory"},
    {"power_w", "W", JS_REAL, JS_GAUGE, 0, "power"},
    {"temp_c", "degC", JS_REAL, JS_GAUGE, 0, "temperature"},
};
static const js_table_t gpu_view = {"gpu", "GPUs, one row per device and sample", 7, gpu_cols};

/* a gpu view whose columns were renamed: no curated chart matches, so it is charted generically */
static const js_column_t gpu2_cols[] = {
    {"gpu", "id", JS_INT, JS_LABEL, 0, "device index"},
    {"busy_fraction", "fraction", JS_REAL, JS_GAUGE, 0, "busy share"},
};
static const js_table_t gpu2_view = {"gpu", "GPUs", 2, gpu2_cols};

/* device_report: 600 samples of two devices (0 busy, 1 idle) in view `t`. */
static js_report_t *device_report(const js_table_t *t)
{
    js_report_t *rep = report_new();
    size_t node;
    assert_int_equal(report_add_node(rep, "gpunode", &node), 0);
    js_rows_t rows;
    rows_init(&rows, t);
    for (int i = 0; i < 600; i++) {
        assert_int_equal(report_sample(rep, node, i, 5000000000LL + i * 1000000000LL, 0, 5000000000LL), 0);
        rows_clear(&rows);
        for (int g = 0; g < 2; g++) {
            js_value_t *v = rows_add(&rows);
            for (size_t c = 0; c < t->ncols; c++) {
                const js_column_t *col = &t->cols[c];
                if (col->type == JS_TEXT)
                    assert_int_equal(rows_set_str(&rows, &v[c], "nvidia", 6), 0);
                else if (col->kind == JS_LABEL)
                    val_int(&v[c], g);
                else if (strstr(col->name, "util") || strstr(col->name, "busy"))
                    val_real(&v[c], g == 0 ? 0.8 + 0.1 * sin(i) : 0.01);
                else if (col->type == JS_INT)
                    val_int(&v[c], (int64_t)((g + 1) * 4 * GiB));
                else if (strstr(col->name, "total"))
                    val_real(&v[c], 16 * GiB);
                else
                    val_real(&v[c], (g == 0 ? 250.0 : 60.0) * (col->kind == JS_COUNTER ? i : 1));
            }
        }
        assert_int_equal(report_view(rep, node, t, &rows), 0);
    }
    rows_free(&rows);
    js_model_cfg_t mc = {.clk_tck = 100, .interval_ns = 1000000000};
    js_model_t *m = model_new(&mc);
    js_summary_t su;
    model_summary(m, &su);
    js_run_info_t info = {.version = "0.1.0",
                          .command_json = "[\"train\"]",
                          .host = "gpunode",
                          .mode = "run",
                          .state = "complete",
                          .have_exit = true};
    assert_int_equal(report_finish_node(rep, node, m, &info, &su, NULL), 0);
    model_free(m);
    return rep;
}

static void assert_chart_series(const char *page, const char *id, size_t n, const char *second)
{
    char *fig = figure(page, id);
    if (!fig)
        fail_msg("chart %s missing", id);
    jt_doc_t d;
    chart_json(fig, &d);
    assert_int_equal(jt_path(d.root, "s")->len, n);
    if (second)
        assert_string_equal(jt_str(d.root, "s.1.n"), second);
    jt_free(&d);
    free(fig);
}

static void t_generic_view(void **state)
{
    (void)state;
    /* an unknown view: one chart per unit (fraction, bytes, W, J), a series per device */
    js_report_t *rep = device_report(&accel_view);
    const double *t, *v;
    size_t n;
    assert_non_null(v = report_series(rep, 0, "accel", "util_fraction", "dev 1", &t, &n));
    assert_int_equal(n, 600);
    assert_true(t[599] == 599);
    assert_null(report_series(rep, 0, "accel", "xid_errors", "dev 1", &t, &n));
    assert_null(report_series(rep, 0, "accel", "errno", "dev 1", &t, &n));
    assert_non_null(report_series(rep, 0, "accel", "energy_j", "dev 0", &t, &n));
    assert_int_equal(report_facts(rep)->ngpus, 0); /* not a GPU view */
    char *page = page_of(rep);
    assert_non_null(strstr(page, "id=\"sec-v-accel\""));
    for (int u = 0; u < 4; u++) {
        char id[32];
        snprintf(id, sizeof(id), "v-accel-%d", u);
        assert_chart_series(page, id, 2, u == 0 ? "dev 1 util" : NULL);
    }
    assert_null(figure(page, "v-accel-4"));
    free(page);
    report_free(rep);

    /* the gpu view: curated charts per device, the device memory as a line, the GPU advice */
    rep = device_report(&gpu_view);
    const js_facts_t *f = report_facts(rep);
    assert_int_equal(f->ngpus, 2);
    assert_string_equal(f->gpu_name[1], "nvidia gpu 1");
    assert_true(fabs(f->gpu_util_mean[1] - 0.01) < 1e-12);
    page = page_of(rep);
    assert_non_null(strstr(page, "id=\"sec-gpu\""));
    assert_null(strstr(page, "id=\"sec-v-gpu\""));
    assert_chart_series(page, "gpu-util", 2, "nvidia gpu 1");
    assert_chart_series(page, "gpu-mem", 2, NULL);
    assert_chart_series(page, "gpu-power", 2, NULL);
    assert_chart_series(page, "gpu-temp", 2, NULL);
    assert_non_null(strstr(page, "device memory 16 GiB"));
    assert_non_null(strstr(page, "1 of the job&#39;s 2 GPUs stayed idle"));
    free(page);
    report_free(rep);

    /* renamed columns: the generic charts take over */
    rep = device_report(&gpu2_view);
    page = page_of(rep);
    assert_null(strstr(page, "id=\"sec-gpu\""));
    assert_chart_series(page, "v-gpu-0", 2, "gpu 1 busy");
    free(page);
    report_free(rep);
}

/* ---- phases from the marks view ---- */

static const js_column_t marks_cols[] = {
    {"t_s", "s", JS_REAL, JS_GAUGE, 0, "when"},
    {"kind", "text", JS_TEXT, JS_LABEL, 0, "begin, end or event"},
    {"name", "text", JS_TEXT, JS_LABEL, 0, "name"},
};
static const js_table_t marks_view = {"marks", "marks", 3, marks_cols};

static void t_marks(void **state)
{
    (void)state;
    js_report_t *rep = report_new();
    synth_cfg_t cfg = {.hours = 0.1};
    synth_t *g = synth_new(&cfg);
    js_model_cfg_t mc;
    synth_model_cfg(g, &mc);
    js_model_t *m = model_new(&mc);
    js_sample_t s = {0};
    assert_int_equal(sample_init(&s), 0);
    size_t node;
    assert_int_equal(report_add_node(rep, "node001", &node), 0);
    js_rows_t marks;
    rows_init(&marks, &marks_view);
    static const struct {
        int at;
        double t;
        const char *kind, *name;
    } script[] = {{10, 9.5, "begin", "load"}, {40, 39.2, "end", "load"},      {41, 40.1, "begin", "solve"},
                  {100, 99, "event", "ckpt"}, {150, 149.5, "begin", "inner"}, {200, 199, "end", "inner"},
                  {250, 250, "begin", "post"}};
    int64_t seq = 0;
    while (synth_next(g, &s) == 1) {
        assert_int_equal(model_feed(m, seq, &s), 0);
        assert_int_equal(report_feed(rep, node, m, &s), 0);
        rows_clear(&marks);
        for (size_t k = 0; k < sizeof(script) / sizeof(script[0]); k++)
            if (script[k].at == seq) {
                js_value_t *v = rows_add(&marks);
                val_real(&v[0], script[k].t);
                assert_int_equal(rows_set_str(&marks, &v[1], script[k].kind, strlen(script[k].kind)), 0);
                assert_int_equal(rows_set_str(&marks, &v[2], script[k].name, strlen(script[k].name)), 0);
            }
        assert_int_equal(report_view(rep, node, &marks_view, &marks), 0);
        seq++;
    }
    rows_free(&marks);
    js_summary_t su;
    model_summary(m, &su);
    js_run_info_t info = {.version = "0.1.0",
                          .command_json = "[\"x\"]",
                          .host = "node001",
                          .mode = "run",
                          .state = "complete",
                          .have_exit = true};
    assert_int_equal(report_finish_node(rep, node, m, &info, &su, NULL), 0);
    char *page = page_of(rep);
    /* load, inner, then solve and post closed at the end of the data (360 s) */
    char *fig = figure(page, "cpu");
    assert_int_equal(count(fig, "<g class=\"band\""), 4);
    assert_int_equal(count(fig, "<g class=\"ev\""), 1);
    assert_non_null(strstr(fig, "data-t0=\"9.5\" data-t1=\"39.2\""));
    assert_non_null(strstr(fig, "data-t0=\"40.1\" data-t1=\"360\""));
    assert_non_null(strstr(fig, "data-t0=\"250\" data-t1=\"360\""));
    assert_null(strstr(page, "sec-v-marks"));
    free(fig);
    free(page);
    report_free(rep);
    model_free(m);
    sample_free(&s);
    synth_free(g);
}

/* ---- an unclosed recording, phases ---- */

static void t_incomplete_and_phases(void **state)
{
    (void)state;
    js_report_t *rep = report_new();
    synth_cfg_t cfg = {.hours = 0.2};
    build_node(rep, &cfg, "node001", "incomplete", NULL);
    assert_int_equal(report_add_band(rep, 0, 100, "setup <1>"), 0);
    assert_int_equal(report_add_band(rep, 100, 600, "solve"), 0);
    assert_int_equal(report_add_event(rep, 300, "checkpoint"), 0);
    char *page = page_of(rep);
    assert_non_null(strstr(page, "id=\"data-end\""));
    assert_non_null(
        strstr(page, "The data ends at 2024-05-01 12:12:00 UTC, 12:00 after the start (sample 720"));
    assert_non_null(strstr(page, "not closed by its monitor"));
    size_t lines = count(page, "<figure class=\"chart line\"");
    assert_true(lines >= 10);
    assert_int_equal(count(page, "<g class=\"band\""), 2 * lines);
    assert_int_equal(count(page, "<g class=\"ev\""), lines);
    assert_non_null(strstr(page, "setup &lt;1&gt;"));
    free(page);
    report_free(rep);

    /* a report must be finished before it renders */
    rep = report_new();
    size_t node;
    assert_int_equal(report_add_node(rep, NULL, &node), 0);
    js_buf_t b = {0};
    assert_int_equal(report_html(rep, &b), -EINVAL);
    assert_null(report_facts(rep));
    buf_free(&b);
    report_free(rep);
}

/* ---- many marks: the page does not grow with their number ---- */

static size_t marks_page_size(size_t nevents, size_t nphases, char **ret_page)
{
    js_report_t *rep = report_new();
    synth_cfg_t cfg = {.hours = 0.2};
    build_node(rep, &cfg, "node001", "complete", NULL);
    char name[32];
    for (size_t i = 0; i < nevents; i++) {
        snprintf(name, sizeof(name), "ev%zu", i);
        assert_int_equal(report_add_event(rep, 720.0 * (double)i / (double)nevents, name), 0);
    }
    for (size_t i = 0; i < nphases; i++)
        assert_int_equal(report_add_band(rep, 720.0 * (double)i / (double)nphases,
                                         720.0 * (double)(i + 1) / (double)nphases, "p"),
                         0);
    char *page = page_of(rep);
    size_t n = strlen(page);
    report_free(rep);
    if (ret_page)
        *ret_page = page;
    else
        free(page);
    return n;
}

static void t_many_marks(void **state)
{
    (void)state;
    size_t base = marks_page_size(0, 0, NULL);
    size_t some = marks_page_size(100, 100, NULL);
    char *page;
    size_t many = marks_page_size(100000, 20000, &page);
    /* 100,000 events and 20,000 phases cost what the 100 and 100 drawn one by one cost, plus the strip */
    assert_true(many < some + 100000);
    assert_true(many < base + 1000000);
    size_t lines = count(page, "<figure class=\"chart line\"");
    assert_true(lines >= 10);
    assert_int_equal(count(page, "<g class=\"ev\""), 100 * lines);
    assert_int_equal(count(page, "<g class=\"band\""), 100 * lines);
    assert_int_equal(count(page, "<path class=\"evd\""), lines);
    /* the first and the last 50 events, in order */
    char *fig = figure(page, "cpu");
    const char *e0 = strstr(fig, ">ev0<"), *e49 = strstr(fig, ">ev49<"), *e99950 = strstr(fig, ">ev99950<"),
               *e99999 = strstr(fig, ">ev99999<");
    assert_true(e0 && e49 && e99950 && e99999 && e0 < e49 && e49 < e99950 && e99950 < e99999);
    assert_null(strstr(fig, ">ev50<"));
    assert_null(strstr(fig, ">ev99949<"));
    assert_non_null(strstr(fig, "<title>120000 marks:"));
    free(fig);
    assert_non_null(strstr(page,
                           "The run has 20000 phases and 100000 events: the charts draw the first and the "
                           "last 50 of each"));
    /* the Events table is bounded the same way: 100 rows, one saying how many are left out between them */
    char *tab = strstr(page, "<table class=\"tb events\">");
    assert_non_null(tab);
    char *tab_end = strstr(tab, "</table>");
    assert_non_null(tab_end);
    *tab_end = '\0';
    assert_int_equal(count(tab, "<tr><td class=\"n\">"), 100);
    assert_non_null(strstr(tab, "<td>ev49</td>"));
    assert_non_null(strstr(tab, "<td>ev99950</td>"));
    assert_null(strstr(tab, "<td>ev50</td>"));
    assert_non_null(strstr(tab, "99900 more events"));
    *tab_end = '<';
    assert_non_null(strstr(page, "100000 events in all: the first 50 and the last 50 are listed"));
    free(page);
    /* below the bound: every mark drawn, no strip */
    marks_page_size(100, 100, &page);
    assert_int_equal(count(page, "<path class=\"evd\""), 0);
    assert_null(strstr(page, "The run has"));
    free(page);
}

/* ---- compare ---- */

static void t_compare(void **state)
{
    (void)state;
    js_report_t *a = report_new(), *b = report_new();
    synth_cfg_t ca = {.hours = 0.3}, cb = {.hours = 0.5, .load = 0.4};
    build_node(a, &ca, "node001", "complete", NULL);
    build_node(b, &cb, "node002", "complete", NULL);
    js_buf_t out = {0};
    assert_int_equal(report_compare_html(a, b, "run-17", "run-18", &out), 0);
    const char *page = out.p;
    assert_non_null(strstr(page, "run-17 against run-18"));

    /* the differences: wall time 1080 s against 1800 s, ratio 1.667 */
    assert_non_null(strstr(page, "<th scope=\"row\">wall time</th><td class=\"n\">18:00</td><td class=\"n\">"
                                 "30:00</td><td class=\"n\">+12:00</td><td class=\"n\">1.667\xc3\x97</td>"));
    /* overlaid charts: A solid, B dashed, with the same colour per series */
    char *fig = figure(page, "cpu");
    jt_doc_t d;
    chart_json(fig, &d);
    assert_int_equal(jt_path(d.root, "s")->len, 2);
    assert_string_equal(jt_str(d.root, "s.0.n"), "run-17: cores in use");
    assert_string_equal(jt_str(d.root, "s.1.n"), "run-18: cores in use");
    assert_string_equal(jt_str(d.root, "s.0.c"), jt_str(d.root, "s.1.c"));
    assert_true(jt_num(d.root, "t.1") >= 1800);
    jt_free(&d);
    assert_non_null(strstr(fig, "class=\"s d\""));
    free(fig);
    buf_free(&out);
    report_free(a);
    report_free(b);
}

/* compare's events: each run's events with their data, A's i-th beside B's i-th, the first and last 25 of a
 * run with more, long data cut at a character boundary. */
static const js_column_t mark_data_cols[] = {
    {"t_s", "s", JS_REAL, JS_GAUGE, 0, "when"},
    {"kind", "text", JS_TEXT, JS_LABEL, 0, "begin, end or event"},
    {"name", "text", JS_TEXT, JS_LABEL, 0, "name"},
    {"data", "json", JS_TEXT, JS_GAUGE, 0, "JSON given with the mark"},
};
static const js_table_t mark_data_view = {"marks", "marks", 4, mark_data_cols};

static void feed_events(js_report_t *r, const char *name, size_t n, const char *long_data)
{
    js_rows_t rows;
    rows_init(&rows, &mark_data_view);
    for (size_t i = 0; i < n; i++) {
        char data[64];
        snprintf(data, sizeof(data), "{\"i\": %zu}", i + 1);
        const char *d = long_data && i == 0 ? long_data : data;
        js_value_t *v = rows_add(&rows);
        val_real(&v[0], 10.0 * (double)(i + 1));
        assert_int_equal(rows_set_str(&rows, &v[1], "event", 5), 0);
        assert_int_equal(rows_set_str(&rows, &v[2], name, strlen(name)), 0);
        assert_int_equal(rows_set_str(&rows, &v[3], d, strlen(d)), 0);
    }
    assert_int_equal(report_view(r, 0, &mark_data_view, &rows), 0);
    rows_free(&rows);
}

static void t_compare_events(void **state)
{
    (void)state;
    js_report_t *a = report_new(), *b = report_new();
    synth_cfg_t ca = {.hours = 0.1}, cb = {.hours = 0.1};
    build_node(a, &ca, "node001", "complete", NULL);
    build_node(b, &cb, "node002", "complete", NULL);
    js_buf_t out = {0};
    assert_int_equal(report_compare_html(a, b, "A", "B", &out), 0);
    assert_null(strstr(out.p, "id=\"events\"")); /* no events: no section */
    buf_free(&out);
    char big[400];
    memset(big, 'x', sizeof(big));
    memcpy(big, "\"", 1);
    memcpy(big + 159, "\xc3\xa9", 2); /* a two-byte character across the cut at 160 bytes */
    big[sizeof(big) - 2] = '"';
    big[sizeof(big) - 1] = '\0';
    feed_events(a, "epoch", 3, big);
    feed_events(b, "step", 60, NULL);
    assert_int_equal(report_compare_html(a, b, "A", "B", &out), 0);
    const char *sec = strstr(out.p, "id=\"events\"");
    assert_non_null(sec);
    assert_non_null(strstr(sec, "3 events in A, 60 in B"));
    assert_non_null(strstr(sec, "the first and the last 25 are listed"));
    /* A's second event beside B's second */
    assert_non_null(
        strstr(sec, "<td class=\"n\">2</td><td class=\"n\">20 s</td><td>epoch</td><td class=\"x\">"
                    "{&quot;i&quot;: 2}</td><td class=\"n\">2</td><td class=\"n\">20 s</td><td>step</td>"));
    /* the long data: cut before the character, with an ellipsis */
    char cut[200];
    snprintf(cut, sizeof(cut), "<td class=\"x\">&quot;%.*s\xe2\x80\xa6</td>", 158, big + 1);
    assert_non_null(strstr(sec, cut));
    /* B: 1..25, then the 10 left out, then 36..60; nothing of B's 26th to 35th */
    assert_non_null(strstr(sec, "\xe2\x80\xa6 10 more events \xe2\x80\xa6"));
    assert_non_null(strstr(sec, "{&quot;i&quot;: 25}"));
    assert_null(strstr(sec, "{&quot;i&quot;: 26}"));
    assert_null(strstr(sec, "{&quot;i&quot;: 35}"));
    assert_non_null(strstr(sec, "{&quot;i&quot;: 36}"));
    assert_non_null(strstr(sec, "{&quot;i&quot;: 60}"));
    buf_free(&out);
    report_free(a);
    report_free(b);
}

/* ---- one summary, every view ---- */

/* The report's tables, its facts and compare's differences show the figures of the node's summary table:
 * each with the same value, formatted in its row's unit (tests/unit/test_figure.c checks the JSON and the
 * text, tests/integration/test_summary_views.py the job summary and Python). */
static void t_one_summary_every_view(void **state)
{
    (void)state;
    js_report_t *a = report_new(), *b = report_new();
    synth_cfg_t ca = {.hours = 0.2}, cb = {.hours = 0.3, .load = 0.5};
    build_node(a, &ca, "node001", "complete", NULL);
    build_node(b, &cb, "node002", "complete", NULL);
    const js_figure_t *r = figure_croot(report_summary(a, 0));
    assert_null(report_summary(a, 1));
    char *page = page_of(a);
    js_buf_t cmp = {0};
    assert_int_equal(report_compare_html(a, b, "A", "B", &cmp), 0);
    static const struct {
        const char *path, *unit, *report, *compare; /* labels of the report's table and compare's rows */
    } rows[] = {
        {"cpu.total_s", "s", "CPU time", "CPU time"},
        {"cpu.mean_cores", "cores", "mean cores in use", "mean cores in use"},
        {"cpu.max_cores", "cores", "peak cores in use", "peak cores in use"},
        {"memory.peak_bytes", "bytes", "peak memory (request memory by this)", "peak memory"},
        {"memory.peak_rss_sum_bytes", "bytes", "peak RSS sum (shared pages per process)",
         "peak RSS sum, sampled"},
        {"io.read_bytes", "bytes", "read from storage", "read from storage"},
        {"io.write_bytes", "bytes", "written to storage", "written to storage"},
        {"io.read_chars", "bytes", "read calls", "read through calls"},
        {"energy.node_energy_j", "J", NULL, "energy of the node (RAPL)"},
        {"monitor.cpu_s", "s", "CPU time of the monitor", NULL},
        {"samples.interval_s", "s", "interval", NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const js_figure_t *f = fig_get(r, rows[i].path);
        assert_non_null(f);
        assert_string_equal(f->unit, rows[i].unit);
        double v = fig_value(f);
        assert_true(isfinite(v));
        char val[64], want[256];
        units_format(val, sizeof(val), v, rows[i].unit);
        if (rows[i].report) {
            snprintf(want, sizeof(want), "<th scope=\"row\">%s</th><td>%s</td>", rows[i].report, val);
            if (!strstr(page, want))
                fail_msg("the report lacks %s", want);
        }
        if (rows[i].compare) {
            snprintf(want, sizeof(want), "<th scope=\"row\">%s</th><td class=\"n\">%s</td>", rows[i].compare,
                     val);
            if (!strstr(cmp.p, want))
                fail_msg("compare lacks %s", want);
        }
    }
    /* counts: the report's table writes them whole */
    char want[160];
    snprintf(want, sizeof(want), "<th scope=\"row\">processes seen</th><td>%lld</td>",
             (long long)fig_int(r, "processes.total", -1));
    assert_non_null(strstr(page, want));
    snprintf(want, sizeof(want), "<th scope=\"row\">samples taken</th><td>%lld</td>",
             (long long)fig_int(r, "samples.taken", -1));
    assert_non_null(strstr(page, want));
    /* the advice's facts are the same figures */
    const js_facts_t *f = report_facts(a);
    assert_true(f->cpu_s == fig_num(r, "cpu.total_s"));
    assert_true(f->mean_cores == fig_num(r, "cpu.mean_cores"));
    assert_true(f->max_cores == fig_num(r, "cpu.max_cores"));
    assert_true(f->peak_rss == fig_num(r, "memory.peak_bytes"));
    assert_true(f->peak_rss_kernel == fig_num(r, "memory.peak_rss_kernel_bytes"));
    assert_true(f->wall_s == fig_num(r, "wall_time_s"));
    assert_true(f->interval_s == fig_num(r, "samples.interval_s"));
    assert_int_equal(f->taken, fig_int(r, "samples.taken", -1));
    assert_true(f->mon_cpu_s == fig_num(r, "monitor.cpu_s"));
    /* a part's section, rendered from its rows: the energy part's node energy in its unit */
    char val[64];
    snprintf(want, sizeof(want), "<th scope=\"row\">node energy</th><td>%s</td>",
             units_format(val, sizeof(val), fig_num(r, "energy.node_energy_j"), "J"));
    assert_non_null(strstr(page, want));
    free(page);
    buf_free(&cmp);
    report_free(a);
    report_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_jtree),
        cmocka_unit_test(t_advice_rules),
        cmocka_unit_test(t_advice_starved),
        cmocka_unit_test(t_advice_demand),
        cmocka_unit_test(t_extraction_golden),
        cmocka_unit_test(t_day_page),
        cmocka_unit_test(t_nodes),
        cmocka_unit_test(t_generic_view),
        cmocka_unit_test(t_incomplete_and_phases),
        cmocka_unit_test(t_marks),
        cmocka_unit_test(t_compare),
        cmocka_unit_test(t_compare_events),
        cmocka_unit_test(t_one_summary_every_view),
        cmocka_unit_test(t_jtree_mark_data),
        cmocka_unit_test(t_many_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
