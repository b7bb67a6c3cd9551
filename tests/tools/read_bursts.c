/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workload for the heat map test (browser group): reads of known sizes at
 * known times.
 *
 *     read_bursts SIZE COUNT [SIZE COUNT ...]
 *
 * For each pair, makes COUNT reads of SIZE bytes from /dev/zero, then
 * sleeps 2.5 s before the next pair, so that with 1 s intervals each burst
 * lands in its own interval and at least one interval between bursts has
 * no read at all.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buffer[1 << 16];
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	for (int i = 1; i + 1 < argc; i += 2) {
		size_t size = (size_t)atol(argv[i]);
		int count = atoi(argv[i + 1]);

		if (i > 1)
			usleep(2500000);
		if (size > sizeof(buffer))
			return 1;
		for (int j = 0; j < count; j++) {
			if (read(fd, buffer, size) != (ssize_t)size)
				return 1;
		}
	}
	return 0;
}
