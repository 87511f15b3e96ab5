/* SPDX-License-Identifier: MIT
 *
 * The part of libpfm4's ABI the perf source uses (src/sources/perf.c), declared here so that jobscope builds
 * without libpfm4-dev and loads libpfm.so.4 with dlopen (src/sys/dlib.h) only where the kernel lists a
 * hardware PMU. Transcribed from libpfm4 4.13.0 (Debian libpfm4-dev 4.13.0-1): /usr/include/perfmon/pfmlib.h
 * and pfmlib_perf_event.h. What makes the subset stable across libpfm4 4.x: PMU identifiers are "guaranteed
 * constant across libpfm revisions" (pfmlib.h), new ones are added before PFM_PMU_MAX (517 in 4.13, so a
 * loop over identifiers runs to a generous bound and skips those the library refuses), and every struct
 * passed in carries its own size, which the library checks against the size of its first version (ABI0:
 * pfm_pmu_info_t 56 bytes, pfm_perf_encode_arg_t 40 bytes on LP64) and only ever grows at the end. The
 * perf_event_attr the encoder fills is the kernel's (linux/perf_event.h), not libpfm4's copy.
 */
#ifndef JOBSCOPE_PFM_ABI_H
#define JOBSCOPE_PFM_ABI_H

#include <stddef.h>

struct perf_event_attr;

/* return codes (pfm_err_t is an int) */
#define JS_PFM_SUCCESS 0
#define JS_PFM_ERR_NOTSUPP (-1)
#define JS_PFM_ERR_NOTFOUND (-4)
#define JS_PFM_ERR_UMASK (-6)
#define JS_PFM_ERR_ATTR (-8)

/* privilege levels of an event (dfl_plm) */
#define JS_PFM_PLM0 0x01 /* kernel */
#define JS_PFM_PLM3 0x08 /* user */

/* pfm_get_version's value: major << 16 | minor */
#define JS_PFM_MAJ_VERSION(v) ((v) >> 16)
#define JS_PFM_MIN_VERSION(v) ((v)&0xffff)

/* pfm_pmu_t: PFM_PMU_NONE is 0; the loop bound over identifiers (4.13's PFM_PMU_MAX is 517) */
#define JS_PFM_PMU_BOUND 2048
/* pfm_pmu_type_t */
#define JS_PFM_PMU_TYPE_CORE 1
#define JS_PFM_PMU_TYPE_UNCORE 2
/* pfm_os_t */
#define JS_PFM_OS_PERF_EVENT 1

/* pfm_pmu_info_t (pfmlib.h); the enums pfm_pmu_t and pfm_pmu_type_t are int-sized */
typedef struct {
    const char *name; /* PMU model name, e.g. "skx", "skx_unc_imc0" */
    const char *desc;
    size_t size; /* set by the caller: sizeof this struct */
    int pmu;     /* pfm_pmu_t */
    int type;    /* pfm_pmu_type_t */
    int nevents;
    int first_event;
    int max_encoding;
    int num_cntrs;
    int num_fixed_cntrs;
    struct {
        unsigned int is_present : 1; /* present on this host (or forced with LIBPFM_FORCE_PMU) */
        unsigned int is_dfl : 1;
        unsigned int reserved_bits : 30;
    } flags;
} js_pfm_pmu_info_t;

/* pfm_perf_encode_arg_t (pfmlib_perf_event.h), the argument of pfm_get_os_event_encoding for
 * PFM_OS_PERF_EVENT */
typedef struct {
    struct perf_event_attr *attr; /* in/out */
    char **fstr;                  /* out: the fully qualified event name, malloc'd by the library */
    size_t size;                  /* sizeof this struct */
    int idx;
    int cpu;
    int flags;
    int pad0;
} js_pfm_perf_encode_arg_t;

#if defined(__LP64__)
_Static_assert(sizeof(js_pfm_pmu_info_t) == 56, "pfm_pmu_info_t is 56 bytes on LP64 (PFM_PMU_INFO_ABI0)");
_Static_assert(sizeof(js_pfm_perf_encode_arg_t) == 40, "pfm_perf_encode_arg_t is 40 bytes on LP64");
#endif

/* The entry points, bound by dlib_resolve (all required). */
typedef struct {
    int (*initialize)(void);                           /* pfm_initialize */
    void (*terminate)(void);                           /* pfm_terminate */
    int (*get_version)(void);                          /* pfm_get_version */
    int (*get_pmu_info)(int pmu, js_pfm_pmu_info_t *); /* pfm_get_pmu_info */
    /* pfm_get_os_event_encoding; args is a js_pfm_perf_encode_arg_t for JS_PFM_OS_PERF_EVENT */
    int (*get_os_event_encoding)(const char *str, int dfl_plm, int os, void *args);
} js_pfm_api_t;

#endif
