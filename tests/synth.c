/* SPDX-License-Identifier: MIT
 *
 * The synthetic run of synth.h: raw counters accumulated the way the kernel keeps them (CPU in clock ticks,
 * I/O and energy as running totals, RAPL wrapping at its range), so the model derives the same kinds of
 * figures it derives from a real recording. Deterministic: a xorshift generator with a fixed seed per node.
 */
#include "synth.h"

#include "core/source.h"
#include "sources/cpufreq.h"
#include "sources/proc_tree.h"
#include "sources/rapl.h"
#include "sources/self.h"
#include "sources/system.h"
#include "sources/thermal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)
#define MiB (1024.0 * 1024)
#define CLK 100
#define MAXP 4096
#define MAXC 256
#define RAPL_RANGE 262143328850LL

static const double spike_at[SYNTH_SPIKES] = {0.009, 0.143, 0.5, 0.926}; /* fractions of the run */
static const double spike_bytes[SYNTH_SPIKES] = {9.1 * GiB, 7.3 * GiB, 11.7 * GiB, 8.8 * GiB};

struct synth {
    synth_cfg_t c;
    size_t n, i;
    uint64_t rng;
    int64_t t0_mono, t0_unix;
    double utime[MAXP], stime[MAXP], hwm[MAXP], rd[MAXP], wr[MAXP], rchar[MAXP], wchar[MAXP], minflt[MAXP];
    double rss[MAXP], vcsw[MAXP]; /* many processes: what an idle worker keeps */
    double cpu_busy[MAXC], cpu_idle[MAXC], cpu_iowait[MAXC];
    double ctxt, forks, psi_cpu, psi_mem, psi_io, psi_io_full;
    double net_rx, net_tx, lo, disk_r, disk_w, pkg_uj, dram_uj;
    double self_us;
};

static double rnd(synth_t *g)
{
    g->rng ^= g->rng >> 12;
    g->rng ^= g->rng << 25;
    g->rng ^= g->rng >> 27;
    return (double)((g->rng * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

synth_t *synth_new(const synth_cfg_t *cfg)
{
    synth_t *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->c = *cfg;
    if (!(g->c.interval_s > 0))
        g->c.interval_s = 1;
    if (!g->c.ncpus)
        g->c.ncpus = 8;
    if (g->c.ncpus > MAXC)
        g->c.ncpus = MAXC;
    if (!g->c.nprocs)
        g->c.nprocs = 6;
    if (g->c.nprocs > MAXP)
        g->c.nprocs = MAXP;
    if (!(g->c.load > 0))
        g->c.load = 0.75;
    g->n = (size_t)(g->c.hours * 3600 / g->c.interval_s) + 1;
    if (g->n < 3)
        g->n = 3;
    g->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)g->c.node * 0x100000001b3ull);
    g->t0_mono = 1000 * 1000000000LL;
    g->t0_unix = 1714564800LL * 1000000000LL; /* 2024-05-01 12:00 UTC */
    return g;
}

void synth_free(synth_t *g)
{
    free(g);
}

size_t synth_count(const synth_t *g)
{
    return g->n;
}

void synth_model_cfg(const synth_t *g, js_model_cfg_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->mode = JS_MODE_RUN;
    ret->clk_tck = CLK;
    ret->monitor_pid = 999;
    ret->root_pid = 1000;
    ret->interval_ns = (int64_t)(g->c.interval_s * 1e9);
    ret->start_mono_ns = g->t0_mono;
    ret->cores_available = g->c.ncpus;
}

void synth_spike(const synth_t *g, unsigned k, size_t *ret_index, double *ret_bytes)
{
    *ret_index = (size_t)(spike_at[k % SYNTH_SPIKES] * (double)(g->n - 1));
    *ret_bytes = spike_bytes[k % SYNTH_SPIKES];
}

static int put_str(js_rows_t *r, js_value_t *v, const char *s)
{
    return rows_set_str(r, v, s, strlen(s));
}

int synth_next(synth_t *g, js_sample_t *s)
{
    if (g->i >= g->n)
        return 0;
    sample_clear(s);
    size_t i = g->i++;
    const synth_cfg_t *c = &g->c;
    double dt = i ? c->interval_s : 0, t = (double)i * c->interval_s,
           end = (double)(g->n - 1) * c->interval_s;
    double phase = t < 0.05 * end ? 0.3 : t < 0.83 * end ? 1 : 0.5;
    double node_f = 1 - 0.25 * c->node;
    if (node_f < 0.1)
        node_f = 0.1;
    double cores = phase * node_f * c->load * c->ncpus * (0.85 + 0.15 * sin(t / 900)) + 0.3 * rnd(g);
    if (cores > c->ncpus)
        cores = c->ncpus;
    bool burst = fmod(t, 600) < 20;
    int64_t mono = g->t0_mono + (int64_t)llround(t * 1e9), unix_ns = g->t0_unix + (int64_t)llround(t * 1e9);

    js_value_t *v = rows_add(sample_rows(s, &table_samples));
    if (!v)
        return -ENOMEM;
    val_int(&v[SAMPLES_T_MONO], mono);
    val_int(&v[SAMPLES_T_UNIX], unix_ns);
    val_int(&v[SAMPLES_DEADLINE], mono);
    val_int(&v[SAMPLES_MISSED], 0);
    val_int(&v[SAMPLES_FINAL], i == g->n - 1);

    js_rows_t *tree = sample_rows(s, &table_tree);
    if (!(v = rows_add(tree)))
        return -ENOMEM;
    val_int(&v[TREE_MEMBERS], c->nprocs);
    val_int(&v[TREE_ROOT_ALIVE], 1);
    if (put_str(tree, &v[TREE_DISCOVERY], "children") < 0)
        return -ENOMEM;
    val_int(&v[TREE_UNREAD], 0);
    for (int k = TREE_REAPED_UTIME; k <= TREE_REAPED_WRITE_BYTES; k++)
        if (k != TREE_REAPED_MAXRSS)
            val_int(&v[k], 0);

    /* processes: the main one (small, idle) and workers sharing the load. With many more workers than CPUs
     * (a task farm), the load goes to an active set of twice the CPUs that moves on every minute; the others
     * sleep, holding their memory, their counters still */
    js_rows_t *proc = sample_rows(s, &table_proc), *info = sample_rows(s, &table_proc_info);
    unsigned workers = c->nprocs > 1 ? c->nprocs - 1 : 1;
    bool farm = workers > 4 * c->ncpus;
    unsigned active = farm ? 2 * c->ncpus : workers,
             first = farm ? (unsigned)((size_t)(t / 60) * active % workers) : 0;
    double mem_work = (1.5 + 0.5 * sin(t / 7000) + 0.1 * rnd(g)) * GiB * phase;
    double tree_rss = 0;
    for (unsigned p = 0; p < c->nprocs; p++) {
        bool main = p == 0;
        bool busy = main || !farm || (p - 1 + workers - first) % workers < active;
        double share = main ? 0.01 : busy ? cores / active : 0;
        g->utime[p] += share * dt * CLK * 0.9;
        g->stime[p] += share * dt * CLK * 0.1;
        double rss = main ? 50 * MiB : mem_work / (farm ? active : workers) + 20 * MiB;
        if (farm && !main && !busy)
            rss = g->rss[p] > 0 ? g->rss[p] : 20 * MiB; /* asleep: what it held */
        for (unsigned k = 0; k < SYNTH_SPIKES && p == 1; k++) {
            size_t at;
            double bytes;
            synth_spike(g, k, &at, &bytes);
            if (at == i)
                rss = bytes;
        }
        if (p == 1 && i == (size_t)(0.643 * (double)(g->n - 1)))
            rss = 0.125 * GiB; /* the dip */
        rss = floor(rss / 4096) * 4096;
        g->rss[p] = rss;
        tree_rss += rss;
        if (rss > g->hwm[p])
            g->hwm[p] = rss;
        double rbytes = main || !busy ? 0 : phase * 20e6 * rnd(g) * dt / active;
        double wbytes = main || !busy ? 0 : (burst ? 200e6 : 2e6) * rnd(g) * dt / active;
        g->rd[p] += floor(rbytes);
        g->wr[p] += floor(wbytes);
        if (busy) {
            g->rchar[p] += floor(rbytes * 1.5 + 4096);
            g->wchar[p] += floor(wbytes * 1.2 + 4096);
            g->minflt[p] += floor(rss / 4096 / 1000);
            g->vcsw[p] += 10 * dt;
        }
        if (!(v = rows_add(proc)))
            return -ENOMEM;
        val_int(&v[PROC_PID], 1000 + p);
        val_int(&v[PROC_START_TICKS], 500 + p);
        val_int(&v[PROC_PPID], main ? 999 : 1000);
        if (put_str(proc, &v[PROC_STATE], share > 0.5 ? "R" : "S") < 0)
            return -ENOMEM;
        val_int(&v[PROC_UTIME], (int64_t)g->utime[p]);
        val_int(&v[PROC_STIME], (int64_t)g->stime[p]);
        val_int(&v[PROC_CUTIME], 0);
        val_int(&v[PROC_CSTIME], 0);
        val_int(&v[PROC_THREADS], main ? 1 : 2);
        val_int(&v[PROC_MINFLT], (int64_t)g->minflt[p]);
        val_int(&v[PROC_MAJFLT], 0);
        val_int(&v[PROC_CMINFLT], 0);
        val_int(&v[PROC_CMAJFLT], 0);
        val_int(&v[PROC_VSIZE], (int64_t)(rss * 1.5));
        val_int(&v[PROC_RSS], (int64_t)rss);
        val_int(&v[PROC_SHARED], (int64_t)(8 * MiB));
        val_int(&v[PROC_RSS_ANON], (int64_t)(rss - 8 * MiB > 0 ? rss - 8 * MiB : 0));
        val_int(&v[PROC_RSS_FILE], (int64_t)(8 * MiB));
        val_int(&v[PROC_RSS_SHMEM], 0);
        val_int(&v[PROC_SWAP], 0);
        val_int(&v[PROC_HWM], (int64_t)g->hwm[p]);
        val_int(&v[PROC_VCSW], (int64_t)(farm ? g->vcsw[p] : t * 10));
        val_int(&v[PROC_IVCSW], (int64_t)(farm ? g->vcsw[p] / 5 : t * 2));
        val_int(&v[PROC_RCHAR], (int64_t)g->rchar[p]);
        val_int(&v[PROC_WCHAR], (int64_t)g->wchar[p]);
        val_int(&v[PROC_SYSCR], (int64_t)(g->rchar[p] / 65536));
        val_int(&v[PROC_SYSCW], (int64_t)(g->wchar[p] / 65536));
        val_int(&v[PROC_READ_BYTES], (int64_t)g->rd[p]);
        val_int(&v[PROC_WRITE_BYTES], (int64_t)g->wr[p]);
        val_int(&v[PROC_CANCELLED_WRITE_BYTES], 0);
        val_int(&v[PROC_FDS], main ? 4 : 12);
        val_int(&v[PROC_USS], (int64_t)(rss * 0.9));
        val_int(&v[PROC_PSS], (int64_t)(rss * 0.95));
        val_int(&v[PROC_SWAP_PSS], 0);
        val_int(&v[PROC_PROCESSOR], p % c->ncpus);
        val_int(&v[PROC_SIGIGNORE], 0);
        if (i == 0) {
            if (!(v = rows_add(info)))
                return -ENOMEM;
            val_int(&v[INFO_PID], 1000 + p);
            val_int(&v[INFO_START_TICKS], 500 + p);
            val_int(&v[INFO_PPID], main ? 999 : 1000);
            val_int(&v[INFO_UID], 1000);
            if (put_str(info, &v[INFO_COMM],
                        main     ? "run.sh"
                        : p == 1 ? "solver"
                                 : "worker") < 0 ||
                put_str(info, &v[INFO_CMDLINE],
                        main ? "[\"./run.sh\"]" : "[\"solver\",\"--threads\",\"2\"]") < 0)
                return -ENOMEM;
        }
    }

    /* the host: CPUs busy with the job (and a little else) */
    js_rows_t *cpu = sample_rows(s, &table_cpu);
    double busy_all = 0, idle_all = 0, iow_all = 0;
    for (unsigned k = 0; k < c->ncpus; k++) {
        double f = cores / c->ncpus * (0.9 + 0.2 * rnd(g));
        f = f > 1 ? 1 : f;
        double iow = burst ? 0.05 : 0.005;
        g->cpu_busy[k] += f * dt * CLK;
        g->cpu_iowait[k] += (1 - f) * iow * dt * CLK;
        g->cpu_idle[k] += (1 - f) * (1 - iow) * dt * CLK;
        busy_all += g->cpu_busy[k];
        idle_all += g->cpu_idle[k];
        iow_all += g->cpu_iowait[k];
    }
    for (int k = -1; k < (int)c->ncpus; k++) {
        if (!(v = rows_add(cpu)))
            return -ENOMEM;
        double b = k < 0 ? busy_all : g->cpu_busy[k], id = k < 0 ? idle_all : g->cpu_idle[k];
        double w = k < 0 ? iow_all : g->cpu_iowait[k];
        val_int(&v[CPU_CPU], k);
        val_int(&v[CPU_USER_TICKS], (int64_t)(b * 0.9));
        val_int(&v[CPU_NICE_TICKS], 0);
        val_int(&v[CPU_SYSTEM_TICKS], (int64_t)(b * 0.1));
        val_int(&v[CPU_IDLE_TICKS], (int64_t)id);
        val_int(&v[CPU_IOWAIT_TICKS], (int64_t)w);
        val_int(&v[CPU_IRQ_TICKS], 0);
        val_int(&v[CPU_SOFTIRQ_TICKS], 0);
        val_int(&v[CPU_STEAL_TICKS], 0);
        val_int(&v[CPU_GUEST_TICKS], 0);
        val_int(&v[CPU_GUEST_NICE_TICKS], 0);
    }
    if (!(v = rows_add(sample_rows(s, &table_memory))))
        return -ENOMEM;
    double total = 64 * GiB, used = 3 * GiB + tree_rss;
    val_int(&v[MEM_TOTAL_BYTES], (int64_t)total);
    val_int(&v[MEM_FREE_BYTES], (int64_t)(total - used - 10 * GiB));
    val_int(&v[MEM_AVAILABLE_BYTES], (int64_t)(total - used));
    val_int(&v[MEM_SWAP_TOTAL_BYTES], (int64_t)(8 * GiB));
    val_int(&v[MEM_SWAP_FREE_BYTES], (int64_t)(8 * GiB));
    if (!(v = rows_add(sample_rows(s, &table_system))))
        return -ENOMEM;
    g->ctxt += 5000 * dt * (1 + cores);
    g->forks += 0.2 * dt;
    g->psi_cpu += 0.02 * dt * 1e6 * phase;
    g->psi_mem += 0.001 * dt * 1e6;
    g->psi_io += (burst ? 0.3 : 0.01) * dt * 1e6;
    g->psi_io_full += (burst ? 0.1 : 0.002) * dt * 1e6;
    val_int(&v[SYSTEM_CTXT_COUNT], (int64_t)g->ctxt);
    val_int(&v[SYSTEM_FORKS_COUNT], (int64_t)g->forks);
    val_real(&v[SYSTEM_LOAD1], cores);
    val_real(&v[SYSTEM_LOAD5], cores);
    val_real(&v[SYSTEM_LOAD15], cores);
    val_int(&v[SYSTEM_PSI_CPU_SOME_TOTAL_US], (int64_t)g->psi_cpu);
    val_int(&v[SYSTEM_PSI_MEMORY_SOME_TOTAL_US], (int64_t)g->psi_mem);
    val_int(&v[SYSTEM_PSI_MEMORY_FULL_TOTAL_US], (int64_t)(g->psi_mem / 2));
    val_int(&v[SYSTEM_PSI_IO_SOME_TOTAL_US], (int64_t)g->psi_io);
    val_int(&v[SYSTEM_PSI_IO_FULL_TOTAL_US], (int64_t)g->psi_io_full);
    js_rows_t *net = sample_rows(s, &table_net);
    g->net_rx += floor(20e6 * (1 + sin(t / 300)) * rnd(g) * dt);
    g->net_tx += floor(5e6 * rnd(g) * dt);
    g->lo += floor(1e5 * rnd(g) * dt);
    const char *ifs[2] = {"lo", "eth0"};
    for (int k = 0; k < 2; k++) {
        if (!(v = rows_add(net)) || put_str(net, &v[NETDEV_IFACE], ifs[k]) < 0)
            return -ENOMEM;
        val_int(&v[NETDEV_RX_BYTES], (int64_t)(k ? g->net_rx : g->lo));
        val_int(&v[NETDEV_TX_BYTES], (int64_t)(k ? g->net_tx : g->lo));
        val_int(&v[NETDEV_RX_PACKETS], (int64_t)((k ? g->net_rx : g->lo) / 1500));
        val_int(&v[NETDEV_TX_PACKETS], (int64_t)((k ? g->net_tx : g->lo) / 1500));
        for (int e = NETDEV_RX_ERRS; e < NETDEV__MAX; e++)
            if (e != NETDEV_TX_BYTES && e != NETDEV_TX_PACKETS)
                val_int(&v[e], 0);
    }
    js_rows_t *disk = sample_rows(s, &table_disk);
    if (!(v = rows_add(disk)) || put_str(disk, &v[DISK_DEVICE], "nvme0n1") < 0)
        return -ENOMEM;
    g->disk_r += floor(phase * 40e6 * rnd(g) * dt / 512);
    g->disk_w += floor((burst ? 300e6 : 3e6) * rnd(g) * dt / 512);
    val_int(&v[DISK_MAJOR], 259);
    val_int(&v[DISK_MINOR], 0);
    val_int(&v[DISK_SECTORS_READ], (int64_t)g->disk_r);
    val_int(&v[DISK_SECTORS_WRITTEN], (int64_t)g->disk_w);

    /* RAPL: package and DRAM energy, wrapping at the range */
    js_rows_t *rapl = sample_rows(s, &table_rapl);
    g->pkg_uj += (60 + 140 * cores / c->ncpus + 5 * rnd(g)) * dt * 1e6;
    g->dram_uj += (8 + 10 * cores / c->ncpus * rnd(g)) * dt * 1e6;
    const char *zones[2] = {"intel-rapl:0", "intel-rapl:0:0"}, *doms[2] = {"package-0", "package-0/dram"};
    for (int k = 0; k < 2; k++) {
        if (!(v = rows_add(rapl)) || put_str(rapl, &v[RAPL_ZONE], zones[k]) < 0 ||
            put_str(rapl, &v[RAPL_DOMAIN], doms[k]) < 0)
            return -ENOMEM;
        val_int(&v[RAPL_ENERGY_UJ], (int64_t)fmod(k ? g->dram_uj : g->pkg_uj, (double)RAPL_RANGE));
        val_int(&v[RAPL_MAX_RANGE_UJ], RAPL_RANGE);
        val_int(&v[RAPL_ERRNO], 0);
    }
    js_rows_t *freq = sample_rows(s, &table_cpufreq);
    for (unsigned k = 0; k < c->ncpus; k++) {
        if (!(v = rows_add(freq)))
            return -ENOMEM;
        val_int(&v[CPUFREQ_CPU], k);
        val_int(&v[CPUFREQ_CUR_KHZ], (int64_t)(2000000 + 1200000 * cores / c->ncpus * rnd(g)));
    }
    js_rows_t *th = sample_rows(s, &table_thermal);
    if (!(v = rows_add(th)) || put_str(th, &v[THERMAL_SENSOR], "hwmon1/temp1") < 0 ||
        put_str(th, &v[THERMAL_CHIP], "coretemp") < 0 || put_str(th, &v[THERMAL_LABEL], "Package id 0") < 0)
        return -ENOMEM;
    val_int(&v[THERMAL_TEMP_MC], (int64_t)((40 + 30 * cores / c->ncpus + 2 * rnd(g)) * 1000));

    /* the monitor itself */
    g->self_us += 900 * dt;
    if (!(v = rows_add(sample_rows(s, &table_self))))
        return -ENOMEM;
    val_int(&v[SELF_UTIME], (int64_t)(g->self_us * 0.6));
    val_int(&v[SELF_STIME], (int64_t)(g->self_us * 0.4));
    val_int(&v[SELF_MAXRSS], 5 * 1024 * 1024);
    val_int(&v[SELF_RSS], 5 * 1024 * 1024);
    val_int(&v[SELF_PREV_WRITE], 150000);
    val_int(&v[SELF_WRITE_ERRORS], 0);
    js_rows_t *st = sample_rows(s, &table_source_stats);
    const char *srcs[] = {"proc_tree", "system", "rapl", "cpufreq", "thermal", "self"};
    for (size_t k = 0; k < sizeof(srcs) / sizeof(srcs[0]); k++) {
        if (!(v = rows_add(st)) || put_str(st, &v[STATS_SOURCE], srcs[k]) < 0)
            return -ENOMEM;
        val_int(&v[STATS_DURATION], (int64_t)(k ? 60000 : 350000 + 20000 * rnd(g)));
        val_int(&v[STATS_RC], 0);
    }
    if (i == 0) {
        js_rows_t *inv = sample_rows(s, &table_inventory);
        char host[32], cpus[16];
        snprintf(host, sizeof(host), "node%03u", c->node + 1);
        snprintf(cpus, sizeof(cpus), "%u", c->ncpus);
        if (inventory_add(inv, "host", "hostname", host) < 0 ||
            inventory_add(inv, "host", "cpu.count", cpus) < 0 ||
            inventory_add(inv, "host", "cpu.model", "Synthetic CPU @ 2.0GHz") < 0 ||
            inventory_add(inv, "host", "memory.total_bytes", "68719476736") < 0)
            return -ENOMEM;
    }
    return 1;
}
