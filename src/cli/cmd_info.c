/* SPDX-License-Identifier: MIT
 *
 * `jobscope info [--json]`: the node's inventory, as a recording stores it once per run, without recording
 * anything. Every registered source is initialised for the whole node (watch mode, node scope) and asked for
 * its inventory rows (the CPU model, topology, caches, NUMA nodes and memory from the `host` source; RAPL
 * zones, InfiniBand ports, cpufreq and sensors from theirs; cgroup limits and GPUs from theirs); the rows
 * are printed grouped by source, as aligned `key value` lines or as one JSON object per source. What lscpu
 * prints, read from procfs and sysfs, with no external command. Sources whose hardware is absent are listed
 * with the reason (text) or as {"unavailable": reason} (JSON).
 */
#include "cli/cli.h"

#include "core/json.h"
#include "engine/sampler.h"
#include "sources/registry.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

static const char info_usage[] =
    "Usage: jobscope info [--json] [--procfs DIR] [--sysfs DIR]\n"
    "\n"
    "Print the node's hardware inventory (what a recording stores once per run): CPU model, sockets, cores,\n"
    "threads, caches, NUMA nodes, memory, kernel, and what each source found (RAPL zones, InfiniBand ports,\n"
    "cpufreq, sensors), grouped by source. Values are in base units (bytes, kHz, millidegrees Celsius).\n"
    "  -j, --json        one JSON object per source: {\"host\": {\"cpu.model\": \"...\", \"cpu.count\": 8, "
    "...},\n"
    "                    ...}: numbers (counts, sizes) as JSON numbers, the rest (names, lists, identifiers) "
    "as\n"
    "                    strings; a source with nothing found: {\"unavailable\": \"reason\"}\n"
    "      --procfs DIR  read DIR instead of the kernel's procfs (testing; also $JOBSCOPE_PROCFS)\n"
    "      --sysfs DIR   read DIR instead of the kernel's sysfs (testing; also $JOBSCOPE_SYSFS)\n";

enum { OPT_PROCFS = 256, OPT_SYSFS };

/* source_at: the k-th source to print: the machine's own inventory (`host`) first, then the others in
 * registry order. */
static size_t source_at(const js_sampler_t *sp, size_t k)
{
    size_t host = sp->nsources;
    for (size_t i = 0; i < sp->nsources; i++)
        if (strcmp(js_sources[i]->name, "host") == 0)
            host = i;
    if (host == sp->nsources)
        return k;
    if (k == 0)
        return host;
    return k <= host ? k - 1 : k;
}

/* print_text: the rows of each source, `key  value` aligned on the longest key of that source. */
static int print_text(const js_sampler_t *sp, const js_rows_t *inv, js_buf_t *b)
{
    int err = 0;
    for (size_t k0 = 0; k0 < sp->nsources; k0++) {
        size_t i = source_at(sp, k0);
        const js_source_t *src = js_sources[i];
        if (!src->inventory)
            continue;
        if (sp->init_rc[i] < 0) {
            err |= buf_printf(b, "%s: not available (%s)\n", src->name, sampler_init_reason(sp, i));
            continue;
        }
        size_t width = 0, n = 0;
        for (size_t k = 0; k < inv->nrows; k++) {
            const js_value_t *v = rows_row(inv, k);
            if (strcmp(rows_str(inv, &v[INV_SOURCE]), src->name) == 0) {
                size_t w = strlen(rows_str(inv, &v[INV_KEY]));
                width = w > width ? w : width;
                n++;
            }
        }
        err |= buf_printf(b, "%s:%s\n", src->name, n ? "" : " (nothing found)");
        for (size_t k = 0; k < inv->nrows; k++) {
            const js_value_t *v = rows_row(inv, k);
            if (strcmp(rows_str(inv, &v[INV_SOURCE]), src->name) != 0)
                continue;
            err |= buf_printf(b, "  %-*s  %s\n", (int)width, rows_str(inv, &v[INV_KEY]),
                              v[INV_VALUE].present ? rows_str(inv, &v[INV_VALUE]) : "");
        }
    }
    return err ? -ENOMEM : 0;
}

static int print_json(const js_sampler_t *sp, const js_rows_t *inv, js_buf_t *b)
{
    jw_t w;
    jw_init(&w, b);
    jw_open(&w, NULL);
    for (size_t k0 = 0; k0 < sp->nsources; k0++) {
        size_t i = source_at(sp, k0);
        const js_source_t *src = js_sources[i];
        if (!src->inventory)
            continue;
        jw_open(&w, src->name);
        if (sp->init_rc[i] < 0)
            jw_str(&w, "unavailable", sampler_init_reason(sp, i));
        for (size_t k = 0; sp->init_rc[i] == 0 && k < inv->nrows; k++) {
            const js_value_t *v = rows_row(inv, k);
            if (strcmp(rows_str(inv, &v[INV_SOURCE]), src->name) != 0)
                continue;
            const char *key = rows_str(inv, &v[INV_KEY]),
                       *val = v[INV_VALUE].present ? rows_str(inv, &v[INV_VALUE]) : NULL;
            if (val && v[INV_NUMBER].present && v[INV_NUMBER].i && json_number_text(val))
                jw_raw(&w, key, val); /* a number is a JSON number */
            else
                jw_str(&w, key, val);
        }
        jw_close(&w);
    }
    jw_close(&w);
    w.err |= buf_append(b, "\n", 1);
    return jw_error(&w);
}

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"procfs", required_argument, NULL, OPT_PROCFS},
                                         {"sysfs", required_argument, NULL, OPT_SYSFS},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool json = false;
    const char *procfs = NULL, *sysfs = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
        if (c == 'j')
            json = true;
        else if (c == OPT_PROCFS)
            procfs = optarg;
        else if (c == OPT_SYSFS)
            sysfs = optarg;
        else if (c == 'h') {
            fputs(info_usage, stdout);
            return 0;
        } else
            return cli_usage_error("info ", "unknown option or missing argument '%s'", argv[optind - 1]);
    }
    if (optind != argc)
        return cli_usage_error("info ", "unexpected argument '%s'", argv[optind]);

    js_ctx_t ctx = {.mode = JS_MODE_WATCH, .scope = {.kind = JS_SCOPE_NODE}, .status_every = 1};
    ctx.monitor_pid = getpid();
    int r = fsroot_open(&ctx.root, procfs, sysfs);
    if (r < 0) {
        cli_error("cannot open procfs %s: %s", procfs ? procfs : "", strerror(-r));
        return EXIT_FAIL;
    }
    if (sysfs && ctx.root.sys < 0) {
        cli_error("cannot open sysfs %s", sysfs);
        fsroot_close(&ctx.root);
        return EXIT_FAIL;
    }
    js_sample_t s = {0};
    js_sampler_t sp = {0};
    js_buf_t b = {0};
    int rc = EXIT_FAIL;
    if (sample_init(&s) < 0 || sampler_init(&sp, &ctx, &s) < 0) {
        cli_error("out of memory");
        goto out;
    }
    sampler_inventory(&sp, &s);
    const js_rows_t *inv = sample_rows(&s, &table_inventory);
    r = json ? print_json(&sp, inv, &b) : print_text(&sp, inv, &b);
    if (r < 0) {
        cli_error("out of memory");
        goto out;
    }
    fputs(b.p, stdout);
    if (fflush(stdout) != 0) {
        cli_error("cannot write the inventory");
        goto out;
    }
    rc = 0;
out:
    buf_free(&b);
    sampler_fini(&sp);
    sample_free(&s);
    fsroot_close(&ctx.root);
    return rc;
}
