/* SPDX-License-Identifier: MIT
 *
 * spank_probe: the smallest SPANK plugin that proves a plugstack.conf entry is loaded and run on every node.
 *
 * It registers the option --probe[=TAG] for srun, sbatch and salloc. In each task of a step started with
 * --probe (remote context, in the task just before exec, as the job's user) it writes one file
 * DIR/probe.JOB.STEP.TASK holding key=value lines: node (SLURMD_NODENAME), host (gethostname), job, step,
 * task (global rank), localid, pid, ppid, uid and gid (the task's own, after SLURM dropped privileges), tag.
 * DIR is the plugin argument dir=DIR in plugstack.conf and must be writable by the job's user:
 *
 *     optional /path/spank_probe.so dir=/path/to/probe-output
 *
 * Built at test time against Debian's libslurm-dev:  gcc -shared -fPIC -o spank_probe.so spank_probe.c
 * Steps without --probe are left alone; a failure to write is logged and never fails the task.
 */
#define _GNU_SOURCE /* gethostname, uid_t under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(spank_probe, 1);

static int probe_given;          /* --probe was passed to this step */
static char probe_tag[128] = ""; /* its optional argument */

static int probe_option_cb(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    probe_given = 1;
    snprintf(probe_tag, sizeof(probe_tag), "%s", optarg ? optarg : "");
    return 0;
}

static struct spank_option probe_option = {
    .name = "probe",
    .arginfo = "[TAG]",
    .usage = "jobscope tests: record where and as whom each task of this step ran",
    .has_arg = 2, /* optional argument */
    .val = 0,
    .cb = probe_option_cb,
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_option_register(sp, &probe_option) != ESPANK_SUCCESS) {
        slurm_error("spank_probe: cannot register --probe");
        return -1;
    }
    return 0;
}

static const char *probe_dir(int ac, char **av)
{
    for (int i = 0; i < ac; i++)
        if (strncmp(av[i], "dir=", 4) == 0)
            return av[i] + 4;
    return NULL;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    if (!probe_given)
        return 0;
    const char *dir = probe_dir(ac, av);
    if (!dir) {
        slurm_error("spank_probe: no dir= argument in plugstack.conf");
        return 0;
    }
    uint32_t job = 0, step = 0, task = 0, localid = 0;
    char node[256] = "", host[256] = "";
    spank_get_item(sp, S_JOB_ID, &job);
    spank_get_item(sp, S_JOB_STEPID, &step);
    spank_get_item(sp, S_TASK_GLOBAL_ID, &task);
    spank_get_item(sp, S_TASK_ID, &localid);
    if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof(node)) != ESPANK_SUCCESS)
        snprintf(node, sizeof(node), "?");
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "?");

    char path[4096];
    snprintf(path, sizeof(path), "%s/probe.%u.%u.%u", dir, job, step, task);
    FILE *f = fopen(path, "w");
    if (!f) {
        slurm_error("spank_probe: cannot write %s", path);
        return 0;
    }
    fprintf(f, "node=%s\nhost=%s\n", node, host);
    fprintf(f, "job=%u\nstep=%u\ntask=%u\nlocalid=%u\n", job, step, task, localid);
    fprintf(f, "pid=%d\nppid=%d\n", (int)getpid(), (int)getppid());
    fprintf(f, "uid=%u\ngid=%u\ntag=%s\n", (unsigned)getuid(), (unsigned)getgid(), probe_tag);
    fclose(f);
    return 0;
}
