/* SPDX-License-Identifier: MIT
 *
 * `jobscope mark begin|end|event NAME [--data JSON]`: a mark from a shell script inside a monitored run. It
 * goes through libjobscope's marks client (include/jobscope.h), so it behaves like js_phase_begin: outside a
 * monitored run (no JOBSCOPE_SOCKET) it does nothing and exits 0, and it never waits for the monitor (a mark
 * that cannot be queued is dropped; the job carries on with status 0). A monitor that was announced but
 * cannot be reached (it has ended or was killed, or the socket is not this user's) is reported in one line
 * and exit status 1: the mark went nowhere, and never to anyone else. Bad usage (an unknown kind, an empty
 * or too long name, data that is not JSON) is an error in either case, so a script behaves the same with or
 * without a monitor.
 */
#include "cli/cli.h"

#include "api/api.h"
#include "core/jsoncheck.h"
#include "core/markwire.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char mark_usage[] =
    "Usage: jobscope mark begin|end NAME [--data JSON]\n"
    "       jobscope mark event NAME [--data JSON]\n"
    "\n"
    "Mark the start or end of a phase, or a point event, in the run that monitors this process (jobscope\n"
    "run exports JOBSCOPE_SOCKET to the command and its descendants). The monitor records the mark with the\n"
    "next sample and totals CPU, memory, I/O and energy per phase in the summary. Outside a monitored run\n"
    "nothing is done and the exit status is 0. Never waits for the monitor (a mark its queue cannot take is\n"
    "dropped, counted, exit status 0). Exit status 1, with one line on stderr, when the monitor that\n"
    "JOBSCOPE_SOCKET announces cannot be reached (it has ended, was killed, or the socket is not this\n"
    "user's).\n"
    "\n"
    "Options:\n"
    "  -d, --data JSON  a JSON value recorded with the mark (at most 4096 bytes, 64\n"
    "                   levels deep), e.g. '{\"step\": 10}'\n"
    "  -h, --help       show this help\n";

int cmd_mark(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *data = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":d:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data = optarg;
            break;
        case 'h':
            fputs(mark_usage, stdout);
            return 0;
        case ':':
            return cli_usage_error("mark ", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("mark ", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return cli_usage_error("mark ", argc - optind < 2 ? "missing %s" : "too many arguments%s",
                               argc - optind < 1   ? "KIND and NAME"
                               : argc - optind < 2 ? "NAME"
                                                   : "");
    const char *kind = argv[optind], *name = argv[optind + 1];
    size_t nl = strlen(name);
    if (nl == 0 || nl > JS_MARK_NAME_MAX)
        return cli_usage_error("mark ", "NAME must be 1 to %d bytes", JS_MARK_NAME_MAX);
    if (data && (strlen(data) > JS_MARK_DATA_MAX || !json_valid(data, strlen(data))))
        return cli_usage_error("mark ", "--data must be a JSON value of at most %d bytes and 64 levels",
                               JS_MARK_DATA_MAX);
    int k = strcmp(kind, "begin") == 0   ? MARKWIRE_BEGIN
            : strcmp(kind, "end") == 0   ? MARKWIRE_END
            : strcmp(kind, "event") == 0 ? MARKWIRE_EVENT
                                         : -1;
    if (k < 0)
        return cli_usage_error("mark ", "unknown kind '%s' (begin, end or event)", kind);
    if (client_mark(k, name, data) == -EPIPE) { /* announced, and out of reach: say so (dropped: silent) */
        const char *addr = getenv("JOBSCOPE_SOCKET");
        int e = client_gone_errno();
        cli_error("mark not recorded: no monitor at JOBSCOPE_SOCKET=%s (%s)", addr ? addr : "",
                  e == EPERM    ? "the socket there is another user's"
                  : e == EINVAL ? "not an absolute path"
                                : strerror(e));
        return EXIT_FAIL;
    }
    return 0;
}
