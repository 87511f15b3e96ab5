/* SPDX-License-Identifier: MIT
 *
 * Unit tests of duration_parse() and interval_parse() (src/core/duration.c): every unit, fractions that must
 * come out exact in nanoseconds (integer arithmetic, no locale), malformed text, and the limits of int64 and
 * of the sampling interval [10 ms, 1 h]. The output is checked to be untouched on every failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/duration.h"

#include <errno.h>
#include <locale.h>

#define SENTINEL ((int64_t)-12345)

typedef struct {
    const char *text;
    int64_t ns;
} good_t;

static void check_good(const good_t *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t ns = SENTINEL;
        int r = duration_parse(g[i].text, &ns);
        if (r != 0 || ns != g[i].ns)
            fail_msg("duration_parse(\"%s\") = %d, %lld ns; want 0, %lld ns", g[i].text, r, (long long)ns,
                     (long long)g[i].ns);
    }
}

static void check_bad(const char *const *texts, size_t n, int want)
{
    for (size_t i = 0; i < n; i++) {
        int64_t ns = SENTINEL;
        int r = duration_parse(texts[i], &ns);
        if (r != want || ns != SENTINEL)
            fail_msg("duration_parse(\"%s\") = %d (ns %lld); want %d and ns untouched", texts[i], r,
                     (long long)ns, want);
    }
}

static void test_units(void **state)
{
    (void)state;
    static const good_t g[] = {
        {"1s", 1000000000LL},
        {"10ms", 10000000LL},
        {"500ms", 500000000LL},
        {"2m", 120000000000LL},
        {"2min", 120000000000LL},
        {"1h", 3600000000000LL},
        {"250us", 250000LL},
        {"7ns", 7LL},
        {"1", 1000000000LL}, /* no unit: seconds */
        {"0", 0},
        {"0s", 0},
        {"0ms", 0},
        {"007s", 7000000000LL},
        {"86400", 86400000000000LL},
    };
    check_good(g, sizeof(g) / sizeof(g[0]));
}

static void test_fractions(void **state)
{
    (void)state;
    static const good_t g[] = {
        {"0.5", 500000000LL},
        {"0.1", 100000000LL}, /* exactly, not 99999999 or 100000001 */
        {"0.2", 200000000LL},
        {"0.3", 300000000LL},
        {"0.7", 700000000LL},
        {"1.25s", 1250000000LL},
        {".5", 500000000LL},
        {"5.", 5000000000LL},
        {"1.5ms", 1500000LL},
        {"0.001", 1000000LL},
        {"0.000000001", 1LL},
        {"0.0000000004", 0LL}, /* below a nanosecond rounds to nearest */
        {"0.0000000006", 1LL},
        {"1.5m", 90000000000LL},
        {"0.1h", 360000000000LL},
        {"2.5us", 2500LL},
        {"1.0000000000009s", 1000000000LL}, /* digits past 1e-12 are ignored */
        {"0.123456789", 123456789LL},
    };
    check_good(g, sizeof(g) / sizeof(g[0]));
}

/* Must not depend on the C locale's decimal separator. */
static void test_locale_independent(void **state)
{
    (void)state;
    const char *old = setlocale(LC_NUMERIC, "de_DE.UTF-8");
    if (!old)
        old = setlocale(LC_NUMERIC, "fr_FR.UTF-8");
    static const good_t g[] = {{"0.1", 100000000LL}, {"1.25s", 1250000000LL}};
    check_good(g, 2);
    static const char *const bad[] = {"0,1"};
    check_bad(bad, 1, -EINVAL);
    setlocale(LC_NUMERIC, "C");
}

static void test_invalid(void **state)
{
    (void)state;
    static const char *const bad[] = {"",    "abc",  "10x", "-1",   "1.2.3", "s",   "ms",   ".",   "-0.5",
                                      "+1",  " 1s",  "1s ", "1 s",  "1S",    "1e3", "1sec", "1hh", "0x10",
                                      "1,5", "1..2", "ns",  "1m s", "1mn",   "inf", "nan",  "1h1m"};
    check_bad(bad, sizeof(bad) / sizeof(bad[0]), -EINVAL);
    int64_t ns = SENTINEL;
    assert_int_equal(duration_parse(NULL, &ns), -EINVAL);
    assert_int_equal(ns, SENTINEL);
}

static void test_range(void **state)
{
    (void)state;
    static const char *const big[] = {"99999999999999999999h",
                                      "99999999999999999999",
                                      "2562048h",
                                      "153722868m",
                                      "9223372037s",
                                      "2562047.9h",
                                      "99999999999999999999999999999999999999ns"};
    check_bad(big, sizeof(big) / sizeof(big[0]), -ERANGE);
    /* the largest whole hours that fit in int64 nanoseconds */
    static const good_t g[] = {{"2562047h", 2562047LL * 3600000000000LL},
                               {"9223372036s", 9223372036000000000LL}};
    check_good(g, sizeof(g) / sizeof(g[0]));
}

static void test_interval(void **state)
{
    (void)state;
    int64_t ns = SENTINEL;
    assert_int_equal(interval_parse("5ms", &ns), -ERANGE);
    assert_int_equal(interval_parse("9.999ms", &ns), -ERANGE);
    assert_int_equal(interval_parse("0", &ns), -ERANGE);
    assert_int_equal(interval_parse("2h", &ns), -ERANGE);
    assert_int_equal(interval_parse("3600.000000001", &ns), -ERANGE);
    assert_int_equal(interval_parse("61m", &ns), -ERANGE);
    assert_int_equal(interval_parse("99999999999999999999h", &ns), -ERANGE);
    assert_int_equal(interval_parse("abc", &ns), -EINVAL);
    assert_int_equal(interval_parse("", &ns), -EINVAL);
    assert_int_equal(ns, SENTINEL);

    assert_int_equal(interval_parse("10ms", &ns), 0);
    assert_int_equal(ns, JS_INTERVAL_MIN_NS);
    assert_int_equal(interval_parse("0.01", &ns), 0);
    assert_int_equal(ns, 10000000LL);
    assert_int_equal(interval_parse("1h", &ns), 0);
    assert_int_equal(ns, JS_INTERVAL_MAX_NS);
    assert_int_equal(interval_parse("60m", &ns), 0);
    assert_int_equal(ns, JS_INTERVAL_MAX_NS);
    assert_int_equal(interval_parse("0.5", &ns), 0);
    assert_int_equal(ns, 500000000LL);
    assert_int_equal(interval_parse("1", &ns), 0);
    assert_int_equal(ns, 1000000000LL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_fractions),
        cmocka_unit_test(test_locale_independent),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
