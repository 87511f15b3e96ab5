/* SPDX-License-Identifier: MIT
 *
 * Regression tests for what the fuzz targets (fuzz/, scripts/fuzz.sh) found: each test feeds the crashing
 * input, or its essence, to the code that failed, and checks the fixed behaviour. One test per finding; the
 * finding's target and date are in the test's comment. docs/RELIABILITY.md lists them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/replay.h"
#include "core/jsoncheck.h"
#include "report/report.h"
#include "sinks/merge.h"
#include "sources/perf.h"
#include "sys/parse.h"
#include "sys/sysattr.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fuzz_procfs, 2026-11-23: a CPU list holding a number of 20+ digits (parse_u64 saturates it at UINT64_MAX)
 * looped forever in cpulist_parse (the range's end UINT64_MAX, so `c <= b` held after c wrapped to 0) until
 * the int count overflowed (UBSan). It is now one CPU, counted and not set. */
static void cpulist_saturated_number(void **state)
{
    (void)state;
    uint64_t set[2];
    const char *in = "000000000000000000000000000000000000000000000000000000000000000040000000000000000000000"
                     "00000000000000";
    assert_int_equal(cpulist_parse(in, set, 128), 1);
    assert_true(set[0] == 0 && set[1] == 0);
    assert_int_equal(cpulist_parse("18446744073709551615", set, 128), 1);
    assert_int_equal(cpulist_parse("18446744073709551614-18446744073709551615,0", set, 128), 3);
    assert_true(set[0] == 1);
    /* many wide ranges: refused before the count could overflow */
    size_t n = 40 * 20 + 1;
    char *many = calloc(1, n);
    assert_non_null(many);
    for (int i = 0; i < 40; i++)
        strcat(many, i ? ",0-1048576" : "0-1048576");
    assert_int_equal(cpulist_parse(many, NULL, 0), -EINVAL);
    free(many);
}

/* fuzz_procfs (same family, found by reading after the finding above): perf_parse_cpulist's (now
 * cpulist_parse_ints) count of many 2^20-wide ranges could overflow its int; refused now. */
static void perf_cpulist_many_ranges(void **state)
{
    (void)state;
    int cpus[4];
    size_t n = 40 * 20 + 1;
    char *many = calloc(1, n);
    assert_non_null(many);
    for (int i = 0; i < 40; i++)
        strcat(many, i ? ",0-1048576" : "0-1048576");
    assert_int_equal(cpulist_parse_ints(many, cpus, 4), -EINVAL);
    free(many);
    assert_int_equal(cpulist_parse_ints("0-3,8\n", cpus, 4), 5);
    assert_int_equal(cpus[3], 3);
}

/* ---- hostile recordings (docs/RELIABILITY.md, "shared node", 10) ----------------------------------------
 *
 * A recording is a file anyone may hand to jobscope. Found by an attack with an ASan+UBSan build, 2026-11-28:
 * a `marks` table replaced by a recursive VIEW made `summary` run forever (0.9 GB in 47 s); a stored command
 * or mark data that was not JSON made `summary --json` print invalid JSON; edited values overflowed int64
 * arithmetic (model.c's children CPU sum, advice.c's deadlines, and, by the hostile-edit sweep of every
 * numeric column, model.c's self CPU and time offsets, casts to int64, model_system's differences,
 * part_phases' times, part_energy's errno); a start after the first sample printed a wall time of -2304 s.
 * Each case below is the real seed recording (fuzz/seeds/recording.db) edited with SQL, then read the way
 * `summary`, `summary --json`, `report` and `merge` read it. Under UBSan (the sanitizer builds of CI) any
 * overflow fails the test. */

#define SEED FIXTURES "/../../fuzz/seeds/recording.db"

static char hostile_dir[] = "/tmp/jobscope-hostile-XXXXXX";

static int hostile_setup(void **state)
{
    (void)state;
    return mkdtemp(hostile_dir) ? 0 : -1;
}

static int hostile_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "%s", hostile_dir);
    /* the files each test made, then the directory */
    static const char *const names[] = {"/h.db", "/h.db-journal", "/m.db", "/j.db"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s%s", hostile_dir, names[i]);
        unlink(p);
    }
    rmdir(cmd);
    return 0;
}

/* hostile: a copy of the seed at DIR/NAME edited by `sql`; its path in `path`. */
static void hostile(const char *name, const char *sql, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", hostile_dir, name);
    unlink(path);
    int in = open(SEED, O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(in >= 0 && out >= 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0)
        assert_int_equal(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s\n", msg ? msg : "?");
    assert_int_equal(rc, SQLITE_OK);
    sqlite3_close(db);
}

typedef struct {
    js_report_t *rep;
} feed_t;

static int feed_report(void *arg, const js_recording_t *r, js_model_t *m, const js_sample_t *s)
{
    (void)r;
    return report_feed(((feed_t *)arg)->rep, 0, m, s);
}

/* read_all: what summary, summary --json and report do with `path`. Returns replay_open's result; on success
 * the JSON summary (checked valid) in *json (caller frees) and the summary in *su. */
static int read_all(const char *path, char **json, js_summary_t *su, char *err, size_t errlen)
{
    feed_t f = {report_new()};
    size_t node;
    assert_int_equal(report_add_node(f.rep, "h", &node), 0);
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    int rc = replay_open(path, &r, &m, feed_report, &f, err, errlen);
    if (rc == 0) {
        js_run_info_t info;
        replay_summarize(r, path, m, &info, su);
        js_buf_t b = {0};
        assert_int_equal(summary_json(&b, &info, su, m), 0);
        assert_true(json_valid(b.p, b.len));
        *json = b.p;
        js_buf_t t = {0};
        assert_int_equal(summary_text(&t, &info, su, m, JS_SUMMARY_SHORT), 0);
        t.len = 0;
        assert_int_equal(summary_text(&t, &info, su, m, JS_SUMMARY_FULL), 0);
        buf_free(&t);
        assert_int_equal(report_finish_node(f.rep, node, m, &info, su, NULL), 0);
        js_buf_t page = {0};
        assert_int_equal(report_html(f.rep, &page), 0);
        assert_true(page.len > 10000);
        buf_free(&page);
    }
    model_free(m);
    recording_close(r);
    report_free(f.rep);
    return rc;
}

static void hostile_view_is_refused(void **state)
{
    (void)state;
    char path[256], err[512] = "", *json = NULL;
    js_summary_t su;
    hostile(
        "h.db",
        "DROP TABLE marks; CREATE VIEW marks(sample, t_mono_ns, t_unix_ns, kind, name, pid, tid, uid, rank, "
        "host, data, sender_dropped) AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
        "SELECT x, x, x, 'event', 'e', 1, 1, 0, NULL, 'h', randomblob(1000), 0 FROM r;",
        path, sizeof(path));
    assert_int_equal(read_all(path, &json, &su, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "not a jobscope recording (marks is a view, not a table)"));
    /* nor merged */
    char out[256];
    snprintf(out, sizeof(out), "%s/m.db", hostile_dir);
    const char *in[] = {path};
    assert_int_equal(merge_recordings(out, in, 1, MERGE_PARTIAL, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "marks is a view"));
    assert_int_equal(access(out, F_OK), -1);
    /* a view in place of meta is refused too */
    hostile("h.db", "ALTER TABLE meta RENAME TO meta_t; CREATE VIEW meta AS SELECT * FROM meta_t;", path,
            sizeof(path));
    assert_int_equal(read_all(path, &json, &su, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "meta is a view"));
}

static void hostile_text_is_not_json(void **state)
{
    (void)state;
    char path[256], err[512] = "", *json = NULL;
    js_summary_t su;
    hostile("h.db",
            "UPDATE meta SET value = 'not json {' WHERE key = 'command';"
            "INSERT INTO marks (sample, t_mono_ns, t_unix_ns, kind, name, pid, data) SELECT 2, t_mono_ns, "
            "t_unix_ns, 'event', 'ev', 1, '{\"unclosed\": ' FROM samples WHERE sample = 2;",
            path, sizeof(path));
    assert_int_equal(read_all(path, &json, &su, err, sizeof(err)), 0);
    assert_non_null(strstr(json, "\"command\": \"not json {\""));
    assert_non_null(strstr(json, "\"last_data\": \"{\\\"unclosed\\\": \""));
    free(json);
}

static void hostile_values(void **state)
{
    (void)state;
    char path[256], err[512] = "", *json = NULL;
    js_summary_t su;
    /* the cases the attack found, and one of each kind the sweep of every numeric column found */
    hostile("h.db",
            "UPDATE proc SET cutime_ticks = 9223372036854775807, cstime_ticks = 9223372036854775807;"
            "UPDATE samples SET missed = 9223372036854775807;"
            "UPDATE meta SET value = '9223372036854775807' WHERE key IN ('samples_taken', 'samples_missed');"
            "UPDATE self SET utime_us = 9223372036854775807, stime_us = 9223372036854775807;"
            "UPDATE memory SET mem_total_bytes = -9223372036854775808 WHERE rowid = 2;"
            "UPDATE samples SET t_mono_ns = -9223372036854775808 WHERE sample = 3;"
            "UPDATE proc SET threads = 9223372036854775807 WHERE rowid = 1;",
            path, sizeof(path));
    assert_int_equal(read_all(path, &json, &su, err, sizeof(err)), 0);
    free(json);
    /* absurd metadata: a start 2304 s after the first sample, no clock tick, a negative interval */
    hostile("h.db",
            "UPDATE meta SET value = CAST(value AS INTEGER) + 2304000000000 WHERE key = 'start_mono_ns';"
            "UPDATE meta SET value = '0' WHERE key = 'clk_tck';"
            "UPDATE meta SET value = '-1' WHERE key = 'interval_ns';"
            "UPDATE meta SET value = '-7' WHERE key = 'cores_available';",
            path, sizeof(path));
    assert_int_equal(read_all(path, &json, &su, err, sizeof(err)), 0);
    assert_true(su.wall_s >= 0 && su.wall_s < 10); /* from the samples: about 0.4 s, not -2304 s */
    assert_true(isnan(su.cores_available));
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpulist_saturated_number),
        cmocka_unit_test(perf_cpulist_many_ranges),
        cmocka_unit_test_setup_teardown(hostile_view_is_refused, hostile_setup, NULL),
        cmocka_unit_test(hostile_text_is_not_json),
        cmocka_unit_test_setup_teardown(hostile_values, NULL, hostile_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
