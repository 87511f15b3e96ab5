/* SPDX-License-Identifier: MIT
 *
 * The `cpufreq` source: the current frequency of each CPU, from devices/system/cpu/cpuN/cpufreq/
 * scaling_cur_freq (kHz) where the kernel has a cpufreq driver, else from the "cpu MHz" lines of procfs
 * cpuinfo (x86 prints them with or without cpufreq; virtual machines usually have no cpufreq driver, and
 * their figure is then the nominal clock the hypervisor reports). The inventory says which (`source`).
 * scaling_cur_freq is read every sample; cpuinfo, which is much dearer, every --status-every samples and at
 * the first and the closing sample (no rows in between).
 */
#ifndef JOBSCOPE_SOURCES_CPUFREQ_H
#define JOBSCOPE_SOURCES_CPUFREQ_H

#include "core/source.h"

/* table `cpufreq`: one row per CPU */
enum {
    CPUFREQ_CPU,     /* label: CPU number */
    CPUFREQ_CUR_KHZ, /* gauge: current frequency, kHz */
    CPUFREQ__MAX
};

extern const js_table_t table_cpufreq;
extern const js_source_t source_cpufreq;

/* cpufreq_parse_cpuinfo: append a row (cpu, kHz) to `out` (a buffer of table_cpufreq) for each "processor"
 * block of cpuinfo `text` that has a "cpu MHz" line ("2096.010" MHz -> 2096010 kHz, digits past the third
 * decimal dropped). Returns the number of rows appended, or -ENOMEM. */
int cpufreq_parse_cpuinfo(const char *text, js_rows_t *out);

#endif
