/* SPDX-License-Identifier: MIT
 *
 * The report's advice: one table of rules (advice.c), each a pure function of the run's facts with a
 * threshold the reader sees next to the evidence, like Linaro Performance Reports' advice or seff's
 * efficiencies, but each sentence says which measured figure triggered it and where the line was drawn.
 *
 * The facts are filled by the report (report.c) from the run summary (the typed summary table,
 * model/figure.h, its rows read by path: "cpu.total_s", "cgroup.memory.limit_bytes") and from statistics of
 * the charted series (95th percentile of the cores in use, mean pressure, mean GPU utilisation per device,
 * mean cores per node). Missing facts are NAN (or 0 counts) and a rule whose facts are missing does not fire:
 * absent is not zero.
 */
#ifndef JOBSCOPE_ADVICE_H
#define JOBSCOPE_ADVICE_H

#include "report/html.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JS_FACTS_MAX_GPUS 64
#define JS_FACTS_MAX_NODES 256

typedef struct {
    /* the recording */
    bool complete;         /* closed by its monitor; false: killed, crashed or still running */
    double data_end_s;     /* time of the last sample from the start */
    double wall_s;         /* wall time of the run (the summary's) */
    double interval_s;     /* nominal sampling interval */
    int64_t taken, missed; /* samples taken, deadlines missed */
    /* CPU */
    double cores_available;                                     /* the allocation (affinity, cgroup quota) */
    double cpu_s, mean_cores, max_cores, p95_cores, efficiency; /* efficiency = mean / available */
    double unattributed_cpu_s; /* CPU of processes sampling never saw (short-lived) */
    double throttled_fraction; /* cgroup: throttled periods / periods */
    /* waiting for CPU: the share of the interval some task of the job's cgroup (job) or of the host waited
     * for a CPU (PSI cpu some, mean over the run); the host's busy share (1 - idle - iowait) and steal */
    double psi_cpu_some_job_mean, psi_cpu_some_host_mean, host_busy_mean, steal_mean;
    /* the job's demand for cores: the largest, over the samples, of its cgroup's cores in use plus its CPU
     * pressure (some), what it would have run had it not waited; a job of one thread stays at or below 1
     * core whatever the load (NAN without a cgroup that reports pressure) */
    double peak_demand_cores;
    /* memory */
    double peak_rss, peak_rss_kernel; /* the memory headline (summary peak_bytes); largest single process
                                       * (kernel high-water mark) */
    double mem_peak;       /* the figure compared with the limit: cgroup kernel peak, else the sampled peak */
    double mem_limit;      /* the job's memory limit (cgroup), NAN without one */
    double host_mem_total; /* the node's memory */
    double peak_swap;      /* the tree's largest swap use */
    double majflt;         /* major page faults of the tree */
    double oom_kills;      /* cgroup OOM kills */
    /* I/O and pressure (host PSI and iowait: the share of the interval tasks waited) */
    double psi_io_some_mean, psi_io_full_mean, psi_mem_some_mean, iowait_mean;
    double psi_io_some_job_mean; /* the job's cgroup: I/O pressure (some), NAN without one */
    /* GPUs */
    size_t ngpus;
    char gpu_name[JS_FACTS_MAX_GPUS][32];
    double gpu_util_mean[JS_FACTS_MAX_GPUS]; /* fraction 0..1 */
    /* nodes of a batch job */
    size_t nnodes;
    char node_name[JS_FACTS_MAX_NODES][64];
    double node_mean_cores[JS_FACTS_MAX_NODES];
    /* the monitor */
    double mon_cpu_s;
} js_facts_t;

/* facts_init: every figure missing (NAN, counts 0, complete true). */
void facts_init(js_facts_t *f);

/* One piece of advice produced by a rule; the texts live in the item. */
typedef struct {
    const char *rule; /* the rule's id ("cpu-starved") */
    js_severity_t severity;
    char sentence[512];
    char evidence[512];
    char threshold[512];
} js_advice_item_t;

/* A rule: its id, its threshold (one number, in the rule's own unit) and the text that shows it to the reader
 * (printf format with one %s for the threshold written in human units), and the function that decides. */
typedef struct js_rule {
    const char *id;
    double limit;
    const char *limit_unit; /* units_format() unit of `limit` ("fraction" shows 50%) */
    const char *rule_text;  /* "mean use below %s of the cores available (2 cores or more)" */
    /* eval: 1 when the rule fires (severity, sentence and evidence written into *out), else 0. Pure. */
    int (*eval)(const struct js_rule *rule, const js_facts_t *f, js_advice_item_t *out);
} js_rule_t;

/* The rules, in the order their advice is shown (docs/REPORT.md lists them). */
extern const js_rule_t advice_rules[];
extern const size_t advice_nrules;

/* advice_eval: run every rule on `f`; write the advice of the rules that fire into out[0..cap), most severe
 * first, in table order within a severity. Returns how many were written. */
size_t advice_eval(const js_facts_t *f, js_advice_item_t *out, size_t cap);

/* advice_cpu_starved: whether the job waited for CPU (the cpu-starved or cpu-throttled rule's facts: job or
 * host CPU pressure, steal, quota throttling past their thresholds); the rules that judge an allocation too
 * large (cpu-over-allocated, cpu-serial) stay silent then. */
bool advice_cpu_starved(const js_facts_t *f);

/* advice_view: the js_advice_t (html.h) of an item, its strings borrowed from the item. */
js_advice_t advice_view(const js_advice_item_t *it);

#endif
