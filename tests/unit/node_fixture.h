/* SPDX-License-Identifier: MIT
 *
 * Helpers shared by the unit tests of the node sources (rapl, infiniband, cpufreq, thermal, host) and their
 * model parts: a writable copy of a fixture tree in a temporary directory (so a test can change a counter
 * between two samples: files are rewritten in place, so descriptors a source keeps open see the new value),
 * a source run against roots with its own row buffers, and a model fed hand-built samples of one process
 * and the node's CPU line. Include after <cmocka.h>; everything here is static.
 */
#ifndef JOBSCOPE_TEST_NODE_FIXTURE_H
#define JOBSCOPE_TEST_NODE_FIXTURE_H

#include "core/json.h"
#include "core/sample.h"
#include "core/source.h"
#include "model/model.h"
#include "sources/proc_tree.h"
#include "parts_summary.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEC 1000000000LL

/* ---- a writable copy of a fixture tree ---- */

static char copy_dst[512];
static size_t copy_src_len;

static inline int copy_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)ftw;
    char dst[1024];
    snprintf(dst, sizeof(dst), "%s%s", copy_dst, path + copy_src_len);
    if (type == FTW_D)
        return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
    if (type != FTW_F)
        return 0;
    FILE *in = fopen(path, "rb"), *out = fopen(dst, "wb");
    int r = in && out ? 0 : -1;
    char buf[4096];
    size_t n;
    while (r == 0 && in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            r = -1;
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    (void)sb;
    return r;
}

/* fixture_copy: copy FIXTURES/<name> to a new temporary directory, written to `dir` (cap bytes). */
static inline void fixture_copy(const char *name, char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/jobscope-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char src[512];
    snprintf(src, sizeof(src), "%s/%s", FIXTURES, name);
    snprintf(copy_dst, sizeof(copy_dst), "%s", dir);
    copy_src_len = strlen(src);
    assert_int_equal(nftw(src, copy_one, 16, FTW_PHYS), 0);
}

static inline int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(path);
}

/* fixture_remove: delete a copy made by fixture_copy. */
static inline void fixture_remove(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* fixture_write: rewrite `dir`/`rel` in place with `text` (same inode: kept descriptors see it). */
static inline void fixture_write(const char *dir, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    int fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* ---- a source on roots ---- */

typedef struct {
    const js_source_t *src;
    js_ctx_t ctx;
    void *state;
    size_t nt;
    js_rows_t rows[4];
    js_rows_t *rowp[5];
    js_rows_t inv;
    int init_rc;
} src_run_t;

/* src_open: open the roots (`root`/proc and `root`/sys) and init `src`; the init result is in r->init_rc. */
static inline void src_open(src_run_t *r, const js_source_t *src, const char *root)
{
    memset(r, 0, sizeof(*r));
    r->src = src;
    char proc[600], sys[600];
    snprintf(proc, sizeof(proc), "%s/proc", root);
    snprintf(sys, sizeof(sys), "%s/sys", root);
    assert_int_equal(fsroot_open(&r->ctx.root, proc, sys), 0);
    r->ctx.mode = JS_MODE_WATCH;
    r->ctx.scope.kind = JS_SCOPE_NODE;
    r->ctx.status_every = 5;
    while (src->tables && src->tables[r->nt])
        r->nt++;
    assert_true(r->nt <= 4);
    for (size_t i = 0; i < r->nt; i++) {
        rows_init(&r->rows[i], src->tables[i]);
        r->rowp[i] = &r->rows[i];
    }
    rows_init(&r->inv, &table_inventory);
    r->init_rc = src->init ? src->init(&r->ctx, &r->state, NULL, 0) : 0;
}

/* src_collect: clear the buffers and collect sample `seq`. Returns collect()'s result. */
static inline int src_collect(src_run_t *r, uint64_t seq)
{
    for (size_t i = 0; i < r->nt; i++)
        rows_clear(&r->rows[i]);
    r->ctx.seq = seq;
    return r->src->collect(r->state, &r->ctx, r->rowp);
}

/* src_inventory: the value of inventory row `key` of this source ("" when absent); collects it first. */
static inline const char *src_inv(src_run_t *r, const char *key)
{
    if (!r->inv.nrows)
        assert_int_equal(r->src->inventory(r->state, &r->ctx, &r->inv), 0);
    for (size_t i = 0; i < r->inv.nrows; i++) {
        const js_value_t *v = rows_row(&r->inv, i);
        if (!strcmp(rows_str(&r->inv, &v[INV_KEY]), key))
            return v[INV_VALUE].present ? rows_str(&r->inv, &v[INV_VALUE]) : "";
    }
    return "";
}

static inline void src_close(src_run_t *r)
{
    for (size_t i = 0; i < r->nt; i++)
        rows_free(&r->rows[i]);
    rows_free(&r->inv);
    if (r->init_rc == 0 && r->src->fini)
        r->src->fini(r->state);
    fsroot_close(&r->ctx.root);
}

/* row_text: the text of column `c` of row `i` of `rows` ("" when missing). */
static inline const char *row_text(const js_rows_t *rows, size_t i, int c)
{
    const js_value_t *v = rows_row(rows, i);
    return v[c].present ? rows_str(rows, &v[c]) : "";
}

/* rows_copy: append every row of `src` to `dst` (same table), strings included. */
static inline void rows_copy(js_rows_t *dst, const js_rows_t *src)
{
    assert_ptr_equal(dst->table, src->table);
    for (size_t i = 0; i < src->nrows; i++) {
        js_value_t *v = rows_add(dst);
        assert_non_null(v);
        const js_value_t *from = rows_row(src, i);
        for (size_t c = 0; c < src->table->ncols; c++) {
            if (!from[c].present)
                continue;
            if (src->table->cols[c].type == JS_TEXT) {
                const char *t = rows_str(src, &from[c]);
                assert_int_equal(rows_set_str(dst, &v[c], t, strlen(t)), 0);
            } else {
                v[c] = from[c];
            }
        }
    }
}

/* src_to_sample: copy the rows of the last src_collect into the sample's buffers of the source's tables. */
static inline void src_to_sample(const src_run_t *r, js_sample_t *s)
{
    for (size_t i = 0; i < r->nt; i++)
        rows_copy(sample_rows(s, r->src->tables[i]), &r->rows[i]);
}

/* ---- the model on hand-built samples ---- */

/* sample_base: clear `s` and add the samples row at `t_ns`, one process (pid 10) with `cpu_ticks` of user
 * time (run mode: the scope's CPU), and the node's aggregate cpu line (busy and idle ticks; < 0: no line). */
static inline void sample_base(js_sample_t *s, int64_t t_ns, int64_t cpu_ticks, int64_t busy, int64_t idle)
{
    sample_clear(s);
    js_value_t *sv = rows_add(sample_rows(s, &table_samples));
    val_int(&sv[SAMPLES_T_MONO], t_ns);
    val_int(&sv[SAMPLES_T_UNIX], 1700000000000000000LL + t_ns);
    val_int(&sv[SAMPLES_MISSED], 0);
    js_value_t *p = rows_add(sample_rows(s, &table_proc));
    val_int(&p[PROC_PID], 10);
    val_int(&p[PROC_PPID], 1);
    val_int(&p[PROC_START_TICKS], 500);
    val_int(&p[PROC_UTIME], cpu_ticks);
    val_int(&p[PROC_STIME], 0);
    val_int(&p[PROC_CUTIME], 0);
    val_int(&p[PROC_CSTIME], 0);
    val_int(&p[PROC_THREADS], 1);
    js_value_t *t = rows_add(sample_rows(s, &table_tree));
    val_int(&t[TREE_MEMBERS], 1);
    if (busy >= 0) {
        js_rows_t *cpu = sample_rows_named(s, "cpu");
        const js_table_t *ct = cpu->table;
        js_value_t *c = rows_add(cpu);
        val_int(&c[table_column(ct, "cpu")], -1);
        static const char *const zero[] = {"nice_ticks", "system_ticks",  "iowait_ticks",
                                           "irq_ticks",  "softirq_ticks", "steal_ticks"};
        for (size_t k = 0; k < sizeof(zero) / sizeof(zero[0]); k++)
            val_int(&c[table_column(ct, zero[k])], 0);
        val_int(&c[table_column(ct, "user_ticks")], busy);
        val_int(&c[table_column(ct, "idle_ticks")], idle);
    }
}

/* new_model: a run-mode model with a 1 s interval and 100 ticks per second. */
static inline js_model_t *node_model(void)
{
    js_model_cfg_t cfg = {.mode = JS_MODE_RUN,
                          .clk_tck = 100,
                          .monitor_pid = 1,
                          .root_pid = 10,
                          .interval_ns = SEC,
                          .cores_available = 8};
    js_model_t *m = model_new(&cfg);
    assert_non_null(m);
    return m;
}

/* view_value: the value of column `col` in the row of view `name` whose label column `key_col` is `key`
 * (text), or of its first row when key is NULL. */
static inline const js_value_t *view_value(js_model_t *m, const char *name, const char *key_col,
                                           const char *key, const char *col)
{
    js_view_t v;
    assert_int_equal(model_view(m, name, &v), 0);
    int c = table_column(v.table, col);
    assert_true(c >= 0);
    int kc = key_col ? table_column(v.table, key_col) : -1;
    for (size_t i = 0; i < v.rows->nrows; i++) {
        const js_value_t *row = rows_row(v.rows, i);
        if (!key || (kc >= 0 && row[kc].present && !strcmp(rows_str(v.rows, &row[kc]), key)))
            return &row[c];
    }
    fail_msg("view %s has no row %s", name, key ? key : "");
    return NULL;
}

/* summary_of: the summary sections of every part, as JSON text (caller frees b). */
static inline void summary_of(js_model_t *m, js_buf_t *b, bool text)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
    if (text) {
        assert_int_equal(parts_text(m, b), 0);
    } else {
        assert_int_equal(parts_json(m, b), 0);
    }
    if (!b->p)
        buf_append(b, "", 0);
}

#endif
