/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workload for the flame graph tests (browser group): a known profile.
 *
 *     flame_prog SECONDS
 *
 * Spins for SECONDS in rounds; each round spends about nine parts in
 * flame_hot, reached through flame_outer and flame_middle (three calls deep
 * from main), and one part in flame_cold, called from main directly. So a
 * CPU profile of the process must show main;flame_outer;flame_middle;
 * flame_hot as its heaviest stack, with flame_hot near 90% of the samples.
 *
 * Frame pointers are kept (the kernel walks user stacks by them) and the
 * spinning functions keep a stack frame (a volatile local), because GCC
 * sets up no frame in a leaf function that needs none, which would drop
 * the caller from every sample. spin is never cloned (noclone): GCC's
 * constant propagation would otherwise name it spin.constprop.0, which the
 * expected chain does not.
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")
#include <stdlib.h>
#include <time.h>

__attribute__((noinline, noclone)) static void spin(unsigned long rounds)
{
	volatile unsigned long i;

	for (i = 0; i < rounds; i++)
		__asm__ volatile("");
}

__attribute__((noinline)) void flame_hot(void)
{
	volatile int frame = 0;

	for (int i = 0; i < 9; i++)
		spin(200000);
	(void)frame;
}

__attribute__((noinline)) void flame_middle(void)
{
	flame_hot();
	__asm__ volatile("");
}

__attribute__((noinline)) void flame_outer(void)
{
	flame_middle();
	__asm__ volatile("");
}

__attribute__((noinline)) void flame_cold(void)
{
	volatile int frame = 0;

	spin(200000);
	(void)frame;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		flame_outer();
		flame_cold();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return 0;
}
