/* SPDX-License-Identifier: MIT
 *
 * Rendering the run summary (js_summary_t from the model) as JSON (docs/FORMAT.md lists the keys; values in
 * seconds, bytes and fractions; missing values are null) and as the human-readable text printed at the end of
 * a run. Pure formatting: no I/O.
 */
#ifndef JOBSCOPE_SUMMARY_H
#define JOBSCOPE_SUMMARY_H

#include "model/model.h"
#include "sys/fsroot.h"

#include <stdbool.h>

typedef struct {
    const char *version;      /* jobscope version that recorded the run */
    const char *command_json; /* JSON array of the command's arguments ("[]" when unknown) */
    const char *host;
    const char *mode;         /* "run" or "attach" */
    bool have_exit;
    int exit_status;          /* shell convention: code, or 128+signal */
    const char *recording;    /* path, or NULL */
} js_run_info_t;

/* summary_json: append the summary as one JSON object (pretty-printed, trailing newline) to `b`: the tree
 * model's figures `s`, then every model part's section when `m` is given (may be NULL). Returns 0 or -ENOMEM. */
int summary_json(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m);

/* summary_text: append a human-readable summary to `b`, likewise. Returns 0 or -ENOMEM. */
int summary_text(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m);

/* fmt_bytes: "1.50 GiB"-style text into buf. Returns buf. */
char *fmt_bytes(char *buf, size_t cap, double bytes);

#endif
