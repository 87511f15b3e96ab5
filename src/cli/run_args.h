/* SPDX-License-Identifier: MIT
 *
 * The options of `jobscope run`, `attach`, `watch` and `job` (their --help texts, their parsing and the
 * checks of their operands), parsed into one run_opts_t that cmd_run.c carries out.
 */
#ifndef JOBSCOPE_CLI_RUN_ARGS_H
#define JOBSCOPE_CLI_RUN_ARGS_H

#include "cli/cli.h"
#include "cli/cli_export.h"
#include "cli/cli_job.h"

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { CMD_RUN, CMD_ATTACH, CMD_WATCH } cmd_kind_t;

typedef struct {
    cmd_kind_t kind;
    bool attach; /* attach or watch: not started by jobscope */
    int64_t interval_ns;
    const char *output;
    const char *summary_json, *summary_text;
    js_summary_form_t summary_form; /* --summary short|full */
    const char *procfs, *sysfs;
    const char *gpus;        /* --gpus, or NULL */
    bool gpus_none;          /* --gpus none (or an empty list) */
    const char *report_path; /* --report=FILE; NULL with --report: the recording's name with .html */
    bool report;
    bool quiet, force, until_main_exits, status;
    bool cgroup_off; /* run: --cgroup off */
    unsigned uss_every, status_every;
    int64_t uss_interval_ns; /* --uss-every with a unit: per process, by time */
    pid_t pid;
    char **argv;
    int argc;
    /* watch */
    js_scope_kind_t scope;
    const char *user, *cgroup_path;
    unsigned top_n;
    int64_t duration_ns;
    const char *until_file;
    js_backend_t backend;
    bool perf_per_task; /* attach, watch --user: --perf-per-task */
    cli_export_t exp;   /* --listen, --textfile */
    /* job: a watch of the batch job's share of this node */
    bool job;
    bool user_quiet; /* job: -q given (the summary is never printed on stderr) */
    job_args_t ja;
    regex_t redact; /* --redact-cmdline (POSIX extended), when redact_set */
    bool redact_set;
} run_opts_t;

/* run_parse_args: parse argv (argv[0] the command: run, attach, watch or job) into `o`, whose kind, attach,
 * job and ja.hooks the caller set. Returns 0, -1 after --help (printed: exit 0), or EXIT_USAGE after one
 * line. On any return the caller frees o->redact when o->redact_set. */
int run_parse_args(int argc, char **argv, run_opts_t *o);

#endif
