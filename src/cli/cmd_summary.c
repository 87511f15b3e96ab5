/* SPDX-License-Identifier: MIT
 *
 * `jobscope summary [--json] RECORDING`: the run summary recomputed from a recording by the same model the
 * live run uses. An unfinished recording (still being written, or its monitor was killed) is summarised up to
 * its last sample and said so.
 */
#include "cli/cli.h"
#include "cli/cli_jobsum.h"
#include "api/replay.h"

#include "core/json.h"
#include "sinks/merge.h"

#include <getopt.h>
#include <string.h>

static const char summary_usage[] =
    "Usage: jobscope summary [--json | --summary short|full] [--recompute] RECORDING\n"
    "\n"
    "Print the summary of a recording (text, or JSON with --json). Options may\n"
    "also follow RECORDING. A merged job recording (jobscope merge) shows each\n"
    "node and the job: CPU-hours, efficiency, memory against the limits, I/O,\n"
    "network, energy, GPUs, and flags (idle nodes, imbalance, memory near the\n"
    "limit, idle GPUs).\n"
    "  -j, --json              the summary as JSON (docs/FORMAT.md lists the keys)\n"
    "      --summary short|full  the text's form: short (default, the figures to read at a glance) or\n"
    "                          full (every figure); --full is the same as --summary=full\n"
    "      --recompute         recompute it from every process row instead of the totals the\n"
    "                          recording kept (as an older recording is read; the figures are the same)\n"
    "  -h, --help              show this help\n";

int cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"summary", required_argument, NULL, 's'},
        {"full", no_argument, NULL, 'F'}, {"recompute", no_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    js_summary_form_t form = JS_SUMMARY_SHORT;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == 'R')
            cli_replay_flags |= REPLAY_RECOMPUTE;
        else if (c == 'F')
            form = JS_SUMMARY_FULL;
        else if (c == 's') {
            if (summary_form_parse(optarg, &form) < 0)
                return cli_usage_error("summary ", "invalid --summary '%s' (short or full)", optarg);
        } else if (c == 'h') {
            fputs(summary_usage, stdout);
            return 0;
        } else
            return cli_usage_error("summary ", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1)
        return cli_usage_error("summary ", optind >= argc ? "missing RECORDING" : "too many arguments");
    const char *path = argv[optind];
    if (merge_is_merged(path)) /* a job's nodes merged: each node and the job */
        return cli_merged_summary(path, json, form);
    js_recording_t *r;
    js_model_t *m;
    if (cli_read_recording(path, 0, &r, &m, NULL, NULL))
        return EXIT_FAIL;
    js_summary_t su;
    js_run_info_t info;
    cli_summarize(r, path, m, &info, &su);
    js_buf_t b = {0};
    int rc = json ? summary_json(&b, &info, &su, m) : summary_text(&b, &info, &su, m, form);
    if (rc == 0)
        fputs(b.p, stdout);
    buf_free(&b);
    model_free(m);
    recording_close(r);
    if (fflush(stdout) != 0 || rc < 0) {
        cli_error("cannot write the summary");
        return EXIT_FAIL;
    }
    return 0;
}
