/* SPDX-License-Identifier: MIT
 *
 * The batch job a process belongs to, from its environment: SLURM (SLURM_JOB_ID, SLURM_STEP_ID,
 * SLURMD_NODENAME, SLURM_JOB_NODELIST, SLURM_JOB_NUM_NODES, SLURM_CPUS_ON_NODE, SLURM_MEM_PER_NODE /
 * SLURM_MEM_PER_CPU, SLURM_JOB_GPUS), PBS (PBS_JOBID, PBS_NODEFILE_LOCAL else PBS_NODEFILE) and OAR
 * (OAR_JOB_ID, OAR_NODEFILE). PBS and OAR name the job's nodes in a node file, one line per allocated core
 * (a host repeated as many times as it has cores there); this node is found there by its host name (the
 * short name matches a fully qualified line, and the other way round). Also SLURM's compressed host lists
 * ("n[1-3,07],gpu5") and the cmdline of a slurmstepd ("slurmstepd: [1234.0]"). No command is run: jobscope
 * never calls scontrol, qstat or oarstat.
 *
 * Pure parsing: nothing here reads /proc or /sys; a node file is read from the path the environment gives.
 */
#ifndef JOBSCOPE_BATCHENV_H
#define JOBSCOPE_BATCHENV_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { JS_BATCH_NONE, JS_BATCH_SLURM, JS_BATCH_PBS, JS_BATCH_OAR } js_batch_kind_t;

#define JS_BATCH_NODELIST_MAX 4096

typedef struct {
    js_batch_kind_t kind;
    char job[64];   /* the job id as the scheduler writes it ("1234", PBS "1234.server") */
    char step[32];  /* SLURM: this process's step ("0", "batch"); "" when unknown or not SLURM */
    char node[128]; /* this node's name for the scheduler (SLURMD_NODENAME; PBS/OAR: its node file line) */
    char nodelist[JS_BATCH_NODELIST_MAX]; /* every node of the job: SLURM's compressed list as given, PBS/OAR
                                           * the distinct node file lines joined by commas; "" when unknown */
    int nnodes;                           /* how many nodes the job has; 0 when unknown */
    double cores;         /* the job's cores on this node (SLURM_CPUS_ON_NODE; PBS/OAR: this node's node file
                           * lines); NAN when unknown */
    double mem_bytes;     /* the job's memory on this node (SLURM_MEM_PER_NODE, or _PER_CPU x cores); NAN */
    const char *mem_from; /* "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", or NULL */
    char gpus[128];       /* SLURM_JOB_GPUS ("0,1"), "" when none is given */
    char nodefile[1024];  /* PBS/OAR: the node file read */
} js_batch_job_t;

/* batchenv_parse: the batch job of environment `envp` (NULL-terminated "NAME=value" strings) on the host
 * named `host` (used by PBS and OAR to find this node in the node file). SLURM is tried first, then PBS, then
 * OAR. Returns 0 and fills *ret; -ENOENT when no scheduler's job id is set (ret->kind JS_BATCH_NONE); -EINVAL
 * with a one-line reason in `why` for a malformed value or an unreadable node file. */
int batchenv_parse(char *const *envp, const char *host, js_batch_job_t *ret, char *why, size_t whylen);

/* batchenv_kind_name: "slurm", "pbs", "oar", "none". */
const char *batchenv_kind_name(js_batch_kind_t k);

/* hostlist_each: call fn(arg, name) for every host of a SLURM host list such as "n[1-3,07],gpu5,x[01-02]y"
 * (brackets expand ranges, keeping zero padding; one bracket group per name). Stops at fn's first non-zero
 * return, which it returns. Returns the number of names, or -EINVAL for a malformed list (nothing is called
 * for a list that does not parse: it is checked first), -E2BIG past 65536 names. */
int hostlist_each(const char *list, int (*fn)(void *arg, const char *name), void *arg);

/* hostlist_count: the number of hosts in a SLURM host list, or -EINVAL. */
int hostlist_count(const char *list);

/* nodefile_parse: a PBS/OAR node file's text: the distinct hosts joined by commas in order of first
 * appearance into `nodes` (cap bytes), their number in *ret_nnodes, and the lines naming `host` (exact, or
 * equal up to the first '.' on either side) in *ret_cores. Returns 0, -EINVAL (an empty file),
 * -ENAMETOOLONG (`nodes` too small). *ret_node gets this host's line as written (cap 128), "" if absent. */
int nodefile_parse(const char *text, const char *host, char *nodes, size_t cap, int *ret_nnodes,
                   int *ret_cores, char ret_node[128]);

/* stepd_parse_cmdline: the job and step of a slurmstepd command line ("slurmstepd: [1234.0]",
 * "slurmstepd: [1234.batch]", "slurmstepd: [1234.extern]"; NUL or blank padding after it is allowed) of `len`
 * bytes. Returns 0, or -EINVAL when it is not one. */
int stepd_parse_cmdline(const char *buf, size_t len, char *job, size_t jobcap, char *step, size_t stepcap);

/* batch_safe_name: whether `s` (a job id, step or node name) is usable in a file name: not empty, not "." or
 * "..", no '/', no control character. */
bool batch_safe_name(const char *s);

#endif
