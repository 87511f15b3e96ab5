/* SPDX-License-Identifier: MIT
 *
 * A fake libnvidia-ml.so.1 for tests: the NVML entry points jobscope uses, with NVML's documented behaviour,
 * driven by a scenario file named by $FAKE_NVML_SCENARIO and read at the nvmlInit that takes the reference
 * count from 0 to 1 (format: tests/fakes/README.md). What it emulates: reference-counted
 * nvmlInit/nvmlShutdown (UNINITIALIZED before and after); INVALID_ARGUMENT for NULL pointers, bad handles,
 * out-of-range indices and enums; ARGUMENT_VERSION_MISMATCH for a wrong struct version; the process lists'
 * sizing protocol (a too-small *infoCount gets the needed count written back and INSUFFICIENT_SIZE, none
 * running is SUCCESS with 0) with 16-byte v1 and 24-byte v2/v3 entries; nvmlDeviceGetProcessUtilization's
 * NULL-buffer sizing and lastSeenTimeStamp filter (NOT_FOUND when no sample is newer); a total-energy counter
 * in mJ integrated from the scenario's power draw that restarts at 0 at a "driver reload" (as do volatile ECC
 * counts); a device that is lost from a given time on (every call on it then GPU_IS_LOST); MIG instances with
 * their own memory; per-call error codes in time windows; a delay per call. A value the scenario does not
 * give makes its call NOT_SUPPORTED, as on a GPU without that sensor.
 *
 * Built twice by Meson: tests/fakes/nvml/libnvidia-ml.so.1 (every entry point, versioned ones included) and,
 * with -DFAKE_NVML_OLD_ABI, tests/fakes/nvml-old/libnvidia-ml.so.1, which lacks every _v2/_v3 entry point and
 * those of later drivers (energy, TemperatureV, ClocksEventReasons, MIG), like an old driver. A scenario's
 * `omit SYMBOL` hides any entry point at run time (IFUNC returning NULL, see fake_common.h).
 *
 * Not thread-safe (jobscope calls it from one thread). Scenario errors are printed on stderr: this is a test
 * fixture, not library code.
 */
#include "fake_common.h"
#include "sources/nvml_abi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FAKE_NVML_OLD_ABI
/* the implementations of the entry points this variant does not export stay compiled but unused */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

#define MAXDEV 16
#define MAXMIG 8
#define SCENARIO_ENV "FAKE_NVML_SCENARIO"
#define SPEED_ENV "FAKE_NVML_SPEED"
#define TIME_FILE_ENV "FAKE_NVML_TIME_FILE"
#define PUTIL_BUFFER 32        /* samples the "driver" keeps per putil rule */
#define CODEC_PERIOD_US 167000 /* samplingPeriodUs of encoder/decoder utilisation */

/* ---- scenario model ---- */

enum {
    V_GPU_UTIL,
    V_MEM_UTIL,
    V_MEM_USED,
    V_MEM_RESERVED,
    V_BAR1_USED,
    V_POWER,
    V_POWER_LIMIT,
    V_TEMP,
    V_FAN,
    V_CLK_GRAPHICS,
    V_CLK_SM,
    V_CLK_MEM,
    V_CLK_VIDEO,
    V_PSTATE,
    V_CLOCKS_EVENT,
    V_VIOL_POWER,
    V_VIOL_THERMAL,
    V_PCIE_TX,
    V_PCIE_RX,
    V_PCIE_REPLAY,
    V_ECC_CORR,
    V_ECC_UNCORR,
    V_ENC,
    V_DEC,
    V__MAX
};

static const char *const value_names[V__MAX] = {
    [V_GPU_UTIL] = "gpu_util_pct",
    [V_MEM_UTIL] = "mem_util_pct",
    [V_MEM_USED] = "mem_used_bytes",
    [V_MEM_RESERVED] = "mem_reserved_bytes",
    [V_BAR1_USED] = "bar1_used_bytes",
    [V_POWER] = "power_mw",
    [V_POWER_LIMIT] = "power_limit_mw",
    [V_TEMP] = "temp_c",
    [V_FAN] = "fan_pct",
    [V_CLK_GRAPHICS] = "clock_graphics_mhz",
    [V_CLK_SM] = "clock_sm_mhz",
    [V_CLK_MEM] = "clock_mem_mhz",
    [V_CLK_VIDEO] = "clock_video_mhz",
    [V_PSTATE] = "pstate",
    [V_CLOCKS_EVENT] = "clocks_event_reasons",
    [V_VIOL_POWER] = "violation_power_ns",
    [V_VIOL_THERMAL] = "violation_thermal_ns",
    [V_PCIE_TX] = "pcie_tx_kbs",
    [V_PCIE_RX] = "pcie_rx_kbs",
    [V_PCIE_REPLAY] = "pcie_replay_count",
    [V_ECC_CORR] = "ecc_corrected_count",
    [V_ECC_UNCORR] = "ecc_uncorrected_count",
    [V_ENC] = "encoder_pct",
    [V_DEC] = "decoder_pct",
};

typedef struct {
    char sym[96]; /* a full symbol name, or one without its _vN suffix (matches every version) */
    int arg;      /* -1: any */
    nvmlReturn_t code;
    double from, to;
} rule_t;

typedef struct {
    char sym[96];
    double ms;
} delay_t;

enum { PROC_COMPUTE, PROC_GRAPHICS };

typedef struct {
    int kind;
    fk_pid_t pid;
    unsigned long long used;
    unsigned gi, ci;
    double from, to;
} proc_t;

typedef struct {
    fk_pid_t pid;
    unsigned sm, mem, enc, dec;
    double at, every, from, to;
} putil_t;

typedef struct {
    bool present;
    unsigned gi, ci;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    double mem_total;
    fk_series_t mem_used;
} mig_t;

typedef struct {
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    double mem_total, bar1_total; /* 0: unknown */
    nvmlComputeMode_t compute_mode;
    int mig; /* -1 unsupported, 0 off, 1 on */
    unsigned mig_max;
    mig_t migs[MAXMIG];
    bool no_permission;
    double lost_at;
    double energy_start;
    double reloads[16];
    size_t nreloads;
    fk_series_t v[V__MAX];
    rule_t *rules;
    size_t nrules;
    proc_t *procs;
    size_t nprocs;
    putil_t *putil;
    size_t nputil;
} fdev_t;

struct nvmlDevice_st {
    int dev;
    int mig; /* -1: the GPU itself */
};

static struct {
    int refcount;
    fk_clock_t clock;
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    char nvml[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
    int cuda;
    nvmlReturn_t init_error;
    rule_t *rules; /* global: system calls and every device */
    size_t nrules;
    delay_t *delays;
    size_t ndelays;
    int ndev;
    fdev_t dev[MAXDEV];
} S;

static struct nvmlDevice_st handles[MAXDEV][1 + MAXMIG];

#define DEFAULT_DRIVER "550.90.07"
#define DEFAULT_NVML "12.550.90.07"
#define DEFAULT_CUDA 12040

bool fk_omitted(const char *sym)
{
    return fk_scenario_omits(SCENARIO_ENV, sym);
}

/* ---- scenario parsing ---- */

static const struct {
    const char *name;
    nvmlReturn_t code;
} codes[] = {
    {"SUCCESS", NVML_SUCCESS},
    {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
    {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
    {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
    {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
    {"ALREADY_INITIALIZED", NVML_ERROR_ALREADY_INITIALIZED},
    {"NOT_FOUND", NVML_ERROR_NOT_FOUND},
    {"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE},
    {"INSUFFICIENT_POWER", NVML_ERROR_INSUFFICIENT_POWER},
    {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
    {"TIMEOUT", NVML_ERROR_TIMEOUT},
    {"IRQ_ISSUE", NVML_ERROR_IRQ_ISSUE},
    {"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND},
    {"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND},
    {"CORRUPTED_INFOROM", NVML_ERROR_CORRUPTED_INFOROM},
    {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
    {"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED},
    {"OPERATING_SYSTEM", NVML_ERROR_OPERATING_SYSTEM},
    {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
    {"IN_USE", NVML_ERROR_IN_USE},
    {"MEMORY", NVML_ERROR_MEMORY},
    {"NO_DATA", NVML_ERROR_NO_DATA},
    {"VGPU_ECC_NOT_SUPPORTED", NVML_ERROR_VGPU_ECC_NOT_SUPPORTED},
    {"INSUFFICIENT_RESOURCES", NVML_ERROR_INSUFFICIENT_RESOURCES},
    {"FREQ_NOT_SUPPORTED", NVML_ERROR_FREQ_NOT_SUPPORTED},
    {"ARGUMENT_VERSION_MISMATCH", NVML_ERROR_ARGUMENT_VERSION_MISMATCH},
    {"DEPRECATED", NVML_ERROR_DEPRECATED},
    {"NOT_READY", NVML_ERROR_NOT_READY},
    {"GPU_NOT_FOUND", NVML_ERROR_GPU_NOT_FOUND},
    {"INVALID_STATE", NVML_ERROR_INVALID_STATE},
    {"UNKNOWN", NVML_ERROR_UNKNOWN},
};

static int parse_code(const char *s, nvmlReturn_t *ret)
{
    if (strncmp(s, "NVML_ERROR_", 11) == 0)
        s += 11;
    else if (strncmp(s, "NVML_", 5) == 0)
        s += 5;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        if (strcmp(s, codes[i].name) == 0) {
            *ret = codes[i].code;
            return 0;
        }
    }
    double v;
    if (fk_parse_value(s, &v) == 0 && v >= 0 && v <= 999 && v == floor(v)) {
        *ret = (nvmlReturn_t)(int)v;
        return 0;
    }
    return -1;
}

static int parse_uint(const char *s, unsigned *ret)
{
    double v;
    if (fk_parse_value(s, &v) < 0 || v < 0 || v > 4294967295.0 || v != floor(v))
        return -1;
    *ret = (unsigned)v;
    return 0;
}

static void dev_defaults(fdev_t *d, int index)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "NVIDIA Fake GPU");
    snprintf(d->uuid, sizeof(d->uuid), "GPU-00000000-0000-0000-0000-%012x", (unsigned)index);
    d->bus = 0x10u + (unsigned)index;
    d->pci_device_id = 0x233010DEu;
    d->pci_subsystem_id = 0x16C110DEu;
    d->compute_mode = NVML_COMPUTEMODE_DEFAULT;
    d->mig = -1;
    d->mig_max = 7;
    d->lost_at = FK_NEVER;
}

static void free_state(void)
{
    for (int i = 0; i < MAXDEV; i++) {
        fdev_t *d = &S.dev[i];
        for (int k = 0; k < V__MAX; k++)
            fk_series_free(&d->v[k]);
        for (int m = 0; m < MAXMIG; m++)
            fk_series_free(&d->migs[m].mem_used);
        for (size_t k = 0; k < d->nprocs; k++)
            fk_pid_free(&d->procs[k].pid);
        for (size_t k = 0; k < d->nputil; k++)
            fk_pid_free(&d->putil[k].pid);
        free(d->procs);
        free(d->putil);
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
    if (ntok < 3) {
        snprintf(err, errlen, "error SYMBOL CODE [arg N] [from T] [to T]");
        return -1;
    }
    rule_t r = {.arg = -1, .from = -FK_NEVER, .to = FK_NEVER};
    fk_strlcpy(r.sym, tok[1], sizeof(r.sym));
    if (parse_code(tok[2], &r.code) < 0) {
        snprintf(err, errlen, "unknown NVML return code '%s'", tok[2]);
        return -1;
    }
    int i = 3;
    if (i + 1 < ntok && strcmp(tok[i], "arg") == 0) {
        unsigned a;
        if (parse_uint(tok[i + 1], &a) < 0) {
            snprintf(err, errlen, "bad arg '%s'", tok[i + 1]);
            return -1;
        }
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
    /* proc KIND PID used BYTES|na [gi N] [ci N] [from T] [to T]
     * proc_range KIND COUNT FIRSTPID used BYTES|na [gi N] [ci N] [from T] [to T] */
    int i = 1;
    if (ntok < (range ? 6 : 5)) {
        snprintf(err, errlen,
                 range ? "proc_range compute|graphics COUNT FIRSTPID used BYTES ..."
                       : "proc compute|graphics PID used BYTES ...");
        return -1;
    }
    proc_t p = {.gi = NVML_INSTANCE_ID_NONE, .ci = NVML_INSTANCE_ID_NONE, .from = -FK_NEVER, .to = FK_NEVER};
    if (strcmp(tok[i], "compute") == 0) {
        p.kind = PROC_COMPUTE;
    } else if (strcmp(tok[i], "graphics") == 0) {
        p.kind = PROC_GRAPHICS;
    } else {
        snprintf(err, errlen, "process kind must be compute or graphics");
        return -1;
    }
    i++;
    unsigned count = 1;
    if (range && parse_uint(tok[i++], &count) < 0) {
        snprintf(err, errlen, "bad count");
        return -1;
    }
    const char *pidtok = tok[i++];
    if (strcmp(tok[i], "used") != 0 || i + 1 >= ntok) {
        snprintf(err, errlen, "'used BYTES' expected");
        return -1;
    }
    double used;
    if (strcmp(tok[i + 1], "na") == 0) {
        p.used = NVML_VALUE_NOT_AVAILABLE_ULL;
    } else if (fk_parse_value(tok[i + 1], &used) == 0 && used >= 0) {
        p.used = (unsigned long long)used;
    } else {
        snprintf(err, errlen, "bad used bytes '%s'", tok[i + 1]);
        return -1;
    }
    i += 2;
    while (i + 1 < ntok && (strcmp(tok[i], "gi") == 0 || strcmp(tok[i], "ci") == 0)) {
        if (parse_uint(tok[i + 1], tok[i][0] == 'g' ? &p.gi : &p.ci) < 0) {
            snprintf(err, errlen, "bad instance id");
            return -1;
        }
        i += 2;
    }
    if (fk_window(tok, ntok, &i, &p.from, &p.to) < 0 || i != ntok) {
        snprintf(err, errlen, "unexpected '%s'", i < ntok ? tok[i] : "");
        return -1;
    }
    for (unsigned k = 0; k < count; k++) {
        proc_t q = p;
        if (range) {
            char num[32];
            double first;
            if (fk_parse_value(pidtok, &first) < 0 || first <= 0) {
                snprintf(err, errlen, "proc_range needs a literal first PID");
                return -1;
            }
            snprintf(num, sizeof(num), "%.0f", first + k);
            if (fk_pid_parse(&q.pid, num) < 0)
                return -1;
        } else if (fk_pid_parse(&q.pid, pidtok) < 0) {
            snprintf(err, errlen, "bad PID '%s' (N, $VAR or file:PATH)", pidtok);
            return -1;
        }
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

static int parse_putil(fdev_t *d, char **tok, int ntok, char *err, size_t errlen)
{
    /* putil PID sm N mem N enc N dec N (at T | every P) [from T] [to T] */
    putil_t u = {.at = -1, .from = 0, .to = FK_NEVER};
    if (ntok < 2 || fk_pid_parse(&u.pid, tok[1]) < 0) {
        snprintf(err, errlen, "putil PID sm N mem N enc N dec N (at T | every P) [from T] [to T]");
        return -1;
    }
    int i = 2;
    for (; i + 1 < ntok; i += 2) {
        unsigned *dst = NULL;
        if (strcmp(tok[i], "sm") == 0)
            dst = &u.sm;
        else if (strcmp(tok[i], "mem") == 0)
            dst = &u.mem;
        else if (strcmp(tok[i], "enc") == 0)
            dst = &u.enc;
        else if (strcmp(tok[i], "dec") == 0)
            dst = &u.dec;
        if (dst) {
            if (parse_uint(tok[i + 1], dst) < 0)
                goto bad;
        } else if (strcmp(tok[i], "at") == 0) {
            if (fk_parse_value(tok[i + 1], &u.at) < 0)
                goto bad;
        } else if (strcmp(tok[i], "every") == 0) {
            if (fk_parse_value(tok[i + 1], &u.every) < 0 || u.every <= 0)
                goto bad;
        } else if (strcmp(tok[i], "from") == 0 || strcmp(tok[i], "to") == 0) {
            if (fk_window(tok, ntok, &i, &u.from, &u.to) < 0)
                goto bad;
            i -= 2;
        } else {
            goto bad;
        }
    }
    if (i != ntok || (u.at < 0 && u.every <= 0))
        goto bad;
    putil_t *arr = grow(d->putil, &d->nputil, sizeof(*d->putil));
    if (!arr)
        goto bad;
    d->putil = arr;
    arr[d->nputil - 1] = u;
    return 0;
bad:
    fk_pid_free(&u.pid);
    snprintf(err, errlen, "bad putil line (PID sm N mem N enc N dec N, at T or every P, from/to)");
    return -1;
}

static int parse_pci(fdev_t *d, char **tok, int ntok)
{
    unsigned dom, bus, dev, fn;
    char tail;
    if (ntok < 2 || sscanf(tok[1], "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4)
        return -1;
    d->domain = dom;
    d->bus = bus;
    d->device = dev;
    if (ntok > 2 && parse_uint(tok[2], &d->pci_device_id) < 0)
        return -1;
    if (ntok > 3 && parse_uint(tok[3], &d->pci_subsystem_id) < 0)
        return -1;
    return ntok <= 4 ? 0 : -1;
}

static int value_index(const char *name)
{
    for (int k = 0; k < V__MAX; k++)
        if (strcmp(value_names[k], name) == 0)
            return k;
    return -1;
}

static int parse_line(char **tok, int n, fdev_t **cur, char *err, size_t errlen)
{
    const char *kw = tok[0];
    fdev_t *d = *cur;
    double v;
    unsigned u;
    if (strcmp(kw, "omit") == 0)
        return 0; /* read by the IFUNC resolvers */
    if (strcmp(kw, "driver_version") == 0 && n == 2) {
        fk_strlcpy(S.driver, tok[1], sizeof(S.driver));
        return 0;
    }
    if (strcmp(kw, "nvml_version") == 0 && n == 2) {
        fk_strlcpy(S.nvml, tok[1], sizeof(S.nvml));
        return 0;
    }
    if (strcmp(kw, "cuda_version") == 0 && n == 2 && parse_uint(tok[1], &u) == 0) {
        S.cuda = (int)u;
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
        if (n != 2 || parse_uint(tok[1], &u) < 0 || u >= MAXDEV || (int)u != S.ndev) {
            snprintf(err, errlen, "device N: indices start at 0, in order, below %d", MAXDEV);
            return -1;
        }
        *cur = &S.dev[u];
        dev_defaults(*cur, (int)u);
        S.ndev++;
        return 0;
    }
    if (!d) {
        snprintf(err, errlen, "'%s' outside a device block, or unknown", kw);
        return -1;
    }
    if (strcmp(kw, "name") == 0 && n == 2) {
        fk_strlcpy(d->name, tok[1], sizeof(d->name));
    } else if (strcmp(kw, "uuid") == 0 && n == 2) {
        fk_strlcpy(d->uuid, tok[1], sizeof(d->uuid));
    } else if (strcmp(kw, "pci") == 0) {
        if (parse_pci(d, tok, n) < 0) {
            snprintf(err, errlen, "pci DOMAIN:BUS:DEVICE.FUNCTION [DEVICE_ID [SUBSYSTEM_ID]]");
            return -1;
        }
    } else if (strcmp(kw, "memory_total") == 0 && n == 2 && fk_parse_value(tok[1], &d->mem_total) == 0) {
    } else if (strcmp(kw, "bar1_total") == 0 && n == 2 && fk_parse_value(tok[1], &d->bar1_total) == 0) {
    } else if (strcmp(kw, "energy_start") == 0 && n == 2 && fk_parse_value(tok[1], &d->energy_start) == 0) {
    } else if (strcmp(kw, "lost") == 0 && n == 2 && fk_parse_value(tok[1], &d->lost_at) == 0) {
    } else if (strcmp(kw, "no_permission") == 0 && n == 1) {
        d->no_permission = true;
    } else if (strcmp(kw, "reload") == 0 && n == 2 && fk_parse_value(tok[1], &v) == 0) {
        if (d->nreloads == sizeof(d->reloads) / sizeof(d->reloads[0]) ||
            (d->nreloads && v <= d->reloads[d->nreloads - 1])) {
            snprintf(err, errlen, "reload times must increase (at most 16)");
            return -1;
        }
        d->reloads[d->nreloads++] = v;
    } else if (strcmp(kw, "compute_mode") == 0 && n == 2) {
        if (strcmp(tok[1], "DEFAULT") == 0)
            d->compute_mode = NVML_COMPUTEMODE_DEFAULT;
        else if (strcmp(tok[1], "EXCLUSIVE_PROCESS") == 0)
            d->compute_mode = NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
        else if (strcmp(tok[1], "PROHIBITED") == 0)
            d->compute_mode = NVML_COMPUTEMODE_PROHIBITED;
        else if (parse_uint(tok[1], &u) == 0)
            d->compute_mode = (nvmlComputeMode_t)u;
        else
            return -1;
    } else if (strcmp(kw, "mig") == 0 && n == 2) {
        if (strcmp(tok[1], "on") == 0)
            d->mig = 1;
        else if (strcmp(tok[1], "off") == 0)
            d->mig = 0;
        else if (strcmp(tok[1], "unsupported") == 0)
            d->mig = -1;
        else
            return -1;
    } else if (strcmp(kw, "mig_max") == 0 && n == 2 && parse_uint(tok[1], &u) == 0 && u <= MAXMIG) {
        d->mig_max = u;
    } else if (strcmp(kw, "mig_instance") == 0 && n >= 2) {
        /* mig_instance IDX gi N ci N memory_total BYTES [name STR] [uuid STR] */
        if (parse_uint(tok[1], &u) < 0 || u >= MAXMIG) {
            snprintf(err, errlen, "mig_instance index below %d expected", MAXMIG);
            return -1;
        }
        mig_t *m = &d->migs[u];
        m->present = true;
        char base[sizeof(d->name) - 8];
        fk_strlcpy(base, d->name, sizeof(base));
        snprintf(m->name, sizeof(m->name), "%s MIG", base);
        snprintf(m->uuid, sizeof(m->uuid), "MIG-00000000-0000-0000-%04x-%012x", (unsigned)(d - S.dev), u);
        for (int i = 2; i + 1 < n; i += 2) {
            if (strcmp(tok[i], "gi") == 0 && parse_uint(tok[i + 1], &m->gi) == 0)
                continue;
            if (strcmp(tok[i], "ci") == 0 && parse_uint(tok[i + 1], &m->ci) == 0)
                continue;
            if (strcmp(tok[i], "memory_total") == 0 && fk_parse_value(tok[i + 1], &m->mem_total) == 0)
                continue;
            if (strcmp(tok[i], "name") == 0) {
                fk_strlcpy(m->name, tok[i + 1], sizeof(m->name));
                continue;
            }
            if (strcmp(tok[i], "uuid") == 0) {
                fk_strlcpy(m->uuid, tok[i + 1], sizeof(m->uuid));
                continue;
            }
            snprintf(err, errlen, "mig_instance: unexpected '%s'", tok[i]);
            return -1;
        }
        if (n % 2 != 0) {
            snprintf(err, errlen, "mig_instance: KEY VALUE pairs expected");
            return -1;
        }
    } else if (strcmp(kw, "mig_value") == 0 && n >= 4) {
        /* mig_value IDX mem_used_bytes SERIES */
        if (parse_uint(tok[1], &u) < 0 || u >= MAXMIG || !d->migs[u].present ||
            strcmp(tok[2], "mem_used_bytes") != 0) {
            snprintf(err, errlen, "mig_value IDX mem_used_bytes SERIES, after mig_instance IDX");
            return -1;
        }
        return fk_series_parse(&d->migs[u].mem_used, tok + 3, n - 3, err, errlen);
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
    } else if (strcmp(kw, "putil") == 0) {
        return parse_putil(d, tok, n, err, errlen);
    } else {
        snprintf(err, errlen, "unknown or malformed '%s'", kw);
        return -1;
    }
    return 0;
}

/* Returns NVML_SUCCESS, DRIVER_NOT_LOADED without a scenario, UNKNOWN on a bad one. */
static nvmlReturn_t load_scenario(void)
{
    free_state();
    fk_strlcpy(S.driver, DEFAULT_DRIVER, sizeof(S.driver));
    fk_strlcpy(S.nvml, DEFAULT_NVML, sizeof(S.nvml));
    S.cuda = DEFAULT_CUDA;
    const char *path = getenv(SCENARIO_ENV);
    if (!path || !*path)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "fake_nvml: cannot open $%s=%s\n", SCENARIO_ENV, path);
        return NVML_ERROR_UNKNOWN;
    }
    char line[4096];
    int lineno = 0;
    fdev_t *cur = NULL;
    nvmlReturn_t rc = NVML_SUCCESS;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *tok[FK_MAX_TOKENS];
        int n = fk_tokenize(line, tok);
        char err[256] = "malformed line";
        if (n == 0)
            continue;
        if (n < 0 || parse_line(tok, n, &cur, err, sizeof(err)) < 0) {
            fprintf(stderr, "fake_nvml: %s:%d: %s\n", path, lineno, err);
            rc = NVML_ERROR_UNKNOWN;
            break;
        }
    }
    fclose(f);
    if (rc != NVML_SUCCESS)
        free_state();
    return rc;
}

/* ---- entry helpers ---- */

typedef struct {
    fdev_t *d;
    mig_t *m; /* a MIG handle's instance, or NULL */
    double t;
} call_t;

static bool sym_matches(const char *rule, const char *sym)
{
    if (strcmp(rule, sym) == 0)
        return true;
    size_t n = strlen(rule);
    /* a rule without a version suffix matches every version */
    return strncmp(rule, sym, n) == 0 && sym[n] == '_' && sym[n + 1] == 'v';
}

static void apply_delay(const char *sym)
{
    for (size_t i = 0; i < S.ndelays; i++)
        if (sym_matches(S.delays[i].sym, sym))
            fk_sleep_ms(S.delays[i].ms);
}

static nvmlReturn_t rule_code(const rule_t *rules, size_t n, const char *sym, int arg, double t)
{
    for (size_t i = 0; i < n; i++) {
        const rule_t *r = &rules[i];
        if (sym_matches(r->sym, sym) && (r->arg < 0 || r->arg == arg) && t >= r->from && t < r->to)
            return r->code;
    }
    return NVML_SUCCESS;
}

static bool handle_ok(nvmlDevice_t h, int *dev, int *mig)
{
    uintptr_t off = (uintptr_t)h - (uintptr_t)&handles[0][0];
    if (!h || (uintptr_t)h < (uintptr_t)&handles[0][0] || off >= sizeof(handles) ||
        off % sizeof(handles[0][0]) != 0)
        return false;
    *dev = h->dev;
    *mig = h->mig;
    if (*dev >= S.ndev)
        return false;
    return *mig < 0 || (S.dev[*dev].mig == 1 && S.dev[*dev].migs[*mig].present);
}

static bool is_lost(const fdev_t *d, double t)
{
    return t >= d->lost_at;
}

/* The common start of every device call: initialised, valid handle, valid arguments, the scenario's delay,
 * lost device, MIG handle where the call needs a full GPU, the scenario's error rules. */
static nvmlReturn_t enter(nvmlDevice_t h, const char *sym, int arg, bool args_ok, bool mig_ok, call_t *c)
{
    int dev, mig;
    if (S.refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!handle_ok(h, &dev, &mig) || !args_ok)
        return NVML_ERROR_INVALID_ARGUMENT;
    apply_delay(sym);
    c->t = fk_clock_now(&S.clock);
    c->d = &S.dev[dev];
    c->m = mig >= 0 ? &c->d->migs[mig] : NULL;
    if (is_lost(c->d, c->t))
        return NVML_ERROR_GPU_IS_LOST;
    if (c->m && !mig_ok)
        return NVML_ERROR_NOT_SUPPORTED;
    nvmlReturn_t rc = rule_code(c->d->rules, c->d->nrules, sym, arg, c->t);
    if (rc == NVML_SUCCESS)
        rc = rule_code(S.rules, S.nrules, sym, arg, c->t);
    return rc;
}

/* The common start of a system call (no device). */
static nvmlReturn_t enter_system(const char *sym, bool need_init, bool args_ok)
{
    if (need_init && S.refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!args_ok)
        return NVML_ERROR_INVALID_ARGUMENT;
    apply_delay(sym);
    if (S.refcount == 0)
        return NVML_SUCCESS;
    return rule_code(S.rules, S.nrules, sym, -1, fk_clock_now(&S.clock));
}

static double val(const call_t *c, int k)
{
    return fk_series_at(&c->d->v[k], c->t);
}

static bool has(const call_t *c, int k)
{
    return c->d->v[k].set;
}

static unsigned uval(const call_t *c, int k)
{
    double v = val(c, k);
    return v <= 0 ? 0 : v >= 4294967295.0 ? 4294967295u : (unsigned)llround(v);
}

static unsigned long long ullval(double v)
{
    return v <= 0 ? 0 : v >= 1.8e19 ? 18446744073709551615ULL : (unsigned long long)llround(v);
}

static nvmlReturn_t copy_string(char *dst, unsigned int length, const char *src)
{
    size_t need = strlen(src) + 1;
    if (length < need)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, need);
    return NVML_SUCCESS;
}

/* the time of the last driver reload at or before t, or -1 */
static double last_reload(const fdev_t *d, double t)
{
    double r = -1;
    for (size_t i = 0; i < d->nreloads && d->reloads[i] <= t; i++)
        r = d->reloads[i];
    return r;
}

/* ---- system ---- */

static nvmlReturn_t init_common(bool v1)
{
    if (S.refcount == 0) {
        nvmlReturn_t rc = load_scenario();
        if (rc == NVML_SUCCESS && S.init_error != NVML_SUCCESS)
            rc = S.init_error;
        fk_clock_start(&S.clock, SPEED_ENV, TIME_FILE_ENV);
        /* the old nvmlInit initialised every GPU at once and failed when one was bad */
        for (int i = 0; v1 && rc == NVML_SUCCESS && i < S.ndev; i++)
            if (is_lost(&S.dev[i], 0))
                rc = NVML_ERROR_GPU_IS_LOST;
        if (rc != NVML_SUCCESS) {
            free_state();
            return rc;
        }
    }
    S.refcount++;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlInit_v2(void)
{
    return init_common(false);
}

static nvmlReturn_t x_nvmlInit(void)
{
    return init_common(true);
}

static nvmlReturn_t x_nvmlShutdown(void)
{
    if (S.refcount == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (--S.refcount == 0)
        free_state();
    return NVML_SUCCESS;
}

static const char *x_nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
        return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
        return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
        return "Timeout";
    case NVML_ERROR_IRQ_ISSUE:
        return "Interrupt request issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
        return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM:
        return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
        return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM:
        return "GPU access blocked by the operating system";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE:
        return "In use by another client";
    case NVML_ERROR_MEMORY:
        return "Insufficient Memory";
    case NVML_ERROR_NO_DATA:
        return "No data";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return "Argument version mismatch";
    default:
        return "Unknown Error";
    }
}

static nvmlReturn_t x_nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    nvmlReturn_t rc = enter_system("nvmlSystemGetDriverVersion", true, version != NULL);
    return rc != NVML_SUCCESS ? rc : copy_string(version, length, S.driver);
}

/* documented without UNINITIALIZED: answers before nvmlInit (with the defaults) */
static nvmlReturn_t x_nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    nvmlReturn_t rc = enter_system("nvmlSystemGetNVMLVersion", false, version != NULL);
    return rc != NVML_SUCCESS ? rc : copy_string(version, length, S.refcount ? S.nvml : DEFAULT_NVML);
}

static nvmlReturn_t cuda_version(const char *sym, int *v)
{
    nvmlReturn_t rc = enter_system(sym, false, v != NULL);
    if (rc == NVML_SUCCESS)
        *v = S.refcount ? S.cuda : DEFAULT_CUDA;
    return rc;
}

static nvmlReturn_t x_nvmlSystemGetCudaDriverVersion(int *v)
{
    return cuda_version("nvmlSystemGetCudaDriverVersion", v);
}

static nvmlReturn_t x_nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    return cuda_version("nvmlSystemGetCudaDriverVersion_v2", v);
}

/* ---- enumeration ---- */

static nvmlReturn_t x_nvmlDeviceGetCount_v2(unsigned int *count)
{
    nvmlReturn_t rc = enter_system("nvmlDeviceGetCount_v2", true, count != NULL);
    if (rc == NVML_SUCCESS)
        *count = (unsigned)S.ndev;
    return rc;
}

/* the old count leaves out devices this user may not talk to */
static nvmlReturn_t x_nvmlDeviceGetCount(unsigned int *count)
{
    nvmlReturn_t rc = enter_system("nvmlDeviceGetCount", true, count != NULL);
    if (rc == NVML_SUCCESS) {
        *count = 0;
        for (int i = 0; i < S.ndev; i++)
            *count += !S.dev[i].no_permission;
    }
    return rc;
}

static nvmlReturn_t handle_by_index(const char *sym, int dev, nvmlDevice_t *device)
{
    double t = fk_clock_now(&S.clock);
    fdev_t *d = &S.dev[dev];
    if (d->no_permission)
        return NVML_ERROR_NO_PERMISSION;
    if (is_lost(d, t))
        return NVML_ERROR_GPU_IS_LOST;
    nvmlReturn_t rc = rule_code(d->rules, d->nrules, sym, dev, t);
    if (rc == NVML_SUCCESS)
        rc = rule_code(S.rules, S.nrules, sym, dev, t);
    if (rc == NVML_SUCCESS)
        *device = &handles[dev][0];
    return rc;
}

static nvmlReturn_t x_nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t rc = enter_system("nvmlDeviceGetHandleByIndex_v2", true, device && index < (unsigned)S.ndev);
    return rc != NVML_SUCCESS ? rc : handle_by_index("nvmlDeviceGetHandleByIndex_v2", (int)index, device);
}

static nvmlReturn_t x_nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    int dev = -1;
    for (int i = 0, k = 0; i < S.ndev && dev < 0; i++)
        if (!S.dev[i].no_permission && (unsigned)k++ == index)
            dev = i;
    nvmlReturn_t rc = enter_system("nvmlDeviceGetHandleByIndex", true, device && dev >= 0);
    return rc != NVML_SUCCESS ? rc : handle_by_index("nvmlDeviceGetHandleByIndex", dev, device);
}

/* ---- inventory ---- */

static nvmlReturn_t x_nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetName", -1, name != NULL, true, &c);
    return rc != NVML_SUCCESS ? rc : copy_string(name, length, c.m ? c.m->name : c.d->name);
}

static nvmlReturn_t x_nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetUUID", -1, uuid != NULL, true, &c);
    return rc != NVML_SUCCESS ? rc : copy_string(uuid, length, c.m ? c.m->uuid : c.d->uuid);
}

static nvmlReturn_t x_nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetPciInfo_v3", -1, pci != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT,
             c.d->domain & 0xFFFFu, c.d->bus & 0xFFu, c.d->device & 0xFFu);
    snprintf(pci->busId, sizeof(pci->busId), NVML_DEVICE_PCI_BUS_ID_FMT, c.d->domain, c.d->bus & 0xFFu,
             c.d->device & 0xFFu);
    pci->domain = c.d->domain;
    pci->bus = c.d->bus;
    pci->device = c.d->device;
    pci->pciDeviceId = c.d->pci_device_id;
    pci->pciSubSystemId = c.d->pci_subsystem_id;
    return NVML_SUCCESS;
}

/* the unversioned and _v2 calls write the 52-byte layout of API 8 and before, and nothing beyond it */
static nvmlReturn_t pci_legacy(const char *sym, nvmlDevice_t device, nvmlPciInfo_v1_t *pci)
{
    call_t c;
    nvmlReturn_t rc = enter(device, sym, -1, pci != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busId, sizeof(pci->busId), NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, c.d->domain & 0xFFFFu,
             c.d->bus & 0xFFu, c.d->device & 0xFFu);
    pci->domain = c.d->domain;
    pci->bus = c.d->bus;
    pci->device = c.d->device;
    pci->pciDeviceId = c.d->pci_device_id;
    pci->pciSubSystemId = c.d->pci_subsystem_id;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_v1_t *pci)
{
    return pci_legacy("nvmlDeviceGetPciInfo_v2", device, pci);
}

static nvmlReturn_t x_nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_v1_t *pci)
{
    return pci_legacy("nvmlDeviceGetPciInfo", device, pci);
}

static nvmlReturn_t x_nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetComputeMode", -1, mode != NULL, true, &c);
    if (rc == NVML_SUCCESS)
        *mode = c.d->compute_mode;
    return rc;
}

/* ---- memory ---- */

/* total, reserved, used (allocated) of a GPU or MIG instance; false when the scenario gives no total */
static bool memory_of(const call_t *c, double *total, double *reserved, double *used)
{
    if (c->m) {
        *total = c->m->mem_total;
        *reserved = 0;
        *used = fk_series_at(&c->m->mem_used, c->t);
    } else {
        *total = c->d->mem_total;
        *reserved = val(c, V_MEM_RESERVED);
        *used = val(c, V_MEM_USED);
    }
    if (*used + *reserved > *total)
        *used = *total > *reserved ? *total - *reserved : 0;
    return *total > 0;
}

static nvmlReturn_t x_nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    call_t c;
    double total, reserved, used;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetMemoryInfo", -1, memory != NULL, true, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!memory_of(&c, &total, &reserved, &used))
        return NVML_ERROR_NOT_SUPPORTED;
    memory->total = ullval(total);
    memory->used = ullval(used + reserved); /* v1 counts the reserved memory as used */
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    call_t c;
    double total, reserved, used;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetMemoryInfo_v2", -1, memory != NULL, true, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (memory->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (!memory_of(&c, &total, &reserved, &used))
        return NVML_ERROR_NOT_SUPPORTED;
    memory->total = ullval(total);
    memory->reserved = ullval(reserved);
    memory->used = ullval(used);
    memory->free = memory->total - memory->reserved - memory->used;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetBAR1MemoryInfo", -1, bar1 != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (c.d->bar1_total <= 0)
        return NVML_ERROR_NOT_SUPPORTED;
    bar1->bar1Total = ullval(c.d->bar1_total);
    bar1->bar1Used = ullval(fmin(val(&c, V_BAR1_USED), c.d->bar1_total));
    bar1->bar1Free = bar1->bar1Total - bar1->bar1Used;
    return NVML_SUCCESS;
}

/* ---- utilisation ---- */

static nvmlReturn_t x_nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetUtilizationRates", -1, u != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (c.d->mig == 1 || (!has(&c, V_GPU_UTIL) && !has(&c, V_MEM_UTIL)))
        return NVML_ERROR_NOT_SUPPORTED; /* not on MIG-enabled GPUs */
    u->gpu = uval(&c, V_GPU_UTIL);
    u->memory = uval(&c, V_MEM_UTIL);
    return NVML_SUCCESS;
}

static nvmlReturn_t codec(const char *sym, int k, nvmlDevice_t device, unsigned *u, unsigned *period)
{
    call_t c;
    nvmlReturn_t rc = enter(device, sym, -1, u && period, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (c.d->mig == 1 || !has(&c, k))
        return NVML_ERROR_NOT_SUPPORTED;
    *u = uval(&c, k);
    *period = CODEC_PERIOD_US;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned *u, unsigned *period)
{
    return codec("nvmlDeviceGetEncoderUtilization", V_ENC, device, u, period);
}

static nvmlReturn_t x_nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned *u, unsigned *period)
{
    return codec("nvmlDeviceGetDecoderUtilization", V_DEC, device, u, period);
}

/* ---- one-value readings ---- */

static nvmlReturn_t read_uint(const char *sym, int k, nvmlDevice_t device, unsigned *out)
{
    call_t c;
    nvmlReturn_t rc = enter(device, sym, -1, out != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!has(&c, k))
        return NVML_ERROR_NOT_SUPPORTED;
    *out = uval(&c, k);
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned *power)
{
    return read_uint("nvmlDeviceGetPowerUsage", V_POWER, device, power);
}

static nvmlReturn_t x_nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned *limit)
{
    return read_uint("nvmlDeviceGetEnforcedPowerLimit", V_POWER_LIMIT, device, limit);
}

static nvmlReturn_t x_nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned *limit)
{
    return read_uint("nvmlDeviceGetPowerManagementLimit", V_POWER_LIMIT, device, limit);
}

static nvmlReturn_t x_nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned *speed)
{
    return read_uint("nvmlDeviceGetFanSpeed", V_FAN, device, speed);
}

static nvmlReturn_t x_nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned *value)
{
    return read_uint("nvmlDeviceGetPcieReplayCounter", V_PCIE_REPLAY, device, value);
}

static nvmlReturn_t x_nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetTotalEnergyConsumption", -1, energy != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!has(&c, V_POWER))
        return NVML_ERROR_NOT_SUPPORTED;
    /* mJ since the driver was loaded: mW integrated over seconds */
    double r = last_reload(c.d, c.t);
    double e = r < 0 ? c.d->energy_start + fk_series_integral(&c.d->v[V_POWER], 0, c.t)
                     : fk_series_integral(&c.d->v[V_POWER], r, c.t);
    *energy = ullval(floor(e));
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                               unsigned *temp)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetTemperature", (int)sensor,
                            temp && sensor == NVML_TEMPERATURE_GPU, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!has(&c, V_TEMP))
        return NVML_ERROR_NOT_SUPPORTED;
    *temp = uval(&c, V_TEMP);
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *t)
{
    call_t c;
    bool ok = t && (t->version != nvmlTemperature_v1 || t->sensorType == NVML_TEMPERATURE_GPU);
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetTemperatureV", t ? (int)t->sensorType : -1, ok, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (t->version != nvmlTemperature_v1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (!has(&c, V_TEMP))
        return NVML_ERROR_NOT_SUPPORTED;
    t->temperature = (int)lround(val(&c, V_TEMP));
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned *clock)
{
    static const int which[NVML_CLOCK_COUNT] = {V_CLK_GRAPHICS, V_CLK_SM, V_CLK_MEM, V_CLK_VIDEO};
    call_t c;
    bool ok = clock && (unsigned)type < NVML_CLOCK_COUNT;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetClockInfo", (int)type, ok, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!has(&c, which[type]))
        return NVML_ERROR_NOT_SUPPORTED;
    *clock = uval(&c, which[type]);
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *p)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetPerformanceState", -1, p != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!has(&c, V_PSTATE))
        return NVML_ERROR_NOT_SUPPORTED;
    *p = (nvmlPstates_t)uval(&c, V_PSTATE);
    return NVML_SUCCESS;
}

static nvmlReturn_t clock_reasons(const char *sym, nvmlDevice_t device, unsigned long long *reasons)
{
    call_t c;
    nvmlReturn_t rc = enter(device, sym, -1, reasons != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!has(&c, V_CLOCKS_EVENT))
        return NVML_ERROR_NOT_SUPPORTED;
    *reasons = ullval(val(&c, V_CLOCKS_EVENT));
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *r)
{
    return clock_reasons("nvmlDeviceGetCurrentClocksEventReasons", device, r);
}

static nvmlReturn_t x_nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *r)
{
    return clock_reasons("nvmlDeviceGetCurrentClocksThrottleReasons", device, r);
}

static nvmlReturn_t x_nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t policy,
                                                   nvmlViolationTime_t *viol)
{
    call_t c;
    bool ok =
        viol && ((policy >= NVML_PERF_POLICY_POWER && policy <= NVML_PERF_POLICY_RELIABILITY) ||
                 policy == NVML_PERF_POLICY_TOTAL_APP_CLOCKS || policy == NVML_PERF_POLICY_TOTAL_BASE_CLOCKS);
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetViolationStatus", (int)policy, ok, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    int k = policy == NVML_PERF_POLICY_POWER     ? V_VIOL_POWER
            : policy == NVML_PERF_POLICY_THERMAL ? V_VIOL_THERMAL
                                                 : -1;
    if (k < 0 || !has(&c, k))
        return NVML_ERROR_NOT_SUPPORTED;
    viol->referenceTime = fk_clock_wall_us(&S.clock, c.t);
    viol->violationTime = ullval(val(&c, k));
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                                  unsigned *value)
{
    call_t c;
    bool ok = value && (unsigned)counter < NVML_PCIE_UTIL_COUNT;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetPcieThroughput", (int)counter, ok, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    int k = counter == NVML_PCIE_UTIL_TX_BYTES ? V_PCIE_TX : V_PCIE_RX;
    if (!has(&c, k))
        return NVML_ERROR_NOT_SUPPORTED;
    *value = uval(&c, k);
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t type,
                                                  nvmlEccCounterType_t counter, unsigned long long *count)
{
    call_t c;
    bool ok = count && (unsigned)type < NVML_MEMORY_ERROR_TYPE_COUNT &&
              (unsigned)counter < NVML_ECC_COUNTER_TYPE_COUNT;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetTotalEccErrors", (int)type, ok, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    int k = type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? V_ECC_CORR : V_ECC_UNCORR;
    if (!has(&c, k))
        return NVML_ERROR_NOT_SUPPORTED;
    double v = val(&c, k); /* the series is the aggregate (lifetime) count */
    double r = last_reload(c.d, c.t);
    if (counter == NVML_VOLATILE_ECC && r >= 0)
        v -= fk_series_at(&c.d->v[k], r);
    *count = ullval(v);
    return NVML_SUCCESS;
}

/* ---- MIG ---- */

static nvmlReturn_t x_nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned *current, unsigned *pending)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetMigMode", -1, current && pending, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (c.d->mig < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = (unsigned)c.d->mig;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned *count)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetMaxMigDeviceCount", -1, count != NULL, false, &c);
    if (rc == NVML_SUCCESS)
        *count = c.d->mig == 1 ? c.d->mig_max : 0; /* zero when MIG is unsupported or disabled */
    return rc;
}

static nvmlReturn_t x_nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index,
                                                          nvmlDevice_t *mig)
{
    call_t c;
    nvmlReturn_t rc =
        enter(device, "nvmlDeviceGetMigDeviceHandleByIndex", (int)index, mig != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (c.d->mig < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    if (c.d->mig == 0 || index >= c.d->mig_max)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!c.d->migs[index].present)
        return NVML_ERROR_NOT_FOUND;
    *mig = &handles[c.d - S.dev][1 + index];
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned *is_mig)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceIsMigDeviceHandle", -1, is_mig != NULL, true, &c);
    if (rc == NVML_SUCCESS)
        *is_mig = c.m != NULL;
    return rc;
}

static nvmlReturn_t instance_id(const char *sym, bool gpu, nvmlDevice_t device, unsigned *id)
{
    call_t c;
    nvmlReturn_t rc = enter(device, sym, -1, id != NULL, true, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!c.m)
        return NVML_ERROR_NOT_SUPPORTED;
    *id = gpu ? c.m->gi : c.m->ci;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned *id)
{
    return instance_id("nvmlDeviceGetGpuInstanceId", true, device, id);
}

static nvmlReturn_t x_nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned *id)
{
    return instance_id("nvmlDeviceGetComputeInstanceId", false, device, id);
}

/* ---- processes ---- */

static bool proc_active(const call_t *c, const proc_t *p, int kind, long *pid)
{
    if (p->kind != kind || c->t < p->from || c->t >= p->to)
        return false;
    if (c->m && (p->gi != c->m->gi || p->ci != c->m->ci))
        return false;
    *pid = fk_pid_resolve(&p->pid);
    return *pid > 0;
}

static nvmlReturn_t procs(const char *sym, int kind, int version, nvmlDevice_t device, unsigned *count,
                          void *infos)
{
    call_t c;
    bool ok = count && (infos || *count == 0);
    nvmlReturn_t rc = enter(device, sym, -1, ok, true, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned n = 0;
    long pid;
    for (size_t i = 0; i < c.d->nprocs; i++)
        n += proc_active(&c, &c.d->procs[i], kind, &pid);
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned k = 0;
    for (size_t i = 0; i < c.d->nprocs && k < n; i++) {
        const proc_t *p = &c.d->procs[i];
        if (!proc_active(&c, p, kind, &pid))
            continue;
        if (version == 1) {
            nvmlProcessInfo_v1_t *e = (nvmlProcessInfo_v1_t *)infos + k;
            memset(e, 0, sizeof(*e));
            e->pid = (unsigned)pid;
            e->usedGpuMemory = p->used;
        } else {
            nvmlProcessInfo_t *e = (nvmlProcessInfo_t *)infos + k;
            memset(e, 0, sizeof(*e));
            e->pid = (unsigned)pid;
            e->usedGpuMemory = p->used;
            e->gpuInstanceId = c.d->mig == 1 ? p->gi : NVML_INSTANCE_ID_NONE;
            e->computeInstanceId = c.d->mig == 1 ? p->ci : NVML_INSTANCE_ID_NONE;
        }
        k++;
    }
    *count = k;
    return NVML_SUCCESS;
}

static nvmlReturn_t x_nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *n,
                                                              nvmlProcessInfo_t *p)
{
    return procs("nvmlDeviceGetComputeRunningProcesses_v3", PROC_COMPUTE, 3, d, n, p);
}

static nvmlReturn_t x_nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned *n,
                                                              nvmlProcessInfo_t *p)
{
    return procs("nvmlDeviceGetComputeRunningProcesses_v2", PROC_COMPUTE, 2, d, n, p);
}

static nvmlReturn_t x_nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned *n,
                                                           nvmlProcessInfo_v1_t *p)
{
    return procs("nvmlDeviceGetComputeRunningProcesses", PROC_COMPUTE, 1, d, n, p);
}

static nvmlReturn_t x_nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned *n,
                                                               nvmlProcessInfo_t *p)
{
    return procs("nvmlDeviceGetGraphicsRunningProcesses_v3", PROC_GRAPHICS, 3, d, n, p);
}

static nvmlReturn_t x_nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned *n,
                                                               nvmlProcessInfo_t *p)
{
    return procs("nvmlDeviceGetGraphicsRunningProcesses_v2", PROC_GRAPHICS, 2, d, n, p);
}

static nvmlReturn_t x_nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned *n,
                                                            nvmlProcessInfo_v1_t *p)
{
    return procs("nvmlDeviceGetGraphicsRunningProcesses", PROC_GRAPHICS, 1, d, n, p);
}

/* Visit the samples the "driver" holds at time t newer than lastSeen: for each putil rule its newest
 * PUTIL_BUFFER sample times at or before t, skipping all-zero samples (NVML reports only processes with some
 * utilisation) and PIDs that do not resolve. Fills `out` up to `cap`; returns the count. */
static unsigned putil_samples(const call_t *c, unsigned long long last_seen,
                              nvmlProcessUtilizationSample_t *out, unsigned cap)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->d->nputil; i++) {
        const putil_t *u = &c->d->putil[i];
        if (u->sm + u->mem + u->enc + u->dec == 0)
            continue;
        long pid = fk_pid_resolve(&u->pid);
        if (pid <= 0)
            continue;
        double times[PUTIL_BUFFER];
        int nt = 0;
        if (u->every <= 0) {
            if (u->at <= c->t)
                times[nt++] = u->at;
        } else {
            double end = fmin(c->t, u->to);
            if (end >= u->from) {
                double k = floor((end - u->from) / u->every);
                for (double j = fmax(0, k - PUTIL_BUFFER + 1); j <= k; j++)
                    times[nt++] = u->from + j * u->every;
            }
        }
        for (int j = 0; j < nt; j++) {
            unsigned long long ts = fk_clock_wall_us(&S.clock, times[j]);
            if (ts <= last_seen)
                continue;
            if (out && n < cap)
                out[n] = (nvmlProcessUtilizationSample_t){.pid = (unsigned)pid,
                                                          .timeStamp = ts,
                                                          .smUtil = u->sm,
                                                          .memUtil = u->mem,
                                                          .encUtil = u->enc,
                                                          .decUtil = u->dec};
            n++;
        }
    }
    return n;
}

static nvmlReturn_t x_nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                      nvmlProcessUtilizationSample_t *buf, unsigned *count,
                                                      unsigned long long last_seen)
{
    call_t c;
    nvmlReturn_t rc = enter(device, "nvmlDeviceGetProcessUtilization", -1, count != NULL, false, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (c.d->mig == 1)
        return NVML_ERROR_NOT_SUPPORTED; /* not on MIG-enabled GPUs */
    unsigned n = putil_samples(&c, last_seen, NULL, 0);
    if (n == 0) {
        *count = 0;
        return NVML_ERROR_NOT_FOUND;
    }
    if (!buf || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = putil_samples(&c, last_seen, buf, *count);
    return NVML_SUCCESS;
}

/* ---- exports ---- */

FK_EXPORT(nvmlInit, nvmlInit_fn, x_nvmlInit)
FK_EXPORT(nvmlShutdown, nvmlShutdown_fn, x_nvmlShutdown)
FK_EXPORT(nvmlErrorString, nvmlErrorString_fn, x_nvmlErrorString)
FK_EXPORT(nvmlSystemGetDriverVersion, nvmlSystemGetDriverVersion_fn, x_nvmlSystemGetDriverVersion)
FK_EXPORT(nvmlSystemGetNVMLVersion, nvmlSystemGetNVMLVersion_fn, x_nvmlSystemGetNVMLVersion)
FK_EXPORT(nvmlSystemGetCudaDriverVersion, nvmlSystemGetCudaDriverVersion_fn, x_nvmlSystemGetCudaDriverVersion)
FK_EXPORT(nvmlDeviceGetCount, nvmlDeviceGetCount_fn, x_nvmlDeviceGetCount)
FK_EXPORT(nvmlDeviceGetHandleByIndex, nvmlDeviceGetHandleByIndex_fn, x_nvmlDeviceGetHandleByIndex)
FK_EXPORT(nvmlDeviceGetName, nvmlDeviceGetName_fn, x_nvmlDeviceGetName)
FK_EXPORT(nvmlDeviceGetUUID, nvmlDeviceGetUUID_fn, x_nvmlDeviceGetUUID)
FK_EXPORT(nvmlDeviceGetPciInfo, nvmlDeviceGetPciInfo_v1_fn, x_nvmlDeviceGetPciInfo)
FK_EXPORT(nvmlDeviceGetComputeMode, nvmlDeviceGetComputeMode_fn, x_nvmlDeviceGetComputeMode)
FK_EXPORT(nvmlDeviceGetMemoryInfo, nvmlDeviceGetMemoryInfo_fn, x_nvmlDeviceGetMemoryInfo)
FK_EXPORT(nvmlDeviceGetBAR1MemoryInfo, nvmlDeviceGetBAR1MemoryInfo_fn, x_nvmlDeviceGetBAR1MemoryInfo)
FK_EXPORT(nvmlDeviceGetUtilizationRates, nvmlDeviceGetUtilizationRates_fn, x_nvmlDeviceGetUtilizationRates)
FK_EXPORT(nvmlDeviceGetEncoderUtilization, nvmlDeviceGetEncoderUtilization_fn,
          x_nvmlDeviceGetEncoderUtilization)
FK_EXPORT(nvmlDeviceGetDecoderUtilization, nvmlDeviceGetDecoderUtilization_fn,
          x_nvmlDeviceGetDecoderUtilization)
FK_EXPORT(nvmlDeviceGetPowerUsage, nvmlDeviceGetPowerUsage_fn, x_nvmlDeviceGetPowerUsage)
FK_EXPORT(nvmlDeviceGetEnforcedPowerLimit, nvmlDeviceGetEnforcedPowerLimit_fn,
          x_nvmlDeviceGetEnforcedPowerLimit)
FK_EXPORT(nvmlDeviceGetPowerManagementLimit, nvmlDeviceGetPowerManagementLimit_fn,
          x_nvmlDeviceGetPowerManagementLimit)
FK_EXPORT(nvmlDeviceGetFanSpeed, nvmlDeviceGetFanSpeed_fn, x_nvmlDeviceGetFanSpeed)
FK_EXPORT(nvmlDeviceGetPcieReplayCounter, nvmlDeviceGetPcieReplayCounter_fn, x_nvmlDeviceGetPcieReplayCounter)
FK_EXPORT(nvmlDeviceGetTemperature, nvmlDeviceGetTemperature_fn, x_nvmlDeviceGetTemperature)
FK_EXPORT(nvmlDeviceGetClockInfo, nvmlDeviceGetClockInfo_fn, x_nvmlDeviceGetClockInfo)
FK_EXPORT(nvmlDeviceGetPerformanceState, nvmlDeviceGetPerformanceState_fn, x_nvmlDeviceGetPerformanceState)
FK_EXPORT(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlDeviceGetCurrentClocksEventReasons_fn,
          x_nvmlDeviceGetCurrentClocksThrottleReasons)
FK_EXPORT(nvmlDeviceGetViolationStatus, nvmlDeviceGetViolationStatus_fn, x_nvmlDeviceGetViolationStatus)
FK_EXPORT(nvmlDeviceGetPcieThroughput, nvmlDeviceGetPcieThroughput_fn, x_nvmlDeviceGetPcieThroughput)
FK_EXPORT(nvmlDeviceGetTotalEccErrors, nvmlDeviceGetTotalEccErrors_fn, x_nvmlDeviceGetTotalEccErrors)
FK_EXPORT(nvmlDeviceGetComputeRunningProcesses, nvmlDeviceGetRunningProcesses_v1_fn,
          x_nvmlDeviceGetComputeRunningProcesses)
FK_EXPORT(nvmlDeviceGetGraphicsRunningProcesses, nvmlDeviceGetRunningProcesses_v1_fn,
          x_nvmlDeviceGetGraphicsRunningProcesses)
FK_EXPORT(nvmlDeviceGetProcessUtilization, nvmlDeviceGetProcessUtilization_fn,
          x_nvmlDeviceGetProcessUtilization)

#ifndef FAKE_NVML_OLD_ABI
FK_EXPORT(nvmlInit_v2, nvmlInit_fn, x_nvmlInit_v2)
FK_EXPORT(nvmlSystemGetCudaDriverVersion_v2, nvmlSystemGetCudaDriverVersion_fn,
          x_nvmlSystemGetCudaDriverVersion_v2)
FK_EXPORT(nvmlDeviceGetCount_v2, nvmlDeviceGetCount_fn, x_nvmlDeviceGetCount_v2)
FK_EXPORT(nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetHandleByIndex_fn, x_nvmlDeviceGetHandleByIndex_v2)
FK_EXPORT(nvmlDeviceGetPciInfo_v2, nvmlDeviceGetPciInfo_v1_fn, x_nvmlDeviceGetPciInfo_v2)
FK_EXPORT(nvmlDeviceGetPciInfo_v3, nvmlDeviceGetPciInfo_v3_fn, x_nvmlDeviceGetPciInfo_v3)
FK_EXPORT(nvmlDeviceGetMemoryInfo_v2, nvmlDeviceGetMemoryInfo_v2_fn, x_nvmlDeviceGetMemoryInfo_v2)
FK_EXPORT(nvmlDeviceGetTotalEnergyConsumption, nvmlDeviceGetTotalEnergyConsumption_fn,
          x_nvmlDeviceGetTotalEnergyConsumption)
FK_EXPORT(nvmlDeviceGetTemperatureV, nvmlDeviceGetTemperatureV_fn, x_nvmlDeviceGetTemperatureV)
FK_EXPORT(nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetCurrentClocksEventReasons_fn,
          x_nvmlDeviceGetCurrentClocksEventReasons)
FK_EXPORT(nvmlDeviceGetMigMode, nvmlDeviceGetMigMode_fn, x_nvmlDeviceGetMigMode)
FK_EXPORT(nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMaxMigDeviceCount_fn, x_nvmlDeviceGetMaxMigDeviceCount)
FK_EXPORT(nvmlDeviceGetMigDeviceHandleByIndex, nvmlDeviceGetMigDeviceHandleByIndex_fn,
          x_nvmlDeviceGetMigDeviceHandleByIndex)
FK_EXPORT(nvmlDeviceIsMigDeviceHandle, nvmlDeviceIsMigDeviceHandle_fn, x_nvmlDeviceIsMigDeviceHandle)
FK_EXPORT(nvmlDeviceGetGpuInstanceId, nvmlDeviceGetGpuInstanceId_fn, x_nvmlDeviceGetGpuInstanceId)
FK_EXPORT(nvmlDeviceGetComputeInstanceId, nvmlDeviceGetComputeInstanceId_fn, x_nvmlDeviceGetComputeInstanceId)
FK_EXPORT(nvmlDeviceGetComputeRunningProcesses_v2, nvmlDeviceGetRunningProcesses_v3_fn,
          x_nvmlDeviceGetComputeRunningProcesses_v2)
FK_EXPORT(nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetRunningProcesses_v3_fn,
          x_nvmlDeviceGetComputeRunningProcesses_v3)
FK_EXPORT(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlDeviceGetRunningProcesses_v3_fn,
          x_nvmlDeviceGetGraphicsRunningProcesses_v2)
FK_EXPORT(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlDeviceGetRunningProcesses_v3_fn,
          x_nvmlDeviceGetGraphicsRunningProcesses_v3)
#endif

/* handles are fixed addresses: set them up once when the library is loaded */
__attribute__((constructor)) static void fake_load(void)
{
    for (int d = 0; d < MAXDEV; d++)
        for (int m = 0; m <= MAXMIG; m++)
            handles[d][m] = (struct nvmlDevice_st){d, m - 1};
}
