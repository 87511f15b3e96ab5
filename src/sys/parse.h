/* SPDX-License-Identifier: MIT
 *
 * Small, allocation-free parsers shared by the sources: unsigned integers, "Key: value unit" lines, and
 * /proc/<pid>/stat, whose comm field may hold spaces, parentheses and newlines (the last ')' ends it).
 * All functions work on NUL-terminated strings and never read past the terminator.
 */
#ifndef JOBSCOPE_PARSE_H
#define JOBSCOPE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* parse_u64: skip blanks, read a decimal unsigned integer at *p, advance *p past it.
 * Returns 0, or -EINVAL if no digit is there (then *p is unchanged). Saturates at UINT64_MAX. */
int parse_u64(const char **p, uint64_t *ret);

/* parse_i64: as parse_u64 with an optional leading '-'. */
int parse_i64(const char **p, int64_t *ret);

/* The one parser of the kernel's CPU and node lists ("0-3,8,10-11\n"; "" and "\n" are empty; blanks around
 * the numbers allowed): sysfs cpulist/online/cpumask files, cgroup cpusets, Cpus_allowed_list. A list is
 * refused (-EINVAL) when malformed, when one range holds more than CPULIST_RANGE_MAX CPUs, or when the whole
 * list counts CPULIST_COUNT_MAX or more (no machine has that many; a fuzzed or hostile file cannot make it
 * loop for long). */
#define CPULIST_RANGE_MAX (UINT64_C(1) << 20)
#define CPULIST_COUNT_MAX (UINT64_C(1) << 24)

/* cpulist_parse: parse list `s` into the bitmap `set` of `nbits` bits (cleared first; may be NULL with nbits
 * 0: count only; CPUs >= nbits are counted, not set). Returns the number of CPUs in the list, or -EINVAL. */
int cpulist_parse(const char *s, uint64_t *set, size_t nbits);

/* cpulist_parse_ints: parse list `s` into the CPU numbers `cpus`, in list order, at most `cap` of them.
 * Returns the number of CPUs in the list (which may exceed cap: only cap are stored), -EINVAL as
 * cpulist_parse, or -ERANGE for a CPU number beyond INT_MAX. */
int cpulist_parse_ints(const char *s, int *cpus, size_t cap);

/* cpulist_has: whether bit `cpu` is set in a bitmap of `nbits` bits. */
static inline bool cpulist_has(const uint64_t *set, size_t nbits, size_t cpu)
{
    return cpu < nbits && (set[cpu / 64] >> (cpu % 64)) & 1;
}

/* kv_u64: find a line starting with `key` (e.g. "VmHWM:") in `text` and parse the number after it.
 * Returns 0 or -ENOENT (no such line) / -EINVAL (no number). `*ret` untouched on failure. */
int kv_u64(const char *text, const char *key, uint64_t *ret);

/* The fields of /proc/<pid>/stat jobscope uses (see proc(5) for their meaning). */
typedef struct {
    int32_t pid;
    char comm[64]; /* as the kernel gives it (at most 15 bytes normally; fixtures may be longer; cut at 63) */
    char state;
    int32_t ppid;
    uint64_t minflt, cminflt, majflt, cmajflt;
    uint64_t utime, stime;  /* ticks */
    int64_t cutime, cstime; /* ticks */
    int64_t num_threads;
    uint64_t starttime; /* ticks after boot */
    uint64_t vsize;     /* bytes */
    int64_t rss;        /* pages */
    int32_t processor;
    uint64_t sigignore; /* field 33: ignored signals, bit N-1 for signal N (the kernel prints the low 31) */
    uint64_t image;     /* a fingerprint of the process image: start_code, end_code, startstack, arg_start,
                         * arg_end     (fields 26-28, 48-49), which an exec changes (ASLR) even when comm stays; 0
                         * where the     kernel hides them (another user's process) or the line is too short */
} js_pid_stat_t;

/* parse_pid_stat: parse the text of /proc/<pid>/stat. Returns 0 or -EINVAL (truncated or malformed);
 * `*ret` may be partly written on failure. */
int parse_pid_stat(const char *text, js_pid_stat_t *ret);

#endif
