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
#include "sinks/view_export.h"
#include "sources/registry.h"

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

/* export_ctx_t: what the replay's callback needs: the view exporter and the output file (for its errors) */
typedef struct {
    js_view_export_t *x;
    const js_outfile_t *out; /* the output file (NULL: standard output) */
} export_ctx_t;

/* no_space: a sink or the HDF5 library reports a failed write as -EIO: when the file system of the output
 * is full, say so. */
static int no_space(const js_outfile_t *o, int e)
{
    struct statvfs sv;
    if (e == -EIO && o && o->tmp[0] && statvfs(o->dir[0] ? o->dir : o->tmp, &sv) == 0 && sv.f_bavail == 0)
        return -ENOSPC;
    return e;
}

/* each: the replay's callback: the view's rows of each sample fed, through the library's view exporter */
static int each(void *arg, const js_recording_t *rec, js_model_t *m, const js_sample_t *s)
{
    (void)rec;
    (void)s;
    const export_ctx_t *c = arg;
    int rc = view_export_sample(c->x, m);
    if (rc < 0 && c->out)
        cli_error("cannot write %s: %s", c->out->path, strerror(-no_space(c->out, rc)));
    else if (rc < 0)
        cli_error("export failed: %s", strerror(-rc));
    return rc;
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

/* export_view: view `view` of the recording at `path` (a node's or a merged job's) as a table through `sink`
 * into `out` (standard output when NULL). Returns 0 or EXIT_FAIL (reported). */
static int export_view(const char *path, const char *view, const js_tab_sink_t *sink, const char *out,
                       bool force)
{
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
    if (!merged && recording_open(path, &probe, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    if (!merged)
        recording_close(probe);
    FILE *f = stdout;
    js_outfile_t o = {0};
    export_ctx_t c = {0};
    if (out) { /* written under a temporary name, published when complete (a full disk leaves nothing) */
        js_file_id_t in;
        if (cli_output_begin(&o, out, force, false, &in, cli_file_id(path, &in) == 0 ? 1 : 0) < 0) {
            free(nodes);
            return EXIT_FAIL;
        }
        c.out = &o;
        int fd = dup(o.fd);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            cli_error("%s: %s", out, strerror(errno));
            if (fd >= 0)
                close(fd);
            free(nodes);
            return cli_output_end(&o, EXIT_FAIL);
        }
    }
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    unsigned procs = strcmp(view, "process") == 0 ? REPLAY_PROCS : 0; /* the process rows, rebuilt */
    int rc = view_export_open(&c.x, sink, f, view, merged);
    if (rc < 0)
        cli_error("export failed: %s", strerror(-rc));
    else if (!merged)
        rc = cli_read_recording(path, procs, &r, &m, each, &c);
    for (size_t i = 0; merged && i < nnodes && rc == 0; i++) { /* every node, read back as a recording */
        char dir[4096], node_db[4200];
        if ((rc = cli_merged_node_path(path, nodes[i].name, dir, sizeof(dir), node_db, sizeof(node_db))))
            break;
        view_export_node(c.x, nodes[i].name);
        model_free(m);
        recording_close(r);
        m = NULL;
        r = NULL;
        rc = cli_read_recording(node_db, procs, &r, &m, each, &c);
        unlink(node_db);
        rmdir(dir);
    }
    free(nodes);
    int e = c.x ? view_export_finish(c.x, rc == 0 ? m : NULL) : 0; /* a recording with no samples: a header */
    if (rc == 0 && e < 0) {
        cli_error("cannot write %s: %s", out ? out : "standard output", strerror(-no_space(c.out, e)));
        rc = EXIT_FAIL;
    }
    if (out && fclose(f) != 0 && rc == 0) {
        cli_error("cannot write %s: %s", out, strerror(errno));
        rc = EXIT_FAIL;
    }
    if (out)
        rc = cli_output_end(&o, rc ? EXIT_FAIL : 0);
    view_export_free(c.x);
    model_free(m);
    recording_close(r);
    return rc ? EXIT_FAIL : 0;
}

int cmd_export(int argc, char **argv)
{
    enum { OPT_LIST = 256, OPT_FORCE, OPT_RECOMPUTE };
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"scope", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'}, {"list", no_argument, NULL, OPT_LIST},
        {"force", no_argument, NULL, OPT_FORCE},  {"recompute", no_argument, NULL, OPT_RECOMPUTE},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *view = "tree";
    const js_tab_sink_t *sink = NULL;
    const char *out = NULL;
    bool force = false, hdf5 = false, scope = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":f:s:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((sink = view_export_format(optarg)))
                break;
            if (!strcmp(optarg, "hdf5"))
                hdf5 = true;
            else
                return cli_usage_error("export ", "unknown format '%s' (csv, jsonl or hdf5)", optarg);
            break;
        case 's':
            view = optarg;
            scope = true;
            break;
        case 'o':
            out = optarg;
            break;
        case OPT_LIST:
            view_export_known(NULL, stdout);
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
    if (!sink)
        return cli_usage_error("export ", "missing --format (csv, jsonl or hdf5)");
    if (!view_export_known(view, NULL))
        return cli_usage_error("export ", "unknown scope '%s' (tree, process, system; --list shows all)",
                               view);
    if (optind != argc - 1)
        return cli_usage_error("export ", optind >= argc ? "missing RECORDING" : "too many arguments");
    return export_view(argv[optind], view, sink, out, force);
}
