/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the report rendering library (src/report/): min/max downsampling on hand-computed series,
 * with gaps, and on a synthetic day at 1 s with spikes and dips at known seconds (every one kept exactly, the
 * output within its budget); human units, nice value ticks and time ticks; HTML escaping of markup, control
 * bytes and invalid UTF-8; the sticky error; and rendered charts that are well-formed (a small XML checker
 * over each <svg>, the page's tags balanced, coordinates with at most one decimal, the hover data present).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/json.h"
#include "report/downsample.h"
#include "report/html.h"
#include "report/svg.h"
#include "report/units.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)

/* ---- downsampling ---- */

typedef struct {
    double *t, *v;
    size_t n;
} pts_t;

static pts_t ds(const double *t, const double *v, size_t n, size_t buckets)
{
    size_t cap = downsample_bound(n, buckets);
    pts_t o = {malloc((cap + 1) * sizeof(double)), malloc((cap + 1) * sizeof(double)), 0};
    assert_non_null(o.t);
    assert_non_null(o.v);
    assert_int_equal(downsample_minmax(t, v, n, buckets, o.t, o.v, cap, &o.n), 0);
    assert_true(o.n <= cap);
    return o;
}

static void pts_free(pts_t *p)
{
    free(p->t);
    free(p->v);
}

/* assert_pts: the output equals want (t, v pairs; NAN v matches NAN). */
static void assert_pts(const pts_t *got, const double (*want)[2], size_t n)
{
    if (got->n != n) {
        for (size_t i = 0; i < got->n; i++)
            print_message("  got (%g, %g)\n", got->t[i], got->v[i]);
    }
    assert_int_equal(got->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_true(got->t[i] == want[i][0]);
        if (isnan(want[i][1]))
            assert_true(isnan(got->v[i]));
        else
            assert_true(got->v[i] == want[i][1]);
    }
}

static void t_ds_passthrough(void **state)
{
    const double t[] = {0, 1, 2, 3, 4, 5}, v[] = {3, NAN, 1, 4, 1, 5};
    pts_t o = ds(t, v, 6, 3); /* 6 <= 2 × 3: unchanged, the gap too */
    const double want[][2] = {{0, 3}, {1, NAN}, {2, 1}, {3, 4}, {4, 1}, {5, 5}};
    assert_pts(&o, want, 6);
    pts_free(&o);
    assert_int_equal(downsample_bound(6, 3), 6);
    assert_int_equal(downsample_bound(7, 3), 7);
    assert_int_equal(downsample_bound(1000, 10), 80);
    size_t n = 99;
    assert_int_equal(downsample_minmax(NULL, NULL, 0, 4, NULL, NULL, 0, &n), 0);
    assert_int_equal(n, 0);
}

static void t_ds_golden(void **state)
{
    /* 12 points, 3 buckets over [0, 11]: t 0-3, 4-7, 8-11. Each keeps its min and max in time order; the
     * earliest on ties (4 at t=6 and t=7). */
    const double t[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    const double v[] = {1, 5, 2, 8, 3, 0, 4, 4, 9, 1, 2, 7};
    pts_t o = ds(t, v, 12, 3);
    const double want[][2] = {{0, 1}, {3, 8}, {5, 0}, {6, 4}, {8, 9}, {9, 1}};
    assert_pts(&o, want, 6);
    pts_free(&o);

    /* a flat bucket gives one point; uneven times: the buckets cut time, not indices */
    const double t2[] = {0, 1, 2, 3, 10, 10.5, 20}, v2[] = {2, 2, 2, 2, 7, -1, 3};
    o = ds(t2, v2, 7, 2); /* buckets [0, 10) and [10, 20] */
    const double want2[][2] = {{0, 2}, {10, 7}, {10.5, -1}};
    assert_pts(&o, want2, 3);
    pts_free(&o);
}

static void t_ds_gaps(void **state)
{
    /* 2 buckets: t 0-5 and 6-11. Bucket 0: head {1,3}, a break, tail {2,6}. Bucket 1: head {5}, a break, the
     * values between its two gaps {4,8} then a break, tail {0}. */
    const double t[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    const double v[] = {1, 3, NAN, NAN, 2, 6, 5, NAN, 4, 8, NAN, 0};
    pts_t o = ds(t, v, 12, 2);
    const double want[][2] = {{0, 1},   {1, 3}, {2, NAN}, {4, 2},    {5, 6}, {6, 5},
                              {7, NAN}, {8, 4}, {9, 8},   {10, NAN}, {11, 0}};
    assert_pts(&o, want, 11);
    pts_free(&o);

    /* leading and whole-bucket gaps: no leading break, consecutive breaks merged */
    const double v2[] = {NAN, NAN, NAN, NAN, NAN, NAN, 5, 6, NAN, NAN, NAN, NAN};
    o = ds(t, v2, 12, 4); /* buckets t 0-2, 3-5, 6-8, 9-11 */
    const double want2[][2] = {{6, 5}, {7, 6}, {8, NAN}};
    assert_pts(&o, want2, 3);
    pts_free(&o);

    /* non-finite times are dropped; ±inf values are gaps */
    const double t3[] = {NAN, 0, 1, 2, 3, 4, 5, NAN}, v3[] = {100, 1, INFINITY, 2, 3, 4, 0, 100};
    o = ds(t3, v3, 8, 2); /* buckets t 0-2, 3-5 */
    const double want3[][2] = {{0, 1}, {1, NAN}, {2, 2}, {4, 4}, {5, 0}};
    assert_pts(&o, want3, 5);
    pts_free(&o);
}

static void t_ds_errors(void **state)
{
    const double t[] = {0, 1, 2, 3, 4, 5, 6, 7}, v[] = {1, 2, 3, 4, 5, 6, 7, 8};
    double ot[8], ov[8];
    size_t n = 77;
    assert_int_equal(downsample_minmax(t, v, 8, 0, ot, ov, 8, &n), -EINVAL);
    assert_int_equal(downsample_minmax(NULL, v, 8, 2, ot, ov, 8, &n), -EINVAL);
    assert_int_equal(downsample_minmax(t, v, 8, 2, ot, ov, 1, &n), -ENOSPC);
    assert_int_equal(downsample_minmax(t, v, 8, 4, ot, ov, 7, &n), -ENOSPC); /* pass-through needs 8 */
    assert_int_equal(n, 77);
    assert_int_equal(downsample_minmax(t, v, 8, 2, ot, ov, 4, &n), 0);
    assert_int_equal(n, 4);
}

/* A day at 1 s: noise in [0, 1), spikes up and dips down at known seconds, and a 10-minute gap. */
#define DAY 86400
static const double spike_t[] = {0, 1000, 5000, 43210, 70001, 86399}; /* one per bucket at most */
static const double dip_t[] = {777, 33333, 60000};

static void t_ds_day(void **state)
{
    double *t = malloc(DAY * sizeof(double)), *v = malloc(DAY * sizeof(double));
    assert_non_null(t);
    assert_non_null(v);
    unsigned seed = 12345;
    for (size_t i = 0; i < DAY; i++) {
        seed = seed * 1103515245u + 12345u;
        t[i] = (double)i;
        v[i] = (double)(seed >> 8 & 0xffff) / 65536.0;
    }
    for (size_t k = 0; k < sizeof(spike_t) / sizeof(spike_t[0]); k++)
        v[(size_t)spike_t[k]] = 50 + (double)k;
    for (size_t k = 0; k < sizeof(dip_t) / sizeof(dip_t[0]); k++)
        v[(size_t)dip_t[k]] = -10 - (double)k;
    for (size_t i = 30000; i < 30600; i++)
        v[i] = NAN;
    const size_t buckets = 724;
    pts_t o = ds(t, v, DAY, buckets);
    /* within budget: 2 per bucket, and 1 more for the two buckets the gap's edges cut */
    assert_true(o.n <= 2 * buckets + 2);
    for (size_t k = 0; k < sizeof(spike_t) / sizeof(spike_t[0]); k++) {
        bool found = false;
        for (size_t i = 0; i < o.n; i++)
            found |= o.t[i] == spike_t[k] && o.v[i] == 50 + (double)k;
        if (!found)
            print_message("spike at %g lost\n", spike_t[k]);
        assert_true(found);
    }
    for (size_t k = 0; k < sizeof(dip_t) / sizeof(dip_t[0]); k++) {
        bool found = false;
        for (size_t i = 0; i < o.n; i++)
            found |= o.t[i] == dip_t[k] && o.v[i] == -10 - (double)k;
        assert_true(found);
    }
    double hi = -INFINITY, lo = INFINITY;
    size_t breaks = 0;
    for (size_t i = 0; i < o.n; i++) {
        if (i)
            assert_true(o.t[i] >= o.t[i - 1]);
        if (isnan(o.v[i])) {
            breaks++;
            assert_true(o.t[i] >= 30000 && o.t[i] < 30600);
            continue;
        }
        assert_false(o.t[i] >= 30000 && o.t[i] < 30600); /* nothing drawn inside the gap */
        hi = fmax(hi, o.v[i]);
        lo = fmin(lo, o.v[i]);
    }
    assert_int_equal(breaks, 1);
    assert_true(hi == 55); /* global max and min exact */
    assert_true(lo == -12);
    pts_free(&o);

    /* every bucket's min and max survive, for another budget */
    const size_t b2 = 100;
    o = ds(t, v, DAY, b2);
    for (size_t b = 0; b < b2; b++) {
        double bmin = INFINITY, bmax = -INFINITY;
        for (size_t i = 0; i < DAY; i++) {
            size_t k = (size_t)((double)i / (DAY - 1) * (double)b2);
            if ((k >= b2 ? b2 - 1 : k) == b && isfinite(v[i])) {
                bmin = fmin(bmin, v[i]);
                bmax = fmax(bmax, v[i]);
            }
        }
        bool has_min = false, has_max = false;
        for (size_t i = 0; i < o.n; i++) {
            has_min |= o.v[i] == bmin;
            has_max |= o.v[i] == bmax;
        }
        assert_true(has_min);
        assert_true(has_max);
    }
    pts_free(&o);
    free(t);
    free(v);
}

/* ---- units ---- */

static void assert_str(const char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        print_message("got \"%s\", want \"%s\"\n", got, want);
    assert_string_equal(got, want);
}

static void fmt_is(double v, const char *unit, const char *want)
{
    char b[64];
    assert_str(units_format(b, sizeof(b), v, unit), want);
}

static void t_units_format(void **state)
{
    fmt_is(0, "bytes", "0 B");
    fmt_is(512, "bytes", "512 B");
    fmt_is(1536, "bytes", "1.5 KiB");
    fmt_is(1.2 * GiB, "bytes", "1.2 GiB");
    fmt_is(11.7 * GiB, "bytes", "11.7 GiB");
    fmt_is(1023.9 * 1024, "bytes", "1 MiB"); /* rounds up into the next prefix */
    fmt_is(-1536, "bytes", "-1.5 KiB");
    fmt_is(12.3e6, "bytes/s", "11.7 MiB/s");
    fmt_is(1.98, "cores", "1.98 cores");
    fmt_is(45, "%", "45%");
    fmt_is(0.5, "fraction", "50%");
    fmt_is(250, "W", "250 W");
    fmt_is(1234, "W", "1.23 kW");
    fmt_is(31.3e6, "J", "31.3 MJ");
    fmt_is(45.25, "°C", "45.3 °C");
    fmt_is(1500, "count", "1.5k");
    fmt_is(1500, NULL, "1.5k");
    fmt_is(2500, "/s", "2.5k/s");
    fmt_is(1500, "pages", "1.5k pages");
    fmt_is(0.00123, "W", "0.00123 W");
    fmt_is(86399, "s", "86399 s");
    fmt_is(NAN, "bytes", "\xe2\x80\x94");
    fmt_is(INFINITY, "W", "\xe2\x80\x94");

    char b[64];
    assert_str(units_fixed(b, sizeof(b), 1.25, 1), "1.3");
    assert_str(units_fixed(b, sizeof(b), -0.04, 1), "0.0");
    assert_str(units_fixed(b, sizeof(b), -2.5, 0), "-3");
    assert_str(units_fixed(b, sizeof(b), 3, 2), "3.00");
    assert_str(units_fixed(b, sizeof(b), 1e300, 2), "1e+300");
    assert_str(units_sig(b, sizeof(b), 1.2 * GiB, 6), "1288490000");
    assert_str(units_sig(b, sizeof(b), 0.25, 6), "0.25");
    assert_str(units_sig(b, sizeof(b), 86399.5, 7), "86399.5");
    assert_str(units_sig(b, sizeof(b), -0.000123456789, 3), "-0.000123");
    assert_str(units_sig(b, sizeof(b), 1e-20, 6), "1e-20");
    assert_str(units_sig(b, sizeof(b), 0, 6), "0");
    char tiny[4];
    assert_str(units_format(tiny, sizeof(tiny), 1.2 * GiB, "bytes"), "1.2"); /* truncated, terminated */
}

static void t_units_ticks(void **state)
{
    js_ticks_t tk;
    char b[64];
    assert_int_equal(units_ticks(0, 1.2 * GiB, 5, "bytes", &tk), 0);
    assert_true(tk.lo == 0);
    assert_true(tk.step == 0.5 * GiB);
    assert_int_equal(tk.n, 4);
    assert_str(units_tick_label(b, sizeof(b), &tk, tk.lo), "0 GiB");
    assert_str(units_tick_label(b, sizeof(b), &tk, tk.lo + 3 * tk.step), "1.5 GiB");

    assert_int_equal(units_ticks(0, 100, 6, "%", &tk), 0);
    assert_true(tk.step == 20 && tk.hi == 100);
    assert_int_equal(tk.n, 6);
    assert_str(units_tick_label(b, sizeof(b), &tk, 40), "40%");

    assert_int_equal(units_ticks(0, 7.3, 5, "cores", &tk), 0);
    assert_true(tk.step == 2 && tk.hi == 8);
    assert_str(units_tick_label(b, sizeof(b), &tk, 8), "8 cores");

    assert_int_equal(units_ticks(-3, 17, 5, "W", &tk), 0); /* step 5: -5 .. 20 */
    assert_true(tk.lo == -5 && tk.hi == 20 && tk.step == 5);
    assert_int_equal(tk.n, 6);

    assert_int_equal(units_ticks(0, 0.5, 5, "fraction", &tk), 0); /* shown as 0% .. 50% */
    assert_str(units_tick_label(b, sizeof(b), &tk, 0.5), "50%");

    assert_int_equal(units_ticks(2e9, 2e9, 5, "W", &tk), 0); /* empty range widened */
    assert_true(tk.hi > tk.lo);
    assert_str(units_tick_label(b, sizeof(b), &tk, 2e9), "2.00 GW");
    assert_int_equal(units_ticks(NAN, 1, 5, "W", &tk), 0);
    assert_true(tk.lo == 0 && tk.hi == 1);
    assert_int_equal(units_ticks(0, 1, 1, "W", &tk), -EINVAL);

    /* issue 24: 400M events were labelled "400M events", cut to "0M" by the chart's margin */
    assert_int_equal(units_ticks(0, 3.9e8, 5, "events", &tk), 0);
    assert_str(units_tick_label(b, sizeof(b), &tk, 0), "0");
    assert_str(units_tick_label(b, sizeof(b), &tk, 4e8), "400M");
    /* rounding out to the next prefix: 0 .. 1G/s, not 0 .. 1000M/s; 1 GiB, not 1500 MiB */
    assert_int_equal(units_ticks(0, 1010.0 * 1024 * 1024, 5, "bytes", &tk), 0);
    assert_str(units_tick_label(b, sizeof(b), &tk, tk.hi), "1.0 GiB");
    assert_int_equal(units_ticks(0, 9.2e8, 5, "/s", &tk), 0);
    assert_str(units_tick_label(b, sizeof(b), &tk, tk.hi), "1.0G/s");
}

/* tick_value: the value a tick label stands for (number times its prefix), to check labels against data. */
static double tick_value(const char *label)
{
    char *end;
    double x = strtod(label, &end);
    while (*end == ' ')
        end++;
    static const char si[] = "kMGTPE";
    const char *p = *end ? strchr(si, *end == 'K' ? 'k' : *end) : NULL;
    if (p)
        x *= pow(end[1] == 'i' ? 1024 : 1000, (double)(p - si + 1));
    return x;
}

/* Every magnitude, every unit kind: the ticks cover the data, their labels are distinct, short enough for
 * the chart's margin (10 characters), and each reads back as the value it marks (to its decimals). */
static void t_units_tick_labels(void **state)
{
    (void)state;
    static const char *const units[] = {"events", "bytes", "bytes/s", "W", "", "/s", "Hz", "count", "J"};
    static const double mant[] = {1, 1.7, 3.9, 9.2, 9.99};
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
        for (int e = -2; e <= 17; e++)
            for (size_t m = 0; m < sizeof(mant) / sizeof(mant[0]); m++) {
                double hi = mant[m] * pow(10, e);
                js_ticks_t tk;
                assert_int_equal(units_ticks(0, hi, 5, units[u], &tk), 0);
                assert_true(tk.lo <= 0 && tk.hi >= hi * (1 - 1e-12));
                assert_true(tk.n >= 2 && tk.n <= 12);
                char prev[64] = "";
                for (size_t i = 0; i < tk.n; i++) {
                    double v = tk.lo + (double)i * tk.step;
                    char b[64];
                    units_tick_label(b, sizeof(b), &tk, v);
                    if (strlen(b) > 10 || strcmp(b, prev) == 0)
                        fail_msg("%s [0, %g]: tick %zu label \"%s\" (previous \"%s\")", units[u], hi, i, b,
                                 prev);
                    double back = tick_value(b), tol = tk.step * 0.05 + fabs(v) * 1e-9;
                    if (fabs(back - v) > tol)
                        fail_msg("%s [0, %g]: tick %g labelled \"%s\" (reads %g)", units[u], hi, v, b, back);
                    snprintf(prev, sizeof(prev), "%s", b);
                }
            }
}

static void tticks_are(double lo, double hi, unsigned target, const js_timeaxis_t *ax, double first,
                       double step, size_t n, const char *const *labels)
{
    js_tticks_t tk;
    char b[64];
    assert_int_equal(units_time_ticks(lo, hi, target, ax, &tk), 0);
    if (tk.first != first || tk.step != step || tk.n != n)
        print_message("ticks: first %g step %g n %zu\n", tk.first, tk.step, tk.n);
    assert_true(tk.first == first);
    assert_true(tk.step == step);
    assert_int_equal(tk.n, n);
    for (size_t i = 0; labels[i]; i++)
        assert_str(units_time_label(b, sizeof(b), &tk, tk.first + (double)i * tk.step), labels[i]);
}

static void t_units_time(void **state)
{
    const js_timeaxis_t el = {0};
    tticks_are(0, 86399, 8, &el, 0, 10800, 8, (const char *const[]){"0:00:00", "3:00:00", "6:00:00", NULL});
    tticks_are(0, 90, 6, &el, 0, 15, 7, (const char *const[]){"0 s", "15 s", "30 s", NULL});
    tticks_are(0, 600, 6, &el, 0, 120, 6, (const char *const[]){"0:00", "2:00", "4:00", NULL});
    tticks_are(3000.2, 3005, 5, &el, 3001, 1, 5, (const char *const[]){"50:01", "50:02", NULL});
    tticks_are(0, 2, 5, &el, 0, 0.5, 5, (const char *const[]){"0 s", "0.5 s", "1 s", NULL});
    tticks_are(3600, 3601, 4, &el, 3600, 0.5, 3, (const char *const[]){"1:00:00.0", "1:00:00.5", NULL});
    /* 2024-05-01 12:00:00 UTC; midnight shows the date */
    const js_timeaxis_t wall = {.mode = JS_TIME_WALL, .t0_unix = 1714564800};
    tticks_are(0, 86399, 4, &wall, 0, 21600, 4,
               (const char *const[]){"12:00", "18:00", "05-02", "06:00", NULL});
    const js_timeaxis_t cest = {.mode = JS_TIME_WALL, .t0_unix = 1714564800, .utc_offset_s = 7200};
    tticks_are(0, 86399, 4, &cest, 14400, 21600, 4, (const char *const[]){"18:00", "05-02", NULL});
    tticks_are(10, 40, 3, &wall, 10, 10, 4, (const char *const[]){"12:00:10", "12:00:20", NULL});
    js_tticks_t tk;
    assert_int_equal(units_time_ticks(5, 5, 4, &el, &tk), -EINVAL);
    assert_int_equal(units_time_ticks(0, 1, 4, NULL, &tk), -EINVAL);

    char b[64];
    assert_str(units_time(b, sizeof(b), 12.5, &el), "12.5 s");
    assert_str(units_time(b, sizeof(b), 12, &el), "12 s");
    assert_str(units_time(b, sizeof(b), 250, &el), "4:10");
    assert_str(units_time(b, sizeof(b), 3723, &el), "1:02:03");
    assert_str(units_time(b, sizeof(b), 90000, &el), "25:00:00");
    assert_str(units_time(b, sizeof(b), -250, &el), "-4:10");
    assert_str(units_time(b, sizeof(b), 0, &wall), "12:00:00");
    assert_str(units_time(b, sizeof(b), 43200, &wall), "00:00:00");
    assert_str(units_time(b, sizeof(b), 61, NULL), "61 s");
}

/* The decimal separator must not follow the locale. Only checked where a comma locale is installed. */
static void t_units_locale(void **state)
{
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "nl_NL.UTF-8", NULL};
    const char *set = NULL;
    for (size_t i = 0; names[i] && !set; i++)
        set = setlocale(LC_NUMERIC, names[i]);
    if (!set)
        skip();
    char b[64];
    assert_str(units_format(b, sizeof(b), 1.5 * 1024, "bytes"), "1.5 KiB");
    assert_str(units_sig(b, sizeof(b), 0.25, 6), "0.25");
    setlocale(LC_NUMERIC, "C");
}

/* ---- escaping and the page ---- */

static char *escaped(const char *s, size_t len)
{
    js_buf_t b = {0};
    js_html_t h = {.buf = &b};
    assert_int_equal(html_textn(&h, s, len), 0);
    char *out = b.p ? b.p : strdup("");
    assert_non_null(out);
    return out;
}

static void esc_is(const char *s, size_t len, const char *want)
{
    char *got = escaped(s, len);
    bool same = strcmp(got, want) == 0;
    if (!same)
        print_message("escape: got \"%s\", want \"%s\"\n", got, want);
    free(got);
    assert_true(same);
}

#define FFFD "\xef\xbf\xbd"
#define ESC(literal, want) esc_is(literal, sizeof(literal) - 1, want)

static void t_escape(void **state)
{
    ESC("<a href=\"x\">'&'</a>", "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    ESC("a\x01"
        "b\x7f"
        "c\x1b[31m",
        "a" FFFD "b" FFFD "c" FFFD "[31m");
    ESC("tab\there\nnext\r", "tab\there\nnext\r");
    ESC("\xff\xfe", FFFD FFFD);
    ESC("caf\xc3\xa9", "caf\xc3\xa9");
    ESC("cut \xc3", "cut " FFFD);
    ESC("\xe2\x82", FFFD FFFD);
    ESC("c1 \xc2\x85 nbsp \xc2\xa0", "c1 " FFFD " nbsp \xc2\xa0");
    ESC("\xef\xbf\xbf\xef\xbf\xbe", FFFD FFFD);
    ESC("\xed\xa0\x80", FFFD FFFD FFFD); /* a surrogate */
    ESC("a\0b", "a" FFFD "b");
    ESC("\xf0\x9f\x99\x82 ok", "\xf0\x9f\x99\x82 ok");

    js_buf_t b = {0};
    js_html_t h = {.buf = &b};
    html_text_max(&h, "abcdef", 3);
    html_raw(&h, "|");
    html_text_max(&h, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 2);
    html_raw(&h, "|");
    html_text_max(&h, "ab<", 3);
    html_raw(&h, "|");
    html_text_max(&h, "abcd", 3);
    html_raw(&h, "|");
    html_text(&h, NULL);
    html_num(&h, 2.50, 2);
    html_raw(&h, "|");
    html_num(&h, 3.0, 1);
    html_raw(&h, "|");
    html_value(&h, 1536, "bytes");
    assert_int_equal(h.err, 0);
    assert_str(b.p, "abc\xe2\x80\xa6|\xc3\xa9\xc3\xa9\xe2\x80\xa6|ab&lt;|abc\xe2\x80\xa6|2.5|3|1.5 KiB");

    char id[16];
    assert_str(html_id(&h, "mem chart/1", id, sizeof(id)), "mem_chart_1");
    assert_str(html_id(&h, NULL, id, sizeof(id)), "c1");
    assert_str(html_id(&h, "", id, sizeof(id)), "c2");
    assert_str(html_id(&h, "a-very-long-identifier", id, sizeof(id)), "a-very-long-ide");
    buf_free(&b);
}

static void t_sticky_error(void **state)
{
    js_buf_t b = {0};
    js_html_t h = {.buf = &b};
    html_raw(&h, "kept");
    h.err = -ENOMEM; /* as if an append had failed */
    html_text(&h, "lost");
    html_printf(&h, "%d", 1);
    const double t[] = {0, 1}, v[] = {1, 2};
    const js_series_t s = {.name = "x", .t = t, .v = v, .n = 2};
    assert_int_equal(svg_line_chart(&h, &(js_chart_t){.title = "c", .series = &s, .nseries = 1}), -ENOMEM);
    assert_int_equal(html_end(&h), -ENOMEM);
    assert_str(b.p, "kept");
    buf_free(&b);

    js_html_t h2 = {.buf = &b};
    const js_series_t bad = {.name = "x", .t = NULL, .v = v, .n = 2};
    assert_int_equal(svg_line_chart(&h2, &(js_chart_t){.title = "c", .series = &bad, .nseries = 1}), -EINVAL);
    assert_int_equal(html_end(&h2), -EINVAL);
    buf_free(&b);
}

/* The time axis: a tick label at the plot's right edge is right-aligned (a centred one ran out of the picture
 * and was clipped), the others stay centred. */
static void t_time_axis_end(void **state)
{
    (void)state;
    const double t[] = {0, 30, 45, 60, 90}, v[] = {1, 2, 3, 2, 1};
    const js_series_t s = {.name = "x", .t = t, .v = v, .n = 5};
    js_buf_t b = {0};
    js_html_t h = {.buf = &b};
    assert_int_equal(svg_line_chart(&h, &(js_chart_t){.title = "c", .series = &s, .nseries = 1}), 0);
    const char *xa = strstr(b.p, "<g class=\"xa\">");
    assert_non_null(xa);
    const char *end = strstr(xa, "</g>");
    assert_non_null(end);
    size_t labels = 0, right = 0;
    const char *last = NULL;
    for (const char *p = xa; (p = strstr(p, "<text")) != NULL && p < end; p++) {
        labels++;
        last = p;
        const char *close = strchr(p, '>'), *style = strstr(p, "style=\"text-anchor:end\"");
        right += style != NULL && style < close;
    }
    assert_true(labels >= 2);
    assert_int_equal(right, 1); /* only the last, at t = 90 on the right edge */
    assert_non_null(strstr(last, "style=\"text-anchor:end\">"));
    assert_true(strstr(last, "style=\"text-anchor:end\">") < strstr(last, "</text>"));
    buf_free(&b);
}

/* xml_check: a small checker for an SVG fragment: tags balanced and properly nested, attribute values quoted,
 * entities among the five XML ones or numeric, no raw '<' or '&' in text. Returns NULL or what is wrong. */
static const char *xml_check(const char *s, size_t len)
{
    const char *stack[64];
    size_t stack_len[64], depth = 0;
    const char *end = s + len;
    for (const char *p = s; p < end;) {
        if (*p == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&apos;"};
            bool ok = false;
            for (size_t i = 0; i < 6 && !ok; i++)
                ok = strncmp(p, ents[i], strlen(ents[i])) == 0;
            if (!ok)
                return "bad entity";
            p++;
            continue;
        }
        if (*p != '<') {
            p++;
            continue;
        }
        bool closing = p[1] == '/';
        const char *name = p + 1 + closing, *q = name;
        while (q < end && (*q == '-' || *q == ':' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                           (*q >= '0' && *q <= '9')))
            q++;
        size_t nlen = (size_t)(q - name);
        if (nlen == 0)
            return "raw '<' in text";
        /* attributes: name="value" */
        while (q < end && *q != '>' && !(*q == '/' && q[1] == '>')) {
            if (*q == ' ' || *q == '\n') {
                q++;
                continue;
            }
            while (q < end && *q != '=' && *q != '>' && *q != ' ')
                q++;
            if (*q != '=' || q[1] != '"')
                return "unquoted attribute";
            q += 2;
            while (q < end && *q != '"') {
                if (*q == '<')
                    return "'<' in an attribute";
                q++;
            }
            q++;
        }
        if (q >= end)
            return "unterminated tag";
        bool empty = *q == '/';
        if (closing) {
            if (depth == 0 || stack_len[depth - 1] != nlen || strncmp(stack[depth - 1], name, nlen) != 0)
                return "mismatched end tag";
            depth--;
        } else if (!empty) {
            if (depth == 64)
                return "too deep";
            stack[depth] = name;
            stack_len[depth++] = nlen;
        }
        p = q + (empty ? 2 : 1);
    }
    return depth ? "unclosed element" : NULL;
}

/* page_check: every <svg> of the page passes xml_check; every <figure>, <section>, <table> is closed; no
 * coordinate in a d attribute has more than one decimal. Returns the number of <svg> elements. */
static size_t page_check(const char *page)
{
    size_t nsvg = 0;
    for (const char *p = page; (p = strstr(p, "<svg ")) != NULL; p++) {
        const char *e = strstr(p, "</svg>");
        assert_non_null(e);
        const char *why = xml_check(p, (size_t)(e + 6 - p));
        if (why)
            print_message("svg %zu: %s\n", nsvg, why);
        assert_null(why);
        nsvg++;
    }
    const char *pairs[][2] = {{"<figure", "</figure>"}, {"<section", "</section>"}, {"<table", "</table>"},
                              {"<script", "</script>"}, {"<ul", "</ul>"},           {"<svg ", "</svg>"}};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        size_t open = 0, close = 0;
        for (const char *p = page; (p = strstr(p, pairs[i][0])) != NULL; p++)
            open++;
        for (const char *p = page; (p = strstr(p, pairs[i][1])) != NULL; p++)
            close++;
        if (open != close)
            print_message("%s: %zu opened, %zu closed\n", pairs[i][0], open, close);
        assert_int_equal(open, close);
    }
    for (const char *p = page; (p = strstr(p, " d=\"")) != NULL;) {
        p += 4;
        size_t decimals = 0;
        bool after_dot = false;
        for (; *p != '"'; p++) {
            if (*p == '.') {
                after_dot = true;
                decimals = 0;
            } else if (*p >= '0' && *p <= '9')
                decimals += after_dot;
            else
                after_dot = false;
            assert_true(decimals <= 1);
        }
    }
    return nsvg;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void t_render_page(void **state)
{
    double t[200], v[200], w[200];
    for (int i = 0; i < 200; i++) {
        t[i] = i;
        v[i] = i == 50 ? 3.0 * GiB : (1 + 0.001 * i) * GiB;
        w[i] = (i >= 80 && i < 90) || i == 120 || i == 122 ? NAN : 0.5 * GiB; /* a gap; an isolated point */
    }
    const js_series_t s[] = {{.name = "RSS <tree>", .t = t, .v = v, .n = 200, .fill = true},
                             {.name = "cache & \"more\"", .t = t, .v = w, .n = 200, .dashed = true}};
    const js_hline_t lim[] = {{4 * GiB, "memory limit", JS_VERMILLION}, {NAN, "ignored", 0}};
    const js_marker_t pk[] = {{50, 3.0 * GiB, NULL, 0}};
    const js_band_t ph[] = {{0, 100, "setup <1>"}, {100, 199, NULL}};
    const js_event_t ev[] = {{150, "restart 'x'", "{\"epoch\":3,\"loss\":0.25}"}};
    js_buf_t b = {0};
    js_html_t h = {.buf = &b};
    html_begin(&h, "t <itle> & co");
    const js_kv_t facts[] = {{"cmd", cell_text("a <b> & c\x01"), NULL},
                             {"peak", cell_real(3.0 * GiB), "bytes"},
                             {"pid", cell_int(42), NULL},
                             {"n/a", cell_missing(), NULL}};
    html_header(&h, "title <x>", "sub & title", facts, 4);
    html_section_begin(&h, "sec 1", "Memory & more");
    html_para(&h, "a paragraph <p>");
    svg_line_chart(&h, &(js_chart_t){.id = "mem",
                                     .title = "Memory <RSS>",
                                     .unit = "bytes",
                                     .series = s,
                                     .nseries = 2,
                                     .hlines = lim,
                                     .nhlines = 2,
                                     .markers = pk,
                                     .nmarkers = 1,
                                     .bands = ph,
                                     .nbands = 2,
                                     .events = ev,
                                     .nevents = 1,
                                     .buckets = 40});
    svg_line_chart(&h, &(js_chart_t){.title = "empty"});
    const js_bar_t bars[] = {{"proc <1>", 2.5, "pid 1 & more"}, {"proc 2", NAN, NULL}, {"neg", -1, NULL}};
    svg_bar_chart(&h, &(js_bars_t){.title = "bars", .unit = "cores", .bars = bars, .nbars = 3});
    double flat[200];
    for (int i = 0; i < 200; i++)
        flat[i] = 0.5;
    const js_series_t rows[] = {{.name = "node <1>", .t = t, .v = flat, .n = 200},
                                {.name = "node 2", .t = t, .v = w, .n = 200}};
    svg_heatmap(&h, &(js_heatmap_t){.id = "heat",
                                    .title = "heat",
                                    .unit = "fraction",
                                    .rows = rows,
                                    .nrows = 2,
                                    .cols = 20,
                                    .v_min = 0,
                                    .v_max = 1});
    const js_col_t cols[] = {{"name", NULL}, {"rss", "bytes"}, {"pid", NULL}};
    const js_cell_t cells[] = {cell_text("x</td>"), cell_real(1536), cell_int(7),
                               cell_text("y"),      cell_missing(),  cell_real(0.5)};
    html_table(&h, "procs <top>", cols, 3, cells, 2);
    html_kv_table(&h, facts, 4);
    const js_advice_t adv[] = {{ADVICE_WARN, "Use <fewer> cores.", "peak 2 & p95 1", "p95 < 50%", NULL},
                               {ADVICE_MAX, "odd severity", NULL, "rule only", NULL}};
    html_advice(&h, adv, 2);
    html_section_end(&h);
    assert_int_equal(html_end(&h), 0);
    const char *page = b.p;

    assert_true(strncmp(page, "<!DOCTYPE html>\n<html lang=\"en\">", 32) == 0);
    assert_int_equal(page_check(page), 4);
    /* no request can leave the page */
    assert_non_null(strstr(page, "Content-Security-Policy\" content=\"default-src 'none'"));
    assert_int_equal(count(page, "http:"), count(page, "http://www.w3.org/2000/svg")); /* the SVG namespace */
    assert_int_equal(count(page, "https:"), 0);
    assert_null(strstr(page, " src="));
    /* escaped everywhere; no raw control byte */
    assert_non_null(strstr(page, "<title>t &lt;itle&gt; &amp; co</title>"));
    assert_non_null(strstr(page, "<h1 title=\"title &lt;x&gt;\">title &lt;x&gt;</h1>"));
    assert_non_null(strstr(page, ">setup &lt;1&gt;</text>"));
    assert_non_null(strstr(page, "x&lt;/td&gt;"));
    assert_non_null(strstr(page, "a &lt;b&gt; &amp; c" FFFD));
    for (const char *p = page; *p; p++)
        assert_true((unsigned char)*p >= 0x20 || *p == '\n' || *p == '\t');
    /* the line chart: accessible, responsive, clipped, two series with legend toggles and hover data */
    assert_non_null(strstr(page, "viewBox=\"0 0 800 240\" role=\"img\" aria-labelledby=\"mem-t mem-d\""));
    assert_non_null(strstr(page, "<title id=\"mem-t\">Memory &lt;RSS&gt;</title>"));
    assert_non_null(strstr(page, "<desc id=\"mem-d\">Line chart of 2 series"));
    assert_non_null(strstr(page, "peak at 50 s"));
    assert_non_null(strstr(page, "clip-path=\"url(#mem-c)\""));
    assert_non_null(strstr(page, "<path class=\"f\" data-s=\"0\""));
    assert_non_null(strstr(page, "<path class=\"s d\" data-s=\"1\""));
    assert_non_null(strstr(page, "<button type=\"button\" data-s=\"1\" aria-pressed=\"true\">"));
    assert_non_null(strstr(page, ">memory limit</text>"));
    assert_null(strstr(page, ">ignored<"));
    assert_non_null(strstr(page, ">3 GiB</text>")); /* the marker's default label */
    assert_non_null(strstr(page, "<g class=\"ev\" data-t=\"150\""));
    assert_non_null(strstr(page, "restart &#39;x&#39;"));
    /* the event's data in its tooltip (issue 24) */
    assert_non_null(strstr(
        page, "<title>restart &#39;x&#39; at 2:30: {&quot;epoch&quot;:3,&quot;loss&quot;:0.25}</title>"));
    assert_non_null(strstr(page, "<g class=\"band\" data-t0=\"0\" data-t1=\"100\">"));
    assert_non_null(strstr(page, "<script type=\"application/json\" class=\"cd\">{\"k\":\"line\""));
    assert_non_null(strstr(page, "\"n\":\"RSS \\u003ctree>\"")); /* '<' never raw inside a script */
    assert_non_null(strstr(page, "\"n\":\"cache & \\\"more\\\"\""));
    /* the spike is kept exactly in the hover data (6 significant digits of 3 GiB) */
    assert_non_null(strstr(page, ",3221230000,"));
    /* the gapped series: the gap and the isolated point make three subpaths, one a dot */
    const char *p1 = strstr(page, "<path class=\"s d\" data-s=\"1\"");
    const char *p1e = strchr(strstr(p1, " d=\"") + 4, '"');
    size_t subpaths = 0;
    for (const char *q = strstr(p1, " d=\""); q < p1e; q++)
        subpaths += *q == 'M';
    assert_int_equal(subpaths, 4); /* 0-79, 90-119, 121, 123-199 */
    const char *dot = strstr(p1, "h0");
    assert_true(dot && dot < p1e);
    /* the bars: a native tooltip each with the full label and note, no bar for NAN or negative values */
    assert_non_null(strstr(page, "<title>proc &lt;1&gt;\npid 1 &amp; more\n2.5 cores</title>"));
    assert_int_equal(count(page, "width=\"0\" height=\"16\""), 2);
    /* the heat map: a constant row is one rect (plus the grey background); a row with gaps leaves them grey
     */
    const char *hm = strstr(page, "<g class=\"hm\">");
    assert_non_null(hm);
    const char *row1 = strchr(hm, '\n');
    assert_int_equal(count(hm, "fill=\"#21918c\"") - count(row1, "fill=\"#21918c\""), 1); /* 0.5: level 4 */
    assert_non_null(strstr(page, "\"rows\":[\"node \\u003c1>\",\"node 2\"]"));
    /* tables and advice */
    assert_non_null(strstr(page, "<td class=\"n\">1.5 KiB</td>"));
    assert_non_null(strstr(page, "<td class=\"n\">\xe2\x80\x94</td>"));
    assert_non_null(strstr(page, "<td class=\"n\">0.5</td>"));
    assert_non_null(strstr(page, "<caption>procs &lt;top&gt;</caption>"));
    assert_non_null(
        strstr(page, "<li class=\"warn\"><span class=\"sev\">warning</span>Use &lt;fewer&gt; cores."));
    assert_non_null(strstr(page, "(rule: p95 &lt; 50%)"));
    assert_non_null(strstr(page, "<li class=\"info\"><span class=\"sev\">note</span>odd severity"));
    assert_non_null(strstr(page, "<section id=\"sec_1\">"));
    assert_non_null(strstr(page, "<dt>peak</dt><dd>3 GiB</dd>"));
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_ds_passthrough), cmocka_unit_test(t_ds_golden),
        cmocka_unit_test(t_ds_gaps),        cmocka_unit_test(t_ds_errors),
        cmocka_unit_test(t_ds_day),         cmocka_unit_test(t_units_format),
        cmocka_unit_test(t_units_ticks),    cmocka_unit_test(t_units_tick_labels),
        cmocka_unit_test(t_units_time),     cmocka_unit_test(t_units_locale),
        cmocka_unit_test(t_escape),         cmocka_unit_test(t_sticky_error),
        cmocka_unit_test(t_render_page),    cmocka_unit_test(t_time_axis_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
