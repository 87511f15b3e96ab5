/* SPDX-License-Identifier: MIT
 *
 * The options of run, attach, watch and job (see run_args.h): the usage texts, the option tables and the
 * parsing, one handler per group of options (the job's, the scope's, the live endpoints' in cli_export.c).
 */
#include "cli/run_args.h"

#include "core/duration.h"
#include "sources/gpu_select.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_USS_EVERY 30
#define DEFAULT_USS_INTERVAL_NS 30000000000LL /* USS/PSS per process every 30 s, whatever the interval */
#define DEFAULT_STATUS_EVERY 5

/* option lines that several usage texts share (one text, one place) */
#define HELP_INTERVAL                                                                                        \
    "  -i, --interval DURATION  time between samples, 10ms..1h (default 1s); units ns us ms s m h, none = "  \
    "s\n"
#define HELP_OUTPUTS                                                                                         \
    "  -o, --output FILE        recording to create (default ./jobscope-HOST-YYYYMMDDTHHMMSS.mmm.db, UTC)\n" \
    "      --force              replace output files that exist (never through a symbolic link)\n"           \
    "      --summary-json FILE  also write the summary as JSON to FILE\n"                                    \
    "      --summary FILE       write the text summary to FILE instead of stderr\n"                          \
    "      --summary short|full the text summary's form: short (default, about 12 lines: the figures to "    \
    "read\n"                                                                                                 \
    "                           at a glance) or full (every figure; ./full names a file called full)\n"
#define HELP_REPORT                                                                                          \
    "      --report[=FILE]      write the HTML report at the end (default: the recording with .html)\n"
#define HELP_USS                                                                                             \
    "      --uss-every T|N      read USS/PSS (smaps_rollup) at least every T (30s, 5m) or N samples; 0 =\n"  \
    "                           never (default 30s)\n"                                                       \
    "      --status-every N     read /proc/PID/status every N samples (default 5)\n"
#define HELP_REDACT                                                                                          \
    "      --redact-cmdline REGEX  record command lines with every match of REGEX (POSIX extended) in an\n"  \
    "                           argument replaced by *** (e.g. 'password=[^ ]*'; the environment is never\n" \
    "                           recorded)\n"

static const char run_usage[] =
    "Usage: jobscope run [OPTIONS] [--] COMMAND [ARG...]\n"
    "\n"
    "Start COMMAND (execvp, no shell) and monitor it and every descendant, including orphans, until all are\n"
    "gone; exit with COMMAND's exit status (128+N if it died of signal N; 127 not found, 126 not\n"
    "executable). SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to COMMAND. The "
    "summary\n"
    "is printed on stderr at the end.\n"
    "\n"
    "Options:\n" HELP_INTERVAL HELP_OUTPUTS HELP_REPORT
    "                           and print its path on stderr (unless -q)\n"
    "  -q, --quiet              no summary on stderr\n"
    "      --status             show live figures in the terminal's title bar (never in COMMAND's output)\n"
    "      --uss-every T|N      read USS/PSS (smaps_rollup) of every process at least every T (a duration:\n"
    "                           30s, 5m) or every N samples; 0 = never (default 30s; also at the first and\n"
    "                           last sample, and within a CPU budget when a process appears, exits, execs\n"
    "                           or its RSS moves by a tenth or settles, and at marks)\n"
    "      --status-every N     read /proc/PID/status (RSS split, swap, VmHWM, context switches) every N\n"
    "                           samples (default 5)\n"
    "      --until-main-exits   stop when COMMAND exits, even if descendants remain\n"
    "      --cgroup auto|off    start COMMAND in a cgroup of its own for exact CPU and memory totals (auto,\n"
    "                           the default, where one can be created; off: tree accounting only)\n"
    "      --backend B          how processes are read: auto (the BPF task reader where it pays and is\n"
    "                           allowed: root, BTF, Linux >= 6.7), bpf, or procfs (default auto)\n"
    "      --gpus SPEC          GPUs to monitor: all, none, or indices / UUIDs (0,1 or GPU-6f4e...); "
    "default:\n"
    "                           those COMMAND may use (CUDA_VISIBLE_DEVICES etc.), else all\n" HELP_REDACT
    "      --procfs DIR         read process data from DIR instead of the kernel's procfs "
    "(testing)\n" CLI_EXPORT_HELP "  -h, --help               show this help\n";

static const char attach_usage[] =
    "Usage: jobscope attach [OPTIONS] PID\n"
    "\n"
    "Monitor a running process and its descendants until they are gone or jobscope gets SIGINT, SIGTERM,\n"
    "SIGHUP or SIGQUIT (then a closing sample is taken). CPU of members that exit is counted up to their\n"
    "last sample (not exact). A status line is shown on stderr when it is a terminal.\n"
    "\n"
    "Options:\n" HELP_INTERVAL HELP_OUTPUTS HELP_REPORT
    "  -q, --quiet              no status line, no summary on stderr\n" HELP_USS
    "      --backend B          how processes are read: auto (the BPF task reader where it pays and is\n"
    "                           allowed: root, BTF, Linux >= 6.7), bpf, or procfs (default auto)\n"
    "      --perf-per-task      perf counters on every task of the tree, a row per task (default: the\n"
    "                           tree's own cgroup per CPU if it has one, else the root with inheritance:\n"
    "                           what it starts from the attach on, not the processes it had then)\n"
    "      --gpus SPEC          GPUs to monitor: all, none, or indices / UUIDs; default: those PID may use\n"
    "                           (its CUDA_VISIBLE_DEVICES etc.), else all\n" HELP_REDACT
    "      --procfs DIR         read process data from DIR instead of the kernel's procfs "
    "(testing)\n" CLI_EXPORT_HELP "  -h, --help               show this help\n";

static const char watch_usage[] =
    "Usage: jobscope watch (--user NAME|UID | --cgroup PATH | --node) [OPTIONS]\n"
    "\n"
    "Monitor a scope that is not one process tree, until SIGINT, SIGTERM, SIGHUP or SIGQUIT, --duration or\n"
    "--until-file (then a closing sample is taken); a watched cgroup also ends when it is removed.\n"
    "  --user NAME|UID     every process whose real UID is that user, including ones started later; totals\n"
    "                      are sampled, or exact from the user's cgroup (user.slice/user-UID.slice) if any\n"
    "  --cgroup PATH       an existing cgroup (v1, v2 or hybrid), as a path under the cgroup mount or as\n"
    "                      /proc/PID/cgroup shows it: totals from its own counters (exact), rows for its\n"
    "                      processes (and those of the cgroups below it)\n"
    "  --node              the whole machine; per-process rows only with --top N\n"
    "\n"
    "Options:\n"
    "      --top N              node: rows for the N processes using the most CPU over the last interval "
    "and\n"
    "                           the N with the largest RSS, at each sample (default 0: none)\n"
    "      --duration DURATION  stop after DURATION (units as for --interval)\n"
    "      --until-file FILE    stop when FILE appears, or, if it exists at the start, when it contains the\n"
    "                           word FINISHED\n" HELP_INTERVAL HELP_OUTPUTS HELP_REPORT
    "  -q, --quiet              no status line, no summary on stderr\n" HELP_USS
    "      --backend B          how processes are read: auto (for --cgroup the BPF task reader where it\n"
    "                           pays and is allowed: root, BTF, Linux >= 6.7; never for --user or\n"
    "                           --node), bpf, or procfs (default auto)\n"
    "      --perf-per-task      --user: perf counters on every task of the user's processes, a row per task\n"
    "                           (default: the user's cgroup per CPU where it exists)\n" HELP_REDACT
    "      --procfs DIR         read process data from DIR instead of the kernel's procfs (testing)\n"
    "      --gpus SPEC          GPUs to monitor: all (default), none, or indices / UUIDs\n"
    "      --sysfs DIR          read sysfs and cgroup data from DIR instead of the kernel's (testing)\n"
    "  -h, --help               show this help\n";

static const char job_usage[] =
    "Usage: jobscope job [-d DIR] [OPTIONS]\n"
    "\n"
    "Monitor this node's share of the batch job it runs in (SLURM, PBS or OAR, found from the environment) "
    "until\n"
    "the job's work is over, --until-file, --duration, or SIGTERM (SLURM's end of a step or job); a closing\n"
    "sample is always taken. Run one per node beside the job's work, e.g. in a SLURM batch script:\n"
    "    srun --ntasks-per-node=1 --overlap jobscope job -d \"$SCRATCH/mon\" &\n"
    "    srun ./app\n"
    "    wait\n"
    "The work is over when the batch script only waits for the monitors (its shell in wait with the "
    "monitors'\n"
    "srun as its only child): the batch node's monitor sees it and leaves DIR/.JOBID.end for the others "
    "(PBS,\n"
    "OAR: each node, once the job's processes on it are gone).\n"
    "Watched: the job's cgroup (SLURM's task/cgroup; exact, daemons that left the tree included), else the\n"
    "tasks of the job's slurmstepd processes and their descendants (this monitor excluded), else (PBS, OAR)\n"
    "the user's processes. No scheduler command is run.\n"
    "Writes DIR/JOBID-NODE.db with the node's inventory and the job's allocation on the node (cores, "
    "memory,\n"
    "GPUs). On a network file system (NFS, Lustre, GPFS, ...) it is written in $TMPDIR (else /tmp) and "
    "moved\n"
    "into DIR at the end. Each node then leaves DIR/.JOBID-NODE.done; the last node to finish merges every\n"
    "node's recording into DIR/JOBID.db (see jobscope merge). Exit status 0 when the recording is complete.\n"
    "\n"
    "Options:\n"
    "  -d, --dir DIR            where the recordings go (default: the current directory)\n"
    "      --until-file FILE    stop when FILE appears, or, if it exists at the start, when it contains the\n"
    "                           word FINISHED\n"
    "      --duration DURATION  stop after DURATION (units as for --interval)\n" HELP_INTERVAL
    "      --job ID             the job (default: SLURM_JOB_ID, PBS_JOBID or OAR_JOB_ID)\n"
    "      --step STEP|all      SLURM: watch one step (0, 1, batch, ...) or every step (default all)\n"
    "      --node NAME          this node's name (default: SLURMD_NODENAME, the node file's, the host name)\n"
    "      --stepd-pid PID      SLURM: watch the tasks of this slurmstepd (the SPANK plugin's way)\n"
    "      --track auto|cgroup|stepd\n"
    "                           what to watch: the job's cgroup where one exists (auto, the default), only\n"
    "                           the cgroup, or only the slurmstepd's tasks\n"
    "      --no-merge           do not merge the nodes' recordings at the end\n"
    "      --node-local         write in $TMPDIR (else /tmp) and move into DIR at the end, as is done when "
    "DIR\n"
    "                           is on a network file system\n"
    "      --force              replace DIR/JOBID-NODE.db if it exists\n"
    "      --summary-json FILE  also write the node's summary as JSON to FILE\n"
    "      --summary FILE       write the node's text summary to FILE\n"
    "      --summary short|full the text summary's form: short (default) or full (./full names a file)\n"
    "      --report[=FILE]      write the node's HTML report at the end (default: DIR/JOBID-NODE.html)\n"
    "  -q, --quiet              nothing on stderr but errors\n" HELP_USS
    "      --backend B          how processes are read: auto, bpf or procfs (default auto)\n"
    "      --gpus SPEC          GPUs to monitor: all (default), none, or indices / UUIDs\n"
    "      --procfs DIR         read process data from DIR instead of the kernel's procfs (testing)\n"
    "      --sysfs DIR          read sysfs and cgroup data from DIR instead of the kernel's (testing)\n"
    "  -h, --help               show this help\n";

enum {
    OPT_SUMMARY_JSON = 256,
    OPT_SUMMARY,
    OPT_STATUS,
    OPT_USS_EVERY,
    OPT_STATUS_EVERY,
    OPT_UNTIL_MAIN,
    OPT_FORCE,
    OPT_PROCFS,
    OPT_SYSFS,
    OPT_CGROUP,
    OPT_USER,
    OPT_NODE,
    OPT_TOP,
    OPT_DURATION,
    OPT_UNTIL_FILE,
    OPT_BACKEND,
    OPT_GPUS,
    OPT_REPORT,
    OPT_JOB,
    OPT_STEP,
    OPT_JOB_NODE,
    OPT_STEPD_PID,
    OPT_TRACK,
    OPT_NO_MERGE,
    OPT_NODE_LOCAL,
    OPT_REDACT,
    OPT_PERF_PER_TASK
};

/* jobscope job: watch's options (no scope to name) and the job's own */
static const struct option job_opts[] = {
    {"dir", required_argument, NULL, 'd'},
    {"interval", required_argument, NULL, 'i'},
    {"force", no_argument, NULL, OPT_FORCE},
    {"summary-json", required_argument, NULL, OPT_SUMMARY_JSON},
    {"summary", required_argument, NULL, OPT_SUMMARY},
    {"quiet", no_argument, NULL, 'q'},
    {"uss-every", required_argument, NULL, OPT_USS_EVERY},
    {"status-every", required_argument, NULL, OPT_STATUS_EVERY},
    {"procfs", required_argument, NULL, OPT_PROCFS},
    {"sysfs", required_argument, NULL, OPT_SYSFS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"until-file", required_argument, NULL, OPT_UNTIL_FILE},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"job", required_argument, NULL, OPT_JOB},
    {"step", required_argument, NULL, OPT_STEP},
    {"node", required_argument, NULL, OPT_JOB_NODE},
    {"stepd-pid", required_argument, NULL, OPT_STEPD_PID},
    {"track", required_argument, NULL, OPT_TRACK},
    {"no-merge", no_argument, NULL, OPT_NO_MERGE},
    {"node-local", no_argument, NULL, OPT_NODE_LOCAL},
    {"redact-cmdline", required_argument, NULL, OPT_REDACT},
    {"report", optional_argument, NULL, OPT_REPORT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const struct option run_opts[] = {
    {"interval", required_argument, NULL, 'i'},
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, OPT_FORCE},
    {"summary-json", required_argument, NULL, OPT_SUMMARY_JSON},
    {"summary", required_argument, NULL, OPT_SUMMARY},
    {"quiet", no_argument, NULL, 'q'},
    {"status", no_argument, NULL, OPT_STATUS},
    {"uss-every", required_argument, NULL, OPT_USS_EVERY},
    {"status-every", required_argument, NULL, OPT_STATUS_EVERY},
    {"until-main-exits", no_argument, NULL, OPT_UNTIL_MAIN},
    {"procfs", required_argument, NULL, OPT_PROCFS},
    {"sysfs", required_argument, NULL, OPT_SYSFS},
    {"cgroup", required_argument, NULL, OPT_CGROUP},
    {"user", required_argument, NULL, OPT_USER},
    {"node", no_argument, NULL, OPT_NODE},
    {"top", required_argument, NULL, OPT_TOP},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"until-file", required_argument, NULL, OPT_UNTIL_FILE},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"report", optional_argument, NULL, OPT_REPORT},
    {"redact-cmdline", required_argument, NULL, OPT_REDACT},
    {"perf-per-task", no_argument, NULL, OPT_PERF_PER_TASK},
    {"help", no_argument, NULL, 'h'},
    CLI_EXPORT_LONGOPTS,
    {NULL, 0, NULL, 0},
};

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

#define NOT_MINE (-2) /* an option handler's answer: not one of its options */

/* job_option: the options of `job` alone. Returns 0, EXIT_USAGE (reported) or NOT_MINE. */
static int job_option(run_opts_t *o, int c, const char *cmd)
{
    switch (c) {
    case 'd':
        o->ja.dir = optarg;
        return 0;
    case OPT_JOB:
        o->ja.job = optarg;
        return 0;
    case OPT_STEP:
        o->ja.step = optarg;
        return 0;
    case OPT_JOB_NODE:
        o->ja.node = optarg;
        return 0;
    case OPT_STEPD_PID: {
        char *end;
        errno = 0;
        long pid = strtol(optarg, &end, 10);
        if (*end || errno || pid <= 0 || pid > INT32_MAX)
            return cli_usage_error(cmd, "invalid --stepd-pid '%s'", optarg);
        o->ja.stepd_pid = pid;
        return 0;
    }
    case OPT_TRACK:
        if (!strcmp(optarg, "auto"))
            o->ja.track = JOB_TRACK_AUTO;
        else if (!strcmp(optarg, "cgroup"))
            o->ja.track = JOB_TRACK_CGROUP;
        else if (!strcmp(optarg, "stepd"))
            o->ja.track = JOB_TRACK_STEPD;
        else
            return cli_usage_error(cmd, "invalid --track '%s' (auto, cgroup or stepd)", optarg);
        return 0;
    case OPT_NO_MERGE:
        o->ja.no_merge = true;
        return 0;
    case OPT_NODE_LOCAL:
        o->ja.node_local = true;
        return 0;
    default:
        return NOT_MINE;
    }
}

/* scope_option: what is watched and for how long (--cgroup, --user, --node, --top, --duration,
 * --until-file); *nscope counts the scopes named. Returns 0, EXIT_USAGE (reported) or NOT_MINE. */
static int scope_option(run_opts_t *o, int c, const char *cmd, int *nscope)
{
    switch (c) {
    case OPT_CGROUP:
        if (o->kind == CMD_WATCH) { /* watch: the cgroup to watch */
            o->scope = JS_SCOPE_CGROUP;
            o->cgroup_path = optarg;
            (*nscope)++;
            return 0;
        }
        if (o->attach)
            return cli_usage_error(cmd, "--cgroup is for run and watch");
        if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "off") != 0)
            return cli_usage_error(cmd, "invalid --cgroup '%s' (auto or off)", optarg);
        o->cgroup_off = strcmp(optarg, "off") == 0;
        return 0;
    case OPT_USER:
    case OPT_NODE:
        if (o->kind != CMD_WATCH)
            return cli_usage_error(cmd, "--%s is for watch", c == OPT_USER ? "user" : "node");
        o->scope = c == OPT_USER ? JS_SCOPE_USER : JS_SCOPE_NODE;
        o->user = c == OPT_USER ? optarg : NULL;
        (*nscope)++;
        return 0;
    case OPT_TOP:
        if (o->kind != CMD_WATCH)
            return cli_usage_error(cmd, "--top is for watch --node");
        if (parse_count(optarg, &o->top_n) < 0)
            return cli_usage_error(cmd, "invalid --top '%s' (a whole number)", optarg);
        return 0;
    case OPT_DURATION:
        if (o->kind == CMD_RUN)
            return cli_usage_error(cmd, "--duration is for attach and watch (run ends with COMMAND)");
        if (duration_parse(optarg, &o->duration_ns) < 0 || o->duration_ns <= 0)
            return cli_usage_error(cmd, "invalid duration '%s' (examples: 30s, 10m, 2h)", optarg);
        return 0;
    case OPT_UNTIL_FILE:
        if (o->kind == CMD_RUN)
            return cli_usage_error(cmd, "--until-file is for attach and watch (run ends with COMMAND)");
        if (!*optarg)
            return cli_usage_error(cmd, "--until-file needs a file name");
        o->until_file = optarg;
        return 0;
    default:
        return NOT_MINE;
    }
}

/* operands: what follows the options: nothing (job, watch: one scope named), the PID (attach) or the
 * command (run). Returns 0 or EXIT_USAGE (reported). */
static int operands(run_opts_t *o, int argc, char **argv, const char *cmd, int nscope)
{
    if (o->job) {
        if (optind < argc)
            return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
        o->ja.force = o->force;
    } else if (o->kind == CMD_WATCH) {
        if (nscope != 1)
            return cli_usage_error(cmd, nscope ? "give one of --user, --cgroup, --node"
                                               : "what to watch: --user NAME|UID, --cgroup PATH or --node");
        if (optind < argc)
            return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
        if (o->top_n && o->scope != JS_SCOPE_NODE)
            return cli_usage_error(cmd, "--top is for --node");
    } else if (o->attach) {
        if (optind != argc - 1)
            return cli_usage_error(cmd, optind >= argc ? "missing PID" : "attach takes exactly one PID");
        char *end;
        errno = 0;
        long pid = strtol(argv[optind], &end, 10);
        if (*end || errno || pid <= 0 || pid > INT32_MAX)
            return cli_usage_error(cmd, "invalid PID '%s'", argv[optind]);
        o->pid = (pid_t)pid;
    } else {
        if (optind >= argc)
            return cli_usage_error(cmd, "missing COMMAND");
        o->argv = argv + optind;
        o->argc = argc - optind;
    }
    return 0;
}

int run_parse_args(int argc, char **argv, run_opts_t *o)
{
    const char *cmd = o->job                  ? "job "
                      : o->kind == CMD_RUN    ? "run "
                      : o->kind == CMD_ATTACH ? "attach "
                                              : "watch ";
    int nscope = 0;
    o->interval_ns = 1000000000;
    o->uss_every = DEFAULT_USS_EVERY;
    o->uss_interval_ns = DEFAULT_USS_INTERVAL_NS;
    o->status_every = DEFAULT_STATUS_EVERY;
    optind = 1;
    opterr = 0;
    int c;
    /* run stops at COMMAND (its own options follow); attach takes options before or after the PID */
    while ((c = getopt_long(argc, argv,
                            o->job      ? ":d:i:qh"
                            : o->attach ? ":i:o:qh"
                                        : "+:i:o:qh",
                            o->job ? job_opts : run_opts, NULL)) != -1) {
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
        case OPT_SUMMARY: /* a form (short, full) or the file for the text summary: both may be given */
            if (summary_form_parse(optarg, &o->summary_form) < 0)
                o->summary_text = optarg;
            break;
        case OPT_STATUS:
            if (o->attach)
                return cli_usage_error(
                    cmd, "--status is for run (attach and watch show a status line on a terminal)");
            o->status = true;
            break;
        case OPT_USS_EVERY:
            o->uss_interval_ns = 0;
            if (parse_count(optarg, &o->uss_every) < 0) { /* not a count: a duration */
                if (duration_parse(optarg, &o->uss_interval_ns) < 0 || o->uss_interval_ns < 0)
                    return cli_usage_error(cmd,
                                           "invalid --uss-every '%s' (a duration such as 30s, or a number "
                                           "of samples; 0 = never)",
                                           optarg);
                o->uss_every = o->uss_interval_ns > 0; /* 0s: never */
            }
            break;
        case OPT_STATUS_EVERY:
            if (parse_count(optarg, &o->status_every) < 0 || o->status_every == 0)
                return cli_usage_error(cmd, "invalid --status-every '%s' (a whole number >= 1)", optarg);
            break;
        case OPT_UNTIL_MAIN:
            if (o->attach)
                return cli_usage_error(cmd, "--until-main-exits is for run");
            o->until_main_exits = true;
            break;
        case OPT_PROCFS:
            o->procfs = optarg;
            break;
        case OPT_SYSFS:
            o->sysfs = optarg;
            break;
        case OPT_BACKEND:
            if (!strcmp(optarg, "auto"))
                o->backend = JS_BACKEND_AUTO;
            else if (!strcmp(optarg, "bpf"))
                o->backend = JS_BACKEND_BPF;
            else if (!strcmp(optarg, "procfs"))
                o->backend = JS_BACKEND_PROCFS;
            else
                return cli_usage_error(cmd, "invalid --backend '%s' (auto, bpf or procfs)", optarg);
            break;
        case OPT_PERF_PER_TASK:
            if (o->kind == CMD_RUN)
                return cli_usage_error(cmd, "--perf-per-task is for attach and watch --user (run counts the "
                                            "command with inherited counters)");
            o->perf_per_task = true;
            break;
        case OPT_GPUS: {
            gpu_sel_t sel;
            if (gpu_select_parse(optarg, "--gpus", &sel) < 0)
                return cli_usage_error(cmd, "invalid --gpus '%s' (all, none, or up to %d indices or UUIDs)",
                                       optarg, GPU_SEL_MAX);
            o->gpus = optarg;
            o->gpus_none = sel.kind == GPU_SEL_NONE;
            break;
        }
        case OPT_REPORT:
            o->report = true;
            o->report_path = optarg;
            break;
        case OPT_REDACT: {
            if (o->redact_set) {
                regfree(&o->redact);
                o->redact_set = false;
            }
            int e = regcomp(&o->redact, optarg, REG_EXTENDED);
            if (e != 0) {
                char why[128];
                regerror(e, &o->redact, why, sizeof(why));
                return cli_usage_error(cmd, "invalid --redact-cmdline '%s': %s", optarg, why);
            }
            o->redact_set = true;
            break;
        }
        case 'h':
            fputs(o->job                  ? job_usage
                  : o->kind == CMD_RUN    ? run_usage
                  : o->kind == CMD_ATTACH ? attach_usage
                                          : watch_usage,
                  stdout);
            return -1;
        case ':':
            return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: {
            int e = job_option(o, c, cmd);
            if (e == NOT_MINE)
                e = scope_option(o, c, cmd, &nscope);
            if (e == NOT_MINE)
                e = cli_export_option(&o->exp, c, optarg, cmd);
            if (e >= 0) {
                if (e)
                    return e;
                break;
            }
            if (optopt)
                return cli_usage_error(cmd, "unknown option '-%c'", optopt);
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
        }
    }
    return operands(o, argc, argv, cmd, nscope);
}
