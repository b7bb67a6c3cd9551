/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program for uprobe tests: calls functions with known arguments in a
 * loop, slowly enough that a tracer attached after start-up still sees
 * calls. Built PIE and non-PIE by build.sh.
 *
 * Usage: target [ITERATIONS] (default 5; each iteration sleeps 100 ms).
 * Expected per iteration i (from 0): add_numbers(i, 1000000000000 + i)
 * returns i + 1000000000000 + i; negate(-i - 1) returns i + 1;
 * target_lib_mul(i, 3) (libtarget) returns 3 * i.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int target_lib_mul(int a, int b);

/* noinline + used: keep each call a real call with its own symbol */
__attribute__((noinline)) long add_numbers(int a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

__attribute__((noinline)) int negate(int value)
{
	__asm__ volatile("" ::: "memory");
	return -value;
}

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 5;
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	long total = 0;

	for (int i = 0; i < iterations; i++) {
		total += add_numbers(i, 1000000000000L + i);
		total += negate(-i - 1);
		total += target_lib_mul(i, 3);
		nanosleep(&pause, NULL);
	}
	printf("total %ld\n", total);
	return 0;
}
