/* SPDX-License-Identifier: MIT
 *
 * The textfile sink: each sample's exposition (text format, prometheus.h) written for node_exporter's
 * textfile collector. The file is replaced atomically: written to FILE.tmp.PID beside it, then rename()d over
 * FILE, so a reader sees the previous exposition or the new one, never part of one. Writing happens on the
 * sink's own thread (latest sample wins), so a slow disk never delays sampling. When monitoring stops the
 * file is removed: node_exporter would otherwise go on exporting a finished run's last values as if they were
 * current.
 */
#ifndef JOBSCOPE_TEXTFILE_H
#define JOBSCOPE_TEXTFILE_H

#include "core/sink.h"
#include "sinks/prometheus.h"

#include <stddef.h>
#include <stdint.h>

typedef struct js_textfile js_textfile_t;

/* textfile_open: prepare writing `path` (its folder must exist and be writable; the name should end in .prom
 * for node_exporter to read it) with the exposition `prom` describes (borrowed). Starts the writer thread.
 * Returns 0 or -errno with a one-line reason in err; *ret owned by the caller (textfile_close). */
int textfile_open(const char *path, const prom_cfg_t *prom, js_textfile_t **ret, char *err, size_t errlen);

/* textfile_close: finish the pending write, stop the thread, remove the file; accepts NULL. */
void textfile_close(js_textfile_t *t);

/* textfile_writes: files written (renamed into place) so far; textfile_errors: writes that failed. */
uint64_t textfile_writes(const js_textfile_t *t);
uint64_t textfile_errors(const js_textfile_t *t);

/* sink_textfile: the writer as a live sink (state: a js_textfile_t). Its stop removes the file. */
extern const js_live_sink_t sink_textfile;

#endif
