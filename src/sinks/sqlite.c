/* SPDX-License-Identifier: MIT
 *
 * SQLite recording sink: writer and reader of the recording format (recording.h, docs/FORMAT.md). Tables are
 * created from the registered descriptors; the `columns` table repeats each column's unit, kind and meaning so
 * a recording is self-describing; `meta` holds run metadata and the schema version. Rows are read back in
 * rowid order, which is sample order, so no index is needed.
 */
#include "sinks/recording.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct js_recorder {
    sqlite3 *db;
    size_t ntables;
    const js_table_t *const *tables;
    sqlite3_stmt **ins; /* per table */
    sqlite3_stmt *meta;
    sqlite3_stmt *begin, *commit, *rollback; /* prepared once: no SQL parsing per sample */
};

static const char *const kind_names[JS_KIND_MAX] = {"gauge", "counter", "label"};
static const char *const type_names[JS_TYPE_MAX] = {"INTEGER", "REAL", "TEXT"};

static int sql_errno(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_CANTOPEN:
        return -ENOENT;
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
        return -EACCES;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    default:
        return -EIO;
    }
}

static int exec(sqlite3 *db, const char *sql)
{
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sql_errno(rc);
}

static int create_schema(js_recorder_t *w)
{
    char sql[8192];
    int r;
    if ((r = exec(w->db, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
                         "CREATE TABLE columns (table_name TEXT, column_name TEXT, unit TEXT, kind TEXT,"
                         " width INTEGER, help TEXT, PRIMARY KEY (table_name, column_name)) WITHOUT ROWID;")) < 0)
        return r;
    sqlite3_stmt *col;
    if (sqlite3_prepare_v2(w->db, "INSERT INTO columns VALUES (?,?,?,?,?,?)", -1, &col, NULL) != SQLITE_OK)
        return -EIO;
    for (size_t i = 0; i < w->ntables && r == 0; i++) {
        const js_table_t *t = w->tables[i];
        bool is_samples = strcmp(t->name, "samples") == 0;
        size_t n = (size_t)snprintf(sql, sizeof(sql), "CREATE TABLE %s (sample INTEGER %s", t->name,
                                    is_samples ? "PRIMARY KEY" : "NOT NULL");
        for (size_t c = 0; c < t->ncols && n < sizeof(sql); c++) {
            const js_column_t *cd = &t->cols[c];
            n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", %s %s", cd->name, type_names[cd->type]);
            sqlite3_bind_text(col, 1, t->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(col, 2, cd->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(col, 3, cd->unit, -1, SQLITE_STATIC);
            sqlite3_bind_text(col, 4, kind_names[cd->kind], -1, SQLITE_STATIC);
            sqlite3_bind_int(col, 5, cd->width);
            sqlite3_bind_text(col, 6, cd->help, -1, SQLITE_STATIC);
            if (sqlite3_step(col) != SQLITE_DONE)
                r = -EIO;
            sqlite3_reset(col);
        }
        if (r == 0 && n < sizeof(sql) - 2) {
            snprintf(sql + n, sizeof(sql) - n, ")");
            r = exec(w->db, sql);
        }
        /* the prepared insert for this table */
        n = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (?", t->name);
        for (size_t c = 0; c < t->ncols && n < sizeof(sql); c++)
            n += (size_t)snprintf(sql + n, sizeof(sql) - n, ",?");
        snprintf(sql + n, sizeof(sql) - n, ")");
        if (r == 0 && sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &w->ins[i], NULL) != SQLITE_OK)
            r = -EIO;
    }
    sqlite3_finalize(col);
    return r;
}

int recorder_open(const char *path, bool overwrite, js_recorder_t **ret, char *err, size_t errlen)
{
    struct stat s;
    if (!overwrite && stat(path, &s) == 0) {
        snprintf(err, errlen, "%s: already exists (choose another -o, or --force to replace it)", path);
        return -EEXIST;
    }
    if (overwrite) {
        char side[4096];
        unlink(path);
        snprintf(side, sizeof(side), "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof(side), "%s-shm", path);
        unlink(side);
    }
    /* create the file ourselves first so a bad directory gives a plain errno message */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    close(fd);
    js_recorder_t *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->tables = registry_tables();
    while (w->tables[w->ntables])
        w->ntables++;
    w->ins = calloc(w->ntables, sizeof(*w->ins));
    int r = -EIO;
    if (!w->ins)
        goto fail;
    int rc = sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        r = sql_errno(rc);
        goto fail;
    }
    if ((r = exec(w->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA page_size=4096;")) < 0)
        goto fail;
    if ((r = exec(w->db, "BEGIN")) < 0 || (r = create_schema(w)) < 0 || (r = exec(w->db, "COMMIT")) < 0)
        goto fail;
    if (sqlite3_prepare_v3(w->db, "INSERT OR REPLACE INTO meta VALUES (?,?)", -1, SQLITE_PREPARE_PERSISTENT,
                           &w->meta, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "BEGIN", -1, SQLITE_PREPARE_PERSISTENT, &w->begin, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "COMMIT", -1, SQLITE_PREPARE_PERSISTENT, &w->commit, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "ROLLBACK", -1, SQLITE_PREPARE_PERSISTENT, &w->rollback, NULL) != SQLITE_OK) {
        r = -EIO;
        goto fail;
    }
    char v[16];
    snprintf(v, sizeof(v), "%d", JS_SCHEMA_VERSION);
    if ((r = recorder_meta(w, "schema_version", v)) < 0)
        goto fail;
    *ret = w;
    return 0;
fail:
    snprintf(err, errlen, "%s: cannot create recording: %s", path,
             w->db ? sqlite3_errmsg(w->db) : strerror(-r));
    recorder_close(w);
    unlink(path);
    return r;
}

int recorder_meta(js_recorder_t *w, const char *key, const char *value)
{
    sqlite3_bind_text(w->meta, 1, key, -1, SQLITE_STATIC);
    if (value)
        sqlite3_bind_text(w->meta, 2, value, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(w->meta, 2);
    int rc = sqlite3_step(w->meta);
    sqlite3_reset(w->meta);
    sqlite3_clear_bindings(w->meta);
    return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

/* step_once: run a prepared statement that returns no rows. 0 or a negative errno. */
static int step_once(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

int recorder_write(js_recorder_t *w, int64_t seq, const js_sample_t *s)
{
    int r = step_once(w->begin);
    if (r < 0)
        return r;
    for (size_t i = 0; i < s->ntables && r == 0; i++) {
        const js_rows_t *rows = &s->rows[i];
        const js_table_t *t = rows->table;
        sqlite3_stmt *st = w->ins[i];
        for (size_t k = 0; k < rows->nrows && r == 0; k++) {
            const js_value_t *v = rows_row(rows, k);
            sqlite3_bind_int64(st, 1, seq);
            for (size_t c = 0; c < t->ncols; c++) {
                int col = (int)c + 2;
                if (!v[c].present)
                    sqlite3_bind_null(st, col);
                else if (t->cols[c].type == JS_INT)
                    sqlite3_bind_int64(st, col, v[c].i);
                else if (t->cols[c].type == JS_REAL)
                    sqlite3_bind_double(st, col, v[c].d);
                else
                    sqlite3_bind_text(st, col, rows_str(rows, &v[c]), -1, SQLITE_STATIC);
            }
            r = step_once(st);
        }
    }
    if (r == 0)
        r = step_once(w->commit);
    if (r < 0 && !sqlite3_get_autocommit(w->db))
        step_once(w->rollback);
    return r;
}

static int recording_sink_sample(void *state, const js_sink_sample_t *ev)
{
    return recorder_write(state, ev->seq, ev->sample);
}

const js_live_sink_t sink_recording = {
    .name = "recording",
    .durable = true,
    .sample = recording_sink_sample,
};

void recorder_close(js_recorder_t *w)
{
    if (!w)
        return;
    for (size_t i = 0; w->ins && i < w->ntables; i++)
        sqlite3_finalize(w->ins[i]);
    sqlite3_finalize(w->meta);
    sqlite3_finalize(w->begin);
    sqlite3_finalize(w->commit);
    sqlite3_finalize(w->rollback);
    if (w->db) {
        sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        sqlite3_close(w->db);
    }
    free(w->ins);
    free(w);
}

/* ---- reader ------------------------------------------------------------------------------------------ */

typedef struct {
    sqlite3_stmt *st; /* SELECT sample, cols... ORDER BY rowid */
    int *map;         /* result column k+1 -> descriptor column index */
    int nmap;
    bool has_row; /* st is positioned on an unconsumed row */
    bool done;
} tab_reader_t;

struct js_recording {
    sqlite3 *db;
    size_t ntables;
    const js_table_t *const *tables;
    tab_reader_t *tr;
    char **keys, **vals;
    size_t nmeta;
};

static void set_err(char *err, size_t errlen, const char *path, const char *what)
{
    snprintf(err, errlen, "%s: %s", path, what);
}

static int read_meta(js_recording_t *r)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
        return -EINVAL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char **k = realloc(r->keys, (r->nmeta + 1) * sizeof(*k));
        char **v = k ? realloc(r->vals, (r->nmeta + 1) * sizeof(*v)) : NULL;
        if (k)
            r->keys = k;
        if (!k || !v) {
            sqlite3_finalize(st);
            return -ENOMEM;
        }
        r->vals = v;
        const char *kt = (const char *)sqlite3_column_text(st, 0);
        const char *vt = (const char *)sqlite3_column_text(st, 1);
        r->keys[r->nmeta] = strdup(kt ? kt : "");
        r->vals[r->nmeta] = vt ? strdup(vt) : NULL;
        r->nmeta++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -EINVAL;
}

static int prepare_table(js_recording_t *r, size_t i)
{
    const js_table_t *t = r->tables[i];
    tab_reader_t *tr = &r->tr[i];
    char sql[8192];
    snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s')", t->name);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -EINVAL;
    tr->map = calloc(t->ncols, sizeof(int));
    if (!tr->map) {
        sqlite3_finalize(st);
        return -ENOMEM;
    }
    size_t n = (size_t)snprintf(sql, sizeof(sql), "SELECT sample");
    bool any = false;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        any = true;
        int c = name ? table_column(t, name) : -1;
        if (c < 0)
            continue;
        tr->map[tr->nmap++] = c;
        n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", \"%s\"", name);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return -EINVAL;
    if (!any) { /* table absent (a recording from an older or smaller build): always empty */
        tr->done = true;
        return 0;
    }
    snprintf(sql + n, sizeof(sql) - n, " FROM %s ORDER BY rowid", t->name);
    if (sqlite3_prepare_v2(r->db, sql, -1, &tr->st, NULL) != SQLITE_OK)
        return -EINVAL;
    return 0;
}

int recording_open(const char *path, js_recording_t **ret, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) < 0) {
        int e = errno;
        set_err(err, errlen, path, strerror(e));
        return -e;
    }
    if (!S_ISREG(sb.st_mode)) {
        set_err(err, errlen, path, "not a regular file");
        return -EINVAL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char magic[16] = {0};
    ssize_t n = fd >= 0 ? read(fd, magic, sizeof(magic)) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0) {
        int e = errno;
        set_err(err, errlen, path, strerror(e));
        return -e;
    }
    if (n < 16 || memcmp(magic, "SQLite format 3", 16) != 0) {
        set_err(err, errlen, path, "not a jobscope recording (not an SQLite database)");
        return -EINVAL;
    }
    js_recording_t *r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    int rv = -EINVAL;
    if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        set_err(err, errlen, path, r->db ? sqlite3_errmsg(r->db) : "cannot open");
        goto fail;
    }
    rv = read_meta(r);
    if (rv < 0) {
        char m[256];
        snprintf(m, sizeof(m), "not a readable jobscope recording (%s)", sqlite3_errmsg(r->db));
        set_err(err, errlen, path, m);
        goto fail;
    }
    const char *ver = recording_meta(r, "schema_version");
    if (!ver) {
        set_err(err, errlen, path, "not a jobscope recording (no schema_version)");
        rv = -EINVAL;
        goto fail;
    }
    if (atoi(ver) != JS_SCHEMA_VERSION) {
        char m[128];
        snprintf(m, sizeof(m), "recording schema version %s, this jobscope reads %d", ver, JS_SCHEMA_VERSION);
        set_err(err, errlen, path, m);
        rv = -EPROTO;
        goto fail;
    }
    r->tables = registry_tables();
    while (r->tables[r->ntables])
        r->ntables++;
    r->tr = calloc(r->ntables, sizeof(*r->tr));
    if (!r->tr) {
        rv = -ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < r->ntables; i++) {
        if ((rv = prepare_table(r, i)) < 0) {
            char m[256];
            snprintf(m, sizeof(m), "damaged recording (table %s: %s)", r->tables[i]->name, sqlite3_errmsg(r->db));
            set_err(err, errlen, path, m);
            goto fail;
        }
    }
    if (r->tr[0].done) {
        set_err(err, errlen, path, "damaged recording (no samples table)");
        rv = -EINVAL;
        goto fail;
    }
    *ret = r;
    return 0;
fail:
    recording_close(r);
    return rv;
}

const char *recording_meta(const js_recording_t *r, const char *key)
{
    for (size_t i = 0; i < r->nmeta; i++)
        if (strcmp(r->keys[i], key) == 0)
            return r->vals[i];
    return NULL;
}

int64_t recording_meta_i64(const js_recording_t *r, const char *key, int64_t dflt)
{
    const char *v = recording_meta(r, key);
    if (!v || !*v)
        return dflt;
    char *end;
    long long x = strtoll(v, &end, 10);
    return *end ? dflt : (int64_t)x;
}

double recording_meta_f64(const js_recording_t *r, const char *key, double dflt)
{
    const char *v = recording_meta(r, key);
    if (!v || !*v)
        return dflt;
    char *end;
    double x = strtod(v, &end);
    return *end ? dflt : x;
}

/* step_table: advance to an unconsumed row. Returns 1 (row), 0 (end), -EIO (corrupt). */
static int step_table(tab_reader_t *tr)
{
    if (tr->done)
        return 0;
    if (tr->has_row)
        return 1;
    int rc = sqlite3_step(tr->st);
    if (rc == SQLITE_ROW) {
        tr->has_row = true;
        return 1;
    }
    tr->done = true;
    return rc == SQLITE_DONE ? 0 : -EIO;
}

static int load_row(tab_reader_t *tr, js_rows_t *rows)
{
    js_value_t *v = rows_add(rows);
    if (!v)
        return -ENOMEM;
    for (int k = 0; k < tr->nmap; k++) {
        int c = tr->map[k];
        int type = sqlite3_column_type(tr->st, k + 1);
        if (type == SQLITE_NULL)
            continue;
        switch (rows->table->cols[c].type) {
        case JS_INT:
            val_int(&v[c], sqlite3_column_int64(tr->st, k + 1));
            break;
        case JS_REAL:
            val_real(&v[c], sqlite3_column_double(tr->st, k + 1));
            break;
        default: {
            const char *s = (const char *)sqlite3_column_text(tr->st, k + 1);
            int len = sqlite3_column_bytes(tr->st, k + 1);
            if (s && rows_set_str(rows, &v[c], s, (size_t)len) < 0)
                return -ENOMEM;
        }
        }
    }
    tr->has_row = false;
    return 0;
}

int recording_next(js_recording_t *r, js_sample_t *s, int64_t *ret_seq, char *err, size_t errlen)
{
    sample_clear(s);
    int k = step_table(&r->tr[0]);
    if (k <= 0) {
        if (k < 0)
            snprintf(err, errlen, "damaged recording: %s", sqlite3_errmsg(r->db));
        return k;
    }
    int64_t seq = sqlite3_column_int64(r->tr[0].st, 0);
    int rv = load_row(&r->tr[0], &s->rows[0]);
    for (size_t i = 1; i < r->ntables && rv == 0; i++) {
        tab_reader_t *tr = &r->tr[i];
        while ((k = step_table(tr)) == 1) {
            int64_t rs = sqlite3_column_int64(tr->st, 0);
            if (rs > seq)
                break;
            if (rs == seq) {
                if ((rv = load_row(tr, &s->rows[i])) < 0)
                    break;
            } else {
                tr->has_row = false; /* a row of a sample without a samples row: skip */
            }
        }
        if (k < 0) {
            snprintf(err, errlen, "damaged recording (table %s): %s", r->tables[i]->name, sqlite3_errmsg(r->db));
            rv = k;
        }
    }
    if (rv < 0)
        return rv;
    *ret_seq = seq;
    return 1;
}

void recording_close(js_recording_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->tr && i < r->ntables; i++) {
        sqlite3_finalize(r->tr[i].st);
        free(r->tr[i].map);
    }
    free(r->tr);
    for (size_t i = 0; i < r->nmeta; i++) {
        free(r->keys[i]);
        free(r->vals[i]);
    }
    free(r->keys);
    free(r->vals);
    if (r->db)
        sqlite3_close(r->db);
    free(r);
}
