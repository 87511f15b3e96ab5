/* SPDX-License-Identifier: MIT
 *
 * The SPANK plugin's pure part, kept free of SLURM's headers so it is unit-tested on every build: the
 * plugin's configuration (plugstack.conf arguments give the administrator's defaults, `--jobscope=OPTIONS`
 * the user's choices on top), path patterns (%j job, %s step, %n node, %u user, %% a percent sign), and the
 * argv and environment of the monitor (`jobscope job ...`), built into caller-owned storage before the fork
 * so the forked child only calls async-signal-safe functions.
 */
#ifndef JOBSCOPE_SPANK_CONFIG_H
#define JOBSCOPE_SPANK_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JS_SPANK_PATH_MAX 4096
#define JS_SPANK_ARGV_MAX 24
#define JS_SPANK_ENV_MAX 256
#define JS_SPANK_ENV_BYTES 65536
/* The output folder when neither plugstack.conf nor the user names one, under the submit folder: one per
 * step, since `jobscope job` writes one DIR/JOBID-NODE.db per node and a job may run several steps. */
#define JS_SPANK_DEFAULT_DIR "jobscope-%j.%s"

/* SLURM's special step ids (slurm.h: SLURM_INTERACTIVE_STEP, SLURM_BATCH_SCRIPT, SLURM_EXTERN_CONT,
 * SLURM_PENDING_STEP), repeated here so this file needs no SLURM header; the plugin checks they agree. */
#define JS_SPANK_STEP_INTERACTIVE 0xfffffffaU
#define JS_SPANK_STEP_BATCH 0xfffffffbU
#define JS_SPANK_STEP_EXTERN 0xfffffffcU
#define JS_SPANK_STEP_PENDING 0xfffffffdU

typedef struct {
    char bin[JS_SPANK_PATH_MAX]; /* the jobscope binary (admin: bin=) */
    char dir[JS_SPANK_PATH_MAX]; /* output folder pattern; "" = JS_SPANK_DEFAULT_DIR */
    char log[JS_SPANK_PATH_MAX]; /* the monitor's stdout and stderr, a pattern; "" = /dev/null */
    char interval[32];           /* as given (validated); "" = jobscope's default */
    int report;                  /* pass --report */
    int batch;                   /* also monitor the batch step (the script on the first node) */
    int64_t stop_timeout_ns; /* how long the step's end waits for the closing sample (admin: stop_timeout=) */
} js_spank_config_t;

/* What the plugin knows of the step on this node, filled from SPANK items and the job's environment. */
typedef struct {
    uint32_t job_id;
    uint32_t step_id; /* numeric, or one of JS_SPANK_STEP_* */
    char node[256];   /* SLURM node name */
    uint32_t node_id; /* this node's index in the step (SLURM_NODEID), UINT32_MAX when unknown */
    char user[256];   /* the job's user name ("" when unknown: %u then expands to the uid) */
    uid_t uid;
    char submit_dir[JS_SPANK_PATH_MAX]; /* SLURM_SUBMIT_DIR; relative folders are taken from here */
    pid_t stepd_pid;
} js_spank_job_t;

/* The monitor's command line and environment, pointing into `storage`; built by spank_launch_build(). */
typedef struct {
    char *argv[JS_SPANK_ARGV_MAX];
    char *envp[JS_SPANK_ENV_MAX];
    char dir[JS_SPANK_PATH_MAX]; /* expanded absolute output folder */
    char log[JS_SPANK_PATH_MAX]; /* expanded log file, "" for /dev/null */
    char storage[JS_SPANK_ENV_BYTES];
    size_t used;
} js_spank_launch_t;

/* spank_config_defaults: the built-in defaults: bin = `default_bin`, no folder (JS_SPANK_DEFAULT_DIR), no
 * log, jobscope's default interval, no report, batch step left alone, stop_timeout 10 s. */
void spank_config_defaults(js_spank_config_t *c, const char *default_bin);

/* spank_config_apply: apply one item, "key=value" or "key". Users (admin == 0) may give interval=DURATION,
 * dir=DIR, log=FILE, report, noreport, batch, nobatch; plugstack.conf (admin != 0) may also give bin=PATH and
 * stop_timeout=DURATION. Returns 0, or -EINVAL (unknown key, missing or bad value; `err` says which, and `c`
 * is untouched), -ENAMETOOLONG (value too long), -EPERM (an admin-only key from a user). */
int spank_config_apply(js_spank_config_t *c, const char *item, int admin, char *err, size_t errlen);

/* spank_config_options: apply a comma-separated list of items (the text of --jobscope=OPTIONS; NULL or ""
 * is nothing). A bad item is skipped and the others still apply. Returns the number of bad items; `err`
 * holds their messages joined by "; " (truncated to errlen). */
int spank_config_options(js_spank_config_t *c, const char *options, int admin, char *err, size_t errlen);

/* spank_step_name: the step as `jobscope job --step` and patterns name it: "0", "1", ... "batch",
 * "extern", "interactive", "pending". Returns `out`. */
const char *spank_step_name(uint32_t step_id, char *out, size_t outlen);

/* spank_expand: expand a path pattern: %j job id, %s step name, %n node, %u user (the uid when the name is
 * unknown), %% a percent sign. Returns 0, -EINVAL (another %-sequence, or a trailing %), -ENAMETOOLONG. */
int spank_expand(const char *pattern, const js_spank_job_t *job, char *out, size_t outlen);

/* spank_launch_build: the monitor's argv
 *     BIN job -d DIR [--interval I] [--report] --job ID --step STEP --node NODE --stepd-pid PID
 * and environment: the job environment's SLURM* variables and HOME, USER, LOGNAME, TMPDIR, LANG, plus
 * PATH=/usr/local/bin:/usr/bin:/bin, JOBSCOPE_SPANK=1, and this node's SLURMD_NODENAME and SLURM_NODEID (the
 * step's environment holds stale copies of those two from the srun's own environment: they are replaced).
 * `job_env` is a NULL-terminated array (may be NULL). A relative folder (the default one included) is taken
 * from the submit folder. Returns 0, or -EINVAL (bad pattern, relative folder and no submit folder: `err`
 * says), -ENAMETOOLONG / -E2BIG (does not fit). */
int spank_launch_build(js_spank_launch_t *l, const js_spank_config_t *c, const js_spank_job_t *job,
                       char *const *job_env, char *err, size_t errlen);

/* spank_done_marker: the file `jobscope job` leaves once this node's recording is complete, before it merges
 * the nodes' recordings: DIR/.JOBID-NODE.done. Returns 0 or -ENAMETOOLONG. */
int spank_done_marker(const char *dir, const js_spank_job_t *job, char *out, size_t outlen);

#endif
