/* SPDX-License-Identifier: MIT
 *
 * Node recordings of one batch job merged into one job recording (docs/FORMAT.md, "Merged recordings"): every
 * node keeps its own rows and timestamps, each row tagged with its node's name (a `node` column in every
 * sample table), and two tables describe the nodes: `nodes` (one row per node: name, host, sample count, its
 * first and last sample, the clock offset estimated from the job's start on each node and its bound) and
 * `node_meta` (every node's metadata, key by key). The merged file's own metadata says `merged = 1` and
 * takes the job's facts. The per-sample write path (sqlite.c) is not involved: a merge copies tables with SQL.
 */
#ifndef JOBSCOPE_MERGE_H
#define JOBSCOPE_MERGE_H

#include <stdbool.h>
#include <stddef.h>

/* merge_recordings: merge the `n` node recordings `in` into a new file `out` (which must not exist, or be
 * empty: the automatic merge claims it first). Refused: fewer than one input, the same file twice (by device
 * and inode), an input that is already a merged recording, two inputs of different jobs, two of the same
 * node, an input that is not a complete jobscope recording (truncated, corrupt, still being written). On
 * failure `out` is removed and `err` holds one line. Returns 0 or -errno. */
int merge_recordings(const char *out, const char *const *in, size_t n, char *err, size_t errlen);

/* recording_is_merged: whether the recording file at `path` is a merged one (meta merged = 1). */
bool recording_is_merged(const char *path);

#endif
