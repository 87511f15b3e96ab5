/* SPDX-License-Identifier: MIT
 *
 * Parsers of the per-process files the process-tree source reads (io, statm, status, smaps_rollup, cmdline),
 * on text, so that the unit tests run them on strings; and the command line's JSON form and redaction.
 */
#include "sources/proc_tree.h"

#include "core/json.h"
#include "core/util.h"
#include "sys/parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int proc_parse_io(const char *text, js_pid_io_t *ret)
{
    static const char *const keys[7] = {
        "rchar:", "wchar:", "syscr:", "syscw:", "read_bytes:", "write_bytes:", "cancelled_write_bytes:"};
    ret->present = 0;
    for (int i = 0; i < 7; i++)
        if (kv_u64(text, keys[i], &ret->v[i]) == 0)
            ret->present |= (uint8_t)(1u << i);
    return ret->present ? 0 : -EINVAL;
}

int proc_parse_statm(const char *text, uint64_t *ret_resident, uint64_t *ret_shared)
{
    const char *p = text;
    uint64_t size, res, shared;
    if (parse_u64(&p, &size) < 0 || parse_u64(&p, &res) < 0 || parse_u64(&p, &shared) < 0)
        return -EINVAL;
    *ret_resident = res;
    *ret_shared = shared;
    return 0;
}

int proc_parse_status(const char *text, js_pid_status_t *ret)
{
    static const struct {
        const char *key;
        uint8_t len, bit, kb;
    } keys[] = {
        {"RssAnon:", 8, 0, 1},
        {"RssFile:", 8, 1, 1},
        {"RssShmem:", 9, 2, 1},
        {"VmSwap:", 7, 3, 1},
        {"VmHWM:", 6, 4, 1},
        {"voluntary_ctxt_switches:", 24, 5, 0},
        {"nonvoluntary_ctxt_switches:", 27, 6, 0},
        {"Uid:", 4, 7, 0},
    };
    uint64_t *dst[8] = {&ret->rss_anon, &ret->rss_file, &ret->rss_shmem, &ret->swap,
                        &ret->hwm,      &ret->vcsw,     &ret->ivcsw,     &ret->uid};
    ret->present = 0;
    /* one pass over the lines; only lines starting with R, V, v, n or U can match */
    for (const char *line = text; line && *line;) {
        char c = *line;
        if (c == 'R' || c == 'V' || c == 'v' || c == 'n' || c == 'U') {
            for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                if (keys[i].key[0] != c || strncmp(line, keys[i].key, keys[i].len) != 0)
                    continue;
                const char *v = line + keys[i].len;
                uint64_t x;
                if (parse_u64(&v, &x) == 0) {
                    *dst[keys[i].bit] = keys[i].kb ? x * 1024 : x;
                    ret->present |= (uint16_t)(1u << keys[i].bit);
                }
                break;
            }
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return 0;
}

int proc_parse_smaps_rollup(const char *text, js_pid_smaps_t *ret)
{
    uint64_t pc = 0, pd = 0, ph = 0;
    memset(ret, 0, sizeof(*ret));
    if (kv_u64(text, "Pss:", &ret->pss) < 0)
        return -EINVAL;
    kv_u64(text, "Rss:", &ret->rss);
    kv_u64(text, "Private_Clean:", &pc);
    kv_u64(text, "Private_Dirty:", &pd);
    kv_u64(text, "Private_Hugetlb:", &ph);
    kv_u64(text, "SwapPss:", &ret->swap_pss);
    ret->rss *= 1024;
    ret->pss *= 1024;
    ret->swap_pss *= 1024;
    ret->uss = (pc + pd + ph) * 1024;
    ret->ok = true;
    return 0;
}

int proc_cmdline_json(const char *raw, size_t len, js_buf_t *b)
{
    b->len = 0;
    if (buf_append(b, "[", 1) < 0)
        return -ENOMEM;
    /* the kernel ends the last argument with a NUL; a process that rewrote its argv may not */
    size_t i = 0;
    bool first = true;
    while (i < len) {
        size_t j = i;
        while (j < len && raw[j] != '\0')
            j++;
        if (!first && buf_append(b, ",", 1) < 0)
            return -ENOMEM;
        if (json_str(b, raw + i, j - i) < 0)
            return -ENOMEM;
        first = false;
        i = j + 1;
    }
    return buf_append(b, "]", 1);
}

int proc_cmdline_redact(const regex_t *re, const char *raw, size_t len, js_buf_t *out)
{
    out->len = 0;
    if (buf_reserve(out, len + 1) < 0)
        return -ENOMEM;
    js_buf_t arg = {0};
    int r = 0;
    for (size_t i = 0; i < len && r == 0;) {
        size_t j = i;
        while (j < len && raw[j] != '\0')
            j++;
        arg.len = 0;
        if ((r = buf_append(&arg, raw + i, j - i)) < 0) /* NUL-terminated for regexec */
            break;
        if (!arg.p && (r = buf_append(&arg, "", 0)) < 0)
            break;
        const char *p = arg.p;
        int flags = 0;
        regmatch_t m;
        while (r == 0 && *p && regexec(re, p, 1, &m, flags) == 0) {
            if (m.rm_eo == m.rm_so) { /* an empty match: keep one character and look on */
                r = buf_append(out, p, 1);
                p++;
            } else {
                if ((r = buf_append(out, p, (size_t)m.rm_so)) == 0)
                    r = buf_append(out, "***", 3);
                p += m.rm_eo;
            }
            flags = REG_NOTBOL;
        }
        if (r == 0)
            r = buf_append(out, p, strlen(p));
        if (r == 0)
            r = buf_append(out, "", 1) < 0 ? -ENOMEM : 0; /* the argument's NUL */
        if (r == 0 && buf_reserve(out, out->len + 1) == 0)
            out->p[out->len] = '\0';
        i = j + 1;
    }
    buf_free(&arg);
    return r < 0 ? -ENOMEM : 0;
}
