/* SPDX-License-Identifier: MIT
 *
 * The live exports' options and sinks (cli_export.h).
 */
#include "cli/cli_export.h"

#include "cli/cli.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int cli_export_option(cli_export_t *x, int opt, const char *arg, const char *cmd)
{
    switch (opt) {
    case CLI_OPT_LISTEN:
        x->listen = arg;
        return 0;
    case CLI_OPT_LISTEN_TOKEN:
        x->token_file = arg;
        return 0;
    case CLI_OPT_LISTEN_BASIC:
        x->basic_auth_file = arg;
        return 0;
    case CLI_OPT_LISTEN_CERT:
        x->tls_cert = arg;
        return 0;
    case CLI_OPT_LISTEN_KEY:
        x->tls_key = arg;
        return 0;
    case CLI_OPT_LISTEN_PROCESSES: {
        char *end;
        errno = 0;
        unsigned long n = strtoul(arg, &end, 10);
        if (!*arg || *end || errno || n > 100000 || arg[0] == '-')
            return cli_usage_error(cmd, "invalid --listen-processes '%s' (a whole number, 0 = none)", arg);
        x->top_processes = (unsigned)n;
        x->have_processes = true;
        return 0;
    }
    case CLI_OPT_TEXTFILE:
        x->textfile = arg;
        return 0;
    default:
        return -1;
    }
}

static void add_label(prom_cfg_t *p, const char *name, const char *value)
{
    if (value && *value && p->nlabels < PROM_LABELS_MAX)
        p->labels[p->nlabels++] = (prom_label_t){name, value};
}

int cli_export_open(cli_export_t *x, const char *host, const char *scope, bool tree)
{
    bool http_opts = x->token_file || x->basic_auth_file || x->tls_cert || x->tls_key || x->have_processes;
    if (!x->listen && http_opts) {
        cli_error("--listen-* options need --listen");
        return EXIT_USAGE;
    }
    if (!x->listen && !x->textfile)
        return 0;
    prom_cfg_t *p = &x->prom;
    memset(p, 0, sizeof(*p));
    p->tree = tree;
    p->top_processes = x->top_processes;
    add_label(p, "host", host);
    add_label(p, "scope", scope);
    bool node = strcmp(scope, "node") == 0; /* a node daemon's series are nobody's job */
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    if (!node && job && *job && strlen(job) < sizeof(x->jobid)) {
        snprintf(x->jobid, sizeof(x->jobid), "%s", job);
        add_label(p, "jobid", x->jobid);
        if (step && *step && strlen(step) < sizeof(x->step)) {
            snprintf(x->step, sizeof(x->step), "%s", step);
            add_label(p, "step", x->step);
        }
    }
    char buf[4096];
    struct passwd pw, *res = NULL;
    if (node)
        x->user[0] = '\0';
    else if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res &&
             strlen(res->pw_name) < sizeof(x->user))
        snprintf(x->user, sizeof(x->user), "%s", res->pw_name);
    else
        snprintf(x->user, sizeof(x->user), "%u", (unsigned)getuid());
    add_label(p, "user", x->user);

    char err[1024];
    int r;
    x->listen_error[0] = '\0';
    if (x->listen) {
        http_opts_t o = {x->listen, x->token_file, x->basic_auth_file, x->tls_cert, x->tls_key, p};
        if ((r = http_prepare(&o, &x->http, err, sizeof(err))) < 0) { /* what was asked for is wrong */
            cli_error("%s", err);
            return EXIT_FAIL;
        }
        if ((r = http_listen(x->http, x->listen, err, sizeof(err))) < 0) {
            http_stop(x->http);
            x->http = NULL;
            /* the port (taken, not this host's, privileged) or the library is this machine's state; a server
             * that does not start (its TLS files) is what was asked for */
            bool environment =
                r == -EADDRINUSE || r == -EADDRNOTAVAIL || r == -EACCES || r == -ENOENT || r == -ENOTSUP;
            if (!x->endpoint_optional || !environment) {
                cli_error("%s", err);
                return EXIT_FAIL;
            }
            /* the job matters more than its live view: it runs, monitored and recorded, without it */
            snprintf(x->listen_error, sizeof(x->listen_error), "%s", err);
            cli_error("--listen %s: %s: monitoring goes on without the endpoint", x->listen, err);
            x->listen = NULL;
        }
    }
    if (x->http && x->top_processes && !x->token_file && !x->basic_auth_file) {
        /* any local user can read an endpoint without authentication: other users' processes are theirs */
        if (geteuid() == 0) {
            p->top_processes = 0;
            cli_error("--listen-processes: no per-process series: any local user can read an endpoint "
                      "without --listen-auth-token or --listen-basic-auth");
        } else {
            p->own_processes_only = true;
            p->own_uid = (unsigned)geteuid();
            cli_error("--listen-processes: the processes of uid %u only: any local user can read an endpoint "
                      "without --listen-auth-token or --listen-basic-auth",
                      (unsigned)geteuid());
        }
    }
    if (x->http) {
        struct sockaddr_storage ss;
        size_t len;
        bool loopback = true;
        http_parse_listen(x->listen, &ss, &len, &loopback);
        if (!loopback && !x->token_file && !x->basic_auth_file)
            cli_error("warning: %s serves metrics beyond this host without authentication "
                      "(--listen-auth-token, --listen-basic-auth)",
                      x->listen);
        else if (!loopback && !x->tls_cert)
            cli_error("warning: %s sends credentials in clear text (--listen-tls-cert, --listen-tls-key)",
                      x->listen);
    }
    if (x->textfile && (r = textfile_open(x->textfile, p, &x->tf, err, sizeof(err))) < 0) {
        cli_error("%s", err);
        cli_export_close(x);
        return EXIT_FAIL;
    }
    return 0;
}

int cli_export_add(cli_export_t *x, js_monitor_t *mon)
{
    int r = 0;
    x->prom.proc_dirfd = mon->ctx.root.proc;
    if (x->http)
        r = monitor_add_sink(mon, &sink_http, x->http);
    if (r == 0 && x->tf)
        r = monitor_add_sink(mon, &sink_textfile, x->tf);
    if (r < 0) {
        cli_error("cannot add the metrics exports: %s", strerror(-r));
        return EXIT_FAIL;
    }
    return 0;
}

void cli_export_close(cli_export_t *x)
{
    http_stop(x->http);
    x->http = NULL;
    textfile_close(x->tf);
    x->tf = NULL;
}
