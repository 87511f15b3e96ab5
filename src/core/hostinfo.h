/* SPDX-License-Identifier: MIT
 *
 * Facts about the host recorded once per run in the recording's metadata: host name, kernel, CPU model and
 * counts, memory, clock tick and page size, and the CPUs a process may run on (its affinity mask).
 */
#ifndef JOBSCOPE_HOSTINFO_H
#define JOBSCOPE_HOSTINFO_H

#include "sys/fsroot.h"

#include <stdint.h>
#include <sys/types.h>

typedef struct {
    char host[256];
    char kernel[256];
    char cpu_model[256]; /* "" when unknown */
    long cpus_online;
    int cores_available;     /* CPUs in the affinity mask of the process asked about */
    int64_t mem_total_bytes; /* -1 when unknown */
    long clk_tck;
    long page_size;
} js_hostinfo_t;

/* hostinfo_read: fill `ret`, reading cpuinfo and meminfo through `root`; `pid` 0 means this process for the
 * affinity mask. Returns 0 (fields that cannot be read are left empty or -1). */
int hostinfo_read(const js_fsroot_t *root, pid_t pid, js_hostinfo_t *ret);

/* hostinfo_affinity: hi->cores_available from the affinity mask of `pid` (0: this process), or
 * hi->cpus_online where it cannot be read. The rest of `hi` is left as it is (hostinfo_read filled it). */
void hostinfo_affinity(pid_t pid, js_hostinfo_t *hi);

#endif
