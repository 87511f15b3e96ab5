/* SPDX-License-Identifier: MIT
 *
 * CLI helpers shared by the subcommands (see cli.h).
 */
#include "cli/cli.h"

#include "sys/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
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

int cli_file_id(const char *path, js_file_id_t *ret)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -errno;
    ret->dev = st.st_dev;
    ret->ino = st.st_ino;
    return 0;
}

int cli_output_open(const char *path, bool force, const js_file_id_t *avoid, size_t n, js_file_id_t *ret_id)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        for (size_t i = 0; i < n; i++)
            if (avoid[i].dev == st.st_dev && avoid[i].ino == st.st_ino) {
                cli_error("%s: is also an input or another output of this command; choose another file", path);
                return -EINVAL;
            }
        if (!force) {
            cli_error("%s: already exists (choose another name, or --force to replace it)", path);
            return -EEXIST;
        }
        if (S_ISLNK(st.st_mode)) {
            cli_error("%s: is a symbolic link; jobscope does not write through links", path);
            return -ELOOP;
        }
        if (!S_ISREG(st.st_mode)) {
            cli_error("%s: not a regular file", path);
            return -EINVAL;
        }
    }
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        int e = errno;
        cli_error("%s: %s", path, e == ELOOP ? "is a symbolic link; jobscope does not write through links"
                                            : strerror(e));
        return -e;
    }
    if (ret_id && fstat(fd, &st) == 0) {
        ret_id->dev = st.st_dev;
        ret_id->ino = st.st_ino;
    }
    return fd;
}

int cli_write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

char **cli_environ_of(const js_fsroot_t *root, pid_t pid, js_buf_t *buf)
{
    char path[32];
    snprintf(path, sizeof(path), "%d/environ", (int)pid);
    if (fs_read(root->proc, path, buf) < 0 || buf->len == 0)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < buf->len; i++)
        n += buf->p[i] == '\0';
    char **env = calloc(n + 2, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < buf->len && k <= n; i += strlen(buf->p + i) + 1)
        env[k++] = buf->p + i;
    return env;
}

static js_scope_kind_t scope_kind_of(const char *s)
{
    if (!s)
        return JS_SCOPE_TREE;
    return !strcmp(s, "user") ? JS_SCOPE_USER : !strcmp(s, "cgroup") ? JS_SCOPE_CGROUP
                              : !strcmp(s, "node")                    ? JS_SCOPE_NODE
                                                                      : JS_SCOPE_TREE;
}

void cli_model_cfg(const js_recording_t *r, js_model_cfg_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    const char *mode = recording_meta(r, "mode");
    ret->mode = !mode || strcmp(mode, "run") == 0 ? JS_MODE_RUN : strcmp(mode, "attach") == 0 ? JS_MODE_ATTACH
                                                                                         : JS_MODE_WATCH;
    ret->clk_tck = recording_meta_i64(r, "clk_tck", 100);
    ret->monitor_pid = (int32_t)recording_meta_i64(r, "monitor_pid", 0);
    ret->root_pid = (int32_t)recording_meta_i64(r, "root_pid", 0);
    ret->interval_ns = recording_meta_i64(r, "interval_ns", 1000000000);
    ret->start_mono_ns = recording_meta_i64(r, "start_mono_ns", 0);
    ret->cores_available = recording_meta_f64(r, "cores_available", 0);
    ret->cores_bound = recording_meta(r, "cores_bound");
    ret->scope = scope_kind_of(recording_meta(r, "scope_kind"));
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

void cli_run_info(const js_recording_t *r, const char *path, js_run_info_t *ret)
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
    int64_t st = recording_meta_i64(r, "exit_status", -1);
    ret->have_exit = st >= 0;
    ret->exit_status = (int)st;
    ret->recording = path;
    /* a run that ended cleanly records its stop time last; without it the monitor is still writing (on this
     * host, same PID and start time) or stopped without closing the recording (killed, crashed, power) */
    if (recording_meta(r, "stop_unix_ns"))
        ret->state = "complete";
    else
        ret->state = monitor_alive(r) ? "in progress" : "incomplete";
}

void cli_summarize(const js_recording_t *r, const char *path, const js_model_t *m, js_run_info_t *info,
                   js_summary_t *su)
{
    cli_run_info(r, path, info);
    model_summary(m, su);
    if (strcmp(info->state, "complete") != 0) {
        /* what happened after the last sample is unknown: nothing is exact */
        su->exact_cpu = su->exact_peak_rss = false;
        su->inexact_cpu_reason = strcmp(info->state, "in progress") == 0
                                     ? "the run is in progress: figures up to the last sample"
                                     : "the recording is incomplete: figures up to its last sample";
    }
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
