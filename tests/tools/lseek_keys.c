/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workload for sonde serve's big-map tests: one lseek() to each offset
 * 0..COUNT-1 of its own binary (a regular file: /dev/zero's offset stays
 * 0), so a map keyed by the offset gets COUNT keys.
 *
 *     lseek_keys COUNT
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 10000;
	int fd = open("/proc/self/exe", O_RDONLY);

	if (fd < 0)
		return 1;
	for (long offset = 0; offset < count; offset++) {
		if (lseek(fd, offset, SEEK_SET) != offset)
			return 1;
	}
	return 0;
}
