/* SPDX-License-Identifier: MIT
 *
 * A synthetic, deterministic monitored run: the raw samples jobscope's sources would record for a batch job
 * of `nprocs` processes on a node of `ncpus` CPUs over `hours` hours (every registered table the model reads:
 * samples, tree, proc, proc_info, cpu, memory, system, net, disk, rapl, cpufreq, thermal, self,
 * source_stats, inventory). The load has three phases (setup 5%, compute to 83%, teardown), memory spikes at
 * known samples and a dip, an I/O burst every 10 minutes, and per-node differences (`node`). Used by the
 * report's unit tests (fed straight to the model) and by bench/synth_recording (written through the
 * recorder into a recording of the real schema).
 */
#ifndef JOBSCOPE_TESTS_SYNTH_H
#define JOBSCOPE_TESTS_SYNTH_H

#include "core/sample.h"
#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double hours;      /* run length */
    double interval_s; /* sampling interval (default 1) */
    unsigned ncpus;    /* CPUs of the node (default 8), all available to the job */
    unsigned nprocs;   /* processes of the job (default 6, at most 4096): a main process and its workers; with
                        * more than 4 per CPU a task farm: twice the CPUs busy at a time, moving on every
                        * minute, the others asleep (their counters still) */
    unsigned node;     /* 0, 1, ...: node k runs at (1 - 0.25 k) of node 0's load, for imbalance tests */
    double load;       /* peak cores in use as a fraction of ncpus (default 0.75) */
} synth_cfg_t;

#define SYNTH_SPIKES 4

typedef struct synth synth_t;

/* synth_new: a generator (NULL on ENOMEM). */
synth_t *synth_new(const synth_cfg_t *cfg);
void synth_free(synth_t *g);

/* synth_count: the number of samples of the run. */
size_t synth_count(const synth_t *g);

/* synth_model_cfg: the model configuration a recording of this run would hold. */
void synth_model_cfg(const synth_t *g, js_model_cfg_t *ret);

/* synth_next: clear `s` (from sample_init) and fill it with the next sample (in order, from 0). Returns 1,
 * 0 after the last one, or -ENOMEM. */
int synth_next(synth_t *g, js_sample_t *s);

/* synth_spike: sample index and bytes of memory spike k (< SYNTH_SPIKES) of the main worker (added to its
 * RSS at that one sample), scaled to the run's length. */
void synth_spike(const synth_t *g, unsigned k, size_t *ret_index, double *ret_bytes);

#endif
