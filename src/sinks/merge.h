/* SPDX-License-Identifier: MIT
 *
 * Node recordings of one batch job merged into one job recording (docs/FORMAT.md, "Merged recordings"): every
 * node keeps its own rows and timestamps, each row tagged with its node's name (a `node` column after
 * `sample` in every sample table), and two tables describe the nodes: `nodes` (one row per node: name, host,
 * its file, sample count, start and stop, the clock offset estimated from the job's start on each node and
 * its bound) and `node_meta` (every node's metadata, key by key). The merged file's own metadata says `merged
 * = 1` and carries the job's facts. The per-sample write path (sqlite.c) is not involved: a merge copies
 * tables with SQL, and a node is read back by extracting it into a recording of its own.
 */
#ifndef JOBSCOPE_MERGE_H
#define JOBSCOPE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* merge_recordings flags: MERGE_PARTIAL takes an incomplete node recording (its monitor still writing it,
 * or killed) up to its last sample, from a private snapshot of it, flagged in `nodes.complete` = 0 and
 * counted in the merged meta `merged_incomplete_nodes`. */
#define MERGE_PARTIAL 1u

/* merge_recordings: merge the `n` node recordings `in` into a new file `out` (which must not exist).
 * Refused with a one-line reason: no input, the same file twice (by device and inode, the output included),
 * an input that is already a merged recording, inputs of different jobs, two inputs of the same node, an
 * input that is not a jobscope recording (truncated, corrupt) and, without MERGE_PARTIAL, an incomplete one
 * (said so: "incomplete recording ..."). The output appears whole or not at all (written in a private
 * directory beside it, sys/outfile.h, then renamed into place; the temporaries of a merge killed earlier are
 * removed first). Returns 0 or -errno with `err` set. */
int merge_recordings(const char *out, const char *const *in, size_t n, unsigned flags, char *err,
                     size_t errlen);

/* merge_is_merged: whether the file at `path` is a merged recording (an SQLite file whose meta says
 * merged = 1). False for anything else, unreadable included. */
bool merge_is_merged(const char *path);

/* One node of a merged recording (the nodes table). */
typedef struct {
    char name[128];
    char host[256];
    int64_t samples;
    int64_t start_unix_ns, stop_unix_ns;
    int64_t clock_offset_ns, clock_offset_bound_ns;
    bool complete; /* false: merged with MERGE_PARTIAL from an incomplete recording */
} merge_node_t;

/* merge_nodes: the nodes of merged recording `path`, in name order, into a new array (*ret, caller frees) of
 * *ret_n. Returns 0 or -errno with `err` set. */
int merge_nodes(const char *path, merge_node_t **ret, size_t *ret_n, char *err, size_t errlen);

/* merge_extract: write node `node` of merged recording `path` as an ordinary recording to the new file
 * `out` (its tables without the node column, its own metadata), which every reader opens. Returns 0 or
 * -errno with `err` set (the partial `out` removed). */
int merge_extract(const char *path, const char *node, const char *out, char *err, size_t errlen);

#endif
