/* SPDX-License-Identifier: MIT
 *
 * The values of the vendor ABI subsets jobscope declares itself (src/sources/pfm_abi.h, src/sinks/mhd_abi.h,
 * src/sinks/h5_abi.h), as an X-macro list X(REAL, OURS): REAL is the expression under the vendor's own header
 * (tests/unit/vendor_abi_real.c), OURS the same under jobscope's declaration (tests/unit/test_vendor_abi.c).
 * Constants, struct sizes and field offsets; the entry points' signatures are exercised by the tests that use
 * them (test_perf, test_prometheus, the HDF5 export read back by h5py).
 */

/* libpfm4: return codes, flags, enum values, struct layouts */
#define PFM_ABI_LIST(X)                                                                                      \
    X(PFM_SUCCESS, JS_PFM_SUCCESS)                                                                           \
    X(PFM_ERR_NOTSUPP, JS_PFM_ERR_NOTSUPP)                                                                   \
    X(PFM_ERR_NOTFOUND, JS_PFM_ERR_NOTFOUND)                                                                 \
    X(PFM_ERR_UMASK, JS_PFM_ERR_UMASK)                                                                       \
    X(PFM_ERR_ATTR, JS_PFM_ERR_ATTR)                                                                         \
    X(PFM_PLM0, JS_PFM_PLM0)                                                                                 \
    X(PFM_PLM3, JS_PFM_PLM3)                                                                                 \
    X(PFM_MAJ_VERSION(0x4000d), JS_PFM_MAJ_VERSION(0x4000d))                                                 \
    X(PFM_MIN_VERSION(0x4000d), JS_PFM_MIN_VERSION(0x4000d))                                                 \
    X(PFM_PMU_TYPE_CORE, JS_PFM_PMU_TYPE_CORE)                                                               \
    X(PFM_PMU_TYPE_UNCORE, JS_PFM_PMU_TYPE_UNCORE)                                                           \
    X(PFM_OS_PERF_EVENT, JS_PFM_OS_PERF_EVENT)                                                               \
    X(PFM_PMU_MAX < 2048, JS_PFM_PMU_BOUND <= 2048)                                                          \
    X(sizeof(pfm_pmu_info_t), sizeof(js_pfm_pmu_info_t))                                                     \
    X(offsetof(pfm_pmu_info_t, name), offsetof(js_pfm_pmu_info_t, name))                                     \
    X(offsetof(pfm_pmu_info_t, size), offsetof(js_pfm_pmu_info_t, size))                                     \
    X(offsetof(pfm_pmu_info_t, pmu), offsetof(js_pfm_pmu_info_t, pmu))                                       \
    X(offsetof(pfm_pmu_info_t, type), offsetof(js_pfm_pmu_info_t, type))                                     \
    X(offsetof(pfm_pmu_info_t, num_fixed_cntrs), offsetof(js_pfm_pmu_info_t, num_fixed_cntrs))               \
    X(is_present_bits(), is_present_bits())                                                                  \
    X(sizeof(pfm_perf_encode_arg_t), sizeof(js_pfm_perf_encode_arg_t))                                       \
    X(offsetof(pfm_perf_encode_arg_t, attr), offsetof(js_pfm_perf_encode_arg_t, attr))                       \
    X(offsetof(pfm_perf_encode_arg_t, fstr), offsetof(js_pfm_perf_encode_arg_t, fstr))                       \
    X(offsetof(pfm_perf_encode_arg_t, size), offsetof(js_pfm_perf_encode_arg_t, size))

/* libmicrohttpd: the names are the same on both sides */
#define MHD_ABI_LIST(X)                                                                                      \
    X(MHD_YES, MHD_YES)                                                                                      \
    X(MHD_NO, MHD_NO)                                                                                        \
    X(MHD_HEADER_KIND, MHD_HEADER_KIND)                                                                      \
    X(MHD_RESPMEM_PERSISTENT, MHD_RESPMEM_PERSISTENT)                                                        \
    X(MHD_FEATURE_TLS, MHD_FEATURE_TLS)                                                                      \
    X(MHD_FEATURE_EPOLL, MHD_FEATURE_EPOLL)                                                                  \
    X(MHD_USE_TLS, MHD_USE_TLS)                                                                              \
    X(MHD_USE_INTERNAL_POLLING_THREAD, MHD_USE_INTERNAL_POLLING_THREAD)                                      \
    X(MHD_USE_IPv6, MHD_USE_IPv6)                                                                            \
    X(MHD_USE_POLL, MHD_USE_POLL)                                                                            \
    X(MHD_USE_EPOLL, MHD_USE_EPOLL)                                                                          \
    X(MHD_OPTION_END, MHD_OPTION_END)                                                                        \
    X(MHD_OPTION_CONNECTION_MEMORY_LIMIT, MHD_OPTION_CONNECTION_MEMORY_LIMIT)                                \
    X(MHD_OPTION_CONNECTION_LIMIT, MHD_OPTION_CONNECTION_LIMIT)                                              \
    X(MHD_OPTION_CONNECTION_TIMEOUT, MHD_OPTION_CONNECTION_TIMEOUT)                                          \
    X(MHD_OPTION_PER_IP_CONNECTION_LIMIT, MHD_OPTION_PER_IP_CONNECTION_LIMIT)                                \
    X(MHD_OPTION_HTTPS_MEM_KEY, MHD_OPTION_HTTPS_MEM_KEY)                                                    \
    X(MHD_OPTION_HTTPS_MEM_CERT, MHD_OPTION_HTTPS_MEM_CERT)                                                  \
    X(MHD_OPTION_LISTEN_SOCKET, MHD_OPTION_LISTEN_SOCKET)                                                    \
    X(MHD_OPTION_STRICT_FOR_CLIENT, MHD_OPTION_STRICT_FOR_CLIENT)                                            \
    X(MHD_HTTP_OK, MHD_HTTP_OK)                                                                              \
    X(MHD_HTTP_BAD_REQUEST, MHD_HTTP_BAD_REQUEST)                                                            \
    X(MHD_HTTP_UNAUTHORIZED, MHD_HTTP_UNAUTHORIZED)                                                          \
    X(MHD_HTTP_NOT_FOUND, MHD_HTTP_NOT_FOUND)                                                                \
    X(MHD_HTTP_METHOD_NOT_ALLOWED, MHD_HTTP_METHOD_NOT_ALLOWED)                                              \
    X(MHD_HTTP_SERVICE_UNAVAILABLE, MHD_HTTP_SERVICE_UNAVAILABLE)                                            \
    X(strhash(MHD_HTTP_HEADER_ACCEPT), strhash(MHD_HTTP_HEADER_ACCEPT))                                      \
    X(strhash(MHD_HTTP_HEADER_ALLOW), strhash(MHD_HTTP_HEADER_ALLOW))                                        \
    X(strhash(MHD_HTTP_HEADER_AUTHORIZATION), strhash(MHD_HTTP_HEADER_AUTHORIZATION))                        \
    X(strhash(MHD_HTTP_HEADER_CACHE_CONTROL), strhash(MHD_HTTP_HEADER_CACHE_CONTROL))                        \
    X(strhash(MHD_HTTP_HEADER_CONTENT_TYPE), strhash(MHD_HTTP_HEADER_CONTENT_TYPE))                          \
    X(strhash(MHD_HTTP_HEADER_RETRY_AFTER), strhash(MHD_HTTP_HEADER_RETRY_AFTER))                            \
    X(strhash(MHD_HTTP_HEADER_WWW_AUTHENTICATE), strhash(MHD_HTTP_HEADER_WWW_AUTHENTICATE))                  \
    X(strhash(MHD_HTTP_METHOD_GET), strhash(MHD_HTTP_METHOD_GET))                                            \
    X(strhash(MHD_HTTP_METHOD_HEAD), strhash(MHD_HTTP_METHOD_HEAD))

/* HDF5 (H5F_ACC_TRUNC is left out: the real macro calls into the library) */
#define H5_ABI_LIST(X)                                                                                       \
    X(sizeof(hid_t), sizeof(hid_t))                                                                          \
    X((hid_t)-1 < 0, (hid_t)-1 < 0)                                                                          \
    X(sizeof(hsize_t), sizeof(hsize_t))                                                                      \
    X((hsize_t)-1 > 0, (hsize_t)-1 > 0)                                                                      \
    X(sizeof(herr_t), sizeof(herr_t))                                                                        \
    X(sizeof(htri_t), sizeof(htri_t))                                                                        \
    X(sizeof(H5Z_filter_t), sizeof(H5Z_filter_t))                                                            \
    X(H5P_DEFAULT, H5P_DEFAULT)                                                                              \
    X(H5E_DEFAULT, H5E_DEFAULT)                                                                              \
    X(H5T_VARIABLE, H5T_VARIABLE)                                                                            \
    X(H5S_UNLIMITED, H5S_UNLIMITED)                                                                          \
    X(H5T_CSET_UTF8, H5T_CSET_UTF8)                                                                          \
    X(H5S_SCALAR, H5S_SCALAR)                                                                                \
    X(H5S_SELECT_SET, H5S_SELECT_SET)                                                                        \
    X(H5Z_FILTER_DEFLATE, H5Z_FILTER_DEFLATE)                                                                \
    X(H5Z_FILTER_CONFIG_ENCODE_ENABLED, H5Z_FILTER_CONFIG_ENCODE_ENABLED)                                    \
    X(H5_VERS_MAJOR == 1 && H5_VERS_MINOR >= 10 && H5_VERS_MINOR <= 14, 1)

#ifndef JOBSCOPE_VENDOR_ABI_LIST_H
#define JOBSCOPE_VENDOR_ABI_LIST_H

#include <stddef.h>

typedef struct {
    const char *name; /* the REAL expression, as text */
    long long value;
} abi_value_t;

/* vendor_abi_real: the REAL values of the three lists, in order, into out (cap entries); returns how many. */
size_t vendor_abi_real(abi_value_t *out, size_t cap);

/* strhash: FNV-1a of a string constant, to compare header names and methods as numbers */
static inline long long strhash(const char *s)
{
    unsigned long long h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (long long)(h >> 1);
}

#endif
