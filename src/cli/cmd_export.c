/* SPDX-License-Identifier: MIT
 *
 * `jobscope export`: a recording's samples as a table for pandas, SQL or spreadsheets. The model derives every
 * value; what is exported is one of its views (model/part.h): `tree` (a row per sample), `process` (a row per
 * sample and process), `system` (a row per sample), and the views of every model part. This file only puts
 * the time columns in front and hands rows to a tabular sink (CSV or JSON Lines).
 */
#include "cli/cli.h"

#include "sinks/tabsink.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char export_usage[] =
    "Usage: jobscope export --format csv|jsonl [--scope VIEW] [-o FILE] RECORDING\n"
    "\n"
    "Write a recording's samples as a table: CSV (RFC 4180; column names end in their unit:\n"
    "_bytes, _s, _per_s, _fraction) or JSON Lines. Every row starts with time (UTC), unix_s and sample.\n"
    "  -f, --format FORMAT  csv or jsonl (required)\n"
    "  -s, --scope VIEW     tree: a row per sample with the tree's sums and rates (default)\n"
    "                       process: a row per sample and process (long table)\n"
    "                       system: a row per sample with host CPU, memory, load, pressure, network, disks\n"
    "                       (jobscope export --list shows every view of this build)\n"
    "  -o, --output FILE    write to FILE instead of standard output (created like every jobscope\n"
    "                       output: not over an existing file unless --force, never through a symbolic\n"
    "                       link, never over the recording itself)\n"
    "      --force          replace FILE if it exists\n"
    "      --list           list the views and their columns, then exit\n"
    "  -h, --help           show this help\n"
    "Text cells (command names) are escaped the same way in both formats: \\\\ for a backslash, \\n, \\t,\n"
    "\\r, \\xNN for other control bytes and bytes that are not UTF-8. Options may follow RECORDING.\n";

#define NTIME 3 /* time, unix_s, sample */

typedef struct {
    const char *view;
    const js_tab_sink_t *sink;
    FILE *f;
    void *st;
    bool begun;
    const char **cols;
    js_cell_t *cells;
    size_t ncols;
} export_t;

static void fmt_time(char *buf, size_t cap, int64_t unix_ns)
{
    time_t t = (time_t)(unix_ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[32];
    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03dZ", s, (int)((unix_ns / 1000000) % 1000));
}

/* begin: the header, from the view's descriptor (once). */
static int begin(export_t *x, const js_table_t *t)
{
    if (x->begun)
        return 0;
    x->ncols = NTIME + t->ncols;
    x->cols = calloc(x->ncols, sizeof(*x->cols));
    x->cells = calloc(x->ncols, sizeof(*x->cells));
    if (!x->cols || !x->cells)
        return -ENOMEM;
    x->cols[0] = "time";
    x->cols[1] = "unix_s";
    x->cols[2] = "sample";
    for (size_t i = 0; i < t->ncols; i++)
        x->cols[NTIME + i] = t->cols[i].name;
    x->begun = true;
    return x->sink->begin(x->f, x->cols, x->ncols, &x->st);
}

static js_cell_t value_cell(const js_rows_t *r, const js_column_t *c, const js_value_t *v)
{
    if (!v->present)
        return cell_missing();
    switch (c->type) {
    case JS_INT:
        return cell_int(v->i);
    case JS_REAL:
        return isnan(v->d) ? cell_missing() : cell_real(v->d);
    default:
        return cell_text(rows_str(r, v));
    }
}

static int each(void *arg, const js_recording_t *rec, js_model_t *m, const js_sample_t *s)
{
    (void)rec;
    (void)s;
    export_t *x = arg;
    js_view_t v;
    int rc = model_view(m, x->view, &v);
    if (rc == 0)
        rc = begin(x, v.table);
    const js_tree_point_t *p = model_point(m);
    char tbuf[40];
    fmt_time(tbuf, sizeof(tbuf), p->t_unix_ns);
    for (size_t i = 0; rc == 0 && i < v.rows->nrows; i++) {
        const js_value_t *row = rows_row(v.rows, i);
        x->cells[0] = cell_text(tbuf);
        x->cells[1] = cell_real((double)p->t_unix_ns / 1e9);
        x->cells[2] = cell_int(p->seq);
        for (size_t c = 0; c < v.table->ncols; c++)
            x->cells[NTIME + c] = value_cell(v.rows, &v.table->cols[c], &row[c]);
        rc = x->sink->row(x->st, x->cells);
    }
    if (rc < 0)
        cli_error("export failed: %s", strerror(-rc));
    return rc;
}

/* view_known: whether a model of this build has a view named `name` (data-dependent columns aside). */
static bool view_known(const char *name, bool list)
{
    js_model_cfg_t cfg = {.clk_tck = 100, .interval_ns = 1000000000};
    js_model_t *m = model_new(&cfg);
    bool found = false;
    for (size_t i = 0; m; i++) {
        const js_table_t *t = model_view_table(m, i);
        if (!t)
            break;
        if (list) {
            printf("%s: %s\n", t->name, t->help);
            for (size_t c = 0; c < t->ncols; c++)
                printf("  %-28s %-9s %s\n", t->cols[c].name, t->cols[c].unit, t->cols[c].help);
            if (!t->ncols)
                printf("  (columns depend on the recording: CPUs, interfaces, disks)\n");
        }
        found |= name && strcmp(t->name, name) == 0;
    }
    model_free(m);
    return found;
}

int cmd_export(int argc, char **argv)
{
    enum { OPT_LIST = 256, OPT_FORCE };
    static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                         {"scope", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"list", no_argument, NULL, OPT_LIST},
                                         {"force", no_argument, NULL, OPT_FORCE},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    export_t x = {.view = "tree"};
    const char *out = NULL;
    bool force = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":f:s:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (!strcmp(optarg, "csv"))
                x.sink = &sink_csv;
            else if (!strcmp(optarg, "jsonl"))
                x.sink = &sink_jsonl;
            else
                return cli_usage_error("export ", "unknown format '%s' (csv or jsonl)", optarg);
            break;
        case 's':
            x.view = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case OPT_LIST:
            view_known(NULL, true);
            return 0;
        case OPT_FORCE:
            force = true;
            break;
        case 'h':
            fputs(export_usage, stdout);
            return 0;
        case ':':
            return cli_usage_error("export ", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("export ", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!x.sink)
        return cli_usage_error("export ", "missing --format (csv or jsonl)");
    if (!view_known(x.view, false))
        return cli_usage_error("export ", "unknown scope '%s' (tree, process, system; --list shows all)", x.view);
    if (optind != argc - 1)
        return cli_usage_error("export ", optind >= argc ? "missing RECORDING" : "too many arguments");
    const char *path = argv[optind];

    /* validate the recording before creating the output file */
    char err[1024];
    js_recording_t *probe;
    if (recording_open(path, &probe, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    recording_close(probe);
    x.f = stdout;
    if (out) {
        js_file_id_t in;
        int fd = cli_output_open(out, force, &in, cli_file_id(path, &in) == 0 ? 1 : 0, NULL);
        if (fd < 0)
            return EXIT_FAIL;
        if (!(x.f = fdopen(fd, "w"))) {
            cli_error("%s: %s", out, strerror(errno));
            close(fd);
            return EXIT_FAIL;
        }
    }
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    int rc = cli_read_recording(path, &r, &m, each, &x);
    if (rc == 0 && !x.begun && m) { /* a recording with no samples: still a header */
        const js_table_t *t = NULL;
        for (size_t i = 0; (t = model_view_table(m, i)) && strcmp(t->name, x.view) != 0; i++)
            ;
        rc = t ? begin(&x, t) : 0;
    }
    int e = x.begun ? x.sink->end(x.st) : 0;
    if (rc == 0 && e < 0) {
        cli_error("cannot write %s: %s", out ? out : "standard output", strerror(-e));
        rc = EXIT_FAIL;
    }
    if (out && fclose(x.f) != 0 && rc == 0) {
        cli_error("cannot write %s: %s", out, strerror(errno));
        rc = EXIT_FAIL;
    }
    model_free(m);
    recording_close(r);
    free(x.cols);
    free(x.cells);
    return rc ? EXIT_FAIL : 0;
}
