/* SPDX-License-Identifier: MIT
 *
 * CLI helpers shared by the subcommands (see cli.h).
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void vprint_line(const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fputs("jobscope: ", stderr);
    for (const char *p = msg; *p; p++) {
        if (*p == '\n')
            fputs("\\n", stderr);
        else
            fputc(*p, stderr);
    }
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_line(fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cli_error("%s (see 'jobscope %s--help')", msg, cmd ? cmd : "");
    return EXIT_USAGE;
}

void cli_model_cfg(const js_recording_t *r, js_model_cfg_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    const char *mode = recording_meta(r, "mode");
    ret->mode = mode && strcmp(mode, "attach") == 0 ? JS_MODE_ATTACH : JS_MODE_RUN;
    ret->clk_tck = recording_meta_i64(r, "clk_tck", 100);
    ret->monitor_pid = (int32_t)recording_meta_i64(r, "monitor_pid", 0);
    ret->root_pid = (int32_t)recording_meta_i64(r, "root_pid", 0);
    ret->interval_ns = recording_meta_i64(r, "interval_ns", 1000000000);
    ret->start_mono_ns = recording_meta_i64(r, "start_mono_ns", 0);
    ret->cores_available = recording_meta_f64(r, "cores_available", 0);
}

void cli_run_info(const js_recording_t *r, const char *path, js_run_info_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->version = recording_meta(r, "jobscope_version");
    ret->command_json = recording_meta(r, "command");
    if (!ret->command_json)
        ret->command_json = "[]";
    ret->host = recording_meta(r, "host");
    ret->mode = recording_meta(r, "mode");
    int64_t st = recording_meta_i64(r, "exit_status", -1);
    ret->have_exit = st >= 0;
    ret->exit_status = (int)st;
    ret->recording = path;
}

int cli_read_recording(const char *path, js_recording_t **ret_rec, js_model_t **ret_model, cli_each_fn each,
                       void *arg)
{
    char err[1024] = "";
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    js_sample_t s = {0};
    int rc = recording_open(path, &r, err, sizeof(err));
    if (rc < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    js_model_cfg_t cfg;
    cli_model_cfg(r, &cfg);
    m = model_new(&cfg);
    if (!m || sample_init(&s) < 0) {
        cli_error("out of memory");
        goto fail;
    }
    int64_t seq;
    while ((rc = recording_next(r, &s, &seq, err, sizeof(err))) == 1) {
        if (model_feed(m, seq, &s) < 0) {
            cli_error("out of memory");
            goto fail;
        }
        if (each && each(arg, r, m, &s) < 0)
            goto fail;
    }
    if (rc < 0) {
        cli_error("%s: %s", path, err);
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
    return EXIT_FAIL;
}
