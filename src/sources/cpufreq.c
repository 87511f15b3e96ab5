/* SPDX-License-Identifier: MIT
 *
 * The `cpufreq` source (see cpufreq.h). At init it opens scaling_cur_freq of every CPU directory that has
 * one; when none has, it falls back to procfs cpuinfo (kept open, re-read with pread, parsed for its
 * "processor" and "cpu MHz" lines, at the --status-every cadence: cpuinfo renders every CPU's whole block,
 * flags included, so it costs about 5 us per CPU, and without a cpufreq driver the figure moves little).
 * Neither present disables the source (init returns -ENODEV). A CPU that goes offline keeps its row with the
 * frequency missing.
 */
#include "sources/cpufreq.h"

#include "sys/fsroot.h"
#include "sys/parse.h"
#include "sys/sysattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const js_column_t cpufreq_cols[CPUFREQ__MAX] = {
    [CPUFREQ_CPU] = {"cpu", "id", JS_INT, JS_LABEL, 0, "CPU number"},
    [CPUFREQ_CUR_KHZ] =
        {"cur_freq_khz", "kHz", JS_INT, JS_GAUGE, 0,
         "cpufreq/scaling_cur_freq, or cpuinfo \"cpu MHz\" x 1000 (inventory: cpufreq.source)"},
};
const js_table_t table_cpufreq = {"cpufreq", "current frequency of each CPU", CPUFREQ__MAX, cpufreq_cols};

static const js_table_t *const cpufreq_tables[] = {&table_cpufreq, NULL};

typedef struct {
    int cpu;
    int fd;
} freq_file_t;

typedef struct {
    freq_file_t *f; /* scaling_cur_freq files; none: cpuinfo */
    size_t n;
    int cpuinfo_fd;
    js_buf_t buf;
} cpufreq_state_t;

/* line_value: if the line at `p` starts with `key` followed by blanks and ':', the text after ": ". */
static const char *line_value(const char *p, const char *key)
{
    size_t k = strlen(key);
    if (strncmp(p, key, k) != 0)
        return NULL;
    p += k;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* parse_mhz_khz: "2096.010" (MHz) as kHz. Returns 0 or -EINVAL. */
static int parse_mhz_khz(const char *p, int64_t *ret)
{
    uint64_t whole;
    if (parse_u64(&p, &whole) < 0 || whole > UINT64_C(1) << 40)
        return -EINVAL;
    int64_t khz = (int64_t)whole * 1000;
    if (*p == '.') {
        p++;
        int64_t scale = 100;
        for (; *p >= '0' && *p <= '9'; p++) {
            khz += (*p - '0') * scale;
            scale /= 10;
        }
    }
    *ret = khz;
    return 0;
}

int cpufreq_parse_cpuinfo(const char *text, js_rows_t *out)
{
    int64_t cpu = -1;
    int n = 0;
    for (const char *line = text; line && *line;) {
        const char *v;
        if ((v = line_value(line, "processor")))
            (void)parse_i64(&v, &cpu);
        else if ((v = line_value(line, "cpu MHz")) && cpu >= 0) {
            int64_t khz;
            if (parse_mhz_khz(v, &khz) == 0) {
                js_value_t *row = rows_add(out);
                if (!row)
                    return -ENOMEM;
                val_int(&row[CPUFREQ_CPU], cpu);
                val_int(&row[CPUFREQ_CUR_KHZ], khz);
                n++;
            }
            cpu = -1; /* one figure per processor block */
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return n;
}

static void cpufreq_fini(void *state)
{
    cpufreq_state_t *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        close(st->f[i].fd);
    free(st->f);
    if (st->cpuinfo_fd >= 0)
        close(st->cpuinfo_fd);
    buf_free(&st->buf);
    free(st);
}

/* open_scaling: open scaling_cur_freq of each cpuN directory. Returns the count opened or -ENOMEM. */
static int open_scaling(int sys, cpufreq_state_t *st)
{
    char **names;
    int n = sysattr_list(sys, "devices/system/cpu", "cpu", &names);
    if (n <= 0)
        return n == -ENOMEM ? n : 0;
    if (!(st->f = calloc((size_t)n, sizeof(*st->f)))) {
        sysattr_list_free(names);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        int64_t cpu;
        if (sysattr_parse_i64(names[i] + 3, &cpu) < 0 || cpu < 0 || cpu > INT32_MAX)
            continue; /* cpufreq, cpuidle, ... */
        char path[128];
        snprintf(path, sizeof(path), "devices/system/cpu/%s/cpufreq/scaling_cur_freq", names[i]);
        int fd = sysattr_open(sys, path);
        if (fd < 0)
            continue;
        st->f[st->n].cpu = (int)cpu;
        st->f[st->n].fd = fd;
        st->n++;
    }
    sysattr_list_free(names);
    return (int)st->n;
}

static int cpufreq_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    cpufreq_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    st->cpuinfo_fd = -1;
    int r = ctx->root.sys >= 0 ? open_scaling(ctx->root.sys, st) : 0;
    if (r == 0) {
        /* no cpufreq: cpuinfo, if it has MHz lines */
        js_rows_t probe;
        rows_init(&probe, &table_cpufreq);
        int fd = sysattr_open(ctx->root.proc, "cpuinfo");
        if (fd >= 0 && (r = fd_read_paged(fd, &st->buf)) == 0)
            r = cpufreq_parse_cpuinfo(st->buf.p, &probe);
        rows_free(&probe);
        if (fd >= 0 && r > 0)
            st->cpuinfo_fd = fd;
        else if (fd >= 0)
            close(fd);
        if (r == 0 || (r < 0 && r != -ENOMEM))
            r = -ENODEV;
    }
    if (r < 0) {
        cpufreq_fini(st);
        return r;
    }
    *ret_state = st;
    return 0;
}

static int cpufreq_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    cpufreq_state_t *st = state;
    js_rows_t *r = rows[0];
    if (st->cpuinfo_fd >= 0) {
        /* cpuinfo renders every CPU's block (flags included) to give these figures: read it at the status
         * cadence only; without cpufreq the figure is mostly the nominal clock and moves little */
        unsigned every = ctx->status_every ? ctx->status_every : 1;
        if (!(ctx->seq == 0 || ctx->final || ctx->seq % every == 0))
            return 0;
        int rc = fd_read_paged(st->cpuinfo_fd, &st->buf);
        if (rc < 0)
            return rc;
        rc = cpufreq_parse_cpuinfo(st->buf.p, r);
        return rc < 0 ? rc : 0;
    }
    for (size_t i = 0; i < st->n; i++) {
        js_value_t *v = rows_add(r);
        if (!v)
            return -ENOMEM;
        val_int(&v[CPUFREQ_CPU], st->f[i].cpu);
        int64_t khz;
        if (sysattr_pread_i64(st->f[i].fd, &khz) == 0 && khz >= 0)
            val_int(&v[CPUFREQ_CUR_KHZ], khz);
    }
    return 0;
}

static int cpufreq_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    cpufreq_state_t *st = state;
    if (st->cpuinfo_fd >= 0)
        return inventory_add(inv, "cpufreq", "source", "cpuinfo");
    int r = inventory_add(inv, "cpufreq", "source", "scaling_cur_freq");
    if (r == 0)
        r = inventory_addf(inv, "cpufreq", "cpus", "%zu", st->n);
    /* the first CPU's driver, governor and limits (per-CPU differences are rare and not recorded) */
    static const struct {
        const char *file, *key;
    } attrs[] = {{"scaling_driver", "driver"},    {"scaling_governor", "governor"},
                 {"cpuinfo_min_freq", "min_khz"}, {"cpuinfo_max_freq", "max_khz"},
                 {"base_frequency", "base_khz"},  {"energy_performance_preference", "epp"}};
    for (size_t a = 0; r == 0 && st->n && a < sizeof(attrs) / sizeof(attrs[0]); a++) {
        char path[160], val[128];
        snprintf(path, sizeof(path), "devices/system/cpu/cpu%d/cpufreq/%s", st->f[0].cpu, attrs[a].file);
        int64_t khz;
        if (sysattr_read_str(ctx->root.sys, path, val, sizeof(val)) <= 0)
            continue;
        if (strstr(attrs[a].key, "_khz") && sysattr_parse_i64(val, &khz) == 0)
            r = inventory_addf(inv, "cpufreq", attrs[a].key, "%lld", (long long)khz); /* a number */
        else
            r = inventory_add(inv, "cpufreq", attrs[a].key, val);
    }
    return r;
}

const js_source_t source_cpufreq = {
    .name = "cpufreq",
    .help = "current frequency per CPU (cpufreq scaling_cur_freq, or cpuinfo MHz) from sysfs/procfs",
    .tables = cpufreq_tables,
    .init = cpufreq_init,
    .collect = cpufreq_collect,
    .fini = cpufreq_fini,
    .inventory = cpufreq_inventory,
};
