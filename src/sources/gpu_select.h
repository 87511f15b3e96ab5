/* SPDX-License-Identifier: MIT
 *
 * Which GPUs a GPU source (nvml, rocm) watches, shared by both. The user's `--gpus SPEC` (ctx->scope.gpus)
 * wins; otherwise the devices the job may use, from the environment the command runs with (run mode: the
 * monitor's own, which the command inherits; attach mode: PID/environ of the watched process through the
 * procfs root), in the order of the variables the source names (NVIDIA: CUDA_VISIBLE_DEVICES, then
 * NVIDIA_VISIBLE_DEVICES; AMD: ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES); with none
 * set, or in watch mode, every device.
 *
 * A SPEC is `all`, `none`, or a comma-separated list of indices (the library's own device numbering) and
 * UUIDs ("GPU-6f4e2b1c-...", or a unique prefix of one; a MIG instance's "MIG-..." UUID selects the GPU it
 * is on). A list from a variable follows CUDA's rule: it ends at the first entry that names no device (so
 * "-1" hides every GPU); a list from --gpus skips such entries and the source reports them.
 *
 * Also here: what both GPU sources do alike at init (the selection, `--gpus none`, loading the vendor
 * library, each failure with its one-line reason) and with a call that fails (its status row, once per code).
 */
#ifndef JOBSCOPE_SOURCES_GPU_SELECT_H
#define JOBSCOPE_SOURCES_GPU_SELECT_H

#include "core/source.h"
#include "sys/dlib.h"

#include <stdbool.h>
#include <stddef.h>

#define GPU_SEL_MAX 64  /* entries of a list */
#define GPU_SEL_ITEM 96 /* longest entry kept (a UUID is 40 characters, a MIG UUID 40 or 62) */

typedef enum { GPU_SEL_ALL, GPU_SEL_NONE, GPU_SEL_LIST } gpu_sel_kind_t;

typedef struct {
    gpu_sel_kind_t kind;
    bool cuda_rule; /* a list ends at the first entry that names no device (a variable's list) */
    size_t n;
    char item[GPU_SEL_MAX][GPU_SEL_ITEM];
    char origin[48]; /* "--gpus", "CUDA_VISIBLE_DEVICES", ..., or "default" */
    char spec[256];  /* the text as given ("" for the default) */
} gpu_sel_t;

/* One device as a selection sees it: the library's index, its UUID, and the UUIDs of its MIG instances. */
typedef struct {
    unsigned index;
    const char *uuid;       /* may be NULL or "" when unknown */
    const char *const *sub; /* MIG instance UUIDs, may be NULL */
    size_t nsub;
} gpu_dev_id_t;

/* gpu_select_parse: parse SPEC (`all`, `none`, or a list; blanks around entries ignored) into *ret, with
 * `origin` recorded. An empty SPEC, and "void" (NVIDIA's container runtime), mean none. Returns 0, or -EINVAL
 * for a list of more than GPU_SEL_MAX entries or an entry longer than GPU_SEL_ITEM - 1 (then *ret is none).
 */
int gpu_select_parse(const char *spec, const char *origin, gpu_sel_t *ret);

/* gpu_select_for: the selection for a source: --gpus when given (ctx->scope.gpus), else the first variable of
 * `vars` (NULL-terminated) set in the job's environment (run: getenv; attach: <procfs>/ROOT/environ; an
 * unreadable environ counts as none set), else all. Watch mode without --gpus: all. Returns 0 or -EINVAL
 * (a bad --gpus). */
int gpu_select_for(const js_ctx_t *ctx, const char *const *vars, gpu_sel_t *ret);

/* gpu_select_apply: mark in ret_selected[i] (n entries, cleared first) the devices of `devs` the selection
 * names. An entry that names no device is appended to `unmatched` ("" if none; comma-separated, cut at `cap`)
 * and, under the CUDA rule, ends the list. Returns the number of devices selected. */
size_t gpu_select_apply(const gpu_sel_t *sel, const gpu_dev_id_t *devs, size_t n, bool *ret_selected,
                        char *unmatched, size_t cap);

/* gpu_select_describe: "all", "none", or the list, with its origin: "CUDA_VISIBLE_DEVICES=0,1". */
void gpu_select_describe(const gpu_sel_t *sel, char *buf, size_t cap);

/* gpu_pid_namespace: "initial" when the procfs root is the live kernel's and this process is in the initial
 * PID namespace (the inode of <procfs>/self/ns/pid is PROC_PID_INIT_INO, 0xEFFFFFFC), "nested" when it is
 * live and not, "unknown" for a fixture procfs or an unreadable link. GPU drivers report PIDs of the initial
 * namespace (they know no others), so only "initial" (and "unknown": fixtures) lets them be compared with
 * the PIDs read from this procfs. Static text. */
const char *gpu_pid_namespace(const js_fsroot_t *root);

/* gpu_select_source: the selection of a GPU source at init (gpu_select_for with `vars`). Returns 0, -EINVAL
 * (a bad --gpus) or -ECANCELED (`--gpus none`), with the reason in `why` (`whylen` bytes, may be NULL). */
int gpu_select_source(const js_ctx_t *ctx, const char *const *vars, gpu_sel_t *ret, char *why, size_t whylen);

/* gpu_load: load the vendor library (dlib_open with the override variable `env` and `sonames`) and bind its
 * `nsyms` entry points `syms` into `api`. `what` names the library in the reason ("NVML", "ROCm SMI").
 * Returns 0, -ENOENT (no library could be loaded) or -ENOSYS (a required entry point is missing), with the
 * reason in `why`; on failure `lib` may hold the opened library (dlib_close it). */
int gpu_load(js_dlib_t *lib, const char *env, const char *const *sonames, const js_dlsym_t *syms,
             size_t nsyms, void *api, const char *what, char *why, size_t whylen);

/* gpu_status_once: record that metric `metric` of GPU `index` failed with library code `rc` (text `text`)
 * as a row of the source's status table `out` (columns gpu, metric, rc, error: nvml_status and rocm_status
 * alike), once per code: `seen` is that metric's bitmap of codes already recorded (codes 31 and above share
 * bit 31). `out` may be NULL (nothing is recorded). */
void gpu_status_once(js_rows_t *out, uint32_t *seen, int64_t index, const char *metric, int64_t rc,
                     const char *text);

#endif
