/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for naming vDSO frames (runtime/symbols.test).
 *
 *     vdso_loop [MS]
 *
 * Calls clock_gettime(CLOCK_MONOTONIC) in a loop for MS milliseconds
 * (default 1000). The C library answers it in the vDSO, the kernel's code
 * mapped into every process as [vdso] with no file behind it, so a profile
 * of this process samples mostly there.
 */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
	return 0;
}
