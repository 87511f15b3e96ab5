/* SPDX-License-Identifier: MIT
 *
 * `jobscope run` and `jobscope attach`: option parsing, every output file created before the command starts,
 * the recording's metadata, the live status, the end-of-run summary (text on stderr or to a file, JSON to a
 * file), and jobscope's exit status (the command's, like time(1) and timeout(1)).
 */
#include "cli/cli.h"
#include "cli/cli_export.h"
#include "cli/cli_job.h"
#include "cli/run_args.h"
#include "config.h"

#include "core/allocation.h"
#include "core/hostinfo.h"
#include "core/json.h"
#include "core/marks.h"
#include "engine/monitor.h"
#include "engine/sampler.h"
#include "sources/proc_tree.h"
#include "sinks/tabsink.h"
#include "sys/cgroupfs.h"
#include "sys/parse.h"
#include "sources/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- metadata ------------------------------------------------------------------------------------------ */

static void meta_i64(js_recorder_t *w, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    recorder_meta(w, key, buf);
}

static void meta_f64(js_recorder_t *w, const char *key, double v)
{
    char buf[40];
    recorder_meta(w, key, fmt_real(buf, sizeof(buf), v));
}

static int command_json(js_buf_t *b, char *const *argv, int argc)
{
    int r = buf_append(b, "[", 1);
    for (int i = 0; i < argc && argv[i] && r == 0; i++) {
        if (i)
            r |= buf_append(b, ",", 1);
        r |= json_str(b, argv[i], strlen(argv[i]));
    }
    return r | buf_append(b, "]", 1);
}

/* cmdline_argv: split a NUL-separated /proc cmdline (in `raw`, modified) into at most `cap` arguments. */
static int cmdline_argv(js_buf_t *raw, char **argv, int cap)
{
    int n = 0;
    for (size_t i = 0; i < raw->len && n < cap; i += strlen(raw->p + i) + 1)
        argv[n++] = raw->p + i;
    return n;
}

/* command_lines: the run's command as JSON and as a shell line, with --redact-cmdline applied (`re` may be
 * NULL). Returns 0 or -ENOMEM. */
static int command_lines(const regex_t *re, char *const *argv, int argc, js_buf_t *cmd, js_buf_t *shell)
{
    if (!re) {
        int r = command_json(cmd, argv, argc);
        return r | shell_quote(shell, argv, (size_t)argc);
    }
    js_buf_t raw = {0}, red = {0};
    char **av = calloc((size_t)argc + 1, sizeof(*av));
    int r = av ? 0 : -ENOMEM;
    for (int i = 0; i < argc && argv[i] && r == 0; i++)
        r = buf_append(&raw, argv[i], strlen(argv[i]) + 1);
    if (r == 0 && raw.len)
        r = proc_cmdline_redact(re, raw.p, raw.len, &red);
    if (r == 0) {
        int n = red.len ? cmdline_argv(&red, av, argc) : 0;
        r = command_json(cmd, av, n);
        r |= shell_quote(shell, av, (size_t)n);
    }
    free(av);
    buf_free(&raw);
    buf_free(&red);
    return r;
}

/* open_default_output: the recording ./jobscope-HOST-YYYYMMDDTHHMMSS.mmm.db (UTC), with -2, -3... when that
 * name is taken (several runs in one millisecond, or a loop of short runs). */
static int open_default_output(char *buf, size_t cap, const char *host, js_recorder_t **ret, char *err,
                               size_t errlen)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char t[32];
    strftime(t, sizeof(t), "%Y%m%dT%H%M%S", &tm);
    char h[64];
    size_t n = 0;
    for (const char *p = host; *p && n < sizeof(h) - 1; p++)
        h[n++] = (*p == '/' || *p == ' ' || (unsigned char)*p < 0x20) ? '_' : *p;
    h[n] = '\0';
    int r = -EEXIST;
    for (int k = 1; k <= 100 && r == -EEXIST; k++) {
        if (k == 1)
            snprintf(buf, cap, "jobscope-%s-%s.%03ld.db", n ? h : "host", t, ts.tv_nsec / 1000000);
        else
            snprintf(buf, cap, "jobscope-%s-%s.%03ld-%d.db", n ? h : "host", t, ts.tv_nsec / 1000000, k);
        r = recorder_open(buf, false, ret, err, errlen);
    }
    return r;
}

/* signal_name: the name of a stop signal for the recording's stop_reason */
static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    case SIGQUIT:
        return "SIGQUIT";
    default:
        return "(another signal)";
    }
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return EXIT_FAIL;
}

/* cgroup_remove: remove the run's cgroup after its last read; a process still in it is named in one warning
 * (*warned). `at_exit`: the retry as jobscope exits, which first moves what is left to the enclosing cgroup
 * (--until-main-exits leaves processes running) so that no empty cgroup outlives jobscope. */
static void cgroup_remove(js_cgroup_t *cg, bool *warned, bool at_exit)
{
    if (!cg)
        return;
    js_cg_pids_t left = {0};
    int r = cgroupfs_remove(cg, &left);
    if (r == -EBUSY && at_exit && cgroupfs_evict(cg) == 0)
        r = cgroupfs_remove(cg, &left);
    if (r < 0 && !*warned) {
        char path[512], pids[256] = "";
        size_t n = 0;
        for (size_t i = 0; i < left.n && n + 16 < sizeof(pids); i++)
            n += (size_t)snprintf(pids + n, sizeof(pids) - n, "%s%d", i ? ", " : "", (int)left.pid[i]);
        cgroupfs_main_path(cg, path, sizeof(path));
        if (left.n)
            cli_error(
                "cgroup %s: process%s %s still in it after the run; moved to the enclosing cgroup at exit",
                path, left.n > 1 ? "es" : "", pids);
        else
            cli_error("cgroup %s not removed: %s", path, strerror(-r));
        *warned = true;
    }
    cgroupfs_pids_free(&left);
}

/* start_ticks_of: field 22 of <procfs>/PID/stat, 0 if unreadable (identifies the monitor in `summary`). */
static int64_t start_ticks_of(const js_fsroot_t *root, pid_t pid)
{
    char path[32], text[1024];
    snprintf(path, sizeof(path), "%d/stat", (int)pid);
    js_pid_stat_t ps;
    if (fs_read_small(root->proc, path, text, sizeof(text)) <= 0 || parse_pid_stat(text, &ps) < 0)
        return 0;
    return (int64_t)ps.starttime;
}

/* The output files, created before the command starts so that a bad path is reported first. The summaries
 * and the report are written under temporary names beside their final ones (cli_output_begin) and published
 * at the end when complete; a failure or a full disk leaves none of them truncated. */
typedef struct {
    js_recorder_t *rec;
    bool json, text, report; /* which of the files below are open */
    js_outfile_t json_f, text_f, report_f;
    char report_path[4096];
} outputs_t;

/* close_outputs: remove the temporaries of the outputs not published. */
static void close_outputs(outputs_t *out)
{
    if (out->json)
        outfile_abort(&out->json_f);
    if (out->text)
        outfile_abort(&out->text_f);
    if (out->report)
        outfile_abort(&out->report_f);
    out->json = out->text = out->report = false;
}

static int open_outputs(const run_opts_t *o, const char *host, char *outbuf, size_t outcap, outputs_t *out)
{
    char err[1024];
    out->json = out->text = out->report = false;
    int r = o->output ? recorder_open(o->output, o->force, &out->rec, err, sizeof(err))
                      : open_default_output(outbuf, outcap, host, &out->rec, err, sizeof(err));
    if (r < 0) {
        cli_error("%s", err);
        return r;
    }
    /* below a second, the samples of a second share one commit (at most a second lost to a kill -9) */
    recorder_set_batch(out->rec, o->interval_ns < 1000000000 ? (unsigned)(1000000000 / o->interval_ns) : 1);
    const char *path = o->output ? o->output : outbuf;
    js_file_id_t ids[4];
    size_t n = 0;
    if (cli_file_id(path, &ids[n]) == 0)
        n++;
    const char *names[3] = {NULL, NULL, NULL}; /* the outputs so far: none may be another's file */
    size_t nn = 0;
    if (o->summary_json) {
        if ((r = cli_output_begin(&out->json_f, o->summary_json, o->force, false, ids, n)) < 0)
            goto fail;
        out->json = true;
        names[nn++] = o->summary_json;
    }
    if (o->summary_text) {
        for (size_t k = 0; k < nn; k++)
            if (cli_output_same(names[k], o->summary_text)) {
                cli_error("%s: is also an input or another output of this command; choose another file",
                          o->summary_text);
                r = -EINVAL;
                goto fail;
            }
        if ((r = cli_output_begin(&out->text_f, o->summary_text, o->force, false, ids, n)) < 0)
            goto fail;
        out->text = true;
        names[nn++] = o->summary_text;
    }
    if (o->report) {
        /* the report: FILE, or the recording's name with .html in place of .db */
        size_t len = strlen(path);
        int w = o->report_path ? snprintf(out->report_path, sizeof(out->report_path), "%s", o->report_path)
                : len > 3 && strcmp(path + len - 3, ".db") == 0
                    ? snprintf(out->report_path, sizeof(out->report_path), "%.*s.html", (int)(len - 3), path)
                    : snprintf(out->report_path, sizeof(out->report_path), "%s.html", path);
        if (w < 0 || (size_t)w >= sizeof(out->report_path)) {
            cli_error("%s: name too long for the report", path);
            r = -ENAMETOOLONG;
            goto fail;
        }
        for (size_t k = 0; k < nn; k++)
            if (cli_output_same(names[k], out->report_path)) {
                cli_error("%s: is also an input or another output of this command; choose another file",
                          out->report_path);
                r = -EINVAL;
                goto fail;
            }
        if ((r = cli_output_begin(&out->report_f, out->report_path, o->force, false, ids, n)) < 0)
            goto fail;
        out->report = true;
    }
    return 0;
fail: /* nothing ran: the recording just made is removed again, and the temporaries */
    recorder_close(out->rec);
    out->rec = NULL;
    unlink(path);
    close_outputs(out);
    return r;
}

/* write_summaries: the JSON file, the text file or stderr. Returns 0 or EXIT_FAIL (reported). */
static int write_summaries(const run_opts_t *o, outputs_t *out, const js_run_info_t *info,
                           const js_summary_t *su, const js_model_t *model)
{
    js_buf_t b = {0};
    int rc = 0, r;
    if (out->json) {
        r = summary_json(&b, info, su, model);
        if (r == 0)
            r = cli_write_all(out->json_f.fd, b.p, b.len);
        if (r < 0)
            cli_error("cannot write %s: %s", o->summary_json, strerror(-r));
        if (cli_output_end(&out->json_f, r < 0 ? EXIT_FAIL : 0))
            rc = EXIT_FAIL;
        out->json = false;
    }
    b.len = 0;
    if (out->text || !o->quiet) {
        if (summary_text(&b, info, su, model, o->summary_form) == 0) {
            if (out->text) {
                if ((r = cli_write_all(out->text_f.fd, b.p, b.len)) < 0)
                    cli_error("cannot write %s: %s", o->summary_text, strerror(-r));
                if (cli_output_end(&out->text_f, r < 0 ? EXIT_FAIL : 0))
                    rc = EXIT_FAIL;
                out->text = false;
            } else {
                fputs(b.p, stderr);
            }
        }
    }
    buf_free(&b);
    return rc;
}

/* resolve_watch: the scope `watch` was asked for, resolved before anything is created: the UID of a user
 * (and the user's own cgroup, user.slice/user-UID.slice, where there is one: exact totals), the cgroup, or
 * the node. Sets ctx->scope and *ret_cg (owned by the caller) and describes the scope in `desc`. Returns 0,
 * or EXIT_FAIL after one line. */
static int resolve_watch(const run_opts_t *o, js_ctx_t *ctx, js_cgroup_t **ret_cg, char *desc, size_t cap)
{
    char why[512] = "";
    ctx->scope.kind = o->scope;
    if (o->scope == JS_SCOPE_NODE) {
        snprintf(desc, cap, "node");
        if (o->top_n)
            snprintf(desc, cap, "node (top %u processes by CPU and by memory)", o->top_n);
        ctx->scope.top_n = o->top_n;
        return 0;
    }
    if (o->scope == JS_SCOPE_CGROUP) {
        int r = cgroupfs_open_path(&ctx->root, o->cgroup_path, ret_cg, why, sizeof(why));
        if (r < 0) {
            cli_error("cgroup %s: %s", o->cgroup_path, why[0] ? why : strerror(-r));
            return EXIT_FAIL;
        }
        char path[512];
        snprintf(desc, cap, "cgroup %s (%s)", cgroupfs_main_path(*ret_cg, path, sizeof(path)),
                 cgroupfs_version_name(*ret_cg));
        ctx->scope.cgroup = *ret_cg;
        return 0;
    }
    /* a user: a name, or a UID (which need not have a name) */
    char *end;
    errno = 0;
    unsigned long uid = strtoul(o->user, &end, 10);
    char name[256] = "";
    if (*o->user && !*end && !errno && uid < UINT32_MAX && o->user[0] != '-') {
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) == 0 && res)
            snprintf(name, sizeof(name), "%s", res->pw_name);
    } else {
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwnam_r(o->user, &pw, buf, sizeof(buf), &res) != 0 || !res) {
            cli_error("no user named '%s'", o->user);
            return EXIT_FAIL;
        }
        uid = res->pw_uid;
        snprintf(name, sizeof(name), "%s", res->pw_name);
    }
    ctx->scope.uid = (uid_t)uid;
    char slice[64];
    snprintf(slice, sizeof(slice), "/user.slice/user-%lu.slice", uid);
    if (cgroupfs_open_path(&ctx->root, slice, ret_cg, why, sizeof(why)) == 0)
        ctx->scope.cgroup = *ret_cg; /* systemd's cgroup of the user: its counters are exact */
    snprintf(desc, cap, "user %s (uid %lu)%s", name[0] ? name : "-", uid,
             ctx->scope.cgroup ? ", with the user's cgroup" : "");
    return 0;
}

/* One run, attach, watch or job, from its options to its exit status: cmd_run_hooks carries it out phase by
 * phase (run_resolve ... run_cleanup). */
typedef struct {
    run_opts_t o;
    int argc;
    char **argv;
    js_monitor_t mon;
    js_marks_t *marks;
    js_model_t *model;
    js_buf_t cmd, shell; /* the command as JSON and as a shell line */
    outputs_t out;
    int status;            /* jobscope's exit status so far */
    int job_state;         /* job: 1 once the recording exists, 2 once monitoring ended normally */
    int loop_rc;           /* what monitor_loop returned */
    char outbuf[512];      /* the default recording's name */
    const char *recording; /* the recording's path */
    js_recorder_t *rec;
    const char *exec_error; /* run: why the command could not be started, or NULL */
    js_cgroup_t *cg;
    bool cg_warned;
    char scope_desc[1600];
    job_plan_t plan; /* job: the scope's strings point into it */
    js_hostinfo_t hi;
    js_status_t sl;
    double cores; /* the allocation */
    const char *cores_bound;
    char stop_why[64];
} run_t;

/* run_resolve: the procfs root and the scope (the job's, the watched one, the attached PID), resolved
 * before anything is created; the host. Returns 0, or the exit status after one line (nothing to clean up
 * but what is done here). */
static int run_resolve(run_t *run)
{
    int r;
    /* from here on a SIGINT or SIGTERM is handled by the loop (or forwarded), never fatal half-way through
     * creating the recording */
    if ((r = monitor_block_signals()) < 0) {
        cli_error("cannot block signals: %s", strerror(-r));
        return EXIT_FAIL;
    }
    run->mon.ctx.root.proc = run->mon.ctx.root.sys = -1;
    run->mon.ctx.redact_cmdline = run->o.redact_set ? &run->o.redact : NULL;
    if ((r = fsroot_open(&run->mon.ctx.root, run->o.procfs, run->o.sysfs)) < 0) {
        cli_error("cannot open procfs %s: %s", run->o.procfs ? run->o.procfs : "", strerror(-r));
        return EXIT_FAIL;
    }
    long pid_there = 0; /* a node is the node in any namespace; every other scope names PIDs of this one */
    if (!(run->o.kind == CMD_WATCH && !run->o.job && run->o.scope == JS_SCOPE_NODE) &&
        fsroot_pidns_check(&run->mon.ctx.root, &pid_there) < 0) {
        cli_error(
            "%s is another PID namespace's /proc (this process is PID %d here, %ld there): its processes "
            "are not this job's; mount a procfs for this namespace (unshare --pid --fork --mount-proc) "
            "or run jobscope outside it",
            run->o.procfs ? run->o.procfs : "procfs", (int)getpid(), pid_there);
        fsroot_close(&run->mon.ctx.root);
        return EXIT_FAIL;
    }
    if (run->o.job) {
        if ((run->status = job_resolve(&run->o.ja, &run->mon.ctx, &run->cg, &run->plan, run->scope_desc,
                                       sizeof(run->scope_desc))) != 0) {
            cgroupfs_free(run->cg);
            fsroot_close(&run->mon.ctx.root);
            return run->status;
        }
        run->status = EXIT_FAIL;
        run->o.scope = run->mon.ctx.scope.kind;
        run->o.output = run->plan.write_path;
        static char job_report[4096]; /* --report: beside the node's recording in DIR, even when it is written
                                       * node-local first (an HTML file is safe on a network file system) */
        size_t flen = strlen(run->plan.final_path);
        if (run->o.report && !run->o.report_path && flen > 3 &&
            !strcmp(run->plan.final_path + flen - 3, ".db") &&
            snprintf(job_report, sizeof(job_report), "%.*s.html", (int)(flen - 3), run->plan.final_path) <
                (int)sizeof(job_report))
            run->o.report_path = job_report;
        if (!run->o.gpus && run->plan.b.gpus[0])
            run->o.gpus = run->plan.b.gpus; /* SLURM_JOB_GPUS: the job's GPUs on this node */
        run->o.user_quiet = run->o.quiet;
        run->o.quiet = true; /* one line at the end, not a summary per node in the job's output */
        if (run->plan.local && !run->o.user_quiet)
            fprintf(stderr, "jobscope: %s is on %s: recording to %s on %s, moved to %s at the end\n",
                    run->plan.dir, run->plan.fs_name, run->plan.write_path, run->plan.b.node,
                    run->plan.final_path);
    } else if (run->o.kind == CMD_WATCH && resolve_watch(&run->o, &run->mon.ctx, &run->cg, run->scope_desc,
                                                         sizeof(run->scope_desc)) != 0) {
        fsroot_close(&run->mon.ctx.root);
        return EXIT_FAIL;
    }
    if (run->o.kind == CMD_ATTACH) {
        char path[32];
        snprintf(path, sizeof(path), "%d/stat", (int)run->o.pid);
        if (faccessat(run->mon.ctx.root.proc, path, F_OK, 0) < 0) {
            cli_error("no process with PID %d", (int)run->o.pid);
            fsroot_close(&run->mon.ctx.root);
            return EXIT_FAIL;
        }
    }
    hostinfo_read(&run->mon.ctx.root, run->o.attach ? run->o.pid : 0, &run->hi);
    return 0;
}

/* run_outputs: the live endpoints (a port is taken before anything else) and every output file. Returns 0,
 * or -1 with run->status set (run_cleanup follows). */
static int run_outputs(run_t *run)
{
    static const char *const scope_label[] = {[JS_SCOPE_TREE] = "tree",
                                              [JS_SCOPE_USER] = "user",
                                              [JS_SCOPE_CGROUP] = "cgroup",
                                              [JS_SCOPE_NODE] = "node"};
    const char *label = scope_label[run->o.kind == CMD_WATCH ? run->o.scope : JS_SCOPE_TREE];
    run->o.exp.endpoint_optional = true; /* a taken port is said, and the command runs (listen_error below) */
    /* the port is taken before anything */
    if ((run->status = cli_export_open(&run->o.exp, run->hi.host, label, true)) != 0)
        return -1;
    run->status = EXIT_FAIL;
    if (open_outputs(&run->o, run->hi.host, run->outbuf, sizeof(run->outbuf), &run->out) < 0)
        return -1;
    run->recording = run->o.output ? run->o.output : run->outbuf;
    run->rec = run->out.rec;
    run->job_state = 1;
    return 0;
}

/* run_command: the command as JSON and as a shell line: jobscope's own for watch and job, the attached
 * process's as the kernel has it, or the one started; --redact-cmdline applied. Returns 0 or -1. */
static int run_command(run_t *run)
{
    if (run->o.kind == CMD_WATCH) {
        /* the command is jobscope's own: what was asked to be watched */
        char **wargv = calloc((size_t)run->argc + 2, sizeof(*wargv));
        if (!wargv) {
            cli_error("out of memory");
            return -1;
        }
        wargv[0] = "jobscope";
        memcpy(wargv + 1, run->argv, (size_t)run->argc * sizeof(*run->argv));
        command_lines(run->mon.ctx.redact_cmdline, wargv, run->argc + 1, &run->cmd, &run->shell);
        free(wargv);
    } else if (run->o.attach) {
        /* the attached process's own command line, as the kernel has it */
        char path[32], *av[256];
        js_buf_t raw = {0};
        snprintf(path, sizeof(path), "%d/cmdline", (int)run->o.pid);
        js_buf_t red = {0};
        bool got = fs_read(run->mon.ctx.root.proc, path, &raw) == 0 && raw.len > 0;
        if (got && run->mon.ctx.redact_cmdline) {
            got = proc_cmdline_redact(run->mon.ctx.redact_cmdline, raw.p, raw.len, &red) == 0;
            js_buf_t t = raw;
            raw = red;
            red = t;
        }
        if (!got || proc_cmdline_json(raw.p, raw.len, &run->cmd) < 0) {
            run->cmd.len = 0;
            command_lines(run->mon.ctx.redact_cmdline, &run->argv[run->argc - 1], 1, &run->cmd, &run->shell);
        } else {
            shell_quote(&run->shell, av, (size_t)cmdline_argv(&raw, av, 256));
        }
        buf_free(&raw);
        buf_free(&red);
    } else {
        command_lines(run->mon.ctx.redact_cmdline, run->o.argv, run->o.argc, &run->cmd, &run->shell);
    }
    return 0;
}

/* run_configure: the run's own cgroup (run mode), the sources' context, and the metadata known before the
 * command starts. */
static void run_configure(run_t *run)
{
    int r;
    if (run->o.kind == CMD_RUN && !run->o.cgroup_off) {
        /* before the sources init: the cgroup source reads ctx->scope.cgroup and attaches the held command */
        char why[512] = "";
        if ((r = cgroupfs_create_run(&run->mon.ctx.root, getpid(), &run->cg, why, sizeof(why))) < 0) {
            cli_error("no cgroup for the command (%s): CPU and memory totals from the process tree only",
                      why[0] ? why : strerror(-r));
            recorder_meta(run->rec, "cgroup_error", why[0] ? why : strerror(-r));
        } else {
            char path[512];
            recorder_meta(run->rec, "cgroup_path", cgroupfs_main_path(run->cg, path, sizeof(path)));
            recorder_meta(run->rec, "cgroup_version", cgroupfs_version_name(run->cg));
        }
    }
    run->mon.ctx.scope.cgroup = run->cg;
    run->mon.ctx.mode = run->o.kind == CMD_RUN      ? JS_MODE_RUN
                        : run->o.kind == CMD_ATTACH ? JS_MODE_ATTACH
                                                    : JS_MODE_WATCH;
    run->mon.ctx.scope.kind = run->o.kind == CMD_WATCH ? run->o.scope : JS_SCOPE_TREE;
    if (run->o.job && run->mon.ctx.scope.kind == JS_SCOPE_TREE)
        run->mon.ctx.root_pid = 0; /* the roots are slurmstepd processes (ctx.scope) */
    run->mon.duration_ns = run->o.duration_ns;
    run->mon.until_file = run->o.until_file;
    run->mon.ctx.backend = run->o.backend;
    run->mon.ctx.perf_per_task = run->o.perf_per_task;
    run->mon.ctx.monitor_pid = getpid();
    run->mon.ctx.root_pid = run->o.pid;
    run->mon.ctx.uss_every = run->o.uss_every;
    run->mon.ctx.uss_interval_ns = run->o.uss_interval_ns;
    run->mon.ctx.status_every = run->o.status_every;
    run->mon.ctx.scope.gpus = run->o.gpus;
    run->mon.interval_ns = run->o.interval_ns;
    run->mon.until_main_exits = run->o.until_main_exits;

    /* everything known before the command starts is recorded before it starts */
    recorder_meta(run->rec, "jobscope_version", JOBSCOPE_VERSION);
    static const char *const kind_names[] = {[JS_SCOPE_TREE] = "tree",
                                             [JS_SCOPE_USER] = "user",
                                             [JS_SCOPE_CGROUP] = "cgroup",
                                             [JS_SCOPE_NODE] = "node"};
    recorder_meta(run->rec, "mode",
                  run->o.job                  ? "job"
                  : run->o.kind == CMD_RUN    ? "run"
                  : run->o.kind == CMD_ATTACH ? "attach"
                                              : "watch");
    recorder_meta(run->rec, "scope", run->scope_desc);
    recorder_meta(run->rec, "scope_kind", kind_names[run->mon.ctx.scope.kind]);
    if (run->mon.ctx.scope.kind == JS_SCOPE_USER)
        meta_i64(run->rec, "scope_uid", run->mon.ctx.scope.uid);
    if (run->cg && run->o.kind == CMD_WATCH) {
        char path[512];
        recorder_meta(run->rec, "cgroup_path", cgroupfs_main_path(run->cg, path, sizeof(path)));
        recorder_meta(run->rec, "cgroup_version", cgroupfs_version_name(run->cg));
    }
    if (run->o.duration_ns)
        meta_i64(run->rec, "duration_ns", run->o.duration_ns);
    if (run->o.until_file)
        recorder_meta(run->rec, "until_file", run->o.until_file);
    recorder_meta(run->rec, "command", run->cmd.p);
    recorder_meta(run->rec, "command_shell", run->shell.p);
    recorder_meta(run->rec, "host", run->hi.host);
    recorder_meta(run->rec, "kernel", run->hi.kernel);
    recorder_meta(run->rec, "cpu_model", run->hi.cpu_model);
    meta_i64(run->rec, "cpus_online", run->hi.cpus_online);
    meta_i64(run->rec, "mem_total_bytes", run->hi.mem_total_bytes);
    meta_i64(run->rec, "clk_tck", run->hi.clk_tck);
    meta_i64(run->rec, "page_size", run->hi.page_size);
    meta_i64(run->rec, "interval_ns", run->o.interval_ns);
    meta_i64(run->rec, "uss_every", run->o.uss_every);
    meta_i64(run->rec, "uss_interval_ns", run->o.uss_interval_ns);
    meta_i64(run->rec, "status_every", run->o.status_every);
    meta_i64(run->rec, "monitor_pid", run->mon.ctx.monitor_pid);
    meta_i64(run->rec, "monitor_start_ticks", start_ticks_of(&run->mon.ctx.root, run->mon.ctx.monitor_pid));
}

/* run_sources: the monitor's descriptor limit, the sources' init, the live sinks (the recording, the status,
 * the endpoints, the job's), and the sources that are off, with their reasons. Returns 0 or -1. */
static int run_sources(run_t *run)
{
    int r;
    /* kept descriptors per process: raise the monitor's soft limit; the command gets its own limit back */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        run->mon.child_nofile = rl;
        run->mon.restore_nofile = true;
        rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    run->sl = (js_status_t){.on = run->o.attach ? !run->o.quiet && isatty(STDERR_FILENO)
                                                : run->o.status && isatty(STDERR_FILENO),
                            .title = !run->o.attach};
    if ((r = monitor_prepare(&run->mon)) < 0 ||
        (r = monitor_add_sink(&run->mon, &sink_recording, run->rec)) < 0 ||
        (r = monitor_add_sink(&run->mon, &sink_status, &run->sl)) < 0) {
        cli_error("cannot start monitoring: %s", strerror(-r));
        return -1;
    }
    if (cli_export_add(&run->o.exp, &run->mon))
        return -1;
    if (run->o.job &&
        ((run->o.ja.hooks && run->o.ja.hooks->sink &&
          (r = monitor_add_sink(&run->mon, run->o.ja.hooks->sink, run->o.ja.hooks->sink_state)) < 0) ||
         (r = job_end_arm(&run->o.ja, &run->plan, &run->mon.ctx.root, &run->mon)) < 0)) {
        cli_error("cannot start monitoring: %s", strerror(-r));
        return -1;
    }
    bool gpu_on = false;
    js_buf_t gpu_why = {0}; /* each GPU source's reason: "nvml: ...; rocm: ..." */
    for (size_t i = 0; i < run->mon.sampler.nsources; i++) { /* a disabled source is a fact of the run */
        const char *why = sampler_init_reason(&run->mon.sampler, i);
        if (why) {
            char key[96];
            snprintf(key, sizeof(key), "source_error.%s", js_sources[i]->name);
            recorder_meta(run->rec, key, why);
        }
        if (js_sources[i]->gpu && why)
            buf_printf(&gpu_why, "%s%s: %s", gpu_why.len ? "; " : "", js_sources[i]->name, why);
        gpu_on |= js_sources[i]->gpu && !why;
    }
    if (run->o.gpus)
        recorder_meta(run->rec, "gpus", run->o.gpus);
    if (run->o.exp.listen_error[0]) /* --listen failed: the run has no endpoint, and its recording says why */
        recorder_meta(run->rec, "listen_error", run->o.exp.listen_error);
    if (run->o.gpus && !gpu_on && !run->o.gpus_none) /* asked for GPUs, got none: say it once */
        cli_error("--gpus %s: no GPU monitored (%s)", run->o.gpus, gpu_why.p ? gpu_why.p : "no GPU source");
    buf_free(&gpu_why);
    return 0;
}

/* run_start: the mark socket and the command (run: held while the sources prepare it, then exec), or the
 * start of monitoring (attach, watch); the allocation and the rest of the metadata. Returns 0 or -1. */
static int run_start(run_t *run)
{
    int r;
    if (!run->o.attach) {
        /* the job's marks (jobscope mark, libjobscope, the Python module) reach the monitor through this */
        if ((r = marks_open(&run->marks)) == 0 &&
            setenv("JOBSCOPE_SOCKET", marks_address(run->marks), 1) == 0) {
            run->mon.marks = run->marks;
            recorder_meta(run->rec, "marks_socket", marks_address(run->marks));
        } else {
            cli_error("cannot open the mark socket (%s): marks from the command are ignored",
                      strerror(r < 0 ? -r : errno));
        }
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
            cli_error("cannot become a child subreaper (%s): orphans will escape the tree", strerror(errno));
        signal(SIGPIPE, SIG_IGN);
        if ((r = monitor_spawn(&run->mon, run->o.argv)) < 0) {
            cli_error("cannot start %s: %s", run->o.argv[0], strerror(-r));
            return -1;
        }
        if (run->mon.exec_errno) {
            /* the child has exited 127 or 126; reap it and report like a shell, with a summary saying why */
            int st;
            waitpid(run->mon.child, &st, 0);
            cli_error("%s: %s", run->o.argv[0], strerror(run->mon.exec_errno));
            run->status = exit_code_of(st);
            run->exec_error = strerror(run->mon.exec_errno);
            meta_i64(run->rec, "exit_status", run->status);
            recorder_meta(run->rec, "exec_error", run->exec_error);
        }
    } else {
        run->mon.start_mono_ns = now_ns(CLOCK_MONOTONIC);
        run->mon.start_unix_ns = now_ns(CLOCK_REALTIME);
    }
    if (!run->o.attach)
        hostinfo_affinity(run->mon.child, &run->hi); /* the command's affinity mask */
    /* the allocation: the smallest of the affinity mask, the cgroup's cpuset and quota, SLURM's word */
    js_allocation_t al;
    js_buf_t envbuf = {0};
    char **envp = run->o.kind == CMD_ATTACH ? cli_environ_of(&run->mon.ctx.root, run->o.pid, &envbuf)
                  : run->o.kind == CMD_RUN || run->o.job ? environ /* job: the job's own environment */
                                                         : NULL; /* watch: no process speaks for the scope */
    /* job: not the monitor's affinity (its own step may have one core), the job's cgroup and SLURM's word */
    allocation_resolve(&run->mon.ctx.root,
                       run->o.kind == CMD_RUN ? run->mon.child
                       : run->o.job           ? 0
                                              : run->o.pid,
                       run->cg, envp, &al);
    if (run->o.kind == CMD_ATTACH)
        free(envp);
    buf_free(&envbuf);
    run->cores = !isnan(al.cores) ? al.cores : (double)run->hi.cores_available;
    run->cores_bound = !isnan(al.cores) ? allocation_bound_name(al.cores_bound) : "affinity";
    meta_f64(run->rec, "cores_available", run->cores);
    recorder_meta(run->rec, "cores_bound", run->cores_bound);
    if (run->o.job)
        job_meta(&run->plan, run->rec, al.cores, allocation_bound_name(al.cores_bound), al.mem_limit_bytes,
                 allocation_bound_name(al.mem_bound));
    meta_i64(run->rec, "root_pid", run->mon.ctx.root_pid);
    meta_i64(run->rec, "start_mono_ns", run->mon.start_mono_ns);
    meta_i64(run->rec, "start_unix_ns", run->mon.start_unix_ns);
    for (size_t i = 0; i < run->mon.sampler.nsources; i++)
        if (run->mon.sampler.prep_rc[i] < 0) {
            char key[96];
            snprintf(key, sizeof(key), "prepare_error.%s", js_sources[i]->name);
            recorder_meta(run->rec, key, strerror(-run->mon.sampler.prep_rc[i]));
        }
    return 0;
}

/* run_monitor: the model, and the loop until the scope ends (not when the command could not be started). */
static void run_monitor(run_t *run)
{
    js_model_cfg_t cfg = {
        .mode = run->mon.ctx.mode,
        .clk_tck = run->hi.clk_tck,
        .monitor_pid = run->mon.ctx.monitor_pid,
        .root_pid = run->mon.ctx.root_pid,
        .interval_ns = run->o.interval_ns,
        .start_mono_ns = run->mon.start_mono_ns,
        .cores_available = run->cores,
        .cores_bound = run->cores_bound,
        .scope = run->mon.ctx.scope.kind,
        /* as a reader configures it from the meta (job_roots), so the totals stored in the recording are a
         * reader's */
        .stepd_roots = run->mon.ctx.scope.kind == JS_SCOPE_TREE &&
                       (run->mon.ctx.scope.stepd_job || run->mon.ctx.scope.stepd_pid > 0),
    };
    run->model = model_new(&cfg);
    if (!run->model) {
        cli_error("out of memory");
        return;
    }
    run->mon.model = run->model;
    run->sl.start_mono_ns = run->mon.start_mono_ns;

    if (!run->exec_error) {
        run->loop_rc = monitor_loop(&run->mon);
        if (run->loop_rc == 0)
            run->job_state = 2;
        monitor_finish(&run->mon);
        cgroup_remove(run->cg, &run->cg_warned, false); /* after its last read (the closing sample) */
        if (run->loop_rc < 0)
            cli_error("monitoring failed: %s", strerror(-run->loop_rc));
    }
}

/* run_conclude: the command's status, the end of the recording's metadata, the summaries and the report. */
static void run_conclude(run_t *run)
{
    if (!run->o.attach && !run->exec_error && !run->mon.child_reaped && run->mon.child > 0) {
        /* monitoring stopped early (an error): keep the job's status */
        int st;
        if (waitpid(run->mon.child, &st, 0) == run->mon.child) {
            run->mon.child_status = st;
            run->mon.child_reaped = true;
        }
    }
    if (!run->o.attach && run->mon.child_reaped)
        run->status = exit_code_of(run->mon.child_status);
    else if (run->o.attach)
        run->status = run->loop_rc < 0 ? EXIT_FAIL : 0;
    if (!run->o.attach && run->mon.child_reaped)
        meta_i64(run->rec, "exit_status", run->status);

    if (run->mon.stop_reason) { /* before the stop time, which closes the recording's metadata */
        snprintf(run->stop_why, sizeof(run->stop_why), "%s%s%s", run->mon.stop_reason,
                 run->mon.stop_signal ? " " : "",
                 run->mon.stop_signal ? signal_name(run->mon.stop_signal) : "");
        recorder_meta(run->rec, "stop_reason", run->stop_why);
    }
    meta_i64(run->rec, "stop_mono_ns",
             run->mon.stop_mono_ns ? run->mon.stop_mono_ns : now_ns(CLOCK_MONOTONIC));
    meta_i64(run->rec, "stop_unix_ns",
             run->mon.stop_unix_ns ? run->mon.stop_unix_ns : now_ns(CLOCK_REALTIME));
    meta_i64(run->rec, "samples_taken", run->mon.taken);
    meta_i64(run->rec, "samples_missed", run->mon.missed);
    if (run->mon.write_rc)
        cli_error("%s: %lld samples could not be recorded (%s); the summary below still covers them",
                  run->recording, (long long)run->mon.ctx.write_errors, strerror(-run->mon.write_rc));
    if (run->model) {
        js_summary_t su;
        model_summary(run->model, &su);
        su.write_errors = (int64_t)run->mon.ctx.write_errors; /* the last sample's own failure included */
        js_run_info_t info = {
            .version = JOBSCOPE_VERSION,
            .command_json = run->cmd.p,
            .command_shell = run->shell.p,
            .host = run->hi.host,
            .mode = run->o.job                  ? "job"
                    : run->o.kind == CMD_RUN    ? "run"
                    : run->o.kind == CMD_ATTACH ? "attach"
                                                : "watch",
            .scope = run->scope_desc,
            .state = "complete",
            .exec_error = run->exec_error,
            .stop_reason = run->stop_why[0] ? run->stop_why : NULL,
            .have_exit = !run->o.attach && (run->mon.child_reaped || run->exec_error),
            .exit_status = run->status,
            .recording = run->recording,
        };
        meta_f64(run->rec, "monitor_cpu_s", su.mon_cpu_s);
        meta_f64(run->rec, "monitor_max_rss_bytes", su.mon_max_rss);
        meta_f64(run->rec, "monitor_mean_sample_cost_s", su.mon_mean_cost_s);
        if (write_summaries(&run->o, &run->out, &info, &su, run->model) && run->o.attach)
            run->status = EXIT_FAIL;
    }
    if (run->out.report) {
        /* from the closed recording, as `jobscope report` would; the sinks are stopped first, the recording
         * among them, which must not be handed to them once closed */
        monitor_finish(&run->mon);
        recorder_close(run->out.rec);
        run->out.rec = NULL;
        run->out.report = false;
        if (cli_output_end(&run->out.report_f,
                           cli_report_fd(run->recording, run->out.report_f.fd, run->out.report_path)) == 0) {
            if (!run->o.quiet)
                fprintf(stderr, "jobscope: report %s\n", run->out.report_path);
        } else if (run->o.attach) {
            run->status = EXIT_FAIL;
        }
    }
}

/* run_cleanup: close and free everything; a job's recording is then moved, marked and merged. Returns the
 * exit status. */
static int run_cleanup(run_t *run)
{
    monitor_finish(&run->mon);
    cgroup_remove(run->cg, &run->cg_warned,
                  true); /* the retry at exit (or the only removal after an early failure) */
    cgroupfs_free(run->cg);
    cli_export_close(&run->o.exp);
    marks_close(run->marks);
    recorder_close(run->out.rec);
    close_outputs(&run->out); /* an early failure: nothing is published */
    model_free(run->model);
    fsroot_close(&run->mon.ctx.root);
    buf_free(&run->cmd);
    buf_free(&run->shell);
    if (run->o.job)
        job_end_free(&run->plan);
    if (run->o.job && run->job_state > 0) { /* after the recording is closed: move, mark, merge */
        int jr =
            job_finish(&run->o.ja, &run->plan, run->job_state == 2 && run->status == 0, run->o.user_quiet);
        if (jr && run->status == 0)
            run->status = jr;
    }
    return run->status;
}

int cmd_run(int argc, char **argv)
{
    return cmd_run_hooks(argc, argv, NULL);
}

int cmd_run_hooks(int argc, char **argv, const job_hooks_t *hooks)
{
    run_t *run = calloc(1, sizeof(*run));
    if (!run) {
        cli_error("out of memory");
        return EXIT_FAIL;
    }
    run_opts_t *o = &run->o;
    o->kind = !strcmp(argv[0], "attach")                             ? CMD_ATTACH
              : !strcmp(argv[0], "watch") || !strcmp(argv[0], "job") ? CMD_WATCH
                                                                     : CMD_RUN;
    o->attach = o->kind != CMD_RUN;
    o->job = !strcmp(argv[0], "job");
    o->ja.hooks = o->job ? hooks : NULL;
    run->argc = argc;
    run->argv = argv;
    run->status = EXIT_FAIL;
    snprintf(run->scope_desc, sizeof(run->scope_desc), "process tree");
    int r = run_parse_args(argc, argv, o);
    if (r) {
        r = r < 0 ? 0 : r; /* -1: --help */
    } else if ((r = run_resolve(run)) == 0) {
        if (run_outputs(run) == 0 && run_command(run) == 0) {
            run_configure(run);
            if (run_sources(run) == 0 && run_start(run) == 0) {
                run_monitor(run);
                run_conclude(run);
            }
        }
        r = run_cleanup(run);
    }
    if (o->redact_set)
        regfree(&o->redact);
    free(run);
    return r;
}
