/* SPDX-License-Identifier: MIT
 *
 * `jobscope report RECORDING [-o FILE]` and `jobscope compare A B [-o FILE]`: one self-contained HTML page
 * (no request leaves it; it prints to PDF) built from a recording by the same reader and model as `jobscope
 * summary` (src/report/report.h builds it). Also the report `jobscope run --report` writes at the end.
 */
#include "cli/cli.h"
#include "cli/cli_jobsum.h"
#include "api/replay.h"
#include "sinks/merge.h"

#include "core/json.h"
#include "report/raster.h"
#include "report/report.h"
#include "report/svg.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char report_usage[] =
    "Usage: jobscope report [-o FILE] [--format html|pdf|png] [--force] RECORDING\n"
    "\n"
    "Write the report of a recording: one HTML file that opens without a network and prints to PDF,\n"
    "with the run's facts, advice (each with its evidence and threshold), the summary as tables, charts\n"
    "of every source the recording holds (values on hover, drag to zoom), the hardware inventory and the\n"
    "monitor's own cost. A recording whose monitor was killed is reported up to its last sample.\n"
    "  -o, --output FILE  the page (default: RECORDING with .html, .pdf, or -charts for png, in place of\n"
    "                     .db); created like every jobscope output: not over an existing file unless\n"
    "                     --force, never through a symbolic link, never over the recording\n"
    "  -f, --format FMT   html (default); pdf: the summary, then the same charts, on A4 pages; png: the\n"
    "                     same charts, one image each (NN-NAME.png) in the folder FILE (made if missing).\n"
    "                     pdf and png are drawn by librsvg and cairo, loaded when needed (Debian: "
    "librsvg2-2)\n"
    "      --force        replace FILE if it exists\n"
    "      --recompute    recompute every figure from the process rows instead of the totals the\n"
    "                     recording kept (as an older recording is read)\n"
    "  -h, --help         show this help\n";

static const char compare_usage[] =
    "Usage: jobscope compare [-o FILE] [--force] A B\n"
    "\n"
    "Compare two recordings on one page: their facts side by side, a table of differences (wall time,\n"
    "CPU, peak memory, I/O, energy, GPU) with B - A and B / A, the phases of each by name, their events\n"
    "side by side (time, name, data; the first and last 25 of each), each run's advice, and the same\n"
    "charts overlaid on a common time axis from each run's start (B dashed).\n"
    "  -o, --output FILE  the page (default: A-vs-B.html next to A, from the files' names without .db)\n"
    "      --force        replace FILE if it exists\n"
    "  -h, --help         show this help\n";

/* stem: the file name of `path` without its directory and a ".db" suffix, into buf. */
static void stem(const char *path, char *buf, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(buf, cap, "%s", base);
    size_t n = strlen(buf);
    if (n > 3 && strcmp(buf + n - 3, ".db") == 0)
        buf[n - 3] = '\0';
}

/* default_output: RECORDING with ".html" in place of a ".db" suffix (appended otherwise). */
static int default_output(const char *rec, char *buf, size_t cap)
{
    size_t n = strlen(rec);
    int w = n > 3 && strcmp(rec + n - 3, ".db") == 0 ? snprintf(buf, cap, "%.*s.html", (int)(n - 3), rec)
                                                     : snprintf(buf, cap, "%s.html", rec);
    return w > 0 && (size_t)w < cap ? 0 : -ENAMETOOLONG;
}

/* The node being read: each_sample feeds its samples to the report. */
typedef struct {
    js_report_t *rep;
    size_t node;
} feed_t;

/* each_sample: cli_read_recording's callback, feeding the report after the model. */
static int each_sample(void *arg, const js_recording_t *r, js_model_t *m, const js_sample_t *s)
{
    (void)r;
    feed_t *f = arg;
    int rc = report_feed(f->rep, f->node, m, s);
    if (rc < 0)
        cli_error("cannot build the report: %s", strerror(-rc));
    return rc;
}

/* load_node: read the recording at `file` (shown as `path`) into a new node `name` (NULL: its host) of
 * `rep`. Returns 0, or EXIT_FAIL (said). */
static int load_node(js_report_t *rep, const char *file, const char *path, const char *name)
{
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    feed_t f = {.rep = rep};
    if (report_add_node(rep, name, &f.node) < 0) {
        cli_error("out of memory");
        return EXIT_FAIL;
    }
    if (cli_read_recording(file, 0, &r, &m, each_sample, &f))
        return EXIT_FAIL;
    js_summary_t su;
    js_run_info_t info;
    cli_summarize(r, path, m, &info, &su);
    /* how the scope was resolved: said by the recorder, or the cgroup that holds it */
    char how[600] = "";
    const char *cg = recording_meta(r, "cgroup_path"), *bound = recording_meta(r, "cores_bound");
    if (!recording_meta(r, "scope_how") && cg)
        snprintf(how, sizeof(how), "cgroup %s%s%s", cg, bound ? "; cores bound by " : "", bound ? bound : "");
    js_report_run_t run = {
        .start_unix_ns = recording_meta_i64(r, "start_unix_ns", 0),
        .stop_unix_ns = recording_meta_i64(r, "stop_unix_ns", 0),
        .user = recording_meta(r, "user"),
        .job = recording_meta(r, "job") ? recording_meta(r, "job") : recording_meta(r, "job_id"),
        .scope_how = how[0] ? how : recording_meta(r, "scope_how"),
        .kernel = recording_meta(r, "kernel"),
        .cpu_model = recording_meta(r, "cpu_model"),
    };
    /* the node is named after its host (or its name in a merged job recording) */
    int rc = report_finish_node(rep, f.node, m, &info, &su, &run);
    model_free(m);
    recording_close(r);
    if (rc < 0) {
        cli_error("cannot build the report: %s", strerror(-rc));
        return EXIT_FAIL;
    }
    return 0;
}

/* load: read the recording at `path` into a new report: one node, or every node of a merged job recording
 * (each read back as a recording of its own). Returns 0, or EXIT_FAIL (said). */
static int load(const char *path, js_report_t **ret)
{
    js_report_t *rep = report_new();
    if (!rep) {
        cli_error("out of memory");
        return EXIT_FAIL;
    }
    int rc = 0;
    if (!merge_is_merged(path)) {
        rc = load_node(rep, path, path, NULL);
    } else {
        merge_node_t *nodes = NULL;
        size_t n = 0;
        char err[1024] = "";
        if (merge_nodes(path, &nodes, &n, err, sizeof(err)) < 0) {
            cli_error("%s", err);
            rc = EXIT_FAIL;
        }
        for (size_t i = 0; i < n && rc == 0; i++) {
            char dir[4096], file[4200];
            if ((rc = cli_merged_node_path(path, nodes[i].name, dir, sizeof(dir), file, sizeof(file))))
                break;
            rc = load_node(rep, file, path, nodes[i].name);
            unlink(file);
            rmdir(dir);
        }
        free(nodes);
    }
    if (rc) {
        report_free(rep);
        return EXIT_FAIL;
    }
    *ret = rep;
    return 0;
}

int cli_report_fd(const char *recording, int fd, const char *out)
{
    js_report_t *rep;
    if (load(recording, &rep))
        return EXIT_FAIL;
    js_buf_t page = {0};
    int rc = report_html(rep, &page);
    if (rc == 0)
        rc = cli_write_all(fd, page.p, page.len);
    if (rc < 0)
        cli_error("cannot write %s: %s", out, strerror(-rc));
    buf_free(&page);
    report_free(rep);
    return rc < 0 ? EXIT_FAIL : 0;
}

typedef struct {
    const char *out;
    const char *format; /* report: html, pdf or png */
    bool force;
    const char *in[2];
    size_t nin;
} args_t;

static int parse(int argc, char **argv, const char *cmd, const char *usage, size_t nin, args_t *a)
{
    enum { OPT_FORCE = 256, OPT_RECOMPUTE };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'f'},
        {"force", no_argument, NULL, OPT_FORCE},  {"recompute", no_argument, NULL, OPT_RECOMPUTE},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, nin == 1 ? ":o:f:h" : ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            a->out = optarg;
            break;
        case 'f':
            if (nin != 1)
                return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
            if (strcmp(optarg, "html") && strcmp(optarg, "pdf") && strcmp(optarg, "png"))
                return cli_usage_error(cmd, "unknown format '%s' (html, pdf or png)", optarg);
            a->format = optarg;
            break;
        case OPT_FORCE:
            a->force = true;
            break;
        case OPT_RECOMPUTE:
            cli_replay_flags |= REPLAY_RECOMPUTE;
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        case ':':
            return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if ((size_t)(argc - optind) != nin)
        return cli_usage_error(cmd, (size_t)(argc - optind) < nin
                                        ? (nin == 1 ? "missing RECORDING" : "missing a recording (A and B)")
                                        : "too many arguments");
    for (size_t i = 0; i < nin; i++)
        a->in[i] = argv[optind + (int)i];
    a->nin = nin;
    return 0;
}

/* open_output: check every input is a recording, then start the output (never one of the inputs; written
 * under a temporary name, published by finish). Returns 0, or -1 (said). */
static int open_output(const args_t *a, const char *out, js_outfile_t *o)
{
    js_file_id_t ids[2];
    size_t n = 0;
    char err[1024];
    for (size_t i = 0; i < a->nin; i++) {
        js_recording_t *probe;
        if (recording_open(a->in[i], &probe, err, sizeof(err)) < 0) {
            cli_error("%s", err);
            return -1;
        }
        recording_close(probe);
        if (cli_file_id(a->in[i], &ids[n]) == 0)
            n++;
    }
    return cli_output_begin(o, out, a->force, false, ids, n) < 0 ? -1 : 0;
}

static int finish(js_outfile_t *o, const char *out, int rc)
{
    rc = cli_output_end(o, rc);
    if (rc == 0)
        printf("%s\n", out);
    return rc;
}

/* report_pictures: the report's charts as a PDF (its summary first) or as PNG files in folder a->out. */
static int report_pictures(const args_t *a, bool pdf)
{
    char err[1024];
    if (raster_load(err, sizeof(err)) < 0) { /* before any output is made */
        cli_error("%s", err);
        return EXIT_FAIL;
    }
    int fd = -1;
    js_outfile_t of;
    if (pdf) {
        if (open_output(a, a->out, &of) < 0)
            return EXIT_FAIL;
        fd = of.fd;
    } else {
        js_recording_t *probe;
        if (recording_open(a->in[0], &probe, err, sizeof(err)) < 0) {
            cli_error("%s", err);
            return EXIT_FAIL;
        }
        recording_close(probe);
        if (mkdir(a->out, 0755) < 0 && errno != EEXIST) {
            cli_error("%s: %s", a->out, strerror(errno));
            return EXIT_FAIL;
        }
    }
    js_report_t *rep = NULL;
    js_svgdocs_t docs = {0};
    js_buf_t page = {0};
    int rc = load(a->in[0], &rep);
    int r = rc ? 0 : report_html_docs(rep, &page, &docs);
    if (!rc && r < 0) {
        cli_error("cannot build the report: %s", strerror(-r));
        rc = EXIT_FAIL;
    }
    buf_free(&page);
    if (!rc && pdf) {
        js_pdf_t *p = NULL;
        char *sum = cli_summary_text(a->in[0]);
        js_buf_t text = {0};
        const char *base = strrchr(a->in[0], '/');
        char title[512];
        snprintf(title, sizeof(title), "jobscope report: %s", base ? base + 1 : a->in[0]);
        r = raster_pdf_open(fd, title, &p, err, sizeof(err));
        if (r == 0 && (r = svg_text_doc(&text, title, sum ? sum : "")) < 0)
            snprintf(err, sizeof(err), "out of memory");
        if (r == 0)
            r = raster_pdf_draw(p, text.p, text.len, 0.75, err, sizeof(err));
        raster_pdf_break(p);
        for (size_t i = 0; i < docs.n && r == 0; i++)
            r = raster_pdf_draw(p, docs.v[i].svg.p, docs.v[i].svg.len, 0, err, sizeof(err));
        int c = raster_pdf_close(p);
        if (r == 0 && c < 0)
            snprintf(err, sizeof(err), "cannot write %s: %s", a->out, strerror(-c));
        if (r < 0 || c < 0) {
            cli_error("%s", err);
            rc = EXIT_FAIL;
        }
        buf_free(&text);
        free(sum);
    }
    for (size_t i = 0; !rc && !pdf && i < docs.n; i++) {
        char path[4400];
        if (snprintf(path, sizeof(path), "%s/%02zu-%s.png", a->out, i + 1, docs.v[i].id) >=
            (int)sizeof(path)) {
            cli_error("%s: name too long", a->out);
            rc = EXIT_FAIL;
            break;
        }
        js_file_id_t in;
        js_outfile_t pf;
        if (cli_output_begin(&pf, path, a->force, false, &in, cli_file_id(a->in[0], &in) == 0 ? 1 : 0) < 0) {
            rc = EXIT_FAIL;
            break;
        }
        r = raster_png(docs.v[i].svg.p, docs.v[i].svg.len, 2.0, pf.fd, err, sizeof(err));
        if (r < 0)
            cli_error("%s", err);
        if (cli_output_end(&pf, r < 0 ? EXIT_FAIL : 0)) /* renamed into place only when complete */
            rc = EXIT_FAIL;
    }
    svgdocs_free(&docs);
    report_free(rep);
    if (pdf)
        return finish(&of, a->out, rc);
    if (!rc)
        printf("%s\n", a->out);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    args_t a = {0};
    int rc = parse(argc, argv, "report ", report_usage, 1, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char def[4096];
    const char *fmt = a.format ? a.format : "html";
    if (!a.out) {
        size_t n = strlen(a.in[0]);
        int stem_len = n > 3 && strcmp(a.in[0] + n - 3, ".db") == 0 ? (int)(n - 3) : (int)n;
        int w = !strcmp(fmt, "html")  ? (default_output(a.in[0], def, sizeof(def)) < 0 ? -1 : 0)
                : !strcmp(fmt, "pdf") ? snprintf(def, sizeof(def), "%.*s.pdf", stem_len, a.in[0])
                                      : snprintf(def, sizeof(def), "%.*s-charts", stem_len, a.in[0]);
        if (w < 0 || (size_t)w >= sizeof(def))
            return cli_usage_error("report ", "RECORDING's name is too long for a default output; use -o");
        a.out = def;
    }
    if (strcmp(fmt, "html") != 0)
        return report_pictures(&a, !strcmp(fmt, "pdf"));
    js_outfile_t o;
    if (open_output(&a, a.out, &o) < 0)
        return EXIT_FAIL;
    return finish(&o, a.out, cli_report_fd(a.in[0], o.fd, a.out));
}

int cmd_compare(int argc, char **argv)
{
    args_t a = {0};
    int rc = parse(argc, argv, "compare ", compare_usage, 2, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char def[4096], sa[256], sb[256];
    stem(a.in[0], sa, sizeof(sa));
    stem(a.in[1], sb, sizeof(sb));
    if (!a.out) {
        const char *slash = strrchr(a.in[0], '/');
        int dir = slash ? (int)(slash - a.in[0] + 1) : 0;
        int w = snprintf(def, sizeof(def), "%.*s%s-vs-%s.html", dir, a.in[0], sa, sb);
        if (w < 0 || (size_t)w >= sizeof(def))
            return cli_usage_error("compare ",
                                   "the recordings' names are too long for a default output; use -o");
        a.out = def;
    }
    js_outfile_t o;
    if (open_output(&a, a.out, &o) < 0)
        return EXIT_FAIL;
    js_report_t *ra = NULL, *rb = NULL;
    rc = load(a.in[0], &ra);
    if (!rc)
        rc = load(a.in[1], &rb);
    js_buf_t page = {0};
    if (!rc) {
        /* label each run by its file name; the same name twice: A and B */
        int r = report_compare_html(ra, rb, strcmp(sa, sb) ? sa : "A", strcmp(sa, sb) ? sb : "B", &page);
        if (r == 0)
            r = cli_write_all(o.fd, page.p, page.len);
        if (r < 0) {
            cli_error("cannot write %s: %s", a.out, strerror(-r));
            rc = EXIT_FAIL;
        }
    }
    buf_free(&page);
    report_free(ra);
    report_free(rb);
    return finish(&o, a.out, rc);
}
