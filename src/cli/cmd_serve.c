/* SPDX-License-Identifier: MIT
 *
 * `jobscope serve`: a node daemon. It samples the node's sources (watch mode, node scope) until SIGINT or
 * SIGTERM and serves them at /metrics (and/or writes the textfile); with --jobs it also finds the SLURM jobs
 * and steps running on the node by their cgroups each sample (core/jobs.h) and exposes one series set per job
 * and step, so one daemon per node gives jobstats-like data without a monitor per job.
 */
#include "cli/cli.h"
#include "cli/cli_export.h"

#include "core/duration.h"
#include "core/hostinfo.h"
#include "core/jobs.h"
#include "engine/monitor.h"
#include "engine/sampler.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9464"

static const char serve_usage[] =
    "Usage: jobscope serve [OPTIONS]\n"
    "\n"
    "Run as a node daemon: sample the node (CPU, memory, network, disks, energy, InfiniBand, frequencies,\n"
    "temperatures) every INTERVAL and serve it as Prometheus metrics until SIGINT or SIGTERM. With --jobs, "
    "also\n"
    "one series set per SLURM job and step running on this node, found by their cgroups, with jobid, step "
    "and\n"
    "user labels; a job's series disappear when it ends. docs/PROMETHEUS.md lists every series.\n"
    "\n"
    "Options:\n"
    "  -i, --interval DURATION  time between samples, 10ms..1h (default 10s)\n"
    "      --jobs               export the SLURM jobs and steps running on this node\n"
    "      --procfs DIR         read DIR instead of the kernel's procfs (testing; also $JOBSCOPE_PROCFS)\n"
    "      --sysfs DIR          read DIR instead of the kernel's sysfs (testing; also "
    "$JOBSCOPE_SYSFS)\n" CLI_EXPORT_HELP "                           (serve listens on " SERVE_DEFAULT_LISTEN
    " unless only --textfile is given)\n"
    "  -h, --help               show this help\n";

enum { OPT_JOBS = 256, OPT_PROCFS, OPT_SYSFS };

static const struct option serve_opts[] = {
    {"interval", required_argument, NULL, 'i'},
    {"jobs", no_argument, NULL, OPT_JOBS},
    {"procfs", required_argument, NULL, OPT_PROCFS},
    {"sysfs", required_argument, NULL, OPT_SYSFS},
    {"help", no_argument, NULL, 'h'},
    CLI_EXPORT_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* The jobs, as a live sink placed before the exports: each sample it rescans, and the exports render the
 * fresh rows (they are cfg->extra of the exposition). */
typedef struct {
    js_jobs_t *jobs;
    const js_fsroot_t *root;
    js_rows_t job_rows, step_rows;
    int last; /* jobs found by the last scan, or its -errno */
} jobs_sink_t;

static int jobs_sample(void *state, const js_sink_sample_t *ev)
{
    jobs_sink_t *j = state;
    (void)ev;
    j->last = jobs_scan(j->jobs, j->root, &j->job_rows, &j->step_rows);
    return j->last < 0 ? j->last : 0;
}

static const js_live_sink_t sink_jobs = {
    .name = "jobs",
    .sample = jobs_sample,
};

int cmd_serve(int argc, char **argv)
{
    const char *cmd = "serve ";
    int64_t interval_ns = 10 * INT64_C(1000000000);
    const char *procfs = NULL, *sysfs = NULL;
    bool jobs = false;
    cli_export_t x = {0};
    optind = 1;
    opterr = 0;
    int c, r;
    while ((c = getopt_long(argc, argv, ":i:h", serve_opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            r = interval_parse(optarg, &interval_ns);
            if (r == -ERANGE)
                return cli_usage_error(cmd, "interval '%s' out of range (10ms..1h)", optarg);
            if (r < 0)
                return cli_usage_error(cmd, "invalid interval '%s' (examples: 10s, 500ms, 0.5, 2m)", optarg);
            break;
        case OPT_JOBS:
            jobs = true;
            break;
        case OPT_PROCFS:
            procfs = optarg;
            break;
        case OPT_SYSFS:
            sysfs = optarg;
            break;
        case 'h':
            fputs(serve_usage, stdout);
            return 0;
        case ':':
            return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: {
            int e = cli_export_option(&x, c, optarg, cmd);
            if (e > 0)
                return e;
            if (e == 0)
                break;
            if (optopt)
                return cli_usage_error(cmd, "unknown option '-%c'", optopt);
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
        }
    }
    if (optind < argc)
        return cli_usage_error(cmd, "serve takes no arguments ('%s')", argv[optind]);
    if (!x.listen && !x.textfile)
        x.listen = SERVE_DEFAULT_LISTEN;

    if ((r = monitor_block_signals()) < 0) { /* before any thread starts: they inherit the mask */
        cli_error("cannot block signals: %s", strerror(-r));
        return EXIT_FAIL;
    }
    js_monitor_t mon = {0};
    jobs_sink_t js = {.last = 0};
    prom_extra_t extra[2];
    js_model_t *model = NULL;
    int status = EXIT_FAIL;
    mon.ctx.root.proc = mon.ctx.root.sys = -1;
    if ((r = fsroot_open(&mon.ctx.root, procfs, sysfs)) < 0) {
        cli_error("cannot open procfs %s: %s", procfs ? procfs : "", strerror(-r));
        return EXIT_FAIL;
    }
    js_hostinfo_t hi;
    hostinfo_read(&mon.ctx.root, 0, &hi);
    if ((status = cli_export_open(&x, hi.host, "node", false)) != 0)
        goto out;
    status = EXIT_FAIL;
    if (jobs) {
        if (!(js.jobs = jobs_new())) {
            cli_error("out of memory");
            goto out;
        }
        js.root = &mon.ctx.root;
        rows_init(&js.job_rows, &table_slurm_job);
        rows_init(&js.step_rows, &table_slurm_step);
        extra[0] = (prom_extra_t){"slurm_job", &table_slurm_job, &js.job_rows};
        extra[1] = (prom_extra_t){"slurm_step", &table_slurm_step, &js.step_rows};
        x.prom.extra = extra;
        x.prom.nextra = 2;
    }

    mon.ctx.mode = JS_MODE_WATCH;
    mon.ctx.scope.kind = JS_SCOPE_NODE;
    mon.ctx.scope.top_n = x.top_processes;
    mon.ctx.monitor_pid = getpid();
    mon.ctx.root_pid = 0; /* the node scope has no root */
    mon.ctx.uss_every = 0;
    mon.ctx.status_every = 1;
    mon.interval_ns = interval_ns;
    js_model_cfg_t cfg = {
        .mode = JS_MODE_WATCH,
        .scope = JS_SCOPE_NODE, /* totals from the host's own accounting */
        .clk_tck = hi.clk_tck,
        .monitor_pid = mon.ctx.monitor_pid,
        .interval_ns = interval_ns,
        .cores_available = hi.cpus_online,
    };
    if (!(model = model_new(&cfg))) {
        cli_error("out of memory");
        goto out;
    }
    mon.model = model;
    if ((r = monitor_prepare(&mon)) < 0 || (jobs && (r = monitor_add_sink(&mon, &sink_jobs, &js)) < 0)) {
        cli_error("cannot start monitoring: %s", strerror(-r));
        goto out;
    }
    if (cli_export_add(&x, &mon))
        goto out;
    if (x.http)
        cli_error("serving metrics at http%s://%s/metrics%s", x.tls_cert ? "s" : "", x.listen,
                  jobs ? " (with SLURM jobs)" : "");
    mon.start_mono_ns = now_ns(CLOCK_MONOTONIC);
    mon.start_unix_ns = now_ns(CLOCK_REALTIME);
    r = monitor_loop(&mon);
    if (r < 0)
        cli_error("monitoring failed: %s", strerror(-r));
    status = r < 0 ? EXIT_FAIL : 0;
out:
    monitor_finish(&mon);
    cli_export_close(&x);
    model_free(model);
    jobs_free(js.jobs);
    rows_free(&js.job_rows);
    rows_free(&js.step_rows);
    fsroot_close(&mon.ctx.root);
    return status;
}
