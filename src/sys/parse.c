/* SPDX-License-Identifier: MIT
 *
 * Allocation-free number and /proc record parsers shared by all sources. Locale-independent.
 */
#include "sys/parse.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

int parse_u64(const char **p, uint64_t *ret)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    const char *start = s;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0'); /* 19 digits cannot overflow 64 bits */
    if (s - start > 19) {
        /* rare: 20 digits or more, redo with saturation at UINT64_MAX */
        v = 0;
        for (const char *q = start; q < s; q++) {
            unsigned d = (unsigned)(*q - '0');
            if (v > (UINT64_MAX - d) / 10) {
                v = UINT64_MAX;
                break;
            }
            v = v * 10 + d;
        }
    }
    *ret = v;
    *p = s;
    return 0;
}

int parse_i64(const char **p, int64_t *ret)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    bool neg = *s == '-';
    if (neg)
        s++;
    if (*s < '0' || *s > '9') /* no blanks between the sign and the digits */
        return -EINVAL;
    uint64_t u;
    if (parse_u64(&s, &u) < 0)
        return -EINVAL;
    if (neg)
        *ret = u >= (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    else
        *ret = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    *p = s;
    return 0;
}

int kv_u64(const char *text, const char *key, uint64_t *ret)
{
    size_t kl = strlen(key);
    const char *s = text;
    while (s && *s) {
        if (strncmp(s, key, kl) == 0) {
            const char *v = s + kl;
            return parse_u64(&v, ret);
        }
        s = strchr(s, '\n');
        if (s)
            s++;
    }
    return -ENOENT;
}

int parse_pid_stat(const char *text, js_pid_stat_t *ret)
{
    const char *open = strchr(text, '(');
    const char *close = strrchr(text, ')');
    if (!open || !close || close < open)
        return -EINVAL;
    const char *p = text;
    int64_t pid;
    if (parse_i64(&p, &pid) < 0)
        return -EINVAL;
    ret->pid = (int32_t)pid;
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof(ret->comm))
        n = sizeof(ret->comm) - 1;
    memcpy(ret->comm, open + 1, n);
    ret->comm[n] = '\0';
    p = close + 1;
    while (*p == ' ')
        p++;
    if (!*p)
        return -EINVAL;
    ret->state = *p++;
    /* fields 4.. as numbers; index = field number as in proc(5) */
    int64_t f[53];
    int nf = 4;
    for (; nf < 53; nf++) {
        if (parse_i64(&p, &f[nf]) < 0)
            break;
    }
    if (nf <= 41) /* need at least through field 41 (policy); older kernels have 44+ */
        return -EINVAL;
    ret->ppid = (int32_t)f[4];
    ret->minflt = (uint64_t)f[10];
    ret->cminflt = (uint64_t)f[11];
    ret->majflt = (uint64_t)f[12];
    ret->cmajflt = (uint64_t)f[13];
    ret->utime = (uint64_t)f[14];
    ret->stime = (uint64_t)f[15];
    ret->cutime = f[16];
    ret->cstime = f[17];
    ret->num_threads = f[20];
    ret->starttime = (uint64_t)f[22];
    ret->vsize = (uint64_t)f[23];
    ret->rss = f[24];
    ret->processor = (int32_t)f[39];
    ret->sigignore = (uint64_t)f[33];
    ret->image = 0;
    if (nf > 49) {
        static const int img[] = {26, 27, 28, 48, 49};
        uint64_t h = 0, any = 0;
        for (size_t i = 0; i < sizeof(img) / sizeof(img[0]); i++) {
            any |= (uint64_t)f[img[i]];
            h = (h ^ (uint64_t)f[img[i]]) * 0x100000001b3u; /* FNV-1a over the words */
        }
        ret->image = any ? (h ? h : 1) : 0;
    }
    return 0;
}

/* cpulist_walk: the CPU-list parser behind cpulist_parse (the bitmap) and cpulist_parse_ints (the numbers).
 */
static int cpulist_walk(const char *s, uint64_t *set, size_t nbits, int *cpus, size_t cap)
{
    if (set)
        memset(set, 0, (nbits + 63) / 64 * sizeof(*set));
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p || *p == '\n')
        return 0;
    uint64_t count = 0;
    for (;;) {
        uint64_t a, b;
        if (parse_u64(&p, &a) < 0)
            return -EINVAL;
        b = a;
        if (*p == '-') {
            p++;
            if (parse_u64(&p, &b) < 0 || b < a)
                return -EINVAL;
        }
        if (b - a >= CPULIST_RANGE_MAX || count + (b - a) + 1 >= CPULIST_COUNT_MAX)
            return -EINVAL; /* not a CPU or node list */
        /* counted by offset, so a range ending at UINT64_MAX (a saturated number) cannot wrap around */
        for (uint64_t k = 0; k <= b - a; k++, count++) {
            uint64_t c = a + k;
            if (set && c < nbits)
                set[c / 64] |= (uint64_t)1 << (c % 64);
            if (cpus && c > INT_MAX)
                return -ERANGE;
            if (cpus && count < cap)
                cpus[count] = (int)c;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ',')
            break;
        p++;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    return *p ? -EINVAL : (int)count;
}

int cpulist_parse(const char *s, uint64_t *set, size_t nbits)
{
    return cpulist_walk(s, set, nbits, NULL, 0);
}

int cpulist_parse_ints(const char *s, int *cpus, size_t cap)
{
    return cpulist_walk(s, NULL, 0, cpus, cap);
}
