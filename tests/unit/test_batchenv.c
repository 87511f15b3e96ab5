/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the batch job discovery (core/batchenv.h) on environment arrays and node-file fixtures
 * (tests/fixtures/batch): SLURM's variables, PBS's node file (PBS_NODEFILE_LOCAL before PBS_NODEFILE) and
 * OAR's, with short and qualified host names; SLURM's compressed host lists; slurmstepd command lines; and
 * the job cgroup layouts of core/jobs.h (jobs_cgroup_find) on the SLURM cgroup fixture trees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/batchenv.h"
#include "core/jobs.h"
#include "sys/fsroot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define BATCH FIXTURES "/batch"
#define SLURM FIXTURES "/slurm"

static void test_slurm_env(void **state)
{
    (void)state;
    char *env[] = {"HOME=/root",
                   "SLURM_JOB_ID=1234",
                   "SLURM_STEP_ID=3",
                   "SLURMD_NODENAME=n2",
                   "SLURM_JOB_NODELIST=n[1-3]",
                   "SLURM_JOB_NUM_NODES=3",
                   "SLURM_CPUS_ON_NODE=4",
                   "SLURM_MEM_PER_CPU=1024",
                   "SLURM_JOB_GPUS=0,1",
                   NULL};
    js_batch_job_t b;
    char why[256];
    assert_int_equal(batchenv_parse(env, "vm", &b, why, sizeof(why)), 0);
    assert_int_equal(b.kind, JS_BATCH_SLURM);
    assert_string_equal(b.job, "1234");
    assert_string_equal(b.step, "3");
    assert_string_equal(b.node, "n2");
    assert_string_equal(b.nodelist, "n[1-3]");
    assert_int_equal(b.nnodes, 3);
    assert_true(b.cores == 4);
    assert_true(b.mem_bytes == 4.0 * 1024 * 1024 * 1024);
    assert_string_equal(b.mem_from, "SLURM_MEM_PER_CPU");
    assert_string_equal(b.gpus, "0,1");
    assert_string_equal(batchenv_kind_name(b.kind), "slurm");

    /* the batch script: no step; per-node memory wins over per-CPU; no node name: the host's */
    char *env2[] = {"SLURM_JOBID=77", "SLURM_NODELIST=gpu[01-02],cpu5", "SLURM_MEM_PER_NODE=2G",
                    "SLURM_MEM_PER_CPU=10", NULL};
    assert_int_equal(batchenv_parse(env2, "gpu01", &b, why, sizeof(why)), 0);
    assert_string_equal(b.job, "77");
    assert_string_equal(b.step, "");
    assert_string_equal(b.node, "gpu01");
    assert_int_equal(b.nnodes, 3);
    assert_true(isnan(b.cores));
    assert_true(b.mem_bytes == 2.0 * 1024 * 1024 * 1024);
    assert_string_equal(b.mem_from, "SLURM_MEM_PER_NODE");

    /* malformed values are refused with a reason */
    char *bad1[] = {"SLURM_JOB_ID=12/34", NULL};
    assert_int_equal(batchenv_parse(bad1, "h", &b, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "SLURM_JOB_ID"));
    char *bad2[] = {"SLURM_JOB_ID=5", "SLURM_JOB_NODELIST=n[1-", NULL};
    assert_int_equal(batchenv_parse(bad2, "h", &b, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "SLURM_JOB_NODELIST"));
    char *bad3[] = {"SLURM_JOB_ID=5", "SLURM_JOB_NODELIST=n[1-3]", "SLURM_JOB_NUM_NODES=2", NULL};
    assert_int_equal(batchenv_parse(bad3, "h", &b, why, sizeof(why)), -EINVAL);
    char *bad4[] = {"SLURM_JOB_ID=5", "SLURM_CPUS_ON_NODE=many", NULL};
    assert_int_equal(batchenv_parse(bad4, "h", &b, why, sizeof(why)), -EINVAL);
    char *bad5[] = {"SLURM_JOB_ID=5", "SLURMD_NODENAME=..", NULL};
    assert_int_equal(batchenv_parse(bad5, "h", &b, why, sizeof(why)), -EINVAL);

    /* nothing: no job */
    char *none[] = {"HOME=/", "SLURM_JOB_ID=", NULL};
    assert_int_equal(batchenv_parse(none, "h", &b, why, sizeof(why)), -ENOENT);
    assert_int_equal(b.kind, JS_BATCH_NONE);
    assert_int_equal(batchenv_parse(NULL, "h", &b, why, sizeof(why)), -ENOENT);
}

static void test_pbs_env(void **state)
{
    (void)state;
    js_batch_job_t b;
    char why[256];
    /* the node file lists cn01 and cn02 three times each; this host is cn02 by its short name */
    char *env[] = {"PBS_JOBID=4711.server", "PBS_NODEFILE=" BATCH "/pbs_nodefile", NULL};
    assert_int_equal(batchenv_parse(env, "cn02", &b, why, sizeof(why)), 0);
    assert_int_equal(b.kind, JS_BATCH_PBS);
    assert_string_equal(b.job, "4711.server");
    assert_string_equal(b.node, "cn02.cluster");
    assert_string_equal(b.nodelist, "cn01.cluster,cn02.cluster");
    assert_int_equal(b.nnodes, 2);
    assert_true(b.cores == 3);
    assert_string_equal(b.nodefile, BATCH "/pbs_nodefile");

    /* PBS_NODEFILE_LOCAL (perfmon's copy, readable from every node) goes first */
    char *env2[] = {"PBS_JOBID=4711.server", "PBS_NODEFILE=/nonexistent/nodefile",
                    "PBS_NODEFILE_LOCAL=" BATCH "/pbs_nodefile", NULL};
    assert_int_equal(batchenv_parse(env2, "cn01.cluster", &b, why, sizeof(why)), 0);
    assert_string_equal(b.node, "cn01.cluster");
    assert_true(b.cores == 3);

    /* a host not in the file: the job has no cores here, the node is named after the host */
    assert_int_equal(batchenv_parse(env, "login1", &b, why, sizeof(why)), 0);
    assert_true(isnan(b.cores));
    assert_string_equal(b.node, "login1");

    /* an unreadable node file is an error that names it */
    char *env3[] = {"PBS_JOBID=1", "PBS_NODEFILE=/nonexistent/nodefile", NULL};
    assert_int_equal(batchenv_parse(env3, "cn01", &b, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "/nonexistent/nodefile"));
    char *env4[] = {"PBS_JOBID=1", "PBS_NODEFILE=" BATCH "/empty_nodefile", NULL};
    assert_int_equal(batchenv_parse(env4, "cn01", &b, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "no host"));
}

static void test_oar_env(void **state)
{
    (void)state;
    js_batch_job_t b;
    char why[256];
    char *env[] = {"OAR_JOB_ID=555", "OAR_NODEFILE=" BATCH "/oar_nodefile", NULL};
    assert_int_equal(batchenv_parse(env, "node-8.site.example", &b, why, sizeof(why)), 0);
    assert_int_equal(b.kind, JS_BATCH_OAR);
    assert_string_equal(b.job, "555");
    assert_string_equal(b.node, "node-8");
    assert_string_equal(b.nodelist, "node-7,node-8,node-9");
    assert_int_equal(b.nnodes, 3);
    assert_true(b.cores == 2);
    assert_string_equal(batchenv_kind_name(b.kind), "oar");
    /* without a node file: the host alone */
    char *env2[] = {"OAR_JOBID=556", NULL};
    assert_int_equal(batchenv_parse(env2, "node-9", &b, why, sizeof(why)), 0);
    assert_string_equal(b.job, "556");
    assert_string_equal(b.node, "node-9");
    assert_int_equal(b.nnodes, 0);
    /* SLURM wins when both are set (a SLURM job on a machine that also has PBS variables) */
    char *env3[] = {"OAR_JOB_ID=555", "SLURM_JOB_ID=9", NULL};
    assert_int_equal(batchenv_parse(env3, "h", &b, why, sizeof(why)), 0);
    assert_int_equal(b.kind, JS_BATCH_SLURM);
}

static void test_nodefile_text(void **state)
{
    (void)state;
    char nodes[64], node[128];
    int nn = 0, cores = 0;
    assert_int_equal(
        nodefile_parse("a\nb\r\n a \nc extra words\n", "a", nodes, sizeof(nodes), &nn, &cores, node), 0);
    assert_string_equal(nodes, "a,b,c");
    assert_int_equal(nn, 3);
    assert_int_equal(cores, 2);
    assert_string_equal(node, "a");
    assert_int_equal(nodefile_parse("\n\n", "a", nodes, sizeof(nodes), &nn, &cores, node), -EINVAL);
    char small[4];
    assert_int_equal(nodefile_parse("abc\ndef\n", NULL, small, sizeof(small), &nn, &cores, node),
                     -ENAMETOOLONG);
    /* qualified against short, both ways; different short names never match */
    assert_int_equal(nodefile_parse("x1.a.b\nx10.a.b\n", "x1", nodes, sizeof(nodes), &nn, &cores, node), 0);
    assert_int_equal(cores, 1);
    assert_string_equal(node, "x1.a.b");
}

typedef struct {
    char names[16][32];
    int n;
} names_t;

static int collect(void *arg, const char *name)
{
    names_t *ns = arg;
    if (ns->n >= 16)
        return -1;
    snprintf(ns->names[ns->n++], 32, "%s", name);
    return 0;
}

static int stop_at_two(void *arg, const char *name)
{
    names_t *ns = arg;
    snprintf(ns->names[ns->n++], 32, "%s", name);
    return ns->n == 2 ? 7 : 0;
}

static void test_hostlist(void **state)
{
    (void)state;
    names_t ns = {0};
    assert_int_equal(hostlist_each("n[1-3,07],gpu5,x[08-10]y", collect, &ns), 8);
    static const char *const want[] = {"n1", "n2", "n3", "n07", "gpu5", "x08y", "x09y", "x10y"};
    for (int i = 0; i < 8; i++)
        assert_string_equal(ns.names[i], want[i]);
    assert_int_equal(hostlist_count("n1"), 1);
    assert_int_equal(hostlist_count("n[1-2],m[3-4]"), 4);
    assert_int_equal(hostlist_count(""), -EINVAL);
    assert_int_equal(hostlist_count("n[1-"), -EINVAL);
    assert_int_equal(hostlist_count("n[3-1]"), -EINVAL);
    assert_int_equal(hostlist_count("n[1,]"), -EINVAL);
    assert_int_equal(hostlist_count("n[1]x[2]"), -EINVAL);
    assert_int_equal(hostlist_count("n],x"), -EINVAL);
    assert_int_equal(hostlist_count("a,,b"), -EINVAL);
    assert_int_equal(hostlist_count("n[0-99999999]"), -E2BIG);
    /* a malformed list calls nothing; fn's non-zero return stops and is returned */
    names_t none = {0};
    assert_int_equal(hostlist_each("a,b,n[1-", collect, &none), -EINVAL);
    assert_int_equal(none.n, 0);
    names_t two = {0};
    assert_int_equal(hostlist_each("a,b,c", stop_at_two, &two), 7);
    assert_int_equal(two.n, 2);
}

static void test_stepd_cmdline(void **state)
{
    (void)state;
    char job[32], step[32];
    const char a[] = "slurmstepd: [1234.0]";
    assert_int_equal(stepd_parse_cmdline(a, sizeof(a), job, sizeof(job), step, sizeof(step)), 0);
    assert_string_equal(job, "1234");
    assert_string_equal(step, "0");
    const char b[] = "slurmstepd: [17817001.batch]\0\0\0";
    assert_int_equal(stepd_parse_cmdline(b, sizeof(b) - 1, job, sizeof(job), step, sizeof(step)), 0);
    assert_string_equal(job, "17817001");
    assert_string_equal(step, "batch");
    const char c[] = "slurmstepd: [5.extern]    ";
    assert_int_equal(stepd_parse_cmdline(c, sizeof(c) - 1, job, sizeof(job), step, sizeof(step)), 0);
    assert_string_equal(step, "extern");
    const char *bad[] = {"slurmstepd",     "slurmstepd: [1234]", "slurmstepd: [.0]",  "slurmstepd: [12.0] x",
                         "slurmd: [12.0]", "slurmstepd: [12.]",  "slurmstepd: [1x.0]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(stepd_parse_cmdline(bad[i], strlen(bad[i]), job, sizeof(job), step, sizeof(step)),
                         -EINVAL);
    char tiny[2];
    assert_int_equal(stepd_parse_cmdline(a, sizeof(a), tiny, sizeof(tiny), step, sizeof(step)), -EINVAL);
}

static void test_job_cgroup_v1(void **state)
{
    (void)state;
    js_fsroot_t root;
    assert_int_equal(fsroot_open(&root, SLURM "/v2-proc", SLURM "/v1"), 0);
    char path[256];
    /* Debian's multiple-slurmd layout: slurm_NODE, any uid */
    assert_int_equal(jobs_cgroup_find(&root, "17", NULL, "n1", (uid_t)-1, path, sizeof(path)), 0);
    assert_string_equal(path, "/slurm_n1/uid_65534/job_17");
    assert_int_equal(jobs_cgroup_find(&root, "17", "0", "n1", 65534, path, sizeof(path)), 0);
    assert_string_equal(path, "/slurm_n1/uid_65534/job_17/step_0");
    assert_int_equal(jobs_cgroup_find(&root, "17", "batch", "n1", 65534, path, sizeof(path)), 0);
    assert_string_equal(path, "/slurm_n1/uid_65534/job_17/step_batch");
    /* another uid, another node, a step that does not exist */
    assert_int_equal(jobs_cgroup_find(&root, "17", NULL, "n1", 1000, path, sizeof(path)), -ENOENT);
    assert_int_equal(jobs_cgroup_find(&root, "17", NULL, "n2", (uid_t)-1, path, sizeof(path)), -ENOENT);
    assert_int_equal(jobs_cgroup_find(&root, "17", "9", "n1", (uid_t)-1, path, sizeof(path)), -ENOENT);
    /* the single-slurmd layout: slurm */
    assert_int_equal(jobs_cgroup_find(&root, "5", NULL, "anything", 0, path, sizeof(path)), 0);
    assert_string_equal(path, "/slurm/uid_0/job_5");
    assert_int_equal(jobs_cgroup_find(&root, "5/..", NULL, NULL, 0, path, sizeof(path)), -ENOENT);
    char tiny[8];
    assert_int_equal(jobs_cgroup_find(&root, "5", NULL, NULL, 0, tiny, sizeof(tiny)), -ENAMETOOLONG);
    fsroot_close(&root);
}

static void test_job_cgroup_v2(void **state)
{
    (void)state;
    js_fsroot_t root;
    assert_int_equal(fsroot_open(&root, SLURM "/v2-proc", SLURM "/v2"), 0);
    char path[256];
    assert_int_equal(jobs_cgroup_find(&root, "42", NULL, "n1", 1000, path, sizeof(path)), 0);
    assert_string_equal(path, "/system.slice/slurmstepd.scope/job_42");
    assert_int_equal(jobs_cgroup_find(&root, "42", "0", NULL, 1000, path, sizeof(path)), 0);
    assert_string_equal(path, "/system.slice/slurmstepd.scope/job_42/step_0");
    assert_int_equal(jobs_cgroup_find(&root, "43", NULL, "n2", 1000, path, sizeof(path)), 0);
    assert_string_equal(path, "/system.slice/n2_slurmstepd.scope/job_43");
    assert_int_equal(jobs_cgroup_find(&root, "43", NULL, "n1", 1000, path, sizeof(path)), -ENOENT);
    fsroot_close(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_env),     cmocka_unit_test(test_pbs_env),
        cmocka_unit_test(test_oar_env),       cmocka_unit_test(test_nodefile_text),
        cmocka_unit_test(test_hostlist),      cmocka_unit_test(test_stepd_cmdline),
        cmocka_unit_test(test_job_cgroup_v1), cmocka_unit_test(test_job_cgroup_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
