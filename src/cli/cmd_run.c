/* SPDX-License-Identifier: MIT
 *
 * `jobscope run` and `jobscope attach`: option parsing, the recording's metadata, the live status line, the
 * end-of-run summary, and jobscope's exit status (the command's, like time(1) and timeout(1)).
 */
#include "cli/cli.h"
#include "config.h"

#include "core/duration.h"
#include "core/hostinfo.h"
#include "core/json.h"
#include "core/monitor.h"
#include "core/sampler.h"
#include "sources/proc_tree.h"
#include "sys/cgroupfs.h"
#include "sinks/tabsink.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_USS_EVERY 30
#define DEFAULT_STATUS_EVERY 5

static const char run_usage[] =
    "Usage: jobscope run [OPTIONS] [--] COMMAND [ARG...]\n"
    "       jobscope attach [OPTIONS] PID\n"
    "\n"
    "run starts COMMAND (execvp, no shell) and monitors it and every descendant, including orphans, until all\n"
    "are gone; it exits with COMMAND's exit status (128+N if it died of signal N; 127 not found, 126 not\n"
    "executable). SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to COMMAND.\n"
    "attach monitors a running process and its descendants until they are gone or jobscope gets SIGINT,\n"
    "SIGTERM, SIGHUP or SIGQUIT; CPU totals of members that exit are then sampled, not exact.\n"
    "\n"
    "Options:\n"
    "  -i, --interval DURATION  time between samples, 10ms..1h (default 1s); units ns us ms s m h, none = s\n"
    "  -o, --output FILE        recording to create (default ./jobscope-HOST-YYYYMMDDTHHMMSS.db, UTC)\n"
    "      --force              replace FILE if it exists\n"
    "      --summary-json FILE  also write the summary as JSON to FILE\n"
    "  -q, --quiet              no live status line, no summary on stderr\n"
    "      --uss-every N        read USS/PSS (smaps_rollup) every N samples; 0 = never (default 30)\n"
    "      --status-every N     read /proc/PID/status (RSS split, swap, VmHWM, context switches) every N\n"
    "                           samples (default 5)\n"
    "      --until-main-exits   run: stop when COMMAND exits, even if descendants remain\n"
    "      --cgroup auto|off    run: start COMMAND in a cgroup of its own for exact CPU and memory totals\n"
    "                           (auto, the default, where one can be created; off: tree accounting only)\n"
    "      --procfs DIR         read process data from DIR instead of the kernel's procfs (testing)\n"
    "  -h, --help               show this help\n";

enum { OPT_SUMMARY_JSON = 256, OPT_USS_EVERY, OPT_STATUS_EVERY, OPT_UNTIL_MAIN, OPT_FORCE, OPT_PROCFS, OPT_CGROUP };

static const struct option run_opts[] = {
    {"interval", required_argument, NULL, 'i'},
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, OPT_FORCE},
    {"summary-json", required_argument, NULL, OPT_SUMMARY_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"uss-every", required_argument, NULL, OPT_USS_EVERY},
    {"status-every", required_argument, NULL, OPT_STATUS_EVERY},
    {"until-main-exits", no_argument, NULL, OPT_UNTIL_MAIN},
    {"procfs", required_argument, NULL, OPT_PROCFS},
    {"cgroup", required_argument, NULL, OPT_CGROUP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct {
    bool attach;
    int64_t interval_ns;
    const char *output;
    const char *summary_json;
    const char *procfs;
    bool quiet, force, until_main_exits;
    bool cgroup_off, cgroup_given;
    unsigned uss_every, status_every;
    pid_t pid;
    char **argv;
} run_opts_t;

static int parse_count(const char *s, unsigned *ret)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v > 1000000 || s[0] == '-')
        return -EINVAL;
    *ret = (unsigned)v;
    return 0;
}

static int parse_args(int argc, char **argv, run_opts_t *o)
{
    const char *cmd = o->attach ? "attach " : "run ";
    o->interval_ns = 1000000000;
    o->uss_every = DEFAULT_USS_EVERY;
    o->status_every = DEFAULT_STATUS_EVERY;
    optind = 1;
    opterr = 0;
    int c;
    /* run stops at COMMAND (its own options follow); attach takes options before or after the PID */
    while ((c = getopt_long(argc, argv, o->attach ? "i:o:qh" : "+i:o:qh", run_opts, NULL)) != -1) {
        switch (c) {
        case 'i': {
            int r = interval_parse(optarg, &o->interval_ns);
            if (r == -ERANGE)
                return cli_usage_error(cmd, "interval '%s' out of range (10ms..1h)", optarg);
            if (r < 0)
                return cli_usage_error(cmd, "invalid interval '%s' (examples: 1s, 500ms, 0.5, 2m)", optarg);
            break;
        }
        case 'o':
            o->output = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case OPT_FORCE:
            o->force = true;
            break;
        case OPT_SUMMARY_JSON:
            o->summary_json = optarg;
            break;
        case OPT_USS_EVERY:
            if (parse_count(optarg, &o->uss_every) < 0)
                return cli_usage_error(cmd, "invalid --uss-every '%s' (a whole number, 0 = never)", optarg);
            break;
        case OPT_STATUS_EVERY:
            if (parse_count(optarg, &o->status_every) < 0 || o->status_every == 0)
                return cli_usage_error(cmd, "invalid --status-every '%s' (a whole number >= 1)", optarg);
            break;
        case OPT_UNTIL_MAIN:
            o->until_main_exits = true;
            break;
        case OPT_PROCFS:
            o->procfs = optarg;
            break;
        case OPT_CGROUP:
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "off") != 0)
                return cli_usage_error(cmd, "invalid --cgroup '%s' (auto or off)", optarg);
            o->cgroup_off = strcmp(optarg, "off") == 0;
            o->cgroup_given = true;
            break;
        case 'h':
            fputs(run_usage, stdout);
            return -1;
        case ':':
            return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt)
                return cli_usage_error(cmd, "unknown option '-%c'", optopt);
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (o->attach) {
        if (optind != argc - 1)
            return cli_usage_error(cmd, optind >= argc ? "missing PID" : "attach takes exactly one PID");
        char *end;
        errno = 0;
        long pid = strtol(argv[optind], &end, 10);
        if (*end || errno || pid <= 0 || pid > INT32_MAX)
            return cli_usage_error(cmd, "invalid PID '%s'", argv[optind]);
        o->pid = (pid_t)pid;
        if (o->until_main_exits)
            return cli_usage_error(cmd, "--until-main-exits is for run");
        if (o->cgroup_given)
            return cli_usage_error(cmd, "--cgroup is for run");
    } else {
        if (optind >= argc)
            return cli_usage_error(cmd, "missing COMMAND");
        o->argv = argv + optind;
    }
    return 0;
}

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

static int command_json(js_buf_t *b, char **argv, int argc)
{
    int r = buf_append(b, "[", 1);
    for (int i = 0; i < argc && argv[i] && r == 0; i++) {
        if (i)
            r |= buf_append(b, ",", 1);
        r |= json_str(b, argv[i], strlen(argv[i]));
    }
    return r | buf_append(b, "]", 1);
}

static void default_output(char *buf, size_t cap, const char *host)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char ts[32];
    strftime(ts, sizeof(ts), "%Y%m%dT%H%M%S", &tm);
    char h[64];
    size_t n = 0;
    for (const char *p = host; *p && n < sizeof(h) - 1; p++)
        h[n++] = (*p == '/' || *p == ' ') ? '_' : *p;
    h[n] = '\0';
    snprintf(buf, cap, "jobscope-%s-%s.db", n ? h : "host", ts);
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
            cli_error("cgroup %s: process%s %s still in it after the run; moved to the enclosing cgroup at exit",
                      path, left.n > 1 ? "es" : "", pids);
        else
            cli_error("cgroup %s not removed: %s", path, strerror(-r));
        *warned = true;
    }
    cgroupfs_pids_free(&left);
}

static int write_file(const char *path, const js_buf_t *b)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    size_t n = fwrite(b->p, 1, b->len, f);
    int e = ferror(f) ? EIO : 0;
    if (fclose(f) != 0 && !e)
        e = errno;
    return n == b->len && !e ? 0 : -(e ? e : EIO);
}

int cmd_run(int argc, char **argv)
{
    run_opts_t o = {.attach = strcmp(argv[0], "attach") == 0};
    int r = parse_args(argc, argv, &o);
    if (r)
        return r < 0 ? 0 : r;

    js_monitor_t mon = {0};
    js_recorder_t *rec = NULL;
    js_model_t *model = NULL;
    js_buf_t cmd = {0}, out = {0};
    js_cgroup_t *cg = NULL;
    bool cg_warned = false;
    int status = EXIT_FAIL;
    char outbuf[512], err[1024];

    /* from here on a SIGINT or SIGTERM is handled by the loop (or forwarded), never fatal half-way through
     * creating the recording */
    if ((r = monitor_block_signals()) < 0) {
        cli_error("cannot block signals: %s", strerror(-r));
        return EXIT_FAIL;
    }
    mon.ctx.root.proc = mon.ctx.root.sys = -1;
    if ((r = fsroot_open(&mon.ctx.root, o.procfs, NULL)) < 0) {
        cli_error("cannot open procfs %s: %s", o.procfs ? o.procfs : "", strerror(-r));
        return EXIT_FAIL;
    }
    if (o.attach) {
        char path[32];
        snprintf(path, sizeof(path), "%d/stat", (int)o.pid);
        if (faccessat(mon.ctx.root.proc, path, F_OK, 0) < 0) {
            cli_error("no process with PID %d", (int)o.pid);
            fsroot_close(&mon.ctx.root);
            return EXIT_FAIL;
        }
    }
    js_hostinfo_t hi;
    hostinfo_read(&mon.ctx.root, o.attach ? o.pid : 0, &hi);
    if (!o.output) {
        default_output(outbuf, sizeof(outbuf), hi.host);
        o.output = outbuf;
    }
    /* the recording exists before the command starts, so a bad path is reported first */
    if (recorder_open(o.output, o.force, &rec, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        fsroot_close(&mon.ctx.root);
        return EXIT_FAIL;
    }
    if (o.attach) {
        /* the attached process's own command line, as the kernel has it */
        char path[32];
        js_buf_t raw = {0};
        snprintf(path, sizeof(path), "%d/cmdline", (int)o.pid);
        if (fs_read(mon.ctx.root.proc, path, &raw) < 0 || raw.len == 0 || proc_cmdline_json(raw.p, raw.len, &cmd) < 0)
            command_json(&cmd, &argv[argc - 1], 1);
        buf_free(&raw);
    } else {
        command_json(&cmd, o.argv, argc);
    }
    if (!o.attach && !o.cgroup_off) {
        /* before the sources init: the cgroup source reads ctx->scope.cgroup and attaches the held command */
        char why[512] = "";
        if ((r = cgroupfs_create_run(&mon.ctx.root, getpid(), &cg, why, sizeof(why))) < 0) {
            cli_error("no cgroup for the command (%s): CPU and memory totals from the process tree only",
                      why[0] ? why : strerror(-r));
            recorder_meta(rec, "cgroup_error", why[0] ? why : strerror(-r));
        } else {
            char path[512];
            recorder_meta(rec, "cgroup_path", cgroupfs_main_path(cg, path, sizeof(path)));
            recorder_meta(rec, "cgroup_version", cgroupfs_version_name(cg));
        }
    }
    mon.ctx.scope.cgroup = cg;
    mon.ctx.mode = o.attach ? JS_MODE_ATTACH : JS_MODE_RUN;
    mon.ctx.monitor_pid = getpid();
    mon.ctx.root_pid = o.pid;
    mon.ctx.uss_every = o.uss_every;
    mon.ctx.status_every = o.status_every;
    mon.interval_ns = o.interval_ns;
    mon.until_main_exits = o.until_main_exits;
    js_status_t sl = {.on = !o.quiet && isatty(STDERR_FILENO)};
    if ((r = monitor_prepare(&mon)) < 0 || (r = monitor_add_sink(&mon, &sink_recording, rec)) < 0 ||
        (r = monitor_add_sink(&mon, &sink_status, &sl)) < 0) {
        cli_error("cannot start monitoring: %s", strerror(-r));
        goto out;
    }
    for (size_t i = 0; i < mon.sampler.nsources; i++) /* a disabled source is a fact of the run */
        if (mon.sampler.init_rc[i] < 0) {
            char key[96];
            snprintf(key, sizeof(key), "source_error.%s", js_sources[i]->name);
            recorder_meta(rec, key, strerror(-mon.sampler.init_rc[i]));
        }

    /* everything known before the command starts is recorded before it starts */
    recorder_meta(rec, "jobscope_version", JOBSCOPE_VERSION);
    recorder_meta(rec, "mode", o.attach ? "attach" : "run");
    recorder_meta(rec, "command", cmd.p);
    recorder_meta(rec, "host", hi.host);
    recorder_meta(rec, "kernel", hi.kernel);
    recorder_meta(rec, "cpu_model", hi.cpu_model);
    meta_i64(rec, "cpus_online", hi.cpus_online);
    meta_i64(rec, "mem_total_bytes", hi.mem_total_bytes);
    meta_i64(rec, "clk_tck", hi.clk_tck);
    meta_i64(rec, "page_size", hi.page_size);
    meta_i64(rec, "interval_ns", o.interval_ns);
    meta_i64(rec, "uss_every", o.uss_every);
    meta_i64(rec, "status_every", o.status_every);
    if (!o.attach) {
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
            cli_error("cannot become a child subreaper (%s): orphans will escape the tree", strerror(errno));
        signal(SIGPIPE, SIG_IGN);
        if ((r = monitor_spawn(&mon, o.argv)) < 0) {
            cli_error("cannot start %s: %s", o.argv[0], strerror(-r));
            goto out;
        }
        if (mon.exec_errno) {
            /* the child has exited 127 or 126; reap it and report like a shell */
            int st;
            waitpid(mon.child, &st, 0);
            cli_error("%s: %s", o.argv[0], strerror(mon.exec_errno));
            status = exit_code_of(st);
            meta_i64(rec, "exit_status", status);
            recorder_meta(rec, "exec_error", strerror(mon.exec_errno));
            goto out;
        }
    } else {
        mon.start_mono_ns = now_ns(CLOCK_MONOTONIC);
        mon.start_unix_ns = now_ns(CLOCK_REALTIME);
    }
    /* kept descriptors per process: raise the soft limit for the monitor only (after the fork) */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    if (!o.attach)
        hostinfo_read(&mon.ctx.root, mon.child, &hi); /* the command's affinity mask */
    meta_i64(rec, "cores_available", hi.cores_available);
    meta_i64(rec, "monitor_pid", mon.ctx.monitor_pid);
    meta_i64(rec, "root_pid", mon.ctx.root_pid);
    meta_i64(rec, "start_mono_ns", mon.start_mono_ns);
    meta_i64(rec, "start_unix_ns", mon.start_unix_ns);

    js_model_cfg_t cfg = {
        .mode = mon.ctx.mode,
        .clk_tck = hi.clk_tck,
        .monitor_pid = mon.ctx.monitor_pid,
        .root_pid = mon.ctx.root_pid,
        .interval_ns = o.interval_ns,
        .start_mono_ns = mon.start_mono_ns,
        .cores_available = hi.cores_available,
    };
    model = model_new(&cfg);
    if (!model) {
        cli_error("out of memory");
        goto wait_child;
    }
    mon.model = model;
    sl.start_mono_ns = mon.start_mono_ns;
    for (size_t i = 0; i < mon.sampler.nsources; i++)
        if (mon.sampler.prep_rc[i] < 0) {
            char key[96];
            snprintf(key, sizeof(key), "prepare_error.%s", js_sources[i]->name);
            recorder_meta(rec, key, strerror(-mon.sampler.prep_rc[i]));
        }

    r = monitor_loop(&mon);
    monitor_finish(&mon);
    cgroup_remove(cg, &cg_warned, false); /* after its last read (the closing sample) */
    if (r < 0)
        cli_error("monitoring failed: %s", strerror(-r));
wait_child:
    if (!o.attach && !mon.child_reaped) {
        /* monitoring stopped early (error, or --until-main-exits is not set but we failed): keep the job's status */
        int st;
        if (waitpid(mon.child, &st, 0) == mon.child) {
            mon.child_status = st;
            mon.child_reaped = true;
        }
    }
    if (!o.attach && mon.child_reaped)
        status = exit_code_of(mon.child_status);
    else if (o.attach)
        status = r < 0 ? EXIT_FAIL : 0;
    if (!o.attach && mon.child_reaped)
        meta_i64(rec, "exit_status", status);
    meta_i64(rec, "stop_mono_ns", mon.stop_mono_ns);
    meta_i64(rec, "stop_unix_ns", mon.stop_unix_ns);
    meta_i64(rec, "samples_taken", mon.taken);
    meta_i64(rec, "samples_missed", mon.missed);
    if (mon.write_rc)
        cli_error("%s: %lld samples could not be recorded (%s); the summary below still covers them", o.output,
                  (long long)mon.ctx.write_errors, strerror(-mon.write_rc));
    if (model) {
        js_summary_t su;
        model_summary(model, &su);
        su.write_errors = (int64_t)mon.ctx.write_errors; /* the last sample's own failure included */
        js_run_info_t info = {
            .version = JOBSCOPE_VERSION,
            .command_json = cmd.p,
            .host = hi.host,
            .mode = o.attach ? "attach" : "run",
            .have_exit = !o.attach && mon.child_reaped,
            .exit_status = status,
            .recording = o.output,
        };
        meta_f64(rec, "monitor_cpu_s", su.mon_cpu_s);
        meta_f64(rec, "monitor_max_rss_bytes", su.mon_max_rss);
        meta_f64(rec, "monitor_mean_sample_cost_s", su.mon_mean_cost_s);
        if (o.summary_json) {
            out.len = 0;
            if (summary_json(&out, &info, &su, model) == 0 && (r = write_file(o.summary_json, &out)) < 0)
                cli_error("cannot write %s: %s", o.summary_json, strerror(-r));
        }
        if (!o.quiet) {
            out.len = 0;
            if (summary_text(&out, &info, &su, model) == 0)
                fputs(out.p, stderr);
        }
    }
out:
    monitor_finish(&mon);
    cgroup_remove(cg, &cg_warned, true); /* the retry at exit (or the only removal after an early failure) */
    cgroupfs_free(cg);
    recorder_close(rec);
    model_free(model);
    fsroot_close(&mon.ctx.root);
    buf_free(&cmd);
    buf_free(&out);
    return status;
}
