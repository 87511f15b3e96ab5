/* SPDX-License-Identifier: MIT
 *
 * libFuzzer target: the NVML and ROCm SMI sources' decoding of what a vendor library hands back
 * (src/sources/nvml.c, rocm.c): counts, strings, error codes, process lists, MIG instances, clock levels, a
 * device lost or reloaded. The values come from the fake vendor libraries (tests/fakes), whose scenario file
 * is the input: byte 0 picks NVML (even) or ROCm (odd), the rest is the scenario. Each input runs init, three
 * collects at scenario times 0, 5 and 60 s, the inventory, and fini, as a run does.
 */
#include "fuzz.h"

#include "core/sample.h"
#include "core/source.h"
#include "sources/nvml.h"
#include "sources/rocm.h"
#include "sources/registry.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static char dir[64], scn[96], timef[96];
static js_fsroot_t root;

static void put(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof(dir), "/tmp/jobscope-fuzz-gpu-XXXXXX");
    if (!mkdtemp(dir) || fsroot_open(&root, NULL, NULL) < 0)
        abort();
    snprintf(scn, sizeof(scn), "%s/scn", dir);
    snprintf(timef, sizeof(timef), "%s/time", dir);
    /* the fakes are instrumented for coverage, and libFuzzer keeps pointers to their counters: a dlclose that
     * unmapped them would crash it, so load them once for good (the sources' dlopen and dlclose then only
     * count references; a fake reads its scenario at each init that takes its own count from 0 to 1) */
    static const char *const libs[] = {FAKE_NVML_DIR "/libnvidia-ml.so.1",
                                       FAKE_ROCM_DIR "/librocm_smi64.so.1"};
    for (int i = 0; i < 2; i++)
        if (!dlopen(libs[i], RTLD_NOW | RTLD_NODELETE))
            abort();
    setenv("JOBSCOPE_NVML_LIBRARY", libs[0], 1);
    setenv("JOBSCOPE_ROCM_SMI_LIBRARY", libs[1], 1);
    setenv("FAKE_NVML_SCENARIO", scn, 1);
    setenv("FAKE_ROCM_SMI_SCENARIO", scn, 1);
    setenv("FAKE_NVML_TIME_FILE", timef, 1);
    setenv("FAKE_ROCM_SMI_TIME_FILE", timef, 1);
    setenv("JOBSCOPE_TEST_PID", "1234", 1);
    setenv("JOBSCOPE_TEST_CHILD_PID", "1235", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("NVIDIA_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("HIP_VISIBLE_DEVICES");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 16384)
        return 0;
    const js_source_t *src = (data[0] & 1) ? &source_rocm : &source_nvml;
    put(scn, data + 1, size - 1);
    put(timef, "0\n", 2);
    js_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    ctx.mode = (data[0] & 2) ? JS_MODE_ATTACH : JS_MODE_RUN;
    ctx.status_every = 2;
    ctx.root = root;
    js_sample_t s;
    if (sample_init(&s) < 0)
        abort();
    js_rows_t *rows[16] = {0};
    for (int i = 0; src->tables[i] && i < 15; i++)
        rows[i] = sample_rows(&s, src->tables[i]);
    void *state = NULL;
    if (src->init(&ctx, &state, NULL, 0) == 0) {
        static const char *const times[] = {"0\n", "5\n", "60\n"};
        for (int k = 0; k < 3; k++) {
            put(timef, times[k], strlen(times[k]));
            sample_clear(&s);
            ctx.seq = (uint64_t)k + 1;
            ctx.final = k == 2;
            src->collect(state, &ctx, rows);
        }
        if (src->inventory) {
            sample_clear(&s);
            src->inventory(state, &ctx, sample_rows(&s, &table_inventory));
        }
        src->fini(state);
    }
    sample_free(&s);
    return 0;
}
