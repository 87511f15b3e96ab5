/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the shared parsers in src/sys/parse.c: parse_u64/parse_i64 (blanks, no digits, saturation,
 * the pointer left unchanged on failure), kv_u64 (first, middle and last line, a key that is a prefix of
 * another, a key without a number) and parse_pid_stat on /proc/<pid>/stat lines shaped like a real kernel's,
 * including comms holding parentheses, spaces and newlines, a comm longer than the 64-byte buffer, negative
 * fields, and truncated or malformed text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sys/parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The fields after rss (25 .. 52) of this machine's /proc/self/stat; rsslim is the unlimited 2^64-1 and
 * processor (field 39) is 1. */
#define STAT_TAIL                                                                                            \
    "18446744073709551615 94406396076032 94406396095913 140735423154192 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "   \
    "94406396111920 94406396113536 94407292456960 140735423162822 140735423162842 140735423162842 "          \
    "140735423164395 0\n"

/* Fields 4 .. 24: ppid pgrp session tty tpgid(-1) flags minflt cminflt majflt cmajflt utime stime cutime
 * cstime priority nice threads itreal starttime vsize rss. */
#define STAT_MID "16346 16346 13272 34816 -1 4194304 99 5 3 1 250 40 -7 9 20 0 4 0 99410 3133440 412 "

/* ---- parse_u64 / parse_i64 ---- */

static void test_u64_basic(void **state)
{
    (void)state;
    const char *s = "  \t42 rest";
    const char *p = s;
    uint64_t v = 7;
    assert_int_equal(parse_u64(&p, &v), 0);
    assert_int_equal(v, 42);
    assert_ptr_equal(p, s + 5); /* just past the digits */
    assert_string_equal(p, " rest");

    /* successive numbers as in statm */
    p = "765 432 404\n";
    uint64_t a, b, c;
    assert_int_equal(parse_u64(&p, &a), 0);
    assert_int_equal(parse_u64(&p, &b), 0);
    assert_int_equal(parse_u64(&p, &c), 0);
    assert_int_equal(a, 765);
    assert_int_equal(b, 432);
    assert_int_equal(c, 404);
    assert_string_equal(p, "\n");
    assert_int_equal(parse_u64(&p, &a), -EINVAL); /* a newline is not a blank */

    p = "0";
    assert_int_equal(parse_u64(&p, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(*p, '\0');
}

static void test_u64_no_digits(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "   ", "\t", "abc", "-1", "+1", " x1", "\n5", ".5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *p = bad[i];
        uint64_t v = 12345;
        assert_int_equal(parse_u64(&p, &v), -EINVAL);
        assert_ptr_equal(p, bad[i]); /* unchanged, even past skipped blanks */
        assert_int_equal(v, 12345);  /* untouched */
    }
}

static void test_u64_saturates(void **state)
{
    (void)state;
    const char *p = "18446744073709551615"; /* UINT64_MAX exactly */
    uint64_t v = 0;
    assert_int_equal(parse_u64(&p, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(*p, '\0');

    p = "18446744073709551614";
    assert_int_equal(parse_u64(&p, &v), 0);
    assert_true(v == UINT64_MAX - 1);

    p = "18446744073709551616 9"; /* UINT64_MAX + 1 */
    assert_int_equal(parse_u64(&p, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_string_equal(p, " 9"); /* all digits consumed */

    p = "99999999999999999999999999999999999999";
    assert_int_equal(parse_u64(&p, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(*p, '\0');

    p = "00000000000000000000000000000000000042";
    assert_int_equal(parse_u64(&p, &v), 0);
    assert_int_equal(v, 42);
}

static void test_i64(void **state)
{
    (void)state;
    const char *p = " -1 17";
    int64_t v = 0;
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_int_equal(v, -1);
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_int_equal(v, 17);

    p = "9223372036854775807";
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_true(v == INT64_MAX);

    p = "9223372036854775808"; /* saturates */
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_true(v == INT64_MAX);

    p = "18446744073709551615"; /* rsslim "unlimited" read as signed */
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_true(v == INT64_MAX);

    p = "-9223372036854775807";
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_true(v == -INT64_MAX);

    p = "-0";
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_int_equal(v, 0);

    static const char *const bad[] = {"", "-", "--1", "-+1", "x", "\t-x", "-\n1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        p = bad[i];
        v = 99;
        assert_int_equal(parse_i64(&p, &v), -EINVAL);
        assert_ptr_equal(p, bad[i]);
        assert_int_equal(v, 99);
    }
}

/* The sign belongs to the number: "- 1" is not -1 (parse_u64's blank skipping must not apply after '-'). */
static void test_i64_blank_after_sign(void **state)
{
    (void)state;
    static const char *const bad[] = {" - 1", "-\t7"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *p = bad[i];
        int64_t v = 99;
        assert_int_equal(parse_i64(&p, &v), -EINVAL);
        assert_ptr_equal(p, bad[i]);
        assert_int_equal(v, 99);
    }
}

/* INT64_MIN is representable and should parse exactly; saturation belongs beyond it. */
static void test_i64_min(void **state)
{
    (void)state;
    const char *p = "-9223372036854775808";
    int64_t v = 0;
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_true(v == INT64_MIN);
    p = "-99999999999999999999";
    assert_int_equal(parse_i64(&p, &v), 0);
    assert_true(v == INT64_MIN);
}

/* ---- kv_u64 ---- */

static const char status_text[] = "Name:\tcat\n"
                                  "VmHWM:\t    1640 kB\n"
                                  "VmRSS:\t    1640 kB\n"
                                  "RssAnon:\t     112 kB\n"
                                  "RssFile:\t    1528 kB\n"
                                  "Threads:\t1\n"
                                  "Empty:\n"
                                  "Blank:   \t\n"
                                  "nonvoluntary_ctxt_switches:\t3";

static void test_kv_positions(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(kv_u64("VmHWM: 5 kB\n", "VmHWM:", &v), 0); /* first line */
    assert_int_equal(v, 5);
    assert_int_equal(kv_u64(status_text, "VmRSS:", &v), 0); /* middle */
    assert_int_equal(v, 1640);
    assert_int_equal(kv_u64(status_text, "Threads:", &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(kv_u64(status_text, "nonvoluntary_ctxt_switches:", &v), 0); /* last, no newline */
    assert_int_equal(v, 3);
}

static void test_kv_missing(void **state)
{
    (void)state;
    uint64_t v = 77;
    assert_int_equal(kv_u64(status_text, "VmSwap:", &v), -ENOENT);
    assert_int_equal(kv_u64("", "VmSwap:", &v), -ENOENT);
    /* a key only found mid-line is not a key */
    assert_int_equal(kv_u64("Foo: 1 VmSwap: 3\n", "VmSwap:", &v), -ENOENT);
    /* "voluntary_ctxt_switches:" must not match "nonvoluntary_ctxt_switches:" */
    assert_int_equal(kv_u64(status_text, "voluntary_ctxt_switches:", &v), -ENOENT);
    assert_int_equal(v, 77);
}

static void test_kv_no_number(void **state)
{
    (void)state;
    uint64_t v = 77;
    assert_int_equal(kv_u64(status_text, "Name:", &v), -EINVAL);
    assert_int_equal(kv_u64(status_text, "Empty:", &v), -EINVAL);
    assert_int_equal(kv_u64(status_text, "Blank:", &v), -EINVAL); /* must not read the next line's number */
    assert_int_equal(kv_u64("Key:", "Key:", &v), -EINVAL);        /* at the very end */
    assert_int_equal(v, 77);
}

static void test_kv_prefix_keys(void **state)
{
    (void)state;
    uint64_t v = 0;
    /* "Rss:" must not match the "RssAnon:" line: the colon is part of the key */
    assert_int_equal(kv_u64("RssAnon: 112 kB\nRss: 1708 kB\n", "Rss:", &v), 0);
    assert_int_equal(v, 1708);
    v = 5;
    assert_int_equal(kv_u64("RssAnon: 112 kB\nRssFile: 3 kB\n", "Rss:", &v), -ENOENT);
    assert_int_equal(v, 5);
    /* smaps_rollup: "Pss:" vs "Pss_Anon:" / "SwapPss:" */
    const char *sm = "Rss: 1708 kB\nPss_Anon: 112 kB\nSwapPss: 9 kB\nPss: 247 kB\n";
    assert_int_equal(kv_u64(sm, "Pss:", &v), 0);
    assert_int_equal(v, 247);
    assert_int_equal(kv_u64(sm, "SwapPss:", &v), 0);
    assert_int_equal(v, 9);
}

/* ---- parse_pid_stat ---- */

static void test_stat_real(void **state)
{
    (void)state;
    const char *text = "16348 (cat) R " STAT_MID STAT_TAIL;
    js_pid_stat_t ps;
    memset(&ps, 0xa5, sizeof(ps));
    assert_int_equal(parse_pid_stat(text, &ps), 0);
    assert_int_equal(ps.pid, 16348);
    assert_string_equal(ps.comm, "cat");
    assert_int_equal(ps.state, 'R');
    assert_int_equal(ps.ppid, 16346);
    assert_int_equal(ps.minflt, 99);
    assert_int_equal(ps.cminflt, 5);
    assert_int_equal(ps.majflt, 3);
    assert_int_equal(ps.cmajflt, 1);
    assert_int_equal(ps.utime, 250);
    assert_int_equal(ps.stime, 40);
    assert_int_equal(ps.cutime, -7); /* signed in proc(5) */
    assert_int_equal(ps.cstime, 9);
    assert_int_equal(ps.num_threads, 4);
    assert_int_equal(ps.starttime, 99410);
    assert_int_equal(ps.vsize, 3133440);
    assert_int_equal(ps.rss, 412);
    assert_int_equal(ps.processor, 1);
}

/* The copy this test was modelled on, verbatim (fields after tpgid). */
static void test_stat_verbatim(void **state)
{
    (void)state;
    const char *text =
        "16348 (cat) R 16346 16346 13272 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 99410 3133440 412 "
        "18446744073709551615 94406396076032 94406396095913 140735423154192 0 0 0 0 0 0 0 0 0 17 1 "
        "0 0 0 0 0 94406396111920 94406396113536 94407292456960 140735423162822 140735423162842 "
        "140735423162842 140735423164395 0\n";
    js_pid_stat_t ps;
    assert_int_equal(parse_pid_stat(text, &ps), 0);
    assert_int_equal(ps.ppid, 16346);
    assert_int_equal(ps.num_threads, 1);
    assert_int_equal(ps.rss, 412);
    assert_int_equal(ps.processor, 1);
}

static void test_stat_comm_parens(void **state)
{
    (void)state;
    js_pid_stat_t ps;
    assert_int_equal(parse_pid_stat("101 (a) b (c) S " STAT_MID STAT_TAIL, &ps), 0);
    assert_int_equal(ps.pid, 101);
    assert_string_equal(ps.comm, "a) b (c");
    assert_int_equal(ps.state, 'S');
    assert_int_equal(ps.ppid, 16346);
    assert_int_equal(ps.utime, 250);

    /* a comm that looks like the rest of a stat line */
    assert_int_equal(parse_pid_stat("7 () R 1 2 3) Z " STAT_MID STAT_TAIL, &ps), 0);
    assert_string_equal(ps.comm, ") R 1 2 3");
    assert_int_equal(ps.state, 'Z');
    assert_int_equal(ps.ppid, 16346);

    /* empty comm */
    assert_int_equal(parse_pid_stat("8 () D " STAT_MID STAT_TAIL, &ps), 0);
    assert_string_equal(ps.comm, "");
    assert_int_equal(ps.state, 'D');
}

static void test_stat_comm_newline(void **state)
{
    (void)state;
    js_pid_stat_t ps;
    assert_int_equal(parse_pid_stat("102 (new\nline) R " STAT_MID STAT_TAIL, &ps), 0);
    assert_string_equal(ps.comm, "new\nline");
    assert_int_equal(ps.state, 'R');
    assert_int_equal(ps.num_threads, 4);
    assert_int_equal(parse_pid_stat("103 (\n) S " STAT_MID STAT_TAIL, &ps), 0);
    assert_string_equal(ps.comm, "\n");
}

static void test_stat_comm_lengths(void **state)
{
    (void)state;
    js_pid_stat_t ps;
    /* the kernel's limit: TASK_COMM_LEN 16 = 15 bytes + NUL */
    assert_int_equal(parse_pid_stat("5 (0123456789abcde) S " STAT_MID STAT_TAIL, &ps), 0);
    assert_int_equal(strlen(ps.comm), 15);
    assert_string_equal(ps.comm, "0123456789abcde");

    /* exactly 63 bytes fits; 64 and more are cut at 63 without touching the following fields */
    char comm[200], text[1024];
    for (size_t n = 62; n <= 66; n++) {
        memset(comm, 'q', n);
        comm[n] = '\0';
        comm[n - 1] = ')'; /* a ')' inside the comm, near the cut */
        snprintf(text, sizeof(text), "6 (%s) S " STAT_MID STAT_TAIL, comm);
        memset(&ps, 0x5a, sizeof(ps));
        assert_int_equal(parse_pid_stat(text, &ps), 0);
        size_t want = n < 63 ? n : 63;
        assert_int_equal(strlen(ps.comm), want);
        assert_memory_equal(ps.comm, comm, want);
        assert_int_equal(ps.state, 'S');
        assert_int_equal(ps.ppid, 16346);
        assert_int_equal(ps.pid, 6);
    }
    /* much longer than the buffer */
    char big[600];
    memset(big, 'L', 500);
    big[500] = '\0';
    snprintf(text, sizeof(text), "9 (%s) T " STAT_MID STAT_TAIL, big);
    assert_int_equal(parse_pid_stat(text, &ps), 0);
    assert_int_equal(strlen(ps.comm), 63);
    assert_int_equal(ps.state, 'T');
    assert_int_equal(ps.rss, 412);
}

static void test_stat_negative(void **state)
{
    (void)state;
    /* tpgid -1 (no terminal), priority -100 (realtime), nice -20, rss of a kernel thread */
    const char *text =
        "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 3 -1 -2 -100 -20 1 0 2 0 0 "
        "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 2 99 1 0 0 0 0 0 0 0 0 0 0 0\n";
    js_pid_stat_t ps;
    assert_int_equal(parse_pid_stat(text, &ps), 0);
    assert_int_equal(ps.pid, 2);
    assert_int_equal(ps.ppid, 0);
    assert_int_equal(ps.stime, 3);
    assert_int_equal(ps.cutime, -1);
    assert_int_equal(ps.cstime, -2);
    assert_int_equal(ps.num_threads, 1);
    assert_int_equal(ps.starttime, 2);
    assert_int_equal(ps.vsize, 0);
    assert_int_equal(ps.rss, 0);
    assert_int_equal(ps.processor, 2);
}

static void test_stat_old_kernel(void **state)
{
    (void)state;
    /* 2.6.24-era: 44 fields (through guest_time/cguest_time) */
    const char *text =
        "77 (init) S 0 1 1 0 -1 4202752 1 2 3 4 5 6 7 8 20 0 1 0 9 10 11 4294967295 1 1 0 0 0 0 0 "
        "0 0 0 0 0 17 3 0 0 0 0 0\n";
    js_pid_stat_t ps;
    assert_int_equal(parse_pid_stat(text, &ps), 0);
    assert_int_equal(ps.utime, 5);
    assert_int_equal(ps.starttime, 9);
    assert_int_equal(ps.rss, 11);
    assert_int_equal(ps.processor, 3);
}

static void test_stat_invalid(void **state)
{
    (void)state;
    js_pid_stat_t ps;
    assert_int_equal(parse_pid_stat("", &ps), -EINVAL);
    assert_int_equal(parse_pid_stat("\n", &ps), -EINVAL);
    assert_int_equal(parse_pid_stat("garbage", &ps), -EINVAL);
    assert_int_equal(parse_pid_stat("hello (world) S 1 2 3", &ps), -EINVAL);
    assert_int_equal(parse_pid_stat("abc (cat) R " STAT_MID STAT_TAIL, &ps), -EINVAL); /* no pid */
    assert_int_equal(parse_pid_stat("12 cat R " STAT_MID STAT_TAIL, &ps), -EINVAL);    /* no parentheses */
    assert_int_equal(parse_pid_stat("12 (cat R 1 2 3", &ps), -EINVAL);                 /* no ')' */
    assert_int_equal(parse_pid_stat("12 )cat( R 1 2 3", &ps), -EINVAL);                /* ')' before '(' */
    assert_int_equal(parse_pid_stat("12 (cat)", &ps), -EINVAL);                        /* no state */
    assert_int_equal(parse_pid_stat("12 (cat)   ", &ps), -EINVAL);
    assert_int_equal(parse_pid_stat("12 (cat) R", &ps), -EINVAL);
    assert_int_equal(parse_pid_stat("12 (cat) R 1", &ps), -EINVAL);
    assert_int_equal(parse_pid_stat("12 (cat) R " STAT_MID, &ps), -EINVAL); /* through rss only */
    /* a field that is not a number stops the parse early */
    assert_int_equal(
        parse_pid_stat("12 (cat) R 1 2 x 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 "
                       "26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44",
                       &ps),
        -EINVAL);
}

/* Every prefix of a good line either parses or fails with -EINVAL, never reads past the end; prefixes that
 * end before field 41 fail. */
static void test_stat_truncated(void **state)
{
    (void)state;
    const char *full = "16348 (a) b (c) R " STAT_MID STAT_TAIL;
    size_t len = strlen(full);
    /* the offset where field 41 (policy) ends: count 38 blanks after the comm's ')' and its state */
    const char *p = strrchr(full, ')') + 4; /* ") R " then field 4 */
    for (int f = 4; f < 41; f++)
        p = strchr(p, ' ') + 1;
    size_t end41 = (size_t)(strchr(p, ' ') - full); /* one past the last digit of field 41 */
    char buf[1024];
    for (size_t n = 0; n <= len; n++) {
        memcpy(buf, full, n);
        buf[n] = '\0';
        js_pid_stat_t ps;
        int r = parse_pid_stat(buf, &ps);
        if (n < end41)
            assert_int_equal(r, -EINVAL);
        else
            assert_int_equal(r, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64_basic),
        cmocka_unit_test(test_u64_no_digits),
        cmocka_unit_test(test_u64_saturates),
        cmocka_unit_test(test_i64),
        cmocka_unit_test(test_i64_blank_after_sign),
        cmocka_unit_test(test_i64_min),
        cmocka_unit_test(test_kv_positions),
        cmocka_unit_test(test_kv_missing),
        cmocka_unit_test(test_kv_no_number),
        cmocka_unit_test(test_kv_prefix_keys),
        cmocka_unit_test(test_stat_real),
        cmocka_unit_test(test_stat_verbatim),
        cmocka_unit_test(test_stat_comm_parens),
        cmocka_unit_test(test_stat_comm_newline),
        cmocka_unit_test(test_stat_comm_lengths),
        cmocka_unit_test(test_stat_negative),
        cmocka_unit_test(test_stat_old_kernel),
        cmocka_unit_test(test_stat_invalid),
        cmocka_unit_test(test_stat_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
