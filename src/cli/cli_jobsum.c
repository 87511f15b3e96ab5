/* SPDX-License-Identifier: MIT
 *
 * The summary of a merged job recording (`jobscope summary JOB.db`): each node read back as a recording of
 * its own (sinks/merge.h, merge_extract, into a private temporary directory) and summarised by the same model
 * as any run; then the job: CPU-hours, efficiency against the allocated cores, peak memory per node against
 * its limit, I/O, network and InfiniBand, energy (RAPL and GPU), GPU utilisation and memory; and the flags:
 * idle nodes, imbalance (a node under half the mean CPU), memory near the limit, GPUs allocated but idle.
 * Also the nodes' extraction for `export` and `report` of a merged recording (cli_merged_node_path).
 */
#include "cli/cli.h"
#include "cli/cli_jobsum.h"

#include "core/json.h"
#include "model/figure.h"
#include "sinks/merge.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDLE_FRACTION 0.02 /* a node that used under 2% of its allocated core-seconds is idle */
#define IMBALANCE 0.5      /* a node under half the mean CPU of the job's nodes */
#define MEM_NEAR 0.9       /* a peak at 90% of the limit or more */
#define GPU_IDLE 0.05      /* a GPU busy under 5% of the time on average */

/* One node: the job's facts about it (from the merge and its metadata) and its own summary table, whose
 * rows every figure below is read from. */
typedef struct {
    char name[128], host[256];
    double mem_limit;
    char gpus_alloc[128];
    int64_t samples;
    int64_t offset_ns, offset_bound_ns;
    char state[32];
    js_summary_table_t *sum; /* the node's summary, as `jobscope summary --json` of the node has it */
    js_buf_t text;           /* its full text summary (--summary=full) */
} node_sum_t;

static double nnum(const node_sum_t *x, const char *path)
{
    return fig_num(figure_croot(x->sum), path);
}

/* node_cpu_efficiency: CPU time over the allocated cores times the wall time, NAN when unknown */
static double node_cpu_efficiency(const node_sum_t *x)
{
    double cores = nnum(x, "cpu.cores_available"), wall = nnum(x, "wall_time_s");
    return cores > 0 && wall > 0 ? nnum(x, "cpu.total_s") / (cores * wall) : NAN;
}

/* node_gpus: the node's GPUs and their mean utilisation (the mean over them of each one's mean) */
static int node_gpus(const node_sum_t *x, double *ret_util)
{
    const js_figure_t *devs = fig_get(figure_croot(x->sum), "gpu.devices");
    double util = 0;
    for (size_t i = 0; i < fig_count(devs); i++) {
        double u = fig_num(fig_kid(devs, i), "utilization.mean");
        util += isnan(u) ? 0 : u;
    }
    *ret_util = fig_count(devs) ? util / (double)fig_count(devs) : NAN;
    return (int)fig_count(devs);
}

/* node_summary: extract node `name` of `path` into `tmp` and summarise it. Returns 0 or EXIT_FAIL (said). */
static int node_summary(const char *path, const merge_node_t *mn, const char *tmp, node_sum_t *ns, bool full)
{
    memset(ns, 0, sizeof(*ns));
    snprintf(ns->name, sizeof(ns->name), "%s", mn->name);
    snprintf(ns->host, sizeof(ns->host), "%s", mn->host);
    ns->samples = mn->samples;
    ns->offset_ns = mn->clock_offset_ns;
    ns->offset_bound_ns = mn->clock_offset_bound_ns;
    char err[1024] = "";
    int r = merge_extract(path, mn->name, tmp, err, sizeof(err));
    if (r < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    js_recording_t *rec;
    js_model_t *m;
    if (cli_read_recording(tmp, 0, &rec, &m, NULL, NULL)) {
        unlink(tmp);
        return EXIT_FAIL;
    }
    js_summary_t su;
    js_run_info_t info;
    cli_summarize(rec, path, m, &info, &su);
    snprintf(ns->state, sizeof(ns->state), "%s", info.state ? info.state : "");
    const char *lim = recording_meta(rec, "job_alloc_mem_bytes");
    ns->mem_limit = lim ? strtod(lim, NULL) : NAN;
    const char *gp = recording_meta(rec, "job_alloc_gpus");
    snprintf(ns->gpus_alloc, sizeof(ns->gpus_alloc), "%s", gp ? gp : "");
    int rc = (ns->sum = summary_build(&info, &su, m)) ? 0 : EXIT_FAIL;
    if (rc == 0 && full && summary_render_text(&ns->text, ns->sum, JS_SUMMARY_FULL) < 0)
        rc = EXIT_FAIL;
    if (rc)
        cli_error("%s: node %s: cannot summarise", path, mn->name);
    model_free(m);
    recording_close(rec);
    unlink(tmp);
    return rc;
}

static const char *bytes_str(char *buf, size_t cap, double v)
{
    return fmt_bytes(buf, cap, v);
}

static const char *num_str(char *buf, size_t cap, const char *fmt, double v)
{
    return fig_fmt(buf, cap, fmt, v);
}

typedef struct {
    char text[256];
    const char *kind; /* "incomplete", "idle", "imbalance", "memory", "gpu_idle" */
    char node[128];
} flag_t;

static void flag(flag_t *f, const char *kind, const char *node)
{
    f->kind = kind;
    snprintf(f->node, sizeof(f->node), "%s", node);
}

/* node_flags: what a user acts on about node x, appended to fl. Returns how many. */
static size_t node_flags(const node_sum_t *x, size_t n, double mean_cpu, flag_t *fl)
{
    size_t nf = 0;
    double cores = nnum(x, "cpu.cores_available"), wall = nnum(x, "wall_time_s"),
           cpu = nnum(x, "cpu.total_s");
    double peak = nnum(x, "memory.peak_bytes");
    if (strcmp(x->state, "complete") != 0) { /* merged with --partial */
        snprintf(fl[nf].text, sizeof(fl[nf].text),
                 "node %s incomplete: its monitor was killed or still writing; its figures end at its last "
                 "sample",
                 x->name);
        flag(&fl[nf++], "incomplete", x->name);
    }
    if (cores > 0 && wall > 0 && !isnan(cpu) && cpu < IDLE_FRACTION * cores * wall) {
        snprintf(fl[nf].text, sizeof(fl[nf].text),
                 "node %s idle: %.3f CPU-s of %.0f core-s allocated (%.1f%%)", x->name, cpu, cores * wall,
                 100 * cpu / (cores * wall));
        flag(&fl[nf++], "idle", x->name);
    } else if (n > 1 && !isnan(cpu) && cpu < IMBALANCE * mean_cpu) {
        snprintf(fl[nf].text, sizeof(fl[nf].text),
                 "imbalance: node %s used %.3f CPU-s, under half the mean of %.3f", x->name, cpu, mean_cpu);
        flag(&fl[nf++], "imbalance", x->name);
    }
    if (x->mem_limit > 0 && !isnan(peak) && peak >= MEM_NEAR * x->mem_limit) {
        char a[32], b2[32];
        snprintf(fl[nf].text, sizeof(fl[nf].text), "memory near the limit on node %s: peak %s of %s (%.0f%%)",
                 x->name, bytes_str(a, sizeof(a), peak), bytes_str(b2, sizeof(b2), x->mem_limit),
                 100 * peak / x->mem_limit);
        flag(&fl[nf++], "memory", x->name);
    }
    double util;
    int ngpus = node_gpus(x, &util);
    if (ngpus > 0 && !isnan(util) && util < GPU_IDLE) {
        /* a long list of allocated GPUs is cut at the flag's size (it is only a message) */
        if (snprintf(fl[nf].text, sizeof(fl[nf].text),
                     "GPUs idle on node %s: %d GPU%s%s%s busy %.1f%% of the time", x->name, ngpus,
                     ngpus > 1 ? "s" : "", x->gpus_alloc[0] ? " allocated " : "", x->gpus_alloc,
                     100 * util) < 0)
            fl[nf].text[0] = '\0';
        flag(&fl[nf++], "gpu_idle", x->name);
    }
    return nf;
}

/* job_table: the job's summary, with the keys of a run's for the same figures: each node's rows that say how
 * they combine (fig_merge: summed, the largest, all true), then what only a job has, then `nodes` (each the
 * node's own summary after the job's facts about it) and `flags`. NULL on ENOMEM. */
static js_summary_table_t *job_table(const char *path, const node_sum_t *ns, size_t n, const flag_t *fl,
                                     size_t nf)
{
    js_summary_table_t *t = figure_new();
    if (!t)
        return NULL;
    js_figure_t *r = figure_root(t);
    const char *state = "complete"; /* the least complete node's */
    for (size_t i = 0; i < n; i++)
        if (strcmp(ns[i].state, "complete") != 0 && strcmp(state, "incomplete") != 0)
            state = ns[i].state;
    fig_put_text(r, "mode", "job");
    fig_put_text(r, "recording", path);
    fig_put_int(r, "node_count", "count", (int64_t)n);
    fig_put_text(r, "state", state);
    int64_t incomplete = 0;
    for (size_t i = 0; i < n; i++)
        incomplete += strcmp(ns[i].state, "complete") != 0;
    fig_put_int(r, "incomplete_nodes", "count", incomplete);
    double core_s = 0;
    bool have_core_s = true;
    size_t big = 0; /* the node with the largest memory peak */
    for (size_t i = 0; i < n; i++) {
        figure_merge(r, figure_croot(ns[i].sum));
        double cores = nnum(&ns[i], "cpu.cores_available"), wall = nnum(&ns[i], "wall_time_s");
        if (cores > 0 && wall > 0)
            core_s += cores * wall;
        else
            have_core_s = false;
        if (i && !(nnum(&ns[big], "memory.peak_bytes") >= nnum(&ns[i], "memory.peak_bytes")))
            big = i;
    }
    double cpu = fig_num(r, "cpu.total_s"), wall = fig_num(r, "wall_time_s");
    fig_put_num(r, "cpu.total_hours", "hours", cpu / 3600);
    fig_put_num(r, "cpu.mean_cores", "cores", wall > 0 ? cpu / wall : NAN);
    fig_put_num(r, "cpu.allocated_core_s", "s", have_core_s ? core_s : NAN);
    fig_put_num(r, "cpu.efficiency", "fraction", have_core_s && core_s > 0 ? cpu / core_s : NAN);
    fig_how(fig_put_num(r, "memory.peak_bytes", "bytes", n ? nnum(&ns[big], "memory.peak_bytes") : NAN),
            "peak_method",
            "the largest node's peak (each node's own headline: nodes' peaks need not be simultaneous, so "
            "they are "
            "not added)");
    fig_put_text(r, "memory.peak_node", n ? ns[big].name : NULL);
    fig_how(fig_at(r, "network.rx_bytes"), "method", "every node's interfaces but lo, summed");
    fig_put_int(r, "gpu.device_count", "count", fig_int(r, "gpu.job.devices", 0));
    /* the job's keys (docs/BATCH.md) are there, null, where no node has the figure */
    static const struct {
        const char *path, *unit;
    } always[] = {{"network.rx_bytes", "bytes"},     {"network.tx_bytes", "bytes"},
                  {"infiniband.rcv_bytes", "bytes"}, {"infiniband.xmit_bytes", "bytes"},
                  {"energy.node_energy_j", "J"},     {"gpu.job.energy_j", "J"}};
    for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++)
        if (!fig_get(r, always[i].path))
            fig_put_num(r, always[i].path, always[i].unit, NAN);
    fig_put_array(r, "nodes");
    for (size_t i = 0; i < n; i++) {
        const node_sum_t *x = &ns[i];
        js_figure_t *e = fig_put_elem(r, "nodes");
        fig_put_text(r, "nodes[].node", x->name);
        fig_put_int(r, "nodes[].clock_offset_ns", "ns", x->offset_ns);
        fig_put_int(r, "nodes[].clock_offset_bound_ns", "ns", x->offset_bound_ns);
        fig_put_num(r, "nodes[].memory_limit_bytes", "bytes", x->mem_limit);
        fig_put_num(r, "nodes[].memory_fraction", "fraction",
                    x->mem_limit > 0 ? nnum(x, "memory.peak_bytes") / x->mem_limit : NAN);
        fig_copy(e, "", figure_croot(x->sum));
    }
    fig_put_array(r, "flags");
    for (size_t i = 0; i < nf; i++) {
        fig_put_elem(r, "flags");
        fig_put_text(r, "flags[].kind", fl[i].kind);
        fig_put_text(r, "flags[].node", fl[i].node);
        fig_put_text(r, "flags[].text", fl[i].text);
    }
    if (figure_error(t) < 0) {
        figure_free(t);
        return NULL;
    }
    return t;
}

/* job_text: the job's text summary, from its table and the nodes' */
static int job_text(js_buf_t *b, const char *path, const js_figure_t *j, const node_sum_t *ns, size_t n,
                    const flag_t *fl, size_t nf, js_summary_form_t form)
{
    char a[64], c[64], d[64], e[64];
    double cpu = fig_num(j, "cpu.total_s"), rx = fig_num(j, "network.rx_bytes"),
           tx = fig_num(j, "network.tx_bytes");
    double ibr = fig_num(j, "infiniband.rcv_bytes"), ibt = fig_num(j, "infiniband.xmit_bytes");
    double en = fig_num(j, "energy.node_energy_j"), gen = fig_num(j, "gpu.job.energy_j");
    int err = buf_printf(b, "jobscope job recording %s: %zu node%s\n", path, n, n == 1 ? "" : "s");
    err |= buf_printf(
        b, "  job            %s CPU-hours (%s CPU-s%s), efficiency %s of the allocated cores, wall %s s\n",
        num_str(a, sizeof(a), "%.4f", cpu / 3600), num_str(c, sizeof(c), "%.3f", cpu),
        fig_bool(j, "exact.cpu") == 1 ? ", exact" : ", not exact on every node",
        num_str(d, sizeof(d), "%.1f%%", fig_num(j, "cpu.efficiency") * 100),
        num_str(e, sizeof(e), "%.3f", fig_num(j, "wall_time_s")));
    err |= buf_printf(b, "  I/O            read %s, written %s (storage)\n",
                      bytes_str(a, sizeof(a), fig_num(j, "io.read_bytes")),
                      bytes_str(c, sizeof(c), fig_num(j, "io.write_bytes")));
    err |= buf_printf(b, "  network        received %s, sent %s (the nodes' interfaces but lo)",
                      bytes_str(a, sizeof(a), rx), bytes_str(c, sizeof(c), tx));
    if (!isnan(ibr) || !isnan(ibt))
        err |= buf_printf(b, "; InfiniBand received %s, sent %s", bytes_str(a, sizeof(a), ibr),
                          bytes_str(c, sizeof(c), ibt));
    err |= buf_printf(b, "\n");
    if (!isnan(en) || !isnan(gen))
        err |= buf_printf(b, "  energy         nodes %s J (RAPL), GPUs %s J (the devices the job used)\n",
                          num_str(a, sizeof(a), "%.1f", en), num_str(c, sizeof(c), "%.1f", gen));
    int64_t ngpus = fig_int(j, "gpu.device_count", 0);
    if (ngpus)
        err |= buf_printf(b, "  GPUs           %lld\n", (long long)ngpus);
    err |= buf_printf(b, "  %-12s %8s %6s %10s %7s %11s %11s %10s %10s %s\n", "node", "wall s", "cores",
                      "CPU s", "eff", "peak mem", "mem limit", "read", "written", "GPU util");
    for (size_t i = 0; i < n; i++) {
        const node_sum_t *x = &ns[i];
        char m1[32], m2[32], r1[32], w1[32], g1[32];
        double util;
        int ng = node_gpus(x, &util);
        err |= buf_printf(b, "  %-12s %8s %6s %10s %7s %11s %11s %10s %10s %s%s\n", x->name,
                          num_str(a, sizeof(a), "%.2f", nnum(x, "wall_time_s")),
                          num_str(c, sizeof(c), "%.4g", nnum(x, "cpu.cores_available")),
                          num_str(d, sizeof(d), "%.3f", nnum(x, "cpu.total_s")),
                          num_str(e, sizeof(e), "%.1f%%", node_cpu_efficiency(x) * 100),
                          bytes_str(m1, sizeof(m1), nnum(x, "memory.peak_bytes")),
                          bytes_str(m2, sizeof(m2), x->mem_limit),
                          bytes_str(r1, sizeof(r1), nnum(x, "io.read_bytes")),
                          bytes_str(w1, sizeof(w1), nnum(x, "io.write_bytes")),
                          ng ? num_str(g1, sizeof(g1), "%.1f%%", util * 100) : "-",
                          fig_bool(figure_croot(x->sum), "exact.cpu") == 1 ? "" : "  (CPU not exact)");
    }
    int64_t bound = n ? ns[0].offset_bound_ns : 0;
    const char *peak_node = fig_text(j, "memory.peak_node");
    err |= buf_printf(b, "  memory         peak %s on node %s (each node's own headline; not added up)\n",
                      bytes_str(a, sizeof(a), fig_num(j, "memory.peak_bytes")), peak_node ? peak_node : "-");
    err |= buf_printf(
        b, "  clocks         offsets from the job's start on each node, within %.3f s:", (double)bound / 1e9);
    for (size_t i = 0; i < n; i++)
        err |= buf_printf(b, " %s %+.3f s", ns[i].name, (double)ns[i].offset_ns / 1e9);
    err |= buf_printf(b, "\n");
    double mc = 0;
    for (size_t i = 0; i < n; i++) {
        double cost = nnum(&ns[i], "monitor.mean_sample_cost_s");
        mc = fmax(mc, isnan(cost) ? 0 : cost);
    }
    err |= buf_printf(b, "  monitor        at most %.1f ms per sample on a node\n", mc * 1e3);
    if (!nf)
        err |= buf_printf(b, "  flags          none\n");
    for (size_t i = 0; i < nf; i++)
        err |= buf_printf(b, "  flag           %s\n", fl[i].text);
    for (size_t i = 0; form == JS_SUMMARY_FULL && i < n; i++)
        if (ns[i].text.p)
            err |= buf_printf(b, "\nnode %s:\n%s", ns[i].name, ns[i].text.p);
    return err ? -ENOMEM : 0;
}

int cli_merged_summary(const char *path, bool json, js_summary_form_t form)
{
    merge_node_t *mn = NULL;
    size_t n = 0;
    char err[1024] = "";
    if (merge_nodes(path, &mn, &n, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    char dir[] = "/tmp/jobscope-summary-XXXXXX";
    const char *tdir = getenv("TMPDIR");
    char dirbuf[4096];
    if (tdir && *tdir &&
        snprintf(dirbuf, sizeof(dirbuf), "%s/jobscope-summary-XXXXXX", tdir) < (int)sizeof(dirbuf) &&
        mkdtemp(dirbuf))
        tdir = dirbuf;
    else if (mkdtemp(dir))
        tdir = dir;
    else {
        cli_error("cannot make a temporary directory: %s", strerror(errno));
        free(mn);
        return EXIT_FAIL;
    }
    node_sum_t *ns = calloc(n ? n : 1, sizeof(*ns));
    int rc = ns ? 0 : EXIT_FAIL;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char tmp[4300];
        snprintf(tmp, sizeof(tmp), "%s/node-%zu.db", tdir, i);
        rc = node_summary(path, &mn[i], tmp, &ns[i], !json && form == JS_SUMMARY_FULL);
    }
    rmdir(tdir);
    free(mn);
    flag_t *fl = rc ? NULL : calloc(5 * (n ? n : 1), sizeof(*fl));
    size_t nf = 0;
    js_summary_table_t *job = NULL;
    js_buf_t b = {0};
    if (fl) {
        double cpu = 0;
        for (size_t i = 0; i < n; i++) {
            double c = nnum(&ns[i], "cpu.total_s");
            cpu += isnan(c) ? 0 : c;
        }
        double mean_cpu = n ? cpu / (double)n : NAN;
        for (size_t i = 0; i < n; i++)
            nf += node_flags(&ns[i], n, mean_cpu, fl + nf);
        job = job_table(path, ns, n, fl, nf);
    }
    if (!rc && !job) {
        cli_error("%s: cannot summarise the job: %s", path, strerror(ENOMEM));
        rc = EXIT_FAIL;
    }
    if (!rc && (json ? figure_json(job, &b) : job_text(&b, path, figure_croot(job), ns, n, fl, nf, form)) < 0)
        rc = EXIT_FAIL;
    if (rc == 0)
        fputs(b.p ? b.p : "", stdout);
    buf_free(&b);
    figure_free(job);
    free(fl);
    for (size_t i = 0; ns && i < n; i++) {
        figure_free(ns[i].sum);
        buf_free(&ns[i].text);
    }
    free(ns);
    if (fflush(stdout) != 0) {
        cli_error("cannot write the summary");
        return EXIT_FAIL;
    }
    return rc;
}

int cli_merged_node_path(const char *path, const char *node, char *tmpdir, size_t dircap, char *out,
                         size_t outcap)
{
    const char *t = getenv("TMPDIR");
    if (!t || !*t)
        t = "/tmp";
    if (snprintf(tmpdir, dircap, "%s/jobscope-node-XXXXXX", t) >= (int)dircap || !mkdtemp(tmpdir)) {
        cli_error("cannot make a temporary directory: %s", strerror(errno));
        return EXIT_FAIL;
    }
    snprintf(out, outcap, "%s/node.db", tmpdir);
    char err[1024] = "";
    if (merge_extract(path, node, out, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        rmdir(tmpdir);
        return EXIT_FAIL;
    }
    return 0;
}
