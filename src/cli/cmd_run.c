/* SPDX-License-Identifier: MIT
 *
 * `jobscope run` and `jobscope attach`: option parsing, every output file created before the command starts,
 * the recording's metadata, the live status, the end-of-run summary (text on stderr or to a file, JSON to a
 * file), and jobscope's exit status (the command's, like time(1) and timeout(1)).
 */
#include "cli/cli.h"
#include "cli/cli_export.h"
#include "cli/cli_job.h"
#include "config.h"

#include "core/allocation.h"
#include "core/duration.h"
#include "core/hostinfo.h"
#include "core/json.h"
#include "core/marks.h"
#include "core/monitor.h"
#include "core/sampler.h"
#include "sources/gpu_select.h"
#include "sources/proc_tree.h"
#include "sinks/tabsink.h"
#include "sys/cgroupfs.h"
#include "sys/parse.h"

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

#define DEFAULT_USS_EVERY 30
#define DEFAULT_USS_INTERVAL_NS 30000000000LL /* USS/PSS per process every 30 s, whatever the interval */
#define DEFAULT_STATUS_EVERY 5

static const char run_usage[] =
    "Usage: jobscope run [OPTIONS] [--] COMMAND [ARG...]\n"
    "\n"
    "Start COMMAND (execvp, no shell) and monitor it and every descendant, including orphans, until all are\n"
    "gone; exit with COMMAND's exit status (128+N if it died of signal N; 127 not found, 126 not\n"
    "executable). SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to COMMAND. The "
    "summary\n"
    "is printed on stderr at the end.\n"
    "\n"
    "Options:\n"
    "  -i, --interval DURATION  time between samples, 10ms..1h (default 1s); units ns us ms s m h, none = s\n"
    "  -o, --output FILE        recording to create (default ./jobscope-HOST-YYYYMMDDTHHMMSS.mmm.db, UTC)\n"
    "      --force              replace output files that exist (never through a symbolic link)\n"
    "      --summary-json FILE  also write the summary as JSON to FILE\n"
    "      --summary FILE       write the text summary to FILE instead of stderr\n"
    "      --summary short|full the text summary's form: short (default, about 12 lines: the figures to "
    "read\n"
    "                           at a glance) or full (every figure; ./full names a file called full)\n"
    "      --report[=FILE]      write the HTML report at the end (default: the recording with .html)\n"
    "                           and print its path on stderr (unless -q)\n"
    "  -q, --quiet              no summary on stderr\n"
    "      --status             show live figures in the terminal's title bar (never in COMMAND's output)\n"
    "      --uss-every T|N      read USS/PSS (smaps_rollup) of every process at least every T (a duration: "
    "30s,\n"
    "                           5m) or every N samples; 0 = never (default 30s; also at the first and last\n"
    "                           sample, and within a CPU budget when a process appears, exits, execs or its\n"
    "                           RSS moves by a tenth or settles, and at marks)\n"
    "      --status-every N     read /proc/PID/status (RSS split, swap, VmHWM, context switches) every N\n"
    "                           samples (default 5)\n"
    "      --until-main-exits   stop when COMMAND exits, even if descendants remain\n"
    "      --cgroup auto|off    start COMMAND in a cgroup of its own for exact CPU and memory totals (auto,\n"
    "                           the default, where one can be created; off: tree accounting only)\n"
    "      --backend B          how processes are read: auto (the BPF task reader where it pays and is\n"
    "                           allowed: root, BTF, Linux >= 6.7), bpf, or procfs (default auto)\n"
    "      --gpus SPEC          GPUs to monitor: all, none, or indices / UUIDs (0,1 or GPU-6f4e...); "
    "default:\n"
    "                           those COMMAND may use (CUDA_VISIBLE_DEVICES etc.), else all\n"
    "      --redact-cmdline REGEX  record command lines with every match of REGEX (POSIX extended) in an\n"
    "                           argument replaced by *** (e.g. 'password=[^ ]*'; the environment is never\n"
    "                           recorded)\n"
    "      --procfs DIR         read process data from DIR instead of the kernel's procfs "
    "(testing)\n" CLI_EXPORT_HELP "  -h, --help               show this help\n";

static const char attach_usage[] =
    "Usage: jobscope attach [OPTIONS] PID\n"
    "\n"
    "Monitor a running process and its descendants until they are gone or jobscope gets SIGINT, SIGTERM,\n"
    "SIGHUP or SIGQUIT (then a closing sample is taken). CPU of members that exit is counted up to their\n"
    "last sample (not exact). A status line is shown on stderr when it is a terminal.\n"
    "\n"
    "Options:\n"
    "  -i, --interval DURATION  time between samples, 10ms..1h (default 1s); units ns us ms s m h, none = s\n"
    "  -o, --output FILE        recording to create (default ./jobscope-HOST-YYYYMMDDTHHMMSS.mmm.db, UTC)\n"
    "      --force              replace output files that exist (never through a symbolic link)\n"
    "      --summary-json FILE  also write the summary as JSON to FILE\n"
    "      --summary FILE       write the text summary to FILE instead of stderr\n"
    "      --summary short|full the text summary's form: short (default, about 12 lines: the figures to "
    "read\n"
    "                           at a glance) or full (every figure; ./full names a file called full)\n"
    "      --report[=FILE]      write the HTML report at the end (default: the recording with .html)\n"
    "  -q, --quiet              no status line, no summary on stderr\n"
    "      --uss-every T|N      read USS/PSS (smaps_rollup) at least every T (30s, 5m) or N samples; 0 =\n"
    "                           never (default 30s)\n"
    "      --status-every N     read /proc/PID/status every N samples (default 5)\n"
    "      --backend B          how processes are read: auto (the BPF task reader where it pays and is\n"
    "                           allowed: root, BTF, Linux >= 6.7), bpf, or procfs (default auto)\n"
    "      --perf-per-task      perf counters on every task of the tree, a row per task (default: the\n"
    "                           tree's own cgroup per CPU if it has one, else the root with inheritance:\n"
    "                           what it starts from the attach on, not the processes it had then)\n"
    "      --gpus SPEC          GPUs to monitor: all, none, or indices / UUIDs; default: those PID may use\n"
    "                           (its CUDA_VISIBLE_DEVICES etc.), else all\n"
    "      --redact-cmdline REGEX  record command lines with every match of REGEX (POSIX extended) in an\n"
    "                           argument replaced by *** (e.g. 'password=[^ ]*'; the environment is never\n"
    "                           recorded)\n"
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
    "                           word FINISHED\n"
    "  -i, --interval DURATION  time between samples, 10ms..1h (default 1s); units ns us ms s m h, none = s\n"
    "  -o, --output FILE        recording to create (default ./jobscope-HOST-YYYYMMDDTHHMMSS.mmm.db, UTC)\n"
    "      --force              replace output files that exist (never through a symbolic link)\n"
    "      --summary-json FILE  also write the summary as JSON to FILE\n"
    "      --summary FILE       write the text summary to FILE instead of stderr\n"
    "      --summary short|full the text summary's form: short (default, about 12 lines: the figures to "
    "read\n"
    "                           at a glance) or full (every figure; ./full names a file called full)\n"
    "      --report[=FILE]      write the HTML report at the end (default: the recording with .html)\n"
    "  -q, --quiet              no status line, no summary on stderr\n"
    "      --uss-every T|N      read USS/PSS (smaps_rollup) at least every T (30s, 5m) or N samples; 0 =\n"
    "                           never (default 30s)\n"
    "      --status-every N     read /proc/PID/status every N samples (default 5)\n"
    "      --backend B          how processes are read: auto (the BPF task reader where it pays and is\n"
    "                           allowed: root, BTF, Linux >= 6.7), bpf, or procfs (default auto)\n"
    "      --perf-per-task      --user: perf counters on every task of the user's processes, a row per task\n"
    "                           (default: the user's cgroup per CPU where it exists)\n"
    "      --redact-cmdline REGEX  record command lines with every match of REGEX (POSIX extended) in an\n"
    "                           argument replaced by *** (e.g. 'password=[^ ]*'; the environment is never\n"
    "                           recorded)\n"
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
    "      --duration DURATION  stop after DURATION (units as for --interval)\n"
    "  -i, --interval DURATION  time between samples, 10ms..1h (default 1s); units ns us ms s m h, none = s\n"
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
    "  -q, --quiet              nothing on stderr but errors\n"
    "      --uss-every T|N      read USS/PSS (smaps_rollup) at least every T (30s, 5m) or N samples; 0 =\n"
    "                           never (default 30s)\n"
    "      --status-every N     read /proc/PID/status every N samples (default 5)\n"
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
        case 'd':
            o->ja.dir = optarg;
            break;
        case OPT_JOB:
            o->ja.job = optarg;
            break;
        case OPT_STEP:
            o->ja.step = optarg;
            break;
        case OPT_JOB_NODE:
            o->ja.node = optarg;
            break;
        case OPT_STEPD_PID: {
            char *end;
            errno = 0;
            long pid = strtol(optarg, &end, 10);
            if (*end || errno || pid <= 0 || pid > INT32_MAX)
                return cli_usage_error(cmd, "invalid --stepd-pid '%s'", optarg);
            o->ja.stepd_pid = pid;
            break;
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
            break;
        case OPT_NO_MERGE:
            o->ja.no_merge = true;
            break;
        case OPT_NODE_LOCAL:
            o->ja.node_local = true;
            break;
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
        case OPT_CGROUP:
            if (o->kind == CMD_WATCH) { /* watch: the cgroup to watch */
                o->scope = JS_SCOPE_CGROUP;
                o->cgroup_path = optarg;
                nscope++;
                break;
            }
            if (o->attach)
                return cli_usage_error(cmd, "--cgroup is for run and watch");
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "off") != 0)
                return cli_usage_error(cmd, "invalid --cgroup '%s' (auto or off)", optarg);
            o->cgroup_off = strcmp(optarg, "off") == 0;
            break;
        case OPT_USER:
        case OPT_NODE:
            if (o->kind != CMD_WATCH)
                return cli_usage_error(cmd, "--%s is for watch", c == OPT_USER ? "user" : "node");
            o->scope = c == OPT_USER ? JS_SCOPE_USER : JS_SCOPE_NODE;
            o->user = c == OPT_USER ? optarg : NULL;
            nscope++;
            break;
        case OPT_TOP:
            if (o->kind != CMD_WATCH)
                return cli_usage_error(cmd, "--top is for watch --node");
            if (parse_count(optarg, &o->top_n) < 0)
                return cli_usage_error(cmd, "invalid --top '%s' (a whole number)", optarg);
            break;
        case OPT_DURATION: {
            if (o->kind == CMD_RUN)
                return cli_usage_error(cmd, "--duration is for attach and watch (run ends with COMMAND)");
            int r = duration_parse(optarg, &o->duration_ns);
            if (r < 0 || o->duration_ns <= 0)
                return cli_usage_error(cmd, "invalid duration '%s' (examples: 30s, 10m, 2h)", optarg);
            break;
        }
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
        case OPT_UNTIL_FILE:
            if (o->kind == CMD_RUN)
                return cli_usage_error(cmd, "--until-file is for attach and watch (run ends with COMMAND)");
            if (!*optarg)
                return cli_usage_error(cmd, "--until-file needs a file name");
            o->until_file = optarg;
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
            int e = cli_export_option(&o->exp, c, optarg, cmd);
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

int cmd_run(int argc, char **argv)
{
    return cmd_run_hooks(argc, argv, NULL);
}

int cmd_run_hooks(int argc, char **argv, const job_hooks_t *hooks)
{
    run_opts_t o = {.kind = !strcmp(argv[0], "attach")                             ? CMD_ATTACH
                            : !strcmp(argv[0], "watch") || !strcmp(argv[0], "job") ? CMD_WATCH
                                                                                   : CMD_RUN};
    o.attach = o.kind != CMD_RUN;
    o.job = !strcmp(argv[0], "job");
    o.ja.hooks = o.job ? hooks : NULL;
    int r = parse_args(argc, argv, &o);
    if (r) {
        if (o.redact_set)
            regfree(&o.redact);
        return r < 0 ? 0 : r;
    }

    js_monitor_t mon = {0};
    js_marks_t *marks = NULL;
    js_model_t *model = NULL;
    js_buf_t cmd = {0}, shell = {0};
    outputs_t out = {0};
    int status = EXIT_FAIL;
    int job_state = 0; /* job: 1 once the recording exists, 2 once monitoring ended normally */
    char outbuf[512];
    const char *exec_error = NULL;
    js_cgroup_t *cg = NULL;
    bool cg_warned = false;

    /* from here on a SIGINT or SIGTERM is handled by the loop (or forwarded), never fatal half-way through
     * creating the recording */
    if ((r = monitor_block_signals()) < 0) {
        cli_error("cannot block signals: %s", strerror(-r));
        return EXIT_FAIL;
    }
    mon.ctx.root.proc = mon.ctx.root.sys = -1;
    mon.ctx.redact_cmdline = o.redact_set ? &o.redact : NULL;
    if ((r = fsroot_open(&mon.ctx.root, o.procfs, o.sysfs)) < 0) {
        cli_error("cannot open procfs %s: %s", o.procfs ? o.procfs : "", strerror(-r));
        return EXIT_FAIL;
    }
    long pid_there = 0; /* a node is the node in any namespace; every other scope names PIDs of this one */
    if (!(o.kind == CMD_WATCH && !o.job && o.scope == JS_SCOPE_NODE) &&
        fsroot_pidns_check(&mon.ctx.root, &pid_there) < 0) {
        cli_error(
            "%s is another PID namespace's /proc (this process is PID %d here, %ld there): its processes "
            "are not this job's; mount a procfs for this namespace (unshare --pid --fork --mount-proc) "
            "or run jobscope outside it",
            o.procfs ? o.procfs : "procfs", (int)getpid(), pid_there);
        fsroot_close(&mon.ctx.root);
        return EXIT_FAIL;
    }
    char scope_desc[1600] = "process tree";
    static job_plan_t plan; /* the scope's strings point into it */
    if (o.job) {
        if ((status = job_resolve(&o.ja, &mon.ctx, &cg, &plan, scope_desc, sizeof(scope_desc))) != 0) {
            cgroupfs_free(cg);
            fsroot_close(&mon.ctx.root);
            return status;
        }
        status = EXIT_FAIL;
        o.scope = mon.ctx.scope.kind;
        o.output = plan.write_path;
        static char job_report[4096]; /* --report: beside the node's recording in DIR, even when it is written
                                       * node-local first (an HTML file is safe on a network file system) */
        size_t flen = strlen(plan.final_path);
        if (o.report && !o.report_path && flen > 3 && !strcmp(plan.final_path + flen - 3, ".db") &&
            snprintf(job_report, sizeof(job_report), "%.*s.html", (int)(flen - 3), plan.final_path) <
                (int)sizeof(job_report))
            o.report_path = job_report;
        if (!o.gpus && plan.b.gpus[0])
            o.gpus = plan.b.gpus; /* SLURM_JOB_GPUS: the job's GPUs on this node */
        o.user_quiet = o.quiet;
        o.quiet = true; /* one line at the end, not a summary per node in the job's output */
        if (plan.local && !o.user_quiet)
            fprintf(stderr, "jobscope: %s is on %s: recording to %s on %s, moved to %s at the end\n",
                    plan.dir, plan.fs_name, plan.write_path, plan.b.node, plan.final_path);
    } else if (o.kind == CMD_WATCH && resolve_watch(&o, &mon.ctx, &cg, scope_desc, sizeof(scope_desc)) != 0) {
        fsroot_close(&mon.ctx.root);
        return EXIT_FAIL;
    }
    if (o.kind == CMD_ATTACH) {
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
    static const char *const scope_label[] = {[JS_SCOPE_TREE] = "tree",
                                              [JS_SCOPE_USER] = "user",
                                              [JS_SCOPE_CGROUP] = "cgroup",
                                              [JS_SCOPE_NODE] = "node"};
    const char *label = scope_label[o.kind == CMD_WATCH ? o.scope : JS_SCOPE_TREE];
    o.exp.endpoint_optional = true; /* a taken port is said, and the command runs (listen_error below) */
    if ((status = cli_export_open(&o.exp, hi.host, label, true)) != 0) /* the port is taken before anything */
        goto out;
    status = EXIT_FAIL;
    if (open_outputs(&o, hi.host, outbuf, sizeof(outbuf), &out) < 0)
        goto out;
    const char *recording = o.output ? o.output : outbuf;
    js_recorder_t *rec = out.rec;
    job_state = 1;
    if (o.kind == CMD_WATCH) {
        /* the command is jobscope's own: what was asked to be watched */
        char **wargv = calloc((size_t)argc + 2, sizeof(*wargv));
        if (!wargv) {
            cli_error("out of memory");
            goto out;
        }
        wargv[0] = "jobscope";
        memcpy(wargv + 1, argv, (size_t)argc * sizeof(*argv));
        command_lines(mon.ctx.redact_cmdline, wargv, argc + 1, &cmd, &shell);
        free(wargv);
    } else if (o.attach) {
        /* the attached process's own command line, as the kernel has it */
        char path[32], *av[256];
        js_buf_t raw = {0};
        snprintf(path, sizeof(path), "%d/cmdline", (int)o.pid);
        js_buf_t red = {0};
        bool got = fs_read(mon.ctx.root.proc, path, &raw) == 0 && raw.len > 0;
        if (got && mon.ctx.redact_cmdline) {
            got = proc_cmdline_redact(mon.ctx.redact_cmdline, raw.p, raw.len, &red) == 0;
            js_buf_t t = raw;
            raw = red;
            red = t;
        }
        if (!got || proc_cmdline_json(raw.p, raw.len, &cmd) < 0) {
            cmd.len = 0;
            command_lines(mon.ctx.redact_cmdline, &argv[argc - 1], 1, &cmd, &shell);
        } else {
            shell_quote(&shell, av, (size_t)cmdline_argv(&raw, av, 256));
        }
        buf_free(&raw);
        buf_free(&red);
    } else {
        command_lines(mon.ctx.redact_cmdline, o.argv, o.argc, &cmd, &shell);
    }
    if (o.kind == CMD_RUN && !o.cgroup_off) {
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
    mon.ctx.mode = o.kind == CMD_RUN ? JS_MODE_RUN : o.kind == CMD_ATTACH ? JS_MODE_ATTACH : JS_MODE_WATCH;
    mon.ctx.scope.kind = o.kind == CMD_WATCH ? o.scope : JS_SCOPE_TREE;
    if (o.job && mon.ctx.scope.kind == JS_SCOPE_TREE)
        mon.ctx.root_pid = 0; /* the roots are slurmstepd processes (ctx.scope) */
    mon.duration_ns = o.duration_ns;
    mon.until_file = o.until_file;
    mon.ctx.backend = o.backend;
    mon.ctx.perf_per_task = o.perf_per_task;
    mon.ctx.monitor_pid = getpid();
    mon.ctx.root_pid = o.pid;
    mon.ctx.uss_every = o.uss_every;
    mon.ctx.uss_interval_ns = o.uss_interval_ns;
    mon.ctx.status_every = o.status_every;
    mon.ctx.scope.gpus = o.gpus;
    mon.interval_ns = o.interval_ns;
    mon.until_main_exits = o.until_main_exits;

    /* everything known before the command starts is recorded before it starts */
    recorder_meta(rec, "jobscope_version", JOBSCOPE_VERSION);
    static const char *const kind_names[] = {[JS_SCOPE_TREE] = "tree",
                                             [JS_SCOPE_USER] = "user",
                                             [JS_SCOPE_CGROUP] = "cgroup",
                                             [JS_SCOPE_NODE] = "node"};
    recorder_meta(rec, "mode",
                  o.job                  ? "job"
                  : o.kind == CMD_RUN    ? "run"
                  : o.kind == CMD_ATTACH ? "attach"
                                         : "watch");
    recorder_meta(rec, "scope", scope_desc);
    recorder_meta(rec, "scope_kind", kind_names[mon.ctx.scope.kind]);
    if (mon.ctx.scope.kind == JS_SCOPE_USER)
        meta_i64(rec, "scope_uid", mon.ctx.scope.uid);
    if (cg && o.kind == CMD_WATCH) {
        char path[512];
        recorder_meta(rec, "cgroup_path", cgroupfs_main_path(cg, path, sizeof(path)));
        recorder_meta(rec, "cgroup_version", cgroupfs_version_name(cg));
    }
    if (o.duration_ns)
        meta_i64(rec, "duration_ns", o.duration_ns);
    if (o.until_file)
        recorder_meta(rec, "until_file", o.until_file);
    recorder_meta(rec, "command", cmd.p);
    recorder_meta(rec, "command_shell", shell.p);
    recorder_meta(rec, "host", hi.host);
    recorder_meta(rec, "kernel", hi.kernel);
    recorder_meta(rec, "cpu_model", hi.cpu_model);
    meta_i64(rec, "cpus_online", hi.cpus_online);
    meta_i64(rec, "mem_total_bytes", hi.mem_total_bytes);
    meta_i64(rec, "clk_tck", hi.clk_tck);
    meta_i64(rec, "page_size", hi.page_size);
    meta_i64(rec, "interval_ns", o.interval_ns);
    meta_i64(rec, "uss_every", o.uss_every);
    meta_i64(rec, "uss_interval_ns", o.uss_interval_ns);
    meta_i64(rec, "status_every", o.status_every);
    meta_i64(rec, "monitor_pid", mon.ctx.monitor_pid);
    meta_i64(rec, "monitor_start_ticks", start_ticks_of(&mon.ctx.root, mon.ctx.monitor_pid));

    /* kept descriptors per process: raise the monitor's soft limit; the command gets its own limit back */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        mon.child_nofile = rl;
        mon.restore_nofile = true;
        rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    js_status_t sl = {.on = o.attach ? !o.quiet && isatty(STDERR_FILENO) : o.status && isatty(STDERR_FILENO),
                      .title = !o.attach};
    if ((r = monitor_prepare(&mon)) < 0 || (r = monitor_add_sink(&mon, &sink_recording, rec)) < 0 ||
        (r = monitor_add_sink(&mon, &sink_status, &sl)) < 0) {
        cli_error("cannot start monitoring: %s", strerror(-r));
        goto out;
    }
    if (cli_export_add(&o.exp, &mon))
        goto out;
    if (o.job && ((o.ja.hooks && o.ja.hooks->sink &&
                   (r = monitor_add_sink(&mon, o.ja.hooks->sink, o.ja.hooks->sink_state)) < 0) ||
                  (r = job_end_arm(&o.ja, &plan, &mon.ctx.root, &mon)) < 0)) {
        cli_error("cannot start monitoring: %s", strerror(-r));
        goto out;
    }
    bool gpu_on = false;
    for (size_t i = 0; i < mon.sampler.nsources; i++) {    /* a disabled source is a fact of the run */
        const char *why = gpu_reason(js_sources[i]->name); /* a GPU source says why in words */
        if (mon.sampler.init_rc[i] < 0) {
            char key[96];
            snprintf(key, sizeof(key), "source_error.%s", js_sources[i]->name);
            recorder_meta(rec, key, why ? why : strerror(-mon.sampler.init_rc[i]));
        } else if (!strcmp(js_sources[i]->name, "nvml") || !strcmp(js_sources[i]->name, "rocm")) {
            gpu_on = true;
        }
    }
    if (o.gpus)
        recorder_meta(rec, "gpus", o.gpus);
    if (o.exp.listen_error[0]) /* --listen failed: the run has no endpoint, and its recording says why */
        recorder_meta(rec, "listen_error", o.exp.listen_error);
    if (o.gpus && !gpu_on && !o.gpus_none) /* asked for GPUs, got none: say it once */
        cli_error("--gpus %s: no GPU monitored (nvml: %s; rocm: %s)", o.gpus,
                  gpu_reason("nvml") ? gpu_reason("nvml") : "not built",
                  gpu_reason("rocm") ? gpu_reason("rocm") : "not built");
    if (!o.attach) {
        /* the job's marks (jobscope mark, libjobscope, the Python module) reach the monitor through this */
        if ((r = marks_open(&marks)) == 0 && setenv("JOBSCOPE_SOCKET", marks_address(marks), 1) == 0) {
            mon.marks = marks;
            recorder_meta(rec, "marks_socket", marks_address(marks));
        } else {
            cli_error("cannot open the mark socket (%s): marks from the command are ignored",
                      strerror(r < 0 ? -r : errno));
        }
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
            cli_error("cannot become a child subreaper (%s): orphans will escape the tree", strerror(errno));
        signal(SIGPIPE, SIG_IGN);
        if ((r = monitor_spawn(&mon, o.argv)) < 0) {
            cli_error("cannot start %s: %s", o.argv[0], strerror(-r));
            goto out;
        }
        if (mon.exec_errno) {
            /* the child has exited 127 or 126; reap it and report like a shell, with a summary saying why */
            int st;
            waitpid(mon.child, &st, 0);
            cli_error("%s: %s", o.argv[0], strerror(mon.exec_errno));
            status = exit_code_of(st);
            exec_error = strerror(mon.exec_errno);
            meta_i64(rec, "exit_status", status);
            recorder_meta(rec, "exec_error", exec_error);
        }
    } else {
        mon.start_mono_ns = now_ns(CLOCK_MONOTONIC);
        mon.start_unix_ns = now_ns(CLOCK_REALTIME);
    }
    if (!o.attach)
        hostinfo_read(&mon.ctx.root, mon.child, &hi); /* the command's affinity mask */
    /* the allocation: the smallest of the affinity mask, the cgroup's cpuset and quota, SLURM's word */
    js_allocation_t al;
    js_buf_t envbuf = {0};
    char **envp = o.kind == CMD_ATTACH         ? cli_environ_of(&mon.ctx.root, o.pid, &envbuf)
                  : o.kind == CMD_RUN || o.job ? environ /* job: the job's own environment */
                                               : NULL;   /* watch: no process speaks for the scope */
    /* job: not the monitor's affinity (its own step may have one core), the job's cgroup and SLURM's word */
    allocation_resolve(&mon.ctx.root, o.kind == CMD_RUN ? mon.child : o.job ? 0 : o.pid, cg, envp, &al);
    if (o.kind == CMD_ATTACH)
        free(envp);
    buf_free(&envbuf);
    double cores = !isnan(al.cores) ? al.cores : (double)hi.cores_available;
    const char *cores_bound = !isnan(al.cores) ? allocation_bound_name(al.cores_bound) : "affinity";
    meta_f64(rec, "cores_available", cores);
    recorder_meta(rec, "cores_bound", cores_bound);
    if (o.job)
        job_meta(&plan, rec, al.cores, allocation_bound_name(al.cores_bound), al.mem_limit_bytes,
                 allocation_bound_name(al.mem_bound));
    meta_i64(rec, "root_pid", mon.ctx.root_pid);
    meta_i64(rec, "start_mono_ns", mon.start_mono_ns);
    meta_i64(rec, "start_unix_ns", mon.start_unix_ns);
    for (size_t i = 0; i < mon.sampler.nsources; i++)
        if (mon.sampler.prep_rc[i] < 0) {
            char key[96];
            snprintf(key, sizeof(key), "prepare_error.%s", js_sources[i]->name);
            recorder_meta(rec, key, strerror(-mon.sampler.prep_rc[i]));
        }

    js_model_cfg_t cfg = {
        .mode = mon.ctx.mode,
        .clk_tck = hi.clk_tck,
        .monitor_pid = mon.ctx.monitor_pid,
        .root_pid = mon.ctx.root_pid,
        .interval_ns = o.interval_ns,
        .start_mono_ns = mon.start_mono_ns,
        .cores_available = cores,
        .cores_bound = cores_bound,
        .scope = mon.ctx.scope.kind,
        /* as a reader configures it from the meta (job_roots), so the totals stored in the recording are a
         * reader's */
        .stepd_roots =
            mon.ctx.scope.kind == JS_SCOPE_TREE && (mon.ctx.scope.stepd_job || mon.ctx.scope.stepd_pid > 0),
    };
    model = model_new(&cfg);
    if (!model) {
        cli_error("out of memory");
        goto wait_child;
    }
    mon.model = model;
    sl.start_mono_ns = mon.start_mono_ns;

    if (!exec_error) {
        r = monitor_loop(&mon);
        if (r == 0)
            job_state = 2;
        monitor_finish(&mon);
        cgroup_remove(cg, &cg_warned, false); /* after its last read (the closing sample) */
        if (r < 0)
            cli_error("monitoring failed: %s", strerror(-r));
    }
wait_child:
    if (!o.attach && !exec_error && !mon.child_reaped && mon.child > 0) {
        /* monitoring stopped early (an error): keep the job's status */
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
    char stop_why[64] = "";
    if (mon.stop_reason) { /* before the stop time, which closes the recording's metadata */
        snprintf(stop_why, sizeof(stop_why), "%s%s%s", mon.stop_reason, mon.stop_signal ? " " : "",
                 mon.stop_signal ? signal_name(mon.stop_signal) : "");
        recorder_meta(rec, "stop_reason", stop_why);
    }
    meta_i64(rec, "stop_mono_ns", mon.stop_mono_ns ? mon.stop_mono_ns : now_ns(CLOCK_MONOTONIC));
    meta_i64(rec, "stop_unix_ns", mon.stop_unix_ns ? mon.stop_unix_ns : now_ns(CLOCK_REALTIME));
    meta_i64(rec, "samples_taken", mon.taken);
    meta_i64(rec, "samples_missed", mon.missed);
    if (mon.write_rc)
        cli_error("%s: %lld samples could not be recorded (%s); the summary below still covers them",
                  recording, (long long)mon.ctx.write_errors, strerror(-mon.write_rc));
    if (model) {
        js_summary_t su;
        model_summary(model, &su);
        su.write_errors = (int64_t)mon.ctx.write_errors; /* the last sample's own failure included */
        js_run_info_t info = {
            .version = JOBSCOPE_VERSION,
            .command_json = cmd.p,
            .command_shell = shell.p,
            .host = hi.host,
            .mode = o.job                  ? "job"
                    : o.kind == CMD_RUN    ? "run"
                    : o.kind == CMD_ATTACH ? "attach"
                                           : "watch",
            .scope = scope_desc,
            .state = "complete",
            .exec_error = exec_error,
            .stop_reason = stop_why[0] ? stop_why : NULL,
            .have_exit = !o.attach && (mon.child_reaped || exec_error),
            .exit_status = status,
            .recording = recording,
        };
        meta_f64(rec, "monitor_cpu_s", su.mon_cpu_s);
        meta_f64(rec, "monitor_max_rss_bytes", su.mon_max_rss);
        meta_f64(rec, "monitor_mean_sample_cost_s", su.mon_mean_cost_s);
        if (write_summaries(&o, &out, &info, &su, model) && o.attach)
            status = EXIT_FAIL;
    }
    if (out.report) {
        /* from the closed recording, as `jobscope report` would */
        recorder_close(out.rec);
        out.rec = NULL;
        out.report = false;
        if (cli_output_end(&out.report_f, cli_report_fd(recording, out.report_f.fd, out.report_path)) == 0) {
            if (!o.quiet)
                fprintf(stderr, "jobscope: report %s\n", out.report_path);
        } else if (o.attach) {
            status = EXIT_FAIL;
        }
    }
out:
    monitor_finish(&mon);
    cgroup_remove(cg, &cg_warned, true); /* the retry at exit (or the only removal after an early failure) */
    cgroupfs_free(cg);
    cli_export_close(&o.exp);
    marks_close(marks);
    recorder_close(out.rec);
    close_outputs(&out); /* an early failure: nothing is published */
    model_free(model);
    fsroot_close(&mon.ctx.root);
    buf_free(&cmd);
    buf_free(&shell);
    if (o.job)
        job_end_free(&plan);
    if (o.job && job_state > 0) { /* after the recording is closed: move, mark, merge */
        int jr = job_finish(&o.ja, &plan, job_state == 2 && status == 0, o.user_quiet);
        if (jr && status == 0)
            status = jr;
    }
    if (o.redact_set)
        regfree(&o.redact);
    return status;
}
