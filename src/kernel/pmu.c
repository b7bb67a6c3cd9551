/* SPDX-License-Identifier: Apache-2.0 */
/* Reading perf PMUs' sysfs files; see pmu.h. */
#include "pmu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

/* The text of /sys/bus/event_source/devices/PMU/NAME; NULL with errno set. */
static char *pmu_file(const char *pmu, const char *name)
{
	char *path = xasprintf("/sys/bus/event_source/devices/%s/%s", pmu, name);
	char *text = read_file(path, NULL);
	int saved = errno;

	free(path);
	errno = saved;
	return text;
}

int pmu_type(const char *pmu)
{
	char *text = pmu_file(pmu, "type");
	int type;

	if (!text)
		return -errno;
	type = atoi(text);
	free(text);
	return type;
}

int pmu_format_bit(const char *pmu, const char *field)
{
	char *name = xasprintf("format/%s", field);
	char *text = pmu_file(pmu, name);
	int bit = -EINVAL;

	free(name);
	if (!text)
		return -errno;
	if (strncmp(text, "config:", 7) == 0)
		bit = atoi(text + 7);
	free(text);
	return bit;
}
