/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the process-tree source (src/sources/proc_tree.c). First its parsers on strings:
 * /proc/<pid>/io with all or some fields, statm, status with and without RssAnon (kernels before 4.5),
 * smaps_rollup (USS = Private_Clean + Private_Dirty + Private_Hugetlb), and the cmdline-to-JSON rendering.
 * Then collect() in attach mode on the fake procfs under tests/fixtures/proc (see its README.md): root 100
 * with children 101 and 102 in 100/task/100/children, 101 with three threads of which one (201) lists the
 * grandchild 103, a zombie; 102 has no io file and a newline in its comm; 999 is unrelated. The same tree
 * without any task/<tid>/children file (tests/fixtures/proc-nochildren) must be discovered by scanning ppids.
 * A second collect emits no proc_info rows; a copy of the tree changed between samples checks exit, exec and
 * PID reuse. No descriptor may leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sample.h"
#include "core/source.h"
#include "sources/proc_tree.h"
#include "sources/proc_tree_int.h"
#include "sys/fsroot.h"

#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const js_source_t source_proc_tree;

/* ---- helpers ---- */

#include "assert_value.h"
#include "sources/registry.h"

#define KB 1024LL

static const char long_comm[] = "xxxxxxxxxx-zombie-with-a-name-longer-than-the-sixty-three-byte-comm-buffer";

static int count_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* ---- parsers ---- */

static void test_parse_io(void **state)
{
    (void)state;
    const char *full = "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\n"
                       "cancelled_write_bytes: 512\n";
    js_pid_io_t io;
    assert_int_equal(proc_parse_io(full, &io), 0);
    assert_int_equal(io.present, 0x7f);
    static const uint64_t want[7] = {6976, 12, 10, 2, 4096, 8192, 512};
    for (int i = 0; i < 7; i++)
        assert_int_equal(io.v[i], want[i]);

    /* "write_bytes:" must come from its own line, not from "cancelled_write_bytes:" listed first */
    const char *reordered = "cancelled_write_bytes: 1\nwrite_bytes: 2\nrchar: 3\n";
    assert_int_equal(proc_parse_io(reordered, &io), 0);
    assert_int_equal(io.present, (1u << 0) | (1u << 5) | (1u << 6));
    assert_int_equal(io.v[0], 3);
    assert_int_equal(io.v[5], 2);
    assert_int_equal(io.v[6], 1);

    /* only the character counters (no block I/O accounting) */
    assert_int_equal(proc_parse_io("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n", &io), 0);
    assert_int_equal(io.present, 0x0f);
    assert_int_equal(io.v[3], 4);

    /* huge values pass through */
    assert_int_equal(proc_parse_io("rchar: 18446744073709551615\n", &io), 0);
    assert_int_equal(io.present, 1);
    assert_true(io.v[0] == UINT64_MAX);

    assert_int_equal(proc_parse_io("", &io), -EINVAL);
    assert_int_equal(io.present, 0);
    assert_int_equal(proc_parse_io("garbage\n", &io), -EINVAL);
    assert_int_equal(proc_parse_io("rchar:\nwchar: x\n", &io), -EINVAL);
}

static void test_parse_statm(void **state)
{
    (void)state;
    uint64_t res = 1, shared = 2;
    assert_int_equal(proc_parse_statm("765 432 404 5 0 123 0\n", &res, &shared), 0);
    assert_int_equal(res, 432);
    assert_int_equal(shared, 404);
    assert_int_equal(proc_parse_statm("0 0 0 0 0 0 0\n", &res, &shared), 0); /* a zombie */
    assert_int_equal(res, 0);
    assert_int_equal(shared, 0);
    res = shared = 9;
    assert_int_equal(proc_parse_statm("765 432", &res, &shared), -EINVAL);
    assert_int_equal(proc_parse_statm("", &res, &shared), -EINVAL);
    assert_int_equal(proc_parse_statm("a b c", &res, &shared), -EINVAL);
    assert_int_equal(res, 9);
    assert_int_equal(shared, 9);
}

static const char status_new[] =
    "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t16351\nPid:\t16351\n"
    "PPid:\t16346\nUid:\t1000\t1001\t1002\t1003\nGid:\t0\t0\t0\t0\n"
    "VmPeak:\t    3060 kB\nVmSize:\t    3060 kB\nVmHWM:\t    1640 kB\n"
    "VmRSS:\t    1640 kB\nRssAnon:\t     112 kB\nRssFile:\t    1528 kB\n"
    "RssShmem:\t       4 kB\nVmData:\t     360 kB\nVmSwap:\t      16 kB\n"
    "Threads:\t1\nvoluntary_ctxt_switches:\t25\nnonvoluntary_ctxt_switches:\t3\n";

/* Linux 4.4: no RssAnon/RssFile/RssShmem lines. */
static const char status_old[] = "Name:\tcat\nState:\tS (sleeping)\nPid:\t7\nPPid:\t1\nUid:\t0\t0\t0\t0\n"
                                 "VmPeak:\t    3060 kB\nVmHWM:\t    1640 kB\nVmRSS:\t    1640 kB\n"
                                 "VmSwap:\t       0 kB\nThreads:\t1\nvoluntary_ctxt_switches:\t5\n"
                                 "nonvoluntary_ctxt_switches:\t6\n";

static void test_parse_status(void **state)
{
    (void)state;
    js_pid_status_t st;
    memset(&st, 0xee, sizeof(st));
    assert_int_equal(proc_parse_status(status_new, &st), 0);
    assert_int_equal(st.present, 0xff);
    assert_int_equal(st.rss_anon, 112 * KB);
    assert_int_equal(st.rss_file, 1528 * KB);
    assert_int_equal(st.rss_shmem, 4 * KB);
    assert_int_equal(st.swap, 16 * KB);
    assert_int_equal(st.hwm, 1640 * KB);
    assert_int_equal(st.vcsw, 25); /* counts, not kB */
    assert_int_equal(st.ivcsw, 3);
    assert_int_equal(st.uid, 1000); /* real UID, the first of four */

    memset(&st, 0xee, sizeof(st));
    assert_int_equal(proc_parse_status(status_old, &st), 0);
    assert_int_equal(st.present, (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) | (1u << 7));
    assert_int_equal(st.swap, 0);
    assert_int_equal(st.hwm, 1640 * KB);
    assert_int_equal(st.vcsw, 5);
    assert_int_equal(st.ivcsw, 6);
    assert_int_equal(st.uid, 0);

    /* a zombie: no Vm or Rss lines at all */
    assert_int_equal(proc_parse_status("Name:\tz\nState:\tZ (zombie)\nUid:\t5\t5\t5\t5\n"
                                       "voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t0\n",
                                       &st),
                     0);
    assert_int_equal(st.present, (1u << 5) | (1u << 6) | (1u << 7));
    assert_int_equal(proc_parse_status("", &st), 0);
    assert_int_equal(st.present, 0);
}

static const char smaps_text[] =
    "555afa832000-7fff2c910000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:                1708 kB\n"
    "Pss:                 247 kB\n"
    "Pss_Dirty:           112 kB\n"
    "Pss_Anon:            112 kB\n"
    "Pss_File:            135 kB\n"
    "Shared_Clean:       1552 kB\n"
    "Shared_Dirty:          0 kB\n"
    "Private_Clean:        44 kB\n"
    "Private_Dirty:       112 kB\n"
    "Referenced:         1708 kB\n"
    "Shared_Hugetlb:        0 kB\n"
    "Private_Hugetlb:    2048 kB\n"
    "Swap:                 64 kB\n"
    "SwapPss:              32 kB\n"
    "Locked:                0 kB\n";

static void test_parse_smaps(void **state)
{
    (void)state;
    js_pid_smaps_t sm;
    assert_int_equal(proc_parse_smaps_rollup(smaps_text, &sm), 0);
    assert_true(sm.ok);
    assert_int_equal(sm.rss, 1708 * KB);
    assert_int_equal(sm.pss, 247 * KB); /* not Pss_Dirty / Pss_Anon */
    assert_int_equal(sm.uss, (44 + 112 + 2048) * KB);
    assert_int_equal(sm.swap_pss, 32 * KB); /* not Swap */

    /* older kernels: no Private_Hugetlb, no SwapPss */
    const char *old = "Rss: 100 kB\nPss: 50 kB\nPrivate_Clean: 10 kB\nPrivate_Dirty: 20 kB\nSwap: 0 kB\n";
    assert_int_equal(proc_parse_smaps_rollup(old, &sm), 0);
    assert_int_equal(sm.uss, 30 * KB);
    assert_int_equal(sm.pss, 50 * KB);
    assert_int_equal(sm.swap_pss, 0);

    /* empty (a zombie or kernel thread) or no Pss line: not ok */
    assert_int_equal(proc_parse_smaps_rollup("", &sm), -EINVAL);
    assert_false(sm.ok);
    assert_int_equal(proc_parse_smaps_rollup("Rss: 1 kB\nPss_Anon: 2 kB\n", &sm), -EINVAL);
    assert_false(sm.ok);
}

static void assert_cmdline(const char *raw, size_t len, const char *want)
{
    js_buf_t b = {0};
    assert_int_equal(proc_cmdline_json(raw, len, &b), 0);
    assert_int_equal(strlen(b.p), b.len);
    assert_string_equal(b.p, want);
    /* rendering into a buffer that already holds text replaces it */
    assert_int_equal(proc_cmdline_json(raw, len, &b), 0);
    assert_string_equal(b.p, want);
    buf_free(&b);
}

/* redacted: cmdline `raw` through proc_cmdline_redact with `pattern`, rendered as JSON */
static void assert_redacted(const char *pattern, const char *raw, size_t len, const char *want)
{
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED), 0);
    js_buf_t out = {0}, json = {0};
    assert_int_equal(proc_cmdline_redact(&re, raw, len, &out), 0);
    assert_int_equal(proc_cmdline_json(out.p, out.len, &json), 0);
    assert_string_equal(json.p, want);
    buf_free(&out);
    buf_free(&json);
    regfree(&re);
}

/* --redact-cmdline: every match within each argument becomes ***, arguments keep their number and order */
static void test_cmdline_redact(void **state)
{
    (void)state;
    assert_redacted("password=[^ ]*", "app\0--password=hunter2\0x password=a b\0", 38,
                    "[\"app\",\"--***\",\"x *** b\"]");
    assert_redacted("^--token=.*$", "app\0--token=abc\0keep--token=abc\0", 32,
                    "[\"app\",\"***\",\"keep--token=abc\"]"); /* anchors apply per argument */
    assert_redacted("[0-9]+", "a1b22c333\0", 10, "[\"a***b***c***\"]");
    assert_redacted("x*", "abc\0", 4, "[\"abc\"]");      /* empty matches replace nothing and end */
    assert_redacted("secret", "secret", 6, "[\"***\"]"); /* no final NUL (a rewritten argv) */
    assert_redacted("nothing", "a\0\0b\0", 5, "[\"a\",\"\",\"b\"]"); /* an empty argument stays */
}

static void test_cmdline_json(void **state)
{
    (void)state;
    assert_cmdline("cat\0/proc/self/cmdline\0", 23, "[\"cat\",\"/proc/self/cmdline\"]");
    assert_cmdline("sh\0-c\0echo \"a b\" 'c'\0", 21, "[\"sh\",\"-c\",\"echo \\\"a b\\\" 'c'\"]");
    assert_cmdline("back\\slash\0", 11, "[\"back\\\\slash\"]");
    assert_cmdline("two\nlines\0tab\there\0", 19, "[\"two\\nlines\",\"tab\\there\"]");
    assert_cmdline("bad\xff\0caf\xc3\xa9\0", 10, "[\"bad\\u00ff\",\"caf\xc3\xa9\"]");
    assert_cmdline("a\0\0b\0", 5, "[\"a\",\"\",\"b\"]"); /* an empty argument */
    assert_cmdline("\0", 1, "[\"\"]");
    assert_cmdline("", 0, "[]"); /* zombie or kernel thread */
    /* no trailing NUL: a process that rewrote its argv (setproctitle) */
    assert_cmdline("nginx: worker process", 21, "[\"nginx: worker process\"]");
    assert_cmdline("a\0b", 3, "[\"a\",\"b\"]");
    /* `len` bounds the read even if more bytes follow */
    assert_cmdline("abc\0def\0", 2, "[\"ab\"]");
}

/* ---- the source on fixtures ---- */

typedef struct {
    js_ctx_t ctx;
    js_sample_t s;
    js_rows_t *rows[5];
    void *state;
} tree_t;

/* tree_open_scope: the source on fixture `root` in `mode` with `root_pid` and `scope` (may be NULL). */
static void tree_open_scope(tree_t *t, const char *root, js_mode_t mode, pid_t root_pid,
                            const js_scope_t *scope)
{
    memset(t, 0, sizeof(*t));
    assert_int_equal(fsroot_open(&t->ctx.root, root, NULL), 0);
    t->ctx.mode = mode;
    t->ctx.root_pid = root_pid;
    if (scope)
        t->ctx.scope = *scope;
    t->ctx.monitor_pid = 1; /* not in the fixture */
    t->ctx.status_every = 1;
    t->ctx.uss_every = 1;
    t->ctx.seq = 0;
    assert_int_equal(sample_init(&t->s), 0);
    t->rows[0] = sample_rows(&t->s, &table_proc);
    t->rows[1] = sample_rows(&t->s, &table_proc_info);
    t->rows[2] = sample_rows(&t->s, &table_tree);
    t->rows[3] = sample_rows(&t->s, &table_exits);
    t->rows[4] = sample_rows(&t->s, &table_stepd);
    for (int i = 0; i < 5; i++)
        assert_non_null(t->rows[i]);
    /* the order collect() expects is the order the source declares */
    for (int i = 0; i < 5; i++)
        assert_ptr_equal(source_proc_tree.tables[i], t->rows[i]->table);
    assert_null(source_proc_tree.tables[5]);
    assert_int_equal(source_proc_tree.init(&t->ctx, &t->state, NULL, 0), 0);
}

static void tree_open(tree_t *t, const char *root)
{
    tree_open_scope(t, root, JS_MODE_ATTACH, 100, NULL);
}

static void tree_collect(tree_t *t)
{
    sample_clear(&t->s);
    assert_int_equal(source_proc_tree.collect(t->state, &t->ctx, t->rows), 0);
    t->ctx.seq++;
}

static void tree_close(tree_t *t)
{
    source_proc_tree.fini(t->state);
    sample_free(&t->s);
    fsroot_close(&t->ctx.root);
}

/* check_members: the proc rows are exactly `pids`, in that order. */
static void check_members(const tree_t *t, const int *pids, size_t n)
{
    const js_rows_t *proc = t->rows[0];
    assert_int_equal(proc->nrows, n);
    for (size_t i = 0; i < n; i++)
        assert_ival(rows_row(proc, i)[PROC_PID], pids[i]);
}

static void check_tree_row(const tree_t *t, int64_t members, const char *discovery)
{
    const js_rows_t *tree = t->rows[2];
    assert_int_equal(tree->nrows, 1);
    js_value_t *v = rows_row(tree, 0);
    assert_ival(v[TREE_MEMBERS], members);
    assert_ival(v[TREE_ROOT_ALIVE], 1);
    assert_true(v[TREE_DISCOVERY].present);
    assert_string_equal(rows_str(tree, &v[TREE_DISCOVERY]), discovery);
    for (int c = TREE_REAPED_UTIME; c < TREE__MAX; c++)
        assert_missing(v[c]); /* attach mode: the monitor reaps nothing */
    assert_int_equal(t->rows[3]->nrows, 0);
    size_t zombies = 0; /* exited members (state Z) are recorded but keep no scope alive */
    for (size_t i = 0; i < t->rows[0]->nrows; i++) {
        const js_value_t *p = rows_row(t->rows[0], i);
        if (p[PROC_STATE].present && rows_str(t->rows[0], &p[PROC_STATE])[0] == 'Z')
            zombies++;
    }
    assert_int_equal(t->ctx.live_members, (size_t)members - zombies);
    assert_int_equal(t->ctx.live_members > 0, v[TREE_ROOT_ALIVE].i); /* the root lives, so members do */
}

/* check_values: every proc value the fixture defines (tests/fixtures/proc/README.md). */
static void check_values(const tree_t *t)
{
    const int64_t P = sysconf(_SC_PAGESIZE);
    const js_rows_t *proc = t->rows[0];
    js_value_t *v = rows_row(proc, 0); /* 100 */
    assert_ival(v[PROC_START_TICKS], 5000);
    assert_ival(v[PROC_PPID], 1);
    assert_string_equal(rows_str(proc, &v[PROC_STATE]), "S");
    assert_ival(v[PROC_UTIME], 12);
    assert_ival(v[PROC_STIME], 7);
    assert_ival(v[PROC_CUTIME], 25);
    assert_ival(v[PROC_CSTIME], 9);
    assert_ival(v[PROC_THREADS], 1);
    assert_ival(v[PROC_MINFLT], 2519);
    assert_ival(v[PROC_MAJFLT], 0);
    assert_ival(v[PROC_CMINFLT], 12045);
    assert_ival(v[PROC_CMAJFLT], 3);
    assert_ival(v[PROC_VSIZE], 9220096);
    assert_ival(v[PROC_RSS], 1201 * P); /* statm resident, not stat's 1200 */
    assert_ival(v[PROC_SHARED], 800 * P);
    assert_ival(v[PROC_RSS_ANON], 1600 * KB);
    assert_ival(v[PROC_RSS_FILE], 3204 * KB);
    assert_ival(v[PROC_RSS_SHMEM], 0);
    assert_ival(v[PROC_SWAP], 12 * KB);
    assert_ival(v[PROC_HWM], 4900 * KB);
    assert_ival(v[PROC_VCSW], 150);
    assert_ival(v[PROC_IVCSW], 7);
    static const int64_t io100[7] = {123456, 7890, 345, 67, 4096, 8192, 512};
    for (int i = 0; i < 7; i++)
        assert_ival(v[PROC_RCHAR + i], io100[i]);
    assert_ival(v[PROC_FDS], 3);
    assert_ival(v[PROC_USS], (44 + 1600 + 2048) * KB);
    assert_ival(v[PROC_PSS], 2100 * KB);
    assert_ival(v[PROC_SWAP_PSS], 8 * KB);
    assert_ival(v[PROC_PROCESSOR], 3);

    v = rows_row(proc, 1); /* 101 "a) b (c", three threads */
    assert_ival(v[PROC_START_TICKS], 5100);
    assert_ival(v[PROC_PPID], 100);
    assert_ival(v[PROC_UTIME], 345);
    assert_ival(v[PROC_STIME], 67);
    assert_ival(v[PROC_THREADS], 3);
    assert_ival(v[PROC_MINFLT], 800);
    assert_ival(v[PROC_MAJFLT], 2);
    assert_ival(v[PROC_VSIZE], 120000000);
    assert_ival(v[PROC_RSS], 3001 * P);
    assert_ival(v[PROC_SHARED], 1500 * P);
    assert_ival(v[PROC_RSS_ANON], 6000 * KB);
    assert_ival(v[PROC_RSS_SHMEM], 4 * KB);
    assert_ival(v[PROC_HWM], 13000 * KB);
    static const int64_t io101[7] = {1000, 2000, 30, 40, 0, 4096, 0};
    for (int i = 0; i < 7; i++)
        assert_ival(v[PROC_RCHAR + i], io101[i]);
    assert_ival(v[PROC_FDS], 5);
    assert_ival(v[PROC_USS], (100 + 5900) * KB);
    assert_ival(v[PROC_PSS], 9000 * KB);
    assert_ival(v[PROC_SWAP_PSS], 0);
    assert_ival(v[PROC_PROCESSOR], 1);

    v = rows_row(proc, 2); /* 102: newline in comm, no io file */
    assert_ival(v[PROC_PPID], 100);
    assert_string_equal(rows_str(proc, &v[PROC_STATE]), "R");
    assert_ival(v[PROC_UTIME], 9);
    assert_ival(v[PROC_THREADS], 1);
    assert_ival(v[PROC_RSS], 501 * P);
    assert_ival(v[PROC_RSS_ANON], 404 * KB);
    for (int i = 0; i < 7; i++)
        assert_missing(v[PROC_RCHAR + i]); /* absent is not zero */
    assert_ival(v[PROC_FDS], 4);
    assert_ival(v[PROC_USS], 404 * KB);
    assert_ival(v[PROC_PSS], 1000 * KB);

    v = rows_row(proc, 3); /* 103: zombie grandchild */
    assert_ival(v[PROC_PPID], 101);
    assert_string_equal(rows_str(proc, &v[PROC_STATE]), "Z");
    assert_ival(v[PROC_UTIME], 5);
    assert_ival(v[PROC_STIME], 2);
    assert_ival(v[PROC_VSIZE], 0);
    assert_ival(v[PROC_RSS], 0);
    assert_missing(v[PROC_RSS_ANON]); /* no Vm/Rss lines in a zombie's status */
    assert_missing(v[PROC_HWM]);
    assert_missing(v[PROC_SWAP]);
    assert_ival(v[PROC_VCSW], 3);
    assert_ival(v[PROC_IVCSW], 1);
    assert_ival(v[PROC_RCHAR], 10);
    assert_ival(v[PROC_WCHAR], 20);
    assert_ival(v[PROC_FDS], 0);
    assert_ival(v[PROC_USS], 0); /* empty smaps_rollup of a zombie: it maps nothing (its PSS counts 0) */
    assert_ival(v[PROC_PSS], 0);
    assert_ival(v[PROC_SWAP_PSS], 0);
}

static void check_info(const tree_t *t)
{
    const js_rows_t *info = t->rows[1];
    assert_int_equal(info->nrows, 4);
    static const int pids[4] = {100, 101, 102, 103};
    static const int ppids[4] = {1, 100, 100, 101};
    static const int uids[4] = {1000, 1000, 1001, 1000};
    static const int starts[4] = {5000, 5100, 5200, 5300};
    static const char *const cmd[4] = {
        "[\"bash\",\"-c\",\"sleep 1; echo \\\"hi\\\"\"]",
        "[\"./a) b (c\",\"--name=x y\",\"back\\\\slash\",\"caf\xc3\xa9\",\"bad\\u00ff\"]",
        "[\"python3\",\"-c\",\"print(1)\\nprint(2)\",\"\"]",
        "[]",
    };
    char comm103[64];
    memcpy(comm103, long_comm, 63); /* cut at 63 bytes */
    comm103[63] = '\0';
    assert_true(strlen(long_comm) > 63);
    const char *comms[4] = {"bash", "a) b (c", "new\nline", comm103};
    for (size_t i = 0; i < 4; i++) {
        js_value_t *v = rows_row(info, i);
        assert_ival(v[INFO_PID], pids[i]);
        assert_ival(v[INFO_PPID], ppids[i]);
        assert_ival(v[INFO_UID], uids[i]);
        assert_ival(v[INFO_START_TICKS], starts[i]);
        assert_true(v[INFO_COMM].present);
        assert_string_equal(rows_str(info, &v[INFO_COMM]), comms[i]);
        assert_true(v[INFO_CMDLINE].present);
        assert_string_equal(rows_str(info, &v[INFO_CMDLINE]), cmd[i]);
    }
}

static const int members4[4] = {100, 101, 102, 103};

static void run_fixture(const char *root, const char *discovery)
{
    int fds0 = count_open_fds();
    tree_t t;
    tree_open(&t, root);
    tree_collect(&t);
    check_members(&t, members4, 4); /* parents first; 999 absent */
    check_values(&t);
    check_info(&t);
    check_tree_row(&t, 4, discovery);

    /* same state again: same rows, no proc_info for known processes */
    tree_collect(&t);
    check_members(&t, members4, 4);
    check_values(&t);
    assert_int_equal(t.rows[1]->nrows, 0);
    check_tree_row(&t, 4, discovery);

    /* the status / smaps_rollup cadence: on seq 3 with every = 2, status is skipped and so are its values */
    t.ctx.status_every = 2;
    t.ctx.uss_every = 2;
    tree_collect(&t); /* seq 2: read */
    assert_ival(rows_row(t.rows[0], 0)[PROC_RSS_ANON], 1600 * KB);
    assert_ival(rows_row(t.rows[0], 0)[PROC_USS], (44 + 1600 + 2048) * KB);
    tree_collect(&t); /* seq 3: skipped */
    check_members(&t, members4, 4);
    assert_missing(rows_row(t.rows[0], 0)[PROC_RSS_ANON]);
    assert_missing(rows_row(t.rows[0], 0)[PROC_USS]);
    assert_ival(rows_row(t.rows[0], 0)[PROC_UTIME], 12); /* stat every sample */
    t.ctx.uss_every = 0;                                 /* never */
    t.ctx.final = true;                                  /* the last sample reads status */
    tree_collect(&t);
    assert_ival(rows_row(t.rows[0], 0)[PROC_RSS_ANON], 1600 * KB);
    assert_missing(rows_row(t.rows[0], 0)[PROC_USS]);

    tree_close(&t);
    assert_int_equal(count_open_fds(), fds0); /* kept descriptors are all closed */
}

static void test_collect_children(void **state)
{
    (void)state;
    run_fixture(FIXTURES "/proc", "children");
}

static void test_collect_scan(void **state)
{
    (void)state;
    run_fixture(FIXTURES "/proc-nochildren", "scan");
}

/* A root that does not exist: collect succeeds with no members and root_alive 0. */
static void test_collect_no_root(void **state)
{
    (void)state;
    tree_t t;
    tree_open(&t, FIXTURES "/proc");
    t.ctx.root_pid = 4242;
    tree_collect(&t);
    assert_int_equal(t.rows[0]->nrows, 0);
    assert_int_equal(t.rows[1]->nrows, 0);
    assert_int_equal(t.rows[2]->nrows, 1);
    js_value_t *v = rows_row(t.rows[2], 0);
    assert_ival(v[TREE_MEMBERS], 0);
    assert_ival(v[TREE_ROOT_ALIVE], 0);
    assert_int_equal(t.ctx.live_members, 0);
    tree_close(&t);
    source_proc_tree.fini(NULL);
}

/* Attach to a subtree: 101 is the root; 100, 102 and 999 are outside it. */
static void test_collect_subtree(void **state)
{
    (void)state;
    tree_t t;
    tree_open(&t, FIXTURES "/proc");
    t.ctx.root_pid = 101;
    tree_collect(&t);
    static const int want[2] = {101, 103};
    check_members(&t, want, 2);
    assert_int_equal(t.rows[1]->nrows, 2);
    tree_close(&t);
}

/* ---- a fixture that changes between samples ---- */

static void putn(const char *dir, const char *rel, const char *data, size_t len)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    FILE *f = fopen(p, "w"); /* in place: the source keeps descriptors open, as on procfs */
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void put(const char *dir, const char *rel, const char *text)
{
    putn(dir, rel, text, strlen(text));
}

#define STAT_TAIL                                                                                            \
    " 18446744073709551615 94406396076032 94406396095913 140735423154192 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "  \
    "94406396111920 94406396113536 94407292456960 140735423162822 140735423162842 140735423162842 "          \
    "140735423164395 0\n"

static void test_collect_changes(void **state)
{
    (void)state;
    char dir[] = "/tmp/jobscope-test-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "cp -R '%s/proc/.' '%s/'", FIXTURES, dir);
    assert_int_equal(system(cmd), 0);

    tree_t t;
    tree_open(&t, dir);
    tree_collect(&t);
    check_members(&t, members4, 4);

    /* 102 exits (its stat reads empty, as a dead process's would fail), 101 execs (new comm, same start), 103
     * is reaped and its PID reused by a new process (new start time) under 101; 104 is a new child of 100 */
    put(dir, "102/stat", "");
    put(dir, "100/task/100/children", "101 104 ");
    put(dir, "101/stat",
        "101 (make) S 100 100 100 34816 -1 4194560 900 0 2 0 400 70 0 0 20 0 3 0 5100 120000000 "
        "3000" STAT_TAIL);
    putn(dir, "101/cmdline", "make\0-j4\0", 8);
    put(dir, "103/stat",
        "103 (cc1) R 101 101 100 34816 -1 4194560 1 0 0 0 1 0 0 0 20 0 1 0 9999 1000 10" STAT_TAIL);
    snprintf(cmd, sizeof(cmd),
             "cp -R '%s/103' '%s/104' && printf '104 (ld) S 100 100 100 34816 -1 0 0 0 0 0 0 0 "
             "0 0 20 0 1 0 9998 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\\n' > '%s/104/stat'",
             dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    tree_collect(&t);
    /* last sample's members keep their order; new children follow */
    static const int want[4] = {100, 101, 103, 104};
    check_members(&t, want, 4);
    const js_rows_t *info = t.rows[1];
    assert_int_equal(info->nrows, 3); /* 101 (exec), 103 (reused PID), 104 (new) */
    js_value_t *v = rows_row(info, 0);
    assert_ival(v[INFO_PID], 101);
    assert_string_equal(rows_str(info, &v[INFO_COMM]), "make");
    assert_string_equal(rows_str(info, &v[INFO_CMDLINE]), "[\"make\",\"-j4\"]");
    v = rows_row(info, 1);
    assert_ival(v[INFO_PID], 103);
    assert_ival(v[INFO_START_TICKS], 9999);
    assert_string_equal(rows_str(info, &v[INFO_COMM]), "cc1");
    v = rows_row(info, 2);
    assert_ival(v[INFO_PID], 104);
    assert_ival(v[INFO_START_TICKS], 9998);
    assert_ival(v[INFO_PPID], 100);
    v = rows_row(t.rows[0], 2);
    assert_ival(v[PROC_START_TICKS], 9999);
    assert_ival(v[PROC_UTIME], 1);
    check_tree_row(&t, 4, "children");

    /* 101 is re-parented away (ppid 1) but stays a member; its child 103 too */
    put(dir, "101/stat",
        "101 (make) S 1 100 100 34816 -1 4194560 900 0 2 0 400 70 0 0 20 0 3 0 5100 120000000 "
        "3000" STAT_TAIL);
    put(dir, "100/task/100/children", "104 ");
    tree_collect(&t);
    static const int want2[4] = {100, 101, 103, 104};
    check_members(&t, want2, 4);
    assert_int_equal(t.rows[1]->nrows, 0);

    /* 101 execs again under the same name (`exec make ...`): the comm stays, the image's addresses (stat
     * fields 26-28, 48-49) change, so it is announced again with its new command line */
    put(dir, "101/stat",
        "101 (make) S 1 100 100 34816 -1 4194560 900 0 2 0 401 70 0 0 20 0 3 0 5100 120000000 3000 "
        "18446744073709551615 94000000000000 94000000019881 140735500000000 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
        "94000000035888 94000000037504 94000900000000 140735500008630 140735500008650 140735500008650 "
        "140735500010203 0\n");
    putn(dir, "101/cmdline", "make\0install\0", 13);
    tree_collect(&t);
    check_members(&t, want2, 4);
    assert_int_equal(t.rows[1]->nrows, 1);
    v = rows_row(t.rows[1], 0);
    assert_ival(v[INFO_PID], 101);
    assert_string_equal(rows_str(t.rows[1], &v[INFO_COMM]), "make");
    assert_string_equal(rows_str(t.rows[1], &v[INFO_CMDLINE]), "[\"make\",\"install\"]");
    /* and not again while nothing changes */
    tree_collect(&t);
    assert_int_equal(t.rows[1]->nrows, 0);

    tree_close(&t);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- slurmstepd roots (jobscope job without a cgroup; tests/fixtures/proc-stepd/README.md) ---- */

static void check_stepd_rows(const tree_t *t, const int *pids, size_t n)
{
    const js_rows_t *sr = t->rows[4];
    assert_int_equal(sr->nrows, n);
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t k = 0; k < sr->nrows; k++)
            found |= rows_row(sr, k)[STEPD_PID].i == pids[i];
        assert_true(found);
    }
}

/* sorted_members: the proc rows' PIDs, sorted (roots are listed in procfs order) */
static size_t sorted_members(const tree_t *t, int *out, size_t cap)
{
    size_t n = t->rows[0]->nrows;
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++)
        out[i] = (int)rows_row(t->rows[0], i)[PROC_PID].i;
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && out[k - 1] > out[k]; k--) {
            int x = out[k];
            out[k] = out[k - 1];
            out[k - 1] = x;
        }
    return n;
}

static void test_collect_stepd_job(void **state)
{
    (void)state;
    js_scope_t sc = {.kind = JS_SCOPE_TREE, .stepd_job = "7", .stepd_skip = "3"};
    tree_t t;
    tree_open_scope(&t, FIXTURES "/proc-stepd", JS_MODE_WATCH, 0, &sc);
    t.ctx.monitor_pid = 1;
    tree_collect(&t);
    int got[16];
    size_t n = sorted_members(&t, got, 16);
    /* steps 0 and batch; not job 8's task (300), not the monitor's step (400), not under a look-alike (500)
     */
    static const int want[] = {100, 101, 200};
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
    static const int roots[] = {50, 60};
    check_stepd_rows(&t, roots, 2);
    for (size_t k = 0; k < t.rows[4]->nrows; k++) {
        const js_value_t *v = rows_row(t.rows[4], k);
        if (v[STEPD_PID].i != 50)
            continue;
        assert_ival(v[STEPD_CUTIME], 40);
        assert_ival(v[STEPD_CSTIME], 10);
        assert_ival(v[STEPD_START_TICKS], 1050);
        assert_string_equal(rows_str(t.rows[4], &v[STEPD_STEP]), "0");
    }
    const js_value_t *tv = rows_row(t.rows[2], 0);
    assert_string_equal(rows_str(t.rows[2], &tv[TREE_DISCOVERY]), "slurmstepd");
    assert_false(t.ctx.scope_gone); /* a whole job ends by signal or stop file only */
    tree_collect(&t);               /* again: the classification is cached */
    assert_int_equal(sorted_members(&t, got, 16), 3);
    check_stepd_rows(&t, roots, 2);
    tree_close(&t);
}

static void test_collect_stepd_step(void **state)
{
    (void)state;
    js_scope_t sc = {.kind = JS_SCOPE_TREE, .stepd_job = "7", .stepd_step = "batch"};
    tree_t t;
    tree_open_scope(&t, FIXTURES "/proc-stepd", JS_MODE_WATCH, 0, &sc);
    t.ctx.monitor_pid = 1;
    tree_collect(&t);
    int got[16];
    assert_int_equal(sorted_members(&t, got, 16), 1);
    assert_int_equal(got[0], 200);
    static const int roots[] = {60};
    check_stepd_rows(&t, roots, 1);
    tree_close(&t);

    /* a step with no slurmstepd here: nothing, and not over before one was seen */
    js_scope_t none = {.kind = JS_SCOPE_TREE, .stepd_job = "7", .stepd_step = "9"};
    tree_open_scope(&t, FIXTURES "/proc-stepd", JS_MODE_WATCH, 0, &none);
    t.ctx.monitor_pid = 1;
    tree_collect(&t);
    assert_int_equal(t.rows[0]->nrows, 0);
    assert_int_equal(t.rows[4]->nrows, 0);
    assert_false(t.ctx.scope_gone);
    tree_close(&t);
}

static void test_collect_stepd_pid(void **state)
{
    (void)state;
    /* the SPANK plugin's way: one slurmstepd by PID; its tasks are members, the monitor (400 here) is not */
    js_scope_t sc = {.kind = JS_SCOPE_TREE, .stepd_job = "7", .stepd_step = "3", .stepd_pid = 80};
    tree_t t;
    tree_open_scope(&t, FIXTURES "/proc-stepd", JS_MODE_WATCH, 0, &sc);
    t.ctx.monitor_pid = 400;
    tree_collect(&t);
    assert_int_equal(t.rows[0]->nrows, 0);
    static const int roots[] = {80};
    check_stepd_rows(&t, roots, 1);
    assert_false(t.ctx.scope_gone);
    tree_close(&t);

    js_scope_t sc2 = {.kind = JS_SCOPE_TREE, .stepd_job = "7", .stepd_step = "0", .stepd_pid = 50};
    tree_open_scope(&t, FIXTURES "/proc-stepd", JS_MODE_WATCH, 0, &sc2);
    t.ctx.monitor_pid = 1;
    tree_collect(&t);
    int got[16];
    assert_int_equal(sorted_members(&t, got, 16), 2);
    assert_int_equal(got[0], 100);
    assert_int_equal(got[1], 101);
    tree_close(&t);

    /* a slurmstepd that is gone (no such PID): the step is over */
    js_scope_t gone = {.kind = JS_SCOPE_TREE, .stepd_job = "7", .stepd_step = "0", .stepd_pid = 4242};
    tree_open_scope(&t, FIXTURES "/proc-stepd", JS_MODE_WATCH, 0, &gone);
    t.ctx.monitor_pid = 1;
    tree_collect(&t);
    assert_int_equal(t.rows[0]->nrows, 0);
    assert_true(t.ctx.scope_gone);
    tree_close(&t);
}

/* the time between two counts of the node's processes (watch --node without --top): 10 s, longer where the
 * walk of /proc costs more than a 20,000th of it, an hour at most */
static void test_node_count_period(void **state)
{
    (void)state;
    assert_int_equal(ptree_node_count_period(0), NODE_COUNT_NS); /* not measured */
    assert_int_equal(ptree_node_count_period(-5), NODE_COUNT_NS);
    assert_int_equal(ptree_node_count_period(100000), NODE_COUNT_NS);  /* 0.1 ms: 2 s, so 10 s */
    assert_int_equal(ptree_node_count_period(500000), NODE_COUNT_NS);  /* 0.5 ms: exactly 10 s */
    assert_int_equal(ptree_node_count_period(1000000), 20000000000LL); /* 1 ms walk: every 20 s */
    assert_int_equal(ptree_node_count_period(2500000), 50000000000LL);
    assert_int_equal(ptree_node_count_period(1000000000LL), 3600000000000LL);  /* 1 s walk: hourly */
    assert_int_equal(ptree_node_count_period(INT64_MAX / 2), 3600000000000LL); /* no overflow */
}

/* watch --node without --top on a fixture: the processes are counted at the first sample and at the closing
 * one; a sample right after a count has no node_processes (absent, not 0) and no process rows */
static void test_collect_node_counts(void **state)
{
    (void)state;
    tree_t t;
    js_scope_t node = {.kind = JS_SCOPE_NODE};
    tree_open_scope(&t, FIXTURES "/proc", JS_MODE_WATCH, 0, &node);
    int64_t counts[3];
    for (int i = 0; i < 3; i++) {
        t.ctx.final = i == 2;
        tree_collect(&t);
        assert_int_equal(t.rows[0]->nrows, 0);
        assert_int_equal(t.rows[2]->nrows, 1);
        const js_value_t *v = rows_row(t.rows[2], 0);
        counts[i] = v[TREE_NODE_PROCS].present ? v[TREE_NODE_PROCS].i : -1;
    }
    assert_int_equal(counts[0], 5); /* 100-103 and 999 */
    assert_int_equal(counts[1], -1);
    assert_int_equal(counts[2], 5);
    tree_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_io),           cmocka_unit_test(test_parse_statm),
        cmocka_unit_test(test_parse_status),       cmocka_unit_test(test_parse_smaps),
        cmocka_unit_test(test_cmdline_json),       cmocka_unit_test(test_cmdline_redact),
        cmocka_unit_test(test_collect_children),   cmocka_unit_test(test_collect_stepd_job),
        cmocka_unit_test(test_collect_stepd_step), cmocka_unit_test(test_collect_stepd_pid),
        cmocka_unit_test(test_collect_scan),       cmocka_unit_test(test_collect_no_root),
        cmocka_unit_test(test_collect_subtree),    cmocka_unit_test(test_collect_changes),
        cmocka_unit_test(test_node_count_period),  cmocka_unit_test(test_collect_node_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
