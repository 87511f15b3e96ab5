/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the SPANK plugin's pure part (src/spank/spank_config.c), built with or without SLURM: the
 * plugstack.conf and --jobscope=OPTIONS items (users cannot set the binary or the stop timeout, a bad item is
 * reported and skipped while the others apply, the configuration is untouched by a rejected item), the path
 * patterns, and the monitor's exact argv and filtered environment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "spank/spank_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static js_spank_job_t sample_job(void)
{
    js_spank_job_t job;
    memset(&job, 0, sizeof(job));
    job.job_id = 1234;
    job.step_id = 0;
    snprintf(job.node, sizeof(job.node), "n2");
    job.node_id = 1;
    snprintf(job.user, sizeof(job.user), "alice");
    job.uid = 1001;
    snprintf(job.submit_dir, sizeof(job.submit_dir), "/home/alice/run");
    job.stepd_pid = 4242;
    return job;
}

static void test_defaults(void **state)
{
    (void)state;
    js_spank_config_t c;
    spank_config_defaults(&c, "/usr/bin/jobscope");
    assert_string_equal(c.bin, "/usr/bin/jobscope");
    assert_string_equal(c.dir, "");
    assert_string_equal(c.interval, "");
    assert_int_equal(c.report, 0);
    assert_int_equal(c.batch, 0);
    assert_int_equal(c.stop_timeout_ns, 10000000000LL);
}

static void test_admin_items(void **state)
{
    (void)state;
    js_spank_config_t c;
    char err[256];
    spank_config_defaults(&c, "/usr/bin/jobscope");
    assert_int_equal(spank_config_apply(&c, "bin=/opt/js/bin/jobscope", 1, err, sizeof(err)), 0);
    assert_int_equal(spank_config_apply(&c, "dir=/scratch/%u/mon", 1, err, sizeof(err)), 0);
    assert_int_equal(spank_config_apply(&c, "stop_timeout=2.5s", 1, err, sizeof(err)), 0);
    assert_int_equal(spank_config_apply(&c, "interval=500ms", 1, err, sizeof(err)), 0);
    assert_string_equal(c.bin, "/opt/js/bin/jobscope");
    assert_string_equal(c.dir, "/scratch/%u/mon");
    assert_string_equal(c.interval, "500ms");
    assert_int_equal(c.stop_timeout_ns, 2500000000LL);

    assert_int_equal(spank_config_apply(&c, "bin=jobscope", 1, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "absolute"));
    assert_string_equal(c.bin, "/opt/js/bin/jobscope");
    assert_int_equal(spank_config_apply(&c, "stop_timeout=11m", 1, err, sizeof(err)), -EINVAL);
    assert_int_equal(spank_config_apply(&c, "stop_timeout=soon", 1, err, sizeof(err)), -EINVAL);
    assert_int_equal(c.stop_timeout_ns, 2500000000LL);
}

static void test_user_items(void **state)
{
    (void)state;
    js_spank_config_t c;
    char err[256];
    spank_config_defaults(&c, "/usr/bin/jobscope");
    assert_int_equal(spank_config_apply(&c, "report", 0, err, sizeof(err)), 0);
    assert_int_equal(c.report, 1);
    assert_int_equal(spank_config_apply(&c, "noreport", 0, err, sizeof(err)), 0);
    assert_int_equal(c.report, 0);
    assert_int_equal(spank_config_apply(&c, "batch", 0, err, sizeof(err)), 0);
    assert_int_equal(c.batch, 1);
    assert_int_equal(c.report, 0);
    assert_int_equal(spank_config_apply(&c, "log=%j.log", 0, err, sizeof(err)), 0);
    assert_string_equal(c.log, "%j.log");

    /* a user cannot choose what runs or how long the step's end waits */
    assert_int_equal(spank_config_apply(&c, "bin=/tmp/evil", 0, err, sizeof(err)), -EPERM);
    assert_non_null(strstr(err, "plugstack.conf"));
    assert_string_equal(c.bin, "/usr/bin/jobscope");
    assert_int_equal(spank_config_apply(&c, "stop_timeout=1s", 0, err, sizeof(err)), -EPERM);

    assert_int_equal(spank_config_apply(&c, "intervl=5", 0, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "unknown option 'intervl'"));
    assert_int_equal(spank_config_apply(&c, "interval=5ms", 0, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "out of range"));
    assert_int_equal(spank_config_apply(&c, "interval=fast", 0, err, sizeof(err)), -EINVAL);
    assert_int_equal(spank_config_apply(&c, "interval=", 0, err, sizeof(err)), -EINVAL);
    assert_int_equal(spank_config_apply(&c, "interval", 0, err, sizeof(err)), -EINVAL);
    assert_int_equal(spank_config_apply(&c, "dir", 0, err, sizeof(err)), -EINVAL);
    assert_int_equal(spank_config_apply(&c, "report=yes", 0, err, sizeof(err)), -EINVAL);
    assert_int_equal(spank_config_apply(&c, "=x", 0, err, sizeof(err)), -EINVAL);
    assert_string_equal(c.interval, "");
    assert_string_equal(c.dir, "");

    char longdir[JS_SPANK_PATH_MAX + 16];
    memset(longdir, 'a', sizeof(longdir) - 1);
    longdir[sizeof(longdir) - 1] = '\0';
    memcpy(longdir, "dir=/", 5);
    assert_int_equal(spank_config_apply(&c, longdir, 0, err, sizeof(err)), -ENAMETOOLONG);
    assert_string_equal(c.dir, "");
}

static void test_option_lists(void **state)
{
    (void)state;
    js_spank_config_t c;
    char err[512];
    spank_config_defaults(&c, "/usr/bin/jobscope");
    assert_int_equal(spank_config_options(&c, NULL, 0, err, sizeof(err)), 0);
    assert_int_equal(spank_config_options(&c, "", 0, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    assert_int_equal(spank_config_options(&c, "interval=0.5,dir=mon/%j,,report", 0, err, sizeof(err)), 0);
    assert_string_equal(c.interval, "0.5");
    assert_string_equal(c.dir, "mon/%j");
    assert_int_equal(c.report, 1);

    /* bad items are skipped, reported together, and the good ones between them still apply */
    spank_config_defaults(&c, "/usr/bin/jobscope");
    assert_int_equal(spank_config_options(&c, "bogus,interval=2s,bin=/x,dir=/d", 0, err, sizeof(err)), 2);
    assert_non_null(strstr(err, "unknown option 'bogus'"));
    assert_non_null(strstr(err, "; bin can only be set in plugstack.conf"));
    assert_string_equal(c.interval, "2s");
    assert_string_equal(c.dir, "/d");
    assert_string_equal(c.bin, "/usr/bin/jobscope");
}

static void test_step_names(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(spank_step_name(0, b, sizeof(b)), "0");
    assert_string_equal(spank_step_name(17, b, sizeof(b)), "17");
    assert_string_equal(spank_step_name(JS_SPANK_STEP_BATCH, b, sizeof(b)), "batch");
    assert_string_equal(spank_step_name(JS_SPANK_STEP_EXTERN, b, sizeof(b)), "extern");
    assert_string_equal(spank_step_name(JS_SPANK_STEP_INTERACTIVE, b, sizeof(b)), "interactive");
}

static void test_expand(void **state)
{
    (void)state;
    js_spank_job_t job = sample_job();
    char out[64];
    assert_int_equal(spank_expand("/scratch/%u/%j/%n.%s/100%%", &job, out, sizeof(out)), 0);
    assert_string_equal(out, "/scratch/alice/1234/n2.0/100%");
    job.user[0] = '\0';
    job.step_id = JS_SPANK_STEP_BATCH;
    assert_int_equal(spank_expand("%u-%s", &job, out, sizeof(out)), 0);
    assert_string_equal(out, "1001-batch");
    assert_int_equal(spank_expand("bad%x", &job, out, sizeof(out)), -EINVAL);
    assert_int_equal(spank_expand("trailing%", &job, out, sizeof(out)), -EINVAL);
    char small[8];
    assert_int_equal(spank_expand("/1234567", &job, small, sizeof(small)), -ENAMETOOLONG);
    assert_int_equal(spank_expand("/123456", &job, small, sizeof(small)), 0);
    assert_int_equal(spank_expand("%j%j", &job, small, sizeof(small)), -ENAMETOOLONG);
}

static size_t count(char *const *v)
{
    size_t n = 0;
    while (v[n])
        n++;
    return n;
}

static int has(char *const *v, const char *s)
{
    for (size_t i = 0; v[i]; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

static void test_launch(void **state)
{
    (void)state;
    static js_spank_launch_t l;
    js_spank_config_t c;
    char err[256];
    js_spank_job_t job = sample_job();
    spank_config_defaults(&c, "/usr/bin/jobscope");
    char *env[] = {"SLURM_JOB_ID=1234",
                   "SLURMD_NODENAME=n1",
                   "SLURM_NODEID=0",
                   "HOME=/home/alice",
                   "PATH=/home/alice/bin",
                   "LD_PRELOAD=/tmp/x.so",
                   "SECRET=1",
                   "TMPDIR=/tmp/job1234",
                   "USER=alice",
                   NULL};

    /* defaults: a folder per step in the submit folder, jobscope's own interval, no report */
    assert_int_equal(spank_launch_build(&l, &c, &job, env, err, sizeof(err)), 0);
    const char *want[] = {"/usr/bin/jobscope",
                          "job",
                          "-d",
                          "/home/alice/run/jobscope-1234.0",
                          "--job",
                          "1234",
                          "--step",
                          "0",
                          "--node",
                          "n2",
                          "--stepd-pid",
                          "4242"};
    assert_int_equal(count(l.argv), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(l.argv[i], want[i]);
    assert_string_equal(l.dir, "/home/alice/run/jobscope-1234.0");
    assert_string_equal(l.log, "");

    /* the environment: SLURM*, a few of the user's, a fixed PATH; nothing else (no LD_PRELOAD) */
    assert_true(has(l.envp, "PATH=/usr/local/bin:/usr/bin:/bin"));
    assert_true(has(l.envp, "JOBSCOPE_SPANK=1"));
    assert_true(has(l.envp, "SLURM_JOB_ID=1234"));
    assert_true(has(l.envp, "SLURMD_NODENAME=n2")); /* this node's, not the stale copy */
    assert_false(has(l.envp, "SLURMD_NODENAME=n1"));
    assert_true(has(l.envp, "SLURM_NODEID=1"));
    assert_false(has(l.envp, "SLURM_NODEID=0"));
    assert_true(has(l.envp, "HOME=/home/alice"));
    assert_true(has(l.envp, "TMPDIR=/tmp/job1234"));
    assert_true(has(l.envp, "USER=alice"));
    assert_false(has(l.envp, "PATH=/home/alice/bin"));
    assert_false(has(l.envp, "LD_PRELOAD=/tmp/x.so"));
    assert_false(has(l.envp, "SECRET=1"));
    assert_int_equal(count(l.envp), 8);

    /* every option, an absolute pattern folder and a relative log */
    assert_int_equal(spank_config_options(&c, "interval=250ms,report,dir=/scratch/%u/%j,log=mon-%n.log", 0,
                                          err, sizeof(err)),
                     0);
    job.step_id = JS_SPANK_STEP_BATCH;
    assert_int_equal(spank_launch_build(&l, &c, &job, NULL, err, sizeof(err)), 0);
    const char *want2[] = {"/usr/bin/jobscope",
                           "job",
                           "-d",
                           "/scratch/alice/1234",
                           "--interval",
                           "250ms",
                           "--report",
                           "--job",
                           "1234",
                           "--step",
                           "batch",
                           "--node",
                           "n2",
                           "--stepd-pid",
                           "4242"};
    assert_int_equal(count(l.argv), sizeof(want2) / sizeof(want2[0]));
    for (size_t i = 0; i < sizeof(want2) / sizeof(want2[0]); i++)
        assert_string_equal(l.argv[i], want2[i]);
    assert_string_equal(l.log, "/home/alice/run/mon-n2.log");
    job.node_id = UINT32_MAX; /* unknown: no SLURM_NODEID */
    assert_int_equal(spank_launch_build(&l, &c, &job, NULL, err, sizeof(err)), 0);
    assert_int_equal(count(l.envp), 3);

    /* a relative folder needs the submit folder; a bad pattern is named */
    job.submit_dir[0] = '\0';
    assert_int_equal(spank_config_apply(&c, "dir=mon", 0, err, sizeof(err)), 0);
    assert_int_equal(spank_launch_build(&l, &c, &job, NULL, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "relative"));
    assert_int_equal(spank_config_apply(&c, "dir=/x/%q", 0, err, sizeof(err)), 0);
    assert_int_equal(spank_launch_build(&l, &c, &job, NULL, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "%-sequence"));
    c.bin[0] = '\0';
    assert_int_equal(spank_config_apply(&c, "dir=/x", 0, err, sizeof(err)), 0);
    assert_int_equal(spank_launch_build(&l, &c, &job, NULL, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "bin="));
}

static void test_launch_env_limits(void **state)
{
    (void)state;
    static js_spank_launch_t l;
    static char big[JS_SPANK_ENV_BYTES];
    js_spank_config_t c;
    char err[256];
    js_spank_job_t job = sample_job();
    spank_config_defaults(&c, "/usr/bin/jobscope");
    memset(big, 'x', sizeof(big) - 1);
    memcpy(big, "SLURM_BIG=", 10);
    char *env[] = {"SLURM_A=1", big, NULL};
    assert_int_equal(spank_launch_build(&l, &c, &job, env, err, sizeof(err)), -E2BIG);
    assert_non_null(strstr(err, "environment"));
}

static void test_done_marker(void **state)
{
    (void)state;
    js_spank_job_t job = sample_job();
    char out[64];
    assert_int_equal(spank_done_marker("/scratch/mon", &job, out, sizeof(out)), 0);
    assert_string_equal(out, "/scratch/mon/.1234-n2.done");
    char small[16];
    assert_int_equal(spank_done_marker("/scratch/mon", &job, small, sizeof(small)), -ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),    cmocka_unit_test(test_admin_items),
        cmocka_unit_test(test_user_items),  cmocka_unit_test(test_option_lists),
        cmocka_unit_test(test_step_names),  cmocka_unit_test(test_expand),
        cmocka_unit_test(test_launch),      cmocka_unit_test(test_launch_env_limits),
        cmocka_unit_test(test_done_marker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
