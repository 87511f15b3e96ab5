/* SPDX-License-Identifier: MIT
 *
 * libFuzzer target: the cgroup file parsers of the `cgroup` source (src/sources/cgroup.c), v1 and v2: a
 * single value (memory.current, "max"), cpu.stat, cpuacct.stat, memory.stat (v1 and v2), memory.events,
 * memory.oom_control, io.stat, blkio (bytes and ios files: the input split at its first NUL byte), and
 * *.pressure. The first byte picks the parser, the rest is the file's text.
 */
#include "fuzz.h"

#include "core/sample.h"
#include "sources/cgroup.h"
#include "sources/registry.h"

static js_sample_t sample;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (sample_init(&sample) < 0)
        abort();
    return 0;
}

static js_value_t *one_row(const js_table_t *t)
{
    js_value_t *v = rows_add(sample_rows(&sample, t));
    if (!v)
        abort();
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned which = data[0] % 10;
    char *t = fuzz_text(data + 1, size - 1);
    switch (which) {
    case 0: {
        js_value_t v;
        memset(&v, 0, sizeof(v));
        cgroup_parse_value(t, &v);
        break;
    }
    case 1:
        cgroup_parse_cpu_stat(t, one_row(&table_cgroup));
        break;
    case 2:
        cgroup_parse_cpuacct_stat(t, one_row(&table_cgroup));
        break;
    case 3:
    case 4:
        cgroup_parse_memory_stat(t, which == 3 ? 1 : 2, one_row(&table_cgroup_memory));
        break;
    case 5:
        cgroup_parse_memory_events(t, one_row(&table_cgroup_memory));
        break;
    case 6:
        cgroup_parse_oom_control(t, one_row(&table_cgroup_memory));
        break;
    case 7:
        cgroup_parse_io_stat(t, sample_rows(&sample, &table_cgroup_io));
        break;
    case 8: { /* blkio: two files, split at the first NUL of the input */
        size_t n = strlen(t);
        const char *ios = n < size - 1 ? t + n + 1 : "";
        cgroup_parse_blkio(t, ios, sample_rows(&sample, &table_cgroup_io));
        break;
    }
    case 9:
        cgroup_parse_pressure(t, (data[0] / 10) % 2 ? CG_PSI_MEMORY_SOME_US : CG_PSI_CPU_SOME_US,
                              one_row(&table_cgroup));
        break;
    }
    sample_clear(&sample);
    free(t);
    return 0;
}
