/* SPDX-License-Identifier: MIT
 *
 * SQLite recording sink: writer and reader of the recording format (recording.h, docs/FORMAT.md). Tables are
 * created from the registered descriptors; the `columns` table repeats each column's unit, kind and meaning
 * so a recording is self-describing; `meta` holds run metadata and the schema version. Rows are read back in
 * rowid order, which is sample order, so no index is needed.
 */
#include "sinks/recording.h"

#include "core/json.h"
#include "sinks/sqlio.h"
#include "sys/sysio.h"
#include "sys/fsfile.h"
#include "sys/fsroot.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
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
    sqlite3_stmt **ins; /* [i * JS_INS_SLOTS + k]: slot_rows(k) rows into table i (prepared at first use) */
    int max_vars;       /* SQLITE_LIMIT_VARIABLE_NUMBER of this connection */
    sqlite3_stmt *meta;
    sqlite3_stmt *begin, *commit, *rollback; /* prepared once: no SQL parsing per sample */
};

/* A sample's rows of one table are inserted by one multi-row statement per chunk: up to 16 rows in one
 * statement of exactly that many, more in chunks of 64 and 32 first (1000 rows take 17 statements). Fewer
 * statements per sample than one per row: each one opens its table's cursor and seeks to its end once. */
#define JS_INS_SLOTS 18 /* statements of 1..16 rows, then 32 and 64 */

static int slot_rows(int k)
{
    return k < 16 ? k + 1 : k == 16 ? 32 : 64;
}

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
    js_buf_t sql = {0};
    int r;
    if ((r = exec(w->db,
                  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
                  "CREATE TABLE columns (table_name TEXT, column_name TEXT, unit TEXT, kind TEXT,"
                  " width INTEGER, help TEXT, PRIMARY KEY (table_name, column_name)) WITHOUT ROWID;")) < 0)
        return r;
    sqlite3_stmt *col;
    if (sqlite3_prepare_v2(w->db, "INSERT INTO columns VALUES (?,?,?,?,?,?)", -1, &col, NULL) != SQLITE_OK)
        return -EIO;
    for (size_t i = 0; i < w->ntables && r == 0; i++) {
        const js_table_t *t = w->tables[i];
        bool is_samples = strcmp(t->name, "samples") == 0;
        sql.len = 0;
        int e = buf_printf(&sql, "CREATE TABLE %s (sample INTEGER %s", t->name,
                           is_samples ? "PRIMARY KEY" : "NOT NULL");
        for (size_t c = 0; c < t->ncols && r == 0; c++) {
            const js_column_t *cd = &t->cols[c];
            e |= buf_printf(&sql, ", %s %s", cd->name, type_names[cd->type]);
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
        e |= buf_append(&sql, ")", 1);
        if (e)
            r = -ENOMEM;
        if (r == 0)
            r = exec(w->db, sql.p);
    }
    sqlite3_finalize(col);
    buf_free(&sql);
    return r;
}

/* ---- the writer's VFS: one write per WAL frame --------------------------------------------------------- */

/* SQLite writes each WAL frame as two writes: its 24-byte header, then the page right after it. The writer
 * opens its recording through this thin VFS over the default one, which holds a frame header that is appended
 * at the end of what was written and sends it with the page that follows it, as one write (about a dozen
 * frames per sample: 24 -> 12 pwrite() per sample). Nothing else changes: any other operation on the WAL (a
 * read, a write elsewhere, a sync, a size, a truncation, a close, a file control) sends a held header first,
 * and SQLite publishes frames in the WAL index only after their writes, so a reader never sees a frame whose
 * header is still held. The main file and every other file go straight through. */

#define WAL_FRAME_HDR 24
#define WAL_FILE_HDR 32

typedef struct {
    sqlite3_file base;      /* pMethods = &wal_io */
    sqlite3_file *real;     /* the default VFS's file, in the same allocation after this struct */
    bool wal;               /* this is a -wal file: coalesce */
    bool held;              /* hdr waits for the page that follows it */
    sqlite3_int64 hdr_off;  /* where hdr goes */
    sqlite3_int64 next_off; /* end of the last write (where the next frame is appended), or -1 */
    unsigned char hdr[WAL_FRAME_HDR];
    unsigned char *frame; /* header + page, sent in one write */
    size_t frame_cap;
} wal_file_t;

static sqlite3_vfs *wal_real; /* the default VFS */
static sqlite3_vfs wal_vfs;   /* "jobscope-writer": wal_real with our xOpen */
static sqlite3_io_methods wal_io;
static int wal_vfs_rc = SQLITE_ERROR;
static pthread_once_t wal_vfs_once = PTHREAD_ONCE_INIT;

#define WAL_REAL_OFFSET ((sizeof(wal_file_t) + 7) & ~(size_t)7)

/* wal_flush: send a held frame header alone. SQLITE_OK or the write's error. */
static int wal_flush(wal_file_t *f)
{
    if (!f->held)
        return SQLITE_OK;
    f->held = false;
    return f->real->pMethods->xWrite(f->real, f->hdr, WAL_FRAME_HDR, f->hdr_off);
}

#define WAL_FLUSHED(f)                                                                                       \
    do {                                                                                                     \
        int rc_ = wal_flush(f);                                                                              \
        if (rc_ != SQLITE_OK)                                                                                \
            return rc_;                                                                                      \
    } while (0)

static int wal_close(sqlite3_file *p)
{
    wal_file_t *f = (wal_file_t *)p;
    int rc = wal_flush(f);
    int rc2 = f->real->pMethods->xClose(f->real);
    free(f->frame);
    f->frame = NULL;
    return rc != SQLITE_OK ? rc : rc2;
}

static int wal_read(sqlite3_file *p, void *buf, int amt, sqlite3_int64 off)
{
    wal_file_t *f = (wal_file_t *)p;
    WAL_FLUSHED(f);
    return f->real->pMethods->xRead(f->real, buf, amt, off);
}

static int wal_write(sqlite3_file *p, const void *buf, int amt, sqlite3_int64 off)
{
    wal_file_t *f = (wal_file_t *)p;
    if (!f->wal)
        return f->real->pMethods->xWrite(f->real, buf, amt, off);
    int rc;
    if (f->held && off == f->hdr_off + WAL_FRAME_HDR && amt > 0) {
        size_t need = WAL_FRAME_HDR + (size_t)amt;
        if (need > f->frame_cap) {
            unsigned char *nb = realloc(f->frame, need);
            if (!nb)
                return wal_flush(f) != SQLITE_OK ? SQLITE_IOERR_WRITE
                                                 : f->real->pMethods->xWrite(f->real, buf, amt, off);
            f->frame = nb;
            f->frame_cap = need;
        }
        memcpy(f->frame, f->hdr, WAL_FRAME_HDR);
        memcpy(f->frame + WAL_FRAME_HDR, buf, (size_t)amt);
        f->held = false;
        rc = f->real->pMethods->xWrite(f->real, f->frame, (int)need, f->hdr_off);
    } else {
        WAL_FLUSHED(f);
        /* a frame header appended after the WAL's header or the last frame: hold it for its page (a header
         * rewritten in place, as SQLite does to fix checksums, goes at once) */
        if (amt == WAL_FRAME_HDR && off >= WAL_FILE_HDR && off == f->next_off) {
            memcpy(f->hdr, buf, WAL_FRAME_HDR);
            f->hdr_off = off;
            f->held = true;
            return SQLITE_OK;
        }
        rc = f->real->pMethods->xWrite(f->real, buf, amt, off);
    }
    f->next_off = rc == SQLITE_OK ? off + amt : -1;
    return rc;
}

static int wal_truncate(sqlite3_file *p, sqlite3_int64 size)
{
    wal_file_t *f = (wal_file_t *)p;
    WAL_FLUSHED(f);
    f->next_off = -1;
    return f->real->pMethods->xTruncate(f->real, size);
}

static int wal_sync(sqlite3_file *p, int flags)
{
    wal_file_t *f = (wal_file_t *)p;
    WAL_FLUSHED(f);
    return f->real->pMethods->xSync(f->real, flags);
}

static int wal_file_size(sqlite3_file *p, sqlite3_int64 *size)
{
    wal_file_t *f = (wal_file_t *)p;
    WAL_FLUSHED(f);
    return f->real->pMethods->xFileSize(f->real, size);
}

static int wal_lock(sqlite3_file *p, int lock)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->xLock(f->real, lock);
}

static int wal_unlock(sqlite3_file *p, int lock)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->xUnlock(f->real, lock);
}

static int wal_check_reserved(sqlite3_file *p, int *out)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int wal_file_control(sqlite3_file *p, int op, void *arg)
{
    wal_file_t *f = (wal_file_t *)p;
    WAL_FLUSHED(f);
    return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int wal_sector_size(sqlite3_file *p)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->xSectorSize(f->real);
}

static int wal_device_chars(sqlite3_file *p)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int wal_shm_map(sqlite3_file *p, int page, int size, int extend, void volatile **out)
{
    wal_file_t *f = (wal_file_t *)p;
    if (f->real->pMethods->iVersion < 2)
        return SQLITE_IOERR;
    return f->real->pMethods->xShmMap(f->real, page, size, extend, out);
}

static int wal_shm_lock(sqlite3_file *p, int off, int n, int flags)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->iVersion < 2 ? SQLITE_IOERR
                                           : f->real->pMethods->xShmLock(f->real, off, n, flags);
}

static void wal_shm_barrier(sqlite3_file *p)
{
    wal_file_t *f = (wal_file_t *)p;
    if (f->real->pMethods->iVersion >= 2)
        f->real->pMethods->xShmBarrier(f->real);
}

static int wal_shm_unmap(sqlite3_file *p, int del)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->iVersion < 2 ? SQLITE_OK : f->real->pMethods->xShmUnmap(f->real, del);
}

static int wal_fetch(sqlite3_file *p, sqlite3_int64 off, int amt, void **out)
{
    wal_file_t *f = (wal_file_t *)p;
    *out = NULL;
    if (f->real->pMethods->iVersion < 3)
        return SQLITE_OK;
    WAL_FLUSHED(f);
    return f->real->pMethods->xFetch(f->real, off, amt, out);
}

static int wal_unfetch(sqlite3_file *p, sqlite3_int64 off, void *page)
{
    wal_file_t *f = (wal_file_t *)p;
    return f->real->pMethods->iVersion < 3 ? SQLITE_OK : f->real->pMethods->xUnfetch(f->real, off, page);
}

static int wal_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *p, int flags, int *out_flags)
{
    (void)vfs;
    wal_file_t *f = (wal_file_t *)p;
    memset(f, 0, sizeof(*f));
    f->real = (sqlite3_file *)((char *)p + WAL_REAL_OFFSET);
    f->wal = (flags & SQLITE_OPEN_WAL) != 0;
    f->next_off = -1;
    int rc = wal_real->xOpen(wal_real, name, f->real, flags, out_flags);
    if (f->real->pMethods)
        f->base.pMethods = &wal_io;
    return rc;
}

static void wal_vfs_register(void)
{
    wal_real = sqlite3_vfs_find(NULL);
    if (!wal_real)
        return;
    wal_vfs = *wal_real; /* every other method is the default VFS's own, with its pAppData */
    wal_vfs.zName = "jobscope-writer";
    wal_vfs.szOsFile = (int)(WAL_REAL_OFFSET + (size_t)wal_real->szOsFile);
    wal_vfs.xOpen = wal_open;
    wal_vfs.pNext = NULL;
    wal_io = (sqlite3_io_methods){
        .iVersion = 3,
        .xClose = wal_close,
        .xRead = wal_read,
        .xWrite = wal_write,
        .xTruncate = wal_truncate,
        .xSync = wal_sync,
        .xFileSize = wal_file_size,
        .xLock = wal_lock,
        .xUnlock = wal_unlock,
        .xCheckReservedLock = wal_check_reserved,
        .xFileControl = wal_file_control,
        .xSectorSize = wal_sector_size,
        .xDeviceCharacteristics = wal_device_chars,
        .xShmMap = wal_shm_map,
        .xShmLock = wal_shm_lock,
        .xShmBarrier = wal_shm_barrier,
        .xShmUnmap = wal_shm_unmap,
        .xFetch = wal_fetch,
        .xUnfetch = wal_unfetch,
    };
    wal_vfs_rc = sqlite3_vfs_register(&wal_vfs, 0);
}

/* writer_vfs: the name of the writer's VFS, or NULL (the default VFS) when it could not be registered. */
static const char *writer_vfs(void)
{
    pthread_once(&wal_vfs_once, wal_vfs_register);
    return wal_vfs_rc == SQLITE_OK ? wal_vfs.zName : NULL;
}

/* side_path: `path` + suffix ("-wal", "-shm", "-journal") into buf. 0, or -ENAMETOOLONG when it does not fit
 * (never a cut name: a cut name could be an unrelated file). */
static int side_path(char *buf, size_t cap, const char *path, const char *suffix)
{
    int n = snprintf(buf, cap, "%s%s", path, suffix);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int recorder_open(const char *path, bool overwrite, js_recorder_t **ret, char *err, size_t errlen)
{
    if (sysio_faults_from_env() == 0) /* test-only fault injection (src/sys/sysio.h): nothing when unset */
        sqlio_install();
    static const char *const sides[] = {"-wal", "-shm", "-journal"};
    char side[PATH_MAX];
    for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
        if (side_path(side, sizeof(side), path, sides[i]) < 0) {
            snprintf(err, errlen, "%.200s...: path too long", path);
            return -ENAMETOOLONG;
        }
    }
    struct stat s;
    if (lstat(path, &s) == 0) {
        if (!overwrite) {
            snprintf(err, errlen, "%s: already exists (choose another -o, or --force to replace it)", path);
            return -EEXIST;
        }
        if (!S_ISREG(s.st_mode)) {
            snprintf(err, errlen, "%s: %s", path,
                     S_ISLNK(s.st_mode) ? "is a symbolic link; jobscope does not "
                                          "write through links"
                                        : "not a regular file");
            return -EINVAL;
        }
        unlink(path);
    }
    if (overwrite) /* side files of the replaced recording would be taken for this one's */
        for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++)
            if (side_path(side, sizeof(side), path, sides[i]) == 0)
                unlink(side);
    /* create the file ourselves first so a bad directory gives a plain errno message */
    int fd = fs_create(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0) {
        int e = -fd;
        snprintf(err, errlen, "%s: %s", path,
                 e == EEXIST ? "already exists (created meanwhile)" : strerror(e));
        return -e;
    }
    close(fd);
    js_recorder_t *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->tables = registry_tables();
    while (w->tables[w->ntables])
        w->ntables++;
    w->ins = calloc(w->ntables * JS_INS_SLOTS, sizeof(*w->ins));
    int r = -EIO;
    if (!w->ins)
        goto fail;
    int rc = sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, writer_vfs());
    if (rc != SQLITE_OK) {
        r = sql_errno(rc);
        goto fail;
    }
    w->max_vars = sqlite3_limit(w->db, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
    /* A sample writes one WAL frame per table it has rows in (about 12 at one process); SQLite's default
     * checkpoint every 1000 frames (~80 samples) copied the same few growing leaf pages back again and again
     * and paid two fdatasync() each time. Every 8192 frames (a WAL of up to 32 MiB while running; the close
     * still truncates it) makes that a few times rarer: -25 us per sample at N = 1 (bench: 515 -> 489 us). */
    if ((r = exec(w->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA page_size=4096;"
                         " PRAGMA wal_autocheckpoint=8192;")) < 0)
        goto fail;
    if ((r = exec(w->db, "BEGIN")) < 0 || (r = create_schema(w)) < 0 || (r = exec(w->db, "COMMIT")) < 0)
        goto fail;
    if (sqlite3_prepare_v3(w->db, "INSERT OR REPLACE INTO meta VALUES (?,?)", -1, SQLITE_PREPARE_PERSISTENT,
                           &w->meta, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "BEGIN", -1, SQLITE_PREPARE_PERSISTENT, &w->begin, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "COMMIT", -1, SQLITE_PREPARE_PERSISTENT, &w->commit, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "ROLLBACK", -1, SQLITE_PREPARE_PERSISTENT, &w->rollback, NULL) !=
            SQLITE_OK) {
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

static void insert_prepare(js_recorder_t *w, size_t i, int k, sqlite3_stmt **slot);

/* insert_stmt: the prepared statement inserting slot_rows(k) rows into table i (prepared now if it is the
 * first use), or NULL when it cannot be prepared. */
static sqlite3_stmt *insert_stmt(js_recorder_t *w, size_t i, int k)
{
    sqlite3_stmt **slot = &w->ins[i * JS_INS_SLOTS + (size_t)k];
    if (*slot == NULL)
        insert_prepare(w, i, k, slot);
    return *slot;
}

/* insert_prepare: prepare the statement inserting slot_rows(k) rows into table i into *slot (NULL when it
 * cannot be prepared). */
static void insert_prepare(js_recorder_t *w, size_t i, int k, sqlite3_stmt **slot)
{
    const js_table_t *t = w->tables[i];
    js_buf_t sql = {0};
    int e = buf_printf(&sql, "INSERT INTO %s VALUES ", t->name);
    for (int row = 0; row < slot_rows(k); row++) {
        e |= buf_append(&sql, row ? ",(?" : "(?", row ? 3 : 2);
        for (size_t c = 0; c < t->ncols; c++)
            e |= buf_append(&sql, ",?", 2);
        e |= buf_append(&sql, ")", 1);
    }
    if (!e && sqlite3_prepare_v3(w->db, sql.p, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) != SQLITE_OK)
        *slot = NULL;
    buf_free(&sql);
}

/* bind_row: row `v` of `rows` as the parameters from `first` on (sample number, then the columns). */
static void bind_row(sqlite3_stmt *st, int first, int64_t seq, const js_rows_t *rows, const js_value_t *v)
{
    const js_table_t *t = rows->table;
    sqlite3_bind_int64(st, first, seq);
    for (size_t c = 0; c < t->ncols; c++) {
        int col = first + 1 + (int)c;
        if (!v[c].present)
            sqlite3_bind_null(st, col);
        else if (t->cols[c].type == JS_INT)
            sqlite3_bind_int64(st, col, v[c].i);
        else if (t->cols[c].type == JS_REAL)
            sqlite3_bind_double(st, col, v[c].d);
        else
            sqlite3_bind_text(st, col, rows_str(rows, &v[c]), -1, SQLITE_STATIC);
    }
}

/* insert_rows: every row of table i, in order, with as few statements as the chunk sizes allow. */
static int insert_rows(js_recorder_t *w, size_t i, int64_t seq, const js_rows_t *rows)
{
    const int per_row = (int)rows->table->ncols + 1;
    size_t k = 0;
    while (k < rows->nrows) {
        size_t left = rows->nrows - k;
        int c = left <= 16 ? (int)left - 1 : left >= 64 ? 17 : left >= 32 ? 16 : 15; /* never past the end */
        while (c > 0 && per_row * slot_rows(c) > w->max_vars)
            c--;
        sqlite3_stmt *st = insert_stmt(w, i, c);
        if (!st)
            return -EIO;
        for (int row = 0; row < slot_rows(c); row++)
            bind_row(st, 1 + row * per_row, seq, rows, rows_row(rows, k + (size_t)row));
        int r = step_once(st);
        if (r < 0)
            return r;
        k += (size_t)slot_rows(c);
    }
    return 0;
}

int recorder_write(js_recorder_t *w, int64_t seq, const js_sample_t *s)
{
    int r = step_once(w->begin);
    if (r < 0)
        return r;
    for (size_t i = 0; i < s->ntables && r == 0; i++)
        if (s->rows[i].nrows)
            r = insert_rows(w, i, seq, &s->rows[i]);
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
    for (size_t i = 0; w->ins && i < w->ntables * JS_INS_SLOTS; i++)
        sqlite3_finalize(w->ins[i]);
    sqlite3_finalize(w->meta);
    sqlite3_finalize(w->begin);
    sqlite3_finalize(w->commit);
    sqlite3_finalize(w->rollback);
    if (w->db) {
        /* a closed recording is one file: back to a rollback journal, which removes -wal and -shm, so it
         * can be copied alone and read from a read-only place */
        int nlog = -1, nckpt = -1;
        int rc = sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &nlog, &nckpt);
        /* only once every frame is in the main file: a checkpoint that failed (a full disk) leaves the
         * samples in -wal, where they stay readable */
        if (rc == SQLITE_OK && nlog == nckpt)
            sqlite3_exec(w->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
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
    bool absent; /* the recording has no such table */
} tab_reader_t;

struct js_recording {
    sqlite3 *db;
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
    snprintf(q, sizeof(q), "SELECT name FROM pragma_table_info('%s')", t->name); /* our own short names */
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
    else if ((e |= buf_printf(&sql, " FROM %s ORDER BY rowid", t->name)))
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
    bool ok = true;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0),
                   *type = (const char *)sqlite3_column_text(st, 1);
        bool ours = name && (!strcmp(name, "meta") || !strcmp(name, "columns") || !strcmp(name, "nodes") ||
                             !strcmp(name, "node_meta"));
        for (size_t i = 0; name && !ours && all[i]; i++)
            ours = !strcmp(name, all[i]->name);
        if (ours) {
            char m[200];
            snprintf(m, sizeof(m), "not a jobscope recording (%.64s is a %.16s, not a table)", name,
                     type ? type : "?");
            set_err(err, errlen, path, m);
            ok = false;
        }
    }
    sqlite3_finalize(st);
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
        int type = sqlite3_column_type(tr->st, k + 1);
        if (type == SQLITE_NULL)
            continue;
        const js_column_t *col = &rows->table->cols[c];
        switch (col->type) {
        case JS_INT: {
            int64_t x = sqlite3_column_int64(tr->st, k + 1);
            /* a time or duration (a gauge in ns) no clock gives, from an edited file: missing, so that no
             * difference of two of them can overflow (every one is in [0, 2^62]) */
            if (col->kind == JS_GAUGE && !strcmp(col->unit, "ns") && (x < 0 || x > ((int64_t)1 << 62)))
                break;
            val_int(&v[c], x);
            break;
        }
        case JS_REAL: {
            double x = sqlite3_column_double(tr->st, k + 1);
            if (isfinite(x)) /* SQLite stores no NaN; an infinity is no measurement */
                val_real(&v[c], x);
            break;
        }
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
