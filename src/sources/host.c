/* SPDX-License-Identifier: MIT
 *
 * The `host` source: the hardware and system inventory of the node, recorded once per run (the core
 * `inventory` table; `jobscope info` prints it). It has no tables and no per-sample work. What lscpu shows,
 * without running it, all through the procfs and sysfs roots:
 *   - CPU identity from procfs cpuinfo (the first processor block): vendor, model name, family, model,
 *     stepping, microcode; cpuinfo's "cache size" where sysfs has no cache directories;
 *   - topology from devices/system/cpu: online CPUs, and per CPU topology/physical_package_id, die_id and
 *     core_id, giving sockets, dies, cores, threads, cores per socket and threads per core (the largest
 *     per socket / per core, as lscpu reports them on hybrid parts);
 *   - caches from devices/system/cpu/cpuN/cache/indexK: size, line size, ways and the instances, counted as
 *     the distinct shared_cpu_list sets (L1d, L1i, L2, L3 as lscpu names them);
 *   - NUMA nodes from devices/system/node: online nodes, each node's CPU list and MemTotal;
 *   - memory from procfs meminfo; kernel, host name and boot id from procfs sys/kernel; the platform from
 *     class/dmi/id (the world-readable attributes only: no serial numbers).
 * Each key is present only where its file could be read. The cgroup limits and GPUs come from other sources'
 * inventory hooks.
 */
#include "core/source.h"

#include "sys/fsroot.h"
#include "sys/parse.h"
#include "sys/sysattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#define SRC "host"
#define MAX_CACHES 8

/* ---- helpers -------------------------------------------------------------------------------------- */

/* add_file: the inventory row `key` with the content of `path` under `dir`, when readable and not empty. */
static int add_file(js_rows_t *inv, int dir, const char *path, const char *key)
{
    char val[512];
    if (dir < 0 || sysattr_read_str(dir, path, val, sizeof(val)) <= 0)
        return 0;
    return inventory_add(inv, SRC, key, val);
}

/* cpuinfo_field: copy the value of the first line of `text` starting with `key` (then blanks and ':') into
 * `out`. Returns true when found. */
static bool cpuinfo_field(const char *text, const char *key, char *out, size_t cap)
{
    size_t k = strlen(key);
    for (const char *line = text; line && *line;) {
        if (strncmp(line, key, k) == 0) {
            const char *p = line + k;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == ':') {
                p++;
                while (*p == ' ' || *p == '\t')
                    p++;
                size_t n = strcspn(p, "\n");
                if (n >= cap)
                    n = cap - 1;
                memcpy(out, p, n);
                out[n] = '\0';
                return true;
            }
        }
        if (*line == '\n') /* end of the first processor block */
            return false;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return false;
}

/* parse_size: "48K", "1024 KB", "2M", "32768" as bytes. Returns 0 or -EINVAL. */
static int parse_size(const char *s, int64_t *ret)
{
    uint64_t v;
    if (parse_u64(&s, &v) < 0)
        return -EINVAL;
    while (*s == ' ')
        s++;
    uint64_t mult = 1;
    if (*s == 'K' || *s == 'k')
        mult = 1024;
    else if (*s == 'M' || *s == 'm')
        mult = 1024 * 1024;
    else if (*s == 'G' || *s == 'g')
        mult = 1024 * 1024 * 1024;
    else if (*s)
        return -EINVAL;
    if (v > (uint64_t)INT64_MAX / mult)
        return -EINVAL;
    *ret = (int64_t)(v * mult);
    return 0;
}

/* ---- CPU identity --------------------------------------------------------------------------------- */

static int add_cpuinfo(js_rows_t *inv, int proc, bool have_sysfs_caches)
{
    js_buf_t b = {0};
    int r = fs_read(proc, "cpuinfo", &b);
    if (r < 0) {
        buf_free(&b);
        return r == -ENOMEM ? r : 0;
    }
    static const struct {
        const char *field, *key;
    } fields[] = {
        {"vendor_id", "cpu.vendor"},
        {"model name", "cpu.model"},
        {"cpu family", "cpu.family"},
        {"model", "cpu.model_id"},
        {"stepping", "cpu.stepping"},
        {"microcode", "cpu.microcode"},
        {"CPU implementer", "cpu.implementer"},
        {"CPU part", "cpu.part"},
        {"cpu", "cpu.model"}, /* POWER */
    };
    char val[256];
    bool have_model = false;
    for (size_t i = 0; r == 0 && i < sizeof(fields) / sizeof(fields[0]); i++) {
        bool is_model = !strcmp(fields[i].key, "cpu.model");
        if (is_model && have_model)
            continue;
        if (!cpuinfo_field(b.p, fields[i].field, val, sizeof(val)) || !val[0])
            continue;
        have_model |= is_model;
        r = inventory_add(inv, SRC, fields[i].key, val);
    }
    int64_t bytes;
    if (r == 0 && !have_sysfs_caches && cpuinfo_field(b.p, "cache size", val, sizeof(val)) &&
        parse_size(val, &bytes) == 0)
        r = inventory_addf(inv, SRC, "cache.cpuinfo_size_bytes", "%lld", (long long)bytes);
    buf_free(&b);
    return r;
}

/* ---- topology and caches -------------------------------------------------------------------------- */

typedef struct {
    int64_t package, die, core;
    int cpu;
} cpu_topo_t;

static int topo_cmp(const void *a, const void *b)
{
    const cpu_topo_t *x = a, *y = b;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    if (x->die != y->die)
        return x->die < y->die ? -1 : 1;
    if (x->core != y->core)
        return x->core < y->core ? -1 : 1;
    return x->cpu - y->cpu;
}

typedef struct {
    char name[8];             /* L1d, L1i, L2, L3 */
    int64_t size, line, ways; /* -1 unknown */
    int instances;
    int shared;        /* CPUs sharing the first instance */
    uint64_t *covered; /* CPUs already in a counted instance */
} cache_t;

static void cache_name(int64_t level, const char *type, char *out, size_t cap)
{
    const char *suffix = !strcmp(type, "Data") ? "d" : !strcmp(type, "Instruction") ? "i" : "";
    snprintf(out, cap, "L%lld%s", (long long)level, suffix);
}

/* scan_caches: the caches of the online CPUs `online` (a bitmap of nbits). Returns the number of caches in
 * `c` (at most MAX_CACHES), or -ENOMEM. */
static int scan_caches(int sys, const uint64_t *online, size_t nbits, cache_t *c)
{
    int nc = 0;
    size_t words = (nbits + 63) / 64;
    for (size_t cpu = 0; cpu < nbits; cpu++) {
        if (!cpulist_has(online, nbits, cpu))
            continue;
        for (int idx = 0; idx < 16; idx++) {
            char path[128], type[32], list[1024];
            int64_t level;
            snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/cache/index%d/level", cpu, idx);
            if (sysattr_read_i64(sys, path, &level) < 0)
                break;
            snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/cache/index%d/type", cpu, idx);
            if (sysattr_read_str(sys, path, type, sizeof(type)) < 0)
                continue;
            char name[8];
            cache_name(level, type, name, sizeof(name));
            int k = 0;
            while (k < nc && strcmp(c[k].name, name) != 0)
                k++;
            if (k == nc) {
                if (nc == MAX_CACHES)
                    continue;
                memset(&c[k], 0, sizeof(c[k]));
                snprintf(c[k].name, sizeof(c[k].name), "%s", name);
                c[k].size = c[k].line = c[k].ways = -1;
                if (!(c[k].covered = calloc(words, sizeof(uint64_t))))
                    return -ENOMEM;
                char val[32];
                snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/cache/index%d/size", cpu, idx);
                if (sysattr_read_str(sys, path, val, sizeof(val)) > 0 && parse_size(val, &c[k].size) < 0)
                    c[k].size = -1;
                snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/cache/index%d/coherency_line_size",
                         cpu, idx);
                if (sysattr_read_i64(sys, path, &c[k].line) < 0)
                    c[k].line = -1;
                snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/cache/index%d/ways_of_associativity",
                         cpu, idx);
                if (sysattr_read_i64(sys, path, &c[k].ways) < 0)
                    c[k].ways = -1;
                nc++;
            }
            if (cpulist_has(c[k].covered, nbits, cpu))
                continue; /* in an instance already counted: no need to read its list */
            snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/cache/index%d/shared_cpu_list", cpu, idx);
            uint64_t *set = calloc(words, sizeof(uint64_t));
            if (!set)
                return -ENOMEM;
            int shared =
                sysattr_read_str(sys, path, list, sizeof(list)) >= 0 ? cpulist_parse(list, set, nbits) : -1;
            if (shared <= 0) { /* unknown: an instance of its own */
                shared = 1;
                set[cpu / 64] |= (uint64_t)1 << (cpu % 64);
            }
            for (size_t w = 0; w < words; w++)
                c[k].covered[w] |= set[w];
            c[k].covered[cpu / 64] |= (uint64_t)1 << (cpu % 64);
            free(set);
            if (!c[k].instances)
                c[k].shared = shared;
            c[k].instances++;
        }
    }
    return nc;
}

/* add_cache_num: the row cache.NAME.FIELD = v. */
static int add_cache_num(js_rows_t *inv, const char *name, const char *field, long long v)
{
    char key[64];
    int n = snprintf(key, sizeof(key), "cache.%.8s.%s", name, field);
    if (n < 0 || (size_t)n >= sizeof(key))
        return -EINVAL;
    return inventory_addf(inv, SRC, key, "%lld", v);
}

static int add_caches(js_rows_t *inv, const cache_t *c, int nc)
{
    int r = 0;
    for (int k = 0; r == 0 && k < nc; k++) {
        if (c[k].size >= 0) {
            r = add_cache_num(inv, c[k].name, "size_bytes", c[k].size);
            if (r == 0)
                r = add_cache_num(inv, c[k].name, "total_bytes", (long long)c[k].size * c[k].instances);
        }
        if (r == 0)
            r = add_cache_num(inv, c[k].name, "instances", c[k].instances);
        if (r == 0)
            r = add_cache_num(inv, c[k].name, "shared_cpus", c[k].shared);
        if (r == 0 && c[k].line > 0)
            r = add_cache_num(inv, c[k].name, "line_bytes", c[k].line);
        if (r == 0 && c[k].ways > 0)
            r = add_cache_num(inv, c[k].name, "ways", c[k].ways);
    }
    return r;
}

/* same_prefix: whether CPUs a and b share their package (level 1), package and die (2), or core (3). */
static bool same_prefix(const cpu_topo_t *a, const cpu_topo_t *b, int level)
{
    return a->package == b->package && (level < 2 || a->die == b->die) && (level < 3 || a->core == b->core);
}

/* count_distinct: the number of distinct level-`level` prefixes in sorted `t`; *ret_max_per the largest
 * number of distinct level-`level` items within one item of the level above (may be NULL). */
static int count_distinct(const cpu_topo_t *t, size_t n, int level, int *ret_max_per)
{
    int distinct = 0, per = 0, max_per = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || (level > 1 && !same_prefix(&t[i], &t[i - 1], level - 1)))
            per = 0;
        if (i == 0 || !same_prefix(&t[i], &t[i - 1], level)) {
            distinct++;
            if (++per > max_per)
                max_per = per;
        }
    }
    if (ret_max_per)
        *ret_max_per = max_per;
    return distinct;
}

/* threads_per_core: the largest number of CPUs on one core in sorted `t`. */
static int threads_per_core(const cpu_topo_t *t, size_t n)
{
    int per = 0, max_per = 0;
    for (size_t i = 0; i < n; i++) {
        per = i && same_prefix(&t[i], &t[i - 1], 3) ? per + 1 : 1;
        if (per > max_per)
            max_per = per;
    }
    return max_per;
}

static int add_topology(js_rows_t *inv, int sys, bool *ret_have_caches)
{
    *ret_have_caches = false;
    char list[4096];
    if (sysattr_read_str(sys, "devices/system/cpu/online", list, sizeof(list)) < 0)
        return 0;
    int ncpu = cpulist_parse(list, NULL, 0);
    if (ncpu <= 0)
        return 0;
    /* the bitmap spans the largest CPU number in the list */
    size_t nbits = 0;
    for (const char *p = list; *p;) {
        uint64_t v;
        if (parse_u64(&p, &v) == 0 && v + 1 > nbits && v < (1u << 22))
            nbits = (size_t)v + 1;
        else if (*p)
            p++;
    }
    uint64_t *online = calloc((nbits + 63) / 64, sizeof(uint64_t));
    cpu_topo_t *t = calloc((size_t)ncpu, sizeof(*t));
    cache_t caches[MAX_CACHES];
    int nc = 0, r = -ENOMEM;
    if (!online || !t)
        goto out;
    cpulist_parse(list, online, nbits);
    r = inventory_add(inv, SRC, "cpu.online", list);
    if (r == 0)
        r = inventory_addf(inv, SRC, "cpu.count", "%d", ncpu);
    size_t n = 0;
    for (size_t cpu = 0; r == 0 && cpu < nbits && n < (size_t)ncpu; cpu++) {
        if (!cpulist_has(online, nbits, cpu))
            continue;
        char path[128];
        cpu_topo_t *x = &t[n];
        x->cpu = (int)cpu;
        snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/topology/physical_package_id", cpu);
        if (sysattr_read_i64(sys, path, &x->package) < 0)
            continue;
        snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/topology/die_id", cpu);
        if (sysattr_read_i64(sys, path, &x->die) < 0)
            x->die = 0;
        snprintf(path, sizeof(path), "devices/system/cpu/cpu%zu/topology/core_id", cpu);
        if (sysattr_read_i64(sys, path, &x->core) < 0)
            continue;
        n++;
    }
    if (r == 0 && n) {
        qsort(t, n, sizeof(*t), topo_cmp);
        int sockets = count_distinct(t, n, 1, NULL);
        int dies = count_distinct(t, n, 2, NULL);
        int cores = count_distinct(t, n, 3, NULL);
        /* cores per socket: the largest number of distinct (die, core) pairs in one package */
        int cores_per_socket = 0;
        for (size_t i = 0, per = 0; i < n; i++) {
            if (i == 0 || !same_prefix(&t[i], &t[i - 1], 1))
                per = 0;
            if (i == 0 || !same_prefix(&t[i], &t[i - 1], 3))
                per++;
            if ((int)per > cores_per_socket)
                cores_per_socket = (int)per;
        }
        r = inventory_addf(inv, SRC, "cpu.sockets", "%d", sockets);
        if (r == 0)
            r = inventory_addf(inv, SRC, "cpu.dies", "%d", dies);
        if (r == 0)
            r = inventory_addf(inv, SRC, "cpu.cores", "%d", cores);
        if (r == 0)
            r = inventory_addf(inv, SRC, "cpu.threads", "%zu", n);
        if (r == 0)
            r = inventory_addf(inv, SRC, "cpu.cores_per_socket", "%d", cores_per_socket);
        if (r == 0)
            r = inventory_addf(inv, SRC, "cpu.threads_per_core", "%d", threads_per_core(t, n));
    }
    if (r == 0) {
        nc = scan_caches(sys, online, nbits, caches);
        if (nc < 0) {
            r = nc;
            nc = 0;
        } else {
            *ret_have_caches = nc > 0;
            r = add_caches(inv, caches, nc);
        }
    }
out:
    for (int k = 0; k < nc; k++)
        free(caches[k].covered);
    free(online);
    free(t);
    return r;
}

/* ---- NUMA, memory, kernel, platform --------------------------------------------------------------- */

static int add_numa(js_rows_t *inv, int sys)
{
    char list[1024];
    if (sysattr_read_str(sys, "devices/system/node/online", list, sizeof(list)) < 0)
        return 0;
    int n = cpulist_parse(list, NULL, 0);
    if (n <= 0)
        return 0;
    int r = inventory_addf(inv, SRC, "numa.nodes", "%d", n);
    if (r == 0)
        r = inventory_add(inv, SRC, "numa.online", list);
    uint64_t set[16]; /* nodes 0..1023 */
    cpulist_parse(list, set, 1024);
    js_buf_t b = {0};
    for (size_t node = 0; r == 0 && node < 1024; node++) {
        if (!cpulist_has(set, 1024, node))
            continue;
        char path[96], key[64], cpus[4096];
        snprintf(path, sizeof(path), "devices/system/node/node%zu/cpulist", node);
        snprintf(key, sizeof(key), "numa.node%zu.cpus", node);
        if (sysattr_read_str(sys, path, cpus, sizeof(cpus)) >= 0)
            r = inventory_add(inv, SRC, key, cpus);
        snprintf(path, sizeof(path), "devices/system/node/node%zu/meminfo", node);
        if (r == 0 && fs_read(sys, path, &b) == 0) {
            char needle[64];
            snprintf(needle, sizeof(needle), "Node %zu MemTotal:", node);
            const char *p = strstr(b.p, needle);
            uint64_t kb;
            if (p && kv_u64(p, needle, &kb) == 0) {
                snprintf(key, sizeof(key), "numa.node%zu.mem_total_bytes", node);
                r = inventory_addf(inv, SRC, key, "%llu", (unsigned long long)kb * 1024);
            }
        }
    }
    buf_free(&b);
    return r;
}

static int add_memory(js_rows_t *inv, int proc)
{
    js_buf_t b = {0};
    int r = fs_read(proc, "meminfo", &b);
    if (r < 0) {
        buf_free(&b);
        return r == -ENOMEM ? r : 0;
    }
    static const struct {
        const char *field, *key;
    } fields[] = {{"MemTotal:", "memory.total_bytes"},
                  {"SwapTotal:", "memory.swap_total_bytes"},
                  {"Hugepagesize:", "memory.hugepage_size_bytes"}};
    for (size_t i = 0; r == 0 && i < sizeof(fields) / sizeof(fields[0]); i++) {
        uint64_t kb;
        if (kv_u64(b.p, fields[i].field, &kb) == 0)
            r = inventory_addf(inv, SRC, fields[i].key, "%llu", (unsigned long long)kb * 1024);
    }
    buf_free(&b);
    return r;
}

static int host_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    (void)state;
    int proc = ctx->root.proc, sys = ctx->root.sys;
    static const struct {
        const char *path, *key;
    } kernel[] = {{"sys/kernel/hostname", "hostname"},
                  {"sys/kernel/ostype", "kernel.ostype"},
                  {"sys/kernel/osrelease", "kernel.release"},
                  {"sys/kernel/version", "kernel.version"},
                  {"sys/kernel/random/boot_id", "boot_id"}};
    int r = 0;
    for (size_t i = 0; r == 0 && i < sizeof(kernel) / sizeof(kernel[0]); i++)
        r = add_file(inv, proc, kernel[i].path, kernel[i].key);
    struct utsname u;
    if (r == 0 && fsroot_is_live(&ctx->root) && uname(&u) == 0)
        r = inventory_add(inv, SRC, "machine", u.machine);
    bool have_caches = false;
    if (r == 0 && sys >= 0)
        r = add_topology(inv, sys, &have_caches);
    if (r == 0)
        r = add_cpuinfo(inv, proc, have_caches);
    if (r == 0 && sys >= 0)
        r = add_numa(inv, sys);
    if (r == 0)
        r = add_memory(inv, proc);
    static const char *const dmi[] = {"sys_vendor", "product_name", "product_version", "board_vendor",
                                      "board_name", "bios_vendor",  "bios_version",    "bios_date"};
    for (size_t i = 0; r == 0 && i < sizeof(dmi) / sizeof(dmi[0]); i++) {
        char path[64], key[64];
        snprintf(path, sizeof(path), "class/dmi/id/%s", dmi[i]);
        snprintf(key, sizeof(key), "dmi.%s", dmi[i]);
        r = add_file(inv, sys, path, key);
    }
    return r;
}

static const js_table_t *const host_tables[] = {NULL};

const js_source_t source_host = {
    .name = "host",
    .help = "hardware inventory: CPU model, topology, caches, NUMA nodes, memory, kernel, platform",
    .tables = host_tables,
    .inventory = host_inventory,
};
