/* SPDX-License-Identifier: MIT
 *
 * Reading recordings through the public API (include/jobscope.h): js_recording_summary and
 * js_recording_export, for bindings that have no CLI at hand (python/jobscope's read() and compare()). The
 * same replay as `jobscope summary` and `jobscope export` (api/replay.h), and the same export: the view
 * exporter (sinks/view_export.h) that `jobscope export` writes its tables with.
 */
#include "api/api.h"
#include "api/replay.h"

#include "core/json.h"
#include "sinks/view_export.h"
#include "sys/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

JS_API char *js_recording_summary(const char *path)
{
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    js_recording_t *r;
    js_model_t *m;
    char err[1024];
    int rc = replay_open(path, &r, &m, NULL, NULL, err, sizeof(err));
    if (rc < 0) {
        errno = -rc;
        return NULL;
    }
    js_summary_t su;
    js_run_info_t info;
    replay_summarize(r, path, m, &info, &su);
    js_buf_t b = {0};
    rc = summary_json(&b, &info, &su, m);
    model_free(m);
    recording_close(r);
    if (rc < 0) {
        buf_free(&b);
        errno = ENOMEM;
        return NULL;
    }
    return b.p;
}

/* each_sample: the replay's callback: the view's rows of each sample fed */
static int each_sample(void *arg, const js_recording_t *rec, js_model_t *m, const js_sample_t *s)
{
    (void)rec;
    (void)s;
    return view_export_sample(arg, m);
}

JS_API int js_recording_export(const char *path, const char *view, const char *format, const char *out)
{
    if (!path || !view || !format || !out)
        return -EINVAL;
    const js_tab_sink_t *sink = view_export_format(format);
    if (!sink)
        return -EINVAL;
    if (!view_export_known(view, NULL)) /* the view must exist in this build */
        return -ENOENT;
    char err[1024];
    js_recording_t *r = NULL;
    int rc = recording_open(path, &r, err, sizeof(err));
    recording_close(r);
    if (rc < 0)
        return rc;
    /* written under a temporary name and renamed over `out` when complete (sys/outfile.h) */
    js_outfile_t of;
    if ((rc = outfile_open(&of, out, true, false)) < 0)
        return rc;
    int fd = dup(of.fd);
    FILE *f = NULL;
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        rc = -errno;
        if (fd >= 0)
            close(fd);
        outfile_abort(&of);
        return rc;
    }
    js_view_export_t *x = NULL;
    js_model_t *m = NULL;
    r = NULL;
    rc = view_export_open(&x, sink, f, view, false);
    if (rc == 0)
        rc = replay_open(path, &r, &m, each_sample, x, err, sizeof(err));
    int e = x ? view_export_finish(x, m) : 0;
    if (rc == 0 && e < 0)
        rc = e;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    view_export_free(x);
    if (rc == 0)
        rc = outfile_commit(&of);
    else
        outfile_abort(&of);
    model_free(m);
    recording_close(r);
    return rc;
}
