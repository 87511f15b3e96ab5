/* SPDX-License-Identifier: MIT
 *
 * perfmon's data for one host, from jobscope's model (see perfmon.h): every sample appends one timestamp to
 * perfmon's series (cpu_metrics: CPU time and percent, memory, I/O, network, InfiniBand, RAPL, threads and
 * descriptors; perf_metrics: the perf counters per interval), and the writers turn them into perfmon's JSON
 * host objects and dataframes (CSV, HDF5). The values are the model's: cumulative figures count from the
 * monitor's start and are exact where jobscope's accounting is (docs/PERFMON.md).
 */
#include "cli/perfmon.h"

#include "core/json.h"
#include "sinks/hdf5.h"
#include "sinks/tabsink.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COMMS 256

void pm_host_init(pm_host_t *h, const char *host, double interval_s)
{
    memset(h, 0, sizeof(*h));
    snprintf(h->host, sizeof(h->host), "%s", host ? host : "node");
    h->interval_s = interval_s;
    h->mem_total = NAN;
}

void pm_host_free(pm_host_t *h)
{
    for (int f = 0; f < PM__MAX; f++) {
        for (size_t i = 0; i < h->ns[f]; i++)
            free(h->s[f][i].v);
        free(h->s[f]);
        h->s[f] = NULL;
        h->ns[f] = 0;
    }
    for (size_t i = 0; i < h->ncomms; i++)
        free(h->comms[i]);
    free(h->comms);
    h->comms = NULL;
    h->ncomms = 0;
    buf_free(&h->parent);
    buf_free(&h->inventory);
}

const pm_series_t *pm_series(const pm_host_t *h, pm_file_t f, const char *group, const char *key)
{
    for (size_t i = 0; i < h->ns[f]; i++)
        if (!strcmp(h->s[f][i].group, group ? group : "") && !strcmp(h->s[f][i].key, key))
            return &h->s[f][i];
    return NULL;
}

/* series: the series group.key of file f, created (with NAN for the timestamps before this one) if new. */
static pm_series_t *series(pm_host_t *h, pm_file_t f, const char *group, const char *key, const char *header)
{
    pm_series_t *s = (pm_series_t *)pm_series(h, f, group, key);
    if (s)
        return s;
    pm_series_t *a = realloc(h->s[f], (h->ns[f] + 1) * sizeof(*a));
    if (!a)
        return NULL;
    h->s[f] = a;
    s = &a[h->ns[f]++];
    memset(s, 0, sizeof(*s));
    snprintf(s->group, sizeof(s->group), "%s", group ? group : "");
    snprintf(s->key, sizeof(s->key), "%s", key);
    snprintf(s->header, sizeof(s->header), "%s", header ? header : key);
    return s;
}

/* push: value v at the current timestamp (index nsamples - 1) of s; the timestamps it missed are NAN. */
static int push(pm_host_t *h, pm_series_t *s, double v)
{
    if (!s)
        return -ENOMEM;
    if (h->nsamples > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        while (cap < h->nsamples)
            cap *= 2;
        double *p = realloc(s->v, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        s->v = p;
        s->cap = cap;
    }
    while (s->n + 1 < h->nsamples)
        s->v[s->n++] = NAN;
    if (s->n < h->nsamples)
        s->v[s->n++] = v;
    else
        s->v[h->nsamples - 1] = v; /* a second value for the same key (summed by the caller) */
    return 0;
}

static int put(pm_host_t *h, pm_file_t f, const char *group, const char *key, const char *header, double v)
{
    return push(h, series(h, f, group, key, header), v);
}

/* add: v added to the value already at this timestamp (several rows of one key: RAPL zones, perf targets). */
static int add(pm_host_t *h, pm_file_t f, const char *group, const char *key, const char *header, double v)
{
    pm_series_t *s = series(h, f, group, key, header);
    if (!s)
        return -ENOMEM;
    if (s->n == h->nsamples && s->n > 0) {
        double *x = &s->v[s->n - 1];
        *x = isnan(*x) ? v : isnan(v) ? *x : *x + v;
        return 0;
    }
    return push(h, s, v);
}

static double col(const js_view_t *v, size_t row, const char *name)
{
    int c = table_column(v->table, name);
    if (c < 0 || row >= v->rows->nrows)
        return NAN;
    const js_value_t *x = &rows_row(v->rows, row)[c];
    if (!x->present)
        return NAN;
    return v->table->cols[c].type == JS_INT ? (double)x->i : v->table->cols[c].type == JS_REAL ? x->d : NAN;
}

static const char *col_str(const js_view_t *v, size_t row, const char *name)
{
    int c = table_column(v->table, name);
    if (c < 0 || row >= v->rows->nrows || v->table->cols[c].type != JS_TEXT)
        return NULL;
    const js_value_t *x = &rows_row(v->rows, row)[c];
    return x->present ? rows_str(v->rows, x) : NULL;
}

static bool view(js_model_t *m, const char *name, js_view_t *v)
{
    return model_view(m, name, v) == 0 && v->rows && v->table;
}

/* rapl_key: perfmon's name of a RAPL domain ("package-0", "package-0/dram" -> "dram-0", "psys" -> "psys-0").
 */
static void rapl_key(const char *domain, char *key, size_t cap, char *header, size_t hcap)
{
    const char *slash = strchr(domain, '/');
    const char *pkg = strchr(domain, '-');
    int socket = pkg && (!slash || pkg < slash) ? atoi(pkg + 1) : 0;
    if (slash)
        snprintf(key, cap, "%s-%d", slash + 1, socket);
    else if (pkg)
        snprintf(key, cap, "%s", domain);
    else
        snprintf(key, cap, "%s-%d", domain, socket);
    char dom[32];
    snprintf(dom, sizeof(dom), "%.*s", (int)(strrchr(key, '-') - key), key);
    snprintf(header, hcap, "RAPL %s %d [uJ]", dom, socket);
}

/* perf event names: jobscope's -> perfmon's group and name */
static const struct {
    const char *ours, *group, *name;
} perf_names[] = {
    {"cycles", "hardware_events", "cycles"},
    {"instructions", "hardware_events", "instructions"},
    {"cache_misses", "hardware_events", "cache-misses"},
    {"cache_references", "hardware_events", "cache-references"},
    {"branch_instructions", "hardware_events", "branches"},
    {"branch_misses", "hardware_events", "branch-misses"},
    {"context_switches", "software_events", "context-switches"},
    {"cpu_migrations", "software_events", "cpu-migrations"},
    {"fp_scalar_single", "FLOPS_SP", "fp_scalar_single"},
    {"fp_128b_packed_single", "FLOPS_SP", "fp_128b_packed_single"},
    {"fp_256b_packed_single", "FLOPS_SP", "fp_256b_packed_single"},
    {"fp_512b_packed_single", "FLOPS_SP", "fp_512b_packed_single"},
    {"fp_scalar_double", "FLOPS_DP", "fp_scalar_double"},
    {"fp_128b_packed_double", "FLOPS_DP", "fp_128b_packed_double"},
    {"fp_256b_packed_double", "FLOPS_DP", "fp_256b_packed_double"},
    {"fp_512b_packed_double", "FLOPS_DP", "fp_512b_packed_double"},
};

static int feed_comms(pm_host_t *h, js_model_t *m)
{
    js_view_t v;
    if (!view(m, "process", &v))
        return 0;
    double first = INFINITY;
    size_t first_row = SIZE_MAX;
    for (size_t r = 0; r < v.rows->nrows; r++) {
        const char *c = col_str(&v, r, "comm");
        double st = col(&v, r, "start_ticks");
        if (!isnan(st) && st < first) {
            first = st;
            first_row = r;
        }
        if (!c || h->ncomms >= MAX_COMMS)
            continue;
        bool known = false;
        for (size_t i = 0; i < h->ncomms && !known; i++)
            known = !strcmp(h->comms[i], c);
        if (known)
            continue;
        char **a = realloc(h->comms, (h->ncomms + 1) * sizeof(*a));
        if (!a)
            return -ENOMEM;
        h->comms = a;
        if (!(a[h->ncomms] = strdup(c)))
            return -ENOMEM;
        h->ncomms++;
    }
    if (!h->parent.len && first_row != SIZE_MAX) { /* the job's first process on the node */
        jw_t w;
        jw_init(&w, &h->parent);
        jw_open(&w, NULL);
        jw_num(&w, "pid", col(&v, first_row, "pid"));
        jw_num(&w, "ppid", col(&v, first_row, "ppid"));
        jw_str(&w, "name", col_str(&v, first_row, "comm"));
        jw_num(&w, "start_ticks", first);
        jw_close(&w);
        return jw_error(&w);
    }
    return 0;
}

static int feed_inventory(pm_host_t *h, const js_sample_t *s)
{
    const js_rows_t *inv = s ? sample_rows_named(s, "inventory") : NULL;
    if (h->inv_done || !inv || !inv->nrows)
        return 0;
    h->inv_done = true;
    int cs = table_column(inv->table, "source"), ck = table_column(inv->table, "key"),
        cv = table_column(inv->table, "value");
    if (cs < 0 || ck < 0 || cv < 0)
        return 0;
    jw_t w;
    jw_init(&w, &h->inventory);
    jw_open(&w, NULL);
    const char *open_src = NULL;
    for (size_t r = 0; r < inv->nrows; r++) {
        const js_value_t *x = rows_row(inv, r);
        if (!x[cs].present || !x[ck].present)
            continue;
        const char *src = rows_str(inv, &x[cs]);
        if (!open_src || strcmp(open_src, src) != 0) {
            if (open_src)
                jw_close(&w);
            jw_open(&w, src);
            open_src = src;
        }
        jw_str(&w, rows_str(inv, &x[ck]), x[cv].present ? rows_str(inv, &x[cv]) : NULL);
    }
    if (open_src)
        jw_close(&w);
    jw_close(&w);
    return jw_error(&w);
}

int pm_host_feed(pm_host_t *h, js_model_t *m, const js_sample_t *s)
{
    const js_tree_point_t *p = model_point(m);
    if (!p)
        return 0;
    h->nsamples++;
    int r = 0;
    double dt = p->dt_s;
    /* cpu_metrics */
    r |= put(h, PM_CPU, "", "time_stamps", "Timestamps", (double)p->t_unix_ns / 1e9);
    double cpu_s = p->cpu_s, cores = p->cpu_cores;
    js_view_t v;
    if (model_cfg(m)->scope == JS_SCOPE_CGROUP && view(m, "cgroup", &v) && v.rows->nrows) {
        double c =
            col(&v, 0, "cpu_s"); /* the job's cgroup: every task's CPU, daemons that left the tree too */
        if (!isnan(c)) {
            cpu_s = c;
            cores = col(&v, 0, "cpu_cores");
        }
    }
    r |= put(h, PM_CPU, "", "cpu_time", "CPU time [s]", cpu_s);
    r |= put(h, PM_CPU, "", "cpu_percent", "CPU usage [%]", cores * 100);
    double sys = NAN;
    if (view(m, "system", &v) && v.rows->nrows) {
        sys = col(&v, 0, "cpu_util_fraction") * 100;
        double mt = col(&v, 0, "mem_total_bytes");
        if (!isnan(mt))
            h->mem_total = mt;
    }
    r |= put(h, PM_CPU, "", "cpu_percent_sys", "System CPU usage [%]", sys);
    double vms = NAN;
    const js_rows_t *proc = s ? sample_rows_named(s, "proc") : NULL;
    int cvs = proc ? table_column(proc->table, "vsize_bytes") : -1;
    for (size_t i = 0; cvs >= 0 && i < proc->nrows; i++) {
        const js_value_t *x = &rows_row(proc, i)[cvs];
        if (x->present)
            vms = (isnan(vms) ? 0 : vms) + (double)x->i;
    }
    if (proc && !proc->nrows)
        vms = 0;
    r |= put(h, PM_CPU, "memory_info", "rss", "Memory RSS [bytes]", p->rss);
    r |= put(h, PM_CPU, "memory_info", "vms", "Memory VMS [bytes]", vms);
    r |= put(h, PM_CPU, "memory_info", "shared", "Memory shared [bytes]", p->shared);
    r |= put(h, PM_CPU, "memory_full_info", "uss", "Memory USS [bytes]", p->uss);
    r |= put(h, PM_CPU, "memory_full_info", "swap", "Memory swap [bytes]", p->swap);
    r |= put(h, PM_CPU, "", "memory_percent", "Memory [%]",
             h->mem_total > 0 ? 100 * p->rss / h->mem_total : NAN);
    r |= put(h, PM_CPU, "io_counters", "read_bytes", "IO read [bytes]", p->io[IO_READ]);
    r |= put(h, PM_CPU, "io_counters", "write_bytes", "IO write [bytes]", p->io[IO_WRITE]);
    r |= put(h, PM_CPU, "io_counters", "read_count", "IO read count", p->io[IO_SYSCR]);
    r |= put(h, PM_CPU, "io_counters", "write_count", "IO write count", p->io[IO_SYSCW]);
    if (view(m, "network", &v) && isfinite(dt))
        for (size_t i = 0; i < v.rows->nrows; i++) {
            const char *ifc = col_str(&v, i, "iface");
            if (!ifc || !strcmp(ifc, "lo"))
                continue;
            static const char *const cols[4] = {"tx_bytes_per_s", "rx_bytes_per_s", "tx_packets_per_s",
                                                "rx_packets_per_s"};
            for (int k = 0; k < 4; k++) {
                double rate = col(&v, i, cols[k]);
                if (isfinite(rate))
                    h->net[k] += rate * dt;
            }
        }
    r |= put(h, PM_CPU, "net_io_counters", "bytes_sent", "Network sent [bytes]", h->net[0]);
    r |= put(h, PM_CPU, "net_io_counters", "bytes_recv", "Network received [bytes]", h->net[1]);
    r |= put(h, PM_CPU, "net_io_counters", "packets_sent", "Network packets sent", h->net[2]);
    r |= put(h, PM_CPU, "net_io_counters", "packets_recv", "Network packets received", h->net[3]);
    r |= put(h, PM_CPU, "", "num_threads", "Number of threads", p->threads);
    r |= put(h, PM_CPU, "", "num_fds", "Number of file descriptors", p->fds);
    series(h, PM_CPU, "ib_io_counters", "", NULL); /* every key of perfmon's schema: empty without IB, RAPL */
    series(h, PM_CPU, "rapl_powercap", "", NULL);
    if (view(m, "infiniband", &v) && v.rows->nrows) {
        double x = 0, rcv = 0, xp = 0, rp = 0;
        for (size_t i = 0; i < v.rows->nrows; i++) {
            double a = col(&v, i, "xmit_bytes"), b = col(&v, i, "rcv_bytes");
            x += isfinite(a) ? a : 0;
            rcv += isfinite(b) ? b : 0;
            double c = col(&v, i, "xmit_packets_per_s"), d = col(&v, i, "rcv_packets_per_s");
            xp += isfinite(c) && isfinite(dt) ? c * dt : 0;
            rp += isfinite(d) && isfinite(dt) ? d * dt : 0;
        }
        h->ib[0] += xp;
        h->ib[1] += rp;
        r |= put(h, PM_CPU, "ib_io_counters", "port_xmit_data", "IB xmit data [bytes]", x);
        r |= put(h, PM_CPU, "ib_io_counters", "port_rcv_data", "IB recv data [bytes]", rcv);
        r |= put(h, PM_CPU, "ib_io_counters", "port_xmit_packets", "IB xmit packets", h->ib[0]);
        r |= put(h, PM_CPU, "ib_io_counters", "port_rcv_packets", "IB recv packets", h->ib[1]);
    }
    if (view(m, "energy", &v))
        for (size_t i = 0; i < v.rows->nrows; i++) {
            const char *dom = col_str(&v, i, "domain");
            double e = col(&v, i, "energy_j");
            if (!dom)
                continue;
            char key[64], header[96];
            rapl_key(dom, key, sizeof(key), header, sizeof(header));
            r |= add(h, PM_CPU, "rapl_powercap", key, header, e * 1e6);
        }
    if (view(m, "perf_derived", &v) && v.rows->nrows) {
        double bw = col(&v, 0, "mem_read_bytes_per_s");
        if (isfinite(bw) || pm_series(h, PM_CPU, "", "memory_bw")) {
            pm_series_t *sb = series(h, PM_CPU, "", "memory_bw", "Memory (read) bandwidth [MiB/s]");
            if (sb)
                sb->frame_scale = 1048576.0;
            r |= push(h, sb, bw);
        }
    }
    r |= feed_comms(h, m);
    r |= feed_inventory(h, s);

    /* perf_metrics: the counts of each interval, summed over targets */
    r |= put(h, PM_PERF, "", "time_stamps", "Timestamps", (double)p->t_unix_ns / 1e9);
    static const char *const groups[] = {"hardware_events", "software_events", "L2",      "L2cache", "L3",
                                         "L3cache",         "FLOPS_SP",        "FLOPS_DP"};
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
        series(h, PM_PERF, groups[g], "", NULL); /* the group exists (an empty object without events) */
    if (view(m, "perf", &v))
        for (size_t i = 0; i < v.rows->nrows; i++) {
            const char *ev = col_str(&v, i, "event");
            for (size_t k = 0; ev && k < sizeof(perf_names) / sizeof(perf_names[0]); k++)
                if (!strcmp(ev, perf_names[k].ours))
                    r |= add(h, PM_PERF, perf_names[k].group, perf_names[k].name, perf_names[k].name,
                             col(&v, i, "interval_count"));
        }
    if (view(m, "perf_derived", &v) && v.rows->nrows) {
        double sp = col(&v, 0, "flop_sp_per_s"), dp = col(&v, 0, "flop_dp_per_s");
        if (isfinite(sp) || pm_series(h, PM_PERF, "FLOPS_SP", "derv_MFLOPS"))
            r |= put(h, PM_PERF, "FLOPS_SP", "derv_MFLOPS", "FLOPS SP [MFLOPS/s]", sp / 1e6);
        if (isfinite(dp) || pm_series(h, PM_PERF, "FLOPS_DP", "derv_MFLOPS"))
            r |= put(h, PM_PERF, "FLOPS_DP", "derv_MFLOPS", "FLOPS DP [MFLOPS/s]", dp / 1e6);
    }
    return r ? -ENOMEM : 0;
}

/* ---- JSON ---- */

/* values: a series as perfmon writes it: every timestamp has a number (the last one repeated where jobscope
 * has none, 0 before the first). */
static void values(jw_t *w, const pm_host_t *h, const pm_series_t *s, bool integral)
{
    jw_array(w, s->key);
    double last = 0;
    for (size_t i = 0; i < h->nsamples; i++) {
        double x = i < s->n ? s->v[i] : NAN;
        if (isfinite(x))
            last = x;
        if (integral)
            jw_int(w, NULL, (int64_t)llround(last));
        else
            jw_num(w, NULL, last);
    }
    jw_array_close(w);
}

/* integral: perfmon's integer metrics (psutil's counts and byte counters) */
static bool integral(const pm_series_t *s, pm_file_t f)
{
    if (f == PM_PERF)
        return strncmp(s->key, "derv", 4) != 0 && strcmp(s->key, "time_stamps") != 0;
    static const char *const reals[] = {"time_stamps",     "cpu_time",       "cpu_percent",
                                        "cpu_percent_sys", "memory_percent", "memory_bw"};
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
        if (!strcmp(s->key, reals[i]))
            return false;
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pm_json_host(js_buf_t *b, const pm_host_t *h, pm_file_t f)
{
    jw_t w;
    jw_init(&w, b);
    jw_open(&w, NULL);
    /* members in perfmon's order (json.dump(sort_keys=True)): top-level keys and groups sorted by name */
    const char *keys[128];
    size_t nk = 0;
    for (size_t i = 0; i < h->ns[f] && nk < 120; i++) {
        const char *k = h->s[f][i].group[0] ? h->s[f][i].group : h->s[f][i].key;
        bool dup = false;
        for (size_t j = 0; j < nk && !dup; j++)
            dup = !strcmp(keys[j], k);
        if (!dup)
            keys[nk++] = k;
    }
    if (f == PM_CPU) {
        keys[nk++] = "child_proc_md";
        keys[nk++] = "parent_proc_md";
    }
    keys[nk++] = "host_name";
    keys[nk++] = "sampling_frequency";
    qsort(keys, nk, sizeof(*keys), cmp_str);
    for (size_t k = 0; k < nk; k++) {
        if (!strcmp(keys[k], "host_name")) {
            jw_str(&w, "host_name", h->host);
        } else if (!strcmp(keys[k], "sampling_frequency")) {
            jw_num(&w, "sampling_frequency", h->interval_s);
        } else if (!strcmp(keys[k], "child_proc_md")) {
            jw_array(&w, "child_proc_md");
            for (size_t i = 0; i < h->ncomms; i++)
                jw_str(&w, NULL, h->comms[i]);
            jw_array_close(&w);
        } else if (!strcmp(keys[k], "parent_proc_md")) {
            jw_raw(&w, "parent_proc_md", h->parent.len ? h->parent.p : "{}");
        } else {
            const pm_series_t *top = pm_series(h, f, "", keys[k]);
            if (top) {
                values(&w, h, top, integral(top, f));
                continue;
            }
            jw_open(&w, keys[k]); /* a group: its members sorted */
            const pm_series_t *mem[128];
            size_t nm = 0;
            for (size_t i = 0; i < h->ns[f] && nm < 128; i++)
                if (!strcmp(h->s[f][i].group, keys[k]) && h->s[f][i].key[0])
                    mem[nm++] = &h->s[f][i];
            for (size_t i = 1; i < nm; i++) /* insertion sort by key */
                for (size_t j = i; j > 0 && strcmp(mem[j - 1]->key, mem[j]->key) > 0; j--) {
                    const pm_series_t *t = mem[j];
                    mem[j] = mem[j - 1];
                    mem[j - 1] = t;
                }
            for (size_t i = 0; i < nm; i++)
                values(&w, h, mem[i], integral(mem[i], f));
            jw_close(&w);
        }
    }
    jw_close(&w);
    return jw_error(&w);
}

/* inv: the value of inventory `key` of source "host" in the host's inventory JSON, or NULL (copied). */
static const char *inv(const pm_host_t *h, const char *key, char *buf, size_t cap)
{
    char needle[160];
    snprintf(needle, sizeof(needle), "\"%s\": \"", key);
    const char *p = h->inventory.p ? strstr(h->inventory.p, needle) : NULL;
    if (!p)
        return NULL;
    p += strlen(needle);
    size_t n = 0;
    while (p[n] && p[n] != '"' && n + 1 < cap)
        n++;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

int pm_json_meta_host(js_buf_t *b, const pm_host_t *h)
{
    /* perfmon's lscpu fields, from jobscope's inventory */
    static const struct {
        const char *lscpu, *inv;
    } cpu[] = {
        {"Architecture", "machine"},
        {"CPU(s)", "cpu.count"},
        {"On-line CPU(s) list", "cpu.online"},
        {"Thread(s) per core", "cpu.threads_per_core"},
        {"Core(s) per socket", "cpu.cores_per_socket"},
        {"Socket(s)", "cpu.sockets"},
        {"NUMA node(s)", "numa.nodes"},
        {"Vendor ID", "cpu.vendor"},
        {"Model name", "cpu.model"},
        {"CPU family", "cpu.family"},
        {"Model", "cpu.model_id"},
        {"Stepping", "cpu.stepping"},
        {"L1d cache", "cache.L1d.total_bytes"},
        {"L1i cache", "cache.L1i.total_bytes"},
        {"L2 cache", "cache.L2.total_bytes"},
        {"L3 cache", "cache.L3.total_bytes"},
    };
    jw_t w;
    jw_init(&w, b);
    jw_open(&w, NULL);
    jw_open(&w, "cpu");
    char buf[256];
    for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
        jw_str(&w, cpu[i].lscpu, inv(h, cpu[i].inv, buf, sizeof(buf)));
    jw_close(&w);
    jw_str(&w, "host_name", h->host);
    jw_raw(&w, "inventory", h->inventory.len ? h->inventory.p : "{}");
    jw_open(&w, "memory");
    const char *mt = inv(h, "memory.total_bytes", buf, sizeof(buf));
    jw_num(&w, "MemTotal", mt ? strtod(mt, NULL) : h->mem_total);
    const char *sw = inv(h, "memory.swap_total_bytes", buf, sizeof(buf));
    jw_num(&w, "SwapTotal", sw ? strtod(sw, NULL) : NAN);
    jw_close(&w);
    jw_num(&w, "sampling_frequency", h->interval_s);
    jw_close(&w);
    return jw_error(&w);
}

int pm_json_file(js_buf_t *b, pm_host_t *const *hosts, size_t n, pm_file_t f)
{
    /* members sorted by name, as perfmon's json.dump(sort_keys=True): host_names, the hosts, then
     * sampling_frequency (host names sort between the two when they start with a letter before 's') */
    size_t *order = malloc((n ? n : 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(hosts[order[j - 1]]->host, hosts[order[j]]->host) > 0; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    jw_t w;
    jw_init(&w, b);
    jw_open(&w, NULL);
    jw_array(&w, "host_names");
    for (size_t i = 0; i < n; i++)
        jw_str(&w, NULL, hosts[order[i]]->host);
    jw_array_close(&w);
    int r = 0;
    for (size_t i = 0; i < n && !r; i++) {
        js_buf_t one = {0};
        r = f == PM__MAX ? pm_json_meta_host(&one, hosts[order[i]]) : pm_json_host(&one, hosts[order[i]], f);
        if (!r)
            jw_raw(&w, hosts[order[i]]->host, one.p);
        buf_free(&one);
    }
    jw_num(&w, "sampling_frequency", n ? hosts[0]->interval_s : NAN);
    jw_close(&w);
    free(order);
    return r ? r : jw_error(&w);
}

/* ---- dataframes ---- */

/* frame_cols: the dataframe's metric columns of file f over all hosts (first host's order, then new ones). */
static size_t frame_cols(pm_host_t *const *hosts, size_t n, pm_file_t f, const pm_series_t **cols, size_t cap)
{
    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < hosts[i]->ns[f]; k++) {
            const pm_series_t *s = &hosts[i]->s[f][k];
            if (!s->key[0] || !strcmp(s->key, "time_stamps"))
                continue;
            bool known = false;
            for (size_t j = 0; j < nc && !known; j++)
                known = !strcmp(cols[j]->header, s->header);
            if (!known && nc < cap)
                cols[nc++] = s;
        }
    return nc;
}

int pm_csv(FILE *out, pm_host_t *const *hosts, size_t n, pm_file_t f)
{
    const pm_series_t *cols[256];
    size_t nc = frame_cols(hosts, n, f, cols, 256);
    const char **names = calloc(nc + 2, sizeof(*names));
    js_cell_t *cells = calloc(nc + 2, sizeof(*cells));
    void *st = NULL;
    int r = names && cells ? 0 : -ENOMEM;
    if (r == 0) {
        names[0] = "Host";
        names[1] = "Timestamps";
        for (size_t c = 0; c < nc; c++)
            names[c + 2] = cols[c]->header;
        r = sink_csv.begin(out, names, nc + 2, &st);
    }
    for (size_t i = 0; r == 0 && i < n; i++) {
        const pm_host_t *h = hosts[i];
        const pm_series_t *ts = pm_series(h, f, "", "time_stamps");
        for (size_t t = 0; r == 0 && ts && t < h->nsamples; t++) {
            cells[0] = cell_text(h->host);
            cells[1] = cell_real(ts->v[t]);
            for (size_t c = 0; c < nc; c++) {
                const pm_series_t *s = pm_series(h, f, cols[c]->group, cols[c]->key);
                double x = s && t < s->n ? s->v[t] / (s->frame_scale > 0 ? s->frame_scale : 1) : NAN;
                cells[c + 2] = isfinite(x) ? cell_real(x) : cell_missing();
            }
            r = sink_csv.row(st, cells);
        }
    }
    if (st) {
        int e = sink_csv.end(st);
        r = r ? r : e;
    }
    free(names);
    free(cells);
    return r;
}

int pm_hdf5(const char *path, const char *job, pm_host_t *const *hosts, size_t n, char *err, size_t errlen)
{
    js_table_t tabs[2];
    js_column_t *colv[2] = {NULL, NULL};
    char *names[2] = {NULL, NULL};
    const pm_series_t *cols[2][256];
    size_t nc[2];
    int r = 0;
    for (int f = 0; f < 2 && r == 0; f++) {
        nc[f] = frame_cols(hosts, n, (pm_file_t)f, cols[f], 256);
        colv[f] = calloc(nc[f] + 2, sizeof(*colv[f]));
        names[f] = calloc(nc[f] + 2, 128);
        if (!colv[f] || !names[f]) {
            r = -ENOMEM;
            break;
        }
        colv[f][0] = (js_column_t){"Host", "text", JS_TEXT, JS_LABEL, 0, "Host"};
        colv[f][1] = (js_column_t){"Timestamps", "s", JS_REAL, JS_LABEL, 0, "Timestamps"};
        for (size_t c = 0; c < nc[f]; c++) {
            char *nm = names[f] + 128 * (c + 2);
            snprintf(nm, 128, "%s", cols[f][c]->header);
            for (char *q = nm; *q; q++) /* a '/' would name a group in HDF5 */
                if (*q == '/')
                    *q = '|';
            colv[f][c + 2] = (js_column_t){nm, "", JS_REAL, JS_GAUGE, 0, cols[f][c]->header};
        }
        snprintf(names[f], 128, "%s_%s", f == PM_CPU ? "cpu_metrics" : "perf_metrics", job);
        tabs[f] = (js_table_t){
            names[f], f == PM_CPU ? "perfmon's cpu_metrics dataframe" : "perfmon's perf_metrics dataframe",
            nc[f] + 2, colv[f]};
    }
    js_h5_t *w = NULL;
    const js_table_t *const list[3] = {&tabs[0], &tabs[1], NULL};
    if (r == 0)
        r = hdf5_open(path, list, &w, err, errlen);
    else
        snprintf(err, errlen, "out of memory");
    for (int f = 0; f < 2 && r == 0; f++) {
        js_rows_t rows;
        rows_init(&rows, &tabs[f]);
        for (size_t i = 0; i < n && r == 0; i++) {
            const pm_host_t *h = hosts[i];
            const pm_series_t *ts = pm_series(h, (pm_file_t)f, "", "time_stamps");
            for (size_t t = 0; ts && t < h->nsamples && r == 0; t++) {
                js_value_t *v = rows_add(&rows);
                if (!v || rows_set_str(&rows, &v[0], h->host, strlen(h->host)) < 0) {
                    r = -ENOMEM;
                    break;
                }
                val_real(&v[1], ts->v[t]);
                for (size_t c = 0; c < nc[f]; c++) {
                    const pm_series_t *s = pm_series(h, (pm_file_t)f, cols[f][c]->group, cols[f][c]->key);
                    val_real(&v[c + 2],
                             s && t < s->n ? s->v[t] / (s->frame_scale > 0 ? s->frame_scale : 1) : NAN);
                }
            }
        }
        if (r == 0)
            r = hdf5_write_rows(w, 0, &rows);
        rows_free(&rows);
        if (r < 0)
            snprintf(err, errlen, "%s: %s", path, strerror(-r));
    }
    int c = hdf5_close(w);
    if (r == 0 && c < 0) {
        r = c;
        snprintf(err, errlen, "%s: %s", path, strerror(-c));
    }
    for (int f = 0; f < 2; f++) {
        free(colv[f]);
        free(names[f]);
    }
    return r;
}
