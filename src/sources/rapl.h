/* SPDX-License-Identifier: MIT
 *
 * The `rapl` source: the energy counters of the powercap RAPL zones (class/powercap/intel-rapl:P and their
 * sub-zones intel-rapl:P:S; AMD processors expose the same tree). One row per zone and sample: the zone, its
 * domain path (package-0, package-0/dram, psys), energy_uj as read, and the range it wraps at. energy_uj is
 * root-only on Linux >= 5.10 (CVE-2020-8694): a zone that cannot be read keeps its row, with energy missing
 * and the read's errno, so a recording says why there is no energy.
 */
#ifndef JOBSCOPE_SOURCES_RAPL_H
#define JOBSCOPE_SOURCES_RAPL_H

#include "core/source.h"

/* table `rapl`: one row per zone */
enum {
    RAPL_ZONE,         /* label, TEXT: intel-rapl:0, intel-rapl:0:1 */
    RAPL_DOMAIN,       /* label, TEXT: the zone names from the top: package-0, package-0/dram, psys */
    RAPL_ENERGY_UJ,    /* counter: energy_uj; wraps at max_energy_range_uj (not at a power of two) */
    RAPL_MAX_RANGE_UJ, /* gauge: max_energy_range_uj, read once at init */
    RAPL_ERRNO,        /* gauge: 0, or the negative errno that left energy_uj missing (-EACCES: root-only) */
    RAPL__MAX
};

extern const js_table_t table_rapl;
extern const js_source_t source_rapl;

#endif
