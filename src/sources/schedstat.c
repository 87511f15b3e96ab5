/* SPDX-License-Identifier: MIT
 *
 * Parser of /proc/<pid>/schedstat (see schedstat.h).
 */
#include "sources/schedstat.h"

#include "sys/parse.h"

#include <errno.h>

int proc_parse_schedstat(const char *text, js_schedstat_t *ret)
{
    const char *p = text;
    uint64_t v[3];
    for (int i = 0; i < 3; i++) {
        /* blanks between the fields (the kernel writes one space) */
        if (parse_u64(&p, &v[i]) < 0)
            return -EINVAL;
        if (i < 2 && *p != ' ' && *p != '\t')
            return -EINVAL;
    }
    if (*p != '\n' && *p != '\0' && *p != ' ')
        return -EINVAL;
    ret->run_ns = v[0];
    ret->wait_ns = v[1];
    ret->slices = v[2];
    return 0;
}
