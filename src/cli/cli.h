/* SPDX-License-Identifier: MIT
 *
 * Shared pieces of the command-line interface: the subcommand entry points, one-line error reporting, and
 * reading a recording's metadata into the model's configuration. The CLI is the only part of jobscope that
 * prints above debug level or exits.
 */
#ifndef JOBSCOPE_CLI_H
#define JOBSCOPE_CLI_H

#include "core/sink.h"
#include "model/model.h"
#include "model/summary.h"
#include "sinks/recording.h"
#include "sys/outfile.h"

#include <stdio.h>
#include <sys/types.h>

/* Exit codes of jobscope's own failures (run/attach otherwise exit with the command's status). */
#define EXIT_USAGE 2
#define EXIT_FAIL 1

int cmd_run(int argc, char **argv); /* also "attach" and "watch" (argv[0] tells) */
int cmd_summary(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_perfmon(int argc, char **argv);

/* The terminal status line (status.c), a live sink: state is a js_status_t. */
typedef struct {
    int64_t start_mono_ns;
    bool on;
    bool title; /* in the terminal's title bar (run: never mixed into the command's output), else a line */
    bool shown;
} js_status_t;
extern const js_live_sink_t sink_status;

/* cli_error: print "jobscope: <message>" as one line on stderr (newlines in arguments are escaped). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* cli_usage_error: cli_error plus a hint to --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Output files. Every file jobscope creates is created like the recording: never through a symbolic link
 * (O_NOFOLLOW), never over an existing file unless --force (O_EXCL), never over a file that is an input
 * or another output of the same command; and written under a temporary name beside it, published by a
 * rename only when complete (sys/outfile.h): a full disk or a failure leaves no truncated file. */
typedef struct {
    dev_t dev;
    ino_t ino;
} js_file_id_t;

/* cli_file_id: the identity of the existing file `path` (a symlink is followed: an input's identity). */
int cli_file_id(const char *path, js_file_id_t *ret);

/* cli_output_begin: start writing output `path` (outfile_open: o->fd is the temporary's descriptor, or with
 * `private_dir` o->tmp is the name a library creates), refusing an existing `path` that is one of the `n`
 * files in `avoid` (the inputs), or that exists without `force`. Returns 0, or -errno after one line
 * ("jobscope: PATH: ..."); *o is then closed. */
int cli_output_begin(js_outfile_t *o, const char *path, bool force, bool private_dir,
                     const js_file_id_t *avoid, size_t n);

/* cli_output_end: publish the output when rc is 0 (outfile_commit; a failure is one line, "cannot write
 * PATH: ...", and the temporary is removed), else remove the temporary. Returns rc, or EXIT_FAIL when
 * publishing failed. */
int cli_output_end(js_outfile_t *o, int rc);

/* cli_output_same: whether `a` and `b` name the same file (the same directory and the same last component),
 * existing or not. */
bool cli_output_same(const char *a, const char *b);

/* cli_write_all: write `len` bytes to `fd`. 0 or -errno. */
int cli_write_all(int fd, const char *p, size_t len);

/* cli_environ_of: the environment of process `pid` (<procfs>/PID/environ, read into `buf`) as a
 * NULL-terminated array (malloc'ed, caller frees; strings point into `buf`); NULL when unreadable. */
char **cli_environ_of(const js_fsroot_t *root, pid_t pid, js_buf_t *buf);

/* cli_model_cfg: the model configuration recorded in `r`'s metadata. */
void cli_model_cfg(const js_recording_t *r, js_model_cfg_t *ret);

/* cli_run_info: the summary's run facts from `r`'s metadata (strings borrowed from r). */
void cli_run_info(const js_recording_t *r, const char *path, js_run_info_t *ret);

/* cli_summarize: the run facts and the summary of a recording fed to `m`; an unfinished recording (in
 * progress, or its monitor was killed) is said so and has no exact figure. */
void cli_summarize(const js_recording_t *r, const char *path, const js_model_t *m, js_run_info_t *info,
                   js_summary_t *su);

/* cli_read_recording: open `path` and feed every sample to a new model (*ret_model, caller frees); per sample
 * `each` (may be NULL) is called after the feed. `flags`: REPLAY_PROCS, REPLAY_RECOMPUTE (api/replay.h; 0:
 * the stored aggregates where the recording has them). On failure prints one line and returns EXIT_FAIL;
 * else 0 and *ret_rec is open (caller closes). */
typedef int (*cli_each_fn)(void *arg, const js_recording_t *r, js_model_t *m, const js_sample_t *s);
extern unsigned
    cli_replay_flags; /* added to every cli_read_recording's flags: --recompute sets REPLAY_RECOMPUTE */
int cli_read_recording(const char *path, unsigned flags, js_recording_t **ret_rec, js_model_t **ret_model,
                       cli_each_fn each, void *arg);

/* cli_summary_text: the text summary of the recording at `path` (what `jobscope summary PATH` prints: a
 * merged job's nodes and job, or one run's), as a string (malloc'ed, caller frees); NULL when it cannot be
 * made (a message was printed). */
char *cli_summary_text(const char *path);

/* cli_report_fd: read the recording at `recording` and write its report page to `fd` (`out` names it in
 * messages). Returns 0, or EXIT_FAIL after printing one line. */
int cli_report_fd(const char *recording, int fd, const char *out);

#endif
