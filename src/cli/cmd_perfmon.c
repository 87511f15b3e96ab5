/* SPDX-License-Identifier: MIT
 *
 * `jobscope perfmon`: SKA SDP perfmon's command line on jobscope's job monitor (see perfmon.h and
 * docs/PERFMON.md). A perfmon batch script runs unchanged with `perfmon` replaced by `jobscope perfmon`:
 *
 *   - the options and defaults are perfmon's (argparse's forms too: --long=value, unique prefixes of long
 *     options, -i5, -rv, optional values);
 *   - the folder is $SAVE_DIR/$PREFIX (default: the current folder), made if missing; like perfmon, the
 *     command is silent: its messages go to ska_sdp_monitoring_metrics.log there (per host with -v);
 *   - on each node it is `jobscope job -d FOLDER -i SAMPLING_FREQ`: the job's cgroup or its steps' tasks on
 *     the node, until the job's work is over (the batch script only waits: core/jobend.h), or `.ipc-JOBID`
 *     in the current folder (or FOLDER) says FINISHED, or SIGTERM;
 *   - every CHECK_POINT seconds (and at the first and last sample) the node writes its own perfmon files,
 *     metrics/partial/{cpu_metrics,perf_metrics,meta_data}_JOBID_HOST.json, so a job killed at its time
 *     limit still leaves perfmon-format data (the recording itself is durable at every sample);
 *   - the last node to finish merges the job (JOBID.db) and post-processes, as perfmon's:
 * metrics/(cpu_metrics,perf_metrics,meta_data).json for every host, the exports asked for, and with -r
 * plots/NAME.png, job-report-JOBID.pdf and the merged job's HTML report JOBID.html.
 */
#include "api/replay.h"
#include "cli/cli.h"
#include "cli/cli_jobsum.h"
#include "cli/cli_job.h"
#include "cli/perfmon.h"

#include "core/duration.h"
#include "core/json.h"
#include "report/raster.h"
#include "sinks/hdf5.h"
#include "sinks/merge.h"
#include "sys/fsfile.h"
#include "core/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: jobscope perfmon [-h] [-d [SAVE_DIR]] [-p [PREFIX]] [-l [LAUNCHER]] [-i SAMPLING_FREQ]\n"
    "                        [-c [CHECK_POINT]] [-r] [-e {csv,hdf5,parquet,pickle,feather,orc} "
    "[{csv,hdf5,parquet,pickle,feather,orc} ...]]\n"
    "                        [--system [SYSTEM]] [--partition [PARTITION]] [--env [ENV]] [--name [NAME]] "
    "[-v]\n"
    "\n"
    "SKA SDP perfmon's command line on jobscope's job monitor: start one per node in the background before\n"
    "the job's main step, e.g. in a SLURM batch script:\n"
    "    srun -n $SLURM_JOB_NUM_NODES --ntasks-per-node 1 jobscope perfmon -i 5 -r -e csv &\n"
    "    mpirun -np $SLURM_JOB_NUM_NODES ./app\n"
    "    wait\n"
    "Each node monitors the job's work on it (the job's cgroup, or the tasks of its steps; PBS and OAR: the\n"
    "processes of the job) until the work is over (the batch script only waits for the monitors), "
    ".ipc-JOBID\n"
    "says FINISHED (echo FINISHED > .ipc-$SLURM_JOB_ID), or the job ends. The last node to finish writes\n"
    "perfmon's files in SAVE_DIR/PREFIX: metrics/cpu_metrics.json, perf_metrics.json, meta_data.json, the\n"
    "exports, and with -r plots/NAME.png and job-report-JOBID.pdf; beside them jobscope's recordings\n"
    "(JOBID-NODE.db, the merged JOBID.db) and, with -r, the HTML report JOBID.html. Messages go to\n"
    "ska_sdp_monitoring_metrics.log in that folder (perfmon's silent mode).\n"
    "\n"
    "optional arguments:\n"
    "  -h, --help            show this help message and exit\n"
    "  -d [SAVE_DIR], --save_dir [SAVE_DIR]\n"
    "                        Base directory where metrics will be saved. This directory should\n"
    "                        be available from all compute nodes. Default is $PWD\n"
    "  -p [PREFIX], --prefix [PREFIX]\n"
    "                        Name of the directory to be created to save metric data. If provided,\n"
    "                        metrics will be located at $SAVE_DIR/$PREFIX.\n"
    "  -l [LAUNCHER], --launcher [LAUNCHER]\n"
    "                        Launcher used to launch mpi tasks (recorded; jobscope finds the job's work\n"
    "                        from the scheduler, whatever the launcher)\n"
    "  -i SAMPLING_FREQ, --sampling_freq SAMPLING_FREQ\n"
    "                        Sampling interval to collect metrics. Default value is 30 seconds\n"
    "                        (jobscope: any interval from 10ms to 1h: 0.5, 500ms, 2m)\n"
    "  -c [CHECK_POINT], --check_point [CHECK_POINT]\n"
    "                        Checking point time interval. Default value is 900 seconds\n"
    "  -r, --gen_report      Generate plots and job report\n"
    "  -e {csv,hdf5,parquet,pickle,feather,orc} [{csv,hdf5,parquet,pickle,feather,orc} ...], --export ...\n"
    "                        Export results to different file formats (csv and hdf5 by jobscope; pickle,\n"
    "                        parquet, feather and orc through pandas and jobscope's Python package, where\n"
    "                        their engines are installed)\n"
    "  --system [SYSTEM]     Name of the system (only when used with SDP Benchmark tests)\n"
    "  --partition [PARTITION]\n"
    "                        Name of the partition (only when used with SDP Benchmark tests)\n"
    "  --env [ENV]           Name of the environment (only when used with SDP Benchmark tests)\n"
    "  --name [NAME]         Name of the test (only when used with SDP Benchmark tests)\n"
    "  -v, --verbose         Enable verbose mode. Display debug messages\n";

enum { X_CSV = 1, X_HDF5 = 2, X_PARQUET = 4, X_PICKLE = 8, X_FEATHER = 16, X_ORC = 32 };
static const struct {
    const char *name;
    int bit;
    const char *ext;
} exports[] = {{"csv", X_CSV, "csv"},
               {"hdf5", X_HDF5, "h5"},
               {"parquet", X_PARQUET, "parquet"},
               {"pickle", X_PICKLE, "pkl"},
               {"feather", X_FEATHER, "feather"},
               {"orc", X_ORC, "orc"}};
#define NEXPORTS (sizeof(exports) / sizeof(exports[0]))

typedef struct {
    const char *save_dir, *prefix, *launcher, *system, *partition, *env, *name;
    int64_t interval_ns;
    double check_point_s;
    bool report, verbose;
    int exports; /* X_* bits, in the order given: */
    int export_order[NEXPORTS];
    size_t nexport;
} pm_opts_t;

/* ---- perfmon's command line (argparse's rules) ---- */

enum {
    O_HELP,
    O_DIR,
    O_PREFIX,
    O_LAUNCHER,
    O_FREQ,
    O_CHECK,
    O_REPORT,
    O_EXPORT,
    O_SYSTEM,
    O_PARTITION,
    O_ENV,
    O_NAME,
    O_VERBOSE,
    O__MAX
};
static const struct {
    char s;
    const char *l;
    int nargs; /* 0 flag, 1 one value, '?' optional value, '+' one or more */
} opts[O__MAX] = {
    [O_HELP] = {'h', "help", 0},
    [O_DIR] = {'d', "save_dir", '?'},
    [O_PREFIX] = {'p', "prefix", '?'},
    [O_LAUNCHER] = {'l', "launcher", '?'},
    [O_FREQ] = {'i', "sampling_freq", 1},
    [O_CHECK] = {'c', "check_point", '?'},
    [O_REPORT] = {'r', "gen_report", 0},
    [O_EXPORT] = {'e', "export", '+'},
    [O_SYSTEM] = {0, "system", '?'},
    [O_PARTITION] = {0, "partition", '?'},
    [O_ENV] = {0, "env", '?'},
    [O_NAME] = {0, "name", '?'},
    [O_VERBOSE] = {'v', "verbose", 0},
};

/* a value argument: anything but an option ("-x", "--x"); a negative number is a value (argparse) */
static bool is_value(const char *a)
{
    if (a[0] != '-' || !a[1])
        return true;
    char *end;
    strtod(a, &end);
    return *end == '\0';
}

static int set_value(pm_opts_t *o, int k, const char *v)
{
    const char *name = opts[k].l;
    switch (k) {
    case O_DIR:
        o->save_dir = v;
        break;
    case O_PREFIX:
        o->prefix = v;
        break;
    case O_LAUNCHER:
        o->launcher = v;
        break;
    case O_SYSTEM:
        o->system = v;
        break;
    case O_PARTITION:
        o->partition = v;
        break;
    case O_ENV:
        o->env = v;
        break;
    case O_NAME:
        o->name = v;
        break;
    case O_FREQ: {
        int r = v ? interval_parse(v, &o->interval_ns) : -EINVAL;
        if (r == -ERANGE)
            return cli_usage_error("perfmon ", "argument -i/--sampling_freq: '%s' out of range (10ms..1h)",
                                   v);
        if (r < 0)
            return cli_usage_error("perfmon ",
                                   "argument -i/--sampling_freq: invalid value '%s' (seconds: 30, 0.5, "
                                   "500ms, 2m)",
                                   v ? v : "");
        break;
    }
    case O_CHECK: {
        if (!v)
            break; /* -c alone: the default */
        int64_t ns;
        if (duration_parse(v, &ns) < 0 || ns <= 0)
            return cli_usage_error("perfmon ", "argument -c/--check_point: invalid value '%s' (seconds)", v);
        o->check_point_s = (double)ns / 1e9;
        break;
    }
    default:
        (void)name;
        break;
    }
    return 0;
}

static int add_export(pm_opts_t *o, const char *v)
{
    for (size_t i = 0; i < NEXPORTS; i++)
        if (!strcmp(v, exports[i].name)) {
            if (!(o->exports & exports[i].bit))
                o->export_order[o->nexport++] = exports[i].bit;
            o->exports |= exports[i].bit;
            return 0;
        }
    return cli_usage_error("perfmon ",
                           "argument -e/--export: invalid choice: '%s' (choose from 'csv', 'hdf5', "
                           "'parquet', 'pickle', 'feather', 'orc')",
                           v);
}

/* take: option k with the arguments that follow at argv[*i + 1 ...] (`inl`: a value given in the same
 * argument, "-i5" or "--sampling_freq=5"). */
static int take(pm_opts_t *o, int k, const char *inl, int argc, char **argv, int *i)
{
    const char *shown = argv[*i];
    if (k == O_HELP) {
        fputs(usage, stdout);
        return -1;
    }
    if (opts[k].nargs == 0) {
        if (inl)
            return cli_usage_error("perfmon ", "argument %s: ignored explicit argument '%s'", shown, inl);
        if (k == O_REPORT)
            o->report = true;
        else
            o->verbose = true;
        return 0;
    }
    if (opts[k].nargs == '+') {
        int n = 0;
        if (inl) {
            int r = add_export(o, inl);
            if (r)
                return r;
            n++;
        }
        while (*i + 1 < argc && is_value(argv[*i + 1]) && argv[*i + 1][0] != '-') {
            int r = add_export(o, argv[++*i]);
            if (r)
                return r;
            n++;
        }
        if (!n)
            return cli_usage_error("perfmon ", "argument -e/--export: expected at least one argument");
        return 0;
    }
    const char *v = inl;
    if (!v && *i + 1 < argc && is_value(argv[*i + 1]))
        v = argv[++*i];
    if (!v && opts[k].nargs == 1)
        return cli_usage_error("perfmon ", "argument -i/--sampling_freq: expected one argument");
    return set_value(o, k, v);
}

static int parse(int argc, char **argv, pm_opts_t *o)
{
    o->interval_ns = 30000000000LL;
    o->check_point_s = 900;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            if (i + 1 < argc)
                return cli_usage_error("perfmon ", "unrecognized arguments: %s", argv[i + 1]);
            break;
        }
        if (a[0] == '-' && a[1] == '-') { /* --long, --long=value, a unique prefix of a long option */
            const char *eq = strchr(a, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            int found = -1, hits = 0;
            for (int k = 0; k < O__MAX; k++)
                if (strlen(opts[k].l) >= len && !strncmp(opts[k].l, a + 2, len)) {
                    if (strlen(opts[k].l) == len) { /* exact */
                        found = k;
                        hits = 1;
                        break;
                    }
                    found = k;
                    hits++;
                }
            if (hits != 1 || len == 0)
                return cli_usage_error("perfmon ",
                                       hits > 1 ? "ambiguous option: %s" : "unrecognized arguments: %s", a);
            int r = take(o, found, eq ? eq + 1 : NULL, argc, argv, &i);
            if (r)
                return r;
            continue;
        }
        if (a[0] != '-' || !a[1])
            return cli_usage_error("perfmon ", "unrecognized arguments: %s", a);
        for (const char *c = a + 1; *c; c++) { /* -r, -rv, -i5, -d DIR */
            int k = -1;
            for (int j = 0; j < O__MAX && k < 0; j++)
                if (opts[j].s && opts[j].s == *c)
                    k = j;
            if (k < 0)
                return cli_usage_error("perfmon ", "unrecognized arguments: %s", a);
            if (opts[k].nargs != 0) {
                int r = take(o, k, c[1] ? c + 1 : NULL, argc, argv, &i);
                if (r)
                    return r;
                break;
            }
            int r = take(o, k, NULL, argc, argv, &i);
            if (r)
                return r;
        }
    }
    return 0;
}

/* ---- the folder, the log ---- */

/* normalize: an absolute path without "//", "/./" and "dir/.." (os.path.abspath's normpath, lexically). */
static void normalize(char *path)
{
    char *out = path, *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - seg);
        if (len == 0 || (len == 1 && seg[0] == '.'))
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > path && *--out != '/')
                ;
            continue;
        }
        *out++ = '/';
        memmove(out, seg, len);
        out += len;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
}

/* expand: perfmon's os.path.abspath(os.path.expanduser(os.path.expandvars(p))) into out. */
static int expand(const char *p, char *out, size_t cap)
{
    js_buf_t b = {0};
    int r = 0;
    if (p[0] == '~' && (p[1] == '/' || !p[1])) {
        const char *home = getenv("HOME");
        r |= buf_printf(&b, "%s", home ? home : "");
        p++;
    }
    while (*p && !r) {
        if (*p == '$' && (p[1] == '{' || isalpha((unsigned char)p[1]) || p[1] == '_')) {
            bool brace = p[1] == '{';
            const char *s = p + 1 + brace, *e = s;
            while (isalnum((unsigned char)*e) || *e == '_')
                e++;
            if (brace && *e != '}') { /* not a variable: kept as it is */
                r |= buf_append(&b, p, 1);
                p++;
                continue;
            }
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)(e - s), s);
            const char *v = getenv(name);
            if (v)
                r |= buf_printf(&b, "%s", v);
            else
                r |= buf_append(&b, p, (size_t)(e + brace - p)); /* unset: kept, as expandvars does */
            p = e + brace;
            continue;
        }
        r |= buf_append(&b, p, 1);
        p++;
    }
    if (r == 0 && b.p && b.p[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)))
            r = -errno;
        else if (snprintf(out, cap, "%s/%s", cwd, b.p) >= (int)cap)
            r = -ENAMETOOLONG;
    } else if (r == 0 && snprintf(out, cap, "%s", b.p ? b.p : "") >= (int)cap) {
        r = -ENAMETOOLONG;
    }
    buf_free(&b);
    if (r == 0)
        normalize(out);
    return r;
}

/* mkdirs: mkdir -p (every node may race to make it). */
static int mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    return stat(tmp, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static char host_name[256] = "node";
static int tty_fd = -1; /* the original stderr: the final word when something failed */

/* logf: one line of perfmon's log format on stderr (the log file once it is open). */
static void pmlog(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pmlog(const char *level, const char *fmt, ...)
{
    char ts[32], msg[2048];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s | %s | %s | jobscope.perfmon | %s\n", ts, level, host_name, msg);
    fflush(stderr);
}

/* ---- the run's state ---- */

typedef struct {
    pm_opts_t o;
    char dir[PATH_MAX];          /* SAVE_DIR/PREFIX */
    char ipc_cwd[PATH_MAX + 80]; /* .ipc-JOBID in the current folder */
    char ipc_dir[PATH_MAX + 80]; /* and in the folder */
    char job[64];
    char node[128];
    pm_host_t live; /* this node's series, for the check points */
    int64_t next_cp_ns;
    bool cp_failed;
    int rc; /* post-processing: 0, or EXIT_FAIL when an output failed */
} pm_run_t;

/* create_stream: a new file `path` (O_EXCL, never through a link, 0644) as a stdio stream, or NULL with errno
 * set. */
static FILE *create_stream(const char *path)
{
    int fd = fs_create(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0) {
        errno = -fd;
        return NULL;
    }
    FILE *fp = fdopen(fd, "w");
    if (!fp) {
        int e = errno;
        close(fd);
        unlink(path);
        errno = e;
    }
    return fp;
}

/* write_file: `len` bytes to path, through a temporary beside it renamed over it (readers never see half a
 * file; perfmon's own files are replaced, as perfmon does). Returns 0 or -errno. */
static int write_file(const char *path, const char *p, size_t len)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
    int fd = fs_create(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0)
        return fd;
    int r = cli_write_all(fd, p, len);
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && rename(tmp, path) < 0)
        r = -errno;
    if (r < 0)
        unlink(tmp);
    return r;
}

static const char *const file_names[3] = {"cpu_metrics", "perf_metrics", "meta_data"};

/* checkpoint: this node's perfmon files, metrics/partial/NAME_JOBID_HOST.json (one host object each). */
static void checkpoint(pm_run_t *run)
{
    char dir[PATH_MAX + 32], path[PATH_MAX + 512];
    snprintf(dir, sizeof(dir), "%s/metrics/partial", run->dir);
    if (mkdirs(dir) < 0) {
        if (!run->cp_failed)
            pmlog("ERROR", "check point: %s: %s", dir, strerror(errno));
        run->cp_failed = true;
        return;
    }
    for (int f = 0; f < 3; f++) {
        js_buf_t b = {0};
        int r = f == 2 ? pm_json_meta_host(&b, &run->live) : pm_json_host(&b, &run->live, (pm_file_t)f);
        snprintf(path, sizeof(path), "%s/%s_%s_%s.json", dir, file_names[f], run->job, run->live.host);
        if (r == 0)
            r = write_file(path, b.p, b.len);
        if (r < 0 && !run->cp_failed) {
            pmlog("ERROR", "check point: %s: %s", path, strerror(-r));
            run->cp_failed = true;
        }
        buf_free(&b);
    }
    pmlog("DEBUG", "check point: %zu samples of %s written to %s", run->live.nsamples, run->live.host, dir);
}

/* the live sink: this node's series, and the check points */
static int live_sample(void *state, const js_sink_sample_t *ev)
{
    pm_run_t *run = state;
    if (ev->model)
        pm_host_feed(&run->live, ev->model, ev->sample);
    int64_t now = now_ns(CLOCK_MONOTONIC);
    if (ev->final || now >= run->next_cp_ns) {
        checkpoint(run);
        run->next_cp_ns = now + (int64_t)(run->o.check_point_s * 1e9);
    }
    return 0;
}

static const js_live_sink_t live_sink = {.name = "perfmon", .sample = live_sample};

/* ---- post-processing (the node that merged the job) ---- */

typedef struct {
    pm_host_t *h;
} feed_t;

static int feed(void *arg, const js_recording_t *r, js_model_t *m, const js_sample_t *s)
{
    (void)r;
    return pm_host_feed(((feed_t *)arg)->h, m, s) < 0 ? -ENOMEM : 0;
}

/* python_export: pickle, parquet, feather, orc: pandas through jobscope's Python package (python -m
 * jobscope.perfmon convert), from the dataframes as CSV in a private folder. */
static int python_export(pm_run_t *run, pm_host_t *const *hosts, size_t n)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s/.perfmon-frames-XXXXXX", run->dir);
    if (!mkdtemp(tmp)) {
        pmlog("ERROR", "export: %s: %s", tmp, strerror(errno));
        return EXIT_FAIL;
    }
    int rc = 0;
    char paths[2][PATH_MAX + 64];
    for (int f = 0; f < 2 && !rc; f++) {
        snprintf(paths[f], sizeof(paths[f]), "%s/%s.csv", tmp, file_names[f]);
        FILE *fp = create_stream(paths[f]);
        if (!fp || pm_csv(fp, hosts, n, (pm_file_t)f) < 0)
            rc = EXIT_FAIL;
        if (fp && fclose(fp) != 0)
            rc = EXIT_FAIL;
    }
    /* the interpreter ($JOBSCOPE_PYTHON, else python3) and the package: installed, or this build's source */
    const char *py = getenv("JOBSCOPE_PYTHON");
    py = py && *py ? py : "python3";
    char exe[PATH_MAX], pkg[PATH_MAX + 32], pypath[2 * PATH_MAX + 64];
    js_fsroot_t fr = {.proc = -1, .sys = -1};
    ssize_t el = fsroot_open(&fr, NULL, NULL) == 0 && fsroot_is_live(&fr) > 0
                     ? readlinkat(fr.proc, "self/exe", exe, sizeof(exe) - 1)
                     : -1;
    fsroot_close(&fr);
    pypath[0] = '\0';
    if (el > 0) {
        exe[el] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(pkg, sizeof(pkg), "%s/../python/jobscope/perfmon.py", exe);
            if (access(pkg, R_OK) == 0) {
                const char *old = getenv("PYTHONPATH");
                snprintf(pypath, sizeof(pypath), "%s/../python%s%s", exe, old && *old ? ":" : "",
                         old ? old : "");
            }
        }
    }
    bool frames = rc == 0; /* every format is tried: each says for itself why it failed */
    for (size_t i = 0; i < run->o.nexport && frames; i++) {
        int bit = run->o.export_order[i];
        size_t k = 0;
        while (k < NEXPORTS && exports[k].bit != bit)
            k++;
        if (bit == X_CSV || bit == X_HDF5)
            continue;
        pid_t pid = fork();
        if (pid == 0) {
            if (pypath[0])
                setenv("PYTHONPATH", pypath, 1);
            execlp(py, py, "-m", "jobscope.perfmon", "convert", exports[k].name, tmp, run->dir, (char *)NULL);
            fprintf(stderr, "jobscope perfmon: %s: %s\n", py, strerror(errno));
            _exit(127);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            pmlog("ERROR", "export %s failed (%s -m jobscope.perfmon: the message above)", exports[k].name,
                  py);
            rc = EXIT_FAIL;
            continue;
        }
        pmlog("INFO", "exported %s: %s/{cpu_metrics,perf_metrics}.%s", exports[k].name, run->dir,
              exports[k].ext);
    }
    for (int f = 0; f < 2; f++)
        unlink(paths[f]);
    rmdir(tmp);
    return rc;
}

static int post_process(pm_run_t *run, const job_plan_t *plan, const char *merged)
{
    merge_node_t *nodes = NULL;
    size_t nn = 0;
    char err[1024];
    if (merge_nodes(merged, &nodes, &nn, err, sizeof(err)) < 0) {
        pmlog("ERROR", "%s", err);
        return EXIT_FAIL;
    }
    pm_host_t *hosts = calloc(nn ? nn : 1, sizeof(*hosts));
    pm_host_t **hp = calloc(nn ? nn : 1, sizeof(*hp));
    int rc = hosts && hp ? 0 : EXIT_FAIL;
    size_t n = 0;
    for (size_t i = 0; i < nn && !rc; i++) {
        char path[PATH_MAX + 300];
        snprintf(path, sizeof(path), "%s/%s-%s.db", plan->dir, plan->b.job, nodes[i].name);
        pm_host_init(&hosts[n], nodes[i].host[0] ? nodes[i].host : nodes[i].name,
                     (double)run->o.interval_ns / 1e9);
        hp[n] = &hosts[n];
        n++;
        js_recording_t *r = NULL;
        js_model_t *m = NULL;
        feed_t fa = {.h = &hosts[n - 1]};
        if (cli_read_recording(path, REPLAY_PROCS, &r, &m, feed, &fa) != 0) { /* vsize: process rows */
            pmlog("ERROR", "cannot read %s", path);
            rc = EXIT_FAIL;
        }
        model_free(m);
        recording_close(r);
    }
    free(nodes);
    char path[PATH_MAX + 512];
    snprintf(path, sizeof(path), "%s/metrics", run->dir);
    if (!rc && mkdirs(path) < 0) {
        pmlog("ERROR", "%s: %s", path, strerror(errno));
        rc = EXIT_FAIL;
    }
    for (int f = 0; f < 3 && !rc; f++) { /* metrics/(cpu_metrics,perf_metrics,meta_data).json: every host */
        js_buf_t b = {0};
        snprintf(path, sizeof(path), "%s/metrics/%s.json", run->dir, file_names[f]);
        int r = pm_json_file(&b, hp, n, f == 2 ? PM__MAX : (pm_file_t)f);
        if (r == 0)
            r = write_file(path, b.p, b.len);
        buf_free(&b);
        if (r < 0) {
            pmlog("ERROR", "%s: %s", path, strerror(-r));
            rc = EXIT_FAIL;
        } else {
            pmlog("INFO", "%s: %zu hosts", path, n);
        }
    }
    if (!rc) { /* the check points are superseded */
        for (size_t i = 0; i < n; i++)
            for (int f = 0; f < 3; f++) {
                snprintf(path, sizeof(path), "%s/metrics/partial/%s_%s_%s.json", run->dir, file_names[f],
                         run->job, hosts[i].host);
                unlink(path);
            }
        snprintf(path, sizeof(path), "%s/metrics/partial", run->dir);
        rmdir(path);
    }
    /* exports */
    if (!rc && (run->o.exports & X_CSV))
        for (int f = 0; f < 2; f++) {
            snprintf(path, sizeof(path), "%s/%s.csv", run->dir, file_names[f]);
            char tmp[PATH_MAX + 600];
            snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
            FILE *fp = create_stream(tmp);
            int r = fp ? pm_csv(fp, hp, n, (pm_file_t)f) : -errno;
            if (fp && fclose(fp) != 0 && r == 0)
                r = -errno;
            if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
            if (r < 0) {
                unlink(tmp);
                pmlog("ERROR", "export csv: %s: %s", path, strerror(-r));
                rc = EXIT_FAIL;
            } else {
                pmlog("INFO", "exported csv: %s", path);
            }
        }
    if (!rc && (run->o.exports & X_HDF5)) {
        snprintf(path, sizeof(path), "%s/metrics.h5", run->dir);
        char tmp[PATH_MAX + 96];
        snprintf(tmp, sizeof(tmp), "%.4096s/.metrics.h5.%d.tmp", run->dir, (int)getpid());
        int r = pm_hdf5(tmp, run->job, hp, n, err, sizeof(err));
        if (r == 0 && rename(tmp, path) < 0) {
            r = -errno;
            snprintf(err, sizeof(err), "%.900s: %s", path, strerror(errno));
        }
        if (r < 0) {
            unlink(tmp);
            pmlog("ERROR", "export hdf5: %s", err);
            rc = EXIT_FAIL;
        } else {
            pmlog("INFO", "exported hdf5: %s (groups cpu_metrics_%s, perf_metrics_%s)", path, run->job,
                  run->job);
        }
    }
    if (!rc && (run->o.exports & (X_PICKLE | X_PARQUET | X_FEATHER | X_ORC)))
        rc |= python_export(run, hp, n);
    /* the report: plots, the PDF, the HTML report of the merged job */
    if (run->o.report) {
        char plots[PATH_MAX + 16], pdf[PATH_MAX + 128], title[512];
        snprintf(plots, sizeof(plots), "%s/plots", run->dir);
        snprintf(pdf, sizeof(pdf), "%s/job-report-%s.pdf", run->dir, run->job);
        char date[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(date, sizeof(date), "%m/%d/%Y %H:%M:%S", &tm);
        const char *user = getenv("USER");
        snprintf(title, sizeof(title), "Job ID: %s   User: %s   # Nodes: %zu   Date: %s", run->job,
                 user ? user : "-", n, date);
        char *sum = cli_summary_text(merged);
        int np = pm_plots(hp, n, plots, pdf, title, sum, err, sizeof(err));
        free(sum);
        if (np < 0) {
            pmlog("ERROR", "plots and job report: %s", err);
            rc = EXIT_FAIL;
        } else {
            pmlog("INFO", "%d plots in %s, job report %s", np, plots, pdf);
        }
        snprintf(path, sizeof(path), "%s/%s.html", run->dir, run->job);
        js_file_id_t in;
        js_outfile_t of;
        int r = cli_output_begin(&of, path, true, false, &in, cli_file_id(merged, &in) == 0 ? 1 : 0);
        if (r == 0)
            r = cli_output_end(&of,
                               cli_report_fd(merged, of.fd, path)); /* renamed into place when complete */
        if (r != 0) {
            pmlog("ERROR", "HTML report %s not written", path);
            rc = EXIT_FAIL;
        } else {
            pmlog("INFO", "HTML report %s", path);
        }
    }
    for (size_t i = 0; i < n; i++)
        pm_host_free(&hosts[i]);
    free(hosts);
    free(hp);
    return rc;
}

static int finished(void *arg, const job_plan_t *plan, const char *merged)
{
    pm_run_t *run = arg;
    pmlog("INFO", "monitoring of job %s on %s done: %s", plan->b.job, plan->b.node, plan->final_path);
    if (!merged)
        return 0; /* another node post-processes (the last to finish) */
    pmlog("INFO", "job %s merged into %s; post-processing", plan->b.job, merged);
    run->rc = post_process(run, plan, merged);
    return run->rc;
}

/* run_config: -v: the run's configuration, configs/HOST_run_config.yml (perfmon's dump_yaml). */
static void run_config(const pm_run_t *run)
{
    char dir[PATH_MAX + 16], path[PATH_MAX + 320];
    snprintf(dir, sizeof(dir), "%s/configs", run->dir);
    if (mkdirs(dir) < 0)
        return;
    snprintf(path, sizeof(path), "%s/%s_run_config.yml", dir, host_name);
    js_buf_t b = {0};
    const pm_opts_t *o = &run->o;
    buf_printf(&b, "check_point: %g\n", o->check_point_s);
    buf_printf(&b, "data_dir: '%s'\n", run->dir);
    buf_printf(&b, "env: %s\n", o->env ? o->env : "null");
    buf_printf(&b, "export:\n");
    for (size_t i = 0; i < o->nexport; i++)
        for (size_t k = 0; k < NEXPORTS; k++)
            if (exports[k].bit == o->export_order[i])
                buf_printf(&b, "- %s\n", exports[k].name);
    buf_printf(&b, "gen_report: %s\n", o->report ? "true" : "false");
    buf_printf(&b, "host_name: '%s'\n", host_name);
    buf_printf(&b, "ipc_file: '%s'\n", run->ipc_cwd);
    buf_printf(&b, "job_id: '%s'\n", run->job);
    buf_printf(&b, "launcher: %s\n", o->launcher ? o->launcher : "null");
    buf_printf(&b, "monitor: jobscope job\n");
    buf_printf(&b, "name: %s\n", o->name ? o->name : "null");
    buf_printf(&b, "partition: %s\n", o->partition ? o->partition : "null");
    buf_printf(&b, "prefix: %s\n", o->prefix ? o->prefix : "null");
    buf_printf(&b, "sampling_freq: %g\n", (double)o->interval_ns / 1e9);
    buf_printf(&b, "save_dir: '%s'\n", o->save_dir ? o->save_dir : ".");
    buf_printf(&b, "system: %s\n", o->system ? o->system : "null");
    buf_printf(&b, "verbose: %s\n", o->verbose ? "true" : "false");
    write_file(path, b.p ? b.p : "", b.len);
    buf_free(&b);
}

int cmd_perfmon(int argc, char **argv)
{
    static pm_run_t run; /* the hooks and the scope point into it for the run */
    memset(&run, 0, sizeof(run));
    int r = parse(argc, argv, &run.o);
    if (r)
        return r < 0 ? 0 : r;
    if (gethostname(host_name, sizeof(host_name) - 1) < 0)
        snprintf(host_name, sizeof(host_name), "node");
    const char *sd = run.o.save_dir ? run.o.save_dir : ".";
    char base[PATH_MAX];
    if ((r = expand(sd, base, sizeof(base))) < 0) {
        cli_error("perfmon: save_dir '%s': %s", sd, strerror(-r));
        return EXIT_FAIL;
    }
    if ((size_t)snprintf(run.dir, sizeof(run.dir), "%s%s%s", base, run.o.prefix ? "/" : "",
                         run.o.prefix ? run.o.prefix : "") >= sizeof(run.dir)) {
        cli_error("perfmon: %s/%s: name too long", base, run.o.prefix);
        return EXIT_FAIL;
    }
    normalize(run.dir);
    if ((r = mkdirs(run.dir)) < 0) {
        cli_error("perfmon: %s: %s", run.dir, strerror(-r));
        return EXIT_FAIL;
    }
    /* the job's id, for .ipc-JOBID (job_resolve checks the rest of the job's environment) */
    const char *id = getenv("SLURM_JOB_ID");
    if (!id || !*id)
        id = getenv("PBS_JOBID");
    if (!id || !*id)
        id = getenv("OAR_JOB_ID");
    if (!id || !*id) {
        cli_error("perfmon: not inside a batch job (no SLURM_JOB_ID, PBS_JOBID or OAR_JOB_ID)");
        return EXIT_FAIL;
    }
    if (!batch_safe_name(id) || strlen(id) >= sizeof(run.job)) {
        cli_error("perfmon: invalid job id '%s'", id);
        return EXIT_FAIL;
    }
    snprintf(run.job, sizeof(run.job), "%s", id);
    char cwd[PATH_MAX];
    snprintf(run.ipc_cwd, sizeof(run.ipc_cwd), "%s/.ipc-%s", getcwd(cwd, sizeof(cwd)) ? cwd : ".", id);
    snprintf(run.ipc_dir, sizeof(run.ipc_dir), "%s/.ipc-%s", run.dir, id);

    /* perfmon's silent mode: everything to the log file from here */
    char log[PATH_MAX + 300];
    if (run.o.verbose)
        snprintf(log, sizeof(log), "%s/ska_sdp_monitoring_metrics_%s.log", run.dir, host_name);
    else
        snprintf(log, sizeof(log), "%s/ska_sdp_monitoring_metrics.log", run.dir);
    int lfd = fs_create(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644);
    if (lfd < 0) {
        cli_error("perfmon: %s: %s", log, strerror(-lfd));
        return EXIT_FAIL;
    }
    fflush(stdout);
    fflush(stderr);
    tty_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    dup2(lfd, STDOUT_FILENO);
    dup2(lfd, STDERR_FILENO);
    close(lfd);
    pmlog("INFO", "jobscope perfmon: job %s, folder %s, sampling every %g s, check points every %g s%s", id,
          run.dir, (double)run.o.interval_ns / 1e9, run.o.check_point_s, run.o.report ? ", report" : "");
    if (run.o.system || run.o.partition || run.o.env || run.o.name)
        pmlog("INFO", "SDP benchmark: system %s, partition %s, env %s, name %s",
              run.o.system ? run.o.system : "-", run.o.partition ? run.o.partition : "-",
              run.o.env ? run.o.env : "-", run.o.name ? run.o.name : "-");
    if (run.o.launcher)
        pmlog("DEBUG", "launcher %s (jobscope finds the job's work from the scheduler)", run.o.launcher);
    if (run.o.verbose)
        run_config(&run);
    if (run.o.report) {
        char err[512];
        if (raster_load(err, sizeof(err)) < 0)
            pmlog("WARNING", "%s: the plots and the PDF job report will be missing", err);
    }
    if (run.o.exports & X_HDF5) {
        char err[512];
        if (hdf5_load(err, sizeof(err)) < 0)
            pmlog("WARNING", "%s: the hdf5 export will be missing", err);
    }
    pm_host_init(&run.live, host_name, (double)run.o.interval_ns / 1e9);
    run.next_cp_ns = 0;

    /* the monitor: `jobscope job -d DIR -i INTERVAL` with perfmon's hooks */
    char iv[64];
    snprintf(iv, sizeof(iv), "%.9gs", (double)run.o.interval_ns / 1e9);
    job_hooks_t hooks = {.sink = &live_sink,
                         .sink_state = &run,
                         .ipc_file = run.ipc_cwd,
                         .ipc_file2 = strcmp(run.ipc_cwd, run.ipc_dir) ? run.ipc_dir : NULL,
                         .finished = finished,
                         .arg = &run,
                         .quiet_end = false};
    char *jargv[] = {"job", "-d", run.dir, "-i", iv, NULL};
    int status = cmd_run_hooks(5, jargv, &hooks);
    pm_host_free(&run.live);
    pmlog(status ? "ERROR" : "INFO", "jobscope perfmon exits with status %d", status);
    if (status && tty_fd >= 0) {
        char line[PATH_MAX + 400];
        int n = snprintf(line, sizeof(line), "jobscope perfmon on %s: failed (status %d), see %s\n",
                         host_name, status, log);
        cli_write_all(tty_fd, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1));
    }
    if (tty_fd >= 0)
        close(tty_fd);
    return status;
}
