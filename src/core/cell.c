/* SPDX-License-Identifier: MIT
 *
 * Writing a real as text (see cell.h).
 */
#include "core/cell.h"

#include <stdio.h>
#include <stdlib.h>

char *fmt_real(char *buf, size_t cap, double d)
{
    if (d == 0) {
        snprintf(buf, cap, "0");
        return buf;
    }
    if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d) {
        snprintf(buf, cap, "%lld", (long long)d); /* integral values print as integers, never 1e+07 */
        return buf;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return buf;
}
