/* SPDX-License-Identifier: MIT
 *
 * /proc/<pid>/schedstat and /proc/<pid>/task/<tid>/schedstat: the scheduler's figures of one task (thread),
 * "sum_exec_runtime run_delay pcount", the first two in nanoseconds. For a process it describes the
 * thread-group leader only: not its other threads, nor threads that exited (whose runtime the kernel keeps
 * in signal->sum_sched_runtime and shows nowhere in /proc), so it equals the process's CPU time only for a
 * process that never had a second thread. All three read 0 when the kernel lacks CONFIG_SCHED_INFO or has
 * it switched off (sched_info_on()).
 */
#ifndef JOBSCOPE_SCHEDSTAT_H
#define JOBSCOPE_SCHEDSTAT_H

#include <stdint.h>

typedef struct {
    uint64_t run_ns;  /* time on a CPU (se.sum_exec_runtime), ns */
    uint64_t wait_ns; /* time runnable but waiting for a CPU (sched_info.run_delay), ns */
    uint64_t slices;  /* times it was run on a CPU (sched_info.pcount) */
} js_schedstat_t;

/* proc_parse_schedstat: parse the text of a schedstat file. Returns 0, or -EINVAL if it does not start with
 * three numbers (then *ret is untouched). Text after the third number is ignored. */
int proc_parse_schedstat(const char *text, js_schedstat_t *ret);

#endif
