/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sysfs files of perf's dynamic PMUs (kprobe, uprobe):
 * /sys/bus/event_source/devices/NAME/type and format/FIELD. The one
 * reader of them; providers and feature probing call it.
 */
#ifndef SONDE_PMU_H
#define SONDE_PMU_H

/* The perf event type of PMU `pmu`, or -errno (-ENOENT: no such PMU). */
int pmu_type(const char *pmu);
/* The first bit of a format field in perf_event_attr.config ("config:0" → 0,
 * "config:32-63" → 32), or -errno. */
int pmu_format_bit(const char *pmu, const char *field);

#endif
