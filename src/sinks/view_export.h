/* SPDX-License-Identifier: MIT
 *
 * The view export: one view of the model (model/part.h: `tree`, `process`, `system`, every part's) written
 * sample by sample as a table through a tabular sink (CSV, JSON Lines): time (UTC, ISO 8601 with
 * milliseconds), unix_s and sample first, then a node column for a merged job recording, then the view's
 * columns. The one implementation behind `jobscope export` (src/cli/cmd_export.c) and the library's
 * js_recording_export (src/api/recording_api.c); each feeds it the samples of a replay (api/replay.h).
 * Library code: errors are negative errno values, nothing is printed.
 */
#ifndef JOBSCOPE_VIEW_EXPORT_H
#define JOBSCOPE_VIEW_EXPORT_H

#include "model/model.h"
#include "sinks/tabsink.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct js_view_export js_view_export_t;

/* view_export_format: the tabular sink named `format` ("csv", "jsonl"), or NULL for another name. */
const js_tab_sink_t *view_export_format(const char *format);

/* view_export_known: whether a model of this build has a view named `name` (`system`, whose columns depend
 * on the recording, counts). With `list` not NULL, every view and its columns are written there, one view a
 * paragraph (`jobscope export --list`). `name` may be NULL (listing only). */
bool view_export_known(const char *name, FILE *list);

/* view_export_open: an exporter of view `view` (borrowed) to `f` (borrowed, not closed) through `sink`; with
 * `node_column`, a node column follows sample (view_export_node says which node the next rows are).
 * Returns 0 or -ENOMEM; *ret is freed by view_export_free. Nothing is written before the first row or
 * view_export_finish. */
int view_export_open(js_view_export_t **ret, const js_tab_sink_t *sink, FILE *f, const char *view,
                     bool node_column);

/* view_export_node: the node the next rows belong to (borrowed until the next call); a node whose view has
 * other columns than the first one's (CPUs, interfaces) is written under the first one's header, by name,
 * missing where it has none. */
void view_export_node(js_view_export_t *x, const char *node);

/* view_export_sample: the rows of the view at the model's last fed sample (none when the view has no data
 * yet). Returns 0, or -errno when the sink failed (-EIO: a full disk, a closed pipe) or -ENOMEM. */
int view_export_sample(js_view_export_t *x, js_model_t *m);

/* view_export_finish: the header alone when no row was written (`m`'s view descriptor, may be NULL), then
 * the sink's end (flush). Returns 0 or the first write error. */
int view_export_finish(js_view_export_t *x, js_model_t *m);

/* view_export_free: release the exporter; accepts NULL. Does not close the stream. */
void view_export_free(js_view_export_t *x);

#endif
