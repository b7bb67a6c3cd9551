/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workload for the profile benchmarks: many distinct call stacks.
 *
 *     stacks SECONDS
 *
 * 64 functions call one another through a table, each picking the next
 * from a pseudo-random number, 6 to 13 calls deep; the innermost spins for
 * a few microseconds. Nearly every sample taken at a high frequency lands
 * in a stack not seen before, so the profile ends with many thousands of
 * unique stacks to name and draw. Frame pointers are kept: the kernel walks
 * user stacks by them.
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef uint64_t (*step_fn)(uint64_t x, int depth);
static step_fn steps[64];

static uint64_t spin(uint64_t x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

#define STEP(n)                                                                       \
	__attribute__((noinline)) static uint64_t step_##n(uint64_t x, int depth)     \
	{                                                                             \
		x = x * 6364136223846793005ull + (n) * 2 + 1;                         \
		if (depth == 0)                                                       \
			return spin(x);                                               \
		return steps[(x >> 33) % 64](x, depth - 1) + 1;                       \
	}
#define STEP8(n) STEP(n##0) STEP(n##1) STEP(n##2) STEP(n##3) STEP(n##4) STEP(n##5) STEP(n##6) STEP(n##7)
STEP8(1) STEP8(2) STEP8(3) STEP8(4) STEP8(5) STEP8(6) STEP8(7) STEP8(8)
#define SET8(n) steps[i++] = step_##n##0; steps[i++] = step_##n##1; steps[i++] = step_##n##2; \
	steps[i++] = step_##n##3; steps[i++] = step_##n##4; steps[i++] = step_##n##5;        \
	steps[i++] = step_##n##6; steps[i++] = step_##n##7;

int main(int argc, char **argv)
{
	int i = 0;
	SET8(1) SET8(2) SET8(3) SET8(4) SET8(5) SET8(6) SET8(7) SET8(8)
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	uint64_t x = (uint64_t)start.tv_nsec | 1, sink = 0;
	do {
		for (int n = 0; n < 100; n++) {
			x = x * 6364136223846793005ull + 1;
			sink += steps[(x >> 33) % 64](x, 6 + (int)((x >> 40) % 8));
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return (int)(sink & 1) * 0;
}
