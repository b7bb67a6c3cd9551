/* SPDX-License-Identifier: Apache-2.0 */
/*
 * malloc_loop SECONDS: calls malloc(4097) and free() in a loop for SECONDS
 * seconds (a flood for a uprobe on libc's malloc), then prints how many
 * calls it made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec start, now;
	unsigned long calls = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 1000; i++, calls++) {
			/* volatile: the compiler may not pair malloc with free away */
			void *volatile block = malloc(4097);
			free(block);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	printf("%lu\n", calls);
	return 0;
}
