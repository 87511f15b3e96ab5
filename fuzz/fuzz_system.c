/* SPDX-License-Identifier: MIT
 *
 * libFuzzer target: the node-wide /proc parsers of the `system` and `cpufreq` sources (src/sources/system.c,
 * cpufreq.c): /proc/stat, loadavg, pressure/{cpu,memory,io}, meminfo, net/dev, diskstats, cpuinfo. The first
 * byte picks the parser, the rest is the file's text; rows go into a sample of every registered table, which
 * is cleared after each input (so a parser that appends unbounded rows shows up as a leak or an OOM).
 */
#include "fuzz.h"

#include "core/sample.h"
#include "sources/cpufreq.h"
#include "sources/system.h"
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
    unsigned which = data[0] % 8;
    char *t = fuzz_text(data + 1, size - 1);
    switch (which) {
    case 0:
        system_parse_stat(t, sample_rows(&sample, &table_cpu), one_row(&table_system));
        break;
    case 1:
        system_parse_loadavg(t, one_row(&table_system));
        break;
    case 2:
    case 3:
    case 4:
        system_parse_pressure(t, (system_psi_t)(which - 2), one_row(&table_system));
        break;
    case 5:
        system_parse_meminfo(t, one_row(&table_memory));
        break;
    case 6:
        if (size > 1 && (data[1] & 1))
            system_parse_net_dev(t, sample_rows(&sample, &table_net));
        else
            system_parse_diskstats(t, sample_rows(&sample, &table_disk));
        break;
    case 7:
        cpufreq_parse_cpuinfo(t, sample_rows(&sample, &table_cpufreq));
        break;
    }
    sample_clear(&sample);
    free(t);
    return 0;
}
