/* SPDX-License-Identifier: MIT
 *
 * Host facts for the run metadata (see hostinfo.h).
 */
#include "core/hostinfo.h"

#include "sys/parse.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void hostinfo_affinity(pid_t pid, js_hostinfo_t *hi)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    hi->cores_available =
        sched_getaffinity(pid, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : (int)hi->cpus_online;
}

int hostinfo_read(const js_fsroot_t *root, pid_t pid, js_hostinfo_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(ret->host, sizeof(ret->host), "%s", u.nodename);
        snprintf(ret->kernel, sizeof(ret->kernel), "%s %s %s", u.sysname, u.release, u.machine);
    }
    ret->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
    ret->clk_tck = sysconf(_SC_CLK_TCK);
    ret->page_size = sysconf(_SC_PAGESIZE);
    hostinfo_affinity(pid, ret);
    js_buf_t b = {0};
    if (fs_read(root->proc, "cpuinfo", &b) == 0) {
        const char *p = strstr(b.p, "model name");
        if (p && (p = strchr(p, ':'))) {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            size_t n = strcspn(p, "\n");
            if (n >= sizeof(ret->cpu_model))
                n = sizeof(ret->cpu_model) - 1;
            memcpy(ret->cpu_model, p, n);
            ret->cpu_model[n] = '\0';
        }
    }
    uint64_t kb;
    ret->mem_total_bytes = -1;
    if (fs_read(root->proc, "meminfo", &b) == 0 && kv_u64(b.p, "MemTotal:", &kb) == 0)
        ret->mem_total_bytes = (int64_t)kb * 1024;
    buf_free(&b);
    return 0;
}
