/* SPDX-License-Identifier: MIT
 *
 * Unit tests of cgroup support: the mountinfo and cgroup-file parsers on strings; discovery and resolution on
 * the fixture trees tests/fixtures/cgroup-v1 (RHEL 7 / SLURM: cpu,cpuacct co-mounted, a task cgroup under
 * job_42), cgroup-v2 (systemd, an older kernel without memory.peak) and cgroup-hybrid (this development
 * machine's layout: v1 controllers and an empty cgroup2 at .../unified); the `cgroup` source's collect() and
 * inventory on them; run-cgroup creation and removal on a scratch tree; and the `cgroup` model part on
 * hand-built samples (a run cgroup counting from 0, a watched one from its first sample, a 32-bit wrap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sample.h"
#include "model/model.h"
#include "model/part_cgroup.h"
#include "sources/cgroup.h"
#include "sys/cgroupfs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assert_value.h"
#include "sources/registry.h"
#include "parts_summary.h"

/* ---- helpers ---- */

typedef struct {
    js_fsroot_t root;
    js_cgroup_t *cg;
} fx_t;

static void fx_open(fx_t *fx, const char *name)
{
    char proc[512], sys[512];
    snprintf(proc, sizeof(proc), "%s/%s/proc", FIXTURES, name);
    snprintf(sys, sizeof(sys), "%s/%s/sys", FIXTURES, name);
    assert_int_equal(fsroot_open(&fx->root, proc, sys), 0);
    fx->cg = NULL;
}

static void fx_close(fx_t *fx)
{
    cgroupfs_free(fx->cg);
    fsroot_close(&fx->root);
}

static int hier_of_mount(const js_cg_mounts_t *m, const char *mount)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->h[i].mount, mount) == 0)
            return (int)i;
    return -1;
}

/* the inventory value of `key`, or NULL */
static const char *inv_get(const js_rows_t *inv, const char *key)
{
    for (size_t i = 0; i < inv->nrows; i++) {
        const js_value_t *r = rows_row(inv, i);
        if (r[INV_KEY].present && strcmp(rows_str(inv, &r[INV_KEY]), key) == 0)
            return r[INV_VALUE].present ? rows_str(inv, &r[INV_VALUE]) : "";
    }
    return NULL;
}

/* ---- parsers ---- */

static void test_mountinfo_lines(void **state)
{
    char root[256], mnt[256];
    int v;
    unsigned c;
    assert_int_equal(
        cgroupfs_parse_mountinfo_line("28 25 0:24 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:11 - "
                                      "cgroup cgroup rw,cpu,cpuacct",
                                      &v, &c, root, mnt, sizeof(root)),
        0);
    assert_int_equal(v, 1);
    assert_int_equal(c, (1u << JS_CG_CPU) | (1u << JS_CG_CPUACCT));
    assert_string_equal(mnt, "/sys/fs/cgroup/cpu,cpuacct");
    assert_string_equal(root, "/");
    /* no optional fields, escaped blank in the mount point, a bind-mounted root */
    assert_int_equal(cgroupfs_parse_mountinfo_line("40 30 0:37 /docker/ab /my\\040cg rw - cgroup2 cgroup2 rw",
                                                   &v, &c, root, mnt, sizeof(root)),
                     0);
    assert_int_equal(v, 2);
    assert_int_equal(c, 0);
    assert_string_equal(mnt, "/my cg");
    assert_string_equal(root, "/docker/ab");
    /* a named hierarchy carries no controller; blkio is the v1 name of io */
    assert_int_equal(cgroupfs_parse_mountinfo_line("39 30 0:36 / /sys/fs/cgroup/systemd rw - cgroup cgroup "
                                                   "rw,xattr,name=systemd",
                                                   &v, &c, root, mnt, sizeof(root)),
                     0);
    assert_int_equal(c, 0);
    assert_int_equal(cgroupfs_v1_ctrls("rw,blkio", 8), 1u << JS_CG_IO);
    assert_int_equal(cgroupfs_v1_ctrls("rw,io", 5), 0);
    assert_int_equal(cgroupfs_parse_mountinfo_line("30 20 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw", &v, &c,
                                                   root, mnt, sizeof(root)),
                     -ENOENT);
    assert_int_equal(cgroupfs_parse_mountinfo_line("30 20 0:27 / /x rw", &v, &c, root, mnt, sizeof(root)),
                     -EINVAL);
    assert_int_equal(cgroupfs_parse_mountinfo_line("30 20 0:27 / /a/very/long/mount rw - cgroup2 cgroup2 rw",
                                                   &v, &c, root, mnt, 8),
                     -ENAMETOOLONG);
}

static void test_parse_cpu(void **state)
{
    js_value_t row[CG__MAX] = {0};
    cgroup_parse_cpu_stat("usage_usec 7000000\nuser_usec 5000000\nsystem_usec 2000000\nnr_periods 10\n"
                          "nr_throttled 4\nthrottled_usec 250\nnr_bursts 0\n",
                          row);
    assert_ival(row[CG_USAGE_NS], 7000000000LL);
    assert_ival(row[CG_USER_NS], 5000000000LL);
    assert_ival(row[CG_SYSTEM_NS], 2000000000LL);
    assert_ival(row[CG_PERIODS], 10);
    assert_ival(row[CG_THROTTLED], 4);
    assert_ival(row[CG_THROTTLED_NS], 250000);
    js_value_t v1[CG__MAX] = {0};
    cgroup_parse_cpu_stat("nr_periods 500\nnr_throttled 40\nthrottled_time 1500000000\n", v1);
    assert_ival(v1[CG_THROTTLED_NS], 1500000000LL);
    assert_missing(v1[CG_USAGE_NS]);
    cgroup_parse_cpuacct_stat("user 1000\nsystem 234\n", v1);
    assert_ival(v1[CG_USER_TICKS], 1000);
    assert_ival(v1[CG_SYSTEM_TICKS], 234);
    js_value_t x = {0};
    assert_int_equal(cgroup_parse_value("max\n", &x), -ENODATA);
    assert_missing(x);
    assert_int_equal(cgroup_parse_value("nope", &x), -EINVAL);
    assert_int_equal(cgroup_parse_value("18446744073709551615\n", &x), 0);
    assert_true(x.present && (uint64_t)x.i == UINT64_MAX);
}

static void test_parse_memory(void **state)
{
    js_value_t m[CGM__MAX] = {0};
    /* v1: the hierarchical total_* keys, matched whole (total_rss_huge is not total_rss) */
    cgroup_parse_memory_stat("cache 1\nrss 2\ntotal_rss_huge 99\ntotal_cache 805306368\ntotal_rss 268435456\n"
                             "total_shmem 8192\ntotal_swap 1048576\n",
                             1, m);
    assert_ival(m[CGM_ANON_BYTES], 268435456);
    assert_ival(m[CGM_FILE_BYTES], 805306368);
    assert_ival(m[CGM_SHMEM_BYTES], 8192);
    assert_ival(m[CGM_SWAP_BYTES], 1048576);
    assert_missing(m[CGM_SOCK_BYTES]);
    js_value_t m2[CGM__MAX] = {0};
    cgroup_parse_memory_stat(
        "anon 10\nfile 20\nkernel 30\nkernel_stack 31\nsock 40\nshmem 50\nfile_mapped 60\n", 2, m2);
    assert_ival(m2[CGM_ANON_BYTES], 10);
    assert_ival(m2[CGM_FILE_BYTES], 20);
    assert_ival(m2[CGM_KERNEL_BYTES], 30);
    assert_ival(m2[CGM_SOCK_BYTES], 40);
    assert_ival(m2[CGM_SHMEM_BYTES], 50);
    assert_missing(m2[CGM_SWAP_BYTES]);
    cgroup_parse_memory_events("low 0\nhigh 12\nmax 5\noom 2\noom_kill 1\noom_group_kill 7\n", m2);
    assert_ival(m2[CGM_HIGH_COUNT], 12);
    assert_ival(m2[CGM_MAX_COUNT], 5);
    assert_ival(m2[CGM_OOM_COUNT], 2);
    assert_ival(m2[CGM_OOM_KILL_COUNT], 1);
    cgroup_parse_oom_control("oom_kill_disable 0\nunder_oom 1\noom_kill 3\n", m);
    assert_ival(m[CGM_UNDER_OOM], 1);
    assert_ival(m[CGM_OOM_KILL_COUNT], 3);
}

static void test_parse_io_psi(void **state)
{
    js_rows_t io;
    rows_init(&io, &table_cgroup_io);
    assert_int_equal(
        cgroup_parse_io_stat("259:0 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n"
                             "8:16 rbytes=90112 wbytes=0 rios=22 wios=0\n",
                             &io),
        0);
    assert_int_equal(io.nrows, 2);
    js_value_t *r = rows_row(&io, 0);
    assert_ival(r[CGIO_MAJOR], 259);
    assert_ival(r[CGIO_MINOR], 0);
    assert_ival(r[CGIO_WRITE_BYTES], 314773504);
    assert_ival(r[CGIO_WRITE_IOS], 353);
    r = rows_row(&io, 1);
    assert_ival(r[CGIO_READ_BYTES], 90112);
    assert_missing(r[CGIO_DISCARD_BYTES]); /* before 4.19 */
    rows_clear(&io);
    assert_int_equal(
        cgroup_parse_blkio("8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 1\n8:0 Total 12288\nTotal 12288\n",
                           "8:0 Read 1\n8:0 Write 2\n8:0 Total 3\nTotal 3\n", &io),
        0);
    assert_int_equal(io.nrows, 1);
    r = rows_row(&io, 0);
    assert_ival(r[CGIO_READ_BYTES], 4096);
    assert_ival(r[CGIO_WRITE_BYTES], 8192);
    assert_ival(r[CGIO_READ_IOS], 1);
    assert_ival(r[CGIO_WRITE_IOS], 2);
    rows_clear(&io);
    assert_int_equal(cgroup_parse_blkio("Total 0\n", NULL, &io), 0);
    assert_int_equal(io.nrows, 0);
    rows_free(&io);

    js_value_t row[CG__MAX] = {0};
    assert_int_equal(cgroup_parse_pressure("some avg10=1.00 avg60=0.00 avg300=0.00 total=1234\n"
                                           "full avg10=0.00 avg60=0.00 avg300=0.00 total=567\n",
                                           CG_PSI_MEMORY_SOME_US, row),
                     0);
    assert_ival(row[CG_PSI_MEMORY_SOME_US], 1234);
    assert_ival(row[CG_PSI_MEMORY_FULL_US], 567);
    assert_int_equal(
        cgroup_parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n", CG_PSI_CPU_SOME_US, row),
        0);
    assert_ival(row[CG_PSI_CPU_SOME_US], 9);
    assert_missing(row[CG_PSI_CPU_FULL_US]); /* cpu "full" only from 5.13 */
    assert_int_equal(cgroup_parse_pressure("", CG_PSI_IO_SOME_US, row), -EINVAL);
}

/* ---- discovery and resolution ---- */

static void test_mounts(void **state)
{
    fx_t fx;
    js_cg_mounts_t m;

    fx_open(&fx, "cgroup-v1");
    assert_int_equal(cgroupfs_mounts(&fx.root, &m), 0);
    assert_int_equal(m.n, 5); /* cpu,cpuacct memory cpuset blkio pids; no systemd, freezer, devices */
    assert_int_equal(m.unified, -1);
    int cc = hier_of_mount(&m, "/sys/fs/cgroup/cpu,cpuacct");
    assert_true(cc >= 0);
    assert_int_equal(m.by_ctrl[JS_CG_CPU], cc);
    assert_int_equal(m.by_ctrl[JS_CG_CPUACCT], cc);
    assert_int_equal(m.by_ctrl[JS_CG_IO], hier_of_mount(&m, "/sys/fs/cgroup/blkio"));
    assert_int_equal(m.by_ctrl[JS_CG_PSI], -1);
    cgroupfs_mounts_close(&m);
    fx_close(&fx);

    fx_open(&fx, "cgroup-v2");
    assert_int_equal(cgroupfs_mounts(&fx.root, &m), 0);
    assert_int_equal(m.n, 1);
    assert_int_equal(m.unified, 0);
    for (int c = 0; c < JS_CG_CTRL_MAX; c++)
        assert_int_equal(m.by_ctrl[c], 0);
    cgroupfs_mounts_close(&m);
    fx_close(&fx);

    fx_open(&fx, "cgroup-hybrid");
    assert_int_equal(cgroupfs_mounts(&fx.root, &m), 0);
    assert_int_equal(m.n, 7); /* cpu cpuacct cpuset memory blkio pids unified */
    int u = hier_of_mount(&m, "/sys/fs/cgroup/unified");
    assert_int_equal(m.unified, u);
    assert_int_equal(m.h[u].version, 2);
    /* each controller from where it is mounted: CPU usage from v1 cpuacct, PSI from the v2 mount */
    assert_int_equal(m.by_ctrl[JS_CG_CPUACCT], hier_of_mount(&m, "/sys/fs/cgroup/cpuacct"));
    assert_int_equal(m.by_ctrl[JS_CG_MEMORY], hier_of_mount(&m, "/sys/fs/cgroup/memory"));
    assert_int_equal(m.by_ctrl[JS_CG_PSI], u);
    cgroupfs_mounts_close(&m);
    fx_close(&fx);
}

static void test_open_pid_v1(void **state)
{
    fx_t fx;
    char buf[512], why[256] = "";
    fx_open(&fx, "cgroup-v1");
    assert_int_equal(cgroupfs_open_pid(&fx.root, 4242, &fx.cg, why, sizeof(why)), 0);
    assert_string_equal(cgroupfs_version_name(fx.cg), "v1");
    int h = cgroupfs_hier(fx.cg, JS_CG_MEMORY);
    assert_true(h >= 0);
    assert_string_equal(fx.cg->path[h], "/slurm/uid_1000/job_42/step_0/task_0");
    assert_string_equal(cgroupfs_describe(fx.cg, h, buf, sizeof(buf)),
                        "/sys/fs/cgroup/memory/slurm/uid_1000/job_42/step_0/task_0");
    assert_string_equal(cgroupfs_main_path(fx.cg, buf, sizeof(buf)),
                        "/sys/fs/cgroup/memory/slurm/uid_1000/job_42/step_0/task_0");
    h = cgroupfs_hier(fx.cg, JS_CG_CPUSET);
    assert_string_equal(fx.cg->path[h], "/slurm/uid_1000/job_42/step_0");
    /* ancestors: the job's quota two levels up; the mount's root is the end */
    ssize_t n = cgroupfs_read_up(fx.cg, JS_CG_CPU, 2, "cpu.cfs_quota_us", buf, sizeof(buf));
    assert_true(n > 0);
    assert_string_equal(buf, "250000\n");
    assert_true(cgroupfs_read_up(fx.cg, JS_CG_CPU, 5, "cpu.cfs_quota_us", buf, sizeof(buf)) > 0);
    assert_int_equal(cgroupfs_read_up(fx.cg, JS_CG_CPU, 6, "cpu.cfs_quota_us", buf, sizeof(buf)), -ERANGE);
    assert_int_equal(cgroupfs_read_up(fx.cg, JS_CG_PSI, 0, "cpu.pressure", buf, sizeof(buf)), -ENOENT);
    fx_close(&fx);

    fx_open(&fx, "cgroup-v1");
    assert_int_equal(cgroupfs_open_pid(&fx.root, 99999, &fx.cg, why, sizeof(why)), -ESRCH);
    assert_non_null(strstr(why, "99999/cgroup"));
    fx_close(&fx);
}

static void test_open_path(void **state)
{
    fx_t fx;
    char why[256] = "";
    js_cg_pids_t pids = {0};
    fx_open(&fx, "cgroup-v1");
    /* a directory under one mount: the same cgroup path in every other hierarchy that has it */
    assert_int_equal(
        cgroupfs_open_path(&fx.root, "/sys/fs/cgroup/memory/slurm/uid_1000/job_42", &fx.cg, why, sizeof(why)),
        0);
    assert_string_equal(fx.cg->path[cgroupfs_hier(fx.cg, JS_CG_MEMORY)], "/slurm/uid_1000/job_42");
    assert_true(cgroupfs_hier(fx.cg, JS_CG_CPUACCT) >= 0);
    assert_true(cgroupfs_hier(fx.cg, JS_CG_PIDS) >= 0);
    assert_true(cgroupfs_hier(fx.cg, JS_CG_IO) >= 0);
    /* its processes live in the task cgroup below it */
    assert_int_equal(cgroupfs_pids(fx.cg, false, &pids), 0);
    assert_int_equal(pids.n, 0);
    assert_int_equal(cgroupfs_pids(fx.cg, true, &pids), 0);
    assert_int_equal(pids.n, 2);
    assert_int_equal(pids.pid[0], 4242);
    assert_int_equal(pids.pid[1], 4243);
    cgroupfs_free(fx.cg);
    /* as /proc/PID/cgroup shows it */
    fx.cg = NULL;
    assert_int_equal(
        cgroupfs_open_path(&fx.root, "/slurm/uid_1000/job_42/step_0/task_0", &fx.cg, why, sizeof(why)), 0);
    assert_true(cgroupfs_hier(fx.cg, JS_CG_IO) >= 0);
    cgroupfs_free(fx.cg);
    fx.cg = NULL;
    assert_int_equal(cgroupfs_open_path(&fx.root, "/slurm/uid_1000/job_43", &fx.cg, why, sizeof(why)),
                     -ENOENT);
    assert_non_null(strstr(why, "job_43"));
    assert_int_equal(cgroupfs_open_path(&fx.root, "/slurm/../etc", &fx.cg, why, sizeof(why)), -EINVAL);
    assert_int_equal(cgroupfs_open_path(&fx.root, "slurm", &fx.cg, why, sizeof(why)), -EINVAL);
    assert_int_equal(cgroupfs_open_path(&fx.root, "/sys/fs/cgroup/memory/nope", &fx.cg, why, sizeof(why)),
                     -ENOENT);
    assert_null(fx.cg);
    cgroupfs_pids_free(&pids);
    fx_close(&fx);

    fx_open(&fx, "cgroup-v2");
    assert_int_equal(cgroupfs_open_path(&fx.root, "/sys/fs/cgroup/system.slice/docker-abc.scope", &fx.cg, why,
                                        sizeof(why)),
                     0);
    assert_string_equal(cgroupfs_version_name(fx.cg), "v2");
    assert_int_equal(cgroupfs_pids(fx.cg, true, &pids), 0);
    assert_int_equal(pids.n, 2);
    assert_int_equal(pids.pid[0], 777);
    cgroupfs_pids_free(&pids);
    fx_close(&fx);
}

/* ---- the source on the fixtures ---- */

typedef struct {
    js_rows_t t[3];
    js_rows_t *p[3];
} rows3_t;

static void rows3_init(rows3_t *r)
{
    rows_init(&r->t[0], &table_cgroup);
    rows_init(&r->t[1], &table_cgroup_memory);
    rows_init(&r->t[2], &table_cgroup_io);
    for (int i = 0; i < 3; i++)
        r->p[i] = &r->t[i];
}

static void rows3_free(rows3_t *r)
{
    for (int i = 0; i < 3; i++)
        rows_free(&r->t[i]);
}

static void collect_fixture(const char *name, pid_t pid, rows3_t *rows, js_rows_t *inv)
{
    fx_t fx;
    fx_open(&fx, name);
    assert_int_equal(cgroupfs_open_pid(&fx.root, pid, &fx.cg, NULL, 0), 0);
    js_ctx_t ctx = {
        .root = fx.root, .mode = JS_MODE_WATCH, .scope = {.kind = JS_SCOPE_CGROUP, .cgroup = fx.cg}};
    void *st = NULL;
    assert_int_equal(source_cgroup.init(&ctx, &st, NULL, 0), 0);
    rows3_init(rows);
    assert_int_equal(source_cgroup.collect(st, &ctx, rows->p), 0);
    rows_init(inv, &table_inventory);
    ctx.root_pid = pid;
    assert_int_equal(source_cgroup.inventory(st, &ctx, inv), 0);
    source_cgroup.fini(st);
    fx_close(&fx);
}

static void test_collect_v1(void **state)
{
    rows3_t r;
    js_rows_t inv;
    collect_fixture("cgroup-v1", 4242, &r, &inv);
    assert_int_equal(r.t[0].nrows, 1);
    js_value_t *c = rows_row(&r.t[0], 0), *m = rows_row(&r.t[1], 0);
    assert_ival(c[CG_USAGE_NS], 12345678901LL);
    assert_ival(c[CG_USER_NS], 10000000000LL);
    assert_ival(c[CG_SYSTEM_NS], 2345678901LL);
    assert_missing(c[CG_USER_TICKS]); /* cpuacct.stat only where usage_user is missing */
    assert_ival(c[CG_THROTTLED], 40);
    assert_ival(c[CG_THROTTLED_NS], 1500000000LL);
    assert_ival(c[CG_PIDS], 7);
    assert_missing(c[CG_PIDS_PEAK]);
    assert_missing(c[CG_PSI_CPU_SOME_US]); /* v1: no PSI per cgroup */
    assert_ival(m[CGM_CURRENT_BYTES], 1073741824LL);
    assert_ival(m[CGM_PEAK_BYTES], 2147483648LL);
    assert_ival(m[CGM_ANON_BYTES], 268435456);
    assert_ival(m[CGM_FILE_BYTES], 805306368);
    assert_ival(m[CGM_SWAP_BYTES], 1048576);
    assert_missing(m[CGM_MEMSW_BYTES]); /* no swap accounting: no memsw files */
    assert_ival(m[CGM_FAILCNT], 3);
    assert_ival(m[CGM_OOM_KILL_COUNT], 1);
    assert_missing(m[CGM_OOM_COUNT]);
    assert_int_equal(r.t[2].nrows, 2); /* 8:0 and 259:0, from the non-recursive files of an older kernel */
    js_value_t *io = rows_row(&r.t[2], 0);
    assert_ival(io[CGIO_READ_BYTES], 4096000);
    assert_ival(io[CGIO_WRITE_IOS], 2000);

    assert_string_equal(inv_get(&inv, "cgroup.version"), "v1");
    assert_string_equal(inv_get(&inv, "cgroup.created"), "0");
    assert_string_equal(inv_get(&inv, "cgroup.path"), "/slurm/uid_1000/job_42/step_0/task_0");
    assert_string_equal(inv_get(&inv, "file.cgroup.usage_ns"),
                        "/sys/fs/cgroup/cpu,cpuacct/slurm/uid_1000/job_42/step_0/task_0/cpuacct.usage");
    assert_string_equal(
        inv_get(&inv, "file.cgroup_io.read_bytes"),
        "/sys/fs/cgroup/blkio/slurm/uid_1000/job_42/step_0/task_0/blkio.throttle.io_service_bytes");
    /* the job's quota (2.5 cores two levels up) beats its cpuset (2-5) and the affinity mask */
    assert_string_equal(inv_get(&inv, "allocation.cores"), "2.5");
    assert_string_equal(inv_get(&inv, "allocation.cores_bound"), "cfs_quota");
    assert_string_equal(inv_get(&inv, "allocation.bound.cpuset"), "4");
    assert_string_equal(inv_get(&inv, "allocation.memory_limit_bytes"), "4294967296");
    assert_string_equal(inv_get(&inv, "allocation.memory_limit_bound"), "memory.limit_in_bytes");
    assert_string_equal(inv_get(&inv, "limit.pids_max"), "512");
    rows3_free(&r);
    rows_free(&inv);
}

static void test_collect_v2(void **state)
{
    rows3_t r;
    js_rows_t inv;
    collect_fixture("cgroup-v2", 777, &r, &inv);
    js_value_t *c = rows_row(&r.t[0], 0), *m = rows_row(&r.t[1], 0);
    assert_ival(c[CG_USAGE_NS], 7000000000LL);
    assert_ival(c[CG_USER_NS], 5000000000LL);
    assert_ival(c[CG_PERIODS], 0);
    assert_ival(c[CG_PIDS], 12);
    assert_ival(c[CG_PSI_CPU_SOME_US], 1234);
    assert_ival(c[CG_PSI_IO_FULL_US], 2000);
    assert_ival(m[CGM_CURRENT_BYTES], 3221225472LL);
    assert_missing(m[CGM_PEAK_BYTES]); /* memory.peak needs 5.19 */
    assert_ival(m[CGM_ANON_BYTES], 1073741824LL);
    assert_ival(m[CGM_FILE_BYTES], 2147483648LL);
    assert_ival(m[CGM_KERNEL_BYTES], 33554432);
    assert_ival(m[CGM_OOM_KILL_COUNT], 1);
    assert_ival(m[CGM_OOM_COUNT], 2);
    assert_ival(m[CGM_SWAP_BYTES], 0);
    assert_missing(m[CGM_FAILCNT]);
    assert_int_equal(r.t[2].nrows, 2);
    assert_null(inv_get(&inv, "file.cgroup_memory.peak_bytes"));
    assert_string_equal(inv_get(&inv, "file.cgroup.usage_ns"),
                        "/sys/fs/cgroup/system.slice/docker-abc.scope/cpu.stat");
    /* cpu.max "max 100000" is no quota, its parent's 150000/100000 is */
    assert_string_equal(inv_get(&inv, "allocation.cores"), "1.5");
    assert_string_equal(inv_get(&inv, "allocation.cores_bound"), "cpu.max");
    assert_string_equal(inv_get(&inv, "allocation.cpuset"), "0-3,8,10-11");
    assert_string_equal(inv_get(&inv, "allocation.bound.cpuset"), "7");
    assert_string_equal(inv_get(&inv, "allocation.memory_limit_bytes"), "8589934592");
    assert_string_equal(inv_get(&inv, "allocation.memory_limit_bound"), "memory.max");
    assert_string_equal(inv_get(&inv, "limit.memory_high_bytes"), "6442450944");
    rows3_free(&r);
    rows_free(&inv);
}

static void test_collect_hybrid(void **state)
{
    rows3_t r;
    js_rows_t inv;
    collect_fixture("cgroup-hybrid", 555, &r, &inv);
    js_value_t *c = rows_row(&r.t[0], 0), *m = rows_row(&r.t[1], 0);
    /* CPU from v1 cpuacct (not the unified cpu.stat, whose usage differs here on purpose) */
    assert_ival(c[CG_USAGE_NS], 1319489278);
    assert_ival(c[CG_PSI_CPU_SOME_US], 10388);
    assert_ival(c[CG_PIDS_PEAK], 6);
    assert_ival(m[CGM_PEAK_BYTES], 112496640);
    assert_ival(m[CGM_MEMSW_PEAK_BYTES], 112496640);
    assert_int_equal(r.t[2].nrows, 0);
    assert_string_equal(inv_get(&inv, "cgroup.version"), "hybrid");
    assert_string_equal(inv_get(&inv, "cgroup.path"), "/process_api/abc/jobscope-1-1");
    assert_string_equal(inv_get(&inv, "cgroup.path.psi"), "/sys/fs/cgroup/unified/jobscope-1-1");
    assert_string_equal(inv_get(&inv, "allocation.cores"), "2");
    assert_string_equal(inv_get(&inv, "allocation.cores_bound"), "cpuset");
    assert_string_equal(inv_get(&inv, "allocation.memory_limit_bound"), "none");
    assert_null(inv_get(&inv, "allocation.memory_limit_bytes"));
    rows3_free(&r);
    rows_free(&inv);
}

/* watch --cgroup on a cgroup2 directory of a hybrid host, with no v1 counterpart: CPU from its own cpu.stat
 * (it was left to the process tree's sampled figure, -17%) */
static void test_collect_hybrid_v2_only(void **state)
{
    (void)state;
    fx_t fx;
    fx_open(&fx, "cgroup-hybrid");
    char why[256] = "";
    assert_int_equal(cgroupfs_open_path(&fx.root, "/sys/fs/cgroup/unified/v2only", &fx.cg, why, sizeof(why)),
                     0);
    int version = 0;
    assert_true(cgroupfs_dir(fx.cg, JS_CG_CPUACCT, &version) >= 0);
    assert_int_equal(version, 2);
    assert_int_equal(cgroupfs_hier(fx.cg, JS_CG_MEMORY), -1); /* v1 memory has no such cgroup: not read */
    js_ctx_t ctx = {
        .root = fx.root, .mode = JS_MODE_WATCH, .scope = {.kind = JS_SCOPE_CGROUP, .cgroup = fx.cg}};
    void *st = NULL;
    assert_int_equal(source_cgroup.init(&ctx, &st, NULL, 0), 0);
    rows3_t r;
    rows3_init(&r);
    assert_int_equal(source_cgroup.collect(st, &ctx, r.p), 0);
    js_value_t *c = rows_row(&r.t[0], 0);
    assert_ival(c[CG_USAGE_NS], 2500000000LL);
    assert_ival(c[CG_USER_NS], 2000000000LL);
    assert_ival(c[CG_PSI_CPU_SOME_US], 4242);
    js_rows_t inv;
    rows_init(&inv, &table_inventory);
    assert_int_equal(source_cgroup.inventory(st, &ctx, &inv), 0);
    assert_string_equal(inv_get(&inv, "file.cgroup.usage_ns"), "/sys/fs/cgroup/unified/v2only/cpu.stat");
    source_cgroup.fini(st);
    rows3_free(&r);
    rows_free(&inv);
    fx_close(&fx);
}

/* the per-descriptor reset of a v2 peak: one write through a read-write descriptor, nothing when the file is
 * not a regular one (a FIFO: refused at once, never waited on) */
static void test_peak_reset_open(void **state)
{
    (void)state;
    char dir[] = "/tmp/jobscope-peak-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(d >= 0);
    int f = openat(d, "memory.peak", O_WRONLY | O_CREAT, 0644);
    assert_true(f >= 0);
    assert_int_equal(write(f, "123456\n", 7), 7);
    close(f);
    int fd = cgroupfs_open_peak_reset(d, "memory.peak");
    assert_true(fd >= 0);
    char b[16] = {0};
    assert_int_equal(pread(fd, b, sizeof(b) - 1, 0), 7);
    assert_memory_equal(b, "reset\n", 6); /* a plain file keeps what was written; the kernel resets instead */
    close(fd);
    assert_int_equal(mkfifoat(d, "memory.swap.peak", 0644), 0);
    fd = cgroupfs_open_peak_reset(d, "memory.swap.peak");
    assert_true(fd < 0);
    assert_true(cgroupfs_open_peak_reset(d, "no-such-file") == -ENOENT);
    unlinkat(d, "memory.peak", 0);
    unlinkat(d, "memory.swap.peak", 0);
    close(d);
    rmdir(dir);
}

static void test_no_cgroup(void **state)
{
    fx_t fx;
    fx_open(&fx, "cgroup-v2");
    js_ctx_t ctx = {.root = fx.root, .mode = JS_MODE_RUN};
    void *st = NULL;
    assert_int_equal(source_cgroup.init(&ctx, &st, NULL, 0), 0);
    rows3_t r;
    rows3_init(&r);
    assert_int_equal(source_cgroup.collect(st, &ctx, r.p), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r.t[i].nrows, 0);
    source_cgroup.fini(st);
    rows3_free(&r);
    fx_close(&fx);
}

/* ---- run cgroups on a scratch tree ---- */

static void mk(const char *base, const char *rel, const char *content)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    for (char *s = path + strlen(base) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    if (content) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
    } else {
        mkdir(path, 0755);
    }
}

static bool exists(const char *base, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    return access(path, F_OK) == 0;
}

/* file_is: whether file `rel` under `base` holds exactly `want`. */
static bool file_is(const char *base, const char *rel, const char *want)
{
    char path[1024], got[256] = "";
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(got, 1, sizeof(got) - 1, f);
    fclose(f);
    got[n] = '\0';
    return strcmp(got, want) == 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

static void rm_tree(const char *path)
{
    assert_int_equal(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void test_create_remove(void **state)
{
    char base[] = "/tmp/jobscope-cgtest-XXXXXX";
    assert_non_null(mkdtemp(base));
    mk(base, "proc/self/mountinfo",
       "31 30 0:28 / /sys/fs/cgroup/cpu,cpuset rw - cgroup cgroup rw,cpu,cpuset\n"
       "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
       "33 30 0:30 / /sys/fs/cgroup/cpuset2 rw - cgroup cgroup rw,cpuset\n"
       "40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
    mk(base, "proc/321/cgroup", "4:memory:/sess/a\n3:cpuset:/\n2:cpu,cpuset:/\n0::/u\n");
    mk(base, "sys/fs/cgroup/cpu,cpuset/cpuset.cpus", "0-3\n");
    mk(base, "sys/fs/cgroup/cpu,cpuset/cpuset.mems", "0\n");
    mk(base, "sys/fs/cgroup/memory/sess/a", NULL);
    mk(base, "sys/fs/cgroup/cpuset2/cpuset.cpus", "0-3\n");
    mk(base, "sys/fs/cgroup/unified/cgroup.controllers", "cpu memory\n");
    mk(base, "sys/fs/cgroup/unified/u/cgroup.subtree_control", "\n");
    /* a stale directory of an earlier process with the same PID is skipped; one of a monitor that is gone
     * (no proc/999) is swept; other names are never touched */
    mk(base, "sys/fs/cgroup/memory/sess/a/jobscope-321-1", NULL);
    mk(base, "sys/fs/cgroup/memory/sess/a/jobscope-999-4", NULL);
    mk(base, "sys/fs/cgroup/memory/sess/a/jobscope-999-4x", NULL);

    char proc[600], sys[600], why[512] = "";
    snprintf(proc, sizeof(proc), "%s/proc", base);
    snprintf(sys, sizeof(sys), "%s/sys", base);
    js_fsroot_t root;
    assert_int_equal(fsroot_open(&root, proc, sys), 0);
    js_cgroup_t *cg = NULL;
    assert_int_equal(cgroupfs_create_run(&root, 321, &cg, why, sizeof(why)), 0);
    /* nested in the monitor's own cgroup in each hierarchy; the cpuset-only hierarchy not entered */
    assert_true(exists(base, "sys/fs/cgroup/memory/sess/a/jobscope-321-2"));
    assert_true(exists(base, "sys/fs/cgroup/cpu,cpuset/jobscope-321-2"));
    assert_true(exists(base, "sys/fs/cgroup/unified/u/jobscope-321-2"));
    assert_false(exists(base, "sys/fs/cgroup/cpuset2/jobscope-321-2"));
    /* (a co-mounted v1 cpuset gets its parent's cpuset.cpus and .mems written into the kernel's files, which
     * a plain directory does not have: that write is covered by the integration tests' real hierarchies only)
     */
    int h = cgroupfs_hier(cg, JS_CG_MEMORY);
    assert_string_equal(cg->path[h], "/sess/a/jobscope-321-2");
    assert_true(cg->created[h]);
    int cs = hier_of_mount(&cg->m, "/sys/fs/cgroup/cpuset2");
    assert_true(cs >= 0);
    assert_false(cg->created[cs]); /* kept as the monitor's, not removed at the end */
    assert_string_equal(cg->path[cs], "/");
    /* the command joins itself: "0" into v1 `tasks` and v2 cgroup.procs of every created hierarchy, none in
     * a skipped one (clone3 placed it there) nor in the hierarchy it was not created in. The kernel's files
     * are made empty here; a hierarchy whose file is missing is an error, the others still joined. */
    unsigned v2bit = 0, joined = 0;
    int u = hier_of_mount(&cg->m, "/sys/fs/cgroup/unified");
    int mem = cgroupfs_hier(cg, JS_CG_MEMORY);
    assert_true(cgroupfs_clone_dir(cg, &v2bit) >= 0 && u >= 0);
    assert_int_equal(v2bit, 1u << u);
    assert_true(cgroupfs_join_self(cg, v2bit, &joined) < 0); /* no `tasks` file yet */
    assert_int_equal(joined, 0);
    static const char *const files[] = {"sys/fs/cgroup/memory/sess/a/jobscope-321-2/tasks",
                                        "sys/fs/cgroup/cpu,cpuset/jobscope-321-2/tasks",
                                        "sys/fs/cgroup/unified/u/jobscope-321-2/cgroup.procs"};
    mk(base, files[0], "");
    assert_true(cgroupfs_join_self(cg, v2bit, &joined) < 0); /* memory joined, cpu,cpuset not */
    assert_int_equal(joined, 1u << mem);
    mk(base, files[1], "");
    mk(base, files[2], "");
    assert_int_equal(cgroupfs_join_self(cg, v2bit, &joined), 0);
    unsigned want = 0;
    for (size_t i = 0; i < cg->m.n; i++)
        if (cg->created[i] && (int)i != u)
            want |= 1u << i;
    assert_int_equal(joined, want);
    assert_true(file_is(base, files[0], "0\n"));
    assert_true(file_is(base, files[1], "0\n"));
    assert_true(file_is(base, files[2], "")); /* skipped */
    assert_false(exists(base, "sys/fs/cgroup/cpuset2/tasks"));
    assert_int_equal(cgroupfs_join_self(cg, 0, &joined), 0); /* nothing skipped: v2 through cgroup.procs */
    assert_int_equal(joined, want | v2bit);
    assert_true(file_is(base, files[2], "0\n"));
    for (size_t i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", base, files[i]);
        assert_int_equal(unlink(path), 0);
    }
    assert_false(exists(base, "sys/fs/cgroup/memory/sess/a/jobscope-999-4"));
    assert_true(exists(base, "sys/fs/cgroup/memory/sess/a/jobscope-999-4x"));
    /* a cgroup the job made below ours goes too */
    mk(base, "sys/fs/cgroup/memory/sess/a/jobscope-321-2/inner/deeper", NULL);
    assert_int_equal(cgroupfs_evict(cg), 0); /* nothing listed in it: nothing to move */
    js_cg_pids_t left = {0};
    assert_int_equal(cgroupfs_remove(cg, &left), 0);
    assert_int_equal(left.n, 0);
    assert_false(exists(base, "sys/fs/cgroup/memory/sess/a/jobscope-321-2"));
    assert_false(exists(base, "sys/fs/cgroup/unified/u/jobscope-321-2"));
    assert_true(exists(base, "sys/fs/cgroup/memory/sess/a/jobscope-321-1")); /* not ours */
    assert_int_equal(cgroupfs_remove(cg, &left), 0);                         /* nothing left to do */
    cgroupfs_pids_free(&left);
    cgroupfs_free(cg);

    /* nowhere to create one: an error with a reason */
    mk(base, "proc/322/cgroup", "0::/gone\n");
    cg = NULL;
    assert_true(cgroupfs_create_run(&root, 322, &cg, why, sizeof(why)) < 0);
    assert_null(cg);
    assert_true(why[0] != '\0');
    fsroot_close(&root);
    rm_tree(base);
}

/* ---- the model part ---- */

static void add_sample(js_sample_t *s, int64_t t_ns, int64_t usage_ns, int64_t throttled, int64_t peak,
                       int64_t anon, int64_t file, bool with_inventory, bool created)
{
    sample_clear(s);
    js_value_t *sv = rows_add(sample_rows(s, &table_samples));
    val_int(&sv[SAMPLES_T_MONO], t_ns);
    val_int(&sv[SAMPLES_T_UNIX], 1700000000000000000LL + t_ns);
    val_int(&sv[SAMPLES_MISSED], 0);
    if (with_inventory) {
        js_rows_t *inv = sample_rows(s, &table_inventory);
        inventory_add(inv, "cgroup", "cgroup.version", "v2");
        inventory_add(inv, "cgroup", "cgroup.path", "/jobscope-1-1");
        inventory_add(inv, "cgroup", "cgroup.created", created ? "1" : "0");
        inventory_add(inv, "cgroup", "file.cgroup.usage_ns", "/sys/fs/cgroup/jobscope-1-1/cpu.stat");
        inventory_add(inv, "cgroup", "file.cgroup_memory.peak_bytes",
                      "/sys/fs/cgroup/jobscope-1-1/memory.peak");
        inventory_add(inv, "cgroup", "allocation.cores", "2");
        inventory_add(inv, "cgroup", "allocation.cores_bound", "cpuset");
        inventory_add(inv, "cgroup", "allocation.memory_limit_bytes", "1000000000");
        inventory_add(inv, "cgroup", "allocation.memory_limit_bound", "memory.max");
    }
    js_value_t *c = rows_add(sample_rows(s, &table_cgroup));
    val_int(&c[CG_USAGE_NS], usage_ns);
    val_int(&c[CG_USER_NS], usage_ns / 2);
    val_int(&c[CG_SYSTEM_NS], usage_ns / 2);
    val_int(&c[CG_PERIODS], throttled * 2);
    val_int(&c[CG_THROTTLED], throttled);
    js_value_t *m = rows_add(sample_rows(s, &table_cgroup_memory));
    val_int(&m[CGM_CURRENT_BYTES], anon + file);
    val_int(&m[CGM_PEAK_BYTES], peak);
    val_int(&m[CGM_ANON_BYTES], anon);
    val_int(&m[CGM_FILE_BYTES], file);
    val_int(&m[CGM_OOM_KILL_COUNT], 0);
}

static js_model_t *new_model(js_mode_t mode)
{
    js_model_cfg_t cfg = {.mode = mode,
                          .clk_tck = 100,
                          .monitor_pid = 1,
                          .root_pid = 10,
                          .interval_ns = 1000000000,
                          .cores_available = 2};
    return model_new(&cfg);
}

static void test_part_run(void **state)
{
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_model_t *m = new_model(JS_MODE_RUN);
    assert_non_null(m);
    /* a cgroup made for the run: its first value already belongs to the job */
    add_sample(&s, 0, 100000000, 0, 300000000, 1000, 0, true, true);
    assert_int_equal(model_feed(m, 0, &s), 0);
    add_sample(&s, 1000000000, 1100000000, 5, 500000000, 2000, 400000000, false, true);
    assert_int_equal(model_feed(m, 1, &s), 0);
    js_view_t v;
    assert_int_equal(model_view(m, "cgroup", &v), 0);
    const js_value_t *row = rows_row(v.rows, 0);
    int cores = table_column(v.table, "cpu_cores"), thr = table_column(v.table, "throttled_fraction");
    assert_true(cores >= 0 && thr >= 0);
    assert_true(row[cores].present);
    assert_true(fabs(row[cores].d - 1.0) < 1e-9);
    assert_true(fabs(row[thr].d - 0.5) < 1e-9);
    add_sample(&s, 2000000000, 2100000000, 5, 450000000, 1500, 0, false, true);
    assert_int_equal(model_feed(m, 2, &s), 0);
    add_sample(&s, 3000000000, 2600000000, 5, 450000000, 0, 0, false, true);
    assert_int_equal(model_feed(m, 3, &s), 0);

    js_cgroup_totals_t t;
    assert_int_equal(part_cgroup_totals(m, &t), 0);
    assert_true(t.present && t.created);
    assert_true(fabs(t.cpu_s - 2.6) < 1e-9);
    assert_true(fabs(t.user_s - 1.3) < 1e-9);
    assert_string_equal(t.cpu_file, "cpu.stat");
    assert_true(t.peak_kernel_tree_bytes == 500000000);
    assert_non_null(strstr(t.peak_method, "memory.peak"));
    assert_true(t.anon_peak_bytes == 2000);
    assert_true(t.file_peak_bytes == 400000000);
    assert_true(t.cores == 2);
    assert_string_equal(t.cores_bound, "cpuset");
    assert_true(t.memory_limit_bytes == 1e9);
    assert_true(t.oom_kills == 0);

    js_buf_t b = {0};
    assert_int_equal(parts_json(m, &b), 0);
    assert_non_null(strstr(b.p, "\"peak_kernel_tree_bytes\": 500000000"));
    assert_non_null(strstr(b.p, "\"throttled_periods\": 5"));
    assert_non_null(strstr(b.p, "\"peak_fraction_of_limit\": 0.5"));
    /* CPU efficiency 2.6 s / (2 cores x 3 s) */
    assert_non_null(strstr(b.p, "\"cpu_efficiency\": 0.43333333333333335"));
    b.len = 0;
    assert_int_equal(parts_text(m, &b), 0);
    assert_non_null(strstr(b.p, "CPU efficiency   43.3% of 6.00 core-s"));
    assert_non_null(strstr(b.p, "mem efficiency   50.0% of 953.67 MiB"));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
}

static void test_part_watch(void **state)
{
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_model_t *m = new_model(JS_MODE_WATCH);
    /* a watched cgroup counts from the first sample; the 32-bit nr_throttled wraps (0xFFFFFFFE -> 2 is 4) */
    add_sample(&s, 0, 5000000000LL, 0xFFFFFFFELL, 300000000, 1000, 0, true, false);
    assert_int_equal(model_feed(m, 0, &s), 0);
    add_sample(&s, 1000000000, 5500000000LL, 2, 300000000, 1000, 0, false, false);
    assert_int_equal(model_feed(m, 1, &s), 0);
    js_cgroup_totals_t t;
    assert_int_equal(part_cgroup_totals(m, &t), 0);
    assert_false(t.created);
    assert_true(fabs(t.cpu_s - 0.5) < 1e-9);
    /* the kernel's mark (300 MB at the first sample, no higher since) is the cgroup's since its creation, not
     * the watch's: no window peak from it (it was reported as the window's exact peak), the sampled one
     * instead */
    assert_true(isnan(t.peak_kernel_tree_bytes));
    assert_true(t.peak_since_created_bytes == 300000000);
    js_buf_t b = {0};
    assert_int_equal(parts_json(m, &b), 0);
    assert_non_null(strstr(b.p, "\"throttled_periods\": 4"));
    assert_non_null(strstr(b.p, "\"peak_kernel_tree_bytes\": 1000,"));
    assert_non_null(strstr(b.p, "\"peak_since_created_bytes\": 300000000"));
    assert_non_null(strstr(b.p, "since the cgroup was created"));
    /* a mark that rises during the watch was reached in it: the window's, exactly */
    add_sample(&s, 2000000000, 6000000000LL, 2, 350000000, 1000, 0, false, false);
    assert_int_equal(model_feed(m, 2, &s), 0);
    assert_int_equal(part_cgroup_totals(m, &t), 0);
    assert_true(t.peak_kernel_tree_bytes == 350000000);
    assert_non_null(strstr(t.peak_method, "reached during this watch"));
    buf_free(&b);
    model_free(m);
    sample_free(&s);

    /* a v2 memory.peak reset for the source's descriptor counts from the watch's start */
    assert_int_equal(sample_init(&s), 0);
    m = new_model(JS_MODE_WATCH);
    add_sample(&s, 0, 5000000000LL, 0, 2000, 1000, 0, true, false);
    inventory_add(sample_rows(&s, &table_inventory), "cgroup", "cgroup.peak_reset", "1");
    assert_int_equal(model_feed(m, 0, &s), 0);
    add_sample(&s, 1000000000, 5500000000LL, 0, 2000, 1000, 0, false, false);
    assert_int_equal(model_feed(m, 1, &s), 0);
    assert_int_equal(part_cgroup_totals(m, &t), 0);
    assert_true(t.peak_kernel_tree_bytes == 2000);
    assert_non_null(strstr(t.peak_method, "reset for this watch"));
    model_free(m);
    sample_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mountinfo_lines),
        cmocka_unit_test(test_parse_cpu),
        cmocka_unit_test(test_parse_memory),
        cmocka_unit_test(test_parse_io_psi),
        cmocka_unit_test(test_mounts),
        cmocka_unit_test(test_open_pid_v1),
        cmocka_unit_test(test_open_path),
        cmocka_unit_test(test_collect_v1),
        cmocka_unit_test(test_collect_v2),
        cmocka_unit_test(test_collect_hybrid),
        cmocka_unit_test(test_collect_hybrid_v2_only),
        cmocka_unit_test(test_peak_reset_open),
        cmocka_unit_test(test_no_cgroup),
        cmocka_unit_test(test_create_remove),
        cmocka_unit_test(test_part_run),
        cmocka_unit_test(test_part_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
