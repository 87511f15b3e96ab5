/* SPDX-License-Identifier: MIT
 *
 * The vendor ABI subsets jobscope declares instead of including the vendors' headers (src/sources/pfm_abi.h,
 * src/sinks/mhd_abi.h, src/sinks/h5_abi.h: the libraries are dlopen'ed, not linked) against those headers:
 * every constant, struct size and field offset listed in vendor_abi_list.h must be equal on both sides. Built
 * only where libpfm4-dev, libmicrohttpd-dev and libhdf5-dev are installed (tests/meson.build).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sinks/h5_abi.h"
#include "sinks/mhd_abi.h"
#include "sources/pfm_abi.h"
#include "vendor_abi_list.h"

#include <stdio.h>
#include <string.h>

/* the bound-pointer globals the ABI headers' macros name (never called here) */
js_mhd_api_t mhd_api;
js_h5_api_t h5_api;
js_h5_vars_t h5_vars;

static long long is_present_bits(void)
{
    js_pfm_pmu_info_t i;
    memset(&i, 0, sizeof(i));
    i.flags.is_present = 1;
    uint32_t w;
    memcpy(&w, (const char *)&i + sizeof(i) - sizeof(w), sizeof(w));
    return w;
}

static void test_same_values(void **state)
{
    (void)state;
    static abi_value_t ours[256], real[256];
    size_t n = 0;
#define X(real, mine)                                                                                        \
    if (n < 256)                                                                                             \
        ours[n++] = (abi_value_t){#real, (long long)(mine)};
    PFM_ABI_LIST(X)
    MHD_ABI_LIST(X)
    H5_ABI_LIST(X)
#undef X
    size_t m = vendor_abi_real(real, 256);
    assert_int_equal(n, m);
    assert_true(n > 70);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ours[i].name, real[i].name);
        if (ours[i].value != real[i].value) {
            fprintf(stderr, "%s: declared %lld, vendor header %lld\n", ours[i].name, ours[i].value,
                    real[i].value);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
