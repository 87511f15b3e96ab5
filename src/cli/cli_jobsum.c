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
#include "report/jtree.h"
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

typedef struct {
    char name[128], host[256];
    double cores, wall_s, cpu_s, mean_cores, efficiency;
    bool exact_cpu;
    double peak_mem, mem_limit;
    const char *peak_method;
    double read_b, write_b, rchar, wchar;
    double net_rx, net_tx, ib_rx, ib_tx;
    double energy_j, gpu_energy_j;
    int ngpus;
    double gpu_util, gpu_mem_peak;
    char gpus_alloc[128];
    int64_t samples;
    double mon_cpu_s, mon_cost_s;
    int64_t offset_ns, offset_bound_ns;
    char state[32];
    js_buf_t json; /* the node's own summary, as `jobscope summary --json` of the node writes it */
    js_buf_t text; /* its full text summary (--summary=full) */
} node_sum_t;

static double sum_array(const jt_t *arr, const char *key, const char *skip_key, const char *skip_val)
{
    double s = NAN;
    for (const jt_t *e = arr && arr->type == JT_ARR ? arr->child : NULL; e; e = e->next) {
        const char *sv = skip_key ? jt_str(e, skip_key) : NULL;
        if (sv && skip_val && !strcmp(sv, skip_val))
            continue;
        double v = jt_num(e, key);
        if (!isnan(v))
            s = isnan(s) ? v : s + v;
    }
    return s;
}

static double add_nan(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
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
    js_buf_t b = {0};
    jt_doc_t doc = {0};
    int rc = summary_json(&b, &info, &su, m) == 0 && jt_parse(b.p, b.len, &doc) == 0 ? 0 : EXIT_FAIL;
    if (rc == 0) {
        const jt_t *j = doc.root;
        snprintf(ns->state, sizeof(ns->state), "%s", info.state ? info.state : "");
        ns->wall_s = jt_num(j, "wall_time_s");
        ns->cpu_s = jt_num(j, "cpu.total_s");
        ns->cores = jt_num(j, "cpu.cores_available");
        ns->mean_cores = jt_num(j, "cpu.mean_cores");
        ns->efficiency = ns->cores > 0 && ns->wall_s > 0 ? ns->cpu_s / (ns->cores * ns->wall_s) : NAN;
        const jt_t *ex = jt_path(j, "exact.cpu");
        ns->exact_cpu = ex && ex->type == JT_BOOL && ex->b;
        ns->peak_mem = jt_num(j, "memory.peak_bytes"); /* the node's memory headline */
        ns->peak_method = su.peak_method;
        const char *lim = recording_meta(rec, "job_alloc_mem_bytes");
        ns->mem_limit = lim ? strtod(lim, NULL) : NAN;
        const char *gp = recording_meta(rec, "job_alloc_gpus");
        snprintf(ns->gpus_alloc, sizeof(ns->gpus_alloc), "%s", gp ? gp : "");
        ns->read_b = jt_num(j, "io.read_bytes");
        ns->write_b = jt_num(j, "io.write_bytes");
        ns->rchar = jt_num(j, "io.read_chars");
        ns->wchar = jt_num(j, "io.write_chars");
        const jt_t *ifs = jt_path(j, "network.interfaces");
        ns->net_rx = sum_array(ifs, "rx_bytes", "iface", "lo");
        ns->net_tx = sum_array(ifs, "tx_bytes", "iface", "lo");
        const jt_t *ports = jt_path(j, "infiniband.ports");
        ns->ib_rx = sum_array(ports, "rcv_bytes", NULL, NULL);
        ns->ib_tx = sum_array(ports, "xmit_bytes", NULL, NULL);
        ns->energy_j = jt_num(j, "energy.node_energy_j");
        const jt_t *devs = jt_path(j, "gpu.devices");
        ns->gpu_energy_j = sum_array(devs, "energy_j", NULL, NULL);
        ns->gpu_mem_peak = sum_array(devs, "peak_memory_bytes.device", NULL, NULL);
        double util = 0;
        for (const jt_t *d = devs && devs->type == JT_ARR ? devs->child : NULL; d; d = d->next) {
            ns->ngpus++;
            double u = jt_num(d, "utilization.mean");
            util += isnan(u) ? 0 : u;
        }
        ns->gpu_util = ns->ngpus ? util / ns->ngpus : NAN;
        ns->mon_cpu_s = jt_num(j, "monitor.cpu_s");
        ns->mon_cost_s = jt_num(j, "monitor.mean_sample_cost_s");
        ns->json = b; /* kept for the job's JSON, and the full text for --summary=full */
        b = (js_buf_t){0};
        if (full && summary_text(&ns->text, &info, &su, m, JS_SUMMARY_FULL) < 0)
            rc = EXIT_FAIL;
    } else {
        cli_error("%s: node %s: cannot summarise", path, mn->name);
    }
    jt_free(&doc);
    buf_free(&b);
    model_free(m);
    recording_close(rec);
    unlink(tmp);
    return rc;
}

static const char *bytes_str(char *buf, size_t cap, double v)
{
    if (isnan(v))
        return "n/a";
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int k = 0;
    while (v >= 1024 && k < 5) {
        v /= 1024;
        k++;
    }
    snprintf(buf, cap, k ? "%.2f %s" : "%.0f %s", v, u[k]);
    return buf;
}

static const char *num_str(char *buf, size_t cap, const char *fmt, double v)
{
    if (isnan(v))
        return "n/a";
    snprintf(buf, cap, fmt, v);
    return buf;
}

typedef struct {
    char text[256];
    const char *kind; /* "incomplete", "idle", "imbalance", "memory", "gpu_idle" */
    char node[128];
} flag_t;

/* node_json: the node's summary object with the job's facts about the node first (its name, clock offset and
 * memory limit): every other member is the node's own summary, so a node's figures have the keys of a run's
 */
static void node_json(jw_t *w, const node_sum_t *x)
{
    js_buf_t head = {0};
    jw_t hw;
    jw_init(&hw, &head);
    jw_open(&hw, NULL);
    jw_str(&hw, "node", x->name);
    jw_int(&hw, "clock_offset_ns", x->offset_ns);
    jw_int(&hw, "clock_offset_bound_ns", x->offset_bound_ns);
    jw_num(&hw, "memory_limit_bytes", x->mem_limit);
    jw_num(&hw, "memory_fraction", x->mem_limit > 0 ? x->peak_mem / x->mem_limit : NAN);
    /* splice: the head's members, a comma, then the node summary's members (both objects start with "{") */
    const char *rest = x->json.p ? strchr(x->json.p, '{') : NULL;
    int err = jw_error(&hw) || !rest || buf_append(&head, ",", 1) < 0 ||
              buf_append(&head, rest + 1, strlen(rest + 1)) < 0;
    while (!err && head.len && (head.p[head.len - 1] == '\n' || head.p[head.len - 1] == ' '))
        head.p[--head.len] = '\0';
    if (err)
        w->err = -ENOMEM;
    else
        jw_raw(w, NULL, head.p);
    buf_free(&head);
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
    if (rc) {
        free(ns);
        return rc;
    }
    /* the job */
    double cpu = 0, core_s = 0, mean_cpu = 0, wall = 0, rd = NAN, wr = NAN, rch = NAN, wch = NAN, rx = NAN,
           tx = NAN, ibr = NAN, ibt = NAN, en = NAN, gen = NAN;
    bool exact = true, have_core_s = true;
    int ngpus = 0;
    for (size_t i = 0; i < n; i++) {
        cpu += isnan(ns[i].cpu_s) ? 0 : ns[i].cpu_s;
        if (ns[i].cores > 0 && ns[i].wall_s > 0)
            core_s += ns[i].cores * ns[i].wall_s;
        else
            have_core_s = false;
        wall = fmax(wall, isnan(ns[i].wall_s) ? 0 : ns[i].wall_s);
        exact &= ns[i].exact_cpu;
        rd = add_nan(rd, ns[i].read_b);
        wr = add_nan(wr, ns[i].write_b);
        rch = add_nan(rch, ns[i].rchar);
        wch = add_nan(wch, ns[i].wchar);
        rx = add_nan(rx, ns[i].net_rx);
        tx = add_nan(tx, ns[i].net_tx);
        ibr = add_nan(ibr, ns[i].ib_rx);
        ibt = add_nan(ibt, ns[i].ib_tx);
        en = add_nan(en, ns[i].energy_j);
        gen = add_nan(gen, ns[i].gpu_energy_j);
        ngpus += ns[i].ngpus;
    }
    mean_cpu = n ? cpu / (double)n : NAN;
    double eff = have_core_s && core_s > 0 ? cpu / core_s : NAN;
    /* the flags */
    flag_t *fl = calloc(5 * (n ? n : 1), sizeof(*fl));
    size_t nf = 0;
    int64_t incomplete = 0;
    for (size_t i = 0; fl && i < n; i++) {
        const node_sum_t *x = &ns[i];
        if (strcmp(x->state, "complete") != 0) { /* merged with --partial */
            snprintf(
                fl[nf].text, sizeof(fl[nf].text),
                "node %s incomplete: its monitor was killed or still writing; its figures end at its last "
                "sample",
                x->name);
            fl[nf].kind = "incomplete";
            snprintf(fl[nf++].node, sizeof(fl[0].node), "%s", x->name);
            incomplete++;
        }
        if (x->cores > 0 && x->wall_s > 0 && !isnan(x->cpu_s) &&
            x->cpu_s < IDLE_FRACTION * x->cores * x->wall_s) {
            snprintf(fl[nf].text, sizeof(fl[nf].text),
                     "node %s idle: %.3f CPU-s of %.0f core-s allocated (%.1f%%)", x->name, x->cpu_s,
                     x->cores * x->wall_s, 100 * x->cpu_s / (x->cores * x->wall_s));
            fl[nf].kind = "idle";
            snprintf(fl[nf++].node, sizeof(fl[0].node), "%s", x->name);
        } else if (n > 1 && !isnan(x->cpu_s) && x->cpu_s < IMBALANCE * mean_cpu) {
            snprintf(fl[nf].text, sizeof(fl[nf].text),
                     "imbalance: node %s used %.3f CPU-s, under half the mean of %.3f", x->name, x->cpu_s,
                     mean_cpu);
            fl[nf].kind = "imbalance";
            snprintf(fl[nf++].node, sizeof(fl[0].node), "%s", x->name);
        }
        if (x->mem_limit > 0 && !isnan(x->peak_mem) && x->peak_mem >= MEM_NEAR * x->mem_limit) {
            char a[32], b2[32];
            snprintf(fl[nf].text, sizeof(fl[nf].text),
                     "memory near the limit on node %s: peak %s of %s (%.0f%%)", x->name,
                     bytes_str(a, sizeof(a), x->peak_mem), bytes_str(b2, sizeof(b2), x->mem_limit),
                     100 * x->peak_mem / x->mem_limit);
            fl[nf].kind = "memory";
            snprintf(fl[nf++].node, sizeof(fl[0].node), "%s", x->name);
        }
        if (x->ngpus > 0 && !isnan(x->gpu_util) && x->gpu_util < GPU_IDLE) {
            /* a long list of allocated GPUs is cut at the flag's size (it is only a message) */
            if (snprintf(fl[nf].text, sizeof(fl[nf].text),
                         "GPUs idle on node %s: %d GPU%s%s%s busy %.1f%% of the time", x->name, x->ngpus,
                         x->ngpus > 1 ? "s" : "", x->gpus_alloc[0] ? " allocated " : "", x->gpus_alloc,
                         100 * x->gpu_util) < 0)
                fl[nf].text[0] = '\0';
            fl[nf].kind = "gpu_idle";
            snprintf(fl[nf++].node, sizeof(fl[0].node), "%s", x->name);
        }
    }
    js_buf_t b = {0};
    char a[64], c[64], d[64], e[64];
    const char *state = "complete"; /* the least complete node's */
    for (size_t i = 0; i < n; i++)
        if (strcmp(ns[i].state, "complete") != 0 && strcmp(state, "incomplete") != 0)
            state = ns[i].state;
    size_t big = 0; /* the node with the largest memory peak */
    for (size_t i = 1; i < n; i++)
        if (!(ns[big].peak_mem >= ns[i].peak_mem))
            big = i;
    if (json) {
        /* the keys of a run's summary for the same figures (docs/FORMAT.md), and the nodes' own summaries */
        jw_t w;
        jw_init(&w, &b);
        jw_open(&w, NULL);
        jw_str(&w, "mode", "job");
        jw_str(&w, "recording", path);
        jw_int(&w, "node_count", (int64_t)n);
        jw_str(&w, "state", state);
        jw_int(&w, "incomplete_nodes", incomplete);
        jw_num(&w, "wall_time_s", wall);
        jw_open(&w, "cpu");
        jw_num(&w, "total_s", cpu);
        jw_num(&w, "total_hours", cpu / 3600);
        jw_num(&w, "mean_cores", wall > 0 ? cpu / wall : NAN);
        jw_num(&w, "allocated_core_s", have_core_s ? core_s : NAN);
        jw_num(&w, "efficiency", eff);
        jw_close(&w);
        jw_open(&w, "memory");
        jw_num(&w, "peak_bytes", n ? ns[big].peak_mem : NAN);
        jw_str(&w, "peak_method",
               "the largest node's peak (each node's own headline: nodes' peaks need not be "
               "simultaneous, so they are not added)");
        jw_str(&w, "peak_node", n ? ns[big].name : NULL);
        jw_close(&w);
        jw_open(&w, "io");
        jw_num(&w, "read_bytes", rd);
        jw_num(&w, "write_bytes", wr);
        jw_num(&w, "read_chars", rch);
        jw_num(&w, "write_chars", wch);
        jw_close(&w);
        jw_open(&w, "network");
        jw_num(&w, "rx_bytes", rx);
        jw_num(&w, "tx_bytes", tx);
        jw_str(&w, "method", "every node's interfaces but lo, summed");
        jw_close(&w);
        jw_open(&w, "infiniband");
        jw_num(&w, "rcv_bytes", ibr);
        jw_num(&w, "xmit_bytes", ibt);
        jw_close(&w);
        jw_open(&w, "energy");
        jw_num(&w, "node_energy_j", en);
        jw_close(&w);
        jw_open(&w, "gpu");
        jw_int(&w, "device_count", ngpus);
        jw_open(&w, "job");
        jw_num(&w, "energy_j", gen);
        jw_close(&w);
        jw_close(&w);
        jw_open(&w, "exact");
        jw_bool(&w, "cpu", exact);
        jw_close(&w);
        jw_array(&w, "nodes");
        for (size_t i = 0; i < n; i++)
            node_json(&w, &ns[i]);
        jw_array_close(&w);
        jw_array(&w, "flags");
        for (size_t i = 0; i < nf; i++) {
            jw_open(&w, NULL);
            jw_str(&w, "kind", fl[i].kind);
            jw_str(&w, "node", fl[i].node);
            jw_str(&w, "text", fl[i].text);
            jw_close(&w);
        }
        jw_array_close(&w);
        jw_close(&w);
        buf_append(&b, "\n", 1);
        rc = jw_error(&w) < 0 ? EXIT_FAIL : 0;
    } else {
        buf_printf(&b, "jobscope job recording %s: %zu node%s\n", path, n, n == 1 ? "" : "s");
        buf_printf(
            &b,
            "  job            %s CPU-hours (%s CPU-s%s), efficiency %s of the allocated cores, wall %s s\n",
            num_str(a, sizeof(a), "%.4f", cpu / 3600), num_str(c, sizeof(c), "%.3f", cpu),
            exact ? ", exact" : ", not exact on every node", num_str(d, sizeof(d), "%.1f%%", eff * 100),
            num_str(e, sizeof(e), "%.3f", wall));
        buf_printf(&b, "  I/O            read %s, written %s (storage)\n", bytes_str(a, sizeof(a), rd),
                   bytes_str(c, sizeof(c), wr));
        buf_printf(&b, "  network        received %s, sent %s (the nodes' interfaces but lo)",
                   bytes_str(a, sizeof(a), rx), bytes_str(c, sizeof(c), tx));
        if (!isnan(ibr) || !isnan(ibt))
            buf_printf(&b, "; InfiniBand received %s, sent %s", bytes_str(a, sizeof(a), ibr),
                       bytes_str(c, sizeof(c), ibt));
        buf_printf(&b, "\n");
        if (!isnan(en) || !isnan(gen))
            buf_printf(&b, "  energy         nodes %s J (RAPL), GPUs %s J\n",
                       num_str(a, sizeof(a), "%.1f", en), num_str(c, sizeof(c), "%.1f", gen));
        if (ngpus)
            buf_printf(&b, "  GPUs           %d\n", ngpus);
        buf_printf(&b, "  %-12s %8s %6s %10s %7s %11s %11s %10s %10s %s\n", "node", "wall s", "cores",
                   "CPU s", "eff", "peak mem", "mem limit", "read", "written", "GPU util");
        for (size_t i = 0; i < n; i++) {
            const node_sum_t *x = &ns[i];
            char m1[32], m2[32], r1[32], w1[32], g1[32];
            buf_printf(&b, "  %-12s %8s %6s %10s %7s %11s %11s %10s %10s %s%s\n", x->name,
                       num_str(a, sizeof(a), "%.2f", x->wall_s), num_str(c, sizeof(c), "%.4g", x->cores),
                       num_str(d, sizeof(d), "%.3f", x->cpu_s),
                       num_str(e, sizeof(e), "%.1f%%", x->efficiency * 100),
                       bytes_str(m1, sizeof(m1), x->peak_mem), bytes_str(m2, sizeof(m2), x->mem_limit),
                       bytes_str(r1, sizeof(r1), x->read_b), bytes_str(w1, sizeof(w1), x->write_b),
                       x->ngpus ? num_str(g1, sizeof(g1), "%.1f%%", x->gpu_util * 100) : "-",
                       x->exact_cpu ? "" : "  (CPU not exact)");
        }
        int64_t bound = n ? ns[0].offset_bound_ns : 0;
        buf_printf(&b, "  memory         peak %s on node %s (each node's own headline; not added up)\n",
                   bytes_str(a, sizeof(a), n ? ns[big].peak_mem : NAN), n ? ns[big].name : "-");
        buf_printf(&b, "  clocks         offsets from the job's start on each node, within %.3f s:",
                   (double)bound / 1e9);
        for (size_t i = 0; i < n; i++)
            buf_printf(&b, " %s %+.3f s", ns[i].name, (double)ns[i].offset_ns / 1e9);
        buf_printf(&b, "\n");
        double mc = 0;
        for (size_t i = 0; i < n; i++)
            mc = fmax(mc, isnan(ns[i].mon_cost_s) ? 0 : ns[i].mon_cost_s);
        buf_printf(&b, "  monitor        at most %.1f ms per sample on a node\n", mc * 1e3);
        if (!nf)
            buf_printf(&b, "  flags          none\n");
        for (size_t i = 0; i < nf; i++)
            buf_printf(&b, "  flag           %s\n", fl[i].text);
        for (size_t i = 0; form == JS_SUMMARY_FULL && i < n; i++)
            if (ns[i].text.p)
                buf_printf(&b, "\nnode %s:\n%s", ns[i].name, ns[i].text.p);
    }
    if (rc == 0)
        fputs(b.p ? b.p : "", stdout);
    buf_free(&b);
    free(fl);
    for (size_t i = 0; i < n; i++) {
        buf_free(&ns[i].json);
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
