/* SPDX-License-Identifier: MIT
 *
 * Human units, nice ticks and time labels (see units.h). Fixed-point output goes through integers so no
 * locale can change the decimal separator; only values beyond 9e15 fall back to fmt_real().
 */
#include "report/units.h"
#include "core/cell.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPREFIX 7
static const char *const prefix_bin[NPREFIX] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
static const char *const prefix_si[NPREFIX] = {"", "k", "M", "G", "T", "P", "E"};

static const struct {
    const char *name;
    js_unit_t u;
} known_units[] = {
    {"bytes", {1024, 1, "B", UNIT_GLUE}},
    {"B", {1024, 1, "B", UNIT_GLUE}},
    {"bytes/s", {1024, 1, "B/s", UNIT_GLUE}},
    {"B/s", {1024, 1, "B/s", UNIT_GLUE}},
    {"bits/s", {1000, 1, "bit/s", UNIT_GLUE}},
    {"%", {0, 1, "%", UNIT_TIGHT}},
    {"fraction", {0, 100, "%", UNIT_TIGHT}},
    {"cores", {0, 1, "cores", UNIT_WORD}},
    {"s", {0, 1, "s", UNIT_GLUE}},
    {"°C", {0, 1, "°C", UNIT_GLUE}},
    {"W", {1000, 1, "W", UNIT_GLUE}},
    {"J", {1000, 1, "J", UNIT_GLUE}},
    {"Hz", {1000, 1, "Hz", UNIT_GLUE}},
    {"count", {1000, 1, "", UNIT_TIGHT}},
    {"", {1000, 1, "", UNIT_TIGHT}},
    {"/s", {1000, 1, "/s", UNIT_TIGHT}},
    {"count/s", {1000, 1, "/s", UNIT_TIGHT}},
};

js_unit_t units_lookup(const char *unit)
{
    if (!unit)
        unit = "";
    for (size_t i = 0; i < sizeof(known_units) / sizeof(known_units[0]); i++)
        if (strcmp(unit, known_units[i].name) == 0)
            return known_units[i].u;
    js_unit_t u = {1000, 1, unit, UNIT_WORD};
    return u;
}

bool units_known(const char *unit)
{
    for (size_t i = 0; unit && i < sizeof(known_units) / sizeof(known_units[0]); i++)
        if (strcmp(unit, known_units[i].name) == 0 || strcmp(unit, known_units[i].u.suffix) == 0)
            return true;
    return false;
}

/* fixed: |v| × 10^d must stay below 9e15 (the caller checks); d in 0..15. */
static char *fixed(char *buf, size_t cap, double v, int d)
{
    d = d < 0 ? 0 : d > 15 ? 15 : d;
    unsigned long long p = 1;
    for (int i = 0; i < d; i++)
        p *= 10;
    unsigned long long q = (unsigned long long)round(fabs(v) * (double)p);
    const char *sign = v < 0 && q != 0 ? "-" : "";
    if (d == 0)
        snprintf(buf, cap, "%s%llu", sign, q);
    else
        snprintf(buf, cap, "%s%llu.%0*llu", sign, q / p, d, q % p);
    return buf;
}

char *units_fixed(char *buf, size_t cap, double v, int decimals)
{
    if (cap == 0)
        return buf;
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    if (!isfinite(v))
        snprintf(buf, cap, "%s", isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf");
    else if (fabs(v) * pow(10, decimals) >= 9e15)
        fmt_real(buf, cap, v);
    else
        fixed(buf, cap, v, decimals);
    return buf;
}

/* trim: drop trailing zeros after a decimal point, and the point itself when nothing follows it. */
static char *trim(char *s)
{
    char *dot = strchr(s, '.');
    if (!dot)
        return s;
    char *end = s + strlen(s);
    while (end > dot + 1 && end[-1] == '0')
        end--;
    if (end == dot + 1)
        end = dot;
    *end = '\0';
    return s;
}

char *units_sig(char *buf, size_t cap, double v, int sig)
{
    if (cap == 0)
        return buf;
    sig = sig < 1 ? 1 : sig > 15 ? 15 : sig;
    if (!isfinite(v) || v == 0)
        return units_fixed(buf, cap, v, 0);
    int e = (int)floor(log10(fabs(v)));
    int d = sig - 1 - e;
    if (d > 15 || e >= 15) {
        snprintf(buf, cap, "%.*g", sig, v); /* beyond the fixed range: exponent form */
        return buf;
    }
    if (d >= 0)
        return trim(fixed(buf, cap, v, d));
    double unit = pow(10, -d); /* round to a multiple of 10^-d, written as an integer */
    return fixed(buf, cap, round(v / unit) * unit, 0);
}

/* decimals3: decimals for about 3 significant digits of x. */
static int decimals3(double x)
{
    double a = fabs(x);
    if (a == 0 || a >= 100)
        return 0;
    if (a >= 10)
        return 1;
    if (a >= 1)
        return 2;
    int d = 2 - (int)floor(log10(a));
    return d > 9 ? 9 : d;
}

/* compose: number text, prefix k of the unit, suffix, in the unit's style. */
static char *compose(char *buf, size_t cap, const char *num, const js_unit_t *u, int k)
{
    const char *pre = k <= 0 || k >= NPREFIX ? "" : u->base == 1024 ? prefix_bin[k] : prefix_si[k];
    const char *fmt = u->style == UNIT_GLUE ? "%s %s%s" : u->style == UNIT_WORD ? "%s%s %s" : "%s%s%s";
    snprintf(buf, cap, fmt, num, pre, u->suffix);
    return buf;
}

char *units_format(char *buf, size_t cap, double v, const char *unit)
{
    if (cap == 0)
        return buf;
    if (!isfinite(v)) {
        snprintf(buf, cap, "\u2014");
        return buf;
    }
    js_unit_t u = units_lookup(unit);
    double x = v * u.mul;
    int k = 0;
    while (u.base && fabs(x) >= u.base && k < NPREFIX - 1) {
        x /= u.base;
        k++;
    }
    int d = decimals3(x);
    char num[48];
    units_fixed(num, sizeof(num), x, d);
    if (u.base && fabs(strtod(num, NULL)) >= u.base && k < NPREFIX - 1) { /* 1023.9 KiB rounds up to 1 MiB */
        x /= u.base;
        k++;
        units_fixed(num, sizeof(num), x, decimals3(x));
    }
    return compose(buf, cap, trim(num), &u, k);
}

int units_ticks(double lo, double hi, unsigned target, const char *unit, js_ticks_t *ret)
{
    if (target < 2)
        return -EINVAL;
    if (!isfinite(lo) || !isfinite(hi))
        lo = 0, hi = 1;
    if (hi < lo) {
        double swap = lo;
        lo = hi;
        hi = swap;
    }
    if (hi == lo)
        hi = lo == 0 ? 1 : lo + fabs(lo) / 10;
    js_unit_t u = units_lookup(unit);
    double m = fmax(fabs(lo), fabs(hi)) * u.mul, div = 1;
    int k = 0;
    while (u.base && m >= u.base && k < NPREFIX - 1) {
        m /= u.base;
        div *= u.base;
        k++;
    }
    double step, tlo, thi;
    for (;;) {
        double slo = lo * u.mul / div, shi = hi * u.mul / div;
        double raw = (shi - slo) / (double)(target - 1);
        double mag = pow(10, floor(log10(raw)));
        double norm = raw / mag;
        step = (norm <= 1.0001 ? 1 : norm <= 2.0001 ? 2 : norm <= 5.0001 ? 5 : 10) * mag;
        tlo = floor(slo / step + 1e-9) * step;
        thi = ceil(shi / step - 1e-9) * step;
        /* rounding out may reach the next prefix (900 MiB up to "1000 MiB"): label in that one */
        if (!u.base || fmax(fabs(tlo), fabs(thi)) < u.base - 1e-9 || k == NPREFIX - 1)
            break;
        div *= u.base;
        k++;
    }
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    *ret = (js_ticks_t){
        .lo = tlo * div / u.mul,
        .hi = thi * div / u.mul,
        .step = step * div / u.mul,
        .n = (size_t)llround((thi - tlo) / step) + 1,
        .div = div,
        .prefix = k,
        .decimals = decimals > 9 ? 9 : decimals,
        .u = u,
    };
    return 0;
}

char *units_tick_label(char *buf, size_t cap, const js_ticks_t *tk, double v)
{
    char num[48];
    double x = v * tk->u.mul / tk->div;
    if (fabs(x) < tk->step * tk->u.mul / tk->div * 1e-6)
        x = 0;
    units_fixed(num, sizeof(num), x, x == 0 ? 0 : tk->decimals);
    js_unit_t u = tk->u;
    if (u.style == UNIT_WORD && !units_known(u.suffix)) { /* "400M", the word in the chart's title */
        u.suffix = "";
        u.style = UNIT_TIGHT;
    }
    return compose(buf, cap, num, &u, x == 0 && u.style != UNIT_GLUE ? 0 : tk->prefix);
}

static const double time_steps[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5,  1,    2,    5,     10,    15,    30,
                                    60,   120,  300,  600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};

int units_time_ticks(double lo, double hi, unsigned target, const js_timeaxis_t *ax, js_tticks_t *ret)
{
    if (target < 2 || !ax || !isfinite(lo) || !isfinite(hi) || !(hi > lo))
        return -EINVAL;
    double raw = (hi - lo) / target, step = 0;
    for (size_t i = 0; i < sizeof(time_steps) / sizeof(time_steps[0]) && step == 0; i++)
        if (time_steps[i] >= raw)
            step = time_steps[i];
    if (step == 0) { /* days: 1, 2 or 5 × 10^k days */
        double days = raw / 86400, mag = pow(10, floor(log10(days))), norm = days / mag;
        step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag * 86400;
    }
    double off = ax->mode == JS_TIME_WALL ? ax->t0_unix + ax->utc_offset_s : 0;
    double first = ceil((lo + off) / step - 1e-9) * step - off;
    double m = fmax(fabs(lo), fabs(hi));
    *ret = (js_tticks_t){
        .first = first,
        .step = step,
        .n = first > hi ? 0 : (size_t)floor((hi - first) / step + 1e-9) + 1,
        .off = off,
        .style = ax->mode == JS_TIME_WALL ? TLABEL_WALL
                 : m < 120                ? TLABEL_S
                 : m < 3600               ? TLABEL_MS
                                          : TLABEL_HMS,
        .decimals = step >= 1     ? 0
                    : step >= 0.1 ? 1
                                  : 2,
    };
    return 0;
}

char *units_time_label(char *buf, size_t cap, const js_tticks_t *tk, double t)
{
    if (cap == 0)
        return buf;
    if (!isfinite(t)) {
        snprintf(buf, cap, "\u2014");
        return buf;
    }
    if (tk->style == TLABEL_S) {
        char num[48];
        snprintf(buf, cap, "%s s", trim(units_fixed(num, sizeof(num), t, tk->decimals)));
        return buf;
    }
    double w = t + tk->off, scale = tk->decimals == 0 ? 1 : tk->decimals == 1 ? 10 : 100;
    double q = round(w * scale); /* signed, in units of 10^-decimals s */
    if (fabs(q) >= 9e15) {
        fmt_real(buf, cap, t);
        return buf;
    }
    long long qi = (long long)q, sc = (long long)scale;
    if (tk->style == TLABEL_WALL) {
        long long secs = qi >= 0 ? qi / sc : -((-qi + sc - 1) / sc); /* floor */
        long long frac = qi - secs * sc, in_day = ((secs % 86400) + 86400) % 86400;
        time_t tt = (time_t)secs;
        struct tm tm;
        if (in_day == 0 && frac == 0 && tk->step >= 60 && gmtime_r(&tt, &tm))
            snprintf(buf, cap, "%02d-%02d", tm.tm_mon + 1, tm.tm_mday);
        else if (tk->step >= 60)
            snprintf(buf, cap, "%02lld:%02lld", in_day / 3600, in_day / 60 % 60);
        else if (tk->decimals)
            snprintf(buf, cap, "%02lld:%02lld:%02lld.%0*lld", in_day / 3600, in_day / 60 % 60, in_day % 60,
                     tk->decimals, frac);
        else
            snprintf(buf, cap, "%02lld:%02lld:%02lld", in_day / 3600, in_day / 60 % 60, in_day % 60);
        return buf;
    }
    const char *sign = qi < 0 ? "-" : "";
    long long a = qi < 0 ? -qi : qi, whole = a / sc, frac = a % sc;
    char sec[32];
    if (tk->decimals)
        snprintf(sec, sizeof(sec), "%02lld.%0*lld", whole % 60, tk->decimals, frac);
    else
        snprintf(sec, sizeof(sec), "%02lld", whole % 60);
    if (tk->style == TLABEL_MS)
        snprintf(buf, cap, "%s%lld:%s", sign, whole / 60, sec);
    else
        snprintf(buf, cap, "%s%lld:%02lld:%s", sign, whole / 3600, whole / 60 % 60, sec);
    return buf;
}

char *units_time(char *buf, size_t cap, double t, const js_timeaxis_t *ax)
{
    js_tticks_t tk = {.step = 1};
    if (ax && ax->mode == JS_TIME_WALL) {
        tk.style = TLABEL_WALL;
        tk.off = ax->t0_unix + ax->utc_offset_s;
    } else {
        double a = fabs(t);
        tk.style = a < 120 ? TLABEL_S : a < 3600 ? TLABEL_MS : TLABEL_HMS;
        tk.decimals = tk.style == TLABEL_S && round(a * 10) != round(a) * 10 ? 1 : 0;
    }
    return units_time_label(buf, cap, &tk, t);
}
