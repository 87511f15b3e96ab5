/* SPDX-License-Identifier: MIT
 *
 * The live exports a monitor can add (the /metrics endpoint and the node_exporter textfile), as options
 * shared by `run`, `attach` and `serve`: their long options and help text, their parsing, and their sinks.
 */
#ifndef JOBSCOPE_CLI_EXPORT_H
#define JOBSCOPE_CLI_EXPORT_H

#include "engine/monitor.h"
#include "sinks/http.h"
#include "sinks/prometheus.h"
#include "sinks/textfile.h"

#include <getopt.h>

enum {
    CLI_OPT_LISTEN = 1000,
    CLI_OPT_LISTEN_TOKEN,
    CLI_OPT_LISTEN_BASIC,
    CLI_OPT_LISTEN_CERT,
    CLI_OPT_LISTEN_KEY,
    CLI_OPT_LISTEN_PROCESSES,
    CLI_OPT_TEXTFILE,
};

/* The long options, to put in a command's option table before its terminator. */
#define CLI_EXPORT_LONGOPTS                                                                                  \
    {"listen", required_argument, NULL, CLI_OPT_LISTEN},                                                     \
        {"listen-auth-token", required_argument, NULL, CLI_OPT_LISTEN_TOKEN},                                \
        {"listen-basic-auth", required_argument, NULL, CLI_OPT_LISTEN_BASIC},                                \
        {"listen-tls-cert", required_argument, NULL, CLI_OPT_LISTEN_CERT},                                   \
        {"listen-tls-key", required_argument, NULL, CLI_OPT_LISTEN_KEY},                                     \
        {"listen-processes", required_argument, NULL, CLI_OPT_LISTEN_PROCESSES},                             \
    {                                                                                                        \
        "textfile", required_argument, NULL, CLI_OPT_TEXTFILE                                                \
    }

/* Their help lines, to put in a command's usage text. */
#define CLI_EXPORT_HELP                                                                                      \
    "      --listen [ADDR:]PORT serve Prometheus metrics at http://ADDR:PORT/metrics while monitoring "      \
    "(ADDR\n"                                                                                                \
    "                           127.0.0.1 unless given: an address other than loopback must be explicit)\n"  \
    "      --listen-auth-token FILE    require 'Authorization: Bearer TOKEN', TOKEN the file's first line\n" \
    "      --listen-basic-auth FILE    require HTTP basic auth, FILE of user:password lines (no empty "      \
    "one)\n"                                                                                                 \
    "      --listen-tls-cert FILE      serve HTTPS with this PEM certificate (with --listen-tls-key)\n"      \
    "      --listen-tls-key FILE       the certificate's PEM private key (unencrypted)\n"                    \
    "      --listen-processes N        also expose the N busiest processes (default 0: the scope only);\n"   \
    "                           without authentication only your own (none as root)\n"                       \
    "      --textfile FILE      keep FILE (NAME.prom, for node_exporter's textfile collector) replaced\n"    \
    "                           atomically with each sample's metrics; removed at the end\n"

typedef struct {
    const char *listen, *token_file, *basic_auth_file, *tls_cert, *tls_key, *textfile;
    unsigned top_processes;
    bool have_processes;
    /* endpoint_optional (set by the command): an endpoint that cannot start (its port taken, no library) is
     * reported and the monitoring goes on without it; listen_error then says why (else "") */
    bool endpoint_optional;
    char listen_error[1024];
    /* set by cli_export_open */
    prom_cfg_t prom;
    js_http_t *http;
    js_textfile_t *tf;
    char user[64], jobid[32], step[32];
} cli_export_t;

/* cli_export_option: take option `opt` (a CLI_OPT_* code) with `arg`. Returns 0 when taken, -1 when `opt` is
 * not an export option, or EXIT_USAGE (reported for `cmd`). */
int cli_export_option(cli_export_t *x, int opt, const char *arg, const char *cmd);

/* cli_export_open: bind the endpoint and check the textfile's folder, before anything else of the run is
 * created; the series carry host=`host`, scope=`scope`, and jobid/step/user where known (SLURM_JOB_ID,
 * SLURM_STEP_ID, the user running jobscope). `tree`: expose the scope's tree view. Without authentication
 * (--listen-auth-token, --listen-basic-auth) the per-process series (--listen-processes) are those of the
 * user running jobscope only, and none when that is root (said in one line). Options that are wrong are
 * EXIT_FAIL (reported); so is an endpoint that cannot start, unless x->endpoint_optional and the cause is
 * the machine's (the port is taken or not this host's, libmicrohttpd is missing or without TLS): then it is
 * reported in one line, kept in x->listen_error, and 0 is returned without it. */
int cli_export_open(cli_export_t *x, const char *host, const char *scope, bool tree);

/* cli_export_add: add the opened sinks to `mon` (after the recording and status; its procfs is where the
 * per-process series' owners are looked up). Returns 0 or EXIT_FAIL (reported). */
int cli_export_add(cli_export_t *x, js_monitor_t *mon);

/* cli_export_close: stop serving and remove the textfile; accepts a zeroed or unopened one. */
void cli_export_close(cli_export_t *x);

#endif
