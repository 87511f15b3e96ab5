/* SPDX-License-Identifier: MIT
 *
 * Merged job recordings in the CLI (cli_jobsum.c): the job's summary, and one node extracted for the
 * commands that read ordinary recordings.
 */
#ifndef JOBSCOPE_CLI_JOBSUM_H
#define JOBSCOPE_CLI_JOBSUM_H

#include "model/summary.h"

#include <stdbool.h>
#include <stddef.h>

/* cli_merged_summary: print the summary of merged recording `path` (text, or JSON): each node and the job,
 * with the flags. Returns 0 or EXIT_FAIL after one line. */
int cli_merged_summary(const char *path, bool json, js_summary_form_t form);

/* cli_merged_node_path: extract node `node` of merged recording `path` into a new private directory
 * (tmpdir, made here) as `out` (tmpdir/node.db); the caller unlinks out and removes tmpdir. Returns 0 or
 * EXIT_FAIL after one line. */
int cli_merged_node_path(const char *path, const char *node, char *tmpdir, size_t dircap, char *out,
                         size_t outcap);

#endif
