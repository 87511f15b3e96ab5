/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the recording (src/sinks/sqlite.c): samples built by hand are written with recorder_* into a
 * temporary directory and read back with recording_*; every value, its missing-ness, text with odd bytes,
 * REAL columns and the sample numbers must survive, including a gap in the numbering and rows whose sample
 * has no `samples` row. Metadata round-trips through recording_meta / _i64 / _f64. recorder_open refuses an
 * existing path unless asked to overwrite it, and leaves the file alone when it refuses. recording_open
 * rejects a missing path, a directory, a text file, an empty file, a foreign SQLite database, a recording of
 * another schema version and truncated copies, always with a one-line reason and never by crashing or by
 * returning wrong data. A reader may be open while the writer appends (WAL).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sample.h"
#include "sinks/recording.h"
#include "sources/proc_tree.h"
#include "sources/system.h"
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---- */

typedef struct {
    char dir[64];
    char path[128];
    char err[512];
} fx_t;

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    snprintf(f->dir, sizeof(f->dir), "/tmp/jobscope-test-sqlite-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/run.jobscope", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* assert_err_line: err holds a non-empty, single-line reason. */
static void assert_err_line(const char *err)
{
    assert_true(err[0] != '\0');
    assert_null(strchr(err, '\n'));
}

static char *slurp(const char *path, size_t *ret_len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    p[n] = '\0';
    *ret_len = (size_t)n;
    return p;
}

static void spit(const char *path, const void *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    fclose(fp);
}

#include "assert_value.h"
#include "sources/registry.h"

static const char odd_comm[] = "a) b (c\n\x01\xff\xc3\xa9'\"\\;DROP TABLE proc;--";

/* fill: sample `seq` of the hand-built recording. Values are derived from seq so a reader can check them. */
static void fill(js_sample_t *s, int64_t seq, bool with_samples_row, int nproc)
{
    sample_clear(s);
    js_rows_t *sm = sample_rows(s, &table_samples);
    js_rows_t *proc = sample_rows(s, &table_proc);
    js_rows_t *info = sample_rows(s, &table_proc_info);
    js_rows_t *sys = sample_rows(s, &table_system);
    assert_non_null(sm);
    assert_non_null(proc);
    assert_non_null(info);
    assert_non_null(sys);
    if (with_samples_row) {
        js_value_t *v = rows_add(sm);
        assert_non_null(v);
        val_int(&v[0], 1000 + seq);                  /* t_mono_ns */
        val_int(&v[1], 1795379900000000000LL + seq); /* t_unix_ns */
        if (seq % 2 == 0)
            val_int(&v[2], 990 + seq); /* deadline_ns: missing on odd samples */
        val_int(&v[3], seq / 3);       /* missed */
        val_int(&v[4], 0);             /* final */
    }
    for (int k = 0; k < nproc; k++) {
        js_value_t *v = rows_add(proc);
        assert_non_null(v);
        for (int c = 0; c < PROC__MAX; c++) {
            if (c == PROC_STATE)
                continue;
            if ((c + k + seq) % 5 == 0)
                continue; /* some missing values */
            val_int(&v[c], seq * 100000 + k * 1000 + c);
        }
        val_int(&v[PROC_PID], 100 + k);
        val_int(&v[PROC_RSS], INT64_MAX - k);
        val_int(&v[PROC_CUTIME], -1 - k);
        assert_int_equal(rows_set_str(proc, &v[PROC_STATE], k % 2 ? "Z" : "S", 1), 0);
    }
    if (seq == 0) {
        js_value_t *v = rows_add(info);
        assert_non_null(v);
        val_int(&v[INFO_PID], 100);
        val_int(&v[INFO_START_TICKS], 5000);
        /* INFO_PPID and INFO_UID missing */
        assert_int_equal(rows_set_str(info, &v[INFO_COMM], odd_comm, strlen(odd_comm)), 0);
        assert_int_equal(rows_set_str(info, &v[INFO_CMDLINE], "", 0), 0); /* empty, not missing */
    }
    js_value_t *v = rows_add(sys);
    assert_non_null(v);
    val_real(&v[SYSTEM_LOAD1], 0.1 * (double)seq);
    val_real(&v[SYSTEM_LOAD5], -1.5e-300);
    /* SYSTEM_LOAD15 missing */
}

/* check: `s` holds what fill(seq, true, nproc) wrote. */
static void check(const js_sample_t *s, int64_t seq, int nproc)
{
    js_rows_t *sm = sample_rows(s, &table_samples);
    js_rows_t *proc = sample_rows(s, &table_proc);
    js_rows_t *info = sample_rows(s, &table_proc_info);
    js_rows_t *sys = sample_rows(s, &table_system);
    assert_int_equal(sm->nrows, 1);
    js_value_t *v = rows_row(sm, 0);
    assert_ival(v[0], 1000 + seq);
    assert_ival(v[1], 1795379900000000000LL + seq);
    if (seq % 2 == 0)
        assert_ival(v[2], 990 + seq);
    else
        assert_missing(v[2]);
    assert_ival(v[3], seq / 3);
    assert_ival(v[4], 0);

    assert_int_equal(proc->nrows, (size_t)nproc);
    for (int k = 0; k < nproc; k++) {
        v = rows_row(proc, (size_t)k);
        for (int c = 0; c < PROC__MAX; c++) {
            if (c == PROC_STATE || c == PROC_PID || c == PROC_RSS || c == PROC_CUTIME)
                continue;
            if ((c + k + seq) % 5 == 0)
                assert_missing(v[c]);
            else
                assert_ival(v[c], seq * 100000 + k * 1000 + c);
        }
        assert_ival(v[PROC_PID], 100 + k);
        assert_ival(v[PROC_RSS], INT64_MAX - k);
        assert_ival(v[PROC_CUTIME], -1 - k);
        assert_true(v[PROC_STATE].present);
        assert_string_equal(rows_str(proc, &v[PROC_STATE]), k % 2 ? "Z" : "S");
    }
    if (seq == 0) {
        assert_int_equal(info->nrows, 1);
        v = rows_row(info, 0);
        assert_ival(v[INFO_PID], 100);
        assert_ival(v[INFO_START_TICKS], 5000);
        assert_missing(v[INFO_PPID]);
        assert_missing(v[INFO_UID]);
        assert_true(v[INFO_COMM].present);
        assert_string_equal(rows_str(info, &v[INFO_COMM]), odd_comm);
        assert_true(v[INFO_CMDLINE].present);
        assert_string_equal(rows_str(info, &v[INFO_CMDLINE]), "");
    } else {
        assert_int_equal(info->nrows, 0);
    }
    assert_int_equal(sys->nrows, 1);
    v = rows_row(sys, 0);
    assert_true(v[SYSTEM_LOAD1].present);
    assert_true(v[SYSTEM_LOAD1].d == 0.1 * (double)seq);
    assert_true(v[SYSTEM_LOAD5].present);
    assert_true(v[SYSTEM_LOAD5].d == -1.5e-300);
    assert_missing(v[SYSTEM_LOAD15]);
    /* every other table is empty */
    for (size_t i = 0; i < s->ntables; i++) {
        const js_table_t *t = s->tables[i];
        if (t != &table_samples && t != &table_proc && t != &table_proc_info && t != &table_system)
            assert_int_equal(s->rows[i].nrows, 0);
    }
}

static const int64_t seqs[] = {0, 1, 2, 5, 6, 7};

/* write_recording: samples `seqs`, plus a headless sample 3 (rows but no samples row) that readers skip. */
static void write_recording(fx_t *f, int nproc)
{
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    assert_non_null(w);
    assert_int_equal(recorder_meta(w, "host", "node1"), 0);
    assert_int_equal(recorder_meta(w, "interval_ns", "1000000000"), 0);
    assert_int_equal(recorder_meta(w, "ratio", "0.25"), 0);
    assert_int_equal(recorder_meta(w, "bad_number", "12x"), 0);
    assert_int_equal(recorder_meta(w, "empty", ""), 0);
    assert_int_equal(recorder_meta(w, "gone", "soon"), 0);
    assert_int_equal(recorder_meta(w, "gone", NULL), 0);
    assert_int_equal(recorder_meta(w, "host", "node2"), 0); /* replaces */
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
        if (seqs[i] == 5) {
            fill(&s, 3, false, nproc);
            assert_int_equal(recorder_write(w, 3, &s), 0);
        }
        fill(&s, seqs[i], true, seqs[i] == 6 ? 0 : nproc);
        assert_int_equal(recorder_write(w, seqs[i], &s), 0);
    }
    sample_free(&s);
    recorder_close(w);
}

/* read_all: read a recording; returns the number of samples that matched, or a negative error. Every sample
 * read must be one that was written, in order, with exactly its values. */
static int read_all(fx_t *f, int nproc, bool *ret_open_failed)
{
    js_recording_t *r = NULL;
    f->err[0] = '\0';
    int rc = recording_open(f->path, &r, f->err, sizeof(f->err));
    if (ret_open_failed)
        *ret_open_failed = rc < 0;
    if (rc < 0) {
        assert_err_line(f->err);
        assert_null(r);
        return rc;
    }
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    int n = 0;
    for (;;) {
        int64_t seq = -99;
        f->err[0] = '\0';
        int k = recording_next(r, &s, &seq, f->err, sizeof(f->err));
        if (k < 0) {
            assert_err_line(f->err);
            n = k;
            break;
        }
        if (k == 0)
            break;
        assert_true((size_t)n < sizeof(seqs) / sizeof(seqs[0]));
        assert_int_equal(seq, seqs[n]);
        check(&s, seq, seq == 6 ? 0 : nproc);
        n++;
    }
    sample_free(&s);
    recording_close(r);
    return n;
}

/* ---- tests ---- */

static void test_roundtrip(void **state)
{
    fx_t *f = *state;
    write_recording(f, 3);
    assert_int_equal(read_all(f, 3, NULL), (int)(sizeof(seqs) / sizeof(seqs[0])));

    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    assert_string_equal(recording_meta(r, "schema_version"), "2");
    assert_string_equal(recording_meta(r, "host"), "node2");
    assert_null(recording_meta(r, "gone"));
    assert_null(recording_meta(r, "never"));
    assert_string_equal(recording_meta(r, "empty"), "");
    assert_int_equal(recording_meta_i64(r, "interval_ns", -1), 1000000000);
    assert_int_equal(recording_meta_i64(r, "schema_version", -1), JS_SCHEMA_VERSION);
    assert_int_equal(recording_meta_i64(r, "bad_number", -7), -7);
    assert_int_equal(recording_meta_i64(r, "ratio", -7), -7);
    assert_int_equal(recording_meta_i64(r, "empty", -7), -7);
    assert_int_equal(recording_meta_i64(r, "gone", -7), -7);
    assert_int_equal(recording_meta_i64(r, "never", -3), -3);
    assert_true(recording_meta_f64(r, "ratio", -1) == 0.25);
    assert_true(recording_meta_f64(r, "interval_ns", -1) == 1e9);
    assert_true(recording_meta_f64(r, "bad_number", -1) == -1);
    assert_true(recording_meta_f64(r, "host", -2) == -2);
    assert_true(recording_meta_f64(r, "empty", -2) == -2);
    assert_true(recording_meta_f64(r, "never", -4) == -4);

    /* after the end, recording_next keeps saying so */
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    int64_t seq;
    for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
        assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 1);
    assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 0);
    assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 0);
    for (size_t i = 0; i < s.ntables; i++)
        assert_int_equal(s.rows[i].nrows, 0); /* cleared */
    sample_free(&s);
    recording_close(r);
    recording_close(NULL);
    recorder_close(NULL);
}

/* A recording with no sample at all (the monitor died before the first) reads as empty, not as an error. */
static void test_empty_recording(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    recorder_close(w);
    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    int64_t seq = -5;
    assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 0);
    assert_int_equal(seq, -5);
    sample_free(&s);
    recording_close(r);
}

static void test_exists(void **state)
{
    fx_t *f = *state;
    write_recording(f, 2);
    size_t len0, len1;
    char *before = slurp(f->path, &len0);
    struct stat st0, st1;
    assert_int_equal(stat(f->path, &st0), 0);

    js_recorder_t *w = (js_recorder_t *)0x1;
    f->err[0] = '\0';
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), -EEXIST);
    assert_err_line(f->err);
    assert_ptr_equal(w, (js_recorder_t *)0x1); /* untouched */
    char *after = slurp(f->path, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    assert_int_equal(stat(f->path, &st1), 0);
    assert_int_equal(st0.st_ino, st1.st_ino);
    free(after);
    free(before);
    assert_int_equal(read_all(f, 2, NULL), (int)(sizeof(seqs) / sizeof(seqs[0])));

    /* any existing path counts, even an empty file or a directory */
    char other[160];
    snprintf(other, sizeof(other), "%s/empty", f->dir);
    spit(other, "", 0);
    assert_int_equal(recorder_open(other, false, &w, f->err, sizeof(f->err)), -EEXIST);
    assert_int_equal(recorder_open(f->dir, false, &w, f->err, sizeof(f->err)), -EEXIST);

    /* overwrite: a fresh, empty recording */
    w = NULL;
    assert_int_equal(recorder_open(f->path, true, &w, f->err, sizeof(f->err)), 0);
    assert_non_null(w);
    recorder_close(w);
    assert_int_equal(read_all(f, 2, NULL), 0);

    /* a directory that does not exist */
    char bad[200];
    snprintf(bad, sizeof(bad), "%s/no/such/dir/x.jobscope", f->dir);
    f->err[0] = '\0';
    assert_int_equal(recorder_open(bad, false, &w, f->err, sizeof(f->err)), -ENOENT);
    assert_err_line(f->err);
}

static void test_open_errors(void **state)
{
    fx_t *f = *state;
    js_recording_t *r = (js_recording_t *)0x1;
    char p[200];

    snprintf(p, sizeof(p), "%s/missing.jobscope", f->dir);
    f->err[0] = '\0';
    assert_int_equal(recording_open(p, &r, f->err, sizeof(f->err)), -ENOENT);
    assert_err_line(f->err);
    assert_ptr_equal(r, (js_recording_t *)0x1);

    f->err[0] = '\0';
    assert_true(recording_open(f->dir, &r, f->err, sizeof(f->err)) < 0);
    assert_err_line(f->err);

    snprintf(p, sizeof(p), "%s/text.jobscope", f->dir);
    const char *txt = "pid,comm\n1,init\nthis is not a database at all, just some text\n";
    spit(p, txt, strlen(txt));
    f->err[0] = '\0';
    assert_int_equal(recording_open(p, &r, f->err, sizeof(f->err)), -EINVAL);
    assert_err_line(f->err);
    assert_non_null(strstr(f->err, "not an SQLite database"));

    snprintf(p, sizeof(p), "%s/empty.jobscope", f->dir);
    spit(p, "", 0);
    f->err[0] = '\0';
    assert_true(recording_open(p, &r, f->err, sizeof(f->err)) < 0);
    assert_err_line(f->err);

    /* just the 16-byte magic */
    snprintf(p, sizeof(p), "%s/magic.jobscope", f->dir);
    spit(p, "SQLite format 3", 16);
    f->err[0] = '\0';
    assert_true(recording_open(p, &r, f->err, sizeof(f->err)) < 0);
    assert_err_line(f->err);

    /* a valid SQLite database that is not ours */
    snprintf(p, sizeof(p), "%s/foreign.db", f->dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    f->err[0] = '\0';
    assert_true(recording_open(p, &r, f->err, sizeof(f->err)) < 0);
    assert_err_line(f->err);

    /* ours in shape but without schema_version, or with a table named meta of another shape */
    snprintf(p, sizeof(p), "%s/noversion.db", f->dir);
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
                                  "INSERT INTO meta VALUES ('host','x');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    f->err[0] = '\0';
    assert_int_equal(recording_open(p, &r, f->err, sizeof(f->err)), -EINVAL);
    assert_err_line(f->err);

    snprintf(p, sizeof(p), "%s/othermeta.db", f->dir);
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE meta (a, b, c);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    f->err[0] = '\0';
    assert_true(recording_open(p, &r, f->err, sizeof(f->err)) < 0);
    assert_err_line(f->err);

    /* meta with a schema_version but no samples table */
    snprintf(p, sizeof(p), "%s/nosamples.db", f->dir);
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
                                  "INSERT INTO meta VALUES ('schema_version','1');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    f->err[0] = '\0';
    assert_true(recording_open(p, &r, f->err, sizeof(f->err)) < 0);
    assert_err_line(f->err);
    assert_ptr_equal(r, (js_recording_t *)0x1);
}

static void test_schema_version(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    assert_int_equal(recorder_meta(w, "schema_version", "99"), 0);
    recorder_close(w);
    js_recording_t *r = NULL;
    f->err[0] = '\0';
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), -EPROTO);
    assert_err_line(f->err);
    assert_non_null(strstr(f->err, "99"));
}

/* truncate_copy: copy the recording at f->path to `dst`, cut to `len` bytes. */
static void truncate_copy(fx_t *f, const char *dst, size_t len)
{
    size_t n;
    char *all = slurp(f->path, &n);
    assert_true(len <= n);
    spit(dst, all, len);
    free(all);
}

static void test_truncated(void **state)
{
    fx_t *f = *state;
    /* enough rows that the data spans many pages */
    write_recording(f, 400);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_true(st.st_size > 8 * 4096);
    char wal[200];
    snprintf(wal, sizeof(wal), "%s-wal", f->path);
    assert_int_equal(access(wal, F_OK), -1); /* checkpointed into the main file on close */

    static const size_t cuts[] = {100, 0 /* half */, 4096, 4096 * 3 + 17, 0 /* all but the last page */};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        size_t len = cuts[i] ? cuts[i] : i == 1 ? (size_t)st.st_size / 2 : (size_t)st.st_size - 4096;
        fx_t t = *f;
        snprintf(t.path, sizeof(t.path), "%s/cut%zu.jobscope", f->dir, len);
        truncate_copy(f, t.path, len);
        bool open_failed = false;
        int n = read_all(&t, 400, &open_failed); /* asserts every sample it does return is right */
        print_message("cut to %zu of %lld bytes: %s %d%s%s\n", len, (long long)st.st_size,
                      open_failed ? "open failed" : "read", n, n < 0 ? ": " : "", n < 0 ? t.err : "");
        if (len == 100)
            assert_true(n < 0); /* open or next must fail: a 100-byte file holds no recording */
        else
            assert_true(n < (int)(sizeof(seqs) / sizeof(seqs[0]))); /* cannot hold all samples */
    }
}

/* Pages overwritten with garbage past the schema: open may succeed, then reading must fail, not return
 * wrong values. */
static void test_corrupt_pages(void **state)
{
    fx_t *f = *state;
    write_recording(f, 400);
    size_t n;
    char *all = slurp(f->path, &n);
    assert_true(n > 16 * 4096);
    for (size_t i = 0; i < 2; i++) {
        size_t off = i == 0 ? n - 3 * 4096 : (n / 2) & ~(size_t)4095; /* the last 3 pages, 3 in the middle */
        char *bad = malloc(n);
        assert_non_null(bad);
        memcpy(bad, all, n);
        for (size_t k = off; k < off + 3 * 4096 && k < n; k++)
            bad[k] = (char)(0x5a ^ (k * 7));
        fx_t t = *f;
        snprintf(t.path, sizeof(t.path), "%s/corrupt%zu.jobscope", f->dir, i);
        spit(t.path, bad, n);
        free(bad);
        bool open_failed = false;
        int r = read_all(&t, 400, &open_failed);
        print_message("garbage at %zu of %zu bytes: %s %d%s%s\n", off, n,
                      open_failed ? "open failed" : "read", r, r < 0 ? ": " : "", r < 0 ? t.err : "");
        assert_true(r < 0);
    }
    free(all);
}

/* copy_file: copy `from` to `to` (created); 0 or -1. */
static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[65536];
    size_t n;
    int r = in && out ? 0 : -1;
    while (r == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        r = fwrite(buf, 1, n, out) == n ? 0 : -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        r = -1;
    return r;
}

/* The writer holds a transaction's WAL frames to send them in one write at its commit frame: once a write
 * returned, every frame of it is in the -wal file. A copy of the recording and its -wal taken right after
 * each commit (what a kill -9 then leaves; no -shm) reads back every sample written, also after a sample
 * whose frames pass the 128 KiB one write may carry (1,500 process rows). */
static void test_commit_whole_in_wal(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    js_sample_t s, rs;
    assert_int_equal(sample_init(&s), 0);
    assert_int_equal(sample_init(&rs), 0);
    char copy[160], from[160], to[170];
    snprintf(copy, sizeof(copy), "%s/copy.jobscope", f->dir);
    for (int64_t k = 0; k < 5; k++) {
        int nproc = k == 2 ? 1500 : 3;
        fill(&s, k, true, nproc);
        assert_int_equal(recorder_write(w, k, &s), 0);
        snprintf(from, sizeof(from), "%s-wal", f->path);
        snprintf(to, sizeof(to), "%s-wal", copy);
        unlink(copy);
        assert_int_equal(copy_file(f->path, copy), 0);
        assert_int_equal(copy_file(from, to), 0);
        js_recording_t *r = NULL;
        assert_int_equal(recording_open(copy, &r, f->err, sizeof(f->err)), 0);
        int64_t seq = -1, n = 0;
        while (recording_next(r, &rs, &seq, f->err, sizeof(f->err)) == 1) {
            assert_int_equal(seq, n);
            check(&rs, n, n == 2 ? 1500 : 3);
            n++;
        }
        assert_int_equal(n, k + 1);
        recording_close(r);
        snprintf(to, sizeof(to), "%s-shm", copy);
        unlink(to);
    }
    recorder_close(w);
    sample_free(&s);
    sample_free(&rs);
}

/* A reader opened on a recording being written (WAL): the writer is never blocked, the reader sees whole
 * samples only, and a reader opened later sees everything. */
static void test_reader_while_writing(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    js_sample_t s, rs;
    assert_int_equal(sample_init(&s), 0);
    assert_int_equal(sample_init(&rs), 0);
    fill(&s, 0, true, 3);
    assert_int_equal(recorder_write(w, 0, &s), 0);
    fill(&s, 1, true, 3);
    assert_int_equal(recorder_write(w, 1, &s), 0);

    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    int64_t seq = -1;
    assert_int_equal(recording_next(r, &rs, &seq, f->err, sizeof(f->err)), 1);
    assert_int_equal(seq, 0);
    check(&rs, 0, 3);

    /* the reader now holds a read transaction; the writer must still commit */
    fill(&s, 2, true, 3);
    assert_int_equal(recorder_write(w, 2, &s), 0);

    assert_int_equal(recording_next(r, &rs, &seq, f->err, sizeof(f->err)), 1);
    assert_int_equal(seq, 1);
    check(&rs, 1, 3);
    int k = recording_next(r, &rs, &seq, f->err, sizeof(f->err));
    assert_true(k == 0 || k == 1);
    if (k == 1) {
        assert_int_equal(seq, 2);
        check(&rs, 2, 3);
    }
    recording_close(r);

    fill(&s, 5, true, 3);
    assert_int_equal(recorder_write(w, 5, &s), 0);
    /* a fresh reader while the writer is still open sees every committed sample */
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    for (int64_t want = 0; want <= 2; want++) {
        assert_int_equal(recording_next(r, &rs, &seq, f->err, sizeof(f->err)), 1);
        assert_int_equal(seq, want);
        check(&rs, want, 3);
    }
    assert_int_equal(recording_next(r, &rs, &seq, f->err, sizeof(f->err)), 1);
    assert_int_equal(seq, 5);
    assert_int_equal(recording_next(r, &rs, &seq, f->err, sizeof(f->err)), 0);
    recorder_close(w); /* close the writer while a reader is still open */
    recording_close(r);
    sample_free(&s);
    sample_free(&rs);
}

/* A failed write (duplicate sample number in `samples`, whose sample column is the primary key) rolls back
 * the whole sample and the recorder stays usable. */
static void test_write_failure_rolls_back(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    fill(&s, 0, true, 3);
    assert_int_equal(recorder_write(w, 0, &s), 0);
    fill(&s, 1, true, 3);
    assert_int_equal(recorder_write(w, 1, &s), 0);
    fill(&s, 1, true, 3);
    assert_true(recorder_write(w, 1, &s) < 0); /* duplicate */
    fill(&s, 2, true, 3);
    assert_int_equal(recorder_write(w, 2, &s), 0);
    sample_free(&s);
    recorder_close(w);

    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    assert_int_equal(sample_init(&s), 0);
    int64_t seq;
    for (int64_t want = 0; want <= 2; want++) {
        assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 1);
        assert_int_equal(seq, want);
        check(&s, want, 3); /* sample 1 has 3 proc rows, not 6 */
    }
    assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 0);
    sample_free(&s);
    recording_close(r);
}

/* Below a 1 s interval a transaction holds several samples, their rows (every table's but the delta table's)
 * held to the commit and inserted together: nothing is visible before the commit, everything after it, each
 * row with its own sample number and in order; 400 samples of 3 system rows run past the 1,024 rows a table
 * holds before inserting early. A failed commit (a duplicate sample number, found only when the held rows go
 * in) loses the whole batch, counted, and the next batch is written whole. */
static void test_batched_samples(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    recorder_set_batch(w, 1000);
    js_sample_t s, rs;
    assert_int_equal(sample_init(&s), 0);
    assert_int_equal(sample_init(&rs), 0);
    for (int64_t k = 0; k < 400; k++) {
        fill(&s, k, true, 3);
        js_rows_t *sys = sample_rows(&s, &table_system);
        for (int extra = 0; extra < 2; extra++) /* 3 system rows a sample: 1,200 held, past the limit */
            assert_non_null(rows_add(sys));
        assert_int_equal(recorder_write_model(w, k, &s, NULL, false), 0);
    }
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM samples", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0); /* nothing before the commit (the samples table is new) */
    sqlite3_finalize(st);
    assert_int_equal(recorder_flush(w), 0);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*), count(DISTINCT sample), min(sample), max(sample), "
                                        "sum(sample) FROM system",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1200);
    assert_int_equal(sqlite3_column_int(st, 1), 400);
    assert_int_equal(sqlite3_column_int(st, 2), 0);
    assert_int_equal(sqlite3_column_int(st, 3), 399);
    assert_int_equal(sqlite3_column_int64(st, 4), 3 * (399 * 400 / 2));
    sqlite3_finalize(st);
    /* in rowid order, sample order */
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM (SELECT sample, lag(sample) OVER (ORDER BY rowid) "
                           "AS p FROM system) WHERE p > sample",
                           -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);

    /* a batch whose commit fails: sample 399 again */
    for (int64_t k = 399; k < 402; k++) {
        fill(&s, k, true, 3);
        assert_int_equal(recorder_write_model(w, k, &s, NULL, false), 0);
    }
    assert_true(recorder_flush(w) < 0);
    assert_int_equal(recorder_lost(w), 3);
    for (int64_t k = 400; k < 402; k++) {
        fill(&s, k, true, 3);
        assert_int_equal(recorder_write_model(w, k, &s, NULL, k == 401), 0);
    }
    recorder_close(w);

    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    int64_t seq;
    for (int64_t want = 0; want < 402; want++) {
        assert_int_equal(recording_next(r, &rs, &seq, f->err, sizeof(f->err)), 1);
        assert_int_equal(seq, want);
        if (want >= 400) {
            check(&rs, want, 3);
            continue;
        }
        const js_rows_t *sys = sample_rows(&rs, &table_system), *proc = sample_rows(&rs, &table_proc);
        assert_int_equal(sys->nrows, 3); /* the first one filled, the two added missing */
        assert_true(rows_row(sys, 0)[SYSTEM_LOAD1].d == 0.1 * (double)want);
        assert_false(rows_row(sys, 1)[SYSTEM_LOAD1].present);
        assert_int_equal(proc->nrows, 3);
        assert_ival(rows_row(proc, 2)[PROC_PID], 102);
    }
    assert_int_equal(recording_next(r, &rs, &seq, f->err, sizeof(f->err)), 0);
    recording_close(r);
    sample_free(&s);
    sample_free(&rs);
}

/* Rows of one table go in multi-row statements of 1..16, 32 and 64 rows: every count from 0 to 150 (each way
 * to split it) must come back whole and in order. */
static void test_row_counts(void **state)
{
    fx_t *f = *state;
    enum { MAX_ROWS = 150 };
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    for (int n = 0; n <= MAX_ROWS; n++) {
        fill(&s, n, true, n);
        assert_int_equal(recorder_write(w, n, &s), 0);
    }
    recorder_close(w);
    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    int64_t seq;
    for (int n = 0; n <= MAX_ROWS; n++) {
        assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 1);
        assert_int_equal(seq, n);
        check(&s, n, n);
    }
    assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 0);
    sample_free(&s);
    recording_close(r);
}

/* ---- schema 2: process rows only when they change ---- */

typedef struct {
    int32_t pid;
    int64_t start;
    int64_t first, last; /* samples it is a member at */
    int64_t rss_step;    /* its RSS changes every rss_step samples (0: never) */
} dproc_t;

/* six processes: idle, changing now and then, leaving, a PID reused, one that exits (state Z) before it goes
 */
static const dproc_t dprocs[] = {
    {100, 10, 0, 29, 0},  {101, 11, 0, 29, 7}, {102, 12, 0, 9, 1},
    {102, 40, 10, 29, 0}, {103, 13, 5, 14, 0}, {104, 14, 3, 29, 3},
};
#define NDPROCS (sizeof(dprocs) / sizeof(dprocs[0]))

static void dfill(js_sample_t *s, int64_t seq)
{
    sample_clear(s);
    js_value_t *v = rows_add(sample_rows(s, &table_samples));
    assert_non_null(v);
    val_int(&v[0], 1000 + seq);
    val_int(&v[1], 1795379900000000000LL + seq);
    val_int(&v[3], 0);
    val_int(&v[4], 0);
    js_rows_t *proc = sample_rows(s, &table_proc);
    for (size_t k = 0; k < NDPROCS; k++) {
        const dproc_t *d = &dprocs[k];
        if (seq < d->first || seq > d->last)
            continue;
        v = rows_add(proc);
        assert_non_null(v);
        val_int(&v[PROC_PID], d->pid);
        val_int(&v[PROC_START_TICKS], d->start);
        val_int(&v[PROC_PPID], 1);
        val_int(&v[PROC_UTIME], d->rss_step ? (seq / d->rss_step) * 3 : 5);
        val_int(&v[PROC_RSS], d->rss_step ? 4096 * (1 + seq / d->rss_step) : 8192);
        if (d->pid == 101 && seq % 5 == 0) /* a value read at a cadence: missing in between */
            val_int(&v[PROC_VCSW], 77);
        bool zombie = d->pid == 103 && seq >= 12;
        assert_int_equal(rows_set_str(proc, &v[PROC_STATE], zombie ? "Z" : "S", 1), 0);
    }
}

static void dcheck(const js_sample_t *s, int64_t seq)
{
    const js_rows_t *proc = sample_rows(s, &table_proc);
    size_t want = 0;
    for (size_t k = 0; k < NDPROCS; k++) {
        const dproc_t *d = &dprocs[k];
        if (seq < d->first || seq > d->last)
            continue;
        want++;
        const js_value_t *v = NULL;
        for (size_t i = 0; i < proc->nrows && !v; i++) {
            const js_value_t *x = rows_row(proc, i);
            if (x[PROC_PID].i == d->pid && x[PROC_START_TICKS].i == d->start)
                v = x;
        }
        assert_non_null(v);
        assert_ival(v[PROC_PPID], 1);
        assert_ival(v[PROC_UTIME], d->rss_step ? (seq / d->rss_step) * 3 : 5);
        assert_ival(v[PROC_RSS], d->rss_step ? 4096 * (1 + seq / d->rss_step) : 8192);
        if (d->pid == 101 && seq % 5 == 0)
            assert_ival(v[PROC_VCSW], 77);
        else
            assert_missing(v[PROC_VCSW]);
        assert_missing(v[PROC_STIME]);
        assert_string_equal(rows_str(proc, &v[PROC_STATE]), d->pid == 103 && seq >= 12 ? "Z" : "S");
    }
    assert_int_equal(proc->nrows, want);
}

static int64_t count_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static void dread_all(fx_t *f, int64_t nsamples)
{
    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    int64_t seq;
    for (int64_t want = 0; want < nsamples; want++) {
        assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 1);
        assert_int_equal(seq, want);
        dcheck(&s, want);
    }
    assert_int_equal(recording_next(r, &s, &seq, f->err, sizeof(f->err)), 0);
    sample_free(&s);
    recording_close(r);
}

/* A process's row is stored only when it changed (a value, or whether it has one); departures in proc_gone;
 * the reader gives every sample's rows back whole, and so does the SQL view `proc`. */
static void test_delta_storage(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    for (int64_t seq = 0; seq < 30; seq++) {
        dfill(&s, seq);
        assert_int_equal(recorder_write(w, seq, &s), 0);
    }
    sample_free(&s);
    recorder_close(w);
    dread_all(f, 30);
    int64_t logical = 0;
    for (size_t k = 0; k < NDPROCS; k++)
        logical += dprocs[k].last - dprocs[k].first + 1;
    int64_t stored = count_sql(f->path, "SELECT count(*) FROM proc_changes");
    /* 100: 1 row; 101: RSS every 7 and VCSW present at 0,5,.. (and absent after): 15; 102 (first): 10; 102
     * (second): 1; 103: 2 (it becomes a zombie); 104: 9 (from sample 3, RSS every 3) */
    assert_int_equal(stored, 1 + 15 + 10 + 1 + 2 + 9);
    assert_true(stored * 3 < logical);
    assert_int_equal(count_sql(f->path, "SELECT count(*) FROM proc_gone"), 2); /* 102 (start 12) and 103 */
    /* the view shows the whole table to SQL */
    assert_int_equal(count_sql(f->path, "SELECT count(*) FROM proc"), logical);
    assert_int_equal(count_sql(f->path, "SELECT count(*) FROM proc WHERE pid = 103 AND state = 'Z'"), 3);
    assert_int_equal(count_sql(f->path, "SELECT sum(rss_bytes) FROM proc WHERE sample = 20"),
                     8192 + 4096 * (1 + 20 / 7) + 8192 + 4096 * (1 + 20 / 3));
}

/* A failed write: the next sample writes every process again after a reset marker, and nothing the rolled
 * back transaction held is taken for written. */
static void test_delta_after_a_failed_write(void **state)
{
    fx_t *f = *state;
    js_recorder_t *w = NULL;
    assert_int_equal(recorder_open(f->path, false, &w, f->err, sizeof(f->err)), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    for (int64_t seq = 0; seq < 30; seq++) {
        dfill(&s, seq);
        assert_int_equal(recorder_write(w, seq, &s), 0);
        if (seq == 9 || seq == 14) { /* the same sample number again: refused, rolled back */
            dfill(&s, seq + 1);
            assert_true(recorder_write(w, seq, &s) < 0);
        }
    }
    sample_free(&s);
    recorder_close(w);
    dread_all(f, 30);
    assert_int_equal(count_sql(f->path, "SELECT count(*) FROM proc_gone WHERE pid = 0"), 2);
    int64_t logical = 0;
    for (size_t k = 0; k < NDPROCS; k++)
        logical += dprocs[k].last - dprocs[k].first + 1;
    assert_int_equal(count_sql(f->path, "SELECT count(*) FROM proc"), logical);
}

/* A recording of schema 1 (every process row stored) is still read: made here from a schema 2 one, its
 * process table filled from the view. */
static void test_schema_1_still_read(void **state)
{
    fx_t *f = *state;
    write_recording(f, 3);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(
            db,
            "CREATE TABLE proc_full AS SELECT * FROM proc ORDER BY sample, pid;"
            "DROP VIEW proc; ALTER TABLE proc_full RENAME TO proc;"
            "DROP TABLE proc_changes; DROP TABLE IF EXISTS proc_gone; DROP TABLE IF EXISTS tree_totals;"
            "DROP TABLE IF EXISTS summary_state; UPDATE meta SET value = '1' WHERE key = 'schema_version'",
            NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(read_all(f, 3, NULL), (int)(sizeof(seqs) / sizeof(seqs[0])));
    js_recording_t *r = NULL;
    assert_int_equal(recording_open(f->path, &r, f->err, sizeof(f->err)), 0);
    assert_int_equal(recording_version(r), 1);
    js_rows_t st;
    rows_init(&st, &table_summary_state);
    assert_int_equal(recording_stored_state(r, &st), 0); /* nothing stored: read in full */
    rows_free(&st);
    recording_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_row_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_while_writing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_whole_in_wal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failure_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batched_samples, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delta_storage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delta_after_a_failed_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_1_still_read, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
