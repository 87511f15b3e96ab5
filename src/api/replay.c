/* SPDX-License-Identifier: MIT
 *
 * Replaying a recording through the model (see replay.h).
 */
#include "api/replay.h"

#include "sources/proc_tree.h"
#include "sys/fsroot.h"
#include "sys/parse.h"
#include "sources/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* scope_kind_of: the scope of a recording's meta "scope_kind" (absent in recordings of a command: a tree) */
static js_scope_kind_t scope_kind_of(const char *s)
{
    if (!s)
        return JS_SCOPE_TREE;
    return !strcmp(s, "user")     ? JS_SCOPE_USER
           : !strcmp(s, "cgroup") ? JS_SCOPE_CGROUP
           : !strcmp(s, "node")   ? JS_SCOPE_NODE
                                  : JS_SCOPE_TREE;
}

static int64_t in_range(int64_t v, int64_t lo, int64_t hi, int64_t dflt)
{
    return v >= lo && v <= hi ? v : dflt;
}

void replay_model_cfg(const js_recording_t *r, js_model_cfg_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    const char *mode = recording_meta(r, "mode");
    ret->embedded = mode && strcmp(mode, "embedded") == 0; /* js_monitor_start: attach over its own process */
    ret->mode = !mode || strcmp(mode, "run") == 0              ? JS_MODE_RUN
                : strcmp(mode, "attach") == 0 || ret->embedded ? JS_MODE_ATTACH
                                                               : JS_MODE_WATCH;
    /* each value in the range a monitor writes (a file anyone may have edited): else its default */
    ret->clk_tck = in_range(recording_meta_i64(r, "clk_tck", 100), 1, 1000000, 100);
    ret->monitor_pid = (int32_t)in_range(recording_meta_i64(r, "monitor_pid", 0), 0, INT32_MAX, 0);
    ret->root_pid = (int32_t)in_range(recording_meta_i64(r, "root_pid", 0), 0, INT32_MAX, 0);
    ret->interval_ns =
        in_range(recording_meta_i64(r, "interval_ns", 1000000000), 1000000, 86400000000000LL, 1000000000);
    ret->start_mono_ns = in_range(recording_meta_i64(r, "start_mono_ns", 0), 0, INT64_MAX / 4, 0);
    ret->cores_available = recording_meta_f64(r, "cores_available", 0);
    if (!(ret->cores_available > 0 && ret->cores_available <= 1e6))
        ret->cores_available = 0;
    ret->cores_bound = recording_meta(r, "cores_bound");
    ret->scope = scope_kind_of(recording_meta(r, "scope_kind"));
    const char *roots = recording_meta(r, "job_roots");
    ret->stepd_roots = roots && strcmp(roots, "slurmstepd") == 0;
}

/* monitor_alive: whether the monitor that wrote `r` is still running on this host (same PID and start). */
static bool monitor_alive(const js_recording_t *r)
{
    char host[256] = "";
    const char *h = recording_meta(r, "host");
    int64_t pid = recording_meta_i64(r, "monitor_pid", 0);
    int64_t start = recording_meta_i64(r, "monitor_start_ticks", 0);
    if (!h || pid <= 0 || gethostname(host, sizeof(host) - 1) < 0 || strcmp(h, host) != 0)
        return false;
    js_fsroot_t root;
    if (fsroot_open(&root, NULL, NULL) < 0)
        return false;
    char path[32], text[1024];
    snprintf(path, sizeof(path), "%lld/stat", (long long)pid);
    js_pid_stat_t ps;
    bool alive = fs_read_small(root.proc, path, text, sizeof(text)) > 0 && parse_pid_stat(text, &ps) == 0 &&
                 (start == 0 || (int64_t)ps.starttime == start) && ps.state != 'Z';
    fsroot_close(&root);
    return alive;
}

void replay_run_info(const js_recording_t *r, const char *path, js_run_info_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->version = recording_meta(r, "jobscope_version");
    ret->command_json = recording_meta(r, "command");
    if (!ret->command_json)
        ret->command_json = "[]";
    ret->command_shell = recording_meta(r, "command_shell");
    ret->host = recording_meta(r, "host");
    ret->mode = recording_meta(r, "mode");
    ret->scope = recording_meta(r, "scope");
    ret->exec_error = recording_meta(r, "exec_error");
    ret->stop_reason = recording_meta(r, "stop_reason");
    int64_t st = recording_meta_i64(r, "exit_status", -1);
    ret->have_exit = st >= 0 && st <= 0xffff; /* an exit code, or 128 + a signal number */
    ret->exit_status = (int)st;
    ret->recording = path;
    /* a run that ended cleanly records its stop time last; without it the monitor is still writing (on this
     * host, same PID and start time) or stopped without closing the recording (killed, crashed, power) */
    if (recording_meta(r, "stop_unix_ns"))
        ret->state = "complete";
    else
        ret->state = monitor_alive(r) ? "in progress" : "incomplete";
}

void replay_summarize(const js_recording_t *r, const char *path, const js_model_t *m, js_run_info_t *info,
                      js_summary_t *su)
{
    replay_run_info(r, path, info);
    model_summary(m, su);
    if (strcmp(info->state, "complete") != 0) {
        /* what happened after the last sample is unknown: nothing is exact */
        su->exact_cpu = su->exact_peak_rss = su->peak_exact = false;
        su->inexact_cpu_reason = strcmp(info->state, "in progress") == 0
                                     ? "the run is in progress: figures up to the last sample"
                                     : "the recording is incomplete: figures up to its last sample";
    }
}

/* use_stored: the recording kept the model's aggregates (schema 2, complete): feed the model those and skip
 * the process rows. Returns 1 (stored), 0 (read in full) or -ENOMEM. */
static int use_stored(js_recording_t *r, js_model_t *m)
{
    js_rows_t state;
    rows_init(&state, &table_summary_state);
    int rc = recording_stored_state(r, &state);
    if (rc == 1) {
        rc = model_use_stored(m, &state);
        rc = rc == 0 ? 1 : rc == -ENOMEM ? rc : 0; /* another build's summary: read in full */
    } else if (rc == -EIO) {
        rc = 0;
    }
    rows_free(&state);
    if (rc == 1) {
        recording_skip(r, &table_proc_info);
        /* the GPU part matches the GPUs' processes with the members: the process rows only where it has any
         */
        const js_table_t *gp[] = {registry_find_table("nvml_process"), registry_find_table("rocm_process")};
        if (!(gp[0] && recording_has_rows(r, gp[0])) && !(gp[1] && recording_has_rows(r, gp[1])))
            recording_skip(r, &table_proc);
    }
    return rc;
}

int replay_open(const char *path, js_recording_t **ret_rec, js_model_t **ret_model, replay_each_fn each,
                void *arg, char *err, size_t errlen)
{
    return replay_open_ex(path, 0, ret_rec, ret_model, each, arg, err, errlen);
}

int replay_open_ex(const char *path, unsigned flags, js_recording_t **ret_rec, js_model_t **ret_model,
                   replay_each_fn each, void *arg, char *err, size_t errlen)
{
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    js_sample_t s = {0};
    if (errlen)
        err[0] = '\0';
    int rc = recording_open(path, &r, err, errlen);
    if (rc < 0)
        return rc;
    js_model_cfg_t cfg;
    replay_model_cfg(r, &cfg);
    m = model_new(&cfg);
    if (!m || sample_init(&s) < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto fail;
    }
    if (!(flags & (REPLAY_PROCS | REPLAY_RECOMPUTE)) && (rc = use_stored(r, m)) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    int64_t seq;
    char rerr[1024] = "";
    while ((rc = recording_next(r, &s, &seq, rerr, sizeof(rerr))) == 1) {
        if ((rc = model_feed(m, seq, &s)) < 0) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        if (each && (rc = each(arg, r, m, &s)) < 0)
            goto fail;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, rerr);
        goto fail;
    }
    sample_free(&s);
    *ret_rec = r;
    *ret_model = m;
    return 0;
fail:
    sample_free(&s);
    model_free(m);
    recording_close(r);
    return rc;
}
