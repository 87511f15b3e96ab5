/* SPDX-License-Identifier: MIT
 *
 * jobscope's entry point: dispatches to the subcommands and prints the top-level help and version.
 */
#include "cli/cli.h"
#include "config.h"
#include "sys/sysio.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: jobscope COMMAND [OPTIONS] ...\n"
    "\n"
    "Monitor what a job uses (CPU, memory, I/O, processes) over time and in total, with exact totals.\n"
    "\n"
    "Commands:\n"
    "  run [OPTIONS] [--] COMMAND [ARG...]   run COMMAND and monitor its whole process tree\n"
    "  attach [OPTIONS] PID                  monitor an existing process and its descendants\n"
    "  watch (--user U|--cgroup P|--node) [OPTIONS]\n"
    "                                        monitor a user's processes, a cgroup or the whole node\n"
    "  job [-d DIR] [OPTIONS]                monitor this node's share of the batch job it runs in (SLURM,\n"
    "                                        PBS, OAR): DIR/JOBID-NODE.db, merged at the job's end\n"
    "  perfmon [-i S] [-r] [-e FMT...] [...] SKA SDP perfmon's command line and files on the job monitor\n"
    "  merge -o OUT FILES...                 combine a job's node recordings into one job recording\n"
    "  summary [--json] RECORDING            print the summary of a recording\n"
    "  export --format csv|jsonl|hdf5 [--scope VIEW] [-o FILE] RECORDING\n"
    "                                        write a recording's samples as a table (hdf5: every table)\n"
    "  report [-o FILE] [--format html|pdf|png] RECORDING\n"
    "                                        write a recording's report: one HTML page, offline, printable\n"
    "                                        (pdf, png: its charts, through librsvg)\n"
    "  compare [-o FILE] A B                 compare two recordings on one page\n"
    "  info [--json]                         print the node's hardware inventory (CPU, caches, NUMA, ...)\n"
    "  serve [--listen ADDR:PORT] [--jobs]   a node daemon serving Prometheus metrics (per SLURM job too)\n"
    "  mark begin|end|event NAME [--data JSON]\n"
    "                                        mark a phase or an event in the monitored run around this one\n"
    "  help COMMAND                          show a command's help\n"
    "\n"
    "Options:\n"
    "  -h, --help      show this help (jobscope COMMAND --help for a command's options)\n"
    "  -V, --version   show the version\n"
    "\n"
    "Recordings are SQLite files (docs/FORMAT.md); see jobscope(1).\n";

/* faults_report: with $JOBSCOPE_FAULTS (test-only fault injection, src/sys/sysio.h), one line per rule at
 * exit: the calls it saw and the faults it injected, for the tests and docs/RELIABILITY.md's figures. */
static void faults_report(void)
{
    static const char *const ops[SYSIO_OP_MAX] = {"open", "read", "write", "close"};
    int op;
    uint64_t calls, injected;
    for (size_t i = 0; sysio_faults_stats(i, &op, &calls, &injected); i++)
        fprintf(stderr, "jobscope: fault injection: rule %zu (%s): %llu faults injected in %llu calls\n",
                i + 1, ops[op], (unsigned long long)injected, (unsigned long long)calls);
}

int main(int argc, char **argv)
{
    if (getenv("JOBSCOPE_FAULTS")) {
        if (sysio_faults_from_env() < 0)
            return cli_usage_error(NULL, "malformed JOBSCOPE_FAULTS (OP:ERR:N[:COUNT[:AFTER]],...)");
        atexit(faults_report);
    }
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") && argc > 2) { /* jobscope help COMMAND = jobscope COMMAND --help */
        char *args[] = {argv[0], argv[2], "--help", NULL};
        if (strcmp(argv[2], "help") != 0)
            return main(3, args);
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("jobscope %s\n", JOBSCOPE_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "run") || !strcmp(cmd, "attach") || !strcmp(cmd, "watch") || !strcmp(cmd, "job"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "summary"))
        return cmd_summary(argc - 1, argv + 1);
    if (!strcmp(cmd, "export"))
        return cmd_export(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return cmd_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return cmd_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "merge"))
        return cmd_merge(argc - 1, argv + 1);
    if (!strcmp(cmd, "perfmon"))
        return cmd_perfmon(argc - 1, argv + 1);
    if (!strcmp(cmd, "mark"))
        return cmd_mark(argc - 1, argv + 1);
    return cli_usage_error(NULL, "unknown command '%s'", cmd);
}
