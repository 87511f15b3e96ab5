/* SPDX-License-Identifier: MIT
 *
 * The recording: one SQLite file per run (docs/FORMAT.md). The writer (recorder_*) creates one table per
 * registered js_table_t, each row prefixed by its sample number (the process rows only when they change, with
 * the model's stored aggregates beside: schema 2), and commits whole samples in WAL mode, at least every
 * second, so a killed monitor loses at most the last second and readers can follow a live run. The
 * reader (recording_*) validates the file and hands samples back as js_sample_t in sample order, mapping
 * stored columns onto the current descriptors by name (unknown columns are ignored, absent ones missing).
 */
#ifndef JOBSCOPE_RECORDING_H
#define JOBSCOPE_RECORDING_H

#include "core/sample.h"
#include "core/sink.h"
#include "sources/registry.h"

#include <stdint.h>

/* 2: proc rows only when they change (proc_changes, proc_gone, a view `proc`), the model's stored aggregates
 * (tree_totals, summary_state); 1 is still read. */
#define JS_SCHEMA_VERSION 2
#define JS_SCHEMA_VERSION_MIN 1

typedef struct js_model js_model_t;

typedef struct js_recorder js_recorder_t;
typedef struct js_recording js_recording_t;

/* recorder_open: create a new recording at `path` (must not exist unless `overwrite`). On failure returns
 * -errno (or -EIO for SQLite errors) and writes a one-line reason into err. *ret owned by the caller. */
int recorder_open(const char *path, bool overwrite, js_recorder_t **ret, char *err, size_t errlen);

/* recorder_meta: set a run metadata key (text value; NULL deletes), in the transaction of the next sample
 * written (recorder_flush or recorder_close commits it without one). Returns 0 or -EIO. */
int recorder_meta(js_recorder_t *w, const char *key, const char *value);

/* recorder_write: append sample `seq` (all tables of `s`) and commit it. Returns 0, or -ENOSPC / -EIO on
 * failure, in which case the transaction is rolled back and the recorder stays usable. */
int recorder_write(js_recorder_t *w, int64_t seq, const js_sample_t *s);

/* recorder_write_model: append sample `seq`, and with `m` (may be NULL) the model's stored aggregates: its
 * tree point (tree_totals), and at the `final` sample its summary (summary_state). Samples are committed
 * together, `batch` at a time (recorder_set_batch) and at least every second, and always at the final
 * sample. Returns 0, or the failure's negative errno: the uncommitted samples are then lost (up to one
 * commit's worth), and the next sample writes every process's row again. */
int recorder_write_model(js_recorder_t *w, int64_t seq, const js_sample_t *s, const js_model_t *m,
                         bool final);

/* recorder_set_batch: commit every `samples` samples (1, the default: each sample; 0 means 1), and at least
 * once a second whatever the count. A monitor killed with SIGKILL loses the uncommitted samples. */
void recorder_set_batch(js_recorder_t *w, unsigned samples);

/* recorder_flush: commit the samples written since the last commit (recorder_close does). Returns 0 or the
 * commit's negative errno. */
int recorder_flush(js_recorder_t *w);

/* recorder_lost: samples written and then lost: a failed write, or a failed commit and the samples it held.
 */
uint64_t recorder_lost(const js_recorder_t *w);

/* sink_recording: the recorder as the monitor's durable live sink (state: a js_recorder_t). */
extern const js_live_sink_t sink_recording;

/* recorder_close: checkpoint and close; accepts NULL. */
void recorder_close(js_recorder_t *w);

/* recording_open: open `path` read-only and check it is a jobscope recording of a known schema version.
 * Returns 0 or a negative errno with a one-line reason in err (not a database, truncated, wrong version). */
int recording_open(const char *path, js_recording_t **ret, char *err, size_t errlen);

struct sqlite3;

/* recording_harden: make the SQLite connection `db` safe for a file anyone may have written or edited (every
 * reader of recordings calls it right after opening): triggers, views and the schema's functions disabled
 * (SQLITE_DBCONFIG_ENABLE_TRIGGER, _ENABLE_VIEW, _TRUSTED_SCHEMA off), SQLITE_DBCONFIG_DEFENSIVE on, values
 * limited to 16 MiB, expressions to 100 levels. */
void recording_harden(struct sqlite3 *db);

/* recording_is_tables: whether every object of `schema` ("main", or an attached name) that jobscope reads
 * (meta, columns, nodes, node_meta, proc_changes, proc_gone, each registered table) is a table where it
 * exists; else false, with "PATH: not a jobscope recording (NAME is a view, not a table)" in err. The one
 * view allowed is schema 2's `proc` (meta schema_version 2 or more), which readers never read: they read
 * proc_changes. */
bool recording_is_tables(struct sqlite3 *db, const char *schema, char *err, size_t errlen, const char *path);

/* recording_unfinished: whether the recording at `path` is unfinished: in WAL mode with data in its -wal (its
 * monitor is still writing it, or was killed before closing it). */
bool recording_unfinished(const char *path);

/* recording_snapshot: copy the recording at `path` and its -wal into a new private directory under $TMPDIR
 * (or /tmp), so what an unfinished recording holds can be read (or attached) without touching it or its
 * directory. On success *ret_dir is the directory (recording_snapshot_remove) and *ret_db the copy. Returns
 * 0 or -errno (nothing left behind). */
int recording_snapshot(const char *path, char *ret_dir, size_t dircap, char *ret_db, size_t dbcap);

/* recording_snapshot_remove: remove a snapshot's directory and what SQLite made in it; accepts "". */
void recording_snapshot_remove(const char *dir);

/* recording_meta: the value of a metadata key, or NULL. Valid until recording_close. */
const char *recording_meta(const js_recording_t *r, const char *key);

/* recording_meta_i64 / _f64: a numeric metadata value, or `dflt` when absent or not a number. */
int64_t recording_meta_i64(const js_recording_t *r, const char *key, int64_t dflt);
double recording_meta_f64(const js_recording_t *r, const char *key, double dflt);

/* recording_meta_at: the i-th metadata key and value (i from 0, in the file's order); false past the last.
 * Valid until recording_close. */
bool recording_meta_at(const js_recording_t *r, size_t i, const char **ret_key, const char **ret_value);

/* recording_has_table: whether the recording holds table `t` (one of registry_tables()); a table it lacks (a
 * source this build has and the recorder's did not) reads as empty. */
bool recording_has_table(const js_recording_t *r, const js_table_t *t);

/* recording_next: clear `s` and fill it with the next sample; *ret_seq is its number. Schema 2 keeps a
 * process's row only when it changed: the reader rebuilds every sample's rows and lends them to `s` without a
 * copy, so `s` must be the same sample on every call (-EINVAL otherwise). Returns 1 when a sample was read, 0
 * at the end, or a negative errno (corrupt file: reason in err). */
int recording_next(js_recording_t *r, js_sample_t *s, int64_t *ret_seq, char *err, size_t errlen);

/* recording_skip: do not read table `t` (its rows stay empty in every sample): readers that need no process
 * rows skip proc and proc_info. Call before the first recording_next. */
void recording_skip(js_recording_t *r, const js_table_t *t);

/* recording_stored_state: the model's closing summary the recording kept (summary_state, schema 2), appended
 * to `out` (rows of table_summary_state). Returns 1 when there is one, 0 when not (schema 1, or a recording
 * whose closing sample was never written), or -ENOMEM / -EIO. */
int recording_stored_state(js_recording_t *r, js_rows_t *out);

/* recording_has_rows: whether table `t` (one of registry_tables()) has a row in the recording. */
bool recording_has_rows(const js_recording_t *r, const js_table_t *t);

/* recording_version: the schema version of the file (JS_SCHEMA_VERSION_MIN..JS_SCHEMA_VERSION). */
int recording_version(const js_recording_t *r);

/* recording_close: accepts NULL. */
void recording_close(js_recording_t *r);

/* recording_uri: the SQLite URI of the file `path` with `query` ("mode=ro&immutable=1"): "file:" and the path
 * with %, ? and # percent-encoded (a relative path as ./path), written into `buf` of `cap` bytes. Returns 0
 * or -ENAMETOOLONG. */
int recording_uri(char *buf, size_t cap, const char *path, const char *query);

#endif
