/* SPDX-License-Identifier: MIT
 *
 * `jobscope export`: a recording's samples as a table for pandas, SQL or spreadsheets. The model derives every
 * value (rates, tree sums); this file only chooses columns and hands rows to a tabular sink (CSV or JSON Lines).
 * Scopes: tree (a row per sample), process (a row per sample and process), system (a row per sample).
 */
#include "cli/cli.h"

#include "core/model_system.h"
#include "core/pidmap.h"
#include "sinks/tabsink.h"
#include "sources/proc_tree.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char export_usage[] =
    "Usage: jobscope export --format csv|jsonl [--scope tree|process|system] [-o FILE] RECORDING\n"
    "\n"
    "Write a recording's samples as a table: CSV (RFC 4180; column names end in their unit:\n"
    "_bytes, _s, _per_s, _fraction) or JSON Lines.\n"
    "  -f, --format FORMAT  csv or jsonl (required)\n"
    "  -s, --scope SCOPE    tree: a row per sample with the tree's sums and rates (default)\n"
    "                       process: a row per sample and process (long table)\n"
    "                       system: a row per sample with host CPU, memory, load, pressure, network, disks\n"
    "  -o, --output FILE    write to FILE instead of standard output\n";

typedef enum { SCOPE_TREE, SCOPE_PROCESS, SCOPE_SYSTEM, SCOPE_MAX } scope_t;

static const char *const tree_cols[] = {
    "time", "unix_s", "sample", "dt_s", "cpu_s", "user_s", "system_s", "cpu_cores", "sampled_cpu_s",
    "rss_bytes", "rss_main_bytes", "rss_descendants_bytes", "shared_bytes", "rss_anon_bytes", "rss_file_bytes",
    "rss_shmem_bytes", "swap_bytes", "uss_bytes", "pss_bytes", "hwm_max_bytes", "processes", "threads", "fds",
    "read_bytes", "write_bytes", "read_chars", "write_chars", "read_syscalls", "write_syscalls",
    "read_bytes_per_s", "write_bytes_per_s", "read_chars_per_s", "write_chars_per_s", "minflt", "majflt",
};
#define NTREE (sizeof(tree_cols) / sizeof(tree_cols[0]))

static const char *const proc_cols[] = {
    "time", "unix_s", "sample", "pid", "ppid", "start_ticks", "comm", "state", "cpu_cores", "utime_s", "stime_s",
    "children_cpu_s", "threads", "rss_bytes", "shared_bytes", "rss_anon_bytes", "swap_bytes", "hwm_bytes",
    "uss_bytes", "pss_bytes", "fds", "read_bytes", "write_bytes", "read_chars", "write_chars",
    "read_bytes_per_s", "write_bytes_per_s", "minflt", "majflt", "vol_ctxsw", "invol_ctxsw",
};
#define NPROC (sizeof(proc_cols) / sizeof(proc_cols[0]))

typedef struct {
    uint64_t start;
    char comm[64];
} comm_ent_t;

typedef struct {
    scope_t scope;
    const js_tab_sink_t *sink;
    FILE *f;
    void *st;
    bool begun;
    int err;
    double tck;
    js_pidmap_t comms;
    model_system_t *sys;
    const char **cols; /* system scope: time columns + model_system's */
    js_cell_t *cells;
    size_t ncells;
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

static js_cell_t num_or_missing(double d)
{
    return isnan(d) ? cell_missing() : cell_real(d);
}

static js_cell_t val_cell(const js_value_t *v)
{
    return v->present ? cell_int(v->i) : cell_missing();
}

static js_cell_t scaled(const js_value_t *v, double div)
{
    return v->present ? cell_real((double)v->i / div) : cell_missing();
}

static int ensure_cells(export_t *x, size_t n)
{
    if (n <= x->ncells)
        return 0;
    js_cell_t *c = realloc(x->cells, n * sizeof(*c));
    if (!c)
        return -ENOMEM;
    x->cells = c;
    x->ncells = n;
    return 0;
}

static int begin(export_t *x, const char *const *cols, size_t n)
{
    if (x->begun)
        return 0;
    x->begun = true;
    return x->sink->begin(x->f, cols, n, &x->st);
}

static int row_tree(export_t *x, const js_tree_point_t *p, js_cell_t *c, const char *tbuf)
{
    size_t k = 0;
    c[k++] = cell_text(tbuf);
    c[k++] = cell_real((double)p->t_unix_ns / 1e9);
    c[k++] = cell_int(p->seq);
    c[k++] = num_or_missing(p->dt_s);
    c[k++] = num_or_missing(p->cpu_s);
    c[k++] = num_or_missing(p->user_s);
    c[k++] = num_or_missing(p->system_s);
    c[k++] = num_or_missing(p->cpu_cores);
    c[k++] = num_or_missing(p->sampled_cpu_s);
    const double mem[] = {p->rss,       p->rss_main, p->rss_desc, p->shared, p->rss_anon, p->rss_file,
                          p->rss_shmem, p->swap,     p->uss,      p->pss,    p->hwm_max,  p->members,
                          p->threads,   p->fds};
    for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
        c[k++] = isnan(mem[i]) ? cell_missing() : cell_int((int64_t)mem[i]);
    static const int io_order[] = {IO_READ, IO_WRITE, IO_RCHAR, IO_WCHAR, IO_SYSCR, IO_SYSCW};
    for (int i = 0; i < 6; i++)
        c[k++] = isnan(p->io[io_order[i]]) ? cell_missing() : cell_int((int64_t)p->io[io_order[i]]);
    for (int i = 0; i < 4; i++)
        c[k++] = num_or_missing(p->io_rate[io_order[i]]);
    c[k++] = num_or_missing(p->minflt);
    c[k++] = num_or_missing(p->majflt);
    return x->sink->row(x->st, c);
}

static int rows_process(export_t *x, const js_model_t *m, const js_sample_t *s, const char *tbuf,
                        const js_tree_point_t *p)
{
    const js_rows_t *info = sample_rows(s, &table_proc_info);
    for (size_t i = 0; info && i < info->nrows; i++) {
        const js_value_t *v = rows_row(info, i);
        comm_ent_t *e = pidmap_put(&x->comms, (int32_t)v[INFO_PID].i, NULL);
        if (!e)
            return -ENOMEM;
        e->start = (uint64_t)v[INFO_START_TICKS].i;
        snprintf(e->comm, sizeof(e->comm), "%s", v[INFO_COMM].present ? rows_str(info, &v[INFO_COMM]) : "");
    }
    const js_rows_t *proc = sample_rows(s, &table_proc);
    size_t npp;
    const js_proc_point_t *pp = model_procs(m, &npp);
    js_cell_t *c = x->cells;
    for (size_t i = 0; proc && i < proc->nrows; i++) {
        const js_value_t *v = rows_row(proc, i);
        const comm_ent_t *e = pidmap_get(&x->comms, (int32_t)v[PROC_PID].i);
        size_t k = 0;
        c[k++] = cell_text(tbuf);
        c[k++] = cell_real((double)p->t_unix_ns / 1e9);
        c[k++] = cell_int(p->seq);
        c[k++] = val_cell(&v[PROC_PID]);
        c[k++] = val_cell(&v[PROC_PPID]);
        c[k++] = val_cell(&v[PROC_START_TICKS]);
        c[k++] = e && e->start == (uint64_t)v[PROC_START_TICKS].i ? cell_text(e->comm) : cell_missing();
        c[k++] = v[PROC_STATE].present ? cell_text(rows_str(proc, &v[PROC_STATE])) : cell_missing();
        c[k++] = i < npp ? num_or_missing(pp[i].cpu_cores) : cell_missing();
        c[k++] = scaled(&v[PROC_UTIME], x->tck);
        c[k++] = scaled(&v[PROC_STIME], x->tck);
        c[k++] = v[PROC_CUTIME].present && v[PROC_CSTIME].present
                     ? cell_real((double)(v[PROC_CUTIME].i + v[PROC_CSTIME].i) / x->tck)
                     : cell_missing();
        static const int direct[] = {PROC_THREADS, PROC_RSS,  PROC_SHARED, PROC_RSS_ANON, PROC_SWAP,  PROC_HWM,
                                     PROC_USS,     PROC_PSS,  PROC_FDS,    PROC_READ_BYTES, PROC_WRITE_BYTES,
                                     PROC_RCHAR,   PROC_WCHAR};
        for (size_t d = 0; d < sizeof(direct) / sizeof(direct[0]); d++)
            c[k++] = val_cell(&v[direct[d]]);
        c[k++] = i < npp ? num_or_missing(pp[i].read_bps) : cell_missing();
        c[k++] = i < npp ? num_or_missing(pp[i].write_bps) : cell_missing();
        c[k++] = val_cell(&v[PROC_MINFLT]);
        c[k++] = val_cell(&v[PROC_MAJFLT]);
        c[k++] = val_cell(&v[PROC_VCSW]);
        c[k++] = val_cell(&v[PROC_IVCSW]);
        int r = x->sink->row(x->st, c);
        if (r < 0)
            return r;
    }
    return 0;
}

static int rows_system(export_t *x, const js_sample_t *s, const char *tbuf, const js_tree_point_t *p)
{
    int r = model_system_feed(x->sys, s);
    if (r < 0)
        return r;
    const char *const *mc;
    size_t n = model_system_columns(x->sys, &mc);
    if (!x->cols) {
        x->cols = calloc(n + 3, sizeof(*x->cols));
        if (!x->cols || ensure_cells(x, n + 3) < 0)
            return -ENOMEM;
        x->cols[0] = "time";
        x->cols[1] = "unix_s";
        x->cols[2] = "sample";
        for (size_t i = 0; i < n; i++)
            x->cols[i + 3] = mc[i];
        if ((r = begin(x, x->cols, n + 3)) < 0)
            return r;
    }
    const js_cell_t *row = model_system_row(x->sys);
    x->cells[0] = cell_text(tbuf);
    x->cells[1] = cell_real((double)p->t_unix_ns / 1e9);
    x->cells[2] = cell_int(p->seq);
    for (size_t i = 0; i < n; i++)
        x->cells[i + 3] = row ? row[i] : cell_missing();
    return x->sink->row(x->st, x->cells);
}

static int each(void *arg, const js_recording_t *r, const js_model_t *m, const js_sample_t *s)
{
    (void)r;
    export_t *x = arg;
    const js_tree_point_t *p = model_point(m);
    char tbuf[40];
    fmt_time(tbuf, sizeof(tbuf), p->t_unix_ns);
    int rc = 0;
    switch (x->scope) {
    case SCOPE_TREE:
        if ((rc = begin(x, tree_cols, NTREE)) == 0)
            rc = row_tree(x, p, x->cells, tbuf);
        break;
    case SCOPE_PROCESS:
        if ((rc = begin(x, proc_cols, NPROC)) == 0)
            rc = rows_process(x, m, s, tbuf, p);
        break;
    default:
        rc = rows_system(x, s, tbuf, p);
    }
    if (rc < 0) {
        x->err = rc;
        cli_error("export failed: %s", strerror(-rc));
    }
    return rc;
}

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                         {"scope", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    export_t x = {.scope = SCOPE_TREE};
    const char *out = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+f:s:o:h", opts, NULL)) != -1) {
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
            if (!strcmp(optarg, "tree"))
                x.scope = SCOPE_TREE;
            else if (!strcmp(optarg, "process"))
                x.scope = SCOPE_PROCESS;
            else if (!strcmp(optarg, "system"))
                x.scope = SCOPE_SYSTEM;
            else
                return cli_usage_error("export ", "unknown scope '%s' (tree, process or system)", optarg);
            break;
        case 'o':
            out = optarg;
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
    js_model_cfg_t cfg;
    cli_model_cfg(probe, &cfg);
    recording_close(probe);
    x.tck = (double)cfg.clk_tck;
    x.f = stdout;
    if (out && !(x.f = fopen(out, "w"))) {
        cli_error("cannot create %s: %s", out, strerror(errno));
        return EXIT_FAIL;
    }
    pidmap_init(&x.comms, sizeof(comm_ent_t));
    if (ensure_cells(&x, NTREE > NPROC ? NTREE : NPROC) < 0 ||
        (x.scope == SCOPE_SYSTEM && !(x.sys = model_system_new()))) {
        cli_error("out of memory");
        return EXIT_FAIL;
    }
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    int rc = cli_read_recording(path, &r, &m, each, &x);
    if (rc == 0 && !x.begun) /* a recording with no samples: still a header */
        rc = x.scope == SCOPE_TREE      ? begin(&x, tree_cols, NTREE)
             : x.scope == SCOPE_PROCESS ? begin(&x, proc_cols, NPROC)
                                        : 0;
    int e = x.sink->end(x.st);
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
    model_system_free(x.sys);
    pidmap_free(&x.comms);
    free(x.cols);
    free(x.cells);
    return rc ? EXIT_FAIL : 0;
}
