/* SPDX-License-Identifier: MIT
 *
 * Test helpers: the model parts' rows of the summary table (model_parts_summary), rendered as the JSON object
 * and the full text summary's part lines render them, for tests that look for a part's figures.
 */
#ifndef JOBSCOPE_TEST_PARTS_SUMMARY_H
#define JOBSCOPE_TEST_PARTS_SUMMARY_H

#include "model/figure.h"
#include "model/model.h"
#include "model/summary.h"

#include <errno.h>

/* parts_json: append every part's rows of model m as one JSON object to b. Returns 0 or -ENOMEM. */
static inline int parts_json(const js_model_t *m, js_buf_t *b)
{
    js_summary_table_t *t = figure_new();
    if (!t)
        return -ENOMEM;
    model_parts_summary(m, figure_root(t));
    int rc = figure_error(t) ? figure_error(t) : figure_json(t, b);
    figure_free(t);
    return rc;
}

/* parts_text: append every part's lines of the full text summary of model m to b. Returns 0 or -ENOMEM. */
static inline int parts_text(const js_model_t *m, js_buf_t *b)
{
    js_summary_table_t *t = figure_new();
    if (!t)
        return -ENOMEM;
    model_parts_summary(m, figure_root(t));
    int rc = figure_error(t) ? figure_error(t) : summary_parts_text(b, figure_root(t), JS_SUMMARY_FULL);
    if (!b->p)
        buf_append(b, "", 0);
    figure_free(t);
    return rc;
}

#endif
