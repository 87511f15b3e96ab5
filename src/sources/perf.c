/* SPDX-License-Identifier: MIT
 *
 * The `perf` source (see perf.h for what each scope counts). Three phases:
 *   init      builds the list of events: the generic software and hardware events, the FLOP events named
 *             through libpfm4 for the core PMU it detects, and the memory-controller events of every uncore
 *             IMC PMU it finds; nothing is opened yet. libpfm4 is not linked: libpfm.so.4 is loaded with
 *             dlopen (sys/dlib.h, the ABI subset in pfm_abi.h) only where the kernel lists a hardware PMU;
 *             where it cannot be loaded the `pfm` events are missing with dlerror's reason, the others are
 *             counted as usual;
 *   open      run mode in prepare_child (the command is held before exec), every other mode at the first
 *             sample (after the monitor raised its descriptor limit): each group of events is opened on each
 *             target; an event that fails is tried on the next target and its first errno is kept;
 *   collect   one read() per open group and target, one row per event and target.
 * The status of every event goes to the inventory once. Nothing here allocates per sample once the row
 * buffers are warm, and no value is derived: scaling and rates are the model's (src/model/part_perf.c).
 *
 * Unprivileged use: with perf_event_paranoid 2, a user may count its own processes in user mode only. An
 * open that fails with EACCES is retried once with exclude_kernel, and from then on every event is opened
 * that way (recorded as perf.user_only). task-clock still counts the whole task time then (it is not a
 * sampled event), page faults lose those taken in kernel mode, and context switches and migrations, which
 * happen in the kernel, would read 0: they are recorded missing with EACCES instead.
 */
#include "sources/perf.h"

#include "sys/cgroupfs.h"

#include "core/json.h"
#include "core/pidmap.h"
#include "core/util.h"
#include "sys/parse.h"

#include "sources/pfm_abi.h"
#include "sys/dlib.h"
#include "sys/sysattr.h"

#include <linux/perf_event.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- the table ---- */

static const js_column_t perf_cols[PERFC__MAX] = {
    [PERFC_EVENT] = {"event", "text", JS_TEXT, JS_LABEL, 0,
                     "event name (docs/METRICS.md, perf); a unit suffix where the count is not of events"},
    [PERFC_KIND] = {"kind", "text", JS_TEXT, JS_LABEL, 0,
                    "sw (software), hw (generic hardware), pfm (libpfm4)"},
    [PERFC_TARGET] = {"target", "text", JS_TEXT, JS_LABEL, 0,
                      "what is counted: tree, task, cpu, cgroup, or an uncore PMU (uncore_imc_0)"},
    [PERFC_TARGET_ID] = {"target_id", "id", JS_INT, JS_LABEL, 0,
                         "the command's PID (tree), the TID (task), the CPU (cpu, cgroup, uncore)"},
    [PERFC_COUNT] = {"count", "events", JS_INT, JS_COUNTER, 64,
                     "raw count since the counter was opened (task_clock_ns: ns; *_lines: 64-byte lines)"},
    [PERFC_ENABLED_NS] = {"time_enabled_ns", "ns", JS_INT, JS_COUNTER, 64, "time the event was enabled"},
    [PERFC_RUNNING_NS] = {"time_running_ns", "ns", JS_INT, JS_COUNTER, 64,
                          "time it was on a counter (less than enabled when multiplexed)"},
};
const js_table_t table_perf = {"perf", "per sample, event and target: raw perf_event counts and times",
                               PERFC__MAX, perf_cols};

/* ---- system calls, overridable by tests ---- */

static int real_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
    return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static const js_perf_syscalls_t real_syscalls = {real_open, read, close};
static const js_perf_syscalls_t *sys_calls = &real_syscalls;

void perf_set_syscalls(const js_perf_syscalls_t *s)
{
    sys_calls = s ? s : &real_syscalls;
}

/* ---- events ---- */

typedef enum { EK_SW, EK_HW, EK_PFM, EK__MAX } ev_kind_t;
static const char *const kind_names[EK__MAX] = {"sw", "hw", "pfm"};

/* Groups: events opened together and read with one read() (the leader is the first that opens). Small
 * groups, so that a group always fits the counters of a PMU (a group that does not fit is never counted). */
enum { G_SW, G_IPC, G_CACHE, G_BRANCH, G_FP_SCALAR, G_FP_128, G_FP_256, G_FP_512, G_FP_AMD, G_IMC_FIRST };

typedef struct {
    const char *name;
    ev_kind_t kind;
    uint32_t type;   /* EK_SW, EK_HW */
    uint64_t config; /* EK_SW, EK_HW */
    const char *pfm; /* EK_PFM: the libpfm4 name (for the core PMU libpfm4 detects) */
    int group;
    bool kernel_only; /* happens in the kernel: reads 0 under exclude_kernel, so not opened that way */
    bool task_only;   /* counts wall time on a per-CPU (every task) target: not opened there */
} ev_def_t;

/* clang-format off */
#define SW(n, c, g, k) {n, EK_SW, PERF_TYPE_SOFTWARE, c, NULL, g, k, false}
#define HW(n, c, g) {n, EK_HW, PERF_TYPE_HARDWARE, c, NULL, g, false, false}
#define PFM(n, e, g) {n, EK_PFM, 0, 0, e, g, false, false}
/* clang-format on */

/* The fixed default set. FLOP events: Intel's FP_ARITH_INST_RETIRED counts instructions per vector width
 * and precision (the model weighs them: 1, 2/4, 4/8, 8/16 FLOPs); AMD's RETIRED_SSE_AVX_FLOPS (Zen 2-4)
 * counts FLOPs of any precision directly. Only one family exists on a given CPU; the other is recorded
 * missing (ENOENT: not an event of the detected PMU). */
static const ev_def_t core_defs[] = {
    {"task_clock_ns", EK_SW, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL, G_SW, false, true},
    SW("context_switches", PERF_COUNT_SW_CONTEXT_SWITCHES, G_SW, true),
    SW("cpu_migrations", PERF_COUNT_SW_CPU_MIGRATIONS, G_SW, true),
    SW("page_faults", PERF_COUNT_SW_PAGE_FAULTS, G_SW, false),
    SW("minor_faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, G_SW, false),
    SW("major_faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, G_SW, false),
    HW("cycles", PERF_COUNT_HW_CPU_CYCLES, G_IPC),
    HW("instructions", PERF_COUNT_HW_INSTRUCTIONS, G_IPC),
    HW("cache_references", PERF_COUNT_HW_CACHE_REFERENCES, G_CACHE),
    HW("cache_misses", PERF_COUNT_HW_CACHE_MISSES, G_CACHE),
    HW("branch_instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, G_BRANCH),
    HW("branch_misses", PERF_COUNT_HW_BRANCH_MISSES, G_BRANCH),
    PFM("fp_scalar_single", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", G_FP_SCALAR),
    PFM("fp_scalar_double", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", G_FP_SCALAR),
    PFM("fp_128b_packed_single", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", G_FP_128),
    PFM("fp_128b_packed_double", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", G_FP_128),
    PFM("fp_256b_packed_single", "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", G_FP_256),
    PFM("fp_256b_packed_double", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", G_FP_256),
    PFM("fp_512b_packed_single", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", G_FP_512),
    PFM("fp_512b_packed_double", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", G_FP_512),
    PFM("fp_flops_any", "RETIRED_SSE_AVX_FLOPS:ANY", G_FP_AMD),
};
#define NCORE (sizeof(core_defs) / sizeof(core_defs[0]))

/* Memory traffic: the CAS commands of each memory controller (Intel server IMC uncore PMUs known to libpfm4:
 * Sandy Bridge-EP to Skylake-X/Cascade Lake), 64 bytes each. */
static const char *const imc_names[2] = {"mem_cas_read_lines", "mem_cas_write_lines"};
static const char *const imc_events[2] = {"UNC_M_CAS_COUNT:RD", "UNC_M_CAS_COUNT:WR"};

#define GROUP_MAX 8
#define MAX_IMC 32
#define MAX_TASKS 4096 /* per-task counters: a bound on descriptors (events x tasks) */

typedef struct {
    char name[40];
    ev_kind_t kind;
    uint32_t type;
    uint64_t config, config1, config2;
    int group;
    bool kernel_only;
    bool task_only;
    bool uncore;
    bool encoded;           /* type and config known: can be opened */
    char pmu[32];           /* uncore: the kernel PMU (target label), e.g. uncore_imc_0 */
    char encoding[192];     /* how it was named: "software type 1 config 0", libpfm4's full name */
    int err;                /* first failure (negative errno), 0 if none */
    const char *why;        /* what err means here, or NULL for strerror's text */
    bool excl_kernel;       /* opened with exclude_kernel */
    unsigned opened, tried; /* targets */
} ev_t;

typedef enum { TG_TREE, TG_TASK, TG_CPU, TG_CGROUP, TG_USER, TG_UNCORE, TG__MAX } tg_kind_t;
static const char *const tg_names[TG__MAX] = {"tree", "task", "cpu", "cgroup", "user", NULL};

/* One group opened on one target. */
typedef struct {
    int n;
    int fd[GROUP_MAX]; /* fd[0] is the leader */
    uint16_t ev[GROUP_MAX];
    const char *label; /* target label (static or an ev_t's pmu) */
    int32_t id;
    /* the last values read (a group whose read fails keeps them in the sums), and each member's row of the
     * summed rows (AGG_NONE: not summed, its own row: per task) */
    bool have;
    uint64_t val[GROUP_MAX], en, run;
    uint16_t slot[GROUP_MAX];
    /* a cgroup's counters (TG_CGROUP): when opened (CLOCK_MONOTONIC) and what is taken off time_enabled (see
     * cgroup_enabled_fix) */
    int64_t opened_ns;
    uint64_t en_off;
} ginst_t;

#define AGG_NONE UINT16_MAX
#define AGG_UNSET (UINT16_MAX - 1)

/* One summed row: an event over every counter set of one target kind (the tree's threads, the CPUs of a
 * cgroup or of the node, the user's processes, one uncore PMU's sockets). */
typedef struct {
    uint16_t ev;
    const char *label;
    int32_t id; /* the sets' common id, else -1 */
    bool have;  /* some set was read */
    uint64_t count, en, run;
} agg_t;

typedef struct {
    ev_t *ev;
    size_t nev;
    ginst_t *g;
    size_t ng, gcap;
    bool pfm_on;       /* libpfm4 initialised by this state */
    int pfm_rc;        /* perf_pfm_init's result, or -ENOENT when not tried (no hardware PMU) */
    char pfm_why[400]; /* why the libpfm4 events cannot be named (pfm_rc < 0) */
    int pfm_version;   /* pfm_get_version(), or -1 */
    char core_pmu[64]; /* libpfm4's core PMU model, "" if none */
    size_t nimc;
    bool opened;    /* the open phase ran */
    bool user_only; /* EACCES seen: exclude_kernel from then on */
    int paranoid;   /* perf_event_paranoid, or INT32_MIN if unreadable */
    char target_desc[400];
    /* cgroup fallback: processes already counted (directly or through inheritance) and the cgroup dir */
    js_pidmap_t known;
    int cg_fd;      /* dup of the cgroup directory for rescans, or -1 */
    unsigned tasks; /* per-task counter sets opened */
    bool tasks_capped;
    unsigned uncounted; /* attach on the root alone: processes of the tree at the attach it does not count */
    /* run: 0 while the command's tree is counted by inheritance; 1 once counted on its cgroup per CPU (the
     * inherited counters read a last time and closed: their rows keep that count); -errno when that was
     * refused (tried once) */
    int run_cgroup;
    uint64_t run_cgroup_sample; /* the sample it began with */
    /* per-task counter sets (attach --perf-per-task, watch --user without the user's cgroup, a v1 cgroup):
     * the label and id of their rows; "task" and the TID only with --perf-per-task, else summed per event */
    const char *task_label;
    int32_t task_id;
    agg_t *agg;
    size_t nagg, aggcap;
    js_buf_t buf;
    uint64_t rbuf[3 + GROUP_MAX];
} perf_state_t;

/* ---- small helpers ---- */

/* errno_name: "ENOENT" and the like, locale-independent. */
static const char *errno_name(int e, char *buf, size_t cap)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    const char *s = strerrorname_np(e);
    if (s)
        return s;
#endif
    snprintf(buf, cap, "errno %d", e);
    return buf;
}

/* ---- libpfm4, loaded with dlopen ---- */

/* The library is opened at the first perf_pfm_init and closed at the last perf_pfm_fini; a failed load
 * keeps its reason (dlerror's text) for perf_pfm_error. */
static const char *const pfm_sonames[] = {"libpfm.so.4", NULL};
static const js_dlsym_t pfm_syms[] = {
    {{"pfm_initialize"}, offsetof(js_pfm_api_t, initialize), true},
    {{"pfm_terminate"}, offsetof(js_pfm_api_t, terminate), true},
    {{"pfm_get_version"}, offsetof(js_pfm_api_t, get_version), true},
    {{"pfm_get_pmu_info"}, offsetof(js_pfm_api_t, get_pmu_info), true},
    {{"pfm_get_os_event_encoding"}, offsetof(js_pfm_api_t, get_os_event_encoding), true},
};
static js_dlib_t pfm_lib;
static js_pfm_api_t pfm;
static unsigned pfm_refs;
static char pfm_err[400];

static void pfm_unload(void)
{
    dlib_close(&pfm_lib);
    memset(&pfm, 0, sizeof(pfm));
}

int perf_pfm_init(void)
{
    if (pfm_refs) {
        pfm_refs++;
        return 0;
    }
    char why[320];
    pfm_err[0] = '\0';
    if (dlib_open(&pfm_lib, PERF_PFM_LIBRARY_ENV, pfm_sonames, why, sizeof(why)) < 0) {
        snprintf(pfm_err, sizeof(pfm_err), "libpfm4 not loadable: %.320s", why);
        return -ENOENT;
    }
    if (dlib_resolve(&pfm_lib, pfm_syms, sizeof(pfm_syms) / sizeof(pfm_syms[0]), &pfm, NULL, why,
                     sizeof(why)) < 0) {
        snprintf(pfm_err, sizeof(pfm_err), "libpfm4 not usable (%.120s): %.250s",
                 pfm_lib.path[0] ? pfm_lib.path : pfm_lib.opened_as, why);
        pfm_unload();
        return -ENOENT;
    }
    if (pfm.initialize() != JS_PFM_SUCCESS) {
        snprintf(pfm_err, sizeof(pfm_err), "libpfm4 failed to initialise");
        pfm_unload();
        return -ENODEV;
    }
    pfm_refs = 1;
    return 0;
}

const char *perf_pfm_error(void)
{
    return pfm_err;
}

void perf_pfm_fini(void)
{
    if (pfm_refs && --pfm_refs == 0) {
        pfm.terminate();
        pfm_unload();
    }
}

int perf_pfm_version(void)
{
    return pfm_refs ? pfm.get_version() : -ENODEV;
}

char *perf_pfm_core_pmu(char *buf, size_t cap)
{
    buf[0] = '\0';
    if (!pfm_refs)
        return buf;
    for (int p = 1; p < JS_PFM_PMU_BOUND; p++) {
        js_pfm_pmu_info_t info;
        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm.get_pmu_info(p, &info) == JS_PFM_SUCCESS && info.flags.is_present &&
            info.type == JS_PFM_PMU_TYPE_CORE && info.name) {
            snprintf(buf, cap, "%s", info.name);
            break;
        }
    }
    return buf;
}

int perf_pfm_encode(const char *name, struct perf_event_attr *attr, char *fstr, size_t cap)
{
    if (!pfm_refs)
        return -ENODEV;
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    char *full = NULL;
    js_pfm_perf_encode_arg_t arg;
    memset(&arg, 0, sizeof(arg));
    arg.attr = &a;
    arg.fstr = &full;
    arg.size = sizeof(arg);
    int rc = pfm.get_os_event_encoding(name, JS_PFM_PLM0 | JS_PFM_PLM3, JS_PFM_OS_PERF_EVENT, &arg);
    if (rc != JS_PFM_SUCCESS) {
        free(full);
        return rc == JS_PFM_ERR_NOTFOUND || rc == JS_PFM_ERR_UMASK || rc == JS_PFM_ERR_ATTR ||
                       rc == JS_PFM_ERR_NOTSUPP
                   ? -ENOENT
                   : -EINVAL;
    }
    attr->type = a.type;
    attr->config = a.config;
    attr->config1 = a.config1;
    attr->config2 = a.config2;
    if (fstr && cap)
        snprintf(fstr, cap, "%s", full ? full : name);
    free(full);
    return 0;
}

/* imc_pmus: the uncore IMC PMUs libpfm4 found present: libpfm4 and kernel names. Returns their count. */
static size_t imc_pmus(char (*pfm_name)[32], char (*kernel_name)[32], size_t cap)
{
    size_t n = 0;
    if (!pfm_refs)
        return 0;
    for (int p = 1; p < JS_PFM_PMU_BOUND && n < cap; p++) {
        js_pfm_pmu_info_t info;
        memset(&info, 0, sizeof(info));
        info.size = sizeof(info);
        if (pfm.get_pmu_info(p, &info) != JS_PFM_SUCCESS || !info.flags.is_present ||
            info.type != JS_PFM_PMU_TYPE_UNCORE || !info.name)
            continue;
        const char *s = strstr(info.name, "_unc_imc");
        if (!s || s[8] < '0' || s[8] > '9') /* imc0..imcN, not imc_uclk */
            continue;
        /* libpfm4's "skx_unc_imc3" is the kernel's "uncore_imc_3" */
        snprintf(pfm_name[n], sizeof(pfm_name[n]), "%s", info.name);
        snprintf(kernel_name[n], sizeof(kernel_name[n]), "uncore_imc_%d", atoi(s + 8));
        n++;
    }
    return n;
}

/* ---- init: the event list ---- */

/* hardware_pmu_listed: whether the kernel lists a PMU beyond the generic ones in bus/event_source/devices of
 * the sysfs root: 1 yes, 0 no, -1 cannot tell. Where it lists none, nothing libpfm4 names could be counted,
 * and its start-up (about 3 ms here, a third of jobscope's own) is saved. */
static int hardware_pmu_listed(const js_ctx_t *ctx)
{
    static const char *const generic[] = {"software", "tracepoint", "breakpoint", "kprobe",
                                          "uprobe",   "msr",        "power"};
    char **names;
    if (ctx->root.sys < 0 || sysattr_list(ctx->root.sys, "bus/event_source/devices", "", &names) < 0)
        return -1;
    int found = 0;
    for (char **n = names; !found && *n; n++) {
        found = 1;
        for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]) && found; i++)
            found = strcmp(*n, generic[i]) != 0;
    }
    sysattr_list_free(names);
    return found;
}

static void ev_fail(ev_t *e, int err, const char *why)
{
    if (!e->err) {
        e->err = err;
        e->why = why;
    }
}

static int perf_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    perf_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    st->cg_fd = -1;
    st->paranoid = INT32_MIN;
    st->task_label = tg_names[TG_TASK];
    pidmap_init(&st->known, 1);
    char text[32];
    if (fs_read_small(ctx->root.proc, "sys/kernel/perf_event_paranoid", text, sizeof(text)) > 0) {
        const char *p = text;
        int64_t v;
        if (parse_i64(&p, &v) == 0)
            st->paranoid = (int)v;
    }

    /* LIBPFM_FORCE_PMU (libpfm4's own testing switch) names a PMU the kernel need not have; without a
     * hardware PMU libpfm4 is not even loaded */
    const char *forced = getenv("LIBPFM_FORCE_PMU");
    st->pfm_version = -1;
    if ((forced && *forced) || hardware_pmu_listed(ctx) != 0) {
        st->pfm_rc = perf_pfm_init();
        snprintf(st->pfm_why, sizeof(st->pfm_why), "%s", perf_pfm_error());
    } else {
        st->pfm_rc = -ENOENT;
        snprintf(st->pfm_why, sizeof(st->pfm_why),
                 "the kernel lists no hardware PMU (bus/event_source/devices)");
    }
    st->pfm_on = st->pfm_rc == 0;
    if (st->pfm_on)
        st->pfm_version = perf_pfm_version();
    if (st->pfm_on)
        perf_pfm_core_pmu(st->core_pmu, sizeof(st->core_pmu));

    char pfm_imc[MAX_IMC][32], kernel_imc[MAX_IMC][32];
    st->nimc = st->pfm_on ? imc_pmus(pfm_imc, kernel_imc, MAX_IMC) : 0;
    size_t nimc_ev = st->nimc ? 2 * st->nimc : 2; /* without an IMC PMU: two entries to say so */
    st->ev = calloc(NCORE + nimc_ev, sizeof(*st->ev));
    if (!st->ev) {
        free(st);
        return -ENOMEM;
    }

    for (size_t i = 0; i < NCORE; i++) {
        const ev_def_t *d = &core_defs[i];
        ev_t *e = &st->ev[st->nev++];
        snprintf(e->name, sizeof(e->name), "%s", d->name);
        e->kind = d->kind;
        e->group = d->group;
        e->kernel_only = d->kernel_only;
        e->task_only = d->task_only;
        if (d->kind != EK_PFM) {
            e->type = d->type;
            e->config = d->config;
            e->encoded = true;
            snprintf(e->encoding, sizeof(e->encoding), "%s type %u config %llu",
                     d->kind == EK_SW ? "software" : "hardware", (unsigned)d->type,
                     (unsigned long long)d->config);
            continue;
        }
        if (!st->pfm_on) {
            ev_fail(e, st->pfm_rc, st->pfm_why);
            continue;
        }
        if (!st->core_pmu[0]) {
            ev_fail(e, -ENOENT, "libpfm4 detected no core PMU on this CPU");
            continue;
        }
        struct perf_event_attr a;
        memset(&a, 0, sizeof(a));
        int r = perf_pfm_encode(d->pfm, &a, e->encoding, sizeof(e->encoding));
        if (r < 0) {
            snprintf(e->encoding, sizeof(e->encoding), "%s", d->pfm);
            ev_fail(e, r, "libpfm4: not an event of the detected core PMU");
            continue;
        }
        e->type = a.type;
        e->config = a.config;
        e->config1 = a.config1;
        e->config2 = a.config2;
        e->encoded = true;
    }

    for (size_t m = 0; m < st->nimc; m++)
        for (int k = 0; k < 2; k++) {
            ev_t *e = &st->ev[st->nev++];
            snprintf(e->name, sizeof(e->name), "%s", imc_names[k]);
            e->kind = EK_PFM;
            e->group = G_IMC_FIRST + (int)m;
            e->uncore = true;
            snprintf(e->pmu, sizeof(e->pmu), "%s", kernel_imc[m]);
            char full[96];
            snprintf(full, sizeof(full), "%s::%s", pfm_imc[m], imc_events[k]);
            struct perf_event_attr a;
            memset(&a, 0, sizeof(a));
            int r = perf_pfm_encode(full, &a, e->encoding, sizeof(e->encoding));
            if (r < 0) {
                snprintf(e->encoding, sizeof(e->encoding), "%s", full);
                ev_fail(e, r, "libpfm4: no CAS count event on this memory controller");
                continue;
            }
            e->type = a.type;
            e->config = a.config;
            e->config1 = a.config1;
            e->config2 = a.config2;
            e->encoded = true;
        }
    if (!st->nimc)
        for (int k = 0; k < 2; k++) {
            ev_t *e = &st->ev[st->nev++];
            snprintf(e->name, sizeof(e->name), "%s", imc_names[k]);
            e->kind = EK_PFM;
            e->uncore = true;
            e->group = G_IMC_FIRST;
            if (!st->pfm_on)
                ev_fail(e, -ENOENT, st->pfm_why);
            else
                ev_fail(e, -ENOENT, "libpfm4 found no memory-controller (uncore IMC) PMU");
        }
    *ret_state = st;
    return 0;
}

static void perf_fini(void *state)
{
    perf_state_t *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->ng; i++)
        for (int k = 0; k < st->g[i].n; k++)
            if (st->g[i].fd[k] >= 0)
                sys_calls->close(st->g[i].fd[k]);
    free(st->g);
    free(st->agg);
    free(st->ev);
    if (st->cg_fd >= 0)
        close(st->cg_fd);
    pidmap_free(&st->known);
    buf_free(&st->buf);
    if (st->pfm_on)
        perf_pfm_fini();
    free(st);
}

/* ---- open ---- */

/* open_one: event `e` on (pid, cpu) in group `group_fd` (-1: as a leader). Returns the fd or -errno. */
static int open_one(perf_state_t *st, ev_t *e, pid_t pid, int cpu, int group_fd, unsigned long flags,
                    bool inherit, bool on_exec)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = e->type;
    a.config = e->config;
    a.config1 = e->config1;
    a.config2 = e->config2;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_GROUP;
    a.inherit = inherit;
    a.exclude_hv = 1;
    a.exclude_kernel = st->user_only;
    a.disabled = group_fd < 0 && on_exec; /* members follow their leader */
    a.enable_on_exec = group_fd < 0 && on_exec;
    flags |= PERF_FLAG_FD_CLOEXEC;
    int fd = sys_calls->open(&a, pid, cpu, group_fd, flags);
    if (fd >= 0) {
        e->excl_kernel = a.exclude_kernel;
        return fd;
    }
    int err = -errno;
    if (err == -EACCES && !st->user_only && !e->uncore && cpu < 0) {
        /* perf_event_paranoid >= 2 for an unprivileged user: user-mode counting only */
        a.exclude_kernel = 1;
        fd = sys_calls->open(&a, pid, cpu, group_fd, flags);
        if (fd >= 0) {
            st->user_only = true;
            e->excl_kernel = true;
            return fd;
        }
        err = -errno;
    }
    return err;
}

static int ginst_push(perf_state_t *st, ginst_t **ret)
{
    if (st->ng == st->gcap) {
        size_t cap = st->gcap ? st->gcap * 2 : 16;
        ginst_t *g = realloc(st->g, cap * sizeof(*g));
        if (!g)
            return -ENOMEM;
        st->g = g;
        st->gcap = cap;
    }
    *ret = &st->g[st->ng];
    memset(*ret, 0, sizeof(**ret));
    return 0;
}

/* open_target: every event (uncore ones if `uncore`, else the others) on one target, group by group.
 * Returns 0 or -ENOMEM; events that fail keep their errno. */
static int open_target(perf_state_t *st, bool uncore, pid_t pid, int cpu, unsigned long flags, bool inherit,
                       bool on_exec, const char *label, int32_t id)
{
    size_t i = 0;
    while (i < st->nev) {
        int group = st->ev[i].group;
        size_t end = i;
        while (end < st->nev && st->ev[end].group == group)
            end++;
        ginst_t *g = NULL;
        for (size_t k = i; k < end; k++) {
            ev_t *e = &st->ev[k];
            if (e->uncore != uncore || (uncore && strcmp(e->pmu, label) != 0))
                continue;
            if (!e->encoded)
                continue; /* nothing to open: its reason is kept */
            e->tried++;
            if (e->task_only && label == tg_names[TG_CPU]) {
                ev_fail(e, -EOPNOTSUPP,
                        "per CPU it counts wall time, idle included (the node's busy time is "
                        "in the system view)");
                continue;
            }
            if (e->kernel_only && st->user_only) {
                ev_fail(e, -EACCES,
                        "perf_event_paranoid allows user-mode counting only, and this event "
                        "happens in the kernel");
                continue;
            }
            if (!g) {
                int r = ginst_push(st, &g);
                if (r < 0)
                    return r;
                g->label = label;
                g->id = id;
                g->opened_ns = now_ns(CLOCK_MONOTONIC);
                for (int m = 0; m < GROUP_MAX; m++)
                    g->slot[m] = label == tg_names[TG_TASK] ? AGG_NONE : AGG_UNSET;
            }
            if (g->n == GROUP_MAX)
                break;
            int fd = open_one(st, e, pid, cpu, g->n ? g->fd[0] : -1, flags, inherit, on_exec);
            if (fd < 0) {
                ev_fail(e, fd, NULL);
                continue;
            }
            g->fd[g->n] = fd;
            g->ev[g->n++] = (uint16_t)k;
            e->opened++;
        }
        if (g && g->n)
            st->ng++;
        i = end;
    }
    return 0;
}

/* cpus: the online CPUs from sysfs (else 0..nprocs-1). Returns the count (<= cap). */
static int online_cpus(const js_ctx_t *ctx, int *cpus, size_t cap)
{
    char text[256];
    int n = -1;
    if (ctx->root.sys >= 0 &&
        fs_read_small(ctx->root.sys, "devices/system/cpu/online", text, sizeof(text)) > 0)
        n = cpulist_parse_ints(text, cpus, cap);
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
        for (int i = 0; i < n && (size_t)i < cap; i++)
            cpus[i] = i;
    }
    return (size_t)n > cap ? (int)cap : n;
}

/* open_uncore: the memory-controller events on the first CPU of each socket their PMU lists. */
static int open_uncore(perf_state_t *st, const js_ctx_t *ctx)
{
    for (size_t i = 0; i < st->nev; i++) {
        ev_t *e = &st->ev[i];
        if (!e->uncore || !e->pmu[0] ||
            (i > 0 && st->ev[i - 1].uncore && strcmp(st->ev[i - 1].pmu, e->pmu) == 0))
            continue; /* once per PMU */
        char path[96], text[256];
        int cpus[64], n = 0;
        snprintf(path, sizeof(path), "bus/event_source/devices/%s/cpumask", e->pmu);
        if (ctx->root.sys >= 0 && fs_read_small(ctx->root.sys, path, text, sizeof(text)) > 0)
            n = cpulist_parse_ints(text, cpus, 64);
        if (n <= 0) {
            cpus[0] = 0;
            n = 1;
        }
        for (int c = 0; c < n && c < 64; c++) {
            int r = open_target(st, true, -1, cpus[c], 0, false, false, e->pmu, cpus[c]);
            if (r < 0)
                return r;
        }
    }
    return 0;
}

/* open_task: the counters on one task (thread) with inheritance, labelled st->task_label. Returns 0 or
 * -ENOMEM. */
static int open_task(perf_state_t *st, pid_t tid)
{
    if (st->tasks >= MAX_TASKS) {
        st->tasks_capped = true;
        return 0;
    }
    st->tasks++;
    bool own = st->task_label == tg_names[TG_TASK];
    return open_target(st, false, tid, -1, 0, true, false, st->task_label, own ? tid : st->task_id);
}

/* open_process: every thread of `pid` (its task/ directory), then, if `children`, push its children to *q.
 * Returns 0, -ENOMEM, or -ESRCH when the process is gone. */
static int open_process(perf_state_t *st, const js_ctx_t *ctx, pid_t pid, int32_t **q, size_t *nq,
                        size_t *qcap, bool children)
{
    char path[64];
    snprintf(path, sizeof(path), "%d/task", (int)pid);
    js_pid_iter_t it;
    int r = pid_iter_open(&it, ctx->root.proc, path);
    if (r < 0)
        return r == -ENOMEM ? r : -ESRCH;
    int32_t tid;
    while (r == 0 && (tid = pid_iter_next(&it))) {
        /* counters first, then the children list: a child forked after the open is inherited, one forked
         * before it is listed */
        r = open_task(st, (pid_t)tid);
        if (r < 0 || !children)
            continue;
        snprintf(path, sizeof(path), "%d/task/%d/children", (int)pid, (int)tid);
        if (fs_read(ctx->root.proc, path, &st->buf) < 0)
            continue;
        const char *s = st->buf.p;
        uint64_t c;
        while (parse_u64(&s, &c) == 0) {
            if (*nq == *qcap) {
                size_t cap = *qcap ? *qcap * 2 : 64;
                int32_t *nqv = realloc(*q, cap * sizeof(**q));
                if (!nqv) {
                    r = -ENOMEM;
                    break;
                }
                *q = nqv;
                *qcap = cap;
            }
            (*q)[(*nq)++] = (int32_t)c;
        }
    }
    pid_iter_close(&it);
    return r;
}

/* open_tree: attach: every task of the root process and its descendants, breadth-first. */
static int open_tree(perf_state_t *st, const js_ctx_t *ctx)
{
    int32_t *q = NULL;
    size_t nq = 0, qcap = 0;
    int r = 0;
    if (!(q = malloc(64 * sizeof(*q))))
        return -ENOMEM;
    qcap = 64;
    q[nq++] = (int32_t)ctx->root_pid;
    for (size_t i = 0; i < nq && r >= 0; i++) {
        int isnew = 0;
        if (q[i] == ctx->monitor_pid)
            continue;
        if (!pidmap_put(&st->known, q[i], &isnew)) {
            r = -ENOMEM;
            break;
        }
        if (!isnew)
            continue;
        int x = open_process(st, ctx, q[i], &q, &nq, &qcap, true);
        if (x == -ENOMEM)
            r = x;
    }
    free(q);
    return r;
}

/* open_user: watch --user: every process whose real UID is the scope's, at the start (with inheritance). */
static int open_user(perf_state_t *st, const js_ctx_t *ctx)
{
    js_pid_iter_t it;
    int r = pid_iter_open(&it, ctx->root.proc, ".");
    if (r < 0)
        return r == -ENOMEM ? r : 0;
    int32_t pid;
    while (r >= 0 && (pid = pid_iter_next(&it))) {
        if ((pid_t)pid == ctx->monitor_pid)
            continue;
        char path[64];
        snprintf(path, sizeof(path), "%d/status", (int)pid);
        if (fs_read_record(ctx->root.proc, path, &st->buf) < 0)
            continue;
        uint64_t uid;
        if (kv_u64(st->buf.p, "Uid:", &uid) < 0 || (uid_t)uid != ctx->scope.uid)
            continue;
        int x = open_process(st, ctx, (pid_t)pid, NULL, NULL, NULL, false);
        if (x == -ENOMEM)
            r = x;
    }
    pid_iter_close(&it);
    return r;
}

/* cgroup_rescan: the cgroup fallback: per-task counters for processes of cgroup.procs not counted yet. On a
 * rescan (not `first`), a newcomer whose parent is counted is already covered by inheritance (it was forked
 * after its parent's counters were opened; one moved into the cgroup by hand would be missed). */
static int cgroup_rescan(perf_state_t *st, const js_ctx_t *ctx, bool first)
{
    if (st->cg_fd < 0 || fs_read(st->cg_fd, "cgroup.procs", &st->buf) < 0)
        return 0;
    /* the list is copied: open_process reuses st->buf */
    size_t n = 0, cap = 0;
    int32_t *pids = NULL;
    const char *s = st->buf.p;
    uint64_t v;
    int r = 0;
    while (parse_u64(&s, &v) == 0) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            int32_t *np = realloc(pids, cap * sizeof(*pids));
            if (!np) {
                free(pids);
                return -ENOMEM;
            }
            pids = np;
        }
        pids[n++] = (int32_t)v;
    }
    for (size_t i = 0; i < n && r >= 0; i++) {
        if (pids[i] == ctx->monitor_pid || pidmap_get(&st->known, pids[i]))
            continue;
        char path[64], text[512];
        js_pid_stat_t ps;
        snprintf(path, sizeof(path), "%d/stat", (int)pids[i]);
        bool inherited = !first && fs_read_small(ctx->root.proc, path, text, sizeof(text)) > 0 &&
                         parse_pid_stat(text, &ps) == 0 && pidmap_get(&st->known, ps.ppid);
        int isnew;
        if (!pidmap_put(&st->known, pids[i], &isnew)) {
            r = -ENOMEM;
            break;
        }
        if (!inherited && open_process(st, ctx, pids[i], NULL, NULL, NULL, false) == -ENOMEM)
            r = -ENOMEM;
    }
    free(pids);
    return r;
}

/* open_cgroup_cpus: the counters per online CPU with PERF_FLAG_PID_CGROUP on the cgroup directory
 * `cgroup_dirfd`, after a probe with the first event that can be opened at all. Returns the number of CPUs,
 * or a negative errno: the probe's (the kernel refuses cgroup counting there), or -ENOMEM. */
static int open_cgroup_cpus(perf_state_t *st, const js_ctx_t *ctx, int cgroup_dirfd)
{
    int cpus[1024];
    int n = online_cpus(ctx, cpus, 1024);
    ev_t *probe = NULL;
    for (size_t i = 0; i < st->nev && !probe; i++)
        if (!st->ev[i].uncore && !st->ev[i].err)
            probe = &st->ev[i];
    int fd =
        probe ? open_one(st, probe, cgroup_dirfd, cpus[0], -1, PERF_FLAG_PID_CGROUP, false, false) : -ENOENT;
    if (fd < 0)
        return fd;
    sys_calls->close(fd);
    for (int c = 0; c < n; c++) {
        int r = open_target(st, false, cgroup_dirfd, cpus[c], PERF_FLAG_PID_CGROUP, false, false,
                            tg_names[TG_CGROUP], cpus[c]);
        if (r < 0)
            return r;
    }
    return n;
}

int perf_open_cgroup(void *state, const js_ctx_t *ctx, int cgroup_dirfd)
{
    perf_state_t *st = state;
    int n = open_cgroup_cpus(st, ctx, cgroup_dirfd);
    if (n == -ENOMEM)
        return n;
    if (n >= 0) {
        snprintf(st->target_desc, sizeof(st->target_desc), "cgroup: per CPU (%d CPUs), PERF_FLAG_PID_CGROUP",
                 n);
        return 0;
    }
    /* no perf_event controller on that hierarchy (ENOENT/EBADF): per process of the cgroup */
    char e[32];
    snprintf(st->target_desc, sizeof(st->target_desc),
             "cgroup: per task of its processes, with inheritance (per-CPU cgroup counting refused: %s)",
             errno_name(-n, e, sizeof(e)));
    st->task_label = ctx->perf_per_task ? tg_names[TG_TASK] : tg_names[TG_CGROUP];
    st->task_id = -1;
    st->cg_fd = fcntl(cgroup_dirfd, F_DUPFD_CLOEXEC, 3);
    return cgroup_rescan(st, ctx, true);
}

/* tree_pids: the attached tree now: the root and its descendants (children files of every thread), into the
 * map `set` (value size 1). Returns how many, or -ENOMEM. */
static long tree_pids(perf_state_t *st, const js_ctx_t *ctx, js_pidmap_t *set)
{
    int32_t *q = malloc(64 * sizeof(*q));
    size_t nq = 0, cap = 64;
    long n = 0;
    if (!q)
        return -ENOMEM;
    q[nq++] = (int32_t)ctx->root_pid;
    for (size_t i = 0; i < nq; i++) {
        int isnew = 0;
        if (q[i] == ctx->monitor_pid)
            continue;
        if (!pidmap_put(set, q[i], &isnew)) {
            free(q);
            return -ENOMEM;
        }
        if (!isnew)
            continue;
        n++;
        char path[64];
        snprintf(path, sizeof(path), "%d/task", (int)q[i]);
        js_pid_iter_t it;
        if (pid_iter_open(&it, ctx->root.proc, path) < 0)
            continue;
        int32_t tid;
        while ((tid = pid_iter_next(&it)) > 0) {
            uint64_t c;
            snprintf(path, sizeof(path), "%d/task/%d/children", (int)q[i], (int)tid);
            if (fs_read(ctx->root.proc, path, &st->buf) < 0)
                continue;
            for (const char *t = st->buf.p; parse_u64(&t, &c) == 0;) {
                if (nq == cap) {
                    int32_t *nqv = realloc(q, 2 * cap * sizeof(*q));
                    if (!nqv) {
                        pid_iter_close(&it);
                        free(q);
                        return -ENOMEM;
                    }
                    q = nqv;
                    cap *= 2;
                }
                q[nq++] = (int32_t)c;
            }
        }
        pid_iter_close(&it);
    }
    free(q);
    return n;
}

/* open_tree_cgroup: attach: where the tree has a cgroup v2 of its own (the root's cgroup and those below it
 * hold the tree's processes and nothing else: not this monitor, no other job), count that cgroup per CPU:
 * every process of the tree, whenever it started, at a cost that does not grow with the tree. Returns 1 when
 * opened, 0 when not (why in `why`), -ENOMEM. *ret_procs: the tree's processes now. */
static int open_tree_cgroup(perf_state_t *st, const js_ctx_t *ctx, long *ret_procs, char *why, size_t whylen)
{
    js_pidmap_t set;
    pidmap_init(&set, 1);
    long n = tree_pids(st, ctx, &set);
    *ret_procs = n > 0 ? n : 0;
    js_cgroup_t *cg = NULL;
    js_cg_pids_t pids = {0};
    int r = 0;
    char err[128] = "";
    if (n < 0) {
        r = (int)n;
    } else if (cgroupfs_open_pid(&ctx->root, ctx->root_pid, &cg, err, sizeof(err)) < 0 || !cg) {
        snprintf(why, whylen, "its cgroup is not known (%s)", err);
    } else if (cg->m.unified < 0 || cg->dir[cg->m.unified] < 0) {
        snprintf(why, whylen, "its cgroup is not on cgroup v2");
    } else if (cgroupfs_pids(cg, true, &pids) < 0) {
        snprintf(why, whylen, "its cgroup's processes cannot be listed");
    } else {
        int32_t other = 0;
        for (size_t i = 0; i < pids.n && !other; i++)
            if (!pidmap_get(&set, pids.pid[i]))
                other = pids.pid[i];
        if (other) {
            snprintf(why, whylen, "its cgroup holds other processes too (PID %d%s)", (int)other,
                     other == ctx->monitor_pid ? ": this monitor" : "");
        } else {
            int c = open_cgroup_cpus(st, ctx, cg->dir[cg->m.unified]);
            if (c == -ENOMEM)
                r = c;
            else if (c < 0)
                snprintf(why, whylen, "per-CPU cgroup counting refused (%s)", strerror(-c));
            else {
                snprintf(st->target_desc, sizeof(st->target_desc),
                         "tree: its cgroup (nothing else in it), per CPU (%d CPUs), PERF_FLAG_PID_CGROUP", c);
                r = 1;
            }
        }
    }
    cgroupfs_pids_free(&pids);
    cgroupfs_free(cg);
    pidmap_free(&set);
    return r;
}

/* scope_cgroup_dirfd: a directory fd (borrowed) of the scope's cgroup, or -1. On cgroup v2 every directory
 * of the unified hierarchy takes PERF_FLAG_PID_CGROUP; a v1-only cgroup gives the directory of a hierarchy
 * that has it (cpuacct, else memory), where perf_open_cgroup's probe is refused (no perf_event controller
 * there) and it falls back to per-process counters from that directory's cgroup.procs. */
static int scope_cgroup_dirfd(const js_ctx_t *ctx)
{
    const js_cgroup_t *cg = ctx->scope.cgroup;
    if (!cg)
        return -1;
    if (cg->m.unified >= 0 && cg->dir[cg->m.unified] >= 0)
        return cg->dir[cg->m.unified];
    int fd = cgroupfs_dir(cg, JS_CG_CPUACCT, NULL);
    return fd >= 0 ? fd : cgroupfs_dir(cg, JS_CG_MEMORY, NULL);
}

/* open_scope: attach and watch: open the counters for the scope at the first sample. */
static int open_scope(perf_state_t *st, const js_ctx_t *ctx)
{
    int r = 0;
    if (!fsroot_is_live(&ctx->root)) {
        /* a fixture procfs: its PIDs are not this kernel's processes */
        snprintf(st->target_desc, sizeof(st->target_desc), "none: procfs is not the running kernel's");
        for (size_t i = 0; i < st->nev; i++)
            ev_fail(&st->ev[i], -ESRCH, "procfs is not the running kernel's");
        return 0;
    }
    if (ctx->mode == JS_MODE_WATCH && ctx->scope.kind == JS_SCOPE_NODE) {
        int cpus[1024];
        int n = online_cpus(ctx, cpus, 1024);
        snprintf(st->target_desc, sizeof(st->target_desc), "node: per CPU (%d CPUs), every task", n);
        for (int c = 0; c < n && r >= 0; c++)
            r = open_target(st, false, -1, cpus[c], 0, false, false, tg_names[TG_CPU], cpus[c]);
    } else if (ctx->mode == JS_MODE_WATCH && ctx->scope.kind == JS_SCOPE_CGROUP) {
        int fd = scope_cgroup_dirfd(ctx);
        if (fd >= 0) {
            r = perf_open_cgroup(st, ctx, fd);
        } else {
            snprintf(st->target_desc, sizeof(st->target_desc), "none: the cgroup's directory is not known");
            for (size_t i = 0; i < st->nev; i++)
                ev_fail(&st->ev[i], -ENOSYS, "the cgroup's directory is not known to the perf source");
        }
    } else if (ctx->mode == JS_MODE_WATCH && ctx->scope.kind == JS_SCOPE_USER) {
        /* the user's cgroup (user-UID.slice) per CPU where it exists, else a counter set per task */
        const js_cgroup_t *cg = ctx->scope.cgroup;
        int c = !ctx->perf_per_task && cg && cg->m.unified >= 0 && cg->dir[cg->m.unified] >= 0
                    ? open_cgroup_cpus(st, ctx, cg->dir[cg->m.unified])
                    : -ENOENT;
        if (c == -ENOMEM)
            return c;
        if (c >= 0) {
            snprintf(st->target_desc, sizeof(st->target_desc),
                     "user: the user's cgroup, per CPU (%d CPUs), PERF_FLAG_PID_CGROUP", c);
        } else {
            st->task_label = ctx->perf_per_task ? tg_names[TG_TASK] : tg_names[TG_USER];
            st->task_id = (int32_t)ctx->scope.uid;
            snprintf(st->target_desc, sizeof(st->target_desc),
                     "user: per task of the user's processes at the start, with inheritance%s",
                     ctx->perf_per_task ? ", a row per task (--perf-per-task)" : "");
            r = open_user(st, ctx);
        }
    } else if (ctx->root_pid <= 0) { /* jobscope job's slurmstepd roots: tasks come and go with the steps */
        snprintf(st->target_desc, sizeof(st->target_desc),
                 "none: the job's tasks under slurmstepd come and go");
        for (size_t i = 0; i < st->nev; i++)
            ev_fail(&st->ev[i], -ENOSYS, "not with slurmstepd roots (the job's cgroup has them)");
    } else if (ctx->perf_per_task) {
        st->task_label = tg_names[TG_TASK];
        snprintf(
            st->target_desc, sizeof(st->target_desc),
            "tree: per task of the tree at attach time, with inheritance, a row per task (--perf-per-task)");
        r = open_tree(st, ctx);
    } else {
        /* the job, not each task: its own cgroup per CPU where it has one, else the root's threads with
         * inheritance (what `perf stat -p` counts): the root and everything it starts from now on */
        long procs = 0;
        char why[160] = "";
        r = open_tree_cgroup(st, ctx, &procs, why, sizeof(why));
        if (r == 0) {
            st->task_label = tg_names[TG_TREE];
            st->task_id = (int32_t)ctx->root_pid;
            int isnew;
            if (!pidmap_put(&st->known, (int32_t)ctx->root_pid, &isnew))
                return -ENOMEM;
            r = open_process(st, ctx, ctx->root_pid, NULL, NULL, NULL, false);
            if (r == -ESRCH)
                r = 0;
            st->uncounted = procs > 1 ? (unsigned)(procs - 1) : 0;
            snprintf(
                st->target_desc, sizeof(st->target_desc),
                "tree: the root's threads with inheritance (the root and what it starts from the attach "
                "on; not counted: the %u other processes the tree had then, which --perf-per-task counts; "
                "no cgroup of its own: %.120s)",
                st->uncounted, why);
        }
    }
    if (r >= 0)
        r = open_uncore(st, ctx);
    return r;
}

static int perf_prepare_child(void *state, js_ctx_t *ctx, pid_t child)
{
    perf_state_t *st = state;
    st->opened = true;
    snprintf(st->target_desc, sizeof(st->target_desc),
             "tree: the command from exec, every descendant inherited (enable_on_exec, inherit)");
    int r = open_target(st, false, child, -1, 0, true, true, tg_names[TG_TREE], child);
    if (r >= 0)
        r = open_uncore(st, ctx);
    return r;
}

/* Run mode: reading an inherited counter sums one copy per live task of the tree (perf_read walks them), so
 * its cost grows with the tree: 0.73 us per process and sample at N = 1000 (22% of a BPF sample), while a
 * counter set per CPU on the run's own cgroup costs one read per CPU whatever the tree. Past this many live
 * processes per online CPU (and at least RUN_CGROUP_MIN), the tree is counted on its cgroup from then on. */
#define RUN_CGROUP_PER_CPU 8
#define RUN_CGROUP_MIN 64

/* run_cgroup_switch: run mode, a tree grown past the threshold, a v2 cgroup made for the command that it
 * joined: open the cgroup's counters per CPU; the caller reads every group once more (the inherited ones a
 * last time) and then calls run_cgroup_close. What the job does between the opening and that last read
 * (microseconds) is counted twice. Returns 1 when switched, 0 when not (now or ever), -ENOMEM. */
static int run_cgroup_switch(perf_state_t *st, js_ctx_t *ctx)
{
    const js_cgroup_t *cg = ctx->scope.cgroup;
    if (st->run_cgroup != 0 || ctx->live_members < RUN_CGROUP_MIN || ctx->mode != JS_MODE_RUN ||
        ctx->perf_per_task || !cg || cg->m.unified < 0 || !cg->created[cg->m.unified] ||
        cg->dir[cg->m.unified] < 0 || !(ctx->cg_joined & (1u << cg->m.unified)) ||
        !fsroot_is_live(&ctx->root))
        return 0;
    int cpus[1024];
    size_t ncpus = (size_t)online_cpus(ctx, cpus, 1024);
    size_t want = ncpus * RUN_CGROUP_PER_CPU > RUN_CGROUP_MIN ? ncpus * RUN_CGROUP_PER_CPU : RUN_CGROUP_MIN;
    if (ctx->live_members < want)
        return 0;
    size_t ng = st->ng;
    int n = open_cgroup_cpus(st, ctx, cg->dir[cg->m.unified]);
    if (n == -ENOMEM)
        return n;
    if (n < 0 || st->ng == ng) { /* refused: inheritance it stays */
        for (size_t i = ng; i < st->ng; i++)
            for (int k = 0; k < st->g[i].n; k++)
                sys_calls->close(st->g[i].fd[k]);
        st->ng = ng;
        st->run_cgroup = n < 0 ? n : -ENOENT;
        return 0;
    }
    st->run_cgroup = 1;
    st->run_cgroup_sample = ctx->seq;
    snprintf(
        st->target_desc, sizeof(st->target_desc),
        "tree: the command from exec, every descendant inherited (enable_on_exec, inherit), until sample "
        "%llu "
        "(%zu processes); from then on its cgroup per CPU (%d CPUs), PERF_FLAG_PID_CGROUP, the inherited "
        "counts kept",
        (unsigned long long)ctx->seq, ctx->live_members, n);
    ctx->inventory_changed = true;
    return 1;
}

/* run_cgroup_close: the inherited counters, read a last time, are closed; their rows keep that count. */
static void run_cgroup_close(perf_state_t *st)
{
    for (size_t i = 0; i < st->ng; i++) {
        ginst_t *g = &st->g[i];
        if (g->label != tg_names[TG_TREE])
            continue;
        for (int k = 0; k < g->n; k++)
            if (g->fd[k] >= 0) {
                sys_calls->close(g->fd[k]);
                g->fd[k] = -1;
            }
    }
}

/* cgroup_enabled_fix: a cgroup's counter per CPU runs on the cgroup's clock on that CPU, and on Linux 6.18 a
 * cgroup that no counter watched before can start that clock from 0: the first read then shows a
 * time_enabled of the machine's uptime (39,797 s seen, with 0.16 ms running), which the model would take for
 * multiplexing and scale the count by 2.4e8. Such a counter cannot have been enabled longer than it has been
 * open, so the excess over that is taken off this and every later read of the group (the offset is constant:
 * later intervals were exact). time_enabled stays at least time_running and never goes backwards. */
static void cgroup_enabled_fix(ginst_t *g, uint64_t prev_en)
{
    int64_t open_ns = now_ns(CLOCK_MONOTONIC) - g->opened_ns;
    uint64_t bound = (uint64_t)(open_ns > 0 ? open_ns : 0) + 1000000; /* 1 ms for the reads' own time */
    if (g->en < g->en_off)
        g->en_off = 0;
    uint64_t en = g->en - g->en_off;
    if (en > bound) {
        uint64_t keep = g->run > prev_en ? g->run : prev_en;
        g->en_off = g->en - (keep < g->en ? keep : g->en);
        en = g->en - g->en_off;
    }
    g->en = en;
}

/* ---- collect ---- */

static int emit(js_rows_t *out, const ev_t *e, const char *label, int32_t id, const uint64_t *val,
                const uint64_t *en, const uint64_t *run)
{
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    if (rows_set_str(out, &v[PERFC_EVENT], e->name, strlen(e->name)) < 0 ||
        rows_set_str(out, &v[PERFC_KIND], kind_names[e->kind], strlen(kind_names[e->kind])) < 0 ||
        rows_set_str(out, &v[PERFC_TARGET], label, strlen(label)) < 0)
        return -ENOMEM;
    val_int(&v[PERFC_TARGET_ID], id);
    if (val)
        val_int(&v[PERFC_COUNT], (int64_t)*val);
    if (en)
        val_int(&v[PERFC_ENABLED_NS], (int64_t)*en);
    if (run)
        val_int(&v[PERFC_RUNNING_NS], (int64_t)*run);
    return 0;
}

/* agg_slot: the summed row of event `ev` for target `label` (created), or AGG_NONE when out of memory. */
static uint16_t agg_slot(perf_state_t *st, uint16_t ev, const char *label, int32_t id)
{
    for (size_t i = 0; i < st->nagg; i++)
        if (st->agg[i].ev == ev && st->agg[i].label == label) {
            if (st->agg[i].id != id)
                st->agg[i].id = -1;
            return (uint16_t)i;
        }
    if (st->nagg == st->aggcap) {
        size_t cap = st->aggcap ? st->aggcap * 2 : 32;
        agg_t *a = cap < AGG_UNSET ? realloc(st->agg, cap * sizeof(*a)) : NULL;
        if (!a)
            return AGG_NONE;
        st->agg = a;
        st->aggcap = cap;
    }
    st->agg[st->nagg] = (agg_t){.ev = ev, .label = label, .id = id};
    return (uint16_t)st->nagg++;
}

/* perf_collect: one read() per group. A per-task group (--perf-per-task) gives one row per event; every other
 * group is summed with the groups of the same target kind into one row per event (count, time enabled and
 * time running each summed, as the kernel sums an inherited counter's copies), so the rows do not grow with
 * the tasks or the CPUs counted. A group whose read fails keeps its last values in the sum. */
static int perf_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    perf_state_t *st = state;
    int r;
    if (!st->opened) {
        st->opened = true;
        if (ctx->mode == JS_MODE_RUN)
            snprintf(st->target_desc, sizeof(st->target_desc), "none: the command was not prepared");
        else if ((r = open_scope(st, ctx)) < 0)
            return r;
    } else if (st->cg_fd >= 0 && (r = cgroup_rescan(st, ctx, false)) < 0) {
        return r;
    }
    int switched = run_cgroup_switch(st, ctx);
    if (switched < 0)
        return switched;
    for (size_t i = 0; i < st->nagg; i++) {
        st->agg[i].have = false;
        st->agg[i].count = st->agg[i].en = st->agg[i].run = 0;
    }
    for (size_t i = 0; i < st->ng; i++) {
        ginst_t *g = &st->g[i];
        size_t want = (3 + (size_t)g->n) * sizeof(uint64_t);
        ssize_t n = g->fd[0] >= 0 ? sys_calls->read(g->fd[0], st->rbuf, want) : -1; /* closed: its last */
        bool ok = n == (ssize_t)want && st->rbuf[0] == (uint64_t)g->n;
        if (ok) {
            uint64_t prev_en = g->have ? g->en : 0;
            g->have = true;
            g->en = st->rbuf[1];
            g->run = st->rbuf[2];
            memcpy(g->val, &st->rbuf[3], (size_t)g->n * sizeof(uint64_t));
            if (g->label == tg_names[TG_CGROUP]) {
                cgroup_enabled_fix(g, prev_en);
                st->rbuf[1] = g->en; /* a per-task row (AGG_NONE) emits rbuf */
            }
        }
        for (int k = 0; k < g->n; k++) {
            if (g->slot[k] == AGG_UNSET)
                g->slot[k] = agg_slot(st, g->ev[k], g->label, g->id);
            if (g->slot[k] == AGG_NONE) {
                if ((r = emit(rows[0], &st->ev[g->ev[k]], g->label, g->id, ok ? &st->rbuf[3 + k] : NULL,
                              ok ? &st->rbuf[1] : NULL, ok ? &st->rbuf[2] : NULL)) < 0)
                    return r;
            } else if (g->have) {
                agg_t *a = &st->agg[g->slot[k]];
                a->have = true;
                a->count += g->val[k];
                a->en += g->en;
                a->run += g->run;
            }
        }
    }
    if (switched)
        run_cgroup_close(st);
    for (size_t i = 0; i < st->nagg; i++) {
        const agg_t *a = &st->agg[i];
        if ((r = emit(rows[0], &st->ev[a->ev], a->label, a->id, a->have ? &a->count : NULL,
                      a->have ? &a->en : NULL, a->have ? &a->run : NULL)) < 0)
            return r;
    }
    return 0;
}

/* ---- inventory ---- */

static int perf_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    perf_state_t *st = state;
    char key[96], e[32];
    bool bad = false;
    if (st->paranoid != INT32_MIN)
        bad |= inventory_addf(inv, "perf", "perf.paranoid", "%d", st->paranoid) < 0;
    else
        bad |= inventory_add(inv, "perf", "perf.paranoid", NULL) < 0;
    /* the PMUs the kernel offers */
    js_buf_t list = {0};
    char **names = NULL;
    bool listed =
        ctx->root.sys >= 0 && sysattr_list(ctx->root.sys, "bus/event_source/devices", "", &names) >= 0;
    for (char **n = names; n && *n; n++)
        bad |= buf_printf(&list, "%s%s", list.len ? " " : "", *n) < 0;
    sysattr_list_free(names);
    bad |= inventory_add(inv, "perf", "perf.pmus", listed ? (list.p ? list.p : "") : NULL) < 0;
    buf_free(&list);
    if (st->pfm_on)
        bad |= inventory_addf(inv, "perf", "perf.libpfm", "API %d.%d, %s",
                              JS_PFM_MAJ_VERSION(st->pfm_version), JS_PFM_MIN_VERSION(st->pfm_version),
                              st->core_pmu[0] ? st->core_pmu : "no core PMU detected") < 0;
    else
        bad |= inventory_add(inv, "perf", "perf.libpfm", st->pfm_why) < 0;
    bad |= inventory_add(inv, "perf", "perf.target", st->target_desc) < 0;
    bad |= inventory_add(inv, "perf", "perf.rows",
                         ctx->perf_per_task ? "a row per task counted and per event (--perf-per-task); other "
                                              "targets summed per event"
                                            : "a row per event and target kind: counts and times summed over "
                                              "the tasks or CPUs counted") < 0;
    bad |= inventory_addf(inv, "perf", "perf.user_only", "%d", st->user_only ? 1 : 0) < 0;
    if (st->tasks_capped)
        bad |= inventory_addf(inv, "perf", "perf.tasks_capped", "%u", MAX_TASKS) < 0;
    /* each event once (uncore events once per name, over all their PMUs) */
    for (size_t i = 0; i < st->nev; i++) {
        const ev_t *x = &st->ev[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(st->ev[j].name, x->name) == 0;
        if (seen)
            continue;
        unsigned opened = 0, tried = 0;
        const ev_t *fail = NULL;
        for (size_t j = i; j < st->nev; j++)
            if (strcmp(st->ev[j].name, x->name) == 0) {
                opened += st->ev[j].opened;
                tried += st->ev[j].tried;
                if (!fail && st->ev[j].err)
                    fail = &st->ev[j];
            }
        snprintf(key, sizeof(key), "perf.%s.kind", x->name);
        bad |= inventory_add(inv, "perf", key, kind_names[x->kind]) < 0;
        snprintf(key, sizeof(key), "perf.%s.status", x->name);
        if (opened)
            bad |= inventory_add(inv, "perf", key, x->excl_kernel ? "ok (user mode only)" : "ok") < 0;
        else if (fail)
            bad |= inventory_addf(inv, "perf", key, "%s: %s", errno_name(-fail->err, e, sizeof(e)),
                                  fail->why ? fail->why : strerror(-fail->err)) < 0;
        else
            bad |= inventory_add(inv, "perf", key, "not opened: no target") < 0;
        snprintf(key, sizeof(key), "perf.%s.targets", x->name);
        bad |= inventory_addf(inv, "perf", key, "%u/%u", opened, tried) < 0;
        if (x->encoding[0]) {
            snprintf(key, sizeof(key), "perf.%s.encoding", x->name);
            bad |= inventory_add(inv, "perf", key, x->encoding) < 0;
        }
    }
    return bad ? -ENOMEM : 0;
}

static const js_table_t *const perf_tables[] = {&table_perf, NULL};

const js_source_t source_perf = {
    .name = "perf",
    .help = "perf_event counters: software, generic hardware, FLOPs and memory traffic via libpfm4",
    .tables = perf_tables,
    .init = perf_init,
    .collect = perf_collect,
    .fini = perf_fini,
    .prepare_child = perf_prepare_child,
    .inventory = perf_inventory,
};
