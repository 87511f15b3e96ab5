/* SPDX-License-Identifier: MIT
 *
 * SQLite recording sink: the writer of the recording format (recording.h, docs/FORMAT.md; the reader is
 * sqlite_read.c). Tables are
 * created from the registered descriptors; the `columns` table repeats each column's unit, kind and meaning
 * so a recording is self-describing; `meta` holds run metadata and the schema version. Rows are read back in
 * rowid order, which is sample order, so no index is needed.
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
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Schema 2 keeps one table's rows only when they change (docs/FORMAT.md): the `proc` table is stored as
 * `proc_changes`, a row of a process when any of its values (or whether it has one) differs from its
 * previous row, with `proc_gone` saying when a process left (pid 0: every process known before that sample
 * left, unless it has a row there: after a failed write, every live process is written again). A view named
 * `proc` shows SQL users the full table; jobscope's reader rebuilds each sample's rows itself. */
#define DELTA_TEXT 16 /* a text value kept for the comparison (the state letter); longer: always written */

/* the last row written of one process (pidmap value; the values and texts follow it) */
typedef struct {
    int64_t start;
    uint64_t stamp; /* the sample it was last seen at (the writer's count) */
} delta_ent_t;

typedef struct {
    size_t ix;              /* the table's index in tables[] */
    int key_pid, key_start; /* its identity columns */
    js_pidmap_t last;       /* pid -> delta_ent_t, js_value_t[ncols], char[ntext][DELTA_TEXT] */
    size_t vsize;
    int *tslot;   /* per column: its text slot in an entry (JS_TEXT columns), or -1 */
    size_t nseen; /* entries of `last` stamped this sample */
    size_t ntext; /* text columns */
    uint64_t stamp;
    bool reset;    /* the next sample writes every row, after a reset marker */
    js_rows_t out; /* this sample's rows to write */
    sqlite3_stmt *gone;
    int32_t *stale;
    size_t nstale, stale_cap;
} delta_t;

/* The rows of one table held for the commit (see hold_rows). */
typedef struct {
    js_rows_t rows;
    int64_t *seq; /* each row's sample */
    size_t seqcap;
} held_t;

struct js_recorder {
    sqlite3 *db;
    size_t ntables;
    const js_table_t *const *tables;
    sqlite3_stmt **ins; /* [i * JS_INS_SLOTS + k]: slot_rows(k) rows into table i (prepared at first use) */
    int max_vars;       /* SQLITE_LIMIT_VARIABLE_NUMBER of this connection */
    sqlite3_stmt *meta;
    sqlite3_stmt *begin, *commit, *rollback; /* prepared once: no SQL parsing per sample */
    delta_t delta;
    sqlite3_stmt *colins;       /* INSERT INTO columns */
    bool *created;              /* table i is in the file */
    size_t *new_tables, nnew;   /* created by the transaction in progress */
    size_t ncat;                /* of those, the first ncat have their rows in `columns` (catalog_new) */
    size_t totals_ix, state_ix; /* the model's stored tables */
    js_rows_t mrows;            /* their rows for this sample */
    /* commits: one transaction holds up to `batch` samples and at most JS_COMMIT_MAX_NS of them */
    unsigned batch, pending;
    bool in_txn;
    uint64_t written; /* samples written (committed or not) */
    uint64_t lost;    /* samples written and then rolled back (a failed commit) */
    int64_t txn_start_ns;
    held_t *held; /* [ntables]: rows written at the commit, every table's in one statement per chunk */
};

#define JS_COMMIT_MAX_NS 1000000000LL /* a commit at least every second: what a kill -9 can lose */
#define JS_HELD_MAX 1024              /* rows of one table held before they are inserted at once */

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

static int delta_init(js_recorder_t *w);
static int create_table(js_recorder_t *w, size_t i);

/* create_delta: proc_gone, its index, and the view that shows the delta table whole: each change row holds
 * from its sample until the process's next row, its departure, or the next reset (pid 0), whichever first. */
static int create_delta(js_recorder_t *w, const js_table_t *t)
{
    js_buf_t sql = {0};
    int e = buf_printf(
        &sql,
        "CREATE TABLE proc_gone (sample INTEGER NOT NULL, pid INTEGER, start_ticks INTEGER);"
        "CREATE INDEX proc_gone_pid ON proc_gone (pid, sample);"
        "CREATE VIEW %s AS WITH spans AS (SELECT c.*, CASE WHEN c.pid IS NULL OR c.pid <= 0 OR "
        "c.start_ticks IS NULL THEN c.sample + 1 ELSE min("
        "coalesce(lead(c.sample) OVER (PARTITION BY c.pid, c.start_ticks ORDER BY c.sample), %lld), "
        "coalesce((SELECT min(g.sample) FROM proc_gone g WHERE g.pid = c.pid AND "
        "g.start_ticks = c.start_ticks AND g.sample > c.sample), %lld), "
        "coalesce((SELECT min(r.sample) FROM proc_gone r WHERE r.pid = 0 AND r.sample > c.sample), "
        "%lld)) END AS until_sample FROM %s c) SELECT s.sample AS sample",
        t->name, (long long)INT64_MAX, (long long)INT64_MAX, (long long)INT64_MAX, DELTA_STORE);
    for (size_t c = 0; c < t->ncols; c++)
        e |= buf_printf(&sql, ", spans.%s AS %s", t->cols[c].name, t->cols[c].name);
    e |= buf_printf(
        &sql, " FROM spans JOIN samples s ON s.sample >= spans.sample AND s.sample < spans.until_sample");
    int r = e ? -ENOMEM : exec(w->db, sql.p);
    buf_free(&sql);
    return r;
}

/* create_schema: meta and columns (and samples, which every reader needs), with the statement that describes
 * a table's columns when it is created (create_table). */
static int create_schema(js_recorder_t *w)
{
    int r;
    if ((r = exec(w->db,
                  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
                  "CREATE TABLE columns (table_name TEXT, column_name TEXT, unit TEXT, kind TEXT,"
                  " width INTEGER, help TEXT, PRIMARY KEY (table_name, column_name)) WITHOUT ROWID;")) < 0)
        return r;
    if (sqlite3_prepare_v3(w->db, "INSERT INTO columns VALUES (?,?,?,?,?,?)", -1, SQLITE_PREPARE_PERSISTENT,
                           &w->colins, NULL) != SQLITE_OK)
        return -EIO;
    for (size_t i = 0; i < w->ntables && r == 0; i++)
        if (strcmp(w->tables[i]->name, "samples") == 0)
            r = create_table(w, i);
    return r;
}

/* create_table: table i (CREATE TABLE; its rows in `columns` at the commit, catalog_new; the delta table's
 * departures and view), when
 * its first rows are written: a table no sample filled is not in the file (readers take it as empty), and the
 * file is made in a fraction of the time the 45 tables took. Noted in new_tables, so that a transaction
 * rolled back forgets it. */
static int create_table(js_recorder_t *w, size_t i)
{
    const js_table_t *t = w->tables[i];
    js_buf_t sql = {0};
    int r = 0;
    bool is_samples = strcmp(t->name, "samples") == 0;
    int e = buf_printf(&sql, "CREATE TABLE %s (sample INTEGER %s", storage_name(t),
                       is_samples ? "PRIMARY KEY" : "NOT NULL");
    for (size_t c = 0; c < t->ncols; c++)
        e |= buf_printf(&sql, ", %s %s", t->cols[c].name, type_names[t->cols[c].type]);
    e |= buf_append(&sql, ")", 1);
    if (e)
        r = -ENOMEM;
    if (r == 0)
        r = exec(w->db, sql.p);
    if (r == 0 && strcmp(t->name, DELTA_TABLE) == 0)
        r = create_delta(w, t);
    buf_free(&sql);
    if (r == 0) {
        w->created[i] = true;
        w->new_tables[w->nnew++] = i;
    }
    return r;
}

/* catalog_new: the rows in `columns` of the tables created since the last call, before the transaction that
 * created them commits. Written after the CREATE TABLEs rather than between them: each CREATE changes the
 * schema, and the catalog statement would be prepared again after every one. Returns 0 or -EIO. */
static int catalog_new(js_recorder_t *w)
{
    int r = 0;
    for (; w->ncat < w->nnew && r == 0; w->ncat++) {
        const js_table_t *t = w->tables[w->new_tables[w->ncat]];
        for (size_t c = 0; c < t->ncols && r == 0; c++) {
            const js_column_t *cd = &t->cols[c];
            sqlite3_bind_text(w->colins, 1, t->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(w->colins, 2, cd->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(w->colins, 3, cd->unit, -1, SQLITE_STATIC);
            sqlite3_bind_text(w->colins, 4, kind_names[cd->kind], -1, SQLITE_STATIC);
            sqlite3_bind_int(w->colins, 5, cd->width);
            sqlite3_bind_text(w->colins, 6, cd->help, -1, SQLITE_STATIC);
            if (sqlite3_step(w->colins) != SQLITE_DONE)
                r = -EIO;
            sqlite3_reset(w->colins);
        }
    }
    return r;
}

/* forget_new_tables: a rolled back transaction took the tables it created with it. */
static void forget_new_tables(js_recorder_t *w)
{
    for (size_t k = 0; k < w->nnew; k++) {
        size_t i = w->new_tables[k];
        w->created[i] = false;
        for (int s = 0; s < JS_INS_SLOTS; s++) {
            sqlite3_finalize(w->ins[i * JS_INS_SLOTS + (size_t)s]);
            w->ins[i * JS_INS_SLOTS + (size_t)s] = NULL;
        }
        if (i == w->delta.ix) {
            sqlite3_finalize(w->delta.gone);
            w->delta.gone = NULL;
        }
    }
    w->nnew = w->ncat = 0;
}

/* ---- the writer's VFS: one write per transaction's WAL frames ------------------------------------------ */

/* SQLite writes each WAL frame as two writes: its 24-byte header, then the page right after it. The writer
 * opens its recording through this thin VFS over the default one, which holds a frame header that is appended
 * at the end of what was written, joins it with the page that follows it, and holds the frames so appended
 * until the transaction's commit frame (the one whose header gives the database size, non-zero: the WAL
 * format's commit mark), which is sent with them as one write: about a dozen frames per sample, 12 -> 1
 * pwrite() per sample (12 page writes cost about 80 us of CPU here, one write of the same bytes 30 us). The
 * error of that write (a full disk) is the commit frame's, so SQLite fails and rolls back the transaction as
 * it would have. Nothing else changes: any other operation on the WAL (a read, a write elsewhere, a sync, a
 * size, a truncation, a close, a file control) sends what is held first, held frames are sent before a write
 * would pass JS_WAL_WRITE_MAX bytes (a page of at most 64 KiB and its header always fit), and SQLite
 * publishes frames in the WAL index only after the commit frame's write returned, so a reader never sees a
 * frame that is still held. The main file and every other file go straight through. */

#define WAL_FRAME_HDR 24
#define WAL_FILE_HDR 32
/* the most one write may carry: SQLite's unix VFS uses only the low 17 bits of a write's length */
#define JS_WAL_WRITE_MAX 0x1ffff

typedef struct {
    sqlite3_file base;      /* pMethods = &wal_io */
    sqlite3_file *real;     /* the default VFS's file, in the same allocation after this struct */
    bool wal;               /* this is a -wal file: coalesce */
    bool held;              /* hdr waits for the page that follows it */
    sqlite3_int64 hdr_off;  /* where hdr goes */
    sqlite3_int64 next_off; /* end of the last write (where the next frame is appended), or -1 */
    unsigned char hdr[WAL_FRAME_HDR];
    unsigned char *frame; /* whole frames (header + page) held, to be written at run_off in one write */
    size_t frame_len, frame_cap;
    sqlite3_int64 run_off; /* where frame[0] goes */
} wal_file_t;

static sqlite3_vfs *wal_real; /* the default VFS */
static sqlite3_vfs wal_vfs;   /* "jobscope-writer": wal_real with our xOpen */
static sqlite3_io_methods wal_io;
static int wal_vfs_rc = SQLITE_ERROR;
static pthread_once_t wal_vfs_once = PTHREAD_ONCE_INIT;

#define WAL_REAL_OFFSET ((sizeof(wal_file_t) + 7) & ~(size_t)7)

/* wal_send_run: write the held frames in one write and forget them (also when the write failed: SQLite then
 * fails the transaction and writes its frames again). SQLITE_OK or the write's error. */
static int wal_send_run(wal_file_t *f)
{
    if (!f->frame_len)
        return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->frame, (int)f->frame_len, f->run_off);
    f->frame_len = 0;
    if (rc != SQLITE_OK)
        f->next_off = -1;
    return rc;
}

/* wal_flush: send the held frames, then a held frame header alone. SQLITE_OK or the first write's error. */
static int wal_flush(wal_file_t *f)
{
    int rc = wal_send_run(f);
    if (!f->held)
        return rc;
    f->held = false;
    int rc2 = f->real->pMethods->xWrite(f->real, f->hdr, WAL_FRAME_HDR, f->hdr_off);
    return rc != SQLITE_OK ? rc : rc2;
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
    if (f->held && off == f->hdr_off + WAL_FRAME_HDR && amt > 0 &&
        (!f->frame_len || f->run_off + (sqlite3_int64)f->frame_len == f->hdr_off)) {
        size_t need = f->frame_len + WAL_FRAME_HDR + (size_t)amt;
        if (f->frame_len && need > JS_WAL_WRITE_MAX) { /* the frames held so far go first */
            if ((rc = wal_send_run(f)) != SQLITE_OK)
                return rc;
            need = WAL_FRAME_HDR + (size_t)amt;
        }
        /* allocated once, as large as one write may be (grown frame by frame, the heap's holes cost 300 KB of
         * RSS); this costs about 100 KB of RSS */
        if (need > f->frame_cap) {
            size_t cap = need > JS_WAL_WRITE_MAX ? need : JS_WAL_WRITE_MAX;
            unsigned char *nb = realloc(f->frame, cap);
            if (!nb)
                return wal_flush(f) != SQLITE_OK ? SQLITE_IOERR_WRITE
                                                 : f->real->pMethods->xWrite(f->real, buf, amt, off);
            f->frame = nb;
            f->frame_cap = cap;
        }
        if (!f->frame_len)
            f->run_off = f->hdr_off;
        memcpy(f->frame + f->frame_len, f->hdr, WAL_FRAME_HDR);
        memcpy(f->frame + f->frame_len + WAL_FRAME_HDR, buf, (size_t)amt);
        f->frame_len = need;
        f->held = false;
        /* bytes 4-7 of a frame header: the database size in pages after a commit, 0 in any other frame */
        bool commit = f->hdr[4] | f->hdr[5] | f->hdr[6] | f->hdr[7];
        f->next_off = off + amt;
        if (commit)
            return wal_send_run(f);
        return SQLITE_OK;
    } else {
        /* a frame header appended after the WAL's header or the last frame (held or written): hold it for its
         * page, after the frames held (a header rewritten in place, as SQLite does to fix checksums, goes at
         * once, after them) */
        if (!f->held && amt == WAL_FRAME_HDR && off >= WAL_FILE_HDR && off == f->next_off) {
            memcpy(f->hdr, buf, WAL_FRAME_HDR);
            f->hdr_off = off;
            f->held = true;
            return SQLITE_OK;
        }
        WAL_FLUSHED(f);
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
    w->created = calloc(w->ntables, sizeof(*w->created));
    w->new_tables = calloc(w->ntables, sizeof(*w->new_tables));
    w->held = calloc(w->ntables, sizeof(*w->held));
    int r = -EIO;
    if (!w->ins || !w->created || !w->new_tables || !w->held)
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
    /* The file is made without a sync (synchronous=OFF: a machine that crashes before the first sample loses
     * nothing recorded); samples are then written with synchronous=NORMAL (a commit is durable at the next
     * checkpoint, the file never corrupt). The 11 syncs of start-up and close were 2.3-2.5 ms of `run --
     * true`. */
    /* The file turns to WAL from no journal at all (journal_mode=OFF first: the file is new and holds
     * nothing; the switch from the default mode wrote its header through a rollback journal, one more file
     * created and removed); the schema is then its first WAL frames, written without a sync as before. */
    if ((r = exec(w->db, "PRAGMA synchronous=OFF; PRAGMA page_size=4096; PRAGMA journal_mode=OFF;"
                         " PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=8192;")) < 0)
        goto fail;
    if ((r = exec(w->db, "BEGIN")) < 0 || (r = create_schema(w)) < 0 || (r = catalog_new(w)) < 0 ||
        (r = exec(w->db, "COMMIT")) < 0 || (r = exec(w->db, "PRAGMA synchronous=NORMAL")) < 0)
        goto fail;
    w->nnew = w->ncat = 0;
    if (sqlite3_prepare_v3(w->db, "INSERT OR REPLACE INTO meta VALUES (?,?)", -1, SQLITE_PREPARE_PERSISTENT,
                           &w->meta, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "BEGIN", -1, SQLITE_PREPARE_PERSISTENT, &w->begin, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "COMMIT", -1, SQLITE_PREPARE_PERSISTENT, &w->commit, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(w->db, "ROLLBACK", -1, SQLITE_PREPARE_PERSISTENT, &w->rollback, NULL) !=
            SQLITE_OK) {
        r = -EIO;
        goto fail;
    }
    if ((r = delta_init(w)) < 0)
        goto fail;
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

/* delta_init: the delta table's index and identity columns, its cache, the statement for departures; the
 * model's stored tables. */
static int delta_init(js_recorder_t *w)
{
    delta_t *d = &w->delta;
    d->ix = w->totals_ix = w->state_ix = SIZE_MAX;
    w->batch = 1;
    for (size_t i = 0; i < w->ntables; i++) {
        const js_table_t *t = w->tables[i];
        if (!strcmp(t->name, DELTA_TABLE))
            d->ix = i;
        else if (t == &table_tree_totals)
            w->totals_ix = i;
        else if (t == &table_summary_state)
            w->state_ix = i;
    }
    if (d->ix == SIZE_MAX)
        return 0;
    const js_table_t *t = w->tables[d->ix];
    d->key_pid = table_column(t, "pid");
    d->key_start = table_column(t, "start_ticks");
    if (d->key_pid < 0 || d->key_start < 0) {
        d->ix = SIZE_MAX;
        return 0;
    }
    /* an entry keeps text only for the text columns (the state letter): half the bytes a process's last row
     * takes, so the comparison of 1000 processes' rows walks less memory */
    if (!(d->tslot = malloc(t->ncols * sizeof(*d->tslot))))
        return -ENOMEM;
    d->ntext = 0;
    for (size_t c = 0; c < t->ncols; c++)
        d->tslot[c] = t->cols[c].type == JS_TEXT ? (int)d->ntext++ : -1;
    d->vsize = sizeof(delta_ent_t) + t->ncols * sizeof(js_value_t) + d->ntext * DELTA_TEXT;
    pidmap_init(&d->last, d->vsize);
    rows_init(&d->out, t);
    return 0;
}

void recorder_set_batch(js_recorder_t *w, unsigned samples)
{
    w->batch = samples ? samples : 1;
}

static int txn_open(js_recorder_t *w);

int recorder_meta(js_recorder_t *w, const char *key, const char *value)
{
    /* before the first sample, in its transaction: the 40 keys of a run's start were 40 commits, each with
     * its WAL frame and a dozen lock calls; afterwards each key on its own (the end of a run's are few, and
     * one that fails must not take the others with it) */
    int r = !w->written ? txn_open(w) : w->in_txn ? recorder_flush(w) : 0;
    if (r < 0)
        return r;
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
    int e = buf_printf(&sql, "INSERT INTO %s VALUES ", storage_name(t));
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

/* bind_row: row `v` of `rows` as the parameters from `first` on (sample number `seq`, then the columns). */
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

static int insert_rows_seq(js_recorder_t *w, size_t i, int64_t seq, const int64_t *seqs,
                           const js_rows_t *rows);

/* insert_rows: every row of table i, all of sample `seq`, in order. */
static int insert_rows(js_recorder_t *w, size_t i, int64_t seq, const js_rows_t *rows)
{
    return insert_rows_seq(w, i, seq, NULL, rows);
}

/* insert_rows_seq: every row of table i, in order, with as few statements as the chunk sizes allow; row k is
 * of sample seqs[k] (of `seq` when seqs is NULL). */
static int insert_rows_seq(js_recorder_t *w, size_t i, int64_t seq, const int64_t *seqs,
                           const js_rows_t *rows)
{
    if (!w->created[i]) {
        int r = create_table(w, i);
        if (r < 0)
            return r;
    }
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
            bind_row(st, 1 + row * per_row, seqs ? seqs[k + (size_t)row] : seq, rows,
                     rows_row(rows, k + (size_t)row));
        int r = step_once(st);
        if (r < 0)
            return r;
        k += (size_t)slot_rows(c);
    }
    return 0;
}

/* ---- the delta table ---- */

static js_value_t *ent_vals(const delta_t *d, delta_ent_t *e)
{
    (void)d;
    return (js_value_t *)(e + 1);
}

/* ent_text: the kept text of text column `c` of entry `e`. */
static char *ent_text(const delta_t *d, delta_ent_t *e, size_t c, size_t ncols)
{
    return (char *)((js_value_t *)(e + 1) + ncols) + (size_t)d->tslot[c] * DELTA_TEXT;
}

/* ent_differs: whether row `v` of `rows` differs from the process's last row (a value, or whether it has
 * one; a text too long to keep always differs). */
static bool ent_differs(const delta_t *d, delta_ent_t *e, const js_rows_t *rows, const js_value_t *v)
{
    const js_table_t *t = rows->table;
    const js_value_t *last = ent_vals(d, e);
    for (size_t c = 0; c < t->ncols; c++) {
        if (v[c].present != last[c].present)
            return true;
        if (!v[c].present)
            continue;
        if (t->cols[c].type == JS_TEXT) {
            const char *a = rows_str(rows, &v[c]);
            if (strlen(a) >= DELTA_TEXT || strcmp(a, ent_text(d, e, c, t->ncols)) != 0)
                return true;
        } else if (memcmp(&v[c].i, &last[c].i, sizeof(v[c].i)) != 0) {
            return true;
        }
    }
    return false;
}

/* ent_store: make row `v` the process's last row. */
static void ent_store(const delta_t *d, delta_ent_t *e, const js_rows_t *rows, const js_value_t *v)
{
    const js_table_t *t = rows->table;
    js_value_t *last = ent_vals(d, e);
    for (size_t c = 0; c < t->ncols; c++) {
        last[c] = v[c];
        if (t->cols[c].type == JS_TEXT)
            snprintf(ent_text(d, e, c, t->ncols), DELTA_TEXT, "%s",
                     v[c].present ? rows_str(rows, &v[c]) : "");
    }
}

static int gone_row(js_recorder_t *w, int64_t seq, int32_t pid, const int64_t *start)
{
    int r;
    if (!w->created[w->delta.ix] && (r = create_table(w, w->delta.ix)) < 0)
        return r;
    if (!w->delta.gone && sqlite3_prepare_v3(w->db, "INSERT INTO proc_gone VALUES (?,?,?)", -1,
                                             SQLITE_PREPARE_PERSISTENT, &w->delta.gone, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_stmt *st = w->delta.gone;
    sqlite3_bind_int64(st, 1, seq);
    sqlite3_bind_int64(st, 2, pid);
    if (start)
        sqlite3_bind_int64(st, 3, *start);
    else
        sqlite3_bind_null(st, 3);
    r = step_once(st);
    sqlite3_clear_bindings(st);
    return r;
}

/* delta_write: the rows of this sample that differ from their process's last row, and a departure for each
 * process seen before and not now. After a failed write (d->reset) every row is written, after a reset
 * marker. */
static int delta_write(js_recorder_t *w, int64_t seq, const js_rows_t *rows)
{
    delta_t *d = &w->delta;
    int r = 0;
    d->stamp++;
    d->nseen = 0;
    rows_clear(&d->out);
    if (d->reset) {
        pidmap_free(&d->last);
        pidmap_init(&d->last, d->vsize);
        if ((r = gone_row(w, seq, 0, NULL)) < 0)
            return r;
        d->reset = false;
    }
    for (size_t i = 0; i < rows->nrows && r == 0; i++) {
        const js_value_t *v = rows_row(rows, i);
        const js_value_t *pv = &v[d->key_pid], *sv = &v[d->key_start];
        if (!pv->present || !sv->present || pv->i <= 0 || pv->i > INT32_MAX) {
            r = copy_row(&d->out, rows, v); /* no identity: written, never carried */
            continue;
        }
        int32_t pid = (int32_t)pv->i;
        delta_ent_t *e = pidmap_get(&d->last, pid);
        if (e && e->start != sv->i) { /* the PID names another process now */
            int64_t old = e->start;
            d->nseen -= e->stamp == d->stamp;
            pidmap_del(&d->last, pid);
            if ((r = gone_row(w, seq, pid, &old)) < 0)
                break;
            e = NULL;
        }
        if (!e || ent_differs(d, e, rows, v)) {
            if (!e && !(e = pidmap_put(&d->last, pid, NULL))) {
                r = -ENOMEM;
                break;
            }
            e->start = sv->i;
            ent_store(d, e, rows, v);
            r = copy_row(&d->out, rows, v);
        }
        d->nseen += e->stamp != d->stamp;
        e->stamp = d->stamp;
    }
    /* departures (collected first: deletion moves entries); none when every entry was seen, as with a steady
     * membership: no walk over the table then */
    d->nstale = 0;
    for (size_t i = 0; d->nseen != d->last.count && i < d->last.cap && r == 0; i++) {
        delta_ent_t *e;
        int32_t pid = pidmap_at(&d->last, i, (void **)&e);
        if (!pid || e->stamp == d->stamp)
            continue;
        if (d->nstale == d->stale_cap) {
            size_t cap = d->stale_cap ? d->stale_cap * 2 : 64;
            int32_t *n = realloc(d->stale, cap * sizeof(*n));
            if (!n) {
                r = -ENOMEM;
                break;
            }
            d->stale = n;
            d->stale_cap = cap;
        }
        d->stale[d->nstale++] = pid;
        r = gone_row(w, seq, pid, &e->start);
    }
    for (size_t i = 0; i < d->nstale; i++)
        pidmap_del(&d->last, d->stale[i]);
    if (r == 0 && d->out.nrows)
        r = insert_rows(w, d->ix, seq, &d->out);
    return r;
}

/* now_mono_ns: CLOCK_MONOTONIC in ns. */
static int64_t now_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- rows held for the commit ---- */

/* A transaction holds up to a second of samples (recorder_set_batch). Their rows (every table's but the delta
 * table's, whose rows are compared as they come) are held in memory and inserted just before the commit,
 * each table's rows of all those samples by one multi-row statement per chunk, not one statement per table
 * per sample: what is durable, and when, is unchanged (nothing of a transaction is in the file before its
 * commit). A table's rows are inserted early when JS_HELD_MAX of them are held. */

/* held_insert: insert the rows held of table i and forget them. 0 or a negative errno. */
static int held_insert(js_recorder_t *w, size_t i)
{
    held_t *h = &w->held[i];
    if (!h->rows.nrows)
        return 0;
    int r = insert_rows_seq(w, i, 0, h->seq, &h->rows);
    rows_clear(&h->rows);
    return r;
}

/* held_flush: insert every table's held rows (before a commit). 0 or the first negative errno. */
static int held_flush(js_recorder_t *w)
{
    int r = 0;
    for (size_t i = 0; i < w->ntables && r == 0; i++)
        r = held_insert(w, i);
    return r;
}

/* held_drop: forget every held row (the transaction is rolled back). */
static void held_drop(js_recorder_t *w)
{
    for (size_t i = 0; w->held && i < w->ntables; i++)
        rows_clear(&w->held[i].rows);
}

/* hold_rows: hold the rows of table i of sample `seq` for the commit. 0 or a negative errno. */
static int hold_rows(js_recorder_t *w, size_t i, int64_t seq, const js_rows_t *rows)
{
    held_t *h = &w->held[i];
    if (!h->rows.table)
        rows_init(&h->rows, rows->table);
    if (h->rows.nrows + rows->nrows > h->seqcap) {
        size_t cap = h->seqcap ? h->seqcap : 16;
        while (cap < h->rows.nrows + rows->nrows)
            cap *= 2;
        int64_t *n = realloc(h->seq, cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        h->seq = n;
        h->seqcap = cap;
    }
    for (size_t k = 0; k < rows->nrows; k++) {
        h->seq[h->rows.nrows] = seq;
        int r = copy_row(&h->rows, rows, rows_row(rows, k));
        if (r < 0)
            return r;
    }
    return h->rows.nrows >= JS_HELD_MAX ? held_insert(w, i) : 0;
}

/* txn_open: a transaction in progress, begun now if there is none. 0 or a negative errno. */
static int txn_open(js_recorder_t *w)
{
    if (w->in_txn)
        return 0;
    int r = step_once(w->begin);
    if (r < 0)
        return r;
    w->in_txn = true;
    w->txn_start_ns = now_mono_ns();
    w->pending = 0;
    return 0;
}

int recorder_write_model(js_recorder_t *w, int64_t seq, const js_sample_t *s, const js_model_t *m, bool final)
{
    int r = txn_open(w);
    if (r < 0)
        return r;
    /* the tables this sample fills first: a CREATE TABLE changes the schema, which makes SQLite prepare
     * again every statement prepared before it */
    for (size_t i = 0; i < s->ntables && r == 0; i++)
        if (!w->created[i] && (s->rows[i].nrows || (i == w->delta.ix && w->delta.last.count)))
            r = create_table(w, i);
    if (r == 0 && m && w->totals_ix != SIZE_MAX && !w->created[w->totals_ix])
        r = create_table(w, w->totals_ix);
    for (size_t i = 0; i < s->ntables && r == 0; i++) {
        if (i == w->delta.ix)
            r = delta_write(w, seq, &s->rows[i]);
        else if (s->rows[i].nrows)
            r = hold_rows(w, i, seq, &s->rows[i]);
    }
    /* the model's stored aggregates: the tree point, and at the closing sample its summary */
    if (r == 0 && m && w->totals_ix != SIZE_MAX) {
        rows_init(&w->mrows, &table_tree_totals);
        r = model_totals_row(m, &w->mrows);
        if (r == 0)
            r = hold_rows(w, w->totals_ix, seq, &w->mrows);
        else if (r == -ENODATA)
            r = 0;
        rows_free(&w->mrows);
    }
    if (r == 0 && m && final && w->state_ix != SIZE_MAX) {
        rows_init(&w->mrows, &table_summary_state);
        r = model_state_rows(m, &w->mrows);
        if (r == 0)
            r = hold_rows(w, w->state_ix, seq, &w->mrows);
        rows_free(&w->mrows);
    }
    /* a sample with inventory rows (the first, and where a source's facts changed) is committed at once:
     * readers look at the start of a run for what it found */
    bool urgent = false;
    for (size_t i = 0; i < s->ntables && !urgent; i++)
        urgent = s->tables[i] == &table_inventory && s->rows[i].nrows > 0;
    w->pending++;
    w->written++;
    if (r == 0 &&
        (final || urgent || w->pending >= w->batch || now_mono_ns() - w->txn_start_ns >= JS_COMMIT_MAX_NS)) {
        r = held_flush(w);
        if (r == 0)
            r = catalog_new(w);
        if (r == 0)
            r = step_once(w->commit);
        if (r == 0) {
            w->in_txn = false;
            w->nnew = w->ncat = 0;
        }
    }
    if (r < 0) {
        if (!sqlite3_get_autocommit(w->db))
            step_once(w->rollback);
        w->in_txn = false;
        w->lost += w->pending;
        held_drop(w);
        forget_new_tables(w);
        w->delta.reset = true; /* what was rolled back is not what the next sample compares with */
    }
    return r;
}

int recorder_write(js_recorder_t *w, int64_t seq, const js_sample_t *s)
{
    return recorder_write_model(w, seq, s, NULL, true);
}

int recorder_flush(js_recorder_t *w)
{
    if (!w || !w->in_txn)
        return 0;
    int r = held_flush(w);
    if (r == 0)
        r = catalog_new(w);
    if (r == 0)
        r = step_once(w->commit);
    if (r < 0) {
        if (!sqlite3_get_autocommit(w->db))
            step_once(w->rollback);
        w->lost += w->pending;
        held_drop(w);
        forget_new_tables(w);
        w->delta.reset = true;
    }
    w->nnew = w->ncat = 0;
    w->pending = 0;
    w->in_txn = false;
    return r;
}

static int recording_sink_sample(void *state, const js_sink_sample_t *ev)
{
    return recorder_write_model(state, ev->seq, ev->sample, ev->model, ev->final);
}

static int recording_sink_stop(void *state)
{
    return recorder_flush(state);
}

static uint64_t recording_sink_lost(void *state)
{
    return recorder_lost(state);
}

uint64_t recorder_lost(const js_recorder_t *w)
{
    return w->lost;
}

const js_live_sink_t sink_recording = {
    .name = "recording",
    .durable = true,
    .sample = recording_sink_sample,
    .stop = recording_sink_stop,
    .lost = recording_sink_lost,
};

void recorder_close(js_recorder_t *w)
{
    if (!w)
        return;
    recorder_flush(w);
    for (size_t i = 0; w->ins && i < w->ntables * JS_INS_SLOTS; i++)
        sqlite3_finalize(w->ins[i]);
    sqlite3_finalize(w->delta.gone);
    sqlite3_finalize(w->colins);
    if (w->delta.vsize)
        pidmap_free(&w->delta.last);
    rows_free(&w->delta.out);
    free(w->delta.stale);
    free(w->delta.tslot);
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
        /* the checkpoint synced the data; the header's two bytes (WAL -> rollback) are written in place, with
         * no sync and no journal (journal_mode=OFF: one page of a file whose content is durable; a rollback
         * journal was one more file created and removed); readers open it in their default mode */
        if (rc == SQLITE_OK && nlog == nckpt)
            sqlite3_exec(w->db, "PRAGMA synchronous=OFF; PRAGMA journal_mode=OFF", NULL, NULL, NULL);
        sqlite3_close(w->db);
    }
    for (size_t i = 0; w->held && i < w->ntables; i++) {
        rows_free(&w->held[i].rows);
        free(w->held[i].seq);
    }
    free(w->held);
    free(w->ins);
    free(w->created);
    free(w->new_tables);
    free(w);
}
