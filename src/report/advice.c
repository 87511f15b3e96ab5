/* SPDX-License-Identifier: MIT
 *
 * The advice rules (see advice.h): one table, one threshold per rule, each rule a pure function of the facts
 * that writes a sentence (what to do), the evidence (the measured figures) and the rule with its threshold.
 * A rule whose facts are missing stays silent. docs/REPORT.md lists the rules; keep it in step with the
 * table.
 */
#include "report/advice.h"

#include "report/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)
#define GPU_IDLE 0.05 /* the gpu-idle rule's threshold, the gpu-low rule's floor */
/* Waiting for CPU (the cpu-starved and cpu-throttled rules; docs/REPORT.md lists them). */
#define CPU_PSI 0.2   /* CPU pressure (some), mean share of the run: job, or host when the job has none */
#define HOST_BUSY 0.9 /* the host's busy share that makes its pressure the job's */
#define STEAL 0.1     /* steal: the hypervisor ran other guests on the node's CPUs */
#define THROTTLED 0.1 /* share of the cgroup's quota periods throttled */
#define SERIAL 1.2    /* peak cores below this: one core at a time */

void facts_init(js_facts_t *f)
{
    memset(f, 0, sizeof(*f));
    f->complete = true;
    double *nan_fields[] = {&f->data_end_s,
                            &f->wall_s,
                            &f->interval_s,
                            &f->cores_available,
                            &f->cpu_s,
                            &f->mean_cores,
                            &f->max_cores,
                            &f->p95_cores,
                            &f->efficiency,
                            &f->unattributed_cpu_s,
                            &f->throttled_fraction,
                            &f->psi_cpu_some_job_mean,
                            &f->psi_cpu_some_host_mean,
                            &f->host_busy_mean,
                            &f->steal_mean,
                            &f->peak_demand_cores,
                            &f->psi_io_some_job_mean,
                            &f->peak_rss,
                            &f->peak_rss_kernel,
                            &f->mem_peak,
                            &f->mem_limit,
                            &f->host_mem_total,
                            &f->peak_swap,
                            &f->majflt,
                            &f->oom_kills,
                            &f->psi_io_some_mean,
                            &f->psi_io_full_mean,
                            &f->psi_mem_some_mean,
                            &f->iowait_mean,
                            &f->mon_cpu_s};
    for (size_t i = 0; i < sizeof(nan_fields) / sizeof(nan_fields[0]); i++)
        *nan_fields[i] = NAN;
}

/* H: a value in human units, into one of a few rotating buffers (for one sentence's arguments). */
static const char *H(double v, const char *unit)
{
    static _Thread_local char bufs[8][48];
    static _Thread_local unsigned k;
    char *b = bufs[k++ % 8];
    return units_format(b, sizeof(bufs[0]), v, unit);
}

/* T: a duration as a clock reads it ("12:34", "1:02:03", "45 s"), likewise. */
static const char *T(double s)
{
    static _Thread_local char bufs[4][48];
    static _Thread_local unsigned k;
    char *b = bufs[k++ % 4];
    return units_time(b, sizeof(bufs[0]), s, &(js_timeaxis_t){0});
}

static bool ok(double v)
{
    return isfinite(v);
}

#define SAY(field, ...) snprintf(out->field, sizeof(out->field), __VA_ARGS__)

/* ---- the rules ---- */

static int r_incomplete(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    (void)r;
    if (f->complete)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "The recording was not closed by its monitor (killed, crashed, or still running): the data ends "
        "%s after the start, and the figures cover the run only up to there.",
        ok(f->data_end_s) ? T(f->data_end_s) : "at its last sample");
    SAY(evidence, "no closing metadata (stop time, exit status) in the recording; %lld samples read",
        (long long)f->taken);
    return 1;
}

/* the causes of a wait for CPU, each past its threshold */
static bool by_job_psi(const js_facts_t *f)
{
    return ok(f->psi_cpu_some_job_mean) && f->psi_cpu_some_job_mean > CPU_PSI;
}

static bool by_host(const js_facts_t *f)
{
    return !ok(f->psi_cpu_some_job_mean) && ok(f->psi_cpu_some_host_mean) &&
           f->psi_cpu_some_host_mean > CPU_PSI && ok(f->host_busy_mean) && f->host_busy_mean >= HOST_BUSY;
}

static bool by_steal(const js_facts_t *f)
{
    return ok(f->steal_mean) && f->steal_mean > STEAL;
}

static bool by_quota(const js_facts_t *f)
{
    return ok(f->throttled_fraction) && f->throttled_fraction > THROTTLED;
}

bool advice_cpu_starved(const js_facts_t *f)
{
    return by_job_psi(f) || by_host(f) || by_steal(f) || by_quota(f);
}

/* cpu_wait_evidence: the figures the CPU rules read, those recorded, as one clause. */
static void cpu_wait_evidence(const js_facts_t *f, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
#define ADD(...)                                                                                             \
    do {                                                                                                     \
        int k_ = snprintf(buf + len, cap - len, __VA_ARGS__);                                                \
        if (k_ > 0 && (size_t)k_ < cap - len)                                                                \
            len += (size_t)k_;                                                                               \
    } while (0)
    bool job = ok(f->psi_cpu_some_job_mean), host = ok(f->psi_cpu_some_host_mean);
    if (job || host) {
        ADD("CPU pressure (some)");
        if (job)
            ADD(" job %s", H(f->psi_cpu_some_job_mean, "fraction"));
        if (host)
            ADD("%s host %s", job ? "," : "", H(f->psi_cpu_some_host_mean, "fraction"));
        ADD(" of the time");
    } else {
        ADD("CPU pressure not recorded");
    }
    if (ok(f->host_busy_mean))
        ADD("; host busy %s", H(f->host_busy_mean, "fraction"));
    if (ok(f->steal_mean))
        ADD("; steal %s", H(f->steal_mean, "fraction"));
    if (ok(f->throttled_fraction))
        ADD("; throttled in %s of the quota periods", H(f->throttled_fraction, "fraction"));
#undef ADD
}

/* serial_demand: the job never had more than one core's worth of runnable work: at no sample did its cgroup's
 * cores in use plus its CPU pressure (some) reach SERIAL, so a wait it had was its one thread's (cpu-serial
 * says so, and cpu-starved stays silent: more cores would not have helped it) */
static bool serial_demand(const js_facts_t *f)
{
    return ok(f->peak_demand_cores) && f->peak_demand_cores < SERIAL &&
           (!ok(f->max_cores) || f->max_cores < SERIAL);
}

static int r_cpu_starved(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    (void)r;
    if ((!by_job_psi(f) && !by_host(f) && !by_steal(f)) || (by_quota(f) && !by_steal(f)))
        return 0; /* a quota explains the wait: cpu-throttled says so */
    if (serial_demand(f) && ok(f->cores_available) && f->cores_available >= 2)
        return 0; /* one thread waited: cpu-serial */
    out->severity = ADVICE_WARN;
    bool full = ok(f->efficiency) && f->efficiency >= HOST_BUSY;
    if (by_steal(f))
        SAY(sentence,
            "The job waited for CPU: the hypervisor gave the node's CPUs to other guests (steal). Its low "
            "core use is not a reason to request fewer cores; run it on a node that is not oversubscribed.");
    else if (full)
        SAY(sentence,
            "The job waited for CPU with every core it was given busy: it had more runnable threads than "
            "cores. Request more cores, or run fewer threads or processes.");
    else if (ok(f->host_busy_mean) && f->host_busy_mean >= HOST_BUSY)
        SAY(sentence,
            "The job waited for CPU while the host was busy: other work took the cores it could have used, "
            "so its low core use is not a reason to request fewer. Run it on a less loaded node, or with its "
            "cores reserved (an exclusive allocation).");
    else
        SAY(sentence,
            "The job waited for CPU: its tasks were runnable with no core free for them, so its low core use "
            "is not a reason to request fewer. Check what else ran on its cores (the host's CPU charts) and "
            "its CPU binding.");
    char w[300];
    cpu_wait_evidence(f, w, sizeof(w));
    SAY(evidence, "%s; mean %s in use of %s available", w, H(f->mean_cores, "cores"),
        H(f->cores_available, "cores"));
    return 1;
}

static int r_cpu_throttled(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    (void)r;
    if (!by_quota(f))
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "The CPU quota of the job's cgroup held it back: request more cores, or run fewer threads.");
    char w[300];
    cpu_wait_evidence(f, w, sizeof(w));
    SAY(evidence, "%s; mean %s in use", w, H(f->mean_cores, "cores"));
    return 1;
}

/* long_enough: a run long enough (10 intervals) with 2 or more cores, whose core use can be judged */
static bool long_enough(const js_facts_t *f)
{
    return ok(f->cores_available) && f->cores_available >= 2 && ok(f->wall_s) &&
           f->wall_s >= 10 * (ok(f->interval_s) ? f->interval_s : 1);
}

static int r_cpu_serial(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    if (!long_enough(f) || by_quota(f) || !ok(f->max_cores) || f->max_cores >= r->limit)
        return 0;
    /* with the job's demand known it decides, whatever the load; without it, only a job that did not wait */
    if (ok(f->peak_demand_cores) ? !serial_demand(f) : advice_cpu_starved(f))
        return 0;
    out->severity = ok(f->efficiency) && f->efficiency >= 0.25 ? ADVICE_INFO : ADVICE_WARN;
    char waited[200] = "";
    if (advice_cpu_starved(f))
        snprintf(
            waited, sizeof(waited),
            " It also waited for CPU (%s of the time): other work shared its core, which more cores would "
            "not have changed.",
            H(ok(f->psi_cpu_some_job_mean) ? f->psi_cpu_some_job_mean : f->steal_mean, "fraction"));
    SAY(sentence,
        "The job ran serially: it never kept more than %s busy of the %s available. Request 1 core, or make "
        "it run in parallel (threads, processes, MPI ranks).%s",
        H(f->max_cores, "cores"), H(f->cores_available, "cores"), waited);
    char w[300], d[80] = "";
    cpu_wait_evidence(f, w, sizeof(w));
    if (ok(f->peak_demand_cores))
        snprintf(d, sizeof(d), ", demand (cores in use + waiting) at most %s",
                 H(f->peak_demand_cores, "cores"));
    SAY(evidence, "peak %s, mean %s (CPU time %s over %s of wall time)%s; %s", H(f->max_cores, "cores"),
        H(f->mean_cores, "cores"), H(f->cpu_s, "s"), T(f->wall_s), d, w);
    return 1;
}

static int r_cpu_over(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    /* parallel: the demand (when known), else the cores in use, reached SERIAL at some sample */
    bool parallel =
        ok(f->peak_demand_cores) ? !serial_demand(f) : !(ok(f->max_cores) && f->max_cores < SERIAL);
    if (!long_enough(f) || advice_cpu_starved(f) || !ok(f->efficiency) || f->efficiency >= r->limit ||
        !parallel)
        return 0;
    double want = ok(f->p95_cores) ? ceil(f->p95_cores - 0.05) : ceil(f->mean_cores);
    if (want < 1)
        want = 1;
    out->severity = f->efficiency < r->limit / 2 ? ADVICE_WARN : ADVICE_INFO;
    SAY(sentence,
        "The job kept %s busy on average, of the %s it was given, and did not wait for CPU. Request %s, or "
        "check that its parallel settings (threads, ranks) match the allocation.",
        H(f->mean_cores, "cores"), H(f->cores_available, "cores"), H(want, "cores"));
    char w[300];
    cpu_wait_evidence(f, w, sizeof(w));
    SAY(evidence, "CPU efficiency %s (CPU time %s over %s of wall time); peak %s, 95th percentile %s; %s",
        H(f->efficiency, "fraction"), H(f->cpu_s, "s"), T(f->wall_s), H(f->max_cores, "cores"),
        H(f->p95_cores, "cores"), w);
    return 1;
}

static int r_oom(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    if (!ok(f->oom_kills) || f->oom_kills <= r->limit)
        return 0;
    out->severity = ADVICE_CRIT;
    SAY(sentence, "The kernel killed processes of the job for lack of memory: request more memory%s.",
        ok(f->mem_limit) ? " than the limit" : "");
    SAY(evidence, "%.0f OOM kill%s in the job's cgroup; memory peak %s%s%s", f->oom_kills,
        f->oom_kills == 1 ? "" : "s", H(f->mem_peak, "bytes"), ok(f->mem_limit) ? " of a limit of " : "",
        ok(f->mem_limit) ? H(f->mem_limit, "bytes") : "");
    return 1;
}

static int r_mem_near_limit(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    if (!ok(f->mem_limit) || f->mem_limit <= 0 || !ok(f->mem_peak) || f->mem_peak < r->limit * f->mem_limit)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "Memory came close to the job's limit: request more (about %s), or the next run may be killed.",
        H(ceil(f->mem_peak * 1.25 / GiB) * GiB, "bytes"));
    SAY(evidence, "peak %s of a limit of %s (%s)", H(f->mem_peak, "bytes"), H(f->mem_limit, "bytes"),
        H(f->mem_peak / f->mem_limit, "fraction"));
    return 1;
}

static int r_mem_far_below(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    if (!ok(f->mem_limit) || f->mem_limit <= 0 || !ok(f->mem_peak) ||
        f->mem_peak >= r->limit * f->mem_limit || f->mem_limit - f->mem_peak < GiB)
        return 0;
    double want = ceil(f->mem_peak * 1.5 / GiB);
    out->severity = ADVICE_INFO;
    SAY(sentence,
        "The job used a small part of the memory it was given: request %s instead of %s, so that the "
        "rest can run other jobs.",
        H((want < 1 ? 1 : want) * GiB, "bytes"), H(f->mem_limit, "bytes"));
    SAY(evidence, "peak %s of a limit of %s (%s)", H(f->mem_peak, "bytes"), H(f->mem_limit, "bytes"),
        H(f->mem_peak / f->mem_limit, "fraction"));
    return 1;
}

static int r_mem_host(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    double peak = ok(f->peak_rss) ? f->peak_rss : f->peak_rss_kernel;
    if (ok(f->mem_limit) || !ok(f->host_mem_total) || f->host_mem_total <= 0 || !ok(peak) ||
        peak < r->limit * f->host_mem_total)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "The job used most of the node's memory: run it where more memory is free, or reduce what it holds "
        "at once.");
    SAY(evidence, "peak memory %s of %s on the node (%s)", H(peak, "bytes"), H(f->host_mem_total, "bytes"),
        H(peak / f->host_mem_total, "fraction"));
    return 1;
}

static int r_swap(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    double rate = ok(f->majflt) && ok(f->wall_s) && f->wall_s > 0 ? f->majflt / f->wall_s : NAN;
    bool swapped = ok(f->peak_swap) && f->peak_swap > r->limit;
    bool stalled = ok(f->psi_mem_some_mean) && f->psi_mem_some_mean > 0.05;
    if (!swapped && !stalled)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "The job's memory was swapped out or waited for memory: it ran slower than it could. Request more "
        "memory, or reduce its footprint.");
    SAY(evidence,
        "largest swap use %s; memory pressure (some) %s of the time; %s major page faults per second",
        H(f->peak_swap, "bytes"), H(f->psi_mem_some_mean, "fraction"), H(rate, "/s"));
    return 1;
}

static int r_io_pressure(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    double v = ok(f->psi_io_some_job_mean) ? f->psi_io_some_job_mean
               : ok(f->psi_io_some_mean)   ? f->psi_io_some_mean
                                           : f->iowait_mean;
    if (!ok(v) || v <= r->limit)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "Tasks waited for storage a large part of the time: the job is I/O bound. Use local or faster "
        "storage, larger reads and writes, or fewer files.");
    bool job = ok(f->psi_io_some_job_mean);
    SAY(evidence, "I/O pressure (some) %s%s%s %s of the time, full %s (host); CPU iowait %s (host-wide)",
        job ? "job " : "", job ? H(f->psi_io_some_job_mean, "fraction") : "", job ? ", host" : "host",
        H(f->psi_io_some_mean, "fraction"), H(f->psi_io_full_mean, "fraction"),
        H(f->iowait_mean, "fraction"));
    return 1;
}

/* gpu_list: the names of the GPUs whose mean utilisation is below `limit` (and at or above `floor`). */
static size_t gpu_list(const js_facts_t *f, double floor, double limit, char *buf, size_t cap,
                       double *ret_mean)
{
    size_t n = 0, len = 0;
    double sum = 0;
    buf[0] = '\0';
    for (size_t g = 0; g < f->ngpus && g < JS_FACTS_MAX_GPUS; g++) {
        double u = f->gpu_util_mean[g];
        if (!ok(u) || u >= limit || u < floor)
            continue;
        int k = snprintf(buf + len, cap - len, "%s%s %s", n ? ", " : "", f->gpu_name[g], H(u, "fraction"));
        if (k > 0 && (size_t)k < cap - len)
            len += (size_t)k;
        sum += u;
        n++;
    }
    *ret_mean = n ? sum / (double)n : NAN;
    return n;
}

static int r_gpu_idle(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    char list[400];
    double mean;
    size_t n = gpu_list(f, -1, r->limit, list, sizeof(list), &mean);
    if (!n)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "%zu of the job's %zu GPU%s stayed idle: request only the GPUs it uses, or check that the "
        "program is set up to use all of them.",
        n, f->ngpus, f->ngpus == 1 ? "" : "s");
    SAY(evidence, "mean utilisation: %s", list);
    return 1;
}

static int r_gpu_low(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    char list[400];
    double mean;
    size_t n = gpu_list(f, GPU_IDLE, r->limit, list, sizeof(list), &mean);
    if (!n)
        return 0;
    out->severity = ADVICE_INFO;
    SAY(sentence,
        "GPUs were busy less than half of the time: the work may wait for the CPU or for data (larger "
        "batches, more data-loader workers, overlapping transfers help).");
    SAY(evidence, "mean utilisation: %s", list);
    return 1;
}

static int r_imbalance(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    size_t lo = 0, hi = 0, n = 0;
    for (size_t i = 0; i < f->nnodes && i < JS_FACTS_MAX_NODES; i++) {
        if (!ok(f->node_mean_cores[i]))
            continue;
        if (!n || f->node_mean_cores[i] < f->node_mean_cores[lo])
            lo = i;
        if (!n || f->node_mean_cores[i] > f->node_mean_cores[hi])
            hi = i;
        n++;
    }
    if (n < 2 || f->node_mean_cores[hi] <= 0)
        return 0;
    double spread = (f->node_mean_cores[hi] - f->node_mean_cores[lo]) / f->node_mean_cores[hi];
    if (spread <= r->limit)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "The work was spread unevenly across the nodes: the busiest did %s more than the least busy. "
        "Balance the decomposition, or use fewer nodes.",
        H(spread, "fraction"));
    SAY(evidence, "mean cores in use: %s on %s, %s on %s", H(f->node_mean_cores[hi], "cores"),
        f->node_name[hi], H(f->node_mean_cores[lo], "cores"), f->node_name[lo]);
    return 1;
}

static int r_missed(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    if (f->missed <= 0 || f->taken <= 0)
        return 0;
    double share = (double)f->missed / ((double)f->taken + (double)f->missed);
    if (share <= r->limit)
        return 0;
    out->severity = ADVICE_WARN;
    SAY(sentence,
        "The monitor could not keep up with its interval: the charts have holes. Use a longer interval "
        "(-i %s or more).",
        H(ok(f->interval_s) ? f->interval_s * 2 : NAN, "s"));
    SAY(evidence, "%lld of %.0f deadlines missed (%s) at an interval of %s", (long long)f->missed,
        (double)f->taken + (double)f->missed, H(share, "fraction"), H(f->interval_s, "s"));
    return 1;
}

static int r_short_lived(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    if (!ok(f->unattributed_cpu_s) || !ok(f->cpu_s) || f->cpu_s < 1 ||
        f->unattributed_cpu_s < r->limit * f->cpu_s)
        return 0;
    out->severity = ADVICE_INFO;
    SAY(sentence,
        "Much of the CPU time went to processes too short-lived for any sample to see them (many small "
        "commands, a shell loop): batching that work would save start-up costs.");
    SAY(evidence, "%s of %s CPU time not attributed to a sampled process (%s)", H(f->unattributed_cpu_s, "s"),
        H(f->cpu_s, "s"), H(f->unattributed_cpu_s / f->cpu_s, "fraction"));
    return 1;
}

static int r_overhead(const js_rule_t *r, const js_facts_t *f, js_advice_item_t *out)
{
    if (!ok(f->mon_cpu_s) || !ok(f->wall_s) || f->wall_s <= 0)
        return 0;
    double share = f->mon_cpu_s / f->wall_s;
    if (share <= r->limit)
        return 0;
    out->severity = ADVICE_INFO;
    SAY(sentence, "jobscope itself used a noticeable share of a core: a longer interval lowers its cost.");
    SAY(evidence, "monitor CPU %s over %s of wall time (%s of one core)", H(f->mon_cpu_s, "s"), T(f->wall_s),
        H(share, "fraction"));
    return 1;
}

const js_rule_t advice_rules[] = {
    {"incomplete", 0, NULL, "the recording has no closing metadata", r_incomplete},
    {"oom-kill", 0, "count", "any OOM kill in the job's cgroup (more than %s)", r_oom},
    {"memory-near-limit", 0.9, "fraction", "memory peak at or above %s of the limit", r_mem_near_limit},
    {"cpu-starved", CPU_PSI, "fraction",
     "CPU pressure (some) of the job's cgroup above %s on average; without one, the host's above it with the "
     "host 90%% busy or more; or steal above 10%% (a throttling quota: cpu-throttled instead; a job whose "
     "demand stayed below 1.2 cores: cpu-serial instead)",
     r_cpu_starved},
    {"cpu-throttled", THROTTLED, "fraction", "throttled in more than %s of the cgroup's quota periods",
     r_cpu_throttled},
    {"cpu-serial", SERIAL, "cores",
     "peak cores in use below %s with 2 or more cores available (10 intervals or more), not throttled; with "
     "the job's cgroup pressure, its peak demand (cores in use + CPU pressure some, per sample) below it "
     "too, "
     "whatever the load; without, no wait for CPU (cpu-starved silent)",
     r_cpu_serial},
    {"cpu-over-allocated", 0.5, "fraction",
     "mean cores in use below %s of the cores available (2 or more cores, 10 intervals or more), a peak "
     "demand (cores in use + CPU pressure some; without the job's pressure, cores in use) of 1.2 cores or "
     "more, and no wait for CPU (cpu-starved and cpu-throttled silent)",
     r_cpu_over},
    {"memory-far-below", 0.25, "fraction", "memory peak below %s of the limit, and more than 1 GiB unused",
     r_mem_far_below},
    {"memory-host", 0.8, "fraction", "without a limit: peak RSS at or above %s of the node's memory",
     r_mem_host},
    {"swap", 0, "bytes", "swap use above %s, or memory pressure (some) above 5%% on average", r_swap},
    {"io-pressure", 0.1, "fraction",
     "I/O pressure (some) of the job's cgroup, else of the host, else iowait, above %s on average",
     r_io_pressure},
    {"gpu-idle", GPU_IDLE, "fraction", "a GPU's mean utilisation below %s", r_gpu_idle},
    {"gpu-low", 0.5, "fraction", "a GPU's mean utilisation between 5%% and %s", r_gpu_low},
    {"node-imbalance", 0.2, "fraction", "mean cores of the least busy node more than %s below the busiest's",
     r_imbalance},
    {"samples-missed", 0.01, "fraction", "more than %s of the sampling deadlines missed", r_missed},
    {"short-lived", 0.2, "fraction", "CPU time not seen by any sample above %s of the total (1 s or more)",
     r_short_lived},
    {"monitor-overhead", 0.02, "fraction", "the monitor's CPU above %s of one core", r_overhead},
};
const size_t advice_nrules = sizeof(advice_rules) / sizeof(advice_rules[0]);

size_t advice_eval(const js_facts_t *f, js_advice_item_t *out, size_t cap)
{
    js_advice_item_t fired[sizeof(advice_rules) / sizeof(advice_rules[0])];
    size_t nf = 0;
    for (size_t i = 0; i < advice_nrules; i++) {
        const js_rule_t *r = &advice_rules[i];
        js_advice_item_t *it = &fired[nf];
        memset(it, 0, sizeof(*it));
        if (!r->eval(r, f, it))
            continue;
        it->rule = r->id;
        if (r->limit_unit) {
            char lim[48];
            units_format(lim, sizeof(lim), r->limit, r->limit_unit);
            snprintf(it->threshold, sizeof(it->threshold), r->rule_text, lim);
        } else {
            snprintf(it->threshold, sizeof(it->threshold), "%s", r->rule_text);
        }
        nf++;
    }
    size_t n = 0;
    for (int sev = ADVICE_MAX - 1; sev >= 0; sev--)
        for (size_t i = 0; i < nf && n < cap; i++)
            if ((int)fired[i].severity == sev)
                out[n++] = fired[i];
    return n;
}

js_advice_t advice_view(const js_advice_item_t *it)
{
    return (js_advice_t){.severity = it->severity,
                         .sentence = it->sentence,
                         .evidence = it->evidence[0] ? it->evidence : NULL,
                         .threshold = it->threshold[0] ? it->threshold : NULL,
                         .rule = it->rule};
}
