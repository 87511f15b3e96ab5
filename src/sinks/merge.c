/* SPDX-License-Identifier: MIT
 *
 * Node recordings merged into one job recording, and a node read back out of one (merge.h). Everything is
 * SQL over attached databases: an input is attached read-only and immutable (a closed recording is one file),
 * checked (PRAGMA quick_check, its metadata), and each of its tables copied with the node's name added.
 */
#include "sinks/merge.h"

#include "sinks/recording.h"
#include "sys/fsroot.h"
#include "sys/sysio.h"
#include "sys/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

static void set_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t cap, const char *fmt, ...)
{
    if (!err || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* ident: `s` is a plain SQL identifier (the recording's table and column names all are). */
static bool ident(const char *s)
{
    if (!*s || strlen(s) > 64)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return true;
}

static int exec(sqlite3 *db, const char *sql, char *err, size_t cap)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    set_err(err, cap, "%s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -EIO;
}

/* meta_of: a text value of table `schema`.meta, malloc'ed, or NULL. */
static char *meta_of(sqlite3 *db, const char *schema, const char *key)
{
    char sql[160];
    snprintf(sql, sizeof(sql), "SELECT value FROM %s.meta WHERE key = ?", schema);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    char *v = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

static int64_t meta_i64(sqlite3 *db, const char *schema, const char *key, int64_t dflt)
{
    char *v = meta_of(db, schema, key), *end = NULL;
    long long x = v ? strtoll(v, &end, 10) : 0;
    int64_t r = v && *v && end && !*end ? (int64_t)x : dflt;
    free(v);
    return r;
}

/* One input, as checked. */
typedef struct {
    const char *path;
    const char *read_path; /* path, or a private snapshot of an unfinished recording (merged with partial) */
    char snap_dir[PATH_MAX];
    char snap_db[PATH_MAX];
    bool complete; /* closed by its monitor (stop_unix_ns); else merged with partial, up to its last sample */
    char node[128];
    char host[256];
    char job[64];
    dev_t dev;
    ino_t ino;
    int64_t samples, start_unix_ns, stop_unix_ns, offset_ns;
} input_t;

/* attach: attach `path` read-only as schema `src` (immutable: a closed recording is one file; a private
 * snapshot of an unfinished one is read through its WAL). */
static int attach(sqlite3 *db, const char *path, bool snapshot, char *err, size_t cap)
{
    char u[PATH_MAX * 3 + 32];
    if (recording_uri(u, sizeof(u), path, snapshot ? "mode=ro" : "mode=ro&immutable=1") < 0) {
        set_err(err, cap, "%s: path too long", path);
        return -ENAMETOOLONG;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS src", -1, &st, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_text(st, 1, u, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        set_err(err, cap, "%s: not a readable recording (%s)", path, sqlite3_errmsg(db));
        return -EIO;
    }
    return 0;
}

static void detach(sqlite3 *db)
{
    sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
}

#define INCOMPLETE_WHY "incomplete recording (its monitor is still writing it, or was killed)"

/* check_input: attached as src: a whole node recording that is not a merged one, and complete unless
 * `partial` (then one without stop_unix_ns is taken up to its last sample, in->complete false). */
static int check_input(sqlite3 *db, input_t *in, bool partial, char *err, size_t cap)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA src.quick_check", -1, &st, NULL) != SQLITE_OK) {
        set_err(err, cap, "%s: not a jobscope recording (%s)", in->path, sqlite3_errmsg(db));
        return -EINVAL;
    }
    int rc = sqlite3_step(st);
    bool ok = rc == SQLITE_ROW && sqlite3_column_text(st, 0) &&
              strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
    char why[200];
    snprintf(why, sizeof(why), "%s",
             rc == SQLITE_ROW && sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0)
                                                            : sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (!ok) {
        set_err(err, cap, "%s: damaged or truncated recording (%s)", in->path, why);
        return -EINVAL;
    }
    char *ver = meta_of(db, "src", "schema_version");
    if (!ver) {
        set_err(err, cap, "%s: not a jobscope recording (no schema_version)", in->path);
        return -EINVAL;
    }
    if (!recording_is_tables(db, "src", err, cap, in->path)) {
        free(ver);
        return -EINVAL;
    }
    int v = atoi(ver);
    free(ver);
    if (v < JS_SCHEMA_VERSION_MIN || v > JS_SCHEMA_VERSION) {
        set_err(err, cap, "%s: recording schema version %d, this jobscope reads %d to %d", in->path, v,
                JS_SCHEMA_VERSION_MIN, JS_SCHEMA_VERSION);
        return -EPROTO;
    }
    if (meta_i64(db, "src", "merged", 0) == 1) {
        set_err(err, cap, "%s: already a merged recording (merge node recordings, once)", in->path);
        return -EINVAL;
    }
    char *stop = meta_of(db, "src", "stop_unix_ns");
    free(stop);
    in->complete = stop != NULL;
    if (!stop && !partial) {
        set_err(err, cap, "%s: " INCOMPLETE_WHY "; `jobscope merge --partial` keeps its samples", in->path);
        return -EINVAL;
    }
    char *node = meta_of(db, "src", "job_node"), *host = meta_of(db, "src", "host"),
         *job = meta_of(db, "src", "job_id");
    snprintf(in->node, sizeof(in->node), "%s", node ? node : host ? host : "");
    snprintf(in->host, sizeof(in->host), "%s", host ? host : "");
    snprintf(in->job, sizeof(in->job), "%s", job ? job : "");
    free(node);
    free(host);
    free(job);
    if (!in->node[0]) {
        set_err(err, cap, "%s: no node name (meta job_node or host)", in->path);
        return -EINVAL;
    }
    in->start_unix_ns = meta_i64(db, "src", "start_unix_ns", 0);
    in->stop_unix_ns = meta_i64(db, "src", "stop_unix_ns", 0);
    if (sqlite3_prepare_v2(db, "SELECT count(*), max(t_unix_ns) FROM src.samples", -1, &st, NULL) !=
        SQLITE_OK) {
        set_err(err, cap, "%s: damaged recording (no samples table)", in->path);
        return -EINVAL;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        in->samples = sqlite3_column_int64(st, 0);
        if (!in->complete) /* up to its last sample */
            in->stop_unix_ns = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return 0;
}

/* The columns of table `schema`.`t` (PRAGMA table_info): names and declared types. */
typedef struct {
    char name[96][65];
    char type[96][16];
    int n;
} cols_t;

static int table_cols(sqlite3 *db, const char *schema, const char *t, cols_t *c)
{
    char sql[200];
    snprintf(sql, sizeof(sql), "PRAGMA %s.table_info(%s)", schema, t);
    sqlite3_stmt *st;
    c->n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -EIO;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && c->n < 96) {
        const char *name = (const char *)sqlite3_column_text(st, 1),
                   *type = (const char *)sqlite3_column_text(st, 2);
        if (!name || !ident(name))
            continue;
        snprintf(c->name[c->n], sizeof(c->name[0]), "%s", name);
        snprintf(c->type[c->n], sizeof(c->type[0]), "%s", type && ident(type) ? type : "");
        c->n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -EIO;
}

static bool has_col(const cols_t *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->name[i], name))
            return true;
    return false;
}

/* copy_tables: every sample table of src into main with the node's name (created, or widened, as needed). */
static int copy_tables(sqlite3 *db, const input_t *in, char *err, size_t cap)
{
    sqlite3_stmt *lst;
    if (sqlite3_prepare_v2(db, "SELECT name FROM src.sqlite_master WHERE type = 'table' ORDER BY name", -1,
                           &lst, NULL) != SQLITE_OK)
        return -EIO;
    char names[128][65];
    int nt = 0, rc;
    while ((rc = sqlite3_step(lst)) == SQLITE_ROW && nt < 128) {
        const char *t = (const char *)sqlite3_column_text(lst, 0);
        if (t && ident(t) && strcmp(t, "meta") && strcmp(t, "columns"))
            snprintf(names[nt++], sizeof(names[0]), "%s", t);
    }
    sqlite3_finalize(lst);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        set_err(err, cap, "%s: %s", in->path, sqlite3_errmsg(db));
        return -EIO;
    }
    char *sql = malloc(65536);
    if (!sql)
        return -ENOMEM;
    int r = 0;
    static cols_t sc, mc; /* large: not on the stack */
    for (int t = 0; t < nt && r == 0; t++) {
        if ((r = table_cols(db, "src", names[t], &sc)) < 0 || !has_col(&sc, "sample"))
            continue; /* not a sample table */
        table_cols(db, "main", names[t], &mc);
        size_t n = 0;
        if (mc.n == 0) {
            n += (size_t)snprintf(sql + n, 65536 - n,
                                  "CREATE TABLE main.%s (sample INTEGER NOT NULL, node TEXT NOT NULL",
                                  names[t]);
            for (int c = 0; c < sc.n; c++)
                if (strcmp(sc.name[c], "sample") && strcmp(sc.name[c], "node"))
                    n += (size_t)snprintf(sql + n, 65536 - n, ", %s %s", sc.name[c], sc.type[c]);
            snprintf(sql + n, 65536 - n, ")");
            if ((r = exec(db, sql, err, cap)) < 0)
                break;
        } else {
            for (int c = 0; c < sc.n && r == 0; c++)
                if (!has_col(&mc, sc.name[c])) { /* a node with a newer source: widen */
                    snprintf(sql, 65536, "ALTER TABLE main.%s ADD COLUMN %s %s", names[t], sc.name[c],
                             sc.type[c]);
                    r = exec(db, sql, err, cap);
                }
        }
        n = (size_t)snprintf(sql, 65536, "INSERT INTO main.%s (sample, node", names[t]);
        for (int c = 0; c < sc.n; c++)
            if (strcmp(sc.name[c], "sample") && strcmp(sc.name[c], "node"))
                n += (size_t)snprintf(sql + n, 65536 - n, ", %s", sc.name[c]);
        n += (size_t)snprintf(sql + n, 65536 - n, ") SELECT sample, ?1");
        for (int c = 0; c < sc.n; c++)
            if (strcmp(sc.name[c], "sample") && strcmp(sc.name[c], "node"))
                n += (size_t)snprintf(sql + n, 65536 - n, ", %s", sc.name[c]);
        snprintf(sql + n, 65536 - n, " FROM src.%s ORDER BY rowid", names[t]);
        sqlite3_stmt *ins;
        if (r == 0 && sqlite3_prepare_v2(db, sql, -1, &ins, NULL) != SQLITE_OK) {
            set_err(err, cap, "%s: table %s: %s", in->path, names[t], sqlite3_errmsg(db));
            r = -EIO;
        }
        if (r == 0) {
            sqlite3_bind_text(ins, 1, in->node, -1, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE) {
                set_err(err, cap, "%s: table %s: %s", in->path, names[t], sqlite3_errmsg(db));
                r = -EIO;
            }
            sqlite3_finalize(ins);
        }
    }
    free(sql);
    if (r == 0) {
        sqlite3_stmt *st;
        const char *q = "INSERT INTO main.node_meta SELECT ?1, key, value FROM src.meta";
        if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
            return -EIO;
        sqlite3_bind_text(st, 1, in->node, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE ||
            exec(db, "INSERT OR IGNORE INTO main.columns SELECT * FROM src.columns", err, cap) < 0) {
            set_err(err, cap, "%s: %s", in->path, sqlite3_errmsg(db));
            return -EIO;
        }
    }
    return r;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int put_meta(sqlite3 *db, const char *key, const char *value)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO main.meta VALUES (?, ?)", -1, &st, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -EIO;
}

static int put_meta_i64(sqlite3 *db, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return put_meta(db, key, buf);
}

/* merged_meta: the merged file's own metadata: the job's facts from the first input, and the merge's. */
static int merged_meta(sqlite3 *db, const input_t *in, size_t n, int64_t bound)
{
    static const char *const keep[] = {"schema_version", "batch_scheduler", "job_id",
                                       "job_nodelist",   "job_num_nodes",   "jobscope_version",
                                       "clk_tck",        "interval_ns",     NULL};
    int r = 0;
    for (const char *const *k = keep; *k && r == 0; k++) {
        char *v = meta_of(db, "src", *k);
        if (v)
            r = put_meta(db, *k, v);
        free(v);
    }
    int64_t start = INT64_MAX, stop = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i].start_unix_ns && in[i].start_unix_ns < start)
            start = in[i].start_unix_ns;
        if (in[i].stop_unix_ns > stop)
            stop = in[i].stop_unix_ns;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t incomplete = 0;
    for (size_t i = 0; i < n; i++)
        incomplete += !in[i].complete;
    if (r == 0)
        r = put_meta(db, "merged", "1") | put_meta(db, "mode", "merged") |
            put_meta_i64(db, "merged_nodes", (int64_t)n) |
            put_meta_i64(db, "merged_incomplete_nodes", incomplete) |
            put_meta_i64(db, "merged_unix_ns", (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec) |
            put_meta_i64(db, "start_unix_ns", start == INT64_MAX ? 0 : start) |
            put_meta_i64(db, "stop_unix_ns", stop) | put_meta_i64(db, "clock_offset_bound_ns", bound);
    return r ? -EIO : 0;
}

static int write_nodes(sqlite3 *db, const input_t *in, size_t n, int64_t bound)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO main.nodes VALUES (?,?,?,?,?,?,?,?,?)", -1, &st, NULL) !=
        SQLITE_OK)
        return -EIO;
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++) {
        sqlite3_bind_text(st, 1, in[i].node, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, in[i].host, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, in[i].path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, in[i].samples);
        sqlite3_bind_int64(st, 5, in[i].start_unix_ns);
        sqlite3_bind_int64(st, 6, in[i].stop_unix_ns);
        sqlite3_bind_int64(st, 7, in[i].offset_ns);
        sqlite3_bind_int64(st, 8, bound);
        sqlite3_bind_int(st, 9, in[i].complete);
        if (sqlite3_step(st) != SQLITE_DONE)
            r = -EIO;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return r;
}

/* estimate_offsets: each node's clock against the job's: the monitors of one job start together (one srun,
 * or the SPANK plugin at the step's start), so each node's start minus the median start estimates its clock
 * offset; launch skew and clock offset are not told apart, so the bound is the spread of the starts. */
static int64_t estimate_offsets(input_t *in, size_t n)
{
    int64_t *s = malloc(n * sizeof(*s));
    if (!s)
        return 0;
    for (size_t i = 0; i < n; i++)
        s[i] = in[i].start_unix_ns;
    qsort(s, n, sizeof(*s), cmp_i64);
    int64_t med = s[n / 2], bound = s[n - 1] - s[0];
    free(s);
    for (size_t i = 0; i < n; i++)
        in[i].offset_ns = in[i].start_unix_ns - med;
    return bound;
}

static int cmp_node(const void *a, const void *b)
{
    return strcmp(((const input_t *)a)->node, ((const input_t *)b)->node);
}

/* find_inputs: each input's identity (the same file twice is refused) and the file to read it from: an
 * unfinished input (data in its -wal) is read from a private snapshot; without `partial` it is refused as
 * incomplete, never as "not a recording" (its file alone holds no metadata yet). Returns 0 or -errno with the
 * reason in err (snapshots made so far are in[].snap_dir, for the caller to remove). */
static int find_inputs(input_t *in, const char *const *paths, size_t n, bool partial, char *err,
                       size_t errlen)
{
    struct stat st;
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++) {
        in[i].path = paths[i];
        if (stat(paths[i], &st) < 0) {
            r = -errno;
            set_err(err, errlen, "%s: %s", paths[i], strerror(errno));
            break;
        }
        in[i].dev = st.st_dev;
        in[i].ino = st.st_ino;
        for (size_t k = 0; k < i; k++)
            if (in[k].dev == in[i].dev && in[k].ino == in[i].ino) {
                set_err(err, errlen, "%s and %s are the same file: each node's recording is merged once",
                        paths[k], paths[i]);
                r = -EINVAL;
            }
    }
    for (size_t i = 0; i < n && r == 0; i++) {
        in[i].read_path = in[i].path;
        if (!recording_unfinished(in[i].path))
            continue;
        if (!partial) {
            set_err(err, errlen, "%s: " INCOMPLETE_WHY "; `jobscope merge --partial` keeps its samples",
                    in[i].path);
            r = -EINVAL;
        } else if ((r = recording_snapshot(in[i].path, in[i].snap_dir, sizeof(in[i].snap_dir), in[i].snap_db,
                                           sizeof(in[i].snap_db))) < 0) {
            set_err(err, errlen, "%s: cannot copy it to read it: %s", in[i].path, strerror(-r));
        } else {
            in[i].read_path = in[i].snap_db;
        }
    }
    return r;
}

/* index_by_node: an index on (node, sample) of every data table of the merged file, for reading one node
 * back. Returns 0 or -EIO with the reason in err. */
static int index_by_node(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *lst;
    char idx[64][65];
    int ni = 0, r = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT IN "
                           "('meta','columns','nodes','node_meta')",
                           -1, &lst, NULL) == SQLITE_OK) {
        while (sqlite3_step(lst) == SQLITE_ROW && ni < 64)
            snprintf(idx[ni++], sizeof(idx[0]), "%s", (const char *)sqlite3_column_text(lst, 0));
        sqlite3_finalize(lst);
    }
    char sql[512];
    for (int i = 0; i < ni && r == 0; i++) {
        snprintf(sql, sizeof(sql), "CREATE INDEX %.64s_by_node ON %.64s (node, sample)", idx[i], idx[i]);
        r = exec(db, sql, err, errlen);
    }
    return r;
}

int merge_recordings(const char *out, const char *const *paths, size_t n, unsigned flags, char *err,
                     size_t errlen)
{
    bool partial = flags & MERGE_PARTIAL;
    if (n == 0) {
        set_err(err, errlen, "no recording to merge");
        return -EINVAL;
    }
    struct stat st;
    if (lstat(out, &st) == 0) {
        set_err(err, errlen, "%s: already exists (a job is merged once; choose another name)", out);
        return -EEXIST;
    }
    input_t *in = calloc(n, sizeof(*in));
    if (!in)
        return -ENOMEM;
    int r = find_inputs(in, paths, n, partial, err, errlen);
    /* the output is written in a private directory beside it (SQLite opens it by name) and renamed into place
     * when complete; what a merge killed earlier left for this output is removed first */
    js_outfile_t of;
    int ro = r == 0 ? outfile_open(&of, out, false, true) : 0;
    if (r == 0 && ro < 0) {
        r = ro;
        set_err(err, errlen, "%s: %s", out,
                r == -EEXIST ? "already exists (a job is merged once; choose another name)" : strerror(-r));
    }
    sqlite3 *db = NULL;
    if (r < 0)
        goto done;
    if (sqlite3_open_v2(of.tmp, &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        set_err(err, errlen, "%s: %s", out, db ? sqlite3_errmsg(db) : "cannot create");
        r = -EIO;
        goto done;
    }
    recording_harden(db);
    if ((r = exec(
             db,
             "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;"
             "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
             "CREATE TABLE columns (table_name TEXT, column_name TEXT, unit TEXT, kind TEXT, width INTEGER,"
             " help TEXT, PRIMARY KEY (table_name, column_name)) WITHOUT ROWID;"
             "CREATE TABLE nodes (node TEXT PRIMARY KEY, host TEXT, file TEXT, samples INTEGER,"
             " start_unix_ns INTEGER, stop_unix_ns INTEGER, clock_offset_ns INTEGER,"
             " clock_offset_bound_ns INTEGER, complete INTEGER) WITHOUT ROWID;"
             "CREATE TABLE node_meta (node TEXT, key TEXT, value TEXT, PRIMARY KEY (node, key)) WITHOUT "
             "ROWID;",
             err, errlen)) < 0)
        goto done;
    /* every input checked first: nothing is merged from a set with one bad file */
    for (size_t i = 0; i < n && r == 0; i++) {
        if ((r = attach(db, in[i].read_path, in[i].read_path != in[i].path, err, errlen)) < 0)
            break;
        r = check_input(db, &in[i], partial, err, errlen);
        detach(db);
        for (size_t k = 0; k < i && r == 0; k++) {
            if (strcmp(in[k].job, in[i].job) != 0) {
                set_err(err, errlen, "%s is job %s, %s is job %s: one job at a time", in[k].path,
                        in[k].job[0] ? in[k].job : "(none)", in[i].path, in[i].job[0] ? in[i].job : "(none)");
                r = -EINVAL;
            } else if (strcmp(in[k].node, in[i].node) == 0) {
                set_err(err, errlen, "%s and %s are both node %s", in[k].path, in[i].path, in[i].node);
                r = -EINVAL;
            }
        }
    }
    if (r < 0)
        goto done;
    qsort(in, n, sizeof(*in), cmp_node);
    int64_t bound = estimate_offsets(in, n);
    for (size_t i = 0; i < n && r == 0; i++) {
        if ((r = attach(db, in[i].read_path, in[i].read_path != in[i].path, err, errlen)) < 0)
            break;
        r = exec(db, "BEGIN", err, errlen); /* one transaction per node: (DE)ATTACH is refused inside one */
        if (r == 0)
            r = copy_tables(db, &in[i], err, errlen);
        if (r == 0 && i == 0)
            r = merged_meta(db, in, n, bound);
        if (r == 0)
            r = exec(db, "COMMIT", err, errlen);
        else
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        detach(db);
    }
    if (r == 0)
        r = exec(db, "BEGIN", err, errlen);
    if (r == 0)
        r = write_nodes(db, in, n, bound);
    if (r == 0)
        r = index_by_node(db, err, errlen);
    if (r == 0)
        r = exec(db, "COMMIT", err, errlen);
done:
    if (db && sqlite3_close(db) != SQLITE_OK && r == 0) {
        set_err(err, errlen, "%s: cannot close", out);
        r = -EIO;
    }
    if (r == 0 && (r = outfile_commit(&of)) < 0) /* never over a file that appeared meanwhile */
        set_err(err, errlen, "%s: %s", out,
                r == -EEXIST ? "already exists (a job is merged once)" : strerror(-r));
    else if (r < 0 && ro == 0)
        outfile_abort(&of);
    for (size_t i = 0; i < n; i++)
        recording_snapshot_remove(in[i].snap_dir);
    free(in);
    return r;
}

bool merge_is_merged(const char *path)
{
    int fd = fs_open(AT_FDCWD, path);
    if (fd < 0)
        return false;
    char hdr[16];
    bool sqlite =
        sys_read(fd, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr) && memcmp(hdr, "SQLite format 3", 16) == 0;
    sys_close(fd);
    if (!sqlite)
        return false;
    char u[PATH_MAX * 3 + 32];
    sqlite3 *db = NULL;
    bool merged = false;
    if (recording_uri(u, sizeof(u), path, "mode=ro&immutable=1") == 0 &&
        sqlite3_open_v2(u, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) ==
            SQLITE_OK) {
        recording_harden(db);
        merged = meta_i64(db, "main", "merged", 0) == 1;
    }
    sqlite3_close(db);
    return merged;
}

static int open_ro(const char *path, sqlite3 **db, char *err, size_t errlen)
{
    char u[PATH_MAX * 3 + 32];
    *db = NULL;
    if (recording_uri(u, sizeof(u), path, "mode=ro&immutable=1") < 0) {
        set_err(err, errlen, "%s: path too long", path);
        return -ENAMETOOLONG;
    }
    if (sqlite3_open_v2(u, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        set_err(err, errlen, "%s: %s", path, *db ? sqlite3_errmsg(*db) : "cannot open");
        sqlite3_close(*db);
        *db = NULL;
        return -EIO;
    }
    recording_harden(*db);
    if (!recording_is_tables(*db, "main", err, errlen, path)) {
        sqlite3_close(*db);
        *db = NULL;
        return -EINVAL;
    }
    return 0;
}

int merge_nodes(const char *path, merge_node_t **ret, size_t *ret_n, char *err, size_t errlen)
{
    sqlite3 *db;
    *ret = NULL;
    *ret_n = 0;
    int r = open_ro(path, &db, err, errlen);
    if (r < 0)
        return r;
    sqlite3_stmt *st;
    /* `complete` since merges could take incomplete nodes (--partial): older merged files have every node
     * complete */
    bool with_complete = sqlite3_prepare_v2(db,
                                            "SELECT node, host, samples, start_unix_ns, stop_unix_ns, "
                                            "clock_offset_ns, clock_offset_bound_ns, complete FROM nodes "
                                            "ORDER BY node",
                                            -1, &st, NULL) == SQLITE_OK;
    if (!with_complete &&
        sqlite3_prepare_v2(db,
                           "SELECT node, host, samples, start_unix_ns, stop_unix_ns, clock_offset_ns, "
                           "clock_offset_bound_ns FROM nodes ORDER BY node",
                           -1, &st, NULL) != SQLITE_OK) {
        set_err(err, errlen, "%s: not a merged recording (%s)", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return -EINVAL;
    }
    size_t cap = 0, n = 0;
    merge_node_t *v = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            merge_node_t *nv = realloc(v, cap * sizeof(*v));
            if (!nv) {
                r = -ENOMEM;
                break;
            }
            v = nv;
        }
        merge_node_t *x = &v[n++];
        memset(x, 0, sizeof(*x));
        snprintf(x->name, sizeof(x->name), "%s",
                 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
        snprintf(x->host, sizeof(x->host), "%s",
                 sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "");
        x->samples = sqlite3_column_int64(st, 2);
        x->start_unix_ns = sqlite3_column_int64(st, 3);
        x->stop_unix_ns = sqlite3_column_int64(st, 4);
        x->clock_offset_ns = sqlite3_column_int64(st, 5);
        x->clock_offset_bound_ns = sqlite3_column_int64(st, 6);
        x->complete =
            !with_complete || sqlite3_column_type(st, 7) == SQLITE_NULL || sqlite3_column_int(st, 7) != 0;
    }
    if (r == 0 && rc != SQLITE_DONE) {
        set_err(err, errlen, "%s: damaged recording (%s)", path, sqlite3_errmsg(db));
        r = -EIO;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (r < 0) {
        free(v);
        return r;
    }
    *ret = v;
    *ret_n = n;
    return 0;
}

int merge_extract(const char *path, const char *node, const char *out, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int r = 0;
    if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        set_err(err, errlen, "%s: %s", out, db ? sqlite3_errmsg(db) : "cannot create");
        sqlite3_close(db);
        return -EIO;
    }
    recording_harden(db);
    if ((r = attach(db, path, false, err, errlen)) < 0)
        goto done;
    if (!recording_is_tables(db, "src", err, errlen, path)) {
        r = -EINVAL;
        goto done;
    }
    if ((r = exec(
             db,
             "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
             "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
             "CREATE TABLE columns (table_name TEXT, column_name TEXT, unit TEXT, kind TEXT, width INTEGER,"
             " help TEXT, PRIMARY KEY (table_name, column_name)) WITHOUT ROWID;"
             "INSERT INTO main.columns SELECT * FROM src.columns;",
             err, errlen)) < 0)
        goto done;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO main.meta SELECT key, value FROM src.node_meta WHERE node = ?",
                           -1, &st, NULL) != SQLITE_OK) {
        set_err(err, errlen, "%s: not a merged recording (%s)", path, sqlite3_errmsg(db));
        r = -EINVAL;
        goto done;
    }
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE || sqlite3_changes(db) == 0) {
        set_err(err, errlen, "%s: no node %s", path, node);
        r = -ENOENT;
        goto done;
    }
    char names[128][65];
    int nt = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM src.sqlite_master WHERE type = 'table' AND name NOT IN "
                           "('meta','columns','nodes','node_meta')",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW && nt < 128) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            if (t && ident(t))
                snprintf(names[nt++], sizeof(names[0]), "%s", t);
        }
        sqlite3_finalize(st);
    }
    char *sql = malloc(65536);
    if (!sql) {
        r = -ENOMEM;
        goto done;
    }
    static cols_t sc;
    for (int t = 0; t < nt && r == 0; t++) {
        if ((r = table_cols(db, "src", names[t], &sc)) < 0)
            break;
        bool samples = !strcmp(names[t], "samples");
        size_t n = (size_t)snprintf(sql, 65536, "CREATE TABLE main.%s (sample INTEGER %s", names[t],
                                    samples ? "PRIMARY KEY" : "NOT NULL");
        for (int c = 0; c < sc.n; c++)
            if (strcmp(sc.name[c], "sample") && strcmp(sc.name[c], "node"))
                n += (size_t)snprintf(sql + n, 65536 - n, ", %s %s", sc.name[c], sc.type[c]);
        snprintf(sql + n, 65536 - n, ")");
        if ((r = exec(db, sql, err, errlen)) < 0)
            break;
        n = (size_t)snprintf(sql, 65536, "INSERT INTO main.%s SELECT sample", names[t]);
        for (int c = 0; c < sc.n; c++)
            if (strcmp(sc.name[c], "sample") && strcmp(sc.name[c], "node"))
                n += (size_t)snprintf(sql + n, 65536 - n, ", %s", sc.name[c]);
        snprintf(sql + n, 65536 - n, " FROM src.%s WHERE node = ?1 ORDER BY rowid", names[t]);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            set_err(err, errlen, "%s: table %s: %s", path, names[t], sqlite3_errmsg(db));
            r = -EIO;
            break;
        }
        sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            set_err(err, errlen, "%s: table %s: %s", path, names[t], sqlite3_errmsg(db));
            r = -EIO;
        }
        sqlite3_finalize(st);
    }
    free(sql);
    if (r == 0)
        r = exec(db, "COMMIT", err, errlen);
done:
    if (db) {
        detach(db);
        sqlite3_close(db);
    }
    if (r < 0)
        unlink(out);
    return r;
}
