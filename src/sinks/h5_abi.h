/* SPDX-License-Identifier: MIT
 *
 * The part of the HDF5 C library's ABI the HDF5 export writer uses (src/sinks/hdf5.c), declared here so that
 * jobscope builds without libhdf5-dev and loads the library with dlopen (src/sys/dlib.h) only when an HDF5
 * file is written: `jobscope export --format hdf5` and nothing else. Transcribed from the headers of HDF5
 * 1.10.8 (Debian libhdf5-dev 1.10.8+repack1-1, /usr/include/hdf5/serial/H5*public.h); every declaration
 * below is unchanged through 1.14 (hid_t has been 64-bit since 1.10.0, which is why older libraries are
 * refused: hdf5.c checks H5get_libversion for 1.10 to 1.14).
 *
 * Two things the real headers hide in macros. The predefined datatypes and property-list classes
 * (H5T_NATIVE_DOUBLE, H5P_DATASET_CREATE, ...) are `(H5open(), H5T_NATIVE_DOUBLE_g)`: global hid_t variables
 * that the library fills in H5open. hdf5.c calls H5open once after loading and the macros below read those
 * variables through the addresses dlsym gave. And H5F_ACC_TRUNC carries H5check(), the header-against-library
 * version check, which has no meaning without the library's own headers; hdf5.c's check of H5get_libversion
 * replaces it.
 *
 * hdf5.c keeps HDF5's names at its call sites: each H5 function below is a macro for the pointer bound at
 * load time (h5_api.NAME), so a new H5 call there needs its entry here.
 */
#ifndef JOBSCOPE_H5_ABI_H
#define JOBSCOPE_H5_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int64_t hid_t; /* H5Ipublic.h (1.10+) */
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;
typedef int H5Z_filter_t;
typedef herr_t (*H5E_auto2_t)(hid_t estack, void *client_data);

#define H5P_DEFAULT ((hid_t)0)
#define H5E_DEFAULT ((hid_t)0)
#define H5T_VARIABLE ((size_t)(-1))
#define H5S_UNLIMITED ((hsize_t)(-1))
#define H5T_CSET_UTF8 1  /* H5T_cset_t */
#define H5S_SCALAR 0     /* H5S_class_t */
#define H5S_SELECT_SET 0 /* H5S_seloper_t */
#define H5F_ACC_TRUNC 0x0002u
#define H5Z_FILTER_DEFLATE 1
#define H5Z_FILTER_CONFIG_ENCODE_ENABLED 0x0001

/* The entry points (all required), bound by dlib_resolve into one struct. enum parameters are int-sized. */
typedef struct {
    herr_t (*dont_atexit)(void);
    herr_t (*open)(void);
    herr_t (*get_libversion)(unsigned *majnum, unsigned *minnum, unsigned *relnum);
    herr_t (*eset_auto2)(hid_t estack_id, H5E_auto2_t func, void *client_data);
    htri_t (*zfilter_avail)(H5Z_filter_t id);
    herr_t (*zget_filter_info)(H5Z_filter_t filter, unsigned int *filter_config_flags);
    hid_t (*fcreate)(const char *filename, unsigned flags, hid_t create_plist, hid_t access_plist);
    herr_t (*fclose)(hid_t file_id);
    hid_t (*gcreate2)(hid_t loc_id, const char *name, hid_t lcpl_id, hid_t gcpl_id, hid_t gapl_id);
    herr_t (*gclose)(hid_t group_id);
    hid_t (*tcopy)(hid_t type_id);
    herr_t (*tset_size)(hid_t type_id, size_t size);
    herr_t (*tset_cset)(hid_t type_id, int cset);
    herr_t (*tclose)(hid_t type_id);
    hid_t (*screate)(int type);
    hid_t (*screate_simple)(int rank, const hsize_t dims[], const hsize_t maxdims[]);
    herr_t (*sselect_hyperslab)(hid_t space_id, int op, const hsize_t start[], const hsize_t stride[],
                                const hsize_t count[], const hsize_t block[]);
    herr_t (*sclose)(hid_t space_id);
    hid_t (*acreate2)(hid_t loc_id, const char *attr_name, hid_t type_id, hid_t space_id, hid_t acpl_id,
                      hid_t aapl_id);
    herr_t (*awrite)(hid_t attr_id, hid_t type_id, const void *buf);
    htri_t (*aexists)(hid_t obj_id, const char *attr_name);
    herr_t (*aclose)(hid_t attr_id);
    hid_t (*pcreate)(hid_t cls_id);
    herr_t (*pset_chunk)(hid_t plist_id, int ndims, const hsize_t dim[]);
    herr_t (*pset_fill_value)(hid_t plist_id, hid_t type_id, const void *value);
    herr_t (*pset_shuffle)(hid_t plist_id);
    herr_t (*pset_deflate)(hid_t plist_id, unsigned level);
    herr_t (*pclose)(hid_t plist_id);
    hid_t (*dcreate2)(hid_t loc_id, const char *name, hid_t type_id, hid_t space_id, hid_t lcpl_id,
                      hid_t dcpl_id, hid_t dapl_id);
    herr_t (*dset_extent)(hid_t dset_id, const hsize_t size[]);
    hid_t (*dget_space)(hid_t dset_id);
    herr_t (*dwrite)(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id, hid_t dxpl_id,
                     const void *buf);
    herr_t (*dclose)(hid_t dset_id);
} js_h5_api_t;

/* The library's global identifiers (data symbols), valid after H5open. */
typedef struct {
    const hid_t *c_s1;           /* H5T_C_S1_g */
    const hid_t *std_i64le;      /* H5T_STD_I64LE_g */
    const hid_t *std_u8le;       /* H5T_STD_U8LE_g */
    const hid_t *ieee_f64le;     /* H5T_IEEE_F64LE_g */
    const hid_t *native_int64;   /* H5T_NATIVE_INT64_g */
    const hid_t *native_uint8;   /* H5T_NATIVE_UINT8_g */
    const hid_t *native_double;  /* H5T_NATIVE_DOUBLE_g */
    const hid_t *dataset_create; /* H5P_CLS_DATASET_CREATE_ID_g */
} js_h5_vars_t;

/* Bound by hdf5.c; valid once hdf5_open has loaded the library. */
extern js_h5_api_t h5_api;
extern js_h5_vars_t h5_vars;

#define H5T_C_S1 (*h5_vars.c_s1)
#define H5T_STD_I64LE (*h5_vars.std_i64le)
#define H5T_STD_U8LE (*h5_vars.std_u8le)
#define H5T_IEEE_F64LE (*h5_vars.ieee_f64le)
#define H5T_NATIVE_INT64 (*h5_vars.native_int64)
#define H5T_NATIVE_UINT8 (*h5_vars.native_uint8)
#define H5T_NATIVE_DOUBLE (*h5_vars.native_double)
#define H5P_DATASET_CREATE (*h5_vars.dataset_create)

#define H5dont_atexit (h5_api.dont_atexit)
#define H5open (h5_api.open)
#define H5get_libversion (h5_api.get_libversion)
#define H5Eset_auto2 (h5_api.eset_auto2)
#define H5Zfilter_avail (h5_api.zfilter_avail)
#define H5Zget_filter_info (h5_api.zget_filter_info)
#define H5Fcreate (h5_api.fcreate)
#define H5Fclose (h5_api.fclose)
#define H5Gcreate2 (h5_api.gcreate2)
#define H5Gclose (h5_api.gclose)
#define H5Tcopy (h5_api.tcopy)
#define H5Tset_size (h5_api.tset_size)
#define H5Tset_cset (h5_api.tset_cset)
#define H5Tclose (h5_api.tclose)
#define H5Screate (h5_api.screate)
#define H5Screate_simple (h5_api.screate_simple)
#define H5Sselect_hyperslab (h5_api.sselect_hyperslab)
#define H5Sclose (h5_api.sclose)
#define H5Acreate2 (h5_api.acreate2)
#define H5Awrite (h5_api.awrite)
#define H5Aexists (h5_api.aexists)
#define H5Aclose (h5_api.aclose)
#define H5Pcreate (h5_api.pcreate)
#define H5Pset_chunk (h5_api.pset_chunk)
#define H5Pset_fill_value (h5_api.pset_fill_value)
#define H5Pset_shuffle (h5_api.pset_shuffle)
#define H5Pset_deflate (h5_api.pset_deflate)
#define H5Pclose (h5_api.pclose)
#define H5Dcreate2 (h5_api.dcreate2)
#define H5Dset_extent (h5_api.dset_extent)
#define H5Dget_space (h5_api.dget_space)
#define H5Dwrite (h5_api.dwrite)
#define H5Dclose (h5_api.dclose)

#endif
