/* SPDX-License-Identifier: MIT
 *
 * A fake librocm_smi64.so.1 for tests: the ROCm SMI entry points jobscope uses, behaving as
 * librocm_smi64 5.2.3 (Debian's librocm-smi64-1, upstream tag rocm-5.2.3) does, driven by a scenario file
 * named by $FAKE_ROCM_SMI_SCENARIO read at the rsmi_init that takes the reference count from 0 to 1 (format:
 * tests/fakes/README.md). What it emulates, from that release's source: reference-counted rsmi_init /
 * rsmi_shut_down (shut down when not initialised is RSMI_STATUS_INIT_ERROR; without a scenario rsmi_init
 * fails with RSMI_STATUS_INIT_ERROR, as on a machine without amdgpu); a device index out of range, which
 * includes every index before rsmi_init, is RSMI_STATUS_INVALID_ARGS; a NULL output pointer is
 * RSMI_STATUS_INVALID_ARGS when the call is supported and RSMI_STATUS_NOT_SUPPORTED when not (the library's
 * CHK_SUPPORT probe); rsmi_compute_process_info_get fills only process_id and pasid and, given too small an
 * array, returns RSMI_STATUS_INSUFFICIENT_SIZE with *num_items left as it was (the needed count is only
 * reported for procs == NULL); rsmi_compute_process_info_by_pid_get sums VRAM and SDMA time over the GPUs and
 * averages CU occupancy over all GPUs' compute units; rsmi_dev_energy_count_get returns an accumulator in
 * units of 15.3 uJ (the resolution it reports) integrated from the scenario's power, restarting at 0 at a
 * "driver reload", with a ns timestamp; clock and PCIe levels are written in the 5.x layout of
 * rsmi_frequencies_t, or in 6.x's (`frequencies_layout 6`). A value the scenario does not give makes its call
 * RSMI_STATUS_NOT_SUPPORTED. rsmi_compute_process_info_by_device_get (ROCm 5.7+) is exported too; a scenario
 * line `omit rsmi_compute_process_info_by_device_get` makes the fake look exactly like 5.2.3.
 *
 * Not thread-safe. Scenario errors are printed on stderr: this is a test fixture, not library code.
 */
#include "fake_common.h"
#include "sources/rocm_smi_abi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 16
#define SCENARIO_ENV "FAKE_ROCM_SMI_SCENARIO"
#define SPEED_ENV "FAKE_ROCM_SMI_SPEED"
#define TIME_FILE_ENV "FAKE_ROCM_SMI_TIME_FILE"
#define ENERGY_RESOLUTION_UJ 15.3f /* kEnergyCounterResolution in rocm_smi.cc */
#define TIMESTAMP_BASE_NS 1000000000000ULL

enum {
    V_BUSY,
    V_MEM_BUSY,
    V_VRAM_USED,
    V_VIS_VRAM_USED,
    V_GTT_USED,
    V_POWER,
    V_POWER_CAP,
    V_TEMP_EDGE,
    V_TEMP_JUNCTION,
    V_TEMP_MEMORY,
    V_FAN,
    V_FAN_MAX,
    V_SCLK_LEVEL,
    V_MCLK_LEVEL,
    V_SOCCLK_LEVEL,
    V_FCLK_LEVEL,
    V_DCEFCLK_LEVEL,
    V_PCIE_LEVEL,
    V_PCIE_SENT,
    V_PCIE_RECEIVED,
    V_PCIE_MAX_PKT,
    V_PCIE_REPLAY,
    V_PERF_LEVEL,
    V__MAX
};

static const char *const value_names[V__MAX] = {
    [V_BUSY] = "busy_pct",
    [V_MEM_BUSY] = "mem_busy_pct",
    [V_VRAM_USED] = "vram_used_bytes",
    [V_VIS_VRAM_USED] = "vis_vram_used_bytes",
    [V_GTT_USED] = "gtt_used_bytes",
    [V_POWER] = "power_uw",
    [V_POWER_CAP] = "power_cap_uw",
    [V_TEMP_EDGE] = "temp_edge_mc",
    [V_TEMP_JUNCTION] = "temp_junction_mc",
    [V_TEMP_MEMORY] = "temp_memory_mc",
    [V_FAN] = "fan_speed",
    [V_FAN_MAX] = "fan_speed_max",
    [V_SCLK_LEVEL] = "sclk_level",
    [V_MCLK_LEVEL] = "mclk_level",
    [V_SOCCLK_LEVEL] = "socclk_level",
    [V_FCLK_LEVEL] = "fclk_level",
    [V_DCEFCLK_LEVEL] = "dcefclk_level",
    [V_PCIE_LEVEL] = "pcie_level",
    [V_PCIE_SENT] = "pcie_sent_bps",
    [V_PCIE_RECEIVED] = "pcie_received_bps",
    [V_PCIE_MAX_PKT] = "pcie_max_pkt_sz",
    [V_PCIE_REPLAY] = "pcie_replay_count",
    [V_PERF_LEVEL] = "perf_level",
};

/* clock domains with level tables: RSMI_CLK_TYPE_SYS, DF, DCEF, SOC, MEM, and PCIe */
enum { CLK_SYS, CLK_DF, CLK_DCEF, CLK_SOC, CLK_MEM, CLK_PCIE, CLK__MAX };
static const char *const clock_names[CLK__MAX] = {"sys", "df", "dcef", "soc", "mem", "pcie"};
static const int clock_level_value[CLK__MAX] = {V_SCLK_LEVEL,   V_FCLK_LEVEL, V_DCEFCLK_LEVEL,
                                                V_SOCCLK_LEVEL, V_MCLK_LEVEL, V_PCIE_LEVEL};

typedef struct {
    char sym[96];
    int arg;
    rsmi_status_t code;
    double from, to;
} rule_t;

typedef struct {
    char sym[96];
    double ms;
} delay_t;

typedef struct {
    fk_pid_t pid;
    uint32_t pasid;
    uint64_t vram; /* bytes */
    uint64_t sdma; /* us */
    uint32_t cu;   /* percent of this GPU's compute units */
    double from, to;
} proc_t;

typedef struct {
    char name[128];
    char serial[64];
    uint64_t unique_id;
    uint16_t device_id;
    uint64_t bdfid;
    double vram_total, vis_vram_total, gtt_total;
    uint32_t cu_count;
    double lost_at;
    rsmi_status_t lost_status;
    double energy_start_uj;
    double reloads[16];
    size_t nreloads;
    uint32_t nlevels[CLK__MAX];
    uint64_t levels[CLK__MAX][RSMI_MAX_NUM_FREQUENCIES]; /* Hz, or T/s for PCIe */
    uint32_t lanes[RSMI_MAX_NUM_FREQUENCIES];
    fk_series_t v[V__MAX];
    rule_t *rules;
    size_t nrules;
    proc_t *procs;
    size_t nprocs;
} fdev_t;

static struct {
    int refcount;
    fk_clock_t clock;
    char driver[128];
    uint32_t lib_major, lib_minor, lib_patch;
    char lib_build[32];
    int freq_layout; /* 5 or 6 */
    rsmi_status_t init_error;
    rule_t *rules;
    size_t nrules;
    delay_t *delays;
    size_t ndelays;
    uint32_t ndev;
    fdev_t dev[MAXDEV];
} S;

bool fk_omitted(const char *sym)
{
    return fk_scenario_omits(SCENARIO_ENV, sym);
}

/* ---- scenario parsing ---- */

static const struct {
    const char *name;
    rsmi_status_t code;
} codes[] = {
    {"SUCCESS", RSMI_STATUS_SUCCESS},
    {"INVALID_ARGS", RSMI_STATUS_INVALID_ARGS},
    {"NOT_SUPPORTED", RSMI_STATUS_NOT_SUPPORTED},
    {"FILE_ERROR", RSMI_STATUS_FILE_ERROR},
    {"PERMISSION", RSMI_STATUS_PERMISSION},
    {"OUT_OF_RESOURCES", RSMI_STATUS_OUT_OF_RESOURCES},
    {"INTERNAL_EXCEPTION", RSMI_STATUS_INTERNAL_EXCEPTION},
    {"INPUT_OUT_OF_BOUNDS", RSMI_STATUS_INPUT_OUT_OF_BOUNDS},
    {"INIT_ERROR", RSMI_STATUS_INIT_ERROR},
    {"NOT_YET_IMPLEMENTED", RSMI_STATUS_NOT_YET_IMPLEMENTED},
    {"NOT_FOUND", RSMI_STATUS_NOT_FOUND},
    {"INSUFFICIENT_SIZE", RSMI_STATUS_INSUFFICIENT_SIZE},
    {"INTERRUPT", RSMI_STATUS_INTERRUPT},
    {"UNEXPECTED_SIZE", RSMI_STATUS_UNEXPECTED_SIZE},
    {"NO_DATA", RSMI_STATUS_NO_DATA},
    {"UNEXPECTED_DATA", RSMI_STATUS_UNEXPECTED_DATA},
    {"BUSY", RSMI_STATUS_BUSY},
    {"REFCOUNT_OVERFLOW", RSMI_STATUS_REFCOUNT_OVERFLOW},
    {"UNKNOWN_ERROR", RSMI_STATUS_UNKNOWN_ERROR},
};

static int parse_code(const char *s, rsmi_status_t *ret)
{
    if (strncmp(s, "RSMI_STATUS_", 12) == 0)
        s += 12;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        if (strcmp(s, codes[i].name) == 0) {
            *ret = codes[i].code;
            return 0;
        }
    }
    return -1;
}

static int parse_u64(const char *s, uint64_t *ret)
{
    double v;
    if (strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0) {
        char *end;
        unsigned long long x = strtoull(s, &end, 16);
        if (*end)
            return -1;
        *ret = x;
        return 0;
    }
    if (fk_parse_value(s, &v) < 0 || v < 0 || v >= 1.8e19 || v != floor(v))
        return -1;
    *ret = (uint64_t)v;
    return 0;
}

static int parse_u32(const char *s, uint32_t *ret)
{
    uint64_t v;
    if (parse_u64(s, &v) < 0 || v > 0xFFFFFFFFu)
        return -1;
    *ret = (uint32_t)v;
    return 0;
}

static void dev_defaults(fdev_t *d, uint32_t index)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "AMD Fake GPU");
    snprintf(d->serial, sizeof(d->serial), "FAKE%012x", index);
    d->unique_id = 0x1000000000000000ULL + index;
    d->device_id = 0x740c;
    d->bdfid = (uint64_t)(0x10u + index) << 8;
    d->cu_count = 104;
    d->lost_at = FK_NEVER;
    d->lost_status = RSMI_STATUS_UNKNOWN_ERROR;
}

static void free_state(void)
{
    for (int i = 0; i < MAXDEV; i++) {
        fdev_t *d = &S.dev[i];
        for (int k = 0; k < V__MAX; k++)
            fk_series_free(&d->v[k]);
        for (size_t k = 0; k < d->nprocs; k++)
            fk_pid_free(&d->procs[k].pid);
        free(d->procs);
        free(d->rules);
    }
    free(S.rules);
    free(S.delays);
    int refcount = S.refcount;
    memset(&S, 0, sizeof(S));
    S.refcount = refcount;
}

__attribute__((destructor)) static void fake_unload(void)
{
    free_state();
}

static void *grow(void *p, size_t *n, size_t size)
{
    void *q = realloc(p, (*n + 1) * size);
    if (q) {
        memset((char *)q + *n * size, 0, size);
        (*n)++;
    }
    return q;
}

static int add_rule(rule_t **rules, size_t *n, char **tok, int ntok, char *err, size_t errlen)
{
    rule_t r = {.arg = -1, .from = -FK_NEVER, .to = FK_NEVER};
    if (ntok < 3 || parse_code(tok[2], &r.code) < 0) {
        snprintf(err, errlen, "error SYMBOL STATUS [arg N] [from T] [to T] (STATUS as RSMI_STATUS_*)");
        return -1;
    }
    fk_strlcpy(r.sym, tok[1], sizeof(r.sym));
    int i = 3;
    uint32_t a;
    if (i + 1 < ntok && strcmp(tok[i], "arg") == 0) {
        if (parse_u32(tok[i + 1], &a) < 0)
            return -1;
        r.arg = (int)a;
        i += 2;
    }
    if (fk_window(tok, ntok, &i, &r.from, &r.to) < 0 || i != ntok) {
        snprintf(err, errlen, "bad error rule (expected [arg N] [from T] [to T])");
        return -1;
    }
    rule_t *q = grow(*rules, n, sizeof(**rules));
    if (!q)
        return -1;
    *rules = q;
    q[*n - 1] = r;
    return 0;
}

static int parse_proc(fdev_t *d, char **tok, int ntok, bool range, char *err, size_t errlen)
{
    /* proc PID [pasid N] vram BYTES [sdma US] [cu PCT] [from T] [to T]
     * proc_range COUNT FIRSTPID vram BYTES ... */
    proc_t p = {.from = -FK_NEVER, .to = FK_NEVER};
    uint32_t count = 1;
    int i = 1;
    if (range && (ntok < 3 || parse_u32(tok[i++], &count) < 0)) {
        snprintf(err, errlen, "proc_range COUNT FIRSTPID vram BYTES ...");
        return -1;
    }
    if (i >= ntok) {
        snprintf(err, errlen, "proc PID [pasid N] vram BYTES [sdma US] [cu PCT] [from T] [to T]");
        return -1;
    }
    const char *pidtok = tok[i++];
    bool pasid_set = false;
    for (; i + 1 < ntok; i += 2) {
        if (strcmp(tok[i], "pasid") == 0 && parse_u32(tok[i + 1], &p.pasid) == 0)
            pasid_set = true;
        else if (strcmp(tok[i], "vram") == 0 && parse_u64(tok[i + 1], &p.vram) == 0)
            continue;
        else if (strcmp(tok[i], "sdma") == 0 && parse_u64(tok[i + 1], &p.sdma) == 0)
            continue;
        else if (strcmp(tok[i], "cu") == 0 && parse_u32(tok[i + 1], &p.cu) == 0)
            continue;
        else if (strcmp(tok[i], "from") == 0 || strcmp(tok[i], "to") == 0)
            break;
        else {
            snprintf(err, errlen, "proc: unexpected '%s'", tok[i]);
            return -1;
        }
    }
    if (fk_window(tok, ntok, &i, &p.from, &p.to) < 0 || i != ntok) {
        snprintf(err, errlen, "proc: bad trailing '%s'", i < ntok ? tok[i] : "");
        return -1;
    }
    double first = 0;
    if (range && (fk_parse_value(pidtok, &first) < 0 || first <= 0)) {
        snprintf(err, errlen, "proc_range needs a literal first PID");
        return -1;
    }
    for (uint32_t k = 0; k < count; k++) {
        proc_t q = p;
        char num[32];
        snprintf(num, sizeof(num), "%.0f", first + k);
        if (fk_pid_parse(&q.pid, range ? num : pidtok) < 0) {
            snprintf(err, errlen, "bad PID '%s' (N, $VAR or file:PATH)", pidtok);
            return -1;
        }
        if (!pasid_set || range)
            q.pasid = p.pasid + (pasid_set ? k : 0x8000u + (uint32_t)d->nprocs);
        proc_t *arr = grow(d->procs, &d->nprocs, sizeof(*d->procs));
        if (!arr) {
            fk_pid_free(&q.pid);
            return -1;
        }
        d->procs = arr;
        arr[d->nprocs - 1] = q;
    }
    return 0;
}

static int value_index(const char *name)
{
    for (int k = 0; k < V__MAX; k++)
        if (strcmp(value_names[k], name) == 0)
            return k;
    return -1;
}

static int parse_levels(fdev_t *d, char **tok, int n, char *err, size_t errlen)
{
    /* clocks DOMAIN MHZ... | pcie_levels GTS:LANES... */
    bool pcie = strcmp(tok[0], "pcie_levels") == 0;
    int c = CLK_PCIE, i = 1;
    if (!pcie) {
        for (c = 0; c < CLK_PCIE; c++)
            if (n > 1 && strcmp(tok[1], clock_names[c]) == 0)
                break;
        if (c == CLK_PCIE) {
            snprintf(err, errlen, "clocks sys|df|dcef|soc|mem MHZ...");
            return -1;
        }
        i = 2;
    }
    if (n - i < 1 || n - i > RSMI_MAX_NUM_FREQUENCIES) {
        snprintf(err, errlen, "1 to %d levels expected", RSMI_MAX_NUM_FREQUENCIES);
        return -1;
    }
    d->nlevels[c] = 0;
    for (; i < n; i++) {
        double v, lanes = 0;
        char *colon = pcie ? strchr(tok[i], ':') : NULL;
        if (colon)
            *colon = '\0';
        if (fk_parse_value(tok[i], &v) < 0 || (pcie && (!colon || fk_parse_value(colon + 1, &lanes) < 0))) {
            snprintf(err, errlen, "bad level '%s' (clocks DOMAIN MHZ..., pcie_levels GTS:LANES...)", tok[i]);
            return -1;
        }
        uint32_t k = d->nlevels[c]++;
        d->levels[c][k] = (uint64_t)llround(pcie ? v * 1e9 : v * 1e6);
        if (pcie)
            d->lanes[k] = (uint32_t)lanes;
    }
    return 0;
}

static int parse_line(char **tok, int n, fdev_t **cur, char *err, size_t errlen)
{
    const char *kw = tok[0];
    fdev_t *d = *cur;
    double v;
    uint32_t u;
    if (strcmp(kw, "omit") == 0)
        return 0;
    if (strcmp(kw, "driver_version") == 0 && n == 2) {
        fk_strlcpy(S.driver, tok[1], sizeof(S.driver));
        return 0;
    }
    if (strcmp(kw, "library_version") == 0 && (n == 2 || n == 3)) {
        if (sscanf(tok[1], "%u.%u.%u", &S.lib_major, &S.lib_minor, &S.lib_patch) != 3)
            return -1;
        fk_strlcpy(S.lib_build, n == 3 ? tok[2] : "0", sizeof(S.lib_build));
        return 0;
    }
    if (strcmp(kw, "frequencies_layout") == 0 && n == 2 && parse_u32(tok[1], &u) == 0 && (u == 5 || u == 6)) {
        S.freq_layout = (int)u;
        return 0;
    }
    if (strcmp(kw, "init_error") == 0 && n == 2 && parse_code(tok[1], &S.init_error) == 0)
        return 0;
    if (strcmp(kw, "delay") == 0 && n == 3 && fk_parse_value(tok[2], &v) == 0) {
        delay_t *q = grow(S.delays, &S.ndelays, sizeof(*S.delays));
        if (!q)
            return -1;
        S.delays = q;
        fk_strlcpy(q[S.ndelays - 1].sym, tok[1], sizeof(q->sym));
        q[S.ndelays - 1].ms = v;
        return 0;
    }
    if (strcmp(kw, "error") == 0)
        return d ? add_rule(&d->rules, &d->nrules, tok, n, err, errlen)
                 : add_rule(&S.rules, &S.nrules, tok, n, err, errlen);
    if (strcmp(kw, "device") == 0) {
        if (n != 2 || parse_u32(tok[1], &u) < 0 || u >= MAXDEV || u != S.ndev) {
            snprintf(err, errlen, "device N: indices start at 0, in order, below %d", MAXDEV);
            return -1;
        }
        *cur = &S.dev[u];
        dev_defaults(*cur, u);
        S.ndev++;
        return 0;
    }
    if (!d) {
        snprintf(err, errlen, "'%s' outside a device block, or unknown", kw);
        return -1;
    }
    if (strcmp(kw, "name") == 0 && n == 2) {
        fk_strlcpy(d->name, tok[1], sizeof(d->name));
    } else if (strcmp(kw, "serial") == 0 && n == 2) {
        fk_strlcpy(d->serial, tok[1], sizeof(d->serial));
    } else if (strcmp(kw, "unique_id") == 0 && n == 2 && parse_u64(tok[1], &d->unique_id) == 0) {
    } else if (strcmp(kw, "device_id") == 0 && n == 2 && parse_u32(tok[1], &u) == 0 && u <= 0xFFFF) {
        d->device_id = (uint16_t)u;
    } else if (strcmp(kw, "pci") == 0 && n == 2) {
        unsigned dom, bus, dv, fn;
        char tail;
        if (sscanf(tok[1], "%x:%x:%x.%x%c", &dom, &bus, &dv, &fn, &tail) != 4) {
            snprintf(err, errlen, "pci DOMAIN:BUS:DEVICE.FUNCTION");
            return -1;
        }
        d->bdfid = (uint64_t)dom << 32 | (bus & 0xFFu) << 8 | (dv & 0x1Fu) << 3 | (fn & 0x7u);
    } else if (strcmp(kw, "vram_total") == 0 && n == 2 && fk_parse_value(tok[1], &d->vram_total) == 0) {
    } else if (strcmp(kw, "vis_vram_total") == 0 && n == 2 &&
               fk_parse_value(tok[1], &d->vis_vram_total) == 0) {
    } else if (strcmp(kw, "gtt_total") == 0 && n == 2 && fk_parse_value(tok[1], &d->gtt_total) == 0) {
    } else if (strcmp(kw, "cu_count") == 0 && n == 2 && parse_u32(tok[1], &d->cu_count) == 0) {
    } else if (strcmp(kw, "energy_start_uj") == 0 && n == 2 &&
               fk_parse_value(tok[1], &d->energy_start_uj) == 0) {
    } else if (strcmp(kw, "lost") == 0 && (n == 2 || n == 3) && fk_parse_value(tok[1], &d->lost_at) == 0) {
        if (n == 3 && parse_code(tok[2], &d->lost_status) < 0)
            return -1;
    } else if (strcmp(kw, "reload") == 0 && n == 2 && fk_parse_value(tok[1], &v) == 0) {
        if (d->nreloads == sizeof(d->reloads) / sizeof(d->reloads[0]) ||
            (d->nreloads && v <= d->reloads[d->nreloads - 1])) {
            snprintf(err, errlen, "reload times must increase (at most 16)");
            return -1;
        }
        d->reloads[d->nreloads++] = v;
    } else if (strcmp(kw, "clocks") == 0 || strcmp(kw, "pcie_levels") == 0) {
        return parse_levels(d, tok, n, err, errlen);
    } else if (strcmp(kw, "value") == 0 && n >= 3) {
        int k = value_index(tok[1]);
        if (k < 0) {
            snprintf(err, errlen, "unknown value '%s'", tok[1]);
            return -1;
        }
        return fk_series_parse(&d->v[k], tok + 2, n - 2, err, errlen);
    } else if (strcmp(kw, "proc") == 0) {
        return parse_proc(d, tok, n, false, err, errlen);
    } else if (strcmp(kw, "proc_range") == 0) {
        return parse_proc(d, tok, n, true, err, errlen);
    } else {
        snprintf(err, errlen, "unknown or malformed '%s'", kw);
        return -1;
    }
    return 0;
}

static rsmi_status_t load_scenario(void)
{
    free_state();
    fk_strlcpy(S.driver, "6.1.0", sizeof(S.driver));
    S.lib_major = 1; /* what Debian's 5.2.3 build reports */
    fk_strlcpy(S.lib_build, "0", sizeof(S.lib_build));
    S.freq_layout = 5;
    const char *path = getenv(SCENARIO_ENV);
    if (!path || !*path)
        return RSMI_STATUS_INIT_ERROR; /* like a machine without amdgpu/kfd */
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "fake_rocm_smi: cannot open $%s=%s\n", SCENARIO_ENV, path);
        return RSMI_STATUS_INIT_ERROR;
    }
    char line[4096];
    int lineno = 0;
    fdev_t *cur = NULL;
    rsmi_status_t rc = RSMI_STATUS_SUCCESS;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *tok[FK_MAX_TOKENS];
        int n = fk_tokenize(line, tok);
        char err[256] = "malformed line";
        if (n == 0)
            continue;
        if (n < 0 || parse_line(tok, n, &cur, err, sizeof(err)) < 0) {
            fprintf(stderr, "fake_rocm_smi: %s:%d: %s\n", path, lineno, err);
            rc = RSMI_STATUS_INIT_ERROR;
            break;
        }
    }
    fclose(f);
    if (rc != RSMI_STATUS_SUCCESS)
        free_state();
    return rc;
}

/* ---- entry helpers ---- */

typedef struct {
    fdev_t *d;
    double t;
} call_t;

static void apply_delay(const char *sym)
{
    for (size_t i = 0; i < S.ndelays; i++)
        if (strcmp(S.delays[i].sym, sym) == 0)
            fk_sleep_ms(S.delays[i].ms);
}

static rsmi_status_t rule_code(const rule_t *rules, size_t n, const char *sym, int arg, double t)
{
    for (size_t i = 0; i < n; i++) {
        const rule_t *r = &rules[i];
        if (strcmp(r->sym, sym) == 0 && (r->arg < 0 || r->arg == arg) && t >= r->from && t < r->to)
            return r->code;
    }
    return RSMI_STATUS_SUCCESS;
}

/* The common start of a device call, in rocm_smi.cc's order: device index in range (none before rsmi_init),
 * the CHK_SUPPORT probe for a NULL output (`probe`: supported -> INVALID_ARGS, else NOT_SUPPORTED), the
 * scenario's delay, lost device, error rules, and `supported` (values the scenario gives). */
static rsmi_status_t enter(uint32_t dv_ind, const char *sym, int arg, bool probe, bool supported, call_t *c)
{
    if (dv_ind >= S.ndev)
        return RSMI_STATUS_INVALID_ARGS;
    c->d = &S.dev[dv_ind];
    c->t = fk_clock_now(&S.clock);
    rsmi_status_t rc = rule_code(c->d->rules, c->d->nrules, sym, arg, c->t);
    if (rc == RSMI_STATUS_SUCCESS)
        rc = rule_code(S.rules, S.nrules, sym, arg, c->t);
    if (probe)
        return supported && rc != RSMI_STATUS_NOT_SUPPORTED ? RSMI_STATUS_INVALID_ARGS
                                                            : RSMI_STATUS_NOT_SUPPORTED;
    apply_delay(sym);
    if (c->t >= c->d->lost_at)
        return c->d->lost_status;
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    return supported ? RSMI_STATUS_SUCCESS : RSMI_STATUS_NOT_SUPPORTED;
}

static bool has(uint32_t dv_ind, int k)
{
    return dv_ind < S.ndev && S.dev[dv_ind].v[k].set;
}

static double val(const call_t *c, int k)
{
    return fk_series_at(&c->d->v[k], c->t);
}

static uint64_t u64val(double v)
{
    return v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

static double last_reload(const fdev_t *d, double t)
{
    double r = -1;
    for (size_t i = 0; i < d->nreloads && d->reloads[i] <= t; i++)
        r = d->reloads[i];
    return r;
}

static rsmi_status_t copy_string(char *dst, size_t len, const char *src)
{
    size_t n = fk_strlcpy(dst, src, len);
    return n + 1 > len ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}

/* ---- library ---- */

static rsmi_status_t x_rsmi_init(uint64_t flags)
{
    (void)flags;
    if (S.refcount == 0) {
        rsmi_status_t rc = load_scenario();
        if (rc == RSMI_STATUS_SUCCESS && S.init_error != RSMI_STATUS_SUCCESS)
            rc = S.init_error;
        if (rc != RSMI_STATUS_SUCCESS) {
            free_state();
            return rc;
        }
        fk_clock_start(&S.clock, SPEED_ENV, TIME_FILE_ENV);
    }
    S.refcount++;
    return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t x_rsmi_shut_down(void)
{
    if (S.refcount == 0)
        return RSMI_STATUS_INIT_ERROR;
    if (--S.refcount == 0)
        free_state();
    return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t x_rsmi_status_string(rsmi_status_t status, const char **str)
{
    if (!str)
        return RSMI_STATUS_INVALID_ARGS;
    switch (status) {
    case RSMI_STATUS_SUCCESS:
        *str = "RSMI_STATUS_SUCCESS: The function has been executed successfully.";
        break;
    case RSMI_STATUS_INVALID_ARGS:
        *str = "RSMI_STATUS_INVALID_ARGS: The provided arguments are not valid.";
        break;
    case RSMI_STATUS_NOT_SUPPORTED:
        *str = "RSMI_STATUS_NOT_SUPPORTED: Not supported here.";
        break;
    case RSMI_STATUS_FILE_ERROR:
        *str = "RSMI_STATUS_FILE_ERROR: A file could not be opened or read.";
        break;
    case RSMI_STATUS_PERMISSION:
        *str = "RSMI_STATUS_PERMISSION: Insufficient permission.";
        break;
    case RSMI_STATUS_INIT_ERROR:
        *str = "RSMI_STATUS_INIT_ERROR: Initialization failed.";
        break;
    case RSMI_STATUS_NOT_FOUND:
        *str = "RSMI_STATUS_NOT_FOUND: Not found.";
        break;
    case RSMI_STATUS_INSUFFICIENT_SIZE:
        *str = "RSMI_STATUS_INSUFFICIENT_SIZE: Buffer too small.";
        break;
    default:
        *str = "An unknown error occurred";
        break;
    }
    return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t x_rsmi_version_get(rsmi_version_t *version)
{
    if (!version)
        return RSMI_STATUS_INVALID_ARGS;
    version->major = S.refcount ? S.lib_major : 1;
    version->minor = S.refcount ? S.lib_minor : 0;
    version->patch = S.refcount ? S.lib_patch : 0;
    version->build = S.refcount ? S.lib_build : "0";
    return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t x_rsmi_version_str_get(rsmi_sw_component_t component, char *ver_str, uint32_t len)
{
    if (!ver_str || len == 0 || component != RSMI_SW_COMP_DRIVER)
        return RSMI_STATUS_INVALID_ARGS;
    return copy_string(ver_str, len, S.refcount ? S.driver : "6.1.0");
}

static rsmi_status_t x_rsmi_num_monitor_devices(uint32_t *num)
{
    if (!num)
        return RSMI_STATUS_INVALID_ARGS;
    *num = S.ndev;
    return RSMI_STATUS_SUCCESS;
}

/* ---- identity ---- */

static rsmi_status_t x_rsmi_dev_name_get(uint32_t dv, char *name, size_t len)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_name_get", -1, !name, true, &c);
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    if (len == 0)
        return RSMI_STATUS_INVALID_ARGS;
    return copy_string(name, len, c.d->name);
}

static rsmi_status_t x_rsmi_dev_serial_number_get(uint32_t dv, char *serial, uint32_t len)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_serial_number_get", -1, !serial, true, &c);
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    if (len == 0)
        return RSMI_STATUS_INVALID_ARGS;
    return copy_string(serial, len, c.d->serial);
}

static rsmi_status_t x_rsmi_dev_id_get(uint32_t dv, uint16_t *id)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_id_get", -1, !id, true, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *id = c.d->device_id;
    return rc;
}

static rsmi_status_t x_rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_unique_id_get", -1, !id, true, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *id = c.d->unique_id;
    return rc;
}

static rsmi_status_t x_rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdfid)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_pci_id_get", -1, !bdfid, true, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *bdfid = c.d->bdfid;
    return rc;
}

/* ---- readings ---- */

static rsmi_status_t read_u32(const char *sym, int k, uint32_t dv, uint32_t *out)
{
    call_t c;
    rsmi_status_t rc = enter(dv, sym, -1, !out, has(dv, k), &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *out = (uint32_t)u64val(val(&c, k));
    return rc;
}

static rsmi_status_t x_rsmi_dev_busy_percent_get(uint32_t dv, uint32_t *busy)
{
    return read_u32("rsmi_dev_busy_percent_get", V_BUSY, dv, busy);
}

static rsmi_status_t x_rsmi_dev_memory_busy_percent_get(uint32_t dv, uint32_t *busy)
{
    return read_u32("rsmi_dev_memory_busy_percent_get", V_MEM_BUSY, dv, busy);
}

static rsmi_status_t x_rsmi_dev_perf_level_get(uint32_t dv, rsmi_dev_perf_level_t *perf)
{
    return read_u32("rsmi_dev_perf_level_get", V_PERF_LEVEL, dv, perf);
}

static double mem_total(const fdev_t *d, rsmi_memory_type_t type)
{
    return type == RSMI_MEM_TYPE_VRAM       ? d->vram_total
           : type == RSMI_MEM_TYPE_VIS_VRAM ? d->vis_vram_total
                                            : d->gtt_total;
}

static rsmi_status_t x_rsmi_dev_memory_total_get(uint32_t dv, rsmi_memory_type_t type, uint64_t *total)
{
    call_t c;
    if (type > RSMI_MEM_TYPE_GTT)
        return RSMI_STATUS_INVALID_ARGS;
    bool sup = dv < S.ndev && mem_total(&S.dev[dv], type) > 0;
    rsmi_status_t rc = enter(dv, "rsmi_dev_memory_total_get", (int)type, !total, sup, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *total = u64val(mem_total(c.d, type));
    return rc;
}

static rsmi_status_t x_rsmi_dev_memory_usage_get(uint32_t dv, rsmi_memory_type_t type, uint64_t *used)
{
    static const int which[] = {V_VRAM_USED, V_VIS_VRAM_USED, V_GTT_USED};
    call_t c;
    if (type > RSMI_MEM_TYPE_GTT)
        return RSMI_STATUS_INVALID_ARGS;
    rsmi_status_t rc = enter(dv, "rsmi_dev_memory_usage_get", (int)type, !used, has(dv, which[type]), &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *used =
            u64val(fmin(val(&c, which[type]), mem_total(c.d, type) > 0 ? mem_total(c.d, type) : INFINITY));
    return rc;
}

static rsmi_status_t read_sensor_u64(const char *sym, int k, uint32_t dv, uint32_t sensor, uint64_t *out)
{
    call_t c;
    rsmi_status_t rc = enter(dv, sym, (int)sensor, !out, has(dv, k) && sensor == 0, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *out = u64val(val(&c, k));
    return rc;
}

static rsmi_status_t x_rsmi_dev_power_ave_get(uint32_t dv, uint32_t sensor, uint64_t *power)
{
    return read_sensor_u64("rsmi_dev_power_ave_get", V_POWER, dv, sensor, power);
}

static rsmi_status_t x_rsmi_dev_power_cap_get(uint32_t dv, uint32_t sensor, uint64_t *cap)
{
    return read_sensor_u64("rsmi_dev_power_cap_get", V_POWER_CAP, dv, sensor, cap);
}

static rsmi_status_t x_rsmi_dev_fan_speed_max_get(uint32_t dv, uint32_t sensor, uint64_t *max)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_fan_speed_max_get", (int)sensor, !max,
                             (has(dv, V_FAN) || has(dv, V_FAN_MAX)) && sensor == 0, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *max = has(dv, V_FAN_MAX) ? u64val(val(&c, V_FAN_MAX)) : RSMI_MAX_FAN_SPEED;
    return rc;
}

static rsmi_status_t x_rsmi_dev_fan_speed_get(uint32_t dv, uint32_t sensor, int64_t *speed)
{
    call_t c;
    rsmi_status_t rc =
        enter(dv, "rsmi_dev_fan_speed_get", (int)sensor, !speed, has(dv, V_FAN) && sensor == 0, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *speed = llround(val(&c, V_FAN));
    return rc;
}

static rsmi_status_t x_rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensor,
                                                rsmi_temperature_metric_t metric, int64_t *temp)
{
    int k = sensor == RSMI_TEMP_TYPE_EDGE       ? V_TEMP_EDGE
            : sensor == RSMI_TEMP_TYPE_JUNCTION ? V_TEMP_JUNCTION
            : sensor == RSMI_TEMP_TYPE_MEMORY   ? V_TEMP_MEMORY
                                                : -1;
    call_t c;
    bool sup = k >= 0 && metric == RSMI_TEMP_CURRENT && has(dv, k);
    rsmi_status_t rc = enter(dv, "rsmi_dev_temp_metric_get", (int)sensor, !temp, sup, &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *temp = llround(val(&c, k));
    return rc;
}

static rsmi_status_t x_rsmi_dev_pci_replay_counter_get(uint32_t dv, uint64_t *counter)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_pci_replay_counter_get", -1, !counter, has(dv, V_PCIE_REPLAY), &c);
    if (rc == RSMI_STATUS_SUCCESS)
        *counter = u64val(val(&c, V_PCIE_REPLAY));
    return rc;
}

/* no CHK_SUPPORT here in 5.2.3: NULL outputs are skipped */
static rsmi_status_t x_rsmi_dev_pci_throughput_get(uint32_t dv, uint64_t *sent, uint64_t *received,
                                                   uint64_t *max_pkt_sz)
{
    call_t c;
    bool sup = has(dv, V_PCIE_SENT) || has(dv, V_PCIE_RECEIVED);
    rsmi_status_t rc = enter(dv, "rsmi_dev_pci_throughput_get", -1, false, sup, &c);
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    if (sent)
        *sent = u64val(val(&c, V_PCIE_SENT));
    if (received)
        *received = u64val(val(&c, V_PCIE_RECEIVED));
    if (max_pkt_sz)
        *max_pkt_sz = has(dv, V_PCIE_MAX_PKT) ? u64val(val(&c, V_PCIE_MAX_PKT)) : 256;
    return RSMI_STATUS_SUCCESS;
}

/* energy_accumulator of gpu_metrics: checked before the NULL outputs, as in 5.2.3 */
static rsmi_status_t x_rsmi_dev_energy_count_get(uint32_t dv, uint64_t *power, float *resolution,
                                                 uint64_t *timestamp)
{
    call_t c;
    rsmi_status_t rc = enter(dv, "rsmi_dev_energy_count_get", -1, false, has(dv, V_POWER), &c);
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    if (!power || !timestamp)
        return RSMI_STATUS_INVALID_ARGS;
    double r = last_reload(c.d, c.t);
    double uj = r < 0 ? c.d->energy_start_uj + fk_series_integral(&c.d->v[V_POWER], 0, c.t)
                      : fk_series_integral(&c.d->v[V_POWER], r, c.t);
    *power = u64val(floor(uj / (double)ENERGY_RESOLUTION_UJ));
    *timestamp = TIMESTAMP_BASE_NS + u64val(c.t / S.clock.speed * 1e9);
    if (resolution)
        *resolution = ENERGY_RESOLUTION_UJ;
    return RSMI_STATUS_SUCCESS;
}

/* Write levels of clock domain `clk` in the layout the scenario asks for (5.x or 6.x). */
static void write_levels(const call_t *c, int clk, void *out, uint32_t *lanes_out)
{
    const fdev_t *d = c->d;
    uint32_t n = d->nlevels[clk];
    uint32_t cur = 0xFFFFFFFFu;
    if (d->v[clock_level_value[clk]].set) {
        double lv = val(c, clock_level_value[clk]);
        if (lv >= 0 && lv < n)
            cur = (uint32_t)lv;
    }
    if (S.freq_layout == 6) {
        rsmi_frequencies_v6_t *f = out;
        f->has_deep_sleep = false;
        f->num_supported = n;
        f->current = cur;
        for (uint32_t i = 0; i < n; i++)
            f->frequency[i] = d->levels[clk][i];
    } else {
        rsmi_frequencies_t *f = out;
        f->num_supported = n;
        f->current = cur;
        for (uint32_t i = 0; i < n; i++)
            f->frequency[i] = d->levels[clk][i];
    }
    for (uint32_t i = 0; lanes_out && i < n; i++)
        lanes_out[i] = d->lanes[i];
}

static rsmi_status_t x_rsmi_dev_gpu_clk_freq_get(uint32_t dv, rsmi_clk_type_t type, rsmi_frequencies_t *f)
{
    static const int which[] = {[RSMI_CLK_TYPE_SYS] = CLK_SYS,
                                [RSMI_CLK_TYPE_DF] = CLK_DF,
                                [RSMI_CLK_TYPE_DCEF] = CLK_DCEF,
                                [RSMI_CLK_TYPE_SOC] = CLK_SOC,
                                [RSMI_CLK_TYPE_MEM] = CLK_MEM};
    call_t c;
    bool sup = type <= RSMI_CLK_TYPE_MEM && dv < S.ndev && S.dev[dv].nlevels[which[type]] > 0;
    rsmi_status_t rc =
        enter(dv, "rsmi_dev_gpu_clk_freq_get", (int)type, !f, sup || type > RSMI_CLK_TYPE_MEM, &c);
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    if (type > RSMI_CLK_TYPE_MEM)
        return RSMI_STATUS_INVALID_ARGS; /* PCIe and unknown domains: the switch's default */
    write_levels(&c, which[type], f, NULL);
    return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t x_rsmi_dev_pci_bandwidth_get(uint32_t dv, rsmi_pcie_bandwidth_t *b)
{
    call_t c;
    bool sup = dv < S.ndev && S.dev[dv].nlevels[CLK_PCIE] > 0;
    rsmi_status_t rc = enter(dv, "rsmi_dev_pci_bandwidth_get", -1, !b, sup, &c);
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    uint32_t *lanes = S.freq_layout == 6 ? ((rsmi_pcie_bandwidth_v6_t *)(void *)b)->lanes : b->lanes;
    write_levels(&c, CLK_PCIE, &b->transfer_rate, lanes);
    return RSMI_STATUS_SUCCESS;
}

/* ---- processes ---- */

static bool proc_active(const proc_t *p, double t, long *pid)
{
    if (t < p->from || t >= p->to)
        return false;
    *pid = fk_pid_resolve(&p->pid);
    return *pid > 0;
}

/* The entry of `pid` on device d, or NULL. */
static const proc_t *proc_on(const fdev_t *d, long pid, double t)
{
    long q;
    for (size_t i = 0; i < d->nprocs; i++)
        if (proc_active(&d->procs[i], t, &q) && q == pid)
            return &d->procs[i];
    return NULL;
}

static bool pid_seen_before(long pid, uint32_t dev, size_t idx, double t)
{
    long q;
    for (uint32_t d = 0; d <= dev; d++)
        for (size_t i = 0; i < (d == dev ? idx : S.dev[d].nprocs); i++)
            if (proc_active(&S.dev[d].procs[i], t, &q) && q == pid)
                return true;
    return false;
}

/* kfd lists each process once, whatever number of GPUs it uses */
static rsmi_status_t x_rsmi_compute_process_info_get(rsmi_process_info_t *procs, uint32_t *num_items)
{
    if (!num_items)
        return RSMI_STATUS_INVALID_ARGS;
    if (S.refcount == 0)
        return RSMI_STATUS_NOT_SUPPORTED; /* no /sys/class/kfd/kfd/proc known */
    apply_delay("rsmi_compute_process_info_get");
    double t = fk_clock_now(&S.clock);
    rsmi_status_t rc = rule_code(S.rules, S.nrules, "rsmi_compute_process_info_get", -1, t);
    if (rc != RSMI_STATUS_SUCCESS)
        return rc;
    uint32_t found = 0;
    for (uint32_t d = 0; d < S.ndev; d++) {
        for (size_t i = 0; i < S.dev[d].nprocs; i++) {
            const proc_t *p = &S.dev[d].procs[i];
            long pid;
            if (!proc_active(p, t, &pid) || pid_seen_before(pid, d, i, t))
                continue;
            if (procs && found < *num_items) {
                procs[found].process_id = (uint32_t)pid; /* only these two fields are written */
                procs[found].pasid = p->pasid;
            }
            found++;
        }
    }
    if (procs && *num_items < found)
        return RSMI_STATUS_INSUFFICIENT_SIZE;
    if (!procs || *num_items > found)
        *num_items = found;
    return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t fill_proc(long pid, int only_dev, rsmi_process_info_t *proc, double t)
{
    bool found = false;
    uint64_t cu_used = 0, cu_all = 0;
    memset(proc, 0, sizeof(*proc));
    proc->process_id = (uint32_t)pid;
    for (uint32_t d = 0; d < S.ndev; d++) {
        const proc_t *p = proc_on(&S.dev[d], pid, t);
        if (p && !found)
            proc->pasid = p->pasid;
        found |= p != NULL;
        if (only_dev >= 0 && (int)d != only_dev)
            continue;
        cu_all += S.dev[d].cu_count;
        if (!p)
            continue;
        proc->vram_usage += p->vram;
        proc->sdma_usage += p->sdma;
        cu_used += (uint64_t)p->cu * S.dev[d].cu_count;
    }
    if (!found)
        return RSMI_STATUS_NOT_FOUND; /* ESRCH: no /sys/class/kfd/kfd/proc/<pid> */
    proc->cu_occupancy = cu_all ? (uint32_t)(cu_used / cu_all) : 0;
    return RSMI_STATUS_SUCCESS;
}

static rsmi_status_t x_rsmi_compute_process_info_by_pid_get(uint32_t pid, rsmi_process_info_t *proc)
{
    if (!proc)
        return RSMI_STATUS_INVALID_ARGS;
    if (S.refcount == 0)
        return RSMI_STATUS_NOT_FOUND;
    apply_delay("rsmi_compute_process_info_by_pid_get");
    double t = fk_clock_now(&S.clock);
    rsmi_status_t rc = rule_code(S.rules, S.nrules, "rsmi_compute_process_info_by_pid_get", -1, t);
    return rc != RSMI_STATUS_SUCCESS ? rc : fill_proc(pid, -1, proc, t);
}

static rsmi_status_t x_rsmi_compute_process_info_by_device_get(uint32_t pid, uint32_t dv,
                                                               rsmi_process_info_t *proc)
{
    call_t c;
    if (!proc)
        return RSMI_STATUS_INVALID_ARGS;
    rsmi_status_t rc = enter(dv, "rsmi_compute_process_info_by_device_get", -1, false, true, &c);
    return rc != RSMI_STATUS_SUCCESS ? rc : fill_proc(pid, (int)dv, proc, c.t);
}

static rsmi_status_t x_rsmi_compute_process_gpus_get(uint32_t pid, uint32_t *dv_indices,
                                                     uint32_t *num_devices)
{
    if (!num_devices)
        return RSMI_STATUS_INVALID_ARGS;
    if (S.refcount == 0)
        return RSMI_STATUS_NOT_FOUND;
    double t = fk_clock_now(&S.clock);
    uint32_t n = 0;
    bool any = false;
    for (uint32_t d = 0; d < S.ndev; d++) {
        if (!proc_on(&S.dev[d], pid, t))
            continue;
        any = true;
        if (dv_indices && n < *num_devices)
            dv_indices[n] = d;
        n++;
    }
    if (!any)
        return RSMI_STATUS_NOT_FOUND;
    if (dv_indices && *num_devices < n)
        return RSMI_STATUS_INSUFFICIENT_SIZE; /* *num_devices already holds the number written */
    *num_devices = n;
    return RSMI_STATUS_SUCCESS;
}

/* ---- exports ---- */

FK_EXPORT(rsmi_init, rsmi_init_fn, x_rsmi_init)
FK_EXPORT(rsmi_shut_down, rsmi_shut_down_fn, x_rsmi_shut_down)
FK_EXPORT(rsmi_status_string, rsmi_status_string_fn, x_rsmi_status_string)
FK_EXPORT(rsmi_version_get, rsmi_version_get_fn, x_rsmi_version_get)
FK_EXPORT(rsmi_version_str_get, rsmi_version_str_get_fn, x_rsmi_version_str_get)
FK_EXPORT(rsmi_num_monitor_devices, rsmi_num_monitor_devices_fn, x_rsmi_num_monitor_devices)
FK_EXPORT(rsmi_dev_name_get, rsmi_dev_name_get_fn, x_rsmi_dev_name_get)
FK_EXPORT(rsmi_dev_serial_number_get, rsmi_dev_serial_number_get_fn, x_rsmi_dev_serial_number_get)
FK_EXPORT(rsmi_dev_id_get, rsmi_dev_id_get_fn, x_rsmi_dev_id_get)
FK_EXPORT(rsmi_dev_unique_id_get, rsmi_dev_unique_id_get_fn, x_rsmi_dev_unique_id_get)
FK_EXPORT(rsmi_dev_pci_id_get, rsmi_dev_pci_id_get_fn, x_rsmi_dev_pci_id_get)
FK_EXPORT(rsmi_dev_busy_percent_get, rsmi_dev_busy_percent_get_fn, x_rsmi_dev_busy_percent_get)
FK_EXPORT(rsmi_dev_memory_busy_percent_get, rsmi_dev_memory_busy_percent_get_fn,
          x_rsmi_dev_memory_busy_percent_get)
FK_EXPORT(rsmi_dev_memory_usage_get, rsmi_dev_memory_usage_get_fn, x_rsmi_dev_memory_usage_get)
FK_EXPORT(rsmi_dev_memory_total_get, rsmi_dev_memory_total_get_fn, x_rsmi_dev_memory_total_get)
FK_EXPORT(rsmi_dev_power_ave_get, rsmi_dev_power_ave_get_fn, x_rsmi_dev_power_ave_get)
FK_EXPORT(rsmi_dev_power_cap_get, rsmi_dev_power_cap_get_fn, x_rsmi_dev_power_cap_get)
FK_EXPORT(rsmi_dev_energy_count_get, rsmi_dev_energy_count_get_fn, x_rsmi_dev_energy_count_get)
FK_EXPORT(rsmi_dev_temp_metric_get, rsmi_dev_temp_metric_get_fn, x_rsmi_dev_temp_metric_get)
FK_EXPORT(rsmi_dev_fan_speed_get, rsmi_dev_fan_speed_get_fn, x_rsmi_dev_fan_speed_get)
FK_EXPORT(rsmi_dev_fan_speed_max_get, rsmi_dev_fan_speed_max_get_fn, x_rsmi_dev_fan_speed_max_get)
FK_EXPORT(rsmi_dev_perf_level_get, rsmi_dev_perf_level_get_fn, x_rsmi_dev_perf_level_get)
FK_EXPORT(rsmi_dev_gpu_clk_freq_get, rsmi_dev_gpu_clk_freq_get_fn, x_rsmi_dev_gpu_clk_freq_get)
FK_EXPORT(rsmi_dev_pci_bandwidth_get, rsmi_dev_pci_bandwidth_get_fn, x_rsmi_dev_pci_bandwidth_get)
FK_EXPORT(rsmi_dev_pci_throughput_get, rsmi_dev_pci_throughput_get_fn, x_rsmi_dev_pci_throughput_get)
FK_EXPORT(rsmi_dev_pci_replay_counter_get, rsmi_dev_pci_replay_counter_get_fn,
          x_rsmi_dev_pci_replay_counter_get)
FK_EXPORT(rsmi_compute_process_info_get, rsmi_compute_process_info_get_fn, x_rsmi_compute_process_info_get)
FK_EXPORT(rsmi_compute_process_info_by_pid_get, rsmi_compute_process_info_by_pid_get_fn,
          x_rsmi_compute_process_info_by_pid_get)
FK_EXPORT(rsmi_compute_process_info_by_device_get, rsmi_compute_process_info_by_device_get_fn,
          x_rsmi_compute_process_info_by_device_get)
FK_EXPORT(rsmi_compute_process_gpus_get, rsmi_compute_process_gpus_get_fn, x_rsmi_compute_process_gpus_get)
