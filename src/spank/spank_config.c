/* SPDX-License-Identifier: MIT
 *
 * The SPANK plugin's configuration, path patterns and the monitor's argv and environment (spank_config.h).
 * Plain string handling into fixed buffers: no allocation, no SLURM header, so the plugin can build
 * everything before it forks and the unit tests can check every rule.
 */
#include "spank/spank_config.h"

#include "core/duration.h"
#include "core/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int copy_value(char *dst, size_t dstlen, const char *value)
{
    size_t n = strlen(value);
    if (n >= dstlen)
        return -ENAMETOOLONG;
    memcpy(dst, value, n + 1);
    return 0;
}

void spank_config_defaults(js_spank_config_t *c, const char *default_bin)
{
    memset(c, 0, sizeof(*c));
    if (default_bin)
        (void)copy_value(c->bin, sizeof(c->bin), default_bin);
    c->stop_timeout_ns = 10000000000LL;
}

/* A flag item ("report") given a value, or a valued item given none. */
static int want_value(const char *key, const char *value, char *err, size_t errlen)
{
    if (!value || !*value) {
        why_set(err, errlen, "%s needs a value (%s=...)", key, key);
        return -EINVAL;
    }
    return 0;
}

int spank_config_apply(js_spank_config_t *c, const char *item, int admin, char *err, size_t errlen)
{
    char key[64];
    const char *eq = strchr(item, '=');
    size_t klen = eq ? (size_t)(eq - item) : strlen(item);
    const char *value = eq ? eq + 1 : NULL;
    if (klen == 0 || klen >= sizeof(key)) {
        why_set(err, errlen, "bad option '%s'", item);
        return -EINVAL;
    }
    memcpy(key, item, klen);
    key[klen] = '\0';

    int flag = -1;
    if (!strcmp(key, "report") || !strcmp(key, "batch"))
        flag = 1;
    else if (!strcmp(key, "noreport") || !strcmp(key, "nobatch"))
        flag = 0;
    if (flag >= 0) {
        if (value) {
            why_set(err, errlen, "%s takes no value", key);
            return -EINVAL;
        }
        if (!strcmp(key + (flag ? 0 : 2), "report"))
            c->report = flag;
        else
            c->batch = flag;
        return 0;
    }

    char *dst = NULL;
    size_t dstlen = 0;
    if (!strcmp(key, "interval")) {
        int64_t ns;
        int r = want_value(key, value, err, errlen);
        if (r < 0)
            return r;
        r = interval_parse(value, &ns);
        if (r < 0) {
            why_set(err, errlen, "interval '%s' %s", value,
                    r == -ERANGE ? "out of range (10ms..1h)"
                                 : "is not a duration (examples: 1s, 500ms, 0.5)");
            return -EINVAL;
        }
        dst = c->interval;
        dstlen = sizeof(c->interval);
    } else if (!strcmp(key, "dir")) {
        dst = c->dir;
        dstlen = sizeof(c->dir);
    } else if (!strcmp(key, "log")) {
        dst = c->log;
        dstlen = sizeof(c->log);
    } else if (!strcmp(key, "bin") || !strcmp(key, "stop_timeout")) {
        if (!admin) {
            why_set(err, errlen, "%s can only be set in plugstack.conf", key);
            return -EPERM;
        }
        int r = want_value(key, value, err, errlen);
        if (r < 0)
            return r;
        if (!strcmp(key, "stop_timeout")) {
            int64_t ns;
            if (duration_parse(value, &ns) < 0 || ns > 600000000000LL) {
                why_set(err, errlen, "stop_timeout '%s' is not a duration up to 10m", value);
                return -EINVAL;
            }
            c->stop_timeout_ns = ns;
            return 0;
        }
        if (value[0] != '/') {
            why_set(err, errlen, "bin '%s' must be an absolute path", value);
            return -EINVAL;
        }
        dst = c->bin;
        dstlen = sizeof(c->bin);
    } else {
        why_set(err, errlen, "unknown option '%s' (known: interval=, dir=, log=, report, batch%s)", key,
                admin ? ", bin=, stop_timeout=" : "");
        return -EINVAL;
    }
    int r = want_value(key, value, err, errlen);
    if (r < 0)
        return r;
    if (copy_value(dst, dstlen, value) < 0) {
        why_set(err, errlen, "%s is too long", key);
        return -ENAMETOOLONG;
    }
    return 0;
}

int spank_config_options(js_spank_config_t *c, const char *options, int admin, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!options)
        return 0;
    int bad = 0;
    const char *p = options;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char item[JS_SPANK_PATH_MAX + 64];
        if (n >= sizeof(item))
            n = sizeof(item) - 1; /* cut: apply() then reports the value too long or bad */
        memcpy(item, p, n);
        item[n] = '\0';
        if (n > 0) {
            char one[512];
            if (spank_config_apply(c, item, admin, one, sizeof(one)) < 0) {
                size_t used = err ? strlen(err) : 0;
                if (err && used + 1 < errlen)
                    snprintf(err + used, errlen - used, "%s%s", bad ? "; " : "", one);
                bad++;
            }
        }
        p += n;
        if (end)
            p = end + 1;
        else
            break;
    }
    return bad;
}

const char *spank_step_name(uint32_t step_id, char *out, size_t outlen)
{
    switch (step_id) {
    case JS_SPANK_STEP_BATCH:
        snprintf(out, outlen, "batch");
        break;
    case JS_SPANK_STEP_EXTERN:
        snprintf(out, outlen, "extern");
        break;
    case JS_SPANK_STEP_INTERACTIVE:
        snprintf(out, outlen, "interactive");
        break;
    case JS_SPANK_STEP_PENDING:
        snprintf(out, outlen, "pending");
        break;
    default:
        snprintf(out, outlen, "%u", (unsigned)step_id);
    }
    return out;
}

int spank_expand(const char *pattern, const js_spank_job_t *job, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = pattern; *p; p++) {
        char buf[64];
        const char *piece;
        if (*p != '%') {
            buf[0] = *p;
            buf[1] = '\0';
            piece = buf;
        } else {
            switch (p[1]) {
            case 'j':
                snprintf(buf, sizeof(buf), "%u", (unsigned)job->job_id);
                piece = buf;
                break;
            case 's':
                piece = spank_step_name(job->step_id, buf, sizeof(buf));
                break;
            case 'n':
                piece = job->node;
                break;
            case 'u':
                if (job->user[0]) {
                    piece = job->user;
                } else {
                    snprintf(buf, sizeof(buf), "%u", (unsigned)job->uid);
                    piece = buf;
                }
                break;
            case '%':
                piece = "%";
                break;
            default:
                return -EINVAL;
            }
            p++;
        }
        size_t n = strlen(piece);
        if (o + n >= outlen)
            return -ENAMETOOLONG;
        memcpy(out + o, piece, n);
        o += n;
    }
    if (outlen == 0)
        return -ENAMETOOLONG;
    out[o] = '\0';
    return 0;
}

/* Copy `s` into the launch storage; NULL when it is full. */
static char *store(js_spank_launch_t *l, const char *s)
{
    size_t n = strlen(s) + 1;
    if (l->used + n > sizeof(l->storage))
        return NULL;
    char *p = l->storage + l->used;
    memcpy(p, s, n);
    l->used += n;
    return p;
}

/* The job environment's variables the monitor gets: SLURM* (SLURM_, SLURMD_) and a few of the user's. */
static int env_kept(const char *entry)
{
    static const char *const names[] = {"HOME=", "USER=", "LOGNAME=", "TMPDIR=", "LANG="};
    if (!strncmp(entry, "SLURM", 5))
        return 1;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strncmp(entry, names[i], strlen(names[i])))
            return 1;
    return 0;
}

/* Resolve and expand a pattern into `out`; relative ones against the submit folder. */
static int expand_path(const char *what, const char *pattern, const js_spank_job_t *job, char *out,
                       size_t outlen, char *err, size_t errlen)
{
    char expanded[JS_SPANK_PATH_MAX];
    int r = spank_expand(pattern, job, expanded, sizeof(expanded));
    if (r < 0) {
        why_set(err, errlen, "%s '%s': %s", what, pattern,
                r == -EINVAL ? "unknown %-sequence (known: %j %s %n %u %%)" : "too long");
        return r;
    }
    if (expanded[0] == '/')
        return copy_value(out, outlen, expanded) < 0 ? -ENAMETOOLONG : 0;
    if (!job->submit_dir[0] || job->submit_dir[0] != '/') {
        why_set(err, errlen, "%s '%s' is relative and the job has no submit folder", what, expanded);
        return -EINVAL;
    }
    int n = expanded[0] ? snprintf(out, outlen, "%s/%s", job->submit_dir, expanded)
                        : snprintf(out, outlen, "%s", job->submit_dir);
    if (n < 0 || (size_t)n >= outlen) {
        why_set(err, errlen, "%s is too long", what);
        return -ENAMETOOLONG;
    }
    return 0;
}

int spank_launch_build(js_spank_launch_t *l, const js_spank_config_t *c, const js_spank_job_t *job,
                       char *const *job_env, char *err, size_t errlen)
{
    memset(l->argv, 0, sizeof(l->argv));
    memset(l->envp, 0, sizeof(l->envp));
    l->used = 0;
    l->log[0] = '\0';
    if (!c->bin[0]) {
        why_set(err, errlen, "no jobscope binary (bin= in plugstack.conf)");
        return -EINVAL;
    }
    int r = expand_path("dir", c->dir[0] ? c->dir : JS_SPANK_DEFAULT_DIR, job, l->dir, sizeof(l->dir), err,
                        errlen);
    if (r < 0)
        return r;
    if (c->log[0]) {
        r = expand_path("log", c->log, job, l->log, sizeof(l->log), err, errlen);
        if (r < 0)
            return r;
    }

    char id[16], step[32], pid[16];
    snprintf(id, sizeof(id), "%u", (unsigned)job->job_id);
    spank_step_name(job->step_id, step, sizeof(step));
    snprintf(pid, sizeof(pid), "%d", (int)job->stepd_pid);
    const char *args[JS_SPANK_ARGV_MAX];
    size_t n = 0;
    args[n++] = c->bin;
    args[n++] = "job";
    args[n++] = "-d";
    args[n++] = l->dir;
    if (c->interval[0]) {
        args[n++] = "--interval";
        args[n++] = c->interval;
    }
    if (c->report)
        args[n++] = "--report";
    args[n++] = "--job";
    args[n++] = id;
    args[n++] = "--step";
    args[n++] = step;
    args[n++] = "--node";
    args[n++] = job->node;
    args[n++] = "--stepd-pid";
    args[n++] = pid;
    for (size_t i = 0; i < n; i++) {
        l->argv[i] = store(l, args[i]);
        if (!l->argv[i]) {
            why_set(err, errlen, "the monitor's command line does not fit");
            return -E2BIG;
        }
    }

    char nodevar[300], nodeid[32];
    snprintf(nodevar, sizeof(nodevar), "SLURMD_NODENAME=%s", job->node);
    snprintf(nodeid, sizeof(nodeid), "SLURM_NODEID=%u", (unsigned)job->node_id);
    size_t e = 0;
    if (!(l->envp[e++] = store(l, "PATH=/usr/local/bin:/usr/bin:/bin")) ||
        !(l->envp[e++] = store(l, "JOBSCOPE_SPANK=1")) || !(l->envp[e++] = store(l, nodevar)) ||
        (job->node_id != UINT32_MAX && !(l->envp[e++] = store(l, nodeid)))) {
        why_set(err, errlen, "the monitor's environment does not fit");
        return -E2BIG;
    }
    for (char *const *v = job_env; v && *v; v++) {
        if (!env_kept(*v) || !strncmp(*v, "SLURMD_NODENAME=", 16) || !strncmp(*v, "SLURM_NODEID=", 13))
            continue;
        if (e + 1 >= JS_SPANK_ENV_MAX || !(l->envp[e] = store(l, *v))) {
            why_set(err, errlen, "the monitor's environment does not fit");
            return -E2BIG;
        }
        e++;
    }
    l->envp[e] = NULL;
    return 0;
}

int spank_done_marker(const char *dir, const js_spank_job_t *job, char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "%s/.%u-%s.done", dir, (unsigned)job->job_id, job->node);
    return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}
