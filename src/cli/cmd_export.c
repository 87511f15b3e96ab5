/* SPDX-License-Identifier: MIT
 *
 * `jobscope export`: a recording's samples as a table for pandas, SQL or spreadsheets. The model derives
 * every value; what is exported is one of its views (model/part.h): `tree` (a row per sample), `process` (a
 * row per sample and process), `system` (a row per sample), and the views of every model part. This file only
 * puts the time columns in front and hands rows to a tabular sink (CSV or JSON Lines). The HDF5 format is
 * different: it holds every raw table of the recording as recorded (src/sinks/hdf5.h), not a view.
 */
#include "cli/cli.h"
#include "cli/cli_jobsum.h"
#include "api/replay.h"

#include "sinks/hdf5.h"
#include "sinks/merge.h"
#include "sinks/tabsink.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static const char export_usage[] =
    "Usage: jobscope export --format csv|jsonl [--scope VIEW] [-o FILE] RECORDING\n"
    "       jobscope export --format hdf5 [-o FILE.h5] RECORDING\n"
    "\n"
    "Write a recording's samples as a table: CSV (RFC 4180; column names end in their unit:\n"
    "_bytes, _s, _per_s, _fraction) or JSON Lines. Every row starts with time (UTC), unix_s and sample.\n"
    "HDF5 holds every raw table of the recording instead: a group per table, a dataset per column (unit,\n"
    "kind and help as attributes; NaN for missing reals, a _mask dataset for integers and text), the\n"
    "metadata as attributes of the root (docs/FORMAT.md; read with h5py, or pandas as shown there).\n"
    "  -f, --format FORMAT  csv, jsonl or hdf5 (required)\n"
    "  -s, --scope VIEW     tree: a row per sample with the tree's sums and rates (default)\n"
    "                       process: a row per sample and process (long table)\n"
    "                       system: a row per sample with host CPU, memory, load, pressure, network, disks\n"
    "                       (jobscope export --list shows every view of this build)\n"
    "  -o, --output FILE    write to FILE instead of standard output (hdf5: default RECORDING with\n"
    "                       .h5); created like every jobscope output: not over an existing file unless\n"
    "                       --force, never through a symbolic link, never over the recording itself\n"
    "      --force          replace FILE if it exists\n"
    "      --list           list the views and their columns, then exit\n"
    "      --recompute      recompute every view from the process rows instead of the totals the\n"
    "                       recording kept (as an older recording is read)\n"
    "  -h, --help           show this help\n"
    "Text cells (command names) are escaped the same way in CSV and JSON Lines: \\\\ for a backslash,\n"
    "\\n, \\t, \\r, \\xNN for other control bytes and bytes that are not UTF-8. Options may follow\n"
    "RECORDING. A merged job recording (jobscope merge) gives every node's rows, with a node column after\n"
    "sample (csv and jsonl).\n";

typedef struct {
    const char *view;
    const char *node;       /* a merged recording: the node being exported (a node column), else NULL */
    size_t ntime;           /* time, unix_s, sample (and node) */
    const js_table_t *head; /* the header's view (a node's view may have other data-dependent columns) */
    const js_tab_sink_t *sink;
    FILE *f;
    void *st;
    bool begun;
    const char **cols;
    js_cell_t *cells;
    size_t ncols;
    const js_outfile_t *out; /* the output file (NULL: standard output) */
} export_t;

/* no_space: a sink or the HDF5 library reports a failed write as -EIO: when the file system of the output
 * is full, say so. */
static int no_space(const js_outfile_t *o, int e)
{
    struct statvfs sv;
    if (e == -EIO && o && o->tmp[0] && statvfs(o->dir[0] ? o->dir : o->tmp, &sv) == 0 && sv.f_bavail == 0)
        return -ENOSPC;
    return e;
}

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
    x->ntime = x->node ? 4 : 3;
    x->ncols = x->ntime + t->ncols;
    x->cols = calloc(x->ncols, sizeof(*x->cols));
    x->cells = calloc(x->ncols, sizeof(*x->cells));
    if (!x->cols || !x->cells)
        return -ENOMEM;
    x->head = t;
    x->cols[0] = "time";
    x->cols[1] = "unix_s";
    x->cols[2] = "sample";
    if (x->node)
        x->cols[3] = "node";
    for (size_t i = 0; i < t->ncols; i++)
        x->cols[x->ntime + i] = t->cols[i].name;
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
        if (x->node)
            x->cells[3] = cell_text(x->node);
        if (v.table == x->head || v.table->ncols == x->head->ncols) {
            for (size_t c = 0; c < v.table->ncols; c++)
                x->cells[x->ntime + c] = value_cell(v.rows, &v.table->cols[c], &row[c]);
        } else { /* another node's view with other columns: by name, missing where it has none */
            for (size_t c = 0; c < x->head->ncols; c++) {
                x->cells[x->ntime + c] = cell_missing();
                for (size_t k = 0; k < v.table->ncols; k++)
                    if (!strcmp(v.table->cols[k].name, x->head->cols[c].name))
                        x->cells[x->ntime + c] = value_cell(v.rows, &v.table->cols[k], &row[k]);
            }
        }
        rc = x->sink->row(x->st, x->cells);
    }
    if (rc < 0 && x->out)
        cli_error("cannot write %s: %s", x->out->path, strerror(-no_space(x->out, rc)));
    else if (rc < 0)
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

/* export_hdf5: every raw table of the recording at `path` into the HDF5 file `out`. The HDF5 library writes
 * the file in a private directory next to `out` (cli_output_begin with a private directory), so it never
 * opens a path someone else could have replaced; the file is renamed to `out` once closed and synced, and a
 * failure (a full disk) leaves nothing behind. */
static int export_hdf5(const char *path, const char *out, bool force)
{
    char err[1024];
    js_recording_t *r = NULL;
    if (recording_open(path, &r, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    js_file_id_t in;
    js_outfile_t o;
    if (cli_output_begin(&o, out, force, true, &in, cli_file_id(path, &in) == 0 ? 1 : 0) < 0) {
        recording_close(r);
        return EXIT_FAIL;
    }
    const js_table_t *const *all = registry_tables();
    const js_table_t *tables[64];
    size_t n = 0;
    for (size_t i = 0; all[i] && n < 63; i++)
        if (recording_has_table(r, all[i]))
            tables[n++] = all[i];
    tables[n] = NULL;
    js_h5_t *h = NULL;
    js_sample_t s = {0};
    int rc = EXIT_FAIL, e;
    if (hdf5_open(o.tmp, tables, &h, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        goto done;
    }
    const char *key, *value;
    for (size_t i = 0; recording_meta_at(r, i, &key, &value); i++)
        if ((e = hdf5_meta(h, key, value)) < 0) {
            cli_error("cannot write %s: %s", out, strerror(-no_space(&o, e)));
            goto done;
        }
    if (sample_init(&s) < 0) {
        cli_error("out of memory");
        goto done;
    }
    int64_t seq;
    while ((e = recording_next(r, &s, &seq, err, sizeof(err))) == 1)
        if ((e = hdf5_write_sample(h, seq, &s)) < 0) {
            cli_error("cannot write %s: %s", out, strerror(-no_space(&o, e)));
            goto done;
        }
    if (e < 0) {
        cli_error("%s: %s", path, err);
        goto done;
    }
    e = hdf5_close(h);
    h = NULL;
    if (e < 0) {
        cli_error("cannot write %s: %s", out, strerror(-no_space(&o, e)));
        goto done;
    }
    rc = 0;
done:
    hdf5_close(h);
    sample_free(&s);
    recording_close(r);
    return cli_output_end(&o, rc);
}

int cmd_export(int argc, char **argv)
{
    enum { OPT_LIST = 256, OPT_FORCE, OPT_RECOMPUTE };
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"scope", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'}, {"list", no_argument, NULL, OPT_LIST},
        {"force", no_argument, NULL, OPT_FORCE},  {"recompute", no_argument, NULL, OPT_RECOMPUTE},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    export_t x = {.view = "tree"};
    const char *out = NULL;
    bool force = false, hdf5 = false, scope = false;
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
            else if (!strcmp(optarg, "hdf5"))
                hdf5 = true;
            else
                return cli_usage_error("export ", "unknown format '%s' (csv, jsonl or hdf5)", optarg);
            break;
        case 's':
            x.view = optarg;
            scope = true;
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
        case OPT_RECOMPUTE:
            cli_replay_flags |= REPLAY_RECOMPUTE;
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
    if (hdf5) {
        if (scope)
            return cli_usage_error("export ", "--scope is for csv and jsonl: hdf5 holds every raw table");
        if (optind != argc - 1)
            return cli_usage_error("export ", optind >= argc ? "missing RECORDING" : "too many arguments");
        char lerr[1024];
        if (hdf5_load(lerr, sizeof(lerr)) < 0) { /* before any output file is created */
            cli_error("%s", lerr);
            return EXIT_FAIL;
        }
        char def[PATH_MAX];
        if (!out) {
            const char *p = argv[optind];
            size_t len = strlen(p);
            int w = len > 3 && strcmp(p + len - 3, ".db") == 0
                        ? snprintf(def, sizeof(def), "%.*s.h5", (int)(len - 3), p)
                        : snprintf(def, sizeof(def), "%s.h5", p);
            if (w < 0 || (size_t)w >= sizeof(def))
                return cli_usage_error("export ",
                                       "RECORDING's name is too long for a default output; use -o");
            out = def;
        }
        if (merge_is_merged(argv[optind])) {
            cli_error(
                "%s: a merged job recording: export it as csv or jsonl (a node column), or hdf5 from the "
                "nodes' own recordings",
                argv[optind]);
            return EXIT_FAIL;
        }
        return export_hdf5(argv[optind], out, force);
    }
    if (!x.sink)
        return cli_usage_error("export ", "missing --format (csv, jsonl or hdf5)");
    if (!view_known(x.view, false))
        return cli_usage_error("export ", "unknown scope '%s' (tree, process, system; --list shows all)",
                               x.view);
    if (optind != argc - 1)
        return cli_usage_error("export ", optind >= argc ? "missing RECORDING" : "too many arguments");
    const char *path = argv[optind];

    /* validate the recording before creating the output file */
    char err[1024];
    js_recording_t *probe;
    merge_node_t *nodes = NULL;
    size_t nnodes = 0;
    bool merged = merge_is_merged(path);
    if (merged && merge_nodes(path, &nodes, &nnodes, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    if (merged) {
        x.node = "";
    } else if (recording_open(path, &probe, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    } else {
        recording_close(probe);
    }
    x.f = stdout;
    js_outfile_t o = {0};
    if (out) { /* written under a temporary name, published when complete (a full disk leaves nothing) */
        js_file_id_t in;
        if (cli_output_begin(&o, out, force, false, &in, cli_file_id(path, &in) == 0 ? 1 : 0) < 0) {
            free(nodes);
            return EXIT_FAIL;
        }
        x.out = &o;
        int fd = dup(o.fd);
        if (fd < 0 || !(x.f = fdopen(fd, "w"))) {
            cli_error("%s: %s", out, strerror(errno));
            if (fd >= 0)
                close(fd);
            free(nodes);
            return cli_output_end(&o, EXIT_FAIL);
        }
    }
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    int rc = 0;
    unsigned procs = strcmp(x.view, "process") == 0 ? REPLAY_PROCS : 0; /* the process rows, rebuilt */
    if (!merged) {
        rc = cli_read_recording(path, procs, &r, &m, each, &x);
    } else { /* every node in turn, read back as a recording of its own */
        for (size_t i = 0; i < nnodes && rc == 0; i++) {
            char dir[4096], node_db[4200];
            if ((rc = cli_merged_node_path(path, nodes[i].name, dir, sizeof(dir), node_db, sizeof(node_db))))
                break;
            x.node = nodes[i].name;
            model_free(m);
            recording_close(r);
            m = NULL;
            r = NULL;
            rc = cli_read_recording(node_db, procs, &r, &m, each, &x);
            unlink(node_db);
            rmdir(dir);
        }
    }
    free(nodes);
    nodes = NULL;
    if (rc == 0 && !x.begun && m) { /* a recording with no samples: still a header */
        const js_table_t *t = NULL;
        for (size_t i = 0; (t = model_view_table(m, i)) && strcmp(t->name, x.view) != 0; i++)
            ;
        rc = t ? begin(&x, t) : 0;
    }
    int e = x.begun ? x.sink->end(x.st) : 0;
    if (rc == 0 && e < 0) {
        cli_error("cannot write %s: %s", out ? out : "standard output", strerror(-no_space(x.out, e)));
        rc = EXIT_FAIL;
    }
    if (out && fclose(x.f) != 0 && rc == 0) {
        cli_error("cannot write %s: %s", out, strerror(errno));
        rc = EXIT_FAIL;
    }
    if (out)
        rc = cli_output_end(&o, rc ? EXIT_FAIL : 0);
    model_free(m);
    recording_close(r);
    free(x.cols);
    free(x.cells);
    return rc ? EXIT_FAIL : 0;
}
