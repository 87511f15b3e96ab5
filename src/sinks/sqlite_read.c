/* SPDX-License-Identifier: MIT
 *
 * SQLite recording sink: the reader of the recording format (recording.h, docs/FORMAT.md; the writer is
 * sqlite.c). It validates a file, maps its stored columns onto this build's descriptors by name (unknown
 * columns ignored, absent ones missing) and hands the samples back in rowid order, which is sample order, so
 * no index is needed; schema 2's process rows are rebuilt from their changes.
 */
#include "sinks/recording.h"
#include "sinks/sqlite_int.h"

#include "core/json.h"
#include "core/pidmap.h"
#include "model/model.h"
#include "sinks/sqlio.h"
#include "sys/sysio.h"
#include "sys/fsfile.h"
#include "sys/fsroot.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reader ------------------------------------------------------------------------------------------ */

typedef struct {
    sqlite3_stmt *st; /* SELECT sample, cols... ORDER BY rowid */
    int *map;         /* result column k+1 -> descriptor column index */
    int nmap;
    bool has_row; /* st is positioned on an unconsumed row */
    bool done;
    bool absent;  /* the recording has no such table */
    bool skipped; /* recording_skip: not read */
} tab_reader_t;

/* A process of the delta table as the reader rebuilds it (schema 2): its last row, in order of first sight.
 */
typedef struct {
    int32_t pid; /* -1: a row without identity, this sample's only */
    int64_t start;
    bool live;
} rent_t;

typedef struct {
    size_t ix; /* the delta table's index, SIZE_MAX when the recording stores it whole */
    int key_pid, key_start;
    sqlite3_stmt *gone; /* SELECT sample, pid, start_ticks FROM proc_gone ORDER BY rowid */
    bool gone_row, gone_done;
    js_pidmap_t at; /* pid -> index in ents and rows (size_t) */
    rent_t *ents;   /* in order of first sight */
    js_rows_t rows; /* row k: the last row of ents[k] */
    size_t n, cap, dead;
    js_sample_t *lent; /* the sample that holds `rows` until the next recording_next (zero copy) */
} rdelta_t;

struct js_recording {
    sqlite3 *db;
    int version; /* the schema version of the file */
    rdelta_t delta;
    char shm_made[PATH_MAX]; /* a -shm file this reader had to create (removed at close), or "" */
    char tmpdir[PATH_MAX];   /* a private copy of an unfinished recording in a read-only place, or "" */
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
    char q[256];
    snprintf(q, sizeof(q), "SELECT name FROM pragma_table_info('%s')", /* our own short names */
             r->version >= 2 ? storage_name(t) : t->name);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, q, -1, &st, NULL) != SQLITE_OK)
        return -EINVAL;
    tr->map = calloc(t->ncols ? t->ncols : 1, sizeof(int));
    if (!tr->map) {
        sqlite3_finalize(st);
        return -ENOMEM;
    }
    js_buf_t sql = {0};
    int e = buf_append(&sql, "SELECT sample", 13);
    bool any = false;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        any = true;
        int c = name ? table_column(t, name) : -1;
        if (c < 0)
            continue;
        tr->map[tr->nmap++] = c;
        e |= buf_printf(&sql, ", \"%s\"", name); /* a name found among our own columns */
    }
    sqlite3_finalize(st);
    int ret = 0;
    if (rc != SQLITE_DONE)
        ret = -EINVAL;
    else if (!any) /* table absent (a recording from an older or smaller build): always empty */
        tr->done = tr->absent = true;
    else if ((e |= buf_printf(&sql, " FROM %s ORDER BY rowid", r->version >= 2 ? storage_name(t) : t->name)))
        ret = -ENOMEM;
    else if (sqlite3_prepare_v2(r->db, sql.p, -1, &tr->st, NULL) != SQLITE_OK)
        ret = -EINVAL;
    buf_free(&sql);
    return ret;
}

int recording_uri(char *buf, size_t cap, const char *path, const char *query)
{
    size_t n = 0;
    const char *pre = path[0] == '/' ? "file:" : "file:./";
    for (const char *p = pre; *p && n + 1 < cap; p++)
        buf[n++] = *p;
    for (const char *p = path; *p; p++) {
        if (n + 4 >= cap)
            return -ENAMETOOLONG;
        if (*p == '%' || *p == '?' || *p == '#')
            n += (size_t)snprintf(buf + n, cap - n, "%%%02X", (unsigned char)*p);
        else
            buf[n++] = *p;
    }
    int k = snprintf(buf + n, cap - n, "?%s", query);
    return k < 0 || (size_t)k >= cap - n ? -ENAMETOOLONG : 0;
}

void recording_harden(sqlite3 *db)
{
    /* nothing a file brings runs: no trigger, no view (a recursive one never ends), no function of its
     * schema; the file cannot be corrupted through this connection by a crafted statement */
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    /* no value larger than the largest jobscope writes (a mark's data, a command line): 16 MiB */
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 << 20);
    sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 100);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 2);
}

bool recording_is_tables(sqlite3 *db, const char *schema, char *err, size_t errlen, const char *path)
{
    char sql[200];
    snprintf(sql, sizeof(sql),
             "SELECT name, type FROM \"%s\".sqlite_master WHERE type != 'table' AND type != 'index'", schema);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        set_err(err, errlen, path, "not a readable jobscope recording (no schema)");
        return false;
    }
    const js_table_t *const *all = registry_tables();
    bool ok = true, delta_view = false;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0),
                   *type = (const char *)sqlite3_column_text(st, 1);
        bool ours =
            name && (!strcmp(name, "meta") || !strcmp(name, "columns") || !strcmp(name, "nodes") ||
                     !strcmp(name, "node_meta") || !strcmp(name, DELTA_STORE) || !strcmp(name, "proc_gone"));
        for (size_t i = 0; name && !ours && all[i]; i++)
            ours = !strcmp(name, all[i]->name);
        if (ours && !strcmp(name, DELTA_TABLE) && type && !strcmp(type, "view")) {
            /* schema 2's own view of the delta table (no reader reads it): checked below */
            delta_view = true;
            continue;
        }
        if (ours) {
            char m[200];
            snprintf(m, sizeof(m), "not a jobscope recording (%.64s is a %.16s, not a table)", name,
                     type ? type : "?");
            set_err(err, errlen, path, m);
            ok = false;
        }
    }
    sqlite3_finalize(st);
    /* a view `proc` is schema 2's, read through DELTA_STORE; before schema 2 it is the table itself */
    if (ok && delta_view) {
        snprintf(sql, sizeof(sql), "SELECT value FROM \"%s\".meta WHERE key = 'schema_version'", schema);
        long long v = 0;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
        }
        if (v < 2) {
            set_err(err, errlen, path, "not a jobscope recording (" DELTA_TABLE " is a view, not a table)");
            ok = false;
        }
    }
    return ok;
}

bool recording_unfinished(const char *path)
{
    char hdr[21]; /* the header's first 20 bytes (fs_read_small keeps one for a NUL) */
    ssize_t n = fs_read_small(AT_FDCWD, path, hdr, sizeof(hdr));
    char walp[PATH_MAX];
    struct stat ws;
    return n == 20 && memcmp(hdr, "SQLite format 3", 16) == 0 && hdr[18] == 2 &&
           side_path(walp, sizeof(walp), path, "-wal") == 0 && stat(walp, &ws) == 0 && ws.st_size > 0;
}

int recording_snapshot(const char *path, char *ret_dir, size_t dircap, char *ret_db, size_t dbcap)
{
    const char *tmp = getenv("TMPDIR");
    char walp[PATH_MAX], walc[PATH_MAX];
    ret_db[0] = '\0';
    if (snprintf(ret_dir, dircap, "%s/jobscope-read-XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)dircap ||
        !mkdtemp(ret_dir)) {
        ret_dir[0] = '\0';
        return -EACCES;
    }
    int r = side_path(ret_db, dbcap, ret_dir, "/recording.db");
    if (r == 0)
        r = side_path(walc, sizeof(walc), ret_dir, "/recording.db-wal");
    if (r == 0)
        r = side_path(walp, sizeof(walp), path, "-wal");
    if (r == 0)
        r = fs_copy(path, ret_db, 0600, false);
    if (r == 0)
        r = fs_copy(walp, walc, 0600, false);
    if (r < 0) {
        recording_snapshot_remove(ret_dir);
        ret_dir[0] = ret_db[0] = '\0';
    }
    return r;
}

void recording_snapshot_remove(const char *dir)
{
    if (!dir || !dir[0])
        return;
    char p[PATH_MAX];
    static const char *const names[] = {"/recording.db", "/recording.db-wal", "/recording.db-shm",
                                        "/recording.db-journal"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (side_path(p, sizeof(p), dir, names[i]) == 0)
            unlink(p);
    rmdir(dir);
}

/* open_private_copy: an unfinished recording (data in -wal) where the -shm index cannot be made: read a
 * private copy of the file and its -wal in a temporary directory instead. */
static int open_private_copy(js_recording_t *r, const char *path)
{
    char dbc[PATH_MAX], uri[PATH_MAX * 3];
    if (recording_snapshot(path, r->tmpdir, sizeof(r->tmpdir), dbc, sizeof(dbc)) < 0 ||
        recording_uri(uri, sizeof(uri), dbc, "mode=ro") < 0)
        return -EIO;
    sqlite3_close(r->db);
    r->db = NULL;
    return sqlite3_open_v2(uri, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) ==
                   SQLITE_OK
               ? 0
               : -EIO;
}

/* remove_private: undo what reading needed: a -shm this reader created, a private copy. */
static void remove_private(js_recording_t *r)
{
    if (r->shm_made[0])
        unlink(r->shm_made);
    recording_snapshot_remove(r->tmpdir);
}

/* rdelta_open: schema 2: the delta table's identity columns and its departures' statement. 0 or -EINVAL. */
static int rdelta_open(js_recording_t *r)
{
    rdelta_t *d = &r->delta;
    d->ix = SIZE_MAX;
    pidmap_init(&d->at, sizeof(size_t));
    if (r->version < 2)
        return 0;
    for (size_t i = 0; i < r->ntables; i++)
        if (!strcmp(r->tables[i]->name, DELTA_TABLE) && !r->tr[i].absent)
            d->ix = i;
    if (d->ix == SIZE_MAX)
        return 0;
    const js_table_t *t = r->tables[d->ix];
    d->key_pid = table_column(t, "pid");
    d->key_start = table_column(t, "start_ticks");
    rows_init(&d->rows, t);
    if (d->key_pid < 0 || d->key_start < 0 ||
        sqlite3_prepare_v2(r->db, "SELECT sample, pid, start_ticks FROM proc_gone ORDER BY rowid", -1,
                           &d->gone, NULL) != SQLITE_OK)
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
    int fd = fs_open(AT_FDCWD, path);
    unsigned char hdr[100] = {0};
    ssize_t n = fd >= 0 ? sys_read(fd, hdr, sizeof(hdr)) : (errno = -fd, -1);
    if (fd >= 0)
        sys_close(fd);
    if (n < 0) {
        int e = errno;
        set_err(err, errlen, path, strerror(e));
        return -e;
    }
    if (n < 16 || memcmp(hdr, "SQLite format 3", 16) != 0) {
        set_err(err, errlen, path, "not a jobscope recording (not an SQLite database)");
        return -EINVAL;
    }
    char walp[PATH_MAX], shmp[PATH_MAX], uri[PATH_MAX * 3];
    if (side_path(walp, sizeof(walp), path, "-wal") < 0 || side_path(shmp, sizeof(shmp), path, "-shm") < 0) {
        set_err(err, errlen, path, "path too long");
        return -ENAMETOOLONG;
    }
    /* A closed recording uses a rollback journal and is read as an immutable file: no lock, no side file,
     * fine from a read-only place. One in WAL mode with data in its -wal is unfinished (being written, or
     * its monitor was killed): it is read through the WAL, which needs the -shm index. */
    struct stat ws;
    bool wal_data = n >= 20 && hdr[18] == 2 && stat(walp, &ws) == 0 && ws.st_size > 0;
    bool shm_existed = access(shmp, F_OK) == 0;
    if (recording_uri(uri, sizeof(uri), path, wal_data ? "mode=ro" : "immutable=1") < 0) {
        set_err(err, errlen, path, "path too long");
        return -ENAMETOOLONG;
    }
    js_recording_t *r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    int rv = -EINVAL;
    if (sqlite3_open_v2(uri, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        set_err(err, errlen, path, r->db ? sqlite3_errmsg(r->db) : "cannot open");
        goto fail;
    }
    if (wal_data && !shm_existed)
        snprintf(r->shm_made, sizeof(r->shm_made), "%s", shmp);
    recording_harden(r->db);
    if (!recording_is_tables(r->db, "main", err, errlen, path)) {
        rv = -EINVAL;
        goto fail;
    }
    rv = read_meta(r);
    if (rv < 0 && wal_data && !r->tmpdir[0] && sqlite3_errcode(r->db) != SQLITE_CORRUPT &&
        sqlite3_errcode(r->db) != SQLITE_NOTADB && open_private_copy(r, path) == 0) {
        r->shm_made[0] = '\0';
        recording_harden(r->db);
        rv = recording_is_tables(r->db, "main", err, errlen, path) ? read_meta(r) : -EINVAL;
    }
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
    r->version = atoi(ver);
    if (r->version < JS_SCHEMA_VERSION_MIN || r->version > JS_SCHEMA_VERSION) {
        char m[128];
        snprintf(m, sizeof(m), "recording schema version %s, this jobscope reads %d to %d", ver,
                 JS_SCHEMA_VERSION_MIN, JS_SCHEMA_VERSION);
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
            snprintf(m, sizeof(m), "damaged recording (table %s: %s)", r->tables[i]->name,
                     sqlite3_errmsg(r->db));
            set_err(err, errlen, path, m);
            goto fail;
        }
    }
    if (r->tr[0].done) {
        set_err(err, errlen, path, "damaged recording (no samples table)");
        rv = -EINVAL;
        goto fail;
    }
    if ((rv = rdelta_open(r)) < 0) {
        char m[256];
        snprintf(m, sizeof(m), "damaged recording (proc_gone: %s)", sqlite3_errmsg(r->db));
        set_err(err, errlen, path, m);
        goto fail;
    }
    *ret = r;
    return 0;
fail:
    recording_close(r);
    return rv;
}

bool recording_meta_at(const js_recording_t *r, size_t i, const char **ret_key, const char **ret_value)
{
    if (i >= r->nmeta)
        return false;
    *ret_key = r->keys[i];
    *ret_value = r->vals[i];
    return true;
}

bool recording_has_table(const js_recording_t *r, const js_table_t *t)
{
    for (size_t i = 0; i < r->ntables; i++)
        if (r->tables[i] == t)
            return !r->tr[i].absent;
    return false;
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
        /* the column's value once (sqlite3_column_* each take the statement's mutex and error state) */
        sqlite3_value *x = sqlite3_column_value(tr->st, k + 1);
        if (sqlite3_value_type(x) == SQLITE_NULL)
            continue;
        const js_column_t *col = &rows->table->cols[c];
        switch (col->type) {
        case JS_INT: {
            int64_t i = sqlite3_value_int64(x);
            /* a time or duration (a gauge in ns) no clock gives, from an edited file: missing, so that no
             * difference of two of them can overflow (every one is in [0, 2^62]) */
            if (col->kind == JS_GAUGE && !strcmp(col->unit, "ns") && (i < 0 || i > ((int64_t)1 << 62)))
                break;
            val_int(&v[c], i);
            break;
        }
        case JS_REAL: {
            double d = sqlite3_value_double(x);
            if (isfinite(d)) /* SQLite stores no NaN; an infinity is no measurement */
                val_real(&v[c], d);
            break;
        }
        default: {
            const char *s = (const char *)sqlite3_value_text(x);
            int len = sqlite3_value_bytes(x);
            if (s && rows_set_str(rows, &v[c], s, (size_t)len) < 0)
                return -ENOMEM;
        }
        }
    }
    tr->has_row = false;
    return 0;
}

/* rdelta_compact: drop the departed processes' rows, in order (and the strings of replaced rows, when
 * `strings`), and index the others again. 0 or -ENOMEM. */
static int rdelta_compact(rdelta_t *d, bool strings)
{
    pidmap_free(&d->at);
    pidmap_init(&d->at, sizeof(size_t));
    if (strings) {
        js_rows_t fresh;
        rows_init(&fresh, d->rows.table);
        for (size_t i = 0; i < d->n; i++)
            if (d->ents[i].live && copy_row(&fresh, &d->rows, rows_row(&d->rows, i)) < 0) {
                rows_free(&fresh);
                return -ENOMEM;
            }
        rows_free(&d->rows);
        d->rows = fresh;
    }
    size_t k = 0, ncols = d->rows.table->ncols;
    for (size_t i = 0; i < d->n; i++) {
        if (!d->ents[i].live)
            continue;
        if (!strings && k != i)
            memcpy(rows_row(&d->rows, k), rows_row(&d->rows, i), ncols * sizeof(js_value_t));
        d->ents[k] = d->ents[i];
        if (d->ents[k].pid > 0) {
            size_t *at = pidmap_put(&d->at, d->ents[k].pid, NULL);
            if (!at)
                return -ENOMEM;
            *at = k;
        }
        k++;
    }
    d->n = k;
    if (!strings)
        d->rows.nrows = k;
    d->dead = 0;
    return 0;
}

static void rdelta_kill(rdelta_t *d, size_t k)
{
    if (d->ents[k].live) {
        d->ents[k].live = false;
        d->dead++;
    }
}

/* rdelta_sample: sample `seq` of the delta table: its departures, then its changed rows; every live process's
 * last row, in order of first sight, is then lent to `out` (no copy: `out` and the kept rows swap buffers,
 * and recording_next swaps them back). Returns 0, -ENOMEM or -EIO. */
static int rdelta_sample(js_recording_t *r, tab_reader_t *tr, int64_t seq, js_sample_t *s, js_rows_t *out)
{
    rdelta_t *d = &r->delta;
    int rc;
    for (size_t i = 0; i < d->n; i++) /* last sample's rows without identity */
        if (d->ents[i].pid < 0)
            rdelta_kill(d, i);
    while (!d->gone_done) {
        if (!d->gone_row) {
            rc = sqlite3_step(d->gone);
            if (rc != SQLITE_ROW) {
                d->gone_done = true;
                if (rc != SQLITE_DONE)
                    return -EIO;
                break;
            }
            d->gone_row = true;
        }
        if (sqlite3_column_int64(d->gone, 0) > seq)
            break;
        d->gone_row = false;
        int32_t pid = (int32_t)sqlite3_column_int64(d->gone, 1);
        int64_t start = sqlite3_column_int64(d->gone, 2);
        if (pid == 0) { /* a reset: every process known so far is gone unless it has a row now */
            for (size_t i = 0; i < d->n; i++)
                rdelta_kill(d, i);
            continue;
        }
        size_t *at = pidmap_get(&d->at, pid);
        if (at && d->ents[*at].start == start)
            rdelta_kill(d, *at);
    }
    int k;
    js_rows_t *tmp = out; /* empty (cleared): each changed row is loaded there, then moved */
    while ((k = step_table(tr)) == 1) {
        int64_t rs = sqlite3_column_int64(tr->st, 0);
        if (rs > seq)
            break;
        if (rs < seq) {
            tr->has_row = false; /* a row of a sample without a samples row: skip */
            continue;
        }
        rows_clear(tmp);
        if ((rc = load_row(tr, tmp)) < 0)
            return rc;
        const js_value_t *v = rows_row(tmp, 0);
        const js_value_t *pv = &v[d->key_pid], *sv = &v[d->key_start];
        bool keyed = pv->present && sv->present && pv->i > 0 && pv->i <= INT32_MAX;
        int32_t pid = keyed ? (int32_t)pv->i : -1;
        size_t *at = keyed ? pidmap_get(&d->at, pid) : NULL;
        if (at && d->ents[*at].live && d->ents[*at].start == sv->i) { /* its new values, in place */
            js_value_t *dst = rows_row(&d->rows, *at);
            for (size_t c = 0; c < d->rows.table->ncols; c++) {
                if (d->rows.table->cols[c].type == JS_TEXT) {
                    dst[c].present = false;
                    if (v[c].present) {
                        const char *txt = rows_str(tmp, &v[c]);
                        if (rows_set_str(&d->rows, &dst[c], txt, strlen(txt)) < 0)
                            return -ENOMEM;
                    }
                } else {
                    dst[c] = v[c];
                }
            }
            continue;
        }
        if (at) /* the PID names another process now */
            rdelta_kill(d, *at);
        if (d->n == d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 64;
            rent_t *e = realloc(d->ents, cap * sizeof(*e));
            if (!e)
                return -ENOMEM;
            d->ents = e;
            d->cap = cap;
        }
        if ((rc = copy_row(&d->rows, tmp, v)) < 0)
            return rc;
        size_t slot = d->n++;
        d->ents[slot] = (rent_t){.pid = pid, .start = keyed ? sv->i : 0, .live = true};
        if (keyed) {
            if (!(at = pidmap_put(&d->at, pid, NULL)))
                return -ENOMEM;
            *at = slot;
        }
    }
    rows_clear(tmp);
    if (k < 0)
        return -EIO;
    bool strings = d->rows.arena_len > ((size_t)1 << 20) && d->rows.arena_len > 64 * d->n;
    if ((d->dead || strings) && (rc = rdelta_compact(d, strings)) < 0)
        return rc;
    js_rows_t t = *out; /* lend the rows: swap buffers */
    *out = d->rows;
    d->rows = t;
    d->lent = s;
    return 0;
}

/* rdelta_return: take back the rows lent to `s` at the last sample (before `s` is cleared). */
static void rdelta_return(js_recording_t *r, js_sample_t *s)
{
    rdelta_t *d = &r->delta;
    if (!d->lent || d->lent != s || d->ix == SIZE_MAX)
        return;
    js_rows_t t = s->rows[d->ix];
    s->rows[d->ix] = d->rows;
    d->rows = t;
    d->lent = NULL;
}

int recording_next(js_recording_t *r, js_sample_t *s, int64_t *ret_seq, char *err, size_t errlen)
{
    if (r->delta.lent && r->delta.lent != s) {
        snprintf(err, errlen,
                 "recording_next: called with another sample than the last (its process rows are lent)");
        return -EINVAL;
    }
    rdelta_return(r, s);
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
        if (i == r->delta.ix) {
            if (tr->done && tr->skipped)
                continue;
            if ((rv = rdelta_sample(r, tr, seq, s, &s->rows[i])) < 0) {
                snprintf(err, errlen, "damaged recording (table %s): %s", r->tables[i]->name,
                         sqlite3_errmsg(r->db));
                break;
            }
            continue;
        }
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
            snprintf(err, errlen, "damaged recording (table %s): %s", r->tables[i]->name,
                     sqlite3_errmsg(r->db));
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
    sqlite3_finalize(r->delta.gone);
    pidmap_free(&r->delta.at);
    free(r->delta.ents);
    rows_free(&r->delta.rows);
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
    remove_private(r);
    free(r);
}

void recording_skip(js_recording_t *r, const js_table_t *t)
{
    for (size_t i = 0; i < r->ntables; i++)
        if (r->tables[i] == t) {
            r->tr[i].done = r->tr[i].skipped = true;
            r->tr[i].has_row = false;
        }
}

int recording_stored_state(js_recording_t *r, js_rows_t *out)
{
    if (r->version < 2)
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT key, num, text FROM summary_state ORDER BY rowid", -1, &st, NULL) !=
        SQLITE_OK)
        return 0; /* no such table: nothing stored */
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        js_value_t *v = rows_add(out);
        if (!v) {
            sqlite3_finalize(st);
            return -ENOMEM;
        }
        for (int c = 0; c < 3; c++) {
            if (sqlite3_column_type(st, c) == SQLITE_NULL)
                continue;
            if (c == 1) {
                val_real(&v[1], sqlite3_column_double(st, 1));
            } else {
                const char *txt = (const char *)sqlite3_column_text(st, c);
                if (txt && rows_set_str(out, &v[c], txt, (size_t)sqlite3_column_bytes(st, c)) < 0) {
                    sqlite3_finalize(st);
                    return -ENOMEM;
                }
            }
        }
        n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE && n > 0 ? 1 : rc == SQLITE_DONE ? 0 : -EIO;
}

int recording_version(const js_recording_t *r)
{
    return r->version;
}

bool recording_has_rows(const js_recording_t *r, const js_table_t *t)
{
    for (size_t i = 0; i < r->ntables; i++) {
        if (r->tables[i] != t || r->tr[i].absent)
            continue;
        char q[128];
        snprintf(q, sizeof(q), "SELECT 1 FROM %s LIMIT 1", r->version >= 2 ? storage_name(t) : t->name);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(r->db, q, -1, &st, NULL) != SQLITE_OK)
            return true; /* cannot tell: as if it had */
        bool any = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        return any;
    }
    return false;
}
