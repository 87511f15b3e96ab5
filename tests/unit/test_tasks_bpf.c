/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the BPF task reader's pure helpers (src/sources/bpf/tasks_bpf.c), which turn the raw kernel
 * figures into what /proc shows: cputime_adjust() without its side effect (the early return, all-user and
 * all-system splits, the exact 128-bit scaling, both monotonicity clamps), nsec_to_clock_t() for tick rates
 * that divide 10^9 and one that does not, and the state letter of every reportable task state; the entry
 * points' answers when the reader is not built (-EOPNOTSUPP with a reason) or given bad options; and
 * proc_parse_schedstat() (src/sources/schedstat.c). What the BPF program reads is tested against /proc by
 * tests/integration/test_bpf_reader.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config.h"
#include "sources/bpf/tasks_bpf.h"
#include "sources/schedstat.h"

#include <errno.h>
#include <string.h>

#define NS 1000000000ull

/* ---- cputime_adjust ---- */

static void adjust(uint64_t rtime, uint64_t u, uint64_t s, uint64_t pu, uint64_t ps, uint64_t *ru,
                   uint64_t *rs)
{
    *ru = *rs = 12345; /* overwritten */
    tasks_bpf_cputime_adjust(rtime, u, s, pu, ps, ru, rs);
}

static void test_adjust_scales_to_rtime(void **state)
{
    (void)state;
    uint64_t u, s;
    /* ticks say 3:1 user:system; the scheduler says 8 s in all */
    adjust(8 * NS, 3 * NS, 1 * NS, 0, 0, &u, &s);
    assert_int_equal(s, 2 * NS);
    assert_int_equal(u, 6 * NS);
    /* the sum is always rtime */
    adjust(1000000007, 7, 5, 0, 0, &u, &s);
    assert_int_equal(u + s, 1000000007);
    assert_int_equal(s, 1000000007ull * 5 / 12);
}

static void test_adjust_exact_beyond_64_bits(void **state)
{
    (void)state;
    uint64_t u, s;
    /* stime * rtime overflows 64 bits: a 1-year process (3.15e16 ns) with most of it system time */
    uint64_t rtime = 31536000ull * NS, st = 30000000ull * NS, ut = 1536000ull * NS + 3;
    adjust(rtime, ut, st, 0, 0, &u, &s);
    __extension__ unsigned __int128 want = (unsigned __int128)st * rtime / ((unsigned __int128)st + ut);
    assert_int_equal(s, (uint64_t)want);
    assert_int_equal(u, rtime - (uint64_t)want);
}

static void test_adjust_zero_ticks(void **state)
{
    (void)state;
    uint64_t u, s;
    adjust(5 * NS, 3, 0, 0, 0, &u, &s); /* no system tick: all user */
    assert_int_equal(u, 5 * NS);
    assert_int_equal(s, 0);
    adjust(5 * NS, 0, 3, 0, 0, &u, &s); /* no user tick: all system */
    assert_int_equal(u, 0);
    assert_int_equal(s, 5 * NS);
    adjust(5 * NS, 0, 0, 0, 0, &u, &s); /* no tick at all: all user */
    assert_int_equal(u, 5 * NS);
    assert_int_equal(s, 0);
}

static void test_adjust_no_progress_returns_prev(void **state)
{
    (void)state;
    uint64_t u, s;
    /* what was handed out already covers rtime: the same split again, whatever the ticks say */
    adjust(10 * NS, 1, 9, 6 * NS, 4 * NS, &u, &s);
    assert_int_equal(u, 6 * NS);
    assert_int_equal(s, 4 * NS);
    adjust(9 * NS, 1, 9, 6 * NS, 4 * NS, &u, &s); /* rtime behind prev (reordering): still prev */
    assert_int_equal(u, 6 * NS);
    assert_int_equal(s, 4 * NS);
}

static void test_adjust_monotonic_clamps(void **state)
{
    (void)state;
    uint64_t u, s;
    /* the scaled stime (1 s of 4) is below the previous stime (2 s): stime stays, utime takes the rest */
    adjust(4 * NS, 3, 1, 1 * NS, 2 * NS, &u, &s);
    assert_int_equal(s, 2 * NS);
    assert_int_equal(u, 2 * NS);
    /* the scaled split would take utime below the previous one (3 s): utime stays, stime takes the rest */
    adjust(4 * NS, 1, 3, 3 * NS, 0, &u, &s);
    assert_int_equal(u, 3 * NS);
    assert_int_equal(s, 1 * NS);
    /* a sequence never goes backwards in either part */
    uint64_t pu = 0, ps = 0;
    const uint64_t ticks[][2] = {{1, 0}, {1, 1}, {5, 1}, {5, 9}, {6, 9}, {20, 9}};
    for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
        adjust((i + 1) * NS, ticks[i][0], ticks[i][1], pu, ps, &u, &s);
        assert_true(u >= pu && s >= ps);
        assert_int_equal(u + s, (i + 1) * NS);
        pu = u;
        ps = s;
    }
}

/* ---- nsec_to_clock_t ---- */

static void test_ns_to_ticks(void **state)
{
    (void)state;
    assert_int_equal(tasks_bpf_ns_to_ticks(0, 100), 0);
    assert_int_equal(tasks_bpf_ns_to_ticks(9999999, 100), 0); /* truncated, as the kernel does */
    assert_int_equal(tasks_bpf_ns_to_ticks(10000000, 100), 1);
    assert_int_equal(tasks_bpf_ns_to_ticks(123456789012ull, 100), 12345);
    assert_int_equal(tasks_bpf_ns_to_ticks(123456789012ull, 250), 30864);
    /* 1024 does not divide 10^9: the exact product, truncated */
    assert_int_equal(tasks_bpf_ns_to_ticks(NS, 1024), 1024);
    assert_int_equal(tasks_bpf_ns_to_ticks(NS - 1, 1024), 1023);
    assert_int_equal(tasks_bpf_ns_to_ticks(UINT64_MAX, 1024),
                     (uint64_t)((__extension__(unsigned __int128) UINT64_MAX * 1024) / NS));
    assert_int_equal(tasks_bpf_ns_to_ticks(NS, 0), 0);
}

/* ---- task state letters ---- */

static void test_state_letters(void **state)
{
    (void)state;
    assert_int_equal(tasks_bpf_state_char(0, 0), 'R');
    assert_int_equal(tasks_bpf_state_char(0x1, 0), 'S');
    assert_int_equal(tasks_bpf_state_char(0x2, 0), 'D');
    assert_int_equal(tasks_bpf_state_char(0x4, 0), 'T');
    assert_int_equal(tasks_bpf_state_char(0x8, 0), 't');
    assert_int_equal(tasks_bpf_state_char(0x80, 0x10), 'X'); /* TASK_DEAD, EXIT_DEAD */
    assert_int_equal(tasks_bpf_state_char(0x80, 0x20), 'Z'); /* TASK_DEAD, EXIT_ZOMBIE */
    assert_int_equal(tasks_bpf_state_char(0x40, 0), 'P');    /* TASK_PARKED */
    assert_int_equal(tasks_bpf_state_char(0x402, 0), 'I');   /* TASK_IDLE = UNINTERRUPTIBLE | NOLOAD */
    assert_int_equal(tasks_bpf_state_char(0x102, 0), 'D');   /* TASK_KILLABLE = WAKEKILL | UNINTERRUPTIBLE */
    assert_int_equal(tasks_bpf_state_char(0x108, 0), 't');   /* TASK_TRACED = WAKEKILL | __TASK_TRACED */
    assert_int_equal(tasks_bpf_state_char(0x1000, 0), 'D');  /* TASK_RTLOCK_WAIT shows as D */
    assert_int_equal(tasks_bpf_state_char(0x8000, 0), 'D');  /* TASK_FROZEN shows as D */
    assert_int_equal(tasks_bpf_state_char(0x200, 0), 'R');   /* TASK_WAKING: not reported */
    assert_int_equal(tasks_bpf_state_char(0x1, 0x20), 'Z');  /* exit_state wins over a sleeping __state */
}

/* ---- entry points without a reader ---- */

static void test_entry_points(void **state)
{
    (void)state;
    char why[256] = "";
    tasks_bpf_t *t = (tasks_bpf_t *)&why; /* must be reset to NULL */
    tasks_bpf_opts_t o;
    tasks_bpf_opts_init(&o);
    assert_int_equal(o.mode, TASKS_BPF_TASKS);
    assert_int_equal(o.sys_fd, -1);
    assert_int_equal(o.cgroup_fd, -1);
#ifdef JOBSCOPE_HAVE_BPF
    /* a cgroup reader needs a cgroup */
    o.mode = TASKS_BPF_CGROUP;
    assert_int_equal(tasks_bpf_open(&o, &t, why, sizeof(why)), -EINVAL);
    assert_null(t);
    assert_string_equal(why, "bad options");
    o.mode = TASKS_BPF_MODE_MAX;
    assert_int_equal(tasks_bpf_available(o.mode, -1, why, sizeof(why)), -EINVAL);
    /* built in: whatever this machine allows, the answer is not "absent" */
    int r = tasks_bpf_available(TASKS_BPF_TASKS, -1, why, sizeof(why));
    assert_int_not_equal(r, -EOPNOTSUPP);
    assert_true(r == 0 || why[0] != '\0');
#else
    assert_int_equal(tasks_bpf_available(TASKS_BPF_TASKS, -1, why, sizeof(why)), -EOPNOTSUPP);
    assert_non_null(strstr(why, "built without the BPF reader"));
    why[0] = '\0';
    assert_int_equal(tasks_bpf_open(&o, &t, why, sizeof(why)), -EOPNOTSUPP);
    assert_null(t);
    assert_true(why[0] != '\0');
    assert_int_equal(tasks_bpf_read(NULL, NULL, NULL), -EOPNOTSUPP);
#endif
    tasks_bpf_info_t info;
    tasks_bpf_info(NULL, &info);
    assert_string_equal(info.mode, "none");
    tasks_bpf_close(NULL); /* accepted */
}

/* ---- schedstat ---- */

static void test_schedstat(void **state)
{
    (void)state;
    js_schedstat_t s = {1, 2, 3};
    assert_int_equal(proc_parse_schedstat("13675444 25231 5\n", &s), 0);
    assert_int_equal(s.run_ns, 13675444);
    assert_int_equal(s.wait_ns, 25231);
    assert_int_equal(s.slices, 5);
    assert_int_equal(proc_parse_schedstat("18446744073709551615 0 0", &s), 0); /* no newline, max value */
    assert_int_equal(s.run_ns, UINT64_MAX);
    assert_int_equal(proc_parse_schedstat("0 0 0\n", &s), 0); /* CONFIG_SCHED_INFO off */
    assert_int_equal(s.run_ns, 0);

    js_schedstat_t keep = {7, 8, 9};
    const char *bad[] = {"", "\n", "1 2\n", "1 2 x\n", "a 1 2\n", "1,2 3\n", "1 2 3x\n", "-1 2 3\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        s = keep;
        assert_int_equal(proc_parse_schedstat(bad[i], &s), -EINVAL);
        assert_memory_equal(&s, &keep, sizeof(s)); /* untouched */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adjust_scales_to_rtime),
        cmocka_unit_test(test_adjust_exact_beyond_64_bits),
        cmocka_unit_test(test_adjust_zero_ticks),
        cmocka_unit_test(test_adjust_no_progress_returns_prev),
        cmocka_unit_test(test_adjust_monotonic_clamps),
        cmocka_unit_test(test_ns_to_ticks),
        cmocka_unit_test(test_state_letters),
        cmocka_unit_test(test_entry_points),
        cmocka_unit_test(test_schedstat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
