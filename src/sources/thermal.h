/* SPDX-License-Identifier: MIT
 *
 * The `thermal` source: temperatures from the hwmon class (class/hwmon/hwmonN/tempK_input, with the
 * tempK_label where the driver gives one, and the chip's `name`; drivers of old kernels keep their
 * attributes in hwmonN/device/) and from the thermal zones (class/thermal/thermal_zoneN/temp, named by
 * their `type`). Both in millidegrees Celsius as the kernel prints them. The same sensor may appear in both
 * classes (the thermal core registers an hwmon device for some zones); both rows are kept, each named.
 */
#ifndef JOBSCOPE_SOURCES_THERMAL_H
#define JOBSCOPE_SOURCES_THERMAL_H

#include "core/source.h"

/* table `thermal`: one row per sensor */
enum {
    THERMAL_SENSOR,  /* label, TEXT: hwmon3/temp1, thermal_zone0 */
    THERMAL_CHIP,    /* TEXT: the hwmon chip's name (coretemp, k10temp, nvme) or the zone's type */
    THERMAL_LABEL,   /* TEXT: tempK_label (Package id 0, Core 3, Tctl), missing where there is none */
    THERMAL_TEMP_MC, /* gauge: millidegrees Celsius */
    THERMAL__MAX
};

extern const js_table_t table_thermal;
extern const js_source_t source_thermal;

#endif
