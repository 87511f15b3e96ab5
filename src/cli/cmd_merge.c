/* SPDX-License-Identifier: MIT
 *
 * `jobscope merge -o OUT FILES...`: a batch job's node recordings (jobscope job's DIR/JOBID-NODE.db) combined
 * into one job recording (sinks/merge.h). The automatic merge at a job's end (cmd_job.c) does the same.
 */
#include "cli/cli.h"
#include "sinks/merge.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char merge_usage[] =
    "Usage: jobscope merge -o OUT [--partial] [-q] FILE...\n"
    "\n"
    "Combine the node recordings of one batch job (jobscope job's JOBID-NODE.db files) into one job\n"
    "recording OUT: every node keeps its own rows and timestamps, tagged with its node name; the clock "
    "offsets\n"
    "between nodes are estimated from the job's start on each node and recorded with their bound. Refused: "
    "a\n"
    "file given twice, a recording that is already merged, recordings of different jobs or of one node "
    "twice,\n"
    "a damaged one, and one that is incomplete (still being written, its monitor killed) unless --partial.\n"
    "`jobscope summary OUT` then shows each node and the whole job. A job's last node to finish does this "
    "by\n"
    "itself. OUT is written beside its final name and renamed into place when complete; what a merge killed\n"
    "earlier left there (OUT.tmp.HOST.PID.*, OUT.merging.PID) is removed when its process is gone.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT   the job recording to create (must not exist)\n"
    "      --partial      also merge incomplete node recordings, up to their last sample (a snapshot of\n"
    "                     one still being written); the job's summary marks those nodes incomplete\n"
    "  -q, --quiet        no line on stderr when done\n"
    "  -h, --help         show this help\n";

int cmd_merge(int argc, char **argv)
{
    enum { OPT_PARTIAL = 256 };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"partial", no_argument, NULL, OPT_PARTIAL},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    bool quiet = false;
    unsigned flags = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case OPT_PARTIAL:
            flags |= MERGE_PARTIAL;
            break;
        case 'h':
            fputs(merge_usage, stdout);
            return 0;
        case ':':
            return cli_usage_error("merge ", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("merge ", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!out)
        return cli_usage_error("merge ", "give the job recording to create with -o OUT");
    if (optind >= argc)
        return cli_usage_error("merge ", "give the node recordings to merge");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char err[1024] = "";
    int r = merge_recordings(out, (const char *const *)(argv + optind), (size_t)(argc - optind), flags, err,
                             sizeof(err));
    if (r < 0) {
        cli_error("merge: %s", err[0] ? err : strerror(-r));
        return EXIT_FAIL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    merge_node_t *nodes = NULL;
    size_t nn = 0, incomplete = 0;
    if (!quiet && merge_nodes(out, &nodes, &nn, err, sizeof(err)) == 0)
        for (size_t i = 0; i < nn; i++)
            incomplete += !nodes[i].complete;
    free(nodes);
    char inc[64] = "";
    if (incomplete)
        snprintf(inc, sizeof(inc), " (%zu incomplete, up to their last sample)", incomplete);
    if (!quiet)
        fprintf(stderr, "jobscope: %d node recordings%s merged into %s in %.3f s\n", argc - optind, inc, out,
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
