/* SPDX-License-Identifier: MIT
 *
 * The run summary: one typed table (model/figure.h) of the run's facts, the tree model's figures
 * (js_summary_t) and every model part's rows, built once (summary_build) and rendered as JSON
 * (docs/FORMAT.md lists the keys; values in seconds, bytes and fractions; missing values are null) and as the
 * human-readable text printed at the end of a run (short or full), both from the table alone. Pure
 * formatting: no I/O.
 */
#ifndef JOBSCOPE_SUMMARY_H
#define JOBSCOPE_SUMMARY_H

#include "model/figure.h"
#include "model/model.h"
#include "sys/fsroot.h"

#include <stdbool.h>

typedef struct {
    const char *version;       /* jobscope version that recorded the run */
    const char *command_json;  /* JSON array of the command's arguments ("[]" when unknown) */
    const char *command_shell; /* the command as a shell would quote it, or NULL (then the JSON is shown) */
    const char *host;
    const char *mode;  /* "run", "attach" or "watch" */
    const char *scope; /* what was watched, in words ("process tree", "user alice (uid 1001)"), or NULL */
    const char *state; /* "complete", "in progress" or "incomplete" (the monitor stopped unclosed) */
    const char *exec_error; /* run: why the command could not be started, or NULL */
    const char
        *stop_reason; /* why monitoring ended ("scope ended", "duration", "signal SIGTERM", ...), or NULL */
    bool have_exit;
    int exit_status;       /* shell convention: code, or 128+signal */
    const char *recording; /* path, or NULL */
} js_run_info_t;

/* summary_build: the summary table of a run: its facts `info`, the tree model's figures `s`, then every model
 * part's rows when `m` is given (may be NULL). The table holds copies (it outlives info, s and m); free it
 * with figure_free. NULL on ENOMEM. */
js_summary_table_t *summary_build(const js_run_info_t *info, const js_summary_t *s, const js_model_t *m);

/* summary_put_tree: the run's facts and the tree model's rows (the keys of docs/FORMAT.md, "The summary
 * JSON", up to `exact`) below `root`: what summary_build puts first, and part_levels for each level. */
void summary_put_tree(js_figure_t *root, const js_run_info_t *info, const js_summary_t *s);

/* summary_json: append the summary as one JSON object (pretty-printed, trailing newline) to `b`:
 * figure_json of summary_build(info, s, m). Returns 0 or -ENOMEM. */
int summary_json(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m);

/* The text summary's forms: short (at most about 12 lines, what a `seff` or `time -v` user reads at a glance:
 * what ran, wall and exit, CPU and efficiency, the memory headline, I/O, GPUs and energy, processes, flags,
 * the recording) and full (every figure). */
typedef enum { JS_SUMMARY_SHORT, JS_SUMMARY_FULL } js_summary_form_t;

/* summary_form_parse: "short" or "full" into *ret. Returns 0, or -EINVAL for any other text. */
int summary_form_parse(const char *s, js_summary_form_t *ret);

/* summary_render_text: append the human-readable summary of table `t` to `b` in the given form: the tree
 * model's lines, then each model part's (its summary_text or summary_short hook, reading the table). Returns
 * 0 or -ENOMEM. */
int summary_render_text(js_buf_t *b, const js_summary_table_t *t, js_summary_form_t form);

/* summary_parts_text: append the model parts' lines of the text summary in the given form, in the parts'
 * order, each read from the table below `root`. Returns 0 or -ENOMEM. */
int summary_parts_text(js_buf_t *b, const js_figure_t *root, js_summary_form_t form);

/* summary_text: append a human-readable summary to `b`: summary_render_text of summary_build(info, s, m).
 * Returns 0 or -ENOMEM. */
int summary_text(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m,
                 js_summary_form_t form);

/* shell_quote: append the arguments as a POSIX shell would need them typed: bare when made of safe
 * characters, in single quotes otherwise, and in $'...' with escapes when they hold control characters or
 * bytes that are not UTF-8 (so the text is safe to print on a terminal). Returns 0 or -ENOMEM. */
int shell_quote(js_buf_t *b, char *const *argv, size_t argc);

/* text_escape: append `s` for a terminal: control characters as \n, \t, \xNN, invalid UTF-8 bytes as \xNN.
 * Returns 0 or -ENOMEM. */
int text_escape(js_buf_t *b, const char *s, size_t len);

#endif
