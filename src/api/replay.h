/* SPDX-License-Identifier: MIT
 *
 * Replaying a recording through the model, as library code (no printing): the model's configuration and
 * the summary's run facts from a recording's metadata, and the feed of every sample. `jobscope summary` and
 * `jobscope export` (through cli_common.c) and the public API's js_recording_summary / js_recording_export
 * use these, so they agree.
 */
#ifndef JOBSCOPE_REPLAY_H
#define JOBSCOPE_REPLAY_H

#include "model/model.h"
#include "model/summary.h"
#include "sinks/recording.h"

/* replay_model_cfg: the model configuration recorded in `r`'s metadata (mode "embedded" is attach mode with
 * cfg.embedded set). */
void replay_model_cfg(const js_recording_t *r, js_model_cfg_t *ret);

/* replay_run_info: the summary's run facts from `r`'s metadata (strings borrowed from r); the state is
 * "complete", "in progress" (its monitor still runs on this host) or "incomplete". */
void replay_run_info(const js_recording_t *r, const char *path, js_run_info_t *ret);

/* replay_summarize: the run facts and the summary of a recording fed to `m`; an unfinished recording is said
 * so and has no exact figure. */
void replay_summarize(const js_recording_t *r, const char *path, const js_model_t *m, js_run_info_t *info,
                      js_summary_t *su);

/* replay_each_fn: called after each sample is fed (may be NULL); a negative return stops the replay. */
typedef int (*replay_each_fn)(void *arg, const js_recording_t *r, js_model_t *m, const js_sample_t *s);

/* replay_open: open `path` and feed every sample to a new model. On success returns 0 with *ret_rec open and
 * *ret_model made (the caller frees both); on failure returns a negative errno with a one-line reason in err
 * (or the callback's negative return, err then empty). */
int replay_open(const char *path, js_recording_t **ret_rec, js_model_t **ret_model, replay_each_fn each,
                void *arg, char *err, size_t errlen);

/* replay_open_ex: replay_open with `flags`. Without flags, a recording that kept the model's aggregates
 * (schema 2: tree_totals, summary_state) is replayed from them and its process rows are not read (summary,
 * report, the tree and part views: the same figures, tens of times faster on long recordings); a recording
 * without them is read in full. REPLAY_PROCS: the caller needs every sample's process rows (the process
 * view); REPLAY_RECOMPUTE: recompute everything from the raw rows, as for an older recording. */
#define REPLAY_PROCS 1u
#define REPLAY_RECOMPUTE 2u
int replay_open_ex(const char *path, unsigned flags, js_recording_t **ret_rec, js_model_t **ret_model,
                   replay_each_fn each, void *arg, char *err, size_t errlen);

#endif
