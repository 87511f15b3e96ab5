/* SPDX-License-Identifier: MIT
 *
 * The REAL side of tests/unit/vendor_abi_list.h: the values under libpfm4's, libmicrohttpd's and HDF5's own
 * headers (libpfm4-dev, libmicrohttpd-dev, libhdf5-dev), compiled only where they are installed. Nothing here
 * calls into the libraries, so the test links none of them.
 */
#include <hdf5.h>
#include <microhttpd.h>
#include <perfmon/pfmlib_perf_event.h>

#include "vendor_abi_list.h"

#include <stdint.h>
#include <string.h>

/* is_present_bits: the flags word of a pfm_pmu_info_t with only is_present set */
static long long is_present_bits(void)
{
    pfm_pmu_info_t i;
    memset(&i, 0, sizeof(i));
    i.is_present = 1;
    uint32_t w;
    memcpy(&w, (const char *)&i + sizeof(i) - sizeof(w), sizeof(w));
    return w;
}

size_t vendor_abi_real(abi_value_t *out, size_t cap)
{
    size_t n = 0;
#define X(real, ours)                                                                                        \
    if (n < cap)                                                                                             \
        out[n++] = (abi_value_t){#real, (long long)(real)};
    PFM_ABI_LIST(X)
    MHD_ABI_LIST(X)
    H5_ABI_LIST(X)
#undef X
    return n;
}
