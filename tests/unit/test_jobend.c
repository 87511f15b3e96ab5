/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the end of a batch job's work as a monitor sees it (core/jobend.h), on procfs trees made in a
 * temporary directory: a SLURM batch step whose shell runs a step in the foreground (not over), then only
 * waits for the monitor's launcher srun (over at the second check, not before 0.4 s), the same behind a
 * time(1) wrapper, a shell that reads instead of waiting, another node's batch script (never over here), and
 * PBS and OAR jobs whose processes were seen and are gone. Also the wchan names and /proc/net/tcp parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/jobend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEC 1000000000LL

static char root[256];

static void put(const char *rel, const char *content, size_t len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(content, 1, len, f);
    fclose(f);
}

static void puts_(const char *rel, const char *s)
{
    put(rel, s, strlen(s));
}

/* proc: a process with its stat, status, wchan, environ, cmdline and children. */
static void proc(int pid, const char *comm, char state, int ppid, const char *wchan, int vcsw,
                 const char *environ, size_t envlen, const char *cmdline, size_t cmdlen, const char *children)
{
    char rel[128], text[512];
    snprintf(rel, sizeof(rel), "%d/stat", pid);
    snprintf(text, sizeof(text),
             "%d (%s) %c %d %d %d 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 %d 1000 10 18446744073709551615 1 1 "
             "1 0 0 0 0 "
             "0 0 0 0 0 17 0 0 0 0 0 0 1 1 1 1 1 1 1 0\n",
             pid, comm, state, ppid, pid, pid, 1000 + pid);
    puts_(rel, text);
    snprintf(rel, sizeof(rel), "%d/status", pid);
    snprintf(text, sizeof(text),
             "Name:\t%s\nState:\t%c\nvoluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t7\n", comm,
             state, vcsw);
    puts_(rel, text);
    snprintf(rel, sizeof(rel), "%d/wchan", pid);
    puts_(rel, wchan);
    snprintf(rel, sizeof(rel), "%d/environ", pid);
    put(rel, environ ? environ : "", environ ? envlen : 0);
    snprintf(rel, sizeof(rel), "%d/cmdline", pid);
    put(rel, cmdline ? cmdline : comm, cmdline ? cmdlen : strlen(comm) + 1);
    snprintf(rel, sizeof(rel), "%d/task/%d/children", pid, pid);
    puts_(rel, children);
    char fd[400];
    snprintf(fd, sizeof(fd), "%s/%d/fd", root, pid);
    mkdir(fd, 0755);
}

static void sock(int pid, int fd, unsigned inode)
{
    char link[400], target[64];
    snprintf(link, sizeof(link), "%s/%d/fd/%d", root, pid, fd);
    snprintf(target, sizeof(target), "socket:[%u]", inode);
    unlink(link);
    assert_int_equal(symlink(target, link), 0);
}

static const char stepd_cmd[] = "slurmstepd: [77.batch]";
static const char env_n1[] = "HOME=/home/u\0SLURMD_NODENAME=n1\0SLURM_JOB_ID=77";
static const char tcp[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000:1234 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 555 1 0 100 "
    "0 0 10 0\n"
    "   1: 0100007F:4487 0100007F:E39E 06 00000000:00000000 03:000010DA 00000000     0        0 0 3 0\n";

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/jobscope-test-jobend-%d", (int)getpid());
    mkdir(root, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static js_jobend_t *checker(js_fsroot_t *fr, js_batch_kind_t kind, const char *node)
{
    fr->proc = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    fr->sys = -1;
    assert_true(fr->proc >= 0);
    js_jobend_cfg_t cfg = {.kind = kind,
                           .job = kind == JS_BATCH_SLURM ? "77" : "5.pbs",
                           .node = node,
                           .srun_port = 0x1234,
                           .self = 999};
    js_jobend_t *e = NULL;
    assert_int_equal(jobend_new(fr, &cfg, &e), 0);
    return e;
}

/* the batch step (100), its shell (101), the monitor's srun (102, listening on the port, with its helper 104)
 * and the main step's srun (103); the monitor (999) runs elsewhere */
static void slurm_tree(const char *shell_children, const char *shell_wchan, int shell_vcsw)
{
    puts_("net/tcp", tcp);
    puts_("net/tcp6", "  sl  local_address\n");
    proc(100, "slurmstepd", 'S', 1, "do_epoll_wait", 3, NULL, 0, stepd_cmd, sizeof(stepd_cmd), "101");
    proc(101, "slurm_script", 'S', 100, shell_wchan, shell_vcsw, env_n1, sizeof(env_n1), NULL, 0,
         shell_children);
    proc(102, "srun", 'S', 101, "futex_wait_queue", 40, NULL, 0, NULL, 0, "104");
    sock(102, 5, 555);
    proc(104, "srun", 'S', 102, "pipe_read", 2, NULL, 0, NULL, 0, "");
    proc(103, "srun", 'S', 101, "futex_wait_queue", 9, NULL, 0, NULL, 0, "");
    proc(999, "jobscope", 'S', 500, "do_poll", 12, NULL, 0, NULL, 0, "");
}

static void test_slurm_batch_node(void **state)
{
    (void)state;
    slurm_tree("102 103", "do_wait", 5); /* the main step runs in the foreground */
    js_fsroot_t fr;
    js_jobend_t *e = checker(&fr, JS_BATCH_SLURM, "n1");
    assert_int_equal(jobend_check(e, 1 * SEC), 0);
    assert_int_equal(jobend_batch_node(e), 1);
    assert_int_equal(jobend_check(e, 2 * SEC), 0);
    /* the main step is done: the shell waits for the monitor's srun only */
    slurm_tree("102", "do_wait", 6);
    assert_int_equal(jobend_check(e, 3 * SEC), 0);            /* the first positive check */
    assert_int_equal(jobend_check(e, 3 * SEC + SEC / 10), 0); /* too close to it */
    assert_int_equal(jobend_check(e, 3 * SEC + SEC / 2), 1);  /* the second, 0.5 s later */
    /* work again (a new foreground step), then a zombie child (exited, not reaped yet), which is no work */
    slurm_tree("102 103", "do_wait", 6);
    assert_int_equal(jobend_check(e, 4 * SEC), 0);
    proc(103, "srun", 'Z', 101, "0", 9, NULL, 0, NULL, 0, "");
    assert_int_equal(jobend_check(e, 5 * SEC), 0);
    assert_int_equal(jobend_check(e, 6 * SEC), 1);
    /* a shell that reads instead of waiting is not idle */
    slurm_tree("102", "pipe_read", 6);
    assert_int_equal(jobend_check(e, 7 * SEC), 0);
    assert_int_equal(jobend_check(e, 8 * SEC), 0);
    /* a running shell is not idle */
    slurm_tree("102", "do_wait", 6);
    proc(101, "slurm_script", 'R', 100, "0", 6, env_n1, sizeof(env_n1), NULL, 0, "102");
    assert_int_equal(jobend_check(e, 9 * SEC), 0);
    assert_int_equal(jobend_check(e, 10 * SEC), 0);
    jobend_free(e);
    close(fr.proc);
}

static void test_slurm_wrapper(void **state)
{
    (void)state;
    /* the batch script times another: slurmstepd -> time (100's child 105) -> bash (101) -> srun */
    slurm_tree("102", "do_wait", 5);
    proc(100, "slurmstepd", 'S', 1, "do_epoll_wait", 3, NULL, 0, stepd_cmd, sizeof(stepd_cmd), "105");
    proc(105, "time", 'S', 100, "do_wait", 2, env_n1, sizeof(env_n1), NULL, 0, "101");
    proc(101, "bash", 'S', 105, "do_wait", 5, env_n1, sizeof(env_n1), NULL, 0, "102 103");
    js_fsroot_t fr;
    js_jobend_t *e = checker(&fr, JS_BATCH_SLURM, "n1");
    assert_int_equal(jobend_check(e, 1 * SEC), 0);
    assert_int_equal(jobend_check(e, 2 * SEC), 0); /* bash still runs the main step's srun */
    proc(101, "bash", 'S', 105, "do_wait", 5, env_n1, sizeof(env_n1), NULL, 0, "102");
    assert_int_equal(jobend_check(e, 3 * SEC), 0);
    assert_int_equal(jobend_check(e, 4 * SEC), 1);
    /* time(1) with a second child is not only waiting */
    proc(105, "time", 'S', 100, "do_wait", 2, env_n1, sizeof(env_n1), NULL, 0, "101 106");
    proc(106, "sleep", 'S', 105, "hrtimer_nanosleep", 1, NULL, 0, NULL, 0, "");
    assert_int_equal(jobend_check(e, 5 * SEC), 0);
    assert_int_equal(jobend_check(e, 6 * SEC), 0);
    jobend_free(e);
    close(fr.proc);
}

static void test_slurm_other_node(void **state)
{
    (void)state;
    slurm_tree("102", "do_wait", 5);
    js_fsroot_t fr;
    js_jobend_t *e = checker(&fr, JS_BATCH_SLURM, "n2"); /* the script runs on n1 */
    for (int i = 1; i < 5; i++)
        assert_int_equal(jobend_check(e, i * SEC), 0);
    assert_int_equal(jobend_batch_node(e), 0);
    jobend_free(e);
    close(fr.proc);
}

static void test_pbs(void **state)
{
    (void)state;
    static const char env_job[] = "PBS_JOBID=5.pbs\0HOME=/h";
    static const char env_other[] = "PBS_JOBID=6.pbs";
    /* the batch shell 200 (an ancestor of the monitor 999), the work 201, another job's process 300 */
    proc(200, "bash", 'S', 1, "do_wait", 4, env_job, sizeof(env_job), NULL, 0, "999 201");
    proc(999, "jobscope", 'S', 200, "do_poll", 12, env_job, sizeof(env_job), NULL, 0, "");
    proc(201, "stress-ng", 'R', 200, "0", 1, env_job, sizeof(env_job), NULL, 0, "");
    proc(300, "python3", 'R', 1, "0", 1, env_other, sizeof(env_other), NULL, 0, "");
    js_fsroot_t fr;
    js_jobend_t *e = checker(&fr, JS_BATCH_PBS, "vm");
    assert_int_equal(jobend_check(e, 1 * SEC), 0);
    assert_int_equal(jobend_check(e, 2 * SEC), 0);
    /* the work is gone (another job's process stays): over at the second check */
    char path[300];
    snprintf(path, sizeof(path), "rm -rf '%s/201'", root);
    assert_int_equal(system(path), 0);
    proc(200, "bash", 'S', 1, "do_wait", 4, env_job, sizeof(env_job), NULL, 0, "999");
    assert_int_equal(jobend_check(e, 3 * SEC), 0);
    assert_int_equal(jobend_check(e, 4 * SEC), 1);
    jobend_free(e);
    close(fr.proc);
}

static void test_pbs_nothing_seen(void **state)
{
    (void)state;
    static const char env_job[] = "PBS_JOBID=5.pbs";
    proc(200, "bash", 'S', 1, "do_wait", 4, env_job, sizeof(env_job), NULL, 0, "999");
    proc(999, "jobscope", 'S', 200, "do_poll", 12, env_job, sizeof(env_job), NULL, 0, "");
    js_fsroot_t fr;
    js_jobend_t *e = checker(&fr, JS_BATCH_PBS, "vm");
    for (int i = 1; i < 5; i++) /* no work seen yet: the monitor started first, keep waiting */
        assert_int_equal(jobend_check(e, i * SEC), 0);
    jobend_free(e);
    close(fr.proc);
}

static void test_oar(void **state)
{
    (void)state;
    static const char env_job[] = "OAR_JOB_ID=5.pbs";
    proc(200, "bash", 'S', 1, "do_wait", 4, env_job, sizeof(env_job), NULL, 0, "999 201");
    proc(999, "jobscope", 'S', 200, "do_poll", 12, env_job, sizeof(env_job), NULL, 0, "");
    proc(201, "app", 'R', 200, "0", 1, env_job, sizeof(env_job), NULL, 0, "");
    js_fsroot_t fr;
    js_jobend_t *e = checker(&fr, JS_BATCH_OAR, "vm");
    assert_int_equal(jobend_check(e, 1 * SEC), 0);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/201'", root);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(jobend_check(e, 2 * SEC), 0);
    assert_int_equal(jobend_check(e, 3 * SEC), 1);
    jobend_free(e);
    close(fr.proc);
}

static void test_parsers(void **state)
{
    (void)state;
    assert_true(jobend_wchan_waits("do_wait"));
    assert_true(jobend_wchan_waits("do_wait.part.0"));
    assert_true(jobend_wchan_waits("kernel_wait4"));
    assert_false(jobend_wchan_waits("do_waitx"));
    assert_false(jobend_wchan_waits("pipe_read"));
    assert_false(jobend_wchan_waits("0"));
    assert_int_equal(jobend_listen_inode(tcp, 0x1234), 555);
    assert_int_equal(jobend_listen_inode(tcp, 0x4487), 0); /* not listening (06: TIME_WAIT) */
    assert_int_equal(jobend_listen_inode("  sl  local\n", 80), 0);
    assert_int_equal(jobend_listen_inode("", 80), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_slurm_batch_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_wrapper, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_other_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pbs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pbs_nothing_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oar, setup, teardown),
        cmocka_unit_test(test_parsers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
